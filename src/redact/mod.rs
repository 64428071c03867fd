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
//! Ordinary text is never changed: every rule needs either a known token
//! format (with a left word boundary, so `task-…` is not `sk-…`) or a name
//! that says "secret" next to the value. Redaction is idempotent: a redacted
//! text is left as it is and reports nothing.
//!
//! Clean text costs one Aho–Corasick pass and a few byte searches: each rule
//! is guarded by literals that every text it matches contains, and its
//! regular expression is compiled only when a guard first fires.

use std::sync::{LazyLock, OnceLock};

use aho_corasick::AhoCorasick;
use regex::Regex;

use crate::record::Record;

/// What a redacted credential is replaced with.
pub const REDACTED: &str = "[redacted]";

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

/// A well-known credential format: found anywhere in text and replaced whole.
struct Shape {
    kind: &'static str,
    /// Literals (compared ignoring ASCII case) of which every match holds one.
    triggers: &'static [&'static str],
    pattern: &'static str,
    /// `regex` replacement syntax; [`REDACTED`] for all but the AWS pair.
    replacement: &'static str,
}

const AWS_TRIGGERS: &[&str] = &[
    "akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva", "aipa", "apka",
];

/// The token formats. Patterns start at a word boundary (`\b`) and never
/// consume `[` or `]`, so [`REDACTED`] never matches one of them. The AWS
/// pair comes before the lone key id, which would otherwise hide the pair.
const SHAPES: &[Shape] = &[
    Shape {
        kind: "AWS secret key",
        triggers: AWS_TRIGGERS,
        pattern: r#"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}([\s:=,;|/"']{1,4})[A-Za-z0-9/+]{40}([^A-Za-z0-9/+=]|\z)"#,
        replacement: "[redacted]${1}[redacted]${2}",
    },
    Shape {
        kind: "AWS access key id",
        triggers: AWS_TRIGGERS,
        pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|APKA)[A-Z0-9]{16}\b",
        replacement: REDACTED,
    },
    Shape {
        kind: "GitHub token",
        triggers: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        pattern: r"\bgh[pousr]_[A-Za-z0-9]{36,}\b",
        replacement: REDACTED,
    },
    Shape {
        kind: "GitHub fine-grained token",
        triggers: &["github_pat_"],
        pattern: r"\bgithub_pat_[A-Za-z0-9_]{22,}",
        replacement: REDACTED,
    },
    Shape {
        kind: "GitLab token",
        triggers: &[
            "glpat-", "glrt-", "gldt-", "glptt-", "glft-", "glcbt-", "glimt-", "glsoat-", "gloas-",
            "glagent-",
        ],
        pattern: r"\bgl(?:pat|rt|dt|ptt|ft|cbt|imt|soat|oas|agent)-[0-9A-Za-z_-]{20,}",
        replacement: REDACTED,
    },
    Shape {
        kind: "Slack token",
        triggers: &["xox"],
        pattern: r"\bxox[a-z](?:\.xox[a-z])?-[A-Za-z0-9-]{10,}",
        replacement: REDACTED,
    },
    Shape {
        kind: "Slack app token",
        triggers: &["xapp-"],
        pattern: r"\bxapp-[0-9]-[A-Za-z0-9-]{10,}",
        replacement: REDACTED,
    },
    Shape {
        kind: "Slack webhook",
        triggers: &["hooks.slack.com"],
        pattern: r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+",
        replacement: REDACTED,
    },
    Shape {
        kind: "Discord webhook",
        triggers: &["discord"],
        pattern: r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]+",
        replacement: REDACTED,
    },
    Shape {
        kind: "Anthropic key",
        triggers: &["sk-ant-"],
        pattern: r"\bsk-ant-[A-Za-z0-9_-]{20,}",
        replacement: REDACTED,
    },
    Shape {
        kind: "OpenAI key",
        triggers: &["sk-proj-", "sk-svcacct-", "sk-admin-", "sk-none-"],
        pattern: r"\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}",
        replacement: REDACTED,
    },
    Shape {
        kind: "OpenAI key",
        triggers: &["sk-"],
        pattern: r"\bsk-[A-Za-z0-9]{32,}\b",
        replacement: REDACTED,
    },
    Shape {
        kind: "Stripe key",
        triggers: &["_live_", "_test_"],
        pattern: r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}",
        replacement: REDACTED,
    },
    Shape {
        kind: "Stripe webhook secret",
        triggers: &["whsec_"],
        pattern: r"\bwhsec_[A-Za-z0-9+/=]{24,}",
        replacement: REDACTED,
    },
    Shape {
        kind: "Google API key",
        triggers: &["aiza"],
        pattern: r"\bAIza[0-9A-Za-z_-]{35}",
        replacement: REDACTED,
    },
    Shape {
        kind: "Google OAuth token",
        triggers: &["ya29."],
        pattern: r"\bya29\.[0-9A-Za-z_-]{20,}",
        replacement: REDACTED,
    },
    Shape {
        kind: "Google OAuth secret",
        triggers: &["gocspx-"],
        pattern: r"\bGOCSPX-[A-Za-z0-9_-]{28}",
        replacement: REDACTED,
    },
    Shape {
        kind: "Vault token",
        triggers: &["hvs.", "hvb.", "hvr."],
        pattern: r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}",
        replacement: REDACTED,
    },
    Shape {
        kind: "npm token",
        triggers: &["npm_"],
        pattern: r"\bnpm_[A-Za-z0-9]{36}\b",
        replacement: REDACTED,
    },
    Shape {
        kind: "PyPI token",
        triggers: &["pypi-"],
        pattern: r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}",
        replacement: REDACTED,
    },
    Shape {
        kind: "Hugging Face token",
        triggers: &["hf_"],
        pattern: r"\bhf_[A-Za-z0-9]{34,}\b",
        replacement: REDACTED,
    },
    Shape {
        kind: "JSON web token",
        triggers: &["eyj"],
        pattern: r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*",
        replacement: REDACTED,
    },
    Shape {
        kind: "SendGrid key",
        triggers: &["sg."],
        pattern: r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",
        replacement: REDACTED,
    },
    Shape {
        kind: "Telegram bot token",
        triggers: &[":aa"],
        pattern: r"\b[0-9]{8,10}:AA[A-Za-z0-9_-]{33}",
        replacement: REDACTED,
    },
    Shape {
        kind: "DigitalOcean token",
        triggers: &["_v1_"],
        pattern: r"\bdo[por]_v1_[a-f0-9]{64}",
        replacement: REDACTED,
    },
    Shape {
        kind: "Shopify token",
        triggers: &["shp"],
        pattern: r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        replacement: REDACTED,
    },
    Shape {
        kind: "age secret key",
        triggers: &["age-secret-key-1"],
        pattern: r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}",
        replacement: REDACTED,
    },
    Shape {
        kind: "Linear key",
        triggers: &["lin_api_", "lin_oauth_"],
        pattern: r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}",
        replacement: REDACTED,
    },
    Shape {
        kind: "Doppler token",
        triggers: &["dp."],
        pattern: r"\bdp\.(?:st|ct|sa|scim|audit|pt)\.[A-Za-z0-9_-]{40,}",
        replacement: REDACTED,
    },
    Shape {
        kind: "Postman key",
        triggers: &["pmak-"],
        pattern: r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}",
        replacement: REDACTED,
    },
    Shape {
        kind: "Sentry token",
        triggers: &["sntrys_", "sntryu_"],
        pattern: r"\bsntry[su]_[A-Za-z0-9+/=_-]{30,}",
        replacement: REDACTED,
    },
    Shape {
        kind: "Grafana token",
        triggers: &["glsa_", "glc_"],
        pattern: r"\b(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/=]{32,})",
        replacement: REDACTED,
    },
    Shape {
        kind: "Mailgun key",
        triggers: &["key-"],
        pattern: r"\bkey-[0-9a-f]{32}\b",
        replacement: REDACTED,
    },
];

/// Number of credential rules: the token formats plus the rules that read
/// structure (PEM blocks, URLs, scp addresses, `Authorization`, bearer
/// tokens, `curl -u`, secret options, named assignments).
#[cfg(test)]
fn shape_count() -> usize {
    const { assert!(SHAPES.len() <= 64, "one gate bit per shape") };
    SHAPES.len() + 8
}

/// PEM private key blocks, to the END line (or the end of the text, so a
/// truncated block is caught too).
const PEM: &str = r"(?s)-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)";
/// `Authorization: Scheme `; the value after it is parsed by hand.
const AUTH_HEADER: &str = r#"(?i)\b(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:(basic|bearer|token|digest|negotiate|ntlm|apikey|api-key|key|sso-key|otp|aws4-hmac-sha256)[ \t]+)?"#;
/// A bare `Bearer ` outside a header.
const BEARER: &str = r"(?i)\bbearer[ \t]+";
/// `curl -u user:` / `--user user:`; the password after it is parsed by hand.
const CURL_USER: &str = r#"(?:^|[\s"'])(?:-u|--user)(?:[ \t]+|=)(["']?)[^\s:"']+:"#;
/// `--name ` (a long option followed by a separate value).
const FLAG: &str = r"(?:^|\s)--([A-Za-z][A-Za-z0-9_-]*)[ \t]+";
/// scp-style `user:password@host:path`.
const SCP: &str =
    r#"(?:^|[\s"'=(,])[A-Za-z0-9._~-]+:([^\s"'/][^\s"']*)@[A-Za-z0-9][A-Za-z0-9.-]*:"#;
/// `NAME=`, `name: `, `"name": `, `name => ` (one or two words of a name).
const ASSIGNMENT: &str =
    r#"(["']?)([A-Za-z][A-Za-z0-9_.-]*(?: [A-Za-z][A-Za-z0-9_-]*)?)(["']?)[ \t]*(=>|:=|=|:)[ \t]*"#;

/// Literals that guard the rules other than the token formats.
const PEM_TRIGGERS: &[&str] = &["private key"];
const AUTH_TRIGGERS: &[&str] = &["authorization"];
const BEARER_TRIGGERS: &[&str] = &["bearer"];
/// Every name [`is_secret_key`] accepts contains one of these.
const NAME_TRIGGERS: &[&str] = &[
    "pass",
    "pwd",
    "token",
    "secret",
    "key",
    "auth",
    "cookie",
    "credential",
    "session",
    "sessid",
    "sig",
    "bearer",
    "jwt",
];

/// What the guards found in a text: one bit per rule.
#[derive(Debug, Clone, Copy, Default)]
struct Gates {
    shapes: u64,
    pem: bool,
    url: bool,
    scp: bool,
    auth: bool,
    bearer: bool,
    curl: bool,
    flag: bool,
    assignment: bool,
}

impl Gates {
    #[cfg(test)]
    const ALL: Gates = Gates {
        shapes: u64::MAX,
        pem: true,
        url: true,
        scp: true,
        auth: true,
        bearer: true,
        curl: true,
        flag: true,
        assignment: true,
    };

    fn any(&self) -> bool {
        self.shapes != 0
            || self.pem
            || self.url
            || self.scp
            || self.auth
            || self.bearer
            || self.curl
            || self.flag
            || self.assignment
    }
}

/// Which rule group a trigger literal belongs to.
#[derive(Debug, Clone, Copy)]
enum Group {
    Shape(usize),
    Pem,
    Auth,
    Bearer,
    Name,
}

struct Triggers {
    finder: AhoCorasick,
    groups: Vec<Group>,
}

static TRIGGERS: LazyLock<Triggers> = LazyLock::new(|| {
    let mut literals: Vec<&str> = Vec::new();
    let mut groups = Vec::new();
    for (i, shape) in SHAPES.iter().enumerate() {
        for t in shape.triggers {
            literals.push(t);
            groups.push(Group::Shape(i));
        }
    }
    for (list, group) in [
        (PEM_TRIGGERS, Group::Pem),
        (AUTH_TRIGGERS, Group::Auth),
        (BEARER_TRIGGERS, Group::Bearer),
        (NAME_TRIGGERS, Group::Name),
    ] {
        for t in list {
            literals.push(t);
            groups.push(group);
        }
    }
    // The literals are constants covered by tests; a failure here is a bug in
    // this file, found by the first test that redacts anything.
    #[allow(clippy::expect_used)]
    // Every publish and listing builds this once: a contiguous NFA without a
    // prefilter builds in a third of the time of the default DFA (0.23 ms
    // against 0.7 ms in a release build, 10 times that in a debug one) and
    // searches short fields as fast.
    let finder = AhoCorasick::builder()
        .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
        .prefilter(false)
        .ascii_case_insensitive(true)
        .build(&literals)
        .expect("trigger literals build");
    Triggers { finder, groups }
});

fn gates(text: &str) -> Gates {
    let t = &*TRIGGERS;
    let mut g = Gates::default();
    let mut name = false;
    for m in t.finder.find_overlapping_iter(text) {
        match t.groups[m.pattern().as_usize()] {
            Group::Shape(i) => g.shapes |= 1 << i,
            Group::Pem => g.pem = true,
            Group::Auth => g.auth = true,
            Group::Bearer => g.bearer = true,
            Group::Name => name = true,
        }
    }
    let has = |c: char| text.contains(c);
    g.url = text.contains("//") && (has('@') || has('='));
    g.scp = match (text.find(':'), text.rfind(':')) {
        (Some(first), Some(last)) => text[first..last].contains('@'),
        _ => false,
    };
    g.curl = has(':')
        && (text.contains("--user")
            || text.match_indices("-u").any(|(i, _)| {
                text[..i]
                    .chars()
                    .next_back()
                    .is_none_or(|c| c.is_whitespace() || c == '"' || c == '\'')
            }));
    g.flag = name && text.contains("--");
    g.assignment = name && (has('=') || has(':'));
    g
}

fn compile(pattern: &str) -> Regex {
    // The patterns are constants covered by tests; a failure here is a bug in
    // this file, found by the first test that redacts anything.
    #[allow(clippy::expect_used)]
    Regex::new(pattern).expect("credential pattern compiles")
}

/// Each token format's regex, compiled on first use.
static SHAPE_RES: LazyLock<Vec<OnceLock<Regex>>> =
    LazyLock::new(|| SHAPES.iter().map(|_| OnceLock::new()).collect());

fn shape_re(i: usize) -> &'static Regex {
    SHAPE_RES[i].get_or_init(|| compile(SHAPES[i].pattern))
}

macro_rules! lazy_re {
    ($name:ident, $pattern:expr) => {
        static $name: LazyLock<Regex> = LazyLock::new(|| compile($pattern));
    };
}
lazy_re!(PEM_RE, PEM);
lazy_re!(AUTH_RE, AUTH_HEADER);
lazy_re!(BEARER_RE, BEARER);
lazy_re!(CURL_RE, CURL_USER);
lazy_re!(FLAG_RE, FLAG);
lazy_re!(SCP_RE, SCP);
lazy_re!(ASSIGNMENT_RE, ASSIGNMENT);

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
/// the kinds removed.
pub(crate) fn redact_endpoint(endpoint: &str) -> (String, Vec<&'static str>) {
    redact_with(endpoint, Mode::Remove, gates(endpoint))
}

fn redact_with(text: &str, mode: Mode, g: Gates) -> (String, Vec<&'static str>) {
    let mut kinds: Vec<&'static str> = Vec::new();
    if !g.any() {
        return (text.to_owned(), kinds);
    }
    let mut out = text.to_owned();
    let step = |out: &mut String, kinds: &mut Vec<&'static str>, kind, new: Option<String>| {
        if let Some(new) = new {
            *out = new;
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
    };
    if g.pem {
        let new = replace_regex(&PEM_RE, &out, REDACTED);
        step(&mut out, &mut kinds, "private key", new);
    }
    if g.url {
        let mut found = Vec::new();
        if let Some(new) = redact_urls(&out, mode, &mut found) {
            out = new;
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
    if g.flag {
        let new = redact_flags(&out);
        step(&mut out, &mut kinds, "secret option value", new);
    }
    if g.assignment {
        let new = redact_assignments(&out);
        step(&mut out, &mut kinds, "secret assignment", new);
    }
    (out, kinds)
}

/// `re` replaced in `text`, or `None` when nothing matched.
fn replace_regex(re: &Regex, text: &str, replacement: &str) -> Option<String> {
    match re.replace_all(text, replacement) {
        std::borrow::Cow::Borrowed(_) => None,
        std::borrow::Cow::Owned(s) => (s != text).then_some(s),
    }
}

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

// ---- values -------------------------------------------------------------

/// Ends an unquoted value.
fn is_value_end(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '"' | '\'' | ',' | ';' | '}' | ')' | ']' | '[' | '<' | '>' | '`'
        )
}

/// The value starting at `i`: `(start, end, quoted)`. A quoted value runs to
/// its closing quote (skipping `\"`), or to the end of the line if there is
/// none; an unquoted one to [`is_value_end`], or also to `&` in a query string.
fn value_span(text: &str, i: usize, in_query: bool) -> (usize, usize, bool) {
    let rest = &text[i..];
    match rest.chars().next() {
        Some(q @ ('"' | '\'')) => {
            let body = &rest[1..];
            let mut escaped = false;
            for (k, c) in body.char_indices() {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    return (i + 1, i + 1 + k, true);
                } else if c == '\n' {
                    break;
                }
            }
            let end = body.find('\n').unwrap_or(body.len());
            (i + 1, i + 1 + end, true)
        }
        _ => {
            let end = rest
                .find(|c| is_value_end(c) || (in_query && c == '&'))
                .unwrap_or(rest.len());
            (i, i + end, false)
        }
    }
}

/// A value that stands for a secret without being one: (partly) redacted
/// already, a variable reference (`$DB_PASSWORD`, `${{ secrets.X }}`,
/// `%TOKEN%`, `<token>`), a mask (`****`), a keyword (`null`, `yes`), the
/// word of a documentation example (`token=value`), or code: a call
/// (`getpass()`), a reference (`&ev`), a relative path (`~/.netrc`).
fn is_placeholder(v: &str) -> bool {
    static CALL: LazyLock<Regex> = LazyLock::new(|| compile(r"^[A-Za-z_][A-Za-z0-9_.:]*\("));
    static ENV_REF: LazyLock<Regex> = LazyLock::new(|| {
        compile(
            r"^(?:\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Z_][A-Z0-9_]*|\(.*\))|%[A-Za-z_][A-Za-z0-9_]*%)$",
        )
    });
    v.contains(REDACTED)
        || v.starts_with("{{")
        || v.starts_with("${{")
        || ENV_REF.is_match(v)
        || (v.len() > 2 && v.starts_with('<') && v.ends_with('>'))
        || v.chars()
            .all(|c| matches!(c, '*' | '.' | '•' | '…' | 'x' | 'X'))
        || v.starts_with('&')
        || v.starts_with("~/")
        || v.starts_with("./")
        || v.starts_with("../")
        || CALL.is_match(v)
        || [
            "null",
            "none",
            "nil",
            "true",
            "false",
            "undefined",
            "yes",
            "no",
            "on",
            "off",
            "value",
            "token",
            "secret",
            "password",
            "passphrase",
        ]
        .iter()
        .any(|w| v.eq_ignore_ascii_case(w))
}

/// A value after `name:` that reads as a secret rather than prose: a digit,
/// a symbol (not the `-`, `_`, `'` or `.` of words and file names), mixed
/// case, or one run of 16 letters and digits or more; trailing sentence
/// punctuation aside. "token: refactor the tokenizer" and "sm/passphrase.h:
/// Likewise." are prose; "password: hunter2" is not.
fn looks_secret(v: &str) -> bool {
    let v = v.trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
    (v.chars().count() >= 16 && v.chars().all(char::is_alphanumeric))
        || v.chars().any(|c| {
            c.is_ascii_digit() || !(c.is_alphanumeric() || matches!(c, '-' | '_' | '\'' | '.'))
        })
        || (v.chars().skip(1).any(char::is_uppercase) && v.chars().any(char::is_lowercase))
}

/// A word of prose: letters only, lower case after the first.
fn is_plain_word(v: &str) -> bool {
    !v.is_empty() && v.chars().all(char::is_alphabetic) && v.chars().skip(1).all(char::is_lowercase)
}

/// An opaque token after a bare `Bearer`: 12 characters or more, letters and
/// digits, and no lower-case word in it ("Bearer authentication-2024" is prose).
fn is_tokenish(v: &str) -> bool {
    v.len() >= 12
        && v.chars().any(|c| c.is_ascii_digit())
        && v.chars().any(|c| c.is_ascii_alphabetic())
        && !v
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|seg| seg.len() >= 4 && seg.chars().all(|c| c.is_ascii_lowercase()))
}

// ---- names --------------------------------------------------------------

/// The words of a name, lower-cased: split at non-alphanumerics and at
/// camelCase humps (`githubToken` → `github`, `token`; `APIKey` → `api`, `key`).
fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in name.split(|c: char| !c.is_ascii_alphanumeric()) {
        let chars: Vec<char> = part.chars().collect();
        let mut cur = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let hump = i > 0
                && c.is_ascii_uppercase()
                && (chars[i - 1].is_ascii_lowercase()
                    || (chars[i - 1].is_ascii_uppercase()
                        && chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase())));
            if hump && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            cur.push(c.to_ascii_lowercase());
        }
        if !cur.is_empty() {
            out.push(cur);
        }
    }
    out
}

/// Last words that make a name a secret's (`DB_PASSWORD`, `csrf_token`, `Set-Cookie`).
const SECRET_HEADS: &[&str] = &[
    "password",
    "passwd",
    "pass",
    "passphrase",
    "passcode",
    "token",
    "secret",
    "apikey",
    "authorization",
    "auth",
    "cookie",
    "cookies",
    "credential",
    "credentials",
    "privatekey",
    "sessionid",
    "signature",
    "sig",
    "bearer",
    "jwt",
];
/// Heads that also name things that are not secrets (`autodoc_class_signature
/// = "separated"`, `credential: die() …`): after them, a value counts only
/// if it looks like a secret.
const WEAK_HEADS: &[&str] = &[
    "signature",
    "sig",
    "auth",
    "authorization",
    "credential",
    "credentials",
    "cookie",
    "cookies",
];
/// Words before a final `key` that make it a secret (`ssh_key`, not `sort_key`).
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "private",
    "access",
    "secret",
    "signing",
    "encryption",
    "ssh",
    "master",
    "deploy",
    "license",
    "app",
    "client",
    "auth",
    "session",
    "admin",
    "root",
    "webhook",
    "consumer",
    "account",
    "storage",
    "shared",
    "hmac",
    "jwt",
];
/// Endings of a name written as one word (`PGPASSWORD`, `githubtoken`, `jsessionid`).
const JOINED_TAILS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "passcode",
    "token",
    "secret",
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
    "accountkey",
    "sessionid",
    "sessid",
    "credentials",
    "cookie",
];
/// Words that make a name *about* a secret rather than one (`password_reset_url`,
/// `max_tokens` is already not one: its head is `tokens`).
const BENIGN_TAILS: &[&str] = &[
    "url",
    "uri",
    "urls",
    "endpoint",
    "path",
    "file",
    "dir",
    "policy",
    "length",
    "len",
    "min",
    "max",
    "reset",
    "prompt",
    "field",
    "label",
    "type",
    "name",
    "names",
    "ref",
    "rotation",
    "expiry",
    "expires",
    "expiration",
    "ttl",
    "count",
    "required",
    "enabled",
    "changed",
    "format",
    "stdin",
    "env",
    "command",
    "cmd",
    "manager",
    "store",
    "provider",
    "version",
    "mode",
    "strength",
    "age",
    "echo",
    "repeat",
    "pattern",
    "hashed",
];
/// Words that make a name a secret's wherever they stand, unless a benign
/// tail follows (`secret_key_base`, `password_hash`).
const STRONG_WORDS: &[&str] = &["password", "passwd", "passphrase", "secret"];

/// Whether a name (a metadata key, the `NAME` of `NAME=value`) names a
/// secret: `password`, `DB_PASS`, `api_key`, `githubToken`, `ssh_key`,
/// `sessionid`, `Set-Cookie`, `AWS_SECRET_ACCESS_KEY` — but not `max_tokens`,
/// `primary_key`, `public_key` or `password_reset_url`.
pub(crate) fn is_secret_key(name: &str) -> bool {
    name_strength(name).is_some()
}

/// How surely a name names a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strength {
    /// `password`, `api_key`: any value after it is the secret.
    Strong,
    /// `signature`, `cookie`: only a value that looks like a secret is one.
    Weak,
}

/// Extensions that make a name a file's (`src/passwd.c: …`).
const FILE_EXTENSIONS: &[&str] = &[
    "c", "h", "cc", "cpp", "rs", "py", "go", "js", "ts", "rb", "java", "md", "txt", "xml", "json",
    "yaml", "yml", "toml", "conf", "cfg", "ini", "sh", "html", "in", "am",
];

fn name_strength(name: &str) -> Option<Strength> {
    // A file name (`src/passwd.c`, a man page `passwd.1`, `readpassphrase.3bsd`).
    if let Some((_, ext)) = name.rsplit_once('.')
        && (ext.starts_with(|c: char| c.is_ascii_digit())
            || FILE_EXTENSIONS.iter().any(|e| ext.eq_ignore_ascii_case(e)))
    {
        return None;
    }
    let strength = |last: &str| {
        if WEAK_HEADS.contains(&last) {
            Strength::Weak
        } else {
            Strength::Strong
        }
    };
    let mut w = words(name);
    // A number at the end counts for nothing (`password2`, `DB_PASS_1`).
    if let Some(last) = w.last_mut() {
        let trimmed = last.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        last.truncate(trimmed);
    }
    w.retain(|x| !x.is_empty());
    let last = w.last().map(String::as_str)?;
    let n = w.len();
    // `PWD` alone is the shell's working directory.
    if SECRET_HEADS.contains(&last) || (last == "pwd" && n >= 2) {
        return Some(strength(last));
    }
    if (last == "key" || last == "keys") && n >= 2 && KEY_QUALIFIERS.contains(&w[n - 2].as_str()) {
        return Some(Strength::Strong);
    }
    let joined = w.concat();
    if JOINED_TAILS.iter().any(|t| joined.ends_with(t)) {
        return Some(Strength::Strong);
    }
    (w.iter().any(|x| STRONG_WORDS.contains(&x.as_str())) && !BENIGN_TAILS.contains(&last))
        .then_some(Strength::Strong)
}

/// Names of URL parameters that carry a credential whatever else they say.
const PARAM_NAMES: &[&str] = &[
    "t",
    "sid",
    "sig",
    "code",
    "key",
    "auth",
    "ticket",
    "session",
    "signature",
    "credential",
    "apikey",
    "pass",
    "pw",
    "pwd",
    "passwd",
    "jwt",
    "otp",
];
/// Words of a URL parameter name that mark a credential (`X-Amz-Signature`).
const PARAM_WORDS: &[&str] = &["token", "secret", "password", "signature", "credential"];

/// Whether a URL query, fragment or matrix parameter carries a credential:
/// a secret name ([`is_secret_key`]), one of `t`, `sid`, `sig`, `code`,
/// `key`, `auth`, `ticket`, `session`, …, or a name with `token`, `secret`,
/// `signature` or `credential` in it (`X-Amz-Signature`, `id_token_hint`).
pub(crate) fn is_credential_param(name: &str) -> bool {
    if is_secret_key(name) || PARAM_NAMES.iter().any(|p| name.eq_ignore_ascii_case(p)) {
        return true;
    }
    let w = words(name);
    w.iter().any(|x| PARAM_WORDS.contains(&x.as_str()))
        && w.last()
            .is_some_and(|l| !BENIGN_TAILS.contains(&l.as_str()))
}

/// Parameter names that are too short or too common to count by themselves
/// (`?t=54333` is a forum topic, `?code=kmr` a language): their value must
/// look like a credential too.
const GENERIC_PARAMS: &[&str] = &[
    "t", "sid", "sig", "code", "key", "auth", "ticket", "session", "otp",
];

/// Whether `name=value` in a URL carries a credential.
fn is_credential_pair(name: &str, value: &str) -> bool {
    if value.is_empty() || !is_credential_param(name) {
        return false;
    }
    let generic = GENERIC_PARAMS.iter().any(|p| name.eq_ignore_ascii_case(p))
        || name_strength(name) == Some(Strength::Weak);
    !generic || is_credential_value(value)
}

/// A value that could be a credential: 16 characters or more, or 6 or more
/// that mix letters with digits or upper with lower case (not just a
/// capital first letter: `Failed`).
fn is_credential_value(v: &str) -> bool {
    let has = |f: fn(&char) -> bool| v.chars().any(|c| f(&c));
    let inner_upper = v.chars().skip(1).any(|c| c.is_ascii_uppercase());
    v.chars().count() >= 16
        || (v.chars().count() >= 6
            && ((has(char::is_ascii_digit) && has(char::is_ascii_alphabetic))
                || (inner_upper && has(char::is_ascii_lowercase))))
}

// ---- URLs ---------------------------------------------------------------

/// Ends a URL in text.
fn is_url_end(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`')
}

/// Finds `scheme://…` and scheme-relative `//…` URLs in `text` and takes
/// their credentials out; `None` when nothing changed.
fn redact_urls(text: &str, mode: Mode, kinds: &mut Vec<&'static str>) -> Option<String> {
    let bytes = text.as_bytes();
    let mut splice_out = String::new();
    let mut last = 0;
    let mut changed = false;
    let mut search = 0;
    while let Some(rel) = text[search..].find("//") {
        let at = search + rel;
        let lead_ok = if at >= 2 && bytes[at - 1] == b':' {
            bytes[at - 2].is_ascii_alphanumeric()
        } else {
            at == 0
                || matches!(
                    bytes[at - 1],
                    b' ' | b'\t' | b'\n' | b'\r' | b'"' | b'\'' | b'(' | b'<' | b'=' | b','
                )
        };
        let start = at + 2;
        let end = text[start..]
            .find(is_url_end)
            .map_or(text.len(), |e| start + e);
        if lead_ok && let Some(new) = redact_url_rest(&text[start..end], mode, kinds) {
            splice_out.push_str(&text[last..start]);
            splice_out.push_str(&new);
            last = end;
            changed = true;
        }
        search = end.max(start);
    }
    if !changed {
        return None;
    }
    splice_out.push_str(&text[last..]);
    Some(splice_out)
}

/// The userinfo of what follows `//`: `(colon, at)` when it holds a password.
/// The password may hold any character (`#`, `?`, `:`, `@`, `%40`); one with
/// a `/` is recognised when a host follows its `@`.
fn find_password(rest: &str) -> Option<(usize, usize)> {
    let region_end = rest.find('/').unwrap_or(rest.len());
    let (colon, at) = if let Some(at) = rest[..region_end].rfind('@') {
        (rest[..at].find(':')?, at)
    } else {
        let colon = rest[..region_end].find(':')?;
        let after = &rest[colon + 1..region_end];
        // `host:8080/…` is a port, not a password.
        if after.is_empty() || after.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let at = region_end + rest[region_end..].find('@')?;
        let host = &rest[at + 1..];
        let host_end = host.find(['/', ':', '?', '#']).unwrap_or(host.len());
        let hostlike = host_end > 0
            && host[..host_end]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
        if !hostlike {
            return None;
        }
        (colon, at)
    };
    // A `?` or `#` before the colon means there is no userinfo at all
    // (`h?next=u:p@x`).
    if rest[..colon].contains(['?', '#']) {
        return None;
    }
    Some((colon, at))
}

fn redact_url_rest(rest: &str, mode: Mode, kinds: &mut Vec<&'static str>) -> Option<String> {
    let mut out = String::with_capacity(rest.len());
    let mut changed = false;
    let mut tail = rest;
    if let Some((colon, at)) = find_password(rest) {
        let password = &rest[colon + 1..at];
        let skip = password.is_empty() || (mode == Mode::Mask && password == REDACTED);
        if skip {
            out.push_str(&rest[..at]);
        } else {
            out.push_str(&rest[..colon]);
            if mode == Mode::Mask {
                out.push(':');
                out.push_str(REDACTED);
            }
            changed = true;
            kinds.push("password in URL");
        }
        tail = &rest[at..];
    }
    let path_end = tail.find(['?', '#']).unwrap_or(tail.len());
    let (hostpath, after) = tail.split_at(path_end);
    let auth_end = hostpath.find('/').unwrap_or(hostpath.len());
    out.push_str(&hostpath[..auth_end]);
    let mut params_changed = false;
    for (i, segment) in hostpath[auth_end..].split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        match segment.split_once(';') {
            Some((head, matrix)) => {
                let (kept, ch) = redact_params(matrix, ';', mode);
                params_changed |= ch;
                out.push_str(head);
                if !(ch && kept.is_empty() && mode == Mode::Remove) {
                    out.push(';');
                    out.push_str(&kept);
                }
            }
            None => out.push_str(segment),
        }
    }
    let (query, fragment) = match after.strip_prefix('?') {
        Some(q) => match q.split_once('#') {
            Some((q, f)) => (Some(q), Some(f)),
            None => (Some(q), None),
        },
        None => (None, after.strip_prefix('#')),
    };
    if let Some(q) = query {
        let (kept, ch) = redact_params(q, '&', mode);
        params_changed |= ch;
        if !(ch && kept.is_empty() && mode == Mode::Remove) {
            out.push('?');
            out.push_str(&kept);
        }
    }
    if let Some(f) = fragment {
        // A fragment is data for the page (`#L42`, `#readme`) unless it
        // carries parameters, as OAuth's `#access_token=…` does.
        let (route, params) = match f.split_once('?') {
            Some((route, params)) => (Some(route), params),
            None if f.contains('=') => (None, f),
            None => (Some(f), ""),
        };
        let (kept, ch) = if params.is_empty() {
            (String::new(), false)
        } else {
            redact_params(params, '&', mode)
        };
        params_changed |= ch;
        let drop_params = ch && kept.is_empty() && mode == Mode::Remove;
        match route {
            Some(route) => {
                out.push('#');
                out.push_str(route);
                if f.contains('?') && !drop_params {
                    out.push('?');
                    out.push_str(&kept);
                }
            }
            None if drop_params => {}
            None => {
                out.push('#');
                out.push_str(&kept);
            }
        }
    }
    if params_changed {
        kinds.push("credential URL parameter");
    }
    (changed || params_changed).then_some(out)
}

/// `name=value` pairs separated by `sep`, with the credentials masked or
/// removed; and whether anything changed.
fn redact_params(params: &str, sep: char, mode: Mode) -> (String, bool) {
    let mut changed = false;
    let mut kept: Vec<String> = Vec::new();
    for pair in params.split(sep) {
        // A value already masked carries nothing: kept as it is, so that
        // redacting redacted text changes nothing.
        let credential = pair
            .split_once('=')
            .filter(|(name, value)| *value != REDACTED && is_credential_pair(name, value));
        match (credential, mode) {
            (Some((name, value)), Mode::Mask) if !is_placeholder(value) => {
                kept.push(format!("{name}={REDACTED}"));
                changed = true;
            }
            (Some(_), Mode::Remove) => changed = true,
            _ => kept.push(pair.to_string()),
        }
    }
    (kept.join(&sep.to_string()), changed)
}

// ---- the rules that read a name before a value ---------------------------

fn redact_scp(text: &str) -> Option<String> {
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

fn redact_auth_headers(text: &str) -> Option<String> {
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

fn redact_bearer(text: &str) -> Option<String> {
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

fn redact_curl_user(text: &str) -> Option<String> {
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

fn redact_flags(text: &str) -> Option<String> {
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

fn redact_assignments(text: &str) -> Option<String> {
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
    for (field, value) in record.string_fields_mut() {
        let (clean, kinds) = if field == "endpoint" {
            redact_endpoint(value)
        } else {
            redact_text(value)
        };
        if !kinds.is_empty() {
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
        if !redact_text(key).1.is_empty() {
            dropped.push(key.clone());
            found.push(Redaction {
                field: "metadata".into(),
                kind: "key shaped like a credential; entry dropped".into(),
            });
            continue;
        }
        let (clean, kinds) = redact_text(value);
        if !kinds.is_empty() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    include!("../../tests/data/redact/corpus.rs");

    const BENIGN: &str = include_str!("../../tests/data/redact/benign.txt");
    const SECRETS: &str = include_str!("../../tests/data/redact/secrets.txt");

    /// A header whose value is another header's name: the second value is
    /// judged in the first pass too, so a second pass (after another rule
    /// masked the first name away) finds nothing left.
    #[test]
    fn a_header_named_as_a_headers_value_is_judged_in_one_pass() {
        let text = "token=:Authorization: Authorization: 0";
        for redact in [redact_text, redact_endpoint] {
            let (once, _) = redact(text);
            assert_eq!(once, "token=[redacted] Authorization: [redacted]");
            assert_eq!(redact(&once), (once.clone(), vec![]));
        }
    }

    #[test]
    fn benign_corpus_passes_unchanged() {
        let lines = corpus(BENIGN);
        assert!(lines.len() >= 500, "{} benign strings", lines.len());
        let changed: Vec<_> = lines
            .iter()
            .filter_map(|l| {
                let (out, kinds) = redact_text(l);
                (out != *l || !kinds.is_empty()).then(|| format!("{l:?} -> {out:?} {kinds:?}"))
            })
            .collect();
        assert!(changed.is_empty(), "changed:\n{}", changed.join("\n"));
        // As a record's fields, metadata and endpoint, too.
        for l in &lines {
            let mut r = Record::new("s");
            r.title = l.clone();
            r.endpoint = l.clone();
            r.metadata.insert("note".into(), l.clone());
            let before = r.clone();
            assert_eq!(redact_record(&mut r), vec![], "{l:?}");
            assert_eq!(r, before);
            assert!(
                credential_in_id(&Record::new(l.as_str())).is_none(),
                "{l:?}"
            );
        }
    }

    #[test]
    fn secret_corpus_is_caught_exactly() {
        let lines = corpus(SECRETS);
        assert!(lines.len() >= 200, "{} secret strings", lines.len());
        let mut wrong = Vec::new();
        for line in &lines {
            let (input, want, secrets) = marked(line);
            assert!(!secrets.is_empty(), "no marked secret in {line:?}");
            let (out, kinds) = redact_text(&input);
            if out != want || kinds.is_empty() {
                wrong.push(format!("{input:?}\n  got  {out:?}\n  want {want:?}"));
            }
            if let Some(s) = secrets.iter().find(|s| out.contains(s.as_str())) {
                wrong.push(format!("{s:?} leaked in {out:?}"));
                continue;
            }
            let (again, more) = redact_text(&out);
            assert_eq!(
                (&again, &more),
                (&out, &vec![]),
                "not idempotent: {input:?}"
            );
            // An id holding it is refused, never rewritten.
            let found = credential_in_id(&Record::new(input.as_str()));
            assert_eq!(
                found.map(|f| f.field),
                Some("session_id".to_string()),
                "{input:?}"
            );
        }
        assert!(
            wrong.is_empty(),
            "{} wrong:\n{}",
            wrong.len(),
            wrong.join("\n")
        );
    }

    #[test]
    fn at_least_fifteen_shapes() {
        assert!(shape_count() >= 15, "{}", shape_count());
    }

    #[test]
    fn reported_precision_cases() {
        for text in [
            "task-2024-11-30-build-frontend",
            "Fix bearer authentication flow",
            "token: refactor the tokenizer",
            "Primary key: id",
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
                "https://h/p?X-Amz-Signature=0f3a9c2b8d7e&X-Amz-Credential=AKIA/2024&a=b",
                "https://h/p?a=b",
                1,
            ),
            (
                "https://h/p?apiKey=1&sessionToken=2&sig=3f9c2a1b&code=4/0AX4XfWh&PASS=5",
                "https://h/p",
                1,
            ),
            // Generic names need a value that could be a credential.
            (
                "https://h/viewtopic.php?t=54333&code=kmr&sig=abc&t=release",
                "https://h/viewtopic.php?t=54333&code=kmr&sig=abc&t=release",
                0,
            ),
            ("https://h/p?t=4f9a8b7c6d5e", "https://h/p", 1),
            ("https://h/p?page=2#frag", "https://h/p?page=2#frag", 0),
            (
                "https://h/blob/main/x.rs#L42",
                "https://h/blob/main/x.rs#L42",
                0,
            ),
            ("https://h/#readme", "https://h/#readme", 0),
            (
                "https://h/cb#access_token=x&state=s",
                "https://h/cb#state=s",
                1,
            ),
            ("https://h/cb#access_token=x", "https://h/cb", 1),
            ("https://h/#/cb?id_token=x", "https://h/#/cb", 1),
            ("https://h/a;sig=x9y8z7/b", "https://h/a/b", 1),
            ("https://h/a;v=1;sid=Ab12Cd34/b", "https://h/a;v=1/b", 1),
            (
                "https://u:p@h:8443/a/b?ok=1&secret=2#x",
                "https://u@h:8443/a/b?ok=1#x",
                2,
            ),
            ("https://u:p#ss@h/x", "https://u@h/x", 1),
            ("https://u:p%40ss@h/x", "https://u@h/x", 1),
            ("https://u:pa/ss@h.example/x", "https://u@h.example/x", 1),
            ("https://u:[redacted]@h/", "https://u@h/", 1),
            ("https://host:8443/@alice", "https://host:8443/@alice", 0),
            ("https://u:@h/", "https://u:@h/", 0),
            ("https://h?next=u:p@x", "https://h?next=u:p@x", 0),
            ("//u:p@h/x", "//u@h/x", 1),
            ("https://h/?", "https://h/?", 0),
            ("https://h/p?token=&a=1", "https://h/p?token=&a=1", 0),
            ("host:/path", "host:/path", 0),
            ("", "", 0),
            (
                "https://u@h/ghp_0123456789abcdefghijABCDEFGHIJ012345",
                "https://u@h/[redacted]",
                1,
            ),
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
            "APIKey",
            "githubToken",
            "authorization",
            "cookie",
            "aws_secret",
            "client_secret",
            "private_key",
            "Set-Cookie",
            "credentials",
            "auth",
            "pass",
            "DB_PASS",
            "db-pass",
            "passcode",
            "ssh_key",
            "SSH-KEY",
            "sessionid",
            "session_id",
            "sessionId",
            "JSESSIONID",
            "PHPSESSID",
            "MY_SECRET",
            "my.secret",
            "gitlab_token",
            "GITLAB-TOKEN",
            "PGPASSWORD",
            "AWS_SECRET_ACCESS_KEY",
            "secret_key_base",
            "password_hash",
            "db_pwd",
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
            "session",
            "monkey",
            "key",
            "keys",
            "primary_key",
            "public_key",
            "sort_key",
            "max_tokens",
            "input_tokens",
            "token_count",
            "token_type",
            "password_reset_url",
            "min_password_length",
            "secret_name",
            "secretName",
            "password-stdin",
            "PWD",
            "OLDPWD",
            "bypass",
            "compass",
            "oauth",
            "",
        ] {
            assert!(!is_secret_key(k), "{k}");
        }
    }

    #[test]
    fn credential_param_table() {
        for p in [
            "token",
            "access_token",
            "ticket",
            "t",
            "sid",
            "sig",
            "signature",
            "X-Amz-Signature",
            "X-Amz-Credential",
            "code",
            "key",
            "auth",
            "id_token_hint",
            "jsessionid",
        ] {
            assert!(is_credential_param(p), "{p}");
        }
        for p in [
            "page",
            "view",
            "q",
            "ref",
            "tab",
            "type",
            "token_type",
            "max_tokens",
            "country_code",
            "keyword",
            "sort_key",
            "state",
            "lang",
            "v",
        ] {
            assert!(!is_credential_param(p), "{p}");
        }
    }

    #[test]
    fn ids_are_found_not_rewritten() {
        let mut r = Record::new("ghp_0123456789abcdefghijABCDEFGHIJ012345");
        r.session_key = "k".into();
        let found = credential_in_id(&r).unwrap();
        assert_eq!(
            (found.field.as_str(), found.kind.as_str()),
            ("session_id", "GitHub token")
        );
        let mut r = Record::new("s1");
        r.instance_id = "password=hunter2".into();
        assert_eq!(credential_in_id(&r).unwrap().field, "instance_id");
        let mut r = Record::new("task-2024-11-30-build-frontend");
        r.instance_id = "laptop-3f9c2a1b".into();
        assert!(credential_in_id(&r).is_none());
    }

    #[test]
    fn record_redaction_names_fields_never_values() {
        let mut r = Record::new("s");
        r.endpoint = "https://alice:pw@host/x?token=t0k3n#L7".into();
        r.title = "deploying with ghp_0123456789abcdefghijABCDEFGHIJ012345".into();
        r.metadata.insert("api_key".into(), "v4lue".into());
        r.metadata.insert("DB_PASS".into(), "v4lue".into());
        r.metadata.insert("branch".into(), "main".into());
        r.metadata
            .insert("env".into(), "DB_PASSWORD=hunter2".into());
        let found = redact_record(&mut r);
        assert_eq!(r.endpoint, "https://alice@host/x#L7");
        assert_eq!(r.title, "deploying with [redacted]");
        assert_eq!(r.metadata.keys().collect::<Vec<_>>(), ["branch", "env"]);
        assert_eq!(r.metadata["env"], "DB_PASSWORD=[redacted]");
        let fields: Vec<_> = found.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "endpoint",
                "endpoint",
                "title",
                "metadata.DB_PASS",
                "metadata.api_key",
                "metadata.env"
            ]
        );
        let shown = found
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
            .join(" ");
        for value in ["pw", "t0k3n", "ghp_", "v4lue", "hunter2"] {
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
            "xapp-[0-9]-[A-Za-z0-9-]{10,30}",
            "sk-(ant-|proj-)[A-Za-z0-9_-]{20,40}",
            "sk-[A-Za-z0-9]{32,48}",
            "AIza[0-9A-Za-z_-]{35}",
            "ya29\\.[0-9A-Za-z_-]{20,40}",
            "hvs\\.[A-Za-z0-9_-]{24,40}",
            "eyJ[A-Za-z0-9_-]{5,20}\\.[A-Za-z0-9_-]{5,20}\\.[A-Za-z0-9_-]{5,20}",
            "gl(pat|rt)-[0-9A-Za-z_-]{20,30}",
            "npm_[A-Za-z0-9]{36}",
            "hf_[A-Za-z0-9]{34,40}",
            "(sk|rk)_(live|test)_[0-9A-Za-z]{16,30}",
            "whsec_[A-Za-z0-9]{24,32}",
            "-----BEGIN (RSA |EC )?PRIVATE KEY-----\n[A-Za-z0-9+/=\n]{10,60}(-----END (RSA |EC )?PRIVATE KEY-----)?",
        ]
    }

    /// A secret behind a name, with the part that must go.
    fn named_strategy() -> impl Strategy<Value = (String, String)> {
        let value = "[A-Za-z][A-Za-z0-9!@%^*_+-]{4,8}[0-9][A-Za-z0-9!@%^*_+-]{0,8}";
        (
            prop_oneof![
                Just("{}_PASSWORD={}"),
                Just("export GITHUB_TOKEN=\"{}\""),
                Just("\"api_key\": \"{}\""),
                Just("password: {}"),
                Just("Authorization: Bearer {}"),
                Just("curl -u alice:{} https://h.example"),
                Just("https://alice:{}@h.example/x"),
                Just("https://h.example/p?access_token={}&view=1"),
                Just("https://h.example/cb#access_token={}"),
                Just("https://h.example/a;sig={}/b"),
                Just("alice:{}@h.example:repo.git"),
            ],
            "[A-Z]{2,6}",
            value,
        )
            .prop_map(|(template, prefix, value)| {
                let t = template.replacen(
                    "{}",
                    &prefix,
                    usize::from(template.matches("{}").count() == 2),
                );
                (t.replacen("{}", &value, 1), value)
            })
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
        fn named_secrets_are_leak_free_and_idempotent(
            before in "[a-z ]{0,12}",
            (text, value) in named_strategy(),
            after in "( [a-z]{1,8}){0,3}",
        ) {
            let text = format!("{before} {text}{after}");
            let (once, kinds) = redact_text(&text);
            prop_assert!(!kinds.is_empty(), "{:?}", text);
            prop_assert!(!once.contains(&value), "{:?} leaked in {:?}", value, once);
            let (twice, again) = redact_text(&once);
            prop_assert_eq!(&twice, &once);
            prop_assert!(again.is_empty());
        }

        #[test]
        fn the_prefilter_never_hides_a_match(
            text in "\\PC{0,30}",
            piece in "(ghp_|AKIA|xoxb-|xapp-1-|sk-|sk-proj-|eyJ|Bearer |bearer\t|pypi-|hf_|SG\\.|:AA|dop_v1_|shpat_|hvs\\.|ya29\\.|whsec_|key-|password=|DB_PASS=|token: |\"api_key\": \"|Authorization: Basic |-u u:|--user=u:|--password |://u:p@|//u:p@|u:p@h:|\\?sig=|#access_token=|;sid=|PRIVATE KEY|-----BEGIN RSA PRIVATE KEY-----\n|aws_secret_access_key=)?[A-Za-z0-9_./+=@:-]{0,70}",
            tail in "\\PC{0,30}",
        ) {
            let s = format!("{text}{piece}{tail}");
            for mode in [Mode::Mask, Mode::Remove] {
                let gated = redact_with(&s, mode, gates(&s));
                let full = redact_with(&s, mode, Gates::ALL);
                prop_assert_eq!(gated, full, "{:?}", s);
            }
        }

        #[test]
        fn redaction_of_any_text_is_idempotent(text in "\\PC{0,80}") {
            let (once, kinds) = redact_text(&text);
            // `--strict` refuses exactly when something would change.
            prop_assert_eq!(kinds.is_empty(), once == text);
            let (twice, again) = redact_text(&once);
            prop_assert_eq!(twice, once);
            prop_assert!(again.is_empty());
        }

        #[test]
        fn redaction_of_key_value_text_is_idempotent(
            text in "([A-Za-z_ ]{0,12}(password|token|key|secret|auth|Bearer|sid)[A-Za-z_]{0,4}[ ]?(=|: |:|=>)[ ]?[\"']?[A-Za-z0-9 :/@?#&;=.\\[\\]\"'-]{0,16}){1,4}",
        ) {
            let (once, kinds) = redact_text(&text);
            prop_assert_eq!(kinds.is_empty(), once == text);
            let (twice, again) = redact_text(&once);
            prop_assert_eq!(twice, once, "{:?}", text);
            prop_assert!(again.is_empty());
        }

        #[test]
        fn redaction_of_url_and_header_text_is_idempotent(
            text in "((https://|//| |\"|'|:|@|\\?|#|&|;|=|Authorization: |Bearer |-u |--password |token|sig|key|pass|ghp_|AKIA|\\[redacted\\])[A-Za-z0-9./%-]{0,6}){1,12}",
        ) {
            for redact in [redact_text, redact_endpoint] {
                let (once, kinds) = redact(&text);
                prop_assert_eq!(kinds.is_empty(), once == text);
                let (twice, again) = redact(&once);
                prop_assert_eq!(twice, once, "{:?}", text);
                prop_assert!(again.is_empty());
            }
        }

        #[test]
        fn endpoint_redaction_is_idempotent_after_the_text_rules(
            value in "[?=&#]{0,2}",
        ) {
            // The text rules mask what the URL rules left; a second pass
            // must not then drop the masked parameter.
            let (once, _) = redact_endpoint(&format!("https://#token={value}"));
            let (twice, _) = redact_endpoint(&once);
            prop_assert_eq!(twice, once);
        }

        #[test]
        fn endpoint_redaction_is_idempotent(
            user in "[a-z]{1,8}", pw in "[a-z0-9#%:@?]{1,8}", host in "[a-z]{1,8}",
            key in "(token|key|sig|page|view|access_token)", val in "[a-z]{3}[0-9]{3,8}",
            frag in "(L[0-9]{1,3}|readme|access_token=[a-z]{1,8}|/cb\\?code=[a-z]{1,4}&state=s)",
        ) {
            let ep = format!("https://{user}:{pw}@{host}/p;sid=x?{key}={val}#{frag}");
            let (once, _) = redact_endpoint(&ep);
            prop_assert!(once.starts_with(&format!("https://{user}@{host}/p")), "{}", once);
            prop_assert!(!once.contains(&format!("={val}")) || key == "page" || key == "view", "{}", once);
            let (twice, again) = redact_endpoint(&once);
            prop_assert_eq!(twice, once);
            prop_assert!(again.is_empty());
        }
    }
}
