//! Lives end to end: an ended life stays ended whatever its other copies say,
//! a tombstone ends only its own life, the newest live life of a group wins,
//! "this device" means the lives this device published (not a `device_id`
//! anyone can write), and clear and refresh of one record share one lock
//! whatever the environment of the process that takes it.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::*;
use crate::watch::settle;

/// A process that stays alive until dropped: an owner for records.
struct Owner(Child);

impl Owner {
    fn start() -> Self {
        Owner(
            std::process::Command::new("sleep")
                .arg("3600")
                .spawn()
                .unwrap(),
        )
    }

    fn pid(&self) -> String {
        self.0.id().to_string()
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A background `presence` process, killed when dropped, so that a failed
/// assertion never leaves a refresh loop or a watcher running.
struct Background(Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The name of the record file (not a conflict copy) of `session` in `dir`.
fn record_file(dir: &Path, session: &str) -> String {
    let suffix = format!(".{session}.json");
    let names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(&suffix) && !n.starts_with('.'))
        .collect();
    assert_eq!(names.len(), 1, "files of {session}: {names:?}");
    names.into_iter().next().unwrap()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn f64_of(v: &Value, field: &str) -> f64 {
    v[field]
        .as_f64()
        .unwrap_or_else(|| panic!("no {field} in {v}"))
}

/// The `state` line of `presence show ID`'s human output.
fn shown_state(d: &Device, id: &str) -> String {
    let out = d.run(&["show", id]).success().stdout;
    out.lines()
        .find(|l| l.starts_with("state "))
        .unwrap_or_else(|| panic!("no state line:\n{out}"))
        .trim_start_matches("state")
        .trim()
        .to_string()
}

/// Rows of `list --all --json` on `d` whose file is `file`.
fn all_rows_of(d: &Device, file: &str) -> Vec<JsonRow> {
    d.list(&["--all"])
        .into_iter()
        .filter(|r| r.file == file)
        .collect()
}

/// Device `a` publishes `s1` and clears it; returns the record file's name,
/// the live record as it was before the clear, and the tombstone.
fn ended_life(w: &World, a: &Device) -> (String, Value, Value) {
    a.publish("s1", &["--title", "first"]);
    let file = record_file(&w.shared(), "s1");
    let live = read_json(&w.shared().join(&file));
    a.run(&["clear", "--session", "s1"]).success();
    let tomb = read_json(&w.shared().join(&file));
    assert!(
        tomb["ended_at"].is_f64(),
        "clear wrote no tombstone: {tomb}"
    );
    for field in ["instance_id", "session_id", "started_at"] {
        assert_eq!(
            tomb[field], live[field],
            "{field}: the tombstone is that life"
        );
    }
    (file, live, tomb)
}

/// A copy of `live` as a sync engine might deliver it late: the same life,
/// not ended, with an `updated_at` `ahead` seconds after the tombstone's,
/// signed by its writer `by` (as a copy written by a clock that jumped
/// would be): even a genuine copy never revives an ended life.
fn revived_copy(by: &Device, live: &Value, tomb: &Value, ahead: f64) -> Value {
    let mut copy = live.clone();
    let t = f64_of(tomb, "updated_at") + ahead;
    copy["updated_at"] = json!(t);
    copy["expires_at"] = json!(t + 90.0);
    copy["title"] = json!("revived");
    by.sign(&mut copy);
    copy
}

#[test]
fn a_conflict_copy_never_revives_an_ended_life() {
    let w = World::new();
    let (a, b) = (w.device("a"), w.device("b"));
    let (file, live, tomb) = ended_life(&w, &a);
    let stem = file.strip_suffix(".json").unwrap();
    let conflict = format!("{stem}.sync-conflict-20260101-000000-ABCDEFG.json");
    write_record(&w.shared(), &conflict, &revived_copy(&a, &live, &tomb, 5.0));
    b.publish("other", &[]);

    // The copy is read, as a conflict copy of that record, newer than the tombstone.
    let copy_rows = all_rows_of(&b, &conflict);
    assert_eq!(copy_rows.len(), 1, "the conflict copy was not read");
    assert!(copy_rows[0].conflict_copy);
    assert_eq!(copy_rows[0].session_id, "s1");
    let copy_updated = copy_rows[0]
        .updated_at
        .unwrap_or_else(|| panic!("no updated_at in {:?}", copy_rows[0]));
    assert!(copy_updated > f64_of(&tomb, "updated_at"));

    for (name, d) in [("a", &a), ("b", &b)] {
        assert_eq!(
            sessions(&d.list(&[])),
            ["other"],
            "list --json on {name} shows the ended life"
        );
        let table = d.run(&["list"]).success().stdout;
        assert!(
            table.contains("other") && !table.contains("s1") && !table.contains("revived"),
            "list on {name} shows the ended life:\n{table}"
        );
        for row in d.list(&["--include-expired"]) {
            if row.session_id == "s1" {
                assert!(!row.live, "list --include-expired on {name}: {row:?}");
            }
        }
        for row in d.list(&["--all"]) {
            if row.session_id == "s1" {
                assert_ne!(row.state, "live", "list --all on {name}: {row:?}");
            }
        }
        let state = shown_state(d, "s1");
        assert!(!state.starts_with("live"), "show s1 on {name}: {state}");
        let shown = d.show("s1");
        assert!(!shown.live, "show s1 --json on {name}: {shown:?}");
        assert_ne!(shown.state, "live", "show s1 --json on {name}: {shown:?}");
    }

    // expire deletes the copy (conflict copies have no grace time) and keeps
    // the tombstone, which is younger than 10 minutes.
    let dry: JsonExpire = b.json(&["expire", "--dry-run", "--json"]);
    let would: Vec<&str> = dry.removed.iter().map(|g| g.file.as_str()).collect();
    assert_eq!(would, [conflict.as_str()], "expire --dry-run: {dry:?}");
    b.run(&["expire"]).success();
    assert!(
        !w.shared().join(&conflict).exists(),
        "expire left the copy of an ended life"
    );
    assert!(read_json(&w.shared().join(&file))["ended_at"].is_f64());
}

#[test]
fn a_late_copy_of_an_ended_life_never_comes_up_in_watch() {
    let w = World::new();
    let (a, b) = (w.device("a"), w.device("b"));
    let (file, live, tomb) = ended_life(&w, &a);
    let stem = file.strip_suffix(".json").unwrap();
    let syncthing = format!("{stem}.sync-conflict-20260101-000000-ABCDEFG.json");
    write_record(
        &w.shared(),
        &syncthing,
        &revived_copy(&a, &live, &tomb, 5.0),
    );
    b.publish("m1", &[]);

    let s = Stream::start(&b, &["watch", "--json"]);
    // The initial set, with m1 in it.
    let mut events: Vec<JsonEvent> = Vec::new();
    loop {
        let e = s.json();
        events.push(e.clone());
        if e.event == "ready" {
            break;
        }
    }
    assert!(
        events
            .iter()
            .any(|e| e.event == "up" && e.session() == Some("m1")),
        "no `up m1` in the initial set: {events:#?}"
    );
    // A second copy of the ended life arrives while watching; everything
    // the watcher makes of it is printed before the marker's changes.
    let dropbox = format!("{stem} (laptop's conflicted copy 2026-01-01).json");
    write_record(&w.shared(), &dropbox, &revived_copy(&a, &live, &tomb, 10.0));
    events.extend(settle(&s, &b, "m2"));
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(0), "{stderr}");

    // Both copies were read by the listing that watch shares.
    for copy in [&syncthing, &dropbox] {
        let rows = all_rows_of(&b, copy);
        assert_eq!(rows.len(), 1, "{copy} was not read");
        assert!(rows[0].conflict_copy);
    }
    let revived: Vec<&JsonEvent> = events
        .iter()
        .filter(|e| e.session() == Some("s1") && e.event != "down")
        .collect();
    assert!(
        revived.is_empty(),
        "watch --json brought the ended life back: {revived:#?}"
    );
}

#[test]
fn a_tombstone_from_a_fast_clock_never_hides_another_life_on_its_endpoint() {
    let w = World::new();
    let (a, b) = (w.device("a"), w.device("b"));
    let endpoint = "ssh://h/x";
    b.publish("s1", &["--endpoint", endpoint]);
    b.run(&["clear", "--session", "s1"]).success();
    // B's clock runs two hours ahead: every time it wrote is in our future.
    let tomb_file = record_file(&w.shared(), "s1");
    let mut tomb = read_json(&w.shared().join(&tomb_file));
    for field in ["started_at", "updated_at", "expires_at", "ended_at"] {
        tomb[field] = json!(f64_of(&tomb, field) + 7200.0);
    }
    b.sign(&mut tomb);
    write_record(&w.shared(), &tomb_file, &tomb);
    a.publish("s2", &["--endpoint", endpoint]);

    let s2 = read_json(&w.shared().join(record_file(&w.shared(), "s2")));
    assert!(tomb["ended_at"].is_f64());
    assert!(f64_of(&tomb, "updated_at") > f64_of(&s2, "updated_at") + 7000.0);
    for field in ["profile", "client", "endpoint"] {
        assert_eq!(tomb[field], s2[field], "{field}: not one dedupe group");
    }
    assert_ne!(tomb["instance_id"], s2["instance_id"]);

    for (name, d) in [("a", &a), ("b", &b)] {
        let rows = d.list(&[]);
        assert_eq!(
            sessions(&rows),
            ["s2"],
            "list --json on {name}: B's tombstone hides A's live session"
        );
        assert!(rows[0].live);
        assert_eq!(rows[0].local, name == "a");
        let state = shown_state(d, "s2");
        assert!(state.starts_with("live"), "show s2 on {name}: {state}");
    }
    let table = a.run(&["list"]).success().stdout;
    assert!(table.contains("*s2"), "{table}");
    // The tombstone still ends its own life.
    assert!(!b.show("s1").live);
}

#[test]
fn the_newest_live_life_of_a_group_wins() {
    let w = World::new();
    let b = w.device("b");
    let t = now();
    // One endpoint, three lives from three devices: the newest is long
    // expired (a 10 s ttl that ran out 490 s ago), the other two are live.
    for (device, session, updated, ttl) in [
        ("d1", "g-old", t - 1000.0, 3600.0),
        ("d2", "g-mid", t - 800.0, 3600.0),
        ("d3", "g-dead", t - 500.0, 10.0),
    ] {
        write_record(
            &w.shared(),
            &format!("{device}.{session}.json"),
            &json!({
                "version": 1, "session_id": session, "profile": "default", "client": "cli",
                "endpoint": "ssh://h/g", "host": device, "instance_id": device,
                "device_id": format!("{device}000000000000000000000000000000"),
                "started_at": updated, "updated_at": updated, "expires_at": updated + ttl,
                "seq": 1,
            }),
        );
    }
    let every = b.list(&["--all"]);
    assert_eq!(every.len(), 3, "{every:#?}");
    let state = |s: &str| {
        every
            .iter()
            .find(|r| r.session_id == s)
            .unwrap()
            .state
            .clone()
    };
    assert_eq!(state("g-dead"), "expired");
    assert_eq!(
        every.iter().filter(|r| r.superseded_by.is_some()).count(),
        2,
        "the three are not one group: {every:#?}"
    );

    assert_eq!(
        sessions(&b.list(&[])),
        ["g-mid"],
        "an expired newer life hides the live ones"
    );
    assert!(shown_state(&b, "g-mid").starts_with("live"));
}

/// Device `a` with a genuine record of its own (`mine`, owned by a running
/// process) and a record planted by someone else that carries a's
/// device_id and the same live owner.
struct Forged {
    w: World,
    a: Device,
    _owner: Owner,
    mine: String,
    file: String,
    planted: Value,
}

fn forged() -> Forged {
    let w = World::new();
    let a = w.device("a");
    let owner = Owner::start();
    a.publish("mine", &["--owner-pid", &owner.pid()]);
    let mine = record_file(&w.shared(), "mine");
    let own = read_json(&w.shared().join(&mine));
    let me = a.device_id();
    assert_eq!(own["device_id"], me.as_str());
    assert!(own["owner_start"].as_u64().is_some(), "{own}");
    let t = now();
    let planted = json!({
        "version": 1, "session_id": "forged", "session_key": "forged", "status": "idle",
        "profile": "default", "client": own["client"], "host": "elsewhere",
        "instance_id": "elsewhere-1", "device_id": me, "pid": own["pid"],
        "owner_start": own["owner_start"], "started_at": t, "updated_at": t,
        "expires_at": t + 90.0, "seq": 1,
    });
    let file = "elsewhere-1.forged.json".to_string();
    write_record(&w.shared(), &file, &planted);
    // The plant is read, with this device's id and a running owner, and
    // found forged: it carries no key to prove the id.
    let rows = a.list(&["--all"]);
    let row = rows
        .iter()
        .find(|r| r.session_id == "forged")
        .unwrap_or_else(|| panic!("planted record not read: {rows:#?}"));
    assert_eq!(row.file, file);
    assert_eq!(row.device_id, me);
    assert_eq!(row.forged.as_deref(), Some("no_key"));
    assert!(!row.live && !row.verified && !row.local, "{row:?}");
    assert_eq!(json!(row.pid), own["pid"]);
    assert_eq!(json!(row.owner_start), own["owner_start"]);
    Forged {
        w,
        a,
        _owner: owner,
        mine,
        file,
        planted,
    }
}

#[test]
fn a_record_forging_this_devices_id_is_not_listed() {
    let f = forged();
    let rows = f.a.list(&[]);
    assert_eq!(sessions(&rows), ["mine"], "{rows:#?}");
    assert!(rows[0].local && rows[0].verified, "{rows:?}");
    for args in [&["list"][..], &["list", "--all"]] {
        let table = f.a.run(args).success().stdout;
        assert!(table.contains("*mine"), "{table}");
        assert!(
            !table.contains("forged"),
            "{args:?} shows the forged record:\n{table}"
        );
    }
    f.a.run(&["show", "forged"]).code(1);
}

#[test]
fn a_record_forging_this_devices_id_is_never_refreshed() {
    let f = forged();
    let out: JsonRefresh = f.a.json(&["refresh", "--json"]);
    let refreshed = &out.refreshed_files;
    assert!(refreshed.contains(&f.mine), "{out:?}");
    assert!(
        !refreshed.contains(&f.file),
        "refresh re-published the forged record: {out:?}"
    );
    let now_in_file = read_json(&f.w.shared().join(&f.file));
    assert_eq!(now_in_file["seq"], f.planted["seq"]);
    assert_eq!(now_in_file["updated_at"], f.planted["updated_at"]);
    assert!(now_in_file["ended_at"].is_null());
}

#[test]
fn a_record_forging_this_devices_id_is_never_cleared() {
    let f = forged();
    f.a.run(&["clear", "--session", "forged"]).success();
    let now_in_file = read_json(&f.w.shared().join(&f.file));
    assert!(
        now_in_file["ended_at"].is_null(),
        "clear ended the forged record: {now_in_file}"
    );
    assert_eq!(now_in_file["seq"], f.planted["seq"]);
    let all = f.a.list(&["--all"]);
    assert!(all.iter().any(|r| r.session_id == "forged"), "{all:#?}");
    // clear does end this device's own records.
    f.a.run(&["clear", "--session", "mine"]).success();
    assert!(read_json(&f.w.shared().join(&f.mine))["ended_at"].is_f64());
}

#[test]
fn doctor_names_a_record_forging_this_devices_id() {
    let f = forged();
    let out = f.a.run(&["doctor", "--json"]);
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    let checks: Vec<JsonCheck> = parse_json(&out.stdout, "doctor --json");
    let problems: Vec<&JsonCheck> = checks.iter().filter(|c| c.status != "ok").collect();
    let text = |c: &JsonCheck| {
        format!(
            "{} {} {}",
            c.check,
            c.message,
            c.fix.as_deref().unwrap_or_default()
        )
    };
    // "device id", "device's id", "device-id" or "device_id", in any case.
    let says_device_id = |t: &str| {
        t.to_lowercase()
            .replace("'s ", " ")
            .replace(['-', '_'], " ")
            .contains("device id")
    };
    assert!(
        problems.iter().any(|c| {
            let t = text(c);
            t.contains(&f.file) && says_device_id(&t)
        }),
        "doctor names no problem with {}: {checks:#?}",
        f.file
    );
    assert!(
        problems.iter().all(|c| !text(c).contains(&f.mine)),
        "doctor flags this device's own record: {problems:#?}"
    );
    let human = f.a.run(&["doctor"]).stdout;
    assert!(human.contains(&f.file), "{human}");
}

/// Rounds of the race below, records cleared per round (each its own
/// file, lock and chance to collide), and refresh loops racing each clear.
const RACE_ROUNDS: usize = 40;
const RACE_RECORDS: usize = 4;
const REFRESHERS: usize = 2;

#[test]
fn clear_wins_over_refresh_from_another_environment_of_the_same_device() {
    let w = World::new();
    let a = w.device("a");
    let owner = Owner::start();
    // The clearing process spells the directory through a symlink with a
    // trailing slash, and has another XDG_RUNTIME_DIR, or none at all.
    let link = w.tmp.path().join("via-link");
    std::os::unix::fs::symlink(w.shared(), &link).unwrap();
    let alt_config = w.tmp.path().join("alt-config.toml");
    std::fs::write(
        &alt_config,
        format!("[profiles.default]\ndir = \"{}/\"\n", link.display()),
    )
    .unwrap();
    let alt_config = alt_config.to_str().unwrap();
    let other_runtime = w.tmp.path().join("other-runtime");
    let seq = |p: &Path| read_json(p)["seq"].as_u64().unwrap();

    let start = Instant::now();
    let mut lost = Vec::new();
    for round in 0..RACE_ROUNDS {
        // One session id on several instances: one clear ends them all.
        let session = format!("s{round}");
        let paths: Vec<_> = (0..RACE_RECORDS)
            .map(|i| {
                let instance = format!("race-{i}");
                a.publish(
                    &session,
                    &["--instance", &instance, "--owner-pid", &owner.pid()],
                );
                w.shared().join(format!("{instance}.{session}.json"))
            })
            .collect();
        let published: Vec<u64> = paths.iter().map(|p| seq(p)).collect();
        let refreshers: Vec<Background> = (0..REFRESHERS)
            .map(|_| {
                Background(
                    a.cmd()
                        .args(["-q", "refresh", "--every", "1ms"])
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .spawn()
                        .unwrap(),
                )
            })
            .collect();
        // Race only once the loops are refreshing these records.
        wait_until(&format!("round {round}: a refresh"), PATIENCE, || {
            paths.iter().zip(&published).all(|(p, &s)| seq(p) > s)
        });
        let mut clear = a.cmd();
        clear.args(["--config", alt_config, "clear", "--session", &session]);
        if round % 2 == 0 {
            clear.env("XDG_RUNTIME_DIR", &other_runtime);
        } else {
            clear.env_remove("XDG_RUNTIME_DIR");
        }
        let out = run_ok(&mut clear);
        let said = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            said.matches(&format!("cleared {session} ")).count(),
            RACE_RECORDS,
            "round {round}: clear did not find every record: {said}"
        );
        // A refresh that overwrote a tombstone keeps that record live from
        // then on; give the loops a few more passes to show it.
        std::thread::sleep(Duration::from_millis(20));
        // Killed outright: every write is an atomic rename, so each file
        // holds one whole record whenever a loop dies.
        drop(refreshers);
        for p in &paths {
            if !read_json(p)["ended_at"].is_f64() {
                lost.push(p.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    let records = RACE_ROUNDS * RACE_RECORDS;
    println!(
        "lock race: {} of {records} tombstones lost in {RACE_ROUNDS} rounds, {:?}",
        lost.len(),
        start.elapsed()
    );
    assert!(
        lost.is_empty(),
        "a refresh overwrote clear's tombstone with a live record, {} of {records} times: \
         {lost:?}",
        lost.len()
    );
}

#[test]
fn a_rewrite_of_this_devices_file_that_keeps_the_life_ids_is_never_adopted() {
    // Another device rewrites this device's own file, keeping the ids of its
    // life (all readable) but changing the owner, the label and the title.
    let w = World::new();
    let a = w.device("a");
    let owner = Owner::start();
    a.publish("s", &["--owner-pid", &owner.pid(), "--title", "ours"]);
    let file = record_file(&w.shared(), "s");
    let path = w.shared().join(&file);
    let ours = read_json(&path);
    let mut planted = ours.clone();
    planted["title"] = json!("planted");
    planted["pid"] = json!(1);
    planted["owner_start"] = Value::Null;
    planted["profile"] = json!("evil");
    planted["seq"] = json!(ours["seq"].as_u64().unwrap() + 5);
    write_record(&w.shared(), &file, &planted);

    // Not this device's as it stands, and not anyone's: the rewrite does
    // not prove the id it claims, so no listing shows it, and `--all`
    // marks it forged.
    let rows = a.list(&["--all-profiles"]);
    assert!(
        rows.iter().all(|r| r.session_id != "s"),
        "a forged rewrite is listed: {rows:#?}"
    );
    let all = a.list(&["--all", "--all-profiles"]);
    let row = all.iter().find(|r| r.session_id == "s").expect("listed");
    assert_eq!(row.title, "planted");
    assert_eq!(row.forged.as_deref(), Some("bad_signature"));
    assert!(
        !row.local,
        "a rewritten file is listed as this device's: {row:#?}"
    );

    // refresh asks after the owner this device recorded (alive), and writes
    // this device's own record back, above the planted seq.
    let out: JsonRefresh = a.json(&["refresh", "--json"]);
    assert_eq!(out.refreshed_files, vec![file.clone()], "{out:?}");
    let now_on_disk = read_json(&path);
    assert_eq!(now_on_disk["title"], "ours");
    assert_eq!(now_on_disk["profile"], ours["profile"]);
    assert_eq!(now_on_disk["owner_start"], ours["owner_start"]);
    assert!(now_on_disk["seq"].as_u64().unwrap() > planted["seq"].as_u64().unwrap());
    let rows = a.list(&[]);
    assert!(
        rows.iter()
            .any(|r| r.session_id == "s" && r.local && r.title == "ours")
    );

    // And clear still ends the life.
    a.run(&["clear", "--session", "s"]).success();
    assert!(read_json(&path)["ended_at"].as_f64().is_some());
    drop(owner);
}

#[test]
fn a_live_record_deleted_by_someone_else_is_written_again_by_refresh() {
    let w = World::new();
    let a = w.device("a");
    let owner = Owner::start();
    a.publish("s", &["--owner-pid", &owner.pid(), "--title", "ours"]);
    let file = record_file(&w.shared(), "s");
    let path = w.shared().join(&file);
    let before = read_json(&path);
    // Another device's expire, a user's rm: the file goes, the session runs on.
    std::fs::remove_file(&path).unwrap();
    assert!(a.list(&[]).is_empty());
    let out: JsonRefresh = a.json(&["refresh", "--json"]);
    assert_eq!(out.refreshed_files, vec![file.clone()], "{out:?}");
    let after = read_json(&path);
    assert_eq!(
        after["started_at"], before["started_at"],
        "the same life goes on"
    );
    assert_eq!(after["title"], "ours");
    assert!(after["seq"].as_u64() > before["seq"].as_u64());
    assert!(a.list(&[]).iter().any(|r| r.session_id == "s" && r.local));

    // Once the owner is gone, a deleted record is not written again.
    drop(owner);
    std::fs::remove_file(&path).unwrap();
    let out: JsonRefresh = a.json(&["refresh", "--json"]);
    assert!(
        out.refreshed_files.is_empty() && out.cleared_files.is_empty(),
        "{out:?}"
    );
    assert!(!path.exists());

    // And a session this device cleared is never written again.
    let owner = Owner::start();
    a.publish("t", &["--owner-pid", &owner.pid()]);
    let t = w.shared().join(record_file(&w.shared(), "t"));
    a.run(&["clear", "--session", "t"]).success();
    std::fs::remove_file(&t).unwrap();
    let out: JsonRefresh = a.json(&["refresh", "--json"]);
    assert!(out.refreshed_files.is_empty(), "{out:?}");
    assert!(!t.exists());

    // A clear of a session whose file someone else deleted ends it all the
    // same (named by its id or by its key): the tombstone is written from
    // what this device last wrote, and no refresh brings the life back.
    for (sid, name, key) in [("u", "u", "key-of-u"), ("v", "key-of-v", "key-of-v")] {
        a.publish(sid, &["--owner-pid", &owner.pid(), "--key", key]);
        let path = w.shared().join(record_file(&w.shared(), sid));
        std::fs::remove_file(&path).unwrap();
        let out = a.run(&["clear", "--session", name]).success();
        assert!(
            out.stdout.starts_with(&format!("cleared {sid} (")),
            "{sid}: {}",
            out.stdout
        );
        assert!(read_json(&path)["ended_at"].is_number(), "{sid}");
        let out: JsonRefresh = a.json(&["refresh", "--json"]);
        assert!(out.refreshed_files.is_empty(), "{sid}: {out:?}");
        assert_eq!(a.show(sid).state, "ended", "{sid}");
    }
}

/// Whether any row of `rows` shows session `s1` live.
fn shows_s1_live(rows: &[JsonRow]) -> Option<&JsonRow> {
    rows.iter()
        .find(|r| r.session_id == "s1" && (r.live || r.state == "live"))
}

#[test]
fn a_late_copy_of_an_ended_life_stays_ended_after_its_tombstone_is_collected() {
    let w = World::new();
    let a = w.device("a");
    let (shared, second) = (w.shared(), w.tmp.path().join("second"));
    std::fs::create_dir_all(&second).unwrap();
    a.write_config(&format!(
        "[profiles.default]\ndirs = [{:?}, {:?}]\n",
        shared.display().to_string(),
        second.display().to_string()
    ));
    // A session with a long ttl: a copy written before its clear claims to
    // be live for an hour.
    a.publish("s1", &["--ttl", "1h", "--title", "first"]);
    let file = record_file(&shared, "s1");
    let live = read_json(&shared.join(&file));
    a.run(&["clear", "--session", "s1"]).success();
    // Eleven minutes on, `expire` deletes this device's tombstone.
    let out = run_ok(faked(a.cmd(), "+660").args(["expire", "--json"]));
    let out: JsonExpire = parse_json(&String::from_utf8_lossy(&out.stdout), "expire --json");
    assert!(
        out.removed.iter().any(|g| g.file == file),
        "the tombstone was not collected: {out:?}"
    );
    assert!(!shared.join(&file).exists());

    // Then late copies of the record as it was before the clear arrive: a
    // conflict copy in the synced folder, a copy in the profile's second
    // directory.
    let stem = file.strip_suffix(".json").unwrap();
    let conflict = format!("{stem}.sync-conflict-20260101-000000-ABCDEFG.json");
    write_record(&shared, &conflict, &live);
    write_record(&second, &file, &live);
    let check = |when: &str| {
        for args in [&[][..], &["--include-expired"], &["--all"]] {
            let rows = a.list(args);
            assert!(
                shows_s1_live(&rows).is_none(),
                "{when}: list {args:?} shows the ended life live: {rows:#?}"
            );
        }
        let shown = a.show("s1");
        assert!(!shown.live, "{when}: show s1: {shown:#?}");
    };
    check("late copies");

    // A late copy in the record's own file: `refresh` ends it again.
    write_record(&shared, &file, &live);
    check("a late copy in the record's file");
    let out: JsonRefresh = a.json(&["refresh", "--json"]);
    assert_eq!(out.cleared_files, std::slice::from_ref(&file), "{out:?}");
    assert!(read_json(&shared.join(&file))["ended_at"].is_f64());
    check("after refresh");

    // And `expire` removes the copies, in both directories.
    let out: JsonExpire = a.json(&["expire", "--json"]);
    assert!(
        !shared.join(&conflict).exists() && !second.join(&file).exists(),
        "expire left a copy of the ended life: {out:?}"
    );
    check("after expire");
}

/// A record of this device that expired with no owner running ended its
/// life: `publish` and `run` of the session start a new one (their own
/// start, so UP counts from now; the ttl given or the profile's, not the
/// old record's), as after a clear. Ten minutes later on a faked clock.
#[test]
fn a_publish_or_run_after_an_expiry_starts_a_new_life() {
    let w = World::new();
    let a = w.device("a");
    let ttl = |r: &JsonRecord| r.expires_at.unwrap() - r.updated_at.unwrap();
    let first = |id: &str| -> JsonRecord {
        let out = a.publish(id, &["--ttl", "1s", "--title", "old", "--json"]);
        parse_json(&out.stdout, "publish --json")
    };
    let later = |args: &[&str]| -> String {
        let out = run_ok(faked(a.cmd(), "+10m").args(args));
        String::from_utf8(out.stdout).unwrap()
    };

    // publish
    let old = first("life");
    let new: JsonRecord = parse_json(
        &later(&["publish", "--session", "life", "--json"]),
        "publish --json",
    );
    assert!(
        new.started_at.unwrap() > old.started_at.unwrap() + 500.0,
        "{new:?}"
    );
    assert_eq!(new.started_at, new.updated_at);
    assert!(
        (ttl(&new) - 90.0).abs() < 1e-6,
        "the profile's ttl: {new:?}"
    );
    assert_eq!(new.title, "", "nothing kept of the old life");

    // run
    let old = first("build");
    let shown = w.tmp.path().join("shown.json");
    let script = format!("presence show build --json > {}", shown.display());
    later(&[
        "run",
        "--session",
        "build",
        "--title",
        "new",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    let row: JsonRow = parse_json(&std::fs::read_to_string(&shown).unwrap(), "show --json");
    assert!(
        row.started_at.unwrap() > old.started_at.unwrap() + 500.0,
        "{row:?}"
    );
    let expires_in = row.expires_at.unwrap() - row.updated_at.unwrap();
    assert!(
        (expires_in - 90.0).abs() < 1e-6,
        "the profile's ttl: {row:?}"
    );
    assert_eq!(
        (row.title.as_str(), row.status.as_str()),
        ("new", "working")
    );

    // A live record is patched: the same life, its ttl kept.
    let old = a.publish("kept", &["--ttl", "30m", "--title", "old", "--json"]);
    let old: JsonRecord = parse_json(&old.stdout, "publish --json");
    let again = a.publish("kept", &["--status", "waiting", "--json"]);
    let again: JsonRecord = parse_json(&again.stdout, "publish --json");
    assert_eq!(again.started_at, old.started_at);
    assert_eq!((again.title.as_str(), ttl(&again)), ("old", 1800.0));
}
