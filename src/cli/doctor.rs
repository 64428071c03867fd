//! `presence doctor`: prints the library's checks, one line each.

use clap::Args;
use presence::{Check, Profile, Registry, Status};

use super::output::{self, Paint, Styled};
use super::{Ctx, Exit};

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
            ..Check::default()
        }],
    };
    let mut out = output::stdout();
    if args.json {
        out.json(&checks)?;
    } else {
        print(&mut out, &checks)?;
    }
    Ok(Exit::failure_if(
        checks.iter().any(|c| c.status == Status::Fail),
    ))
}

/// [`lines`] written to `out`, then the verdict (`doctor` and `setup`).
pub(super) fn print(out: &mut output::Out, checks: &[Check]) -> anyhow::Result<()> {
    out.lines(&lines(checks))?;
    out.say(verdict(checks))?;
    Ok(())
}

/// The last line: how many checks failed or warned.
fn verdict(checks: &[Check]) -> String {
    let count = |s: Status| checks.iter().filter(|c| c.status == s).count();
    match (count(Status::Warn), count(Status::Fail)) {
        (0, 0) => "doctor: every check passed".to_string(),
        (w, 0) => format!("doctor: {w} warning(s), nothing failed"),
        (w, f) => format!("doctor: {f} check(s) failed, {w} warning(s)"),
    }
}

/// The checks, one line each, with the fix under each that is not ok.
fn lines(checks: &[Check]) -> Vec<Styled> {
    let color = output::color_stdout();
    let mut lines = Vec::new();
    for c in checks {
        let (mark, paint) = match c.status {
            Status::Ok => ("ok  ", Paint::Green),
            Status::Warn => ("warn", Paint::Yellow),
            _ => ("FAIL", Paint::Red),
        };
        lines.push(
            Styled::default()
                .painted(color.then_some(paint), mark)
                .text(format_args!("  {:<16} {}", c.check, c.message)),
        );
        if c.status != Status::Ok
            && let Some(fix) = &c.fix
        {
            lines.push(Styled::new(format_args!("      {:<16} fix: {fix}", "")));
        }
    }
    lines
}
