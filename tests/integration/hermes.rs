//! `presence hook hermes` driven by the released Hermes Agent: its own
//! shell-hook machinery registers the `hooks:` block of docs/integrations.md
//! (consent given the way Hermes documents for non-interactive runs), fires
//! the lifecycle events through `invoke_hook`, and each step checks what
//! `presence list --json` shows. tests/hermes_driver.py is the Hermes side.
//!
//! Hermes lives in a virtual environment that scripts/test makes
//! (`$PRESENCE_TEST_HERMES_VENV`, else `target/hermes-venv`); without it the
//! tests fail and say how to make it.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use serde_json::{Value, json};

use crate::harness::{Device, JsonRow, World, sessions};

pub(crate) use crate::hermes_venv::venv;

/// The `hooks:` block docs/integrations.md tells users to copy.
fn documented_hooks_block() -> String {
    crate::docs::example("integrations.md", "hermes-hooks")
}

/// The events the documented block registers.
const EVENTS: [&str; 7] = [
    "on_session_end",
    "on_session_finalize",
    "on_session_reset",
    "on_session_start",
    "pre_llm_call",
    "subagent_start",
    "subagent_stop",
];

/// A Hermes home with the documented config, and the device's environment
/// for Hermes' processes.
struct Setup {
    world: World,
    dev: Device,
    home: PathBuf,
    work: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let world = World::new();
        let dev = world.device("laptop");
        let home = world.tmp.path().join("hermes-home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("config.yaml"), documented_hooks_block()).unwrap();
        let work = world.tmp.path().join("project");
        std::fs::create_dir_all(&work).unwrap();
        Setup {
            world,
            dev,
            home,
            work,
        }
    }

    /// A program of the venv, run the way Hermes runs: in the project
    /// directory, with `HERMES_HOME` and consent to the configured hooks.
    fn hermes_program(&self, program: &str) -> std::process::Command {
        let mut c = self.dev.program(venv().join("bin").join(program));
        c.env("HERMES_HOME", &self.home)
            .env("HERMES_ACCEPT_HOOKS", "1")
            .current_dir(&self.work);
        c
    }

    fn start(&self) -> Hermes {
        let mut child = self
            .hermes_program("python")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hermes_driver.py"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the Hermes driver");
        let stdin = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut h = Hermes {
            child,
            stdin: Some(stdin),
            out,
        };
        let hello = h.answer();
        let registered: Vec<String> = serde_json::from_value(hello["registered"].clone()).unwrap();
        assert_eq!(registered, EVENTS, "{hello}");
        assert_eq!(hello["warnings"], json!([]), "{hello}");
        assert_eq!(hello["pid"], json!(h.child.id()));
        h
    }

    fn list(&self) -> Vec<JsonRow> {
        self.dev.list(&[])
    }
}

/// The driver: Hermes' hook machinery in a Python process, the hooks' parent.
struct Hermes {
    child: Child,
    stdin: Option<ChildStdin>,
    out: BufReader<ChildStdout>,
}

impl Hermes {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn answer(&mut self) -> Value {
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        assert!(!line.is_empty(), "the Hermes driver exited");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    fn request(&mut self, request: Value) -> Value {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        self.answer()
    }

    /// Fires `event` through `invoke_hook`. The hook hands Hermes no
    /// decision (nothing on stdout) and Hermes logs no failure.
    fn fire(&mut self, event: &str, kwargs: Value) {
        let a = self.request(json!({"event": event, "kwargs": kwargs}));
        assert_eq!(a["results"], json!([]), "{event}: {a}");
        assert_eq!(a["warnings"], json!([]), "{event}: {a}");
        eprintln!(
            "{event}: {:.1} ms through invoke_hook",
            a["ms"].as_f64().unwrap()
        );
    }

    /// Runs the command configured for `event` through Hermes' own spawner
    /// with `text` on stdin.
    fn raw(&mut self, event: &str, text: &str) -> Value {
        self.request(json!({"event": event, "raw": text}))
    }
}

impl Drop for Hermes {
    fn drop(&mut self) {
        // End of stdin ends the driver.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

fn only(rows: &[JsonRow], session: &str) -> JsonRow {
    rows.iter()
        .find(|r| r.session_id == session)
        .unwrap_or_else(|| panic!("{session} is not listed: {:?}", sessions(rows)))
        .clone()
}

#[test]
fn hermes_session_start_working_waiting_finalize() {
    let s = Setup::new();
    let mut h = s.start();
    // Consent is recorded where Hermes keeps it, for each event and command.
    let allow: Value = serde_json::from_str(
        &std::fs::read_to_string(s.home.join("shell-hooks-allowlist.json")).unwrap(),
    )
    .unwrap();
    let approved: Vec<(&str, &str)> = allow["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["event"].as_str().unwrap(), a["command"].as_str().unwrap()))
        .collect();
    assert_eq!(approved.len(), EVENTS.len(), "{allow}");
    assert!(approved.iter().all(|(_, c)| *c == "presence hook hermes"));

    h.fire(
        "on_session_start",
        json!({"session_id": "20260101_120000_abc123", "model": "claude-sonnet-4", "platform": "cli"}),
    );
    let rows = s.list();
    assert_eq!(sessions(&rows), ["20260101_120000_abc123"]);
    let r = &rows[0];
    assert_eq!(
        (r.status.as_str(), r.client.as_str(), r.source.as_str()),
        ("idle", "hermes", "cli")
    );
    assert_eq!(r.model, "claude-sonnet-4");
    assert_eq!(r.session_key, r.session_id);
    assert_eq!(Path::new(&r.cwd), s.work.canonicalize().unwrap());
    assert_eq!(r.pid, h.pid(), "the owner is the Hermes process");
    assert!(r.owner_start.is_some() && r.live && r.local);

    let turn = json!({
        "session_id": "20260101_120000_abc123", "task_id": "t", "turn_id": "1",
        "user_message": "hello", "is_first_turn": true, "model": "claude-sonnet-4",
        "platform": "cli", "sender_id": "",
        "conversation_history": [{"role": "user", "content": "hello"}],
    });
    h.fire("pre_llm_call", turn.clone());
    assert_eq!(only(&s.list(), "20260101_120000_abc123").status, "working");

    let end = |interrupted: bool| {
        json!({"session_id": "20260101_120000_abc123", "task_id": "t", "turn_id": "1",
               "completed": !interrupted, "interrupted": interrupted,
               "model": "claude-sonnet-4", "platform": "cli"})
    };
    h.fire("on_session_end", end(false));
    let r = only(&s.list(), "20260101_120000_abc123");
    assert_eq!((r.status.as_str(), r.title.as_str()), ("waiting", ""));
    h.fire("pre_llm_call", turn);
    h.fire("on_session_end", end(true));
    assert_eq!(
        only(&s.list(), "20260101_120000_abc123").status,
        "interrupted"
    );

    h.fire(
        "on_session_finalize",
        json!({"session_id": "20260101_120000_abc123", "platform": "cli", "reason": "shutdown"}),
    );
    assert_eq!(sessions(&s.list()), Vec::<String>::new());
    let ended = s.dev.list(&["--include-expired"]);
    assert_eq!(ended.len(), 1);
    assert_eq!((ended[0].status.as_str(), ended[0].live), ("ended", false));
}

#[test]
fn hermes_resumed_session_appears_at_its_first_turn() {
    let s = Setup::new();
    let mut h = s.start();
    // No on_session_start for a resumed session: the turn publishes it.
    h.fire(
        "pre_llm_call",
        json!({"session_id": "resumed", "model": "m", "platform": "telegram"}),
    );
    let r = only(&s.list(), "resumed");
    assert_eq!(
        (r.status.as_str(), r.source.as_str()),
        ("working", "telegram")
    );
    assert_eq!(r.pid, h.pid());
}

#[test]
fn hermes_reset_clears_the_previous_session() {
    let s = Setup::new();
    let mut h = s.start();
    h.fire(
        "on_session_start",
        json!({"session_id": "first", "model": "m", "platform": "cli"}),
    );
    // The CLI and TUI pass only the new session.
    h.fire(
        "on_session_reset",
        json!({"session_id": "second", "platform": "cli", "reason": "new_session"}),
    );
    let rows = s.list();
    assert_eq!(sessions(&rows), ["second"]);
    assert_eq!((rows[0].status.as_str(), rows[0].pid), ("idle", h.pid()));
    // The gateway names the old one.
    h.fire(
        "on_session_reset",
        json!({"session_id": "third", "platform": "telegram", "reason": "new_session",
               "old_session_id": "second", "new_session_id": "third"}),
    );
    assert_eq!(sessions(&s.list()), ["third"]);
}

/// `on_session_reset` without the old session's id finds the session it
/// replaces among this device's own records (its ledger), not by listing the
/// directory, which Hermes would wait for: with many other devices' records
/// there, the hook neither lists the directory nor opens any of them,
/// counted by strace(1). The hook runs as Hermes runs it: both events from
/// one parent process (no Hermes needed).
#[test]
fn hermes_reset_without_the_old_id_reads_no_other_devices_records() {
    let w = World::new();
    let dev = w.device("laptop");
    let shared = w.shared();
    let t = crate::harness::now();
    for i in 0..500 {
        let session = format!("far-{i}");
        crate::harness::write_record(
            &shared,
            &format!("desk-feedface.{session}.json"),
            &json!({"version": 1, "session_id": session, "session_key": session,
                    "status": "idle", "client": "hermes", "host": "desk", "pid": 4242,
                    "instance_id": "desk-feedface", "device_id": "feedface",
                    "profile": "default", "updated_at": t, "expires_at": t + 90.0,
                    "started_at": t, "metadata": {}}),
        );
    }
    let start = w.tmp.path().join("start.json");
    let reset = w.tmp.path().join("reset.json");
    std::fs::write(
        &start,
        r#"{"hook_event_name":"on_session_start","session_id":"first","extra":{"platform":"cli"}}"#,
    )
    .unwrap();
    std::fs::write(
        &reset,
        r#"{"hook_event_name":"on_session_reset","session_id":"second","extra":{"platform":"cli"}}"#,
    )
    .unwrap();
    let log = w.tmp.path().join("strace.log");
    // `; true`: bash forks for each hook, so both have bash as their parent.
    let script = format!(
        "presence hook hermes < '{}' && presence hook hermes < '{}'; true",
        start.display(),
        reset.display()
    );
    let out = dev
        .program(crate::harness::require_tool("strace"))
        .args(["-f", "-qq", "-y", "-e", "trace=openat,getdents64", "-o"])
        .arg(&log)
        .arg(crate::harness::require_tool("bash"))
        .args(["-c", &script])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = dev.list(&["--include-expired"]);
    let mine: Vec<(String, String)> = rows
        .iter()
        .filter(|r| r.local)
        .map(|r| (r.session_id.clone(), r.status.clone()))
        .collect();
    assert_eq!(
        mine,
        [
            ("second".into(), "idle".into()),
            ("first".into(), "ended".into())
        ],
        "the reset cleared the previous session"
    );
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(log.contains(".second.json"), "strace saw the hook: {log}");
    let dir = format!("<{}>", shared.canonicalize().unwrap().display());
    let listed: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("getdents64(") && l.contains(&dir))
        .collect();
    assert_eq!(listed, Vec::<&str>::new(), "the hook listed the directory");
    let opened = log
        .lines()
        .filter(|l| l.contains("\"desk-feedface."))
        .count();
    assert_eq!(opened, 0, "the hook opened other devices' records");
}

#[test]
fn hermes_subagent_pair() {
    let s = Setup::new();
    let mut h = s.start();
    h.fire(
        "on_session_start",
        json!({"session_id": "parent", "model": "m", "platform": "cli"}),
    );
    // As tools/delegate_tool.py fires it: the parent is `parent_session_id`.
    h.fire(
        "subagent_start",
        json!({"parent_session_id": "parent", "parent_turn_id": "1", "parent_subagent_id": null,
               "child_session_id": "child", "child_subagent_id": "sa-1",
               "child_role": "leaf", "child_goal": "read the logs"}),
    );
    let rows = s.list();
    let child = only(&rows, "child");
    assert_eq!(child.status, "working");
    assert_eq!(child.metadata.get("parent_session").unwrap(), "parent");
    assert_eq!(child.metadata.get("role").unwrap(), "leaf");
    assert_eq!(child.pid, h.pid());
    assert_eq!(only(&rows, "parent").status, "idle");
    h.fire(
        "subagent_stop",
        json!({"parent_session_id": "parent", "parent_turn_id": "1", "child_session_id": "child",
               "child_role": "leaf", "child_summary": "done", "child_status": "completed",
               "duration_ms": 1200}),
    );
    assert_eq!(sessions(&s.list()), ["parent"]);
}

#[test]
fn hermes_garbage_on_stdin_is_ignored_quietly() {
    let s = Setup::new();
    let mut h = s.start();
    for garbage in ["not json {", "", "[1, 2]", "{\"hook_event_name\": 7}"] {
        let a = h.raw("on_session_start", garbage);
        assert_eq!(a["error"], Value::Null, "{a}");
        assert_eq!(a["returncode"], json!(0), "{garbage:?}: {a}");
        assert_eq!(a["stdout"], json!(""), "{garbage:?}: {a}");
        let stderr = a["stderr"].as_str().unwrap();
        assert_eq!(stderr.lines().count(), 1, "{garbage:?}: {stderr}");
        assert!(stderr.contains("not a Hermes hook event"), "{stderr}");
    }
    // An event it does not know: nothing at all.
    let a = h.raw(
        "on_session_start",
        r#"{"hook_event_name": "pre_tool_call", "session_id": "s", "extra": {}}"#,
    );
    assert_eq!(
        (&a["returncode"], &a["stdout"], &a["stderr"]),
        (&json!(0), &json!(""), &json!(""))
    );
    assert!(s.list().is_empty());
    assert!(!s.world.shared().exists() || s.dev.list(&["--include-expired"]).is_empty());
}

/// `hermes hooks test` fires a configured hook from Hermes' own CLI; its
/// process ends right after, so the session's owner is gone and `refresh`
/// ends the record: a Hermes that exits leaves nothing live.
#[test]
fn hermes_hooks_test_cli_and_a_gone_owner() {
    let s = Setup::new();
    let payload = s.world.tmp.path().join("payload.json");
    std::fs::write(
        &payload,
        r#"{"session_id": "from-cli", "model": "m", "platform": "cli"}"#,
    )
    .unwrap();
    let out = s
        .hermes_program("hermes")
        .args(["hooks", "test", "on_session_start", "--payload-file"])
        .arg(&payload)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("exit=0"), "{stdout}");
    let r = only(&s.list(), "from-cli");
    assert_eq!((r.client.as_str(), r.source.as_str()), ("hermes", "cli"));
    s.dev.run(&["refresh"]).success();
    assert!(
        s.list().is_empty(),
        "the record of an exited Hermes stays live"
    );
}

/// The built-in `hermes` profile reads Hermes' own directory where Hermes
/// keeps it, and leaves Hermes' records to Hermes: no clear, no refresh, no
/// expire there — while in a synced folder `expire` collects the same
/// expired record as usual.
#[test]
fn hermes_directory_is_read_in_place_and_left_to_hermes() {
    let w = World::new();
    let dev = w.device("laptop");
    let hermes_home = w.tmp.path().join("hermes-home");
    let active = hermes_home.join("session-presence/active");
    let t = crate::harness::now();
    let hermes_record = |session: &str, updated: f64| {
        json!({"version": 1, "session_id": session, "session_key": session, "status": "idle",
               "title": "From Hermes", "model": "m", "cwd": "/w", "source": "cli",
               "client": "", "profile": "", "endpoint": "", "host": "laptop", "pid": 4242,
               "instance_id": "laptop-4242", "updated_at": updated,
               "expires_at": updated + 90.0, "metadata": {}})
    };
    for dir in [&active, &w.shared()] {
        crate::harness::write_record(dir, "laptop-4242.live.json", &hermes_record("live", t));
        crate::harness::write_record(
            dir,
            "laptop-4242.old.json",
            &hermes_record("old", t - 7200.0),
        );
    }
    let presence = |env: &[(&str, &Path)], args: &[&str]| {
        let mut c = dev.cmd();
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{args:?}: {stderr}");
        String::from_utf8(out.stdout).unwrap()
    };
    let home: &[(&str, &Path)] = &[("HERMES_HOME", &hermes_home)];
    let listed = |env: &[(&str, &Path)]| {
        let rows: Vec<JsonRow> = crate::harness::parse_json(
            &presence(env, &["--profile", "hermes", "list", "--json"]),
            "list",
        );
        sessions(&rows)
    };
    assert_eq!(listed(home), ["live"]);
    // HERMES_SESSION_PRESENCE_DIR names the directory itself.
    let elsewhere = w.tmp.path().join("elsewhere");
    crate::harness::write_record(&elsewhere, "h-1.other.json", &hermes_record("other", t));
    assert_eq!(
        listed(&[
            ("HERMES_HOME", &hermes_home),
            ("HERMES_SESSION_PRESENCE_DIR", &elsewhere)
        ]),
        ["other"]
    );

    // Two hours on, both of Hermes' records are long dead: still Hermes' to remove.
    let later = |env: &[(&str, &Path)], args: &[&str]| {
        let mut c = crate::harness::faked(dev.cmd(), "+7200");
        for (k, v) in env {
            c.env(k, v);
        }
        crate::harness::run_ok(c.args(args));
    };
    presence(home, &["--profile", "hermes", "clear", "--session", "live"]);
    presence(home, &["--profile", "hermes", "refresh"]);
    later(home, &["--profile", "hermes", "expire"]);
    let files = |dir: &Path| {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        files(&active),
        ["laptop-4242.live.json", "laptop-4242.old.json"]
    );
    assert_eq!(listed(home), ["live"]);
    let live = std::fs::read_to_string(active.join("laptop-4242.live.json")).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&live).unwrap(),
        hermes_record("live", t)
    );
    // A credential in a record Hermes wrote: listed redacted, and doctor
    // says where it comes from and that Hermes removes it from here.
    let mut leaky = hermes_record("leaky", crate::harness::now());
    leaky["title"] = json!("deploy with ghp_0123456789abcdefghijABCDEFGHIJ012345");
    crate::harness::write_record(&active, "laptop-4242.leaky.json", &leaky);
    let rows: Vec<JsonRow> = crate::harness::parse_json(
        &presence(home, &["--profile", "hermes", "list", "--json"]),
        "list",
    );
    assert_eq!(only(&rows, "leaky").title, "deploy with [redacted]");
    // Only the secrets check matters here; the others (the directory's
    // mode, the refresher) decide the exit status.
    let out = dev
        .cmd()
        .env("HERMES_HOME", &hermes_home)
        .args(["--profile", "hermes", "doctor", "--json"])
        .output()
        .unwrap();
    let checks: Value = serde_json::from_slice(&out.stdout).unwrap();
    let secrets = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "secrets")
        .unwrap_or_else(|| panic!("no secrets check: {checks:#}"));
    assert!(
        secrets["message"]
            .as_str()
            .unwrap()
            .contains("laptop-4242.leaky.json")
    );
    let fix = secrets["fix"].as_str().unwrap();
    assert!(
        fix.contains("as Hermes Agent writes its records") && fix.contains("leaves to Hermes"),
        "{fix}"
    );
    assert!(!checks.to_string().contains("ghp_0123"));

    // The same records in a synced folder are garbage once dead past gc_after.
    later(&[], &["expire"]);
    assert_eq!(files(&w.shared()), Vec::<String>::new());
}

/// Typed at a terminal, the hook says what it is for instead of waiting for
/// an event that never comes.
#[test]
fn hermes_hook_at_a_terminal_says_what_it_reads() {
    let w = World::new();
    let dev = w.device("laptop");
    let out = dev
        .program(crate::harness::require_tool("script"))
        .args(["-qec", "presence hook hermes", "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("reads a Hermes hook event on stdin"),
        "{text}"
    );
    crate::harness::assert_docs_travel("hook hermes on a terminal", &text);
}
