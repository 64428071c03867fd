//! Field deserialisers that never fail on a wrong type: a field that does not
//! have the expected shape reads as missing, so one odd field never costs the
//! whole record (and never the whole listing).
//!
//! Both [`Record`](super::Record) and the parser's `Probe` name these in
//! their serde attributes; giving both the same reader for each field is what
//! makes them fail on the same inputs.

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
        Scalar::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e18 => Some(f as i128),
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
