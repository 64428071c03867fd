//! `list --format TEMPLATE`: `{field}` placeholders with the names of the
//! `list --json` fields (`{open}` as the shell-quoted command line that
//! `presence open --print` prints), the table's times (`{up}`, `{seen}`,
//! `{expires}`), `{metadata.KEY}` for one metadata entry; `{{` and `}}`
//! stand for braces, `\t`, `\n` and `\\` for a tab, a newline and a
//! backslash. Every value is made safe ([`Styled`]), so a tab or a
//! newline in the output only ever comes from the template itself.

use presence::Row;

use super::UsageError;
use super::json::OpenRow;
use super::output::{self, Styled};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Time {
    /// `UP`: how long ago the session started (`5m`).
    Up,
    /// `SEEN`: when its record last arrived (`2s ago`).
    Seen,
    /// `EXPIRES`: when it stops being live (`in 89s`), or its state.
    Expires,
}

/// The table's times, by the names templates give them.
const TIMES: [(&str, Time); 3] = [
    ("up", Time::Up),
    ("seen", Time::Seen),
    ("expires", Time::Expires),
];

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Text(String),
    Field(String),
    Time(Time),
    Meta(String),
}

/// The field names a template takes: the row's, then the two about opening
/// it, as `list --json` has them.
fn field_names() -> Vec<String> {
    let mut names = Row::field_names();
    names.extend(["open".to_string(), "open_error".to_string()]);
    names
}

/// A parsed, checked template.
#[derive(Debug, Clone)]
pub struct Template(Vec<Part>);

impl Template {
    pub fn parse(text: &str) -> Result<Template, UsageError> {
        let valid = field_names();
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
                        None => match TIMES.iter().find(|(n, _)| *n == name) {
                            Some(&(_, time)) => Part::Time(time),
                            None => {
                                let times: Vec<&str> = TIMES.iter().map(|(n, _)| *n).collect();
                                return Err(UsageError(format!(
                                    "--format: unknown field '{{{name}}}'; valid fields: {}, \
                                     metadata.KEY; and the table's times: {}",
                                    valid.join(", "),
                                    times.join(", ")
                                )));
                            }
                        },
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

    /// `row` through the template; its times as the table shows them at `now`.
    pub fn render(&self, open: &OpenRow<'_>, now: f64) -> Styled {
        let row = open.row;
        let value = if self.0.iter().any(|p| matches!(p, Part::Field(_))) {
            serde_json::to_value(open).unwrap_or_default()
        } else {
            serde_json::Value::Null
        };
        let mut out = Styled::default();
        for part in &self.0 {
            match part {
                Part::Text(t) => out.typed_by_user(t),
                // The command line `presence open --print` prints.
                Part::Field(f) if f == "open" => {
                    if let Some(argv) = &open.open {
                        out = out.command(&presence::open::shell_line(argv));
                    }
                }
                Part::Field(f) => match value.get(f) {
                    // Free text: its emoji are shown as they are.
                    Some(serde_json::Value::String(s)) if f == "title" => {
                        out = out.prose(s);
                    }
                    Some(serde_json::Value::String(s)) => out.push(s),
                    Some(serde_json::Value::Null) | None => {}
                    Some(other) => out.push(other),
                },
                Part::Time(Time::Up) => {
                    if let Some(up) = output::up_s(row, now) {
                        out.push(output::short_duration(up));
                    }
                }
                Part::Time(Time::Seen) => out.push(output::ago(row.age_s)),
                Part::Time(Time::Expires) => out.push(output::expires(row)),
                Part::Meta(key) => {
                    if let Some(v) = row.record.metadata.get(key) {
                        out.push(v);
                    }
                }
            }
        }
        out
    }

    /// Whether the template shows what `presence open` would do, which
    /// [`super::json::Opener`] computes.
    pub fn opens(&self) -> bool {
        self.0
            .iter()
            .any(|p| matches!(p, Part::Field(f) if f == "open" || f == "open_error"))
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

    fn render(t: &Template, row: &Row) -> Styled {
        let open = OpenRow {
            row,
            open: None,
            open_error: Some("no endpoint".into()),
        };
        t.render(&open, 100.0)
    }

    #[test]
    fn renders_fields_and_braces() {
        let t = Template::parse("{client}@{host} {{{title}}} #{seq} {ended_at}|").unwrap();
        assert_eq!(
            render(&t, &row()).as_str(),
            "gateway@laptop {Fix {it}} #3 |"
        );
    }

    /// `{open}` is the command line `open --print` prints, `{open_error}`
    /// why there is none; `{up}`, `{seen}` and `{expires}` are the
    /// table's cells.
    #[test]
    fn open_and_the_tables_times() {
        let t = Template::parse("{open}|{open_error}|{up}|{seen}|{expires}").unwrap();
        let mut r = row();
        r.record.started_at = Some(100.0 - 125.0);
        let argv = ["ssh", "-t", "--", "al@desk", "cd -- /x && exec sh"].map(String::from);
        let open = OpenRow {
            row: &r,
            open: Some(argv.to_vec()),
            open_error: None,
        };
        assert_eq!(
            t.render(&open, 100.0).as_str(),
            "ssh -t -- al@desk 'cd -- /x && exec sh'||2m|1s ago|in 89s"
        );
        r.live = false;
        r.state = presence::State::Expired;
        r.record.started_at = None;
        assert_eq!(render(&t, &r).as_str(), "|no endpoint||1s ago|expired");
    }

    #[test]
    fn unknown_fields_are_named_with_the_valid_ones() {
        let err = Template::parse("{hots}").unwrap_err().0;
        assert!(
            err.contains("'{hots}'") && err.contains("host") && err.contains("title"),
            "{err}"
        );
        for name in ["open", "open_error", "up", "seen", "expires"] {
            assert!(
                err.contains(&format!(" {name},")) || err.ends_with(name),
                "{err}"
            );
        }
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
        assert_eq!(render(&t, &row()).as_str(), "s1\tmain||\\\n");
        // A value from another device is escaped like every field.
        let t = Template::parse("{metadata.evil}").unwrap();
        assert_eq!(render(&t, &row()).as_str(), "\\e]52;c;QQ==\\x07");
    }
}
