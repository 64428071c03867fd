//! `presence devices`: every device with records in the directory, and what
//! this machine has learned of its clock.

use std::io::Write;

use anyhow::Context as _;
use clap::Args;

use super::{Ctx, Exit, safe};

#[derive(Debug, Args)]
pub struct DevicesArgs {
    /// Print one JSON array
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &Ctx, args: DevicesArgs) -> anyhow::Result<Exit> {
    let registry = ctx.registry()?;
    let devices = registry
        .devices(presence::unix_now())
        .with_context(|| format!("cannot read {}", registry.profile().dir.display()))?;
    let mut out = std::io::stdout().lock();
    if args.json {
        super::output::write_json(&mut out, &devices)?;
        return Ok(Exit::Ok);
    }
    writeln!(out, "DEVICE    HOSTS            RECORDS  LIVE  CLOCK")?;
    for d in &devices {
        let id = if d.device_id.is_empty() {
            "-".to_string()
        } else {
            presence::terminal_safe(&d.device_id.chars().take(8).collect::<String>()).into_owned()
        };
        let mark = if d.this_device { "*" } else { " " };
        let hosts = safe(&d.hosts.join(",")).into_owned();
        let clock = match d.offset_s {
            Some(o) => format!(
                "{}{:+.1} s ({} samples{})",
                if o < 0.0 { "behind " } else { "ahead " },
                o,
                d.samples,
                if d.stale { ", stale" } else { "" }
            ),
            None => "not learned yet (read with the skew tolerance)".to_string(),
        };
        writeln!(
            out,
            "{mark}{id:<8} {hosts:<16} {:>7} {:>5}  {clock}",
            d.records, d.live
        )?;
    }
    Ok(Exit::Ok)
}
