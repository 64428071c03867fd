//! `presence hook hermes` and `presence hook claude`: agent hooks.
//!
//! `presence hook hermes`: a Hermes Agent shell hook. Hermes runs the
//! command (without a shell) for each event its `hooks:` block names, with
//! one JSON object on stdin: `hook_event_name`, `session_id`, `cwd` (Hermes'
//! own working directory) and `extra` (the event's other arguments). This
//! command turns each event into a publish or a clear of the session it
//! names, owned by the Hermes process that ran it (our parent).
//!
//! It prints nothing on stdout: Hermes reads a hook's stdout as a decision
//! (a block, injected context). Input it cannot read and events it does not
//! know end in exit 0, the former with one line on stderr, so a hook never
//! gets in the agent's way; a record that cannot be written exits 1, which
//! Hermes logs with the stderr line and goes on.
//!
//! `presence hook claude`: a Claude Code command hook (see [`claude`]).

use std::collections::BTreeMap;
use std::io::{BufReader, Read as _};

use anyhow::Context as _;
use clap::{Args, Subcommand};
use presence::{PublishRequest, Registry};
use serde::Deserialize;
use serde_json::Value;

use super::{Ctx, Exit, UsageError};

/// The most stdin that is read: `pre_llm_call` carries the whole
/// conversation, but nothing Hermes sends comes near this.
const MAX_EVENT_BYTES: u64 = 256 << 20;

/// The client name stamped into the records this hook writes.
const CLIENT: &str = "hermes";

/// The metadata key naming a subagent's parent session.
const PARENT: &str = "parent_session";

#[derive(Debug, Args)]
pub struct HookArgs {
    #[command(subcommand)]
    pub agent: Agent,
}

#[derive(Debug, Subcommand)]
pub enum Agent {
    /// Hermes Agent's shell hook: reads the event JSON on stdin, publishes or
    /// clears the session it names; prints nothing on stdout
    #[command(after_help = crate::cli::help::HOOK_HERMES)]
    Hermes,
    /// Claude Code's command hook: reads the event JSON on stdin, publishes,
    /// updates or clears the session it names; prints nothing on stdout and
    /// never exits 2 (which would block Claude)
    #[command(after_help = crate::cli::help::HOOK_CLAUDE)]
    Claude,
}

/// The part of Hermes' hook payload this command reads; the rest (the
/// conversation, tool input) is skipped unread.
#[derive(Debug, Deserialize)]
struct Event {
    hook_event_name: String,
    #[serde(default)]
    session_id: Value,
    #[serde(default)]
    cwd: Value,
    #[serde(default)]
    extra: Extra,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Extra {
    model: Value,
    platform: Value,
    interrupted: Value,
    old_session_id: Value,
    child_session_id: Value,
    child_role: Value,
}

/// A non-empty string, or nothing: Hermes passes `None` (null) for values
/// it does not have.
fn text(v: &Value) -> Option<String> {
    v.as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

pub fn run(ctx: &Ctx, args: HookArgs) -> anyhow::Result<Exit> {
    match args.agent {
        Agent::Hermes => hermes(ctx),
        Agent::Claude => claude::run(ctx),
    }
}

fn hermes(ctx: &Ctx) -> anyhow::Result<Exit> {
    let stdin = std::io::stdin().lock();
    if std::io::IsTerminal::is_terminal(&stdin) {
        // Someone typed it: waiting for an event that never comes helps no one.
        return Err(UsageError(
            concat!(
                "`presence hook hermes` reads a Hermes hook event on stdin; Hermes runs it \
                 from the `hooks:` block of its config.yaml (see `man presence-hook-hermes`, or ",
                env!("CARGO_PKG_REPOSITORY"),
                "/blob/main/docs/integrations.md#hermes-agent)"
            )
            .into(),
        )
        .into());
    }
    let event: Event = match serde_json::from_reader(BufReader::new(stdin.take(MAX_EVENT_BYTES))) {
        Ok(e) => e,
        Err(e) => {
            super::output::notice(format_args!(
                "hook hermes: ignored stdin, which is not a Hermes hook event ({e})"
            ));
            return Ok(Exit::Ok);
        }
    };
    let Some(action) = Action::of(&event) else {
        return Ok(Exit::Ok);
    };
    // Hermes starts the command itself (shell=False), so our parent is the
    // Hermes process whose session this is. Init as a parent means Hermes is
    // gone already: nothing of it is live.
    let owner = std::os::unix::process::parent_id();
    if owner <= 1 {
        super::output::notice(format_args!(
            "hook hermes: ignored {}: Hermes has exited",
            event.hook_event_name
        ));
        return Ok(Exit::Ok);
    }
    let registry = ctx.registry()?;
    let now = presence::unix_now();
    let hook = Hook {
        ctx,
        registry: &registry,
        owner,
        now,
    };
    match action {
        Action::Publish(req) => hook.publish(*req)?,
        Action::Clear(session) => hook.clear(&session)?,
        Action::Reset { old, new } => {
            match old {
                Some(old) => hook.clear(&old)?,
                None => hook.clear_previous(&new.session_id)?,
            }
            hook.publish(*new)?;
        }
    }
    Ok(Exit::Ok)
}

mod claude;

/// What one event does.
enum Action {
    Publish(Box<PublishRequest>),
    Clear(String),
    /// Clear `old` (else the previous session of the same Hermes process),
    /// then publish the new session.
    Reset {
        old: Option<String>,
        new: Box<PublishRequest>,
    },
}

impl Action {
    /// The action for `event`, or none for events that change nothing (or
    /// name no session).
    fn of(e: &Event) -> Option<Action> {
        let session = text(&e.session_id);
        let x = &e.extra;
        // Every event that concerns a session publishes what it knows of it,
        // so a session Hermes resumed (no `on_session_start`) appears at its
        // first turn.
        let request = |id: String, status: &str| {
            let mut req = PublishRequest::new(id.clone());
            req.session_key = Some(id);
            req.status = Some(status.into());
            req.client = Some(CLIENT.into());
            req.source = text(&x.platform);
            if req.source.is_none() {
                // Not discovery's record any more (see `hook claude`).
                req.unset.insert(presence::Field::Source);
            }
            req.model = text(&x.model);
            req.cwd = text(&e.cwd);
            Box::new(req)
        };
        match e.hook_event_name.as_str() {
            "on_session_start" => Some(Action::Publish(request(session?, "idle"))),
            "pre_llm_call" => Some(Action::Publish(request(session?, "working"))),
            "on_session_end" => {
                let status = match x.interrupted.as_bool() {
                    Some(true) => "interrupted",
                    _ => "waiting",
                };
                Some(Action::Publish(request(session?, status)))
            }
            "on_session_finalize" => Some(Action::Clear(session?)),
            "on_session_reset" => Some(Action::Reset {
                old: text(&x.old_session_id).filter(|old| Some(old) != session.as_ref()),
                new: request(session?, "idle"),
            }),
            "subagent_start" => {
                let mut req = request(text(&x.child_session_id)?, "working");
                let mut meta = BTreeMap::new();
                meta.insert(PARENT.to_string(), session?);
                if let Some(role) = text(&x.child_role) {
                    meta.insert("role".to_string(), role);
                }
                req.metadata = meta;
                Some(Action::Publish(req))
            }
            "subagent_stop" => Some(Action::Clear(text(&x.child_session_id)?)),
            _ => None,
        }
    }
}

struct Hook<'a> {
    ctx: &'a Ctx,
    registry: &'a Registry,
    owner: u32,
    now: f64,
}

impl Hook<'_> {
    fn publish(&self, mut req: PublishRequest) -> anyhow::Result<()> {
        req.owner_pid = Some(self.owner);
        let published = self.registry.publish(&req, self.now).with_context(|| {
            format!(
                "cannot publish Hermes session '{}' in {}",
                super::output::id_in_error(&req.session_id),
                self.registry.profile().dir.display()
            )
        })?;
        for r in &published.redactions {
            self.ctx
                .warn(format_args!("redacted a credential from {r}"));
        }
        for w in &published.warnings {
            self.ctx.warn(w);
        }
        Ok(())
    }

    fn clear(&self, session: &str) -> anyhow::Result<()> {
        self.registry
            .clear(Some(session), None, self.now)
            .with_context(|| {
                format!(
                    "cannot clear Hermes session '{}' in {}",
                    super::output::id_in_error(session),
                    self.registry.profile().dir.display()
                )
            })?;
        Ok(())
    }

    /// The CLI and the TUI pass only the new session to `on_session_reset`:
    /// the session it replaces is the newest one this device published for
    /// the same Hermes process, other than the new one and its subagents.
    /// Found in this device's ledger, not by listing the directory: Hermes
    /// waits for the hook, and a synced directory may hold many thousands of
    /// other devices' records.
    fn clear_previous(&self, new: &str) -> anyhow::Result<()> {
        let own = self
            .registry
            .own_records()
            .context("cannot read this device's records to find the one Hermes reset")?;
        if let Some(session) = previous(&own, self.owner, new) {
            self.clear(session)?;
        }
        Ok(())
    }
}

/// Of this device's records, the session `on_session_reset` replaces: the
/// newest (by `started_at`) Hermes session of process `owner` other than
/// `new` and the subagents.
fn previous<'a>(own: &'a [presence::Record], owner: u32, new: &str) -> Option<&'a str> {
    own.iter()
        .filter(|r| {
            r.client == CLIENT
                && r.pid == owner
                && r.session_id != new
                && !r.metadata.contains_key(PARENT)
        })
        .max_by(|a, b| {
            let t = |r: &presence::Record| r.started_at.unwrap_or(f64::NEG_INFINITY);
            t(a).total_cmp(&t(b))
        })
        .map(|r| r.session_id.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(json: &str) -> Event {
        serde_json::from_str(json).unwrap()
    }

    fn publish(json: &str) -> PublishRequest {
        match Action::of(&event(json)) {
            Some(Action::Publish(req)) => *req,
            _ => panic!("not a publish: {json}"),
        }
    }

    #[test]
    fn session_start_publishes_what_hermes_says() {
        let req = publish(
            r#"{"hook_event_name":"on_session_start","tool_name":null,"tool_input":null,
                "session_id":"s1","cwd":"/w","extra":{"model":"m","platform":"cli",
                "telemetry_schema_version":1}}"#,
        );
        assert_eq!(req.session_id, "s1");
        assert_eq!(req.session_key.as_deref(), Some("s1"));
        assert_eq!(req.status.as_deref(), Some("idle"));
        assert_eq!(req.client.as_deref(), Some("hermes"));
        assert_eq!(req.source.as_deref(), Some("cli"));
        assert_eq!(req.model.as_deref(), Some("m"));
        assert_eq!(req.cwd.as_deref(), Some("/w"));
    }

    #[test]
    fn turn_events_set_the_status() {
        let status = |name: &str, extra: &str| {
            publish(&format!(
                r#"{{"hook_event_name":"{name}","session_id":"s","extra":{extra}}}"#
            ))
            .status
            .unwrap()
        };
        assert_eq!(status("pre_llm_call", "{}"), "working");
        assert_eq!(status("on_session_end", r#"{"completed":true}"#), "waiting");
        assert_eq!(
            status("on_session_end", r#"{"interrupted":true}"#),
            "interrupted"
        );
        assert_eq!(
            status("on_session_end", r#"{"interrupted":null}"#),
            "waiting"
        );
    }

    #[test]
    fn nulls_and_wrong_types_count_as_absent() {
        let req = publish(
            r#"{"hook_event_name":"pre_llm_call","session_id":"s","cwd":7,
                "extra":{"model":null,"platform":["x"]}}"#,
        );
        assert_eq!((req.model, req.source, req.cwd), (None, None, None));
    }

    #[test]
    fn subagents_are_their_own_sessions_with_the_parent_in_metadata() {
        let req = publish(
            r#"{"hook_event_name":"subagent_start","session_id":"p",
                "extra":{"child_session_id":"c","child_role":"leaf"}}"#,
        );
        assert_eq!(req.session_id, "c");
        assert_eq!(
            req.metadata.get("parent_session").map(String::as_str),
            Some("p")
        );
        assert_eq!(req.metadata.get("role").map(String::as_str), Some("leaf"));
        match Action::of(&event(
            r#"{"hook_event_name":"subagent_stop","session_id":"p","extra":{"child_session_id":"c"}}"#,
        )) {
            Some(Action::Clear(s)) => assert_eq!(s, "c"),
            _ => panic!("subagent_stop must clear the child"),
        }
    }

    #[test]
    fn reset_names_the_old_session_when_the_gateway_gives_it() {
        let old = |extra: &str| match Action::of(&event(&format!(
            r#"{{"hook_event_name":"on_session_reset","session_id":"new","extra":{extra}}}"#
        ))) {
            Some(Action::Reset { old, new }) => {
                assert_eq!(new.session_id, "new");
                old
            }
            _ => panic!("not a reset"),
        };
        assert_eq!(old(r#"{"old_session_id":"old"}"#).as_deref(), Some("old"));
        assert_eq!(old("{}"), None);
        assert_eq!(old(r#"{"old_session_id":"new"}"#), None);
    }

    #[test]
    fn reset_replaces_the_newest_session_of_the_same_process() {
        let rec = |id: &str, client: &str, pid: u32, started: f64, parent: bool| {
            let mut r = presence::Record::new(id);
            r.client = client.into();
            r.pid = pid;
            r.started_at = Some(started);
            if parent {
                r.metadata.insert(PARENT.into(), "p".into());
            }
            r
        };
        let own = [
            rec("old", "hermes", 7, 1.0, false),
            rec("newest", "hermes", 7, 3.0, false),
            rec("sub", "hermes", 7, 9.0, true),
            rec("other-process", "hermes", 8, 9.0, false),
            rec("other-client", "terminal", 7, 9.0, false),
            rec("new", "hermes", 7, 10.0, false),
        ];
        assert_eq!(previous(&own, 7, "new"), Some("newest"));
        assert_eq!(previous(&own, 8, "new"), Some("other-process"));
        assert_eq!(previous(&own, 9, "new"), None);
        assert_eq!(previous(&own[..1], 7, "old"), None);
    }

    #[test]
    fn events_without_a_session_or_of_no_interest_do_nothing() {
        for json in [
            r#"{"hook_event_name":"pre_tool_call","session_id":"s","extra":{}}"#,
            r#"{"hook_event_name":"on_session_finalize","session_id":null,"extra":{}}"#,
            r#"{"hook_event_name":"on_session_start","session_id":"","extra":{}}"#,
            r#"{"hook_event_name":"subagent_stop","session_id":"p","extra":{}}"#,
            r#"{"hook_event_name":"made_up"}"#,
        ] {
            assert!(Action::of(&event(json)).is_none(), "{json}");
        }
    }
}
