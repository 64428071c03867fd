//! `presence watch` and `list --watch` end to end.

use std::process::Child;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::harness::*;

fn summary(e: &JsonEvent) -> String {
    if let Some(count) = e.count {
        return format!("{} {count}", e.event);
    }
    let mut s = format!("{} {}@{}", e.event, e.row().session_id, e.row().host);
    if let Some(r) = &e.reason {
        s.push_str(&format!(" {r}"));
    }
    if let Some(c) = &e.changed {
        s.push_str(&format!(" {}", c.join(",")));
    }
    s
}

/// Waits until `s` has printed whatever the watcher makes of the writes
/// done so far, and returns those events. `dev` publishes `marker` twice,
/// with a new title each time, and the second change is awaited: it is read
/// in a batch after every batch that held an earlier write, and so printed
/// after all their events (the order within one batch is the watcher's).
/// The marker's own events are left out.
pub(crate) fn settle(s: &Stream, dev: &Device, marker: &str) -> Vec<JsonEvent> {
    static TITLES: AtomicU64 = AtomicU64::new(0);
    let mut seen = Vec::new();
    for _ in 0..2 {
        let title = format!("mark {}", TITLES.fetch_add(1, Ordering::Relaxed));
        dev.publish(marker, &["--title", &title]);
        loop {
            let e = s.json();
            if e.session() == Some(marker) {
                if e.row().title == title {
                    break;
                }
            } else {
                seen.push(e);
            }
        }
    }
    seen
}

fn scenario(poll: bool) {
    let w = World::new();
    let (a, b) = (w.device("a"), w.device("b"));
    a.publish("before", &[]);
    let host = a.list(&[]).remove(0).host;
    let mut args = vec!["watch", "--json"];
    if poll {
        args.push("--poll=200ms");
    }
    let s = Stream::start(&b, &args);
    let first = s.json();
    assert_eq!(summary(&first), format!("up before@{host}"));
    assert_eq!(first.initial, Some(true));
    assert_eq!(first.seq, 1);
    // The record has the shape of a `list --json` element: `JsonEvent`
    // reads it as a `JsonRow`.
    assert_eq!(first.row().file, b.list(&[]).remove(0).file);
    let ready = s.json();
    assert_eq!(summary(&ready), "ready 1");
    assert_eq!((ready.seq, &ready.epoch), (2, &first.epoch));

    a.publish("s1", &["--title", "one"]);
    let e = s.json();
    assert_eq!(summary(&e), format!("up s1@{host}"));
    assert_eq!(e.seq, 3);
    assert_eq!(e.epoch, first.epoch);
    assert!(!e.row().local);
    a.publish("s1", &["--title", "two"]);
    assert_eq!(summary(&s.json()), format!("update s1@{host} title"));
    a.publish("s1", &["--title", "two"]);
    s.quiet_for(Duration::from_millis(700));
    a.run(&["clear", "--session", "s1"]).success();
    let down = s.json();
    assert_eq!(summary(&down), format!("down s1@{host} cleared"));
    // The last live version, as it left: not live, in the state it went
    // down in, with nothing to open.
    assert_eq!(
        (down.row().live, down.row().state.as_str()),
        (false, "ended")
    );
    assert_eq!(
        (down.row().title.as_str(), down.row().open.as_ref()),
        ("two", None)
    );

    // This device's own record, with a 1 s ttl: up, and down as expired a
    // ttl later. A watcher that a busy machine keeps from reading it within
    // its ttl rightly says nothing of it; it is then published again with a
    // longer ttl, until the watcher does read it live.
    let mut ttl = 1;
    let (up, down) = loop {
        b.publish("mine", &["--ttl", &format!("{ttl}s")]);
        let mut seen = settle(&s, &a, "marker").into_iter();
        match (seen.next(), seen.next()) {
            (None, _) => {}
            (Some(up), down) => {
                let down = down.unwrap_or_else(|| s.json());
                assert_eq!(seen.next(), None);
                break (up, down);
            }
        }
        ttl *= 4;
        // (A down must come within the stream's patience, 60 s.)
        assert!(ttl <= 16, "the watcher never read mine while it was live");
    };
    assert_eq!(summary(&up), format!("up mine@{host}"));
    assert!(up.row().local);
    assert_eq!(summary(&down), format!("down mine@{host} expired"));
    assert!(!down.row().live, "{down:?}");
    assert!(
        ["stale", "expired"].contains(&down.row().state.as_str()),
        "{down:?}"
    );
    a.run(&["clear", "--session", "marker"]).success();
    assert_eq!(summary(&s.json()), format!("down marker@{host} cleared"));

    b.publish("run1", &["--endpoint", "tmux://h/main"]);
    assert_eq!(summary(&s.json()), format!("up run1@{host}"));
    // A successor from the same device replaces it.
    b.publish("run2", &["--endpoint", "tmux://h/main"]);
    let down = s.json();
    assert_eq!(summary(&down), format!("down run1@{host} superseded"));
    assert_eq!(
        (down.row().live, down.row().state.as_str()),
        (false, "superseded")
    );
    let up = s.json();
    assert_eq!(summary(&up), format!("up run2@{host}"));
    assert_eq!(down.row().superseded_by.as_ref(), Some(&up.row().file));
    // Another device on that endpoint replaces nothing: it speaks only for itself.
    a.publish("run3", &["--endpoint", "tmux://h/main"]);
    assert_eq!(summary(&s.json()), format!("up run3@{host}"));
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn watch_json_reports_up_update_down_and_superseded() {
    scenario(false);
}

#[test]
fn watch_json_in_poll_mode() {
    scenario(true);
}

/// `ready` follows exactly the initial `up` lines, counts them, and comes
/// before any change, also when the directory is empty and when a record
/// arrives while the watcher starts.
#[test]
fn watch_json_says_ready_after_exactly_the_initial_set() {
    let w = World::new();
    let (a, b) = (w.device("a"), w.device("b"));
    std::fs::create_dir_all(w.shared()).unwrap();
    let s = Stream::start(&b, &["watch", "--json"]);
    let ready = s.json();
    assert_eq!(summary(&ready), "ready 0");
    assert_eq!(ready.seq, 1);
    a.publish("later", &[]);
    let host = a.list(&[]).remove(0).host;
    let up = s.json();
    assert_eq!(summary(&up), format!("up later@{host}"));
    assert_eq!((up.seq, up.initial), (2, None));
    s.stop();

    // Three live sessions (one of them b's own), one ended, one expired.
    a.publish("x2", &[]);
    b.publish("x3", &[]);
    a.publish("ended", &[]);
    a.run(&["clear", "--session", "ended"]).success();
    a.publish("expired", &["--ttl", "1s"]);
    std::thread::sleep(Duration::from_millis(1200));
    let s = Stream::start(&b, &["watch", "--json"]);
    // Published while the watcher starts: in the initial set or after
    // `ready`, never both, never missing.
    a.publish("racer", &[]);
    let mut initial = Vec::new();
    let ready = loop {
        let e = s.json();
        if e.event == "ready" {
            break e;
        }
        assert_eq!((e.event.as_str(), e.initial), ("up", Some(true)), "{e:?}");
        assert_eq!(e.seq, initial.len() as u64 + 1);
        initial.push(e.row().session_id.clone());
    };
    assert_eq!(ready.count, Some(initial.len()));
    assert_eq!(ready.seq, initial.len() as u64 + 1);
    let mut want = vec!["later", "x2", "x3"];
    if !initial.iter().any(|s| s == "racer") {
        let e = s.json();
        assert_eq!(summary(&e), format!("up racer@{host}"));
        assert_eq!(e.initial, None);
    } else {
        want.push("racer");
    }
    initial.sort();
    want.sort();
    assert_eq!(initial, want);
    a.publish("x4", &[]);
    let e = s.json();
    assert_eq!(summary(&e), format!("up x4@{host}"));
    assert_eq!((e.initial, e.epoch), (None, ready.epoch));
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn watch_human_lines_and_a_vanishing_directory() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &["--title", "hello", "--status", "working"]);
    let s = Stream::start(&a, &["watch"]);
    let line = s.next();
    assert!(
        line.contains("  live  ")
            && line.contains("*s1")
            && line.contains("working")
            && line.contains("hello"),
        "{line}"
    );
    let ready = s.next();
    assert!(
        ready.ends_with("  ready                   1 live"),
        "{ready}"
    );
    std::fs::remove_dir_all(w.shared()).unwrap();
    let mut child = s.child;
    let (status, _) = wait_for("watch to give up on a deleted directory", PATIENCE, || {
        child.try_wait().unwrap().ok_or("still running")
    });
    assert_eq!(status.code(), Some(1));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(
        stderr.contains("disappeared") && stderr.contains("shared"),
        "{stderr}"
    );
}

/// The byte offset of each of `words` in `line` (ASCII lines).
fn columns(line: &str, words: &[&str]) -> Vec<usize> {
    words
        .iter()
        .map(|w| {
            line.find(w)
                .unwrap_or_else(|| panic!("{w:?} not in {line:?}"))
        })
        .collect()
}

/// Human `watch` lines stand in columns, whatever the event (also
/// `update (status, title)`) and whatever the widths of the ids and hosts
/// (a wider one arriving later widens its column), and the initial set
/// says `live`, unlike a session that comes up later.
#[test]
fn watch_human_lines_stand_in_columns_and_the_initial_set_says_live() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &["--title", "one", "--status", "working"]);
    a.publish(
        "a-much-longer-id",
        &["--client", "gateway", "--title", "two"],
    );
    let s = Stream::start(&a, &["watch"]);
    let first = [s.next(), s.next()];
    let ready = s.next();
    assert!(ready.ends_with(" 2 live"), "{ready}");
    for line in &first {
        assert_eq!(&line[8..16], "  live  ", "{line}");
    }
    let at = columns(&first[0], &["*a-much", "gateway@", "idle", "two"]);
    assert_eq!(
        columns(&first[1], &["*s1", "terminal@", "working", "one"])[..3],
        at[..3]
    );
    a.publish("s1", &["--title", "three", "--status", "waiting"]);
    let update = s.next();
    assert!(update.contains("  update (status, title)  *s1"), "{update}");
    assert_eq!(columns(&update, &["*s1", "terminal@", "waiting"]), at[..3]);
    a.publish("s2", &[]);
    let up = s.next();
    assert!(up.contains("  up  ") && !up.contains(" live "), "{up}");
    assert_eq!(columns(&up, &["*s2", "terminal@", "idle"]), at[..3]);
    a.run(&["clear", "--session", "s2"]).success();
    let down = s.next();
    assert!(down.contains("  down (cleared)  "), "{down}");
    assert_eq!(columns(&down, &["*s2", "terminal@", "idle"]), at[..3]);
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(0), "{stderr}");
}

/// `watch | head -1`: once the reader has gone, `watch` exits (0) without
/// waiting for an event to write, which in a quiet directory may not come
/// for hours. Nothing changes in the directory after the first line.
#[test]
fn watch_exits_when_its_reader_has_gone() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &[]);
    require_tool("timeout");
    for json in [false, true] {
        // (`timeout` only ends what a failing run leaves behind.)
        let watch = if json {
            "timeout 90 presence watch --json"
        } else {
            "timeout 90 presence watch"
        };
        let mut child = a
            .program(require_tool("bash"))
            .args([
                "-c",
                &format!("{watch} | head -1 >/dev/null; echo \"${{PIPESTATUS[0]}}\""),
            ])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let (status, _) = wait_for("watch to notice that its reader has gone", PATIENCE, || {
            child.try_wait().unwrap().ok_or("still running")
        });
        assert!(status.success());
        let mut rc = String::new();
        std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut rc).unwrap();
        assert_eq!(rc, "0\n", "{watch}");
    }
}

#[test]
fn list_watch_appends_snapshots_when_not_a_terminal() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &[]);
    let s = Stream::start(&a, &["list", "--watch"]);
    assert!(s.next().starts_with("SESSION"));
    assert!(s.next().contains("*s1"));
    a.publish("s2", &[]);
    assert_eq!(s.next(), "");
    assert!(s.next().starts_with("SESSION"));
    let rows = [s.next(), s.next()];
    assert!(
        rows[0].contains("*s2") && rows[1].contains("*s1"),
        "{rows:?}"
    );
    let (code, _) = s.stop();
    assert_eq!(code, Some(0));
}

#[test]
fn watch_on_a_missing_configured_directory_is_an_error() {
    let w = World::new();
    let a = w.device("a");
    let out = a.run(&["watch"]).code(1);
    assert!(out.stderr.contains("does not exist"), "{}", out.stderr);
}

#[test]
fn poll_intervals_under_100ms_are_a_usage_error() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &[]);
    for short in ["--poll=50ms", "--poll=0"] {
        let out = a.run(&["watch", short]).code(2);
        assert!(out.stderr.contains("minimum is 100ms"), "{}", out.stderr);
    }
}

/// Bytes the process has read so far (`rchar` of `/proc/PID/io`): files,
/// and the inotify queue.
#[cfg(target_os = "linux")]
fn bytes_read(child: &Child) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{}/io", child.id())).unwrap();
    io.lines()
        .find_map(|l| l.strip_prefix("rchar:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("rchar in /proc/PID/io")
}

/// The real binary, watching 100 records of about 2 KiB each: while other
/// processes read every file, neither watcher reads a byte; one new record
/// costs about one file's worth of reading, not a rescan (~200 KiB).
#[cfg(target_os = "linux")]
#[test]
fn watchers_read_nothing_while_others_read_and_one_file_per_change() {
    let w = World::new();
    let (a, b) = (w.device("a"), w.device("b"));
    let t = now();
    let pad = "p".repeat(1000);
    for i in 0..100 {
        let session = format!("s{i:03}");
        let json = serde_json::json!({
            "version": 1, "session_id": session, "client": "t", "profile": "default",
            "host": "elsewhere", "updated_at": t, "expires_at": t + 600.0,
            "metadata": {"a": pad, "b": pad},
        });
        write_record(&w.shared(), &format!("x.{session}.json"), &json);
    }
    let file_size = std::fs::metadata(w.shared().join("x.s000.json"))
        .unwrap()
        .len();
    assert!(file_size > 2000);

    for (n, args) in [&["watch", "--json"][..], &["list", "--watch"][..]]
        .into_iter()
        .enumerate()
    {
        let table = args[0] == "list";
        let s = Stream::start(&b, args);
        // The live set (with the records published in earlier rounds), and
        // a header or the `ready` line.
        for _ in 0..100 + n + 1 {
            s.next();
        }
        let start = bytes_read(&s.child);

        let cat = std::process::Command::new("sh")
            .arg("-c")
            .arg("cat -- \"$1\"/*.json > /dev/null")
            .arg("sh")
            .arg(w.shared())
            .status()
            .unwrap();
        assert!(cat.success());
        assert_eq!(a.list(&[]).len(), 100 + n);
        s.quiet_for(Duration::from_millis(500));
        let idle = bytes_read(&s.child) - start;
        assert!(
            idle < file_size,
            "{args:?} read {idle} bytes while others read the directory"
        );

        let session = format!("new{n}");
        a.publish(&session, &[]);
        if table {
            assert_eq!(s.next(), "");
            let lines: Vec<String> = (0..102 + n).map(|_| s.next()).collect();
            assert!(lines.iter().any(|l| l.contains(&session)), "{lines:?}");
        } else {
            let v = s.json();
            assert_eq!(v.row().session_id, session);
        }
        let change = bytes_read(&s.child) - start - idle;
        assert!(
            change < 3 * file_size,
            "{args:?} read {change} bytes for one new record (a file is {file_size})"
        );
        let (code, stderr) = s.stop();
        assert_eq!(code, Some(0), "{stderr}");
    }
}

#[test]
fn watch_never_brings_up_a_late_copy_of_a_dead_session_from_a_known_writer() {
    let w = World::new();
    let a = w.device("a");
    let dir = w.shared();
    let device = "e".repeat(32);
    let rec = |sid: &str, updated: f64, ttl: f64| {
        serde_json::json!({"session_id": sid, "profile": "default", "client": "terminal",
               "device_id": device, "host": "other", "instance_id": "other",
               "started_at": updated, "updated_at": updated, "expires_at": updated + ttl, "seq": 1})
    };
    write_record(&dir, "other.live.json", &rec("live", now(), 90.0));
    let s = Stream::start(&a, &["watch", "--json"]);
    assert_eq!(summary(&s.json()), "up live@other");
    assert_eq!(summary(&s.json()), "ready 1");
    // A second arrival, more than two seconds later (a burst teaches
    // nothing), read before anything else: the watcher learns the
    // writer's clock.
    std::thread::sleep(Duration::from_millis(2500));
    write_record(&dir, "other.live.json", &rec("live", now(), 90.0));
    let seen = settle(&s, &a, "marker");
    assert!(seen.iter().all(|e| e.session() == Some("live")), "{seen:?}");
    // A copy of a session that died a minute ago arrives now; within the
    // 5-minute skew tolerance, the rule alone would bring it up.
    write_record(&dir, "other.dead.json", &rec("dead", now() - 60.0, 4.0));
    let seen = settle(&s, &a, "marker");
    assert!(seen.is_empty(), "a dead session came up: {seen:?}");
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(0), "{stderr}");
}

/// A life ended in one group is ended in every group: a conflict copy that
/// keeps a live copy of the life under its old endpoint never shows in
/// `watch` or `list --watch`, as it never shows in `list`.
#[test]
fn watch_never_shows_a_life_that_ended_in_another_group() {
    let w = World::new();
    let (a, b) = (w.device("a"), w.device("b"));
    a.publish("s1", &["--endpoint", "ssh://host1/a", "--title", "one"]);
    let file = a.list(&[]).remove(0).file;
    let copy = format!(
        "{}.sync-conflict-20261130-101112-ABCDEFG.json",
        file.strip_suffix(".json").unwrap()
    );
    std::fs::copy(w.shared().join(&file), w.shared().join(&copy)).unwrap();
    // The same life, in a new group; then ended there.
    a.publish("s1", &["--endpoint", "ssh://host2/b"]);
    a.run(&["clear", "--session", "s1"]).success();

    assert_eq!(sessions(&b.list(&[])), Vec::<String>::new());
    let all = b.list(&["--all"]);
    assert_eq!(all.len(), 2, "{all:?}");
    assert!(all.iter().all(|r| r.state == "ended" && !r.live), "{all:?}");
    assert!(!b.show("s1").live);

    let s = Stream::start(&b, &["watch", "--json"]);
    let first = s.json();
    assert_eq!(summary(&first), "ready 0", "{first:?}");
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(0), "{stderr}");

    let s = Stream::start(&b, &["list", "--watch", "--count"]);
    assert_eq!(s.next(), "0");
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(0), "{stderr}");
}
