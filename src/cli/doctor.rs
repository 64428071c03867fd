//! `presence doctor`: prints the library's checks, one line each.

use std::io::Write;

use clap::Args;
use presence::{Check, Profile, Registry, Status};

use super::{Ctx, Exit, safe};

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the checks as a JSON array
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &Ctx, args: DoctorArgs) -> anyhow::Result<Exit> {
    let checks = match Profile::resolve(&ctx.selection(), &ctx.local) {
        Ok((profile, source)) => {
            let registry = Registry::new(profile, ctx.local.clone());
            presence::doctor(&registry, &source, presence::unix_now())
        }
        Err(e) => vec![Check {
            check: "config",
            status: Status::Fail,
            message: e.to_string(),
            fix: Some("fix the file (the message names the line), or drop --config".into()),
        }],
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        super::output::write_json(&mut out, &checks)?;
    } else {
        print(&mut out, &checks)?;
    }
    Ok(Exit::failure_if(
        checks.iter().any(|c| c.status == Status::Fail),
    ))
}

/// The checks, one line each, with the fix under each that is not ok.
pub(super) fn print(out: &mut impl Write, checks: &[Check]) -> anyhow::Result<()> {
    let color = super::output::color_stdout();
    for c in checks {
        let (mark, style) = match c.status {
            Status::Ok => ("ok  ", "\x1b[32m"),
            Status::Warn => ("warn", "\x1b[33m"),
            _ => ("FAIL", "\x1b[31m"),
        };
        let mark = if color {
            format!("{style}{mark}\x1b[0m")
        } else {
            mark.to_string()
        };
        writeln!(out, "{mark}  {:<16} {}", c.check, safe(&c.message))?;
        if c.status != Status::Ok
            && let Some(fix) = &c.fix
        {
            writeln!(out, "      {:<16} fix: {}", "", safe(fix))?;
        }
    }
    Ok(())
}
