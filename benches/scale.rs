//! Scale benchmark: `presence list` and friends on directories of 1 000,
//! 10 000 and 100 000 records, against the I/O floor and a straightforward
//! Python lister, as whole processes, median of several runs after a warm-up.
//!
//! Run: `cargo bench --bench scale` (add `-- --quick` for 1k and 10k only).
//! Prints a markdown table. Everything lives in a temp dir.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const PRESENCE: &str = env!("CARGO_BIN_EXE_presence");

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The I/O floor: open, read and close every `*.json` file, single-threaded.
fn floor(dir: &Path) {
    use std::io::Read;
    let mut buf = Vec::with_capacity(1 << 16);
    let mut bytes = 0usize;
    for e in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let name = e.file_name();
        if !name.to_string_lossy().ends_with(".json") {
            continue;
        }
        buf.clear();
        if let Ok(mut f) = std::fs::File::open(e.path()) {
            bytes += f.read_to_end(&mut buf).unwrap_or(0);
        }
    }
    std::hint::black_box(bytes);
}

const PYTHON_LISTER: &str = r#"
import glob, json, os, sys, time
now = time.time()
best = {}
for path in glob.glob(os.path.join(sys.argv[1], "*.json")):
    try:
        with open(path, encoding="utf-8") as f:
            rec = json.load(f)
    except (OSError, ValueError):
        continue
    if float(rec.get("expires_at") or 0) < now:
        continue
    target = str(rec.get("endpoint") or "").strip() or str(rec.get("session_id") or "")
    key = (str(rec.get("profile") or ""), str(rec.get("client") or rec.get("source") or ""), target)
    if key not in best or float(rec.get("updated_at") or 0) > float(best[key].get("updated_at") or 0):
        best[key] = rec
rows = sorted(best.values(), key=lambda r: float(r.get("updated_at") or 0), reverse=True)
json.dump(rows, sys.stdout)
"#;

/// A synthetic device: HOME and XDG dirs under `root`; records in the default dir.
struct Env {
    root: PathBuf,
}

impl Env {
    fn new(root: PathBuf) -> Env {
        std::fs::create_dir_all(root.join("data/presence/default")).unwrap();
        Env { root }
    }
    fn dir(&self) -> PathBuf {
        self.root.join("data/presence/default")
    }
    fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root.join("home"))
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            .env("XDG_DATA_HOME", self.root.join("data"))
            .env("XDG_CACHE_HOME", self.root.join("cache"))
            .env("XDG_RUNTIME_DIR", self.root.join("runtime"))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        c
    }
    fn presence(&self, args: &[&str]) -> Command {
        let mut c = self.cmd(PRESENCE);
        c.args(args);
        c
    }
}

fn record(i: usize, t: f64, device: &str, kind: usize) -> (String, String) {
    let session = format!("s-{i:06}");
    let instance = format!("host{}-{}", i % 7, &device[..8]);
    let (updated, ttl, ended) = match kind {
        0 | 1 => (t - (i % 30) as f64, 3600.0, None),
        2..=7 => (t - 7200.0 - i as f64 % 600.0, 90.0, None),
        _ => (t - 120.0, 90.0, Some(t - 120.0)),
    };
    let endpoint = if i.is_multiple_of(3) {
        format!("ssh://alice@host{}/s{i}", i % 7)
    } else {
        String::new()
    };
    let json = serde_json::json!({
        "version": 1, "session_id": session, "session_key": format!("key-{session}"),
        "status": if ended.is_some() { "ended" } else { "working" },
        "title": format!("Refactor module {i} of the parser and fix the flaky tests"),
        "model": "claude-sonnet-4", "cwd": format!("/home/alice/src/project-{}", i % 50),
        "source": "cli", "client": if i.is_multiple_of(2) { "terminal" } else { "gateway" },
        "profile": "default", "endpoint": endpoint, "host": format!("host{}", i % 7), "pid": 1000 + i,
        "instance_id": instance, "updated_at": updated, "expires_at": ended.unwrap_or(updated + ttl),
        "metadata": {"branch": format!("feature/{i}"), "repo": "presence"},
        "device_id": device, "started_at": updated - 3600.0, "seq": 1 + i % 40,
        "owner_start": null, "ended_at": ended,
    });
    (
        format!("{instance}.{session}.json"),
        json.to_string() + "\n",
    )
}

/// `n` files: ~20 % live, ~60 % expired, ~10 % tombstones, ~10 % conflict
/// copies and successors of other records.
fn generate(dir: &Path, n: usize) {
    let t = now();
    let devices: Vec<String> = (0..10)
        .map(|d| format!("{d:08x}{:024x}", d * 7919))
        .collect();
    let mut i = 0;
    while i < n {
        let kind = i % 10;
        let device = &devices[i % devices.len()];
        if kind == 9 && i >= 9 {
            // A copy of record i-9 (same session), older: a conflict copy or,
            // every other time, a successor on the same endpoint.
            let (base, body) = record(i - 9, t - 5.0, device, (i - 9) % 10);
            let name = if i % 20 == 9 {
                base.replace(".json", ".sync-conflict-20261130-101112-ABCDEFG.json")
            } else {
                format!("succ-{base}")
            };
            std::fs::write(dir.join(name), body).unwrap();
        } else {
            let (name, body) = record(i, t, device, kind);
            std::fs::write(dir.join(name), body).unwrap();
        }
        i += 1;
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Median wall time of `runs` runs of `make()` after one warm-up.
fn time(runs: usize, mut make: impl FnMut() -> Command) -> Duration {
    let _ = make().status();
    let mut v = Vec::new();
    for _ in 0..runs {
        let mut c = make();
        let t0 = Instant::now();
        let st = c.status().expect("run");
        v.push(t0.elapsed());
        assert!(st.success(), "{c:?} failed");
    }
    median(v)
}

/// Peak RSS (KiB) of one run, from getrusage(RUSAGE_CHILDREN) in a wrapper.
fn peak_rss_kib(c: Command) -> u64 {
    let program = c.get_program().to_owned();
    let args: Vec<_> = c.get_args().map(|a| a.to_owned()).collect();
    let mut w = Command::new("python3");
    w.arg("-c")
        .arg("import resource,subprocess,sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
        .arg(program)
        .args(args);
    for (k, v) in c.get_envs() {
        match v {
            Some(v) => w.env(k, v),
            None => w.env_remove(k),
        };
    }
    let out = w
        .stdout(Stdio::piped())
        .output()
        .expect("python3 for peak RSS");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    if let Some(pos) = std::env::args().position(|a| a == "--floor") {
        let dir = std::env::args().nth(pos + 1).expect("--floor DIR");
        floor(Path::new(&dir));
        return;
    }
    let me = std::env::current_exe().expect("current exe");
    let tmp = tempfile::tempdir().expect("temp dir");
    let sizes: &[usize] = if quick {
        &[1_000, 10_000]
    } else {
        &[1_000, 10_000, 100_000]
    };
    let mut list_json = Vec::new();
    println!(
        "| files | list --json | list (table) | I/O floor | Python lister | list/floor | Python/list | peak RSS of list |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut expire_100k = None;
    for &n in sizes {
        let env = Env::new(tmp.path().join(format!("n{n}")));
        generate(&env.dir(), n);
        let runs = if n >= 100_000 { 3 } else { 7 };
        let dir = env.dir();
        let t_json = time(runs, || env.presence(&["list", "--json"]));
        let t_table = time(runs, || env.presence(&["list"]));
        let t_floor = time(runs, || {
            let mut c = env.cmd(me.to_str().unwrap());
            c.arg("--floor").arg(&dir);
            c
        });
        let t_py = time(runs.min(3), || {
            let mut c = env.cmd("python3");
            c.arg("-c").arg(PYTHON_LISTER).arg(&dir);
            c
        });
        let rss = peak_rss_kib(env.presence(&["list", "--json"]));
        println!(
            "| {n} | {} | {} | {} | {} | {:.2} | {:.1} | {:.1} MiB |",
            ms(t_json),
            ms(t_table),
            ms(t_floor),
            ms(t_py),
            t_json.as_secs_f64() / t_floor.as_secs_f64(),
            t_py.as_secs_f64() / t_json.as_secs_f64(),
            rss as f64 / 1024.0
        );
        list_json.push((n, t_json));
        if n == 100_000 {
            expire_100k = Some((time(3, || env.presence(&["expire", "--dry-run"])), t_json));
        }
    }
    println!();
    if let [.., (n1, t1), (n2, t2)] = list_json[..] {
        println!(
            "scaling: t({n2}) / t({n1}) = {:.1} (linear would be {:.0})",
            t2.as_secs_f64() / t1.as_secs_f64(),
            n2 as f64 / n1 as f64
        );
    }
    if let Some((t_exp, t_list)) = expire_100k {
        println!(
            "expire --dry-run over 100000 files: {} = {:.2} × list",
            ms(t_exp),
            t_exp.as_secs_f64() / t_list.as_secs_f64()
        );
    }

    // publish vs. the two-process shell equivalent, 50 each, into 1 000 records.
    let env = Env::new(tmp.path().join("publish"));
    generate(&env.dir(), 1_000);
    let mut k = 0;
    let t_pub = time(21, || {
        k += 1;
        env.presence(&[
            "publish",
            "--session",
            &format!("p{k}"),
            "--title",
            "Refactor the parser",
            "--status",
            "working",
        ])
    });
    let dir = env.dir();
    let mut k = 0;
    let t_sh = time(21, || {
        k += 1;
        let mut c = env.cmd("sh");
        c.arg("-c").arg(format!(
            "printf '%s\\n' '{{\"version\":1,\"session_id\":\"p{k}\",\"title\":\"Refactor the parser\",\"status\":\"working\"}}' > {d}/.p{k}.tmp && mv {d}/.p{k}.tmp {d}/sh.p{k}.json",
            d = dir.display()
        ));
        c
    });
    println!(
        "publish: {} per record vs. shell printf > tmp && mv: {} ({:.2} ×)",
        ms(t_pub),
        ms(t_sh),
        t_pub.as_secs_f64() / t_sh.as_secs_f64()
    );

    // refresh of 1 000 of this device's records whose owner (this process) runs.
    let env = Env::new(tmp.path().join("refresh"));
    let device = "feedfacefeedfacefeedfacefeedface";
    std::fs::write(
        env.root.join("data/presence/device-id"),
        format!("{device}\n"),
    )
    .unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", std::process::id())).unwrap();
    let start: u64 = stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .nth(19)
        .unwrap()
        .parse()
        .unwrap();
    let t = now();
    for i in 0..1_000 {
        let (name, body) = record(i, t, device, 0);
        let mut v: serde_json::Value = serde_json::from_str(&body).unwrap();
        v["pid"] = std::process::id().into();
        v["owner_start"] = start.into();
        std::fs::write(env.dir().join(name), v.to_string()).unwrap();
    }
    let t_refresh = time(3, || env.presence(&["refresh"]));
    println!(
        "refresh of 1000 records with live owners: {}",
        ms(t_refresh)
    );
}
