//! `presence list`: the live sessions, newest start first, as a table,
//! JSON, one line per row or a count — once, or again on every change
//! (`--watch`).

use std::cmp::Ordering;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use presence::{ListOptions, Registry, Row, Skipped};
use signal_hook::consts::{SIGINT, SIGTERM};

use super::output::{self, TableStyle};
use super::template::Template;
use super::{Ctx, Exit, signals};

/// `--sort`: what orders the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SortKey {
    /// Start time, newest first
    Started,
    /// When the record last arrived or changed here, newest first
    Seen,
    /// Host, A to Z
    Host,
    /// Client (or source), A to Z
    Client,
    /// Status word, A to Z
    Status,
    /// Title, A to Z
    Title,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print one JSON array (json-output.md, under Learn more, documents every field)
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
    /// Print again on every change until interrupted: the table is redrawn;
    /// with --count or --format, one line per change (for status bars)
    #[arg(long, conflicts_with_all = ["json", "all", "include_expired"])]
    pub watch: bool,
    /// Print each row through a template of `list --json` field names and
    /// {metadata.KEY}, e.g. '{client}@{host} {title}' ({{ and }} for braces,
    /// \t and \n for a tab and a newline); with --watch, the rows of each
    /// change on one line, separated by spaces
    #[arg(long, value_name = "TEMPLATE", conflicts_with_all = ["json", "count"])]
    pub format: Option<String>,
    /// Print only the number of rows (for prompts and status bars)
    #[arg(long, conflicts_with = "json")]
    pub count: bool,
    /// Order the rows by KEY (names A to Z ignoring case, empty ones last;
    /// ties by start time, then session id)
    #[arg(long, value_enum, value_name = "KEY", default_value_t = SortKey::Started)]
    pub sort: SortKey,
    /// Reverse the order
    #[arg(long)]
    pub reverse: bool,
    /// Never cut or hide a column to fit the terminal
    #[arg(long)]
    pub no_trunc: bool,
    /// Leave out the table's header line
    #[arg(long)]
    pub no_header: bool,
}

impl ListArgs {
    fn keeps(&self, row: &Row) -> bool {
        let r = &row.record;
        self.host.as_ref().is_none_or(|h| &r.host == h)
            && self
                .client
                .as_ref()
                .is_none_or(|c| r.client_or_source() == c)
            && self
                .session
                .as_ref()
                .is_none_or(|s| &r.session_id == s || &r.session_key == s)
    }

    /// Whether the rows come from the library in the order asked for.
    fn library_order(&self) -> bool {
        self.sort == SortKey::Started && !self.reverse
    }

    /// Puts `rows` in the order asked for. With `--all`, a group's losers
    /// follow its winner, whatever the order.
    fn sort(&self, rows: &mut Vec<Row>) {
        if self.library_order() {
            return;
        }
        let mut groups: Vec<Vec<Row>> = Vec::new();
        for row in rows.drain(..) {
            match groups.last_mut() {
                Some(group) if row.superseded_by.is_some() => group.push(row),
                _ => groups.push(vec![row]),
            }
        }
        groups.sort_by(|a, b| {
            let o = compare(self.sort, &a[0], &b[0]);
            if self.reverse { o.reverse() } else { o }
        });
        rows.extend(groups.into_iter().flatten());
    }

    fn style(&self) -> TableStyle {
        TableStyle {
            width: if self.no_trunc {
                None
            } else {
                output::terminal_width()
            },
            color: output::color_stdout(),
            header: !self.no_header,
            now: presence::unix_now(),
        }
    }
}

/// The order of `--sort key`; ties in the listing order.
fn compare(key: SortKey, a: &Row, b: &Row) -> Ordering {
    // Names A to Z ignoring case; an empty one last.
    let name = |x: &str, y: &str| {
        (x.is_empty(), x.to_lowercase(), x).cmp(&(y.is_empty(), y.to_lowercase(), y))
    };
    let (ra, rb) = (&a.record, &b.record);
    let first = match key {
        SortKey::Started => Ordering::Equal,
        SortKey::Seen => a.age_s.total_cmp(&b.age_s),
        SortKey::Host => name(&ra.host, &rb.host),
        SortKey::Client => name(ra.client_or_source(), rb.client_or_source()),
        SortKey::Status => name(&ra.status, &rb.status),
        SortKey::Title => name(&ra.title, &rb.title),
    };
    first.then_with(|| a.listing_order(b))
}

/// Reports on stderr what a listing passed over.
pub fn report(ctx: &Ctx, registry: &Registry, dir_exists: bool, skipped: &[Skipped]) {
    let profile = registry.profile();
    if !dir_exists && profile.dirs.len() > 1 {
        // Several directories: the others were listed; name each missing one.
        for (at, dir) in profile.dirs.iter().enumerate() {
            if (at == 0 && profile.dir_is_default) || dir.is_dir() {
                continue;
            }
            ctx.warn(format_args!(
                "presence directory {} does not exist (listed the others; \
                 check `{}` in the profile '{}')",
                dir.display(),
                if at == 0 { "dir" } else { "dirs" },
                profile.name
            ));
        }
    } else if !dir_exists && !profile.dir_is_default {
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
        row.dir
            .as_deref()
            .unwrap_or(&registry.profile().dir)
            .display()
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
    let opener = super::json::Opener::new(registry);
    let mut out = output::stdout();
    let mut array = out.json_array()?;
    let mut failed: Option<std::io::Error> = None;
    let (dir_exists, skipped) = registry
        .list_each(opts, presence::unix_now(), |row| {
            if !args.keeps(&row) {
                return true;
            }
            warn_redacted(ctx, registry, &row);
            match array.push(&opener.row(&row)) {
                Ok(()) => true,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            }
        })
        .with_context(|| format!("cannot list {}", output::dirs_shown(registry.profile())))?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    array.finish()?;
    report(ctx, registry, dir_exists, &skipped);
    Ok(Exit::Ok)
}

/// The table in the library's order: each row is cut to its cells as it
/// comes, so memory holds the cells, not the rows.
fn stream_table(
    ctx: &Ctx,
    registry: &Registry,
    args: &ListArgs,
    opts: ListOptions,
) -> anyhow::Result<Exit> {
    let style = args.style();
    let mut lines = Vec::new();
    let mut redacted = Vec::new();
    let (dir_exists, skipped) = registry
        .list_each(opts, presence::unix_now(), |row| {
            if args.keeps(&row) {
                if !row.redactions.is_empty() {
                    redacted.push(row.clone());
                }
                lines.push(output::TableLine::of(&row, style.now));
            }
            true
        })
        .with_context(|| format!("cannot list {}", output::dirs_shown(registry.profile())))?;
    report(ctx, registry, dir_exists, &skipped);
    for row in &redacted {
        warn_redacted(ctx, registry, row);
    }
    let mut out = output::stdout();
    if lines.is_empty() {
        say_none(ctx, registry);
    } else {
        out.lines(&output::table_lines(&lines, style))?;
    }
    out.flush()?;
    Ok(Exit::Ok)
}

/// Says on stderr (unless `--quiet`) that the profile has no live session.
fn say_none(ctx: &Ctx, registry: &Registry) {
    if !ctx.global.quiet {
        let msg = format!(
            "no live sessions in profile '{}' ({})",
            registry.profile().name,
            output::dirs_shown(registry.profile())
        );
        output::eline(&output::Styled::new(msg));
    }
}

/// `list --count`: rows are counted as they come, never held.
fn stream_count(
    ctx: &Ctx,
    registry: &Registry,
    args: &ListArgs,
    opts: ListOptions,
) -> anyhow::Result<Exit> {
    let mut count = 0usize;
    let (dir_exists, skipped) = registry
        .list_each(opts, presence::unix_now(), |row| {
            if args.keeps(&row) {
                warn_redacted(ctx, registry, &row);
                count += 1;
            }
            true
        })
        .with_context(|| format!("cannot list {}", output::dirs_shown(registry.profile())))?;
    report(ctx, registry, dir_exists, &skipped);
    let mut out = output::stdout();
    out.say(count)?;
    out.flush()?;
    Ok(Exit::Ok)
}

pub fn run(ctx: &Ctx, args: ListArgs) -> anyhow::Result<Exit> {
    let template = args.format.as_deref().map(Template::parse).transpose()?;
    if args.watch {
        return watch(ctx, &args, template.as_ref());
    }
    let registry = ctx.registry()?;
    let mut opts = ListOptions::default();
    opts.include_expired = args.include_expired;
    opts.all = args.all;
    opts.all_profiles = args.all_profiles;
    if args.json && !args.all && args.library_order() {
        return stream_json(ctx, &registry, &args, opts);
    }
    if args.count && !args.all && !args.json && template.is_none() {
        return stream_count(ctx, &registry, &args, opts);
    }
    if !args.count && !args.all && !args.json && template.is_none() && args.library_order() {
        return stream_table(ctx, &registry, &args, opts);
    }
    let mut listing = registry
        .list(opts, presence::unix_now())
        .with_context(|| format!("cannot list {}", output::dirs_shown(registry.profile())))?;
    listing.rows.retain(|r| args.keeps(r));
    if !args.json {
        // A forged record is shown only as data (`--all --json`) and by
        // `doctor`, which names its file: never on a row that looks real.
        listing.rows.retain(|r| r.forged.is_none());
    }
    args.sort(&mut listing.rows);
    report(ctx, &registry, listing.dir_exists, &listing.skipped);
    for row in &listing.rows {
        warn_redacted(ctx, &registry, row);
    }
    let mut out = output::stdout();
    if args.count {
        out.say(listing.rows.len())?;
    } else if let Some(t) = template {
        for row in &listing.rows {
            out.line(&t.render(row))?;
        }
    } else if args.json {
        let opener = super::json::Opener::new(&registry);
        let rows: Vec<_> = listing.rows.iter().map(|r| opener.row(r)).collect();
        out.json(&rows)?;
    } else if listing.rows.is_empty() {
        say_none(ctx, &registry);
    } else {
        out.lines(&output::table(&listing.rows, args.style()))?;
    }
    out.flush()?;
    Ok(Exit::Ok)
}

/// How long the watch loop blocks before it looks for a signal.
const TICK: Duration = Duration::from_millis(100);

/// `list --watch`: the table, redrawn in place on a terminal, appended as
/// snapshots separated by a blank line otherwise; with `--count` or
/// `--format`, one line each time it changes, which is what status bars
/// read (waybar, polybar, i3blocks, tmux).
fn watch(ctx: &Ctx, args: &ListArgs, template: Option<&Template>) -> anyhow::Result<Exit> {
    let sub = signals::subscribe(&[SIGINT, SIGTERM])?;
    let (mut watcher, _) = super::watch::start(ctx, None, args.all_profiles)?;
    let lines = args.count || template.is_some();
    let tty = output::stdout_is_terminal();
    let mut out = output::stdout();
    let mut first = true;
    let mut last: Option<output::Styled> = None;
    loop {
        let mut rows: Vec<Row> = watcher
            .live()
            .into_iter()
            .filter(|r| args.keeps(r))
            .collect();
        args.sort(&mut rows);
        if lines {
            let line = match template {
                Some(t) => {
                    let mut line = output::Styled::default();
                    for (n, r) in rows.iter().enumerate() {
                        if n > 0 {
                            line = line.text(" ");
                        }
                        line = line.then(&t.render(r));
                    }
                    line
                }
                None => output::Styled::new(rows.len()),
            };
            if last.as_ref() != Some(&line) {
                out.line(&line)?;
                last = Some(line);
            }
        } else {
            if tty {
                // Home, clear screen: a plain redraw.
                out.clear_screen()?;
            } else if !first {
                out.blank()?;
            }
            out.lines(&output::table(&rows, args.style()))?;
        }
        first = false;
        out.flush()?;
        let drawn = std::time::Instant::now();
        loop {
            if sub.rx.try_recv().is_ok() || output::reader_gone() {
                return Ok(Exit::Ok);
            }
            // Redraw on events, and a table on a terminal every second as
            // well so that its relative times stay true.
            let events = watcher.next_events(TICK, presence::unix_now)?;
            let tick = !lines && tty && drawn.elapsed() >= Duration::from_secs(1);
            if !events.is_empty() || tick {
                break;
            }
        }
    }
}
