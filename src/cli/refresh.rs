//! `presence refresh`: one pass over this device's records (for cron or a
//! systemd timer), or a loop with `--every` until SIGINT/SIGTERM. Each pass
//! also publishes the live sessions of the local agents that `[discover]
//! agents` names, into the selected profile (once, with `--all-profiles`).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use presence::{Profile, RefreshOutcome, Registry, WatchOptions, Watcher};
use signal_hook::consts::{SIGINT, SIGTERM};

use super::{Ctx, Exit, UsageError, signals};

#[derive(Debug, Args)]
pub struct RefreshArgs {
    /// Keep refreshing every DUR until SIGINT/SIGTERM [default DUR: the profile's refresh_interval]
    #[arg(long, value_name = "DUR", num_args = 0..=1, value_parser = parse_every)]
    pub every: Option<Option<Duration>>,
    /// Cover every profile of the configuration: each profile's directory (once), and this device's records of any label in it; discovery still publishes into the selected profile alone
    #[arg(long)]
    pub all_profiles: bool,
    /// Print each pass as one JSON object per line
    #[arg(long)]
    pub json: bool,
}

fn parse_every(s: &str) -> Result<Duration, String> {
    let d = presence::parse_duration(s).map_err(|e| e.to_string())?;
    if d.is_zero() {
        return Err("the interval must be above zero".into());
    }
    Ok(d)
}

/// The registries a pass covers: one per distinct directory, the selected
/// profile's first (discovery publishes into it, and only there).
pub(super) fn registries(ctx: &Ctx, all_profiles: bool) -> anyhow::Result<Vec<Registry>> {
    let selected = ctx.registry()?;
    if !all_profiles {
        return Ok(vec![selected]);
    }
    let profiles = Profile::resolve_all(&ctx.selection(), &ctx.local)
        .context("cannot load the configuration")?;
    let mut seen = BTreeSet::from([selected.profile().dir.clone()]);
    let others: Vec<Registry> = profiles
        .into_iter()
        .filter(|p| seen.insert(p.dir.clone()))
        .map(|p| Registry::new(p, ctx.local.clone()))
        .collect();
    Ok(std::iter::once(selected).chain(others).collect())
}

/// One pass: discovery and the refresh of this device's records in the
/// first directory, the refresh alone in the others; then reads each
/// directory to learn the other writers' clocks (see [`Learners`] for what
/// `refresh --every` learns between passes).
fn pass(registries: &[Registry], any_label: bool) -> anyhow::Result<RefreshOutcome> {
    let mut total = RefreshOutcome::default();
    for (i, r) in registries.iter().enumerate() {
        let now = presence::unix_now();
        let out = match i {
            0 => presence::discover_and_refresh(r, any_label, now),
            _ => r.refresh(any_label, now),
        }
        .with_context(|| format!("cannot refresh records in {}", r.profile().dir.display()))?;
        total.merge(out);
        // What it cannot learn now it learns at the next pass: a refresh
        // that did its work does not fail for it.
        let _ = r.learn_clocks(presence::unix_now());
    }
    Ok(total)
}

/// Between the rounds of `refresh --every`, a watcher on each directory
/// reads what arrives, so that every writer's clock is learned from each
/// of its refreshes (two arrivals give it an estimate), not only from the
/// copies a round happens to read (each round still reads the directory
/// itself, which is all a network mount without file events gets). Its
/// events are not used. A watcher waits for a directory that does not exist
/// yet; one that stops (its directory gone, unmounted) is started again at
/// the next round.
struct Learners {
    stop: Arc<AtomicBool>,
    each: Vec<(Registry, Option<std::thread::JoinHandle<()>>)>,
}

impl Learners {
    fn new(registries: &[Registry]) -> Learners {
        Learners {
            stop: Arc::new(AtomicBool::new(false)),
            each: registries.iter().map(|r| (r.clone(), None)).collect(),
        }
    }

    /// Starts the watchers that do not run.
    fn keep_up(&mut self) {
        for (registry, thread) in &mut self.each {
            if thread.as_ref().is_none_or(|t| t.is_finished()) {
                let (registry, stop) = (registry.clone(), Arc::clone(&self.stop));
                *thread = std::thread::Builder::new()
                    .name("clock learner".into())
                    .spawn(move || learn(registry, &stop))
                    .ok();
            }
        }
    }
}

impl Drop for Learners {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// A learner's life: watch until told to stop or the watcher fails. A
/// directory that does not exist yet (nothing was published to it) is
/// waited for.
fn learn(registry: Registry, stop: &AtomicBool) {
    let mut opts = WatchOptions::default();
    opts.all_profiles = true;
    let mut watcher = loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        match Watcher::new(registry.clone(), opts, presence::unix_now()) {
            Ok(w) => break w,
            Err(_) => std::thread::sleep(Duration::from_secs(1)),
        }
    };
    while !stop.load(Ordering::Relaxed) {
        if watcher
            .next_events(Duration::from_secs(1), presence::unix_now)
            .is_err()
        {
            return;
        }
    }
}

fn report(ctx: &Ctx, json: bool, out: &RefreshOutcome) -> anyhow::Result<()> {
    let mut stdout = super::output::stdout();
    if json {
        let discover = out.discover.as_ref().map(|d| {
            serde_json::json!({
                "agents": d.agents,
                "found": d.found,
                "published": d.published.len(),
                "cleared": d.cleared.len(),
                "kept": d.kept,
                "hooked": d.hooked,
                "published_files": d.published,
                "cleared_files": d.cleared,
                "warnings": d.warnings,
            })
        });
        let line = serde_json::json!({
            "refreshed": out.refreshed.len(),
            "cleared": out.cleared.len(),
            "left": out.left,
            "changed": out.changed,
            "refreshed_files": out.refreshed,
            "cleared_files": out.cleared,
            "discover": discover,
        });
        stdout.json_line(&line)?;
    } else if !ctx.global.quiet {
        let mut line = format!(
            "refreshed {}, cleared {}, left {}",
            out.refreshed.len(),
            out.cleared.len(),
            out.left
        );
        if out.changed > 0 {
            line.push_str(&format!(", {} changed meanwhile", out.changed));
        }
        stdout.say(line)?;
        if let Some(d) = &out.discover {
            let agents = match d.agents.is_empty() {
                true => "discovery off".to_string(),
                false => d.agents.join(", "),
            };
            let mut line = format!(
                "discovered {} live session(s) ({agents}): published {}, cleared {}, unchanged {}",
                d.found,
                d.published.len(),
                d.cleared.len(),
                d.kept
            );
            if d.hooked > 0 {
                line.push_str(&format!(", {} kept by a hook's record", d.hooked));
            }
            stdout.say(line)?;
        }
        for f in &out.cleared {
            ctx.detail(format_args!("cleared {f}: its owner process is gone"));
        }
        if let Some(d) = &out.discover {
            for f in &d.published {
                ctx.detail(format_args!(
                    "published {f}: a discovered session, new or changed"
                ));
            }
            for f in &d.cleared {
                ctx.detail(format_args!(
                    "cleared {f}: its session is no longer found while its process runs"
                ));
            }
        }
    }
    if let Some(d) = &out.discover {
        for w in &d.warnings {
            ctx.warn(format_args!("discover: {w}"));
        }
    }
    stdout.flush()?;
    Ok(())
}

pub fn run(ctx: &Ctx, args: RefreshArgs) -> anyhow::Result<Exit> {
    let regs = registries(ctx, args.all_profiles)?;
    let Some(every) = args.every else {
        let out = pass(&regs, args.all_profiles)?;
        report(ctx, args.json, &out)?;
        return Ok(Exit::Ok);
    };
    let min_ttl = regs
        .iter()
        .map(|r| r.profile().ttl)
        .min()
        .unwrap_or_default();
    let interval = every.unwrap_or_else(|| {
        regs.iter()
            .map(|r| r.profile().refresh_interval)
            .min()
            .unwrap_or(presence::limits::DEFAULT_REFRESH_INTERVAL)
    });
    if let Some(problem) = presence::refresh_problem(interval, min_ttl) {
        let every = humantime::format_duration(interval);
        return Err(UsageError(format!("--every {every} {problem}")).into());
    }
    let sub = signals::subscribe(&[SIGINT, SIGTERM])?;
    let mut last = None;
    let mut learners = Learners::new(&regs);
    loop {
        learners.keep_up();
        match pass(&regs, args.all_profiles) {
            Ok(out) => {
                // In a loop, print a pass only when it differs from the last
                // one (or ended or published something).
                let found = out.discover.as_ref().map(|d| (d.found, d.kept, d.hooked));
                let news = out.discover.as_ref().is_some_and(|d| {
                    !d.published.is_empty() || !d.cleared.is_empty() || !d.warnings.is_empty()
                });
                let counts = (out.refreshed.len(), out.cleared.len(), out.left, found);
                if args.json || last != Some(counts) || !out.cleared.is_empty() || news {
                    report(ctx, args.json, &out)?;
                }
                last = Some(counts);
            }
            // A loop outlives passing trouble (an unmounted share, a full disk).
            Err(e) => ctx.warn(format_args!(
                "{e:#}; retrying in {}",
                humantime::format_duration(interval)
            )),
        }
        match sub.rx.recv_timeout(interval) {
            Err(RecvTimeoutError::Timeout) => continue,
            _ => break,
        }
    }
    Ok(Exit::Ok)
}
