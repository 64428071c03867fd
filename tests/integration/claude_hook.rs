//! `presence hook claude` as Claude Code runs it: a command hook, run by a
//! shell that Claude starts, with the event's JSON on stdin. A copy of
//! `/bin/sh` named `claude` stands in for Claude Code: it runs the hook the
//! way Claude does and then stays alive, as Claude does between events.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::harness::*;

/// A stand-in for the Claude Code process: a shell named `claude`.
pub(crate) fn claude_binary(dir: &Path) -> PathBuf {
    let bin = dir.join("claude");
    std::fs::copy("/bin/sh", &bin).unwrap();
    bin
}

/// Runs one hook event as Claude Code would: `claude` (the stand-in) runs
/// the hook command through a shell with `event` on stdin, and stays alive
/// afterwards (until `stay` is dropped). Returns the hook's exit status and
/// stderr, and the stand-in.
pub(crate) fn event(dev: &Device, claude: &Path, event: &str) -> (i32, String, KillOnDrop) {
    let input = dev.root.join("event.json");
    std::fs::write(&input, event).unwrap();
    let done = dev.root.join("hook.rc");
    let _ = std::fs::remove_file(&done);
    let script = format!(
        "sh -c 'presence hook claude; true' < {input:?} 2> {err:?}; echo $? > {done:?}.tmp; \
         mv {done:?}.tmp {done:?}; exec sleep 600",
        err = dev.root.join("hook.err"),
    );
    let child = KillOnDrop(
        dev.program(claude)
            .args(["-c", &script])
            .current_dir(&dev.root)
            .stdin(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let (rc, _) = wait_for("the hook to finish", PATIENCE, || {
        std::fs::read_to_string(&done).map_err(|e| e.to_string())
    });
    let err = std::fs::read_to_string(dev.root.join("hook.err")).unwrap_or_default();
    (rc.trim().parse().unwrap(), err, child)
}

pub(crate) fn json(name: &str, session: &str, extra: &str) -> String {
    format!(
        r#"{{"hook_event_name":"{name}","session_id":"{session}","cwd":"/home/u/src/parser",
            "transcript_path":"/home/u/.claude/projects/x/{session}.jsonl",
            "permission_mode":"default"{extra}}}"#
    )
}

#[test]
fn a_claude_code_session_goes_idle_working_waiting_and_gone() {
    let w = World::new();
    let dev = w.device("a");
    let claude = claude_binary(w.tmp.path());
    let row = || dev.list(&[]).into_iter().find(|r| r.session_id == "c-1");

    let (rc, err, _start) = event(
        &dev,
        &claude,
        &json(
            "SessionStart",
            "c-1",
            r#","source":"startup","model":"claude-sonnet-4-5""#,
        ),
    );
    assert_eq!((rc, err.as_str()), (0, ""));
    let r = row().expect("listed after SessionStart");
    assert_eq!(
        (r.client.as_str(), r.status.as_str(), r.title.as_str()),
        ("claude-code", "idle", "parser")
    );
    let secret = r#","prompt":"use sk-live-0123456789abcdef0123 and the word ostrich""#;
    let (rc, _, _turn) = event(&dev, &claude, &json("UserPromptSubmit", "c-1", secret));
    assert_eq!(rc, 0);
    assert_eq!(row().unwrap().status, "working");
    // Nothing of the prompt is published, anywhere in the record.
    let file = w.shared().join(&row().unwrap().file);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        !text.contains("ostrich") && !text.contains("sk-live"),
        "{text}"
    );
    let (rc, _, _ask) = event(
        &dev,
        &claude,
        &json("PermissionRequest", "c-1", r#","tool_name":"Bash""#),
    );
    assert_eq!(rc, 0);
    assert_eq!(row().unwrap().status, "waiting");
    let (rc, _, _end) = event(
        &dev,
        &claude,
        &json("SessionEnd", "c-1", r#","reason":"exit""#),
    );
    assert_eq!(rc, 0);
    assert!(row().is_none(), "listed after SessionEnd");
}

#[test]
fn the_record_is_owned_by_claude_and_goes_when_it_exits() {
    let w = World::new();
    let dev = w.device("a");
    let claude = claude_binary(w.tmp.path());
    let (rc, _, stand_in) = event(&dev, &claude, &json("Stop", "c-2", ""));
    assert_eq!(rc, 0);
    let r = dev
        .list(&[])
        .into_iter()
        .find(|r| r.session_id == "c-2")
        .unwrap();
    assert_eq!(r.status, "waiting");
    // The owner is the stand-in for Claude, not the shell that ran the hook.
    assert_eq!(r.pid, stand_in.0.id());
    drop(stand_in);
    run_ok(dev.cmd().args(["--quiet", "refresh"]));
    assert!(dev.list(&[]).iter().all(|r| r.session_id != "c-2"));
}

#[test]
fn the_hook_never_exits_2_and_never_prints_on_stdout() {
    let w = World::new();
    let dev = w.device("a");
    // A configuration error (an unknown profile) is a usage error (2) for
    // any other command; for a hook, 2 would block Claude's prompt.
    let out = dev
        .cmd()
        .env("PRESENCE_PROFILE", "nope")
        .args(["hook", "claude"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write as _;
            c.stdin
                .take()
                .unwrap()
                .write_all(json("UserPromptSubmit", "c-3", "").as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));
    // Input that is not an event: ignored, 0, nothing on stdout.
    let claude = claude_binary(w.tmp.path());
    let (rc, err, _c) = event(&dev, &claude, "not json");
    assert_eq!(rc, 0);
    assert!(err.contains("not a Claude Code hook event"), "{err}");
}

#[test]
fn the_documented_settings_block_runs_this_hook_for_each_event_it_maps() {
    let block = crate::docs::example("integrations.md", "claude-hooks");
    let settings: serde_json::Value = serde_json::from_str(&block).unwrap();
    let hooks = settings["hooks"].as_object().unwrap();
    let mut events: Vec<&str> = hooks.keys().map(String::as_str).collect();
    events.sort();
    assert_eq!(
        events,
        [
            "Notification",
            "PermissionRequest",
            "PostToolUse",
            "SessionEnd",
            "SessionStart",
            "Stop",
            "UserPromptSubmit"
        ]
    );
    for (event, groups) in hooks {
        let command = &groups[0]["hooks"][0];
        assert_eq!(command["type"], "command", "{event}");
        assert_eq!(command["command"], "presence hook claude", "{event}");
    }
    // And each one does something: run through the hook, every event but
    // SessionEnd leaves the session listed with a status.
    let w = World::new();
    let dev = w.device("a");
    let claude = claude_binary(w.tmp.path());
    for event_name in events {
        let (rc, err, _c) = event(&dev, &claude, &json(event_name, "doc", ""));
        assert_eq!((rc, err.as_str()), (0, ""), "{event_name}");
        let listed = dev.list(&[]).into_iter().any(|r| r.session_id == "doc");
        assert_eq!(listed, event_name != "SessionEnd", "{event_name}");
    }
}
