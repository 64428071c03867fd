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
    let (checks, human) = match Profile::resolve(&ctx.selection(), &ctx.local) {
        Ok((profile, source)) => {
            let registry = Registry::new(profile, ctx.local.clone());
            let checks = presence::doctor(&registry, &source, presence::unix_now());
            let human = lines(&checks);
            (checks, human)
        }
        Err(e) => {
            let check = Check {
                check: "config",
                status: Status::Fail,
                message: e.to_string(),
                fix: config_fix(ctx, &e),
                ..Check::default()
            };
            // The message in its lines: a TOML error's caret diagram
            // under the line it points at.
            let chain =
                std::iter::successors(Some(&e as &(dyn std::error::Error + 'static)), |e| {
                    e.source()
                });
            let human = check_lines(&check, &output::error_lines(chain));
            (vec![check], human)
        }
    };
    let mut out = output::stdout();
    if args.json {
        out.json(&checks)?;
    } else {
        out.lines(&human)?;
        out.say(verdict(&checks))?;
    }
    Ok(Exit::failure_if(
        checks.iter().any(|c| c.status == Status::Fail),
    ))
}

/// What to do about a configuration that cannot be loaded, when its message
/// does not say already: fix the line a parse error points at, or go back
/// to the default file by dropping what named this one.
fn config_fix(ctx: &Ctx, e: &presence::Error) -> Option<String> {
    use presence::{ConfigError, Error};
    let elsewhere = match (&ctx.global.config, ctx.global.config_from_env) {
        (None, _) => "",
        (Some(_), true) => ", or unset PRESENCE_CONFIG to use the default file",
        (Some(_), false) => ", or drop --config to use the default file",
    };
    match e {
        Error::Config(ConfigError::Parse { .. }) => {
            Some(format!("fix the line shown in the file{elsewhere}"))
        }
        Error::Config(ConfigError::Read { path, .. }) => Some(format!(
            "check that {} is a file you can read{elsewhere}",
            path.display()
        )),
        _ => None,
    }
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
    checks
        .iter()
        .flat_map(|c| check_lines(c, std::slice::from_ref(&c.message)))
        .collect()
}

/// The lines of `check` whose message is `message`: its first line after
/// the mark and the name, the others under it, then the fix.
fn check_lines(check: &Check, message: &[String]) -> Vec<Styled> {
    let color = output::color_stdout();
    let (mark, paint) = match check.status {
        Status::Ok => ("ok  ", Paint::Green),
        Status::Warn => ("warn", Paint::Yellow),
        _ => ("FAIL", Paint::Red),
    };
    let (first, rest) = message
        .split_first()
        .map_or(("", &[][..]), |(f, r)| (f.as_str(), r));
    let mut lines = vec![
        Styled::default()
            .painted(color.then_some(paint), mark)
            .text(format_args!("  {:<16} {first}", check.check)),
    ];
    lines.extend(
        rest.iter()
            .map(|l| Styled::new(format_args!("      {:<16} {l}", ""))),
    );
    if check.status != Status::Ok
        && let Some(fix) = &check.fix
    {
        lines.push(Styled::new(format_args!("      {:<16} fix: {fix}", "")));
    }
    lines
}
