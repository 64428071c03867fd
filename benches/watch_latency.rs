//! Event latency of `presence watch --json`: from the rename of a record into
//! the directory to its NDJSON line on the watcher's stdout, and expiry
//! precision (the `down` line's time minus the computed deadline).
//!
//! Run: `cargo bench --bench watch_latency` (prints a table). Everything runs
//! in a temp dir with its own HOME / XDG dirs.
// A program of its own, with its own output.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::os::unix::fs::MetadataExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const EVENTS: usize = 200;
const EXPIRIES: usize = 20;
/// How long to wait for a line the watcher must print: long enough for a
/// loaded one-core machine, so that running out means the watcher is broken.
const PATIENCE: Duration = Duration::from_secs(60);

fn unix(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn record(session: &str, now: f64, ttl: f64) -> String {
    format!(
        "{{\"version\":1,\"session_id\":\"{session}\",\"profile\":\"default\",\"client\":\"bench\",\
         \"updated_at\":{now},\"expires_at\":{},\"status\":\"idle\"}}\n",
        now + ttl
    )
}

fn main() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path();
    let dir = root.join("data/presence/default");
    std::fs::create_dir_all(&dir).expect("create dir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_presence"))
        .args(["watch", "--json"])
        .env_clear()
        .env("HOME", root.join("home"))
        .env("XDG_CONFIG_HOME", root.join("config"))
        .env("XDG_DATA_HOME", root.join("data"))
        .env("XDG_RUNTIME_DIR", root.join("runtime"))
        .stdout(Stdio::piped())
        .spawn()
        .expect("start presence watch");
    let out = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel::<(Instant, SystemTime, String)>();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send((Instant::now(), SystemTime::now(), line)).is_err() {
                break;
            }
        }
    });
    // The line (NDJSON) that `pred` matches, when it arrived; `None` if
    // none did by `until`.
    let wait_for = |until: Instant,
                    pred: &dyn Fn(&serde_json::Value) -> bool|
     -> Option<(Instant, SystemTime)> {
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let (at, wall, line) = rx.recv_timeout(left).ok()?;
            let v: serde_json::Value = serde_json::from_str(&line).expect("NDJSON");
            if pred(&v) {
                return Some((at, wall));
            }
        }
    };
    let of = |session: &str, event: &str| {
        let (session, event) = (session.to_string(), event.to_string());
        move |v: &serde_json::Value| v["event"] == *event && v["record"]["session_id"] == *session
    };
    // The watcher is watching once it has printed the (empty) initial set.
    wait_for(Instant::now() + PATIENCE, &|v| v["event"] == "ready")
        .unwrap_or_else(|| panic!("watch --json: no ready line within {PATIENCE:?}"));

    let mut latencies = Vec::with_capacity(EVENTS);
    for i in 0..EVENTS {
        let session = format!("lat-{i}");
        let tmpfile = dir.join(format!(".{session}.tmp"));
        std::fs::write(&tmpfile, record(&session, unix(SystemTime::now()), 90.0)).expect("write");
        let t0 = Instant::now();
        std::fs::rename(&tmpfile, dir.join(format!("bench.{session}.json"))).expect("rename");
        let (at, _) = wait_for(t0 + PATIENCE, &of(&session, "up"))
            .unwrap_or_else(|| panic!("{session}: no up line within {PATIENCE:?}"));
        latencies.push((at - t0).as_secs_f64() * 1000.0);
        std::thread::sleep(Duration::from_millis(5));
    }

    let mut expiry = Vec::with_capacity(EXPIRIES);
    let mut missed = 0;
    for i in 0..EXPIRIES {
        let session = format!("exp-{i}");
        let tmpfile = dir.join(format!(".{session}.tmp"));
        std::fs::write(&tmpfile, record(&session, unix(SystemTime::now()), 1.0)).expect("write");
        let path = dir.join(format!("bench.{session}.json"));
        std::fs::rename(&tmpfile, &path).expect("rename");
        let meta = std::fs::metadata(&path).expect("stat");
        let deadline = meta.ctime() as f64 + meta.ctime_nsec() as f64 / 1e9 + 1.0;
        // A watcher that first reads the record after its deadline rightly
        // never shows it: on a loaded machine a sample can be missed. One
        // shown must go down.
        let left = (deadline - unix(SystemTime::now())).max(0.0);
        let until = Instant::now() + Duration::from_secs_f64(left) + Duration::from_secs(10);
        if wait_for(until, &of(&session, "up")).is_none() {
            missed += 1;
            continue;
        }
        let (_, wall) = wait_for(Instant::now() + PATIENCE, &of(&session, "down"))
            .unwrap_or_else(|| panic!("{session}: up, but no down line within {PATIENCE:?}"));
        expiry.push((unix(wall) - deadline) * 1000.0);
    }
    let _ = child.kill();
    let _ = child.wait();

    latencies.sort_by(f64::total_cmp);
    expiry.sort_by(f64::total_cmp);
    println!(
        "presence watch --json, native file events ({} events, {} expiries)",
        EVENTS, EXPIRIES
    );
    println!("| measure | p50 | p99 | max |");
    println!("|---|---|---|---|");
    println!(
        "| rename → NDJSON line | {:.1} ms | {:.1} ms | {:.1} ms |",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies[latencies.len() - 1]
    );
    if expiry.is_empty() {
        println!("| expiry: down line − deadline | – | – | – |");
    } else {
        println!(
            "| expiry: down line − deadline | {:.1} ms | {:.1} ms | {:.1} ms |",
            percentile(&expiry, 0.5),
            percentile(&expiry, 0.99),
            expiry[expiry.len() - 1]
        );
    }
    if missed > 0 {
        println!();
        println!(
            "{missed} of {EXPIRIES} records with a 1 s ttl expired before the watcher read them \
             (a busy machine): not measured"
        );
    }
}
