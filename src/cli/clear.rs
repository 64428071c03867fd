//! `presence clear`: end this device's record of a session by writing a
//! tombstone, which other devices see as fast as any write (a deletion would
//! linger: sync engines batch them).

use anyhow::Context as _;
use clap::Args;

use super::{Ctx, Exit, UsageError, output};

#[derive(Debug, Args)]
pub struct ClearArgs {
    /// Clear the records of this session id or key [default, when neither flag is given:
    /// $PRESENCE_SESSION of $PRESENCE_INSTANCE, which `presence run` gives its command]
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Clear the records of this writer instance
    #[arg(long, value_name = "ID")]
    pub instance: Option<String>,
    /// Clear every live record of this device in the profile (at logout or shutdown:
    /// `ExecStop=`, a logout hook)
    #[arg(long, conflicts_with_all = ["session", "instance"])]
    pub all: bool,
    /// With --all: in every profile of the configuration, each directory once, records of any
    /// label
    #[arg(long, requires = "all")]
    pub all_profiles: bool,
}

pub fn run(ctx: &Ctx, mut args: ClearArgs) -> anyhow::Result<Exit> {
    if args.all {
        return all(ctx, args.all_profiles);
    }
    // A bare clear: inside `presence run`, the end of its session.
    let bare = args.session.is_none() && args.instance.is_none();
    if bare {
        (args.session, args.instance) = super::publish::session_from_env(None, None)?;
    }
    if args.session.is_none() && args.instance.is_none() {
        return Err(
            UsageError("name what to clear: --session ID and/or --instance ID".into()).into(),
        );
    }
    let registry = ctx.registry()?;
    let dir = registry.profile().dir.clone();
    let outcome = registry
        .clear(
            args.session.as_deref(),
            args.instance.as_deref(),
            presence::unix_now(),
        )
        .with_context(|| format!("cannot clear records in {}", dir.display()))?;
    let mut out = output::stdout();
    for c in &outcome.cleared {
        let msg = format!("cleared {} ({})", c.record.session_id, c.file);
        if bare {
            // Inside `presence run`, stdout is the wrapped command's own
            // output: as for a bare publish, the clear says nothing there.
            ctx.detail(msg);
        } else if !ctx.global.quiet {
            out.say(msg)?;
        }
    }
    if outcome.changed_meanwhile > 0 {
        ctx.warn(format_args!(
            "{} record(s) changed while clearing and were left as they are; run clear again",
            outcome.changed_meanwhile
        ));
    }
    if outcome.cleared.is_empty() && !ctx.global.quiet {
        let what = match (&args.session, &args.instance) {
            (Some(s), Some(i)) => format!("session '{s}' of instance '{i}'"),
            (Some(s), None) => format!("session '{s}'"),
            (None, Some(i)) => format!("instance '{i}'"),
            (None, None) => unreachable!("checked above"),
        };
        let ended = if outcome.already_ended > 0 {
            " (already ended)"
        } else {
            ""
        };
        let msg = format!(
            "nothing to clear: no live record of this device for {what} in profile '{}'{ended}",
            registry.profile().name
        );
        output::notice(msg);
    }
    Ok(Exit::Ok)
}

/// `clear --all [--all-profiles]`: every live record of this device, in
/// the profile's directory or in every profile's. A directory that fails
/// does not stop the others; a record that changed while it was cleared is
/// tried again. Whatever is left live is an error (exit 1), said even with
/// `--quiet`: a logout hook must not leave sessions showing unsaid.
fn all(ctx: &Ctx, all_profiles: bool) -> anyhow::Result<Exit> {
    /// How many times a directory is gone through while records change.
    const TRIES: usize = 3;
    let registries = super::refresh::registries(ctx, all_profiles)?;
    let mut out = output::stdout();
    let (mut cleared, mut missed, mut failed) = (0, 0, false);
    for r in &registries {
        for attempt in 1..=TRIES {
            let outcome = match r.clear_all(all_profiles, presence::unix_now()) {
                Ok(outcome) => outcome,
                Err(e) => {
                    output::report(&anyhow::Error::new(e).context(format!(
                        "cannot clear records in {}",
                        r.profile().dir.display()
                    )));
                    failed = true;
                    break;
                }
            };
            for c in &outcome.cleared {
                if !ctx.global.quiet {
                    out.say(format!("cleared {} ({})", c.record.session_id, c.file))?;
                }
            }
            cleared += outcome.cleared.len();
            if outcome.changed_meanwhile == 0 {
                break;
            }
            if attempt == TRIES {
                missed += outcome.changed_meanwhile;
            }
        }
    }
    if missed > 0 {
        output::error(format_args!(
            "{missed} record(s) kept changing while they were cleared and are still live; run \
             `presence clear --all` again"
        ));
    }
    if failed || missed > 0 {
        return Ok(Exit::Failure);
    }
    if cleared == 0 && !ctx.global.quiet {
        let where_ = match registries.first() {
            Some(r) if !all_profiles => format!("in profile '{}'", r.profile().name),
            _ => "in any profile".to_string(),
        };
        output::notice(format!(
            "nothing to clear: no live record of this device {where_}"
        ));
    }
    Ok(Exit::Ok)
}
