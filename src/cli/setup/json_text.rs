//! Where each value of a JSON text is, so that setup can edit a file it does
//! not own (Claude Code's `settings.json`) as a person would: its own lines
//! added or taken out, every other byte as it was (order, layout, escapes).
//!
//! [`spans`] reads text that `serde_json` has already accepted; it never
//! panics and gives `None` for anything it does not expect, which setup
//! then refuses rather than guess.

use std::ops::Range;

/// How deep [`spans`] follows nested values (`serde_json` stops at 128).
const MAX_DEPTH: usize = 128;

/// A value and where it is in the text.
#[derive(Debug)]
pub(super) struct Node {
    /// From its first byte to one past its last (`{`…`}`, `[`…`]`, a
    /// string's quotes, a number's digits).
    pub(super) span: Range<usize>,
    pub(super) kind: Kind,
}

#[derive(Debug)]
pub(super) enum Kind {
    /// Members in the text's order; a key given twice is there twice.
    Object(Vec<Member>),
    Array(Vec<Node>),
    /// A string, number, `true`, `false` or `null`.
    Scalar,
}

/// One member of an object.
#[derive(Debug)]
pub(super) struct Member {
    /// The key, unescaped.
    pub(super) key: String,
    /// Where its opening quote is.
    pub(super) start: usize,
    pub(super) value: Node,
}

impl Member {
    /// From the key's opening quote to the end of the value.
    pub(super) fn span(&self) -> Range<usize> {
        self.start..self.value.span.end
    }
}

impl Node {
    /// The members of an object (`None` for any other value).
    pub(super) fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The items of an array (`None` for any other value).
    pub(super) fn items(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The member `key` of an object: the last one, as `serde_json` (and
    /// JavaScript's `JSON.parse`) take a key given twice.
    pub(super) fn get(&self, key: &str) -> Option<&Member> {
        self.members()?.iter().rev().find(|m| m.key == key)
    }
}

/// The values of `text`, one JSON value with whitespace around it.
pub(super) fn spans(text: &str) -> Option<Node> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    let node = p.value(0)?;
    p.space();
    (p.at == p.bytes.len()).then_some(node)
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn space(&mut self) {
        while matches!(self.bytes.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.space();
        let start = self.at;
        let kind = match self.bytes.get(self.at)? {
            b'{' => {
                self.at += 1;
                let mut members = Vec::new();
                self.space();
                if self.bytes.get(self.at) == Some(&b'}') {
                    self.at += 1;
                } else {
                    loop {
                        self.space();
                        let key_start = self.at;
                        let key_span = self.string()?;
                        let key: String = serde_json::from_str(self.text.get(key_span)?).ok()?;
                        self.space();
                        (self.bytes.get(self.at) == Some(&b':')).then_some(())?;
                        self.at += 1;
                        let value = self.value(depth + 1)?;
                        members.push(Member {
                            key,
                            start: key_start,
                            value,
                        });
                        self.space();
                        match self.bytes.get(self.at)? {
                            b',' => self.at += 1,
                            b'}' => {
                                self.at += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                Kind::Object(members)
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                self.space();
                if self.bytes.get(self.at) == Some(&b']') {
                    self.at += 1;
                } else {
                    loop {
                        items.push(self.value(depth + 1)?);
                        self.space();
                        match self.bytes.get(self.at)? {
                            b',' => self.at += 1,
                            b']' => {
                                self.at += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                Kind::Array(items)
            }
            b'"' => {
                self.string()?;
                Kind::Scalar
            }
            _ => {
                while self
                    .bytes
                    .get(self.at)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.'))
                {
                    self.at += 1;
                }
                (self.at > start).then_some(())?;
                Kind::Scalar
            }
        };
        Some(Node {
            span: start..self.at,
            kind,
        })
    }

    /// A string's span, quotes included.
    fn string(&mut self) -> Option<Range<usize>> {
        let start = self.at;
        (self.bytes.get(self.at) == Some(&b'"')).then_some(())?;
        self.at += 1;
        loop {
            match self.bytes.get(self.at)? {
                b'"' => {
                    self.at += 1;
                    return Some(start..self.at);
                }
                b'\\' => self.at += 2,
                _ => self.at += 1,
            }
        }
    }
}

/// The whitespace just before `at`.
pub(super) fn space_before(text: &str, at: usize) -> &str {
    let before = text.get(..at).unwrap_or("");
    &before[before.trim_end_matches([' ', '\t', '\n', '\r']).len()..]
}

/// The indentation of a value that starts at `at` on a line of its own
/// (what follows the last newline of the whitespace before it), or `None`
/// when it shares its line with what comes before.
pub(super) fn own_line_indent(text: &str, at: usize) -> Option<&str> {
    let space = space_before(text, at);
    space.rfind('\n').map(|nl| &space[nl + 1..])
}

/// The leading whitespace of the line `at` is on.
pub(super) fn line_indent(text: &str, at: usize) -> &str {
    let before = text.get(..at).unwrap_or("");
    let line = &before[before.rfind('\n').map_or(0, |nl| nl + 1)..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// One edit: the bytes in `range` replaced by `with`.
pub(super) struct Splice {
    pub(super) range: Range<usize>,
    pub(super) with: String,
}

/// `text` with each splice made (they must not overlap).
pub(super) fn splice(text: &str, mut edits: Vec<Splice>) -> Option<String> {
    edits.sort_by_key(|e| e.range.start);
    let mut out =
        String::with_capacity(text.len() + edits.iter().map(|e| e.with.len()).sum::<usize>());
    let mut at = 0;
    for e in edits {
        out.push_str(text.get(at..e.range.start)?);
        out.push_str(&e.with);
        at = e.range.end;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

/// The text of the object or array `container` with only some of its
/// children: `children` are their spans (members' or items'), `kept` says
/// each one's new text, `None` to leave it out. The whitespace after the
/// opening bracket and before the closing one stays, and the kept children
/// are joined with what stood between the first two; with none kept, the
/// brackets alone.
pub(super) fn rebuild(
    text: &str,
    container: &Range<usize>,
    children: &[Range<usize>],
    kept: &[Option<String>],
) -> Option<String> {
    let open = text.get(container.start..container.start + 1)?;
    let close = text.get(container.end - 1..container.end)?;
    let parts: Vec<&String> = kept.iter().flatten().collect();
    if parts.is_empty() {
        return Some(format!("{open}{close}"));
    }
    let first = children.first()?;
    let last = children.last()?;
    let sep = match children.get(1) {
        Some(second) => text.get(first.end..second.start)?,
        None => ", ",
    };
    let joined: Vec<&str> = parts.iter().map(|s| s.as_str()).collect();
    Some(format!(
        "{open}{}{}{}{close}",
        text.get(container.start + 1..first.start)?,
        joined.join(sep),
        text.get(last.end..container.end - 1)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_find_each_value_and_the_last_of_a_repeated_key() {
        let text = " {\"a\": [1, {\"b\": \"x\\\"}\"}], \"a\": true, \"h\\u006f\": null }\n";
        let node = spans(text).unwrap();
        assert_eq!(&text[node.span.clone()], &text[1..text.len() - 1]);
        assert_eq!(&text[node.get("a").unwrap().value.span.clone()], "true");
        let first = &node.members().unwrap()[0];
        assert_eq!(&text[first.span()], "\"a\": [1, {\"b\": \"x\\\"}\"}]");
        let items = first.value.items().unwrap();
        assert_eq!(&text[items[1].span.clone()], "{\"b\": \"x\\\"}\"}");
        assert_eq!(&text[node.get("ho").unwrap().value.span.clone()], "null");
    }

    #[test]
    fn spans_refuse_what_is_not_one_json_value_without_panicking() {
        for text in [
            "",
            "{",
            "[1,",
            "{\"a\"}",
            "{\"a\":1,}",
            "\"open",
            "{} {}",
            "[1 2]",
            "{1: 2}",
            "\"\\",
            "[\"\\\"]",
        ] {
            assert!(spans(text).is_none(), "{text:?}");
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(spans(&deep).is_none());
    }

    #[test]
    fn indents_and_splices() {
        let text = "{\n  \"a\": [1,\n    2]\n}";
        let node = spans(text).unwrap();
        let a = node.get("a").unwrap();
        assert_eq!(own_line_indent(text, a.start), Some("  "));
        let items = a.value.items().unwrap();
        assert_eq!(own_line_indent(text, items[0].span.start), None);
        assert_eq!(own_line_indent(text, items[1].span.start), Some("    "));
        assert_eq!(line_indent(text, a.value.span.start), "  ");
        let edit = Splice {
            range: items[1].span.end..items[1].span.end,
            with: ", 3".into(),
        };
        assert_eq!(
            splice(text, vec![edit]).unwrap(),
            "{\n  \"a\": [1,\n    2, 3]\n}"
        );
    }

    #[test]
    fn rebuild_keeps_the_layout_of_what_it_keeps() {
        let text = "[\n  1,\n  2,\n  3\n]";
        let node = spans(text).unwrap();
        let spans: Vec<_> = node
            .items()
            .unwrap()
            .iter()
            .map(|n| n.span.clone())
            .collect();
        let keep = |k: [bool; 3]| {
            let kept: Vec<Option<String>> = spans
                .iter()
                .zip(k)
                .map(|(s, k)| k.then(|| text[s.clone()].to_string()))
                .collect();
            rebuild(text, &node.span, &spans, &kept).unwrap()
        };
        assert_eq!(keep([true, false, true]), "[\n  1,\n  3\n]");
        assert_eq!(keep([false, false, true]), "[\n  3\n]");
        assert_eq!(keep([false, false, false]), "[]");
    }
}
