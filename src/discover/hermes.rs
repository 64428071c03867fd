//! Hermes Agent: the live sessions in its `state.db`.
//!
//! # What is read
//!
//! `$HERMES_HOME/state.db` (an absolute `HERMES_HOME`; else
//! `~/.hermes/state.db`), the SQLite database that the released package's
//! `hermes_state` module (`SessionDB`, schema version 22 in hermes-agent
//! 0.19.0) keeps, through [`super::sqlite`]: read-only, bounded, never
//! blocking. Nothing is opened unless a Hermes process is running.
//!
//! Each Hermes process is read from its own profile's `state.db`, found as
//! Hermes finds it: the `state.db` the process holds open, when it does
//! (the best evidence: Hermes with `setproctitle` installed rewrites its
//! command line); else the profile its command line names (`-p NAME`,
//! `--profile NAME`, `--profile=NAME`; `default` is the root's own), as
//! `<root>/profiles/NAME/state.db`; else its `HERMES_HOME` (its own
//! environment's, else this one's) when that is a profile's directory
//! (`…/profiles/NAME`); else the sticky profile (`active_profile` in the
//! root, as it is at the pass, not when Hermes started); else
//! `HERMES_HOME` itself. The root is `~/.hermes`, or a `HERMES_HOME`
//! outside it (its grandparent when that is a profile's directory). A name
//! Hermes would refuse (not `[a-z0-9][a-z0-9_-]{0,63}`) names no profile.
//! Processes are grouped by the database file they come to (the same file
//! by any path is read once, and a session is published once); at most
//! [`MAX_DBS`] databases are read in one pass, and none is opened once the
//! pass has spent one database's time budget.
//!
//! Columns used, from table `sessions`: `id`, `source`, `cwd` (set only for
//! local CLI sessions, to the process's working directory when the session
//! row is created), `parent_session_id`, `model_config` (only whether it
//! carries `_delegate_from`, Hermes' mark of a subagent's session), `model`,
//! `title`, `started_at`, `ended_at` (set by `end_session`, and cleared by
//! `reopen_session` on a resume), `archived`. From table `messages`: `role`,
//! `finish_reason`, whether `tool_calls` is set, `timestamp`, `active`. A
//! column a database lacks reads as NULL. Message `content`, `reasoning`,
//! `api_content` and the system prompt are never read.
//!
//! A session is live when `ended_at` is NULL and it is not archived. Its
//! last activity is its newest message's `timestamp`, else `started_at`
//! (as Hermes' own session list computes it). A subagent's session
//! (`_delegate_from`) is never published on its own.
//!
//! # Which process
//!
//! A Hermes process is one whose `comm` is `hermes` or `hermes-agent`
//! (Hermes names its process `hermes` with `prctl`), or whose argv runs a
//! program of that name (directly or as `python … hermes`), and whose argv
//! has no `gateway` word: the gateway's sessions (Telegram, Discord, …) have
//! no working directory to match, and its own hooks publish them.
//!
//! A session's directory is its `cwd`, or, for a session Hermes continued
//! from another (a compression continuation or a `/branch`, which Hermes
//! creates without a `cwd`), the nearest ancestor's through
//! `parent_session_id`. Sessions with a directory go to processes by the
//! rule of [`super::sqlite::pair`]: same working directory, active since
//! the process started, the process that was running when it began, one
//! session per process (the most recently active). Then a CLI session
//! without any directory (what `/new` creates) goes to a still unmatched
//! Hermes process only when exactly one such process was already running
//! when the session began; otherwise it is ambiguous and skipped.
//!
//! These are heuristics. A resumed session (`--resume`, `-c`, `/resume`)
//! is not claimed until it records a new message, since its last activity
//! precedes the process. A session whose process died without ending it
//! is claimed again by a later Hermes process in the same directory only
//! if it is active after that process started, which a dead process's
//! session is not. Two Hermes processes in one directory are told apart
//! only by when they started.
//!
//! # Status and title
//!
//! The newest active message (by `timestamp`, then row id) says whose turn
//! it is: none, `idle`; `user` or `tool`, `working` (Hermes writes the
//! user's message before its first model call, and tool results as they
//! come); `assistant` with tool calls, or with a `finish_reason` that makes
//! Hermes go on (`tool_calls`, `incomplete`, `verification_required`,
//! `verify_hook_continue`, `kanban_terminal_required`), `working`; any
//! other `assistant` message ends the turn: `waiting`. A turn interrupted
//! before Hermes wrote a reply reads as `working` until the next message.
//!
//! The title is the session's `title` (the one Hermes generates after the
//! first exchange, or the user's `/title`), else the name of the session's
//! directory. The model is the session's `model`; `started_at` its
//! `started_at`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::sqlite::{self, Candidate, Db, DbError, START_SLACK};
use super::{Context, Found, Proc, Status, procs};

/// The agent's name, as `[discover] agents` spells it.
const AGENT: &str = "hermes";

/// The names a Hermes process goes by.
const PROGRAMS: [&str; 2] = ["hermes", "hermes-agent"];

/// The most live sessions considered, newest first.
const MAX_SESSIONS: usize = 200;

/// The most Hermes databases (profiles) read in one pass.
const MAX_DBS: usize = 16;

/// The largest `active_profile` file read (a profile name and a newline).
const MAX_PROFILE_FILE: usize = 256;

/// How far up `parent_session_id` a directory is looked for.
const MAX_HOPS: usize = 8;

/// The `finish_reason`s after which Hermes goes on with the same turn.
const GOES_ON: [&str; 5] = [
    "tool_calls",
    "incomplete",
    "verification_required",
    "verify_hook_continue",
    "kanban_terminal_required",
];

/// The live Hermes sessions of running Hermes processes.
pub(super) fn sessions(cx: &Context) -> Vec<Found> {
    let procs: Vec<&Proc> = cx.procs.iter().filter(|p| is_hermes(p)).collect();
    if procs.is_empty() {
        return Vec::new();
    }
    // Each database with the processes that keep it, in the order met; one
    // file reached by two paths (a held-open one is resolved, a computed
    // one as spelt) is one database.
    let mut dbs: Vec<(DbKey, PathBuf, Vec<&Proc>)> = Vec::new();
    for p in procs {
        let Some(db) = db_of(cx, p) else {
            continue;
        };
        let key = db_key(&db);
        match dbs.iter().position(|(k, _, _)| *k == key) {
            Some(i) => dbs[i].2.push(p),
            None if dbs.len() < MAX_DBS => dbs.push((key, db, vec![p])),
            None => {}
        }
    }
    let boot = procs::boot_time();
    let began = std::time::Instant::now();
    let mut out: Vec<Found> = Vec::new();
    for (_, db, of) in dbs {
        // Each read is bounded by the budget; the pass stops opening more
        // once it has spent one.
        if began.elapsed() >= sqlite::BUDGET {
            break;
        }
        for f in read(&db, &of, boot).unwrap_or_default() {
            if !out.iter().any(|o| o.session_id == f.session_id) {
                out.push(f);
            }
        }
    }
    out.sort_by_key(|f| f.pid);
    out
}

/// What tells one database file from another: its device and inode when
/// it is there, else its path.
#[derive(PartialEq)]
enum DbKey {
    File(u64, u64),
    Path(PathBuf),
}

fn db_key(db: &Path) -> DbKey {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata(db) {
        Ok(m) => DbKey::File(m.dev(), m.ino()),
        Err(_) => DbKey::Path(db.to_path_buf()),
    }
}

/// The `state.db` of the Hermes process `p` (see the module docs).
fn db_of(cx: &Context, p: &Proc) -> Option<PathBuf> {
    if let Some(open) = p
        .open_files
        .iter()
        .find(|f| f.file_name().is_some_and(|n| n == "state.db"))
    {
        return Some(open.clone());
    }
    let native = cx.home.join(".hermes");
    let home = match p.var("HERMES_HOME").or_else(|| cx.var("HERMES_HOME")) {
        Some(h) => PathBuf::from(h),
        None => native.clone(),
    };
    if !home.is_absolute() {
        return None;
    }
    let is_profile = home.parent().and_then(Path::file_name) == Some("profiles".as_ref());
    // The root profiles live under: ~/.hermes for a home inside it, else
    // the home itself, or its grandparent when it is a profile.
    let root = if home.starts_with(&native) {
        native
    } else if is_profile {
        home.parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)?
    } else {
        home.clone()
    };
    let name = match profile_flag(&p.argv) {
        // Named on the command line: `default` is the root's own.
        Some(name) => name,
        // A profile's HERMES_HOME is taken as it is.
        None if is_profile => return Some(home.join("state.db")),
        None => match active_profile(&root).filter(|n| n != "default") {
            Some(name) => name,
            None => return Some(home.join("state.db")),
        },
    };
    Some(if name == "default" {
        root.join("state.db")
    } else {
        root.join("profiles").join(name).join("state.db")
    })
}

/// The profile a Hermes command line names: the first `-p NAME`,
/// `--profile NAME` or `--profile=NAME` after the program and before a
/// `--`, when NAME is one Hermes takes.
fn profile_flag(argv: &[String]) -> Option<String> {
    let start = argv.iter().position(|a| is_program(a)).unwrap_or(0) + 1;
    let mut args = argv.iter().skip(start).take_while(|a| *a != "--");
    while let Some(a) = args.next() {
        let name = if a == "-p" || a == "--profile" {
            args.next().cloned()
        } else {
            a.strip_prefix("--profile=").map(str::to_owned)
        };
        if let Some(name) = name {
            return profile_name(&name);
        }
    }
    None
}

/// Whether `arg` is the Hermes program itself (its path or name).
fn is_program(arg: &str) -> bool {
    PROGRAMS.contains(&sqlite::base(arg))
}

/// `name` as Hermes takes a profile name: lowercase letters, digits, `_`
/// and `-`, starting with a letter or digit, at most 64 characters.
fn profile_name(name: &str) -> Option<String> {
    let name = name.trim().to_lowercase();
    let ok = name.len() <= 64
        && name.bytes().enumerate().all(|(i, b)| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || (i > 0 && (b == b'_' || b == b'-'))
        })
        && !name.is_empty();
    ok.then_some(name)
}

/// The sticky profile named in `<root>/active_profile`, read bounded.
fn active_profile(root: &Path) -> Option<String> {
    let bytes =
        crate::store::bounded::read_path(&root.join("active_profile"), MAX_PROFILE_FILE).ok()??;
    profile_name(std::str::from_utf8(&bytes).ok()?)
}

/// Whether `p` is a Hermes CLI process (see the module docs).
fn is_hermes(p: &Proc) -> bool {
    let program = match p.argv.first().map(|a| sqlite::base(a)) {
        Some(a) if a.starts_with("python") => p.argv.get(1).is_some_and(|a| is_program(a)),
        Some(a) => PROGRAMS.contains(&a),
        None => false,
    };
    (PROGRAMS.contains(&p.comm.as_str()) || program)
        && !p.argv.iter().skip(1).any(|a| a == "gateway")
}

/// A live session row.
#[derive(Debug)]
struct Live {
    id: String,
    cli: bool,
    cwd: Option<PathBuf>,
    started_at: f64,
    last_active: f64,
}

fn read(path: &Path, procs: &[&Proc], boot: Option<f64>) -> Result<Vec<Found>, DbError> {
    let Some(db) = sqlite::open(path)? else {
        return Ok(Vec::new());
    };
    let s = db.columns("sessions")?;
    let m = db.columns("messages")?;
    let col = |cols: &[String], name: &str, or: &'static str| -> String {
        if cols.iter().any(|c| c == name) {
            name.to_owned()
        } else {
            or.to_owned()
        }
    };
    let delegate = if s.iter().any(|c| c == "model_config") {
        "CASE WHEN json_valid(model_config) \
         THEN json_extract(model_config, '$._delegate_from') IS NOT NULL ELSE 0 END"
    } else {
        "0"
    };
    let archived = if s.iter().any(|c| c == "archived") {
        "AND (archived IS NULL OR archived = 0)"
    } else {
        ""
    };
    let rows = db.rows(
        &format!(
            "SELECT id, {source}, {cwd}, {parent}, {delegate}, started_at \
             FROM sessions WHERE ended_at IS NULL {archived} \
             ORDER BY started_at DESC LIMIT {MAX_SESSIONS}",
            source = col(&s, "source", "NULL"),
            cwd = col(&s, "cwd", "NULL"),
            parent = col(&s, "parent_session_id", "NULL"),
        ),
        [],
        MAX_SESSIONS,
        |r| {
            (
                sqlite::text(r, 0),
                sqlite::text(r, 1),
                sqlite::path(r, 2),
                sqlite::text(r, 3),
                sqlite::number(r, 4).is_some_and(|d| d != 0.0),
                sqlite::number(r, 5),
            )
        },
    )?;
    let active = if m.iter().any(|c| c == "active") {
        "AND (active IS NULL OR active = 1)"
    } else {
        ""
    };
    let wanted = |cwd: &Path| procs.iter().any(|p| p.cwd.as_deref() == Some(cwd));
    let mut dirs = HashMap::new();
    let mut live = Vec::new();
    for (id, source, cwd, parent, delegate, started_at) in rows {
        let (Some(id), Some(started_at), false) = (id, started_at, delegate) else {
            continue;
        };
        let cwd = match (cwd, parent) {
            (Some(cwd), _) => Some(cwd),
            (None, Some(parent)) => inherited(&db, &s, &parent, &mut dirs)?,
            (None, None) => None,
        };
        let cli = source.as_deref() == Some("cli");
        if !cwd.as_deref().map_or(cli, wanted) {
            continue;
        }
        let last = db.row(
            &format!("SELECT max(timestamp) FROM messages WHERE session_id = ?1 {active} LIMIT 1"),
            [&id],
            |r| sqlite::number(r, 0),
        )?;
        live.push(Live {
            id,
            cli,
            cwd,
            started_at,
            last_active: last.flatten().unwrap_or(started_at),
        });
    }

    // Sessions with a directory, by the shared rule.
    let (with_dir, without): (Vec<&Live>, Vec<&Live>) = live.iter().partition(|l| l.cwd.is_some());
    let cands: Vec<Candidate> = with_dir
        .iter()
        .map(|l| Candidate {
            cwd: l.cwd.clone().unwrap_or_default(),
            started_at: l.started_at,
            last_active: l.last_active,
        })
        .collect();
    let mut pairs: Vec<(&Proc, &Live)> = sqlite::pair(procs, &cands, boot)
        .into_iter()
        .map(|(p, c)| (procs[p], with_dir[c]))
        .collect();

    // CLI sessions without a directory, to the only process that can own one.
    if let Some(boot) = boot {
        let mut free: Vec<&Proc> = procs
            .iter()
            .copied()
            .filter(|p| !pairs.iter().any(|(q, _)| q.pid == p.pid))
            .collect();
        let mut without: Vec<&Live> = without.into_iter().filter(|l| l.cli).collect();
        without.sort_by(|a, b| b.last_active.total_cmp(&a.last_active));
        for l in without {
            let owners: Vec<usize> = (0..free.len())
                .filter(|&i| procs::started_at(free[i], boot) <= l.started_at + START_SLACK)
                .collect();
            if let [i] = owners[..] {
                pairs.push((free.remove(i), l));
            }
        }
    }

    let mut out = Vec::new();
    for (p, l) in pairs {
        out.push(found(&db, &s, active, p, l));
    }
    out.sort_by_key(|f| f.pid);
    Ok(out)
}

/// The directory of the nearest ancestor of `parent` (itself included)
/// that has one, following `parent_session_id` at most [`MAX_HOPS`] times.
fn inherited(
    db: &Db,
    cols: &[String],
    parent: &str,
    memo: &mut HashMap<String, Option<PathBuf>>,
) -> Result<Option<PathBuf>, DbError> {
    if !cols.iter().any(|c| c == "parent_session_id") || !cols.iter().any(|c| c == "cwd") {
        return Ok(None);
    }
    let mut id = parent.to_owned();
    let mut seen = Vec::new();
    let mut found = None;
    for _ in 0..MAX_HOPS {
        if let Some(known) = memo.get(&id) {
            found = known.clone();
            break;
        }
        seen.push(id.clone());
        let row = db.row(
            "SELECT cwd, parent_session_id FROM sessions WHERE id = ?1 LIMIT 1",
            [&id],
            |r| (sqlite::path(r, 0), sqlite::text(r, 1)),
        )?;
        match row {
            Some((Some(cwd), _)) => {
                found = Some(cwd);
                break;
            }
            Some((None, Some(next))) if !seen.contains(&next) => id = next,
            _ => break,
        }
    }
    for id in seen {
        memo.insert(id, found.clone());
    }
    Ok(found)
}

/// The record of session `l`, owned by `p`. A detail that cannot be read
/// is left out; the session is still published.
fn found(db: &Db, cols: &[String], active: &str, p: &Proc, l: &Live) -> Found {
    let has = |c: &str| cols.iter().any(|x| x == c);
    let (title, model) = db
        .row(
            &format!(
                "SELECT {}, {} FROM sessions WHERE id = ?1 LIMIT 1",
                if has("title") { "title" } else { "NULL" },
                if has("model") { "model" } else { "NULL" },
            ),
            [&l.id],
            |r| (sqlite::text(r, 0), sqlite::text(r, 1)),
        )
        .ok()
        .flatten()
        .unwrap_or_default();
    let last = db
        .row(
            &format!(
                "SELECT role, finish_reason, typeof(tool_calls) FROM messages \
                 WHERE session_id = ?1 AND role IN ('user', 'assistant', 'tool') {active} \
                 ORDER BY timestamp DESC, id DESC LIMIT 1"
            ),
            [&l.id],
            |r| (sqlite::text(r, 0), sqlite::text(r, 1), sqlite::text(r, 2)),
        )
        .ok()
        .flatten();
    let status = match last {
        None => Status::Idle,
        Some((role, finish, calls)) => status(
            role.as_deref(),
            finish.as_deref(),
            calls.is_some_and(|t| t != "null"),
        ),
    };
    let cwd = l.cwd.clone().or_else(|| p.cwd.clone());
    let title = title.or_else(|| {
        cwd.as_deref()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
    });
    Found {
        status,
        cwd,
        title,
        model,
        started_at: Some(l.started_at),
        ..Found::new(AGENT, l.id.clone(), p.pid)
    }
}

/// Whose turn it is after the newest message (see the module docs).
fn status(role: Option<&str>, finish: Option<&str>, tool_calls: bool) -> Status {
    match role {
        Some("user" | "tool") => Status::Working,
        Some("assistant") if tool_calls || finish.is_some_and(|f| GOES_ON.contains(&f)) => {
            Status::Working
        }
        Some("assistant") => Status::Waiting,
        _ => Status::Idle,
    }
}

#[cfg(test)]
mod tests {
    //! Each state.db here is written by the released hermes-agent package's
    //! own `hermes_state.SessionDB`, run from the virtual environment that
    //! scripts/test makes (`$PRESENCE_TEST_HERMES_VENV`, else
    //! `target/hermes-venv`); without it these tests fail and say so.

    use super::*;
    use crate::discover::tests::Sandbox;
    use std::io::{BufRead as _, BufReader, Write as _};
    use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

    use serde_json::{Value, json};

    /// The Hermes release and its virtual environment (shared with
    /// tests/integration).
    mod hermes_venv {
        include!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/support/hermes_venv.rs"
        ));
    }

    /// Drives `hermes_state.SessionDB`: argv[1] is the database, argv[2] a
    /// file holding a JSON list of operations, each one of SessionDB's own calls, except
    /// `lock` and `exclusive` (which hold a lock on SessionDB's own
    /// connection, as Hermes does mid-write) and `wait` (prints a line and
    /// waits for one on stdin, the database still open).
    const DRIVER: &str = r#"
import json, sys
from pathlib import Path
from hermes_state import SessionDB
db = SessionDB(db_path=Path(sys.argv[1]))
for op in json.loads(Path(sys.argv[2]).read_text()):
    kind = op.pop("op")
    if kind == "create":
        db.create_session(op.pop("id"), op.pop("source", "cli"), **op)
    elif kind == "message":
        db.append_message(op.pop("id"), op.pop("role"), **op)
    elif kind == "title":
        db.set_session_title(op["id"], op["title"])
    elif kind == "end":
        db.end_session(op["id"], op["reason"])
    elif kind == "lock":
        db._conn.execute("BEGIN IMMEDIATE")
        db._conn.execute("UPDATE sessions SET title = 'uncommitted' WHERE id = ?", (op["id"],))
    elif kind == "exclusive":
        db._conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        db._conn.execute("BEGIN EXCLUSIVE")
    elif kind == "wait":
        print("waiting", flush=True)
        sys.stdin.readline()
    else:
        raise SystemExit("unknown op " + kind)
db.close()
"#;

    /// The virtual environment's python, or a failure saying how to make it.
    fn python() -> PathBuf {
        hermes_venv::venv().join("bin/python")
    }

    /// A temp HOME with a Hermes home and a project directory in it.
    struct World(Sandbox);

    impl std::ops::Deref for World {
        type Target = Sandbox;
        fn deref(&self) -> &Sandbox {
            &self.0
        }
    }

    impl World {
        fn new() -> World {
            World(Sandbox::new("HERMES_HOME", "hermes-home", "hermes-home"))
        }
        fn hermes(&self) -> PathBuf {
            self.tmp.path().join("hermes-home")
        }
        fn db(&self) -> PathBuf {
            self.hermes().join("state.db")
        }
        fn driver(&self, ops: &Value) -> Command {
            self.driver_at(&self.db(), ops)
        }
        /// The driver, on the database at `db`.
        fn driver_at(&self, db: &Path, ops: &Value) -> Command {
            let file = tempfile::NamedTempFile::new_in(self.tmp.path()).unwrap();
            std::fs::write(file.path(), ops.to_string()).unwrap();
            let (_, ops) = file.keep().unwrap();
            let mut c = Command::new(python());
            c.arg("-c")
                .arg(DRIVER)
                .arg(db)
                .arg(ops)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", self.home())
                .env("HERMES_HOME", self.hermes())
                .env("XDG_CONFIG_HOME", self.home().join(".config"))
                .env("XDG_DATA_HOME", self.home().join(".local/share"));
            c
        }
        /// Runs the operations to the end (the database closed after).
        fn run(&self, ops: Value) {
            self.run_at(&self.db(), ops);
        }
        /// The same, on the database at `db` (its directory made).
        fn run_at(&self, db: &Path, ops: Value) {
            std::fs::create_dir_all(db.parent().unwrap()).unwrap();
            let out = self.driver_at(db, &ops).output().unwrap();
            assert!(
                out.status.success(),
                "hermes_state failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        /// Starts the operations; returns once the first `wait` is reached.
        fn start(&self, ops: Value) -> Running {
            let mut child = self
                .driver(&ops)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .unwrap();
            let stdin = child.stdin.take().unwrap();
            let stdout = BufReader::new(child.stdout.take().unwrap());
            let mut r = Running {
                child,
                stdin: Some(stdin),
                stdout,
            };
            r.reached_wait();
            r
        }
    }

    /// A driver stopped at a `wait`, its database open.
    struct Running {
        child: Child,
        stdin: Option<ChildStdin>,
        stdout: BufReader<ChildStdout>,
    }

    impl Running {
        fn reached_wait(&mut self) {
            let mut line = String::new();
            self.stdout.read_line(&mut line).unwrap();
            assert_eq!(line.trim(), "waiting", "the driver stopped early");
        }
        /// Lets it go on to the next `wait`.
        fn next(&mut self) {
            writeln!(self.stdin.as_mut().unwrap()).unwrap();
            self.reached_wait();
        }
        /// Lets it run to the end.
        fn finish(mut self) {
            drop(self.stdin.take());
            let status = self.child.wait().unwrap();
            assert!(status.success(), "the driver failed");
        }
    }

    impl Drop for Running {
        fn drop(&mut self) {
            if self.stdin.is_some() {
                let _ = self.child.kill();
                let _ = self.child.wait();
            }
        }
    }

    fn ticks() -> f64 {
        rustix::param::clock_ticks_per_second() as f64
    }

    /// A Hermes CLI process in `cwd`, started at boot.
    pub(super) fn hermes_in(pid: u32, cwd: &Path) -> Proc {
        Proc {
            pid,
            comm: "hermes".into(),
            argv: vec![
                "/opt/hermes/bin/python3".into(),
                "/opt/hermes/bin/hermes".into(),
            ],
            cwd: Some(cwd.to_owned()),
            ..Proc::default()
        }
    }

    /// A boot time for tests that set when processes started: long ago,
    /// so that any start fits whatever this machine's uptime.
    const BOOT: f64 = 1_000_000_000.0;

    /// The same, started `ago` seconds ago (with [`BOOT`] as boot time).
    fn hermes_since(pid: u32, cwd: &Path, ago: f64) -> Proc {
        let at = crate::local::unix_now() - ago;
        Proc {
            start: ((at - BOOT) * ticks()) as u64,
            ..hermes_in(pid, cwd)
        }
    }

    /// What the reader finds for `procs`, with [`BOOT`] as boot time.
    fn timed(w: &World, procs: &[Proc]) -> Vec<Found> {
        let procs: Vec<&Proc> = procs.iter().collect();
        read(&w.db(), &procs, Some(BOOT)).unwrap()
    }

    fn create(id: &str, cwd: Option<&Path>) -> Value {
        match cwd {
            Some(cwd) => {
                json!({"op": "create", "id": id, "source": "cli", "cwd": cwd, "model": "anthropic/claude-sonnet-4"})
            }
            None => {
                json!({"op": "create", "id": id, "source": "cli", "model": "anthropic/claude-sonnet-4"})
            }
        }
    }

    fn say(id: &str, role: &str, content: &str) -> Value {
        json!({"op": "message", "id": id, "role": role, "content": content})
    }

    fn reply(id: &str, finish: &str) -> Value {
        json!({"op": "message", "id": id, "role": "assistant", "content": "Done.", "finish_reason": finish})
    }

    fn ids(found: &[Found]) -> Vec<(&str, u32)> {
        found
            .iter()
            .map(|f| (f.session_id.as_str(), f.pid))
            .collect()
    }

    #[test]
    fn a_cli_session_of_a_running_hermes_is_found_with_its_own_title() {
        let w = World::new();
        let proj = w.dir("proj");
        w.run(json!([
            create("20260101_090000_abc123", Some(&proj)),
            say("20260101_090000_abc123", "user", "please look at the parser"),
            reply("20260101_090000_abc123", "stop"),
            {"op": "title", "id": "20260101_090000_abc123", "title": "Parser review"},
        ]));
        let found = sessions(&w.cx(vec![hermes_in(41, &proj)]));
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!(f.agent, "hermes");
        assert_eq!(f.session_id, "20260101_090000_abc123");
        assert_eq!(f.pid, 41);
        assert_eq!(f.status, Status::Waiting);
        assert_eq!(f.cwd.as_deref(), Some(proj.as_path()));
        assert_eq!(f.title.as_deref(), Some("Parser review"));
        assert_eq!(f.model.as_deref(), Some("anthropic/claude-sonnet-4"));
        let started = f.started_at.unwrap();
        assert!(
            (started - crate::local::unix_now()).abs() < 600.0,
            "{started}"
        );
    }

    #[test]
    fn the_status_follows_the_newest_message() {
        let w = World::new();
        let cases: [(&str, Vec<Value>, Status); 7] = [
            ("idle", vec![], Status::Idle),
            ("asked", vec![say("asked", "user", "hi")], Status::Working),
            (
                "calling",
                vec![
                    say("calling", "user", "hi"),
                    json!({"op": "message", "id": "calling", "role": "assistant", "content": null,
                           "tool_calls": [{"name": "terminal", "arguments": "{}"}], "finish_reason": "tool_calls"}),
                ],
                Status::Working,
            ),
            (
                "tooled",
                vec![
                    say("tooled", "user", "hi"),
                    json!({"op": "message", "id": "tooled", "role": "tool", "content": "ok", "tool_call_id": "c1", "tool_name": "terminal"}),
                ],
                Status::Working,
            ),
            (
                "interim",
                vec![say("interim", "user", "hi"), reply("interim", "incomplete")],
                Status::Working,
            ),
            (
                "answered",
                vec![say("answered", "user", "hi"), reply("answered", "stop")],
                Status::Waiting,
            ),
            (
                "cut",
                vec![say("cut", "user", "hi"), reply("cut", "length")],
                Status::Waiting,
            ),
        ];
        let mut ops = Vec::new();
        let mut procs = Vec::new();
        for (i, (id, msgs, _)) in cases.iter().enumerate() {
            let dir = w.dir(id);
            std::fs::create_dir_all(&dir).unwrap();
            ops.push(create(id, Some(&dir)));
            ops.extend(msgs.iter().cloned());
            procs.push(hermes_in(100 + i as u32, &dir));
        }
        w.run(Value::Array(ops));
        let found = sessions(&w.cx(procs));
        let got: Vec<(&str, Status)> = found
            .iter()
            .map(|f| (f.session_id.as_str(), f.status))
            .collect();
        let want: Vec<(&str, Status)> = cases.iter().map(|(id, _, s)| (*id, *s)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn an_ended_session_is_not_published() {
        let w = World::new();
        let proj = w.dir("proj");
        w.run(json!([
            create("s1", Some(&proj)),
            say("s1", "user", "hi"),
            {"op": "end", "id": "s1", "reason": "cli_close"},
        ]));
        assert!(sessions(&w.cx(vec![hermes_in(41, &proj)])).is_empty());
    }

    #[test]
    fn without_a_matching_hermes_process_nothing_is_published() {
        let w = World::new();
        let proj = w.dir("proj");
        w.run(json!([create("s1", Some(&proj)), say("s1", "user", "hi")]));
        let elsewhere = w.dir("elsewhere");
        let gateway = Proc {
            argv: vec![
                "/opt/hermes/bin/python3".into(),
                "/opt/hermes/bin/hermes".into(),
                "gateway".into(),
                "run".into(),
            ],
            ..hermes_in(42, &proj)
        };
        let shell = Proc {
            comm: "bash".into(),
            argv: vec!["bash".into()],
            ..hermes_in(43, &proj)
        };
        for procs in [
            vec![],
            vec![hermes_in(41, &elsewhere)],
            vec![gateway],
            vec![shell],
        ] {
            assert!(sessions(&w.cx(procs.clone())).is_empty(), "{procs:?}");
        }
    }

    #[test]
    fn an_absent_database_costs_nothing_and_creates_nothing() {
        let w = World::new();
        let proj = w.dir("proj");
        assert!(sessions(&w.cx(vec![hermes_in(41, &proj)])).is_empty());
        assert_eq!(std::fs::read_dir(w.hermes()).unwrap().count(), 0);
        // HERMES_HOME unset: ~/.hermes, which does not exist either.
        let mut cx = w.cx(vec![hermes_in(41, &proj)]);
        cx.env.clear();
        assert!(sessions(&cx).is_empty());
        assert!(!w.home().join(".hermes").exists());
    }

    #[test]
    fn the_database_is_in_hermes_home_or_under_home() {
        let w = World::new();
        let proj = w.dir("proj");
        let plain = hermes_in(41, &proj);
        let mut cx = w.cx(vec![]);
        assert_eq!(db_of(&cx, &plain), Some(w.db()));
        cx.env.clear();
        assert_eq!(db_of(&cx, &plain), Some(w.home().join(".hermes/state.db")));
        cx.env.insert("HERMES_HOME".into(), "relative/home".into());
        assert_eq!(
            db_of(&cx, &plain),
            None,
            "a relative HERMES_HOME names no known place"
        );
        cx.env.insert("HERMES_HOME".into(), "".into());
        assert_eq!(db_of(&cx, &plain), Some(w.home().join(".hermes/state.db")));
        // The process's own HERMES_HOME wins over this environment's.
        let mut own = hermes_in(42, &proj);
        own.env
            .insert("HERMES_HOME".into(), w.dir("elsewhere").into_os_string());
        assert_eq!(db_of(&cx, &own), Some(w.dir("elsewhere/state.db")));
    }

    /// A Hermes command line with `args` after the program.
    fn hermes_with(pid: u32, cwd: &Path, args: &[&str]) -> Proc {
        let mut p = hermes_in(pid, cwd);
        p.argv.extend(args.iter().map(|a| a.to_string()));
        p
    }

    #[test]
    fn each_process_is_read_from_its_own_profile() {
        let w = World::new();
        let proj = w.dir("proj");
        let root = w.hermes();
        let coder = root.join("profiles/coder/state.db");
        w.run(json!([create("in-default", Some(&proj))]));
        w.run_at(&coder, json!([create("in-coder", Some(&proj))]));
        let found = |procs: Vec<Proc>| {
            let mut f: Vec<(String, u32)> = sessions(&w.cx(procs))
                .into_iter()
                .map(|f| (f.session_id, f.pid))
                .collect();
            f.sort();
            f
        };
        let s = |id: &str, pid: u32| (id.to_string(), pid);
        // One process of each profile, in one directory: each its own.
        assert_eq!(
            found(vec![
                hermes_in(41, &proj),
                hermes_with(42, &proj, &["-p", "coder"]),
            ]),
            [s("in-coder", 42), s("in-default", 41)]
        );
        for args in [
            &["--profile", "coder"][..],
            &["--profile=Coder"],
            &["chat", "-p", "coder"],
        ] {
            assert_eq!(
                found(vec![hermes_with(42, &proj, args)]),
                [s("in-coder", 42)],
                "{args:?}"
            );
        }
        // A name Hermes refuses, or one after `--`, names no profile.
        for args in [
            &["-p", "../coder"][..],
            &["-p", "-x"],
            &["--", "-p", "coder"],
        ] {
            assert_eq!(
                found(vec![hermes_with(42, &proj, args)]),
                [s("in-default", 42)],
                "{args:?}"
            );
        }
        // The sticky profile; `-p default` still means the root's own.
        std::fs::write(root.join("active_profile"), "coder\n").unwrap();
        assert_eq!(found(vec![hermes_in(41, &proj)]), [s("in-coder", 41)]);
        assert_eq!(
            found(vec![hermes_with(41, &proj, &["-p", "default"])]),
            [s("in-default", 41)]
        );
        std::fs::write(root.join("active_profile"), "default\n").unwrap();
        assert_eq!(found(vec![hermes_in(41, &proj)]), [s("in-default", 41)]);
        // A HERMES_HOME that is a profile's directory is taken as it is,
        // whatever the sticky one says.
        std::fs::write(root.join("active_profile"), "nobody\n").unwrap();
        let mut own = hermes_in(43, &proj);
        own.env.insert(
            "HERMES_HOME".into(),
            root.join("profiles/coder").into_os_string(),
        );
        assert_eq!(found(vec![own]), [s("in-coder", 43)]);
        // The database a process holds open is the best evidence of all.
        let mut open = hermes_in(44, &proj);
        open.open_files = vec![coder.clone()];
        assert_eq!(found(vec![open.clone()]), [s("in-coder", 44)]);
        // One file by two paths (a process's resolved one, another's as
        // spelt through a link) is one database: its session goes to one
        // process, once.
        std::os::unix::fs::symlink(&root, w.dir("hermes-link")).unwrap();
        let mut linked = hermes_with(45, &proj, &["-p", "coder"]);
        linked
            .env
            .insert("HERMES_HOME".into(), w.dir("hermes-link").into_os_string());
        let both = found(vec![open, linked]);
        assert_eq!(both.len(), 1, "{both:?}");
        assert_eq!(both[0].0, "in-coder");
    }

    #[test]
    fn the_newest_live_session_in_the_directory_wins_and_a_stale_one_is_not_claimed() {
        let w = World::new();
        let proj = w.dir("proj");
        let hour_ago = crate::local::unix_now() - 3600.0;
        // Left behind by a Hermes that died an hour ago without ending it.
        w.run(json!([
            create("stale", Some(&proj)),
            {"op": "message", "id": "stale", "role": "user", "content": "hi", "timestamp": hour_ago},
        ]));
        let p = hermes_since(41, &proj, 600.0);
        assert!(timed(&w, std::slice::from_ref(&p)).is_empty());
        // The running one's sessions: an older one it still has open, and the newest.
        w.run(json!([
            create("older", Some(&proj)),
            say("older", "user", "hi"),
            create("newest", Some(&proj)),
            say("newest", "user", "hi"),
        ]));
        assert_eq!(ids(&timed(&w, &[p])), [("newest", 41)]);
    }

    #[test]
    fn two_hermes_processes_in_one_directory_get_one_session_each() {
        let w = World::new();
        let proj = w.dir("proj");
        w.run(json!([
            create("first", Some(&proj)),
            say("first", "user", "hi"),
            create("second", Some(&proj)),
            say("second", "user", "hi"),
        ]));
        let found = timed(
            &w,
            &[
                hermes_since(41, &proj, 300.0),
                hermes_since(42, &proj, 200.0),
            ],
        );
        // Both began after both processes: the most recently active goes
        // to the most recently started process.
        assert_eq!(ids(&found), [("first", 41), ("second", 42)]);
    }

    #[test]
    fn a_continuation_inherits_its_directory_and_a_subagents_session_is_skipped() {
        let w = World::new();
        let proj = w.dir("proj");
        w.run(json!([
            create("root", Some(&proj)),
            say("root", "user", "hi"),
            {"op": "end", "id": "root", "reason": "compression"},
            {"op": "create", "id": "tip", "source": "cli", "parent_session_id": "root"},
            say("tip", "user", "go on"),
            {"op": "create", "id": "helper", "source": "cli", "parent_session_id": "tip",
             "model_config": {"_delegate_from": "tip"}},
            say("helper", "user", "subtask"),
        ]));
        let found = sessions(&w.cx(vec![hermes_in(41, &proj)]));
        assert_eq!(ids(&found), [("tip", 41)]);
        assert_eq!(found[0].cwd.as_deref(), Some(proj.as_path()));
        assert_eq!(found[0].title.as_deref(), Some("proj"));
    }

    #[test]
    fn a_session_without_a_directory_goes_only_to_an_unambiguous_process() {
        let w = World::new();
        let proj = w.dir("proj");
        let other = w.dir("other");
        // What `/new` creates: a CLI session with no cwd.
        w.run(json!([create("fresh", None), say("fresh", "user", "hi")]));
        let found = sessions(&w.cx(vec![hermes_in(41, &proj)]));
        assert_eq!(ids(&found), [("fresh", 41)]);
        assert_eq!(found[0].cwd.as_deref(), Some(proj.as_path()));
        // Two free Hermes processes, both running when it began: ambiguous.
        assert!(sessions(&w.cx(vec![hermes_in(41, &proj), hermes_in(42, &other)])).is_empty());
        // One of them started after it began: not its owner.
        let found = timed(&w, &[hermes_in(41, &proj), hermes_since(42, &other, -60.0)]);
        assert_eq!(ids(&found), [("fresh", 41)]);
        // One of them has its own session: the other is the owner.
        w.run(json!([
            create("mine", Some(&other)),
            say("mine", "user", "hi")
        ]));
        let found = sessions(&w.cx(vec![hermes_in(41, &proj), hermes_in(42, &other)]));
        assert_eq!(ids(&found), [("fresh", 41), ("mine", 42)]);
        // A gateway's session (no cwd, not the CLI's) is nobody's.
        let w = World::new();
        w.run(json!([
            {"op": "create", "id": "tg", "source": "telegram", "user_id": "u1"},
            say("tg", "user", "hi"),
        ]));
        assert!(sessions(&w.cx(vec![hermes_in(41, &proj)])).is_empty());
    }

    #[test]
    fn the_prompt_never_becomes_the_title() {
        let w = World::new();
        let proj = w.dir("proj");
        w.run(json!([
            create("s1", Some(&proj)),
            say(
                "s1",
                "user",
                "Refactor the billing module; the key is sk-secret"
            ),
            reply("s1", "stop"),
        ]));
        let found = sessions(&w.cx(vec![hermes_in(41, &proj)]));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].title.as_deref(), Some("proj"));
        let all = format!("{found:?}");
        assert!(!all.contains("billing") && !all.contains("Done."), "{all}");
    }

    #[test]
    fn a_running_hermes_writes_are_seen_as_they_commit() {
        let w = World::new();
        let proj = w.dir("proj");
        let mut hermes = w.start(json!([
            create("s1", Some(&proj)),
            say("s1", "user", "hi"),
            {"op": "wait"},
            reply("s1", "stop"),
            {"op": "title", "id": "s1", "title": "Greeting"},
            {"op": "wait"},
        ]));
        let cx = w.cx(vec![hermes_in(41, &proj)]);
        let side = |s: &str| w.hermes().join(format!("state.db{s}")).exists();
        assert!(
            side("-wal") && side("-shm"),
            "Hermes keeps its database in WAL mode"
        );
        let found = sessions(&cx);
        assert_eq!(found[0].status, Status::Working);
        assert_eq!(found[0].title.as_deref(), Some("proj"));
        hermes.next();
        let found = sessions(&cx);
        assert_eq!(found[0].status, Status::Waiting);
        assert_eq!(found[0].title.as_deref(), Some("Greeting"));
        hermes.finish();
        assert!(
            !side("-wal") && !side("-shm"),
            "Hermes removed them on close"
        );
        assert_eq!(sessions(&cx)[0].status, Status::Waiting);
        assert!(!side("-wal") && !side("-shm"), "reading created none");
    }

    #[test]
    fn a_write_lock_held_by_hermes_leaves_the_last_commit_readable() {
        let w = World::new();
        let proj = w.dir("proj");
        let hermes = w.start(json!([
            create("s1", Some(&proj)),
            {"op": "title", "id": "s1", "title": "Committed"},
            {"op": "lock", "id": "s1"},
            {"op": "wait"},
        ]));
        let found = sessions(&w.cx(vec![hermes_in(41, &proj)]));
        assert_eq!(ids(&found), [("s1", 41)]);
        assert_eq!(found[0].title.as_deref(), Some("Committed"));
        drop(hermes);
    }

    #[test]
    fn an_exclusive_lock_yields_nothing_and_returns() {
        let w = World::new();
        let proj = w.dir("proj");
        let hermes = w.start(json!([
            create("s1", Some(&proj)),
            {"op": "exclusive"},
            {"op": "wait"},
        ]));
        let path = w.db();
        let err = read(&path, &[&hermes_in(41, &proj)], None).unwrap_err();
        assert!(matches!(err, DbError::Busy { .. }), "{err:?}");
        assert!(sessions(&w.cx(vec![hermes_in(41, &proj)])).is_empty());
        drop(hermes);
    }

    /// A way to spoil a database, run in order.
    type Damage<'a> = Box<dyn Fn() + 'a>;

    #[test]
    fn a_damaged_or_odd_state_db_yields_nothing() {
        let w = World::new();
        let proj = w.dir("proj");
        let mut ops = vec![create("s1", Some(&proj)), say("s1", "user", "hi")];
        for i in 0..300 {
            ops.push(say("s1", "assistant", &format!("{i:0>2000}")));
        }
        w.run(Value::Array(ops));
        let cx = w.cx(vec![hermes_in(41, &proj)]);
        assert_eq!(sessions(&cx).len(), 1);
        let good = std::fs::read(w.db()).unwrap();
        let db = w.db();
        let cases: Vec<(&str, Damage)> = vec![
            (
                "truncated",
                Box::new(|| std::fs::write(&db, &good[..good.len() / 3]).unwrap()),
            ),
            (
                "header only",
                Box::new(|| std::fs::write(&db, &good[..100]).unwrap()),
            ),
            ("empty", Box::new(|| std::fs::write(&db, b"").unwrap())),
            (
                "text",
                Box::new(|| std::fs::write(&db, "x".repeat(4096)).unwrap()),
            ),
            (
                "scribbled",
                Box::new(|| {
                    let mut bad = good.clone();
                    for (i, b) in bad.iter_mut().enumerate().skip(100) {
                        *b ^= (i % 13) as u8 + 1;
                    }
                    std::fs::write(&db, bad).unwrap();
                }),
            ),
            (
                "huge",
                Box::new(|| {
                    std::fs::write(&db, &good).unwrap();
                    let f = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
                    f.set_len(sqlite::MAX_DB_BYTES + 1).unwrap();
                }),
            ),
            (
                "directory",
                Box::new(|| {
                    std::fs::remove_file(&db).unwrap();
                    std::fs::create_dir(&db).unwrap();
                }),
            ),
            (
                "symlink",
                Box::new(|| {
                    std::fs::remove_dir(&db).unwrap();
                    let real = w.dir("real.db");
                    std::fs::write(&real, &good).unwrap();
                    std::os::unix::fs::symlink(&real, &db).unwrap();
                }),
            ),
        ];
        for (name, make) in cases {
            make();
            assert!(sessions(&cx).is_empty(), "{name}");
        }
    }

    /// A state.db of a few sessions written by `hermes_state`, made once
    /// per test run, and its project directory.
    pub(super) fn good_db() -> (&'static [u8], &'static Path) {
        static GOOD: std::sync::OnceLock<(Vec<u8>, PathBuf, tempfile::TempDir)> =
            std::sync::OnceLock::new();
        let (bytes, proj, _) = GOOD.get_or_init(|| {
            let w = World::new();
            let proj = w.dir("proj");
            let mut ops = vec![];
            for i in 0..20 {
                let id = format!("s{i}");
                ops.push(create(&id, Some(&proj)));
                ops.push(say(&id, "user", "hi"));
                ops.push(reply(&id, "stop"));
                ops.push(json!({"op": "title", "id": id, "title": format!("Title {i}")}));
            }
            ops.push(json!({"op": "end", "id": "s3", "reason": "cli_close"}));
            w.run(Value::Array(ops));
            let bytes = std::fs::read(w.db()).unwrap();
            (bytes, proj, w.0.tmp)
        });
        (bytes, proj)
    }

    #[test]
    fn hermes_processes_are_told_by_name() {
        let p = |comm: &str, argv: &[&str]| Proc {
            comm: comm.into(),
            argv: argv.iter().map(|s| s.to_string()).collect(),
            ..Proc::default()
        };
        assert!(is_hermes(&p(
            "hermes",
            &["/usr/bin/python3.11", "/home/u/.local/bin/hermes", "-c"]
        )));
        assert!(is_hermes(&p(
            "python3",
            &["python3", "/opt/venv/bin/hermes"]
        )));
        assert!(is_hermes(&p("hermes", &["hermes"])));
        assert!(is_hermes(&p(
            "hermes-agent",
            &["/opt/venv/bin/python", "/opt/venv/bin/hermes-agent"]
        )));
        assert!(is_hermes(&p(
            "hermes",
            &["/opt/venv/bin/hermes", "chat", "-q", "hi"]
        )));
        assert!(!is_hermes(&p(
            "hermes",
            &["/opt/venv/bin/hermes", "gateway", "run"]
        )));
        assert!(!is_hermes(&p("hermes-acp", &["/opt/venv/bin/hermes-acp"])));
        assert!(!is_hermes(&p("python3", &["python3", "-m", "http.server"])));
        assert!(!is_hermes(&p("bash", &["bash", "-c", "hermes"])));
        assert!(!is_hermes(&p("vim", &["vim", "hermes"])));
    }
}

#[cfg(test)]
mod hostile {
    //! A state.db written by the released `hermes_state`, then damaged at
    //! random: the reader returns (something or nothing), never panics.

    use super::tests::{good_db, hermes_in};
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn a_damaged_state_db_never_panics(
            flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..), 1..40),
            cut in proptest::option::of(any::<prop::sample::Index>()),
        ) {
            let (good, proj) = good_db();
            let mut bytes = good.to_vec();
            for (at, x) in flips {
                let i = at.index(bytes.len());
                bytes[i] ^= x;
            }
            if let Some(cut) = cut {
                bytes.truncate(cut.index(bytes.len()));
            }
            let tmp = tempfile::tempdir().unwrap();
            let db = tmp.path().join("state.db");
            std::fs::write(&db, &bytes).unwrap();
            let p = hermes_in(41, proj);
            let _ = read(&db, &[&p], Some(0.0));
        }
    }
}
