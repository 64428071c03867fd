//! The prefilter and the compiled patterns: the literals that guard each
//! rule, what one Aho–Corasick pass over a text says may match ([`Gates`]),
//! and each rule's regular expression, compiled when its guard first fires.

use std::sync::{LazyLock, OnceLock};

use aho_corasick::AhoCorasick;
use regex::Regex;

use super::shapes::SHAPES;

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
/// Every name [`is_secret_key`](super::is_secret_key) accepts contains one of these.
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
pub(super) struct Gates {
    pub(super) shapes: u64,
    pub(super) pem: bool,
    pub(super) url: bool,
    pub(super) scp: bool,
    pub(super) auth: bool,
    pub(super) bearer: bool,
    pub(super) curl: bool,
    pub(super) flag: bool,
    pub(super) assignment: bool,
}

impl Gates {
    #[cfg(test)]
    pub(super) const ALL: Gates = Gates {
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

    pub(super) fn any(&self) -> bool {
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

pub(super) fn gates(text: &str) -> Gates {
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

pub(super) fn compile(pattern: &str) -> Regex {
    // The patterns are constants covered by tests; a failure here is a bug in
    // this file, found by the first test that redacts anything.
    #[allow(clippy::expect_used)]
    Regex::new(pattern).expect("credential pattern compiles")
}

/// Each token format's regex, compiled on first use.
static SHAPE_RES: LazyLock<Vec<OnceLock<Regex>>> =
    LazyLock::new(|| SHAPES.iter().map(|_| OnceLock::new()).collect());

pub(super) fn shape_re(i: usize) -> &'static Regex {
    SHAPE_RES[i].get_or_init(|| compile(SHAPES[i].pattern))
}

macro_rules! lazy_re {
    ($name:ident, $pattern:expr) => {
        pub(super) static $name: LazyLock<Regex> = LazyLock::new(|| compile($pattern));
    };
}
lazy_re!(PEM_RE, PEM);
lazy_re!(AUTH_RE, AUTH_HEADER);
lazy_re!(BEARER_RE, BEARER);
lazy_re!(CURL_RE, CURL_USER);
lazy_re!(FLAG_RE, FLAG);
lazy_re!(SCP_RE, SCP);
lazy_re!(ASSIGNMENT_RE, ASSIGNMENT);
