//! Values: where the value after a name ends, and what a value looks like
//! (a placeholder, a secret rather than prose, an opaque token).

use std::sync::LazyLock;

use regex::Regex;

use super::REDACTED;
use super::gates::compile;

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
pub(super) fn value_span(text: &str, i: usize, in_query: bool) -> (usize, usize, bool) {
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
pub(super) fn is_placeholder(v: &str) -> bool {
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
pub(super) fn looks_secret(v: &str) -> bool {
    let v = v.trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
    (v.chars().count() >= 16 && v.chars().all(char::is_alphanumeric))
        || v.chars().any(|c| {
            c.is_ascii_digit() || !(c.is_alphanumeric() || matches!(c, '-' | '_' | '\'' | '.'))
        })
        || (v.chars().skip(1).any(char::is_uppercase) && v.chars().any(char::is_lowercase))
}

/// A word of prose: letters only, lower case after the first.
pub(super) fn is_plain_word(v: &str) -> bool {
    !v.is_empty() && v.chars().all(char::is_alphabetic) && v.chars().skip(1).all(char::is_lowercase)
}

/// An opaque token after a bare `Bearer`: 12 characters or more, letters and
/// digits, and no lower-case word in it ("Bearer authentication-2024" is prose).
pub(super) fn is_tokenish(v: &str) -> bool {
    v.len() >= 12
        && v.chars().any(|c| c.is_ascii_digit())
        && v.chars().any(|c| c.is_ascii_alphabetic())
        && !v
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|seg| seg.len() >= 4 && seg.chars().all(|c| c.is_ascii_lowercase()))
}

/// A URL path segment that looks random, as the secret of a capability URL
/// does (`https://share.example.net/s/Hq3Zk9TbW2xRf7LmP4vNc8YdJ6sA1gE5/view`):
/// 24 characters or more of letters, digits, `-` and `_`, with upper case,
/// lower case and digits; the kind (upper, lower, digit) changes at a
/// third of the characters or more; two capitals or more are followed by
/// a capital or a digit; and under 30 % of it is in lower-case runs of 5
/// or more. Words and slugs (`my-blog-post-title`), camelCase names
/// (`AbstractSingletonProxyFactoryBean2`), git object names and UUIDs (one
/// case) are not random.
pub(super) fn looks_random(segment: &str) -> bool {
    let b = segment.as_bytes();
    if b.len() < 24
        || !b
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_'))
    {
        return false;
    }
    let kind = |c: u8| match c {
        b'A'..=b'Z' => 1,
        b'a'..=b'z' => 2,
        b'0'..=b'9' => 3,
        _ => 0,
    };
    let has = |k| b.iter().any(|&c| kind(c) == k);
    if !(has(1) && has(2) && has(3)) {
        return false;
    }
    let pairs = || b.windows(2).map(|w| (kind(w[0]), kind(w[1])));
    let changes = pairs().filter(|&(x, y)| x != 0 && y != 0 && x != y).count();
    let capitals = pairs()
        .filter(|&(x, y)| x == 1 && (y == 1 || y == 3))
        .count();
    let mut in_words = 0;
    for run in segment.split(|c: char| !c.is_ascii_lowercase()) {
        if run.len() >= 5 {
            in_words += run.len();
        }
    }
    changes * 3 >= b.len() && capitals >= 2 && in_words * 10 < b.len() * 3
}
