//! A device can only speak for itself: records another device writes in
//! this device's name, or in the name of a third, end, hide, clock and
//! steer nothing (docs/security.md, "Authorship").

use std::path::Path;

use serde_json::{Value, json};

use crate::harness::*;

fn record_file(dir: &Path, session: &str) -> String {
    let suffix = format!(".{session}.json");
    let names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(&suffix) && !n.starts_with('.') && !n.contains("conflict"))
        .collect();
    assert_eq!(names.len(), 1, "files of {session}: {names:?}");
    names.into_iter().next().unwrap()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn live(d: &Device, session: &str) -> bool {
    d.list(&[])
        .iter()
        .any(|r| r.session_id == session && r.live)
}

fn doctor_text(d: &Device) -> String {
    let out = d.run(&["doctor", "--json"]);
    let checks: Vec<JsonCheck> = parse_json(&out.stdout, "doctor --json");
    checks
        .iter()
        .map(|c| {
            format!(
                "{} {} {}\n",
                c.check,
                c.message,
                c.fix.as_deref().unwrap_or_default()
            )
        })
        .collect()
}

/// H2: a copy of A's live record with `ended_at` set, under a conflict-copy
/// name, ends A's running session nowhere — not when it is a plain edit
/// (forged: the signature no longer holds), not when another device signs
/// it as its own (then it is that device's tombstone, of a life of its own).
#[test]
fn a_tombstone_written_by_another_device_ends_nothing() {
    let w = World::new();
    let (a, b, c) = (w.device("a"), w.device("b"), w.device("c"));
    a.publish("s1", &["--ttl", "1h"]);
    c.publish("c-own", &[]);
    let file = record_file(&w.shared(), "s1");
    let original = read_json(&w.shared().join(&file));
    assert!(original["sig"].is_string(), "{original}");
    let stem = file.trim_end_matches(".json");
    let mut tomb = original.clone();
    let t = now();
    tomb["ended_at"] = json!(t);
    tomb["updated_at"] = json!(t + 1.0);
    tomb["status"] = json!("ended");
    let forged = format!("{stem}.sync-conflict-20260101-000000-FORGED1.json");
    write_record(&w.shared(), &forged, &tomb);
    let mut signed_by_c = tomb.clone();
    c.sign(&mut signed_by_c);
    let theirs = format!("{stem}.sync-conflict-20260101-000000-SIGNED2.json");
    write_record(&w.shared(), &theirs, &signed_by_c);

    for (name, d) in [("a", &a), ("b", &b), ("c", &c)] {
        assert!(live(d, "s1"), "s1 is ended on {name}: {:#?}", d.list(&[]));
        let shown = d.show("s1");
        assert!(shown.live && shown.verified, "show on {name}: {shown:?}");
    }
    // Only --all --json shows the forgery, with its reason.
    let all = b.list(&["--all"]);
    let f = all.iter().find(|r| r.file == forged).unwrap();
    assert_eq!(f.forged.as_deref(), Some("bad_signature"));
    assert!(!f.live);
    let table = b.run(&["list", "--all"]).success().stdout;
    assert!(!table.contains("FORGED1"), "{table}");
    // No device's expire deletes the live record, nor does refresh stop.
    for d in [&a, &b, &c] {
        d.run(&["expire"]).success();
        assert!(
            w.shared().join(&file).exists(),
            "expire deleted the live record"
        );
    }
    let out: JsonRefresh = a.json(&["refresh", "--json"]);
    assert!(out.cleared_files.is_empty(), "{out:?}");
    assert!(live(&b, "s1"));
    // doctor names the forged file and why.
    let text = doctor_text(&b);
    assert!(
        text.contains(&forged) && text.contains("bad_signature"),
        "{text}"
    );
    // A's own clear still ends it everywhere.
    a.run(&["clear", "--session", "s1"]).success();
    assert!(!live(&b, "s1") && !live(&a, "s1"));
}

/// H1: a file claiming this device's id with a time an hour ahead never
/// teaches this device's clock: its own session stays listed everywhere,
/// and its own `expire` leaves its live record alone.
#[test]
fn a_future_record_in_this_devices_name_clocks_nothing() {
    let w = World::new();
    let (a, b) = (w.device("a"), w.device("b"));
    a.publish("mine", &[]);
    let me = a.device_id();
    let t = now() + 3600.0;
    for i in 0..3 {
        // Three arrivals, seconds apart: what the clock rule needs to learn.
        let planted = json!({
            "version": 1, "session_id": format!("x{i}"), "profile": "default",
            "host": "vm", "instance_id": "elsewhere", "device_id": me,
            "started_at": t, "updated_at": t + f64::from(i), "expires_at": t + 90.0,
        });
        write_record(&w.shared(), &format!("elsewhere.x{i}.json"), &planted);
        a.list(&[]);
        b.list(&[]);
        std::thread::sleep(std::time::Duration::from_millis(1100));
    }
    for (name, d) in [("a", &a), ("b", &b)] {
        assert!(live(d, "mine"), "mine is hidden on {name}");
    }
    let dry: JsonExpire = a.json(&["expire", "--dry-run", "--json"]);
    assert!(
        dry.removed.iter().all(|g| !g.file.contains("mine")),
        "{dry:?}"
    );
    let devices: Vec<JsonDevice> = b.json(&["devices", "--json"]);
    let d = devices.iter().find(|d| d.device_id == me).unwrap();
    assert_eq!(d.forged, 3, "{d:?}");
    assert!(d.offset_s.is_none_or(|o| o.abs() < 60.0), "{d:?}");
    assert!(
        d.fingerprint
            .as_deref()
            .is_some_and(|f| f.starts_with("SHA256:"))
    );
}

/// M1: `open main` opens this device's own session, never a twin another
/// device wrote with a newer `updated_at` (and this host's name); on a
/// third device, a verified record wins over an unsigned twin, and two
/// signing devices with that id make `open` ask rather than pick.
#[test]
fn open_is_never_steered_by_a_twin() {
    let w = World::new();
    let (a, b, c) = (w.device("a"), w.device("b"), w.device("c"));
    a.publish("main", &["--endpoint", "ssh://good.example/main"]);
    let ours = read_json(&w.shared().join(record_file(&w.shared(), "main")));
    let mut twin = ours.clone();
    for field in ["device_id", "key", "sig"] {
        twin.as_object_mut().unwrap().remove(field);
    }
    twin["instance_id"] = json!("twin");
    twin["endpoint"] = json!("ssh://attacker.example/main");
    twin["updated_at"] = json!(now() + 30.0);
    twin["expires_at"] = json!(now() + 120.0);
    write_record(&w.shared(), "twin.main.json", &twin);
    for d in [&a, &b] {
        let line = d.run(&["open", "main", "--print"]).success().stdout;
        assert!(
            line.contains("good.example") && !line.contains("attacker"),
            "{line}"
        );
    }
    // A second device that signs publishes the same id: b asks.
    c.publish("main", &["--endpoint", "ssh://other.example/main"]);
    let out = b.run(&["open", "main", "--yes"]);
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("2 devices"), "{}", out.stderr);
    // a still opens its own.
    let line = a.run(&["open", "main", "--print"]).success().stdout;
    assert!(line.contains("good.example"), "{line}");
}

/// Hermes Agent's records (unsigned) are listed as before, marked `?` in
/// the table; ours carry `verified: true`.
#[test]
fn unsigned_records_are_listed_and_marked() {
    let w = World::new();
    let a = w.device("a");
    a.publish("ours", &[]);
    let t = now();
    write_record(
        &w.shared(),
        "hermes-1.theirs.json",
        &json!({
            "version": 1, "session_id": "theirs", "session_key": "theirs",
            "status": "idle", "host": "hermes-box", "instance_id": "hermes-1",
            "profile": "default", "source": "cli", "pid": 1,
            "updated_at": t, "expires_at": t + 90.0,
        }),
    );
    let rows = a.list(&[]);
    let by = |s: &str| rows.iter().find(|r| r.session_id == s).unwrap();
    assert!(by("ours").verified && !by("theirs").verified);
    assert!(by("theirs").forged.is_none() && by("theirs").live);
    let table = a.run(&["list"]).success().stdout;
    assert!(
        table.contains("*ours") && table.contains("?theirs"),
        "{table}"
    );
}
