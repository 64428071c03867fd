//! `list --format TEMPLATE`: `{field}` placeholders with the names of the
//! `list --json` fields, `{metadata.KEY}` for one metadata entry; `{{` and
//! `}}` stand for braces, `\t`, `\n` and `\\` for a tab, a newline and a
//! backslash. Every value is made safe ([`Styled`]), so a tab or a
//! newline in the output only ever comes from the template itself.

use presence::Row;

use super::UsageError;
use super::output::Styled;

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Text(String),
    Field(String),
    Meta(String),
}

/// A parsed, checked template.
#[derive(Debug, Clone)]
pub struct Template(Vec<Part>);

impl Template {
    pub fn parse(text: &str) -> Result<Template, UsageError> {
        let valid = Row::field_names();
        let mut parts = Vec::new();
        let mut lit = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    lit.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    lit.push('}');
                }
                '\\' => match chars.next() {
                    Some('t') => lit.push('\t'),
                    Some('n') => lit.push('\n'),
                    Some('\\') => lit.push('\\'),
                    other => {
                        // Said in words: error messages are printed
                        // through `safe`, which doubles backslashes.
                        let after = other.map_or("the end".into(), |c| format!("'{c}'"));
                        return Err(UsageError(format!(
                            "--format: a backslash followed by {after}; a backslash escapes \
                             only t (tab), n (newline) and another backslash"
                        )));
                    }
                },
                '{' => {
                    let mut name = String::new();
                    let mut closed = false;
                    for c in chars.by_ref() {
                        if c == '}' {
                            closed = true;
                            break;
                        }
                        name.push(c);
                    }
                    if !closed {
                        return Err(UsageError(format!(
                            "--format: '{{{name}' is not closed (write '}}' after the field name, \
                             or '{{{{' for a brace)"
                        )));
                    }
                    let part = match name.strip_prefix("metadata.") {
                        Some("") => {
                            return Err(UsageError(
                                "--format: '{metadata.}' names no key; write {metadata.KEY}".into(),
                            ));
                        }
                        Some(key) => Part::Meta(key.to_string()),
                        None if valid.contains(&name) => Part::Field(name),
                        None => {
                            return Err(UsageError(format!(
                                "--format: unknown field '{{{name}}}'; valid fields: {}, \
                                 metadata.KEY",
                                valid.join(", ")
                            )));
                        }
                    };
                    if !lit.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut lit)));
                    }
                    parts.push(part);
                }
                '}' => {
                    return Err(UsageError(
                        "--format: a lone '}' (write '}}' for a brace)".into(),
                    ));
                }
                c => lit.push(c),
            }
        }
        if !lit.is_empty() {
            parts.push(Part::Text(lit));
        }
        Ok(Template(parts))
    }

    pub fn render(&self, row: &Row) -> Styled {
        let value = if self.0.iter().any(|p| matches!(p, Part::Field(_))) {
            serde_json::to_value(row).unwrap_or_default()
        } else {
            serde_json::Value::Null
        };
        let mut out = Styled::default();
        for part in &self.0 {
            match part {
                Part::Text(t) => out.typed_by_user(t),
                Part::Field(f) => match value.get(f) {
                    // Free text: its emoji are shown as they are.
                    Some(serde_json::Value::String(s)) if f == "title" => {
                        out = out.prose(s);
                    }
                    Some(serde_json::Value::String(s)) => out.push(s),
                    Some(serde_json::Value::Null) | None => {}
                    Some(other) => out.push(other),
                },
                Part::Meta(key) => {
                    if let Some(v) = row.record.metadata.get(key) {
                        out.push(v);
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> Row {
        let mut r = presence::Record::new("s1");
        r.client = "gateway".into();
        r.host = "laptop".into();
        r.title = "Fix {it}".into();
        r.metadata.insert("branch".into(), "main".into());
        r.metadata
            .insert("evil".into(), "\x1b]52;c;QQ==\x07".into());
        r.seq = 3;
        Row {
            record: r,
            file: "f.json".into(),
            dir: None,
            dir_index: 0,
            live: true,
            state: presence::State::Live,
            local: false,
            conflict_copy: false,
            age_s: 1.0,
            claimed_age_s: None,
            expires_in_s: Some(89.0),
            superseded_by: None,
            lost_because: None,
            verified: false,
            forged: None,
            writer_offset_s: None,
            redactions: Vec::new(),
        }
    }

    #[test]
    fn renders_fields_and_braces() {
        let t = Template::parse("{client}@{host} {{{title}}} #{seq} {ended_at}|").unwrap();
        assert_eq!(t.render(&row()).as_str(), "gateway@laptop {Fix {it}} #3 |");
    }

    #[test]
    fn unknown_fields_are_named_with_the_valid_ones() {
        let err = Template::parse("{hots}").unwrap_err().0;
        assert!(
            err.contains("'{hots}'") && err.contains("host") && err.contains("title"),
            "{err}"
        );
        assert!(Template::parse("a } b").is_err());
        assert!(Template::parse("{{literal}}").is_ok());
    }

    #[test]
    fn unclosed_and_empty_placeholders_are_usage_errors() {
        for bad in [
            "{title",
            "x {",
            "{metadata.branch",
            "{metadata.}",
            "{}",
            "a\\q",
            "end\\",
        ] {
            assert!(Template::parse(bad).is_err(), "{bad:?} was accepted");
        }
        let err = Template::parse("{title").unwrap_err().0;
        assert!(err.contains("not closed"), "{err}");
    }

    #[test]
    fn metadata_keys_and_escapes() {
        let t =
            Template::parse("{session_id}\\t{metadata.branch}|{metadata.none}|\\\\\\n").unwrap();
        assert_eq!(t.render(&row()).as_str(), "s1\tmain||\\\n");
        // A value from another device is escaped like every field.
        let t = Template::parse("{metadata.evil}").unwrap();
        assert_eq!(t.render(&row()).as_str(), "\\e]52;c;QQ==\\x07");
    }
}
