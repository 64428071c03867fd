//! The prefilter and the compiled patterns: the literals that guard each
//! rule, what one pass over a text says may match ([`Gates`]), and each
//! rule's regular expression, compiled when its guard first fires.

use std::sync::{LazyLock, OnceLock};

use regex::Regex;

use super::shapes::{SHAPES, Tail};

/// PEM private key blocks, to the END line (or the end of the text, so a
/// truncated block is caught too).
const PEM: &str = r"(?s)-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)";
/// Lines of base64 (16 characters or more, the last one shorter), with an
/// `END … PRIVATE KEY` line after them if there is one: what may be a key's
/// body without its `BEGIN` line ([`redact_key_bodies`](super::blobs::redact_key_bodies)
/// decides). Lines end with a newline or a written `\n`.
const B64_LINES: &str = r"[A-Za-z0-9+/]{16,}={0,2}(?:[ \t]*(?:\r?\n|\\n)[ \t]*[A-Za-z0-9+/]{16,}={0,2})*(?:(?:[ \t]*(?:\r?\n|\\n)[ \t]*[A-Za-z0-9+/]{1,15}={0,2})?(?:[ \t]*(?:\r?\n|\\n)[ \t]*=[A-Za-z0-9+/]{4})?[ \t]*(?:\r?\n|\\n)[ \t]*-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)?";
/// A PuTTY key file from its header, or its private lines alone, to the
/// `Private-MAC` (or the end of the text).
const PUTTY: &str = r"(?s)(?:PuTTY-User-Key-File-[0-9]+:[ \t]*(?:ssh|ecdsa)-[A-Za-z0-9-]+|Private-Lines:[ \t]*[0-9]+[ \t]*(?:\r?\n|\\n)[ \t]*[A-Za-z0-9+/]{16,}).*?(?:Private-MAC:[ \t]*[0-9a-fA-F]+|\z)";
/// `mysql … -pPASSWORD` (glued) and `sshpass … -p PASSWORD`; the password
/// after it is parsed by hand.
const CLI_PASSWORD: &str = r"(?:^|[\s;&|(`])(?:(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlslap|mysqlpump|mariadb|mariadb-dump|mariadb-admin)(?:[ \t]+[^\s;&|]+)*?[ \t]+-p|sshpass(?:[ \t]+[^\s;&|]+)*?[ \t]+-p[ \t]*)";
/// `password VALUE` after netrc words (`machine api.example.com login bob`).
const NETRC: &str = r"(?:^|\s)(password|passwd)[ \t\r\n]+";
/// A Discord bot token. Its first part is the bot's numeric id in base64:
/// each 3 digits become 4 characters from small sets (`MTIz` is `123`),
/// which no word or identifier follows for 8 characters. It has no literal
/// to guard it; [`has_dotted_token`] is its guard.
const DISCORD: &str = r"\b(?:[MNO][DTjz][AEIMQUYcgk][w-z0-5]){2}[A-Za-z0-9_-]{15,19}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}";
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
const PUTTY_TRIGGERS: &[&str] = &["putty-user-key-file", "private-lines"];
const CLI_TRIGGERS: &[&str] = &["mysql", "mariadb", "sshpass"];
/// The netrc words before a `password`; the rule needs a name trigger too.
const NETRC_TRIGGERS: &[&str] = &["machine", "login", "default"];
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Gates {
    pub(super) shapes: u64,
    pub(super) pem: bool,
    /// A run of 24 base64 characters or more in both cases: key bodies,
    /// base64-wrapped credentials, random URL path segments.
    pub(super) b64: bool,
    pub(super) putty: bool,
    pub(super) discord: bool,
    pub(super) url: bool,
    /// A URL (`//`) and a base64 run: a random path segment may be in it.
    pub(super) path: bool,
    pub(super) scp: bool,
    pub(super) auth: bool,
    pub(super) bearer: bool,
    pub(super) curl: bool,
    pub(super) cli: bool,
    pub(super) flag: bool,
    pub(super) netrc: bool,
    pub(super) assignment: bool,
}

impl Gates {
    #[cfg(test)]
    pub(super) const ALL: Gates = Gates {
        shapes: u64::MAX,
        pem: true,
        b64: true,
        putty: true,
        discord: true,
        url: true,
        path: true,
        scp: true,
        auth: true,
        bearer: true,
        curl: true,
        cli: true,
        flag: true,
        netrc: true,
        assignment: true,
    };

    pub(super) fn any(&self) -> bool {
        self.shapes != 0
            || self.pem
            || self.b64
            || self.putty
            || self.discord
            || self.url
            || self.path
            || self.scp
            || self.auth
            || self.bearer
            || self.curl
            || self.cli
            || self.flag
            || self.netrc
            || self.assignment
    }
}

/// Which rule group a trigger literal belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Group {
    Shape(usize),
    Pem,
    Auth,
    Bearer,
    Putty,
    Cli,
    Netrc,
    Name,
}

/// Whether what follows a trigger of `group` in `after` lets it open its
/// gate: for a token format with a [`Tail`], that tail.
pub(super) fn tail_holds(group: Group, after: &[u8]) -> bool {
    let Group::Shape(i) = group else { return true };
    SHAPES[i].tail.is_none_or(|Tail { len, class }| {
        after
            .get(..len)
            .is_some_and(|run| run.iter().all(|&b| class(b)))
    })
}

/// Every trigger literal and its group.
pub(super) fn literals() -> Vec<(&'static str, Group)> {
    let mut out = Vec::new();
    for (i, shape) in SHAPES.iter().enumerate() {
        out.extend(shape.triggers.iter().map(|t| (*t, Group::Shape(i))));
    }
    for (list, group) in [
        (PEM_TRIGGERS, Group::Pem),
        (AUTH_TRIGGERS, Group::Auth),
        (BEARER_TRIGGERS, Group::Bearer),
        (PUTTY_TRIGGERS, Group::Putty),
        (CLI_TRIGGERS, Group::Cli),
        (NETRC_TRIGGERS, Group::Netrc),
        (NAME_TRIGGERS, Group::Name),
    ] {
        out.extend(list.iter().map(|t| (*t, group)));
    }
    out
}

/// The trigger literals by their first two bytes, ASCII letters folded to
/// lower case: a text is read once, with one look-up per byte and a
/// comparison only where a literal may start. It finds what an
/// Aho–Corasick automaton of the literals finds (every occurrence of each,
/// ignoring ASCII case; a test compares the two), and is made in
/// microseconds: building the automaton was most of what a `list --count`
/// of a few records cost.
struct Triggers {
    /// One bit per [`pair_key`]: whether a literal starts with such a pair
    /// (a few dozen of the 4096 keys), so that most bytes cost one test.
    pairs: [u64; 64],
    /// `starts[k]..starts[k + 1]`: the literals whose first two bytes have
    /// the key `k`.
    starts: Box<[u16]>,
    /// Sorted by key; each in lower case.
    literals: Vec<(Box<[u8]>, Group)>,
}

/// Keys of two (folded) bytes: the low six bits of each, which keep ASCII
/// letters apart.
const PAIR_KEYS: usize = 1 << 12;

fn pair_key(a: u8, b: u8) -> usize {
    usize::from(FOLD[usize::from(a)]) << 6 | usize::from(FOLD[usize::from(b)])
}

/// Each byte folded to lower case, its low six bits: half a pair key.
static FOLD: [u8; 256] = {
    let mut fold = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        fold[b] = (b as u8).to_ascii_lowercase() & 63;
        b += 1;
    }
    fold
};

static TRIGGERS: LazyLock<Triggers> = LazyLock::new(|| {
    // Every literal has two bytes or more (a test checks).
    let mut all: Vec<(usize, Box<[u8]>, Group)> = literals()
        .into_iter()
        .filter(|(t, _)| t.len() >= 2)
        .map(|(t, group)| {
            let b = t.as_bytes();
            (pair_key(b[0], b[1]), b.to_ascii_lowercase().into(), group)
        })
        .collect();
    all.sort_by_key(|(key, _, _)| *key);
    let mut pairs = [0u64; 64];
    let mut starts = vec![0u16; PAIR_KEYS + 1];
    for (key, _, _) in &all {
        pairs[key / 64] |= 1 << (key % 64);
        starts[key + 1] += 1;
    }
    for k in 0..PAIR_KEYS {
        starts[k + 1] += starts[k];
    }
    let literals = all.into_iter().map(|(_, t, group)| (t, group)).collect();
    Triggers {
        pairs,
        starts: starts.into(),
        literals,
    }
});

/// What a byte is to the guards, one bit each ([`CLASS`]).
const B64: u8 = 1;
const UPPER: u8 = 2;
const LOWER: u8 = 4;
/// `@ = : / -`, which the other guards look at.
const SPECIAL: u8 = 8;

/// Each byte's bits, made at compile time.
static CLASS: [u8; 256] = {
    let mut class = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let mut k = 0;
        if c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'-' | b'_') {
            k |= B64;
        }
        if c.is_ascii_uppercase() {
            k |= UPPER;
        }
        if c.is_ascii_lowercase() {
            k |= LOWER;
        }
        if matches!(c, b'@' | b'=' | b':' | b'/' | b'-') {
            k |= SPECIAL;
        }
        class[b] = k;
        b += 1;
    }
    class
};

/// The groups whose literals occur in a text (ignoring ASCII case), each
/// token format's only where its [`Tail`] follows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Hits {
    pub(super) shapes: u64,
    pub(super) pem: bool,
    pub(super) auth: bool,
    pub(super) bearer: bool,
    pub(super) putty: bool,
    pub(super) cli: bool,
    pub(super) netrc: bool,
    pub(super) name: bool,
}

impl Hits {
    pub(super) fn add(&mut self, group: Group) {
        match group {
            Group::Shape(i) => self.shapes |= 1 << i,
            Group::Pem => self.pem = true,
            Group::Auth => self.auth = true,
            Group::Bearer => self.bearer = true,
            Group::Putty => self.putty = true,
            Group::Cli => self.cli = true,
            Group::Netrc => self.netrc = true,
            Group::Name => self.name = true,
        }
    }
}

/// What one pass over a text finds besides the trigger literals: the
/// characters and pairs the other guards ask about.
#[derive(Debug, Clone, Copy, Default)]
struct Marks {
    at: bool,
    equals: bool,
    colon: bool,
    /// `//`
    slashes: bool,
    /// `-p`
    dash_p: bool,
    /// `--`
    dashes: bool,
    /// `--user`
    user: bool,
    /// `-u` at the start or after white space or a quote.
    dash_u: bool,
    /// An `@` after the first `:` and before the last one.
    at_between_colons: bool,
    /// A base64 run, as `has_b64_run` (the tests' reference) finds one.
    b64: bool,
}

/// The trigger literals and the [`Marks`] of `text`, in one pass.
fn scan(text: &str) -> (Hits, Marks) {
    let t = &*TRIGGERS;
    let b = text.as_bytes();
    let (mut hits, mut m) = (Hits::default(), Marks::default());
    // The base64 run so far and the cases in it (see `has_b64_run`).
    let (mut run, mut cases) = (0usize, 0u8);
    // The first `@` after the first `:`.
    let (mut first_colon, mut at_after) = (false, false);
    // The pair key of bytes `i` and `i + 1`, in two halves.
    let mut high = b.first().map_or(0, |&c| FOLD[usize::from(c)]);
    for (i, &c) in b.iter().enumerate() {
        let next = b.get(i + 1).copied().unwrap_or(0);
        let low = FOLD[usize::from(next)];
        if t.pairs[usize::from(high)] >> low & 1 != 0 {
            let key = usize::from(high) << 6 | usize::from(low);
            let (from, to) = (usize::from(t.starts[key]), usize::from(t.starts[key + 1]));
            for (literal, group) in &t.literals[from..to] {
                if b[i..]
                    .get(..literal.len())
                    .is_some_and(|w| w.eq_ignore_ascii_case(literal))
                    && tail_holds(*group, &b[i + literal.len()..])
                {
                    hits.add(*group);
                }
            }
        }
        high = low;
        let class = CLASS[usize::from(c)];
        if class & B64 != 0 {
            run += 1;
            cases |= class;
        } else {
            // A run is judged where it ends.
            m.b64 |= run >= MIN_BLOB && cases & (UPPER | LOWER) == UPPER | LOWER;
            (run, cases) = (0, 0);
        }
        if class & SPECIAL == 0 {
            continue;
        }
        match c {
            b'@' => {
                m.at = true;
                at_after |= first_colon;
            }
            b'=' => m.equals = true,
            b':' => {
                m.colon = true;
                m.at_between_colons |= at_after;
                first_colon = true;
            }
            b'/' => m.slashes |= next == b'/',
            b'-' => {
                m.dash_p |= next == b'p';
                m.dashes |= next == b'-';
                m.user |= b[i..].starts_with(b"--user");
                if next == b'u' && !m.dash_u {
                    m.dash_u = text[..i]
                        .chars()
                        .next_back()
                        .is_none_or(|c| c.is_whitespace() || c == '"' || c == '\'');
                }
            }
            _ => {}
        }
    }
    m.b64 |= run >= MIN_BLOB && cases & (UPPER | LOWER) == UPPER | LOWER;
    (hits, m)
}

/// The trigger literals found in `text`.
#[cfg(test)]
pub(super) fn hits(text: &str) -> Hits {
    scan(text).0
}

pub(super) fn gates(text: &str) -> Gates {
    let (h, m) = scan(text);
    Gates {
        shapes: h.shapes,
        pem: h.pem,
        b64: m.b64,
        putty: h.putty,
        discord: has_dotted_token(text),
        url: m.slashes && (m.at || m.equals),
        path: m.b64 && m.slashes,
        scp: m.at_between_colons,
        auth: h.auth,
        bearer: h.bearer,
        curl: m.colon && (m.user || m.dash_u),
        cli: h.cli && m.dash_p,
        flag: h.name && m.dashes,
        netrc: h.netrc && h.name,
        assignment: h.name && (m.equals || m.colon),
    }
}

/// Shortest base64 run that is decoded (18 bytes).
pub(super) const MIN_BLOB: usize = 24;

/// Whether `b` can be in a base64 run (either alphabet).
pub(super) fn is_b64_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_')
}

/// Whether `text` holds a run of [`MIN_BLOB`] base64 characters or more
/// with both upper and lower case in it: the guard of the key-body, base64
/// and random-path-segment rules. Slugs, paths, UUIDs and hashes in hex
/// have one case, and pass without any of them running. ([`gates`] finds
/// it in its one pass; this is what the tests compare that with.)
#[cfg(test)]
pub(super) fn has_b64_run(text: &str) -> bool {
    let (mut run, mut upper, mut lower) = (0, false, false);
    for &b in text.as_bytes() {
        if is_b64_byte(b) {
            run += 1;
            upper |= b.is_ascii_uppercase();
            lower |= b.is_ascii_lowercase();
            if run >= MIN_BLOB && upper && lower {
                return true;
            }
        } else {
            (run, upper, lower) = (0, false, false);
        }
    }
    false
}

/// Whether `text` has a Discord token's frame: 23 base64url characters, a
/// dot, 6 more and a dot.
pub(super) fn has_dotted_token(text: &str) -> bool {
    let b = text.as_bytes();
    let url = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_');
    text.match_indices('.').any(|(i, _)| {
        i >= 23
            && b.get(i + 7) == Some(&b'.')
            && b[i - 23..i].iter().all(url)
            && b[i + 1..i + 7].iter().all(url)
    })
}

/// Whether `run` has both upper and lower case, as `has_b64_run` (the tests' reference) asks.
pub(super) fn two_cases(run: &str) -> bool {
    run.bytes().any(|b| b.is_ascii_uppercase()) && run.bytes().any(|b| b.is_ascii_lowercase())
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
lazy_re!(B64_LINES_RE, B64_LINES);
lazy_re!(PUTTY_RE, PUTTY);
lazy_re!(DISCORD_RE, DISCORD);
lazy_re!(CLI_PASSWORD_RE, CLI_PASSWORD);
lazy_re!(NETRC_RE, NETRC);
lazy_re!(AUTH_RE, AUTH_HEADER);
lazy_re!(BEARER_RE, BEARER);
lazy_re!(CURL_RE, CURL_USER);
lazy_re!(FLAG_RE, FLAG);
lazy_re!(SCP_RE, SCP);
lazy_re!(ASSIGNMENT_RE, ASSIGNMENT);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_classes_are_the_predicates() {
        for b in 0..=255u8 {
            let class = CLASS[usize::from(b)];
            assert_eq!(class & B64 != 0, is_b64_byte(b), "{b}");
            assert_eq!(class & UPPER != 0, b.is_ascii_uppercase(), "{b}");
            assert_eq!(class & LOWER != 0, b.is_ascii_lowercase(), "{b}");
            assert_eq!(class & SPECIAL != 0, b"@=:/-".contains(&b), "{b}");
        }
    }
}
