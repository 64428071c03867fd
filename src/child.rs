//! The one way the library runs a helper program and reads what it says
//! (`tmux display-message` for discovery, `systemctl` and `crontab -l` for
//! doctor): with nothing on its standard input, its standard error
//! discarded, a deadline, and at most a bounded amount of its output kept.
//!
//! A hung helper (a user bus that never answers, a tmux server that is
//! stuck) is killed at the deadline, and its output is read while it runs,
//! so a helper that writes more than a pipe holds is not mistaken for a
//! hung one.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What a helper that finished in time printed, and how it exited.
#[derive(Debug)]
pub(crate) struct Output {
    /// Its exit status.
    pub status: ExitStatus,
    /// Its standard output: at most the limit given, lossily UTF-8.
    pub stdout: String,
}

/// Runs `cmd` and waits at most `timeout` for it to exit; keeps at most
/// `limit` bytes of its standard output. `None` when it could not be
/// started (not installed, …) or did not exit in time (it is then killed).
pub(crate) fn output_within(cmd: &mut Command, timeout: Duration, limit: u64) -> Option<Output> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + timeout;
    let (tx, rx) = mpsc::channel();
    if let Some(stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let mut pipe = stdout;
            let ok = (&mut pipe).take(limit).read_to_end(&mut bytes).is_ok();
            // The rest is not wanted, but the helper must not block on a
            // full pipe: read it away until it closes.
            let _ = std::io::copy(&mut pipe, &mut std::io::sink());
            let _ = tx.send(ok.then_some(bytes));
        });
    }
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    // A grandchild may still hold the pipe open: wait for the reader only
    // until the deadline.
    let left = deadline.saturating_duration_since(Instant::now());
    let bytes = rx.recv_timeout(left).ok()??;
    Some(Output {
        status,
        stdout: String::from_utf8_lossy(&bytes).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]);
        cmd
    }

    #[test]
    fn a_helper_that_exits_in_time_gives_its_output_and_status() {
        let out = output_within(&mut sh("echo hello; exit 3"), Duration::from_secs(20), 100)
            .expect("it finished");
        assert_eq!(out.stdout, "hello\n");
        assert_eq!(out.status.code(), Some(3));
    }

    #[test]
    fn only_the_limit_is_kept_and_a_large_output_does_not_block_the_helper() {
        // 1 MiB, far more than a pipe holds.
        let out = output_within(
            &mut sh("head -c 1048576 /dev/zero | tr '\\0' x"),
            Duration::from_secs(20),
            10,
        )
        .expect("it finished");
        assert_eq!(out.stdout, "xxxxxxxxxx");
        assert!(out.status.success());
    }

    #[test]
    fn a_hung_helper_is_killed_at_the_deadline() {
        let start = Instant::now();
        assert!(output_within(&mut sh("exec sleep 60"), Duration::from_millis(200), 100).is_none());
        // Killed, not waited for: far less than the sleep.
        assert!(start.elapsed() < Duration::from_secs(30));
    }

    #[test]
    fn a_program_that_is_not_there_is_none() {
        let mut cmd = Command::new("/nonexistent/presence-helper");
        assert!(output_within(&mut cmd, Duration::from_secs(1), 100).is_none());
    }
}
