//! Learned device clocks, end to end on one shared directory: a writer whose
//! clock runs 10 minutes behind is listed once its clock is learned and goes
//! one ttl after it stops, and a stale copy of a dead session never shows
//! live once its writer's clock is known.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::harness::*;

/// When the file at `path` last arrived or changed here (its ctime, Unix
/// seconds), which is what a record's liveness is measured from.
pub(crate) fn arrived(path: &Path) -> f64 {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    m.ctime() as f64 + m.ctime_nsec() as f64 / 1e9
}

/// Asserts that `dev` no longer lists `session` one ttl after its record's
/// file at `copy` last arrived: read with `dev`'s wall clock set past that
/// instant, the record is there and stale, by arrival, whatever its
/// writer's clock says. (Waiting the ttl out instead would let a slow
/// machine decide the outcome.)
#[track_caller]
pub(crate) fn stale_one_ttl_after_arrival(dev: &Device, copy: &Path, session: &str, ttl: f64) {
    // A sync engine may touch the file once more just after it lands (its
    // mtime): then the arrival is later, and the read is taken again.
    for _ in 0..10 {
        let at = arrived(copy);
        // Whole seconds, rounded up, and one more: the read starts past the
        // ttl, however late it starts.
        let ahead = (at + ttl - now()).ceil().max(0.0) as u64 + 1;
        let out = run_ok(faked(dev.cmd(), &format!("+{ahead}")).args([
            "list",
            "--json",
            "--include-expired",
            "--session",
            session,
        ]));
        if arrived(copy) != at {
            continue;
        }
        let rows: Vec<JsonRow> = parse_json(&String::from_utf8_lossy(&out.stdout), "list --json");
        assert!(
            rows.len() == 1 && !rows[0].live && rows[0].state == "stale",
            "{session}, read {ahead} s on, past one ttl ({ttl} s) since its copy arrived: {rows:#?}"
        );
        return;
    }
    panic!("{} keeps changing", copy.display());
}

#[test]
fn a_writer_ten_minutes_behind_is_listed_once_its_clock_is_learned() {
    let w = World::new();
    let (a, b) = (w.device("a"), w.device("b"));
    let owner = owner();
    // A ttl no stalled refresh runs out; the end is read with a clock moved
    // past it. Still far short of the 10 minutes the writer runs behind, so
    // its first copy reads as expired until its clock is known.
    let ttl = 30.0;
    run_ok(
        faked(b.cmd(), "-600")
            .args(["publish", "--session", "slow", "--ttl", &format!("{ttl}s")])
            .args(["--owner-pid", &owner.0.id().to_string()]),
    );
    let refresher = KillOnDrop(
        faked(b.cmd(), "-600")
            .args(["--quiet", "refresh", "--every", "1s"])
            .spawn()
            .unwrap(),
    );
    // First contact: no estimate, read with the skew tolerance (5 min):
    // already expired. Two refreshes later its clock is known. (A first read
    // has seen one arrival, however late it comes.)
    let listed = |d: &Device| d.list(&[]).into_iter().find(|r| r.session_id == "slow");
    assert!(listed(&a).is_none(), "listed before its clock was learned");
    let (row, took) = wait_for("the slow writer listed", PATIENCE, || {
        listed(&a).ok_or("not listed")
    });
    println!(
        "clocks e2e: writer 10 min behind listed after {:.2} s",
        took.as_secs_f64()
    );
    let offset = row.writer_offset_s.expect("an estimate");
    // The true offset less the delay of the quickest copy seen (a local
    // write: milliseconds, seconds on a stalled machine), never more.
    assert!((-605.0..=-599.9).contains(&offset), "offset {offset}");
    assert!(row.live);
    // It stays listed while it refreshes.
    for _ in 0..10 {
        assert!(listed(&a).is_some(), "dropped while alive");
        std::thread::sleep(Duration::from_millis(300));
    }
    // It stops refreshing: gone one ttl after its last refresh arrived.
    drop(refresher);
    stale_one_ttl_after_arrival(&a, &w.shared().join(&row.file), "slow", ttl);
    drop(owner);
}

#[test]
fn a_stale_copy_of_a_dead_session_never_shows_once_its_writer_is_known() {
    let w = World::new();
    let a = w.device("a");
    let dir = w.shared();
    let device = "c".repeat(32);
    let rec = |sid: &str, updated: f64, ttl: f64| {
        json!({"session_id": sid, "profile": "default", "client": "terminal",
               "device_id": device, "host": "other", "instance_id": "other",
               "started_at": updated, "updated_at": updated, "expires_at": updated + ttl, "seq": 1})
    };
    // Device C, clock right, seen arriving twice: its clock is learned.
    write_record(&dir, "other.live.json", &rec("live", now(), 90.0));
    assert_eq!(sessions(&a.list(&[])), ["live"]);
    std::thread::sleep(Duration::from_millis(2500));
    write_record(&dir, "other.live.json", &rec("live", now(), 90.0));
    // The read that learns the clock (a second arrival) judges through it.
    let rows = a.list(&[]);
    assert!(rows[0].writer_offset_s.is_some(), "{rows:#?}");
    // A copy of a session of C that died a minute ago arrives now (C was
    // offline, or the copy was relayed late). Its expires_at lies within the
    // 5-minute skew tolerance, which alone would list it for a full ttl.
    write_record(&dir, "other.dead.json", &rec("dead", now() - 60.0, 4.0));
    let rows = a.list(&[]);
    assert_eq!(
        sessions(&rows),
        ["live"],
        "a dead session flashed back: {rows:#?}"
    );
    let shown = a.show("dead");
    assert!(!shown.live, "{shown:#?}");
}

#[test]
fn devices_lists_each_writer_and_its_learned_clock() {
    let w = World::new();
    let a = w.device("a");
    a.publish("mine", &[]);
    let dir = w.shared();
    let other = "d".repeat(32);
    let rec = |ago: f64| {
        let t = now();
        json!({"session_id": "theirs", "profile": "default", "client": "terminal",
               "device_id": other, "host": "box\u{1b}]0;x\u{7}", "instance_id": "box",
               "started_at": t - 900.0, "updated_at": t - ago, "expires_at": t - ago + 90.0, "seq": 1})
    };
    // Another device, its clock 15 min behind, seen arriving twice.
    write_record(&dir, "box.theirs.json", &rec(900.0));
    let devices: Vec<JsonDevice> = a.json(&["devices", "--json"]);
    let theirs = devices
        .iter()
        .find(|d| d.device_id == other)
        .expect("listed");
    assert_eq!(theirs.offset_s, None, "one arrival teaches nothing");
    std::thread::sleep(Duration::from_millis(2500));
    // How long the write took bounds the copy's delay, and so how far the
    // estimate may fall short of the true offset.
    let before = now();
    write_record(&dir, "box.theirs.json", &rec(900.0));
    let delay = now() - before;
    a.run(&["list"]).success();
    let devices: Vec<JsonDevice> = a.json(&["devices", "--json"]);
    let since_arrival = now() - before;
    let theirs = devices
        .iter()
        .find(|d| d.device_id == other)
        .expect("listed");
    let offset = theirs.offset_s.expect("learned");
    // (A file's ctime comes from the kernel's coarse clock, which may lag
    // the time read just before by a tick: up to 10 ms, 0.05 s to spare.)
    assert!(
        (-900.0 - delay - 0.05..=-900.0 + delay + 0.05).contains(&offset),
        "{offset} (the write took {delay:.3} s)"
    );
    assert!(
        theirs.samples >= 2 && !theirs.stale && !theirs.this_device,
        "{theirs:?}"
    );
    assert_eq!(
        (theirs.records, theirs.live),
        (1, 1),
        "listed live through its clock"
    );
    let mine = devices.iter().find(|d| d.this_device).expect("this device");
    assert_eq!(mine.device_id, a.device_id());
    // The table escapes what another device wrote.
    assert_eq!(theirs.instances, ["box"]);
    // Seen when the copy arrived here, not when its writer's clock says.
    assert!(
        (0.0..=since_arrival + 0.05).contains(&theirs.last_seen_s),
        "{theirs:?}, {since_arrival:.3} s after the write began"
    );
    // That device's clock minus this one's: negative, it runs behind.
    let table = a.run(&["devices"]).success().stdout;
    assert!(
        table.contains(&format!("{offset:+.1} s (behind")),
        "{offset}: {table}"
    );
    assert!(
        !table.contains('\u{1b}') && table.contains("\\e]0;x"),
        "{table}"
    );
}

#[test]
fn devices_example_has_the_printed_shape() {
    let doc: Vec<JsonDevice> = parse_json(
        &crate::docs::example("json-output.md", "devices"),
        "devices example",
    );
    let offsets: Vec<Option<f64>> = doc.iter().map(|d| d.offset_s).collect();
    assert!(
        offsets.iter().any(|o| o.is_some_and(|o| o < 0.0)),
        "{doc:?}"
    );
    assert_eq!(doc.iter().filter(|d| d.this_device).count(), 1);
}

/// A record claiming this device's `device_id`, with its times two hours
/// ahead (a forgery, or a clone of this home directory whose clock runs
/// fast), seen arriving twice: before, it taught this device that its own
/// clock runs two hours ahead, which hid every live session of its own
/// from `list` and had `expire` delete them at once.
#[test]
fn a_record_claiming_this_devices_id_never_clocks_this_device() {
    let w = World::new();
    let a = w.device("a");
    // No owner: `expire` deletes this device's records as soon as they
    // are not live.
    a.publish("mine", &[]);
    let me = a.device_id();
    let dir = w.shared();
    let forged = |t: f64| {
        json!({"session_id": "forged", "profile": "default", "client": "terminal",
               "device_id": me, "host": "clone", "instance_id": "clone",
               "started_at": t, "updated_at": t, "expires_at": t + 90.0, "seq": 1})
    };
    write_record(&dir, "clone.forged.json", &forged(now() + 7200.0));
    a.run(&["list"]).success();
    std::thread::sleep(Duration::from_millis(2500));
    write_record(&dir, "clone.forged.json", &forged(now() + 7200.0));
    // Two arrivals 2.5 s apart: enough to teach any other device's clock.
    a.run(&["list"]).success();

    let rows = a.list(&[]);
    let mine = rows
        .iter()
        .find(|r| r.session_id == "mine")
        .unwrap_or_else(|| panic!("this device's live session is hidden: {rows:#?}"));
    assert!(mine.live && mine.local, "{mine:#?}");
    assert_eq!(
        mine.writer_offset_s,
        Some(0.0),
        "this device's records are read on its own clock: {mine:#?}"
    );
    let devices: Vec<JsonDevice> = a.json(&["devices", "--json"]);
    let this = devices.iter().find(|d| d.this_device).expect("this device");
    assert_eq!(
        this.offset_s, None,
        "an estimate of its own clock: {this:?}"
    );

    let out: JsonExpire = a.json(&["expire", "--json"]);
    assert!(
        out.removed.iter().all(|g| !g.file.ends_with(".mine.json")),
        "expire deleted this device's live record: {out:?}"
    );
    assert_eq!(sessions(&a.list(&["--session", "mine"])), ["mine"]);
}

/// A `chmod` changes a file's ctime, by which liveness measures arrival,
/// but not its content: a record that went stale must stay so. (Syncthing
/// applies another device's permission bits in place, a backup tool or a
/// user may chmod the folder.)
#[test]
fn a_chmod_of_a_stale_record_does_not_make_it_live_again() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::new();
    let a = w.device("a");
    let dir = w.shared();
    let ttl = 30.0;
    let t = now();
    let rec = json!({"session_id": "gone", "profile": "default", "client": "terminal",
                     "device_id": "e".repeat(32), "host": "other", "instance_id": "other",
                     "started_at": t, "updated_at": t, "expires_at": t + ttl, "seq": 1});
    write_record(&dir, "other.gone.json", &rec);
    let path = dir.join("other.gone.json");
    // Read once: the writer's clock is seen (one arrival: no estimate).
    assert_eq!(sessions(&a.list(&[])), ["gone"]);
    let first = arrived(&path);
    // Its writer dies. Some seconds later the file's mode changes, nothing else.
    std::thread::sleep(Duration::from_secs(6));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let chmodded = arrived(&path);
    assert!(chmodded > first + 5.0, "{first} {chmodded}");
    // Read past one ttl after the record arrived (and well before its
    // expires_at plus the skew tolerance): stale, whatever its ctime says.
    let ahead = (first + ttl - now()).ceil().max(0.0) as u64 + 3;
    let out = run_ok(faked(a.cmd(), &format!("+{ahead}")).args([
        "list",
        "--json",
        "--include-expired",
        "--session",
        "gone",
    ]));
    let rows: Vec<JsonRow> = parse_json(&String::from_utf8_lossy(&out.stdout), "list --json");
    assert!(
        rows.len() == 1 && !rows[0].live && rows[0].state == "stale",
        "read {ahead} s on, the chmod made it live again: {rows:#?}"
    );
}

/// Whether `reader` has an estimate of `writer`'s clock in its
/// `clocks.json` (what its refresher learned; `list` reads it from there).
fn estimated(reader: &Device, writer: &str) -> bool {
    let path = reader.root.join("home/.local/state/presence/clocks.json");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().any(|line| {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        v["device"] == writer && v["clock"]["estimate"].is_number()
    })
}

/// The record file of `session` in `dir`, and its `seq`.
fn seq_of(dir: &Path, session: &str) -> Option<(std::path::PathBuf, u64)> {
    let entry = std::fs::read_dir(dir).ok()?.find_map(|e| {
        let e = e.ok()?;
        let name = e.file_name().into_string().ok()?;
        name.ends_with(&format!(".{session}.json"))
            .then(|| e.path())
    })?;
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&entry).ok()?).ok()?;
    Some((entry, v["seq"].as_u64()?))
}

/// A writer an hour behind, refreshing every second; returns its owner and
/// its refresher (which stop when dropped) and the device.
fn an_hour_behind(w: &World, name: &str) -> (Device, KillOnDrop, KillOnDrop) {
    let dev = w.device(name);
    let owner = owner();
    run_ok(
        faked(dev.cmd(), "-3600")
            .args(["publish", "--session", "late", "--ttl", "30s"])
            .args(["--owner-pid", &owner.0.id().to_string()]),
    );
    let refresher = KillOnDrop(
        faked(dev.cmd(), "-3600")
            .args(["--quiet", "refresh", "--every", "1s"])
            .spawn()
            .unwrap(),
    );
    (dev, owner, refresher)
}

/// The reader's first look: `late` listed live, through the writer's clock.
#[track_caller]
fn listed_through_its_clock(reader: &Device) {
    let rows = reader.list(&[]);
    let row = rows.iter().find(|r| r.session_id == "late");
    let row = row.unwrap_or_else(|| panic!("not on the first list: {rows:#?}"));
    assert!(row.live, "{row:?}");
    let offset = row.writer_offset_s.expect("listed through its clock");
    assert!((-3660.0..=-3599.9).contains(&offset), "offset {offset}");
}

#[test]
fn a_refresher_learns_a_writer_an_hour_behind_before_anyone_lists() {
    let w = World::new();
    let reader = w.device("a");
    // The reader publishes nothing: its refresher runs for the clocks.
    let learner = KillOnDrop(
        reader
            .cmd()
            .args(["--quiet", "refresh", "--every", "80s"])
            .spawn()
            .unwrap(),
    );
    let (writer, _owner, _refresher) = an_hour_behind(&w, "b");
    // Nobody lists on the reader. Its refresher's round reads the
    // directory only every 80 s, longer than this test waits; between
    // rounds its watcher reads each arrival, and two arrivals teach the
    // writer's clock.
    let id = writer.device_id();
    wait_until(
        "the reader's refresher to learn the clock",
        PATIENCE,
        || estimated(&reader, &id),
    );
    listed_through_its_clock(&reader);
    drop(learner);
}

#[test]
fn a_one_shot_refresh_learns_a_writer_an_hour_behind_from_two_passes() {
    let w = World::new();
    let reader = w.device("a");
    let (writer, _owner, _refresher) = an_hour_behind(&w, "b");
    // As a timer runs it: one pass, then another once a later refresh of
    // the writer arrived (2 s or more after the first one seen).
    let shared = w.shared();
    let (_, first) = wait_for("the writer's record", PATIENCE, || {
        seq_of(&shared, "late").ok_or("none")
    })
    .0;
    run_ok(reader.cmd().args(["--quiet", "refresh"]));
    assert!(
        !estimated(&reader, &writer.device_id()),
        "one arrival taught"
    );
    wait_until("three more refreshes of the writer", PATIENCE, || {
        seq_of(&shared, "late").is_some_and(|(_, seq)| seq >= first + 3)
    });
    run_ok(reader.cmd().args(["--quiet", "refresh"]));
    assert!(estimated(&reader, &writer.device_id()));
    listed_through_its_clock(&reader);
}
