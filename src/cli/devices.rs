//! `presence devices`: every device with records in the directory, and what
//! this machine has learned of its clock.

use anyhow::Context as _;
use clap::Args;

use super::output::{self, Styled};
use super::{Ctx, Exit};

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
    let mut out = output::stdout();
    if args.json {
        out.json(&devices)?;
        return Ok(Exit::Ok);
    }
    let rows: Vec<[Styled; 7]> = devices
        .iter()
        .map(|d| {
            let mark = if d.this_device { "*" } else { " " };
            let id = if d.device_id.is_empty() {
                "-".to_string()
            } else {
                d.device_id.chars().take(8).collect::<String>()
            };
            let clock = match d.offset_s {
                // Our own records measure only how the file system stamps
                // them: worth showing when it is off (a network mount).
                None if d.this_device => "this device".to_string(),
                Some(o) if d.this_device && o.abs() < 1.0 => "this device".to_string(),
                // That device's clock minus this one's: positive runs ahead.
                Some(o) => format!(
                    "{} ({}, {} samples{})",
                    presence::signed_seconds(o, 1),
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
            // The start of the key's fingerprint: enough to compare by eye
            // with what `presence devices` prints on that device.
            let mut key = match &d.fingerprint {
                Some(f) => format!("{}…", f.chars().take(18).collect::<String>()),
                None if d.records > 0 => "unsigned".to_string(),
                None => "-".to_string(),
            };
            if d.forged > 0 {
                key.push_str(&format!(", {} forged", d.forged));
            }
            [
                Styled::new(format_args!("{mark}{id}")),
                Styled::new(d.hosts.join(",")),
                Styled::new(d.instances.len()),
                Styled::new(format_args!("{}/{}", d.live, d.records)),
                Styled::new(output::ago(d.last_seen_s)),
                Styled::new(key),
                Styled::new(clock),
            ]
        })
        .collect();
    let headers = [
        "DEVICE",
        "HOSTS",
        "INSTANCES",
        "LIVE",
        "LAST SEEN",
        "KEY",
        "CLOCK",
    ]
    .map(Styled::new);
    let width = |i: usize| {
        rows.iter()
            .chain([&headers])
            .map(|r| r[i].as_str().chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..headers.len()).map(width).collect();
    // Two spaces between columns; INSTANCES and LIVE to the right, the
    // last column unpadded.
    let line = |cells: &[Styled; 7]| {
        let mut line = Styled::default();
        for (i, cell) in cells.iter().enumerate() {
            let pad = " ".repeat(widths[i] - cell.as_str().chars().count());
            if i > 0 {
                line = line.text("  ");
            }
            line = match i {
                2 | 3 => line.text(pad).then(cell),
                6 => line.then(cell),
                _ => line.then(cell).text(pad),
            };
        }
        line
    };
    out.line(&line(&headers))?;
    for r in &rows {
        out.line(&line(r))?;
    }
    Ok(Exit::Ok)
}
