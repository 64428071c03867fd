//! The `refresher` check: this device's sessions whose owner still runs but
//! whose records nothing refreshes, so that every other device stops
//! listing them while they go on. Apart because it looks outside the
//! directory: at this user's processes, the systemd user manager and the
//! crontab, for something that runs `presence refresh`.

use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{Check, Status, check};
use crate::liveness::State;
use crate::owner::{self, OwnerState};
use crate::registry::{Listing, Registry};

/// The units of `docs/systemd/` that refresh.
const UNITS: [&str; 2] = ["presence-refresh.timer", "presence-refresh.service"];

const FIX: &str = "keep a refresher running: `systemctl --user enable --now \
    presence-refresh.timer` (the units are in docs/systemd/), or the crontab line \
    `* * * * * /full/path/to/presence --quiet refresh --all-profiles`, or a long-running `presence refresh \
    --all-profiles --every` (docs/lifecycle.md); or start the session under `presence run`, \
    which refreshes its own record";

/// How one of this device's records with a running owner stands.
enum Standing {
    /// Its file is gone (deleted by a user or another device's `expire`).
    Gone,
    /// Expired here: no device lists it.
    Expired { age: f64 },
    /// Live, but older than three quarters of its ttl: a refresh is late.
    Late { age: f64, left: f64 },
    /// Fresh; `run` says whether a `presence run` wrapper keeps it so.
    Fresh { left: f64, run: bool },
}

/// `refresher`: this device's records whose owner runs, and whether
/// something keeps them fresh. `None` when there are none.
pub(super) fn refresher(registry: &Registry, listing: &Listing) -> Option<Check> {
    let dir = registry.dir.open().ok()?;
    if !dir.exists() {
        return None;
    }
    let mut mine: Vec<(String, Standing)> = Vec::new();
    for entry in registry.ledger(&dir).entries().ok()? {
        let Some(start) = entry.owner_start else {
            continue;
        };
        if entry.ended_at.is_some() || owner::owner_state(entry.pid, start) != OwnerState::Alive {
            continue;
        }
        let row = listing
            .rows
            .iter()
            .find(|r| r.local && r.file == entry.file);
        let standing = match row {
            // Another record took its place: the `device-id` and listing
            // checks speak of that, not this one.
            None if registry.profile().dir.join(&entry.file).exists() => continue,
            None => Standing::Gone,
            Some(r) if r.state != State::Live => Standing::Expired { age: r.age_s },
            Some(r) => {
                let left = r.expires_in_s.unwrap_or(0.0);
                if r.age_s > 0.75 * crate::liveness::record_ttl(&r.record) {
                    Standing::Late { age: r.age_s, left }
                } else {
                    Standing::Fresh {
                        left,
                        run: under_presence_run(entry.pid),
                    }
                }
            }
        };
        mine.push((entry.life.session_id, standing));
    }
    if mine.is_empty() {
        return None;
    }
    let found = refreshers(&registry.local().home);
    let expired: Vec<String> = mine
        .iter()
        .filter_map(|(s, st)| match st {
            Standing::Gone => Some(format!("{s} (its file was deleted)")),
            Standing::Expired { age } => {
                Some(format!("{s} (last written {} ago)", super::duration(*age)))
            }
            _ => None,
        })
        .collect();
    let late: Vec<String> = mine
        .iter()
        .filter_map(|(s, st)| match st {
            Standing::Late { age, left } => Some(format!(
                "{s} (last written {} ago, expires in {})",
                super::duration(*age),
                super::duration(*left)
            )),
            _ => None,
        })
        .collect();
    // Fresh records a `presence run` wrapper does not keep: they expire
    // unless a refresher runs, which only this platform's scan can tell.
    let unkept: Vec<String> = mine
        .iter()
        .filter_map(|(s, st)| match st {
            Standing::Fresh { left, run: false } => {
                Some(format!("{s} (expires in {})", super::duration(*left)))
            }
            _ => None,
        })
        .collect();
    let (runs, fix) = match &found {
        Some(found) if !found.is_empty() => (
            format!(
                "a refresher runs ({}) but did not refresh them",
                found.join(", ")
            ),
            "check that the refresher covers this directory (`presence refresh \
             --all-profiles` covers every profile's) and that it runs without errors \
             (`journalctl --user -u presence-refresh`)",
        ),
        Some(_) => (
            format!(
                "no refresher runs (no `presence refresh --every` process of this user, {} \
                 not active, no crontab line)",
                UNITS[0]
            ),
            FIX,
        ),
        None => (String::new(), FIX),
    };
    let with = |what: String| {
        if runs.is_empty() {
            what
        } else {
            format!("{what}; {runs}")
        }
    };
    if !expired.is_empty() {
        return Some(check(
            "refresher",
            Status::Fail,
            with(format!(
                "{} session(s) of this device whose owner still runs have expired, so no \
                 device lists them: {}",
                expired.len(),
                expired.join(", ")
            )),
            Some(fix.into()),
        ));
    }
    if !late.is_empty() {
        return Some(check(
            "refresher",
            Status::Warn,
            with(format!(
                "{} session(s) of this device whose owner still runs are about to expire: {}",
                late.len(),
                late.join(", ")
            )),
            Some(fix.into()),
        ));
    }
    match found {
        Some(found) if found.is_empty() && !unkept.is_empty() => Some(check(
            "refresher",
            Status::Warn,
            with(format!(
                "{} session(s) of this device whose owner still runs will expire: {}",
                unkept.len(),
                unkept.join(", ")
            )),
            Some(fix.into()),
        )),
        found => Some(check(
            "refresher",
            Status::Ok,
            format!(
                "{} session(s) of this device whose owner runs are kept fresh{}",
                mine.len(),
                match found {
                    Some(f) if !f.is_empty() => format!(" ({})", f.join(", ")),
                    _ => String::new(),
                }
            ),
            None,
        )),
    }
}

/// What refreshes this user's records, described; `None` where this
/// platform cannot tell.
fn refreshers(home: &Path) -> Option<Vec<String>> {
    if cfg!(not(target_os = "linux")) {
        return None;
    }
    let mut found = processes(home);
    if let Some(out) = output_within(
        Command::new("systemctl")
            .args(["--user", "is-active"])
            .args(UNITS),
    ) {
        for (unit, state) in UNITS.iter().zip(out.lines()) {
            if state.trim() == "active" {
                found.push((*unit).to_string());
            }
        }
    }
    if let Some(out) = output_within(Command::new("crontab").arg("-l")) {
        let line = out
            .lines()
            .map(str::trim)
            .any(|l| !l.starts_with('#') && l.contains("presence") && l.contains(" refresh"));
        if line {
            found.push("a crontab line".into());
        }
    }
    Some(found)
}

/// `presence refresh --every` processes of this user that share this
/// device's local state (the same `HOME`): only those read this ledger.
fn processes(home: &Path) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let Ok(me) = std::fs::metadata("/proc/self") else {
        return Vec::new();
    };
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for e in rd.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if e.metadata().map_or(true, |m| m.uid() != me.uid()) {
            continue;
        }
        let Some(args) = presence_args(pid) else {
            continue;
        };
        let every = args
            .iter()
            .any(|a| a == "--every" || a.starts_with("--every="));
        if !(every && args.iter().any(|a| a == "refresh")) {
            continue;
        }
        let environ = read_proc(pid, "environ").unwrap_or_default();
        let theirs = environ
            .split(|&b| b == 0)
            .find_map(|v| v.strip_prefix(b"HOME="))
            .map(|h| Path::new(std::ffi::OsStr::from_bytes(h)).to_path_buf());
        if theirs.is_some_and(|h| !same_path(&h, home)) {
            continue;
        }
        found.push(format!("`presence refresh --every`, pid {pid}"));
    }
    found.sort();
    found
}

/// The arguments after the program name of process `pid`, if it is
/// `presence`.
fn presence_args(pid: u32) -> Option<Vec<String>> {
    let cmdline = read_proc(pid, "cmdline")?;
    let mut args = cmdline
        .split(|&b| b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned());
    let program = args.next()?;
    (Path::new(&program).file_name()? == "presence").then(|| args.collect())
}

/// Whether process `pid`'s parent is a `presence run` wrapper, which
/// refreshes the record of the command it runs.
fn under_presence_run(pid: u32) -> bool {
    let Some(stat) = read_proc(pid, "stat") else {
        return false;
    };
    let stat = String::from_utf8_lossy(&stat);
    // The command name (field 2) may hold spaces and parentheses: the
    // parent's pid (field 4) follows the state, after the last ')'.
    let ppid = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().nth(1))
        .and_then(|p| p.parse::<u32>().ok());
    ppid.and_then(presence_args)
        .is_some_and(|args| args.iter().any(|a| a == "run"))
}

/// `/proc/PID/NAME`, at most 256 KiB of it.
fn read_proc(pid: u32, name: &str) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(format!("/proc/{pid}/{name}"))
        .and_then(|f| f.take(256 * 1024).read_to_end(&mut bytes))
        .ok()?;
    Some(bytes)
}

fn same_path(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// The standard output of `cmd` if it ran and exited within two seconds;
/// `None` if it is not installed or did not finish (a hung user bus must
/// not hang `doctor`).
fn output_within(cmd: &mut Command) -> Option<String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() < Duration::from_secs(2) => {
                std::thread::sleep(Duration::from_millis(10));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let mut out = String::new();
    child
        .stdout
        .take()?
        .take(64 * 1024)
        .read_to_string(&mut out)
        .ok()?;
    Some(out)
}
