//! Event latency of `presence watch --json`: from the rename of a record into
//! the directory to its NDJSON line on the watcher's stdout, and expiry
//! precision (the `down` line's time minus the computed deadline).
//!
//! Run: `cargo bench --bench watch_latency` (prints a table). Everything runs
//! in a temp dir with its own HOME / XDG dirs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::os::unix::fs::MetadataExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const EVENTS: usize = 200;
const EXPIRIES: usize = 20;

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
    // Let the watcher start.
    std::thread::sleep(Duration::from_millis(500));
    let wait_for = |session: &str, event: &str| -> (Instant, SystemTime) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let (at, wall, line) = rx.recv_timeout(left).expect("event within 10 s");
            let v: serde_json::Value = serde_json::from_str(&line).expect("NDJSON");
            if v["event"] == event && v["record"]["session_id"] == session {
                return (at, wall);
            }
        }
    };

    let mut latencies = Vec::with_capacity(EVENTS);
    for i in 0..EVENTS {
        let session = format!("lat-{i}");
        let tmpfile = dir.join(format!(".{session}.tmp"));
        std::fs::write(&tmpfile, record(&session, unix(SystemTime::now()), 90.0)).expect("write");
        let t0 = Instant::now();
        std::fs::rename(&tmpfile, dir.join(format!("bench.{session}.json"))).expect("rename");
        let (at, _) = wait_for(&session, "up");
        latencies.push((at - t0).as_secs_f64() * 1000.0);
        std::thread::sleep(Duration::from_millis(5));
    }

    let mut expiry = Vec::with_capacity(EXPIRIES);
    for i in 0..EXPIRIES {
        let session = format!("exp-{i}");
        let tmpfile = dir.join(format!(".{session}.tmp"));
        std::fs::write(&tmpfile, record(&session, unix(SystemTime::now()), 1.0)).expect("write");
        let path = dir.join(format!("bench.{session}.json"));
        std::fs::rename(&tmpfile, &path).expect("rename");
        let meta = std::fs::metadata(&path).expect("stat");
        let deadline = meta.ctime() as f64 + meta.ctime_nsec() as f64 / 1e9 + 1.0;
        wait_for(&session, "up");
        let (_, wall) = wait_for(&session, "down");
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
    println!(
        "| expiry: down line − deadline | {:.1} ms | {:.1} ms | {:.1} ms |",
        percentile(&expiry, 0.5),
        percentile(&expiry, 0.99),
        expiry[expiry.len() - 1]
    );
}
