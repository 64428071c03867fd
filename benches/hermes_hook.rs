//! Latency of `presence hook hermes` per event: the time from starting the
//! process (as Hermes does, without a shell, the event JSON on stdin) to its
//! exit, which is what Hermes waits for on each hook. Each round runs a
//! session's life: `on_session_start`, `pre_llm_call` (with a short and with
//! a 1 MiB conversation, which Hermes sends in full), `on_session_end`,
//! `subagent_start`, `subagent_stop`, `on_session_reset` (which lists the
//! directory to find the previous session) and `on_session_finalize`, in a
//! directory that also holds 100 other live records.
//!
//! Run: `cargo bench --bench hermes_hook` (200 rounds, a few seconds);
//! `PRESENCE_ROUNDS=N` changes the count. Prints a markdown table. Everything
//! runs in a temp dir with its own HOME / XDG dirs; this process is the
//! hooks' parent, as Hermes is.
// A program of its own, with its own output.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

const PRESENCE: &str = env!("CARGO_BIN_EXE_presence");

fn hook(root: &Path, event: &serde_json::Value) -> Duration {
    let payload = event.to_string();
    let t0 = Instant::now();
    let mut child = Command::new(PRESENCE)
        .args(["hook", "hermes"])
        .env_clear()
        .env("HOME", root.join("home"))
        .env("XDG_CONFIG_HOME", root.join("config"))
        .env("XDG_DATA_HOME", root.join("data"))
        .env("XDG_CACHE_HOME", root.join("cache"))
        .env("XDG_RUNTIME_DIR", root.join("runtime"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let took = t0.elapsed();
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "{event}: {out:?}"
    );
    took
}

fn event(name: &str, session: &str, extra: serde_json::Value) -> serde_json::Value {
    json!({"hook_event_name": name, "tool_name": null, "tool_input": null,
           "session_id": session, "cwd": "/home/alice/src/project", "extra": extra})
}

fn main() {
    let rounds: usize = std::env::var("PRESENCE_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let big = "x".repeat(1 << 20);
    for i in 0..100 {
        hook(
            root,
            &event(
                "on_session_start",
                &format!("other-{i}"),
                json!({"model": "m", "platform": "telegram"}),
            ),
        );
    }
    let names = [
        "on_session_start",
        "pre_llm_call",
        "pre_llm_call (1 MiB conversation)",
        "on_session_end",
        "subagent_start",
        "subagent_stop",
        "on_session_reset",
        "on_session_finalize",
    ];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); names.len()];
    for r in 0..rounds {
        let s = format!("20260101_120000_{r:06}");
        let next = format!("20260101_130000_{r:06}");
        let child = format!("{s}-child");
        let turn = |history: &str| {
            json!({"task_id": "t", "turn_id": "1", "user_message": "hello",
                   "conversation_history": [{"role": "user", "content": history}],
                   "is_first_turn": false, "model": "claude-sonnet-4", "platform": "cli",
                   "sender_id": "", "telemetry_schema_version": 1})
        };
        let events = [
            event(
                "on_session_start",
                &s,
                json!({"model": "claude-sonnet-4", "platform": "cli"}),
            ),
            event("pre_llm_call", &s, turn("hello")),
            event("pre_llm_call", &s, turn(&big)),
            event(
                "on_session_end",
                &s,
                json!({"completed": true, "interrupted": false, "model": "claude-sonnet-4",
                       "platform": "cli"}),
            ),
            event(
                "subagent_start",
                &s,
                json!({"child_session_id": child, "child_role": "leaf", "child_goal": "look"}),
            ),
            event(
                "subagent_stop",
                &s,
                json!({"child_session_id": child, "child_status": "completed"}),
            ),
            event(
                "on_session_reset",
                &next,
                json!({"platform": "cli", "reason": "new_session"}),
            ),
            event(
                "on_session_finalize",
                &next,
                json!({"platform": "cli", "reason": "shutdown"}),
            ),
        ];
        for (i, e) in events.iter().enumerate() {
            times[i].push(hook(root, e));
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("| event | median | p95 | max |");
    println!("|---|---:|---:|---:|");
    for (name, mut t) in names.iter().zip(times) {
        t.sort();
        let p = |q: f64| t[((t.len() - 1) as f64 * q).round() as usize];
        println!(
            "| `{name}` | {:.1} ms | {:.1} ms | {:.1} ms |",
            ms(p(0.5)),
            ms(p(0.95)),
            ms(t[t.len() - 1])
        );
    }
}
