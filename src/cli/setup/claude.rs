//! Claude Code's hooks: presence's entries added to its `settings.json`
//! (`$CLAUDE_CONFIG_DIR` or `~/.claude`), only with consent, and taken out
//! again by `--uninstall`.
//!
//! Setup adds, for each event docs/integrations.md's block names that runs
//! no `presence … hook claude` yet, one group of its own:
//! `{ "hooks": [{ "type": "command", "command": "/path/to/presence hook
//! claude" }] }`, naming the running binary by its absolute path (Claude
//! runs hooks with its own `PATH`, which need not hold presence's
//! directory). The file is edited as text ([`json_text`]): the user's
//! keys, their order and layout, and the user's own hooks stay byte for
//! byte; the old file is kept beside it as `settings.json.presence-backup`.
//! `--uninstall` removes the groups that are exactly setup's (that one
//! command, by an absolute path to a `presence`, nothing else in the
//! group) and the event arrays and `hooks` object left empty by that.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde_json::Value;

use super::json_text::{self, Node, Splice};
use super::plan::{Action, Change, MAX_READ};

/// The events setup hooks, in the order docs/integrations.md lists them.
pub(super) const EVENTS: [&str; 7] = [
    "SessionStart",
    "UserPromptSubmit",
    "PostToolUse",
    "Stop",
    "Notification",
    "PermissionRequest",
    "SessionEnd",
];

/// What the messages about a settings file send the reader to.
const SHAPE: &str = "docs/integrations.md#claude-code shows the block";

/// Claude Code's state directory: `$CLAUDE_CONFIG_DIR` (absolute), else
/// `~/.claude`.
pub(super) fn state_dir(home: &Path) -> PathBuf {
    std::env::var_os("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home.join(".claude"))
}

/// The command setup writes: the binary's path, the global options setup
/// ran with that choose the profile (the hook runs without setup's
/// environment), then `hook claude`; each word quoted for the shell
/// Claude runs it with.
pub(super) fn hook_command(
    binary: &Path,
    profile: Option<&str>,
    config: Option<&Path>,
) -> anyhow::Result<String> {
    let text = |p: &Path| {
        p.to_str().map(str::to_string).with_context(|| {
            format!(
                "cannot name {} in Claude Code's settings: the path is not UTF-8; install \
                 presence where its path is plain (e.g. ~/.local/bin/presence)",
                p.display()
            )
        })
    };
    let mut words = vec![text(binary)?];
    if let Some(config) = config {
        words.extend(["--config".to_string(), text(&std::path::absolute(config)?)?]);
    }
    if let Some(profile) = profile {
        words.extend(["--profile".to_string(), profile.to_string()]);
    }
    words.extend(["hook".to_string(), "claude".to_string()]);
    let mut quoted = Vec::new();
    for w in &words {
        if w.chars().any(char::is_control) {
            bail!("cannot write {w:?} into Claude Code's settings: it holds a control character");
        }
        quoted.push(shell_word(w));
    }
    Ok(quoted.join(" "))
}

/// `word` as one shell word: as it is when it is plain, else in single
/// quotes.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._+-=:,@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The first shell word of `command`, unquoted, and the rest.
fn first_word(command: &str) -> (String, &str) {
    let command = command.trim_start();
    let mut word = String::new();
    let mut chars = command.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' => {
                for (_, c) in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                while let Some((_, c)) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next().map(|(_, c)| c)),
                        c => word.push(c),
                    }
                }
            }
            '\\' => word.extend(chars.next().map(|(_, c)| c)),
            c if c.is_whitespace() => return (word, &command[i..]),
            c => word.push(c),
        }
    }
    (word, "")
}

/// Whether `command` runs presence's Claude hook: its first word names a
/// program called `presence`, its last two words are `hook claude`.
pub(super) fn runs_presence_hook(command: &str) -> bool {
    let (program, rest) = first_word(command);
    let words: Vec<&str> = rest.split_whitespace().collect();
    Path::new(&program)
        .file_name()
        .is_some_and(|n| n == "presence")
        && words.ends_with(&["hook", "claude"])
}

/// Whether `group` is one setup writes: nothing but `hooks`, holding
/// nothing but one command hook that runs presence's by an absolute path.
fn is_setups(group: &Value) -> bool {
    let Some(g) = group.as_object() else {
        return false;
    };
    let Some([hook]) = g.get("hooks").and_then(Value::as_array).map(Vec::as_slice) else {
        return false;
    };
    let Some(h) = hook.as_object() else {
        return false;
    };
    let command = h.get("command").and_then(Value::as_str).unwrap_or("");
    g.len() == 1
        && h.len() == 2
        && h.get("type").and_then(Value::as_str) == Some("command")
        && runs_presence_hook(command)
        && first_word(command).0.starts_with('/')
}

/// The group setup adds, as one line.
fn group_text(command: &str) -> String {
    format!(
        "{{ \"hooks\": [{{ \"type\": \"command\", \"command\": {} }}] }}",
        Value::from(command)
    )
}

fn group_value(command: &str) -> Value {
    serde_json::json!({ "hooks": [{ "type": "command", "command": command }] })
}

/// What a JSON value is, in words.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A settings file as read: where, its text, its value and the spans of
/// its values.
pub(super) struct Settings {
    /// The file read and written (where a symbolic link leads).
    pub(super) path: PathBuf,
    /// How the plan names it.
    pub(super) shown: String,
    /// The file's text as read (`None`: there is none).
    raw: Option<String>,
    /// Its text, value and spans (`None`: there is none, or it is empty).
    text: Option<(String, Value, Node)>,
}

/// Reads the settings file at `link` (a symbolic link: the file it leads
/// to, as for the configuration); refused, with why and what to do, when
/// it is not a regular file, too large, not JSON, not an object, or its
/// `hooks` is not an object of events (each key once).
pub(super) fn read(link: &Path, dir: &Path, synced: Option<&Path>) -> anyhow::Result<Settings> {
    let path = super::config::edited_file(
        link,
        dir,
        synced,
        "point CLAUDE_CONFIG_DIR at a directory outside the synced folder",
    )?;
    let shown = super::config::shown(&path, link);
    let bytes = presence::bounded::read_path(&path, MAX_READ).with_context(|| {
        format!(
            "cannot read {shown}: setup edits only a plain file of at most {MAX_READ} bytes; \
             add the hooks by hand ({SHAPE}), or leave out --claude-hooks"
        )
    })?;
    let raw = match bytes.map(String::from_utf8) {
        None => None,
        Some(Ok(text)) => Some(text),
        Some(Err(_)) => bail!(
            "{shown} is not UTF-8, so it is not JSON Claude Code reads: fix it, then run setup \
             again"
        ),
    };
    parse(path, shown, raw)
}

/// [`read`]'s checks of the file's text (`None`: there is none).
fn parse(path: PathBuf, shown: String, raw: Option<String>) -> anyhow::Result<Settings> {
    let Some(text) = raw.clone().filter(|t| !t.trim().is_empty()) else {
        return Ok(Settings {
            path,
            shown,
            raw,
            text: None,
        });
    };
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{shown} is not valid JSON ({e}), so setup leaves it as it is: fix it (Claude Code \
             cannot read it either), then run setup again"
        )
    })?;
    let node = json_text::spans(&text)
        .with_context(|| format!("cannot follow the JSON of {shown}: add the hooks by hand"))?;
    let Some(members) = node.members() else {
        bail!(
            "{shown} holds {}, not an object of settings: fix it ({SHAPE}), then run setup again",
            kind(&value)
        );
    };
    if members.iter().filter(|m| m.key == "hooks").count() > 1 {
        bail!("{shown} names `hooks` twice: keep one, then run setup again");
    }
    if let Some(hooks) = value.get("hooks") {
        if !hooks.is_object() {
            bail!(
                "`hooks` in {shown} is {}, not an object of events: fix it ({SHAPE}), then run \
                 setup again",
                kind(hooks)
            );
        }
        let events = node
            .get("hooks")
            .and_then(|m| m.value.members())
            .unwrap_or(&[]);
        for (i, e) in events.iter().enumerate() {
            if events[..i].iter().any(|o| o.key == e.key) {
                bail!(
                    "`hooks` in {shown} names {:?} twice: keep one, then run setup again",
                    e.key
                );
            }
        }
    }
    Ok(Settings {
        path,
        shown,
        raw,
        text: Some((text, value, node)),
    })
}

impl Settings {
    /// The groups of `event`, checked to be hook groups (`[{"matcher": …,
    /// "hooks": [{…}]}]`); `None` when the event has none.
    fn groups(&self, event: &str) -> anyhow::Result<Option<&Vec<Value>>> {
        let Some((_, value, _)) = &self.text else {
            return Ok(None);
        };
        let Some(groups) = value.get("hooks").and_then(|h| h.get(event)) else {
            return Ok(None);
        };
        let shown = &self.shown;
        let Some(groups) = groups.as_array() else {
            bail!(
                "`hooks.{event}` in {shown} is {}, not an array of hook groups: fix it ({SHAPE}), \
                 then run setup again",
                kind(groups)
            );
        };
        for (i, g) in groups.iter().enumerate() {
            let hooks = g.get("hooks").and_then(Value::as_array);
            if !hooks.is_some_and(|h| h.iter().all(Value::is_object)) {
                bail!(
                    "`hooks.{event}[{i}]` in {shown} is not a hook group ({{\"hooks\": \
                     [{{\"type\": \"command\", \"command\": …}}]}}): fix it ({SHAPE}), then run \
                     setup again"
                );
            }
        }
        Ok(Some(groups))
    }

    /// The events of [`EVENTS`] none of whose hooks runs presence's.
    pub(super) fn unhooked(&self) -> anyhow::Result<Vec<&'static str>> {
        let mut out = Vec::new();
        for event in EVENTS {
            let hooked = self.groups(event)?.is_some_and(|groups| {
                groups
                    .iter()
                    .filter_map(|g| g.get("hooks").and_then(Value::as_array))
                    .flatten()
                    .filter_map(|h| h.get("command").and_then(Value::as_str))
                    .any(runs_presence_hook)
            });
            if !hooked {
                out.push(event);
            }
        }
        Ok(out)
    }

    fn backup(&self) -> PathBuf {
        let mut name = self.path.file_name().unwrap_or_default().to_os_string();
        name.push(".presence-backup");
        self.path.with_file_name(name)
    }

    fn edit(&self, what: String, text: String) -> Change {
        let before = self.raw.clone();
        let backup = self.text.as_ref().map(|_| self.backup());
        Change {
            what: match &backup {
                Some(b) => format!("{what} (the old file kept as {})", b.display()),
                None => what,
            },
            action: Action::Edit {
                path: self.path.clone(),
                before,
                text,
                backup,
            },
        }
    }

    /// The change that adds setup's group, running `command`, to each
    /// event of [`EVENTS`] that runs no presence hook yet; none when every
    /// one does.
    pub(super) fn install(&self, command: &str) -> anyhow::Result<Option<Change>> {
        let missing = self.unhooked()?;
        if missing.is_empty() {
            return Ok(None);
        }
        let group = group_text(command);
        let what = format!(
            "add presence's hook `{command}` for {} to {}",
            missing.join(", "),
            self.shown
        );
        let Some((text, value, node)) = &self.text else {
            let events: Vec<String> = missing
                .iter()
                .map(|e| format!("    \"{e}\": [{group}]"))
                .collect();
            let text = format!("{{\n  \"hooks\": {{\n{}\n  }}\n}}\n", events.join(",\n"));
            return Ok(Some(self.edit(what, text)));
        };
        let pretty = text.trim().contains('\n');
        let top = node.members().unwrap_or(&[]);
        let unit = top
            .first()
            .and_then(|m| json_text::own_line_indent(text, m.start))
            .filter(|i| !i.is_empty())
            .unwrap_or("  ")
            .to_string();
        let mut edits = Vec::new();
        let mut expected = value.clone();
        match node.get("hooks") {
            None => {
                let members: Vec<String> = missing
                    .iter()
                    .map(|e| format!("\"{e}\": [{group}]"))
                    .collect();
                edits.push(add_member(
                    text,
                    node,
                    "\"hooks\": ",
                    &members,
                    &unit,
                    pretty,
                ));
            }
            Some(hooks) => {
                let mut added = Vec::new();
                for event in &missing {
                    match hooks.value.get(event) {
                        Some(m) => edits.push(add_item(text, &m.value, &group)),
                        None => added.push(format!("\"{event}\": [{group}]")),
                    }
                }
                if !added.is_empty() {
                    edits.push(add_members(text, &hooks.value, &added, &unit, pretty));
                }
            }
        }
        let mut hooks = expected
            .as_object_mut()
            .map(|o| o.entry("hooks").or_insert_with(|| serde_json::json!({})));
        for event in &missing {
            if let Some(groups) = hooks
                .as_mut()
                .and_then(|h| h.as_object_mut())
                .map(|h| h.entry(*event).or_insert_with(|| Value::Array(Vec::new())))
                .and_then(Value::as_array_mut)
            {
                groups.push(group_value(command));
            }
        }
        let new = json_text::splice(text, edits).context("cannot edit the settings' text")?;
        checked(&self.shown, &new, &expected)?;
        Ok(Some(self.edit(what, new)))
    }

    /// The change that removes setup's groups (and the event arrays and the
    /// `hooks` object that leaves empty); none when there are none.
    pub(super) fn uninstall(&self) -> anyhow::Result<Option<Change>> {
        let Some((text, value, node)) = &self.text else {
            return Ok(None);
        };
        let (Some(hooks), Some(hooks_value)) = (node.get("hooks"), value.get("hooks")) else {
            return Ok(None);
        };
        let events = hooks.value.members().unwrap_or(&[]);
        let mut expected = value.clone();
        let mut removed = Vec::new();
        let mut kept_events = Vec::new();
        for m in events {
            let (Some(items), Some(groups)) = (
                m.value.items(),
                hooks_value.get(&m.key).and_then(Value::as_array),
            ) else {
                kept_events.push(Some(text[m.span()].to_string()));
                continue;
            };
            let kept: Vec<Option<String>> = items
                .iter()
                .zip(groups)
                .map(|(n, g)| (!is_setups(g)).then(|| text[n.span.clone()].to_string()))
                .collect();
            let count = kept.iter().filter(|k| k.is_none()).count();
            if count == 0 {
                kept_events.push(Some(text[m.span()].to_string()));
                continue;
            }
            removed.push(m.key.clone());
            let spans: Vec<_> = items.iter().map(|n| n.span.clone()).collect();
            let left: Vec<Value> = groups.iter().filter(|g| !is_setups(g)).cloned().collect();
            let e = expected["hooks"].as_object_mut();
            if left.is_empty() {
                kept_events.push(None);
                if let Some(e) = e {
                    e.remove(&m.key);
                }
            } else {
                let array = json_text::rebuild(text, &m.value.span, &spans, &kept)
                    .context("cannot edit the settings' text")?;
                kept_events.push(Some(format!(
                    "{}{array}",
                    &text[m.start..m.value.span.start]
                )));
                if let Some(e) = e {
                    e.insert(m.key.clone(), Value::Array(left));
                }
            }
        }
        if removed.is_empty() {
            return Ok(None);
        }
        let spans: Vec<_> = events.iter().map(|m| m.span()).collect();
        let edit = if kept_events.iter().all(Option::is_none) {
            if let Some(o) = expected.as_object_mut() {
                o.remove("hooks");
            }
            let top = node.members().unwrap_or(&[]);
            let spans: Vec<_> = top.iter().map(|m| m.span()).collect();
            let kept: Vec<Option<String>> = top
                .iter()
                .map(|m| (m.key != "hooks").then(|| text[m.span()].to_string()))
                .collect();
            Splice {
                range: node.span.clone(),
                with: json_text::rebuild(text, &node.span, &spans, &kept)
                    .context("cannot edit the settings' text")?,
            }
        } else {
            Splice {
                range: hooks.value.span.clone(),
                with: json_text::rebuild(text, &hooks.value.span, &spans, &kept_events)
                    .context("cannot edit the settings' text")?,
            }
        };
        let new = json_text::splice(text, vec![edit]).context("cannot edit the settings' text")?;
        checked(&self.shown, &new, &expected)?;
        let what = format!(
            "remove presence's hooks for {} from {}",
            removed.join(", "),
            self.shown
        );
        Ok(Some(self.edit(what, new)))
    }
}

/// Refuses an edit whose text does not read back as the value it was to
/// make: setup never writes what it did not mean.
fn checked(shown: &str, new: &str, expected: &Value) -> anyhow::Result<()> {
    match serde_json::from_str::<Value>(new) {
        Ok(v) if v == *expected => Ok(()),
        _ => bail!(
            "setup could not edit {shown} without changing more than its hooks, so it leaves it \
             as it is: add the hooks by hand ({SHAPE})"
        ),
    }
}

/// The splice that appends `item` to the array `array`, on a line of its
/// own when the last item is on one.
fn add_item(text: &str, array: &Node, item: &str) -> Splice {
    match array.items().and_then(<[Node]>::last) {
        None => Splice {
            range: array.span.clone(),
            with: format!("[{item}]"),
        },
        Some(last) => Splice {
            range: last.span.end..last.span.end,
            with: match json_text::own_line_indent(text, last.span.start) {
                Some(indent) => format!(",\n{indent}{item}"),
                None => format!(", {item}"),
            },
        },
    }
}

/// The splice that appends the members `members` (`"key": value`, each
/// one line) to the object `object`.
fn add_members(text: &str, object: &Node, members: &[String], unit: &str, pretty: bool) -> Splice {
    let outer = json_text::line_indent(text, object.span.start);
    match object.members().and_then(<[json_text::Member]>::last) {
        None if pretty => {
            let inner = format!("{outer}{unit}");
            let lines: Vec<String> = members.iter().map(|m| format!("{inner}{m}")).collect();
            Splice {
                range: object.span.clone(),
                with: format!("{{\n{}\n{outer}}}", lines.join(",\n")),
            }
        }
        None => Splice {
            range: object.span.clone(),
            with: format!("{{{}}}", members.join(", ")),
        },
        Some(last) => {
            let sep = match json_text::own_line_indent(text, last.start) {
                Some(indent) => format!(",\n{indent}"),
                None => ", ".to_string(),
            };
            Splice {
                range: last.value.span.end..last.value.span.end,
                with: members.iter().map(|m| format!("{sep}{m}")).collect(),
            }
        }
    }
}

/// The splice that adds to the object `object` the member `key` (`"key":
/// `) whose value is an object of `members`, laid out as its siblings are.
fn add_member(
    text: &str,
    object: &Node,
    key: &str,
    members: &[String],
    unit: &str,
    pretty: bool,
) -> Splice {
    let outer = match object.members().and_then(<[json_text::Member]>::last) {
        Some(last) => json_text::own_line_indent(text, last.start)
            .unwrap_or("")
            .to_string(),
        None => format!("{}{unit}", json_text::line_indent(text, object.span.start)),
    };
    let value = if pretty {
        let lines: Vec<String> = members
            .iter()
            .map(|m| format!("{outer}{unit}{m}"))
            .collect();
        format!("{{\n{}\n{outer}}}", lines.join(",\n"))
    } else {
        format!("{{{}}}", members.join(", "))
    };
    add_members(text, object, &[format!("{key}{value}")], unit, pretty)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: &str = "/opt/p/presence hook claude";

    fn settings(text: &str) -> Settings {
        try_settings(text).unwrap()
    }

    fn try_settings(text: &str) -> anyhow::Result<Settings> {
        let path = PathBuf::from("/s/settings.json");
        parse(path.clone(), path.display().to_string(), Some(text.into()))
    }

    fn after(change: Option<Change>) -> String {
        match change.map(|c| c.action) {
            Some(Action::Edit { text, .. }) => text,
            _ => panic!("no edit"),
        }
    }

    #[test]
    fn the_first_word_and_presence_hooks_are_told() {
        assert_eq!(
            first_word("'/a b/presence' hook claude"),
            ("/a b/presence".into(), " hook claude")
        );
        assert_eq!(first_word("\"/a\\\"b\" x").0, "/a\"b");
        assert_eq!(first_word("/a\\ b/presence").0, "/a b/presence");
        for yes in [
            "presence hook claude",
            "/usr/bin/presence hook claude",
            "'/x y/presence' --profile w hook claude",
        ] {
            assert!(runs_presence_hook(yes), "{yes}");
        }
        for no in [
            "presence hook hermes",
            "notpresence hook claude",
            "echo presence hook claude",
            "",
        ] {
            assert!(!runs_presence_hook(no), "{no}");
        }
        assert!(is_setups(&group_value(CMD)));
        assert!(!is_setups(&group_value("presence hook claude")));
        let mut with_matcher = group_value(CMD);
        with_matcher["matcher"] = "x".into();
        assert!(!is_setups(&with_matcher));
    }

    #[test]
    fn the_command_is_quoted_for_the_shell() {
        let c = hook_command(Path::new("/opt/my app/presence"), Some("it's"), None).unwrap();
        assert_eq!(c, "'/opt/my app/presence' --profile 'it'\\''s' hook claude");
        assert!(runs_presence_hook(&c));
        assert!(hook_command(Path::new("/a\nb/presence"), None, None).is_err());
    }

    #[test]
    fn hooks_are_added_beside_the_users_own_keys_and_hooks() {
        let text = "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"Stop\": [\n            \
                    { \"hooks\": [{ \"type\": \"command\", \"command\": \"say done\" }] }\n        \
                    ],\n        \"SessionEnd\": []\n    },\n    \"env\": {}\n}\n";
        let s = settings(text);
        let new = after(s.install(CMD).unwrap());
        assert!(
            new.starts_with("{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"Stop\": [\n")
        );
        assert!(
            new.contains("\"command\": \"say done\" }] },\n            { \"hooks\": [{ \"type\"")
        );
        assert!(new.contains(&format!("\"SessionEnd\": [{}]", group_text(CMD))));
        assert!(new.contains(&format!(
            ",\n        \"SessionStart\": [{}]",
            group_text(CMD)
        )));
        assert!(new.ends_with("    },\n    \"env\": {}\n}\n"));
        // Again: nothing to add; and out again: the text it was.
        let s2 = settings(&new);
        assert!(s2.install(CMD).unwrap().is_none());
        let back = after(s2.uninstall().unwrap());
        assert_eq!(back, text.replace(",\n        \"SessionEnd\": []", ""));
        assert!(settings(&back).uninstall().unwrap().is_none());
    }

    #[test]
    fn hooks_are_added_to_a_file_without_any() {
        for text in ["{}", "{\"a\": 1}", "{\n  \"a\": [1]\n}\n", "{\n}\n"] {
            let new = after(settings(text).install(CMD).unwrap());
            let v: Value = serde_json::from_str(&new).unwrap();
            assert_eq!(v["hooks"].as_object().unwrap().len(), EVENTS.len(), "{new}");
            let back = after(settings(&new).uninstall().unwrap());
            let back: Value = serde_json::from_str(&back).unwrap();
            assert_eq!(back, serde_json::from_str::<Value>(text).unwrap(), "{new}");
        }
        let new = after(settings("{\n  \"a\": 1\n}\n").install(CMD).unwrap());
        assert!(
            new.starts_with("{\n  \"a\": 1,\n  \"hooks\": {\n    \"SessionStart\": ["),
            "{new}"
        );
    }

    #[test]
    fn hooks_of_the_wrong_shape_are_refused() {
        for (text, said) in [
            (
                "[]",
                "/s/settings.json holds an array, not an object of settings",
            ),
            (
                "{\"a\": 1,}",
                "/s/settings.json is not valid JSON (trailing comma at line 1",
            ),
            (
                "{\"hooks\": []}",
                "`hooks` in /s/settings.json is an array, not an object",
            ),
            ("{\"hooks\": 1, \"hooks\": {}}", "names `hooks` twice"),
            (
                "{\"hooks\": {\"Stop\": [], \"Stop\": []}}",
                "names \"Stop\" twice",
            ),
            (
                "{\"hooks\": {\"Stop\": {}}}",
                "`hooks.Stop` in /s/settings.json is an object",
            ),
            (
                "{\"hooks\": {\"Stop\": [1]}}",
                "`hooks.Stop[0]` in /s/settings.json is not a hook group",
            ),
            (
                "{\"hooks\": {\"Stop\": [{\"hooks\": [\"x\"]}]}}",
                "`hooks.Stop[0]`",
            ),
        ] {
            let err = try_settings(text)
                .and_then(|s| s.install(CMD))
                .err()
                .unwrap()
                .to_string();
            assert!(err.contains(said), "{err}");
        }
    }

    proptest::proptest! {
        /// Whatever the settings file holds, setup refuses it or edits it,
        /// never panics, and an edit reads back as meant (`checked`);
        /// taking setup's hooks out again leaves the user's own.
        #[test]
        fn any_settings_text_is_refused_or_edited_without_panicking(
            text in "[ \n{}\\[\\],:\"a-z0-9\\\\]{0,80}",
            events in proptest::sample::subsequence(EVENTS.to_vec(), 1..4),
        ) {
            let _ = json_text::spans(&text);
            let Ok(s) = try_settings(&text) else { return Ok(()) };
            let _ = s.uninstall();
            let Ok(Some(change)) = s.install(CMD) else { return Ok(()) };
            let Action::Edit { text: new, .. } = change.action else { panic!("not an edit") };
            let again = try_settings(&new).unwrap();
            proptest::prop_assert!(again.unhooked().unwrap().is_empty());
            proptest::prop_assert!(again.install(CMD).unwrap().is_none());
            if let Ok(Some(back)) = again.uninstall() {
                let Action::Edit { text: back, .. } = back.action else { panic!("not an edit") };
                let back = try_settings(&back).unwrap();
                proptest::prop_assert_eq!(back.unhooked().unwrap().len(), s.unhooked().unwrap().len());
            }
            // Events named by hand, in any order: the same holds.
            let hooks: Vec<String> = events
                .iter()
                .map(|e| format!("\"{e}\": [{}]", group_text("presence hook claude")))
                .collect();
            let mine = format!("{{\"hooks\": {{{}}}}}", hooks.join(", "));
            let s = try_settings(&mine).unwrap();
            proptest::prop_assert_eq!(s.unhooked().unwrap().len(), EVENTS.len() - events.len());
            if let Some(change) = s.install(CMD).unwrap() {
                let Action::Edit { text: new, .. } = change.action else { panic!("not an edit") };
                let back = try_settings(&new).unwrap().uninstall().unwrap();
                let Some(Change { action: Action::Edit { text: back, .. }, .. }) = back else {
                    panic!("nothing to take out of {new}")
                };
                proptest::prop_assert_eq!(back, mine);
            }
        }

        /// Settings shaped as Claude writes them, pretty or on one line:
        /// adding setup's hooks and taking them out again leaves every
        /// other group where it was, and a second add adds nothing.
        #[test]
        fn the_users_groups_survive_an_add_and_a_removal(
            events in proptest::collection::vec(
                (
                    proptest::sample::select(vec!["Stop", "SessionStart", "PreToolUse", "SessionEnd"]),
                    proptest::collection::vec(0..4usize, 0..3),
                ),
                0..4,
            ),
            others in proptest::collection::vec(proptest::sample::select(vec!["model", "env", "z"]), 0..3),
            pretty: bool,
        ) {
            let kinds = [
                group_value("say hi"),
                group_value("presence hook claude"),
                serde_json::json!({"matcher": "Bash", "hooks": [{"type": "command", "command": CMD}]}),
                group_value(CMD),
            ];
            let mut top = serde_json::Map::new();
            for k in others {
                top.insert(k.to_string(), Value::from(1));
            }
            let mut hooks = serde_json::Map::new();
            for (event, groups) in &events {
                let groups: Vec<Value> = groups.iter().map(|g| kinds[*g].clone()).collect();
                hooks.insert(event.to_string(), Value::Array(groups));
            }
            if !events.is_empty() {
                top.insert("hooks".into(), Value::Object(hooks));
            }
            let top = Value::Object(top);
            let text = if pretty {
                serde_json::to_string_pretty(&top).unwrap()
            } else {
                serde_json::to_string(&top).unwrap()
            };
            let users = |v: &Value| -> Vec<(String, Vec<Value>)> {
                v.get("hooks").and_then(Value::as_object).map(|h| {
                    h.iter()
                        .map(|(k, g)| {
                            let mine = g.as_array().unwrap().iter().filter(|g| !is_setups(g)).cloned();
                            (k.clone(), mine.collect())
                        })
                        .filter(|(_, g): &(String, Vec<Value>)| !g.is_empty())
                        .collect()
                }).unwrap_or_default()
            };
            let s = try_settings(&text).unwrap();
            let added = match s.install(CMD).unwrap() {
                Some(c) => after(Some(c)),
                None => text.clone(),
            };
            let again = try_settings(&added).unwrap();
            proptest::prop_assert!(again.install(CMD).unwrap().is_none());
            let removed = match again.uninstall().unwrap() {
                Some(c) => after(Some(c)),
                None => added.clone(),
            };
            let removed: Value = serde_json::from_str(&removed).unwrap();
            proptest::prop_assert_eq!(users(&removed), users(&top));
            for k in ["model", "env", "z"] {
                proptest::prop_assert_eq!(removed.get(k), top.get(k));
            }
        }
    }
}
