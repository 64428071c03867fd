//! Signals for the long-running commands: for `refresh --every` and
//! `watch`, delivered on a channel so that the main loop can wait for "the
//! next tick or a signal, whichever comes first"; for `run`, passed on to
//! its command ([`Forwarding`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use anyhow::Context as _;
use rustix::process::{Pid, Signal, WaitId, WaitIdOptions, kill_process, waitid};
use signal_hook::iterator::exfiltrator::WithOrigin;
use signal_hook::iterator::{Handle, SignalsInfo};
use signal_hook::low_level::siginfo::Origin;

/// A subscription to some signals; unsubscribes when dropped.
pub struct Subscription {
    pub rx: Receiver<Origin>,
    handle: Handle,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.handle.close();
    }
}

/// Subscribes to `signals`; from now on they no longer end the process.
pub fn subscribe(signals: &[i32]) -> anyhow::Result<Subscription> {
    let mut info =
        SignalsInfo::<WithOrigin>::new(signals).context("cannot install signal handlers")?;
    let handle = info.handle();
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("presence-signals".into())
        .spawn(move || {
            for origin in info.forever() {
                if tx.send(origin).is_err() {
                    break;
                }
            }
        })
        .context("cannot start the signal thread")?;
    Ok(Subscription { rx, handle })
}

/// The signals `run` passes on to its command: every catchable signal that
/// ends, stops, continues or informs a process. Not SIGCHLD (the wrapper's
/// own news of its child), SIGPIPE (the runtime ignores it and the command
/// starts with it at its default), nor the faults a process raises on
/// itself (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT, SIGSYS).
const FORWARDED: &[i32] = &[
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGTERM,
    libc::SIGCONT,
    libc::SIGTSTP,
    libc::SIGTTIN,
    libc::SIGTTOU,
    libc::SIGWINCH,
    libc::SIGURG,
    libc::SIGIO,
    libc::SIGPROF,
    libc::SIGVTALRM,
    libc::SIGXCPU,
    libc::SIGXFSZ,
    #[cfg(any(target_os = "linux", target_os = "android"))]
    libc::SIGPWR,
    #[cfg(any(target_vendor = "apple", target_os = "freebsd", target_os = "openbsd"))]
    libc::SIGINFO,
];

/// The job-control stops, which the wrapper takes itself once its command
/// has stopped.
const STOPS: [i32; 3] = [libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU];

/// Which of a stop and a SIGCONT arrived last (see [`Forwarding`]).
const LAST_CONT: usize = 0;
const LAST_STOP: usize = 1;

/// How long the wrapper waits for its command to stop after a stop signal
/// before it gives up stopping itself (a command that handles SIGTSTP may
/// first restore the terminal; one that never stops keeps the job running).
const STOP_WAIT: Duration = Duration::from_secs(2);

/// `run`'s signal handling, set up before the command starts so that no
/// signal is missed; [`Forwarding::start`] passes them on once it runs.
///
/// A signal sent by another process (`kill`, a supervisor, a shell's `fg`)
/// is sent on to the command. One the kernel sends (Ctrl-C, Ctrl-Z, a
/// terminal resize or hang-up) already reached the command, which shares
/// the wrapper's process group, and is not sent twice — many programs treat
/// a second Ctrl-C as "quit now"; neither is one the command sent itself.
/// The exception is a hang-up when the wrapper leads its session: the kernel
/// sends that to the leader alone, so the wrapper passes it on.
///
/// Job control: after a SIGTSTP, SIGTTIN or SIGTTOU the wrapper waits for
/// the command to stop and then stops itself, so that the shell sees the
/// job stopped; on SIGCONT it continues the command. Signals reach the
/// forwarding thread coalesced and in no particular order, so a stop is
/// acted on only if no SIGCONT arrived after it (a flag the signal handlers
/// themselves set, in order of arrival).
pub struct Forwarding {
    info: SignalsInfo<WithOrigin>,
    last: Arc<AtomicUsize>,
}

/// The forwarding thread; [`Forwarder::stop`] ends it.
pub struct Forwarder {
    handle: Handle,
    thread: std::thread::JoinHandle<()>,
}

impl Forwarder {
    /// Stops forwarding. Call it before the command is reaped, so that no
    /// signal can reach another process that reuses its pid.
    pub fn stop(self) {
        self.handle.close();
        let _ = self.thread.join();
    }
}

impl Forwarding {
    /// Catches every signal of [`FORWARDED`] that is not ignored: one
    /// ignored on entry (`nohup` ignores SIGHUP; a shell without job control
    /// ignores SIGINT and SIGQUIT for background commands) stays ignored,
    /// and the command inherits it so, as it would without the wrapper.
    pub fn new() -> anyhow::Result<Forwarding> {
        let signals: Vec<i32> = FORWARDED.iter().copied().filter(|s| !ignored(*s)).collect();
        let last = Arc::new(AtomicUsize::new(LAST_CONT));
        let mut order = vec![(libc::SIGCONT, LAST_CONT)];
        order.extend(STOPS.map(|s| (s, LAST_STOP)));
        for (sig, value) in order {
            if signals.contains(&sig) {
                signal_hook::flag::register_usize(sig, Arc::clone(&last), value)
                    .context("cannot install signal handlers")?;
            }
        }
        let info =
            SignalsInfo::<WithOrigin>::new(&signals).context("cannot install signal handlers")?;
        Ok(Forwarding { info, last })
    }

    /// Starts passing signals on to process `child`.
    pub fn start(mut self, child: u32) -> anyhow::Result<Forwarder> {
        let handle = self.info.handle();
        let pid = Pid::from_raw(i32::try_from(child).context("child pid out of range")?)
            .context("child pid is zero")?;
        let thread = std::thread::Builder::new()
            .name("presence-forward".into())
            .spawn(move || {
                for origin in self.info.forever() {
                    forward(&origin, pid, &self.last);
                }
            })
            .context("cannot start the signal thread")?;
        Ok(Forwarder { handle, thread })
    }
}

fn forward(origin: &Origin, child: Pid, last: &AtomicUsize) {
    let sig = origin.signal;
    let stop = STOPS.contains(&sig);
    if stop && last.load(Ordering::SeqCst) != LAST_STOP {
        // A SIGCONT arrived after it: the stop is over already.
        return;
    }
    let sender = origin.process.as_ref().map(|p| p.pid);
    let from_other = sender.is_some_and(|p| p != child.as_raw_nonzero().get() && p != 0);
    // A terminal's hang-up reaches its session's leader alone. When that is
    // the wrapper (`exec presence run …`, a tmux pane's command, `ssh -t
    // host presence run …`), the command would never hear of it.
    let hangup_to_leader = sig == libc::SIGHUP
        && sender.is_none_or(|p| p == 0)
        && rustix::process::getsid(None).is_ok_and(|sid| sid == rustix::process::getpid());
    if (from_other || hangup_to_leader)
        && let Some(s) = Signal::from_named_raw(sig)
    {
        let _ = kill_process(child, s);
    }
    if stop && stopped(child, last) {
        let _ = kill_process(rustix::process::getpid(), Signal::STOP);
    }
}

/// Waits (up to [`STOP_WAIT`]) for `child` to stop; false when it does not,
/// or a SIGCONT arrives first. Asks without reaping, so the main thread's
/// wait still sees the exit.
fn stopped(child: Pid, last: &AtomicUsize) -> bool {
    let deadline = std::time::Instant::now() + STOP_WAIT;
    let how = WaitIdOptions::STOPPED | WaitIdOptions::NOWAIT | WaitIdOptions::NOHANG;
    while last.load(Ordering::SeqCst) == LAST_STOP {
        match waitid(WaitId::Pid(child), how) {
            Ok(Some(status)) if status.stopped() => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

/// Whether `sig` is ignored in this process (set so before it started).
#[allow(unsafe_code)]
fn ignored(sig: i32) -> bool {
    // SAFETY: with a null new action, sigaction only reads the current one
    // into `old`, a plain C struct for which all-zero bytes are valid.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}
