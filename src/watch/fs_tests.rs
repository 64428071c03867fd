//! The watcher against a real file system: native events and polling.
//! The watcher on a real directory, with two simulated devices sharing it.
use super::*;
use crate::config::{self, Selection};
use crate::local::LocalDirs;
use crate::record::Record;
use crate::registry::PublishRequest;

struct Devices {
    _tmp: tempfile::TempDir,
    a: Registry,
    b: Registry,
}

fn devices() -> Devices {
    let tmp = tempfile::tempdir().unwrap();
    let shared = tmp.path().join("shared");
    let sel = Selection {
        dir: Some(shared.clone()),
        ..Selection::default()
    };
    let reg = |name: &str| {
        let local = LocalDirs::under(&tmp.path().join(name));
        let (profile, _) = config::resolve(&sel, &local).unwrap();
        Registry::new(profile, local).with_host(name)
    };
    let (a, b) = (reg("a"), reg("b"));
    crate::store::ensure_dir(&shared).unwrap();
    Devices { a, b, _tmp: tmp }
}

/// A record that lives an hour: none of these tests sees one expire
/// unless it says so.
fn req(session: &str) -> PublishRequest {
    PublishRequest {
        session_id: session.into(),
        ttl: Some(Duration::from_secs(3600)),
        ..PublishRequest::default()
    }
}

/// How long a test waits for what the watcher promises will happen
/// soon: long enough for a one-core machine with a busy loop beside the
/// tests, so that it runs out only when the promise is broken. A test
/// that passes never waits this long.
const PATIENCE: Duration = Duration::from_secs(60);

/// Collects event names until `want` many arrived, or [`PATIENCE`]
/// passed.
fn collect(w: &mut Watcher, want: usize) -> Vec<String> {
    collect_until(w, want, PATIENCE)
}

fn collect_until(w: &mut Watcher, want: usize, limit: Duration) -> Vec<String> {
    collect_at(w, want, limit, crate::local::unix_now)
}

/// [`collect_until`] with the watcher's clock `now`.
fn collect_at(w: &mut Watcher, want: usize, limit: Duration, now: impl Fn() -> f64) -> Vec<String> {
    let deadline = Instant::now() + limit;
    let mut got = Vec::new();
    while got.len() < want && Instant::now() < deadline {
        for e in w.next_events(Duration::from_millis(50), &now).unwrap() {
            got.push(summary(&e));
        }
    }
    got
}

fn summary(e: &Event) -> String {
    let extra = match e {
        Event::Down { reason, .. } => format!(" {reason:?}"),
        Event::Update { changed, .. } => format!(" {}", changed.join(",")),
        Event::Ready { count } => return format!("ready {count}"),
        _ => String::new(),
    };
    let row = e.row().unwrap();
    format!(
        "{} {}@{}{extra}",
        e.name(),
        row.record.session_id,
        row.record.host
    )
}

#[test]
fn the_initial_events_are_the_live_set_then_ready() {
    let d = devices();
    let mut w = Watcher::new(
        d.b.clone(),
        WatchOptions::default(),
        crate::local::unix_now(),
    )
    .unwrap();
    assert_eq!(w.initial_events(), [Event::Ready { count: 0 }]);
    d.a.publish(&req("one"), crate::local::unix_now()).unwrap();
    d.a.publish(&req("two"), crate::local::unix_now()).unwrap();
    let w2 = Watcher::new(
        d.b.clone(),
        WatchOptions::default(),
        crate::local::unix_now(),
    )
    .unwrap();
    let got: Vec<String> = w2.initial_events().iter().map(summary).collect();
    assert_eq!(got, ["up two@a", "up one@a", "ready 2"]);
    // The first watcher goes on with the changes only, never a second `ready`.
    let mut later = collect(&mut w, 2);
    later.sort();
    assert_eq!(later, ["up one@a", "up two@a"]);
}

fn scenario(poll: Option<Duration>) {
    let d = devices();
    d.a.publish(&req("before"), crate::local::unix_now())
        .unwrap();
    let opts = WatchOptions {
        poll,
        quiet: Duration::from_millis(5),
        max_delay: Duration::from_millis(50),
        ..WatchOptions::default()
    };
    // The watcher's clock: this machine's, moved on by `ahead` seconds
    // once the test says so.
    let ahead = std::cell::Cell::new(0.0);
    let now = || crate::local::unix_now() + ahead.get();
    let collect = |w: &mut Watcher, want: usize| collect_at(w, want, PATIENCE, now);
    let mut w = Watcher::new(d.b.clone(), opts, now()).unwrap();
    assert_eq!(w.live().len(), 1, "the initial live set");

    d.a.publish(&req("s1"), crate::local::unix_now()).unwrap();
    assert_eq!(collect(&mut w, 1), ["up s1@a"]);
    let mut changed = req("s1");
    changed.status = Some("working".into());
    d.a.publish(&changed, crate::local::unix_now()).unwrap();
    assert_eq!(collect(&mut w, 1), ["update s1@a status"]);
    // A plain refresh is not news.
    d.a.publish(&changed, crate::local::unix_now()).unwrap();
    assert!(collect_at(&mut w, 1, Duration::from_secs(1), now).is_empty());
    d.a.clear(Some("s1"), None, crate::local::unix_now())
        .unwrap();
    assert_eq!(collect(&mut w, 1), ["down s1@a Cleared"]);

    // This device's own record, with a ttl shorter than the others':
    // down on the expiry timer once the watcher's clock passes it
    // (nothing changes on disk). The clock is moved on rather than the
    // ttl waited out, so that the record is up until the test says.
    let mut short = req("short");
    short.ttl = Some(Duration::from_secs(120));
    d.b.publish(&short, crate::local::unix_now()).unwrap();
    assert_eq!(collect(&mut w, 1), ["up short@b"]);
    ahead.set(121.0);
    assert_eq!(collect(&mut w, 1), ["down short@b Expired"]);

    // A successor on the same endpoint, from the same device.
    let mut run1 = req("run1");
    run1.endpoint = Some("tmux://h/main".into());
    d.b.publish(&run1, crate::local::unix_now()).unwrap();
    assert_eq!(collect(&mut w, 1), ["up run1@b"]);
    let mut run2 = req("run2");
    run2.endpoint = Some("tmux://h/main".into());
    d.b.publish(&run2, crate::local::unix_now()).unwrap();
    assert_eq!(collect(&mut w, 2), ["down run1@b Superseded", "up run2@b"]);
    // Another device on that endpoint hides nothing: a device speaks only
    // for itself.
    let mut run3 = req("run3");
    run3.endpoint = Some("tmux://h/main".into());
    d.a.publish(&run3, crate::local::unix_now()).unwrap();
    assert_eq!(collect(&mut w, 1), ["up run3@a"]);
}

#[test]
fn events_with_native_notifications() {
    scenario(None);
}

#[test]
fn events_with_polling() {
    scenario(Some(Duration::from_millis(100)));
}

#[test]
fn a_burst_of_writes_to_one_record_is_at_most_one_update_per_batch() {
    let d = devices();
    let mut w = Watcher::new(
        d.b.clone(),
        WatchOptions::default(),
        crate::local::unix_now(),
    )
    .unwrap();
    d.a.publish(&req("busy"), crate::local::unix_now()).unwrap();
    assert_eq!(collect(&mut w, 1), ["up busy@a"]);
    let start = w.stats();
    let writer = d.a.clone();
    let burst = std::thread::spawn(move || {
        let mut r = req("busy");
        for i in 0..1000 {
            r.title = Some(format!("step {i}"));
            writer.publish(&r, crate::local::unix_now()).unwrap();
        }
    });
    let mut events = Vec::new();
    while !burst.is_finished() {
        events.extend(collect_until(&mut w, 1, Duration::from_millis(200)));
    }
    burst.join().unwrap();
    // The last write wins, however the writes fell into batches.
    let title = |w: &Watcher| w.live().first().map(|r| r.record.title.clone());
    let deadline = Instant::now() + PATIENCE;
    while title(&w).as_deref() != Some("step 999") {
        assert!(
            Instant::now() < deadline,
            "the watcher shows {:?} after the last write",
            title(&w)
        );
        events.extend(collect_until(&mut w, 1, Duration::from_millis(200)));
    }
    // Every wake-up (a batch of file events, or a rescan) yields at most
    // one update of the record, every one an update of its title.
    let end = w.stats();
    let wakeups = (end.batches - start.batches) + (end.rescans - start.rescans);
    assert!(!events.is_empty());
    assert!(
        events.len() as u64 <= wakeups,
        "{} events in {wakeups} wake-ups ({end:?})",
        events.len()
    );
    assert!(
        events.iter().all(|e| e == "update busy@a title"),
        "{events:?}"
    );
    assert_eq!(w.live().len(), 1, "{events:?}");
}

#[test]
fn a_flapping_record_yields_alternating_up_and_down() {
    let d = devices();
    let mut w = Watcher::new(
        d.b.clone(),
        WatchOptions::default(),
        crate::local::unix_now(),
    )
    .unwrap();
    // How many `up` the watcher reported so far.
    let ups = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let writer = d.a.clone();
    let seen = std::sync::Arc::clone(&ups);
    let flapper = std::thread::spawn(move || {
        let seen = || seen.load(std::sync::atomic::Ordering::SeqCst);
        for i in 0..30 {
            let before = seen();
            writer
                .publish(&req("flap"), crate::local::unix_now())
                .unwrap();
            if i % 10 == 0 {
                // Now and then the record stays up until the watcher
                // reported an `up`, so that one is seen however loaded
                // the machine.
                let deadline = Instant::now() + PATIENCE;
                while seen() == before {
                    assert!(Instant::now() < deadline, "no `up` reported");
                    std::thread::sleep(Duration::from_millis(5));
                }
            } else {
                // Mostly faster than the watcher's coalescing.
                std::thread::sleep(Duration::from_millis(7));
            }
            writer
                .clear(Some("flap"), None, crate::local::unix_now())
                .unwrap();
            std::thread::sleep(Duration::from_millis(7));
        }
    });
    let mut events: Vec<String> = Vec::new();
    let record = |events: &mut Vec<String>, more: Vec<String>| {
        events.extend(more);
        let n = events.iter().filter(|e| e.starts_with("up ")).count();
        ups.store(n, std::sync::atomic::Ordering::SeqCst);
    };
    while !flapper.is_finished() {
        record(
            &mut events,
            collect_until(&mut w, 1, Duration::from_millis(100)),
        );
    }
    flapper.join().unwrap();
    // The last write was a clear: whatever is still up goes down.
    let deadline = Instant::now() + PATIENCE;
    while !w.live().is_empty() {
        assert!(Instant::now() < deadline, "still up: {events:?}");
        record(
            &mut events,
            collect_until(&mut w, 1, Duration::from_millis(100)),
        );
    }
    assert!(!events.is_empty());
    for pair in events.chunks(2) {
        assert_eq!(pair[0], "up flap@a", "{events:?}");
        assert_eq!(
            pair.get(1).map(String::as_str),
            Some("down flap@a Cleared"),
            "{events:?}"
        );
    }
}

#[test]
fn a_deleted_directory_is_an_error_after_retries() {
    let d = devices();
    let mut w = Watcher::new(
        d.b.clone(),
        WatchOptions::default(),
        crate::local::unix_now(),
    )
    .unwrap();
    std::fs::remove_dir_all(&d.b.profile().dir).unwrap();
    let deadline = Instant::now() + PATIENCE;
    let err = loop {
        match w.next_events(Duration::from_millis(50), crate::local::unix_now) {
            Err(e) => break e,
            Ok(_) => assert!(
                Instant::now() < deadline,
                "no error for a deleted directory"
            ),
        }
    };
    assert!(err.to_string().contains("disappeared"), "{err}");
}

/// Reads every file in `dir` from another process, as a reader (`list`,
/// `cat`, a backup) would.
fn read_all_elsewhere(dir: &Path) {
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg("cat -- \"$1\"/*.json > /dev/null")
        .arg("sh")
        .arg(dir)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits for events until a wait of `quiet` brings none.
fn settle(w: &mut Watcher, quiet: Duration) {
    while !w
        .next_events(quiet, crate::local::unix_now)
        .unwrap()
        .is_empty()
    {}
}

/// Waits until the watcher's live set, each row seen through `key`, is
/// what `list` on `reg` says; then, once the watcher has had nothing more
/// to say for a while, checks that it still is. Returns `list`'s rows.
fn agree<K: PartialEq + std::fmt::Debug>(
    w: &mut Watcher,
    reg: &Registry,
    step: &str,
    key: impl Fn(&Row) -> K,
) -> Vec<K> {
    let both = |w: &Watcher| {
        let listed = reg
            .list(
                crate::registry::ListOptions::default(),
                crate::local::unix_now(),
            )
            .unwrap();
        let want: Vec<K> = listed.rows.iter().map(&key).collect();
        let got: Vec<K> = w.live().iter().map(&key).collect();
        (got, want)
    };
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (got, want) = both(w);
        if got == want {
            break;
        }
        if Instant::now() >= deadline {
            assert_eq!(got, want, "after: {step} (waited {PATIENCE:?})");
        }
        w.next_events(Duration::from_millis(50), crate::local::unix_now)
            .unwrap();
    }
    settle(w, Duration::from_millis(300));
    let (got, want) = both(w);
    assert_eq!(got, want, "after: {step}");
    want
}

fn idle_then_one_change(poll: Option<Duration>) {
    let d = devices();
    for i in 0..50 {
        d.a.publish(&req(&format!("s{i}")), crate::local::unix_now())
            .unwrap();
    }
    let opts = WatchOptions {
        poll,
        ..WatchOptions::default()
    };
    let mut w = Watcher::new(d.b.clone(), opts, crate::local::unix_now()).unwrap();
    assert_eq!(w.live().len(), 50);
    let start = w.stats();
    assert_eq!((start.rescans, start.files_read), (1, 50), "{start:?}");

    read_all_elsewhere(&d.b.profile().dir);
    for e in std::fs::read_dir(&d.b.profile().dir).unwrap() {
        std::fs::read(e.unwrap().path()).unwrap();
    }
    // Ten waits, each long enough for any wake-up (and, polling, a poll).
    for _ in 0..10 {
        let events = w
            .next_events(Duration::from_millis(150), crate::local::unix_now)
            .unwrap();
        assert!(events.is_empty(), "{events:?}");
    }
    let idle = w.stats();
    assert_eq!(idle.files_read, start.files_read, "reads read: {idle:?}");
    if poll.is_none() {
        assert_eq!(idle, start, "reads woke the watcher");
    } else {
        assert!(idle.rescans > start.rescans, "no poll happened: {idle:?}");
    }

    let mut changed = req("s7");
    changed.status = Some("working".into());
    d.a.publish(&changed, crate::local::unix_now()).unwrap();
    assert_eq!(collect(&mut w, 1), ["update s7@a status"]);
    let after = w.stats();
    assert_eq!(after.files_read, idle.files_read + 1, "{after:?}");
    if poll.is_none() {
        assert_eq!(after.rescans, idle.rescans, "{after:?}");
    }
}

#[test]
fn reads_never_wake_the_watcher_and_a_change_rereads_one_file() {
    idle_then_one_change(None);
}

#[test]
fn a_poll_reads_only_the_file_that_changed() {
    idle_then_one_change(Some(Duration::from_millis(100)));
}

/// After every step the watcher's live set is exactly what `list` says.
fn agrees_with_list(poll: Option<Duration>) {
    let d = devices();
    let dir = d.b.profile().dir.clone();
    let opts = WatchOptions {
        poll,
        quiet: Duration::from_millis(5),
        max_delay: Duration::from_millis(50),
        ..WatchOptions::default()
    };
    let mut w = Watcher::new(d.b.clone(), opts, crate::local::unix_now()).unwrap();
    let check = |w: &mut Watcher, step: &str| {
        agree(w, &d.b, step, |r| (r.file.clone(), r.record.status.clone()));
    };
    let mut run1 = req("run1");
    run1.endpoint = Some("tmux://h/main".into());
    d.a.publish(&run1, crate::local::unix_now()).unwrap();
    d.a.publish(&req("solo"), crate::local::unix_now()).unwrap();
    check(&mut w, "two records");

    // A conflict copy, newer than its original: it wins the group.
    let original =
        d.a.list(Default::default(), crate::local::unix_now())
            .unwrap();
    let solo = original.rows.iter().find(|r| r.record.session_id == "solo");
    let mut copy = solo.unwrap().record.clone();
    copy.status = "from-the-copy".into();
    copy.updated_at = copy.updated_at.map(|u| u + 1.0);
    let copy_name = solo
        .unwrap()
        .file
        .replace(".json", ".sync-conflict-20261130-101112-ABCDEFG.json");
    std::fs::write(dir.join(&copy_name), copy.to_json()).unwrap();
    check(&mut w, "a newer conflict copy");

    // The copy goes: the unchanged original wins again.
    std::fs::remove_file(dir.join(&copy_name)).unwrap();
    check(&mut w, "the copy deleted");

    // A successor on the same endpoint, from the other device.
    let mut run2 = req("run2");
    run2.endpoint = Some("tmux://h/main".into());
    d.b.publish(&run2, crate::local::unix_now()).unwrap();
    check(&mut w, "a successor");

    // Another label's record is not shown; a tombstone ends a session.
    let mut other = Record::new("other-label");
    other.profile = "work".into();
    other.updated_at = Some(crate::local::unix_now());
    other.expires_at = Some(crate::local::unix_now() + 90.0);
    std::fs::write(dir.join("x.other-label.json"), other.to_json()).unwrap();
    d.a.clear(Some("solo"), None, crate::local::unix_now())
        .unwrap();
    check(&mut w, "another label, and a tombstone");

    // Garbage, a record rewritten in place, a file renamed away.
    std::fs::write(dir.join("junk.json"), b"{not json").unwrap();
    let run2_file = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.ends_with(".run2.json"))
        .unwrap();
    let mut text = std::fs::read_to_string(dir.join(&run2_file)).unwrap();
    text = text.replace("\"idle\"", "\"edited\"");
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(dir.join(&run2_file))
        .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
        .unwrap();
    check(&mut w, "garbage and an edit in place");
    std::fs::rename(dir.join(&run2_file), dir.join("moved.txt")).unwrap();
    check(&mut w, "the successor renamed away");
}

#[test]
fn the_live_set_is_what_list_says_with_native_events() {
    agrees_with_list(None);
}

#[test]
fn the_live_set_is_what_list_says_when_polling() {
    agrees_with_list(Some(Duration::from_millis(100)));
}

/// A profile that reads two directories: device a writes to the first,
/// device c to the second, which does not exist when the watch starts.
fn two_directories_agree_with_list(poll: Option<Duration>) {
    let d = devices();
    let shared = d.a.profile().dir.clone();
    let other = shared.with_file_name("other");
    let mut profile = d.b.profile().clone();
    profile.dirs = vec![shared.clone(), other.clone()];
    let m = Registry::new(profile, d.b.local().clone()).with_host("m");
    let mut c_profile = d.a.profile().clone();
    (c_profile.dir, c_profile.dirs) = (other.clone(), vec![other.clone()]);
    let c_local = LocalDirs::under(&shared.with_file_name("c"));
    let c = Registry::new(c_profile, c_local).with_host("c");
    let opts = WatchOptions {
        poll,
        quiet: Duration::from_millis(5),
        max_delay: Duration::from_millis(50),
        // So that the directory made later is found soon.
        rescan: Duration::from_millis(200),
        ..WatchOptions::default()
    };
    let mut w = Watcher::new(m.clone(), opts, crate::local::unix_now()).unwrap();
    let check = |w: &mut Watcher, step: &str| {
        agree(w, &m, step, |r| {
            (r.file.clone(), r.dir_index, r.record.status.clone())
        })
    };
    d.a.publish(&req("s1"), crate::local::unix_now()).unwrap();
    assert_eq!(
        check(&mut w, "one record, the other directory missing").len(),
        1
    );
    crate::store::ensure_dir(&other).unwrap();
    c.publish(&req("s2"), crate::local::unix_now()).unwrap();
    let rows = check(&mut w, "the other directory made, with a record");
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows.iter().any(|r| r.1 == 1), "{rows:?}");

    // The same file in both: one row, from the first directory.
    let s1 =
        d.a.list(Default::default(), crate::local::unix_now())
            .unwrap()
            .rows;
    let name = s1[0].file.clone();
    std::fs::copy(shared.join(&name), other.join(&name)).unwrap();
    let rows = check(&mut w, "a copy in the other directory");
    assert_eq!(rows.iter().filter(|r| r.0 == name).count(), 1);
    assert!(rows.iter().any(|r| r.0 == name && r.1 == 0), "{rows:?}");
    // Newer there: it wins; gone again: the first one is back.
    let mut newer = s1[0].record.clone();
    newer.status = "newer".into();
    newer.seq += 1;
    // Signed by its writer, as a rewrite of it would be.
    crate::identity::sign(&mut newer, &d.a.device_key().unwrap().key);
    std::fs::write(other.join(&name), newer.to_json()).unwrap();
    let rows = check(&mut w, "a newer copy in the other directory");
    assert!(rows.iter().any(|r| r.0 == name && r.1 == 1), "{rows:?}");
    std::fs::remove_file(other.join(&name)).unwrap();
    let rows = check(&mut w, "the newer copy deleted");
    assert!(rows.iter().any(|r| r.0 == name && r.1 == 0), "{rows:?}");

    // A tombstone in the other directory ends a session.
    c.clear(Some("s2"), None, crate::local::unix_now()).unwrap();
    assert_eq!(check(&mut w, "s2 cleared").len(), 1);
}

#[test]
fn two_directories_with_native_events() {
    two_directories_agree_with_list(None);
}

#[test]
fn two_directories_when_polling() {
    two_directories_agree_with_list(Some(Duration::from_millis(100)));
}

#[test]
fn a_replaced_directory_is_watched_anew() {
    let d = devices();
    let dir = d.b.profile().dir.clone();
    d.a.publish(&req("before"), crate::local::unix_now())
        .unwrap();
    let mut w = Watcher::new(
        d.b.clone(),
        WatchOptions::default(),
        crate::local::unix_now(),
    )
    .unwrap();
    // A sync engine swaps the directory for a new one.
    let new = dir.with_file_name("shared.new");
    std::fs::create_dir(&new).unwrap();
    std::fs::rename(&dir, dir.with_file_name("shared.old")).unwrap();
    std::fs::rename(&new, &dir).unwrap();
    assert_eq!(collect(&mut w, 1), ["down before@a Cleared"]);
    // Events come from the new directory.
    d.a.publish(&req("after"), crate::local::unix_now())
        .unwrap();
    assert_eq!(collect(&mut w, 1), ["up after@a"]);
}

/// Replaces `file` in `dir` as Syncthing does on a receiving device: the
/// new contents go to its temp file, the old file is deleted, and a moment
/// later the temp file is renamed into place.
fn replace_as_syncthing(dir: &Path, file: &str, contents: &[u8]) {
    let temp = dir.join(format!(".syncthing.{file}.tmp"));
    std::fs::write(&temp, contents).unwrap();
    std::fs::remove_file(dir.join(file)).unwrap();
    std::thread::sleep(Duration::from_millis(3));
    std::fs::rename(&temp, dir.join(file)).unwrap();
}

fn replaced_by_delete_and_rename(poll: Option<Duration>) {
    let d = devices();
    let shared = d.a.profile().dir.clone();
    // What the writer's refreshes would bring: each written first in a
    // directory of its own, by the same device.
    let staging = d._tmp.path().join("staging");
    crate::store::ensure_dir(&staging).unwrap();
    let sel = Selection {
        dir: Some(staging.clone()),
        ..Selection::default()
    };
    let local = LocalDirs::under(&d._tmp.path().join("a"));
    let (profile, _) = config::resolve(&sel, &local).unwrap();
    let stager = Registry::new(profile, local).with_host("a");

    let start = crate::local::unix_now();
    d.a.publish(&req("flap"), start).unwrap();
    let file = std::fs::read_dir(&shared)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.ends_with(".flap.json"))
        .unwrap();
    // The watcher's clock stands still unless the test moves it: the grace
    // ends when the test says, not when a busy machine happens to stall.
    let ahead = std::cell::Cell::new(0.0);
    let now = || start + ahead.get();
    let opts = WatchOptions {
        poll,
        quiet: Duration::from_millis(1),
        max_delay: Duration::from_millis(20),
        ..WatchOptions::default()
    };
    let mut w = Watcher::new(d.b.clone(), opts, now()).unwrap();
    assert_eq!(w.live().len(), 1);
    let mut events = Vec::new();
    for i in 0..20 {
        let mut r = req("flap");
        r.title = Some(format!("t{i}"));
        stager.publish(&r, start).unwrap();
        let bytes = std::fs::read(staging.join(&file)).unwrap();
        replace_as_syncthing(&shared, &file, &bytes);
        events.extend(collect_at(&mut w, 1, Duration::from_millis(30), now));
    }
    // Whatever was still to come of the last replacement.
    let last = |w: &Watcher| w.live().first().map(|r| r.record.title.clone());
    let deadline = Instant::now() + PATIENCE;
    while last(&w).as_deref() != Some("t19") {
        assert!(Instant::now() < deadline, "{events:?}");
        events.extend(collect_at(&mut w, 1, Duration::from_millis(50), now));
    }
    assert!(
        events.iter().all(|e| e == "update flap@a title"),
        "a replaced record went down: {events:?}"
    );
    // A real deletion: still up within the grace, down once it is over.
    std::fs::remove_file(shared.join(&file)).unwrap();
    let quiet = collect_at(&mut w, 1, Duration::from_millis(700), now);
    assert!(quiet.is_empty(), "down within the grace: {quiet:?}");
    assert_eq!(w.live().len(), 1);
    ahead.set(grace::GRACE_S + 0.01);
    assert_eq!(
        collect_at(&mut w, 1, PATIENCE, now),
        ["down flap@a Cleared"]
    );
    // A tombstone ends its session at once: no grace for a write.
    ahead.set(1.0);
    d.a.publish(&req("two"), start).unwrap();
    assert_eq!(collect_at(&mut w, 1, PATIENCE, now), ["up two@a"]);
    d.a.clear(Some("two"), None, start).unwrap();
    assert_eq!(collect_at(&mut w, 1, PATIENCE, now), ["down two@a Cleared"]);
}

#[test]
fn a_record_replaced_by_delete_and_rename_never_goes_down() {
    replaced_by_delete_and_rename(None);
}

#[test]
fn a_record_replaced_by_delete_and_rename_never_goes_down_when_polling() {
    replaced_by_delete_and_rename(Some(Duration::from_millis(100)));
}
