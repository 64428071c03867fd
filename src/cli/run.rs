//! `presence run [publish flags] -- CMD ARGS…`: start CMD, publish a session
//! owned by it, keep it alive while CMD runs, clear it when CMD exits, and
//! exit with CMD's status.
//!
//! CMD starts before anything is published (under the record's lock, see
//! [`presence::Registry::spawn`]): a command that cannot be found (127) or
//! run (126) never shows on any device. Its environment names its record
//! (`PRESENCE_SESSION`, `PRESENCE_INSTANCE`, `PRESENCE_PROFILE`,
//! `PRESENCE_DIR`, and `PRESENCE_CONFIG` when one was named), so a bare
//! `presence publish --status waiting` inside updates it. Signals are passed
//! on to CMD and job control keeps working ([`signals::Forwarding`]).

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;

use anyhow::Context as _;
use clap::Args;
use rustix::process::{Pid, WaitId, WaitIdOptions, waitid};

use super::publish::FieldArgs;
use super::{Ctx, Exit, output, signals};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Runtime session id (required)
    #[arg(long, value_name = "ID")]
    pub session: String,
    /// Writer instance id [default: <host>-<first 8 chars of the device id>]
    #[arg(long, value_name = "ID")]
    pub instance: Option<String>,
    /// State word while CMD runs [default: working]
    #[arg(long, value_name = "S")]
    pub status: Option<String>,
    #[command(flatten)]
    pub fields: FieldArgs,
    /// The command to run, after `--`
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

pub fn run(ctx: &Ctx, args: RunArgs) -> anyhow::Result<Exit> {
    let status = args.status.unwrap_or_else(|| "working".into());
    let mut req = args.fields.request(args.session, Some(status))?;
    req.instance_id = args.instance;
    let registry = ctx.registry()?;
    if req.endpoint.is_none() {
        req.default_endpoint = super::open::here_endpoint(registry.host());
    }
    match super::publish::endpoint_check(&req, &registry, args.fields.strict) {
        Ok(Some(problem)) => ctx.warn(problem.warning()),
        Ok(None) => {}
        Err(exit) => return Ok(exit),
    }
    let dir = registry.profile().dir.clone();
    let mut command = Command::new(&args.command[0]);
    command.args(&args.command[1..]);
    if let Some(config) = &ctx.global.config {
        // The command's own `presence` must resolve the same profile.
        let config = std::path::absolute(config)
            .with_context(|| format!("cannot resolve {}", config.display()))?;
        command.env("PRESENCE_CONFIG", config);
    }
    // Before the command exists, so that no signal is missed.
    let forwarding = signals::Forwarding::new()?;
    let (mut child, guard) = match registry.spawn(&req, &mut command) {
        Ok(started) => started,
        Err(presence::Error::Spawn { program, error }) => {
            let (exit, why) = match error.kind() {
                std::io::ErrorKind::NotFound => (Exit::NotFound, "command not found".into()),
                _ => (Exit::CannotRun, error.to_string()),
            };
            let msg = format!("cannot run '{program}': {why}; nothing was published");
            output::error(msg);
            return Ok(exit);
        }
        Err(e) => {
            return Err(e).with_context(|| {
                format!(
                    "cannot publish session '{}' in {}",
                    output::id_in_error(&req.session_id),
                    dir.display()
                )
            });
        }
    };
    let forwarder = forwarding.start(child.id());
    // Wait for the exit without reaping, stop forwarding, then reap: until
    // it is reaped, the child's pid cannot pass to another process that a
    // late signal would then reach.
    if let Some(pid) = Pid::from_raw(child.id() as i32) {
        let how = WaitIdOptions::EXITED | WaitIdOptions::NOWAIT;
        while let Err(e) = waitid(WaitId::Pid(pid), how) {
            if e != rustix::io::Errno::INTR {
                break;
            }
        }
    }
    match forwarder {
        Ok(f) => f.stop(),
        Err(e) => ctx.warn(format_args!(
            "signals are not passed on to the command: {e:#}"
        )),
    }
    let status = child.wait().context("cannot wait for the command")?;
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
