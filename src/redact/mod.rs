//! Secret detection and redaction (pure).
//!
//! The presence directory is synced to every device and often to a cloud, so
//! nothing that grants access may land in it, and nothing planted in it may
//! reach a terminal. [`redact_text`] replaces the secret part of each
//! credential it recognises with [`REDACTED`] and keeps the rest (the `KEY=`,
//! the `Authorization: Bearer `, the user of a URL), so the reader sees what
//! was removed. [`redact_record`] applies it to every string field and
//! metadata value, strips passwords and credential parameters from the
//! endpoint (which must stay usable as an attach hint), and drops metadata
//! entries whose key names a secret. It reports each redaction by field and
//! kind, never by value.
//!
//! Ordinary text is never changed: every rule needs a known token format
//! (with a left word boundary where its prefix ends words, so `task-…` is
//! not `sk-…`), a name that says "secret" next to the value, a frame (a
//! key's DER or `END` line, netrc words, `mysql -p`), base64 that decodes to
//! one of these, or a URL path segment that looks random. Redaction is
//! idempotent: a redacted text is left as it is and reports nothing.
//!
//! Clean text costs one pass over its bytes and is not copied: each rule
//! is guarded by literals that every text it matches contains (found by
//! one table look-up per byte) or by a few characters, and its regular
//! expression is compiled only when a guard first fires.
//!
//! The parts: [`shapes`] (the token formats), [`gates`](mod@gates) (the
//! prefilter and the compiled patterns), [`values`] (what a value looks
//! like), [`names`] (which names say "secret"), [`urls`] (credentials in
//! URLs), [`rules`] (the rules that read a name before a value) and
//! [`blobs`] (key bodies, PuTTY keys, base64-wrapped credentials). This file
//! runs them in order and applies them to records.

mod blobs;
mod gates;
mod names;
mod rules;
mod shapes;
mod urls;
mod values;

#[cfg(test)]
mod tests;

use regex::Regex;

pub use crate::limits::REDACTED;
use crate::record::Record;
use blobs::{redact_base64, redact_key_bodies, redact_putty};
use gates::{DISCORD_RE, Gates, PEM_RE, gates, shape_re};
pub(crate) use names::is_secret_key;
use rules::{
    redact_assignments, redact_auth_headers, redact_bearer, redact_cli_passwords, redact_curl_user,
    redact_flags, redact_netrc, redact_scp,
};
use shapes::SHAPES;
use urls::{redact_random_segments, redact_urls};

/// One redaction: where (the field, or `metadata.KEY`) and what kind of
/// credential. Never the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redaction {
    /// The field: `endpoint`, `title`, `metadata.KEY`, …
    pub field: String,
    /// What was removed: `password in URL`, `GitHub token`, …
    pub kind: String,
}

impl std::fmt::Display for Redaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.field, self.kind)
    }
}

/// How a URL's credentials are taken out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// In text: the secret part becomes [`REDACTED`].
    Mask,
    /// In the endpoint, which must stay usable: the password and credential
    /// parameters are removed.
    Remove,
}

/// Replaces credentials in `text`; returns the kinds found (empty when the
/// text is clean, and then the text is returned unchanged).
pub fn redact_text(text: &str) -> (String, Vec<&'static str>) {
    redact_with(text, Mode::Mask, gates(text))
}

/// Strips credentials from an attach hint: the password of a URL's userinfo
/// and credential query, fragment and matrix parameters are removed (the
/// rest of a fragment, `#L42`, is kept); then the text rules apply. Returns
/// the kinds removed. (Records are redacted by [`redact_record`], which
/// applies the same rules to the endpoint.)
#[cfg(test)]
pub(crate) fn redact_endpoint(endpoint: &str) -> (String, Vec<&'static str>) {
    redact_with(endpoint, Mode::Remove, gates(endpoint))
}

fn redact_with(text: &str, mode: Mode, g: Gates) -> (String, Vec<&'static str>) {
    let (new, kinds) = redacted(text, mode, g);
    (new.unwrap_or_else(|| text.to_owned()), kinds)
}

/// [`redact_with`] without a copy of a text it leaves as it is: the text
/// redacted (`None`: unchanged) and the kinds found.
fn redacted(text: &str, mode: Mode, g: Gates) -> (Option<String>, Vec<&'static str>) {
    let mut kinds: Vec<&'static str> = Vec::new();
    if !g.any() {
        return (None, kinds);
    }
    let mut out = std::borrow::Cow::Borrowed(text);
    let step = |out: &mut std::borrow::Cow<'_, str>,
                kinds: &mut Vec<&'static str>,
                kind,
                new: Option<String>| {
        if let Some(new) = new {
            *out = new.into();
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
    };
    if g.pem {
        let new = replace_regex(&PEM_RE, &out, REDACTED);
        step(&mut out, &mut kinds, "private key", new);
    }
    if g.putty {
        let new = redact_putty(&out);
        step(&mut out, &mut kinds, "PuTTY private key", new);
    }
    if g.pem || g.b64 {
        let new = redact_key_bodies(&out);
        step(&mut out, &mut kinds, "private key", new);
    }
    if g.discord {
        let new = replace_regex(&DISCORD_RE, &out, REDACTED);
        step(&mut out, &mut kinds, "Discord bot token", new);
    }
    if g.url {
        let mut found = Vec::new();
        if let Some(new) = redact_urls(&out, mode, &mut found) {
            out = new.into();
            for kind in found {
                if !kinds.contains(&kind) {
                    kinds.push(kind);
                }
            }
        }
    }
    if g.scp {
        let new = redact_scp(&out);
        step(&mut out, &mut kinds, "password in scp-style address", new);
    }
    for (i, shape) in SHAPES.iter().enumerate() {
        if g.shapes & (1 << i) != 0 {
            let new = replace_regex(shape_re(i), &out, shape.replacement);
            step(&mut out, &mut kinds, shape.kind, new);
        }
    }
    if g.path {
        let new = redact_random_segments(&out);
        step(&mut out, &mut kinds, "random URL path segment", new);
    }
    if g.auth {
        let new = redact_auth_headers(&out);
        step(&mut out, &mut kinds, "Authorization header", new);
    }
    if g.bearer {
        let new = redact_bearer(&out);
        step(&mut out, &mut kinds, "bearer token", new);
    }
    if g.curl {
        let new = redact_curl_user(&out);
        step(&mut out, &mut kinds, "password of -u/--user", new);
    }
    if g.cli {
        let new = redact_cli_passwords(&out);
        step(&mut out, &mut kinds, "password of -p", new);
    }
    if g.flag {
        let new = redact_flags(&out);
        step(&mut out, &mut kinds, "secret option value", new);
    }
    if g.netrc {
        let new = redact_netrc(&out);
        step(&mut out, &mut kinds, "netrc password", new);
    }
    if g.assignment {
        let new = redact_assignments(&out);
        step(&mut out, &mut kinds, "secret assignment", new);
    }
    if g.b64 {
        let new = redact_base64(&out);
        step(&mut out, &mut kinds, "base64-encoded credential", new);
    }
    match out {
        std::borrow::Cow::Borrowed(_) => (None, kinds),
        std::borrow::Cow::Owned(s) => (Some(s), kinds),
    }
}

/// `re` replaced in `text`, or `None` when nothing matched.
fn replace_regex(re: &Regex, text: &str, replacement: &str) -> Option<String> {
    match re.replace_all(text, replacement) {
        std::borrow::Cow::Borrowed(_) => None,
        std::borrow::Cow::Owned(s) => (s != text).then_some(s),
    }
}

// ---- records ------------------------------------------------------------

/// The first id field of `record` (`session_id`, `session_key`,
/// `instance_id`) that redaction would change, with the kind of credential it
/// looks like. Ids are never rewritten on publish: a mangled id is worse than
/// none, so a credential-shaped one is refused instead.
pub(crate) fn credential_in_id(record: &Record) -> Option<Redaction> {
    [
        ("session_id", &record.session_id),
        ("session_key", &record.session_key),
        ("instance_id", &record.instance_id),
    ]
    .into_iter()
    .find_map(|(field, value)| {
        let (_, kinds) = redact_text(value);
        kinds.first().map(|kind| Redaction {
            field: field.into(),
            kind: (*kind).into(),
        })
    })
}

/// Redacts every string field and the metadata of `record` in place and
/// returns what was removed. Running it twice reports nothing the second
/// time. The id fields are redacted too, as they must be for display; a
/// publish refuses credential-shaped ids before it gets here.
pub(crate) fn redact_record(record: &mut Record) -> Vec<Redaction> {
    let mut found = Vec::new();
    // Each value is copied only if it changes: a listing redacts every row.
    let mode = |field: &str| {
        if field == "endpoint" {
            Mode::Remove
        } else {
            Mode::Mask
        }
    };
    for (field, value) in record.string_fields_mut() {
        let (clean, kinds) = redacted(value, mode(field), gates(value));
        if let Some(clean) = clean
            && !kinds.is_empty()
        {
            *value = clean;
        }
        found.extend(kinds.into_iter().map(|kind| Redaction {
            field: field.to_string(),
            kind: kind.into(),
        }));
    }
    let mut dropped = Vec::new();
    for (key, value) in record.metadata.iter_mut() {
        if is_secret_key(key) {
            dropped.push(key.clone());
            found.push(Redaction {
                field: format!("metadata.{key}"),
                kind: "key names a secret; entry dropped".into(),
            });
            continue;
        }
        if !redacted(key, Mode::Mask, gates(key)).1.is_empty() {
            dropped.push(key.clone());
            found.push(Redaction {
                field: "metadata".into(),
                kind: "key shaped like a credential; entry dropped".into(),
            });
            continue;
        }
        let (clean, kinds) = redacted(value, Mode::Mask, gates(value));
        if let Some(clean) = clean
            && !kinds.is_empty()
        {
            *value = clean;
        }
        found.extend(kinds.into_iter().map(|kind| Redaction {
            field: format!("metadata.{key}"),
            kind: kind.into(),
        }));
    }
    for key in dropped {
        record.metadata.remove(&key);
    }
    found
}
