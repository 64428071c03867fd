//! A profile that reads several directories (`dirs`): one listing of all
//! of them, deduped together, written to `dir` only.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::harness::{
    Device, JsonCheck, JsonExpire, JsonRow, Stream, World, now, sessions, write_record,
};

/// The two directories of a world: `a`, the synced folder (`World::shared`),
/// and `b`, another directory (Hermes' local one, say).
struct Two {
    w: World,
    a: PathBuf,
    b: PathBuf,
    /// Reads both: `dirs = [a, b]`.
    me: Device,
}

fn q(p: &Path) -> String {
    format!("{:?}", p.display().to_string())
}

impl Two {
    fn new() -> Two {
        let w = World::new();
        let a = w.shared();
        let b = w.tmp.path().join("local/active");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let me = w.bare_device("me");
        me.write_config(&format!(
            "[profiles.default]\ndirs = [{}, {}]\n",
            q(&a),
            q(&b)
        ));
        Two { w, a, b, me }
    }

    /// A device that writes to `dir` alone.
    fn writer(&self, name: &str, dir: &Path) -> Device {
        let d = self.w.bare_device(name);
        d.write_config(&format!("[profiles.default]\ndir = {}\n", q(dir)));
        d
    }
}

/// The record files of `dir`, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".json"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The one file of `dir`.
fn only_file(dir: &Path) -> String {
    let f = files(dir);
    assert_eq!(f.len(), 1, "{f:?}");
    f[0].clone()
}

fn dir_of(row: &JsonRow) -> &str {
    row.dir
        .as_deref()
        .unwrap_or_else(|| panic!("no dir on {row:?}"))
}

#[test]
fn list_json_count_and_show_merge_both_directories() {
    let t = Two::new();
    t.writer("phone", &t.a)
        .publish("in-a", &["--title", "synced"]);
    t.writer("desk", &t.b)
        .publish("in-b", &["--title", "local"]);

    let rows = t.me.list(&[]);
    let mut got: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r.session_id.clone(), dir_of(r).to_string()))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("in-a".to_string(), t.a.display().to_string()),
            ("in-b".to_string(), t.b.display().to_string()),
        ]
    );
    // The same through the buffered path (--all) and the count.
    let all = t.me.list(&["--all"]);
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(t.me.run(&["list", "--count"]).success().stdout.trim(), "2");
    let table = t.me.run(&["list"]).success().stdout;
    assert!(table.contains("in-a") && table.contains("in-b"), "{table}");
    let shown = t.me.show("in-b");
    assert_eq!(
        (shown.title.as_str(), dir_of(&shown)),
        ("local", &*t.b.display().to_string())
    );

    // A profile that reads one directory prints no `dir`, as before.
    let single = t.writer("solo", &t.a).list(&[]);
    assert_eq!(sessions(&single), ["in-a"]);
    assert_eq!(single[0].dir, None);
    // `--dir` reads (and writes) that directory alone.
    let only_b = t.me.list(&["--dir", t.b.to_str().unwrap()]);
    assert_eq!(sessions(&only_b), ["in-b"]);
    assert_eq!(only_b[0].dir, None);
}

#[test]
fn the_same_session_in_both_directories_is_one_row() {
    let t = Two::new();
    t.writer("phone", &t.a).publish("both", &[]);
    let name = only_file(&t.a);
    std::fs::copy(t.a.join(&name), t.b.join(&name)).unwrap();

    let rows = t.me.list(&[]);
    assert_eq!(sessions(&rows), ["both"]);
    // A tie in everything but the directory goes to the first one listed.
    assert_eq!(dir_of(&rows[0]), t.a.display().to_string());
    let all = t.me.list(&["--all"]);
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(dir_of(&all[1]), t.b.display().to_string());
    assert_eq!(all[1].lost_because.as_deref(), Some("directory"));
    assert_eq!(all[1].superseded_by.as_deref(), Some(name.as_str()));

    // A newer copy in the second directory wins there.
    let mut newer: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.b.join(&name)).unwrap()).unwrap();
    newer["seq"] = json!(newer["seq"].as_u64().unwrap() + 1);
    newer["status"] = json!("working");
    t.writer("phone", &t.a).sign(&mut newer);
    write_record(&t.b, &name, &newer);
    let rows = t.me.list(&[]);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0].status.as_str(), dir_of(&rows[0])),
        ("working", &*t.b.display().to_string())
    );
}

#[test]
fn a_tombstone_in_one_directory_ends_the_live_copy_in_the_other() {
    let t = Two::new();
    let phone = t.writer("phone", &t.a);
    phone.publish("ending", &[]);
    let name = only_file(&t.a);
    let live = std::fs::read(t.a.join(&name)).unwrap();
    phone.run(&["clear", "--session", "ending"]).success();
    // The tombstone lands in b; a has the live copy back.
    std::fs::rename(t.a.join(&name), t.b.join(&name)).unwrap();
    std::fs::write(t.a.join(&name), &live).unwrap();

    assert_eq!(t.me.list(&[]), Vec::<JsonRow>::new());
    assert_eq!(t.me.run(&["list", "--count"]).success().stdout.trim(), "0");
    let all = t.me.list(&["--all"]);
    assert_eq!(all.len(), 2, "{all:?}");
    assert!(all.iter().all(|r| !r.live && r.state == "ended"), "{all:?}");
    let in_a = all
        .iter()
        .find(|r| dir_of(r) == t.a.display().to_string())
        .unwrap();
    assert_eq!(in_a.ended_at, None);
    assert_eq!(in_a.lost_because.as_deref(), Some("life_ended"));
    // `show` finds the tombstone, not the live-looking copy.
    let shown = t.me.show("ending");
    assert_eq!(dir_of(&shown), t.b.display().to_string());
    assert!(shown.ended_at.is_some());
}

#[test]
fn a_conflict_copy_in_the_other_directory_collapses() {
    let t = Two::new();
    t.writer("phone", &t.a)
        .publish("forked", &["--status", "idle"]);
    let name = only_file(&t.a);
    let mut older: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.a.join(&name)).unwrap()).unwrap();
    older["updated_at"] = json!(older["updated_at"].as_f64().unwrap() - 5.0);
    older["status"] = json!("working");
    // An older version by the same writer: signed by it.
    t.writer("phone", &t.a).sign(&mut older);
    let base = name.trim_end_matches(".json");
    let conflict = format!("{base}.sync-conflict-20260101-120000-ABCDEFG.json");
    write_record(&t.b, &conflict, &older);

    let rows = t.me.list(&[]);
    assert_eq!(sessions(&rows), ["forked"]);
    assert_eq!(rows[0].status, "idle");
    let all = t.me.list(&["--all"]);
    let copy = all.iter().find(|r| r.conflict_copy).unwrap();
    assert_eq!(
        (copy.file.as_str(), dir_of(copy)),
        (conflict.as_str(), &*t.b.display().to_string())
    );
    assert_eq!(copy.lost_because.as_deref(), Some("older"));
}

#[test]
fn publish_clear_and_refresh_write_only_to_dir() {
    let t = Two::new();
    t.me.publish("mine", &["--owner-pid", &std::process::id().to_string()]);
    assert_eq!(files(&t.a).len(), 1);
    assert_eq!(files(&t.b), Vec::<String>::new());
    t.me.run(&["refresh"]).success();
    t.me.run(&["clear", "--session", "mine"]).success();
    assert_eq!(files(&t.b), Vec::<String>::new());

    // With `dir` set, `dirs` only adds directories to read.
    let c = t.w.tmp.path().join("c");
    t.me.write_config(&format!(
        "[profiles.default]\ndir = {}\ndirs = [{}, {}]\n",
        q(&c),
        q(&t.a),
        q(&t.b)
    ));
    t.me.publish("in-c", &[]);
    assert_eq!(files(&c).len(), 1);
    assert_eq!(files(&t.a).len(), 1, "only the earlier tombstone");
    assert_eq!(files(&t.b), Vec::<String>::new());
    let row = t.me.show("in-c");
    assert_eq!(dir_of(&row), c.display().to_string());
    assert!(row.local);
    // `dir` listed in `dirs` as well is read once.
    t.me.write_config(&format!(
        "[profiles.default]\ndir = {}\ndirs = [{}, {}]\n",
        q(&t.a),
        q(&t.a),
        q(&t.b)
    ));
    let shown = t.me.run(&["config", "show"]).success().stdout;
    assert!(
        shown.contains(&format!("dirs = [{}, {}]", q(&t.a), q(&t.b))),
        "{shown}"
    );
}

/// A file in another directory with the name (and the bytes) of one of
/// this device's records is not this device's: the ledger knows which
/// directory it wrote to.
#[test]
fn a_same_named_file_in_the_other_directory_is_not_ours() {
    let t = Two::new();
    t.me.publish("own", &["--title", "mine"]);
    let name = only_file(&t.a);
    std::fs::copy(t.a.join(&name), t.b.join(&name)).unwrap();

    let all = t.me.list(&["--all"]);
    assert_eq!(all.len(), 2, "{all:?}");
    for r in &all {
        let in_a = dir_of(r) == t.a.display().to_string();
        assert_eq!(r.local, in_a, "{r:?}");
    }
    // Changed to win, the hostile copy no longer proves its writer: it
    // wins nothing, and only `--all --json` shows it, as forged.
    let mut hostile: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.b.join(&name)).unwrap()).unwrap();
    hostile["seq"] = json!(99);
    hostile["title"] = json!("not mine");
    write_record(&t.b, &name, &hostile);
    let rows = t.me.list(&[]);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].title, "mine");
    assert!(rows[0].local, "{rows:?}");
    assert_eq!(dir_of(&rows[0]), t.a.display().to_string());
    let all = t.me.list(&["--all"]);
    let forged = all.iter().find(|r| r.title == "not mine").unwrap();
    assert_eq!(forged.forged.as_deref(), Some("bad_signature"));
    assert!(!forged.local && !forged.verified, "{forged:?}");
    let before = std::fs::read(t.b.join(&name)).unwrap();
    // Clear ends this device's record in `dir`, and leaves the other alone.
    t.me.run(&["clear", "--session", "own"]).success();
    assert_eq!(std::fs::read(t.b.join(&name)).unwrap(), before);
    let in_a: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.a.join(&name)).unwrap()).unwrap();
    assert!(in_a["ended_at"].is_f64(), "{in_a}");
}

#[test]
fn a_missing_directory_among_several_is_named_and_the_others_listed() {
    let t = Two::new();
    t.writer("phone", &t.a).publish("here", &[]);
    std::fs::remove_dir(&t.b).unwrap();
    let out = t.me.run(&["list", "--json"]).success();
    let rows: Vec<JsonRow> = crate::harness::parse_json(&out.stdout, "list");
    assert_eq!(sessions(&rows), ["here"]);
    assert!(
        out.stderr.contains(&t.b.display().to_string()) && out.stderr.contains("does not exist"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains(&format!("{} does", t.a.display())));
}

#[test]
fn config_errors_about_dirs_say_what_and_how() {
    let t = Two::new();
    let a = q(&t.a);
    let a_again = q(&t.a.join("."));
    let cases = [
        ("dirs = []".to_string(), "dirs = [] lists no directory"),
        (format!("dirs = [{a}, \"\"]"), "entry 2 of dirs is empty"),
        (format!("dirs = [{a}, {a_again}]"), "entry 2 of dirs"),
        (
            format!("dirs = {a}"),
            "dirs must be an array of directory paths, not string",
        ),
        (
            "dirs = [1]".to_string(),
            "dirs must list directory paths, each a string",
        ),
        ("dirs = [\"/etc\"]".to_string(), "the system directory /etc"),
    ];
    for (setting, want) in cases {
        t.me.write_config(&format!("[profiles.default]\n{setting}\n"));
        let out = t.me.run(&["list"]);
        assert_ne!(out.code, 0, "{setting}");
        assert!(
            out.stderr.contains(want) && out.stderr.contains("config.toml"),
            "{setting}: {}",
            out.stderr
        );
    }
    t.me.write_config(&format!("[profiles.default]\ndirs = [{a}, {a_again}]\n"));
    let out = t.me.run(&["list"]);
    assert!(
        out.stderr
            .contains("is the same directory as entry 1 of dirs")
            && out.stderr.contains("list each directory once")
            && out.stderr.contains("profile 'default'"),
        "{}",
        out.stderr
    );
    t.me.write_config("[profiles.default]\ndirs = [\"x\", \"\"]\n");
    assert!(
        t.me.run(&["list"])
            .stderr
            .contains("remove it or name a directory")
    );
}

#[test]
fn watch_sees_a_change_in_the_second_directory() {
    let t = Two::new();
    t.writer("phone", &t.a).publish("first", &[]);
    let s = Stream::start(&t.me, &["watch", "--json"]);
    let up = s.json();
    assert_eq!((up.event.as_str(), up.session()), ("up", Some("first")));
    assert_eq!(s.json().event, "ready");
    let desk = t.writer("desk", &t.b);
    desk.publish("second", &[]);
    let e = s.json();
    assert_eq!((e.event.as_str(), e.session()), ("up", Some("second")));
    assert_eq!(dir_of(e.row()), t.b.display().to_string());
    // A tombstone in b ends its life.
    desk.run(&["clear", "--session", "second"]).success();
    let e = s.json();
    assert_eq!(
        (e.event.as_str(), e.session(), e.reason.as_deref()),
        ("down", Some("second"), Some("cleared"))
    );
    let (_, stderr) = s.stop();
    assert!(!stderr.contains("error"), "{stderr}");
}

#[test]
fn expire_keeps_foreign_records_in_hermes_dir_and_removes_them_in_a_synced_one() {
    let w = World::new();
    let synced = w.shared();
    let me = w.bare_device("me");
    let hermes = me.root.join("home/.hermes/session-presence/active");
    me.write_config(&format!(
        "[profiles.default]\ndirs = [{}, {}]\nskew = \"0s\"\ngc_after = \"0s\"\n",
        q(&synced),
        q(&hermes)
    ));
    let old = now() - 3.0 * 3600.0;
    for dir in [&synced, &hermes] {
        let record = json!({
            "version": 1, "session_id": "gone", "instance_id": "other-host",
            "updated_at": old, "expires_at": old + 90.0, "started_at": old,
        });
        write_record(dir, "other-host.gone.json", &record);
    }
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let dry: JsonExpire = me.json(&["expire", "--dry-run", "--json"]);
    assert_eq!(dry.removed.len(), 1, "{dry:?}");
    assert_eq!(
        dry.removed[0].dir.as_deref(),
        Some(&*synced.display().to_string())
    );
    me.run(&["expire"]).success();
    assert_eq!(files(&synced), Vec::<String>::new());
    assert_eq!(files(&hermes), ["other-host.gone.json"]);
}

#[test]
fn doctor_checks_each_directory() {
    let t = Two::new();
    t.writer("phone", &t.a).publish("one", &[]);
    let leaky = json!({
        "version": 1, "session_id": "leak", "instance_id": "x",
        "title": "token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB",
        "updated_at": now(), "expires_at": now() + 90.0,
    });
    write_record(&t.b, "x.leak.json", &leaky);
    let out = t.me.cmd().args(["doctor", "--json"]).output().unwrap();
    let checks: Vec<JsonCheck> =
        crate::harness::parse_json(&String::from_utf8_lossy(&out.stdout), "doctor");
    let about = |check: &str, dir: &Path| {
        checks
            .iter()
            .find(|c| c.check == check && c.message.contains(&dir.display().to_string()))
            .unwrap_or_else(|| panic!("no {check} check of {}: {checks:#?}", dir.display()))
    };
    for dir in [&t.a, &t.b] {
        assert_eq!(about("directory", dir).status, "ok");
        assert_eq!(
            about("records", dir).message,
            format!("{}: 1 record file(s), 1 live", dir.display())
        );
    }
    assert!(about("writable", &t.a).status == "ok");
    assert!(
        !checks
            .iter()
            .any(|c| c.check == "writable" && c.message.contains(&t.b.display().to_string()))
    );
    let secrets = about("secrets", &t.b);
    assert!(secrets.message.contains("x.leak.json"), "{secrets:?}");
    assert!(
        !checks
            .iter()
            .any(|c| c.check == "secrets" && c.message.contains(&t.a.display().to_string()))
    );
    assert!(!format!("{checks:?}").contains("ghp_0123"));

    // A missing directory is reported, and the other still checked.
    std::fs::remove_file(t.b.join("x.leak.json")).unwrap();
    std::fs::remove_dir(&t.b).unwrap();
    let out = t.me.cmd().args(["doctor", "--json"]).output().unwrap();
    let checks: Vec<JsonCheck> =
        crate::harness::parse_json(&String::from_utf8_lossy(&out.stdout), "doctor");
    let missing = checks
        .iter()
        .find(|c| c.check == "directory" && c.message.contains(&t.b.display().to_string()))
        .unwrap();
    assert!(missing.message.contains("does not exist"), "{missing:?}");
    assert!(
        checks
            .iter()
            .any(|c| c.check == "records" && c.message.contains(&t.a.display().to_string()))
    );
}

/// The profile docs/integrations.md shows: the synced folder and Hermes'
/// own directory as one listing.
#[test]
fn the_documented_hermes_profile_merges_the_synced_folder_and_hermes_dir() {
    let w = World::new();
    let me = w.bare_device("me");
    me.write_config(&crate::docs::example("integrations.md", "hermes-dirs"));
    let home = me.root.join("home");
    let synced = home.join("Sync/presence");
    let hermes = home.join(".hermes/session-presence/active");
    me.publish("from-presence", &[]);
    assert_eq!(files(&synced).len(), 1);
    let t = now();
    // As Hermes writes its records: no device id, no label.
    let record = json!({
        "session_id": "from-hermes", "instance_id": "laptop-4242", "client": "hermes",
        "host": "laptop", "pid": 4242, "updated_at": t, "expires_at": t + 120.0,
    });
    write_record(&hermes, "laptop-4242.from-hermes.json", &record);
    let mut rows: Vec<(String, String)> = me
        .list(&[])
        .iter()
        .map(|r| (r.session_id.clone(), dir_of(r).to_string()))
        .collect();
    rows.sort();
    assert_eq!(
        rows,
        [
            ("from-hermes".to_string(), hermes.display().to_string()),
            ("from-presence".to_string(), synced.display().to_string()),
        ]
    );
    // Hermes' directory is never written: not by publish, nor by expire.
    me.run(&["expire"]).success();
    assert_eq!(files(&hermes), ["laptop-4242.from-hermes.json"]);
    let shown = me.run(&["config", "show"]).success().stdout;
    assert!(shown.contains(&format!("dir = {}", q(&synced))), "{shown}");
    // doctor does not ask for Hermes' own directory to be shared.
    let out = me.cmd().args(["doctor", "--json"]).output().unwrap();
    let checks: Vec<JsonCheck> =
        crate::harness::parse_json(&String::from_utf8_lossy(&out.stdout), "doctor");
    let engine = checks
        .iter()
        .find(|c| c.check == "sync-engine" && c.message.contains(&hermes.display().to_string()))
        .unwrap_or_else(|| panic!("{checks:#?}"));
    assert_eq!(engine.status, "ok", "{engine:?}");
    assert!(engine.message.contains("Hermes Agent's own directory"));
}

#[test]
fn list_watch_counts_both_directories() {
    let t = Two::new();
    t.writer("phone", &t.a).publish("first", &[]);
    let s = Stream::start(&t.me, &["list", "--watch", "--count"]);
    assert_eq!(s.next(), "1");
    t.writer("desk", &t.b).publish("second", &[]);
    assert_eq!(s.next(), "2");
    // The same session copied into the other directory is still one.
    let name = only_file(&t.a);
    std::fs::copy(t.a.join(&name), t.b.join(&name)).unwrap();
    s.quiet_for(std::time::Duration::from_millis(500));
    // A change the count shows comes next: had the copy been counted, the
    // stream would say 3 (then 2) before it.
    t.writer("desk", &t.b)
        .run(&["clear", "--session", "second"])
        .success();
    assert_eq!(s.next(), "1");
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(0), "{stderr}");
}
