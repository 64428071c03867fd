//! Discovery: the live sessions of the local agents that `[discover]
//! agents` names (Claude Code, Codex CLI, Hermes Agent, OpenCode), read
//! from the agents' own files, matched to their running processes and
//! published by the refresher as this device's records.
//!
//! The pieces, each in one place:
//!
//! - the types every reader shares: [`Found`] (a live session as an agent's
//!   files tell it), [`Proc`] (a process of this user), [`Context`] (what a
//!   reader may consult; readers never read the environment or the clock);
//! - `procs`: the scan of this user's processes (`/proc`, Linux only:
//!   elsewhere it finds none, so discovery publishes nothing);
//! - one reader per agent (`claude`, `codex`, `hermes`, `opencode`), listed
//!   in [`AGENTS_READ`]; `sqlite`, the one read-only, bounded way to read an
//!   agent's SQLite database (Hermes', OpenCode's);
//! - `tmux`: the endpoint of a process that runs in a tmux pane;
//! - [`refresh`]: the refresher's pass, which turns what the readers found
//!   into publishes and clears of records owned by the agents' processes,
//!   then refreshes the rest of this device's records.
//!
//! A session's record is owned by its agent's process (pid and start time in
//! the ledger, as `presence run` and the hooks do), so the refresh keeps it
//! live while the process runs and clears it when the process exits. Nothing
//! a reader finds is ever the user's prompt text: the readers read titles,
//! models and turn markers and skip every other field.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::config::AGENTS;
use crate::error::Result;
use crate::owner::{self, OwnerState};
use crate::record::Record;
use crate::registry::{DiscoverOutcome, PublishRequest, RefreshOutcome, Registry, secret_free};
use crate::store;

mod claude;
mod codex;
mod hermes;
mod opencode;
mod procs;
mod sqlite;
mod tmux;

/// The `source` of every record discovery publishes. A record of the same
/// session with any other source (a hook's) is not discovery's to touch.
pub(crate) const SOURCE: &str = "discover";

/// Whose turn it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Working,
    Waiting,
    Idle,
}

impl Status {
    /// The record's `status` word.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::Waiting => "waiting",
            Status::Idle => "idle",
        }
    }
}

/// A live session of a running agent process, as its files tell it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Found {
    /// One of AGENTS.
    pub agent: &'static str,
    /// The agent's own session id.
    pub session_id: String,
    /// The agent's process: the record's owner.
    pub pid: u32,
    pub status: Status,
    pub cwd: Option<PathBuf>,
    /// The agent's own generated title; never the user's prompt text.
    pub title: Option<String>,
    pub model: Option<String>,
    /// Unix seconds: when the agent says the session started.
    pub started_at: Option<f64>,
}

impl Found {
    /// A session with nothing known but its id and process, `Idle`.
    /// Build others with `Found { title: …, ..Found::new(agent, id, pid) }`
    /// ALWAYS (the framework may add fields).
    pub(crate) fn new(agent: &'static str, session_id: impl Into<String>, pid: u32) -> Found {
        Found {
            agent,
            session_id: session_id.into(),
            pid,
            status: Status::Idle,
            cwd: None,
            title: None,
            model: None,
            started_at: None,
        }
    }
}

/// A running process of this user, as /proc showed it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Proc {
    pub pid: u32,
    /// /proc/PID/comm.
    pub comm: String,
    /// /proc/PID/cmdline, lossily decoded, bounded.
    pub argv: Vec<String>,
    /// /proc/PID/cwd.
    pub cwd: Option<PathBuf>,
    /// Start time in clock ticks since boot (field 22 of /proc/PID/stat).
    pub start: u64,
    /// TMUX and TMUX_PANE from /proc/PID/environ.
    pub tmux: Option<String>,
    pub tmux_pane: Option<String>,
    /// The parent's pid (field 4 of /proc/PID/stat).
    pub ppid: u32,
    /// When it started, Unix seconds (`start` through the boot time).
    pub started_at: Option<f64>,
    /// The agents' directory variables ([`AGENT_VARS`]) as this process
    /// has them: an agent started with its own `CODEX_HOME` keeps its files
    /// there, whatever the refresher's environment says.
    pub env: HashMap<String, OsString>,
    /// The files it holds open whose names end in `.jsonl`, `.json`, `.db`
    /// or `.sqlite` (from /proc/PID/fd, bounded): the best evidence of which
    /// transcript or database is this process's.
    pub open_files: Vec<PathBuf>,
}

impl Proc {
    /// `name` as this process has it in its environment, if set and not empty.
    pub(crate) fn var(&self, name: &str) -> Option<&OsStr> {
        self.env
            .get(name)
            .map(|v| v.as_os_str())
            .filter(|v| !v.is_empty())
    }

    /// Whether this process runs the program `name`: its `comm`, the file
    /// name of `argv[0]`, or, when that is an interpreter (`node`, `bun`,
    /// `deno`, `python…`), the file name of the script it runs. The
    /// kernel's `comm` is the executable's file name (a versioned binary
    /// shows as `2.1.3`), so `argv[0]`, which holds the name the program was
    /// started by, counts as much.
    pub(crate) fn named(&self, name: &str) -> bool {
        let base = |s: &str| {
            Path::new(s)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        };
        let first = self.argv.first().and_then(|a| base(a));
        if self.comm == name || first.as_deref() == Some(name) {
            return true;
        }
        let interpreter = [Some(self.comm.as_str()), first.as_deref()]
            .into_iter()
            .flatten()
            .any(|n| {
                matches!(n, "node" | "nodejs" | "bun" | "deno")
                    || n.strip_prefix("python")
                        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
            });
        interpreter
            && self
                .argv
                .iter()
                .skip(1)
                .find(|a| !a.starts_with('-'))
                .and_then(|a| base(a))
                .is_some_and(|script| script == name)
    }
}

/// What a reader may consult. Readers never read the process environment or
/// the clock themselves: tests build a Context by hand.
#[derive(Debug, Clone, Default)]
pub(crate) struct Context {
    /// $HOME.
    pub home: PathBuf,
    /// The variables readers consult (CLAUDE_CONFIG_DIR, CODEX_HOME,
    /// HERMES_HOME, XDG_DATA_HOME).
    pub env: std::collections::HashMap<String, std::ffi::OsString>,
    /// This user's processes.
    pub procs: Vec<Proc>,
    /// Unix seconds.
    pub now: f64,
}

impl Context {
    pub(crate) fn var(&self, name: &str) -> Option<&std::ffi::OsStr> {
        self.env
            .get(name)
            .map(|v| v.as_os_str())
            .filter(|v| !v.is_empty())
    }

    /// An agent's directory for process `p`: `var` as the process has it,
    /// else as this context has it, else `default` under the home directory.
    pub(crate) fn agent_dir(&self, p: Option<&Proc>, var: &str, default: &str) -> PathBuf {
        p.and_then(|p| p.var(var))
            .or_else(|| self.var(var))
            .map(PathBuf::from)
            .filter(|d| d.is_absolute())
            .unwrap_or_else(|| self.home.join(default))
    }

    /// The process `pid`, if it is one of this user's that the scan kept.
    pub(crate) fn proc(&self, pid: u32) -> Option<&Proc> {
        self.procs.iter().find(|p| p.pid == pid)
    }

    /// The processes running the program `name` (see [`Proc::named`]).
    pub(crate) fn named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Proc> + 'a {
        self.procs.iter().filter(move |p| p.named(name))
    }

    /// This user's processes that run one of `agents`' programs, and the
    /// agents' variables of this environment, at `now`.
    fn of_system(home: &Path, agents: &[&str], now: f64) -> Context {
        let programs: Vec<&str> = AGENTS_READ
            .iter()
            .filter(|a| agents.contains(&a.name))
            .map(|a| a.program)
            .collect();
        Context {
            home: home.to_path_buf(),
            env: AGENT_VARS
                .iter()
                .filter_map(|v| Some((v.to_string(), std::env::var_os(v)?)))
                .collect(),
            procs: procs::scan(&|p: &Proc| programs.iter().any(|name| p.named(name))),
            now,
        }
    }
}

/// One agent's reader: the live sessions of that agent it can see. Never
/// panics, never blocks, returns nothing when the agent's files are absent;
/// each reader decides which `procs` are its agent's (by argv/comm) and
/// matches sessions to them.
pub(crate) type Reader = fn(&Context) -> Vec<Found>;

/// The variables that say where an agent keeps its files.
pub(crate) const AGENT_VARS: [&str; 5] = [
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "HERMES_HOME",
    "OPENCODE_DB",
    "XDG_DATA_HOME",
];

/// An agent discovery knows.
pub(crate) struct AgentRead {
    /// As `[discover] agents` spells it and as its records' `client`.
    pub name: &'static str,
    /// The program its processes run (see [`Proc::named`]): only those
    /// processes are looked at closely by the scan.
    pub program: &'static str,
    /// Its reader; `None` while this build has none.
    pub reader: Option<Reader>,
}

/// The reader table, in the order of [`AGENTS`] (a test checks).
pub(crate) const AGENTS_READ: [AgentRead; 4] = [
    AgentRead {
        name: "claude-code",
        program: "claude",
        reader: Some(claude::sessions),
    },
    AgentRead {
        name: "codex",
        program: "codex",
        reader: Some(codex::sessions),
    },
    AgentRead {
        name: "hermes",
        program: "hermes",
        reader: Some(hermes::sessions),
    },
    AgentRead {
        name: "opencode",
        program: "opencode",
        reader: Some(opencode::sessions),
    },
];

/// The live sessions of `agents` that `cx` shows: each reader's, kept only
/// when its process is one the scan saw, each session once (the first
/// reader and process to claim it).
fn find(cx: &Context, agents: &[&str]) -> Vec<Found> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for agent in AGENTS_READ.iter().filter(|a| agents.contains(&a.name)) {
        let Some(reader) = agent.reader else { continue };
        for f in reader(cx) {
            if f.agent == agent.name
                && cx.proc(f.pid).is_some()
                && seen.insert(f.session_id.clone())
            {
                out.push(f);
            }
        }
    }
    out
}

/// The request that publishes `f`, with `endpoint`: the whole record
/// (`replace`), owned by the agent's process.
fn request(f: &Found, endpoint: Option<String>) -> PublishRequest {
    let mut req = PublishRequest::new(f.session_id.clone());
    req.session_key = Some(f.session_id.clone());
    req.client = Some(f.agent.to_string());
    req.source = Some(SOURCE.to_string());
    req.status = Some(f.status.word().to_string());
    req.cwd = f.cwd.as_ref().map(|c| c.to_string_lossy().into_owned());
    req.title = f.title.clone().or_else(|| {
        Some(
            f.cwd
                .as_deref()?
                .file_name()?
                .to_string_lossy()
                .into_owned(),
        )
    });
    req.model = f.model.clone();
    req.endpoint = endpoint;
    req.owner_pid = Some(f.pid);
    req.replace = true;
    req.started_at = f.started_at;
    req
}

/// Whether `current`, this device's record of the session as it last wrote
/// it, already says what `req` would write, owned by `p`: then a rewrite
/// would change nothing but its times, which the refresh of the same pass
/// does.
fn unchanged(current: &Record, req: &PublishRequest, client: &str, p: &Proc) -> bool {
    let mut want = req.merged(None, client);
    if secret_free(&mut want, false).is_err() {
        return false;
    }
    current.pid == p.pid
        && current.owner_start == Some(p.start)
        && current.status == want.status
        && current.title == want.title
        && current.model == want.model
        && current.cwd == want.cwd
        && current.client == want.client
        && current.source == want.source
        && current.endpoint == want.endpoint
        && current.session_key == want.session_key
}

/// Whether a record's owner, as this device recorded it, still runs.
fn owner_runs(r: &Record) -> bool {
    r.owner_start
        .is_some_and(|start| owner::owner_state(r.pid, start) == OwnerState::Alive)
}

/// One refresher pass at `now` with discovery: the live sessions of the
/// profile's `[discover] agents` published (or rewritten where they
/// changed), the discovered records whose session is no longer found while
/// their process runs cleared, then [`Registry::refresh`] of this device's
/// records, minus those discovery just wrote (one write per record per
/// pass). With discovery off and no discovered record left, it is
/// `Registry::refresh` alone. [`RefreshOutcome::discover`] says what
/// discovery did.
pub fn refresh(registry: &Registry, any_label: bool, now: f64) -> Result<RefreshOutcome> {
    let (discovered, written) = match discover(registry, now)? {
        Some((outcome, written)) => (Some(outcome), written),
        None => (None, HashSet::new()),
    };
    let mut out = registry.refresh_except(any_label, &written, now)?;
    out.discover = discovered;
    Ok(out)
}

/// Discovery's part of a pass: what it did, and the files it wrote. `None`
/// when it is off and has no record of its own to clear.
fn discover(registry: &Registry, now: f64) -> Result<Option<(DiscoverOutcome, HashSet<String>)>> {
    let agents: Vec<&str> = registry.profile().discover.clone();
    let own = registry.own_records()?;
    if agents.is_empty() && !own.iter().any(discovered) {
        return Ok(None);
    }
    let cx = match agents.is_empty() {
        true => Context::default(),
        false => Context::of_system(&registry.local().home, &agents, now),
    };
    let (mut out, written) = apply(registry, &own, &cx, &|| find(&cx, &agents), now)?;
    out.agents = agents.iter().map(|a| a.to_string()).collect();
    Ok(Some((out, written)))
}

/// Whether `r` is a record discovery published.
fn discovered(r: &Record) -> bool {
    r.source == SOURCE && AGENTS.contains(&r.client.as_str())
}

/// Publishes what `find` finds (each process in `cx`) over `own`, this
/// device's records of the profile; clears those of `own` that discovery
/// published whose session it no longer finds while their process runs.
fn apply(
    registry: &Registry,
    own: &[Record],
    cx: &Context,
    find: &dyn Fn() -> Vec<Found>,
    now: f64,
) -> Result<(DiscoverOutcome, HashSet<String>)> {
    let mine: BTreeMap<String, &Record> = own
        .iter()
        .map(|r| (store::file_name(&r.instance_id, &r.session_id), r))
        .collect();
    let mut out = DiscoverOutcome::default();
    let mut written = HashSet::new();
    let found = find();
    out.found = found.len();
    let instance = match found.is_empty() {
        true => None,
        false => Some(registry.default_instance()?),
    };
    let mut panes = HashMap::new();
    let mut seen = HashSet::new();
    for f in &found {
        let (Some(p), Some(instance)) = (cx.proc(f.pid), instance.as_deref()) else {
            continue;
        };
        let file = store::file_name(instance, &f.session_id);
        seen.insert(file.clone());
        let endpoint = tmux::endpoint(p, registry.host(), &mut panes);
        let req = request(f, endpoint);
        match mine.get(&file) {
            // A hook's (or anyone's) live record of the session wins.
            Some(r) if r.source != SOURCE && (owner_runs(r) || r.expires_at > Some(now)) => {
                out.hooked += 1;
                continue;
            }
            Some(r) if r.source == SOURCE && unchanged(r, &req, &registry.profile().client, p) => {
                out.kept += 1;
                continue;
            }
            _ => {}
        }
        match registry.publish(&req, now) {
            Ok(published) => {
                for r in &published.redactions {
                    out.warnings.push(format!(
                        "{} session '{}': redacted a credential from {r}",
                        f.agent, f.session_id
                    ));
                }
                out.published.push(file.clone());
                written.insert(file);
            }
            Err(e) => out.warnings.push(format!(
                "cannot publish {} session '{}': {e}",
                f.agent, f.session_id
            )),
        }
    }
    // Discovered records whose session is gone while their process runs (a
    // new session in the same process, an agent no longer named). Those
    // whose process is gone are the refresh's to clear.
    let mut stale: Vec<(&String, &Record)> = mine
        .iter()
        .filter(|(file, r)| discovered(r) && !seen.contains(*file) && owner_runs(r))
        .map(|(file, r)| (file, *r))
        .collect();
    if !stale.is_empty() {
        // Read once more before ending anything: an agent rewriting its
        // state file between two reads is not the end of its session.
        let again: HashSet<String> = find().into_iter().map(|f| f.session_id).collect();
        stale.retain(|(_, r)| !again.contains(&r.session_id));
    }
    for (file, r) in stale {
        match registry.end_life(file, r, now) {
            Ok(Some(_)) => {
                out.cleared.push(file.clone());
                written.insert(file.clone());
            }
            Ok(None) => {}
            Err(e) => out.warnings.push(format!(
                "cannot clear {} session '{}': {e}",
                r.client, r.session_id
            )),
        }
    }
    Ok((out, written))
}

// Helpers the readers share.

/// A session id as an agent wrote it, if it is one: a non-empty string of
/// at most 128 characters, none of them a control character or whitespace.
pub(crate) fn session_id(v: &serde_json::Value) -> Option<String> {
    let s = v.as_str()?;
    let ok = !s.is_empty()
        && s.chars().count() <= 128
        && !s.chars().any(|c| c.is_control() || c.is_whitespace());
    ok.then(|| s.to_string())
}

/// Whether `id` may be part of a file name the reader looks for: letters,
/// digits, `-` and `_` only (an agent's uuid), so it never names another
/// directory.
pub(crate) fn file_safe(id: &str) -> bool {
    id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A display text (a title, a model name) as an agent wrote it: trimmed,
/// without control characters, at most `max` characters; `None` when
/// nothing is left.
pub(crate) fn text(v: &serde_json::Value, max: usize) -> Option<String> {
    let s: String = v.as_str()?.chars().filter(|c| !c.is_control()).collect();
    let s = s.trim();
    (!s.is_empty()).then(|| crate::text::prefix_chars(s, max).trim_end().to_string())
}

/// The complete lines of `span`, JSON-parsed, in order: the first line is
/// dropped when the span starts inside the file (a tail starts mid-line),
/// and the last when the span stops before the end of the file (a head
/// stops mid-line). A line that does not parse is skipped (an agent may be
/// writing it).
pub(crate) fn json_lines(span: &store::bounded::Span) -> Vec<serde_json::Value> {
    let mut lines: Vec<&[u8]> = span.bytes.split(|&b| b == b'\n').collect();
    if span.offset + (span.bytes.len() as u64) < span.size {
        lines.pop();
    }
    if span.offset > 0 && !lines.is_empty() {
        lines.remove(0);
    }
    lines
        .into_iter()
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .filter_map(|l| serde_json::from_slice(l).ok())
        .collect()
}

/// Unix seconds from a JSON number of milliseconds, if plausible (after
/// 2001, and not after `now` plus a day).
pub(crate) fn millis(v: &serde_json::Value, now: f64) -> Option<f64> {
    let s = v.as_f64()? / 1000.0;
    (s > 1e9 && s.is_finite() && s <= now + 86_400.0).then_some(s)
}

#[cfg(test)]
mod tests;
