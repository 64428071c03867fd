//! The token formats: each well-known credential format (GitHub, AWS,
//! Slack, OpenAI, …) with the literals that guard it, its pattern and its
//! replacement. Found anywhere in text and replaced whole.

use super::REDACTED;

/// A well-known credential format: found anywhere in text and replaced whole.
pub(super) struct Shape {
    pub(super) kind: &'static str,
    /// Literals (compared ignoring ASCII case) of which every match holds one.
    pub(super) triggers: &'static [&'static str],
    pub(super) pattern: &'static str,
    /// `regex` replacement syntax; [`REDACTED`] for all but the AWS pair.
    pub(super) replacement: &'static str,
    /// What every match holds right after one of its triggers, if the
    /// pattern says: the guard asks for it too, so that a trigger alone in
    /// ordinary text (`key-` in `key-s-42`, `sk-` in `task-`) compiles and
    /// runs nothing.
    pub(super) tail: Option<Tail>,
}

/// At least `len` bytes of `class` right after a trigger. A class may hold
/// more than the pattern's (a guard may pass text the pattern then refuses,
/// never the reverse).
#[derive(Debug, Clone, Copy)]
pub(super) struct Tail {
    pub(super) len: usize,
    pub(super) class: fn(u8) -> bool,
}

const fn tail(len: usize, class: fn(u8) -> bool) -> Option<Tail> {
    Some(Tail { len, class })
}

/// `[A-Za-z0-9]`
fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

/// `[A-Za-z0-9_-]`, and `.` with [`dotted`]
fn token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn dotted(b: u8) -> bool {
    token(b) || b == b'.'
}

/// `[A-Za-z0-9+/=_-]`: both base64 alphabets and padding.
fn base64(b: u8) -> bool {
    token(b) || matches!(b, b'+' | b'/' | b'=')
}

const AWS_TRIGGERS: &[&str] = &[
    "akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva", "aipa", "apka",
];

/// The token formats. A prefix that ends ordinary words (`sk-` in `task-`,
/// `key-` in `monkey-`, `xapp-` in `foxapp-`, `lin_` in `berlin_`, `SG.` in
/// `MSG.`, `eyJ` in `heyJude`) needs a word boundary (`\b`) before it; one
/// that no word ends with (`ghp_`, `npm_`, `glpat-`, `xoxb-`, `gsk_`, …) is
/// found glued to the word before it too (`tokennpm_…`). No pattern
/// consumes `[` or `]`, so [`REDACTED`] never matches one of them. The AWS
/// pair comes before the lone key id, which would otherwise hide the pair.
pub(super) const SHAPES: &[Shape] = &[
    Shape {
        kind: "AWS secret key",
        triggers: AWS_TRIGGERS,
        pattern: r#"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}([\s:=,;|/"']{1,4})[A-Za-z0-9/+]{40}([^A-Za-z0-9/+=]|\z)"#,
        replacement: "[redacted]${1}[redacted]${2}",
        tail: tail(16, alnum),
    },
    Shape {
        kind: "AWS access key id",
        triggers: AWS_TRIGGERS,
        pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|APKA)[A-Z0-9]{16}\b",
        replacement: REDACTED,
        tail: tail(16, alnum),
    },
    Shape {
        kind: "GitHub token",
        triggers: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        pattern: r"gh[pousr]_[A-Za-z0-9]{36,}\b",
        replacement: REDACTED,
        tail: tail(36, alnum),
    },
    Shape {
        kind: "GitHub fine-grained token",
        triggers: &["github_pat_"],
        pattern: r"github_pat_[A-Za-z0-9_]{22,}",
        replacement: REDACTED,
        tail: tail(22, token),
    },
    Shape {
        kind: "GitLab token",
        triggers: &[
            "glpat-", "glrt-", "gldt-", "glptt-", "glft-", "glcbt-", "glimt-", "glsoat-", "gloas-",
            "glagent-",
        ],
        pattern: r"gl(?:pat|rt|dt|ptt|ft|cbt|imt|soat|oas|agent)-[0-9A-Za-z_-]{20,}",
        replacement: REDACTED,
        tail: tail(20, token),
    },
    Shape {
        kind: "Slack token",
        triggers: &["xox"],
        pattern: r"xox[a-z](?:\.xox[a-z])?-[A-Za-z0-9-]{10,}",
        replacement: REDACTED,
        tail: tail(12, dotted),
    },
    Shape {
        kind: "Slack app token",
        triggers: &["xapp-"],
        pattern: r"\bxapp-[0-9]-[A-Za-z0-9-]{10,}",
        replacement: REDACTED,
        tail: tail(12, token),
    },
    Shape {
        kind: "Slack webhook",
        triggers: &["hooks.slack.com"],
        pattern: r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+",
        replacement: REDACTED,
        tail: None,
    },
    Shape {
        kind: "Discord webhook",
        triggers: &["discord"],
        pattern: r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]+",
        replacement: REDACTED,
        tail: None,
    },
    Shape {
        kind: "Anthropic key",
        triggers: &["sk-ant-"],
        pattern: r"\bsk-ant-[A-Za-z0-9_-]{20,}",
        replacement: REDACTED,
        tail: tail(20, token),
    },
    Shape {
        kind: "OpenAI key",
        triggers: &["sk-proj-", "sk-svcacct-", "sk-admin-", "sk-none-"],
        pattern: r"\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}",
        replacement: REDACTED,
        tail: tail(20, token),
    },
    Shape {
        kind: "OpenAI key",
        triggers: &["sk-"],
        pattern: r"\bsk-[A-Za-z0-9]{32,}\b",
        replacement: REDACTED,
        tail: tail(32, alnum),
    },
    Shape {
        kind: "Stripe key",
        triggers: &["_live_", "_test_"],
        pattern: r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}",
        replacement: REDACTED,
        tail: tail(16, alnum),
    },
    Shape {
        kind: "Stripe webhook secret",
        triggers: &["whsec_"],
        pattern: r"whsec_[A-Za-z0-9+/=]{24,}",
        replacement: REDACTED,
        tail: tail(24, base64),
    },
    Shape {
        kind: "Google API key",
        triggers: &["aiza"],
        pattern: r"\bAIza[0-9A-Za-z_-]{35}",
        replacement: REDACTED,
        tail: tail(35, token),
    },
    Shape {
        kind: "Google OAuth token",
        triggers: &["ya29."],
        pattern: r"ya29\.[0-9A-Za-z_-]{20,}",
        replacement: REDACTED,
        tail: tail(20, token),
    },
    Shape {
        kind: "Google OAuth secret",
        triggers: &["gocspx-"],
        pattern: r"GOCSPX-[A-Za-z0-9_-]{28}",
        replacement: REDACTED,
        tail: tail(28, token),
    },
    Shape {
        kind: "Vault token",
        triggers: &["hvs.", "hvb.", "hvr."],
        pattern: r"hv[sbr]\.[A-Za-z0-9_-]{24,}",
        replacement: REDACTED,
        tail: tail(24, token),
    },
    Shape {
        kind: "npm token",
        triggers: &["npm_"],
        pattern: r"npm_[A-Za-z0-9]{36}\b",
        replacement: REDACTED,
        tail: tail(36, alnum),
    },
    Shape {
        kind: "PyPI token",
        triggers: &["pypi-"],
        pattern: r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}",
        replacement: REDACTED,
        tail: tail(65, token),
    },
    Shape {
        kind: "Hugging Face token",
        triggers: &["hf_"],
        pattern: r"hf_[A-Za-z0-9]{34,}\b",
        replacement: REDACTED,
        tail: tail(34, alnum),
    },
    Shape {
        kind: "JSON web token",
        triggers: &["eyj"],
        pattern: r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*",
        replacement: REDACTED,
        tail: tail(5, token),
    },
    Shape {
        kind: "SendGrid key",
        triggers: &["sg."],
        pattern: r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",
        replacement: REDACTED,
        tail: tail(22, token),
    },
    Shape {
        kind: "Telegram bot token",
        triggers: &[":aa"],
        pattern: r"\b[0-9]{8,10}:AA[A-Za-z0-9_-]{33}",
        replacement: REDACTED,
        tail: tail(33, token),
    },
    Shape {
        kind: "DigitalOcean token",
        triggers: &["_v1_"],
        pattern: r"\bdo[por]_v1_[a-f0-9]{64}",
        replacement: REDACTED,
        tail: tail(64, alnum),
    },
    Shape {
        kind: "Shopify token",
        triggers: &["shp"],
        pattern: r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        replacement: REDACTED,
        tail: tail(35, token),
    },
    Shape {
        kind: "age secret key",
        triggers: &["age-secret-key-1"],
        pattern: r"AGE-SECRET-KEY-1[0-9A-Z]{58}",
        replacement: REDACTED,
        tail: tail(58, alnum),
    },
    Shape {
        kind: "Linear key",
        triggers: &["lin_api_", "lin_oauth_"],
        pattern: r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}",
        replacement: REDACTED,
        tail: tail(40, alnum),
    },
    Shape {
        kind: "Doppler token",
        triggers: &["dp."],
        pattern: r"\bdp\.(?:st|ct|sa|scim|audit|pt)\.[A-Za-z0-9_-]{40,}",
        replacement: REDACTED,
        tail: tail(43, dotted),
    },
    Shape {
        kind: "Postman key",
        triggers: &["pmak-"],
        pattern: r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}",
        replacement: REDACTED,
        tail: tail(59, token),
    },
    Shape {
        kind: "Sentry token",
        triggers: &["sntrys_", "sntryu_"],
        pattern: r"sntry[su]_[A-Za-z0-9+/=_-]{30,}",
        replacement: REDACTED,
        tail: tail(30, base64),
    },
    Shape {
        kind: "Grafana token",
        triggers: &["glsa_", "glc_"],
        pattern: r"(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/=]{32,})",
        replacement: REDACTED,
        tail: tail(32, base64),
    },
    Shape {
        kind: "Groq key",
        triggers: &["gsk_"],
        pattern: r"gsk_[A-Za-z0-9]{48,}\b",
        replacement: REDACTED,
        tail: tail(48, alnum),
    },
    Shape {
        kind: "Atlassian token",
        triggers: &["atatt3", "atctt3"],
        pattern: r"AT[AC]TT3[A-Za-z0-9_=-]{60,}",
        replacement: REDACTED,
        tail: tail(60, base64),
    },
    Shape {
        kind: "Mailgun key",
        triggers: &["key-"],
        pattern: r"\bkey-[0-9a-f]{32}\b",
        replacement: REDACTED,
        tail: tail(32, alnum),
    },
];

/// Number of credential rules: the token formats plus the rules that read
/// structure (PEM blocks, key bodies without their `BEGIN` line, PuTTY keys,
/// Discord bot tokens, URLs, random URL path segments, scp addresses,
/// `Authorization`, bearer tokens, `curl -u`, `mysql -p` and `sshpass -p`,
/// secret options, netrc entries, named assignments, base64-wrapped
/// credentials).
#[cfg(test)]
pub(super) fn shape_count() -> usize {
    const { assert!(SHAPES.len() <= 64, "one gate bit per shape") };
    SHAPES.len() + 15
}
