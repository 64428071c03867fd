//! Command-line arguments (clap derive) and the dispatch to one file per
//! subcommand. Flags become library types here; the library never sees clap.

mod chooser;
mod clear;
mod completions;
mod config_cmd;
mod devices;
mod doctor;
pub mod exit;
mod expire;
#[cfg(test)]
mod fixtures;
mod help;
mod hook;
mod json;
mod list;
mod manpage;
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
mod watch_on;

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
pub use exit::Exit;
use presence::{LocalDirs, Profile, Registry, Selection};

/// See each other's live sessions through a shared, synced directory.
#[derive(Debug, Parser)]
#[command(name = "presence", version = long_version(), about, long_about = None,
          max_term_width = 100, after_help = help::MAIN)]
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
    #[arg(
        long,
        global = true,
        env = "PRESENCE_PROFILE",
        hide_env_values = true,
        value_name = "NAME"
    )]
    pub profile: Option<String>,
    /// Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]
    #[arg(
        long,
        global = true,
        env = "PRESENCE_CONFIG",
        hide_env_values = true,
        value_name = "PATH"
    )]
    pub config: Option<PathBuf>,
    /// Use this records directory instead of the profile's, this once [default:
    /// $PRESENCE_DIR, which `presence run` gives its command, unless --profile names
    /// another profile than $PRESENCE_PROFILE]
    #[arg(long, global = true, value_name = "PATH")]
    pub dir: Option<PathBuf>,
    /// Report skipped files and other details on stderr
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// Leave out warnings, notes and confirmations (published …, cleared …); what a
    /// command shows (a table, JSON) is printed all the same
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// When to colour the output (list's table, doctor's and setup's marks)
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = output::ColorWhen::Auto)]
    pub color: output::ColorWhen,
    /// Whether `PRESENCE_PROFILE` gave `profile` (set by [`parse`]).
    #[arg(skip)]
    pub profile_from_env: bool,
    /// Whether `PRESENCE_CONFIG` gave `config` (set by [`parse`]).
    #[arg(skip)]
    pub config_from_env: bool,
}

/// The command line, parsed, with where `--profile` and `--config` came
/// from: an environment variable set but empty counts as unset, and one
/// that gave the value is named in the messages about it.
pub fn parse() -> Result<Cli, clap::Error> {
    use clap::parser::ValueSource;
    use clap::{CommandFactory, FromArgMatches};
    let args = args();
    // clap's own help and errors follow `--color` too.
    let color = help_color(&args);
    let mut cmd = Cli::command().color(color);
    let mut matches = cmd.try_get_matches_from_mut(args)?;
    // Not dropped: freeing the tree clap built is work a process about to
    // exit need not do (a tenth of a `list --count` on a few records).
    std::mem::forget(cmd);
    let from_env = |id: &str| matches.value_source(id) == Some(ValueSource::EnvVariable);
    let (profile_from_env, config_from_env) = (from_env("profile"), from_env("config"));
    let mut cli = Cli::from_arg_matches_mut(&mut matches)
        .map_err(|e| e.format(&mut Cli::command().color(color)))?;
    let g = &mut cli.global;
    if profile_from_env && g.profile.as_deref() == Some("") {
        g.profile = None;
    }
    if config_from_env && g.config.as_deref() == Some(std::path::Path::new("")) {
        g.config = None;
    }
    g.profile_from_env = profile_from_env && g.profile.is_some();
    g.config_from_env = config_from_env && g.config.is_some();
    Ok(cli)
}

/// How clap colours its help and errors: as the last `--color` before a
/// `--` says (read ahead of parsing, which may fail, so that the error
/// follows it too); else clap's own choice, which heeds `NO_COLOR`,
/// `CLICOLOR`, `CLICOLOR_FORCE` and whether stderr/stdout is a terminal,
/// and `FORCE_COLOR` as the rest of the output does.
fn help_color(args: &[std::ffi::OsString]) -> clap::ColorChoice {
    let set = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let mut color = match (set("NO_COLOR"), set("FORCE_COLOR")) {
        (None, Some(v)) if v != "0" => clap::ColorChoice::Always,
        _ => clap::ColorChoice::Auto,
    };
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        let value = if a == "--" {
            break;
        } else if a == "--color" {
            it.next().map(|v| v.as_encoded_bytes())
        } else {
            a.as_encoded_bytes().strip_prefix(b"--color=")
        };
        match value {
            Some(b"always") => color = clap::ColorChoice::Always,
            Some(b"never") => color = clap::ColorChoice::Never,
            Some(b"auto") => color = clap::ColorChoice::Auto,
            _ => {}
        }
    }
    color
}

/// The subcommands, defined once and made twice: as [`Command`], which
/// the command line is parsed into, with every subcommand's arguments
/// deferred (made only when it is the one parsed, so that `presence list`
/// does not first make the arguments of all the others), and as `TreeCommand`,
/// not deferred, the tree that completions, the man pages and the help tests
/// look at (see [`command`]).
macro_rules! subcommands {
    ($($variants:tt)*) => {
        // Parsed once per process: the size of the largest variant does not matter.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Subcommand)]
        #[command(defer = true)]
        pub enum Command {
            $($variants)*
        }

        // Never made: only its clap tree is.
        #[allow(clippy::large_enum_variant, dead_code)]
        #[derive(Subcommand)]
        enum TreeCommand {
            $($variants)*
        }
    };
}

subcommands! {
    /// Publish this device's record of a session, or update the fields given
    #[command(after_help = help::PUBLISH)]
    Publish(publish::PublishCmd),
    /// List live sessions, newest start first
    #[command(visible_alias = "ls")]
    #[command(long_about = help::LIST_ABOUT, after_help = help::LIST)]
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
    /// Re-publish this device's records whose owner runs; clear those whose owner died; publish the live sessions of the agents [discover] names
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

/// [`Cli`] with no subcommand deferred; see [`command`].
// Never made: only its clap tree is.
#[allow(dead_code)]
#[derive(Parser)]
#[command(name = "presence", version = long_version(), about, long_about = None,
          max_term_width = 100, after_help = help::MAIN)]
struct Tree {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: TreeCommand,
}

/// `presence --version` (or `-V`) and nothing else: what clap prints for it
/// (`presence VERSION`), without building the command line first. The
/// cheapest call there is, for a prompt that checks the tool is there.
pub fn version_only() -> Option<String> {
    let mut args = std::env::args_os().skip(1);
    let flag = args.next()?;
    (args.next().is_none() && (flag == "--version" || flag == "-V"))
        .then(|| format!("presence {}\n", long_version()))
}

/// The whole command tree, every subcommand with its arguments, for what
/// looks at the tree rather than parsing a command line (completions, the
/// man pages, the negative-duration rewrite of [`args`]). Not built.
pub fn command() -> clap::Command {
    <Tree as clap::CommandFactory>::command()
}

/// `-V` and `--version`: the crate version and, when built from a git
/// checkout, `git describe`.
fn long_version() -> &'static str {
    static V: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| match env!("PRESENCE_GIT_DESCRIBE") {
            "" => env!("CARGO_PKG_VERSION").to_string(),
            git => format!("{} ({git})", env!("CARGO_PKG_VERSION")),
        });
    &V
}

/// The command line as clap should read it: a negative duration given as
/// its own word joins its flag (`--ttl -5s` becomes `--ttl=-5s`), so that
/// the flag's parser refuses it by name ("a duration cannot be negative")
/// instead of clap reading `-5s` as the short flags `-5` and `-s`. Only a
/// word that starts with `-` and a digit or `.`, right after a flag whose
/// value is a `DUR`, is joined (no short flag is a digit, so no command line
/// that parsed before changes), and nothing after `--` (`run`'s command).
pub fn args() -> Vec<std::ffi::OsString> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let negative = |a: &std::ffi::OsStr| {
        let b = a.as_encoded_bytes();
        b.len() > 1 && b[0] == b'-' && (b[1].is_ascii_digit() || b[1] == b'.')
    };
    if !args.iter().any(|a| negative(a)) {
        return args;
    }
    let mut flags = std::collections::BTreeSet::new();
    let mut todo = vec![command()];
    while let Some(cmd) = todo.pop() {
        for a in cmd.get_arguments() {
            let dur = a
                .get_value_names()
                .is_some_and(|v| v.iter().any(|n| n == "DUR"));
            if let (true, Some(long)) = (dur, a.get_long()) {
                flags.insert(format!("--{long}"));
            }
        }
        todo.extend(cmd.get_subcommands().cloned());
    }
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.into_iter().peekable();
    while let Some(a) = it.next() {
        if a == "--" {
            out.push(a);
            out.extend(it);
            break;
        }
        let joined = a
            .to_str()
            .filter(|f| flags.contains(*f))
            .zip(it.next_if(|v| negative(v)));
        match joined {
            Some((flag, value)) => {
                let mut j = std::ffi::OsString::from(format!("{flag}="));
                j.push(value);
                out.push(j);
            }
            None => out.push(a),
        }
    }
    out
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
        s.profile_from_env = self.global.profile_from_env;
        s.config_from_env = self.global.config_from_env;
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
    output::set_color(cli.global.color);
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

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every (sub)command of a built tree: its path, its long help and its
    /// arguments' ids (sorted: a deferred subcommand is given the global
    /// arguments before its own, which shows nowhere).
    fn shapes(cmd: &mut clap::Command, path: &str, out: &mut Vec<(String, String, Vec<String>)>) {
        let help = cmd.render_long_help().to_string();
        let mut ids: Vec<String> = cmd
            .get_arguments()
            .map(|a| a.get_id().to_string())
            .collect();
        ids.sort();
        out.push((path.to_string(), help, ids));
        // Not `help`'s copy of the tree, which clap makes when it builds the
        // top and never prints (`presence help hook` shows the real `hook`).
        for sub in cmd.get_subcommands_mut().filter(|s| s.get_name() != "help") {
            let path = format!("{path} {}", sub.get_name());
            shapes(sub, &path, out);
        }
    }

    #[test]
    fn the_deferred_command_line_is_the_tree() {
        let (mut parsed, mut tree) = (super::Cli::command(), super::command());
        parsed.build();
        tree.build();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        shapes(&mut parsed, "presence", &mut a);
        shapes(&mut tree, "presence", &mut b);
        assert!(a.len() > 20, "{} commands", a.len());
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x, y);
        }
        assert_eq!(a.len(), b.len());
    }
}

#[cfg(test)]
mod version_tests {
    use clap::CommandFactory;

    #[test]
    fn the_version_fast_path_prints_what_clap_prints() {
        for flag in ["--version", "-V"] {
            let err = super::Cli::command()
                .try_get_matches_from(["presence", flag])
                .unwrap_err();
            assert_eq!(err.kind(), clap::error::ErrorKind::DisplayVersion);
            assert_eq!(
                err.render().to_string(),
                format!("presence {}\n", super::long_version())
            );
        }
    }
}
