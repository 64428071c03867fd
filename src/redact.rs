//! Secret detection and redaction (pure).
//!
//! The presence directory is synced to every device and often to a cloud, so
//! nothing that grants access may land in it. [`redact_record`] strips
//! passwords, credential-named query parameters and fragments from the
//! endpoint, replaces well-known credential shapes in every string field and
//! metadata value with [`REDACTED`], and drops metadata entries whose key names
//! a secret. It reports each redaction by field and kind, never by value. It is
//! idempotent: redacting a redacted record changes nothing and reports nothing.

use std::sync::LazyLock;

use regex::{Captures, Regex, RegexSet};

use crate::record::Record;

/// What a redacted credential is replaced with.
pub const REDACTED: &str = "[redacted]";

/// One redaction: where (the field, or `metadata.KEY`) and what kind of
/// credential. Never the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redaction {
    /// The field: `endpoint`, `title`, `metadata.KEY`, …
    pub field: String,
    /// What was removed: `password in userinfo`, `GitHub token`, …
    pub kind: String,
}

impl std::fmt::Display for Redaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.field, self.kind)
    }
}

/// Credential shapes: (name, pattern). Patterns avoid `[` and `]` in what
/// they consume, so [`REDACTED`] never matches one of them.
const SHAPES: &[(&str, &str)] = &[
    ("GitHub token", r"gh[pousr]_[A-Za-z0-9]{36,255}"),
    (
        "GitHub fine-grained token",
        r"github_pat_[A-Za-z0-9_]{22,255}",
    ),
    ("GitLab token", r"glpat-[0-9A-Za-z_-]{20,}"),
    (
        "AWS access key id",
        r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}",
    ),
    (
        "AWS secret key",
        r"(?i)aws_?secret_?access_?key\s*[=:]\s*[A-Za-z0-9/+=]{40}",
    ),
    ("Slack token", r"xox[abposr]-[A-Za-z0-9-]{10,}"),
    (
        "Slack webhook",
        r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+",
    ),
    (
        "Discord webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]+",
    ),
    ("OpenAI/Anthropic key", r"sk-[A-Za-z0-9_-]{20,}"),
    ("Stripe key", r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}"),
    ("Google API key", r"AIza[0-9A-Za-z_-]{35}"),
    ("Google OAuth secret", r"GOCSPX-[A-Za-z0-9_-]{28}"),
    (
        "JSON web token",
        r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*",
    ),
    (
        "private key",
        r"(?s)-----BEGIN[A-Z ]*PRIVATE KEY( BLOCK)?-----.*?(?:-----END[A-Z ]*PRIVATE KEY( BLOCK)?-----|\z)",
    ),
    ("bearer token", r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}"),
    ("npm token", r"npm_[A-Za-z0-9]{36}"),
    ("PyPI token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
    ("Hugging Face token", r"hf_[A-Za-z0-9]{34,}"),
    ("SendGrid key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    ("Telegram bot token", r"[0-9]{8,10}:AA[A-Za-z0-9_-]{33}"),
    ("DigitalOcean token", r"do[por]_v1_[a-f0-9]{64}"),
    ("Shopify token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("age secret key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
];

/// `scheme://user:password@` anywhere in text; the password is dropped.
const URL_PASSWORD: &str = r"([A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*):[^\s/@]*@";
/// `password=…`, `token=…` and friends; the value is replaced.
const ASSIGNMENT: &str = r"(?i)\b(password|passwd|pwd|passphrase|secret|client[_-]?secret|token|access[_-]?token|auth[_-]?token|refresh[_-]?token|api[_-]?key|access[_-]?key|accountkey|private[_-]?key)(\s*=\s*)([^\s&,;'\x22\[\]]{3,})";

struct Patterns {
    any: RegexSet,
    shapes: Vec<(&'static str, Regex)>,
    url_password: Regex,
    assignment: Regex,
}

static PATTERNS: LazyLock<Patterns> = LazyLock::new(|| {
    // The patterns are constants covered by tests; a failure here is a bug in
    // this file, found by the first test that redacts anything.
    #[allow(clippy::expect_used)]
    let compile = |p: &str| Regex::new(p).expect("credential pattern compiles");
    let all = SHAPES
        .iter()
        .map(|(_, p)| *p)
        .chain([URL_PASSWORD, ASSIGNMENT]);
    #[allow(clippy::expect_used)]
    let any = RegexSet::new(all).expect("credential patterns compile");
    Patterns {
        any,
        shapes: SHAPES.iter().map(|(n, p)| (*n, compile(p))).collect(),
        url_password: compile(URL_PASSWORD),
        assignment: compile(ASSIGNMENT),
    }
});

/// Literals of which every credential shape contains at least one (compared
/// ignoring ASCII case). Text without any of them — nearly all text — is
/// clean without running a regex, and without even compiling one: a publish
/// or a listing of clean records never pays for the patterns.
const TRIGGERS: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "akia",
    "asia",
    "abia",
    "acca",
    "agpa",
    "aida",
    "aroa",
    "anpa",
    "anva",
    "aipa",
    "secret",
    "xox",
    "hooks.slack.com",
    "discord",
    "sk-",
    "_live_",
    "_test_",
    "aiza",
    "gocspx-",
    "eyj",
    "private key",
    "bearer",
    "npm_",
    "pypi-",
    "hf_",
    "sg.",
    ":aa",
    "_v1_",
    "shp",
];

/// Words of [`ASSIGNMENT`]; they only matter next to a `=`.
const ASSIGNMENT_WORDS: &[&str] = &["pass", "pwd", "secret", "token", "key"];

static TRIGGER_FINDER: LazyLock<aho_corasick::AhoCorasick> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    aho_corasick::AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(TRIGGERS)
        .expect("trigger literals build")
});

static ASSIGNMENT_FINDER: LazyLock<aho_corasick::AhoCorasick> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    aho_corasick::AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(ASSIGNMENT_WORDS)
        .expect("assignment words build")
});

/// `scheme://…:…@`: an authority with a password in it.
fn url_with_password(text: &str) -> bool {
    text.match_indices("://").any(|(i, _)| {
        let rest = &text[i + 3..];
        let end = rest
            .find(|c: char| c == '/' || c.is_whitespace())
            .unwrap_or(rest.len());
        let authority = &rest[..end];
        authority
            .rfind('@')
            .is_some_and(|at| authority[..at].contains(':'))
    })
}

/// A cheap test that is true for every text a credential pattern matches
/// (and for some more).
pub fn may_hold_secret(text: &str) -> bool {
    TRIGGER_FINDER.is_match(text)
        || (text.contains('=') && ASSIGNMENT_FINDER.is_match(text))
        || url_with_password(text)
}

/// Number of credential shapes recognised in free text.
pub fn shape_count() -> usize {
    SHAPES.len() + 2
}

/// Replaces credential shapes in `text`; returns the kinds found (empty when
/// the text is clean, and then the text is returned unchanged).
pub fn redact_text(text: &str) -> (String, Vec<&'static str>) {
    let mut kinds = Vec::new();
    if !may_hold_secret(text) {
        return (text.to_owned(), kinds);
    }
    let p = &*PATTERNS;
    if !p.any.is_match(text) {
        return (text.to_owned(), kinds);
    }
    let mut out = text.to_owned();
    for (name, re) in &p.shapes {
        if re.is_match(&out) {
            out = re.replace_all(&out, REDACTED).into_owned();
            kinds.push(*name);
        }
    }
    if p.url_password.is_match(&out) {
        out = p.url_password.replace_all(&out, "$1@").into_owned();
        kinds.push("password in URL");
    }
    if p.assignment.is_match(&out) {
        out = p
            .assignment
            .replace_all(&out, |c: &Captures| format!("{}{}{REDACTED}", &c[1], &c[2]))
            .into_owned();
        kinds.push("secret assignment");
    }
    (out, kinds)
}

/// Query parameter words that mark a credential, matched against the parts of
/// a parameter name split at non-alphanumerics (`access_token` → `token`).
const PARAM_WORDS: &[&str] = &[
    "token",
    "key",
    "secret",
    "password",
    "passwd",
    "pass",
    "auth",
    "sig",
    "signature",
    "code",
    "credential",
    "session",
    "apikey",
];

/// Whether a URL query parameter name looks like it carries a credential.
pub fn is_credential_param(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let joined: String = lower
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|part| {
            PARAM_WORDS.contains(&part)
                || part
                    .strip_suffix('s')
                    .is_some_and(|singular| PARAM_WORDS.contains(&singular))
        })
        || [
            "token",
            "secret",
            "password",
            "apikey",
            "signature",
            "credential",
        ]
        .iter()
        .any(|w| joined.ends_with(w))
}

/// Whether a metadata key names a secret (`password`, `api_key`, `githubToken`, …).
pub fn is_secret_key(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    let parts: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|p| !p.is_empty())
        .collect();
    let joined: String = parts.concat();
    const WORDS: &[&str] = &[
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "token",
        "tokens",
        "secret",
        "secrets",
        "apikey",
        "authorization",
        "auth",
        "cookie",
        "cookies",
        "credential",
        "credentials",
        "privatekey",
        "bearer",
        "signature",
    ];
    const KEY_QUALIFIERS: &[&str] = &[
        "api",
        "private",
        "access",
        "secret",
        "signing",
        "encryption",
    ];
    parts.iter().any(|p| WORDS.contains(p))
        || (parts.contains(&"key") && parts.iter().any(|p| KEY_QUALIFIERS.contains(p)))
        || [
            "token",
            "secret",
            "password",
            "apikey",
            "cookie",
            "credentials",
            "privatekey",
        ]
        .iter()
        .any(|w| joined.ends_with(w))
}

/// Strips credentials from an attach hint: the password of the userinfo,
/// credential-named query parameters and the fragment; then the free-text
/// shapes. Returns the kinds removed.
pub fn redact_endpoint(endpoint: &str) -> (String, Vec<String>) {
    let mut kinds: Vec<String> = Vec::new();
    let mut out = endpoint.to_owned();
    if let Some(sep) = endpoint.find("://") {
        let scheme = &endpoint[..sep];
        let is_scheme = scheme
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c));
        if is_scheme {
            out = redact_url(scheme, &endpoint[sep + 3..], &mut kinds);
        }
    }
    let (text, shapes) = redact_text(&out);
    kinds.extend(shapes.into_iter().map(String::from));
    (text, kinds)
}

fn redact_url(scheme: &str, rest: &str, kinds: &mut Vec<String>) -> String {
    let mut rest = rest;
    if let Some(hash) = rest.find('#') {
        rest = &rest[..hash];
        kinds.push("fragment".into());
    }
    let (before_query, query) = match rest.find('?') {
        Some(q) => (&rest[..q], Some(&rest[q + 1..])),
        None => (rest, None),
    };
    let auth_end = before_query.find('/').unwrap_or(before_query.len());
    let (authority, path) = before_query.split_at(auth_end);
    let mut out = format!("{scheme}://");
    match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            match userinfo.find(':') {
                Some(colon) => {
                    out.push_str(&userinfo[..colon]);
                    kinds.push("password in userinfo".into());
                }
                None => out.push_str(userinfo),
            }
            out.push_str(&authority[at..]);
        }
        None => out.push_str(authority),
    }
    out.push_str(path);
    if let Some(query) = query {
        let kept: Vec<&str> = query
            .split('&')
            .filter(|param| {
                let name = param.split('=').next().unwrap_or("");
                let credential = is_credential_param(name);
                if credential {
                    kinds.push(format!("query parameter '{name}'"));
                }
                !credential && !param.is_empty()
            })
            .collect();
        if !kept.is_empty() {
            out.push('?');
            out.push_str(&kept.join("&"));
        }
    }
    out
}

/// Redacts every string field and the metadata of `record` in place and
/// returns what was removed. Running it twice reports nothing the second time.
pub fn redact_record(record: &mut Record) -> Vec<Redaction> {
    let mut found = Vec::new();
    for (field, value) in record.string_fields_mut() {
        let kinds: Vec<String> = if field == "endpoint" {
            let (clean, kinds) = redact_endpoint(value);
            *value = clean;
            kinds
        } else {
            let (clean, kinds) = redact_text(value);
            *value = clean;
            kinds.into_iter().map(String::from).collect()
        };
        found.extend(kinds.into_iter().map(|kind| Redaction {
            field: field.to_string(),
            kind,
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
        if !redact_text(key).1.is_empty() {
            dropped.push(key.clone());
            found.push(Redaction {
                field: "metadata".into(),
                kind: "key shaped like a credential; entry dropped".into(),
            });
            continue;
        }
        let (clean, kinds) = redact_text(value);
        *value = clean;
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One example of each shape, in a sentence.
    const SECRETS: &[&str] = &[
        "ghp_0123456789abcdefghijABCDEFGHIJ012345",
        "gho_0123456789abcdefghijABCDEFGHIJ012345",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "glpat-abcdefghij0123456789",
        "AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "xoxb-123456789012-abcdefghijkl",
        "https://hooks.slack.com/services/T000/B000/XXXXXXXX",
        "https://discord.com/api/webhooks/123456/abcdefABCDEF_-",
        "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345",
        "sk-proj-abcdefghijklmnopqrstuvwxyz",
        "sk_live_abcdefghijklmnop1234",
        "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
        "GOCSPX-abcdefghijklmnopqrstuvwxyz01",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA",
        "Bearer abcdef0123456789.xyz",
        "npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0LXV2d3h5ejAxMjM0NQ",
        "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
        "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ",
        "123456789:AAabcdefghijklmnopqrstuvwxyz0123456",
        "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "shpat_0123456789abcdef0123456789abcdef",
        "AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ",
        "https://bob:hunter22@example.com/x",
        "password=hunter22",
    ];

    #[test]
    fn at_least_fifteen_shapes() {
        assert!(shape_count() >= 15, "{}", shape_count());
    }

    #[test]
    fn every_shape_is_caught_in_text() {
        for secret in SECRETS {
            let text = format!("working on {secret} today");
            let (out, kinds) = redact_text(&text);
            assert!(!kinds.is_empty(), "{secret}: nothing found");
            // The distinctive part of the secret is gone.
            let tail = match secret.find(':').zip(secret.find('@')) {
                Some((colon, at)) if secret.contains("://") => &secret[colon + 3..at],
                _ => &secret[secret.len() - 8..],
            };
            assert!(!out.contains(tail), "{secret}: leaked in {out:?}");
            assert!(out.starts_with("working on "), "{out}");
        }
    }

    #[test]
    fn clean_text_is_untouched() {
        for text in [
            "Fix the login page",
            "token: refactor the tokenizer",
            "basic configuration of the skeleton",
            "ssh://alice@host/session",
            "sk-short",
            "password reset flow",
            REDACTED,
            "user=[redacted]",
        ] {
            assert_eq!(redact_text(text), (text.to_string(), vec![]), "{text}");
        }
    }

    #[test]
    fn endpoint_table() {
        let cases = [
            ("ssh://alice@host/x", "ssh://alice@host/x", 0),
            ("ssh://alice:pw@host/x", "ssh://alice@host/x", 1),
            ("tmux://host/main", "tmux://host/main", 0),
            ("https://h/p?token=abc&view=1", "https://h/p?view=1", 1),
            ("https://h/p?access_token=abc", "https://h/p", 1),
            (
                "https://h/p?X-Amz-Signature=abc&X-Amz-Credential=c&a=b",
                "https://h/p?a=b",
                2,
            ),
            (
                "https://h/p?apiKey=1&sessionToken=2&sig=3&code=4&PASS=5",
                "https://h/p",
                5,
            ),
            ("https://h/p?page=2#frag", "https://h/p?page=2", 1),
            (
                "https://u:p@h:8443/a/b?ok=1&secret=2#x",
                "https://u@h:8443/a/b?ok=1",
                3,
            ),
            ("host:/path", "host:/path", 0),
            ("", "", 0),
        ];
        for (input, want, n) in cases {
            let (got, kinds) = redact_endpoint(input);
            assert_eq!(got, want, "{input}");
            assert_eq!(kinds.len(), n, "{input}: {kinds:?}");
        }
    }

    #[test]
    fn secret_key_table() {
        for k in [
            "password",
            "api_key",
            "API-KEY",
            "apiKey",
            "githubToken",
            "authorization",
            "cookie",
            "aws_secret",
            "client_secret",
            "private_key",
            "Set-Cookie",
            "credentials",
            "auth",
        ] {
            assert!(is_secret_key(k), "{k}");
        }
        for k in [
            "branch",
            "repo",
            "keyboard",
            "tokenizer_model",
            "pr",
            "session_name",
            "monkey",
        ] {
            assert!(!is_secret_key(k), "{k}");
        }
    }

    #[test]
    fn record_redaction_names_fields_never_values() {
        let mut r = Record::new("s");
        r.endpoint = "https://alice:pw@host/x?token=t0k3n".into();
        r.title = "deploying with ghp_0123456789abcdefghijABCDEFGHIJ012345".into();
        r.metadata.insert("api_key".into(), "v4lue".into());
        r.metadata.insert("branch".into(), "main".into());
        let found = redact_record(&mut r);
        assert_eq!(r.endpoint, "https://alice@host/x");
        assert_eq!(r.title, "deploying with [redacted]");
        assert_eq!(r.metadata.keys().collect::<Vec<_>>(), ["branch"]);
        let fields: Vec<_> = found.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(
            fields,
            ["endpoint", "endpoint", "title", "metadata.api_key"]
        );
        let shown = found
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
            .join(" ");
        for value in ["pw", "t0k3n", "ghp_", "v4lue"] {
            assert!(!shown.contains(value), "{shown}");
        }
        // Idempotent, and silent the second time.
        let before = r.clone();
        assert!(redact_record(&mut r).is_empty());
        assert_eq!(r, before);
    }

    fn secret_strategy() -> impl Strategy<Value = String> {
        prop_oneof![
            "gh[pousr]_[A-Za-z0-9]{36,40}",
            "github_pat_[A-Za-z0-9_]{22,40}",
            "(AKIA|ASIA)[A-Z0-9]{16}",
            "xox[abposr]-[A-Za-z0-9-]{10,30}",
            "sk-(ant-|proj-)?[A-Za-z0-9_-]{20,40}",
            "AIza[0-9A-Za-z_-]{35}",
            "eyJ[A-Za-z0-9_-]{5,20}\\.[A-Za-z0-9_-]{5,20}\\.[A-Za-z0-9_-]{5,20}",
            "glpat-[0-9A-Za-z_-]{20,30}",
            "npm_[A-Za-z0-9]{36}",
            "hf_[A-Za-z0-9]{34,40}",
            "(sk|rk)_(live|test)_[0-9A-Za-z]{16,30}",
            "[Bb]earer [A-Za-z0-9._~+/=-]{8,30}",
            "-----BEGIN (RSA |EC )?PRIVATE KEY-----\n[A-Za-z0-9+/=\n]{10,60}(-----END (RSA |EC )?PRIVATE KEY-----)?",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn redaction_is_leak_free_and_idempotent(
            before in "[a-z ]{0,20}",
            secret in secret_strategy(),
            after in "[a-z ]{0,20}",
        ) {
            let text = format!("{before} {secret} {after}");
            let (once, kinds) = redact_text(&text);
            prop_assert!(!kinds.is_empty());
            prop_assert!(!once.contains(&secret), "{:?} leaked in {:?}", secret, once);
            let (twice, again) = redact_text(&once);
            prop_assert_eq!(&twice, &once);
            prop_assert!(again.is_empty());
        }

        #[test]
        fn the_prefilter_never_hides_a_match(
            text in "\\PC{0,30}",
            piece in "(ghp_|AKIA|xoxb-|sk-|eyJ|Bearer |pypi-|hf_|SG\\.|:AA|dop_v1_|shpat_|password=|token=|://u:p@|PRIVATE KEY|aws_secret_access_key=)?[A-Za-z0-9_./+=-]{0,70}",
            tail in "\\PC{0,30}",
        ) {
            let s = format!("{text}{piece}{tail}");
            if PATTERNS.any.is_match(&s) {
                prop_assert!(may_hold_secret(&s), "{:?}", s);
            }
        }

        #[test]
        fn redaction_of_any_text_is_idempotent(text in "\\PC{0,80}") {
            let (once, _) = redact_text(&text);
            let (twice, again) = redact_text(&once);
            prop_assert_eq!(twice, once);
            prop_assert!(again.is_empty());
        }

        #[test]
        fn endpoint_redaction_is_idempotent(
            user in "[a-z]{1,8}", pw in "[a-z0-9]{1,8}", host in "[a-z]{1,8}",
            key in "(token|key|sig|page|view|access_token)", val in "[a-z0-9]{1,8}",
        ) {
            let ep = format!("https://{user}:{pw}@{host}/p?{key}={val}#f");
            let (once, _) = redact_endpoint(&ep);
            let leaked = format!(":{pw}@");
            prop_assert!(!once.contains(&leaked));
            let (twice, again) = redact_endpoint(&once);
            prop_assert_eq!(twice, once);
            prop_assert!(again.is_empty());
        }
    }
}
