//! `presence watch`: an event stream. The library's watcher computes the
//! events; this file only prints them. (`list --watch` is in `list.rs`.)

use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use presence::limits::MIN_POLL;
use presence::{Event, Registry, Row, WatchOptions, Watcher};
use signal_hook::consts::{SIGINT, SIGTERM};

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
}

impl Printer {
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
            out.json_line(&v)?;
        } else {
            let r = &row.record;
            let what = match extra {
                Extra::Reason(reason) => format!(
                    "down ({})",
                    serde_json::to_value(reason)?.as_str().unwrap_or("")
                ),
                Extra::Changed(c) => format!("update ({})", c.join(", ")),
                _ => event.to_string(),
            };
            let line = Styled::new(format_args!(
                "{}  {:<16} {}",
                chrono::Local::now().format("%H:%M:%S"),
                what,
                if row.local { "*" } else { "" },
            ))
            .text(&r.session_id)
            .text("  ")
            .text(r.client_or_source())
            .text("@")
            .text(&r.host)
            .text("  ")
            .text(&r.status)
            .text("  ")
            .prose(&r.title);
            out.line(&line)?;
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
            out.say(format_args!(
                "{}  {:<16} {count} live",
                chrono::Local::now().format("%H:%M:%S"),
                "ready"
            ))?;
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
    };
    let mut out = output::stdout();
    for e in watcher.initial_events() {
        match &e {
            Event::Up(row) => p.line(&mut out, "up", row, Extra::Initial)?,
            _ => p.event(&mut out, &e)?,
        }
    }
    while sub.rx.try_recv().is_err() {
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
