//! `presence watch`: an event stream. The library's watcher computes the
//! events; this file only prints them. (`list --watch` is in `list.rs`.)

use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use presence::limits::MIN_POLL;
use presence::{Event, Registry, Row, WatchOptions, Watcher};
use signal_hook::consts::{SIGINT, SIGTERM};
use unicode_width::UnicodeWidthStr;

use super::json::{Opener, WatchEvent};
use super::output::{self, Out, Styled};
use super::{Ctx, Exit, signals};

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Print NDJSON: one object per line (json-output.md, under Learn more, documents every field)
    #[arg(long)]
    pub json: bool,
    /// Poll the directory every DUR instead of using native file events
    /// (for network and FUSE mounts) [default DUR: 2s, at least 100ms]
    #[arg(long, value_name = "DUR", num_args = 0..=1, default_missing_value = "2s",
          value_parser = poll_interval)]
    pub poll: Option<Duration>,
    /// Show the records of every label in this profile's directory, not only those its `show` names (other profiles' directories are not read)
    #[arg(long)]
    pub all_profiles: bool,
    /// Run CMD (after `--`) each time a session goes into status STATE (`up`, `down`: appears, leaves); repeatable; fields in its environment as PRESENCE_SESSION, PRESENCE_HOST, PRESENCE_TITLE, PRESENCE_STATUS, …
    #[arg(long = "on", value_name = "STATE")]
    pub on: Vec<String>,
    /// The command `--on` runs, without a shell
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<std::ffi::OsString>,
}

/// `--poll`'s value: a duration of at least [`MIN_POLL`] (a usage error
/// otherwise, as a poll stats every file).
fn poll_interval(text: &str) -> Result<Duration, String> {
    let d = presence::parse_duration(text).map_err(|e| e.to_string())?;
    if d < MIN_POLL {
        return Err(format!(
            "{} is too short; the minimum is {}",
            humantime::format_duration(d),
            humantime::format_duration(MIN_POLL)
        ));
    }
    Ok(d)
}

/// How long the main loop blocks before it looks for a signal.
const TICK: Duration = Duration::from_millis(100);

/// The watcher of the profile's directories, and the opener of its rows
/// for `--json`.
pub fn start(
    ctx: &Ctx,
    poll: Option<Duration>,
    all_profiles: bool,
) -> anyhow::Result<(Watcher, Opener)> {
    let registry: Registry = ctx.registry()?;
    let opener = Opener::new(&registry);
    let dir = super::output::dirs_shown(registry.profile());
    let mut opts = WatchOptions::default();
    opts.poll = poll;
    opts.all_profiles = all_profiles;
    let watcher = Watcher::new(registry, opts, presence::unix_now())
        .with_context(|| format!("cannot watch {dir}"))?;
    Ok((watcher, opener))
}

struct Printer {
    /// With `--json`: what each row says about opening it.
    json: Option<Opener>,
    seq: u64,
    epoch: String,
    /// The widths of the human lines' session, client@host and status
    /// columns: those of the widest cells seen so far (the initial set's
    /// at first), up to [`MAX_CELL`], so that the lines stay in columns.
    widths: [usize; 3],
    /// JSON lines held back to be written at once (the initial set's: one
    /// write instead of one per session).
    held: Option<String>,
}

/// The width of the event column of human lines: `update (status, title)`.
const EVENT_WIDTH: usize = 22;

/// The widest a padded column of human lines grows; a wider cell is shown
/// whole, beyond it.
const MAX_CELL: usize = 32;

/// The event column of a human line: `live` (the initial set), `up`,
/// `update (FIELDS)`, `down (REASON)`; fields that do not fit
/// [`EVENT_WIDTH`] are counted (`update (status, +2)`).
fn event_word(event: &str, extra: &Extra) -> String {
    match extra {
        Extra::Initial => "live".into(),
        Extra::Reason(reason) => format!("down ({})", reason_word(*reason)),
        Extra::Changed(c) => {
            let mut shown = c.len();
            loop {
                let mut text = c[..shown].join(", ");
                if shown < c.len() {
                    if shown > 0 {
                        text.push_str(", ");
                    }
                    text.push_str(&format!("+{}", c.len() - shown));
                }
                let word = format!("update ({text})");
                if word.len() <= EVENT_WIDTH || shown == 0 {
                    return word;
                }
                shown -= 1;
            }
        }
        Extra::None => event.to_string(),
    }
}

fn reason_word(reason: presence::DownReason) -> &'static str {
    match reason {
        presence::DownReason::Cleared => "cleared",
        presence::DownReason::Expired => "expired",
        presence::DownReason::Superseded => "superseded",
        _ => "gone",
    }
}

/// The session, client@host and status cells of a human line, made safe.
fn cells(row: &Row) -> [Styled; 3] {
    let r = &row.record;
    [
        Styled::new(if row.local { "*" } else { "" }).text(&r.session_id),
        Styled::new(r.client_or_source()).text("@").text(&r.host),
        Styled::new(&r.status),
    ]
}

impl Printer {
    /// Widens the columns for `rows` (the initial set, before it is printed).
    fn fit(&mut self, rows: &[&Row]) {
        for row in rows {
            self.widen(&cells(row));
        }
    }

    fn widen(&mut self, cells: &[Styled; 3]) {
        for (w, c) in self.widths.iter_mut().zip(cells) {
            *w = (*w).max(c.as_str().width().min(MAX_CELL));
        }
    }

    /// The time and event columns of a human line.
    fn lead(what: &str) -> String {
        format!(
            "{}  {what:<EVENT_WIDTH$}  ",
            chrono::Local::now().format("%H:%M:%S")
        )
    }

    fn line(&mut self, out: &mut Out, event: &str, row: &Row, extra: Extra) -> anyhow::Result<()> {
        self.seq += 1;
        if let Some(opener) = &self.json {
            let mut v = WatchEvent::new(event, self.seq, &self.epoch, presence::unix_now())
                .record(opener.row(row))?;
            match extra {
                Extra::Initial => v.initial = Some(true),
                Extra::Reason(r) => v.reason = Some(r),
                Extra::Changed(c) => v.changed = Some(c),
                Extra::None => {}
            }
            if let Some(held) = &mut self.held {
                held.push_str(&serde_json::to_string(&v)?);
                held.push('\n');
                return Ok(());
            }
            out.json_line(&v)?;
        } else {
            let cells = cells(row);
            self.widen(&cells);
            let mut line = Styled::new(Self::lead(&event_word(event, &extra)));
            for (cell, w) in cells.iter().zip(self.widths) {
                let pad = w.saturating_sub(cell.as_str().width());
                line = line.then(cell).text(format_args!("{:pad$}  ", ""));
            }
            out.line(&line.prose(&row.record.title).trimmed())?;
        }
        out.flush()?;
        Ok(())
    }

    /// The initial live set is complete: `count` sessions, all printed.
    fn ready(&mut self, out: &mut Out, count: usize) -> anyhow::Result<()> {
        self.seq += 1;
        if self.json.is_some() {
            let mut v = WatchEvent::new("ready", self.seq, &self.epoch, presence::unix_now());
            v.count = Some(count);
            out.json_line(&v)?;
        } else {
            // A person sees "nothing live" rather than a blank screen that
            // might still be loading.
            out.say(format_args!("{}{count} live", Self::lead("ready")))?;
        }
        out.flush()?;
        Ok(())
    }

    fn event(&mut self, out: &mut Out, e: &Event) -> anyhow::Result<()> {
        match e {
            Event::Up(row) => self.line(out, "up", row, Extra::None),
            Event::Update { row, changed } => {
                self.line(out, "update", row, Extra::Changed(changed))
            }
            Event::Down { row, reason } => self.line(out, "down", row, Extra::Reason(*reason)),
            Event::Ready { count } => self.ready(out, *count),
            _ => Ok(()),
        }
    }
}

enum Extra<'a> {
    None,
    Initial,
    Reason(presence::DownReason),
    Changed(&'a [&'static str]),
}

fn epoch() -> String {
    let mut b = [0u8; 8];
    // A clock-derived epoch is good enough if the system has no randomness.
    if getrandom::fill(&mut b).is_err() {
        b = presence::unix_now().to_bits().to_le_bytes();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub fn run(ctx: &Ctx, args: WatchArgs) -> anyhow::Result<Exit> {
    let sub = signals::subscribe(&[SIGINT, SIGTERM])?;
    let mut on = super::watch_on::On::new(args.on, args.command, args.json)?;
    let (mut watcher, opener) = start(ctx, args.poll, args.all_profiles)?;
    let mut p = Printer {
        json: args.json.then_some(opener),
        seq: 0,
        epoch: epoch(),
        widths: [0; 3],
        held: Some(String::new()),
    };
    let mut out = output::stdout();
    let initial = watcher.initial_events();
    p.fit(&initial.iter().filter_map(Event::row).collect::<Vec<_>>());
    for e in &initial {
        match e {
            Event::Up(row) => p.line(&mut out, "up", row, Extra::Initial)?,
            _ => {
                // The initial set's lines, then `ready`.
                if let Some(held) = p.held.take() {
                    out.verbatim(&held)?;
                }
                p.event(&mut out, e)?;
            }
        }
    }
    if let Some(held) = p.held.take() {
        out.verbatim(&held)?;
        out.flush()?;
    }
    // Until a signal, or until the reader of a pipe has gone: a status bar
    // that restarts closes its end, and a quiet directory might print
    // nothing for hours that would tell this one so.
    while sub.rx.try_recv().is_err() && !output::reader_gone() {
        for e in watcher.next_events(TICK, presence::unix_now)? {
            p.event(&mut out, &e)?;
            if let Some(on) = &mut on
                && let Err(err) = on.event(&e, presence::unix_now())
            {
                ctx.warn(format_args!("--on: cannot run the command: {err}"));
            }
        }
        if let Some(on) = &mut on {
            on.reap();
        }
    }
    Ok(Exit::Ok)
}
