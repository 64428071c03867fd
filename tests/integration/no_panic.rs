//! No input panics and none hangs: directories of arbitrary records (any
//! Unicode and any JSON type in every field) under arbitrary file names,
//! one of them planted at this device's own file name, and every command
//! run against them. Exit codes are the documented ones, never 101 (a Rust
//! panic) and never a time-out.

use std::path::Path;
use std::process::Output;

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::harness::{Device, World, now, require_tool};

/// Any JSON value, biased towards the shapes records have.
fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        3 => any::<String>().prop_map(Value::from),
        2 => "[\\x00-\\x1f\\x7f\u{80}-\u{9f}\u{202a}-\u{202e}\u{200b}é日🎉a-z.:/ -]{0,40}"
            .prop_map(Value::from),
        1 => any::<f64>().prop_map(|f| json!(f)),
        1 => any::<i64>().prop_map(Value::from),
        1 => any::<u64>().prop_map(Value::from),
        1 => (-1e10f64..1e10).prop_map(|d| json!(now() + d)),
        1 => any::<bool>().prop_map(Value::from),
        1 => Just(Value::Null),
    ];
    leaf.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::btree_map(any::<String>(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

const FIELDS: &[&str] = &[
    "version",
    "session_id",
    "session_key",
    "status",
    "title",
    "model",
    "cwd",
    "source",
    "client",
    "profile",
    "endpoint",
    "host",
    "pid",
    "instance_id",
    "updated_at",
    "expires_at",
    "metadata",
    "device_id",
    "started_at",
    "seq",
    "owner_start",
    "ended_at",
];

/// A record-like object: a usable base (so that most files are listed and
/// reach the printing code) with arbitrary values over some fields.
fn any_record() -> impl Strategy<Value = Value> {
    (
        any::<String>(),
        proptest::collection::vec((proptest::sample::select(FIELDS), any_value()), 0..8),
        any::<bool>(),
    )
        .prop_map(|(id, overrides, live)| {
            let t = now();
            let mut r = json!({
                "version": 1, "session_id": format!("x{id}"), "profile": "default",
                "host": id, "title": id, "updated_at": t,
                "expires_at": if live { t + 90.0 } else { t - 10.0 },
            });
            for (k, v) in overrides {
                r[k] = v;
            }
            r
        })
}

/// A file name as another device could choose it (no `/`, no NUL).
fn any_name() -> impl Strategy<Value = String> {
    (
        any::<String>(),
        prop_oneof![
            Just(".json"),
            Just(".sync-conflict-20240101-000000-ABC.json"),
            Just(" (conflicted copy 2024-01-01 000000).json"),
            Just(" 2.json"),
            Just(".tmp"),
            Just(""),
        ],
    )
        .prop_map(|(stem, ext)| {
            let stem: String = stem.chars().filter(|&c| c != '/' && c != '\0').collect();
            let name = format!("{stem}{ext}");
            if name.len() > 200 || name == "." || name == ".." || name.is_empty() {
                format!("n{}.json", name.len())
            } else {
                name
            }
        })
}

/// A file's contents: a record, or any bytes at all.
fn any_file() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => any_record().prop_map(|r| serde_json::to_vec(&r).unwrap()),
        1 => proptest::collection::vec(any::<u8>(), 0..200),
    ]
}

/// Runs `presence ARGS` under `timeout`, so a hang fails instead of blocking.
fn run(dev: &Device, args: &[&str], signal: Option<&str>) -> Output {
    let mut cmd = dev.program(require_tool("timeout"));
    match signal {
        // The command's own status: 0 or 130 after SIGINT, 137 when it
        // ignored SIGINT and had to be killed.
        Some(after) => cmd.args(["--preserve-status", "-k", "30", "-s", "INT", after]),
        None => cmd.args(["60"]),
    };
    cmd.arg(env!("CARGO_BIN_EXE_presence"))
        .args(args)
        .output()
        .expect("run timeout(1)")
}

fn check(what: &[&str], out: &Output, allowed: &[i32]) -> Result<(), TestCaseError> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    prop_assert!(
        !stderr.contains("panicked"),
        "{:?} panicked: {}",
        what,
        stderr
    );
    prop_assert!(code != Some(124), "{:?} hung", what);
    prop_assert!(
        code.is_some_and(|c| allowed.contains(&c)),
        "{:?} exited {:?}, want one of {:?}: {}",
        what,
        code,
        allowed,
        stderr
    );
    Ok(())
}

fn plant(dir: &Path, files: &[(String, Vec<u8>)]) {
    std::fs::create_dir_all(dir).unwrap();
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn no_command_panics_or_hangs_on_any_directory(
        files in proptest::collection::vec((any_name(), any_file()), 1..6),
        own in any_file(),
        id in "[^\\x00]{1,40}",
    ) {
        let w = World::new();
        let dev = w.device("a");
        let dir = w.shared();
        // This device's own file, then a foreign file planted at its name.
        dev.publish("mine", &[]);
        let own_name = std::fs::read_dir(&dir).unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .find(|n| n.ends_with(".mine.json")).unwrap();
        plant(&dir, &files);
        std::fs::write(dir.join(&own_name), &own).unwrap();

        // An id a user could type: argv holds no NUL byte.
        let shown_id = files.iter()
            .find_map(|(_, b)| serde_json::from_slice::<Value>(b).ok()?["session_id"].as_str().map(String::from))
            .filter(|s| !s.contains('\0'))
            .unwrap_or_else(|| "absent".into());
        // An id may start with `-`: passed after `--` or as `--session=ID`.
        let clear_session = format!("--session={shown_id}");
        let ok: &[i32] = &[0];
        let cases: Vec<(Vec<&str>, &[i32])> = vec![
            (vec!["list"], ok),
            (vec!["list", "--all", "--json"], ok),
            (vec!["list", "--all", "--include-expired", "--all-profiles", "-v"], ok),
            (vec!["list", "--format", "{session_id} {title} {metadata} {host}"], ok),
            (vec!["list", "--count"], ok),
            (vec!["show", "--", &shown_id], &[0, 1]),
            (vec!["show", "--json", "--", &shown_id], &[0, 1]),
            (vec!["open", "--print", "--", &shown_id], &[0, 1, 2]),
            (vec!["doctor"], &[0, 1]),
            (vec!["doctor", "--json"], &[0, 1]),
            (vec!["devices"], &[0]),
            (vec!["devices", "--json"], &[0]),
            (vec!["expire", "--dry-run"], ok),
            (vec!["refresh", "-v"], ok),
            (vec!["publish", "--session", "mine", "--status", "working"], ok),
            (vec!["publish", "--session", &id, "--title", &id], &[0, 2, 3]),
            (vec!["run", "--session", "wrapped", "--", "true"], ok),
            (vec!["run", "--session", "mine", "--", "true"], ok),
            (vec!["clear", &clear_session], ok),
            (vec!["expire"], ok),
        ];
        for (args, allowed) in &cases {
            let out = run(&dev, args, None);
            check(args, &out, allowed)?;
        }
        // watch and list --watch for a moment: interrupted, never crashed.
        for args in [vec!["watch", "--json"], vec!["watch", "-v"], vec!["list", "--watch"]] {
            let out = run(&dev, &args, Some("0.4"));
            check(&args, &out, &[0, 130])?;
        }
    }
}

/// A working directory and a running stand-in for an agent: a copy of
/// `sleep` named `name`, started there with `env`.
fn agent(dev: &Device, name: &str, env: &[(&str, &Path)]) -> (crate::harness::KillOnDrop, u32) {
    let dir = dev.root.join("agents").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join(name);
    std::fs::copy(require_tool("sleep"), &bin).unwrap();
    let mut cmd = dev.program(&bin);
    cmd.arg("600").current_dir(&dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    // A copy just written may be busy while another thread's fork holds
    // it open ("text file busy"): try again.
    let (child, _) = crate::harness::wait_for(
        "the stand-in to start",
        crate::harness::PATIENCE,
        || match cmd.spawn() {
            Ok(c) => Ok(c),
            Err(e) if e.raw_os_error() == Some(26) => Err(e.to_string()),
            Err(e) => panic!("cannot start {name}: {e}"),
        },
    );
    let pid = child.id();
    (crate::harness::KillOnDrop(child), pid)
}

/// An agent's file: JSON shaped like the agent's (a record-like object
/// with arbitrary values), or any bytes.
fn any_agent_file(keys: &'static [&'static str]) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => proptest::collection::vec((proptest::sample::select(keys), any_value()), 0..8)
            .prop_map(|fields| {
                let object: serde_json::Map<String, Value> =
                    fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
                serde_json::to_vec(&Value::Object(object)).unwrap()
            }),
        1 => proptest::collection::vec(any::<u8>(), 0..300),
    ]
}

/// JSON lines as an agent appends them: entries of its types with
/// arbitrary values, garbage lines between them, a cut last line.
fn any_lines(
    types: &'static [&'static str],
    keys: &'static [&'static str],
) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        prop_oneof![
            4 => (proptest::sample::select(types), proptest::collection::vec((proptest::sample::select(keys), any_value()), 0..4))
                .prop_map(|(t, fields)| {
                    let mut object = serde_json::Map::new();
                    object.insert("type".into(), Value::from(t));
                    let payload: serde_json::Map<String, Value> =
                        fields.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
                    for (k, v) in fields {
                        object.insert(k.to_string(), v);
                    }
                    object.insert("payload".into(), Value::Object(payload.clone()));
                    object.insert("message".into(), Value::Object(payload));
                    serde_json::to_vec(&Value::Object(object)).unwrap()
                }),
            1 => proptest::collection::vec(any::<u8>(), 0..120),
        ],
        0..8,
    )
    .prop_map(|lines| lines.join(&b"\n"[..]))
}

const CLAUDE_KEYS: &[&str] = &[
    "pid",
    "sessionId",
    "cwd",
    "startedAt",
    "procStart",
    "name",
    "nameSource",
    "status",
    "kind",
];
const TRANSCRIPT_TYPES: &[&str] = &[
    "user",
    "assistant",
    "ai-title",
    "custom-title",
    "agent-name",
    "summary",
    "last-prompt",
];
const TRANSCRIPT_KEYS: &[&str] = &[
    "aiTitle",
    "customTitle",
    "agentName",
    "summary",
    "model",
    "stop_reason",
    "isSidechain",
];
const ROLLOUT_TYPES: &[&str] = &["session_meta", "turn_context", "event_msg", "response_item"];
const ROLLOUT_KEYS: &[&str] = &["id", "cwd", "timestamp", "model", "type", "thread_name"];

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 12,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Hostile files where each agent keeps its own, with a live process of
    /// each agent: `refresh` with every agent enabled neither panics nor
    /// hangs, and what it publishes lists.
    #[test]
    fn no_refresh_panics_or_hangs_on_hostile_agent_files(
        claude_state in any_agent_file(CLAUDE_KEYS),
        valid_state in any::<bool>(),
        transcript in any_lines(TRANSCRIPT_TYPES, TRANSCRIPT_KEYS),
        rollout in any_lines(ROLLOUT_TYPES, ROLLOUT_KEYS),
        index in any_lines(&["x"], ROLLOUT_KEYS),
        hermes_db in proptest::collection::vec(any::<u8>(), 0..2000),
        opencode_db in proptest::collection::vec(any::<u8>(), 0..2000),
        opencode_json in any_agent_file(&["id", "title", "directory", "time", "projectID"]),
    ) {
        let w = World::new();
        let dev = w.bare_device("a");
        dev.write_config(&format!(
            "[profiles.default]\ndir = {:?}\n\n[discover]\nagents = [\"claude-code\", \"codex\", \"hermes\", \"opencode\"]\n",
            w.shared().display().to_string()
        ));
        let home = dev.root.join("home");
        let codex_home = home.join(".codex");
        let (_claude, claude_pid) = agent(&dev, "claude", &[]);
        let (_codex, _) = agent(&dev, "codex", &[("CODEX_HOME", &codex_home)]);
        let (_hermes, _) = agent(&dev, "hermes", &[]);
        let (_opencode, _) = agent(&dev, "opencode", &[]);
        let put = |path: &Path, bytes: &[u8]| {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        };
        // Claude Code: the state file of the live process, a valid one
        // pointing at the transcript, or garbage; the transcript.
        let claude_dir = home.join(".claude");
        let state = if valid_state {
            serde_json::to_vec(&json!({
                "pid": claude_pid, "sessionId": "s-1", "cwd": "/w/x", "status": "busy",
            })).unwrap()
        } else {
            claude_state
        };
        put(&claude_dir.join(format!("sessions/{claude_pid}.json")), &state);
        put(&claude_dir.join("projects/-w-x/s-1.jsonl"), &transcript);
        put(&claude_dir.join("projects/other/s-1.jsonl"), &transcript);
        // Codex: a rollout in a day directory whose first line names the
        // stand-in's working directory (or is garbage), and the index.
        let cwd = dev.root.join("agents/codex").canonicalize().unwrap();
        let mut first = serde_json::to_vec(&json!({
            "type": "session_meta", "payload": {"id": "r-1", "cwd": cwd},
        })).unwrap();
        first.push(b'\n');
        first.extend(&rollout);
        let day = codex_home.join("sessions/2026/01/02");
        put(&day.join("rollout-2026-01-02T00-00-00-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl"), &first);
        put(&day.join("rollout-2026-01-02T00-00-01-x.jsonl"), &rollout);
        put(&codex_home.join("session_index.jsonl"), &index);
        // Hermes Agent and OpenCode: databases and session files of garbage.
        put(&home.join(".hermes/state.db"), &hermes_db);
        let opencode = dev.root.join("data/opencode");
        put(&opencode.join("opencode.db"), &opencode_db);
        put(&opencode.join("storage/session/p/ses_1.json"), &opencode_json);

        for args in [vec!["refresh", "-v"], vec!["refresh", "--json"], vec!["list", "--json"]] {
            let out = run(&dev, &args, None);
            check(&args, &out, &[0])?;
        }
        // The valid state file was read through its hostile transcript.
        if valid_state {
            let out = run(&dev, &["list", "--json"], None);
            let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
            prop_assert!(
                rows.iter().any(|r| r["session_id"] == "s-1" && r["client"] == "claude-code"),
                "{rows:?}"
            );
        }
    }
}
