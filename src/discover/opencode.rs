//! OpenCode: the live sessions in its `opencode.db`, or in the JSON files
//! older releases kept.
//!
//! # What is read
//!
//! OpenCode's data directory is `$XDG_DATA_HOME/opencode` (an absolute
//! `XDG_DATA_HOME`; else `~/.local/share/opencode`). Nothing is read unless
//! an OpenCode process is running.
//!
//! - `opencode.db` there (or `$OPENCODE_DB`: an absolute path, or a name in
//!   the data directory), the SQLite database of OpenCode 1.2 and later
//!   (drizzle schema `packages/opencode/src/session/session.sql.ts`, first
//!   migration `20260127222353_familiar_lady_ursula`), through
//!   [`super::sqlite`]: read-only, bounded, never blocking. From table
//!   `session`: `id`, `directory` (the directory OpenCode runs in),
//!   `parent_id` (a subagent's session: skipped), `title`, `model` (JSON
//!   `{id, providerID}`, a later migration; absent in older databases),
//!   `time_created`, `time_updated` (milliseconds), `time_archived`
//!   (archived: skipped). From table `message`: only the newest row of a
//!   session (by `time_created`, then `id`), and of its JSON `data` only
//!   `role`, `time.completed`, `finish`, whether `error` is set, and the
//!   model (`providerID`/`modelID`, or a user message's `model`). The
//!   `part` table, which holds the text of prompts and replies, is never
//!   read. The databases of non-release channels (`opencode-CHANNEL.db`)
//!   are not read.
//! - Only when there is no such database: `storage/session/PROJECT/ID.json`
//!   (one per session: `directory`, `parentID`, `title`, `time.created`,
//!   `time.updated`, `time.archived`) and the newest file of
//!   `storage/message/ID/` (message ids sort by time), each file through
//!   `store::bounded`. At most [`MAX_ENTRIES`] directory entries are looked
//!   at and [`MAX_FILES`] session files read, the most recently modified
//!   first; with a known boot time, files not modified since the oldest
//!   OpenCode process started are passed over unread. `storage/part/` is
//!   never read.
//!
//! # Which process, status, title
//!
//! An OpenCode process is one whose `comm` is `opencode` or whose argv
//! runs a program of that name (the compiled binary; the npm package's
//! `node …/bin/opencode` wrapper only starts it). OpenCode does not end
//! sessions, so every session that is neither a subagent's nor archived is
//! a candidate, and sessions go to processes by the rule of
//! [`super::sqlite::pair`], on the session's `directory` and its
//! `time_updated` as the last activity: a process gets the session of its
//! directory most recently updated since it started. This is a heuristic:
//! an OpenCode that switched to an older session shows it only once that
//! session is updated, and a session OpenCode left open in another process
//! that exited is not distinguishable from one in use until a process
//! starts after it.
//!
//! The newest message says whose turn it is: none, `idle`; `user`,
//! `working`; `assistant` with an `error` (an aborted or failed turn),
//! `waiting`; `assistant` not yet completed (`time.completed` unset), or
//! finished with `tool-calls` or `unknown` (OpenCode's loop goes on after
//! those), `working`; any other completed `assistant` message, `waiting`. A
//! permission prompt is not recorded in these files: it reads as `working`.
//!
//! The title is the session's `title` unless it is OpenCode's placeholder
//! (`New session - <ISO time>` or `Child session - <ISO time>`, kept until
//! OpenCode has generated one), else the name of the directory. The model
//! is `PROVIDER/MODEL`: the session's, else the newest message's.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use rusqlite::params_from_iter;
use serde_json::Value;

use super::sqlite::{self, Candidate, DbError, START_SLACK};
use super::{Context, Found, Proc, Status, procs};
use crate::store::bounded;

/// The agent's name, as `[discover] agents` spells it.
const AGENT: &str = "opencode";

/// The most sessions considered from the database, most recently updated first.
const MAX_SESSIONS: usize = 200;

/// The most directory entries looked at in the JSON tree, per pass.
pub(super) const MAX_ENTRIES: usize = 20_000;

/// The most session files read from the JSON tree, per pass.
pub(super) const MAX_FILES: usize = 256;

/// The largest session or message file read.
const MAX_JSON_BYTES: usize = 1 << 20;

/// The `finish` values after which OpenCode goes on with the same turn.
const GOES_ON: [&str; 2] = ["tool-calls", "unknown"];

/// The live OpenCode sessions of running OpenCode processes.
pub(super) fn sessions(cx: &Context) -> Vec<Found> {
    let procs: Vec<&Proc> = cx.procs.iter().filter(|p| is_opencode(p)).collect();
    if procs.is_empty() {
        return Vec::new();
    }
    let Some(data) = data_dir(cx) else {
        return Vec::new();
    };
    let boot = procs::boot_time();
    if let Some(db) = db_path(cx, &data) {
        match from_db(&db, &procs, boot) {
            Ok(Some(found)) => return found,
            Ok(None) => {}
            Err(_) => return Vec::new(),
        }
    }
    from_json(&data.join("storage"), &procs, boot)
}

/// `$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode`.
fn data_dir(cx: &Context) -> Option<PathBuf> {
    let base = cx
        .var("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| cx.home.join(".local/share"));
    base.is_absolute().then(|| base.join("opencode"))
}

/// `$OPENCODE_DB` (absolute, or a name in the data directory), else
/// `opencode.db` in the data directory.
fn db_path(cx: &Context, data: &Path) -> Option<PathBuf> {
    match cx.var("OPENCODE_DB") {
        Some(v) if v == ":memory:" => None,
        Some(v) => Some(data.join(v)),
        None => Some(data.join("opencode.db")),
    }
}

/// Whether `p` is an OpenCode process (see the module docs).
fn is_opencode(p: &Proc) -> bool {
    p.comm == AGENT || p.argv.first().is_some_and(|a| sqlite::base(a) == AGENT)
}

/// A candidate session.
#[derive(Debug)]
struct Session {
    id: String,
    dir: PathBuf,
    title: Option<String>,
    model: Option<String>,
    created: Option<f64>,
    updated: f64,
}

/// What the newest message of a session says.
#[derive(Debug, Default)]
struct Last {
    role: Option<String>,
    completed: bool,
    finish: Option<String>,
    error: bool,
    model: Option<String>,
}

/// The sessions in the database; `Ok(None)` when there is no database.
fn from_db(path: &Path, procs: &[&Proc], boot: Option<f64>) -> Result<Option<Vec<Found>>, DbError> {
    let Some(db) = sqlite::open(path)? else {
        return Ok(None);
    };
    let cols = db.columns("session")?;
    let has = |c: &str| cols.iter().any(|x| x == c);
    if !(has("id") && has("directory") && has("time_updated")) {
        return Ok(Some(Vec::new()));
    }
    let mut dirs: Vec<&str> = procs
        .iter()
        .filter_map(|p| p.cwd.as_deref()?.to_str())
        .collect();
    dirs.sort_unstable();
    dirs.dedup();
    dirs.truncate(100);
    if dirs.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let or_null = |c: &'static str| if has(c) { c } else { "NULL" };
    let (provider, model) = if has("model") {
        (
            "CASE WHEN json_valid(model) THEN json_extract(model, '$.providerID') END",
            "CASE WHEN json_valid(model) THEN json_extract(model, '$.id') END",
        )
    } else {
        ("NULL", "NULL")
    };
    let sql = format!(
        "SELECT id, directory, {title}, {created}, time_updated, {provider}, {model} \
         FROM session WHERE directory IN ({marks}) {parent} {archived} \
         ORDER BY time_updated DESC LIMIT {MAX_SESSIONS}",
        title = or_null("title"),
        created = or_null("time_created"),
        marks = vec!["?"; dirs.len()].join(", "),
        parent = if has("parent_id") {
            "AND parent_id IS NULL"
        } else {
            ""
        },
        archived = if has("time_archived") {
            "AND time_archived IS NULL"
        } else {
            ""
        },
    );
    let rows = db.rows(&sql, params_from_iter(dirs.iter()), MAX_SESSIONS, |r| {
        let id = sqlite::text(r, 0)?;
        let dir = sqlite::path(r, 1)?;
        let updated = sqlite::number(r, 4)? / 1000.0;
        Some(Session {
            id,
            dir,
            title: sqlite::text(r, 2),
            created: sqlite::number(r, 3).map(|t| t / 1000.0),
            updated,
            model: joined(sqlite::text(r, 5), sqlite::text(r, 6)),
        })
    })?;
    let sessions: Vec<Session> = rows.into_iter().flatten().collect();
    let found = pair(procs, &sessions, boot)
        .into_iter()
        .map(|(p, s)| {
            let last = db
                .row(
                    "SELECT json_extract(d, '$.role'), json_extract(d, '$.time.completed'), \
                     json_extract(d, '$.finish'), json_type(d, '$.error'), \
                     json_extract(d, '$.providerID'), json_extract(d, '$.modelID'), \
                     json_extract(d, '$.model.providerID'), json_extract(d, '$.model.modelID') \
                     FROM (SELECT CASE WHEN json_valid(data) THEN data END AS d FROM message \
                     WHERE session_id = ?1 ORDER BY time_created DESC, id DESC LIMIT 1)",
                    [&s.id],
                    |r| Last {
                        role: sqlite::text(r, 0),
                        completed: sqlite::number(r, 1).is_some(),
                        finish: sqlite::text(r, 2),
                        error: sqlite::text(r, 3).is_some_and(|t| t != "null"),
                        model: joined(sqlite::text(r, 4), sqlite::text(r, 5))
                            .or_else(|| joined(sqlite::text(r, 6), sqlite::text(r, 7))),
                    },
                )
                .ok()
                .flatten();
            found(p, s, last)
        })
        .collect();
    Ok(Some(found))
}

/// The sessions in the JSON tree under `storage`.
fn from_json(storage: &Path, procs: &[&Proc], boot: Option<f64>) -> Vec<Found> {
    // Files not modified since the oldest process started cannot be the
    // session of any of them.
    let since = boot.and_then(|b| {
        procs
            .iter()
            .map(|p| procs::started_at(p, b))
            .min_by(f64::total_cmp)
    });
    let mut budget = MAX_ENTRIES;
    let mut files = Vec::new();
    for project in entries(&storage.join("session"), &mut budget) {
        for (name, mtime) in entries_with_mtime(&project, &mut budget) {
            if since.is_none_or(|s| mtime + START_SLACK >= s) {
                files.push((mtime, name));
            }
        }
    }
    files.sort_by(|a, b| b.0.total_cmp(&a.0));
    files.truncate(MAX_FILES);
    let wanted = |d: &Path| procs.iter().any(|p| p.cwd.as_deref() == Some(d));
    let sessions: Vec<Session> = files
        .into_iter()
        .filter_map(|(mtime, file)| session_file(&file, mtime))
        .filter(|s| wanted(&s.dir))
        .collect();
    let messages = storage.join("message");
    pair(procs, &sessions, boot)
        .into_iter()
        .map(|(p, s)| {
            let last = newest_message(&messages.join(&s.id), &mut budget);
            found(p, s, last)
        })
        .collect()
}

/// The subdirectories of `dir`, counting each entry against `budget`.
fn entries(dir: &Path, budget: &mut usize) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.push(e.path());
        }
    }
    out
}

/// The regular `*.json` files of `dir` with their modification times
/// (Unix seconds), counting each entry against `budget`.
fn entries_with_mtime(dir: &Path, budget: &mut usize) -> Vec<(PathBuf, f64)> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        let path = e.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        // DirEntry::metadata does not follow a symlink.
        let Ok(md) = e.metadata() else { continue };
        if !md.is_file() {
            continue;
        }
        let mtime = md
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0.0, |d| d.as_secs_f64());
        out.push((path, mtime));
    }
    out
}

/// A session file, if it is a live top-level session.
fn session_file(file: &Path, mtime: f64) -> Option<Session> {
    let id = file.file_stem()?.to_str()?.to_owned();
    let v = read_json(file)?;
    if !v.get("parentID").is_none_or(Value::is_null) {
        return None;
    }
    let time = v.get("time");
    let at = |k: &str| time.and_then(|t| t.get(k)).and_then(Value::as_f64);
    if at("archived").is_some() {
        return None;
    }
    let dir = PathBuf::from(clamp(v.get("directory")?.as_str()?)?);
    if !dir.is_absolute() {
        return None;
    }
    Some(Session {
        id,
        dir,
        title: v.get("title").and_then(Value::as_str).and_then(clamp),
        model: None,
        created: at("created").map(|t| t / 1000.0),
        updated: at("updated").map_or(mtime, |t| t / 1000.0),
    })
}

/// What the newest message file in `dir` says (message ids sort by time).
fn newest_message(dir: &Path, budget: &mut usize) -> Option<Last> {
    let rd = fs::read_dir(dir).ok()?;
    let mut newest: Option<std::ffi::OsString> = None;
    for e in rd.flatten() {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        let name = e.file_name();
        if Path::new(&name).extension().is_some_and(|x| x == "json")
            && newest.as_ref().is_none_or(|n| name > *n)
        {
            newest = Some(name);
        }
    }
    let v = read_json(&dir.join(newest?))?;
    let s = |v: Option<&Value>| v.and_then(Value::as_str).and_then(clamp);
    Some(Last {
        role: s(v.get("role")),
        completed: v.pointer("/time/completed").is_some_and(Value::is_number),
        finish: s(v.get("finish")),
        error: v.get("error").is_some_and(|e| !e.is_null()),
        model: joined(s(v.get("providerID")), s(v.get("modelID"))).or_else(|| {
            joined(
                s(v.pointer("/model/providerID")),
                s(v.pointer("/model/modelID")),
            )
        }),
    })
}

/// A JSON file read with the one bounded read.
fn read_json(file: &Path) -> Option<Value> {
    let bytes = bounded::read_path(file, MAX_JSON_BYTES).ok()??;
    serde_json::from_slice(&bytes).ok()
}

/// Text cut to [`sqlite::MAX_TEXT_BYTES`] and trimmed; `None` when empty.
fn clamp(s: &str) -> Option<String> {
    let mut end = s.len().min(sqlite::MAX_TEXT_BYTES);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let s = s[..end].trim();
    (!s.is_empty()).then(|| s.to_owned())
}

/// `PROVIDER/MODEL`, or the model alone.
fn joined(provider: Option<String>, model: Option<String>) -> Option<String> {
    match (provider, model) {
        (Some(p), Some(m)) => Some(format!("{p}/{m}")),
        (None, Some(m)) => Some(m),
        _ => None,
    }
}

/// The shared rule of [`sqlite::pair`], over sessions.
fn pair<'a, 'p>(
    procs: &[&'p Proc],
    sessions: &'a [Session],
    boot: Option<f64>,
) -> Vec<(&'p Proc, &'a Session)> {
    let cands: Vec<Candidate> = sessions
        .iter()
        .map(|s| Candidate {
            cwd: s.dir.clone(),
            started_at: s.created.unwrap_or(s.updated),
            last_active: s.updated,
        })
        .collect();
    sqlite::pair(procs, &cands, boot)
        .into_iter()
        .map(|(p, c)| (procs[p], &sessions[c]))
        .collect()
}

/// The record of session `s`, owned by `p`.
fn found(p: &Proc, s: &Session, last: Option<Last>) -> Found {
    let title = s
        .title
        .clone()
        .filter(|t| !is_default_title(t))
        .or_else(|| s.dir.file_name().map(|n| n.to_string_lossy().into_owned()));
    let model = s
        .model
        .clone()
        .or_else(|| last.as_ref().and_then(|l| l.model.clone()));
    Found {
        status: status(last.as_ref()),
        cwd: Some(s.dir.clone()),
        title,
        model,
        started_at: s.created,
        ..Found::new(AGENT, s.id.clone(), p.pid)
    }
}

/// Whose turn it is after the newest message (see the module docs).
fn status(last: Option<&Last>) -> Status {
    let Some(last) = last else {
        return Status::Idle;
    };
    match last.role.as_deref() {
        Some("user") => Status::Working,
        Some("assistant") if last.error => Status::Waiting,
        Some("assistant") if !last.completed => Status::Working,
        Some("assistant") if last.finish.as_deref().is_some_and(|f| GOES_ON.contains(&f)) => {
            Status::Working
        }
        Some("assistant") => Status::Waiting,
        _ => Status::Idle,
    }
}

/// OpenCode's placeholder title: `New session - ` or `Child session - `
/// and an ISO time such as `2026-01-27T22:23:53.123Z`.
fn is_default_title(title: &str) -> bool {
    let Some(time) = title
        .strip_prefix("New session - ")
        .or_else(|| title.strip_prefix("Child session - "))
    else {
        return false;
    };
    let shape = b"dddd-dd-ddTdd:dd:dd.dddZ";
    time.len() == shape.len()
        && time.bytes().zip(shape.iter()).all(|(c, &s)| match s {
            b'd' => c.is_ascii_digit(),
            _ => c == s,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::tests::Sandbox;

    use rusqlite::Connection;
    use serde_json::json;

    /// OpenCode's first migration (`20260127222353_familiar_lady_ursula`),
    /// the tables read here, as drizzle wrote them.
    const FIRST_MIGRATION: &str = "
CREATE TABLE `project` (
	`id` text PRIMARY KEY,
	`worktree` text NOT NULL,
	`vcs` text,
	`name` text,
	`icon_url` text,
	`icon_color` text,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	`time_initialized` integer,
	`sandboxes` text NOT NULL
);
CREATE TABLE `message` (
	`id` text PRIMARY KEY,
	`session_id` text NOT NULL,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	`data` text NOT NULL,
	CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
);
CREATE TABLE `part` (
	`id` text PRIMARY KEY,
	`message_id` text NOT NULL,
	`session_id` text NOT NULL,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	`data` text NOT NULL,
	CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
);
CREATE TABLE `session` (
	`id` text PRIMARY KEY,
	`project_id` text NOT NULL,
	`parent_id` text,
	`slug` text NOT NULL,
	`directory` text NOT NULL,
	`title` text NOT NULL,
	`version` text NOT NULL,
	`share_url` text,
	`summary_additions` integer,
	`summary_deletions` integer,
	`summary_files` integer,
	`summary_diffs` text,
	`revert` text,
	`permission` text,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	`time_compacting` integer,
	`time_archived` integer,
	CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
);
CREATE INDEX `message_session_idx` ON `message` (`session_id`);
CREATE INDEX `part_message_idx` ON `part` (`message_id`);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
CREATE INDEX `session_project_idx` ON `session` (`project_id`);
CREATE INDEX `session_parent_idx` ON `session` (`parent_id`);
";

    /// The `session` columns later migrations add (`20260405204217_session-model`
    /// and `20260510033149_session_usage` verbatim; the others as drizzle
    /// adds a column), and the message index of current releases.
    const LATER_MIGRATIONS: &str = "
ALTER TABLE `session` ADD `workspace_id` text;
ALTER TABLE `session` ADD `path` text;
ALTER TABLE `session` ADD `agent` text;
ALTER TABLE `session` ADD `model` text;
ALTER TABLE `session` ADD `goal` text;
ALTER TABLE `session` ADD `cost` real DEFAULT 0 NOT NULL;
ALTER TABLE `session` ADD `tokens_input` integer DEFAULT 0 NOT NULL;
ALTER TABLE `session` ADD `tokens_output` integer DEFAULT 0 NOT NULL;
ALTER TABLE `session` ADD `tokens_reasoning` integer DEFAULT 0 NOT NULL;
ALTER TABLE `session` ADD `tokens_cache_read` integer DEFAULT 0 NOT NULL;
ALTER TABLE `session` ADD `tokens_cache_write` integer DEFAULT 0 NOT NULL;
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
";

    const PROMPT: &str = "Refactor the billing module, the token is sk-live-secret";

    /// A temp HOME with OpenCode's data directory and a project directory.
    pub(super) struct World(Sandbox);

    impl std::ops::Deref for World {
        type Target = Sandbox;
        fn deref(&self) -> &Sandbox {
            &self.0
        }
    }

    impl World {
        pub(super) fn new() -> World {
            World(Sandbox::new(
                "XDG_DATA_HOME",
                "xdg-data",
                "xdg-data/opencode",
            ))
        }
        pub(super) fn data(&self) -> PathBuf {
            self.tmp.path().join("xdg-data/opencode")
        }
        pub(super) fn db(&self) -> PathBuf {
            self.data().join("opencode.db")
        }
        /// A database as OpenCode makes it, left open as a running
        /// OpenCode keeps it (WAL mode, its pragmas).
        pub(super) fn open_db(&self, later: bool) -> Connection {
            let c = Connection::open(self.db()).unwrap();
            c.pragma_update(None, "journal_mode", "WAL").unwrap();
            c.execute_batch(
                "PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;",
            )
            .unwrap();
            c.execute_batch(FIRST_MIGRATION).unwrap();
            if later {
                c.execute_batch(LATER_MIGRATIONS).unwrap();
            }
            c.execute(
                "INSERT INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) \
                 VALUES ('4b0ea68d', ?1, 'git', 0, 0, '[]')",
                [self.dir("proj").to_str().unwrap()],
            )
            .unwrap();
            c
        }
    }

    fn ms_ago(secs: f64) -> i64 {
        ((crate::local::unix_now() - secs) * 1000.0) as i64
    }

    /// Adds a session and its messages (`(role, data)` in order) to `c`.
    pub(super) fn add(c: &Connection, id: &str, dir: &Path, title: &str, messages: &[Value]) {
        let t = ms_ago(60.0);
        c.execute(
            "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) \
             VALUES (?1, '4b0ea68d', 'brave-otter', ?2, ?3, '1.2.10', ?4, ?5)",
            rusqlite::params![id, dir.to_str().unwrap(), title, t, t + messages.len() as i64],
        )
        .unwrap();
        for (i, data) in messages.iter().enumerate() {
            let mid = format!("msg_{:012x}{id}", t as u64 + i as u64);
            c.execute(
                "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?3, ?4)",
                rusqlite::params![mid, id, t + i as i64, data.to_string()],
            )
            .unwrap();
            c.execute(
                "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
                rusqlite::params![format!("prt_{i}{id}"), mid, id, t + i as i64,
                    json!({"type": "text", "text": PROMPT}).to_string()],
            )
            .unwrap();
        }
    }

    pub(super) fn user() -> Value {
        json!({"role": "user", "time": {"created": ms_ago(50.0)}, "agent": "build",
               "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}})
    }

    pub(super) fn assistant(completed: bool, finish: Option<&str>, error: bool) -> Value {
        let mut v = json!({"role": "assistant", "time": {"created": ms_ago(40.0)},
            "parentID": "msg_0", "modelID": "gpt-5", "providerID": "openai", "mode": "build",
            "agent": "build", "path": {"cwd": "/p", "root": "/p"}, "cost": 0,
            "tokens": {"input": 1, "output": 2, "reasoning": 0, "cache": {"read": 0, "write": 0}}});
        if completed {
            v["time"]["completed"] = json!(ms_ago(30.0));
        }
        if let Some(f) = finish {
            v["finish"] = json!(f);
        }
        if error {
            v["error"] = json!({"name": "MessageAbortedError", "data": {"message": "aborted"}});
        }
        v
    }

    /// An OpenCode process in `cwd`, started at boot.
    pub(super) fn opencode_in(pid: u32, cwd: &Path) -> Proc {
        Proc {
            pid,
            comm: "opencode".into(),
            argv: vec!["/home/u/.opencode/bin/opencode".into()],
            cwd: Some(cwd.to_owned()),
            ..Proc::default()
        }
    }

    /// A boot time for tests that set when processes started: long ago,
    /// so that any start fits whatever this machine's uptime.
    const BOOT: f64 = 1_000_000_000.0;

    /// The same, started `ago` seconds ago (with [`BOOT`] as boot time).
    fn opencode_since(pid: u32, cwd: &Path, ago: f64) -> Proc {
        let tps = rustix::param::clock_ticks_per_second() as f64;
        Proc {
            start: ((crate::local::unix_now() - ago - BOOT) * tps) as u64,
            ..opencode_in(pid, cwd)
        }
    }

    /// What the database gives `procs`, with [`BOOT`] as boot time.
    fn timed_db(w: &World, procs: &[Proc]) -> Vec<Found> {
        let procs: Vec<&Proc> = procs.iter().collect();
        from_db(&w.db(), &procs, Some(BOOT)).unwrap().unwrap()
    }

    /// What the JSON tree gives `procs`, with [`BOOT`] as boot time.
    fn timed_json(w: &World, procs: &[Proc]) -> Vec<Found> {
        let procs: Vec<&Proc> = procs.iter().collect();
        from_json(&w.data().join("storage"), &procs, Some(BOOT))
    }

    fn ids(found: &[Found]) -> Vec<(&str, u32)> {
        found
            .iter()
            .map(|f| (f.session_id.as_str(), f.pid))
            .collect()
    }

    #[test]
    fn a_session_in_the_database_is_found_with_its_title_and_model() {
        let w = World::new();
        let proj = w.dir("proj");
        let c = w.open_db(true);
        add(
            &c,
            "ses_a1",
            &proj,
            "Billing refactor",
            &[user(), assistant(true, Some("stop"), false)],
        );
        c.execute(
            "UPDATE session SET model = ?1 WHERE id = 'ses_a1'",
            [json!({"id": "claude-opus-4-1", "providerID": "anthropic"}).to_string()],
        )
        .unwrap();
        let found = sessions(&w.cx(vec![opencode_in(7, &proj)]));
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!(
            (f.agent, f.session_id.as_str(), f.pid),
            ("opencode", "ses_a1", 7)
        );
        assert_eq!(f.status, Status::Waiting);
        assert_eq!(f.cwd.as_deref(), Some(proj.as_path()));
        assert_eq!(f.title.as_deref(), Some("Billing refactor"));
        assert_eq!(f.model.as_deref(), Some("anthropic/claude-opus-4-1"));
        assert!(
            f.started_at
                .is_some_and(|t| (t - crate::local::unix_now()).abs() < 600.0)
        );
        assert!(!format!("{found:?}").contains("billing module"));
        drop(c);
    }

    #[test]
    fn the_status_follows_the_newest_message() {
        let w = World::new();
        let c = w.open_db(true);
        let cases = [
            ("ses_idle", vec![], Status::Idle),
            ("ses_asked", vec![user()], Status::Working),
            (
                "ses_streaming",
                vec![user(), assistant(false, None, false)],
                Status::Working,
            ),
            (
                "ses_tools",
                vec![user(), assistant(true, Some("tool-calls"), false)],
                Status::Working,
            ),
            (
                "ses_unknown",
                vec![user(), assistant(true, Some("unknown"), false)],
                Status::Working,
            ),
            (
                "ses_done",
                vec![user(), assistant(true, Some("stop"), false)],
                Status::Waiting,
            ),
            (
                "ses_length",
                vec![user(), assistant(true, Some("length"), false)],
                Status::Waiting,
            ),
            (
                "ses_aborted",
                vec![user(), assistant(false, None, true)],
                Status::Waiting,
            ),
        ];
        let mut procs = Vec::new();
        for (i, (id, msgs, _)) in cases.iter().enumerate() {
            let dir = w.dir(id);
            fs::create_dir_all(&dir).unwrap();
            add(&c, id, &dir, "New session - 2026-01-27T22:23:53.123Z", msgs);
            procs.push(opencode_in(10 + i as u32, &dir));
        }
        let found = sessions(&w.cx(procs));
        let got: Vec<(&str, Status)> = found
            .iter()
            .map(|f| (f.session_id.as_str(), f.status))
            .collect();
        let want: Vec<(&str, Status)> = cases.iter().map(|(id, _, s)| (*id, *s)).collect();
        assert_eq!(got, want);
        // The placeholder title gives way to the directory's name; the
        // model comes from the newest message.
        assert_eq!(found[0].title.as_deref(), Some("ses_idle"));
        assert_eq!(
            found[1].model.as_deref(),
            Some("anthropic/claude-sonnet-4-5")
        );
        assert_eq!(found[5].model.as_deref(), Some("openai/gpt-5"));
        drop(c);
    }

    #[test]
    fn a_database_from_before_the_later_columns_is_read() {
        let w = World::new();
        let proj = w.dir("proj");
        let c = w.open_db(false);
        add(&c, "ses_old", &proj, "Old one", &[user()]);
        let found = sessions(&w.cx(vec![opencode_in(7, &proj)]));
        assert_eq!(ids(&found), [("ses_old", 7)]);
        assert_eq!(
            found[0].model.as_deref(),
            Some("anthropic/claude-sonnet-4-5")
        );
        drop(c);
    }

    #[test]
    fn subagent_archived_stale_and_foreign_sessions_are_not_published() {
        let w = World::new();
        let proj = w.dir("proj");
        let c = w.open_db(true);
        add(&c, "ses_main", &proj, "Main", &[user()]);
        add(
            &c,
            "ses_child",
            &proj,
            "Child session - 2026-01-27T22:23:53.123Z",
            &[user()],
        );
        c.execute("UPDATE session SET parent_id = 'ses_main', time_updated = time_updated + 9000 WHERE id = 'ses_child'", [])
            .unwrap();
        add(&c, "ses_archived", &proj, "Archived", &[user()]);
        c.execute("UPDATE session SET time_archived = 1, time_updated = time_updated + 9000 WHERE id = 'ses_archived'", [])
            .unwrap();
        let found = sessions(&w.cx(vec![opencode_in(7, &proj)]));
        assert_eq!(ids(&found), [("ses_main", 7)]);
        // Updated an hour before the process started: left by another one.
        c.execute(
            "UPDATE session SET time_updated = ?1 WHERE id = 'ses_main'",
            [ms_ago(3600.0)],
        )
        .unwrap();
        assert!(timed_db(&w, &[opencode_since(7, &proj, 600.0)]).is_empty());
        // Not an OpenCode process, or not in the session's directory.
        let shell = Proc {
            comm: "bash".into(),
            argv: vec!["bash".into()],
            ..opencode_in(8, &proj)
        };
        assert!(sessions(&w.cx(vec![shell, opencode_in(9, &w.dir("elsewhere"))])).is_empty());
        drop(c);
    }

    #[test]
    fn the_most_recently_updated_session_of_the_directory_wins() {
        let w = World::new();
        let proj = w.dir("proj");
        let c = w.open_db(true);
        add(&c, "ses_1", &proj, "First", &[user()]);
        add(
            &c,
            "ses_2",
            &proj,
            "Second",
            &[user(), assistant(true, Some("stop"), false), user()],
        );
        let found = sessions(&w.cx(vec![opencode_in(7, &proj)]));
        assert_eq!(ids(&found), [("ses_2", 7)]);
        drop(c);
    }

    #[test]
    fn a_write_lock_leaves_the_last_commit_and_an_exclusive_one_nothing() {
        let w = World::new();
        let proj = w.dir("proj");
        let c = w.open_db(true);
        add(&c, "ses_a1", &proj, "Committed", &[user()]);
        c.execute_batch("BEGIN EXCLUSIVE; UPDATE session SET title = 'uncommitted';")
            .unwrap();
        let cx = w.cx(vec![opencode_in(7, &proj)]);
        let found = sessions(&cx);
        assert_eq!(found[0].title.as_deref(), Some("Committed"));
        c.execute_batch("COMMIT").unwrap();
        drop(c);
        let c = Connection::open(w.db()).unwrap();
        c.execute_batch("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; UPDATE session SET title = 'x'; COMMIT;")
            .unwrap();
        let err = from_db(&w.db(), &[&opencode_in(7, &proj)], None).unwrap_err();
        assert!(matches!(err, DbError::Busy { .. }), "{err:?}");
        assert!(sessions(&cx).is_empty());
        drop(c);
    }

    #[test]
    fn a_closed_database_is_read_without_side_files() {
        let w = World::new();
        let proj = w.dir("proj");
        let c = w.open_db(true);
        add(&c, "ses_a1", &proj, "T", &[user()]);
        drop(c);
        let before: Vec<_> = fs::read_dir(w.data())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            ids(&sessions(&w.cx(vec![opencode_in(7, &proj)]))),
            [("ses_a1", 7)]
        );
        let after: Vec<_> = fs::read_dir(w.data())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(before, after);
    }

    /// A way to spoil the database, run in order.
    type Damage<'a> = Box<dyn Fn() + 'a>;

    #[test]
    fn a_damaged_or_odd_database_yields_nothing_and_no_json_fallback() {
        let w = World::new();
        let proj = w.dir("proj");
        let c = w.open_db(true);
        for i in 0..50 {
            add(
                &c,
                &format!("ses_{i}"),
                &w.dir(&format!("d{i}")),
                "T",
                &[user(), user(), user()],
            );
        }
        add(&c, "ses_a1", &proj, "T", &[user()]);
        drop(c);
        // A JSON tree from before the database, which must not be used.
        write_session(&w, "ses_json", &proj, "From JSON", None);
        let cx = w.cx(vec![opencode_in(7, &proj)]);
        assert_eq!(ids(&sessions(&cx)), [("ses_a1", 7)]);
        let good = fs::read(w.db()).unwrap();
        let db = w.db();
        let cases: Vec<(&str, Damage)> = vec![
            (
                "truncated",
                Box::new(|| fs::write(&db, &good[..good.len() / 3]).unwrap()),
            ),
            ("empty", Box::new(|| fs::write(&db, b"").unwrap())),
            (
                "text",
                Box::new(|| fs::write(&db, "{}".repeat(2048)).unwrap()),
            ),
            (
                "scribbled",
                Box::new(|| {
                    let mut bad = good.clone();
                    for (i, b) in bad.iter_mut().enumerate().skip(100) {
                        *b ^= (i % 11) as u8 + 1;
                    }
                    fs::write(&db, bad).unwrap();
                }),
            ),
            (
                "huge",
                Box::new(|| {
                    fs::write(&db, &good).unwrap();
                    let f = fs::OpenOptions::new().write(true).open(&db).unwrap();
                    f.set_len(sqlite::MAX_DB_BYTES + 1).unwrap();
                }),
            ),
            (
                "directory",
                Box::new(|| {
                    fs::remove_file(&db).unwrap();
                    fs::create_dir(&db).unwrap();
                }),
            ),
            (
                "symlink",
                Box::new(|| {
                    fs::remove_dir(&db).unwrap();
                    let real = w.dir("real.db");
                    fs::write(&real, &good).unwrap();
                    std::os::unix::fs::symlink(&real, &db).unwrap();
                }),
            ),
        ];
        for (name, make) in cases {
            make();
            assert!(sessions(&cx).is_empty(), "{name}");
        }
    }

    #[test]
    fn the_data_directory_and_database_paths() {
        let w = World::new();
        let mut cx = w.cx(vec![]);
        assert_eq!(data_dir(&cx), Some(w.data()));
        cx.env.insert("XDG_DATA_HOME".into(), "relative".into());
        assert_eq!(data_dir(&cx), Some(w.home().join(".local/share/opencode")));
        cx.env.clear();
        assert_eq!(data_dir(&cx), Some(w.home().join(".local/share/opencode")));
        let data = w.data();
        assert_eq!(db_path(&cx, &data), Some(data.join("opencode.db")));
        cx.env
            .insert("OPENCODE_DB".into(), "/elsewhere/o.db".into());
        assert_eq!(db_path(&cx, &data), Some(PathBuf::from("/elsewhere/o.db")));
        cx.env.insert("OPENCODE_DB".into(), "dev.db".into());
        assert_eq!(db_path(&cx, &data), Some(data.join("dev.db")));
        cx.env.insert("OPENCODE_DB".into(), ":memory:".into());
        assert_eq!(db_path(&cx, &data), None);
    }

    #[test]
    fn an_absent_store_costs_nothing() {
        let w = World::new();
        let proj = w.dir("proj");
        assert!(sessions(&w.cx(vec![opencode_in(7, &proj)])).is_empty());
        assert_eq!(
            fs::read_dir(w.data()).unwrap().count(),
            0,
            "nothing was created"
        );
    }

    #[test]
    fn opencode_processes_are_told_by_name() {
        let p = |comm: &str, argv: &[&str]| Proc {
            comm: comm.into(),
            argv: argv.iter().map(|s| s.to_string()).collect(),
            ..Proc::default()
        };
        assert!(is_opencode(&p("opencode", &["opencode"])));
        assert!(is_opencode(&p(
            "opencode",
            &[
                "/usr/lib/node_modules/opencode-ai/node_modules/opencode-linux-x64/bin/opencode",
                "run",
                "hi"
            ]
        )));
        assert!(is_opencode(&p("bun", &["/home/u/.opencode/bin/opencode"])));
        assert!(!is_opencode(&p(
            "node",
            &["node", "/usr/lib/node_modules/opencode-ai/bin/opencode"]
        )));
        assert!(!is_opencode(&p("vim", &["vim", "opencode.json"])));
    }

    #[test]
    fn placeholder_titles_are_recognised() {
        assert!(is_default_title("New session - 2026-01-27T22:23:53.123Z"));
        assert!(is_default_title("Child session - 2025-12-01T00:00:00.000Z"));
        assert!(!is_default_title("New session - about dates"));
        assert!(!is_default_title(
            "Fix the New session - 2026-01-27T22:23:53.123Z"
        ));
        assert!(!is_default_title("Billing refactor"));
    }

    // The JSON tree of releases before the database.

    pub(super) fn write_session(
        w: &World,
        id: &str,
        dir: &Path,
        title: &str,
        extra: Option<Value>,
    ) {
        let t = ms_ago(60.0);
        let mut v = json!({"id": id, "slug": "brave-otter", "version": "1.1.20", "projectID": "4b0ea68d",
            "directory": dir, "title": title, "time": {"created": t, "updated": t + 5}});
        if let Some(Value::Object(extra)) = extra {
            for (k, x) in extra {
                v[k] = x;
            }
        }
        let d = w.data().join("storage/session/4b0ea68d");
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join(format!("{id}.json")), v.to_string()).unwrap();
    }

    pub(super) fn write_messages(w: &World, id: &str, messages: &[Value]) {
        let d = w.data().join(format!("storage/message/{id}"));
        fs::create_dir_all(&d).unwrap();
        let t = ms_ago(60.0) as u64;
        for (i, m) in messages.iter().enumerate() {
            let mid = format!("msg_{:012x}Zz{i}", t + i as u64);
            let mut m = m.clone();
            m["id"] = json!(mid);
            m["sessionID"] = json!(id);
            fs::write(d.join(format!("{mid}.json")), m.to_string()).unwrap();
            let p = w.data().join(format!("storage/part/{mid}"));
            fs::create_dir_all(&p).unwrap();
            fs::write(
                p.join("prt_1.json"),
                json!({"type": "text", "text": PROMPT}).to_string(),
            )
            .unwrap();
        }
    }

    #[test]
    fn the_json_tree_is_read_when_there_is_no_database() {
        let w = World::new();
        let proj = w.dir("proj");
        let other = w.dir("other");
        fs::create_dir_all(&other).unwrap();
        write_session(&w, "ses_j1", &proj, "Json era", None);
        write_messages(
            &w,
            "ses_j1",
            &[user(), assistant(true, Some("tool-calls"), false)],
        );
        write_session(
            &w,
            "ses_j2",
            &other,
            "New session - 2025-11-02T10:00:00.000Z",
            None,
        );
        write_messages(&w, "ses_j2", &[user(), assistant(true, None, false)]);
        write_session(
            &w,
            "ses_child",
            &proj,
            "Child",
            Some(json!({"parentID": "ses_j1"})),
        );
        write_session(
            &w,
            "ses_arch",
            &proj,
            "Archived",
            Some(
                json!({"time": {"created": ms_ago(1.0), "updated": ms_ago(0.5), "archived": ms_ago(0.5)}}),
            ),
        );
        let found = sessions(&w.cx(vec![opencode_in(7, &proj), opencode_in(8, &other)]));
        assert_eq!(ids(&found), [("ses_j1", 7), ("ses_j2", 8)]);
        assert_eq!(found[0].status, Status::Working);
        assert_eq!(found[0].title.as_deref(), Some("Json era"));
        assert_eq!(found[0].model.as_deref(), Some("openai/gpt-5"));
        assert_eq!(
            found[1].status,
            Status::Waiting,
            "completed, from before `finish`"
        );
        assert_eq!(found[1].title.as_deref(), Some("other"));
        assert!(!format!("{found:?}").contains("billing module"));
    }

    #[test]
    fn odd_json_files_are_passed_over() {
        let w = World::new();
        let proj = w.dir("proj");
        let d = w.data().join("storage/session/4b0ea68d");
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join("ses_garbage.json"), "{not json").unwrap();
        fs::write(d.join("ses_array.json"), "[1, 2]").unwrap();
        fs::write(
            d.join("ses_relative.json"),
            json!({"directory": "proj", "title": "x", "time": {"updated": ms_ago(1.0)}})
                .to_string(),
        )
        .unwrap();
        fs::write(d.join("ses_huge.json"), " ".repeat(MAX_JSON_BYTES + 1)).unwrap();
        fs::create_dir(d.join("ses_dir.json")).unwrap();
        let real = w.dir("real.json");
        fs::write(
            &real,
            json!({"directory": proj, "title": "linked", "time": {"updated": ms_ago(1.0)}})
                .to_string(),
        )
        .unwrap();
        std::os::unix::fs::symlink(&real, d.join("ses_link.json")).unwrap();
        let cx = w.cx(vec![opencode_in(7, &proj)]);
        assert!(sessions(&cx).is_empty());
        // A good one beside them is found, its garbage message dir notwithstanding.
        write_session(&w, "ses_ok", &proj, "Ok", None);
        let m = w.data().join("storage/message/ses_ok");
        fs::create_dir_all(&m).unwrap();
        fs::write(m.join("msg_zzz.json"), "garbage").unwrap();
        let found = sessions(&cx);
        assert_eq!(ids(&found), [("ses_ok", 7)]);
        assert_eq!(found[0].status, Status::Idle);
    }

    #[test]
    fn json_sessions_not_touched_since_the_process_started_are_not_read() {
        let w = World::new();
        let proj = w.dir("proj");
        write_session(&w, "ses_old", &proj, "Old", None);
        let file = w.data().join("storage/session/4b0ea68d/ses_old.json");
        let f = fs::OpenOptions::new().write(true).open(&file).unwrap();
        f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3600))
            .unwrap();
        assert!(timed_json(&w, &[opencode_since(7, &proj, 600.0)]).is_empty());
        assert_eq!(
            ids(&timed_json(&w, &[opencode_since(7, &proj, 7200.0)])),
            [("ses_old", 7)]
        );
    }
}

#[cfg(test)]
mod hostile {
    //! OpenCode's files damaged at random, or made of anything: the reader
    //! returns (something or nothing), never panics.

    use super::tests::{World, add, assistant, opencode_in, user, write_messages, write_session};
    use super::*;
    use proptest::prelude::*;

    /// A database of a few sessions, made once per test run.
    fn good_db() -> &'static [u8] {
        static GOOD: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
        GOOD.get_or_init(|| {
            let w = World::new();
            let c = w.open_db(true);
            for i in 0..20 {
                let msgs = [user(), assistant(true, Some("stop"), false)];
                add(&c, &format!("ses_{i}"), Path::new("/work/proj"), "T", &msgs);
            }
            drop(c);
            fs::read(w.db()).unwrap()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn a_damaged_database_never_panics(
            flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..), 1..40),
            cut in proptest::option::of(any::<prop::sample::Index>()),
        ) {
            let mut bytes = good_db().to_vec();
            for (at, x) in flips {
                let i = at.index(bytes.len());
                bytes[i] ^= x;
            }
            if let Some(cut) = cut {
                bytes.truncate(cut.index(bytes.len()));
            }
            let tmp = tempfile::tempdir().unwrap();
            let db = tmp.path().join("opencode.db");
            fs::write(&db, &bytes).unwrap();
            let p = opencode_in(7, Path::new("/work/proj"));
            let _ = from_db(&db, &[&p], Some(0.0));
        }

        #[test]
        fn any_json_tree_never_panics(
            session in prop_oneof![
                Just(None),
                any::<Vec<u8>>().prop_map(Some),
                "[ -~]{0,200}".prop_map(|s| Some(s.into_bytes())),
            ],
            message in any::<Vec<u8>>(),
            title in ".{0,40}",
        ) {
            let w = World::new();
            let proj = w.dir("proj");
            write_session(&w, "ses_a", &proj, &title, None);
            write_messages(&w, "ses_a", &[user()]);
            if let Some(bytes) = session {
                fs::write(w.data().join("storage/session/4b0ea68d/ses_b.json"), bytes).unwrap();
            }
            let m = w.data().join("storage/message/ses_a/msg_ffffffffffff.json");
            fs::write(m, message).unwrap();
            let p = opencode_in(7, &proj);
            let found = from_json(&w.data().join("storage"), &[&p], Some(0.0));
            prop_assert!(found.len() <= 1);
        }
    }
}
