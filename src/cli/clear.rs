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
}

pub fn run(ctx: &Ctx, mut args: ClearArgs) -> anyhow::Result<Exit> {
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
