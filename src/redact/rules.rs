//! The rules that read a name before a value: scp-style addresses,
//! `Authorization` headers, bare bearer tokens, `curl -u`, `mysql -p` and
//! `sshpass -p`, secret options, netrc entries and named assignments. Each
//! masks the value and keeps the name.

use super::REDACTED;
use super::gates::{
    ASSIGNMENT_RE, AUTH_RE, BEARER_RE, CLI_PASSWORD_RE, CURL_RE, FLAG_RE, NETRC_RE, SCP_RE,
};
use super::names::{Strength, is_credential_value, name_strength, words};
use super::values::{is_placeholder, is_plain_word, is_tokenish, looks_secret, value_span};

/// Builds a new text from `text` with byte ranges replaced by [`REDACTED`].
struct Splicer<'a> {
    text: &'a str,
    out: String,
    last: usize,
    changed: bool,
}

impl<'a> Splicer<'a> {
    fn new(text: &'a str) -> Self {
        Splicer {
            text,
            out: String::new(),
            last: 0,
            changed: false,
        }
    }

    fn mask(&mut self, start: usize, end: usize) {
        self.out.push_str(&self.text[self.last..start]);
        self.out.push_str(REDACTED);
        self.last = end;
        self.changed = true;
    }

    fn finish(mut self) -> Option<String> {
        if !self.changed {
            return None;
        }
        self.out.push_str(&self.text[self.last..]);
        Some(self.out)
    }
}

pub(super) fn redact_scp(text: &str) -> Option<String> {
    let mut s = Splicer::new(text);
    for c in SCP_RE.captures_iter(text) {
        if let Some(pw) = c.get(1)
            && !pw.as_str().starts_with(REDACTED)
        {
            s.mask(pw.start(), pw.end());
        }
    }
    s.finish()
}

pub(super) fn redact_auth_headers(text: &str) -> Option<String> {
    let mut s = Splicer::new(text);
    let mut pos = 0;
    while let Some(c) = AUTH_RE.captures_at(text, pos) {
        let Some(m) = c.get(0).map(|m| m.range()) else {
            break;
        };
        let (vs, ve, _) = value_span(text, m.end, false);
        let v = &text[vs..ve];
        let secret = !v.is_empty()
            && !is_placeholder(v)
            && if c.get(1).is_some() {
                !is_plain_word(v)
            } else {
                looks_secret(v)
            };
        if secret {
            s.mask(vs, ve);
            pos = ve.max(m.end).max(m.start + 1);
        } else {
            // Go on right after the header's name: a value that is not a
            // secret may itself be a header (`Authorization: Authorization:
            // …`), and another rule may mask it away before a second pass.
            pos = m.end.max(m.start + 1);
        }
    }
    s.finish()
}

pub(super) fn redact_bearer(text: &str) -> Option<String> {
    let mut s = Splicer::new(text);
    for m in BEARER_RE.find_iter(text) {
        let rest = &text[m.end()..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || "._~+/=-".contains(c)))
            .unwrap_or(rest.len());
        if is_tokenish(&rest[..len]) {
            s.mask(m.end(), m.end() + len);
        }
    }
    s.finish()
}

pub(super) fn redact_curl_user(text: &str) -> Option<String> {
    let mut s = Splicer::new(text);
    for c in CURL_RE.captures_iter(text) {
        let Some(m) = c.get(0) else { continue };
        let quote = c.get(1).map_or("", |q| q.as_str());
        let rest = &text[m.end()..];
        let len = match quote.chars().next() {
            Some(q) => rest.find(q).unwrap_or(rest.len()),
            None => rest.find(char::is_whitespace).unwrap_or(rest.len()),
        };
        let pw = &rest[..len];
        if !pw.is_empty() && !is_placeholder(pw) {
            s.mask(m.end(), m.end() + len);
        }
    }
    s.finish()
}

/// The password glued to `mysql`'s `-p` (`-pS3cret`, `-p'pa ss'`; a bare
/// `-p` asks for one, and `-p dbname` names a database), and the one after
/// `sshpass -p`, glued or not.
pub(super) fn redact_cli_passwords(text: &str) -> Option<String> {
    let mut s = Splicer::new(text);
    for m in CLI_PASSWORD_RE.find_iter(text) {
        let (vs, ve, quoted) = value_span(text, m.end(), false);
        let v = &text[vs..ve];
        if (quoted || !v.is_empty()) && !v.starts_with('-') && !is_placeholder(v) {
            s.mask(vs, ve);
        }
    }
    s.finish()
}

/// The words of a netrc entry that may stand between `machine HOST` and
/// `password`, each with its value.
const NETRC_WORDS: &[&str] = &["login", "account", "port", "machine"];

/// The value after `password` (or `passwd`) in a netrc entry: `machine
/// api.example.com login bob password hunter2`, `default login anonymous
/// password a@b`. Read backwards from `password`, the words before must be
/// netrc pairs (`login bob`, `machine HOST`) or `default`. Any value counts
/// in an entry with both `machine` (or `default`) and `login`, or whose
/// machine is a host name with a dot; otherwise ("machine learning
/// password reset", "login page password reset") only a value that looks
/// like a secret does.
pub(super) fn redact_netrc(text: &str) -> Option<String> {
    let mut s = Splicer::new(text);
    for c in NETRC_RE.captures_iter(text) {
        let (Some(m), Some(word)) = (c.get(0), c.get(1)) else {
            continue;
        };
        let before: Vec<&str> = text[..word.start()].split_whitespace().collect();
        let (mut machine, mut login, mut dotted) = (false, false, false);
        let mut k = before.len();
        loop {
            if k >= 1 && before[k - 1] == "default" {
                machine = true;
                k -= 1;
            } else if k >= 2 && NETRC_WORDS.contains(&before[k - 2]) {
                match before[k - 2] {
                    "machine" => {
                        machine = true;
                        dotted |= before[k - 1].contains('.');
                    }
                    "login" => login = true,
                    _ => {}
                }
                k -= 2;
            } else {
                break;
            }
        }
        if !(machine || login) {
            continue;
        }
        // A netrc value ends at whitespace (`hunter,2;x` is one), or at the
        // quote that closes a shell string around the entry.
        let (vs, ve, quoted) = match value_span(text, m.end(), false) {
            span @ (_, _, true) => span,
            (vs, _, false) => {
                let len = text[vs..].find(|c: char| c.is_whitespace() || "\"'`".contains(c));
                (vs, len.map_or(text.len(), |l| vs + l), false)
            }
        };
        let v = &text[vs..ve];
        let judged = (machine && (login || dotted)) || quoted || looks_secret(v);
        if !v.is_empty() && !is_placeholder(v) && judged {
            s.mask(vs, ve);
        }
    }
    s.finish()
}

pub(super) fn redact_flags(text: &str) -> Option<String> {
    let mut s = Splicer::new(text);
    for c in FLAG_RE.captures_iter(text) {
        let (Some(m), Some(name)) = (c.get(0), c.get(1)) else {
            continue;
        };
        let Some(strength) = name_strength(name.as_str()) else {
            continue;
        };
        let (vs, ve, quoted) = value_span(text, m.end(), false);
        let v = &text[vs..ve];
        let starts_ok = quoted || v.starts_with(|c: char| c.is_alphanumeric());
        let judged = match strength {
            Strength::Strong => quoted || looks_secret(v),
            Strength::Weak => is_credential_value(v),
        };
        if starts_ok && !v.is_empty() && !is_placeholder(v) && judged {
            s.mask(vs, ve);
        }
    }
    s.finish()
}

pub(super) fn redact_assignments(text: &str) -> Option<String> {
    let mut s = Splicer::new(text);
    let mut pos = 0;
    while let Some(c) = ASSIGNMENT_RE.captures_at(text, pos) {
        let (Some(m), Some(open), Some(name), Some(close), Some(sep)) =
            (c.get(0), c.get(1), c.get(2), c.get(3), c.get(4))
        else {
            break;
        };
        let after_sep = &text[sep.start()..];
        let space_before = close.end() < sep.start();
        let space_after = sep.end() < m.end();
        let not_an_assignment = match sep.as_str() {
            ":" => after_sep.starts_with("://") || after_sep.starts_with("::"),
            // `Token= setting`, `--passphrase= can be empty`: prose about an
            // option, not an assignment.
            _ => after_sep.starts_with("==") || (space_after && !space_before),
        }
        // `"passwd:" and …`: the quote after the separator closes the name.
            || (!open.as_str().is_empty()
                && close.as_str().is_empty()
                && text[m.end()..].starts_with(open.as_str()));
        // `Authorization` values are the header rule's: it keeps the scheme.
        let header = words(name.as_str())
            .last()
            .is_some_and(|w| w == "authorization");
        let strength = name_strength(name.as_str());
        let Some(strength) = strength.filter(|_| !not_an_assignment && !header) else {
            // Go on right after the separator: the value may itself be a name.
            pos = sep.end();
            continue;
        };
        // In a query string (`?token=…&view=1`) the value ends at the next `&`.
        let in_query = open.as_str().is_empty() && text[..name.start()].ends_with(['?', '&']);
        let (vs, ve, quoted) = value_span(text, m.end(), in_query);
        let v = &text[vs..ve];
        let judged = match strength {
            // `token: cpuid::InitToken` is a type, not a value.
            Strength::Strong => {
                quoted || sep.as_str() != ":" || (looks_secret(v) && !v.contains("::"))
            }
            Strength::Weak => is_credential_value(v.trim_end_matches(['.', ',', ':', ')'])),
        };
        if !v.is_empty() && !is_placeholder(v) && judged {
            s.mask(vs, ve);
        }
        pos = ve.max(m.end());
    }
    s.finish()
}
