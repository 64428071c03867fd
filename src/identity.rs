//! Authorship: a device can only speak for itself (rules, no I/O; the key
//! file is read and written by [`crate::local`]).
//!
//! Each device has an Ed25519 key pair. Its `device_id` is derived from the
//! public key ([`key_id`]: 200 bits of a SHA-256 of it, in 40 characters of
//! lowercase base32), so the claim "this record is from device D" is checked
//! from the record alone: a record whose `device_id` has that form must carry
//! `key`, the public key whose id it is, and `sig`, an Ed25519 signature of
//! every other byte of the record ([`message`]). Nobody can make another key
//! with the same id (that takes about 2²⁰⁰ tries), nor sign for a key whose
//! private half they lack.
//!
//! [`verify`] gives each file a [`Verdict`]:
//!
//! - **Verified**: the id is the key's, the record is in the one canonical
//!   form this crate writes (keys sorted, no spaces, one trailing newline at
//!   most), and the signature holds. Its author is its `device_id`.
//! - **Unsigned**: the `device_id` does not have the key-derived form (Hermes
//!   Agent's records, older versions of this tool, hand-written files). All
//!   unsigned records have one author between them, the unsigned one: they
//!   can end, hide or clock only each other, as before signing existed.
//! - **Forged**: the `device_id` has the key-derived form and anything above
//!   fails. A forged record speaks for nobody: it never counts as any
//!   device's, never ends, hides or clocks anything ([`Verdict::counts`]).
//!
//! The canonical form is demanded because a JSON reader takes one of two
//! duplicate keys and a signature over one spelling must not vouch for
//! another: the bytes that were signed are the only bytes that verify.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use sha2::{Digest, Sha256};

pub(crate) use crate::record::is_key_id;
use crate::record::{BASE32, Record};

/// What a signature covers is prefixed with this, so that no signature this
/// crate makes can be taken for one over something else.
const DOMAIN: &[u8] = b"presence record v1\0";

/// What [`verify`] made of a record file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Signed by the key its `device_id` is derived from.
    Verified,
    /// Carries no key-derived `device_id`: written by a tool that does not
    /// sign (Hermes Agent, an older version).
    Unsigned,
    /// Claims a key-derived `device_id` and does not prove it.
    Forged(Forgery),
}

/// Why a record that claims a key-derived `device_id` does not verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Forgery {
    /// It carries no `key`, or one that is not an Ed25519 public key.
    NoKey,
    /// Its `key` is not the one its `device_id` is derived from.
    KeyMismatch,
    /// It carries no `sig`, or one that is not 64 bytes of base64url.
    NoSignature,
    /// Its bytes are not the canonical form that was signed.
    NotCanonical,
    /// The signature does not hold for these bytes and this key.
    BadSignature,
}

impl Forgery {
    /// The reason's name in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Forgery::NoKey => "no_key",
            Forgery::KeyMismatch => "key_mismatch",
            Forgery::NoSignature => "no_signature",
            Forgery::NotCanonical => "not_canonical",
            Forgery::BadSignature => "bad_signature",
        }
    }
}

impl Verdict {
    /// Whether the record may count at all: end a life, hide another copy,
    /// teach a clock, be this device's own or be listed. Only forged
    /// records may not.
    pub(crate) fn counts(self) -> bool {
        !matches!(self, Verdict::Forged(_))
    }

    /// Whether a signature was checked and holds.
    pub fn verified(self) -> bool {
        self == Verdict::Verified
    }

    /// The reason a forged record is forged.
    pub fn forgery(self) -> Option<Forgery> {
        match self {
            Verdict::Forged(f) => Some(f),
            _ => None,
        }
    }

    /// A one-byte code, as the scan cache keeps it.
    pub(crate) fn code(self) -> u8 {
        match self {
            Verdict::Unsigned => 0,
            Verdict::Verified => 1,
            Verdict::Forged(f) => 2 + f as u8,
        }
    }

    /// The verdict of [`Verdict::code`]; `None` for a byte no verdict has.
    pub(crate) fn from_code(code: u8) -> Option<Verdict> {
        Some(match code {
            0 => Verdict::Unsigned,
            1 => Verdict::Verified,
            2 => Verdict::Forged(Forgery::NoKey),
            3 => Verdict::Forged(Forgery::KeyMismatch),
            4 => Verdict::Forged(Forgery::NoSignature),
            5 => Verdict::Forged(Forgery::NotCanonical),
            6 => Verdict::Forged(Forgery::BadSignature),
            _ => return None,
        })
    }
}

/// The device id of public key `key`: the first 25 bytes of
/// SHA-256("presence device id\0" ‖ key), in lowercase base32.
pub(crate) fn key_id(key: &VerifyingKey) -> String {
    let mut h = Sha256::new();
    h.update(b"presence device id\0");
    h.update(key.as_bytes());
    let digest = h.finalize();
    base32(&digest[..25])
}

/// The fingerprint `presence devices` shows for a public key, in the form
/// `ssh-keygen -l` uses: `SHA256:` and the base64 of its SHA-256.
pub(crate) fn fingerprint(key: &str) -> Option<String> {
    let bytes = B64.decode(key).ok()?;
    let digest = Sha256::digest(&bytes);
    Some(format!(
        "SHA256:{}",
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(digest)
    ))
}

fn base32(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 8 / 5 + 1);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for &b in bytes {
        acc = (acc << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(BASE32[((acc >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(BASE32[((acc << (5 - bits)) & 31) as usize] as char);
    }
    out
}

/// The public key, as a record carries it (base64url, no padding).
pub(crate) fn key_text(key: &VerifyingKey) -> String {
    B64.encode(key.as_bytes())
}

/// What is signed: [`DOMAIN`] and the canonical JSON of the record's object
/// without its `sig` member.
fn message(canonical_without_sig: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(DOMAIN.len() + canonical_without_sig.len());
    m.extend_from_slice(DOMAIN);
    m.extend_from_slice(canonical_without_sig);
    m
}

/// Signs `record` as the device of `key`: sets its `device_id` and `key`,
/// then its `sig` over everything else. The record's bytes as
/// [`Record::to_json`] writes them then verify.
pub(crate) fn sign(record: &mut Record, key: &SigningKey) {
    let public = key.verifying_key();
    record.device_id = key_id(&public);
    record.key = key_text(&public);
    record.sig.clear();
    // `sig` is empty, so it is not serialised: these are the bytes without it.
    let unsigned = canonical(record);
    let sig = key.sign(&message(&unsigned));
    record.sig = B64.encode(sig.to_bytes());
}

/// The canonical JSON of `record` through the same `serde_json::Value` that
/// [`verify`] builds, so that writer and reader agree byte for byte.
fn canonical(record: &Record) -> Vec<u8> {
    serde_json::to_value(record)
        .and_then(|v| serde_json::to_vec(&v))
        .unwrap_or_default()
}

/// The verdict on a record file's bytes (see the module docs). Never
/// panics, whatever the bytes; a file that is not a JSON object at all is
/// unsigned here (it is not a record either, which the parser says).
pub(crate) fn verify(bytes: &[u8]) -> Verdict {
    // Readers call this only for a record whose probe claims a key-derived
    // id; the claim is read again here from the same tree that is checked.
    let Ok(serde_json::Value::Object(mut object)) = serde_json::from_slice(bytes) else {
        return Verdict::Unsigned;
    };
    let claimed = match object.get("device_id") {
        Some(serde_json::Value::String(s)) if is_key_id(s) => s.clone(),
        _ => return Verdict::Unsigned,
    };
    let key = match object.get("key") {
        Some(serde_json::Value::String(k)) => decode_key(k),
        _ => None,
    };
    let Some(key) = key else {
        return Verdict::Forged(Forgery::NoKey);
    };
    if key_id(&key) != claimed {
        return Verdict::Forged(Forgery::KeyMismatch);
    }
    let sig = match object.get("sig") {
        Some(serde_json::Value::String(s)) => decode_sig(s),
        _ => None,
    };
    let Some(sig) = sig else {
        return Verdict::Forged(Forgery::NoSignature);
    };
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let whole = serde_json::to_vec(&object).unwrap_or_default();
    if whole != body {
        return Verdict::Forged(Forgery::NotCanonical);
    }
    object.remove("sig");
    let unsigned = serde_json::to_vec(&object).unwrap_or_default();
    match key.verify_strict(&message(&unsigned), &sig) {
        Ok(()) => Verdict::Verified,
        Err(_) => Verdict::Forged(Forgery::BadSignature),
    }
}

fn decode_key(text: &str) -> Option<VerifyingKey> {
    let bytes: [u8; 32] = B64.decode(text).ok()?.try_into().ok()?;
    VerifyingKey::from_bytes(&bytes).ok()
}

fn decode_sig(text: &str) -> Option<Signature> {
    let bytes: [u8; 64] = B64.decode(text).ok()?.try_into().ok()?;
    Some(Signature::from_bytes(&bytes))
}

/// The verdict on a file whose probe claims `device_id`, its bytes being
/// `bytes`: only a key-derived claim is checked (it costs a signature
/// check); any other is unsigned.
pub(crate) fn verdict_of(device_id: &str, bytes: &[u8]) -> Verdict {
    if is_key_id(device_id) {
        verify(bytes)
    } else {
        Verdict::Unsigned
    }
}

/// The verdict of a record claiming `device_id` that is known to count
/// (judged already, in this version): told by the id's form alone.
pub(crate) fn counting_verdict(device_id: &str) -> Verdict {
    if is_key_id(device_id) {
        Verdict::Verified
    } else {
        Verdict::Unsigned
    }
}

/// A new key pair from 32 random bytes.
pub(crate) fn key_from_seed(seed: &[u8; 32]) -> SigningKey {
    SigningKey::from_bytes(seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(n: u8) -> SigningKey {
        key_from_seed(&[n; 32])
    }

    fn signed(n: u8) -> Record {
        let mut r = Record::new("s1");
        r.host = "h".into();
        r.title = "a \"quoted\" title ✓".into();
        r.updated_at = Some(1_700_000_000.25);
        r.expires_at = Some(1_700_000_090.25);
        r.metadata.insert("k".into(), "v".into());
        sign(&mut r, &key(n));
        r
    }

    #[test]
    fn a_signed_record_verifies_and_its_id_is_its_key() {
        let r = signed(1);
        assert!(is_key_id(&r.device_id), "{}", r.device_id);
        assert_eq!(r.device_id, key_id(&key(1).verifying_key()));
        assert_eq!(verify(&r.to_json()), Verdict::Verified);
        // Without the trailing newline too.
        let bytes = r.to_json();
        assert_eq!(verify(&bytes[..bytes.len() - 1]), Verdict::Verified);
    }

    #[test]
    fn any_changed_field_is_a_forgery() {
        let r = signed(1);
        let mut ended = r.clone();
        ended.ended_at = Some(1_700_000_001.0);
        assert_eq!(
            verify(&ended.to_json()),
            Verdict::Forged(Forgery::BadSignature)
        );
        let mut later = r.clone();
        later.updated_at = Some(1_800_000_000.0);
        assert_eq!(
            verify(&later.to_json()),
            Verdict::Forged(Forgery::BadSignature)
        );
    }

    #[test]
    fn another_key_cannot_speak_for_an_id() {
        let victim = signed(1);
        // Signed by key 2, then given key 1's id.
        let mut forged = signed(2);
        forged.device_id = victim.device_id.clone();
        assert_eq!(
            verify(&forged.to_json()),
            Verdict::Forged(Forgery::KeyMismatch)
        );
        // Key 1's public key, key 2's signature.
        forged.key = victim.key.clone();
        assert_eq!(
            verify(&forged.to_json()),
            Verdict::Forged(Forgery::BadSignature)
        );
        let mut bare = victim.clone();
        bare.sig.clear();
        assert_eq!(
            verify(&bare.to_json()),
            Verdict::Forged(Forgery::NoSignature)
        );
        bare.key.clear();
        assert_eq!(verify(&bare.to_json()), Verdict::Forged(Forgery::NoKey));
    }

    #[test]
    fn a_duplicate_key_or_another_spelling_does_not_verify() {
        let r = signed(1);
        let text = String::from_utf8(r.to_json()).unwrap();
        // A duplicate `ended_at` before the signed bytes: a reader taking the
        // first would see a tombstone the author never wrote.
        let dup = text.replacen('{', "{\"ended_at\":1700000001.0,", 1);
        assert_eq!(
            verify(dup.as_bytes()),
            Verdict::Forged(Forgery::NotCanonical)
        );
        let spaced = text.replacen(",", ", ", 1);
        assert_eq!(
            verify(spaced.as_bytes()),
            Verdict::Forged(Forgery::NotCanonical)
        );
    }

    #[test]
    fn records_without_a_key_derived_id_are_unsigned() {
        let mut r = Record::new("s");
        assert_eq!(verify(&r.to_json()), Verdict::Unsigned);
        r.device_id = "0123456789abcdef0123456789abcdef".into();
        assert_eq!(verify(&r.to_json()), Verdict::Unsigned);
        assert_eq!(verify(b"not json"), Verdict::Unsigned);
        assert_eq!(crate::record::author(&r.device_id), "");
        let s = signed(3);
        assert_eq!(crate::record::author(&s.device_id), s.device_id);
    }

    #[test]
    fn verdict_codes_round_trip() {
        for v in [
            Verdict::Unsigned,
            Verdict::Verified,
            Verdict::Forged(Forgery::NoKey),
            Verdict::Forged(Forgery::KeyMismatch),
            Verdict::Forged(Forgery::NoSignature),
            Verdict::Forged(Forgery::NotCanonical),
            Verdict::Forged(Forgery::BadSignature),
        ] {
            assert_eq!(Verdict::from_code(v.code()), Some(v));
        }
        assert_eq!(Verdict::from_code(7), None);
    }

    #[test]
    fn fingerprints_look_like_ssh_keygen_ones() {
        let r = signed(1);
        let f = fingerprint(&r.key).unwrap();
        assert!(f.starts_with("SHA256:") && f.len() == 7 + 43, "{f}");
        assert_eq!(fingerprint("!!"), None);
    }

    proptest! {
        #[test]
        fn every_record_signs_and_verifies(
            title in ".{0,40}",
            cwd in ".{0,40}",
            updated in -1e12f64..1e12,
            seq in any::<u64>(),
            meta in proptest::collection::btree_map(".{1,8}", ".{0,8}", 0..4),
        ) {
            let mut r = Record::new("s");
            r.title = title;
            r.cwd = cwd;
            r.updated_at = Some(updated);
            r.seq = seq;
            r.metadata = meta;
            sign(&mut r, &key(9));
            prop_assert_eq!(verify(&r.to_json()), Verdict::Verified);
        }

        #[test]
        fn no_bytes_panic_the_verifier(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = verify(&bytes);
        }
    }
}
