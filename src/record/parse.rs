//! Reading a record file: which files are records at all, as
//! [`Record::from_json`] reads them whole and [`Probe::parse`] reads the few
//! fields a listing needs.
//!
//! Reading is lenient, because the directory is written by other tools, other
//! versions and sometimes by hand: unknown fields are ignored, a field of the
//! wrong type reads as missing and extra metadata entries are dropped. Only a
//! file that is not a JSON object, lacks a `session_id`, or names a newer
//! `version` is rejected — and only that file. The two readers sit together,
//! apart from the schema, because they must accept exactly the same files.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;

use super::{Record, SCHEMA_VERSION, default_version, group_key, lenient};

/// Why a file's contents are not a usable record.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ParseError {
    /// Not JSON, or not a JSON object.
    Json(String),
    /// `session_id` is missing, empty or not a string.
    NoSessionId,
    /// The record names a schema version this reader does not know.
    UnknownVersion(u32),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Json(e) => write!(f, "not a JSON record object: {e}"),
            ParseError::NoSessionId => f.write_str("no session_id"),
            ParseError::UnknownVersion(v) => write!(f, "unknown schema version {v}"),
        }
    }
}

impl std::error::Error for ParseError {}

impl Record {
    /// Parses a record file's bytes leniently (see the module docs).
    pub fn from_json(bytes: &[u8]) -> Result<Record, ParseError> {
        let bytes = object_bytes(bytes)?;
        let mut record: Record = json(bytes)?;
        check(record.version, &record.session_id)?;
        if record.session_key.is_empty() {
            record.session_key = record.session_id.clone();
        }
        Ok(record)
    }
}

/// The few fields that dedupe and liveness need, read without copying the
/// strings where the JSON allows (no escapes). A listing parses every file
/// this way and fully parses ([`Record`]) only the records it shows.
///
/// A probe must accept exactly the files that [`Record::from_json`] accepts,
/// or `list` and `list --all` would disagree about a hostile file. So it
/// declares every field of [`Record`], each with the same lenient reader
/// (a duplicate key, a bad escape, invalid UTF-8 or an out-of-range number
/// fails both alike), and merely borrows or checks what it does not keep.
#[derive(Debug, Deserialize)]
pub(crate) struct Probe<'a> {
    #[serde(default, borrow, deserialize_with = "lenient::cow")]
    profile: Cow<'a, str>,
    #[serde(default, borrow, deserialize_with = "lenient::cow")]
    client: Cow<'a, str>,
    #[serde(default, borrow, deserialize_with = "lenient::cow")]
    source: Cow<'a, str>,
    #[serde(default, borrow, deserialize_with = "lenient::cow")]
    endpoint: Cow<'a, str>,
    #[serde(default, borrow, deserialize_with = "lenient::cow")]
    session_id: Cow<'a, str>,
    /// `updated_at`.
    #[serde(default, deserialize_with = "lenient::opt_f64")]
    pub updated_at: Option<f64>,
    /// `expires_at`.
    #[serde(default, deserialize_with = "lenient::opt_f64")]
    pub expires_at: Option<f64>,
    /// `ended_at`.
    #[serde(default, deserialize_with = "lenient::opt_f64")]
    pub ended_at: Option<f64>,
    /// `seq`.
    #[serde(default, deserialize_with = "lenient::u64_or_zero")]
    pub seq: u64,
    #[serde(default = "default_version", deserialize_with = "lenient::version")]
    version: u32,
    // Read only to fail where `Record` fails.
    #[serde(default, borrow, rename = "cwd", deserialize_with = "lenient::cow")]
    _cwd: Cow<'a, str>,
    #[serde(default, borrow, deserialize_with = "lenient::cow")]
    device_id: Cow<'a, str>,
    #[serde(default, borrow, deserialize_with = "lenient::cow")]
    host: Cow<'a, str>,
    #[serde(default, borrow, deserialize_with = "lenient::cow")]
    instance_id: Cow<'a, str>,
    #[serde(default, borrow, rename = "key", deserialize_with = "lenient::cow")]
    _key: Cow<'a, str>,
    #[serde(default, borrow, rename = "sig", deserialize_with = "lenient::cow")]
    _sig: Cow<'a, str>,
    #[serde(
        default,
        rename = "metadata",
        deserialize_with = "lenient::metadata_check"
    )]
    _metadata: (),
    #[serde(default, borrow, rename = "model", deserialize_with = "lenient::cow")]
    _model: Cow<'a, str>,
    #[serde(default, rename = "owner_start", deserialize_with = "lenient::opt_u64")]
    _owner_start: Option<u64>,
    #[serde(default, rename = "pid", deserialize_with = "lenient::u32_or_zero")]
    _pid: u32,
    #[serde(default, borrow, deserialize_with = "lenient::cow")]
    session_key: Cow<'a, str>,
    /// `started_at`.
    #[serde(default, deserialize_with = "lenient::opt_f64")]
    pub started_at: Option<f64>,
    #[serde(default, borrow, rename = "status", deserialize_with = "lenient::cow")]
    _status: Cow<'a, str>,
    #[serde(default, borrow, rename = "title", deserialize_with = "lenient::cow")]
    _title: Cow<'a, str>,
}

impl<'a> Probe<'a> {
    /// Parses the probe fields of a record file (see [`Record::from_json`]).
    pub fn parse(bytes: &'a [u8]) -> Result<Probe<'a>, ParseError> {
        let bytes = object_bytes(bytes)?;
        let p: Probe<'a> = json(bytes)?;
        check(p.version, &p.session_id)?;
        Ok(p)
    }

    /// The writer's profile label.
    pub fn profile(&self) -> &str {
        &self.profile
    }

    /// The runtime session id.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The runtime session id, cut as the full record cuts it, borrowed
    /// from the bytes where the JSON allows.
    pub fn into_session_id(self) -> Cow<'a, str> {
        match self.session_id {
            Cow::Borrowed(s) => Cow::Borrowed(super::clip(s)),
            Cow::Owned(s) => Cow::Owned(super::clip(&s).to_owned()),
        }
    }

    /// The stable session key (the session id when it has none), as the
    /// full record reads it.
    pub fn session_key(&self) -> &str {
        if self.session_key.is_empty() {
            &self.session_id
        } else {
            &self.session_key
        }
    }

    /// The writer's device.
    pub fn device_id(&self) -> &str {
        &self.device_id
    }

    /// The host the record names.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The instance the record names.
    pub fn instance_id(&self) -> &str {
        &self.instance_id
    }

    /// The author, as [`Record::author`] says it.
    pub fn author(&self) -> &str {
        super::author(&self.device_id)
    }

    /// The life, as [`Record::life`] defines it.
    pub fn life(&self) -> super::Life<'_> {
        (&self.instance_id, &self.session_id, self.started_at)
    }

    /// The dedupe group key, as [`Record::group_key`] computes it.
    pub fn group_key(&self) -> (&str, &str, &str) {
        group_key(
            &self.profile,
            &self.client,
            &self.source,
            &self.endpoint,
            &self.session_id,
        )
    }
}

/// The checks after parsing that [`Record::from_json`] and [`Probe::parse`]
/// share, on the values as read (before any cut).
fn check(version: u32, session_id: &str) -> Result<(), ParseError> {
    if version != SCHEMA_VERSION {
        return Err(ParseError::UnknownVersion(version));
    }
    if session_id.trim().is_empty() {
        return Err(ParseError::NoSessionId);
    }
    Ok(())
}

/// `bytes` as JSON of `T`. Bytes that are UTF-8 throughout (every record
/// that is one) are read as a `str`, whose strings serde_json then need
/// not check again one by one; any others are read as bytes, which gives
/// the same outcome and message as ever (serde_json does not check the
/// strings it skips, so such a file may still be a record).
fn json<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, ParseError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(bytes),
    }
    .map_err(|e| ParseError::Json(e.to_string()))
}

/// The bytes of a record file without a byte order mark, if they hold a
/// JSON object (serde would also accept a struct written as an array).
fn object_bytes(bytes: &[u8]) -> Result<&[u8], ParseError> {
    // A UTF-8 byte order mark is not JSON, but editors write it.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(ParseError::Json("not a JSON object".into()));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::{MAX_METADATA_ENTRIES, MAX_STRING_BYTES, MAX_TITLE_CHARS};

    fn parse(s: &str) -> Result<Record, ParseError> {
        Record::from_json(s.as_bytes())
    }

    /// A JSON key as raw bytes: a record field (often repeated), an unknown
    /// one, or a key with escapes.
    fn raw_key() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            4 => proptest::sample::select(vec![
                "session_id", "session_key", "profile", "client", "source", "endpoint",
                "updated_at", "expires_at", "ended_at", "seq", "version", "title", "model",
                "cwd", "host", "pid", "instance_id", "metadata", "device_id", "started_at",
                "owner_start", "status",
            ]).prop_map(|k| format!("\"{k}\"").into_bytes()),
            1 => Just(b"\"unknown\"".to_vec()),
            1 => Just(b"\"session\\u005fid\"".to_vec()),
        ]
    }

    /// A JSON value as raw bytes, valid or not.
    fn raw_value() -> impl Strategy<Value = Vec<u8>> {
        let leaf = prop_oneof![
            Just(b"null".to_vec()),
            Just(b"true".to_vec()),
            Just(b"1".to_vec()),
            Just(b"-0".to_vec()),
            Just(b"1.5e9".to_vec()),
            Just(b"1e400".to_vec()),
            Just(b"-1e400".to_vec()),
            Just(b"123456789012345678901234567890".to_vec()),
            Just(b"\"s\"".to_vec()),
            Just(b"\"  \"".to_vec()),
            Just(b"\"caf\xc3\xa9\"".to_vec()),
            Just(b"\"bad\xff\xfe utf8\"".to_vec()),
            Just(b"\"\\ud800 lone\"".to_vec()),
            Just(b"\"\\ud83d\\ude00 pair\"".to_vec()),
            Just(b"\"bad \\q escape\"".to_vec()),
            Just(b"\"raw \x01 control\"".to_vec()),
            Just(b"\"1700000000.5\"".to_vec()),
            Just(format!("\"{}x\"", " ".repeat(1030)).into_bytes()),
            "[a-z0-9 ]{0,8}".prop_map(|s| format!("\"{s}\"").into_bytes()),
        ];
        leaf.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(|vs| {
                    let mut out = b"[".to_vec();
                    out.extend(vs.join(&b","[..]));
                    out.push(b']');
                    out
                }),
                proptest::collection::vec((raw_key(), inner), 0..3).prop_map(|kvs| {
                    let mut out = b"{".to_vec();
                    let parts: Vec<Vec<u8>> = kvs
                        .into_iter()
                        .map(|(k, v)| [k, b":".to_vec(), v].concat())
                        .collect();
                    out.extend(parts.join(&b","[..]));
                    out.push(b'}');
                    out
                }),
            ]
        })
    }

    /// A record exactly as Hermes Agent's Python module writes it.
    const HERMES: &str = r#"{"client": "cli", "cwd": "/home/a/proj", "endpoint": "", "expires_at": 1764480090.25, "host": "laptop", "instance_id": "laptop-4242", "metadata": {}, "model": "claude", "pid": 4242, "profile": "", "session_id": "s1", "session_key": "k1", "source": "cli", "status": "idle", "title": "Fix bug", "updated_at": 1764480000.25, "version": 1}"#;

    #[test]
    fn hermes_record_parses_with_defaults_for_extensions() {
        let r = parse(HERMES).unwrap();
        assert_eq!(r.session_id, "s1");
        assert_eq!(r.session_key, "k1");
        assert_eq!(r.updated_at, Some(1764480000.25));
        assert_eq!(r.expires_at, Some(1764480090.25));
        assert_eq!(r.pid, 4242);
        assert_eq!(r.seq, 0);
        assert_eq!(r.device_id, "");
        assert_eq!(r.ended_at, None);
        assert_eq!(r.started_at, None);
    }

    #[test]
    fn lenient_read_table() {
        // (json, expectation)
        let cases: &[(&str, Result<&str, ParseError>)] = &[
            (r#"{"session_id":"a"}"#, Ok("a")),
            (r#"{"session_id":"a","version":1}"#, Ok("a")),
            (
                r#"{"session_id":"a","version":2}"#,
                Err(ParseError::UnknownVersion(2)),
            ),
            (
                r#"{"session_id":"a","version":"x"}"#,
                Err(ParseError::UnknownVersion(u32::MAX)),
            ),
            (r#"{"session_id":""}"#, Err(ParseError::NoSessionId)),
            (r#"{"session_id":5}"#, Err(ParseError::NoSessionId)),
            (r#"{"title":"x"}"#, Err(ParseError::NoSessionId)),
            (r#"{"session_id":"a","unknown":{"deep":[1,2]}}"#, Ok("a")),
            ("\u{feff}{\"session_id\":\"bom\"}", Ok("bom")),
        ];
        for (json, want) in cases {
            let got = parse(json).map(|r| r.session_id);
            match (want, &got) {
                (Ok(id), Ok(got_id)) => assert_eq!(id, got_id, "{json}"),
                (Err(e), Err(g)) => assert_eq!(e, g, "{json}"),
                _ => panic!("{json}: want {want:?}, got {got:?}"),
            }
        }
        for bad in [
            "",
            "[]",
            "null",
            "42",
            "\"s\"",
            "{\"session_id\":\"a\"",
            "{]",
        ] {
            assert!(matches!(parse(bad), Err(ParseError::Json(_))), "{bad:?}");
        }
    }

    #[test]
    fn wrong_types_read_as_missing() {
        let r = parse(
            r#"{"session_id":"a","updated_at":"12.5","expires_at":"soon","pid":-3,
                "seq":2.0,"title":["x"],"metadata":{"n":1,"b":true,"o":{},"s":"v"},
                "owner_start":null,"ended_at":{}}"#,
        )
        .unwrap();
        assert_eq!(r.updated_at, Some(12.5));
        assert_eq!(r.expires_at, None);
        assert_eq!(r.pid, 0);
        assert_eq!(r.seq, 2);
        assert_eq!(r.title, "");
        assert_eq!(r.ended_at, None);
        let meta: Vec<_> = r.metadata.iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(meta, ["b=true", "n=1", "s=v"]);
    }

    #[test]
    fn read_limits_are_tolerated_by_cutting() {
        let long = "é".repeat(2000);
        let meta: Vec<String> = (0..40).map(|i| format!("\"k{i:02}\":\"v\"")).collect();
        let json = format!(
            r#"{{"session_id":"a","title":"{long}","cwd":"{long}","metadata":{{{}}}}}"#,
            meta.join(",")
        );
        let mut r = parse(&json).unwrap();
        assert_eq!(r.metadata.len(), MAX_METADATA_ENTRIES);
        assert!(r.metadata.contains_key("k00") && !r.metadata.contains_key("k39"));
        // Strings are read whole, for redaction to see; cut afterwards.
        assert_eq!(r.title, long);
        r.cut_to_limits();
        assert_eq!(r.title.chars().count(), MAX_TITLE_CHARS);
        assert!(r.cwd.len() <= MAX_STRING_BYTES && r.cwd.len() > MAX_STRING_BYTES - 2);
    }

    #[test]
    fn deep_nesting_never_crashes() {
        let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let unknown = format!(r#"{{"session_id":"a","x":{}}}"#, nest(100_000));
        assert_eq!(parse(&unknown).unwrap().session_id, "a");
        let known = format!(r#"{{"session_id":"a","title":{}}}"#, nest(100_000));
        assert_eq!(parse(&known).unwrap().title, "");
        let top = format!(r#"{{"session_id":{}}}"#, nest(100_000));
        assert!(parse(&top).is_err());
        assert!(matches!(parse(&nest(100_000)), Err(ParseError::Json(_))));
    }

    use proptest::prelude::*;

    proptest! {
        #[test]
        fn probe_and_record_agree(
            fields in proptest::collection::vec(
                (
                    prop_oneof![
                        Just("session_id"), Just("profile"), Just("client"), Just("source"),
                        Just("endpoint"), Just("updated_at"), Just("expires_at"), Just("ended_at"),
                        Just("seq"), Just("version"), Just("title"),
                    ],
                    prop_oneof![
                        "[a-z \\\\\"/é]{0,12}".prop_map(serde_json::Value::from),
                        (-5i64..5).prop_map(serde_json::Value::from),
                        (0.0f64..2e9).prop_map(serde_json::Value::from),
                        Just(serde_json::Value::Null),
                        Just(serde_json::json!([1, {"a": 2}])),
                        Just(serde_json::Value::from("x".repeat(1500))),
                    ],
                ),
                0..10,
            ),
        ) {
            let obj: serde_json::Map<String, serde_json::Value> =
                fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            let bytes = serde_json::to_vec(&obj).unwrap();
            let record = Record::from_json(&bytes);
            let probe = Probe::parse(&bytes);
            prop_assert_eq!(record.is_ok(), probe.is_ok(), "{}", String::from_utf8_lossy(&bytes));
            if let (Ok(r), Ok(p)) = (record, probe) {
                prop_assert_eq!(r.group_key(), p.group_key());
                prop_assert_eq!(r.profile.as_str(), p.profile());
                prop_assert_eq!((r.updated_at, r.expires_at, r.ended_at, r.seq),
                                (p.updated_at, p.expires_at, p.ended_at, p.seq));
            }
        }

        /// Raw files, as another device could write them: duplicate keys,
        /// every field name with every type, huge numbers, bad escapes, lone
        /// surrogates, invalid UTF-8, a byte order mark, cut-off text. The
        /// probe and the full parser reach the same verdict on each.
        #[test]
        fn probe_and_record_agree_on_raw_files(
            bom in any::<bool>(),
            fields in proptest::collection::vec((raw_key(), raw_value()), 0..12),
            cut in proptest::option::weighted(0.1, any::<proptest::sample::Index>()),
        ) {
            let mut bytes = Vec::new();
            if bom {
                bytes.extend_from_slice(b"\xEF\xBB\xBF");
            }
            bytes.push(b'{');
            for (i, (k, v)) in fields.iter().enumerate() {
                if i > 0 {
                    bytes.push(b',');
                }
                bytes.extend_from_slice(k);
                bytes.push(b':');
                bytes.extend_from_slice(v);
            }
            bytes.push(b'}');
            if let Some(at) = cut {
                bytes.truncate(at.index(bytes.len() + 1));
            }
            let record = Record::from_json(&bytes);
            let probe = Probe::parse(&bytes);
            let shown = String::from_utf8_lossy(&bytes);
            match (&record, &probe) {
                (Ok(r), Ok(p)) => {
                    prop_assert_eq!(r.group_key(), p.group_key(), "{}", shown);
                    prop_assert_eq!((r.updated_at, r.expires_at, r.ended_at, r.seq),
                                    (p.updated_at, p.expires_at, p.ended_at, p.seq), "{}", shown);
                }
                (Err(a), Err(b)) => prop_assert_eq!(
                    std::mem::discriminant(a), std::mem::discriminant(b), "{} vs {} on {}", a, b, shown),
                _ => prop_assert!(false, "record {:?} but probe {:?} on {}", record.as_ref().map(|_| ()), probe.as_ref().map(|_| ()), shown),
            }
        }

        #[test]
        fn parsing_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = Record::from_json(&bytes);
        }

        #[test]
        fn parsing_json_shaped_text_never_panics(text in "[{}\\[\\]\":,0-9a-z_.eE+-]{0,200}") {
            let _ = Record::from_json(text.as_bytes());
        }
    }
}
