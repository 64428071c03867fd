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
    let devices = registry.devices(presence::unix_now()).with_context(|| {
        format!(
            "cannot read {}",
            super::output::dirs_shown(registry.profile())
        )
    })?;
    let mut out = std::io::stdout().lock();
    if args.json {
        super::output::write_json(&mut out, &devices)?;
        return Ok(Exit::Ok);
    }
    let rows: Vec<[String; 6]> = devices
        .iter()
        .map(|d| {
            let mark = if d.this_device { "*" } else { " " };
            let id = if d.device_id.is_empty() {
                "-".to_string()
            } else {
                safe(&d.device_id.chars().take(8).collect::<String>()).into_owned()
            };
            let clock = match d.offset_s {
                // Our own records measure only how the file system stamps
                // them: worth showing when it is off (a network mount).
                None if d.this_device => "this device".to_string(),
                Some(o) if d.this_device && o.abs() < 1.0 => "this device".to_string(),
                // That device's clock minus this one's: positive runs ahead.
                Some(o) => format!(
                    "{o:+.1} s ({}, {} samples{})",
                    if o.abs() < 0.05 {
                        "in step"
                    } else if o < 0.0 {
                        "behind"
                    } else {
                        "ahead"
                    },
                    d.samples,
                    if d.stale { ", stale" } else { "" }
                ),
                None => "not learned yet (read with the skew tolerance)".to_string(),
            };
            [
                format!("{mark}{id}"),
                safe(&d.hosts.join(",")).into_owned(),
                d.instances.len().to_string(),
                format!("{}/{}", d.live, d.records),
                super::output::ago(d.last_seen_s),
                clock,
            ]
        })
        .collect();
    let headers = ["DEVICE", "HOSTS", "INSTANCES", "LIVE", "LAST SEEN", "CLOCK"];
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain([headers[i].len()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..headers.len()).map(width).collect();
    let line = |cells: [&str; 6]| {
        format!(
            "{:<w0$}  {:<w1$}  {:>w2$}  {:>w3$}  {:<w4$}  {}",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            cells[5],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3],
            w4 = widths[4],
        )
    };
    writeln!(out, "{}", line(headers).trim_end())?;
    for r in &rows {
        writeln!(out, "{}", line([&r[0], &r[1], &r[2], &r[3], &r[4], &r[5]]))?;
    }
    Ok(Exit::Ok)
}
