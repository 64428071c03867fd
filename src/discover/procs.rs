//! The scan of this user's processes, from `/proc` (Linux).
//!
//! Cheap for every process: its `stat` (name, parent, state, start time)
//! and its `cmdline`, each read bounded. Only the processes the caller
//! wants (those running an enabled agent's program) cost more: their
//! working directory, their environment (only the tmux and agent-directory
//! variables are kept) and the names of the files they hold open. A
//! process that exits during its reads is skipped; one of another user, a
//! zombie, or one whose files cannot be read is not listed.
//!
//! Other platforms have no `/proc`: the scan finds nothing, so discovery
//! publishes nothing there (the hooks still do).

use super::Proc;

/// The most processes looked at: a runaway fork bomb must not make a
/// refresh pass endless.
#[cfg(target_os = "linux")]
const MAX_PROCS: usize = 65_536;

/// The most open files listed per process, and the most file descriptors
/// looked at to find them.
#[cfg(target_os = "linux")]
const MAX_OPEN_FILES: usize = 64;
#[cfg(target_os = "linux")]
const MAX_FDS: usize = 4096;

/// This user's processes for which `wanted` (given a process with its pid,
/// name, parent, start time and argv) holds, with their details.
#[cfg(target_os = "linux")]
pub(super) fn scan(wanted: &dyn Fn(&Proc) -> bool) -> Vec<Proc> {
    use std::os::unix::fs::MetadataExt as _;
    let uid = rustix::process::getuid().as_raw();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let boot = boot_time();
    let mut out = Vec::new();
    for entry in dir.flatten().take(MAX_PROCS) {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if !entry.metadata().is_ok_and(|m| m.uid() == uid) {
            continue;
        }
        let Some(mut p) = basics(pid) else { continue };
        if !wanted(&p) {
            continue;
        }
        p.started_at = boot.map(|b| started_at(&p, b));
        if details(&mut p) {
            out.push(p);
        }
    }
    out
}

/// Other platforms: no process is seen.
#[cfg(not(target_os = "linux"))]
pub(super) fn scan(_wanted: &dyn Fn(&Proc) -> bool) -> Vec<Proc> {
    Vec::new()
}

/// At most `limit` bytes of `/proc/PID/NAME`.
#[cfg(target_os = "linux")]
fn read(pid: u32, name: &str, limit: u64) -> Option<Vec<u8>> {
    read_file(&format!("/proc/{pid}/{name}"), limit)
}

/// At most `limit` bytes of the file at `path`.
#[cfg(target_os = "linux")]
fn read_file(path: &str, limit: u64) -> Option<Vec<u8>> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(limit).read_to_end(&mut bytes))
        .ok()?;
    Some(bytes)
}

/// `PID (NAME) STATE PPID …`: the name, the parent, whether it is a
/// zombie, and the start time (field 22).
fn parse_stat(stat: &str) -> Option<(String, u32, bool, u64)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?.to_string();
    let mut fields = stat.get(close + 1..)?.split_whitespace();
    let state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    // After the parent (field 4), the start time is 18 fields further.
    let start = fields.nth(17)?.parse().ok()?;
    Some((name, ppid, matches!(state, "Z" | "X"), start))
}

/// The cheap part: name, parent, start time, argv. `None` for a zombie or a
/// process that is gone.
#[cfg(target_os = "linux")]
fn basics(pid: u32) -> Option<Proc> {
    let stat = read(pid, "stat", 4096)?;
    let (comm, ppid, zombie, start) = parse_stat(&String::from_utf8_lossy(&stat))?;
    if zombie {
        return None;
    }
    let cmdline = read(pid, "cmdline", 16 * 1024)?;
    Some(Proc {
        pid,
        comm,
        argv: split_nul(&cmdline)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
        start,
        ppid,
        ..Proc::default()
    })
}

/// NUL-separated strings, the empty tail dropped.
fn split_nul(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    (!bytes.is_empty())
        .then(|| bytes.split(|&b| b == 0))
        .into_iter()
        .flatten()
}

/// The costly part: working directory, the variables discovery reads, the
/// open files. False when the process exited meanwhile (or its pid now
/// names another process).
#[cfg(target_os = "linux")]
fn details(p: &mut Proc) -> bool {
    use std::os::unix::ffi::OsStrExt as _;
    p.cwd = std::fs::read_link(format!("/proc/{}/cwd", p.pid)).ok();
    if let Some(environ) = read(p.pid, "environ", 256 * 1024) {
        for var in split_nul(&environ) {
            let Some(eq) = var.iter().position(|&b| b == b'=') else {
                continue;
            };
            let (name, value) = (&var[..eq], &var[eq + 1..]);
            let name = String::from_utf8_lossy(name);
            let value = std::ffi::OsStr::from_bytes(value);
            match name.as_ref() {
                "TMUX" => p.tmux = Some(value.to_string_lossy().into_owned()),
                "TMUX_PANE" => p.tmux_pane = Some(value.to_string_lossy().into_owned()),
                n if super::AGENT_VARS.contains(&n) => {
                    p.env.insert(n.to_string(), value.to_os_string());
                }
                _ => {}
            }
        }
    }
    if let Ok(fds) = std::fs::read_dir(format!("/proc/{}/fd", p.pid)) {
        for fd in fds.flatten().take(MAX_FDS) {
            if p.open_files.len() >= MAX_OPEN_FILES {
                break;
            }
            let Ok(target) = std::fs::read_link(fd.path()) else {
                continue;
            };
            let kept = target
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "jsonl" | "json" | "db" | "sqlite"));
            if target.is_absolute() && kept {
                p.open_files.push(target);
            }
        }
    }
    // Still the same process: a pid that exited and was reused meanwhile
    // would have lent us another process's details.
    basics(p.pid).is_some_and(|again| again.start == p.start)
}

/// When the system booted, Unix seconds (`btime` of /proc/stat).
#[cfg(target_os = "linux")]
pub(super) fn boot_time() -> Option<f64> {
    let stat = read_file("/proc/stat", 256 * 1024)?;
    String::from_utf8_lossy(&stat)
        .lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|t| t.trim().parse().ok())
}

/// Other platforms: unknown.
#[cfg(not(target_os = "linux"))]
pub(super) fn boot_time() -> Option<f64> {
    None
}

/// When `proc` started, Unix seconds, given the boot time.
pub(super) fn started_at(proc: &Proc, boot: f64) -> f64 {
    let ticks = rustix::param::clock_ticks_per_second().max(1);
    boot + proc.start as f64 / ticks as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_boot_time_is_in_the_past() {
        let boot = boot_time().expect("/proc/stat has btime");
        let now = crate::local::unix_now();
        assert!(boot > 0.0 && boot < now, "{boot} {now}");
        let me = Proc {
            start: 0,
            ..Proc::default()
        };
        assert_eq!(started_at(&me, boot), boot);
    }

    #[test]
    fn a_stat_line_is_read_whatever_the_name_holds() {
        let line = "4242 (a) (b) c) S 7 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 123456 0 0";
        assert_eq!(
            parse_stat(line),
            Some(("a) (b) c".to_string(), 7, false, 123_456))
        );
        let zombie = "9 (z) Z 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0 0";
        assert_eq!(parse_stat(zombie).map(|s| s.2), Some(true));
        assert_eq!(parse_stat("9 (cut) S 1 2"), None);
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn nul_separated_strings() {
        let all: Vec<&[u8]> = split_nul(b"a\0bc\0\0d\0").collect();
        assert_eq!(all, [&b"a"[..], b"bc", b"", b"d"]);
        assert_eq!(split_nul(b"").count(), 0);
        assert_eq!(split_nul(b"x").collect::<Vec<_>>(), [&b"x"[..]]);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_scan_sees_a_child_with_its_cwd_environment_and_start() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("codex");
        std::fs::copy("/bin/sleep", &bin).unwrap();
        let mut child = std::process::Command::new(&bin)
            .arg("30")
            .env_clear()
            .current_dir(tmp.path())
            .env("TMUX", "/tmp/sock,1,0")
            .env("TMUX_PANE", "%3")
            .env("CODEX_HOME", "/x/codex")
            .envs([("SECRET_TOKEN", "never kept")])
            .spawn()
            .unwrap();
        let procs = scan(&|p: &Proc| p.pid == child.id());
        let info = crate::owner::process_info(child.id());
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(procs.len(), 1, "{procs:?}");
        let p = &procs[0];
        assert_eq!(p.comm, "codex");
        assert!(p.named("codex"));
        assert_eq!(p.argv[1], "30");
        assert_eq!(p.ppid, std::process::id());
        assert_eq!(
            p.cwd.as_deref().map(|c| c.canonicalize().unwrap()),
            Some(tmp.path().canonicalize().unwrap())
        );
        assert_eq!(
            (p.tmux.as_deref(), p.tmux_pane.as_deref()),
            (Some("/tmp/sock,1,0"), Some("%3"))
        );
        assert_eq!(p.var("CODEX_HOME"), Some(std::ffi::OsStr::new("/x/codex")));
        assert_eq!(p.env.len(), 1, "only the agents' variables are kept");
        assert_eq!(Some(p.start), info.map(|i| i.start));
        // Started after this test process, and not in the future.
        let started = p.started_at.unwrap();
        let me = scan(&|q: &Proc| q.pid == std::process::id());
        assert!(started >= me[0].started_at.unwrap(), "{started}");
        assert!(started <= crate::local::unix_now() + 1.0, "{started}");
        // A process that is gone is not listed.
        assert!(scan(&|q: &Proc| q.pid == child.id()).is_empty());
    }
}
