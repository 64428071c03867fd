//! `presence run [publish flags] -- CMD ARGS…`: publish a session owned by
//! CMD, keep it alive while CMD runs, clear it when CMD exits, and exit with
//! CMD's status.
//!
//! SIGINT, SIGTERM and SIGHUP sent to the wrapper by another process (`kill`,
//! systemd, a supervisor) are forwarded to CMD. Those the terminal sends
//! (Ctrl-C, hang-up) already reach CMD, which shares the wrapper's process
//! group, so they are not sent a second time — many programs treat a second
//! Ctrl-C as "quit now".

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;

use anyhow::Context as _;
use clap::Args;
use rustix::process::{Pid, Signal, kill_process};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

use super::publish::PublishArgs;
use super::{Ctx, Exit, signals};

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub session: PublishArgs,
    /// The command to run, after `--`
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

fn signal(sig: i32) -> Option<Signal> {
    match sig {
        SIGINT => Some(Signal::INT),
        SIGTERM => Some(Signal::TERM),
        SIGHUP => Some(Signal::HUP),
        _ => None,
    }
}

pub fn run(ctx: &Ctx, args: RunArgs) -> anyhow::Result<Exit> {
    let req = args.session.request()?;
    let registry = ctx.registry()?;
    let dir = registry.profile().dir.clone();
    // Subscribe before the child exists, so no signal is missed.
    let sub = signals::subscribe(&[SIGINT, SIGTERM, SIGHUP])?;
    let guard = registry.keep_alive(&req).with_context(|| {
        format!(
            "cannot publish session '{}' in {}",
            req.session_id,
            dir.display()
        )
    })?;
    let program = &args.command[0];
    let mut child = match Command::new(program).args(&args.command[1..]).spawn() {
        Ok(c) => c,
        Err(e) => {
            let exit = if e.kind() == std::io::ErrorKind::NotFound {
                Exit::NotFound
            } else {
                Exit::CannotRun
            };
            if let Err(end) = guard.end() {
                ctx.warn(format_args!("cannot clear the session record: {end}"));
            }
            let msg = format!("cannot run {}: {e}", program.to_string_lossy());
            eprintln!("presence: error: {}", super::safe(&msg));
            return Ok(exit);
        }
    };
    if let Err(e) = guard.set_owner(child.id()) {
        // The child may already have exited; the wait below reports it.
        ctx.detail(format_args!("cannot record the child as owner: {e}"));
    }
    let child_pid = Pid::from_raw(child.id() as i32);
    let forwarder = std::thread::spawn(move || {
        for origin in sub.rx.iter() {
            if origin.process.is_some()
                && let (Some(pid), Some(sig)) = (child_pid, signal(origin.signal))
            {
                let _ = kill_process(pid, sig);
            }
        }
    });
    let status = child.wait().context("cannot wait for the command")?;
    drop(forwarder);
    if let Some(e) = guard.last_error() {
        ctx.warn(format_args!("a refresh of the session record failed: {e}"));
    }
    if let Err(e) = guard.end() {
        ctx.warn(format_args!("cannot clear the session record: {e}"));
    }
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Child(code as u8),
        (None, Some(sig)) => Exit::Child((128 + sig) as u8),
        _ => Exit::Failure,
    })
}
