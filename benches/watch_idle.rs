//! Idle cost of the watchers: CPU time and file reads of `presence watch
//! --json`, `presence list --watch` and `presence watch --json --poll=2s`
//! while nothing in the directory changes, at 100, 10 000 and 100 000 records;
//! then what one new record costs each of them.
//!
//! Run: `cargo bench --bench watch_idle` (a 60 s idle window per command and
//! size, about 12 minutes). `PRESENCE_IDLE_SECS=10` shortens the window;
//! `-- --quick` skips 100 000. Prints a markdown table. Everything runs in a
//! temp dir with its own HOME / XDG dirs. Linux only (reads `/proc/PID/stat`
//! and `/proc/PID/io`).
// A program of its own, with its own output.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const PRESENCE: &str = env!("CARGO_BIN_EXE_presence");

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// One record; `kind` 0–1 live for an hour, 2–7 expired, 8 a tombstone, 9 a
/// conflict copy of the record before it (the mix of `benches/scale.rs`).
fn record(i: usize, t: f64) -> (String, String) {
    let kind = i % 10;
    let session = if kind == 9 {
        format!("s-{:06}", i - 1)
    } else {
        format!("s-{i:06}")
    };
    let (updated, ttl, ended) = match kind {
        0 | 1 => (t - (i % 30) as f64, 3600.0, None),
        8 => (t - 120.0, 90.0, Some(t - 120.0)),
        9 => (t - 200.0, 90.0, None),
        _ => (t - 7200.0 - (i % 600) as f64, 90.0, None),
    };
    let instance = format!("host{}-0123abcd", i % 7);
    let json = serde_json::json!({
        "version": 1, "session_id": session, "status": "working",
        "title": format!("Refactor module {i} of the parser and fix the flaky tests"),
        "model": "claude-sonnet-4", "cwd": format!("/home/alice/src/project-{}", i % 50),
        "client": "terminal", "profile": "default", "host": format!("host{}", i % 7),
        "instance_id": instance, "updated_at": updated, "expires_at": ended.unwrap_or(updated + ttl),
        "metadata": {"branch": format!("feature/{i}")}, "seq": 1 + i % 40, "ended_at": ended,
    });
    let name = if kind == 9 {
        format!("{instance}.{session}.sync-conflict-20261130-101112-ABCDEFG.json")
    } else {
        format!("{instance}.{session}.json")
    };
    (name, json.to_string() + "\n")
}

fn generate(dir: &Path, n: usize) -> usize {
    let t = now();
    let mut live = 0;
    for i in 0..n {
        let (name, body) = record(i, t);
        live += usize::from(i % 10 < 2);
        std::fs::write(dir.join(name), body).unwrap();
    }
    live
}

struct Env {
    root: PathBuf,
}

impl Env {
    fn dir(&self) -> PathBuf {
        self.root.join("data/presence/default")
    }

    fn presence(&self, args: &[&str]) -> Command {
        let mut c = Command::new(PRESENCE);
        c.args(args)
            .env_clear()
            .env("HOME", self.root.join("home"))
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            .env("XDG_DATA_HOME", self.root.join("data"))
            .env("XDG_CACHE_HOME", self.root.join("cache"))
            .env("XDG_RUNTIME_DIR", self.root.join("runtime"))
            .stdin(Stdio::null())
            .stderr(Stdio::null());
        c
    }
}

/// CPU seconds (user + system, all threads) of a running process.
fn cpu_secs(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..]
        .split_whitespace()
        .collect();
    // utime and stime are fields 14 and 15 of the whole line.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    ticks as f64 / *CLK_TCK
}

/// Clock ticks per second of `/proc/PID/stat` (asked of `getconf`, as the
/// crate forbids the `unsafe` a `sysconf` call needs).
static CLK_TCK: std::sync::LazyLock<f64> = std::sync::LazyLock::new(|| {
    let out = Command::new("getconf").arg("CLK_TCK").output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(100.0)
});

/// `(read syscalls, bytes read)` of a running process, from `/proc/PID/io`.
fn reads(pid: u32) -> (u64, u64) {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap();
    let field = |name: &str| -> u64 {
        io.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    (field("syscr:"), field("rchar:"))
}

/// The child's stdout, line by line, on a channel.
fn lines(child: &mut Child) -> Receiver<String> {
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits until `want` lines arrived; returns how long that took.
fn wait_lines(rx: &Receiver<String>, want: usize, what: &str) -> Duration {
    let t0 = Instant::now();
    for _ in 0..want {
        rx.recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("{what}: no output within 120 s"));
    }
    t0.elapsed()
}

/// Drains lines until `pred` matches one.
fn wait_for(rx: &Receiver<String>, what: &str, pred: impl Fn(&str) -> bool) {
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("{what}: no matching line within 120 s"));
        if pred(&line) {
            return;
        }
    }
}

struct Figures {
    startup: Duration,
    idle_cpu: f64,
    idle_reads: u64,
    change_reads: u64,
    change_bytes: u64,
}

fn measure(env: &Env, args: &[&str], live: usize, window: Duration, k: &mut usize) -> Figures {
    let table = args[0] == "list";
    let mut child = env.presence(args).stdout(Stdio::piped()).spawn().unwrap();
    let pid = child.id();
    let rx = lines(&mut child);
    // The initial live set, all of it: one line per record, and the `ready`
    // line after them (of `watch`) or the header before them (of a table).
    let startup = wait_lines(&rx, live + 1, &args.join(" "));
    // Let anything the start-up set off die down before measuring.
    std::thread::sleep(Duration::from_secs(2));
    while rx.try_recv().is_ok() {}
    let (cpu0, (r0, _)) = (cpu_secs(pid), reads(pid));
    std::thread::sleep(window);
    let (cpu1, (r1, b1)) = (cpu_secs(pid), reads(pid));
    assert!(rx.try_recv().is_err(), "{args:?} printed while idle");

    // One new record, renamed in as `publish` does.
    *k += 1;
    let session = format!("new-{k}");
    let t = now();
    let body = serde_json::json!({
        "version": 1, "session_id": session, "client": "bench", "profile": "default",
        "updated_at": t, "expires_at": t + 3600.0,
    })
    .to_string();
    let tmp = env.dir().join(format!(".{session}.tmp"));
    std::fs::write(&tmp, body).unwrap();
    std::fs::rename(&tmp, env.dir().join(format!("bench.{session}.json"))).unwrap();
    if table {
        // A blank line, then the whole table again.
        wait_for(&rx, "list --watch", str::is_empty);
        wait_lines(&rx, live + 2, "list --watch redraw");
    } else {
        wait_for(&rx, "watch", |l| l.contains(&format!("\"{session}\"")));
    }
    // Whatever else the change set off.
    std::thread::sleep(Duration::from_millis(500));
    let (r2, b2) = reads(pid);
    let _ = child.kill();
    let _ = child.wait();
    Figures {
        startup,
        idle_cpu: cpu1 - cpu0,
        idle_reads: r1 - r0,
        change_reads: r2 - r1,
        change_bytes: b2 - b1,
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let window = Duration::from_secs(
        std::env::var("PRESENCE_IDLE_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(60),
    );
    let sizes: &[usize] = if quick {
        &[100, 10_000]
    } else {
        &[100, 10_000, 100_000]
    };
    let tmp = tempfile::tempdir().expect("temp dir");
    println!(
        "idle window {} s; CPU = user + system of the whole process",
        window.as_secs()
    );
    println!(
        "| records | command | start-up | CPU while idle | read syscalls while idle | read syscalls for one new record | bytes read for it |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut k = 0;
    let mut per_poll = Vec::new();
    for &n in sizes {
        let env = Env {
            root: tmp.path().join(format!("n{n}")),
        };
        std::fs::create_dir_all(env.dir()).unwrap();
        let live = generate(&env.dir(), n);
        let commands = [
            &["watch", "--json"][..],
            &["list", "--watch"][..],
            &["watch", "--json", "--poll=2s"][..],
        ];
        for (round, args) in commands.into_iter().enumerate() {
            // Each round adds a record.
            let f = measure(&env, args, live + round, window, &mut k);
            println!(
                "| {n} | `{}` | {:.0} ms | {:.2} s | {} | {} | {} |",
                args.join(" "),
                f.startup.as_secs_f64() * 1000.0,
                f.idle_cpu,
                f.idle_reads,
                f.change_reads,
                f.change_bytes,
            );
            if args.contains(&"--poll=2s") {
                per_poll.push((n, f.idle_cpu / (window.as_secs_f64() / 2.0)));
            }
        }
    }
    println!();
    for (n, cpu) in per_poll {
        println!(
            "- a poll (a stat of every file) at {n} records: {:.1} ms of CPU",
            cpu * 1000.0
        );
    }
}
