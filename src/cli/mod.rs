//! Command-line arguments (clap derive) and the dispatch to one file per
//! subcommand. Flags become library types here; the library never sees clap.

mod clear;
mod completions;
mod config_cmd;
mod devices;
mod doctor;
pub mod exit;
mod expire;
mod help;
mod hook;
mod json;
mod list;
mod open;
pub mod output;
mod publish;
mod refresh;
mod run;
mod setup;
mod show;
mod signals;
mod template;
mod watch;

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
pub use exit::Exit;
use presence::{LocalDirs, Profile, Registry, Selection};

/// See each other's live sessions through a shared, synced directory.
#[derive(Debug, Parser)]
#[command(name = "presence", version, long_version = long_version(), about, long_about = None,
          max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every subcommand accepts, shown under their own heading.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub struct Global {
    /// Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]
    #[arg(long, global = true, env = "PRESENCE_PROFILE", value_name = "NAME")]
    pub profile: Option<String>,
    /// Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]
    #[arg(long, global = true, env = "PRESENCE_CONFIG", value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Use this records directory instead of the profile's, this once [default:
    /// $PRESENCE_DIR, which `presence run` gives its command, unless --profile names
    /// another profile than $PRESENCE_PROFILE]
    #[arg(long, global = true, value_name = "PATH")]
    pub dir: Option<PathBuf>,
    /// Report skipped files and other details on stderr
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// Print only errors
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
}

// Parsed once per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Publish this device's record of a session, or update the fields given
    #[command(after_help = help::PUBLISH)]
    Publish(publish::PublishCmd),
    /// List live sessions, newest start first
    #[command(visible_alias = "ls")]
    #[command(after_help = help::LIST)]
    List(list::ListArgs),
    /// Show the newest record of one session (by session id or key)
    #[command(after_help = help::SHOW)]
    Show(show::ShowArgs),
    /// Open a live session: attach to its tmux, ssh or mosh, or its web page
    #[command(after_help = help::OPEN)]
    Open(open::OpenArgs),
    /// End this device's record of a session (writes a tombstone)
    #[command(after_help = help::CLEAR)]
    Clear(clear::ClearArgs),
    /// Re-publish this device's records whose owner runs; clear those whose owner died
    #[command(after_help = help::REFRESH)]
    Refresh(refresh::RefreshArgs),
    /// Run a command, keeping its session published while it runs
    #[command(after_help = help::RUN)]
    Run(run::RunArgs),
    /// Delete expired records, old tombstones, stale conflict copies and temp files
    #[command(after_help = help::EXPIRE)]
    Expire(expire::ExpireArgs),
    /// Print the live sessions, `ready`, then one line per change (up, update, down)
    #[command(after_help = help::WATCH)]
    Watch(watch::WatchArgs),
    /// Publish and clear sessions from an agent's hook events (Hermes Agent)
    #[command(after_help = help::HOOK)]
    Hook(hook::HookArgs),
    /// Set this device up: the synced directory, the configuration, .stignore, a refresher
    #[command(after_help = help::SETUP)]
    Setup(setup::SetupArgs),
    /// Check the configuration, the directory, its sync engine and its records
    #[command(after_help = help::DOCTOR)]
    Doctor(doctor::DoctorArgs),
    /// List the devices with records in the directory and their learned clocks
    #[command(after_help = help::DEVICES)]
    Devices(devices::DevicesArgs),
    /// Show or create the configuration file
    #[command(after_help = help::CONFIG)]
    Config(config_cmd::ConfigArgs),
    /// Print a shell completion script
    #[command(after_help = help::COMPLETIONS)]
    Completions(completions::CompletionsArgs),
    /// Write the man pages (roff) into a directory; docs/man holds them
    #[command(hide = true)]
    Manpage(completions::ManpageArgs),
    /// List values for the completion scripts (profile names, live session ids and hosts)
    #[command(hide = true)]
    Complete(completions::CompleteArgs),
}

/// `--version`: the crate version and, when built from a git checkout, `git describe`.
fn long_version() -> &'static str {
    static V: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| match env!("PRESENCE_GIT_DESCRIBE") {
            "" => env!("CARGO_PKG_VERSION").to_string(),
            git => format!("{} ({git})", env!("CARGO_PKG_VERSION")),
        });
    &V
}

/// What every subcommand gets: the resolved profile and the output policy.
pub struct Ctx {
    pub global: Global,
    pub local: LocalDirs,
    /// The profile, once resolved: the configuration file is read and
    /// parsed once per command, however many parts of it ask.
    profile: std::sync::OnceLock<Profile>,
}

impl Ctx {
    pub fn selection(&self) -> Selection {
        let mut s = Selection::default();
        s.config = self.global.config.clone();
        s.profile = self.global.profile.clone();
        s.dir = self.global.dir.clone().or_else(|| self.env_dir());
        s
    }

    /// `PRESENCE_DIR`: the directory of the profile `PRESENCE_PROFILE` names
    /// (both set by `presence run`), so it applies only to that profile.
    fn env_dir(&self) -> Option<PathBuf> {
        let dir = std::env::var_os("PRESENCE_DIR").filter(|d| !d.is_empty())?;
        let env_profile = std::env::var("PRESENCE_PROFILE")
            .ok()
            .filter(|p| !p.is_empty());
        (self.global.profile == env_profile).then(|| dir.into())
    }

    /// Resolves the profile through the one resolver, the first time it is
    /// asked for; after that, the same profile again.
    pub fn profile(&self) -> anyhow::Result<Profile> {
        if let Some(profile) = self.profile.get() {
            return Ok(profile.clone());
        }
        let (profile, _) = Profile::resolve(&self.selection(), &self.local)
            .context("cannot load the configuration")?;
        Ok(self.profile.get_or_init(|| profile).clone())
    }

    pub fn registry(&self) -> anyhow::Result<Registry> {
        Ok(Registry::new(self.profile()?, self.local.clone()))
    }

    /// A warning on stderr, unless `--quiet`.
    pub fn warn(&self, msg: impl std::fmt::Display) {
        if !self.global.quiet {
            output::warning(msg);
        }
    }

    /// A detail on stderr, only with `--verbose`.
    pub fn detail(&self, msg: impl std::fmt::Display) {
        if self.global.verbose {
            output::notice(msg);
        }
    }
}

/// An error in how the command was called ([`Exit::Usage`]).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

pub fn run(cli: Cli) -> anyhow::Result<Exit> {
    let local = LocalDirs::from_env().context("cannot find this user's local directories")?;
    let ctx = Ctx {
        global: cli.global,
        local,
        profile: std::sync::OnceLock::new(),
    };
    match cli.command {
        Command::Publish(a) => publish::run(&ctx, a),
        Command::List(a) => list::run(&ctx, a),
        Command::Show(a) => show::run(&ctx, a),
        Command::Open(a) => open::run(&ctx, a),
        Command::Clear(a) => clear::run(&ctx, a),
        Command::Refresh(a) => refresh::run(&ctx, a),
        Command::Run(a) => run::run(&ctx, a),
        Command::Expire(a) => expire::run(&ctx, a),
        Command::Watch(a) => watch::run(&ctx, a),
        Command::Hook(a) => hook::run(&ctx, a),
        Command::Setup(a) => setup::run(&ctx, a),
        Command::Doctor(a) => doctor::run(&ctx, a),
        Command::Devices(a) => devices::run(&ctx, a),
        Command::Config(a) => config_cmd::run(&ctx, a),
        Command::Completions(a) => completions::run(a),
        Command::Manpage(a) => completions::manpage(a),
        Command::Complete(a) => completions::complete(&ctx, a),
    }
}

pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
