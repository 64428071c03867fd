//! `presence list`: the live sessions, newest first, as a table or JSON.

use std::io::Write;

use anyhow::Context as _;
use clap::Args;
use presence::{ListOptions, Registry, Row, Skipped};

use super::{Ctx, Exit, output};

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
    /// Show the records of every label in this profile's directory, not only those its `show` names (other profiles' directories are not read)
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
    #[arg(long, conflicts_with_all = ["json", "all", "include_expired", "format", "count"])]
    pub watch: bool,
    /// Print each row through a template of `list --json` field names,
    /// e.g. '{client}@{host} {title}' ({{ and }} for braces)
    #[arg(long, value_name = "TEMPLATE", conflicts_with_all = ["json", "count"])]
    pub format: Option<String>,
    /// Print only the number of rows (for prompts and status bars)
    #[arg(long, conflicts_with = "json")]
    pub count: bool,
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

/// Reports on stderr what a listing passed over.
pub fn report(ctx: &Ctx, registry: &Registry, dir_exists: bool, skipped: &[Skipped]) {
    let profile = registry.profile();
    if !dir_exists && !profile.dir_is_default {
        ctx.warn(format_args!(
            "presence directory {} does not exist yet (nothing has been published there; \
             check `dir` in the profile '{}')",
            profile.dir.display(),
            profile.name
        ));
    }
    for s in skipped {
        ctx.detail(format_args!("skipped {}: {}", s.file, s.reason));
    }
}

/// Warns on stderr that a shown row's file carries credentials (redacted in the output).
fn warn_redacted(ctx: &Ctx, registry: &Registry, row: &Row) {
    if row.redactions.is_empty() {
        return;
    }
    let mut fields: Vec<&str> = row.redactions.iter().map(|r| r.field.as_str()).collect();
    fields.dedup();
    ctx.warn(format_args!(
        "{} carries credentials in {}; they are not shown, but the file in {} still holds them",
        row.file,
        fields.join(", "),
        registry.profile().dir.display()
    ));
}

/// `list --json` without `--all`: rows are written as they come, one per
/// line inside one JSON array, so memory does not grow with the output.
fn stream_json(
    ctx: &Ctx,
    registry: &Registry,
    args: &ListArgs,
    opts: ListOptions,
) -> anyhow::Result<Exit> {
    let stdout = std::io::stdout().lock();
    let mut w = std::io::BufWriter::with_capacity(1 << 16, stdout);
    w.write_all(b"[")?;
    let mut first = true;
    let mut failed: Option<std::io::Error> = None;
    let (dir_exists, skipped) = registry
        .list_each(opts, presence::unix_now(), |row| {
            if !args.keeps(&row) {
                return true;
            }
            warn_redacted(ctx, registry, &row);
            let sep: &[u8] = if first { b"\n" } else { b",\n" };
            first = false;
            let written = w
                .write_all(sep)
                .and_then(|()| serde_json::to_writer(&mut w, &row).map_err(std::io::Error::from));
            match written {
                Ok(()) => true,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            }
        })
        .with_context(|| format!("cannot list {}", registry.profile().dir.display()))?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    w.write_all(if first { b"]\n" } else { b"\n]\n" })?;
    w.flush()?;
    report(ctx, registry, dir_exists, &skipped);
    Ok(Exit::Ok)
}

pub fn run(ctx: &Ctx, args: ListArgs) -> anyhow::Result<Exit> {
    if args.watch {
        return super::watch::list_watch(ctx, args.all_profiles, |r| args.keeps(r));
    }
    let registry = ctx.registry()?;
    let mut opts = ListOptions::default();
    opts.include_expired = args.include_expired;
    opts.all = args.all;
    opts.all_profiles = args.all_profiles;
    let template = args
        .format
        .as_deref()
        .map(super::template::Template::parse)
        .transpose()?;
    if args.json && !args.all {
        return stream_json(ctx, &registry, &args, opts);
    }
    let mut listing = registry
        .list(opts, presence::unix_now())
        .with_context(|| format!("cannot list {}", registry.profile().dir.display()))?;
    listing.rows.retain(|r| args.keeps(r));
    report(ctx, &registry, listing.dir_exists, &listing.skipped);
    for row in &listing.rows {
        warn_redacted(ctx, &registry, row);
    }
    let mut out = std::io::stdout().lock();
    if args.count {
        writeln!(out, "{}", listing.rows.len())?;
    } else if let Some(t) = template {
        for row in &listing.rows {
            writeln!(out, "{}", t.render(row))?;
        }
    } else if args.json {
        output::write_json(&mut out, &listing.rows)?;
    } else if listing.rows.is_empty() {
        if !ctx.global.quiet {
            let msg = format!(
                "no live sessions in profile '{}' ({})",
                registry.profile().name,
                registry.profile().dir.display()
            );
            eprintln!("{}", super::safe(&msg));
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
    Ok(Exit::Ok)
}
