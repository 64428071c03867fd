//! `presence watch --on STATE -- CMD`: a command run for each transition,
//! with the session's fields in its environment and never a shell over them.

use std::path::Path;

use crate::harness::*;

/// The lines CMD appended so far.
fn runs(out: &Path) -> Vec<String> {
    std::fs::read_to_string(out)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn watch_on_runs_the_command_once_per_transition_with_the_fields_in_its_environment() {
    let w = World::new();
    let a = w.device("a");
    let out = w.tmp.path().join("runs.txt");
    // CMD is this test's own script: it writes what it was given, one line
    // per run. The values reach it as environment variables only.
    let script = format!(
        "printf '%s|%s|%s|%s|%s|%s\\n' \"$PRESENCE_EVENT\" \"$PRESENCE_STATE\" \
         \"$PRESENCE_SESSION\" \"$PRESENCE_HOST\" \"$PRESENCE_TITLE\" \"$PRESENCE_REASON\" >> {out:?}"
    );
    let args = [
        "watch", "--json", "--on", "waiting", "--on", "down", "--", "sh", "-c", &script,
    ];
    std::fs::create_dir_all(w.shared()).unwrap();
    let Stream { child, lines } = Stream::start(&a, &args);
    let _watch = KillOnDrop(child);
    loop {
        let line = lines.recv_timeout(PATIENCE).expect("a ready line");
        if JsonEvent::parse(&line).event == "ready" {
            break;
        }
    }
    let seen = |n: usize| {
        wait_until(&format!("{n} runs of the command"), PATIENCE, || {
            runs(&out).len() >= n
        });
    };
    // Working is not what `--on` names: nothing runs. Then it waits, with
    // a title that would be shell code if anything ran a shell over it.
    a.publish("s1", &["--status", "working"]);
    // Watch must have seen it working, or the next write is its `up`.
    loop {
        let line = lines.recv_timeout(PATIENCE).expect("s1 coming up");
        let e = JsonEvent::parse(&line);
        if e.event == "up" && e.row().session_id == "s1" {
            break;
        }
    }
    let pwned = w.tmp.path().join("pwned");
    let title = format!("$(touch {}) `touch {}`", pwned.display(), pwned.display());
    a.publish("s1", &["--status", "waiting", "--title", &title]);
    seen(1);
    // A session that appears waiting is a transition too.
    a.publish("s2", &["--status", "waiting", "--title", "review"]);
    seen(2);
    // A title change while still waiting is none.
    a.publish("s2", &["--title", "review again"]);
    // And a session leaving, for `--on down`.
    run_ok(a.cmd().args(["clear", "--session", "s1"]));
    seen(3);
    let host = runs(&out)[0].split('|').nth(3).unwrap().to_owned();
    assert_eq!(
        runs(&out),
        [
            format!("update|waiting|s1|{host}|{title}|"),
            format!("up|waiting|s2|{host}|review|"),
            format!("down|down|s1|{host}|{title}|cleared"),
        ]
    );
    assert!(!pwned.exists(), "a shell ran over a field");
}

#[test]
fn watch_on_without_a_command_or_a_command_without_on_is_a_usage_error() {
    let w = World::new();
    let a = w.device("a");
    let r = a.run(&["watch", "--on", "waiting"]).code(2);
    assert!(r.stderr.contains("--on needs a command"), "{}", r.stderr);
    let r = a.run(&["watch", "--", "true"]).code(2);
    assert!(r.stderr.contains("only with --on"), "{}", r.stderr);
    let r = a.run(&["watch", "--on", "wait ing", "--", "true"]).code(2);
    assert!(
        r.stderr.contains("a state is a status word"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_documented_notify_unit_verifies_and_names_a_watch_that_parses() {
    let systemd_analyze = require_tool("systemd-analyze");
    let unit = crate::docs::example("integrations.md", "notify-unit");
    let exec = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart=/usr/local/bin/presence "))
        .expect("ExecStart= names /usr/local/bin/presence");
    // The unit as installed: with this binary's path.
    let w = World::new();
    let bin = env!("CARGO_BIN_EXE_presence");
    let path = w.tmp.path().join("presence-notify.service");
    std::fs::write(
        &path,
        unit.replace(
            "ExecStart=/usr/local/bin/presence ",
            &format!("ExecStart={bin} "),
        ),
    )
    .unwrap();
    let out = std::process::Command::new(systemd_analyze)
        .args(["verify", "--user"])
        .arg(&path)
        .env("HOME", w.tmp.path())
        .env("XDG_RUNTIME_DIR", w.tmp.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Its command line is one `watch` takes: run as written (its CMD
    // replaced, and --json added to see it start), it reaches `ready`.
    let words: Vec<String> = exec
        .split_whitespace()
        .map(|w| w.trim_matches('"').to_owned())
        .collect();
    let mut args: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .take_while(|w| *w != "--")
        .collect();
    assert!(args.contains(&"--on") && words.iter().any(|w| w == "--"));
    args.extend(["--json", "--", "true"]);
    let a = w.device("a");
    std::fs::create_dir_all(w.shared()).unwrap();
    let Stream { child, lines } = Stream::start(&a, &args);
    let _watch = KillOnDrop(child);
    let first = lines
        .recv_timeout(PATIENCE)
        .expect("the unit's watch started");
    assert_eq!(JsonEvent::parse(&first).event, "ready", "{first}");
}
