//! Names: which names (a metadata key, the `NAME` of `NAME=value`, a URL
//! parameter) say "secret", and how surely. The word lists live here.

/// The words of a name, lower-cased: split at non-alphanumerics and at
/// camelCase humps (`githubToken` → `github`, `token`; `APIKey` → `api`, `key`).
pub(super) fn words(name: &str) -> Vec<String> {
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
pub(super) enum Strength {
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

pub(super) fn name_strength(name: &str) -> Option<Strength> {
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
pub(super) fn is_credential_pair(name: &str, value: &str) -> bool {
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
pub(super) fn is_credential_value(v: &str) -> bool {
    let has = |f: fn(&char) -> bool| v.chars().any(|c| f(&c));
    let inner_upper = v.chars().skip(1).any(|c| c.is_ascii_uppercase());
    v.chars().count() >= 16
        || (v.chars().count() >= 6
            && ((has(char::is_ascii_digit) && has(char::is_ascii_alphabetic))
                || (inner_upper && has(char::is_ascii_lowercase))))
}
