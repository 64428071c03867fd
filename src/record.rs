//! The session presence record (schema version 1): its fields, its JSON form
//! and its limits.
//!
//! Reading is lenient, because the directory is written by other tools, other
//! versions and sometimes by hand: unknown fields are ignored, a field of the
//! wrong type reads as missing and extra metadata entries are dropped. Only a
//! file that is not a JSON object, lacks a `session_id`, or names a newer
//! `version` is rejected — and only that file. Over-long strings are read
//! whole (a file is at most [`MAX_FILE_BYTES`]) and cut to their limits by
//! [`Record::cut_to_limits`] only after redaction, so that a cut never splits
//! a credential into a part that is no longer recognised.
//! Writing is strict: [`Record::enforce_limits`] runs before every write.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

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
    /// Private, non-executable attach hint (`ssh://host/x`); data only.
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
            metadata: BTreeMap::new(),
            model: String::new(),
            owner_start: None,
            pid: 0,
            profile: String::new(),
            seq: 0,
            session_key: session_id.clone(),
            session_id,
            source: String::new(),
            started_at: None,
            status: String::new(),
            title: String::new(),
            updated_at: None,
            version: SCHEMA_VERSION,
        }
    }

    /// Parses a record file's bytes leniently (see the module docs).
    pub fn from_json(bytes: &[u8]) -> Result<Record, ParseError> {
        let bytes = object_bytes(bytes)?;
        let mut record: Record =
            serde_json::from_slice(bytes).map_err(|e| ParseError::Json(e.to_string()))?;
        check(record.version, &record.session_id)?;
        if record.session_key.is_empty() {
            record.session_key = record.session_id.clone();
        }
        Ok(record)
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

    /// Enforces the write limits: strings are cut to their limit (each cut is
    /// reported as a warning), while too many metadata entries, an over-long
    /// metadata key or an empty session id are errors.
    pub fn enforce_limits(&mut self) -> Result<Vec<String>, crate::Error> {
        let invalid = |field: &str, message: String| crate::Error::InvalidRecord {
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
        let len = self.to_json().len();
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
    #[serde(
        default,
        borrow,
        rename = "device_id",
        deserialize_with = "lenient::cow"
    )]
    _device_id: Cow<'a, str>,
    #[serde(default, borrow, rename = "host", deserialize_with = "lenient::cow")]
    _host: Cow<'a, str>,
    #[serde(default, borrow, deserialize_with = "lenient::cow")]
    instance_id: Cow<'a, str>,
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
    #[serde(
        default,
        borrow,
        rename = "session_key",
        deserialize_with = "lenient::cow"
    )]
    _session_key: Cow<'a, str>,
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
        let p: Probe<'a> =
            serde_json::from_slice(bytes).map_err(|e| ParseError::Json(e.to_string()))?;
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

    /// The writer instance.
    pub fn instance_id(&self) -> &str {
        &self.instance_id
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
    let client = if client.is_empty() { source } else { client };
    let endpoint = endpoint.trim();
    let target = if endpoint.is_empty() {
        session_id
    } else {
        endpoint
    };
    (profile, client, target)
}

/// A profile label as dedupe and filters compare it: Hermes writes `""` for
/// its default profile, which is our `default`.
pub(crate) fn label_of(label: &str) -> &str {
    if label.is_empty() { "default" } else { label }
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
    let marker = crate::redact::REDACTED;
    let start = end.saturating_sub(marker.len() - 1);
    let split = (start..end)
        .filter(|&i| s.is_char_boundary(i))
        .find(|&i| s[i..].starts_with(marker));
    s.truncate(split.unwrap_or(end));
}

/// Field deserialisers that never fail on a wrong type: a field that does not
/// have the expected shape reads as missing, so one odd field never costs the
/// whole record (and never the whole listing).
mod lenient {
    use std::borrow::Cow;
    use std::collections::BTreeMap;
    use std::fmt;

    use serde::Deserializer;
    use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};

    /// What a JSON value was, reduced to what the record cares about.
    enum Scalar {
        Str(String),
        Int(i128),
        Float(f64),
        Bool(bool),
        Other,
    }

    struct ScalarVisitor;

    impl<'de> Visitor<'de> for ScalarVisitor {
        type Value = Scalar;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_str<E>(self, v: &str) -> Result<Scalar, E> {
            Ok(Scalar::Str(v.to_owned()))
        }
        fn visit_string<E>(self, v: String) -> Result<Scalar, E> {
            Ok(Scalar::Str(v))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Scalar, E> {
            Ok(Scalar::Int(v.into()))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Scalar, E> {
            Ok(Scalar::Int(v.into()))
        }
        fn visit_f64<E>(self, v: f64) -> Result<Scalar, E> {
            Ok(Scalar::Float(v))
        }
        fn visit_bool<E>(self, v: bool) -> Result<Scalar, E> {
            Ok(Scalar::Bool(v))
        }
        fn visit_unit<E>(self) -> Result<Scalar, E> {
            Ok(Scalar::Other)
        }
        fn visit_none<E>(self) -> Result<Scalar, E> {
            Ok(Scalar::Other)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Scalar::Other)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Scalar::Other)
        }
    }

    fn scalar<'de, D: Deserializer<'de>>(d: D) -> Result<Scalar, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }

    fn as_f64(s: Scalar) -> Option<f64> {
        let v = match s {
            Scalar::Float(f) => f,
            Scalar::Int(i) => i as f64,
            Scalar::Str(s) => s.trim().parse().ok()?,
            _ => return None,
        };
        v.is_finite().then_some(v)
    }

    fn as_int(s: Scalar) -> Option<i128> {
        match s {
            Scalar::Int(i) => Some(i),
            Scalar::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e18 => {
                Some(f as i128)
            }
            Scalar::Str(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    pub fn string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        Ok(match scalar(d)? {
            Scalar::Str(s) => s,
            _ => String::new(),
        })
    }

    /// A string borrowed from the input where it has no escapes.
    pub fn cow<'de, D: Deserializer<'de>>(d: D) -> Result<Cow<'de, str>, D::Error> {
        struct CowVisitor;
        impl<'de> Visitor<'de> for CowVisitor {
            type Value = Cow<'de, str>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(""))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(""))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(""))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(""))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(""))
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(""))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Cow::Borrowed(""))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Cow::Borrowed(""))
            }
        }
        d.deserialize_any(CowVisitor)
    }

    pub fn opt_f64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        Ok(as_f64(scalar(d)?))
    }

    pub fn opt_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        Ok(as_int(scalar(d)?).and_then(|i| u64::try_from(i).ok()))
    }

    pub fn u64_or_zero<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        Ok(opt_u64(d)?.unwrap_or(0))
    }

    pub fn u32_or_zero<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        Ok(as_int(scalar(d)?)
            .and_then(|i| u32::try_from(i).ok())
            .unwrap_or(0))
    }

    /// A version that is present but unreadable is not version 1: it maps to
    /// `u32::MAX`, which the reader rejects as unknown.
    pub fn version<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        Ok(as_int(scalar(d)?)
            .and_then(|i| u32::try_from(i).ok())
            .unwrap_or(u32::MAX))
    }

    struct MetaVisitor;

    impl<'de> Visitor<'de> for MetaVisitor {
        type Value = BTreeMap<String, String>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object of strings")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some(key) = map.next_key::<String>()? {
                let value = map.next_value_seed(ScalarSeed)?;
                let text = match value {
                    Scalar::Str(s) => s,
                    Scalar::Int(i) => i.to_string(),
                    Scalar::Float(f) => f.to_string(),
                    Scalar::Bool(b) => b.to_string(),
                    Scalar::Other => continue,
                };
                if key.is_empty() || key.len() > super::MAX_METADATA_KEY_BYTES {
                    continue;
                }
                out.insert(key, text);
            }
            // Keep the first entries in key order: deterministic whatever the file's order.
            while out.len() > super::MAX_METADATA_ENTRIES {
                out.pop_last();
            }
            Ok(out)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(BTreeMap::new())
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(BTreeMap::new())
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(BTreeMap::new())
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(BTreeMap::new())
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(BTreeMap::new())
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(BTreeMap::new())
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(BTreeMap::new())
        }
    }

    struct ScalarSeed;

    impl<'de> serde::de::DeserializeSeed<'de> for ScalarSeed {
        type Value = Scalar;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Scalar, D::Error> {
            scalar(d)
        }
    }

    pub fn metadata<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
        d.deserialize_any(MetaVisitor)
    }

    /// Walks a metadata value exactly as [`metadata`] does (so it fails on
    /// the same inputs) without keeping anything.
    pub fn metadata_check<'de, D: Deserializer<'de>>(d: D) -> Result<(), D::Error> {
        struct CheckVisitor;
        struct KeySeed;
        impl<'de> serde::de::DeserializeSeed<'de> for KeySeed {
            type Value = ();
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
                // `String`'s own Deserialize asks for a string, as here.
                d.deserialize_string(KeyVisitor)
            }
        }
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = ();
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_str<E>(self, _: &str) -> Result<(), E> {
                Ok(())
            }
        }
        struct ValueSeed;
        impl<'de> serde::de::DeserializeSeed<'de> for ValueSeed {
            type Value = ();
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
                cow(d).map(drop)
            }
        }
        impl<'de> Visitor<'de> for CheckVisitor {
            type Value = ();
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of strings")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
                while map.next_key_seed(KeySeed)?.is_some() {
                    map.next_value_seed(ValueSeed)?;
                }
                Ok(())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(())
            }
            fn visit_str<E>(self, _: &str) -> Result<(), E> {
                Ok(())
            }
            fn visit_i64<E>(self, _: i64) -> Result<(), E> {
                Ok(())
            }
            fn visit_u64<E>(self, _: u64) -> Result<(), E> {
                Ok(())
            }
            fn visit_f64<E>(self, _: f64) -> Result<(), E> {
                Ok(())
            }
            fn visit_bool<E>(self, _: bool) -> Result<(), E> {
                Ok(())
            }
            fn visit_unit<E>(self) -> Result<(), E> {
                Ok(())
            }
        }
        d.deserialize_any(CheckVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_cut_never_splits_a_redaction_marker() {
        let marker = crate::redact::REDACTED;
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
            Err(crate::Error::InvalidRecord { field, .. }) if field == "metadata"
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
            parse(&json).unwrap(),
            Probe::parse(json.as_bytes()).unwrap(),
        );
        assert_eq!(r.endpoint, long);
        let (profile, _, target) = r.group_key();
        assert!(profile.len() == MAX_STRING_BYTES && target.len() == MAX_STRING_BYTES);
        assert_eq!(p.group_key(), r.group_key());
    }
}
