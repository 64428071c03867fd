//! `presence show ID`: the newest record of one session, live or not.

use anyhow::Context as _;
use clap::Args;

use super::{Ctx, Exit, output};

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Session id or session key
    pub id: String,
    /// Print one JSON object (the shape of a `list --json` element)
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &Ctx, args: ShowArgs) -> anyhow::Result<Exit> {
    let registry = ctx.registry()?;
    let profile = registry.profile();
    let found = registry
        .show(&args.id, presence::unix_now())
        .with_context(|| format!("cannot read {}", super::output::dirs_shown(profile)))?;
    let Some((row, others)) = found else {
        let msg = format!(
            "no record with session id or key '{}' in profile '{}' ({}); \
             `presence list --all --all-profiles` shows every record",
            args.id,
            profile.name,
            super::output::dirs_shown(profile)
        );
        output::notice(msg);
        return Ok(Exit::Failure);
    };
    // Another session `list` shows beside this one makes the id ambiguous;
    // an expired, ended or superseded copy of it (an older run, another
    // instance's successor) does not.
    let rivals = others
        .iter()
        .filter(|r| r.live && r.superseded_by.is_none())
        .count();
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    if rivals > 0 {
        ctx.warn(format_args!(
            "{rivals} other live record{} matched '{}'; showing the newest \
             (`presence list` shows each)",
            plural(rivals),
            args.id
        ));
    } else if !others.is_empty() {
        ctx.detail(format_args!(
            "{} other record{} matched '{}' (expired, ended or superseded); showing the newest",
            others.len(),
            plural(others.len()),
            args.id
        ));
    }
    let mut out = output::stdout();
    if args.json {
        let opener = super::json::Opener::new(&registry);
        out.json(&opener.row(&row))?;
        return Ok(Exit::Ok);
    }
    let r = &row.record;
    let mut line = |k: &str, v: &str| -> std::io::Result<()> {
        if v.is_empty() {
            Ok(())
        } else {
            let line = output::Styled::new(format_args!("{k:<12} "));
            // The title is free text: its emoji are shown as they are.
            out.line(&if k == "title" {
                line.prose(v)
            } else {
                line.text(v)
            })
        }
    };
    let state = if row.live {
        format!(
            "live, expires in {}",
            output::short_duration(row.expires_in_s.unwrap_or(0.0))
        )
    } else {
        row.state.to_string()
    };
    line("session", &r.session_id)?;
    if r.session_key != r.session_id {
        line("key", &r.session_key)?;
    }
    line("state", &state)?;
    line("status", &r.status)?;
    line("title", &r.title)?;
    line("client", &r.client)?;
    line("source", &r.source)?;
    line("model", &r.model)?;
    line("cwd", &r.cwd)?;
    line("endpoint", &r.endpoint)?;
    line("host", &r.host)?;
    line("profile", &r.profile)?;
    line("instance", &r.instance_id)?;
    line(
        "device",
        if row.local {
            "this device"
        } else {
            &r.device_id
        },
    )?;
    if let Some(up) = output::up_s(&row, presence::unix_now()) {
        line("up", &output::short_duration(up))?;
    }
    line("seen", &output::ago(row.age_s))?;
    if let Some(c) = row.claimed_age_s {
        line("updated", &format!("{} (writer's clock)", output::ago(c)))?;
    }
    if r.pid != 0 {
        line("pid", &r.pid.to_string())?;
    }
    for (k, v) in &r.metadata {
        line(&format!("meta.{k}"), v)?;
    }
    line("file", &row.file)?;
    Ok(Exit::Ok)
}
