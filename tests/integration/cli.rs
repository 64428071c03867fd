//! The commands end to end, on one or two simulated devices.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use crate::harness::*;

#[test]
fn publish_and_list_work_with_no_config_at_all() {
    let w = World::new();
    let a = w.bare_device("a");
    a.publish("s1", &["--title", "Fix the parser", "--status", "working"]);
    let rows = a.list(&[]);
    assert_eq!(sessions(&rows), ["s1"]);
    let r = &rows[0];
    assert!(r.live);
    assert!(r.local);
    assert_eq!(r.state, "live");
    assert_eq!(r.status, "working");
    assert_eq!(r.profile, "default");
    assert_eq!(r.client, "terminal");
    assert_eq!(r.seq, 1);
    assert_eq!(r.device_id, a.device_id());
    let file = a.default_dir().join(&r.file);
    assert_eq!(file.metadata().unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(
        a.default_dir().metadata().unwrap().permissions().mode() & 0o777,
        0o700
    );
    // The device id lives outside the records dir.
    assert!(!a.device_id().is_empty());
    assert!(std::fs::read_dir(a.default_dir()).unwrap().count() == 1);
    // Table output names the session and marks it as this device's.
    let table = a.run(&["list"]).success().stdout;
    assert!(table.starts_with("SESSION"), "{table}");
    assert!(
        table.contains("*s1") && table.contains("Fix the parser"),
        "{table}"
    );
    assert!(
        !table.contains('\x1b'),
        "no color when not a terminal: {table:?}"
    );
}

#[test]
fn a_second_device_sees_the_first_and_not_as_its_own() {
    let w = World::new();
    let (a, b) = (w.device("a"), w.device("b"));
    a.publish("s1", &["--client", "gateway"]);
    b.publish("s2", &[]);
    let on_b = b.list(&[]);
    assert_eq!(on_b.len(), 2);
    let s1 = on_b.iter().find(|r| r.session_id == "s1").unwrap();
    assert!(!s1.local);
    assert_eq!(s1.device_id, a.device_id());
    let s2 = on_b.iter().find(|r| r.session_id == "s2").unwrap();
    assert!(s2.local);
    // Newest first.
    assert_eq!(sessions(&on_b), ["s2", "s1"]);
    assert_ne!(a.device_id(), b.device_id());
}

#[test]
fn republishing_rewrites_one_file_and_bumps_seq() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &["--status", "idle"]);
    let first = a.list(&[]).remove(0);
    a.publish("s1", &["--status", "working"]);
    let rows = a.list(&[]);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].seq, 2);
    assert_eq!(rows[0].status, "working");
    assert_eq!(rows[0].started_at, first.started_at);
    assert_eq!(rows[0].file, first.file);
    assert_eq!(std::fs::read_dir(w.shared()).unwrap().count(), 1);
}

#[test]
fn clear_writes_a_tombstone_that_other_devices_honour() {
    let w = World::new();
    let (a, b) = (w.device("a"), w.device("b"));
    a.publish("s1", &[]);
    a.publish("s2", &[]);
    // B cannot clear A's record.
    let out = b.run(&["clear", "--session", "s1"]).success();
    assert!(out.stderr.contains("nothing to clear"), "{}", out.stderr);
    assert_eq!(sessions(&b.list(&[])).len(), 2);

    let out = a.run(&["clear", "--session", "s1"]).success();
    assert!(out.stdout.contains("cleared s1"), "{}", out.stdout);
    assert_eq!(sessions(&b.list(&[])), ["s2"]);
    // The file is still there, as a tombstone.
    let all = b.list(&["--include-expired"]);
    let tomb = all.iter().find(|r| r.session_id == "s1").unwrap();
    assert_eq!(tomb.state, "ended");
    assert_eq!(tomb.status, "ended");
    assert!(!tomb.live);
    // expires_at lies the skew tolerance (5 min) before ended_at.
    let before = tomb.ended_at.unwrap() - tomb.expires_at.unwrap();
    assert!((before - 300.0).abs() < 1e-3, "{before}");
    assert_eq!(tomb.seq, 2);
    // Clearing again is not an error, and says so.
    let again = a.run(&["clear", "--session", "s1"]).success();
    assert!(again.stderr.contains("already ended"), "{}", again.stderr);
    // Publishing again revives the session under a higher seq.
    a.publish("s1", &[]);
    let rows = b.list(&["--session", "s1"]);
    assert_eq!(rows[0].seq, 3);
    assert!(rows[0].live);
}

#[test]
fn clear_needs_a_target_and_matches_key_or_instance() {
    let w = World::new();
    let a = w.device("a");
    a.run(&["clear"]).code(2);
    a.publish("s1", &["--key", "durable-1", "--instance", "gw-1"]);
    a.publish("s2", &["--instance", "gw-1"]);
    a.publish("s3", &["--instance", "gw-2"]);
    a.run(&["clear", "--session", "durable-1"]).success();
    assert_eq!(sessions(&a.list(&[])), ["s3", "s2"]);
    a.run(&["clear", "--instance", "gw-1"]).success();
    assert_eq!(sessions(&a.list(&[])), ["s3"]);
}

#[test]
fn show_finds_by_id_or_key_and_fails_when_absent() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &["--key", "k1", "--title", "T"]);
    let by_key = a.show("k1");
    assert_eq!(by_key.session_id, "s1");
    assert!(by_key.live);
    let human = a.run(&["show", "s1"]).success().stdout;
    assert!(human.contains("title        T"), "{human}");
    let missing = a.run(&["show", "nope"]).code(1);
    assert!(missing.stderr.contains("'nope'"), "{}", missing.stderr);
    // Two instances of one session: the newest wins (as in `list`, the
    // other is its superseded copy); `-v` counts the other.
    a.publish(
        "s1",
        &["--instance", "other", "--key", "k1", "--title", "newer"],
    );
    let out = a.run(&["show", "s1", "--json"]).success();
    let shown: JsonRow = parse_json(&out.stdout, "show --json");
    assert_eq!(shown.title, "newer");
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    let out = a.run(&["-v", "show", "s1", "--json"]).success();
    assert!(
        out.stderr
            .contains("1 other record matched 's1' (expired, ended or superseded)"),
        "{}",
        out.stderr
    );
}

/// `show` warns of other matches only when they are other live sessions
/// (what `list` shows beside each other), not of an old expired or ended
/// copy of the one shown.
#[test]
fn show_warns_only_of_other_live_sessions() {
    let w = World::new();
    let (a, b) = (w.device("a"), w.device("b"));
    // An expired copy (another instance, ten minutes ago) and an ended one.
    let mut old = faked(a.cmd(), "-10m");
    run_ok(old.args([
        "publish",
        "--session",
        "s",
        "--instance",
        "old",
        "--ttl",
        "1s",
    ]));
    a.publish("s", &["--instance", "ended"]);
    a.run(&["clear", "--session", "s", "--instance", "ended"])
        .success();
    a.publish("s", &["--title", "now"]);
    let out = a.run(&["show", "s"]).success();
    assert!(out.stdout.contains("title        now"), "{}", out.stdout);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    let out = a.run(&["-v", "show", "s"]).success();
    assert!(
        out.stderr.contains("2 other records matched 's'"),
        "{}",
        out.stderr
    );
    // Another device's live session of that id: two rows in `list`.
    b.publish("s", &["--title", "b's"]);
    assert_eq!(a.list(&["--session", "s"]).len(), 2);
    let out = a.run(&["show", "s"]).success();
    assert!(
        out.stderr
            .contains("warning: 1 other live record matched 's'; showing the newest"),
        "{}",
        out.stderr
    );
}

#[test]
fn strict_refuses_with_exit_3_and_writes_nothing() {
    let w = World::new();
    let a = w.device("a");
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let out = a
        .run(&["publish", "--session", "s1", "--title", secret, "--strict"])
        .code(3);
    assert!(out.stderr.contains("title"), "{}", out.stderr);
    assert!(!out.stderr.contains(secret));
    assert!(!w.shared().exists() || std::fs::read_dir(w.shared()).unwrap().count() == 0);
    // Also from the profile.
    a.write_config(&format!(
        "[profiles.default]\ndir = {:?}\nstrict = true\n",
        w.shared().display().to_string()
    ));
    a.run(&["publish", "--session", "s1", "--endpoint", "ssh://u:pw@h/x"])
        .code(3);
}

#[test]
fn publish_redacts_and_warns_by_field_never_by_value() {
    let w = World::new();
    let a = w.device("a");
    let out = a.publish(
        "s1",
        &[
            "--endpoint",
            "https://alice:hunter22@host/x?access_token=t0ken99&view=1#frag",
            "--title",
            "using sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
            "--meta",
            "api_key=v4lue",
            "--meta",
            "branch=main",
        ],
    );
    for leaked in ["hunter22", "t0ken99", "abcdefghijklmnop", "v4lue"] {
        assert!(!out.stderr.contains(leaked), "{leaked} in {}", out.stderr);
    }
    for field in ["endpoint", "title", "metadata.api_key"] {
        assert!(
            out.stderr.contains(field),
            "{field} not named: {}",
            out.stderr
        );
    }
    let file_text: String = std::fs::read_dir(w.shared())
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    for leaked in ["hunter22", "t0ken99", "abcdefghijklmnop", "v4lue"] {
        assert!(!file_text.contains(leaked), "{leaked} written: {file_text}");
    }
    let r = a.list(&[]).remove(0);
    // A fragment without a credential parameter is kept.
    assert_eq!(r.endpoint, "https://alice@host/x?view=1#frag");
    assert_eq!(r.title, "using [redacted]");
    assert_eq!(
        r.metadata,
        BTreeMap::from([("branch".to_string(), "main".to_string())])
    );
}

#[test]
fn foreign_records_are_redacted_on_output() {
    let w = World::new();
    let a = w.device("a");
    let t = now();
    write_record(
        &w.shared(),
        "other.s9.json",
        &json!({"version": 1, "session_id": "s9", "profile": "default", "client": "x",
                "endpoint": "ssh://bob:pw123@h/x", "title": "key AKIAIOSFODNN7EXAMPLE",
                "updated_at": t, "expires_at": t + 90.0, "metadata": {"password": "hunter2"}}),
    );
    let out = a.run(&["list", "--json"]).success();
    assert!(!out.stdout.contains("pw123"));
    assert!(!out.stdout.contains("AKIAIOSFODNN7EXAMPLE"));
    assert!(!out.stdout.contains("hunter2"));
    assert!(out.stderr.contains("other.s9.json"), "{}", out.stderr);
    assert!(!out.stderr.contains("pw123"));
    let rows: Vec<JsonRow> = parse_json(&out.stdout, "list --json");
    assert_eq!(rows[0].endpoint, "ssh://bob@h/x");
}

#[test]
fn a_hermes_record_lists_and_ours_reads_back_in_a_hermes_style_reader() {
    let w = World::new();
    let a = w.device("a");
    let t = now();
    // Exactly the fields Hermes Agent writes, floats for times, no extensions.
    write_record(
        &w.shared(),
        "laptop-4242.abc.json",
        &json!({"version": 1, "session_id": "abc", "session_key": "abc", "status": "idle",
                "title": "From Hermes", "model": "m", "cwd": "/w", "source": "cli", "client": "",
                "profile": "", "endpoint": "", "host": "laptop", "pid": 4242,
                "instance_id": "laptop-4242", "updated_at": t, "expires_at": t + 90.0,
                "metadata": {}}),
    );
    a.publish("ours", &["--title", "From presence"]);
    let rows = a.list(&[]);
    assert_eq!(sessions(&rows), ["ours", "abc"]);
    assert!(!rows[1].local);
    assert_eq!(rows[1].seq, 0);

    // A reader that knows only the v1 fields, in the way Hermes reads them:
    // glob *.json, json.load, drop expired by expires_at, dedupe, sort.
    let script = r#"
import json, sys, time, glob, os
now = time.time()
best = {}
for path in glob.glob(os.path.join(sys.argv[1], "*.json")):
    with open(path, encoding="utf-8") as f:
        rec = json.load(f)
    if float(rec.get("expires_at") or 0) < now:
        continue
    target = str(rec.get("endpoint") or "").strip() or str(rec.get("session_id") or "")
    key = (str(rec.get("profile") or ""), str(rec.get("client") or rec.get("source") or ""), target)
    if key not in best or float(rec.get("updated_at") or 0) > float(best[key].get("updated_at") or 0):
        best[key] = rec
rows = sorted(best.values(), key=lambda r: float(r.get("updated_at") or 0), reverse=True)
print(json.dumps([[r["session_id"], r["title"], type(r["updated_at"]).__name__, type(r["pid"]).__name__] for r in rows]))
"#;
    let out = std::process::Command::new(require_tool("python3"))
        .arg("-c")
        .arg(script)
        .arg(w.shared())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        seen,
        json!([
            ["ours", "From presence", "float", "int"],
            ["abc", "From Hermes", "float", "int"]
        ])
    );
}

#[test]
fn conflict_copies_and_successors_collapse_and_all_shows_losers() {
    let w = World::new();
    let a = w.device("a");
    let t = now();
    let rec = |sid: &str, updated: f64, seq: u64, endpoint: &str| {
        json!({"version": 1, "session_id": sid, "profile": "default", "client": "terminal",
               "endpoint": endpoint, "updated_at": updated, "expires_at": updated + 90.0,
               "seq": seq, "device_id": "feedface", "instance_id": "h-feedface"})
    };
    let dir = w.shared();
    write_record(&dir, "h-feedface.s1.json", &rec("s1", t - 2.0, 5, ""));
    write_record(
        &dir,
        "h-feedface.s1.sync-conflict-20261130-101112-ABCDEFG.json",
        &rec("s1", t - 1.0, 4, ""),
    );
    write_record(
        &dir,
        "h-feedface.s1 (laptop's conflicted copy 2026-11-30).json",
        &rec("s1", t - 3.0, 3, ""),
    );
    // Two runtimes on one endpoint: the second replaces the first.
    write_record(
        &dir,
        "h-feedface.run1.json",
        &rec("run1", t - 5.0, 1, "tmux://h/main"),
    );
    write_record(
        &dir,
        "h-feedface.run2.json",
        &rec("run2", t - 4.0, 1, "tmux://h/main"),
    );
    let rows = a.list(&[]);
    // Neither names a start time: in session id order.
    assert_eq!(sessions(&rows), ["run2", "s1"]);
    assert_eq!(
        rows[1].file,
        "h-feedface.s1.sync-conflict-20261130-101112-ABCDEFG.json"
    );
    assert!(rows[1].conflict_copy);

    let all = a.list(&["--all"]);
    assert_eq!(all.len(), 5);
    let losers: Vec<_> = all.iter().filter(|r| r.superseded_by.is_some()).collect();
    assert_eq!(losers.len(), 3);
    let orig = all.iter().find(|r| r.file == "h-feedface.s1.json").unwrap();
    assert_eq!(
        orig.superseded_by.as_deref(),
        Some("h-feedface.s1.sync-conflict-20261130-101112-ABCDEFG.json")
    );
    assert_eq!(orig.lost_because.as_deref(), Some("older"));
    let run1 = all.iter().find(|r| r.session_id == "run1").unwrap();
    assert_eq!(run1.superseded_by.as_deref(), Some("h-feedface.run2.json"));
    // Winners carry no superseded_by key at all.
    let plain = a.run(&["list", "--json"]).success().stdout;
    assert!(!plain.contains("superseded_by"), "{plain}");
    assert!(rows.iter().all(|r| r.superseded_by.is_none()));
}

#[test]
fn a_stale_conflict_copy_cannot_revive_a_cleared_session() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &[]);
    let file = a.list(&[]).remove(0).file;
    let live_copy = std::fs::read(w.shared().join(&file)).unwrap();
    a.run(&["clear", "--session", "s1"]).success();
    // The old live version arrives late as a conflict copy.
    let copy = file.replace(".json", ".sync-conflict-20261130-101112-XYZ.json");
    std::fs::write(w.shared().join(copy), live_copy).unwrap();
    assert!(a.list(&[]).is_empty());
    let all = a.list(&["--all"]);
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].state, "ended");
    assert_eq!(all[1].superseded_by.as_ref(), Some(&file));
}

#[test]
fn late_stale_copies_and_short_ttls_expire() {
    let w = World::new();
    let a = w.device("a");
    let t = now();
    // A copy from a device that was offline for a day arrives now: fresh
    // ctime, ancient expires_at.
    write_record(
        &w.shared(),
        "old.s1.json",
        &json!({"session_id": "s1", "profile": "default", "updated_at": t - 86400.0,
                "expires_at": t - 86310.0}),
    );
    // A writer 4 minutes behind, just refreshed: within the 5 min skew.
    write_record(
        &w.shared(),
        "slow.s2.json",
        &json!({"session_id": "s2", "profile": "default", "updated_at": t - 240.0,
                "expires_at": t - 150.0}),
    );
    let rows = a.list(&[]);
    assert_eq!(sessions(&rows), ["s2"]);
    assert!(rows[0].claimed_age_s.unwrap() >= 240.0);
    assert!(rows[0].age_s < 60.0);
    let expired = a.list(&["--include-expired", "--session", "s1"]);
    assert_eq!(expired[0].state, "expired");

    // Long enough to be listed on a loaded machine, short enough to wait for.
    a.publish("short", &["--ttl", "5s"]);
    assert_eq!(sessions(&a.list(&["--session", "short"])), ["short"]);
    wait_until("the 5 s record expired", PATIENCE, || {
        a.list(&["--session", "short"]).is_empty()
    });
    let gone = a.list(&["--include-expired", "--session", "short"]);
    assert_eq!(gone[0].state, "stale");
}

#[test]
fn filters_select_rows_after_dedupe() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &["--client", "desktop"]);
    a.publish("s2", &["--source", "telegram", "--client", ""]);
    a.publish("s3", &[]);
    assert_eq!(sessions(&a.list(&["--client", "desktop"])), ["s1"]);
    assert_eq!(sessions(&a.list(&["--client", "telegram"])), ["s2"]);
    assert_eq!(sessions(&a.list(&["--session", "s3"])), ["s3"]);
    let host = a.list(&[]).remove(0).host;
    assert_eq!(a.list(&["--host", &host]).len(), 3);
    assert!(a.list(&["--host", "no-such-host"]).is_empty());
}

#[test]
fn profiles_sharing_a_dir_stay_apart() {
    let w = World::new();
    let a = w.bare_device("a");
    let dir = w.shared().display().to_string();
    a.write_config(&format!(
        "default_profile = \"home\"\n\
         [profiles.home]\ndir = {dir:?}\n\
         [profiles.work]\ndir = {dir:?}\n\
         [profiles.everything]\ndir = {dir:?}\nshow = [\"*\"]\n"
    ));
    a.publish("same-id", &["--title", "home"]);
    a.publish("same-id", &["--title", "work", "--profile", "work"]);
    assert_eq!(std::fs::read_dir(w.shared()).unwrap().count(), 2);
    // An explicit instance that would overwrite another profile's record is refused.
    a.publish("x", &["--instance", "shared-inst"]);
    let out = a
        .run(&[
            "publish",
            "--session",
            "x",
            "--instance",
            "shared-inst",
            "--profile",
            "work",
        ])
        .code(2);
    assert!(out.stderr.contains("another --instance"), "{}", out.stderr);
    a.run(&["clear", "--session", "x"]).success();
    assert_eq!(a.list(&[])[0].title, "home");
    assert_eq!(a.list(&[])[0].profile, "home");
    assert_eq!(a.list(&["--profile", "work"])[0].title, "work");
    assert_eq!(a.list(&["--profile", "work"]).len(), 1);
    assert_eq!(a.list(&["--all-profiles"]).len(), 2);
    assert_eq!(a.list(&["--profile", "everything"]).len(), 2);
    // PRESENCE_PROFILE selects too; --profile beats it.
    let out = a
        .cmd()
        .env("PRESENCE_PROFILE", "work")
        .args(["list", "--json"])
        .output()
        .unwrap();
    let rows: Vec<JsonRow> = parse_json(&String::from_utf8_lossy(&out.stdout), "list --json");
    assert_eq!(rows[0].title, "work");
    // clear in one profile never reaches the other.
    a.run(&["clear", "--session", "same-id", "--profile", "work"])
        .success();
    assert!(a.list(&["--profile", "work"]).is_empty());
    assert_eq!(a.list(&[])[0].title, "home");
    // show does not reach across profiles either.
    a.run(&["show", "same-id", "--profile", "work"]).success();
    assert_eq!(a.show("same-id").title, "home");
}

#[test]
fn dir_flag_and_config_env_override() {
    let w = World::new();
    let a = w.bare_device("a");
    let other = w.tmp.path().join("elsewhere");
    a.run(&[
        "--dir",
        other.to_str().unwrap(),
        "publish",
        "--session",
        "x",
    ])
    .success();
    assert!(other.is_dir());
    assert!(a.list(&[]).is_empty());
    assert_eq!(a.list(&["--dir", other.to_str().unwrap()]).len(), 1);
    let cfg = w.tmp.path().join("custom.toml");
    std::fs::write(
        &cfg,
        format!(
            "[profiles.default]\ndir = {:?}\n",
            other.display().to_string()
        ),
    )
    .unwrap();
    let out = a
        .cmd()
        .env("PRESENCE_CONFIG", &cfg)
        .args(["list", "--json"])
        .output()
        .unwrap();
    let rows: Vec<JsonRow> = parse_json(&String::from_utf8_lossy(&out.stdout), "list --json");
    assert_eq!(rows.len(), 1);
}

#[test]
fn config_errors_name_the_problem_and_the_path() {
    let w = World::new();
    let a = w.bare_device("a");
    let missing = w.tmp.path().join("nope.toml");
    let out = a
        .run(&["--config", missing.to_str().unwrap(), "list"])
        .code(2);
    assert!(
        out.stderr.contains("nope.toml") && out.stderr.contains("config init"),
        "{}",
        out.stderr
    );

    a.write_config("[profiles.default]\nttl = \"90s\"\nrefresh_interval = \n");
    let out = a.run(&["list"]).code(1);
    assert!(
        out.stderr.contains("config.toml") && out.stderr.contains("line 3"),
        "{}",
        out.stderr
    );

    a.write_config("[profiles.work]\n");
    let out = a.run(&["--profile", "wrok", "list"]).code(2);
    assert!(
        out.stderr.contains("'wrok'") && out.stderr.contains("default, work"),
        "{}",
        out.stderr
    );

    a.write_config("[profiles.default]\nttl = \"30s\"\nrefresh_interval = \"45s\"\n");
    let out = a.run(&["list"]).code(1);
    assert!(
        out.stderr.contains("refresh_interval") && out.stderr.contains("not below the ttl"),
        "{}",
        out.stderr
    );

    // A dir that cannot be created: its parent is a file.
    let blocker = w.tmp.path().join("blocker");
    std::fs::write(&blocker, "x").unwrap();
    let bad = blocker.join("presence");
    a.write_config(&format!(
        "[profiles.default]\ndir = {:?}\n",
        bad.display().to_string()
    ));
    let out = a.run(&["publish", "--session", "s"]).code(1);
    assert!(out.stderr.contains(bad.to_str().unwrap()), "{}", out.stderr);
    // The dir exists but is a file.
    a.write_config(&format!(
        "[profiles.default]\ndir = {:?}\n",
        blocker.display().to_string()
    ));
    let out = a.run(&["publish", "--session", "s"]).code(1);
    assert!(out.stderr.contains("not a directory"), "{}", out.stderr);
    let out = a.run(&["list"]).code(1);
    assert!(out.stderr.contains("blocker"), "{}", out.stderr);
}

#[test]
fn usage_errors_exit_2() {
    let w = World::new();
    let a = w.device("a");
    a.run(&["publish"]).code(2);
    let out = a
        .run(&["publish", "--session", "s", "--meta", "novalue"])
        .code(2);
    assert!(out.stderr.contains("KEY=VALUE"), "{}", out.stderr);
    a.run(&["publish", "--session", "s", "--ttl", "2h"]).code(2);
    a.run(&["publish", "--session", "s", "--ttl", "soon"])
        .code(2);
    a.run(&["publish", "--session", "s", "--owner-pid", "999999999"])
        .code(2);
    a.run(&["frobnicate"]).code(2);
    let many: Vec<String> = (0..33)
        .flat_map(|i| ["--meta".to_string(), format!("k{i}=v")])
        .collect();
    let mut args = vec!["publish", "--session", "s"];
    args.extend(many.iter().map(String::as_str));
    let out = a.run(&args).code(2);
    assert!(out.stderr.contains("at most 32"), "{}", out.stderr);
}

/// A negative duration is refused by its flag's parser, which names the
/// flag and the problem, whether it is its own word or joined with `=`;
/// nothing after `run --` is touched, and a flag followed by a flag still
/// lacks its value.
#[test]
fn negative_durations_are_refused_by_name() {
    let w = World::new();
    let a = w.device("a");
    let cases: [(&[&str], &str); 7] = [
        (&["publish", "--session", "s", "--ttl", "-5s"], "--ttl"),
        (&["publish", "--session", "s", "--ttl=-5s"], "--ttl"),
        (&["publish", "--session", "s", "--ttl", "-5"], "--ttl"),
        (
            &["run", "--session", "s", "--ttl", "-1m", "--", "true"],
            "--ttl",
        ),
        (&["refresh", "--every", "-5s"], "--every"),
        (&["refresh", "--every", "-.5s"], "--every"),
        (&["watch", "--poll", "-1s"], "--poll"),
    ];
    for (args, flag) in cases {
        let out = a.run(args).code(2);
        assert!(
            out.stderr.contains(&format!("for '{flag} "))
                && out.stderr.contains("a duration cannot be negative")
                && out.stderr.contains("write e.g."),
            "{args:?}: {}",
            out.stderr
        );
    }
    let out = a
        .run(&["publish", "--session", "s", "--ttl", "--title", "t"])
        .code(2);
    assert!(
        out.stderr.contains("a value is required for '--ttl <DUR>'"),
        "{}",
        out.stderr
    );
    // The command's own arguments are its own.
    let out = a
        .run(&[
            "run",
            "--session",
            "s",
            "--",
            "sh",
            "-c",
            "echo \"$1\"",
            "sh",
            "--ttl",
            "-5s",
        ])
        .success();
    assert_eq!(out.stdout, "--ttl\n");
    assert!(a.list(&[]).is_empty(), "run cleared its session");
}

/// `list --help` says what the marks and columns mean; `-q` is the global
/// `--quiet`, which leaves out notes and warnings, never the rows asked for.
#[test]
fn list_help_explains_the_columns_and_quiet_keeps_the_rows() {
    let w = World::new();
    let a = w.device("a");
    let help = a.run(&["list", "--help"]).success().stdout;
    for line in [
        "SESSION  the id: * this device's, ? unsigned",
        "UP       how long the session has run",
        "SEEN     when its record last arrived here",
        "EXPIRES  when it stops being live unless refreshed",
        "presence list --format '{session_id}'",
    ] {
        assert!(help.contains(line), "{line}: {help}");
    }
    let help = a.run(&["--help"]).success().stdout;
    assert!(
        help.contains("a table, JSON) is printed all the same"),
        "{help}"
    );
    let out = a.run(&["-q", "list"]).success();
    assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("", ""));
    a.publish("s1", &[]);
    let out = a.run(&["list", "-q"]).success();
    assert!(
        out.stdout.starts_with("SESSION") && out.stdout.contains("*s1"),
        "{}",
        out.stdout
    );
}

/// `--help` names the environment variables a flag reads, never their
/// values (not an empty `PRESENCE_PROFILE=` either).
#[test]
fn help_names_env_vars_without_their_values() {
    let w = World::new();
    let a = w.device("a");
    for env in [None, Some("secret-profile")] {
        let mut cmd = a.cmd();
        if let Some(v) = env {
            cmd.env("PRESENCE_PROFILE", v).env("PRESENCE_CONFIG", v);
        }
        let help = String::from_utf8(run_ok(cmd.args(["list", "--help"])).stdout).unwrap();
        assert!(help.contains("[env: PRESENCE_PROFILE]"), "{help}");
        assert!(help.contains("[env: PRESENCE_CONFIG]"), "{help}");
        assert!(
            !help.contains("PRESENCE_PROFILE=") && !help.contains("secret"),
            "{help}"
        );
    }
}

#[test]
fn empty_listing_is_success_and_an_empty_array() {
    let w = World::new();
    let a = w.device("a");
    assert!(a.list(&[]).is_empty());
    let out = a.run(&["list"]).success();
    assert!(out.stdout.is_empty());
    assert!(out.stderr.contains("no live sessions"), "{}", out.stderr);
    assert!(a.run(&["-q", "list"]).success().stderr.is_empty());
}

#[test]
fn ttl_and_owner_are_recorded() {
    let w = World::new();
    let a = w.device("a");
    let me = std::process::id().to_string();
    let out: JsonRecord = a.json(&[
        "publish",
        "--session",
        "s",
        "--ttl",
        "45s",
        "--owner-pid",
        &me,
        "--json",
    ]);
    let ttl = out.expires_at.unwrap() - out.updated_at.unwrap();
    assert!((ttl - 45.0).abs() < 1e-6, "{ttl}");
    assert_eq!(out.pid.to_string(), me);
    assert!(out.owner_start.is_some());
}

#[test]
fn long_fields_are_cut_with_a_warning() {
    let w = World::new();
    let a = w.device("a");
    let long = "t".repeat(400);
    let out = a.publish("s", &["--title", &long]);
    assert!(out.stderr.contains("title"), "{}", out.stderr);
    assert_eq!(a.list(&[])[0].title.len(), 256);
}

#[test]
fn file_names_are_reduced_and_collision_proof() {
    let w = World::new();
    let a = w.device("a");
    a.publish("a/b", &["--instance", "gw 1"]);
    a.publish("a_b", &["--instance", "gw 1"]);
    a.publish("../../etc/x", &["--instance", "gw 1"]);
    let mut names: Vec<String> = std::fs::read_dir(w.shared())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("gw_1-") && n.ends_with(".json") && !n.contains('/'))
    );
    assert_eq!(a.list(&[]).len(), 3);
}

#[test]
fn config_path_show_and_init() {
    let w = World::new();
    let a = w.bare_device("a");
    let path = a.run(&["config", "path"]).success().stdout;
    assert_eq!(path.trim(), a.config_path().to_str().unwrap());
    let shown = a.run(&["config", "show"]).success().stdout;
    assert!(shown.contains("built-in defaults"), "{shown}");
    assert!(
        shown.contains(&format!(
            "dir = {:?}",
            a.default_dir().display().to_string()
        )),
        "{shown}"
    );
    a.run(&["config", "init"]).success();
    assert!(a.config_path().exists());
    let out = a.run(&["config", "init"]).code(1);
    assert!(out.stderr.contains("already exists"), "{}", out.stderr);
    let shown_after = a.run(&["config", "show"]).success().stdout;
    // The example states the defaults: same settings as without a file.
    let settings = |s: &str| s.lines().skip(1).map(String::from).collect::<Vec<_>>();
    assert_eq!(settings(&shown_after), settings(&shown));
}

#[test]
fn completions_match_the_checked_in_files() {
    let w = World::new();
    let a = w.bare_device("a");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("completions");
    for (shell, file) in [
        ("bash", "presence.bash"),
        ("zsh", "_presence"),
        ("fish", "presence.fish"),
        ("elvish", "presence.elv"),
        ("powershell", "_presence.ps1"),
    ] {
        let generated = a.run(&["completions", shell]).success().stdout;
        let checked_in = std::fs::read_to_string(root.join(file)).unwrap_or_default();
        assert!(
            generated == checked_in,
            "completions/{file} is out of date; regenerate with \
             `cargo run -q -- completions {shell} > completions/{file}`"
        );
    }
}

/// Completes `line` (the word under the cursor last, possibly empty) with the
/// bash script `presence completions bash` prints, in a real bash.
fn bash_complete(dev: &Device, line: &[&str]) -> Vec<String> {
    let words: Vec<String> = line.iter().map(|w| format!("'{w}'")).collect();
    let script = format!(
        "source <(presence completions bash)
COMP_WORDS=({words}); COMP_CWORD={cword}
_presence presence \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"
printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        words = words.join(" "),
        cword = line.len() - 1,
    );
    let out = run_ok(dev.program(require_tool("bash")).args(["-c", &script]));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

#[test]
fn bash_completion_offers_profiles_statuses_commands_after_run_and_no_hidden_commands() {
    let w = World::new();
    let a = w.bare_device("a");
    a.write_config(
        "[profiles.work]\ndir = \"/tmp/presence-work\"\n[profiles.hermes]\ndir = \"/tmp/presence-hermes\"\n",
    );
    let mut profiles = bash_complete(&a, &["presence", "list", "--profile", ""]);
    profiles.sort();
    assert_eq!(profiles, ["default", "hermes", "work"]);
    assert_eq!(
        bash_complete(&a, &["presence", "--profile", "he"]),
        ["hermes"]
    );
    let statuses = bash_complete(&a, &["presence", "publish", "--status", "w"]);
    assert_eq!(statuses, ["working", "waiting"]);
    // After `run --`: a command, not presence's flags.
    let commands = bash_complete(&a, &["presence", "run", "--session", "s", "--", "bas"]);
    assert!(commands.iter().any(|c| c == "bash"), "{commands:?}");
    assert!(
        !commands.iter().any(|c| c.starts_with("--")),
        "{commands:?}"
    );
    let subcommands = bash_complete(&a, &["presence", ""]);
    assert!(subcommands.iter().any(|c| c == "list"), "{subcommands:?}");
    for hidden in ["manpage", "complete"] {
        assert!(
            !subcommands.iter().any(|c| c == hidden),
            "{hidden} offered: {subcommands:?}"
        );
    }
}

/// A device whose default profile has two live sessions (one of another
/// device, on `desktop`, and one whose id a shell would evaluate), and
/// whose profile `hermes` has one of its own. Those of `desktop` started
/// ten minutes before this device's, whatever the machine's speed.
fn live_world(w: &World) -> Device {
    let a = w.bare_device("a");
    let hermes = w.tmp.path().join("hermes");
    a.write_config(&format!(
        "[profiles.default]\ndir = {:?}\n[profiles.hermes]\ndir = {:?}\n",
        w.shared().display().to_string(),
        hermes.display().to_string()
    ));
    a.publish("solo-7f2", &[]);
    a.run(&["--profile", "hermes", "publish", "--session", "herm-1"])
        .success();
    let t = now();
    for (session, file) in [
        ("gw-9", "desktop.gw-9.json"),
        ("x$(touch pwned)", "desktop.x.json"),
    ] {
        let json = serde_json::json!({
            "version": 1, "session_id": session, "client": "gateway", "profile": "default",
            "host": "desktop", "started_at": t - 600.0, "updated_at": t, "expires_at": t + 600.0,
        });
        write_record(&w.shared(), file, &json);
    }
    a
}

/// `presence complete sessions|hosts`: the live ids and hosts, only those a
/// shell may be given.
#[test]
fn complete_lists_live_sessions_and_hosts_a_shell_may_be_given() {
    let w = World::new();
    let a = live_world(&w);
    let sessions = a.run(&["complete", "sessions"]).success().stdout;
    assert_eq!(sessions, "solo-7f2\ngw-9\n");
    let mut hosts: Vec<String> = a
        .run(&["complete", "hosts"])
        .success()
        .stdout
        .lines()
        .map(String::from)
        .collect();
    assert!(hosts.iter().any(|h| h == "desktop"), "{hosts:?}");
    hosts.retain(|h| h != "desktop");
    assert_eq!(hosts, [a.show("solo-7f2").host]);
    assert_eq!(
        a.run(&["--profile", "hermes", "complete", "sessions"])
            .success()
            .stdout,
        "herm-1\n"
    );
    // No configuration, no directory: nothing, quietly.
    let b = w.bare_device("b");
    let out = b.run(&["complete", "sessions"]).success();
    assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("", ""));
}

#[test]
fn bash_completion_offers_live_sessions_and_hosts() {
    let w = World::new();
    let a = live_world(&w);
    let both = ["solo-7f2", "gw-9"];
    assert_eq!(bash_complete(&a, &["presence", "show", ""]), both);
    assert_eq!(bash_complete(&a, &["presence", "open", "so"]), ["solo-7f2"]);
    assert_eq!(
        bash_complete(&a, &["presence", "clear", "--session", ""]),
        both
    );
    assert_eq!(
        bash_complete(&a, &["presence", "list", "--session", "g"]),
        ["gw-9"]
    );
    assert_eq!(
        bash_complete(&a, &["presence", "list", "--host", "des"]),
        ["desktop"]
    );
    // Of the profile the command line names.
    assert_eq!(
        bash_complete(&a, &["presence", "--profile", "hermes", "show", ""]),
        ["herm-1"]
    );
    assert_eq!(
        bash_complete(&a, &["presence", "show", "--profile", "he"]),
        ["hermes"]
    );
    let flags = bash_complete(&a, &["presence", "show", "--j"]);
    assert_eq!(flags, ["--json"]);
    assert!(!w.tmp.path().join("pwned").exists() && !a.root.join("pwned").exists());
}

/// What fish completes for `line` (`complete -C`), the candidates without
/// their descriptions.
fn fish_complete(dev: &Device, line: &str) -> Vec<String> {
    let script = format!(
        "presence completions fish | source; complete -C {}",
        serde_json::to_string(line).unwrap().replace('$', "\\$")
    );
    let out = run_ok(
        dev.program(require_tool("fish"))
            .args(["--no-config", "-c", &script])
            .current_dir(&dev.root),
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

#[test]
fn fish_completion_offers_live_sessions_hosts_and_global_profiles() {
    let w = World::new();
    let a = live_world(&w);
    let mut both = fish_complete(&a, "presence show ");
    both.sort();
    assert_eq!(both, ["gw-9", "solo-7f2"]);
    assert_eq!(fish_complete(&a, "presence open so"), ["solo-7f2"]);
    assert_eq!(
        fish_complete(&a, "presence clear --session so"),
        ["solo-7f2"]
    );
    assert_eq!(fish_complete(&a, "presence list --session g"), ["gw-9"]);
    assert_eq!(fish_complete(&a, "presence list --host des"), ["desktop"]);
    assert_eq!(
        fish_complete(&a, "presence --profile hermes show "),
        ["herm-1"]
    );
    // The global place the README writes it in: profiles, not files.
    let mut profiles = fish_complete(&a, "presence --profile ");
    profiles.sort();
    assert_eq!(profiles, ["default", "hermes"]);
    assert_eq!(fish_complete(&a, "presence list --profile he"), ["hermes"]);
    assert!(!w.tmp.path().join("pwned").exists() && !a.root.join("pwned").exists());
}

/// zsh completes in a real terminal only: each of `lines` is typed into a
/// zsh in a tmux pane, then Tab; the line as the completion left it (the
/// space after a whole word is not seen: tmux trims it).
fn zsh_complete(w: &World, dev: &Device, lines: &[&str]) -> Vec<String> {
    let tmpdir = w.tmp.path().join("tmux");
    let fpath = w.tmp.path().join("zfunc");
    std::fs::create_dir_all(&tmpdir).unwrap();
    std::fs::create_dir_all(&fpath).unwrap();
    let script = dev.run(&["completions", "zsh"]).success().stdout;
    std::fs::write(fpath.join("_presence"), script).unwrap();
    let tmux = |args: &[&str]| {
        let mut c = dev.program(require_tool("tmux"));
        c.env("TMUX_TMPDIR", &tmpdir).env("TERM", "xterm-256color");
        String::from_utf8(run_ok(c.args(args)).stdout).unwrap()
    };
    struct Server<'a>(&'a dyn Fn(&[&str]) -> String);
    impl Drop for Server<'_> {
        fn drop(&mut self) {
            (self.0)(&["kill-server"]);
        }
    }
    let zsh = require_tool("zsh");
    tmux(&[
        "new-session",
        "-d",
        "-s",
        "z",
        "-x",
        "120",
        "-y",
        "20",
        zsh.to_str().unwrap(),
        "-f",
    ]);
    let _server = Server(&tmux);
    let screen = || tmux(&["capture-pane", "-p", "-t", "z"]);
    let setup = format!(
        "fpath=({} $fpath); autoload -U compinit; compinit -u; PS1='Z>'; cd {}",
        fpath.display(),
        dev.root.display()
    );
    tmux(&["send-keys", "-t", "z", &setup, "Enter"]);
    wait_for("zsh's prompt", PATIENCE, || {
        let text = screen();
        if text.lines().any(|l| l == "Z>") {
            Ok(())
        } else {
            Err(text)
        }
    });
    let mut got = Vec::new();
    for line in lines {
        tmux(&["send-keys", "-t", "z", "-l", line]);
        tmux(&["send-keys", "-t", "z", "Tab"]);
        // Completed once the line has grown past what was typed.
        let (done, _) = wait_for("zsh to complete", PATIENCE, || {
            let text = screen();
            match text.lines().rev().find(|l| l.starts_with("Z>")) {
                Some(l) if l.len() > line.len() + 2 => Ok(l[2..].to_string()),
                _ => Err(text),
            }
        });
        got.push(done);
        tmux(&["send-keys", "-t", "z", "C-u"]);
        tmux(&["send-keys", "-t", "z", "clear", "Enter"]);
        wait_for("a clear screen", PATIENCE, || {
            let text = screen();
            if text.trim_end() == "Z>" {
                Ok(())
            } else {
                Err(text)
            }
        });
    }
    got
}

#[test]
fn zsh_completion_offers_live_sessions_and_hosts() {
    let w = World::new();
    let a = live_world(&w);
    let got = zsh_complete(
        &w,
        &a,
        &[
            "presence show so",
            "presence open g",
            "presence clear --session so",
            "presence list --session g",
            "presence list --host des",
            "presence --profile hermes show h",
        ],
    );
    assert_eq!(
        got,
        [
            "presence show solo-7f2",
            "presence open gw-9",
            "presence clear --session solo-7f2",
            "presence list --session gw-9",
            "presence list --host desktop",
            "presence --profile hermes show herm-1",
        ]
    );
    assert!(!w.tmp.path().join("pwned").exists() && !a.root.join("pwned").exists());
}

#[test]
fn version_names_the_crate_version() {
    let w = World::new();
    let a = w.bare_device("a");
    let long = a.run(&["--version"]).success().stdout;
    assert!(
        long.starts_with(&format!("presence {}", env!("CARGO_PKG_VERSION"))),
        "{long}"
    );
    // `-V` is `--version`, the commit included (as `git describe` says,
    // when built from a checkout).
    let short = a.run(&["-V"]).success().stdout;
    assert_eq!(short, long);
    let describe = std::process::Command::new("git")
        .args(["describe", "--tags", "--always"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if let Some(describe) = describe {
        assert_eq!(
            long,
            format!("presence {} ({describe})\n", env!("CARGO_PKG_VERSION"))
        );
    }
}

#[test]
fn the_man_pages_match_the_checked_in_files_and_refer_only_to_each_other() {
    let w = World::new();
    let a = w.bare_device("a");
    let out = w.tmp.path().join("man");
    a.run(&["manpage", out.to_str().unwrap()]).success();
    let checked_in = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/man");
    let pages = |dir: &std::path::Path| {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".1"))
            .collect();
        names.sort();
        names
    };
    let generated = pages(&out);
    let regenerate = "regenerate with `rm docs/man/*.1 && cargo run -q -- manpage docs/man`";
    assert_eq!(
        generated,
        pages(&checked_in),
        "docs/man is out of date; {regenerate}"
    );
    for page in [
        "presence.1",
        "presence-list.1",
        "presence-run.1",
        "presence-config-init.1",
    ] {
        assert!(
            generated.iter().any(|p| p == page),
            "{page} in {generated:?}"
        );
    }
    for name in &generated {
        let text = std::fs::read_to_string(out.join(name)).unwrap();
        assert!(text.starts_with(".ie"), "{name}");
        assert!(
            std::fs::read_to_string(checked_in.join(name)).unwrap() == text,
            "docs/man/{name} is out of date; {regenerate}"
        );
        // Every page referred to exists.
        for (i, _) in text.match_indices("(1)") {
            let start = text[..i]
                .rfind(|c: char| c.is_whitespace() || c == '(')
                .map_or(0, |s| s + 1);
            let page = format!(
                "{}.1",
                text[start..i]
                    .replace("\\-", "-")
                    .replace("\\fB", "")
                    .replace("\\fR", "")
            );
            assert!(
                generated.contains(&page),
                "{name} refers to {page}, which does not exist"
            );
        }
    }
    // The examples are in the pages too.
    let list = std::fs::read_to_string(out.join("presence-list.1")).unwrap();
    assert!(list.contains(".SH EXAMPLES"), "{list}");
}

/// `--help` of every command, and every man page, point to the docs as they
/// travel (the project's pages, /usr/share/doc/presence, man pages), never
/// to a checkout's `docs/`; and each subcommand's help ends with where to
/// learn more.
#[test]
fn help_and_man_pages_point_to_docs_that_travel() {
    let w = World::new();
    let a = w.bare_device("a");
    let main = a.run(&["--help"]).success().stdout;
    assert_docs_travel("presence --help", &main);
    assert!(
        main.contains("Learn more:")
            && main.contains("https://github.com/presence-dev/presence/tree/main/docs"),
        "{main}"
    );
    let mut commands = 0;
    let listed = main
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty());
    for line in listed {
        let name = line.split_whitespace().next().unwrap();
        if name == "help" {
            continue;
        }
        let help = a.run(&[name, "--help"]).success().stdout;
        assert_docs_travel(&format!("presence {name} --help"), &help);
        assert!(
            help.contains("\nLearn more:\n  man presence-")
                && help.contains("https://github.com/presence-dev/presence/blob/main/"),
            "presence {name} --help: {help}"
        );
        commands += 1;
    }
    assert!(commands > 12, "{commands} commands in {main}");
    let out = w.tmp.path().join("man");
    a.run(&["manpage", out.to_str().unwrap()]).success();
    for e in std::fs::read_dir(&out).unwrap() {
        let path = e.unwrap().path();
        assert_docs_travel(
            &path.display().to_string(),
            &std::fs::read_to_string(&path).unwrap(),
        );
    }
}

/// Whether `text` names `word` as a whole word (`CLICOLOR` is not named by
/// `CLICOLOR_FORCE`).
fn names_word(text: &str, word: &str) -> bool {
    let part = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    text.match_indices(word).any(|(at, _)| {
        !part(text[..at].chars().next_back()) && !part(text[at + word.len()..].chars().next())
    })
}

/// The environment variables the code reads: the names in `var("…")`,
/// `var_os("…")`, `env_value("…")`, `env("…")` and clap's `env = "…"` in
/// src/ (not the tests' own).
fn variables_read() -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            for call in [
                "var(\"",
                "var_os(\"",
                "env_value(\"",
                "env(\"",
                "env = \"",
                "forced(\"",
            ] {
                for (at, _) in text.match_indices(call) {
                    let rest = &text[at + call.len()..];
                    let name = &rest[..rest.find('"').unwrap()];
                    if !name.is_empty()
                        && name.chars().all(|c| c.is_ascii_uppercase() || c == '_')
                        && !name.starts_with("PRESENCE_TEST")
                        && !found.iter().any(|f| f == name)
                    {
                        found.push(name.to_string());
                    }
                }
            }
        }
    }
    found.sort();
    found
}

/// The pages have the sections a man reader looks for, not clap_mangen's
/// EXTRA: EXAMPLES, EXIT STATUS and SEE ALSO on each subcommand's, and on
/// presence.1 also ENVIRONMENT (every variable the code reads) and FILES;
/// and `man` renders each with no groff warning.
#[test]
fn the_man_pages_have_the_sections_man_readers_look_for() {
    let man = require_tool("man");
    let w = World::new();
    let a = w.bare_device("a");
    let out = w.tmp.path().join("man");
    a.run(&["manpage", out.to_str().unwrap()]).success();
    let render = |page: &str| {
        let r = std::process::Command::new(&man)
            .args(["--warnings=w", "-l"])
            .arg(out.join(page))
            .env("MANWIDTH", "80")
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&r.stderr).into_owned();
        assert!(
            r.status.success() && stderr.is_empty(),
            "man {page}: {stderr}"
        );
        String::from_utf8_lossy(&r.stdout).into_owned()
    };
    let mut pages = 0;
    for e in std::fs::read_dir(&out).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        let text = std::fs::read_to_string(out.join(&name)).unwrap();
        assert!(!text.contains(".SH EXTRA"), "{name} has an EXTRA section");
        let shown = render(&name);
        assert!(shown.contains("\nSEE ALSO\n"), "{name}: {shown}");
        assert!(
            shown.contains("https://github.com/presence-dev/presence/"),
            "{name}: {shown}"
        );
        assert!(!shown.contains("(see a summary with"), "{name}: {shown}");
        // The subcommands' pages whose --help has examples.
        if text.contains("presence\\-")
            && !name.starts_with("presence-config-")
            && name != "presence.1"
        {
            for section in ["\nEXAMPLES\n", "\nEXIT STATUS\n"] {
                assert!(shown.contains(section), "{name} has no{section}");
            }
        }
        pages += 1;
    }
    assert!(pages > 15, "{pages} pages");
    let main = render("presence.1");
    for section in [
        "\nEXIT STATUS\n",
        "\nENVIRONMENT\n",
        "\nFILES\n",
        "\nSEE ALSO\n",
    ] {
        assert!(main.contains(section), "presence.1 has no{section}: {main}");
    }
    let environment = &main[main.find("\nENVIRONMENT\n").unwrap()..main.find("\nFILES\n").unwrap()];
    let read = variables_read();
    for name in [
        "PRESENCE_PROFILE",
        "PRESENCE_CONFIG",
        "PRESENCE_DIR",
        "PRESENCE_SESSION",
        "PRESENCE_INSTANCE",
        "NO_COLOR",
        "CLICOLOR_FORCE",
        "FORCE_COLOR",
    ] {
        assert!(
            read.iter().any(|r| r == name),
            "{name} is not read: {read:?}"
        );
    }
    for name in &read {
        assert!(
            names_word(environment, name),
            "presence.1's ENVIRONMENT does not name {name}: {environment}"
        );
    }
    for file in ["config.toml", "device-key", ".local/state/presence"] {
        assert!(main.contains(file), "presence.1 names no {file}: {main}");
    }
    // show's exit codes say what it does: an ended session is shown, rc 0.
    let shown = render("presence-show.1");
    let exit = &shown[shown.find("\nEXIT STATUS\n").unwrap()..];
    assert!(!exit.contains("no live record"), "{exit}");
    assert!(exit.contains("live or not"), "{exit}");
    let w2 = World::new();
    let d = w2.device("d");
    d.publish("demo", &[]);
    d.run(&["clear", "--session", "demo"]).success();
    let r = d.run(&["show", "demo"]).code(0);
    assert!(r.stdout.contains("ended"), "{}", r.stdout);
    d.run(&["show", "nosuch"]).code(1);
}

#[test]
fn list_format_and_count() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &["--client", "gateway", "--title", "Fix {it}"]);
    a.publish("s2", &["--client", "desktop", "--title", "Two"]);
    let out = a
        .run(&["list", "--format", "{client}@{session_id} {{{title}}}"])
        .success();
    assert_eq!(out.stdout, "desktop@s2 {Two}\ngateway@s1 {Fix {it}}\n");
    assert_eq!(a.run(&["list", "--count"]).success().stdout, "2\n");
    assert_eq!(
        a.run(&["list", "--count", "--client", "gateway"])
            .success()
            .stdout,
        "1\n"
    );
    let out = a.run(&["list", "--format", "{hots}"]).code(2);
    assert!(
        out.stderr.contains("'{hots}'") && out.stderr.contains("valid fields: "),
        "{}",
        out.stderr
    );
    a.run(&["list", "--format", "{host}", "--json"]).code(2);
    // An empty listing counts 0, and a template prints nothing.
    let b = w.bare_device("b");
    assert_eq!(b.run(&["list", "--count"]).success().stdout, "0\n");
    assert_eq!(
        b.run(&["-q", "list", "--format", "{host}"])
            .success()
            .stdout,
        ""
    );
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let w = World::new();
    let a = w.device("a");
    for i in 0..50 {
        a.publish(&format!("s{i}"), &["--title", &"x".repeat(200)]);
    }
    let mut child = a
        .cmd()
        .args(["list", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `presence ARGS` on a pseudo-terminal of the given width (util-linux `script`).
fn on_terminal(dev: &Device, cols: u16, no_color: bool, args: &str) -> String {
    let bin = env!("CARGO_BIN_EXE_presence");
    let mut cmd = dev.program(require_tool("script"));
    cmd.env("TERM", "xterm").args([
        "-qc",
        &format!("stty rows 24 cols {cols}; {bin} {args}"),
        "/dev/null",
    ]);
    if no_color {
        cmd.env("NO_COLOR", "1");
    }
    let out = cmd.output().unwrap();
    String::from_utf8_lossy(&out.stdout).replace('\r', "")
}

#[test]
fn on_a_terminal_the_table_fits_and_is_colored_unless_no_color() {
    let w = World::new();
    let a = w.device("a");
    a.publish(
        "a-rather-long-session-name",
        &["--title", &"long title ".repeat(20), "--status", "working"],
    );
    let colored = on_terminal(&a, 60, false, "list");
    assert!(colored.contains("\x1b[1mSESSION"), "{colored:?}");
    assert!(colored.contains("\x1b[32m*a-rather"), "{colored:?}");
    for line in colored.lines() {
        let visible = line
            .replace("\x1b[1m", "")
            .replace("\x1b[32m", "")
            .replace("\x1b[0m", "");
        assert!(
            visible.chars().count() <= 60,
            "{visible:?} is wider than 60"
        );
    }
    assert!(colored.contains('…'), "{colored:?}");
    let plain = on_terminal(&a, 60, true, "list");
    assert!(!plain.contains('\x1b'), "{plain:?}");
    assert!(plain.starts_with("SESSION"), "{plain:?}");
}

/// How many times `presence ARGS` opens the configuration file, counted by
/// strace(1). `until`: for a command that runs until stopped, the line of
/// its stdout after which it is interrupted (SIGTERM).
fn config_opens(d: &Device, args: &str, until: Option<&str>) -> usize {
    use std::io::BufRead as _;
    let log = d.root.join("strace.log");
    let pidfile = d.root.join("strace.pid");
    let _ = std::fs::remove_file(&pidfile);
    let shell = format!("echo $$ > \"{}\"; exec presence {args}", pidfile.display());
    let mut child = d
        .program(require_tool("strace"))
        .args(["-f", "-qq", "-e", "trace=open,openat", "-o"])
        .arg(&log)
        .args([
            require_tool("bash").as_os_str(),
            "-c".as_ref(),
            shell.as_ref(),
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    if let Some(until) = until {
        let mut lines = std::io::BufReader::new(stdout).lines();
        loop {
            match lines.next() {
                Some(Ok(line)) if line.contains(until) => break,
                Some(Ok(_)) => {}
                other => panic!("presence {args} ended before {until}: {other:?}"),
            }
        }
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        assert!(kill("-TERM", &[pid.trim()]), "kill presence {args}");
    } else {
        std::io::copy(&mut { stdout }, &mut std::io::sink()).unwrap();
    }
    assert!(child.wait().unwrap().success(), "strace presence {args}");
    let config = d.config_path().display().to_string();
    std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| l.contains(&format!("\"{config}\"")))
        .count()
}

#[test]
fn each_command_reads_the_configuration_once() {
    let w = World::new();
    let a = w.device("a");
    a.write_config(&format!(
        "[profiles.default]\ndir = \"{}\"\n\n[open.handlers.ssh]\ncommand = [\"ssh\", \"{{host}}\"]\n",
        w.shared().display()
    ));
    a.publish("s1", &["--endpoint", "ssh://host1/a"]);
    // The rows' `open` comes from the file's handlers, read with the profile.
    let rows: serde_json::Value = a.json(&["list", "--json"]);
    assert_eq!(rows[0]["open"], json!(["ssh", "host1"]));
    for args in [
        "list",
        "list --json",
        "list --all --json",
        "show s1",
        "show s1 --json",
        "devices",
    ] {
        assert_eq!(config_opens(&a, args, None), 1, "presence {args}");
    }
    assert_eq!(
        config_opens(&a, "watch --json", Some("\"event\":\"ready\"")),
        1,
        "presence watch --json"
    );
}
