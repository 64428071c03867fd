//! `presence expire`: garbage-collect the profile's directory.

use anyhow::Context as _;
use clap::Args;

use super::{Ctx, Exit, output};

#[derive(Debug, Args)]
pub struct ExpireArgs {
    /// Only list what would be deleted
    #[arg(long)]
    pub dry_run: bool,
    /// Print the outcome as JSON
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &Ctx, args: ExpireArgs) -> anyhow::Result<Exit> {
    let registry = ctx.registry()?;
    let dir = output::dirs_shown(registry.profile());
    let out = registry
        .expire(presence::unix_now(), args.dry_run)
        .with_context(|| format!("cannot expire records in {dir}"))?;
    let mut stdout = output::stdout();
    if args.json {
        let v = serde_json::json!({
            "dry_run": args.dry_run,
            "removed": out.removed,
            "changed": out.changed,
            "kept": out.kept,
        });
        stdout.json(&v)?;
        return Ok(Exit::Ok);
    }
    if ctx.global.quiet {
        return Ok(Exit::Ok);
    }
    let verb = if args.dry_run {
        "would remove"
    } else {
        "removed"
    };
    for g in &out.removed {
        let file = match &g.dir {
            Some(dir) => dir.join(&g.file).display().to_string(),
            None => g.file.clone(),
        };
        stdout.say(format_args!("{verb} {file} ({})", g.reason.describe()))?;
    }
    let mut summary = format!(
        "{verb} {} file{}, kept {}",
        out.removed.len(),
        if out.removed.len() == 1 { "" } else { "s" },
        out.kept
    );
    if out.changed > 0 {
        summary.push_str(&format!(
            " ({} changed meanwhile and were kept)",
            out.changed
        ));
    }
    stdout.say(summary)?;
    Ok(Exit::Ok)
}
