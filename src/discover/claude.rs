//! Claude Code's live sessions.
//!
//! Claude Code keeps its files in `$CLAUDE_CONFIG_DIR`, else `~/.claude`
//! (the process's own variable first, then the refresher's). Each running
//! process keeps `sessions/<pid>.json`, rewritten as its state changes:
//!
//! ```json
//! {"pid":4242,"sessionId":"0f8e…","cwd":"/home/u/src/app","startedAt":1767000000000,
//!  "procStart":"123456","version":"2.1.220","kind":"interactive","entrypoint":"cli",
//!  "name":"app-13","nameSource":"derived","status":"busy","updatedAt":1767000100000,
//!  "statusUpdatedAt":1767000100000}
//! ```
//!
//! `status` is `busy` while a turn runs, `waiting` while Claude waits for an
//! answer (a permission prompt, a question), `idle` at the prompt and
//! `shell` at the prompt with a shell command of the user's running;
//! `procStart` is the process's start time as `/proc/PID/stat` has it on
//! Linux (a date on macOS), which tells a live process from a reused pid.
//! Older versions wrote `pid-<n>.json` files with `session_id` and `cwd`
//! only; they are not read (every one of them left behind is an orphan). The
//! transcript is `projects/<slug>/<session id>.jsonl`, the slug being the
//! working directory with every character other than an ASCII letter or
//! digit replaced by `-` (one per UTF-16 unit, as Claude's JavaScript
//! counts); each line is an entry with a `type`: `custom-title` (the name
//! `/rename` gave, `customTitle`), `ai-title` (Claude's generated title,
//! `aiTitle`), `agent-name` (`agentName`), `summary` (`summary`),
//! `assistant` (a reply, with `message.model`), `user` and others, among
//! them `last-prompt`, which holds prompt text and is never read.
//!
//! Checked against the Claude Code documentation of `CLAUDE_CONFIG_DIR` and
//! sessions, the shapes Claude Code 2.1.x writes as reported in its issue
//! tracker (anthropics/claude-code: the session registry, `/rename` and the
//! project directory encoding), and tools that read these files.
//!
//! A session's process is the pid of its file, if it runs a program named
//! `claude` (see [`Proc::named`]) and, where `procStart` is a number, started
//! then. Its status is the file's (`idle` and `shell` after a turn are
//! `waiting`: Claude waits for the user's next prompt, as `presence hook
//! claude`'s `Stop` says); the title is the last `/rename` name, else a
//! name the user gave that Claude did not derive, else the last generated
//! title (`ai-title`, `agent-name`, `summary`), else the working
//! directory's name; the model is that of the last reply of the main
//! conversation (subagents' replies are skipped, and so is `<synthetic>`).
//! The transcript is read at both ends only, 64 KiB from its start and
//! 512 KiB from its end, whatever its size.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Context, Found, Proc, Status, file_safe, json_lines, millis, session_id, text};
use crate::limits::MAX_TITLE_CHARS;
use crate::store::bounded::{self, Part};

/// The agent's name.
const AGENT: &str = "claude-code";

/// The most a `sessions/<pid>.json` is read: a real one is a few hundred bytes.
const MAX_STATE: usize = 64 * 1024;

/// How much of a transcript is read from each end.
const HEAD: usize = 64 * 1024;
const TAIL: usize = 512 * 1024;

/// The most project directories looked through for a transcript whose
/// directory the slug does not name.
const MAX_PROJECTS: usize = 4096;

/// The live sessions of the Claude Code processes in `cx`.
pub(super) fn sessions(cx: &Context) -> Vec<Found> {
    cx.named("claude").filter_map(|p| session(cx, p)).collect()
}

/// The session of process `p`, if its state file says one.
fn session(cx: &Context, p: &Proc) -> Option<Found> {
    let dir = cx.agent_dir(Some(p), "CLAUDE_CONFIG_DIR", ".claude");
    let path = dir.join("sessions").join(format!("{}.json", p.pid));
    let bytes = bounded::read_path(&path, MAX_STATE).ok()??;
    let state: Value = serde_json::from_slice(&bytes).ok()?;
    if !state.is_object() {
        return None;
    }
    let id = session_id(&state["sessionId"])?;
    if state["pid"]
        .as_u64()
        .is_some_and(|pid| pid != u64::from(p.pid))
    {
        return None;
    }
    let proc_start = match &state["procStart"] {
        Value::String(s) => s.trim().parse::<u64>().ok(),
        v => v.as_u64(),
    };
    if proc_start.is_some_and(|s| p.start != 0 && s != p.start) {
        return None;
    }
    let cwd = state["cwd"]
        .as_str()
        .filter(|c| c.starts_with('/'))
        .map(PathBuf::from)
        .or_else(|| p.cwd.clone());
    let transcript = cwd
        .as_deref()
        .filter(|_| file_safe(&id))
        .and_then(|cwd| transcript(&dir, cwd, &id))
        .unwrap_or_default();
    // A name the user gave (`claude -n`, a name source other than Claude's
    // own derivation).
    let named = match state["nameSource"].as_str() {
        Some(source) if source != "derived" => text(&state["name"], MAX_TITLE_CHARS),
        _ => None,
    };
    let title = transcript
        .custom
        .clone()
        .or(named)
        .or_else(|| transcript.generated.clone());
    let status = match state["status"].as_str() {
        Some("busy") => Status::Working,
        Some("waiting") => Status::Waiting,
        Some("idle" | "shell") if transcript.replied => Status::Waiting,
        Some(_) => Status::Idle,
        // No status (sessions driven through the SDK): whose entry came last.
        None => match transcript.last {
            Some(Turn::User) => Status::Working,
            Some(Turn::Assistant { done: true }) => Status::Waiting,
            Some(Turn::Assistant { done: false }) => Status::Working,
            None => Status::Idle,
        },
    };
    Some(Found {
        status,
        cwd,
        title,
        model: transcript.model,
        started_at: millis(&state["startedAt"], cx.now),
        ..Found::new(AGENT, id, p.pid)
    })
}

/// Whose entry of the main conversation came last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Turn {
    User,
    /// A reply; `done` when it ended the turn (`stop_reason` `end_turn`).
    Assistant {
        done: bool,
    },
}

/// What a transcript says of its session.
#[derive(Debug, Default, PartialEq)]
struct Transcript {
    /// The last `/rename` name.
    custom: Option<String>,
    /// The last generated title.
    generated: Option<String>,
    /// The model of the last reply.
    model: Option<String>,
    /// Whether Claude has replied at all.
    replied: bool,
    last: Option<Turn>,
}

/// Claude Code's project directory name for `cwd`.
fn slug(cwd: &Path) -> String {
    cwd.to_string_lossy()
        .chars()
        .flat_map(|c| {
            let (keep, n) = match c.is_ascii_alphanumeric() {
                true => (c, 1),
                false => ('-', c.len_utf16()),
            };
            std::iter::repeat_n(keep, n)
        })
        .collect()
}

/// The transcript of session `id` under `dir`: in the project directory of
/// `cwd`, else in any project directory (a long path's slug is shortened).
fn transcript(dir: &Path, cwd: &Path, id: &str) -> Option<Transcript> {
    let projects = dir.join("projects");
    let name = format!("{id}.jsonl");
    let direct = projects.join(slug(cwd)).join(&name);
    let path = match std::fs::symlink_metadata(&direct) {
        Ok(_) => direct,
        Err(_) => std::fs::read_dir(&projects)
            .ok()?
            .flatten()
            .take(MAX_PROJECTS)
            .map(|e| e.path().join(&name))
            .find(|p| std::fs::symlink_metadata(p).is_ok())?,
    };
    read_transcript(&path)
}

/// What the two ends of the transcript at `path` say.
fn read_transcript(path: &Path) -> Option<Transcript> {
    let tail = bounded::read_part(path, Part::Tail(TAIL)).ok()??;
    let mut t = Transcript::default();
    if !tail.whole() {
        let head = bounded::read_part(path, Part::Head(HEAD)).ok()??;
        for entry in json_lines(&head) {
            read_entry(&mut t, &entry);
        }
    }
    for entry in json_lines(&tail) {
        read_entry(&mut t, &entry);
    }
    Some(t)
}

/// Learns from one transcript entry; reads no field of any entry but the
/// titles' and a reply's model and stop reason.
fn read_entry(t: &mut Transcript, entry: &Value) {
    let title = |field: &str| text(&entry[field], MAX_TITLE_CHARS);
    match entry["type"].as_str() {
        Some("custom-title") => t.custom = title("customTitle").or(t.custom.take()),
        Some("ai-title") => t.generated = title("aiTitle").or(t.generated.take()),
        Some("agent-name") => t.generated = title("agentName").or(t.generated.take()),
        Some("summary") => t.generated = title("summary").or(t.generated.take()),
        _ if entry["isSidechain"] == Value::Bool(true) => {}
        Some("assistant") => {
            t.replied = true;
            let message = &entry["message"];
            if let Some(model) = text(&message["model"], 128).filter(|m| !m.starts_with('<')) {
                t.model = Some(model);
            }
            t.last = Some(Turn::Assistant {
                done: message["stop_reason"].as_str() == Some("end_turn"),
            });
        }
        Some("user") => t.last = Some(Turn::User),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::tests::{proc_named, write};

    const ID: &str = "0f8e1d2c-3b4a-4596-8776-a5b4c3d2e1f0";

    fn state(pid: u32, start: u64, status: &str, extra: &str) -> String {
        format!(
            r#"{{"pid":{pid},"sessionId":"{ID}","cwd":"/home/u/src/my_app.v2","startedAt":1767000000000,
            "procStart":"{start}","version":"2.1.220","peerProtocol":1,"kind":"interactive",
            "entrypoint":"cli","name":"my_app.v2-13","nameSource":"derived","status":"{status}",
            "updatedAt":1767000100000,"statusUpdatedAt":1767000100000{extra}}}"#
        )
    }

    /// A transcript as Claude Code writes one: the user's prompt (with a
    /// secret word in it), replies, titles, bookkeeping entries.
    fn transcript_lines(last_prompt: &str) -> String {
        [
            r#"{"type":"permission-mode","permissionMode":"default","sessionId":"S"}"#.to_string(),
            format!(
                r#"{{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/u/src/my_app.v2","sessionId":"S","version":"2.1.220","type":"user","message":{{"role":"user","content":"{last_prompt}"}},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}}"#
            ),
            r#"{"parentUuid":"u1","isSidechain":false,"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5-20251101","content":[{"type":"text","text":"Sure."}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":5}},"uuid":"a1"}"#.to_string(),
            r#"{"type":"ai-title","aiTitle":"Fix the parser race","sessionId":"S"}"#.to_string(),
            r#"{"parentUuid":"a1","isSidechain":true,"type":"assistant","message":{"model":"claude-haiku-4-5","role":"assistant","content":[],"stop_reason":null}}"#.to_string(),
            r#"{"parentUuid":"a1","isSidechain":false,"type":"assistant","message":{"model":"<synthetic>","role":"assistant","content":[],"stop_reason":"end_turn"}}"#.to_string(),
            format!(r#"{{"type":"last-prompt","lastPrompt":"{last_prompt}","sessionId":"S"}}"#),
        ]
        .join("\n")
            + "\n"
    }

    struct World {
        _tmp: tempfile::TempDir,
        cx: Context,
        dir: PathBuf,
    }

    /// A home with a Claude Code process (pid 4242, started at tick 777).
    fn world() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let dir = home.join(".claude");
        let mut p = proc_named(4242, "claude");
        p.start = 777;
        let cx = Context {
            home,
            procs: vec![p],
            now: 1_767_000_200.0,
            ..Context::default()
        };
        World { _tmp: tmp, cx, dir }
    }

    fn project(w: &World) -> PathBuf {
        w.dir.join("projects/-home-u-src-my-app-v2")
    }

    #[test]
    fn a_live_session_with_its_title_model_and_status() {
        let w = world();
        write(
            &w.dir.join("sessions/4242.json"),
            &state(4242, 777, "busy", ""),
        );
        write(
            &project(&w).join(format!("{ID}.jsonl")),
            &transcript_lines("use the word ostrich"),
        );
        let found = sessions(&w.cx);
        assert_eq!(
            found,
            [Found {
                status: Status::Working,
                cwd: Some("/home/u/src/my_app.v2".into()),
                title: Some("Fix the parser race".into()),
                model: Some("claude-opus-4-5-20251101".into()),
                started_at: Some(1_767_000_000.0),
                ..Found::new(AGENT, ID, 4242)
            }]
        );
        assert!(!format!("{found:?}").contains("ostrich"));
        for (word, want) in [
            ("waiting", Status::Waiting),
            ("idle", Status::Waiting),
            ("shell", Status::Waiting),
            ("starting", Status::Idle),
        ] {
            write(
                &w.dir.join("sessions/4242.json"),
                &state(4242, 777, word, ""),
            );
            assert_eq!(sessions(&w.cx)[0].status, want, "{word}");
        }
    }

    #[test]
    fn before_any_reply_idle_is_idle_and_the_title_is_left_to_the_cwd() {
        let w = world();
        write(
            &w.dir.join("sessions/4242.json"),
            &state(4242, 777, "idle", ""),
        );
        let f = &sessions(&w.cx)[0];
        assert_eq!(
            (f.status, f.title.as_deref(), f.model.as_deref()),
            (Status::Idle, None, None)
        );
    }

    #[test]
    fn a_rename_wins_over_the_generated_title_and_a_user_name_over_that() {
        let w = world();
        let t = project(&w).join(format!("{ID}.jsonl"));
        let mut lines = transcript_lines("x");
        lines.push_str(r#"{"type":"custom-title","customTitle":"auth refactor","sessionId":"S"}"#);
        lines.push('\n');
        write(&t, &lines);
        write(
            &w.dir.join("sessions/4242.json"),
            &state(4242, 777, "idle", ""),
        );
        assert_eq!(sessions(&w.cx)[0].title.as_deref(), Some("auth refactor"));
        write(&t, &transcript_lines("x"));
        let given = r#","name":"nightly","nameSource":"user""#;
        write(
            &w.dir.join("sessions/4242.json"),
            &state(4242, 777, "idle", "")
                .replace(r#","name":"my_app.v2-13","nameSource":"derived""#, given),
        );
        assert_eq!(sessions(&w.cx)[0].title.as_deref(), Some("nightly"));
    }

    #[test]
    fn the_transcript_is_found_when_the_slug_is_not_its_directory() {
        let w = world();
        write(
            &w.dir.join("sessions/4242.json"),
            &state(4242, 777, "idle", ""),
        );
        write(
            &w.dir
                .join("projects/-home-u-src-my-app-v2-1a2b3c")
                .join(format!("{ID}.jsonl")),
            &transcript_lines("x"),
        );
        assert_eq!(
            sessions(&w.cx)[0].model.as_deref(),
            Some("claude-opus-4-5-20251101")
        );
        assert_eq!(slug(Path::new("/a/b_c.d é🎉")), "-a-b-c-d----");
    }

    #[test]
    fn claude_config_dir_the_processes_own_first() {
        let mut w = world();
        let own = w.cx.home.join("own");
        let env = w.cx.home.join("env");
        w.cx.env
            .insert("CLAUDE_CONFIG_DIR".into(), env.clone().into());
        write(
            &env.join("sessions/4242.json"),
            &state(4242, 777, "busy", ""),
        );
        assert_eq!(sessions(&w.cx).len(), 1);
        w.cx.procs[0]
            .env
            .insert("CLAUDE_CONFIG_DIR".into(), own.clone().into());
        assert!(sessions(&w.cx).is_empty());
        write(
            &own.join("sessions/4242.json"),
            &state(4242, 777, "busy", ""),
        );
        assert_eq!(sessions(&w.cx).len(), 1);
    }

    #[test]
    fn only_a_process_that_looks_like_claude_and_started_then_counts() {
        let mut w = world();
        write(
            &w.dir.join("sessions/4242.json"),
            &state(4242, 777, "busy", ""),
        );
        // A reused pid: another start time.
        w.cx.procs[0].start = 778;
        assert!(sessions(&w.cx).is_empty());
        w.cx.procs[0].start = 777;
        // The file of another pid.
        write(
            &w.dir.join("sessions/4242.json"),
            &state(4243, 777, "busy", ""),
        );
        assert!(sessions(&w.cx).is_empty());
        write(
            &w.dir.join("sessions/4242.json"),
            &state(4242, 777, "busy", ""),
        );
        // A process of another program.
        w.cx.procs[0] = Proc {
            comm: "vim".into(),
            argv: vec!["vim".into()],
            ..w.cx.procs[0].clone()
        };
        assert!(sessions(&w.cx).is_empty());
        // A versioned native binary, started as `claude`.
        w.cx.procs[0].comm = "2.1.220".into();
        w.cx.procs[0].argv = vec!["claude".into(), "--resume".into()];
        assert_eq!(sessions(&w.cx).len(), 1);
        // Through node, as `claude`.
        w.cx.procs[0].comm = "node".into();
        w.cx.procs[0].argv = vec!["node".into(), "/usr/lib/node_modules/.bin/claude".into()];
        assert_eq!(sessions(&w.cx).len(), 1);
    }

    #[test]
    fn hostile_state_files_and_transcripts_give_nothing_or_less() {
        let w = world();
        let state_file = w.dir.join("sessions/4242.json");
        for bad in [
            "",
            "null",
            "[]",
            "{",
            r#"{"sessionId":7}"#,
            r#"{"sessionId":""}"#,
            r#"{"sessionId":"has space"}"#,
            r#"{"sessionId":"a\u0000b"}"#,
            r#"{"session_id":"legacy"}"#,
        ] {
            write(&state_file, bad);
            assert!(sessions(&w.cx).is_empty(), "{bad}");
        }
        // Over the limit: not read.
        write(
            &state_file,
            &format!("{}{}", state(4242, 777, "busy", ""), " ".repeat(MAX_STATE)),
        );
        assert!(sessions(&w.cx).is_empty());
        // A symlink to a good file: not followed.
        let real = w.dir.join("real.json");
        write(&real, &state(4242, 777, "busy", ""));
        std::fs::remove_file(&state_file).unwrap();
        std::os::unix::fs::symlink(&real, &state_file).unwrap();
        assert!(sessions(&w.cx).is_empty());
        std::fs::remove_file(&state_file).unwrap();
        // A path in the id never leaves the projects directory.
        write(
            &state_file,
            &state(4242, 777, "busy", "").replace(ID, "../../../etc/x"),
        );
        let f = sessions(&w.cx);
        assert_eq!(
            (f[0].session_id.as_str(), f[0].model.as_deref()),
            ("../../../etc/x", None)
        );
        // Garbage and truncated lines in the transcript are skipped.
        write(&state_file, &state(4242, 777, "busy", ""));
        let t = project(&w).join(format!("{ID}.jsonl"));
        let mut lines = transcript_lines("x");
        lines.push_str("\u{0}\u{1}garbage\n{\"type\":\"ai-title\",\"aiTitle\":[1,2]}\n{\"type\":\"assistant\",\"message\":{\"model\":");
        write(&t, &lines);
        let f = &sessions(&w.cx)[0];
        assert_eq!(f.title.as_deref(), Some("Fix the parser race"));
        assert_eq!(f.model.as_deref(), Some("claude-opus-4-5-20251101"));
        // A directory, a FIFO where the transcript should be: no transcript.
        std::fs::remove_file(&t).unwrap();
        std::fs::create_dir(&t).unwrap();
        assert_eq!(sessions(&w.cx)[0].model, None);
    }

    #[test]
    fn a_huge_transcript_costs_its_two_ends() {
        let w = world();
        write(
            &w.dir.join("sessions/4242.json"),
            &state(4242, 777, "busy", ""),
        );
        let t = project(&w).join(format!("{ID}.jsonl"));
        let head = r#"{"type":"ai-title","aiTitle":"Early title","sessionId":"S"}"#;
        let last = r#"{"type":"assistant","message":{"model":"claude-sonnet-4-5","stop_reason":"end_turn"}}"#;
        // 3 GiB of nothing between them, as a sparse file.
        std::fs::create_dir_all(t.parent().unwrap()).unwrap();
        let mut f = std::fs::File::create(&t).unwrap();
        use std::io::{Seek as _, Write as _};
        writeln!(f, "{head}").unwrap();
        f.seek(std::io::SeekFrom::Start(3 << 30)).unwrap();
        writeln!(f, "\n{last}").unwrap();
        drop(f);
        let found = &sessions(&w.cx)[0];
        assert_eq!(found.title.as_deref(), Some("Early title"));
        assert_eq!(found.model.as_deref(), Some("claude-sonnet-4-5"));
        // One line far longer than the tail: skipped, not read whole.
        write(
            &t,
            &format!(
                "{{\"type\":\"ai-title\",\"aiTitle\":\"{}\"}}\n",
                "x".repeat(2 * TAIL)
            ),
        );
        assert_eq!(sessions(&w.cx)[0].title, None);
    }

    #[test]
    fn titles_are_cut_and_cleaned() {
        let mut t = Transcript::default();
        let long = "é".repeat(400);
        read_entry(
            &mut t,
            &serde_json::json!({"type":"ai-title","aiTitle": format!("  a\u{1b}[31mb {long}")}),
        );
        let title = t.generated.unwrap();
        assert!(title.starts_with("a[31mb é"), "{title}");
        assert_eq!(title.chars().count(), MAX_TITLE_CHARS);
    }
}
