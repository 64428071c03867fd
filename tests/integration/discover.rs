//! Discovery of local agents' sessions by `presence refresh`: a real
//! process stands in for each agent (a copy of `sleep`, or of `sh` where it
//! must run a hook, named like the agent, with the agent's working directory
//! and environment), its files written as the agent writes them into the
//! device's temp home.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::harness::*;

/// A device of `w` whose default profile is the shared directory and
/// whose `[discover] agents` are `agents`.
fn device(w: &World, name: &str, agents: &[&str]) -> Device {
    let dev = w.bare_device(name);
    let agents: Vec<String> = agents.iter().map(|a| format!("{a:?}")).collect();
    dev.write_config(&format!(
        "[profiles.default]\ndir = {:?}\n\n[discover]\nagents = [{}]\n",
        w.shared().display().to_string(),
        agents.join(", ")
    ));
    dev
}

/// A copy of `program` named `name` in the world's directory of stand-ins.
pub(crate) fn stand_in(w: &World, program: &str, name: &str) -> PathBuf {
    let dir = w.tmp.path().join("agents").join(program);
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join(name);
    // `/bin/sh` is every machine's; other programs are tools the suite needs.
    let (path, probe) = match program {
        "sh" => (PathBuf::from("/bin/sh"), ["-c", ":"]),
        other => (require_tool(other), ["0", ""]),
    };
    std::fs::copy(path, &bin).unwrap();
    // Once it has run, it runs: no process holds the copy open for writing
    // any more, so tmux can start it too.
    let mut probe_cmd = std::process::Command::new(&bin);
    probe_cmd.args(probe.iter().filter(|a| !a.is_empty()));
    let mut probe = start(&mut probe_cmd);
    assert!(probe.0.wait().unwrap().success());
    bin
}

/// Starts `cmd`, a freshly copied stand-in. Another test's thread may
/// fork while the copy's file is still open for writing, and the program
/// cannot run until that child execs ("text file busy"): wait for that.
pub(crate) fn start(cmd: &mut std::process::Command) -> KillOnDrop {
    let (child, _) = wait_for("the stand-in to start", PATIENCE, || match cmd.spawn() {
        Ok(child) => Ok(child),
        Err(e) if e.raw_os_error() == Some(26) => Err(e.to_string()),
        Err(e) => panic!("cannot start {cmd:?}: {e}"),
    });
    KillOnDrop(child)
}

/// A working directory `name` in the world, canonical (as /proc shows it).
pub(crate) fn workdir(w: &World, name: &str) -> PathBuf {
    let dir = w.tmp.path().join("work").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

/// The start time of process `pid` (field 22 of /proc/PID/stat), as
/// Claude Code writes it into `procStart`.
fn start_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 1..];
    rest.split_whitespace().nth(19).unwrap().parse().unwrap()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Claude Code's project directory name for `cwd`.
fn slug(cwd: &Path) -> String {
    cwd.to_str()
        .unwrap()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// Claude Code's `sessions/<pid>.json` for process `pid`.
fn claude_state(pid: u32, session: &str, cwd: &Path, status: &str) -> String {
    format!(
        r#"{{"pid":{pid},"sessionId":"{session}","cwd":"{}","startedAt":1767000000000,"procStart":"{}","version":"2.1.220","peerProtocol":1,"kind":"interactive","entrypoint":"cli","name":"parser-13","nameSource":"derived","status":"{status}","updatedAt":1767000100000,"statusUpdatedAt":1767000100000}}"#,
        cwd.display(),
        start_ticks(pid)
    )
}

/// A Claude Code transcript: a prompt with a secret word, a reply, a
/// generated title, the prompt again as `last-prompt`.
fn claude_transcript(session: &str) -> String {
    [
        format!(
            r#"{{"parentUuid":null,"isSidechain":false,"type":"user","message":{{"role":"user","content":"fix it, the word is ostrich"}},"uuid":"u1","sessionId":"{session}"}}"#
        ),
        format!(
            r#"{{"parentUuid":"u1","isSidechain":false,"type":"assistant","message":{{"model":"claude-opus-4-5-20251101","role":"assistant","content":[{{"type":"text","text":"On it."}}],"stop_reason":"end_turn"}},"uuid":"a1","sessionId":"{session}"}}"#
        ),
        format!(r#"{{"type":"ai-title","aiTitle":"Fix the parser race","sessionId":"{session}"}}"#),
        format!(r#"{{"type":"last-prompt","lastPrompt":"fix it, the word is ostrich","sessionId":"{session}"}}"#),
    ]
    .join("\n")
        + "\n"
}

/// The claude directory of `dev` (its HOME's `.claude`).
fn claude_dir(dev: &Device) -> PathBuf {
    dev.root.join("home/.claude")
}

/// Writes the files of a Claude Code session of process `pid`.
pub(crate) fn claude_files(dev: &Device, pid: u32, session: &str, cwd: &Path, status: &str) {
    let dir = claude_dir(dev);
    write(
        &dir.join(format!("sessions/{pid}.json")),
        &claude_state(pid, session, cwd, status),
    );
    write(
        &dir.join(format!("projects/{}/{session}.jsonl", slug(cwd))),
        &claude_transcript(session),
    );
}

fn refresh(dev: &Device) -> JsonRefresh {
    dev.json(&["refresh", "--json"])
}

fn row(dev: &Device, session: &str) -> Option<JsonRow> {
    dev.list(&[]).into_iter().find(|r| r.session_id == session)
}

pub(crate) const CLAUDE_ID: &str = "0f8e1d2c-3b4a-4596-8776-a5b4c3d2e1f0";
const CODEX_ID: &str = "5973b6c0-94b8-487b-a530-2aeb6098ae0e";

#[test]
fn a_claude_code_session_is_published_kept_fresh_and_cleared_when_it_exits() {
    let w = World::new();
    let dev = device(&w, "a", &["claude-code"]);
    let cwd = workdir(&w, "parser");
    let claude = stand_in(&w, "sleep", "claude");
    let mut agent = start(dev.program(&claude).arg("600").current_dir(&cwd));
    let pid = agent.0.id();
    claude_files(&dev, pid, CLAUDE_ID, &cwd, "busy");

    let out = refresh(&dev);
    let d = out.discover.expect("discovery ran");
    assert_eq!(
        (d.agents, d.found, d.published),
        (vec!["claude-code".to_string()], 1, 1)
    );
    let r = row(&dev, CLAUDE_ID).expect("published");
    assert_eq!(
        (r.client.as_str(), r.source.as_str(), r.status.as_str()),
        ("claude-code", "discover", "working")
    );
    assert_eq!(
        (r.title.as_str(), r.model.as_str(), r.cwd.as_str()),
        (
            "Fix the parser race",
            "claude-opus-4-5-20251101",
            cwd.to_str().unwrap()
        )
    );
    assert_eq!((r.pid, r.owner_start), (pid, Some(start_ticks(pid))));
    assert_eq!(
        (r.started_at, r.seq, r.session_key.as_str()),
        (Some(1_767_000_000.0), 1, CLAUDE_ID)
    );
    // Nothing of the prompt is published.
    let text = std::fs::read_to_string(w.shared().join(&r.file)).unwrap();
    assert!(!text.contains("ostrich"), "{text}");

    // Unchanged: the pass refreshes it once, discovery does not write it.
    let out = refresh(&dev);
    let d = out.discover.unwrap();
    assert_eq!((d.published, d.kept), (0, 1));
    assert_eq!(out.refreshed_files, std::slice::from_ref(&r.file));
    assert_eq!(row(&dev, CLAUDE_ID).unwrap().seq, 2);

    // Claude answered and waits for the user.
    claude_files(&dev, pid, CLAUDE_ID, &cwd, "idle");
    let out = refresh(&dev);
    assert_eq!(
        out.discover.unwrap().published_files,
        std::slice::from_ref(&r.file)
    );
    assert!(out.refreshed_files.is_empty());
    let now = row(&dev, CLAUDE_ID).unwrap();
    assert_eq!(
        (now.status.as_str(), now.seq, now.started_at),
        ("waiting", 3, r.started_at)
    );

    // Claude exits: the next pass clears it.
    agent.0.kill().unwrap();
    agent.0.wait().unwrap();
    let out = refresh(&dev);
    assert_eq!(out.cleared_files, std::slice::from_ref(&r.file));
    assert_eq!(out.discover.unwrap().found, 0);
    assert!(row(&dev, CLAUDE_ID).is_none());
}

#[test]
fn a_new_session_in_the_same_process_replaces_the_old_one() {
    let w = World::new();
    let dev = device(&w, "a", &["claude-code"]);
    let cwd = workdir(&w, "app");
    let claude = stand_in(&w, "sleep", "claude");
    let agent = start(dev.program(&claude).arg("600").current_dir(&cwd));
    let pid = agent.0.id();
    claude_files(&dev, pid, "first-session", &cwd, "idle");
    refresh(&dev);
    assert!(row(&dev, "first-session").is_some());
    // `/clear`: the same process, a new session id.
    claude_files(&dev, pid, "second-session", &cwd, "idle");
    let d = refresh(&dev).discover.unwrap();
    assert_eq!((d.published, d.cleared), (1, 1));
    assert_eq!(sessions(&dev.list(&[])), ["second-session"]);
}

/// A rollout of Codex CLI for `session` in `cwd`, in its day directory
/// under `home`; returns its path.
fn codex_rollout(home: &Path, session: &str, cwd: &Path, events: &[&str]) -> PathBuf {
    let day = chrono_day();
    let path = home.join(format!(
        "sessions/{day}/rollout-2026-01-02T10-20-30-{session}.jsonl"
    ));
    let mut lines = vec![
        format!(
            r#"{{"timestamp":"2026-01-02T10:20:30.123Z","type":"session_meta","payload":{{"id":"{session}","timestamp":"2026-01-02T10:20:30.000Z","cwd":"{}","originator":"codex_cli_rs","cli_version":"0.77.0","instructions":null,"source":"cli","model_provider":"openai"}}}}"#,
            cwd.display()
        ),
        format!(
            r#"{{"timestamp":"2026-01-02T10:20:31.000Z","type":"turn_context","payload":{{"cwd":"{}","approval_policy":"on-request","sandbox_policy":{{"type":"workspace-write"}},"model":"gpt-5.1-codex","summary":"auto"}}}}"#,
            cwd.display()
        ),
        r#"{"timestamp":"2026-01-02T10:20:31.200Z","type":"event_msg","payload":{"type":"user_message","message":"the word is ostrich","images":[]}}"#.to_string(),
    ];
    for e in events {
        lines.push(format!(
            r#"{{"timestamp":"2026-01-02T10:20:32.000Z","type":"event_msg","payload":{{"type":"{e}","turn_id":"1"}}}}"#
        ));
    }
    write(&path, &(lines.join("\n") + "\n"));
    path
}

/// Today's `YYYY/MM/DD`, as Codex names its day directories.
fn chrono_day() -> String {
    chrono::Local::now().format("%Y/%m/%d").to_string()
}

#[test]
fn a_codex_session_with_its_own_codex_home_model_status_and_name() {
    let w = World::new();
    let dev = device(&w, "a", &["codex"]);
    let cwd = workdir(&w, "api");
    // The agent's own CODEX_HOME, which the refresher does not have.
    let home = w.tmp.path().join("codex-home");
    let codex = stand_in(&w, "sleep", "codex");
    let agent = start(
        dev.program(&codex)
            .arg("600")
            .current_dir(&cwd)
            .env("CODEX_HOME", &home),
    );
    codex_rollout(&home, CODEX_ID, &cwd, &["task_started"]);
    write(
        &home.join("session_index.jsonl"),
        &format!(
            "{{\"id\":\"{CODEX_ID}\",\"thread_name\":\"release notes\",\"updated_at\":\"2026-01-02T10:21:00Z\"}}\n"
        ),
    );
    let d = refresh(&dev).discover.unwrap();
    assert_eq!((d.found, d.published), (1, 1), "{d:?}");
    let r = row(&dev, CODEX_ID).unwrap();
    assert_eq!(
        (
            r.client.as_str(),
            r.source.as_str(),
            r.status.as_str(),
            r.model.as_str()
        ),
        ("codex", "discover", "working", "gpt-5.1-codex")
    );
    assert_eq!(
        (r.title.as_str(), r.cwd.as_str()),
        ("release notes", cwd.to_str().unwrap())
    );
    assert_eq!(r.pid, agent.0.id());
    codex_rollout(&home, CODEX_ID, &cwd, &["task_started", "task_complete"]);
    refresh(&dev);
    assert_eq!(row(&dev, CODEX_ID).unwrap().status, "waiting");
    let text = std::fs::read_to_string(w.shared().join(&r.file)).unwrap();
    assert!(!text.contains("ostrich"), "{text}");
    drop(agent);
    refresh(&dev);
    assert!(row(&dev, CODEX_ID).is_none());
}

#[test]
fn the_rollout_a_codex_process_holds_open_is_its_own() {
    let w = World::new();
    let dev = device(&w, "a", &["codex"]);
    let cwd = workdir(&w, "same");
    let home = dev.root.join("home/.codex");
    let other = "11111111-2222-4333-8444-555555555555";
    let sh = stand_in(&w, "sh", "codex");
    let newer = codex_rollout(&home, CODEX_ID, &cwd, &["task_started"]);
    let future = std::time::SystemTime::now() + std::time::Duration::from_secs(30);
    std::fs::File::options()
        .append(true)
        .open(&newer)
        .unwrap()
        .set_modified(future)
        .unwrap();
    // The first process holds the newest rollout open, as Codex does.
    let holder = start(
        dev.program(&sh)
            .args(["-c", "exec 3<\"$0\"; while :; do sleep 1; done"])
            .arg(&newer)
            .current_dir(&cwd)
            .stdin(Stdio::null()),
    );
    wait_until("the rollout to be held open", PATIENCE, || {
        std::fs::read_link(format!("/proc/{}/fd/3", holder.0.id())).is_ok_and(|t| t == newer)
    });
    // The second, newer process holds nothing open: by its working
    // directory, it gets the rollout the first does not hold, written since
    // it started.
    let plain = stand_in(&w, "sleep", "codex");
    let second = start(dev.program(&plain).arg("600").current_dir(&cwd));
    codex_rollout(&home, other, &cwd, &[]);
    let d = refresh(&dev).discover.unwrap();
    assert_eq!((d.found, d.published), (2, 2), "{d:?}");
    assert_eq!(row(&dev, CODEX_ID).unwrap().pid, holder.0.id());
    assert_eq!(row(&dev, other).unwrap().pid, second.0.id());
}

#[test]
fn an_agent_not_named_is_not_discovered_and_no_discover_table_discovers_nothing() {
    let w = World::new();
    let dev = device(&w, "a", &["codex"]);
    let cwd = workdir(&w, "x");
    let claude = stand_in(&w, "sleep", "claude");
    let agent = start(dev.program(&claude).arg("600").current_dir(&cwd));
    claude_files(&dev, agent.0.id(), CLAUDE_ID, &cwd, "busy");
    let d = refresh(&dev).discover.unwrap();
    assert_eq!((d.agents, d.found), (vec!["codex".to_string()], 0));
    assert!(dev.list(&[]).is_empty());
    // The same agent files, seen by a device with no [discover] table.
    let plain = w.device("b");
    let out = run_ok(
        plain
            .cmd()
            .env("CLAUDE_CONFIG_DIR", claude_dir(&dev))
            .args(["refresh", "--json"]),
    );
    let out: JsonRefresh = parse_json(&String::from_utf8_lossy(&out.stdout), "refresh");
    assert_eq!(out.discover, None);
    assert!(plain.list(&[]).is_empty());
}

#[test]
fn a_hooks_record_of_the_same_session_wins() {
    let w = World::new();
    let dev = device(&w, "a", &["claude-code"]);
    let cwd = workdir(&w, "parser");
    let event = dev.root.join("event.json");
    write(
        &event,
        &format!(
            r#"{{"hook_event_name":"UserPromptSubmit","session_id":"{CLAUDE_ID}","cwd":"{}","transcript_path":"x","prompt":"the word is ostrich"}}"#,
            cwd.display()
        ),
    );
    let done = dev.root.join("hook.done");
    // Claude Code runs the hook, then stays.
    let claude = stand_in(&w, "sh", "claude");
    let agent = start(
        dev.program(&claude)
            .args([
                "-c",
                "presence hook claude < \"$0\"; : > \"$1\"; while :; do sleep 1; done",
            ])
            .arg(&event)
            .arg(&done)
            .current_dir(&cwd)
            .stdin(Stdio::null()),
    );
    wait_until("the hook to run", PATIENCE, || done.exists());
    let hooked = row(&dev, CLAUDE_ID).expect("the hook's record");
    assert_eq!(
        (hooked.status.as_str(), hooked.pid),
        ("working", agent.0.id())
    );
    // Claude's own files say the same session, idle.
    claude_files(&dev, agent.0.id(), CLAUDE_ID, &cwd, "idle");
    let d = refresh(&dev).discover.unwrap();
    assert_eq!((d.found, d.hooked, d.published), (1, 1, 0), "{d:?}");
    let rows = dev.list(&["--all"]);
    assert_eq!(sessions(&rows), [CLAUDE_ID]);
    assert_eq!(
        (rows[0].status.as_str(), rows[0].source.as_str()),
        ("working", "")
    );
}

/// A tmux server on a socket of the world's, killed when the test ends.
struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    fn cmd(&self, dev: &Device) -> std::process::Command {
        let mut c = dev.program(require_tool("tmux"));
        c.arg("-S").arg(&self.socket).args(["-f", "/dev/null"]);
        c
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .stderr(Stdio::null())
            .status();
    }
}

#[test]
fn an_agent_in_a_tmux_pane_has_the_pane_as_its_endpoint_which_another_device_opens() {
    let w = World::new();
    let dev = device(&w, "a", &["claude-code"]);
    let cwd = workdir(&w, "parser");
    let claude = stand_in(&w, "sleep", "claude");
    let tmux = Tmux {
        socket: w.tmp.path().join("tmux.sock"),
    };
    let pane_pid = |target: &str| -> u32 {
        let out =
            run_ok(
                tmux.cmd(&dev)
                    .args(["display-message", "-p", "-t", target, "#{pane_pid}"]),
            );
        String::from_utf8(out.stdout)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    for (session, id) in [("work", CLAUDE_ID), ("my work", "odd-session")] {
        run_ok(
            tmux.cmd(&dev)
                .args([
                    "new-session",
                    "-d",
                    "-s",
                    session,
                    "-x",
                    "80",
                    "-y",
                    "24",
                    "-c",
                ])
                .arg(&cwd)
                .arg(&claude)
                .arg("600"),
        );
        let pid = pane_pid(&format!("={session}:"));
        // tmux forks the pane's process, then it execs the stand-in.
        wait_until("the pane to run the stand-in", PATIENCE, || {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c == "claude\n")
        });
        claude_files(&dev, pid, id, &cwd, "busy");
    }
    let d = refresh(&dev).discover.unwrap();
    assert_eq!((d.found, d.published), (2, 2), "{d:?}");
    let r = row(&dev, CLAUDE_ID).unwrap();
    assert_eq!(r.endpoint, format!("tmux://{}/work:0.0", r.host));
    // A session name `open` would refuse gives no endpoint at all.
    assert_eq!(row(&dev, "odd-session").unwrap().endpoint, "");
    // Another device of the world opens it.
    let b = w.device("b");
    let printed = b.run(&["open", CLAUDE_ID, "--print"]).success().stdout;
    assert_eq!(printed, "tmux attach -t work:0.0\n");
}

#[test]
fn with_all_profiles_discovery_publishes_into_the_selected_profile_once() {
    let w = World::new();
    let dev = w.bare_device("a");
    let other = w.tmp.path().join("other");
    dev.write_config(&format!(
        "default_profile = \"work\"\n\n[profiles.work]\ndir = {:?}\n\n[profiles.home]\ndir = {:?}\n\n\
         [discover]\nagents = [\"claude-code\"]\n",
        w.shared().display().to_string(),
        other.display().to_string()
    ));
    let cwd = workdir(&w, "parser");
    let claude = stand_in(&w, "sleep", "claude");
    let agent = start(dev.program(&claude).arg("600").current_dir(&cwd));
    claude_files(&dev, agent.0.id(), CLAUDE_ID, &cwd, "busy");
    let out: JsonRefresh = dev.json(&["refresh", "--all-profiles", "--json"]);
    assert_eq!(out.discover.unwrap().published, 1);
    let files = |dir: &Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".json"))
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(files(&w.shared()).len(), 1);
    assert!(files(&other).is_empty());
    let r = row(&dev, CLAUDE_ID).unwrap();
    assert_eq!(r.profile, "work");
    // With `--profile home` selected, discovery publishes there instead.
    let out: JsonRefresh = dev.json(&["--profile", "home", "refresh", "--json"]);
    assert_eq!(out.discover.unwrap().published, 1);
    assert_eq!(files(&other).len(), 1);
}

/// Writes a Hermes CLI session into `db` with the released package's own
/// `hermes_state.SessionDB`, as Hermes does: `start` creates the session in
/// `cwd` and stores the user's first message (the turn runs); `reply`
/// stores Hermes' answer, which ends the turn, and the title Hermes gives.
const HERMES_STATE: &str = r#"
import sys
from pathlib import Path
from hermes_state import SessionDB
db_path, step, cwd = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
db = SessionDB(db_path=db_path)
if step == "start":
    db.create_session("h-1", "cli", cwd=cwd, model="anthropic/claude-sonnet-4")
    db.append_message("h-1", "user", "rename the ostrich module, key sk-live-0123456789abcdef0123")
else:
    db.append_message("h-1", "assistant", "Renamed it.", finish_reason="stop")
    db.set_session_title("h-1", "Module rename")
db.close()
"#;

fn hermes_state(dev: &Device, step: &str, cwd: &Path) {
    hermes_state_at(dev, &dev.root.join("home/.hermes/state.db"), step, cwd);
}

/// [`hermes_state`] on the database at `db` (a profile's).
fn hermes_state_at(dev: &Device, db: &Path, step: &str, cwd: &Path) {
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let out = std::process::Command::new(crate::hermes::venv().join("bin/python"))
        .args(["-c", HERMES_STATE])
        .arg(db)
        .arg(step)
        .arg(cwd)
        .env("HOME", dev.root.join("home"))
        .env("HERMES_HOME", dev.root.join("home/.hermes"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hermes_state: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A Hermes CLI session in the `state.db` the released package's own code
/// writes, with a running `hermes` in its directory: published with its
/// status, model, directory and (once Hermes gives one) title, never its
/// prompt, and cleared once the process exits.
#[test]
fn a_hermes_session_from_its_state_db_is_published_and_cleared_when_it_exits() {
    let w = World::new();
    let dev = device(&w, "a", &["hermes"]);
    let cwd = workdir(&w, "notes");
    let hermes = stand_in(&w, "sleep", "hermes");
    let before = std::time::Instant::now();
    let mut agent = start(dev.program(&hermes).arg("600").current_dir(&cwd));
    // The session begins after the process started, as Hermes' do: a
    // process's start is known to the second (the kernel's boot time), so
    // wait until the clock is past it by more than that.
    wait_until("a second past the stand-in's start", PATIENCE, || {
        before.elapsed() > std::time::Duration::from_millis(1100)
    });
    hermes_state(&dev, "start", &cwd);

    let out = refresh(&dev);
    let d = out.discover.expect("discovery ran");
    assert_eq!((d.found, d.published), (1, 1), "{d:?}");
    let r = row(&dev, "h-1").expect("published");
    assert_eq!(
        (r.client.as_str(), r.source.as_str(), r.status.as_str()),
        ("hermes", "discover", "working")
    );
    assert_eq!(
        (r.title.as_str(), r.model.as_str(), r.cwd.as_str()),
        ("notes", "anthropic/claude-sonnet-4", cwd.to_str().unwrap())
    );
    assert_eq!(r.pid, agent.0.id());
    let text = std::fs::read_to_string(w.shared().join(&r.file)).unwrap();
    assert!(
        !text.contains("ostrich") && !text.contains("sk-live"),
        "{text}"
    );

    hermes_state(&dev, "reply", &cwd);
    refresh(&dev);
    let r = row(&dev, "h-1").unwrap();
    assert_eq!(
        (r.status.as_str(), r.title.as_str()),
        ("waiting", "Module rename")
    );

    agent.0.kill().unwrap();
    agent.0.wait().unwrap();
    let out = refresh(&dev);
    assert_eq!(out.cleared_files, std::slice::from_ref(&r.file));
    assert!(row(&dev, "h-1").is_none());
}

/// A Hermes started with a named profile (`hermes -p coder`, as a real
/// process's command line shows it) is read from that profile's database,
/// which the released package's code writes; the default profile's is left
/// alone.
#[test]
fn a_hermes_session_of_a_named_profile_is_read_from_its_database() {
    let w = World::new();
    let dev = device(&w, "a", &["hermes"]);
    let cwd = workdir(&w, "notes");
    // `sh` by the name `hermes`, its command line holding `-p coder`.
    let hermes = stand_in(&w, "sh", "hermes");
    let before = std::time::Instant::now();
    let _agent = start(
        dev.program(&hermes)
            .args(["-c", "while :; do sleep 1; done", "-p", "coder"])
            .current_dir(&cwd),
    );
    wait_until("a second past the stand-in's start", PATIENCE, || {
        before.elapsed() > std::time::Duration::from_millis(1100)
    });
    let coder = dev.root.join("home/.hermes/profiles/coder/state.db");
    hermes_state_at(&dev, &coder, "start", &cwd);
    let out = refresh(&dev);
    let d = out.discover.expect("discovery ran");
    assert_eq!((d.found, d.published), (1, 1), "{d:?}");
    let r = row(&dev, "h-1").expect("published from the profile's database");
    assert_eq!(
        (r.client.as_str(), r.status.as_str()),
        ("hermes", "working")
    );
    assert!(!dev.root.join("home/.hermes/state.db").exists());
}

/// OpenCode's tables as its first migration creates them (the columns the
/// reader looks at, and the ones OpenCode requires).
const OPENCODE_SCHEMA: &str = "
CREATE TABLE `project` (`id` text PRIMARY KEY, `worktree` text NOT NULL, `vcs` text,
  `name` text, `icon_url` text, `icon_color` text, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `time_initialized` integer, `sandboxes` text NOT NULL);
CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL);
CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL,
  `session_id` text NOT NULL, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `data` text NOT NULL);
CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL,
  `parent_id` text, `slug` text NOT NULL, `directory` text NOT NULL, `title` text NOT NULL,
  `version` text NOT NULL, `share_url` text, `summary_additions` integer,
  `summary_deletions` integer, `summary_files` integer, `summary_diffs` text,
  `revert` text, `permission` text, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `time_compacting` integer, `time_archived` integer);
";

/// Adds message `n` of session `id` to OpenCode's database (its `data` as
/// OpenCode writes it), with the text of the prompt in `part`, and moves
/// the session's `time_updated`.
fn opencode_message(c: &rusqlite::Connection, id: &str, n: u32, data: serde_json::Value) {
    let t = (now() * 1000.0) as i64;
    let mid = format!("msg_{n:04}{id}");
    c.execute(
        "INSERT INTO message (id, session_id, time_created, time_updated, data) \
         VALUES (?1, ?2, ?3, ?3, ?4)",
        rusqlite::params![mid, id, t, data.to_string()],
    )
    .unwrap();
    c.execute(
        "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) \
         VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
        rusqlite::params![
            format!("prt_{n:04}{id}"),
            mid,
            id,
            t,
            serde_json::json!({"type": "text", "text": "fix the ostrich test"}).to_string()
        ],
    )
    .unwrap();
    c.execute(
        "UPDATE session SET time_updated = ?1 WHERE id = ?2",
        rusqlite::params![t, id],
    )
    .unwrap();
}

/// An OpenCode session in its `opencode.db` (WAL mode, held open as a
/// running OpenCode holds it), with a running `opencode` in its directory:
/// published with its status, model and title, never the prompt's text,
/// and cleared once the process exits.
#[test]
fn an_opencode_session_from_its_database_is_published_and_cleared_when_it_exits() {
    use serde_json::json;
    let w = World::new();
    let dev = device(&w, "a", &["opencode"]);
    let cwd = workdir(&w, "site");
    let opencode = stand_in(&w, "sleep", "opencode");
    let before = std::time::Instant::now();
    let mut agent = start(dev.program(&opencode).arg("600").current_dir(&cwd));
    // The session is updated after the process started (known to the
    // second, as for Hermes above).
    wait_until("a second past the stand-in's start", PATIENCE, || {
        before.elapsed() > std::time::Duration::from_millis(1100)
    });
    let data = dev.root.join("data/opencode");
    std::fs::create_dir_all(&data).unwrap();
    let c = rusqlite::Connection::open(data.join("opencode.db")).unwrap();
    c.pragma_update(None, "journal_mode", "WAL").unwrap();
    c.execute_batch(OPENCODE_SCHEMA).unwrap();
    c.execute(
        "INSERT INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) \
         VALUES ('4b0ea68d', ?1, 'git', 0, 0, '[]')",
        [cwd.to_str().unwrap()],
    )
    .unwrap();
    let t = (now() * 1000.0) as i64;
    c.execute(
        "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, \
         time_updated) VALUES ('ses_1', '4b0ea68d', 'brave-otter', ?1, ?2, '1.2.10', ?3, ?3)",
        rusqlite::params![
            cwd.to_str().unwrap(),
            "New session - 2026-12-03T07:00:00.000Z",
            t
        ],
    )
    .unwrap();
    opencode_message(
        &c,
        "ses_1",
        1,
        json!({"role": "user", "time": {"created": t},
               "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4"}}),
    );

    let out = refresh(&dev);
    let d = out.discover.expect("discovery ran");
    assert_eq!((d.found, d.published), (1, 1), "{d:?}");
    let r = row(&dev, "ses_1").expect("published");
    assert_eq!(
        (r.client.as_str(), r.source.as_str(), r.status.as_str()),
        ("opencode", "discover", "working")
    );
    // OpenCode's placeholder title is not a title: the directory's name.
    assert_eq!(
        (r.title.as_str(), r.model.as_str(), r.cwd.as_str()),
        ("site", "anthropic/claude-sonnet-4", cwd.to_str().unwrap())
    );
    assert_eq!(r.pid, agent.0.id());
    let text = std::fs::read_to_string(w.shared().join(&r.file)).unwrap();
    assert!(!text.contains("ostrich"), "{text}");

    c.execute(
        "UPDATE session SET title = 'Fix the flaky test' WHERE id = 'ses_1'",
        [],
    )
    .unwrap();
    opencode_message(
        &c,
        "ses_1",
        2,
        json!({"role": "assistant", "time": {"created": t, "completed": t + 5},
               "finish": "stop", "providerID": "anthropic", "modelID": "claude-sonnet-4"}),
    );
    refresh(&dev);
    let r = row(&dev, "ses_1").unwrap();
    assert_eq!(
        (r.status.as_str(), r.title.as_str()),
        ("waiting", "Fix the flaky test")
    );

    agent.0.kill().unwrap();
    agent.0.wait().unwrap();
    let out = refresh(&dev);
    assert_eq!(out.cleared_files, std::slice::from_ref(&r.file));
    assert!(row(&dev, "ses_1").is_none());
    drop(c);
}
