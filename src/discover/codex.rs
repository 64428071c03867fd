//! Codex CLI's live sessions.
//!
//! Codex keeps its files in `$CODEX_HOME`, else `~/.codex` (the process's
//! own variable first, then the refresher's). Each session is a rollout,
//! `sessions/YYYY/MM/DD/rollout-<YYYY-MM-DDThh-mm-ss>-<uuid>.jsonl`, one
//! JSON object per line, `{"timestamp", "type", "payload"}`:
//!
//! - `session_meta` first: `payload.id` (the session's id, the file name's
//!   uuid), `payload.cwd`, `payload.timestamp`, and the instructions, which
//!   can make the line long;
//! - `turn_context` at each turn: `payload.model`, `payload.cwd`;
//! - `event_msg`, `payload.type` among others `task_started` (a turn
//!   began; `turn_started` in newer versions), `task_complete`
//!   (`turn_complete`: the turn ended, Codex waits for the user),
//!   `turn_aborted` (the user interrupted it), `user_message` (prompt text,
//!   never read);
//! - `response_item`, `compacted`: never read.
//!
//! Approval requests are not written to the rollout (codex-rs
//! `rollout/src/policy.rs` persists neither `exec_approval_request` nor
//! `apply_patch_approval_request`), so a session waiting for an approval
//! shows `working`. The name `/rename` gives a session is appended to
//! `session_index.jsonl`, `{"id", "thread_name", "updated_at"}`, the newest
//! entry winning. Checked against the openai/codex sources (`codex-rs`:
//! `protocol/src/protocol.rs` for `RolloutItem`, `SessionMetaLine`,
//! `TurnContextItem` and the event names with their aliases;
//! `rollout/src/recorder.rs`, `policy.rs`, `session_index.rs`).
//!
//! Which rollout is a process's: the one it holds open (`/proc/PID/fd`),
//! the best evidence; else, among the rollouts of the newest day
//! directories, the most recently written one whose `session_meta` names
//! the process's working directory and that was written since the
//! process started, each rollout going to one process (the newest first).
//! A `codex` process whose child is also `codex` (the npm launcher) is
//! passed over for the child. The rollout is read at both ends only, 256 KiB
//! from its start (the first line) and 512 KiB from its end; the session
//! index, 256 KiB from its end.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Context, Found, Proc, Status, json_lines, session_id, text};
use crate::limits::MAX_TITLE_CHARS;
use crate::store::bounded::{self, Part};

/// The agent's name.
const AGENT: &str = "codex";

/// How much of a rollout is read from each end, and of the session index
/// from its end.
const HEAD: usize = 256 * 1024;
const TAIL: usize = 512 * 1024;
const INDEX_TAIL: usize = 256 * 1024;

/// Without an open file to go by, how far back the rollouts are looked
/// through: day directories, and files.
const MAX_DAYS: usize = 14;
const MAX_ROLLOUTS: usize = 512;

/// The most rollouts whose first line is read in one pass to match them
/// to processes by their working directory.
const MAX_METAS: usize = 64;

/// Seconds a rollout's last write may seem to precede its process's start
/// (clock granularity) and still be its.
const SLACK: f64 = 2.0;

/// The live sessions of the Codex processes in `cx`.
pub(super) fn sessions(cx: &Context) -> Vec<Found> {
    let codex: Vec<&Proc> = cx.named("codex").collect();
    let launchers: HashSet<u32> = codex.iter().map(|p| p.ppid).collect();
    let mut procs: Vec<&Proc> = codex
        .into_iter()
        .filter(|p| !launchers.contains(&p.pid))
        .collect();
    // The newest process first: it takes the newest rollout.
    procs.sort_by_key(|p| std::cmp::Reverse(p.start));
    let mut taken: HashSet<PathBuf> = HashSet::new();
    let mut out = Vec::new();
    let mut unmatched = Vec::new();
    for p in procs {
        let home = cx.agent_dir(Some(p), "CODEX_HOME", ".codex");
        let sessions = home.join("sessions");
        let open = p
            .open_files
            .iter()
            .find(|f| f.starts_with(&sessions) && is_rollout(f) && !taken.contains(*f));
        match open {
            Some(path) => {
                taken.insert(path.clone());
                out.extend(session(cx, p, &home, path));
            }
            None => unmatched.push((p, home)),
        }
    }
    let mut recent: Vec<(PathBuf, Vec<Rollout>)> = Vec::new();
    let mut cwds: std::collections::HashMap<PathBuf, Option<PathBuf>> = Default::default();
    for (p, home) in unmatched {
        let Some(cwd) = p.cwd.as_deref() else {
            continue;
        };
        if !recent.iter().any(|(h, _)| *h == home) {
            recent.push((home.clone(), recent_rollouts(&home.join("sessions"))));
        }
        let Some((_, rollouts)) = recent.iter().find(|(h, _)| *h == home) else {
            continue;
        };
        let since = p.started_at.unwrap_or(f64::NEG_INFINITY) - SLACK;
        let mut mine = None;
        for r in rollouts
            .iter()
            .filter(|r| r.modified >= since && !taken.contains(&r.path))
        {
            if !cwds.contains_key(&r.path) && cwds.len() >= MAX_METAS {
                break;
            }
            let named = cwds
                .entry(r.path.clone())
                .or_insert_with(|| meta_cwd(&r.path));
            if named.as_deref() == Some(cwd) {
                mine = Some(r);
                break;
            }
        }
        if let Some(r) = mine {
            taken.insert(r.path.clone());
            out.extend(session(cx, p, &home, &r.path));
        }
    }
    out
}

/// A rollout file and when it was last written.
#[derive(Debug)]
struct Rollout {
    path: PathBuf,
    modified: f64,
}

/// Whether `path` is named like a rollout.
fn is_rollout(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
}

/// The rollouts of the newest day directories under `sessions`, the most
/// recently written first.
fn recent_rollouts(sessions: &Path) -> Vec<Rollout> {
    let mut days = Vec::new();
    'years: for year in numbered(sessions) {
        for month in numbered(&year) {
            for day in numbered(&month) {
                days.push(day);
                if days.len() >= MAX_DAYS {
                    break 'years;
                }
            }
        }
    }
    let mut out = Vec::new();
    for day in days {
        let Ok(entries) = std::fs::read_dir(&day) else {
            continue;
        };
        for e in entries.flatten().take(MAX_ROLLOUTS) {
            let path = e.path();
            let Ok(meta) = e.metadata() else { continue };
            if !meta.is_file() || !is_rollout(&path) {
                continue;
            }
            let modified = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0.0, |d| d.as_secs_f64());
            out.push(Rollout { path, modified });
            if out.len() >= MAX_ROLLOUTS {
                break;
            }
        }
    }
    out.sort_by(|a, b| b.modified.total_cmp(&a.modified));
    out
}

/// The subdirectories of `dir` named by digits alone, the highest first.
fn numbered(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut named: Vec<(u32, PathBuf)> = entries
        .flatten()
        .take(4096)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let n = e.file_name().to_str()?.parse().ok()?;
            Some((n, e.path()))
        })
        .collect();
    named.sort_by_key(|n| std::cmp::Reverse(n.0));
    named.into_iter().map(|(_, p)| p).collect()
}

/// The first line of the rollout at `path`, if it is a `session_meta`.
fn meta(path: &Path) -> Option<Value> {
    let head = bounded::read_part(path, Part::Head(HEAD)).ok()??;
    let first = json_lines(&head).into_iter().next()?;
    (first["type"] == "session_meta").then(|| first["payload"].clone())
}

/// The working directory the rollout at `path` names first.
fn meta_cwd(path: &Path) -> Option<PathBuf> {
    meta(path)?["cwd"].as_str().map(PathBuf::from)
}

/// The session of process `p` whose rollout is at `path`.
fn session(cx: &Context, p: &Proc, home: &Path, path: &Path) -> Option<Found> {
    let meta = meta(path).unwrap_or(Value::Null);
    let id = session_id(&meta["id"]).or_else(|| {
        let name = path.file_name()?.to_str()?.strip_suffix(".jsonl")?;
        // `rollout-YYYY-MM-DDThh-mm-ss-` and the uuid's 36 characters.
        let uuid = name.get(name.len().checked_sub(36)?..)?;
        session_id(&Value::from(uuid))
    })?;
    let tail = bounded::read_part(path, Part::Tail(TAIL)).ok()??;
    let mut model = None;
    let mut status = Status::Idle;
    for line in json_lines(&tail) {
        let payload = &line["payload"];
        match line["type"].as_str() {
            Some("turn_context") => {
                model = text(&payload["model"], 128).or(model);
            }
            Some("event_msg") => match payload["type"].as_str() {
                Some("task_started" | "turn_started") => status = Status::Working,
                Some("task_complete" | "turn_complete") => status = Status::Waiting,
                Some("turn_aborted") => status = Status::Idle,
                _ => {}
            },
            _ => {}
        }
    }
    let cwd = meta["cwd"]
        .as_str()
        .filter(|c| c.starts_with('/'))
        .map(PathBuf::from)
        .or_else(|| p.cwd.clone());
    let started_at = meta["timestamp"]
        .as_str()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.timestamp_millis() as f64 / 1000.0)
        .filter(|t| *t > 0.0 && *t <= cx.now + 86_400.0);
    Some(Found {
        status,
        cwd,
        title: thread_name(home, &id),
        model,
        started_at,
        ..Found::new(AGENT, id, p.pid)
    })
}

/// The newest name `session_index.jsonl` gives session `id`.
fn thread_name(home: &Path, id: &str) -> Option<String> {
    let span =
        bounded::read_part(&home.join("session_index.jsonl"), Part::Tail(INDEX_TAIL)).ok()??;
    json_lines(&span)
        .iter()
        .rev()
        .filter(|e| e["id"].as_str() == Some(id))
        .find_map(|e| text(&e["thread_name"], MAX_TITLE_CHARS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::tests::{proc_named, write};

    const ID: &str = "5973b6c0-94b8-487b-a530-2aeb6098ae0e";

    fn rollout_name(id: &str) -> String {
        format!("rollout-2026-01-02T10-20-30-{id}.jsonl")
    }

    /// A rollout as Codex writes one: the meta (long instructions), a turn
    /// with the user's prompt, its context, events and items.
    fn rollout(id: &str, cwd: &str, events: &[&str]) -> String {
        let mut lines = vec![
            format!(
                r#"{{"timestamp":"2026-01-02T10:20:30.123Z","type":"session_meta","payload":{{"id":"{id}","timestamp":"2026-01-02T10:20:30.000Z","cwd":"{cwd}","originator":"codex_cli_rs","cli_version":"0.77.0","instructions":"{}","source":"cli","model_provider":"openai","git":{{"branch":"main"}}}}}}"#,
                "be careful ".repeat(2000)
            ),
            format!(
                r#"{{"timestamp":"2026-01-02T10:20:31.000Z","type":"turn_context","payload":{{"cwd":"{cwd}","approval_policy":"on-request","sandbox_policy":{{"type":"workspace-write"}},"model":"gpt-5.1-codex","effort":"medium","summary":"auto"}}}}"#
            ),
            r#"{"timestamp":"2026-01-02T10:20:31.100Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"the word ostrich"}]}}"#.to_string(),
            r#"{"timestamp":"2026-01-02T10:20:31.200Z","type":"event_msg","payload":{"type":"user_message","message":"the word ostrich","images":[]}}"#.to_string(),
        ];
        for e in events {
            lines.push(format!(
                r#"{{"timestamp":"2026-01-02T10:20:32.000Z","type":"event_msg","payload":{{"type":"{e}","turn_id":"1"}}}}"#
            ));
        }
        lines.join("\n") + "\n"
    }

    struct World {
        _tmp: tempfile::TempDir,
        cx: Context,
        home: PathBuf,
        day: PathBuf,
    }

    fn world() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home/.codex");
        let mut p = proc_named(5151, "codex");
        p.cwd = Some("/w/app".into());
        p.started_at = Some(0.0);
        let cx = Context {
            home: tmp.path().join("home"),
            procs: vec![p],
            now: 1_767_400_000.0,
            ..Context::default()
        };
        let day = home.join("sessions/2026/01/02");
        World {
            _tmp: tmp,
            cx,
            home,
            day,
        }
    }

    #[test]
    fn a_running_session_by_its_cwd_with_model_status_and_name() {
        let w = world();
        write(
            &w.day.join(rollout_name(ID)),
            &rollout(ID, "/w/app", &["task_started"]),
        );
        let found = sessions(&w.cx);
        assert_eq!(
            found,
            [Found {
                status: Status::Working,
                cwd: Some("/w/app".into()),
                model: Some("gpt-5.1-codex".into()),
                started_at: Some(1_767_349_230.0),
                ..Found::new(AGENT, ID, 5151)
            }]
        );
        assert!(!format!("{found:?}").contains("ostrich"));
        for (events, want) in [
            (&["task_started", "task_complete"][..], Status::Waiting),
            (&["turn_started"], Status::Working),
            (&["turn_started", "turn_complete"], Status::Waiting),
            (&["task_started", "turn_aborted"], Status::Idle),
            (&[], Status::Idle),
        ] {
            write(
                &w.day.join(rollout_name(ID)),
                &rollout(ID, "/w/app", events),
            );
            assert_eq!(sessions(&w.cx)[0].status, want, "{events:?}");
        }
        write(
            &w.home.join("session_index.jsonl"),
            &format!(
                "{{\"id\":\"{ID}\",\"thread_name\":\"old\",\"updated_at\":\"x\"}}\n\
                 {{\"id\":\"other\",\"thread_name\":\"not this\",\"updated_at\":\"x\"}}\n\
                 {{\"id\":\"{ID}\",\"thread_name\":\"release notes\",\"updated_at\":\"x\"}}\n"
            ),
        );
        assert_eq!(sessions(&w.cx)[0].title.as_deref(), Some("release notes"));
    }

    #[test]
    fn an_open_rollout_is_the_evidence_and_each_goes_to_one_process() {
        let mut w = world();
        let other = "11111111-2222-4333-8444-555555555555";
        let open = w.day.join(rollout_name(ID));
        write(&open, &rollout(ID, "/elsewhere", &["task_started"]));
        write(
            &w.day.join(rollout_name(other)),
            &rollout(other, "/w/app", &[]),
        );
        w.cx.procs[0].open_files = vec![open];
        let mut second = proc_named(5152, "codex");
        second.cwd = Some("/w/app".into());
        second.started_at = Some(0.0);
        let mut third = second.clone();
        third.pid = 5153;
        w.cx.procs.extend([second, third]);
        let mut found: Vec<(u32, String)> = sessions(&w.cx)
            .into_iter()
            .map(|f| (f.pid, f.session_id))
            .collect();
        found.sort();
        assert_eq!(found, [(5151, ID.to_string()), (5152, other.to_string())]);
    }

    #[test]
    fn a_rollout_older_than_the_process_or_of_another_cwd_is_not_its() {
        let mut w = world();
        write(&w.day.join(rollout_name(ID)), &rollout(ID, "/w/other", &[]));
        assert!(sessions(&w.cx).is_empty());
        write(&w.day.join(rollout_name(ID)), &rollout(ID, "/w/app", &[]));
        // Started after every file was written.
        w.cx.procs[0].started_at = Some(1e15);
        assert!(sessions(&w.cx).is_empty());
    }

    #[test]
    fn the_npm_launcher_gives_way_to_its_child() {
        let mut w = world();
        write(&w.day.join(rollout_name(ID)), &rollout(ID, "/w/app", &[]));
        let mut launcher = proc_named(5000, "node");
        launcher.argv = vec!["node".into(), "/usr/bin/codex".into()];
        launcher.cwd = Some("/w/app".into());
        w.cx.procs[0].ppid = 5000;
        w.cx.procs[0].start = 2;
        w.cx.procs.push(launcher);
        let found = sessions(&w.cx);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].pid, 5151);
    }

    #[test]
    fn hostile_rollouts_give_nothing_or_less() {
        let w = world();
        let path = w.day.join(rollout_name(ID));
        for bad in [
            "",
            "\u{0}\u{1}",
            "[]\n",
            "{\"type\":\"session_meta\",\"payload\":7}\n",
            "{\n",
        ] {
            write(&path, bad);
            // No meta: the cwd cannot be matched, so the session is not claimed.
            assert!(sessions(&w.cx).is_empty(), "{bad:?}");
        }
        // A meta with odd values: the id from the file name.
        write(
            &path,
            "{\"type\":\"session_meta\",\"payload\":{\"id\":[1],\"cwd\":\"/w/app\",\"timestamp\":\"yesterday\"}}\n\
             {\"type\":\"turn_context\",\"payload\":{\"model\":{\"x\":1}}}\n\
             {\"type\":\"event_msg\",\"payload\":{\"type\":7}}\n",
        );
        let f = &sessions(&w.cx)[0];
        assert_eq!(
            (
                f.session_id.as_str(),
                f.model.as_deref(),
                f.started_at,
                f.status
            ),
            (ID, None, None, Status::Idle)
        );
        // A directory named like a rollout, a symlink to one: not read.
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir_all(&path).unwrap();
        assert!(sessions(&w.cx).is_empty());
        std::fs::remove_dir(&path).unwrap();
        let real = w.home.join("real.jsonl");
        write(&real, &rollout(ID, "/w/app", &[]));
        std::os::unix::fs::symlink(&real, &path).unwrap();
        assert!(sessions(&w.cx).is_empty());
    }

    #[test]
    fn a_huge_rollout_costs_its_two_ends() {
        let mut w = world();
        let path = w.day.join(rollout_name(ID));
        let text = rollout(ID, "/w/app", &[]);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut f = std::fs::File::create(&path).unwrap();
        use std::io::{Seek as _, Write as _};
        f.write_all(text.as_bytes()).unwrap();
        f.seek(std::io::SeekFrom::Start(3 << 30)).unwrap();
        writeln!(
            f,
            "\n{{\"type\":\"turn_context\",\"payload\":{{\"model\":\"gpt-5.2\"}}}}\n\
             {{\"type\":\"event_msg\",\"payload\":{{\"type\":\"task_started\"}}}}"
        )
        .unwrap();
        drop(f);
        w.cx.procs[0].open_files = vec![path];
        let f = &sessions(&w.cx)[0];
        assert_eq!(
            (f.model.as_deref(), f.status),
            (Some("gpt-5.2"), Status::Working)
        );
    }
}
