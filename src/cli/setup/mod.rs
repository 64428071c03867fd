//! `presence setup`: from an installed binary to a working, refreshed,
//! synced presence directory in one command, and `--uninstall` to take back
//! what it added.
//!
//! Every step is first planned as a [`Change`] (what it would do, in words,
//! and how), so that `--dry-run` prints exactly what a real run does, a run
//! with nothing to do says so, and the question on a terminal shows the
//! whole plan. What setup adds to files it does not own (`.stignore`, the
//! crontab) or writes where other tools look (unit files, launchd agents)
//! carries a marker line, so that `--uninstall` removes only what setup
//! added (and a unit, agent or crontab block edited since is left alone
//! unless `--force`). When nothing will refresh the records, setup says so
//! and what to do, even when it has nothing to change.
//!
//! What would publish more of this device — discovery of the local agents'
//! sessions (`agents.rs`), Claude Code's hooks (`claude.rs`) — is done only
//! when asked for: by `--agents` or `--claude-hooks`, or by a yes on a
//! terminal; `--yes` alone says what was found and how to turn it on.

mod agents;
mod claude;
mod config;
mod cron;
mod dir;
mod json_text;
mod plan;
mod stignore;
mod timers;
mod uninstall;

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use presence::{Profile, Registry, Selection, Status};

use super::output;
use super::{Ctx, Exit, UsageError};
use agents::AgentArg;
use plan::{Action, Change, Note, apply, ask, confirm};
use timers::systemd_user_works;

#[derive(Debug, Args)]
pub struct SetupArgs {
    /// Answer yes to every question (needed when stdin is not a terminal), but the ones
    /// about publishing more: discovery and Claude Code's hooks take --agents and
    /// --claude-hooks
    #[arg(short, long)]
    pub yes: bool,
    /// Print every change setup would make, and make none
    #[arg(long)]
    pub dry_run: bool,
    /// How to keep this device's records refreshed [default: systemd where `systemctl --user`
    /// works, launchd on macOS, else cron (setup adds its lines to your crontab)]
    #[arg(long, value_enum, value_name = "KIND")]
    pub timer: Option<Timer>,
    /// Install no refresher (the same as --timer none)
    #[arg(long, conflicts_with = "timer")]
    pub no_timer: bool,
    /// Turn on discovery of these local agents' sessions: [discover] agents in config.toml
    /// becomes this list, comma-separated, of claude-code, codex, hermes, opencode; `found`
    /// for those installed here; `none` turns discovery off [default: asked on a terminal
    /// when agents are found; with --yes, left as it is]
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        value_name = "AGENTS",
        conflicts_with = "uninstall"
    )]
    pub agents: Option<Vec<AgentArg>>,
    /// Add presence's hooks to Claude Code's settings.json ($CLAUDE_CONFIG_DIR or ~/.claude;
    /// the old file kept beside it) [default: asked on a terminal when Claude Code is found;
    /// with --yes, not added]
    #[arg(long, conflicts_with = "uninstall")]
    pub claude_hooks: bool,
    /// Remove what setup added (the refresher's units or agents, the .stignore lines, its
    /// hooks in Claude Code's settings); never records or the configuration
    #[arg(long)]
    pub uninstall: bool,
    /// Replace unit files and launchd agents edited since setup wrote them (or not written by
    /// it); with --uninstall, remove those setup wrote even if edited since
    #[arg(long)]
    pub force: bool,
}

/// What keeps records refreshed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Timer {
    /// systemd user units (service + timer) under ~/.config/systemd/user
    Systemd,
    /// launchd agents under ~/Library/LaunchAgents
    Launchd,
    /// lines in your crontab: a refresh at least every refresh_interval, a daily expire
    Cron,
    /// nothing
    None,
}

/// What this machine's user manager and tools offer.
struct Platform {
    home: PathBuf,
    /// `$XDG_CONFIG_HOME` or `~/.config`.
    config_home: PathBuf,
    /// The running binary, resolved: what units and agents start.
    binary: PathBuf,
}

impl Platform {
    fn detect(ctx: &Ctx) -> anyhow::Result<Platform> {
        let home = ctx.local.home.clone();
        let config_home = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| home.join(".config"));
        let exe = std::env::current_exe().context("cannot find the path of this program")?;
        let binary = std::fs::canonicalize(&exe).unwrap_or(exe);
        Ok(Platform {
            home,
            config_home,
            binary,
        })
    }

    fn unit_dir(&self) -> PathBuf {
        self.config_home.join("systemd/user")
    }

    fn agent_dir(&self) -> PathBuf {
        self.home.join("Library/LaunchAgents")
    }

    /// The timer for `--timer`, or the one this machine has.
    fn timer(&self, args: &SetupArgs) -> Timer {
        if args.no_timer {
            return Timer::None;
        }
        args.timer.unwrap_or_else(|| {
            if systemd_user_works() {
                Timer::Systemd
            } else if cfg!(target_os = "macos") {
                Timer::Launchd
            } else {
                Timer::Cron
            }
        })
    }
}

pub fn run(ctx: &Ctx, args: SetupArgs) -> anyhow::Result<Exit> {
    let interactive = std::io::stdin().is_terminal() && !args.yes;
    if !args.yes && !args.dry_run && !std::io::stdin().is_terminal() {
        return Err(UsageError(
            "setup asks before it changes anything, and stdin is not a terminal: pass --yes \
             (or --dry-run to see the plan)"
                .into(),
        )
        .into());
    }
    let platform = Platform::detect(ctx)?;
    let config_path = ctx
        .global
        .config
        .clone()
        .unwrap_or_else(|| ctx.local.config_file());
    let mut base = Selection::default();
    base.config = ctx.global.config.clone();
    base.profile = ctx.global.profile.clone();
    let (current, _) =
        Profile::resolve(&base, &ctx.local).context("cannot load the configuration")?;
    let timer = platform.timer(&args);

    let mut notes = Vec::new();
    // Why nothing will refresh the records once the plan is carried out.
    let mut missing = None;
    let plan = if args.uninstall {
        let dir = ctx.global.dir.clone().unwrap_or(current.dir.clone());
        let mut plan = uninstall::uninstall_plan(&platform, &dir, args.force, &mut notes)?;
        plan.extend(uninstall::claude_plan(&platform, &dir, &mut notes));
        if !current.discover.is_empty() {
            notes.push(Note::Say(format!(
                "discovery stays on for {} ([discover] agents in {}; --uninstall never changes \
                 the configuration): `presence setup --agents none` turns it off",
                current.discover.join(", "),
                config_path.display()
            )));
        }
        plan
    } else {
        let dir = dir::choose_dir(ctx, &current, interactive)?;
        // The resolver refuses what it would refuse in the file (/, ~, /etc…).
        let mut check = base.clone();
        check.dir = Some(dir.clone());
        Profile::resolve(&check, &ctx.local).context("cannot use that directory")?;
        let synced = dir::synced_root(&dir, &ctx.local.home);
        let found = agents::found(&ctx.local.home);
        let agents = agents::choose(
            args.agents.as_deref(),
            &current.discover,
            &found,
            interactive,
            &mut output::stdout(),
            &mut notes,
        )?;
        let hooks = claude_hooks(
            ctx,
            &platform,
            &args,
            &found,
            (&dir, synced.as_deref()),
            interactive,
            &mut notes,
        )?;
        let edit = config::Edit {
            profile: &current.name,
            dir: &dir,
            agents: agents.as_deref(),
        };
        let mut plan =
            config::config_plan(&config_path, &edit, synced.as_deref(), &ctx.local.home)?;
        if !dir.exists() {
            plan.push(Change {
                what: format!("create {} (mode 0700)", dir.display()),
                action: Action::MakeDir(dir.clone()),
            });
        }
        plan.extend(stignore::stignore_plan(&platform, &dir, &mut notes)?);
        plan.extend(hooks);
        // `refresh --all-profiles` covers every profile: it must keep up
        // with the shortest interval.
        let interval = Profile::resolve_all(&base, &ctx.local)
            .ok()
            .and_then(|all| all.iter().map(|p| p.refresh_interval).min())
            .unwrap_or(current.refresh_interval);
        missing = if timer == Timer::Cron {
            let want = cron::Want {
                binary: &platform.binary,
                interval,
                force: args.force,
            };
            cron::cron_plan(&want, &mut plan, &mut notes)?
        } else {
            let (timers, why) =
                timers::timer_plan(&platform, timer, interval, args.force, &mut notes)?;
            plan.extend(timers);
            why
        };
        plan
    };

    let mut out = output::stdout();
    if plan.is_empty() {
        out.say(format_args!(
            "nothing to change{}",
            match (&missing, args.uninstall) {
                (_, true) => ": setup has nothing installed here".to_string(),
                (Some(why), false) => format!(", but nothing refreshes records: {why}"),
                (None, false) => ": presence is set up".to_string(),
            }
        ))?;
    } else if args.dry_run {
        for c in &plan {
            show(&mut out, "would ", c)?;
        }
    } else {
        if interactive {
            for c in &plan {
                show(&mut out, "  ", c)?;
            }
            if let Some(why) = &missing {
                out.say(format_args!("  (and nothing will refresh records: {why})"))?;
            }
            if !confirm(&mut out, "Make these changes?")? {
                out.say("nothing changed")?;
                return Ok(Exit::Ok);
            }
        }
        for c in &plan {
            apply(&c.action).with_context(|| format!("cannot {}", c.what))?;
            show(&mut out, "", c)?;
        }
    }
    for note in &notes {
        let Note::Say(text) = note;
        for line in text.lines() {
            out.say(line)?;
        }
    }
    if let Some(why) = missing.as_ref().filter(|_| !plan.is_empty()) {
        out.say(format_args!("nothing refreshes records yet: {why}"))?;
    }
    if args.dry_run || args.uninstall {
        return Ok(Exit::Ok);
    }
    out.flush()?;
    drop(out);
    doctor(ctx, &base)
}

/// The change that adds presence's hooks to Claude Code's settings, when
/// `--claude-hooks` asks for it, or Claude Code is found here and the user
/// says yes on a terminal (else a note says how). Setup's own records
/// directory and the synced folder holding it are `shared`: a settings file
/// linked from there is refused.
fn claude_hooks(
    ctx: &Ctx,
    platform: &Platform,
    args: &SetupArgs,
    found: &[agents::Found],
    shared: (&std::path::Path, Option<&std::path::Path>),
    interactive: bool,
    notes: &mut Vec<Note>,
) -> anyhow::Result<Option<Change>> {
    let wanted = args.claude_hooks;
    if !wanted && !found.iter().any(|f| f.agent == "claude-code") {
        return Ok(None);
    }
    let link = claude::state_dir(&platform.home).join("settings.json");
    let checked = claude::read(&link, shared.0, shared.1)
        .and_then(|s| s.unhooked().map(|unhooked| (s, unhooked)));
    let settings = match checked {
        Ok((_, unhooked)) if unhooked.is_empty() => return Ok(None),
        Ok((s, _)) => s,
        Err(e) if wanted => return Err(e),
        Err(e) => {
            notes.push(Note::Say(format!(
                "Claude Code found, but setup cannot add presence's hooks to its settings: {e:#}"
            )));
            return Ok(None);
        }
    };
    let command = claude::hook_command(
        &platform.binary,
        ctx.global.profile.as_deref(),
        ctx.global.config.as_deref(),
    );
    if !wanted {
        let what = "Claude Code then runs presence's hook as each session starts, works, waits \
                    and ends, and the hook publishes the session (the agent, its status and the \
                    directory's name, never what you type)";
        if !interactive {
            notes.push(Note::Say(format!(
                "Claude Code found: `presence setup --claude-hooks` adds presence's hooks to {}; \
                 {what}",
                settings.shown
            )));
            return Ok(None);
        }
        let mut out = output::stdout();
        out.say(format_args!(
            "Claude Code found. Presence can add its hooks to {}: {what}.",
            settings.shown
        ))?;
        if !ask(&mut out, "Add presence's hooks to Claude Code's settings?")? {
            return Ok(None);
        }
    }
    settings.install(&command?)
}

/// Prints `c`'s words after `prefix`, and under them the lines it adds to a
/// file (a crontab line: this program's own text and this device's paths),
/// indented and as they are when nothing in them needs escaping, since made
/// safe their backslashes would be doubled.
fn show(out: &mut output::Out, prefix: &str, c: &Change) -> anyhow::Result<()> {
    out.say(format_args!("{prefix}{}", c.what))?;
    for line in c.lines() {
        if safe_to_copy(line) {
            out.verbatim(&format!("    {line}\n"))?;
        } else {
            out.say(format_args!("    {line}"))?;
        }
    }
    Ok(())
}

/// Whether `line` can reach the terminal as it is: one line, and nothing in
/// it the sanitizer would show as an escape (but a backslash).
fn safe_to_copy(line: &str) -> bool {
    !line.contains('\n')
        && matches!(
            presence::terminal_safe(&line.replace('\\', "")),
            std::borrow::Cow::Borrowed(_)
        )
}

/// Runs `presence doctor`'s checks on the profile as set up, prints them and
/// the verdict.
fn doctor(ctx: &Ctx, base: &Selection) -> anyhow::Result<Exit> {
    let (profile, source) =
        Profile::resolve(base, &ctx.local).context("cannot load the configuration")?;
    let registry = Registry::new(profile, ctx.local.clone());
    let checks = presence::doctor(&registry, &source, presence::unix_now());
    let mut out = output::stdout();
    out.blank()?;
    super::doctor::print(&mut out, &checks)?;
    Ok(Exit::failure_if(
        checks.iter().any(|c| c.status == Status::Fail),
    ))
}
