//! `presence hook claude`: a Claude Code command hook.
//!
//! Claude Code runs a hook's command for each event its `hooks` settings
//! name, with one JSON object on stdin: `hook_event_name`, `session_id`,
//! `cwd`, `transcript_path` and the event's own fields. Each event becomes a
//! publish, a status change or a clear of the session it names, owned by the
//! Claude Code process (found above the shell that ran the command):
//!
//! | event | record |
//! |---|---|
//! | `SessionStart` | published, `idle` (the model, if Claude gives it) |
//! | `UserPromptSubmit`, `PreToolUse`, `PostToolUse` | `working` |
//! | `Stop`, `Notification`, `PermissionRequest` | `waiting` |
//! | `SessionEnd` | cleared |
//!
//! The record's `client` is `claude-code`, its `session_id` Claude's own, its
//! title the name of the working directory. The prompt, the tool input and
//! every other field are never read (they are not even parsed).
//!
//! It must never get in Claude's way. It prints nothing on stdout (Claude
//! reads a hook's stdout as a decision or as context for the model), and it
//! never exits 2: for `UserPromptSubmit`, `Stop` and `PermissionRequest`
//! that would block the prompt, the stop or the tool. Input it cannot read
//! and events it does not know end in exit 0, the former with a line on
//! stderr; any failure (a record that cannot be written, a configuration
//! error) exits 1, which Claude shows as a non-blocking hook error.

use std::io::{BufReader, Read as _};

use anyhow::Context as _;
use presence::PublishRequest;
use serde::Deserialize;
use serde_json::Value;

use super::{MAX_EVENT_BYTES, text};
use crate::cli::{Ctx, Exit};

/// The client name stamped into the records this hook writes (the name
/// discovery gives Claude Code's sessions too, so that the two are one
/// record).
pub(crate) const CLIENT: &str = "claude-code";

/// The part of Claude Code's hook input this command reads.
#[derive(Debug, Deserialize)]
struct Event {
    hook_event_name: String,
    #[serde(default)]
    session_id: Value,
    #[serde(default)]
    cwd: Value,
    /// `SessionStart` only (and not in every version).
    #[serde(default)]
    model: Value,
}

/// What one event does.
#[derive(Debug)]
enum Action {
    Publish(Box<PublishRequest>),
    Clear(String),
}

impl Action {
    /// The action for `e`, or none for events that change nothing or name
    /// no session.
    fn of(e: &Event) -> Option<Action> {
        let session = text(&e.session_id)?;
        let status = match e.hook_event_name.as_str() {
            "SessionStart" => "idle",
            "UserPromptSubmit" | "PreToolUse" | "PostToolUse" => "working",
            "Stop" | "Notification" | "PermissionRequest" => "waiting",
            "SessionEnd" => return Some(Action::Clear(session)),
            _ => return None,
        };
        let mut req = PublishRequest::new(session.clone());
        req.session_key = Some(session);
        req.status = Some(status.into());
        req.client = Some(CLIENT.into());
        req.cwd = text(&e.cwd);
        req.title = req
            .cwd
            .as_deref()
            .and_then(|cwd| std::path::Path::new(cwd).file_name())
            .map(|name| name.to_string_lossy().into_owned());
        req.model = text(&e.model);
        // The hook's record, not discovery's: a patch over the record
        // discovery published must not keep its `source`, or discovery
        // would take the session back (a hook's record wins).
        req.unset.insert(presence::Field::Source);
        Some(Action::Publish(Box::new(req)))
    }
}

/// Runs the hook: whatever happens, never exit 2 (see the module docs).
pub(super) fn run(ctx: &Ctx) -> anyhow::Result<Exit> {
    match hook(ctx) {
        Ok(()) => Ok(Exit::Ok),
        Err(e) => {
            crate::cli::output::notice(format_args!("hook claude: {e:#}"));
            Ok(Exit::Failure)
        }
    }
}

fn hook(ctx: &Ctx) -> anyhow::Result<()> {
    let stdin = std::io::stdin().lock();
    if std::io::IsTerminal::is_terminal(&stdin) {
        anyhow::bail!(
            "`presence hook claude` reads a Claude Code hook event on stdin; Claude Code runs \
             it from the `hooks` block of its settings.json (see docs/integrations.md)"
        );
    }
    let event: Event = match serde_json::from_reader(BufReader::new(stdin.take(MAX_EVENT_BYTES))) {
        Ok(e) => e,
        Err(e) => {
            crate::cli::output::notice(format_args!(
                "hook claude: ignored stdin, which is not a Claude Code hook event ({e})"
            ));
            return Ok(());
        }
    };
    let Some(action) = Action::of(&event) else {
        return Ok(());
    };
    let registry = ctx.registry()?;
    let now = presence::unix_now();
    match action {
        Action::Publish(mut req) => {
            let Some(owner) = claude_process() else {
                crate::cli::output::notice(format_args!(
                    "hook claude: ignored {}: Claude Code has exited",
                    event.hook_event_name
                ));
                return Ok(());
            };
            req.owner_pid = Some(owner);
            req.default_endpoint = crate::cli::open::here_endpoint(registry.host());
            let published = registry.publish(&req, now).with_context(|| {
                format!(
                    "cannot publish Claude Code session '{}' in {}",
                    crate::cli::output::id_in_error(&req.session_id),
                    registry.profile().dir.display()
                )
            })?;
            for r in &published.redactions {
                ctx.warn(format_args!("redacted a credential from {r}"));
            }
            for w in &published.warnings {
                ctx.warn(w);
            }
        }
        Action::Clear(session) => {
            registry.clear(Some(&session), None, now).with_context(|| {
                format!(
                    "cannot clear Claude Code session '{}' in {}",
                    crate::cli::output::id_in_error(&session),
                    registry.profile().dir.display()
                )
            })?;
        }
    }
    Ok(())
}

/// The shells Claude Code may run a hook's command through.
const SHELLS: [&str; 6] = ["sh", "bash", "dash", "zsh", "fish", "ksh"];

/// The Claude Code process that ran this hook: the parent, or — when the
/// parent is the shell Claude ran the command with — the shell's parent.
/// `None` when that is init (Claude is gone).
fn claude_process() -> Option<u32> {
    let mut pid = std::os::unix::process::parent_id();
    // A shell that did not exec us, possibly inside another (`sh -c "bash -c …"`).
    for _ in 0..4 {
        match process(pid) {
            Some((name, parent)) if SHELLS.contains(&name.as_str()) && parent > 1 => pid = parent,
            _ => break,
        }
    }
    (pid > 1).then_some(pid)
}

/// A process's name and parent, from `/proc/PID/stat` (Linux). Elsewhere
/// `None`: the parent is taken as it is.
fn process(pid: u32) -> Option<(String, u32)> {
    let mut stat = String::new();
    std::fs::File::open(format!("/proc/{pid}/stat"))
        .ok()?
        .take(4096)
        .read_to_string(&mut stat)
        .ok()?;
    // `PID (NAME) STATE PPID …`; NAME may hold spaces and parentheses.
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?.to_owned();
    let parent = stat
        .get(close + 1..)?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some((name, parent))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn action(json: &str) -> Option<Action> {
        Action::of(&serde_json::from_str(json).unwrap())
    }

    fn status(event: &str) -> String {
        match action(&format!(
            r#"{{"hook_event_name":"{event}","session_id":"s","cwd":"/w/app"}}"#
        )) {
            Some(Action::Publish(req)) => req.status.unwrap(),
            other => panic!("{event}: {other:?}"),
        }
    }

    #[test]
    fn each_event_sets_whose_turn_it_is() {
        assert_eq!(status("SessionStart"), "idle");
        for e in ["UserPromptSubmit", "PreToolUse", "PostToolUse"] {
            assert_eq!(status(e), "working", "{e}");
        }
        for e in ["Stop", "Notification", "PermissionRequest"] {
            assert_eq!(status(e), "waiting", "{e}");
        }
        assert!(matches!(
            action(r#"{"hook_event_name":"SessionEnd","session_id":"s"}"#),
            Some(Action::Clear(s)) if s == "s"
        ));
    }

    #[test]
    fn a_publish_carries_the_session_and_never_the_prompt() {
        let json = r#"{"hook_event_name":"UserPromptSubmit","session_id":"abc",
            "transcript_path":"/t.jsonl","cwd":"/home/u/src/parser","permission_mode":"default",
            "prompt":"please use sk-live-0123456789abcdef and the secret word ostrich"}"#;
        let Some(Action::Publish(req)) = action(json) else {
            panic!("not a publish")
        };
        assert_eq!(req.session_id, "abc");
        assert_eq!(req.client.as_deref(), Some("claude-code"));
        assert_eq!(req.cwd.as_deref(), Some("/home/u/src/parser"));
        assert_eq!(req.title.as_deref(), Some("parser"));
        assert!(req.unset.contains(&presence::Field::Source));
        assert!(!format!("{req:?}").contains("ostrich"));
    }

    #[test]
    fn events_of_no_interest_or_without_a_session_do_nothing() {
        for json in [
            r#"{"hook_event_name":"PreCompact","session_id":"s"}"#,
            r#"{"hook_event_name":"Stop","session_id":""}"#,
            r#"{"hook_event_name":"Stop","session_id":null}"#,
            r#"{"hook_event_name":"Stop","session_id":7}"#,
            r#"{"hook_event_name":"Stop"}"#,
        ] {
            assert!(action(json).is_none(), "{json}");
        }
    }

    #[test]
    fn the_stat_line_is_read_whatever_the_name_holds() {
        let me = std::process::id();
        let (name, parent) = process(me).unwrap();
        assert!(!name.is_empty());
        assert_eq!(parent, std::os::unix::process::parent_id());
    }
}
