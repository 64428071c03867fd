//! The `refresher` check: this device's sessions whose owner still runs but
//! whose records nothing refreshes, so that every other device stops
//! listing them while they go on. Apart because it looks outside the
//! directory: at this user's processes, the systemd user manager and the
//! crontab, for something that runs `presence refresh`.

use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::{Check, Status, check};
use crate::liveness::State;
use crate::owner::{self, OwnerState};
use crate::registry::Registry;
use crate::registry::devices::Census;

/// The units `presence setup` installs that refresh.
const UNITS: [&str; 2] = ["presence-refresh.timer", "presence-refresh.service"];

/// What refreshes this user's records on this machine, and what could.
struct Found {
    /// Each refresher that runs, described.
    names: Vec<String>,
    /// How often the crontab lines that run `presence refresh` do, when
    /// there are some and each one's schedule is understood (seconds).
    cron_every: Option<u64>,
    /// How often the refresh timer starts the refresh, and how much later
    /// each time it may, when it is active and its schedule is understood
    /// (from `systemctl --user cat`).
    timer_every: Option<(Duration, Duration)>,
    /// Whether the refresh timer is active.
    timer_active: bool,
    /// Whether a crontab line runs `presence refresh`.
    cron_active: bool,
    /// How many `presence refresh --every` processes run.
    processes: usize,
    /// Whether a systemd user manager answers.
    user_manager: bool,
    /// Whether there is a `crontab` program.
    crontab: bool,
}

/// A refresher whose schedule doctor reads.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scheduled {
    Cron,
    Timer,
}

/// How often a refresher refreshes: every `every`, each time up to `late`
/// after that (a timer's accuracy window and randomized delay).
#[derive(Debug, Clone, Copy)]
struct Pace {
    which: Scheduled,
    every: Duration,
    late: Duration,
}

impl Found {
    /// The refresher that refreshes most often, when every one that runs
    /// has a schedule doctor reads (a `refresh --every` process keeps its
    /// own) and each is slower than `p`'s `refresh_interval` asks, or, with
    /// its lateness, not once a ttl.
    fn too_slow(&self, p: &crate::config::Profile) -> Option<Pace> {
        if self.processes > 0 {
            return None;
        }
        let mut known = Vec::new();
        match (self.cron_active, self.cron_every) {
            (true, Some(s)) => known.push(Pace {
                which: Scheduled::Cron,
                every: Duration::from_secs(s),
                late: Duration::ZERO,
            }),
            (true, None) => return None,
            _ => {}
        }
        match (self.timer_active, self.timer_every) {
            (true, Some((every, late))) => known.push(Pace {
                which: Scheduled::Timer,
                every,
                late,
            }),
            (true, None) => return None,
            _ => {}
        }
        // Judged each on its own: one that keeps up is enough.
        let slow = |k: &Pace| k.every > p.refresh_interval || k.every + k.late >= p.ttl;
        if known.iter().any(|k| !slow(k)) {
            return None;
        }
        known.into_iter().min_by_key(|k| k.every + k.late)
    }
}

/// The fix when nothing refreshes: what installs a refresher on this
/// machine (`None`: a platform where doctor cannot tell).
fn fix(found: Option<&Found>) -> String {
    let setup = match found {
        Some(f) if f.user_manager => {
            "run `presence setup`, which installs and starts presence-refresh.timer"
        }
        Some(f) if f.crontab => {
            "run `presence setup`, which adds crontab lines that refresh every refresh_interval"
        }
        Some(_) => {
            "no systemd user manager answers here and `crontab` is not installed: install \
             cron (e.g. `sudo apt install cron`) and run `presence setup`"
        }
        None => "run `presence setup`, which installs a refresher for this machine",
    };
    format!(
        "{setup}; or keep `presence --quiet refresh --all-profiles --every` running under \
         your session manager; or start the session under `presence run`, which refreshes \
         its own record (see {})",
        super::doc_url("lifecycle.md#scheduling")
    )
}

/// The check of a refresher that refreshes less often than the profile's
/// `refresh_interval`, or, at its latest, not once a ttl.
fn slow(pace: Pace, p: &crate::config::Profile) -> Check {
    let worst = pace.every + pace.late;
    let why = if worst >= p.ttl {
        format!(
            "not even once a ttl ({}): records expire between its runs",
            humantime::format_duration(p.ttl)
        )
    } else {
        format!(
            "less often than refresh_interval ({}) asks: records get fewer chances to refresh \
             before they expire",
            humantime::format_duration(p.refresh_interval)
        )
    };
    let (what, fix) = match pace.which {
        Scheduled::Cron => (
            "a crontab line",
            "run `presence setup` again: its crontab lines keep up with refresh_interval (it \
             replaces its own); or edit your line with `crontab -e`",
        ),
        Scheduled::Timer => (
            "presence-refresh.timer",
            "run `presence setup` again: it writes the timer at the shortest refresh_interval \
             with a fine `AccuracySec=` (it replaces its own copy); or set `OnUnitActiveSec=` \
             and `AccuracySec=` in yours (`systemctl --user edit presence-refresh.timer`)",
        ),
    };
    // Said when it is what makes the timer miss a ttl.
    let late = if pace.every >= p.ttl || worst < p.ttl {
        String::new()
    } else {
        format!(
            " (up to {} late each time: its AccuracySec=/RandomizedDelaySec=)",
            humantime::format_duration(pace.late)
        )
    };
    check(
        "refresher",
        Status::Warn,
        format!(
            "{what} refreshes every {}{late}, {why}",
            humantime::format_duration(pace.every)
        ),
        Some(fix.into()),
    )
}

/// How often a timer unit, as `systemctl cat` prints it (its file and its
/// drop-ins, in the order systemd reads them), starts its service: the
/// shortest of the `OnUnitActiveSec=` left after the last empty timer
/// setting (which resets them all); and how much later than that it may
/// start it, each time: its `AccuracySec=` (1 min unless set: systemd
/// starts it somewhere in that window) and its `RandomizedDelaySec=`.
/// `None` when there is none, or an `OnCalendar=` or `OnUnitInactiveSec=`
/// schedule, or a time span doctor does not read.
fn timer_every(unit: &str) -> Option<(Duration, Duration)> {
    let mut in_timer = false;
    let mut every: Vec<Option<Duration>> = Vec::new();
    let mut other = false;
    let (mut accuracy, mut randomized) = (Duration::from_secs(60), Duration::ZERO);
    for line in unit.lines().map(str::trim) {
        if line.starts_with('[') {
            in_timer = line == "[Timer]";
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if !in_timer || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let value = value.trim();
        match key.trim() {
            // An empty assignment to any of them resets every timer.
            "OnActiveSec" | "OnBootSec" | "OnStartupSec" | "OnUnitActiveSec"
            | "OnUnitInactiveSec" | "OnCalendar"
                if value.is_empty() =>
            {
                every.clear();
                other = false;
            }
            "OnUnitActiveSec" => every.push(time_span(value)),
            "OnCalendar" | "OnUnitInactiveSec" => other = true,
            // systemd ignores an empty or unreadable one (the one before
            // stays), and so does this.
            "AccuracySec" => accuracy = zero_or_span(value).unwrap_or(accuracy),
            "RandomizedDelaySec" => randomized = zero_or_span(value).unwrap_or(randomized),
            _ => {}
        }
    }
    if other {
        return None;
    }
    let every = every
        .into_iter()
        .collect::<Option<Vec<_>>>()?
        .into_iter()
        .min()?;
    Some((every, accuracy + randomized))
}

/// A time span that may be zero (`0`, `0s`).
fn zero_or_span(value: &str) -> Option<Duration> {
    let value = value.trim();
    time_span(value).or_else(|| {
        let rest = value.strip_prefix('0')?;
        time_span(&format!("1{rest}")).map(|_| Duration::ZERO)
    })
}

/// A systemd time span (`30s`, `1min 30s`, `2h30min`, `500ms`, a bare
/// number of seconds).
fn time_span(text: &str) -> Option<Duration> {
    let mut total = 0.0;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let n: f64 = rest[..digits].parse().ok()?;
        rest = rest[digits..].trim_start();
        let unit_len = rest
            .find(|c: char| !c.is_alphabetic())
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = rest[unit_len..].trim_start();
        let scale = match unit {
            "" | "s" | "sec" | "second" | "seconds" => 1.0,
            "us" | "usec" | "\u{b5}s" | "\u{3bc}s" => 1e-6,
            "ms" | "msec" => 1e-3,
            "m" | "min" | "minute" | "minutes" => 60.0,
            "h" | "hr" | "hour" | "hours" => 3600.0,
            "d" | "day" | "days" => 86_400.0,
            "w" | "week" | "weeks" => 604_800.0,
            _ => return None,
        };
        total += n * scale;
    }
    (total.is_finite() && total > 0.0 && total < 1e12).then(|| Duration::from_secs_f64(total))
}

/// How often a crontab line runs what it runs, in seconds: from its minute
/// field (`*` or `*/N`; every other field `*`), or the `sleep S` between its
/// refreshes when that is shorter (setup's lines for a refresh_interval
/// under a minute). `None` for any other schedule.
fn cron_every(line: &str) -> Option<u64> {
    let mut words = line.split_whitespace();
    let minute = words.next()?;
    let period = match minute {
        "*" => 60,
        m => {
            m.strip_prefix("*/")?
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)?
                * 60
        }
    };
    let fields: Vec<&str> = words.by_ref().take(4).collect();
    if fields.len() != 4 || fields.iter().any(|f| *f != "*") {
        return None;
    }
    let command: Vec<&str> = words.collect();
    let sleep = command
        .windows(2)
        .filter(|w| w[0] == "sleep")
        .filter_map(|w| w[1].trim_end_matches(';').parse::<u64>().ok())
        .filter(|s| *s > 0)
        .min();
    Some(sleep.map_or(period, |s| s.min(period)))
}

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
/// something keeps them fresh; with none, whether a refresher runs at all.
/// `None` when the directory is missing, or there are none and this
/// platform cannot tell.
pub(super) fn refresher(registry: &Registry, census: &Census) -> Option<Check> {
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
        let row = census.local_rows.iter().find(|r| r.file == entry.file);
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
    let found = refreshers(&registry.local().home);
    let p = registry.profile();
    let too_slow = found.as_ref().and_then(|f| f.too_slow(p));
    if mine.is_empty() {
        // Off Linux nothing can be told.
        let found = found?;
        return Some(if found.names.is_empty() {
            check(
                "refresher",
                Status::Warn,
                format!(
                    "no refresher runs ({}): a session published with --owner-pid would expire \
                     one ttl after its publish (`presence run` refreshes its own)",
                    none_runs()
                ),
                Some(fix(Some(&found))),
            )
        } else if let Some(slower) = too_slow {
            slow(slower, p)
        } else {
            check(
                "refresher",
                Status::Ok,
                format!(
                    "a refresher runs ({}); no session of this device needs it now",
                    found.names.join(", ")
                ),
                None,
            )
        });
    }
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
        Some(f) if !f.names.is_empty() => (
            format!(
                "a refresher runs ({}) but did not refresh them",
                f.names.join(", ")
            ),
            "check that the refresher covers this directory (`presence refresh \
             --all-profiles` covers every profile's) and that it runs without errors \
             (`journalctl --user -u presence-refresh`, or cron's mail)"
                .to_string(),
        ),
        Some(f) => (format!("no refresher runs ({})", none_runs()), fix(Some(f))),
        None => (String::new(), fix(None)),
    };
    let with = |what: String| {
        if runs.is_empty() {
            what
        } else {
            format!("{what}; {runs}")
        }
    };
    // The sessions a check names, for programs.
    let ids = |pick: fn(&Standing) -> bool| -> Vec<String> {
        mine.iter()
            .filter(|(_, st)| pick(st))
            .map(|(s, _)| s.clone())
            .collect()
    };
    let naming = |mut c: Check, pick: fn(&Standing) -> bool| {
        c.sessions = ids(pick);
        Some(c)
    };
    if !expired.is_empty() {
        return naming(
            check(
                "refresher",
                Status::Fail,
                with(format!(
                    "{} session(s) of this device whose owner still runs have expired, so no \
                 device lists them: {}",
                    expired.len(),
                    expired.join(", ")
                )),
                Some(fix),
            ),
            |st| matches!(st, Standing::Gone | Standing::Expired { .. }),
        );
    }
    if !late.is_empty() {
        return naming(
            check(
                "refresher",
                Status::Warn,
                with(format!(
                    "{} session(s) of this device whose owner still runs are about to expire: {}",
                    late.len(),
                    late.join(", ")
                )),
                Some(fix),
            ),
            |st| matches!(st, Standing::Late { .. }),
        );
    }
    let unkept_pick: fn(&Standing) -> bool = |st| matches!(st, Standing::Fresh { run: false, .. });
    match found {
        Some(found) if found.names.is_empty() && !unkept.is_empty() => naming(
            check(
                "refresher",
                Status::Warn,
                with(format!(
                    "{} session(s) of this device whose owner still runs will expire: {}",
                    unkept.len(),
                    unkept.join(", ")
                )),
                Some(fix),
            ),
            unkept_pick,
        ),
        _ if !unkept.is_empty()
            && let Some(slower) = too_slow =>
        {
            naming(slow(slower, p), unkept_pick)
        }
        found => naming(
            check(
                "refresher",
                Status::Ok,
                format!(
                    "{} session(s) of this device whose owner runs are kept fresh{}",
                    mine.len(),
                    match found {
                        Some(f) if !f.names.is_empty() => format!(" ({})", f.names.join(", ")),
                        _ => String::new(),
                    }
                ),
                None,
            ),
            |_| true,
        ),
    }
}

/// What was looked for and not found, in words.
fn none_runs() -> String {
    format!(
        "no `presence refresh --every` process of this user, {} not active, no crontab line",
        UNITS[0]
    )
}

/// What refreshes this user's records, and what could; `None` where this
/// platform cannot tell.
fn refreshers(home: &Path) -> Option<Found> {
    if cfg!(not(target_os = "linux")) {
        return None;
    }
    let names = processes(home);
    let mut found = Found {
        processes: names.len(),
        names,
        cron_every: None,
        timer_every: None,
        timer_active: false,
        cron_active: false,
        user_manager: false,
        crontab: false,
    };
    if let Some(out) = output_within(
        Command::new("systemctl")
            .args(["--user", "is-active"])
            .args(UNITS),
    ) {
        // One state per unit, whatever it is, once a user manager answers.
        found.user_manager = out.lines().count() == UNITS.len();
        for (unit, state) in UNITS.iter().zip(out.lines()) {
            if state.trim() == "active" {
                found.names.push((*unit).to_string());
                found.timer_active |= *unit == UNITS[0];
            }
        }
        if found.timer_active {
            found.timer_every = output_within(
                Command::new("systemctl")
                    .args(["--user", "cat", "--no-pager"])
                    .arg(UNITS[0]),
            )
            .and_then(|unit| timer_every(&unit));
        }
    }
    if let Some(out) = output_within(Command::new("crontab").arg("-l")) {
        found.crontab = true;
        let lines: Vec<&str> = out
            .lines()
            .map(str::trim)
            .filter(|l| !l.starts_with('#') && l.contains("presence") && l.contains(" refresh"))
            .collect();
        if !lines.is_empty() {
            let every: Option<Vec<u64>> = lines.iter().map(|l| cron_every(l)).collect();
            found.cron_every = every.and_then(|e| e.into_iter().min());
            found.cron_active = true;
            found.names.push(match found.cron_every {
                Some(s) => format!(
                    "a crontab line, every {}",
                    humantime::format_duration(Duration::from_secs(s))
                ),
                None => "a crontab line".into(),
            });
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
    crate::child::output_within(cmd, Duration::from_secs(2), 64 * 1024).map(|out| out.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn how_often_a_timer_starts_its_service() {
        let unit = |timer: &str| {
            format!(
                "# /home/u/.config/systemd/user/presence-refresh.timer\n[Unit]\n\
                 Description=x\n\n[Timer]\nOnActiveSec=0\n{timer}\nAccuracySec=1s\n\
                 [Install]\nWantedBy=timers.target\n"
            )
        };
        let secs = |s: f64| Some((Duration::from_secs_f64(s), Duration::from_secs(1)));
        assert_eq!(timer_every(&unit("OnUnitActiveSec=30s")), secs(30.0));
        assert_eq!(timer_every(&unit("OnUnitActiveSec = 1min 30s")), secs(90.0));
        assert_eq!(timer_every(&unit("OnUnitActiveSec=2m30s")), secs(150.0));
        assert_eq!(timer_every(&unit("OnUnitActiveSec=250ms")), secs(0.25));
        assert_eq!(timer_every(&unit("OnUnitActiveSec=45")), secs(45.0));
        assert_eq!(
            timer_every(&unit("OnUnitActiveSec=1h\nOnUnitActiveSec=20s")),
            secs(20.0)
        );
        // A drop-in that resets the list and sets its own.
        let dropped = unit("OnUnitActiveSec=30s")
            + "\n# /home/u/.config/systemd/user/presence-refresh.timer.d/o.conf\n\
               [Timer]\nOnUnitActiveSec=\nOnUnitActiveSec=2min\n";
        assert_eq!(timer_every(&dropped), secs(120.0));
        // An empty assignment to any timer setting resets them all.
        assert_eq!(
            timer_every(&unit(
                "OnUnitActiveSec=30s\nOnCalendar=daily\nOnBootSec=\nOnUnitActiveSec=1m"
            )),
            secs(60.0)
        );
        for unread in [
            "",
            "# OnUnitActiveSec=10s",
            "OnUnitActiveSec=soon",
            "OnUnitActiveSec=30s\nOnCalendar=*:*:0/30",
            "OnUnitActiveSec=-5s",
        ] {
            assert_eq!(timer_every(&unit(unread)), None, "{unread}");
        }
        // How late it may be each time: AccuracySec= (1 min unless set,
        // and again when set empty) and RandomizedDelaySec=.
        let exactly = |unit: &str| timer_every(unit).map(|(e, l)| (e.as_secs(), l.as_secs()));
        assert_eq!(exactly("[Timer]\nOnUnitActiveSec=30s\n"), Some((30, 60)));
        assert_eq!(
            exactly("[Timer]\nOnUnitActiveSec=30s\nAccuracySec=0\nRandomizedDelaySec=5s\n"),
            Some((30, 5))
        );
        // An empty or unreadable one is ignored, as systemd ignores it.
        for kept in ["AccuracySec=", "AccuracySec=soon", "AccuracySec=0xyz"] {
            assert_eq!(
                exactly(&format!(
                    "[Timer]\nOnUnitActiveSec=30s\nAccuracySec=2s\n{kept}\n"
                )),
                Some((30, 2)),
                "{kept}"
            );
        }
        assert_eq!(
            exactly("[Timer]\nOnUnitActiveSec=30s\nAccuracySec=0s\nRandomizedDelaySec=\n"),
            Some((30, 0))
        );
        // Outside [Timer] it is not the timer's.
        assert_eq!(
            timer_every("[Unit]\nOnUnitActiveSec=5s\n[Timer]\nOnBootSec=1\n"),
            None
        );
    }

    #[test]
    fn how_often_a_crontab_line_runs() {
        assert_eq!(cron_every("* * * * * presence refresh"), Some(60));
        assert_eq!(cron_every("*/5 * * * * presence refresh"), Some(300));
        assert_eq!(
            cron_every("* * * * * p refresh; sleep 30; p refresh"),
            Some(30)
        );
        assert_eq!(
            cron_every("* * * * * p refresh; for i in 2 3; do sleep 20; p refresh; done"),
            Some(20)
        );
        for other in [
            "0 * * * * presence refresh",
            "* 1 * * * presence refresh",
            "*/0 * * * * presence refresh",
            "@reboot presence refresh --every",
            "* * * *",
        ] {
            assert_eq!(cron_every(other), None, "{other}");
        }
    }
}
