//! Discovery of local agent sessions: the types every reader shares.
//!
//! STUB: this file holds only the shared types, so that the Hermes Agent and
//! OpenCode readers compile and their tests run. The framework (the /proc
//! scan, the reader table, the tmux endpoint, publishing) replaces it; each
//! `allow(dead_code)` below is the stub's, for items only the framework uses.

use std::path::PathBuf;

#[allow(dead_code)] // The stub's: the framework's reader table calls it.
mod hermes;
#[allow(dead_code)] // The stub's: the framework's reader table calls it.
mod opencode;
#[allow(dead_code)] // The stub's: used by the readers above.
mod sqlite;

/// The agent names, as `[discover] agents` spells them and as the records' `client`.
#[allow(dead_code)] // The stub's.
pub(crate) const AGENTS: [&str; 4] = ["claude-code", "codex", "hermes", "opencode"];

/// Whose turn it is.
#[allow(dead_code)] // The stub's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Working,
    Waiting,
    Idle,
}

#[allow(dead_code)] // The stub's.
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
#[allow(dead_code)] // The stub's.
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

#[allow(dead_code)] // The stub's.
impl Found {
    /// A session with nothing known but its id and process, `Idle`.
    /// Build others with `Found { title: …, ..Found::new(agent, id, pid) }` ALWAYS (the framework
    /// may add fields).
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
#[allow(dead_code)] // The stub's.
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
}

/// What a reader may consult. Readers never read the process environment or the clock
/// themselves: tests build a Context by hand.
#[allow(dead_code)] // The stub's.
#[derive(Debug, Clone, Default)]
pub(crate) struct Context {
    /// $HOME.
    pub home: PathBuf,
    /// The variables readers consult (CLAUDE_CONFIG_DIR, CODEX_HOME, HERMES_HOME, XDG_DATA_HOME).
    pub env: std::collections::HashMap<String, std::ffi::OsString>,
    /// This user's processes.
    pub procs: Vec<Proc>,
    /// Unix seconds.
    pub now: f64,
}

#[allow(dead_code)] // The stub's.
impl Context {
    pub(crate) fn var(&self, name: &str) -> Option<&std::ffi::OsStr> {
        self.env
            .get(name)
            .map(|v| v.as_os_str())
            .filter(|v| !v.is_empty())
    }
}

/// One agent's reader: the live sessions of that agent it can see. Never panics, never blocks,
/// returns nothing when the agent's files are absent; each reader decides which `procs` are its
/// agent's (by argv/comm) and matches sessions to them.
#[allow(dead_code)] // The stub's.
pub(crate) type Reader = fn(&Context) -> Vec<Found>;
