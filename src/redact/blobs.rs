//! Key material without its frame, and credentials wrapped in base64: a
//! private key's body pasted without its `BEGIN` line (it starts as a
//! private key's DER does, ends with an `END … PRIVATE KEY` line, or is a
//! run of full-width base64 lines), a PuTTY key file, and a base64 blob
//! whose decoded text holds a credential.

use super::gates::{B64_LINES_RE, MIN_BLOB, PUTTY_RE, gates, is_b64_byte, two_cases};
use super::{Mode, REDACTED, redact_with};

/// The starts of a private key's DER in base64: PKCS #8 (`MIIEvQIBADAN`,
/// `MIGHAgEAMBMG`, Ed25519's `MC4CAQAwBQYDK2Vw`), encrypted PKCS #8
/// (`MIIFLTBXBgkqhkiG9w0BBQ0w`), PKCS #1 RSA and DSA (`MIIEowIBAAK`), SEC 1
/// EC (`MHcCAQEE`, `MIGkAgEBBDB`) and OpenSSH (`openssh-key-v1`). A
/// certificate's or public key's DER starts otherwise (`MIIC+TCCAeGg`).
fn starts_like_a_private_key(b64: &str) -> bool {
    let b = b64.as_bytes();
    let at = |i: usize, s: &str| b.get(i..i + s.len()) == Some(s.as_bytes());
    (at(0, "MII") && (at(6, "IBAA") || at(6, "IBAD") || at(8, "BgkqhkiG9w0BBQ")))
        || (at(0, "MI")
            && matches!(b.get(2), Some(b'G' | b'H'))
            && (at(4, "AgEA") || at(4, "AgEB")))
        || (at(0, "M") && (at(3, "CAQAw") || at(3, "CAQEE")))
        || at(0, "b3BlbnNzaC1rZXktdjE")
}

/// Whether `line` mixes upper case, lower case and digits, as every full
/// line of a key's base64 does (a SHA-256 in hex does not).
fn mixed(line: &str) -> bool {
    let has = |f: fn(&u8) -> bool| line.as_bytes().iter().any(f);
    has(u8::is_ascii_uppercase) && has(u8::is_ascii_lowercase) && has(u8::is_ascii_digit)
}

/// The base64 lines of a block match, without padding, blanks or the `END` line.
fn lines(block: &str) -> impl Iterator<Item = &str> {
    block
        .split(['\n', '\r'])
        .flat_map(|l| l.split("\\n"))
        .map(|l| l.trim_matches([' ', '\t']).trim_end_matches('='))
        .filter(|l| !l.is_empty() && !l.starts_with("-----"))
}

/// The line of `text` before byte `start` and the one after byte `end`.
fn neighbours(text: &str, start: usize, end: usize) -> (&str, &str) {
    let before = text[..start].trim_end_matches([' ', '\t', '\r', '\n']);
    let before = before.trim_end_matches("\\n");
    let prev = before.rsplit(['\n', '\\']).next().unwrap_or("");
    let after = text[end..].trim_start_matches([' ', '\t', '\r', '\n']);
    let after = after.strip_prefix("\\n").unwrap_or(after);
    let next = after.split(['\n', '\\']).next().unwrap_or("");
    (prev, next)
}

/// Runs of base64 lines that are a private key's body: the whole run, and
/// its `END … PRIVATE KEY` line if it has one, becomes [`REDACTED`]. A run
/// is one when it ends with that `END` line, when it starts as a private
/// key's DER does (32 characters or more), or when it has two full-width
/// lines (64, 70 or 76 characters, each mixing cases and digits) and is not
/// framed as a certificate or public key.
pub(super) fn redact_key_bodies(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut last = 0;
    for m in B64_LINES_RE.find_iter(text) {
        let block = m.as_str();
        let ends_private = block.trim_end().ends_with("-----") && block.contains("PRIVATE KEY");
        let mut body = lines(block);
        let first = body.next().unwrap_or("");
        let prefixed = first.len() >= 32 && two_cases(first) && starts_like_a_private_key(first);
        let full = lines(block)
            .filter(|l| matches!(l.len(), 64 | 70 | 76) && mixed(l))
            .count();
        let (prev, next) = neighbours(text, m.start(), m.end());
        let framed_public = (prev.starts_with("-----BEGIN") && !prev.contains("PRIVATE"))
            || (next.starts_with("-----END") && !next.contains("PRIVATE"));
        if ends_private || prefixed || (full >= 2 && !framed_public) {
            out.push_str(&text[last..m.start()]);
            out.push_str(REDACTED);
            last = m.end();
        }
    }
    if last == 0 {
        return None;
    }
    out.push_str(&text[last..]);
    Some(out)
}

/// A PuTTY key file (`PuTTY-User-Key-File-3: ssh-ed25519` … `Private-MAC:`),
/// or its private part alone (`Private-Lines: N` and the lines after it).
pub(super) fn redact_putty(text: &str) -> Option<String> {
    super::replace_regex(&PUTTY_RE, text, REDACTED)
}

/// `run` decoded as base64 (standard or URL-safe, not both; padding
/// optional), when it is text: UTF-8 without control characters but
/// tabs and line ends.
fn decode_text(run: &str) -> Option<String> {
    let std = run.contains(['+', '/']);
    if std && run.contains(['-', '_']) {
        return None;
    }
    let mut bits: u32 = 0;
    let mut n = 0;
    let mut bytes = Vec::with_capacity(run.len() * 3 / 4);
    for b in run.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        n += 6;
        if n >= 8 {
            n -= 8;
            // The byte is the top 8 of the bits held.
            bytes.push((bits >> n) as u8);
            bits &= (1 << n) - 1;
        }
    }
    // A run of 4k+1 characters is not base64; leftover bits must be zero.
    if n >= 6 || bits != 0 {
        return None;
    }
    let text = String::from_utf8(bytes).ok()?;
    text.chars()
        .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
        .then_some(text)
}

/// Base64 runs whose decoded text holds a credential that the other rules
/// find (`Z2hwX…` is `ghp_…`, `cGFzc3dvcmQ9…` is `password=…`): each
/// becomes [`REDACTED`], padding and all. The decoded text is judged once,
/// not decoded again.
pub(super) fn redact_base64(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut last = 0;
    let mut i = 0;
    while i < bytes.len() {
        if !is_b64_byte(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_b64_byte(bytes[i]) {
            i += 1;
        }
        let run = &text[start..i];
        let mut end = i;
        while end < bytes.len() && end - i < 2 && bytes[end] == b'=' {
            end += 1;
        }
        if run.len() < MIN_BLOB || !two_cases(run) {
            continue;
        }
        let Some(decoded) = decode_text(run) else {
            continue;
        };
        let mut g = gates(&decoded);
        g.b64 = false;
        if !redact_with(&decoded, Mode::Mask, g).1.is_empty() {
            out.push_str(&text[last..start]);
            out.push_str(REDACTED);
            last = end;
        }
        i = end;
    }
    if last == 0 {
        return None;
    }
    out.push_str(&text[last..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding() {
        assert_eq!(
            decode_text("aGVsbG8gd29ybGQ").as_deref(),
            Some("hello world")
        );
        assert_eq!(decode_text("Z2hwX2FiYw").as_deref(), Some("ghp_abc"));
        assert_eq!(decode_text("a+b_"), None);
        assert_eq!(decode_text("AAAA"), None);
        assert_eq!(decode_text("a"), None);
    }
}
