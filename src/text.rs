//! Text from the presence directory made safe for a terminal, and cut by
//! characters rather than bytes.
//!
//! Every field and file name in the directory may come from another device,
//! and a terminal obeys what it prints: an escape sequence in a session id can
//! write the clipboard (OSC 52), clear the screen, set the window title or
//! plant a link (OSC 8); a `\r` or `\n` can overwrite a line or fake a row; a
//! bidi override can make `txt.exe` read as `exe.txt`; a zero-width character
//! can make two different ids look the same. [`terminal_safe`] is the one
//! sanitizer every human-facing string passes before it is printed: each such
//! character becomes a visible escape (`\e`, `\n`, `\u{202e}`), and a
//! backslash is doubled, so that the escaped form is unambiguous. JSON output
//! keeps exact values; JSON's own escaping makes it safe. A title is free
//! text: the binary shows the VS16 and ZWJ inside its emoji sequences as
//! they are (`cli::output::safe_text`), and passes everything else in it
//! through this sanitizer.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Format characters (Unicode category Cf) and other characters that render
/// as nothing or reorder text, as inclusive ranges. Listed by hand from the
/// Unicode 16 character database: the standard library has no general
/// category lookup, and the set changes rarely.
const INVISIBLE: &[(char, char)] = &[
    ('\u{00AD}', '\u{00AD}'),   // soft hyphen
    ('\u{034F}', '\u{034F}'),   // combining grapheme joiner
    ('\u{0600}', '\u{0605}'),   // Arabic number signs
    ('\u{061C}', '\u{061C}'),   // Arabic letter mark (bidi)
    ('\u{06DD}', '\u{06DD}'),   // Arabic end of ayah
    ('\u{070F}', '\u{070F}'),   // Syriac abbreviation mark
    ('\u{0890}', '\u{0891}'),   // Arabic pound/piastre marks above
    ('\u{08E2}', '\u{08E2}'),   // Arabic disputed end of ayah
    ('\u{115F}', '\u{1160}'),   // Hangul fillers
    ('\u{17B4}', '\u{17B5}'),   // Khmer inherent vowels
    ('\u{180B}', '\u{180F}'),   // Mongolian variation selectors, vowel separator
    ('\u{200B}', '\u{200F}'),   // zero width space/non-joiner/joiner, LRM, RLM
    ('\u{2028}', '\u{2029}'),   // line and paragraph separators
    ('\u{202A}', '\u{202E}'),   // bidi embeddings and overrides
    ('\u{2060}', '\u{206F}'),   // word joiner, invisible operators, bidi isolates
    ('\u{3164}', '\u{3164}'),   // Hangul filler
    ('\u{FE00}', '\u{FE0F}'),   // variation selectors
    ('\u{FEFF}', '\u{FEFF}'),   // zero width no-break space (BOM)
    ('\u{FFA0}', '\u{FFA0}'),   // halfwidth Hangul filler
    ('\u{FFF9}', '\u{FFFB}'),   // interlinear annotation
    ('\u{110BD}', '\u{110BD}'), // Kaithi number sign
    ('\u{110CD}', '\u{110CD}'), // Kaithi number sign above
    ('\u{13430}', '\u{1343F}'), // Egyptian hieroglyph format controls
    ('\u{1BCA0}', '\u{1BCA3}'), // shorthand format controls
    ('\u{1D173}', '\u{1D17A}'), // musical symbol format controls
    ('\u{E0000}', '\u{E0FFF}'), // tags and variation selectors supplement
];

/// Whether `c` must not reach a terminal as itself: C0 and C1 controls, DEL,
/// and the invisible or reordering characters (bidi controls, zero-width and
/// other invisible format characters).
pub(crate) fn is_unsafe_char(c: char) -> bool {
    c.is_control() || (c > '\u{ff}' || c == '\u{ad}') && invisible(c)
}

fn invisible(c: char) -> bool {
    INVISIBLE
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// `s` with every unsafe character shown as a visible escape and every
/// backslash doubled; borrowed unchanged when there is nothing to escape,
/// which is nearly always.
pub fn terminal_safe(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c == '\\' || is_unsafe_char(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\x1b' => out.push_str("\\e"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if c < '\u{80}' && c.is_control() => {
                // Writing to a String cannot fail.
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_unsafe_char(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A century, in seconds. No session runs, and no clock is off, that long: a
/// time further from now is a broken or hostile record's, and is shown as
/// `>100y` rather than as a number (`1e300` would print as a
/// 301-digit number, or as 213503982334601 days once cast to an integer).
const CENTURY_S: f64 = 100.0 * 365.25 * 86_400.0;

/// How a duration of a century or more is shown.
pub const BEYOND_A_CENTURY: &str = ">100y";

/// Whether `secs` is a number less than a century either way: a duration
/// or offset that says something.
pub fn within_a_century(secs: f64) -> bool {
    secs.abs() < CENTURY_S
}

/// `12s`, `3m`, `2h`, `5d` — the largest unit that fits, rounded down, of
/// `secs` either way from now; `>100y` from a century on, and
/// `?` for no number at all. At most six columns wide.
pub fn short_duration(secs: f64) -> String {
    if secs.is_nan() {
        return "?".to_string();
    }
    let a = secs.abs();
    if a >= CENTURY_S {
        return BEYOND_A_CENTURY.to_string();
    }
    let s = a.floor() as u64;
    match s {
        0..120 => format!("{s}s"),
        120..3600 => format!("{}m", s / 60),
        3600..86_400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

/// A clock offset with its sign, to `decimals` places: `+600.0 s`,
/// `-0.5 s`; `>100y` (no sign: say ahead or behind next to it)
/// from a century on either way, `?` for no number.
pub fn signed_seconds(secs: f64, decimals: usize) -> String {
    if secs.is_nan() {
        "?".to_string()
    } else if secs.abs() >= CENTURY_S {
        BEYOND_A_CENTURY.to_string()
    } else {
        format!("{secs:+.decimals$} s")
    }
}

/// The first `n` characters of `s` (all of it if shorter): a cut that can
/// never split a character, for text from the directory.
pub(crate) fn prefix_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((end, _)) => &s[..end],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn escapes_table() {
        let cases = [
            ("plain text", "plain text"),
            ("日本語 ✓ émoji 🎉", "日本語 ✓ émoji 🎉"),
            ("\x1b]52;c;aGk=\x07", "\\e]52;c;aGk=\\x07"),
            ("\x1b[2J\x1b[H", "\\e[2J\\e[H"),
            ("a\rb\nc\td\0", "a\\rb\\nc\\td\\0"),
            ("del\x7f", "del\\x7f"),
            ("c1\u{9b}31m", "c1\\u{9b}31m"),
            ("nel\u{85}", "nel\\u{85}"),
            ("txt\u{202e}exe.", "txt\\u{202e}exe."),
            ("iso\u{2066}x\u{2069}", "iso\\u{2066}x\\u{2069}"),
            ("zero\u{200b}width\u{feff}", "zero\\u{200b}width\\u{feff}"),
            ("soft\u{ad}hyphen", "soft\\u{ad}hyphen"),
            ("tag\u{e0041}", "tag\\u{e0041}"),
            ("line\u{2028}sep", "line\\u{2028}sep"),
            ("back\\slash", "back\\\\slash"),
            ("\\e is not ESC", "\\\\e is not ESC"),
        ];
        for (input, want) in cases {
            assert_eq!(terminal_safe(input), want, "{input:?}");
        }
        assert!(matches!(terminal_safe("clean"), Cow::Borrowed(_)));
    }

    #[test]
    fn the_invisible_table_is_sorted_and_disjoint() {
        for w in INVISIBLE.windows(2) {
            assert!(w[0].0 <= w[0].1 && w[0].1 < w[1].0, "{w:?}");
        }
    }

    #[test]
    fn durations_and_offsets_stay_short_whatever_the_time() {
        let cases = [
            (0.0, "0s"),
            (119.9, "119s"),
            (-120.0, "2m"),
            (3600.0 * 5.0, "5h"),
            (86_400.0 * 2.0, "2d"),
            (CENTURY_S - 1.0, "36524d"),
            (CENTURY_S, ">100y"),
            (1e300, ">100y"),
            (-1e300, ">100y"),
            (f64::MAX, ">100y"),
            (f64::INFINITY, ">100y"),
            (f64::NEG_INFINITY, ">100y"),
            (f64::NAN, "?"),
        ];
        for (secs, want) in cases {
            assert_eq!(short_duration(secs), want, "{secs}");
            assert!(short_duration(secs).len() <= 6, "{secs}");
        }
        assert_eq!(signed_seconds(600.04, 1), "+600.0 s");
        assert_eq!(signed_seconds(-0.5, 1), "-0.5 s");
        assert_eq!(signed_seconds(-899.6, 0), "-900 s");
        assert_eq!(signed_seconds(1e300, 1), ">100y");
        assert_eq!(signed_seconds(f64::NEG_INFINITY, 0), ">100y");
        assert_eq!(signed_seconds(f64::NAN, 0), "?");
        assert!(within_a_century(-CENTURY_S + 1.0) && !within_a_century(CENTURY_S));
        assert!(!within_a_century(f64::NAN) && !within_a_century(f64::INFINITY));
    }

    #[test]
    fn prefix_by_characters() {
        assert_eq!(prefix_chars("ééééééééé", 8), "éééééééé");
        assert_eq!(prefix_chars("ab", 8), "ab");
        assert_eq!(prefix_chars("🎉x", 1), "🎉");
        assert_eq!(prefix_chars("", 3), "");
    }

    proptest! {
        #[test]
        fn output_has_no_unsafe_character_and_round_trips(s in "\\PC*|.*|[\\x00-\\x{2070}]{0,40}") {
            let safe = terminal_safe(&s);
            prop_assert!(!safe.chars().any(is_unsafe_char), "{:?}", safe);
            prop_assert_eq!(unescape(&safe), s);
        }
    }

    /// The inverse of [`terminal_safe`]: proves the escaping is unambiguous.
    fn unescape(s: &str) -> String {
        let mut out = String::new();
        let mut it = s.chars().peekable();
        while let Some(c) = it.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match it.next() {
                Some('\\') => out.push('\\'),
                Some('e') => out.push('\x1b'),
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('t') => out.push('\t'),
                Some('0') => out.push('\0'),
                Some('x') => {
                    let h: String = it.by_ref().take(2).collect();
                    out.push(char::from(u8::from_str_radix(&h, 16).unwrap()));
                }
                Some('u') => {
                    let h: String = it.by_ref().skip(1).take_while(|&c| c != '}').collect();
                    out.push(char::from_u32(u32::from_str_radix(&h, 16).unwrap()).unwrap());
                }
                other => panic!("bad escape {other:?} in {s:?}"),
            }
        }
        out
    }
}
