//! The session presence record (schema version 1): its fields, its JSON form
//! and its limits.
//!
//! Writing is strict: [`Record::enforce_limits`] runs before every write.
//! Reading is lenient and lives apart: `parse` decides which files are
//! records at all, `lenient` reads each field. Over-long strings are read
//! whole (a file is at most [`MAX_FILE_BYTES`]) and cut to their limits by
//! [`Record::cut_to_limits`] only after redaction, so that a cut never splits
//! a credential into a part that is no longer recognised.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

mod lenient;
mod parse;

pub use parse::ParseError;
pub(crate) use parse::Probe;

/// The schema version this crate writes and understands.
pub(crate) const SCHEMA_VERSION: u32 = 1;
pub use crate::limits::{
    MAX_FILE_BYTES, MAX_METADATA_ENTRIES, MAX_METADATA_KEY_BYTES, MAX_STRING_BYTES, MAX_TITLE_CHARS,
};

/// One session presence record, as stored in `<instance>.<session>.json`.
///
/// Fields are declared in alphabetical order so that serialising the struct
/// writes sorted keys, as the record format requires.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Record {
    /// The client that runs the session (`terminal`, `desktop`, `gateway`, …).
    #[serde(default, deserialize_with = "lenient::string")]
    pub client: String,
    /// Working directory of the session; display only.
    #[serde(default, deserialize_with = "lenient::string")]
    pub cwd: String,
    /// Stable random id of the writing device (extension).
    #[serde(default, deserialize_with = "lenient::string")]
    pub device_id: String,
    /// Set by `clear`: the record is a tombstone (extension).
    #[serde(default, deserialize_with = "lenient::opt_f64")]
    pub ended_at: Option<f64>,
    /// Private attach hint (`ssh://host/x`); data only, acted on solely by
    /// `presence open` through [`crate::open`]'s checks.
    #[serde(default, deserialize_with = "lenient::string")]
    pub endpoint: String,
    /// `updated_at + ttl`, on the writer's clock.
    #[serde(default, deserialize_with = "lenient::opt_f64")]
    pub expires_at: Option<f64>,
    /// Hostname of the writer.
    #[serde(default, deserialize_with = "lenient::string")]
    pub host: String,
    /// Writer instance; the first part of the file name.
    #[serde(default, deserialize_with = "lenient::string")]
    pub instance_id: String,
    /// The writer's Ed25519 public key (base64url), for a record that signs
    /// (extension; see docs/record-format.md, "Signatures").
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "lenient::string"
    )]
    pub key: String,
    /// Small extra labels.
    #[serde(default, deserialize_with = "lenient::metadata")]
    pub metadata: BTreeMap<String, String>,
    /// Model name; display only.
    #[serde(default, deserialize_with = "lenient::string")]
    pub model: String,
    /// Start time of the owner process, to tell a live owner from a reused pid (extension).
    #[serde(default, deserialize_with = "lenient::opt_u64")]
    pub owner_start: Option<u64>,
    /// Pid of the owning process (or of the publisher when there is no owner).
    #[serde(default, deserialize_with = "lenient::u32_or_zero")]
    pub pid: u32,
    /// Label of the writer's profile; never empty in records this crate writes.
    #[serde(default, deserialize_with = "lenient::string")]
    pub profile: String,
    /// Increases by one at every publish of this record (extension).
    #[serde(default, deserialize_with = "lenient::u64_or_zero")]
    pub seq: u64,
    /// Runtime session id; required and non-empty.
    #[serde(default, deserialize_with = "lenient::string")]
    pub session_id: String,
    /// Stored/durable session id; defaults to `session_id`.
    #[serde(default, deserialize_with = "lenient::string")]
    pub session_key: String,
    /// Signature of every other field by `key` (extension; see
    /// docs/record-format.md, "Signatures").
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "lenient::string"
    )]
    pub sig: String,
    /// Where the session came from (`cli`, `telegram`, …).
    #[serde(default, deserialize_with = "lenient::string")]
    pub source: String,
    /// When the session was first published (extension).
    #[serde(default, deserialize_with = "lenient::opt_f64")]
    pub started_at: Option<f64>,
    /// Short state word: `idle`, `working`, `waiting`, `ended`, …
    #[serde(default, deserialize_with = "lenient::string")]
    pub status: String,
    /// Display title.
    #[serde(default, deserialize_with = "lenient::string")]
    pub title: String,
    /// Writer clock, Unix seconds, when last published.
    #[serde(default, deserialize_with = "lenient::opt_f64")]
    pub updated_at: Option<f64>,
    /// Schema version; `1`.
    #[serde(default = "default_version", deserialize_with = "lenient::version")]
    pub version: u32,
}

fn default_version() -> u32 {
    SCHEMA_VERSION
}

impl Record {
    /// A new record for `session_id` with every other field empty; the
    /// registry fills in host, device, times and sequence on publish.
    pub fn new(session_id: impl Into<String>) -> Self {
        let session_id = session_id.into();
        Record {
            client: String::new(),
            cwd: String::new(),
            device_id: String::new(),
            ended_at: None,
            endpoint: String::new(),
            expires_at: None,
            host: String::new(),
            instance_id: String::new(),
            key: String::new(),
            metadata: BTreeMap::new(),
            model: String::new(),
            owner_start: None,
            pid: 0,
            profile: String::new(),
            seq: 0,
            session_key: session_id.clone(),
            session_id,
            sig: String::new(),
            source: String::new(),
            started_at: None,
            status: String::new(),
            title: String::new(),
            updated_at: None,
            version: SCHEMA_VERSION,
        }
    }

    /// The client, or the source for a record that names no client: the
    /// name a session's program goes by in the table, `--client` and dedupe.
    pub fn client_or_source(&self) -> &str {
        client_or(&self.client, &self.source)
    }

    /// The record as written to disk: one JSON object with sorted keys and a
    /// trailing newline.
    pub fn to_json(&self) -> Vec<u8> {
        // Serialising a struct of strings, numbers and a string map cannot fail.
        let mut out = serde_json::to_vec(self).unwrap_or_default();
        out.push(b'\n');
        out
    }

    /// The group key of dedupe: `(profile, client or source, endpoint or session_id)`.
    pub fn group_key(&self) -> (&str, &str, &str) {
        group_key(
            &self.profile,
            &self.client,
            &self.source,
            &self.endpoint,
            &self.session_id,
        )
    }

    /// The life this record is a copy of: one run of a session by one writer,
    /// `(instance_id, session_id, started_at)` (the copies of one instance's
    /// session that carry no `started_at`, as Hermes Agent writes them, are
    /// one life). The one definition: dedupe digests it, the ledger keeps it,
    /// the watcher compares it.
    pub fn life(&self) -> Life<'_> {
        (&self.instance_id, &self.session_id, self.started_at)
    }

    /// Who speaks for this record, as dedupe keys its group and life: its
    /// key-derived `device_id`, or the one unsigned author (see
    /// [`author`]). Whether the claim holds is for the reader to check
    /// (the identity module's verdict).
    pub(crate) fn author(&self) -> &str {
        author(&self.device_id)
    }

    /// Enforces the write limits: strings are cut to their limit (each cut is
    /// reported as a warning), while too many metadata entries, an over-long
    /// metadata key or an empty session id are errors.
    pub fn enforce_limits(&mut self) -> Result<Vec<String>, crate::error::Error> {
        let invalid = |field: &str, message: String| crate::error::Error::InvalidRecord {
            field: field.to_string(),
            message,
        };
        if self.session_id.trim().is_empty() {
            return Err(invalid(
                "session_id",
                "must not be empty; pass --session ID".into(),
            ));
        }
        if self.metadata.len() > MAX_METADATA_ENTRIES {
            return Err(invalid(
                "metadata",
                format!(
                    "{} entries, at most {MAX_METADATA_ENTRIES} are allowed; drop some --meta",
                    self.metadata.len()
                ),
            ));
        }
        if let Some(k) = self
            .metadata
            .keys()
            .find(|k| k.is_empty() || k.len() > MAX_METADATA_KEY_BYTES)
        {
            return Err(invalid(
                "metadata",
                format!(
                    "key of {} bytes; keys must be 1 to {MAX_METADATA_KEY_BYTES} bytes",
                    k.len()
                ),
            ));
        }
        let mut warnings = Vec::new();
        for (name, value) in self.string_fields_mut() {
            let limit_hit = if name == "title" {
                value.chars().count() > MAX_TITLE_CHARS || value.len() > MAX_STRING_BYTES
            } else {
                value.len() > MAX_STRING_BYTES
            };
            if limit_hit {
                truncate_field(name, value);
                warnings.push(format!("{name} was longer than its limit and was cut"));
            }
        }
        for (k, v) in self.metadata.iter_mut() {
            if v.len() > MAX_STRING_BYTES {
                truncate_at_boundary(v, MAX_STRING_BYTES);
                warnings.push(format!(
                    "metadata '{k}' was longer than {MAX_STRING_BYTES} bytes and was cut"
                ));
            }
        }
        // Room for what signing adds (`key`, `sig`, a key-derived id).
        let len = self.to_json().len() + crate::limits::SIGNED_EXTRA_BYTES;
        if len > MAX_FILE_BYTES {
            return Err(invalid(
                "record",
                format!("{len} bytes once encoded, at most {MAX_FILE_BYTES}; shorten the fields"),
            ));
        }
        Ok(warnings)
    }

    /// The string fields by name, for limits and redaction.
    pub(crate) fn string_fields_mut(&mut self) -> [(&'static str, &mut String); 13] {
        [
            ("client", &mut self.client),
            ("cwd", &mut self.cwd),
            ("device_id", &mut self.device_id),
            ("endpoint", &mut self.endpoint),
            ("host", &mut self.host),
            ("instance_id", &mut self.instance_id),
            ("model", &mut self.model),
            ("profile", &mut self.profile),
            ("session_id", &mut self.session_id),
            ("session_key", &mut self.session_key),
            ("source", &mut self.source),
            ("status", &mut self.status),
            ("title", &mut self.title),
        ]
    }

    /// Cuts every string field and metadata value to its limit, as a reader
    /// does before showing a record. Call it after redaction: cutting first
    /// could leave half a token that no rule recognises. A cut that would end
    /// inside a redaction marker ends before it instead.
    pub fn cut_to_limits(&mut self) {
        for (name, value) in self.string_fields_mut() {
            truncate_field(name, value);
        }
        for value in self.metadata.values_mut() {
            truncate_at_boundary(value, MAX_STRING_BYTES);
        }
    }
}

/// The key is built from the strings cut to [`MAX_STRING_BYTES`]: strings
/// are read whole (for redaction), but a listing keeps one key per group, and
/// keys as long as the files would let a hostile directory fill the memory.
fn group_key<'s>(
    profile: &'s str,
    client: &'s str,
    source: &'s str,
    endpoint: &'s str,
    session_id: &'s str,
) -> (&'s str, &'s str, &'s str) {
    let [profile, client, source, endpoint, session_id] =
        [profile, client, source, endpoint, session_id].map(clip);
    let profile = label_of(profile);
    let client = client_or(client, source);
    let endpoint = endpoint.trim();
    let target = if endpoint.is_empty() {
        session_id
    } else {
        endpoint
    };
    (profile, client, target)
}

/// A life as [`Record::life`] gives it: `(instance_id, session_id, started_at)`.
pub type Life<'a> = (&'a str, &'a str, Option<f64>);

/// The alphabet of key-derived device ids: lowercase base32 (RFC 4648).
pub(crate) const BASE32: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// Whether `device_id` has the key-derived form (`identity::key_id`): 40 characters
/// of lowercase base32. Such a claim must be proved by a signature.
pub(crate) fn is_key_id(device_id: &str) -> bool {
    device_id.len() == crate::limits::KEY_ID_CHARS && device_id.bytes().all(|b| BASE32.contains(&b))
}

/// The author of a record claiming `device_id`, as dedupe keys lives and
/// groups: the id itself when it is key-derived (a forged claim never gets
/// as far as dedupe), and one shared empty author for every unsigned record.
pub(crate) fn author(device_id: &str) -> &str {
    if is_key_id(device_id) { device_id } else { "" }
}

/// "Client, else source": the name a record's program goes by, the source
/// for a record that names no client.
fn client_or<'s>(client: &'s str, source: &'s str) -> &'s str {
    if client.is_empty() { source } else { client }
}

/// A profile label as dedupe and filters compare it: Hermes writes `""` for
/// its default profile, which is our `default`.
pub(crate) fn label_of(label: &str) -> &str {
    if label.is_empty() { "default" } else { label }
}

fn truncate_field(name: &str, value: &mut String) {
    if name == "title"
        && let Some((idx, _)) = value.char_indices().nth(MAX_TITLE_CHARS)
    {
        cut(value, idx);
    }
    truncate_at_boundary(value, MAX_STRING_BYTES);
}

/// `s` cut to at most [`MAX_STRING_BYTES`] without splitting a character.
pub(crate) fn clip(s: &str) -> &str {
    let mut end = s.len().min(MAX_STRING_BYTES);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Cuts `s` to at most `max` bytes without splitting a character.
pub(crate) fn truncate_at_boundary(s: &mut String, max: usize) {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        cut(s, end);
    }
}

/// Truncates `s` at `end` (a character boundary), or before a redaction
/// marker that `end` would split (`…[reda`).
fn cut(s: &mut String, end: usize) {
    let marker = crate::limits::REDACTED;
    let start = end.saturating_sub(marker.len() - 1);
    let split = (start..end)
        .filter(|&i| s.is_char_boundary(i))
        .find(|&i| s[i..].starts_with(marker));
    s.truncate(split.unwrap_or(end));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_keys_are_sorted_and_newline_terminated() {
        let mut r = Record::new("s");
        r.metadata.insert("b".into(), "2".into());
        r.metadata.insert("a".into(), "1".into());
        let bytes = r.to_json();
        assert_eq!(bytes.last(), Some(&b'\n'));
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        let text = String::from_utf8(bytes).unwrap();
        let mut positions: Vec<_> = keys
            .iter()
            .map(|k| text.find(&format!("\"{k}\":")).unwrap())
            .collect();
        let sorted_positions = {
            let mut p = positions.clone();
            p.sort();
            p
        };
        // serde_json's Value map is sorted, so its key order is the sorted order;
        // the text must show them in the same order.
        assert_eq!(positions, sorted_positions);
        positions.dedup();
        assert_eq!(positions.len(), 22);
        assert!(text.find("\"a\":\"1\"").unwrap() < text.find("\"b\":\"2\"").unwrap());
    }

    #[test]
    fn ours_reads_back_in_a_v1_only_reader() {
        // A reader that knows only the Hermes fields, with their exact types.
        #[derive(serde::Deserialize)]
        #[allow(dead_code)]
        struct V1 {
            version: i64,
            session_id: String,
            session_key: String,
            status: String,
            title: String,
            model: String,
            cwd: String,
            source: String,
            client: String,
            profile: String,
            endpoint: String,
            host: String,
            pid: i64,
            instance_id: String,
            updated_at: f64,
            expires_at: f64,
            metadata: BTreeMap<String, String>,
        }
        let mut r = Record::new("s1");
        r.updated_at = Some(100.0);
        r.expires_at = Some(190.0);
        r.profile = "default".into();
        let v1: V1 = serde_json::from_slice(&r.to_json()).unwrap();
        assert_eq!(v1.session_id, "s1");
        assert_eq!(v1.session_key, "s1");
        assert_eq!(v1.expires_at, 190.0);
        assert_eq!(v1.version, 1);
    }

    #[test]
    fn a_cut_never_splits_a_redaction_marker() {
        let marker = crate::limits::REDACTED;
        for at in MAX_STRING_BYTES - marker.len() - 2..MAX_STRING_BYTES + 2 {
            let mut r = Record::new("s");
            r.cwd = format!("{}{marker}tail", "x".repeat(at));
            r.metadata.insert("m".into(), r.cwd.clone());
            r.cut_to_limits();
            for v in [&r.cwd, &r.metadata["m"]] {
                assert!(v.len() <= MAX_STRING_BYTES, "{at}");
                let whole = v
                    .match_indices('[')
                    .all(|(i, _)| v[i..].starts_with(marker));
                assert!(whole, "{at}: {}", &v[v.len().saturating_sub(12)..]);
            }
        }
    }

    #[test]
    fn write_limits() {
        let mut r = Record::new("s");
        r.title = "t".repeat(300);
        r.cwd = "c".repeat(2000);
        let warnings = r.enforce_limits().unwrap();
        assert_eq!(r.title.len(), MAX_TITLE_CHARS);
        assert_eq!(r.cwd.len(), MAX_STRING_BYTES);
        assert_eq!(warnings.len(), 2);
        assert!(warnings[0].contains("cwd"), "{warnings:?}");

        let mut r = Record::new("s");
        for i in 0..33 {
            r.metadata.insert(format!("k{i}"), "v".into());
        }
        assert!(matches!(
            r.enforce_limits(),
            Err(crate::error::Error::InvalidRecord { field, .. }) if field == "metadata"
        ));

        let mut r = Record::new("  ");
        assert!(r.enforce_limits().is_err());
    }

    fn arb_text() -> impl proptest::strategy::Strategy<Value = String> {
        "\\PC{0,40}"
    }

    fn arb_time() -> impl proptest::strategy::Strategy<Value = Option<f64>> {
        // Quarter seconds: exactly representable, so equality is exact.
        proptest::option::of((0i64..8_000_000_000).prop_map(|q| q as f64 / 4.0))
    }

    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_record_round_trips(
            session_id in "[a-z0-9][a-z0-9 ._/-]{0,30}",
            key in "[a-z0-9]{1,10}",
            texts in proptest::collection::vec(arb_text(), 9),
            times in proptest::collection::vec(arb_time(), 4),
            meta in proptest::collection::btree_map("[a-z_]{1,10}", arb_text(), 0..8),
            seq in any::<u64>(),
            pid in any::<u32>(),
            owner_start in proptest::option::of(any::<u64>()),
        ) {
            let mut r = Record::new(session_id);
            r.session_key = key;
            r.client = texts[0].clone();
            r.cwd = texts[1].clone();
            r.device_id = texts[2].clone();
            r.endpoint = texts[3].clone();
            r.host = texts[4].clone();
            r.instance_id = texts[5].clone();
            r.model = texts[6].clone();
            r.status = texts[7].clone();
            r.title = texts[8].clone();
            r.updated_at = times[0];
            r.expires_at = times[1];
            r.started_at = times[2];
            r.ended_at = times[3];
            r.metadata = meta;
            r.seq = seq;
            r.pid = pid;
            r.owner_start = owner_start;
            prop_assert!(r.clone().enforce_limits().is_ok());
            let back = Record::from_json(&r.to_json()).unwrap();
            prop_assert_eq!(back, r);
        }
    }

    #[test]
    fn group_key_prefers_client_and_endpoint() {
        let mut r = Record::new("s");
        r.profile = "p".into();
        r.source = "src".into();
        assert_eq!(r.group_key(), ("p", "src", "s"));
        r.client = "cli".into();
        r.endpoint = " ssh://h/x ".into();
        assert_eq!(r.group_key(), ("p", "cli", "ssh://h/x"));
        // Read whole, but keyed by at most MAX_STRING_BYTES of each part.
        let long = "é".repeat(30_000);
        let json = format!(r#"{{"session_id":"a","profile":"{long}","endpoint":"{long}"}}"#);
        let (r, p) = (
            Record::from_json(json.as_bytes()).unwrap(),
            Probe::parse(json.as_bytes()).unwrap(),
        );
        assert_eq!(r.endpoint, long);
        let (profile, _, target) = r.group_key();
        assert!(profile.len() == MAX_STRING_BYTES && target.len() == MAX_STRING_BYTES);
        assert_eq!(p.group_key(), r.group_key());
    }
}
