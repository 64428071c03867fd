//! `presence setup`: from an installed binary to a working, refreshed,
//! synced presence directory in one command, and `--uninstall` to take back
//! what it added.
//!
//! Every step is first planned as a [`Change`] (what it would do, in words,
//! and how), so that `--dry-run` prints exactly what a real run does, a run
//! with nothing to do says so, and the question on a terminal shows the
//! whole plan. What setup adds to files it does not own (`.stignore`) or
//! writes where other tools look (unit files, launchd agents) carries a
//! marker line, so that `--uninstall` removes only what setup added.

use std::io::{BufRead, IsTerminal, Write};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use presence::engine::{self, Engine};
use presence::{Profile, Registry, Selection, Status};

use super::{Ctx, Exit, UsageError, safe};

/// The first line of every unit file and launchd agent setup writes.
const UNIT_MARK: &str = "# Installed by `presence setup`; `presence setup --uninstall` removes it.";
const PLIST_MARK: &str =
    "<!-- Installed by `presence setup`; `presence setup --uninstall` removes it. -->";
/// The line docs/syncthing.md recommends, and the comment setup puts above it.
const STIGNORE_LINE: &str = "(?d).*.tmp";
const STIGNORE_MARK: &str = "// presence's temp files (added by `presence setup`; `presence setup --uninstall` removes these two lines)";
/// The most setup reads of a file it edits or inspects.
const MAX_READ: usize = 4 << 20;
/// The timers `systemctl --user enable` starts.
const TIMERS: [&str; 2] = ["presence-refresh.timer", "presence-expire.timer"];
/// The user units, as docs/systemd ships them (with `ExecStart=presence …`).
const UNITS: [(&str, &str); 4] = [
    (
        "presence-refresh.service",
        include_str!("../../../docs/systemd/presence-refresh.service"),
    ),
    (
        "presence-refresh.timer",
        include_str!("../../../docs/systemd/presence-refresh.timer"),
    ),
    (
        "presence-expire.service",
        include_str!("../../../docs/systemd/presence-expire.service"),
    ),
    (
        "presence-expire.timer",
        include_str!("../../../docs/systemd/presence-expire.timer"),
    ),
];
/// The launchd agents, as docs/launchd ships them (for `~/.cargo/bin`).
const AGENTS: [(&str, &str); 2] = [
    (
        "dev.presence.refresh.plist",
        include_str!("../../../docs/launchd/dev.presence.refresh.plist"),
    ),
    (
        "dev.presence.expire.plist",
        include_str!("../../../docs/launchd/dev.presence.expire.plist"),
    ),
];

#[derive(Debug, Args)]
pub struct SetupArgs {
    /// Answer yes to every question (needed when stdin is not a terminal)
    #[arg(short, long)]
    pub yes: bool,
    /// Print every change setup would make, and make none
    #[arg(long)]
    pub dry_run: bool,
    /// How to keep this device's records refreshed [default: systemd where `systemctl --user`
    /// works, launchd on macOS, else cron (a line to add is printed)]
    #[arg(long, value_enum, value_name = "KIND")]
    pub timer: Option<Timer>,
    /// Install no refresher (the same as --timer none)
    #[arg(long, conflicts_with = "timer")]
    pub no_timer: bool,
    /// Remove what setup added (the refresher's units or agents, the .stignore lines);
    /// never records or the configuration
    #[arg(long)]
    pub uninstall: bool,
}

/// What keeps records refreshed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Timer {
    /// systemd user units (service + timer) under ~/.config/systemd/user
    Systemd,
    /// launchd agents under ~/Library/LaunchAgents
    Launchd,
    /// a crontab line, printed for you to add
    Cron,
    /// nothing
    None,
}

/// One step of the plan.
struct Change {
    /// What it does, in words: printed before, or instead of, doing it.
    what: String,
    action: Action,
}

enum Action {
    /// Write `text` to `path` (atomically, keeping the mode 0644 or the file's).
    Write { path: PathBuf, text: String },
    /// Remove a file.
    Remove(PathBuf),
    /// Create a directory, mode 0700.
    MakeDir(PathBuf),
    /// Run a program.
    Run(Vec<String>),
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

/// Whether a systemd user manager answers.
fn systemd_user_works() -> bool {
    quiet(Command::new("systemctl").args(["--user", "show-environment"]))
        .is_some_and(|o| o.status.success())
}

/// Runs `cmd` with no input and its output captured; `None` when it cannot start.
fn quiet(cmd: &mut Command) -> Option<std::process::Output> {
    cmd.stdin(Stdio::null()).output().ok()
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
    let plan = if args.uninstall {
        let dir = ctx.global.dir.clone().unwrap_or(current.dir.clone());
        uninstall_plan(&platform, &dir, &mut notes)?
    } else {
        let dir = choose_dir(ctx, &current, interactive)?;
        // The resolver refuses what it would refuse in the file (/, ~, /etc…).
        let mut check = base.clone();
        check.dir = Some(dir.clone());
        Profile::resolve(&check, &ctx.local).context("cannot use that directory")?;
        let mut plan = config_plan(&config_path, &current.name, &dir, &ctx.local.home)?;
        if !dir.exists() {
            plan.push(Change {
                what: format!("create {} (mode 0700)", dir.display()),
                action: Action::MakeDir(dir.clone()),
            });
        }
        plan.extend(stignore_plan(&platform, &dir, &mut notes)?);
        plan.extend(timer_plan(&platform, timer, &mut notes)?);
        plan
    };

    let mut out = std::io::stdout().lock();
    if plan.is_empty() {
        writeln!(
            out,
            "nothing to change: {}",
            if args.uninstall {
                "setup has nothing installed here"
            } else {
                "presence is set up"
            }
        )?;
    } else if args.dry_run {
        for c in &plan {
            writeln!(out, "would {}", safe(&c.what))?;
        }
    } else {
        if interactive {
            for c in &plan {
                writeln!(out, "  {}", safe(&c.what))?;
            }
            if !confirm(&mut out, "Make these changes?")? {
                writeln!(out, "nothing changed")?;
                return Ok(Exit::Ok);
            }
        }
        for c in &plan {
            apply(&c.action).with_context(|| format!("cannot {}", c.what))?;
            writeln!(out, "{}", safe(&c.what))?;
        }
    }
    for line in notes.iter().flat_map(|n| n.lines()) {
        writeln!(out, "{}", safe(line))?;
    }
    if args.dry_run || args.uninstall {
        return Ok(Exit::Ok);
    }
    out.flush()?;
    drop(out);
    doctor(ctx, &base)
}

/// Runs `presence doctor`'s checks on the profile as set up, prints them and
/// the verdict.
fn doctor(ctx: &Ctx, base: &Selection) -> anyhow::Result<Exit> {
    let (profile, source) =
        Profile::resolve(base, &ctx.local).context("cannot load the configuration")?;
    let registry = Registry::new(profile, ctx.local.clone());
    let checks = registry.doctor(&source, presence::unix_now());
    let mut out = std::io::stdout().lock();
    writeln!(out)?;
    super::doctor::print(&mut out, &checks)?;
    let count = |s: Status| checks.iter().filter(|c| c.status == s).count();
    let (warn, fail) = (count(Status::Warn), count(Status::Fail));
    let verdict = match (warn, fail) {
        (0, 0) => "doctor: every check passed".to_string(),
        (w, 0) => format!("doctor: {w} warning(s), nothing failed"),
        (w, f) => format!("doctor: {f} check(s) failed, {w} warning(s)"),
    };
    writeln!(out, "{verdict}")?;
    Ok(Exit::failure_if(fail > 0))
}

/// Asks a yes/no question on the terminal; yes unless the answer starts with n.
fn confirm(out: &mut impl Write, question: &str) -> anyhow::Result<bool> {
    write!(out, "{question} [Y/n] ")?;
    out.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(!answer.trim().to_lowercase().starts_with('n'))
}

/// The records directory: `--dir`, else the one already configured, else a
/// synced folder found here (asked on a terminal, the first with `--yes`).
fn choose_dir(ctx: &Ctx, current: &Profile, interactive: bool) -> anyhow::Result<PathBuf> {
    if let Some(dir) = &ctx.global.dir {
        return Ok(std::path::absolute(dir)?);
    }
    if !current.dir_is_default {
        return Ok(current.dir.clone());
    }
    let candidates = candidates(&ctx.local.home);
    if !interactive {
        return candidates.first().map(|c| c.dir()).ok_or_else(|| {
            UsageError(
                "no synced folder found (Syncthing, ~/Sync, Dropbox, Nextcloud, iCloud Drive): \
                 pass --dir DIR"
                    .into(),
            )
            .into()
        });
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "Where should this device keep its presence records?")?;
    for (i, c) in candidates.iter().enumerate() {
        writeln!(
            out,
            "  {}) {}  ({})",
            i + 1,
            safe(&c.dir().display().to_string()),
            safe(&c.what)
        )?;
    }
    let default = if candidates.is_empty() { "" } else { "1" };
    write!(
        out,
        "Enter a number or a directory (in a folder your devices sync) [{default}]: "
    )?;
    out.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    let answer = answer.trim();
    let answer = if answer.is_empty() { default } else { answer };
    if let Ok(n) = answer.parse::<usize>()
        && let Some(c) = n.checked_sub(1).and_then(|i| candidates.get(i))
    {
        return Ok(c.dir());
    }
    if answer.is_empty() {
        return Err(UsageError("no directory given".into()).into());
    }
    let path = match answer.strip_prefix("~/") {
        Some(rest) => ctx.local.home.join(rest),
        None => PathBuf::from(answer),
    };
    Ok(std::path::absolute(path)?)
}

/// A synced folder found on this device.
#[derive(Debug, PartialEq)]
pub(crate) struct Candidate {
    pub folder: PathBuf,
    /// Which engine, and the folder's name there.
    pub what: String,
    /// Named by Syncthing's configuration (not only by where it is).
    pub syncthing: bool,
}

impl Candidate {
    fn dir(&self) -> PathBuf {
        self.folder.join("presence")
    }
}

/// Synced folders on this device, best first: Syncthing's (from its
/// configuration, read by the library), then `~/Sync`, Dropbox, Nextcloud and iCloud Drive, each
/// once and only if it exists.
pub(crate) fn candidates(home: &Path) -> Vec<Candidate> {
    let mut found: Vec<Candidate> = Vec::new();
    for (label, path) in engine::syncthing_folders(home) {
        found.push(Candidate {
            folder: path,
            what: format!("Syncthing folder \"{label}\""),
            syncthing: true,
        });
    }
    let plain = [
        ("Sync", "Syncthing's default folder"),
        ("Dropbox", "Dropbox"),
        ("Nextcloud", "Nextcloud"),
        (
            "Library/Mobile Documents/com~apple~CloudDocs",
            "iCloud Drive",
        ),
    ];
    for (rel, what) in plain {
        found.push(Candidate {
            folder: home.join(rel),
            what: what.into(),
            syncthing: false,
        });
    }
    let mut seen = Vec::new();
    found.retain(|c| {
        let key = std::fs::canonicalize(&c.folder).ok();
        match key {
            Some(k) if k.is_dir() && !seen.contains(&k) => {
                seen.push(k);
                true
            }
            _ => false,
        }
    });
    found
}

/// A small text file (invalid UTF-8 replaced), `None` when it does not
/// exist. Read with the library's one bounded read: a `.stignore` is in a
/// shared folder, and a symlink planted there must not make setup read (and
/// write back into the folder) a file it points to, nor a FIFO hang setup.
fn read_small(path: &Path) -> Result<Option<String>, presence::bounded::ReadError> {
    Ok(presence::bounded::read_path(path, MAX_READ)?
        .map(|b| String::from_utf8_lossy(&b).into_owned()))
}

/// How `dir` is written in the configuration: `~/…` under the home directory.
fn config_value(dir: &Path, home: &Path) -> String {
    match dir.strip_prefix(home) {
        Ok(rest) if !rest.as_os_str().is_empty() => format!("~/{}", rest.display()),
        _ => dir.display().to_string(),
    }
}

/// Sets `[profiles.NAME] dir` in the configuration file, editing it in place:
/// comments, other keys and other profiles stay byte for byte.
fn config_plan(path: &Path, profile: &str, dir: &Path, home: &Path) -> anyhow::Result<Vec<Change>> {
    let text = read_small(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .unwrap_or_default();
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("cannot parse {}", path.display()))?;
    let value = config_value(dir, home);
    let current = doc
        .get("profiles")
        .and_then(|p| p.get(profile))
        .and_then(|p| p.get("dir"))
        .and_then(|d| d.as_str())
        .map(str::to_string);
    if let Some(cur) = &current {
        let expanded = match cur.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => PathBuf::from(cur),
        };
        if expanded == dir || *cur == value {
            return Ok(Vec::new());
        }
    }
    let profiles = doc
        .entry("profiles")
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_mut()
        .context("`profiles` in the configuration is not a table")?;
    let table = profiles
        .entry(profile)
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .with_context(|| format!("`profiles.{profile}` in the configuration is not a table"))?;
    table.insert("dir", toml_edit::value(value.clone()));
    let mut new = doc.to_string();
    if text.is_empty() {
        new = format!(
            "# presence configuration (docs/configuration.md; `presence config show` prints what\n\
             # applies). Written by `presence setup`; edit freely.\n{new}"
        );
    }
    let what = match current {
        None if text.is_empty() => format!(
            "write {} with [profiles.{profile}] dir = \"{value}\"",
            path.display()
        ),
        None => format!(
            "set [profiles.{profile}] dir = \"{value}\" in {}",
            path.display()
        ),
        Some(old) => format!(
            "change [profiles.{profile}] dir from \"{old}\" to \"{value}\" in {}",
            path.display()
        ),
    };
    Ok(vec![Change {
        what,
        action: Action::Write {
            path: path.to_path_buf(),
            text: new,
        },
    }])
}

/// The Syncthing folder that holds `dir`: by `.stfolder` up the tree, else
/// by the folders of Syncthing's configuration.
fn syncthing_root(dir: &Path, home: &Path) -> Option<PathBuf> {
    if let Some(folder) = engine::find(dir)
        && folder.engine == Engine::Syncthing
    {
        return Some(folder.root);
    }
    candidates(home)
        .into_iter()
        .filter(|c| c.syncthing)
        .map(|c| c.folder)
        .filter(|f| dir.starts_with(f))
        .max_by_key(|f| f.as_os_str().len())
}

/// Adds `(?d).*.tmp` at the top of the Syncthing folder's `.stignore` (the
/// first matching pattern decides, so no `!` line can undo it) unless the
/// patterns, with what they include, already ignore the temp files.
fn stignore_plan(
    platform: &Platform,
    dir: &Path,
    notes: &mut Vec<String>,
) -> anyhow::Result<Vec<Change>> {
    let Some(root) = syncthing_root(dir, &platform.home) else {
        return Ok(Vec::new());
    };
    let file = root.join(".stignore");
    match presence::stignore_ignores_temp_files(&root, dir) {
        Ok(true) => Ok(Vec::new()),
        Ok(false) => {
            let old = read_small(&file)
                .with_context(|| format!("cannot read {}", file.display()))?
                .unwrap_or_default();
            Ok(vec![Change {
                what: format!(
                    "add the line `{STIGNORE_LINE}` to {} (keeps temp files out of the sync)",
                    file.display()
                ),
                action: Action::Write {
                    path: file,
                    text: format!("{STIGNORE_MARK}\n{STIGNORE_LINE}\n{old}"),
                },
            }])
        }
        Err(e) => {
            notes.push(format!(
                "left {} alone: {e}; add the line `{STIGNORE_LINE}` once it loads",
                file.display()
            ));
            Ok(Vec::new())
        }
    }
}

/// A unit as shipped, with the binary's path and setup's marker.
fn unit_text(shipped: &str, binary: &Path) -> String {
    let mut text = format!("{UNIT_MARK}\n");
    for line in shipped.lines() {
        match line.strip_prefix("ExecStart=presence ") {
            Some(rest) => text.push_str(&format!("ExecStart={} {rest}", binary.display())),
            None => text.push_str(line),
        }
        text.push('\n');
    }
    text
}

/// How many of the timers the user manager has enabled.
fn timers_enabled() -> usize {
    // One line per unit; the exit status is 0 if any one is enabled.
    quiet(
        Command::new("systemctl")
            .args(["--user", "is-enabled"])
            .args(TIMERS),
    )
    .map_or(0, |o| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| l.trim() == "enabled")
            .count()
    })
}

/// Whether the system's user units (the Debian package's, in
/// `/usr/lib/systemd/user`) are all there and start `binary`.
fn packaged_units_start(binary: &Path) -> bool {
    let dir = Path::new("/usr/lib/systemd/user");
    UNITS.iter().all(|(name, shipped)| {
        let Ok(Some(text)) = read_small(&dir.join(name)) else {
            return false;
        };
        let want = unit_text(shipped, binary);
        text == want[UNIT_MARK.len() + 1..]
    })
}

/// A launchd agent as shipped, with the binary's path and setup's marker.
fn agent_text(shipped: &str, binary: &Path) -> String {
    // Inside `sh -c "exec \"PATH\" …"`, then inside XML.
    let sh: String = binary
        .display()
        .to_string()
        .chars()
        .flat_map(|c| match c {
            '"' | '$' | '`' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect();
    let xml = sh
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    shipped
        .replacen("?>\n", &format!("?>\n{PLIST_MARK}\n"), 1)
        .replace("$HOME/.cargo/bin/presence", &xml)
}

fn timer_plan(
    platform: &Platform,
    timer: Timer,
    notes: &mut Vec<String>,
) -> anyhow::Result<Vec<Change>> {
    let mut plan = Vec::new();
    let write_if_changed = |plan: &mut Vec<Change>, path: PathBuf, text: String| {
        let old = read_small(&path).ok().flatten();
        if old.as_deref() != Some(text.as_str()) {
            plan.push(Change {
                what: format!(
                    "{} {}",
                    if old.is_some() { "update" } else { "write" },
                    path.display()
                ),
                action: Action::Write { path, text },
            });
        }
    };
    match timer {
        Timer::None => {}
        Timer::Systemd => {
            // The Debian package's units already start this binary: enabling
            // them is enough, and a copy in ~/.config would only shadow them.
            if !packaged_units_start(&platform.binary) {
                for (name, shipped) in UNITS {
                    let path = platform.unit_dir().join(name);
                    write_if_changed(&mut plan, path, unit_text(shipped, &platform.binary));
                }
            }
            let enable: Vec<String> = ["systemctl", "--user", "enable", "--now"]
                .iter()
                .map(|s| s.to_string())
                .chain(TIMERS.iter().map(|t| t.to_string()))
                .collect();
            if systemd_user_works() {
                let enabled = timers_enabled() == TIMERS.len();
                if !plan.is_empty() || !enabled {
                    plan.push(Change {
                        what: "reload systemd's user units".into(),
                        action: Action::Run(
                            ["systemctl", "--user", "daemon-reload"]
                                .map(String::from)
                                .to_vec(),
                        ),
                    });
                    plan.push(Change {
                        what: format!("enable and start {}", TIMERS.join(" and ")),
                        action: Action::Run(enable),
                    });
                }
            } else {
                notes.push(format!(
                    "no systemd user manager answers here: once one runs, start the timers with \
                     `{}`",
                    enable.join(" ")
                ));
            }
        }
        Timer::Launchd => {
            for (name, shipped) in AGENTS {
                let path = platform.agent_dir().join(name);
                let before = plan.len();
                write_if_changed(
                    &mut plan,
                    path.clone(),
                    agent_text(shipped, &platform.binary),
                );
                if plan.len() > before && cfg!(target_os = "macos") {
                    let uid = rustix::process::getuid().as_raw();
                    plan.push(Change {
                        what: format!("load {name} with launchctl"),
                        action: Action::Run(vec![
                            "launchctl".into(),
                            "bootstrap".into(),
                            format!("gui/{uid}"),
                            path.display().to_string(),
                        ]),
                    });
                }
            }
            if !cfg!(target_os = "macos") && !plan.is_empty() {
                notes.push(
                    "this is not macOS: load the agents with `launchctl bootstrap gui/$(id -u) \
                     ~/Library/LaunchAgents/dev.presence.refresh.plist` (and expire) where \
                     launchd runs"
                        .into(),
                );
            }
        }
        Timer::Cron => {
            let has = quiet(Command::new("crontab").arg("-l")).is_some_and(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .map(str::trim)
                    .any(|l| {
                        !l.starts_with('#') && l.contains("presence") && l.contains(" refresh")
                    })
            });
            if !has {
                notes.push(format!(
                    "no systemd user manager here: add these lines to your crontab (`crontab -e`) \
                     to keep records refreshed and the directory clean:\n\
                     * * * * * {bin} --quiet refresh --all-profiles\n\
                     17 4 * * * {bin} --quiet expire",
                    bin = platform.binary.display()
                ));
            }
        }
    }
    Ok(plan)
}

/// What `--uninstall` removes: the unit files and agents carrying setup's
/// marker (the timers stopped first), and setup's lines in `.stignore`.
fn uninstall_plan(
    platform: &Platform,
    dir: &Path,
    notes: &mut Vec<String>,
) -> anyhow::Result<Vec<Change>> {
    let mut plan = Vec::new();
    let ours = |path: &Path, mark: &str| {
        read_small(path)
            .ok()
            .flatten()
            .is_some_and(|t| t.lines().any(|l| l == mark))
    };
    let units: Vec<PathBuf> = UNITS
        .iter()
        .map(|(n, _)| platform.unit_dir().join(n))
        .filter(|p| ours(p, UNIT_MARK))
        .collect();
    // With the package's units setup only enabled the timers.
    let packaged = packaged_units_start(&platform.binary);
    if (!units.is_empty() || packaged) && systemd_user_works() && timers_enabled() > 0 {
        plan.push(Change {
            what: format!("disable and stop {}", TIMERS.join(" and ")),
            action: Action::Run(
                ["systemctl", "--user", "disable", "--now"]
                    .iter()
                    .chain(TIMERS.iter())
                    .map(|s| s.to_string())
                    .collect(),
            ),
        });
    }
    for p in &units {
        plan.push(Change {
            what: format!("remove {}", p.display()),
            action: Action::Remove(p.clone()),
        });
    }
    if !units.is_empty() && systemd_user_works() {
        plan.push(Change {
            what: "reload systemd's user units".into(),
            action: Action::Run(
                ["systemctl", "--user", "daemon-reload"]
                    .map(String::from)
                    .to_vec(),
            ),
        });
    }
    for (name, _) in AGENTS {
        let path = platform.agent_dir().join(name);
        if !ours(&path, PLIST_MARK) {
            continue;
        }
        if cfg!(target_os = "macos") {
            let uid = rustix::process::getuid().as_raw();
            plan.push(Change {
                what: format!("unload {name} with launchctl"),
                action: Action::Run(vec![
                    "launchctl".into(),
                    "bootout".into(),
                    format!("gui/{uid}"),
                    path.display().to_string(),
                ]),
            });
        }
        plan.push(Change {
            what: format!("remove {}", path.display()),
            action: Action::Remove(path),
        });
    }
    if let Some(root) = syncthing_root(dir, &platform.home) {
        let file = root.join(".stignore");
        if let Some(text) = read_small(&file).ok().flatten() {
            let pair = format!("{STIGNORE_MARK}\n{STIGNORE_LINE}\n");
            if let Some(at) = text.find(&pair) {
                let rest = format!("{}{}", &text[..at], &text[at + pair.len()..]);
                let what = format!("remove setup's lines from {}", file.display());
                let action = if rest.is_empty() {
                    Action::Remove(file)
                } else {
                    Action::Write {
                        path: file,
                        text: rest,
                    }
                };
                plan.push(Change { what, action });
            }
        }
    }
    let cron = quiet(Command::new("crontab").arg("-l")).is_some_and(|o| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .any(|l| !l.trim().starts_with('#') && l.contains("presence") && l.contains(" refresh"))
    });
    if cron {
        notes.push(
            "your crontab runs `presence refresh`: remove that line with `crontab -e`".into(),
        );
    }
    Ok(plan)
}

fn apply(action: &Action) -> anyhow::Result<()> {
    match action {
        Action::Write { path, text } => {
            let parent = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            std::fs::create_dir_all(parent)?;
            let mode = std::fs::metadata(path).map_or(0o644, |m| m.permissions().mode() & 0o7777);
            let mut tmp = tempfile::Builder::new()
                .prefix(".presence-setup.")
                .suffix(".tmp")
                .tempfile_in(parent)?;
            tmp.write_all(text.as_bytes())?;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(mode))?;
            tmp.as_file().sync_all()?;
            tmp.persist(path)?;
        }
        Action::Remove(path) => std::fs::remove_file(path)?,
        Action::MakeDir(dir) => {
            if let Some(parent) = dir.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::DirBuilder::new().mode(0o700).create(dir)?;
        }
        Action::Run(argv) => {
            let status = Command::new(&argv[0])
                .args(&argv[1..])
                .stdin(Stdio::null())
                .status()
                .with_context(|| format!("cannot run {}", argv[0]))?;
            anyhow::ensure!(status.success(), "`{}` failed ({status})", argv.join(" "));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_name_the_binary() {
        let text = unit_text(UNITS[0].1, Path::new("/opt/p/presence"));
        assert!(text.starts_with(UNIT_MARK));
        assert!(text.contains("\nExecStart=/opt/p/presence --quiet refresh --all-profiles\n"));
        let plist = agent_text(AGENTS[0].1, Path::new("/opt/a&b/presence"));
        assert!(
            plist.contains("exec \"/opt/a&amp;b/presence\" --quiet refresh"),
            "{plist}"
        );
        assert!(plist.contains(PLIST_MARK));
    }
}
