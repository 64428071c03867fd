//! `presence list`: the live sessions, newest first, as a table or JSON.

use std::io::Write;

use anyhow::Context as _;
use clap::Args;
use presence::{ListOptions, Listing, Registry, Row};

use super::{Ctx, output};

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print one JSON array (documented in docs/json-output.md)
    #[arg(long)]
    pub json: bool,
    /// Show every record: also ended, expired and superseded ones, each marked
    #[arg(long)]
    pub all: bool,
    /// Also show sessions whose newest record is ended or expired
    #[arg(long)]
    pub include_expired: bool,
    /// Show records of every profile label in the directory
    #[arg(long)]
    pub all_profiles: bool,
    /// Only records from this host
    #[arg(long, value_name = "H")]
    pub host: Option<String>,
    /// Only records of this client (or source)
    #[arg(long, value_name = "C")]
    pub client: Option<String>,
    /// Only records of this session id or key
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Redraw the table on every change until interrupted
    #[arg(long, conflicts_with_all = ["json", "all", "include_expired"])]
    pub watch: bool,
}

impl ListArgs {
    fn keeps(&self, row: &Row) -> bool {
        let r = &row.record;
        self.host.as_ref().is_none_or(|h| &r.host == h)
            && self
                .client
                .as_ref()
                .is_none_or(|c| &r.client == c || (r.client.is_empty() && &r.source == c))
            && self
                .session
                .as_ref()
                .is_none_or(|s| &r.session_id == s || &r.session_key == s)
    }
}

/// Reports what a listing passed over and what it redacted, on stderr.
pub fn report(ctx: &Ctx, registry: &Registry, listing: &Listing) {
    let profile = registry.profile();
    if !listing.dir_exists && !profile.dir_is_default {
        ctx.warn(format_args!(
            "presence directory {} does not exist yet (nothing has been published there; \
             check `dir` in the profile '{}')",
            profile.dir.display(),
            profile.name
        ));
    }
    for s in &listing.skipped {
        ctx.detail(format_args!("skipped {}: {}", s.file, s.reason));
    }
    for row in listing.rows.iter().filter(|r| !r.redactions.is_empty()) {
        let mut fields: Vec<&str> = row.redactions.iter().map(|r| r.field.as_str()).collect();
        fields.dedup();
        ctx.warn(format_args!(
            "{} carries credentials in {}; they are not shown, but the file in {} still holds them",
            row.file,
            fields.join(", "),
            profile.dir.display()
        ));
    }
}

pub fn run(ctx: &Ctx, args: ListArgs) -> anyhow::Result<u8> {
    if args.watch {
        return super::watch::list_watch(ctx, args.all_profiles, |r| args.keeps(r));
    }
    let registry = ctx.registry()?;
    let opts = ListOptions {
        include_expired: args.include_expired,
        all: args.all,
        all_profiles: args.all_profiles,
    };
    let mut listing = registry
        .list(opts, presence::unix_now())
        .with_context(|| format!("cannot list {}", registry.profile().dir.display()))?;
    listing.rows.retain(|r| args.keeps(r));
    report(ctx, &registry, &listing);
    let mut out = std::io::stdout().lock();
    if args.json {
        super::output::write_json(&mut out, &listing.rows)?;
    } else if listing.rows.is_empty() {
        if !ctx.global.quiet {
            eprintln!(
                "no live sessions in profile '{}' ({})",
                registry.profile().name,
                registry.profile().dir.display()
            );
        }
    } else {
        output::table(
            &mut out,
            &listing.rows,
            output::terminal_width(),
            output::color_stdout(),
        )?;
    }
    out.flush()?;
    Ok(0)
}
