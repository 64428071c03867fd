//! `presence expire`: garbage-collect the profile's directory.

use std::io::Write;

use anyhow::Context as _;
use clap::Args;

use super::{Ctx, Exit, safe};

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
    let dir = super::output::dirs_shown(registry.profile());
    let out = registry
        .expire(presence::unix_now(), args.dry_run)
        .with_context(|| format!("cannot expire records in {dir}"))?;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let v = serde_json::json!({
            "dry_run": args.dry_run,
            "removed": out.removed,
            "changed": out.changed,
            "kept": out.kept,
        });
        super::output::write_json(&mut stdout, &v)?;
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
        writeln!(stdout, "{verb} {} ({})", safe(&file), g.reason.describe())?;
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
    writeln!(stdout, "{summary}")?;
    Ok(Exit::Ok)
}
