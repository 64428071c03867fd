//! `list --format TEMPLATE`: `{field}` placeholders with the names of the
//! `list --json` fields; `{{` and `}}` stand for braces.

use presence::Row;

use super::{UsageError, safe};

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Text(String),
    Field(String),
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
                '{' => {
                    let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
                    if !valid.contains(&name) {
                        return Err(UsageError(format!(
                            "--format: unknown field '{{{name}}}'; valid fields: {}",
                            valid.join(", ")
                        )));
                    }
                    if !lit.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut lit)));
                    }
                    parts.push(Part::Field(name));
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

    pub fn render(&self, row: &Row) -> String {
        let value = serde_json::to_value(row).unwrap_or_default();
        let mut out = String::new();
        for part in &self.0 {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Field(f) => match value.get(f) {
                    Some(serde_json::Value::String(s)) => out.push_str(&safe(s)),
                    Some(serde_json::Value::Null) | None => {}
                    Some(other) => out.push_str(&safe(&other.to_string())),
                },
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
        r.seq = 3;
        Row {
            record: r,
            file: "f.json".into(),
            live: true,
            state: presence::State::Live,
            local: false,
            conflict_copy: false,
            age_s: 1.0,
            claimed_age_s: None,
            expires_in_s: Some(89.0),
            superseded_by: None,
            lost_because: None,
            writer_offset_s: None,
            redactions: Vec::new(),
        }
    }

    #[test]
    fn renders_fields_and_braces() {
        let t = Template::parse("{client}@{host} {{{title}}} #{seq} {ended_at}|").unwrap();
        assert_eq!(t.render(&row()), "gateway@laptop {Fix {it}} #3 |");
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
}
