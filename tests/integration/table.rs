//! `list` as people and status bars read it: an order that holds across
//! refreshes, `--sort`, the `UP` column, `--no-header`, `--format` with
//! metadata and escapes, and `list --watch --count`/`--format` streaming one
//! line per change.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::*;

/// A record as another device writes it, started at `started` and
/// refreshed at `t`.
fn foreign(sid: &str, t: f64, started: Option<f64>, extra: Value) -> Value {
    let mut rec = json!({
        "version": 1, "session_id": sid, "profile": "default", "client": "terminal",
        "host": "desk", "status": "idle", "title": "", "device_id": "feedface",
        "instance_id": "desk-feedface", "updated_at": t, "expires_at": t + 90.0, "seq": 1,
        "started_at": started,
    });
    for (k, v) in extra.as_object().unwrap() {
        rec[k] = v.clone();
    }
    rec
}

/// `list --format '{session_id}'` plus `args`: the ids, in order.
fn ids(dev: &Device, args: &[&str]) -> Vec<String> {
    let mut all = vec!["list", "--format", "{session_id}"];
    all.extend_from_slice(args);
    let out = dev.run(&all).success().stdout;
    out.lines().map(str::to_string).collect()
}

/// The session ids of a table, in order (the first word of each row, `*` off).
fn table_ids(table: &str) -> Vec<String> {
    table
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(|id| id.trim_start_matches(['*', '?']).to_string())
        .collect()
}

#[test]
fn rows_keep_their_places_across_refreshes() {
    let w = World::new();
    let (a, b) = (w.device("a"), w.device("b"));
    a.publish("first", &["--status", "working"]);
    std::thread::sleep(Duration::from_millis(20));
    b.publish("second", &["--status", "working"]);
    let before = sessions(&a.list(&[]));
    assert_eq!(before, ["second", "first"], "newest start first");
    // Each refresh makes its session the most recently updated; the order
    // must not follow.
    for _ in 0..2 {
        a.publish("first", &["--status", "working"]);
        assert_eq!(sessions(&b.list(&[])), before);
        assert_eq!(table_ids(&b.run(&["list"]).success().stdout), before);
        assert_eq!(ids(&b, &[]), before);
        b.publish("second", &["--status", "working"]);
        assert_eq!(sessions(&a.list(&[])), before);
    }
    // The same start time: by session id.
    let t = now();
    let dir = w.shared();
    let start = t - 3600.0;
    write_record(&dir, "x.zz.json", &foreign("zz", t, Some(start), json!({})));
    write_record(
        &dir,
        "x.aa.json",
        &foreign("aa", t - 1.0, Some(start), json!({})),
    );
    assert_eq!(sessions(&a.list(&[]))[2..], ["aa", "zz"]);
    // `--all` follows the same order, each winner before its losers.
    write_record(
        &dir,
        "x.aa.sync-conflict-20261130-101112-ABC.json",
        &foreign("aa", t - 2.0, Some(start), json!({})),
    );
    let all = a.list(&["--all"]);
    let order: Vec<(String, bool)> = all
        .iter()
        .map(|r| (r.session_id.clone(), r.superseded_by.is_some()))
        .collect();
    let want = [
        ("second", false),
        ("first", false),
        ("aa", false),
        ("aa", true),
        ("zz", false),
    ];
    assert_eq!(order, want.map(|(s, l)| (s.to_string(), l)), "{all:#?}");
}

#[test]
fn sort_keys_and_reverse() {
    let w = World::new();
    let a = w.device("a");
    let dir = w.shared();
    let t = now();
    // (id, started ago, updated ago, host, client, status, title)
    let rows = [
        ("s1", 300.0, 1.0, "Zeta", "gateway", "working", "beta"),
        ("s2", 100.0, 30.0, "alpha", "terminal", "idle", ""),
        ("s3", 200.0, 20.0, "mid", "", "waiting", "Alpha"),
    ];
    for (id, started, updated, host, client, status, title) in rows {
        let mut rec = foreign(
            id,
            t - updated,
            Some(t - started),
            json!({"host": host, "client": client, "status": status, "title": title}),
        );
        if client.is_empty() {
            rec["source"] = json!("desktop");
        }
        write_record(&dir, &format!("x.{id}.json"), &rec);
    }
    let cases: [(&[&str], [&str; 3]); 8] = [
        (&[], ["s2", "s3", "s1"]),
        (&["--sort", "started"], ["s2", "s3", "s1"]),
        (&["--reverse"], ["s1", "s3", "s2"]),
        (&["--sort", "host"], ["s2", "s3", "s1"]),
        (&["--sort", "client"], ["s3", "s1", "s2"]),
        (&["--sort", "status"], ["s2", "s3", "s1"]),
        // An empty title sorts last, case is ignored.
        (&["--sort", "title"], ["s3", "s1", "s2"]),
        (&["--sort", "title", "--reverse"], ["s2", "s1", "s3"]),
    ];
    for (args, want) in cases {
        assert_eq!(ids(&a, args), want, "list {args:?}");
        assert_eq!(sessions(&a.list(args)), want, "list --json {args:?}");
        let mut table = vec!["list"];
        table.extend_from_slice(args);
        assert_eq!(
            table_ids(&a.run(&table).success().stdout),
            want,
            "list {args:?}"
        );
    }
    // `seen` is when a file last arrived or changed here (its ctime, which
    // cannot be set): rewrite them in the order s3, s1, s2.
    for id in ["s3", "s1", "s2"] {
        let path = dir.join(format!("x.{id}.json"));
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, bytes).unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(ids(&a, &["--sort", "seen"]), ["s2", "s1", "s3"]);
    assert_eq!(
        ids(&a, &["--sort", "seen", "--reverse"]),
        ["s3", "s1", "s2"]
    );
    a.run(&["list", "--sort", "nope"]).code(2);
}

#[test]
fn the_up_column_counts_from_the_start() {
    let w = World::new();
    let a = w.device("a");
    let t = now();
    let dir = w.shared();
    write_record(
        &dir,
        "x.old.json",
        &foreign("old", t, Some(t - 7300.0), json!({})),
    );
    write_record(&dir, "x.none.json", &foreign("none", t, None, json!({})));
    let table = a.run(&["list"]).success().stdout;
    let mut lines = table.lines();
    let header = lines.next().unwrap();
    let up = header.find("UP").expect("an UP column");
    assert!(header.contains("  SEEN"), "{header}");
    let cell = |line: &str| {
        line[up..]
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_string()
    };
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 2, "{table}");
    // `?`: written by hand, the records are unsigned.
    assert!(rows[0].starts_with("?old"), "{table}");
    assert_eq!(cell(rows[0]), "2h", "{table}");
    // No start time: an empty cell (the next column's text starts later).
    assert!(rows[1].starts_with("?none"), "{table}");
    assert_ne!(cell(rows[1]), "2h", "{table}");
    assert!(rows[1][up..].starts_with("  "), "an empty UP cell: {table}");
    let show = a.run(&["show", "old"]).success().stdout;
    assert!(show.contains("\nup           2h\n"), "{show}");
    assert!(!a.run(&["show", "none"]).success().stdout.contains("\nup "));
}

/// A hostile record's absurd times (1e300 either way) are shown clamped,
/// `>100y`, in `list` and `show`, and the table stays aligned.
#[test]
fn absurd_times_are_clamped_and_the_table_stays_aligned() {
    let w = World::new();
    let a = w.device("a");
    let t = now();
    let dir = w.shared();
    // One device each, so that no record teaches another's clock.
    let plant = |sid: &str, started: Option<f64>, extra: Value| {
        let mut rec = foreign(sid, t, started, extra);
        rec["device_id"] = json!(format!("dev-{sid}"));
        rec["instance_id"] = json!(format!("i-{sid}"));
        write_record(&dir, &format!("i-{sid}.{sid}.json"), &rec);
    };
    plant("normal", Some(t - 7300.0), json!({}));
    plant("ancient", Some(-1e300), json!({}));
    plant("future", Some(1e300), json!({}));
    plant("claims-old", Some(t - 60.0), json!({"updated_at": -1e300}));
    plant("claims-new", Some(t - 60.0), json!({"updated_at": 1e300}));
    let table = a.run(&["list", "--all"]).success().stdout;
    // The seconds since the records were planted, whatever the machine's speed.
    let late = (now() - t).ceil() as u64;
    assert!(
        !table.contains("213503982334601") && !table.contains("inf"),
        "{table}"
    );
    let mut lines = table.lines();
    let header = lines.next().unwrap();
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 5, "{table}");
    let (up, seen) = (header.find("UP").unwrap(), header.find("SEEN").unwrap());
    let cell = |row: &str, at: usize| row[at..].split_whitespace().next().unwrap().to_string();
    for row in &rows {
        // Every row's cells start under their headers.
        assert_eq!(&row[seen - 2..seen], "  ", "{table}");
        assert!(row[seen..].starts_with(char::is_numeric), "{table}");
        assert!(cell(row, seen).ends_with('s'), "{table}");
        assert_eq!(&row[up - 2..up], "  ", "{table}");
        let id = cell(row, 0);
        let got = cell(row, up);
        match id.trim_start_matches('?') {
            "normal" => assert_eq!(got, "2h", "{id}: {table}"),
            "ancient" => assert_eq!(got, ">100y", "{id}: {table}"),
            "future" => assert_eq!(got, "0s", "{id}: {table}"),
            _ => assert!(
                (60..=60 + late).any(|s| got == format!("{s}s")),
                "{id}: {got}, not 60s to {}s: {table}",
                60 + late
            ),
        }
    }
    let show = |sid: &str| a.run(&["show", sid]).success().stdout;
    assert!(
        show("ancient").contains("\nup           >100y\n"),
        "{}",
        show("ancient")
    );
    let old = show("claims-old");
    assert!(
        old.contains("\nupdated      >100y ago (writer's clock)\n"),
        "{old}"
    );
    let new = show("claims-new");
    assert!(
        new.contains("\nupdated      in >100y (writer's clock)\n"),
        "{new}"
    );
}

#[test]
fn no_header_leaves_only_the_rows() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &[]);
    a.publish("s2", &[]);
    let with = a.run(&["list"]).success().stdout;
    let without = a.run(&["list", "--no-header"]).success().stdout;
    assert!(with.starts_with("SESSION"), "{with}");
    assert_eq!(without.lines().count(), 2, "{without}");
    assert!(!without.contains("SESSION"), "{without}");
    assert_eq!(
        with.lines().skip(1).collect::<Vec<_>>(),
        without.lines().collect::<Vec<_>>()
    );
}

#[test]
fn format_reads_metadata_keys_and_escapes() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &["--meta", "branch=main", "--status", "working"]);
    let t = now();
    write_record(
        &w.shared(),
        "x.evil.json",
        &foreign(
            "evil",
            t,
            Some(t - 60.0),
            json!({"metadata": {"branch": "\u{1b}]52;c;SGk=\u{7}x\nfake", "\u{1b}[2J": "k"}}),
        ),
    );
    let out = a
        .run(&[
            "list",
            "--format",
            r"{session_id}\t{metadata.branch}|{metadata.none}\n--",
        ])
        .success()
        .stdout;
    assert_eq!(
        out,
        "s1\tmain|\n--\nevil\t\\e]52;c;SGk=\\x07x\\nfake|\n--\n"
    );
    // Backslashes and braces stay writable.
    let out = a
        .run(&[
            "list",
            "--session",
            "s1",
            "--format",
            r"{{{metadata.branch}}}\\",
        ])
        .success()
        .stdout;
    assert_eq!(out, "{main}\\\n");
}

#[test]
fn format_mistakes_are_usage_errors() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &[]);
    for (template, says) in [
        ("{title", "not closed"),
        ("{session_id} {", "not closed"),
        ("{metadata.branch", "not closed"),
        ("{hots}", "unknown field '{hots}'"),
        ("{metadata.}", "names no key"),
        ("a } b", "lone '}'"),
        (r"a\q", "backslash"),
    ] {
        for extra in [&[][..], &["--watch"][..]] {
            let mut args = vec!["list", "--format", template];
            args.extend_from_slice(extra);
            let r = a.run(&args).code(2);
            assert!(r.stdout.is_empty(), "{template}: {}", r.stdout);
            assert!(r.stderr.contains(says), "{template}: {}", r.stderr);
        }
    }
}

#[test]
fn watch_count_prints_a_line_per_change() {
    let w = World::new();
    let (a, b) = (w.device("a"), w.device("b"));
    // A watch needs the directory to exist.
    std::fs::create_dir_all(w.shared()).unwrap();
    let s = Stream::start(&b, &["list", "--watch", "--count"]);
    assert_eq!(s.next(), "0");
    a.publish("s1", &[]);
    assert_eq!(s.next(), "1");
    a.publish("s2", &["--status", "working"]);
    assert_eq!(s.next(), "2");
    // A refresh or a new title is a change, but not of the count.
    a.publish("s1", &["--title", "new"]);
    s.quiet_for(Duration::from_millis(800));
    a.run(&["clear", "--session", "s1"]).success();
    assert_eq!(s.next(), "1");
    // Long enough to be seen live on a loaded machine.
    a.publish("short", &["--ttl", "5s"]);
    assert_eq!(s.next(), "2");
    assert_eq!(s.next(), "1", "an expiry is a change");
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(0), "{stderr}");
    // Filters apply.
    let s = Stream::start(&b, &["list", "--watch", "--count", "--session", "s2"]);
    assert_eq!(s.next(), "1");
    a.run(&["clear", "--session", "s2"]).success();
    assert_eq!(s.next(), "0");
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn watch_format_prints_a_line_per_change() {
    let w = World::new();
    let (a, b) = (w.device("a"), w.device("b"));
    std::fs::create_dir_all(w.shared()).unwrap();
    let s = Stream::start(
        &b,
        &["list", "--watch", "--format", "{session_id}:{status}"],
    );
    assert_eq!(s.next(), "", "an empty set is an empty line");
    a.publish("s1", &["--status", "working"]);
    assert_eq!(s.next(), "s1:working");
    std::thread::sleep(Duration::from_millis(20));
    a.publish("s2", &[]);
    assert_eq!(s.next(), "s2:idle s1:working");
    a.publish("s1", &["--status", "waiting"]);
    assert_eq!(s.next(), "s2:idle s1:waiting");
    // A refresh that changes nothing shown prints nothing.
    a.publish("s1", &["--status", "waiting"]);
    s.quiet_for(Duration::from_millis(800));
    a.run(&["clear", "--session", "s2"]).success();
    assert_eq!(s.next(), "s1:waiting");
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn a_watcher_whose_reader_left_exits() {
    let w = World::new();
    let a = w.device("a");
    a.publish("s1", &[]);
    for args in [
        &["list", "--watch", "--count"][..],
        &["list", "--watch", "--format", "{session_id}"][..],
        &["list", "--watch"][..],
    ] {
        let mut child = KillOnDrop(
            a.cmd()
                .args(args)
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let mut out = BufReader::new(child.0.stdout.take().unwrap());
        let mut first = String::new();
        out.read_line(&mut first).unwrap();
        assert!(!first.is_empty(), "{args:?}");
        // A status bar restarts: it closes its end, and nothing changes.
        drop(out);
        let (status, _) = wait_for(
            &format!("{args:?} to exit after its reader left"),
            PATIENCE,
            || child.0.try_wait().unwrap().ok_or("still runs"),
        );
        assert_eq!(status.code(), Some(0), "{args:?}");
    }
}
