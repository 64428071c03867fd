//! `presence watch --on STATE -- CMD ARGS…`: a tap on the shoulder. Runs
//! CMD for each transition of a live session into status STATE (`--on`
//! repeats; `up` and `down` name a session appearing and leaving), with the
//! session's fields in CMD's environment:
//!
//! | variable | value |
//! |---|---|
//! | `PRESENCE_EVENT` | `up`, `update` or `down` |
//! | `PRESENCE_STATE` | the `--on` word that matched |
//! | `PRESENCE_SESSION`, `PRESENCE_HOST`, `PRESENCE_TITLE`, `PRESENCE_STATUS`, `PRESENCE_CLIENT`, `PRESENCE_ENDPOINT`, `PRESENCE_DEVICE` | the record's fields |
//! | `PRESENCE_LOCAL` | `1` for this device's own session, else `0` |
//! | `PRESENCE_REASON` | on `down`: `cleared`, `expired` or `superseded` |
//!
//! CMD is run directly, never through a shell, so nothing another device
//! wrote is ever read as shell code; each value is the one `list` would
//! print (redacted, control characters escaped). A transition fires at
//! most once per session and state within [`QUIET_S`], so a status that
//! flaps fires once. The sessions live when the watch starts are its
//! starting point, not transitions: only what changes after fires. CMD runs
//! in the background (the watch goes on), its stdin closed, its stdout
//! the watch's stderr when the watch prints JSON (so that the stream stays
//! JSON), else the watch's stdout; its exit status is not looked at, only
//! reaped.

use std::collections::HashMap;
use std::ffi::OsString;
use std::process::{Child, Command, Stdio};

use presence::{Event, Row};

use super::UsageError;

/// The least time between two runs for one session and state (seconds).
pub const QUIET_S: f64 = 5.0;

/// The `--on` words and the command, and what ran lately.
pub struct On {
    states: Vec<String>,
    command: Vec<OsString>,
    json: bool,
    /// When CMD last ran for each (session file, state).
    last: HashMap<(String, String), f64>,
    children: Vec<Child>,
}

impl On {
    /// From `watch`'s arguments; `None` without `--on`.
    pub fn new(
        states: Vec<String>,
        command: Vec<OsString>,
        json: bool,
    ) -> Result<Option<On>, UsageError> {
        match (states.is_empty(), command.is_empty()) {
            (true, true) => return Ok(None),
            (true, false) => {
                return Err(UsageError(
                    "a command after `--` runs only with --on STATE: write \
                     `presence watch --on waiting -- CMD ARGS…`"
                        .into(),
                ));
            }
            (false, true) => {
                return Err(UsageError(
                    "--on needs a command to run: write `presence watch --on STATE -- CMD ARGS…` \
                     (the session's fields are in its environment: see `presence watch --help`)"
                        .into(),
                ));
            }
            (false, false) => {}
        }
        for s in &states {
            if s.is_empty()
                || !s
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(UsageError(format!(
                    "--on {s:?}: a state is a status word (working, waiting, idle, …), `up` or `down`"
                )));
            }
        }
        Ok(Some(On {
            states,
            command,
            json,
            last: HashMap::new(),
            children: Vec::new(),
        }))
    }

    /// The `--on` word `event` is a transition into, if any.
    fn matches(&self, event: &Event) -> Option<(&'static str, &str)> {
        let has = |w: &str| self.states.iter().any(|s| s == w);
        match event {
            Event::Up(_) if has("up") => Some(("up", "up")),
            Event::Up(row) if has(&row.record.status) => {
                Some(("up", self.word(&row.record.status)))
            }
            Event::Update { row, changed }
                if changed.contains(&"status") && has(&row.record.status) =>
            {
                Some(("update", self.word(&row.record.status)))
            }
            Event::Down { .. } if has("down") => Some(("down", "down")),
            _ => None,
        }
    }

    fn word(&self, status: &str) -> &str {
        self.states
            .iter()
            .find(|s| *s == status)
            .map_or("", String::as_str)
    }

    /// Runs CMD for `event` at `now` if it is a transition `--on` names and
    /// the same session did not fire the same state within [`QUIET_S`].
    /// Also reaps the children that ended. Returns whether CMD was started.
    pub fn event(&mut self, event: &Event, now: f64) -> std::io::Result<bool> {
        self.reap();
        let Some((kind, state)) = self.matches(event) else {
            return Ok(false);
        };
        let state = state.to_owned();
        let Some(row) = event.row() else {
            return Ok(false);
        };
        let key = (row.file.clone(), state.clone());
        if self
            .last
            .get(&key)
            .is_some_and(|&t| (now - t).abs() < QUIET_S)
        {
            return Ok(false);
        }
        self.last.insert(key, now);
        // Forget what is long past, so that a long watch stays small.
        self.last.retain(|_, t| (now - *t).abs() < QUIET_S);
        let reason = match event {
            Event::Down { reason, .. } => serde_json::to_value(reason)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned)),
            _ => None,
        };
        let mut cmd = Command::new(&self.command[0]);
        cmd.args(&self.command[1..])
            .stdin(Stdio::null())
            .envs(environment(row, kind, &state, reason.as_deref()));
        if self.json {
            // Not a print: the child's stdout is handed our stderr, so that
            // the JSON stream on stdout stays JSON.
            #[allow(clippy::disallowed_methods)]
            cmd.stdout(std::io::stderr());
        }
        self.children.push(cmd.spawn()?);
        Ok(true)
    }

    /// Reaps the children that ended.
    pub fn reap(&mut self) {
        self.children
            .retain_mut(|c| matches!(c.try_wait(), Ok(None)));
    }
}

/// CMD's environment for `row`: each value as `list` would print it.
fn environment(
    row: &Row,
    kind: &str,
    state: &str,
    reason: Option<&str>,
) -> Vec<(&'static str, String)> {
    let safe = |s: &str| presence::terminal_safe(s).into_owned();
    let r = &row.record;
    let mut env = vec![
        ("PRESENCE_EVENT", kind.to_owned()),
        ("PRESENCE_STATE", safe(state)),
        ("PRESENCE_SESSION", safe(&r.session_id)),
        ("PRESENCE_HOST", safe(&r.host)),
        ("PRESENCE_TITLE", safe(&r.title)),
        ("PRESENCE_STATUS", safe(&r.status)),
        ("PRESENCE_CLIENT", safe(&r.client)),
        ("PRESENCE_ENDPOINT", safe(&r.endpoint)),
        ("PRESENCE_DEVICE", safe(&r.device_id)),
        (
            "PRESENCE_LOCAL",
            if row.local { "1" } else { "0" }.to_owned(),
        ),
    ];
    if let Some(reason) = reason {
        env.push(("PRESENCE_REASON", reason.to_owned()));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(file: &str, status: &str) -> Row {
        let mut row = crate::cli::fixtures::row(file);
        row.file = file.into();
        row.record.status = status.into();
        row
    }

    fn on(states: &[&str]) -> On {
        On::new(
            states.iter().map(|s| s.to_string()).collect(),
            vec!["true".into()],
            false,
        )
        .unwrap()
        .unwrap()
    }

    #[test]
    fn only_transitions_into_a_named_state_fire() {
        let o = on(&["waiting"]);
        let up = |s: &str| Event::Up(row("a", s));
        let update = |s: &str, changed: &'static [&'static str]| Event::Update {
            row: row("a", s),
            changed: changed.to_vec(),
        };
        assert_eq!(o.matches(&up("waiting")), Some(("up", "waiting")));
        assert_eq!(o.matches(&up("working")), None);
        assert_eq!(
            o.matches(&update("waiting", &["status"])),
            Some(("update", "waiting"))
        );
        // Still waiting, its title changed: no transition.
        assert_eq!(o.matches(&update("waiting", &["title"])), None);
        let down = Event::Down {
            row: row("a", "waiting"),
            reason: presence::DownReason::Cleared,
        };
        assert_eq!(o.matches(&down), None);
        assert_eq!(on(&["down"]).matches(&down), Some(("down", "down")));
        assert_eq!(on(&["up"]).matches(&up("idle")), Some(("up", "up")));
    }

    #[test]
    fn a_session_fires_a_state_at_most_once_within_the_quiet_time() {
        let mut o = on(&["waiting"]);
        let waiting = |file: &str| Event::Update {
            row: row(file, "waiting"),
            changed: vec!["status"],
        };
        assert!(o.event(&waiting("a"), 100.0).unwrap());
        assert!(!o.event(&waiting("a"), 100.0 + QUIET_S - 0.1).unwrap());
        // Another session is not held back.
        assert!(o.event(&waiting("b"), 101.0).unwrap());
        assert!(o.event(&waiting("a"), 100.0 + QUIET_S).unwrap());
        o.reap();
    }

    #[test]
    fn on_and_the_command_go_together_and_states_are_words() {
        assert!(On::new(vec![], vec![], false).unwrap().is_none());
        assert!(On::new(vec!["waiting".into()], vec![], false).is_err());
        assert!(On::new(vec![], vec!["true".into()], false).is_err());
        assert!(On::new(vec!["wait ing".into()], vec!["true".into()], false).is_err());
        assert!(On::new(vec!["$(x)".into()], vec!["true".into()], false).is_err());
    }

    #[test]
    fn the_environment_holds_what_list_would_print() {
        let mut r = row("f", "waiting");
        r.record.title = "build \u{1b}[31mred".into();
        r.record.host = "desk".into();
        let env = environment(&r, "update", "waiting", None);
        let get = |k: &str| env.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("PRESENCE_HOST"), Some("desk"));
        assert_eq!(get("PRESENCE_STATUS"), Some("waiting"));
        assert!(!get("PRESENCE_TITLE").unwrap().contains('\u{1b}'));
        assert_eq!(get("PRESENCE_REASON"), None);
    }
}
