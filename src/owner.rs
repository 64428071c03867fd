//! Owner processes: whether the process that owns a session still runs.
//!
//! A pid alone is not enough — pids are reused — so a record stores the
//! owner's start time next to its pid (`owner_start`), and an owner counts as
//! alive only if a process with that pid exists, is not a zombie, and started
//! at that time. The value is platform-specific (clock ticks since boot on
//! Linux, microseconds since the epoch on macOS) and only ever compared on the
//! device that wrote it.
//!
//! Linux reads `/proc`; macOS asks `proc_pidinfo` through `libc` (a few lines
//! instead of the `sysinfo` crate, which would enumerate every process for
//! one lookup).

/// What is known about an owner process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OwnerState {
    /// The process runs and is the one recorded.
    Alive,
    /// No such process, a zombie, or the pid now belongs to another process.
    Dead,
}

/// Facts about a running process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcessInfo {
    /// Start time, comparable only with other values from this function.
    pub start: u64,
    /// Whether it has exited and waits to be reaped.
    pub zombie: bool,
}

/// The start time and state of process `pid`, or `None` if it does not exist
/// (or the platform cannot say).
#[cfg(target_os = "linux")]
pub(crate) fn process_info(pid: u32) -> Option<ProcessInfo> {
    if pid == 0 {
        return None;
    }
    use std::io::Read;
    // /proc says its files are empty: a buffer of the usual size saves the
    // reads that growing one from nothing takes.
    let mut stat = String::with_capacity(512);
    std::fs::File::open(format!("/proc/{pid}/stat"))
        .and_then(|mut f| f.read_to_string(&mut stat))
        .ok()?;
    // The command name (field 2) may hold spaces and parentheses: skip past its last ')'.
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?;
    // After the state (field 3), starttime is field 22: 18 fields further.
    let start = fields.nth(18)?.parse().ok()?;
    Some(ProcessInfo {
        start,
        zombie: state == "Z" || state == "X",
    })
}

/// The start time and state of process `pid`, or `None` if it does not exist.
#[cfg(target_os = "macos")]
#[allow(unsafe_code)]
pub(crate) fn process_info(pid: u32) -> Option<ProcessInfo> {
    let pid = libc::c_int::try_from(pid).ok().filter(|&p| p > 0)?;
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
    // SAFETY: proc_bsdinfo is plain old data, so all-zero bytes are a valid
    // value, and proc_pidinfo writes at most `size` bytes into it.
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let n = unsafe {
        libc::proc_pidinfo(
            pid,
            libc::PROC_PIDTBSDINFO,
            0,
            (&mut info as *mut libc::proc_bsdinfo).cast(),
            size,
        )
    };
    if n != size {
        return None;
    }
    Some(ProcessInfo {
        start: info.pbi_start_tvsec * 1_000_000 + info.pbi_start_tvusec,
        // SZOMB in <sys/proc.h>.
        zombie: info.pbi_status == 5,
    })
}

/// Other platforms cannot tell a process's start time: owners are unsupported.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub(crate) fn process_info(_pid: u32) -> Option<ProcessInfo> {
    None
}

/// Whether the owner recorded as (`pid`, `start`) still runs.
pub(crate) fn owner_state(pid: u32, start: u64) -> OwnerState {
    match process_info(pid) {
        Some(info) if !info.zombie && info.start == start => OwnerState::Alive,
        _ => OwnerState::Dead,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_wrong_start_is_dead() {
        let me = std::process::id();
        let info = process_info(me).unwrap();
        assert!(!info.zombie);
        assert_eq!(owner_state(me, info.start), OwnerState::Alive);
        assert_eq!(owner_state(me, info.start + 1), OwnerState::Dead);
        assert!(process_info(0).is_none());
    }

    #[test]
    fn an_exited_child_is_dead_reaped_or_not() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // The pid exists from the fork on, so the start time is known at once.
        let start = process_info(pid).unwrap().start;
        // Wait until it has exited but before reaping: a zombie. The
        // deadline is for a child that never exits, not for a slow machine.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !process_info(pid).is_some_and(|i| i.zombie) {
            assert!(std::time::Instant::now() < deadline, "child never exited");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(owner_state(pid, start), OwnerState::Dead);
        child.wait().unwrap();
        assert_eq!(owner_state(pid, start), OwnerState::Dead);
    }
}
