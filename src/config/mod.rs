//! The TOML configuration and the one profile resolver that every command
//! uses, so that read, write, clear and list can never disagree about the
//! directory or the scope.
//!
//! The file lives at `<config dir>/presence/config.toml`, or wherever
//! `--config` / `PRESENCE_CONFIG` point. Without a file, one profile exists:
//! `default`, with its records in `<data dir>/presence/default`.
//!
//! The file is read only if it is a regular file of at most
//! [`MAX_CONFIG_BYTES`](paths::MAX_CONFIG_BYTES) (a FIFO or `/dev/zero`
//! named as config is an error, not a hang), and a records directory that
//! `expire` must never clean — `/`, the home directory, a top-level system
//! directory — is refused, whether it comes from the file or from `--dir`
//! ([`refused_dir`]).
//!
//! The parts: the file's TOML shape and durations (`file.rs`, with the
//! commented example `config.example.toml`), path safety and the bounded
//! read (`paths.rs`), Hermes Agent's directory (`hermes.rs`); this file holds
//! the resolved types and the resolver.

mod file;
mod hermes;
mod paths;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{ConfigError, Result};
use crate::limits;
use crate::local::LocalDirs;

pub use file::{DurationError, EXAMPLE, parse_duration};
pub(crate) use hermes::expires_others_in;
pub(crate) use paths::refused_dir;

use file::{Config, DurationSetting, ProfileSettings};
use hermes::{HERMES_PROFILE, hermes_dir, is_hermes_dir};
use paths::{check_dir, expand_path, resolve_existing};

/// The local agents whose sessions discovery can publish, as `[discover]
/// agents` spells them; each is also the `client` of the records it
/// publishes.
pub const AGENTS: [&str; 4] = ["claude-code", "codex", "hermes", "opencode"];

/// The `[discover] agents` of `text`, a configuration file's, checked as
/// the file is read; `path` names the file in the error. `presence setup`
/// checks with it what it is about to write.
pub fn discover_agents_of(
    text: &str,
    path: &Path,
) -> std::result::Result<Vec<&'static str>, ConfigError> {
    Config::parse(text, path).map(|c| c.discover)
}

/// Which records `list` and `watch` show.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShowSet {
    /// Every record in the directory.
    All,
    /// Records whose `profile` is one of these labels.
    Labels(Vec<String>),
}

impl ShowSet {
    /// Whether a record carrying `profile` is shown. A record without a label
    /// (as Hermes Agent writes by default) counts as `default`.
    pub fn shows(&self, profile: &str) -> bool {
        match self {
            ShowSet::All => true,
            ShowSet::Labels(labels) => {
                let label = crate::record::label_of(profile);
                labels.iter().any(|l| l == label)
            }
        }
    }
}

/// A fully resolved profile: every setting has its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// The profile's name.
    pub name: String,
    /// The records directory (absolute unless a relative `--dir` was given):
    /// the one directory this profile writes to.
    pub dir: PathBuf,
    /// Every directory this profile reads, `dir` first, then the entries of
    /// `dirs` in their order (without `dir` again). Just `[dir]` unless the
    /// profile sets `dirs`; `--dir` makes it `[--dir]` again.
    pub dirs: Vec<PathBuf>,
    /// Whether `dir` is the built-in default (no `dir` in the file, no `--dir`).
    pub dir_is_default: bool,
    /// Record time to live. Default 90 s.
    pub ttl: Duration,
    /// Refresh interval. Default 30 s; always below `ttl`.
    pub refresh_interval: Duration,
    /// Clock skew tolerance. Default 5 min.
    pub skew: Duration,
    /// Age past expiry after which `expire` deletes any device's records. Default 1 h.
    pub gc_after: Duration,
    /// Slack added to a device's learned clock offset when its records'
    /// expiry is read (see docs/record-format.md). Default 1 s; at most 1 min.
    pub clock_margin: Duration,
    /// Default client name. Default `terminal`.
    pub client: String,
    /// Refuse publishes that need redaction. Default false.
    pub strict: bool,
    /// Label stamped into records. Default: the profile's name.
    pub label: String,
    /// Labels shown by list/watch. Default: `[label]`.
    pub show: ShowSet,
    /// Whether `expire` deletes other writers' garbage in `dir`. True,
    /// except in Hermes Agent's own local presence directory, where removing
    /// Hermes' records is Hermes' job.
    pub expires_others: bool,
    /// The `[open.handlers.SCHEME]` tables in force, checked.
    pub open_handlers: crate::open::Handlers,
    /// `[discover] agents`: the local agents whose live sessions the
    /// refresher publishes (none by default). Like the open handlers, it is
    /// not part of any profile.
    pub discover: Vec<&'static str>,
}

impl Profile {
    /// Loads the configuration `selection` names (or the default file) and
    /// resolves the profile it picks: `--profile`, `PRESENCE_PROFILE` (as
    /// the binary passes them in), `default_profile`, `default`; then
    /// applies `--dir`.
    pub fn resolve(selection: &Selection, local: &LocalDirs) -> Result<(Profile, ConfigSource)> {
        resolve(selection, local)
    }

    /// Every profile of the configuration, each resolved and with `--dir`
    /// applied: what `refresh --all-profiles` covers.
    pub fn resolve_all(selection: &Selection, local: &LocalDirs) -> Result<Vec<Profile>> {
        resolve_all(selection, local)
    }
}

/// Where the configuration was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigSource {
    /// The path consulted.
    pub path: PathBuf,
    /// Whether the file exists (without one, the built-in defaults apply).
    pub exists: bool,
}

/// What the user asked for: the flags and environment the binary collected.
/// `Selection::default()` is the configuration file's default profile.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Selection {
    /// `--config PATH`, else `PRESENCE_CONFIG`.
    pub config: Option<PathBuf>,
    /// `--profile NAME`, else `PRESENCE_PROFILE`.
    pub profile: Option<String>,
    /// `--dir PATH`: a one-off directory override.
    pub dir: Option<PathBuf>,
    /// Whether `PRESENCE_PROFILE` gave `profile` (not `--profile`): an
    /// unknown name then says so, and how to unset it.
    pub profile_from_env: bool,
    /// Whether `PRESENCE_CONFIG` gave `config` (not `--config`).
    pub config_from_env: bool,
}

/// What named the profile being resolved, for its error messages and
/// whether an unknown name is the command line's fault or the file's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Named {
    /// `--profile`, or the caller of [`Config::profile`].
    Flag,
    /// `PRESENCE_PROFILE`.
    Env,
    /// The file's `default_profile`.
    DefaultProfile,
    /// Nothing: `default`, which always exists.
    Builtin,
}

impl Named {
    fn origin(self) -> &'static str {
        match self {
            Named::Flag | Named::Builtin => "--profile",
            Named::Env => "$PRESENCE_PROFILE",
            Named::DefaultProfile => "default_profile",
        }
    }
}

impl Config {
    /// Resolves the profile named `name` (or the default choice when `None`):
    /// its table, its durations, its labels, the directory it writes and the
    /// directories it reads, in that order (the first problem is reported).
    pub fn profile(
        &self,
        name: Option<&str>,
        source: &ConfigSource,
        local: &LocalDirs,
    ) -> Result<Profile, ConfigError> {
        self.named(name.map(|n| (n, Named::Flag)), source, local)
    }

    /// [`Config::profile`] of the name `selection` gives, from where it
    /// gives it.
    fn selected(
        &self,
        selection: &Selection,
        source: &ConfigSource,
        local: &LocalDirs,
    ) -> Result<Profile, ConfigError> {
        let by = if selection.profile_from_env {
            Named::Env
        } else {
            Named::Flag
        };
        self.named(selection.profile.as_deref().map(|n| (n, by)), source, local)
    }

    /// [`Config::profile`] of `chosen` and what named it; `default_profile`,
    /// else `default`, when nothing did.
    fn named(
        &self,
        chosen: Option<(&str, Named)>,
        source: &ConfigSource,
        local: &LocalDirs,
    ) -> Result<Profile, ConfigError> {
        let (name, by) = chosen.unwrap_or(match self.default_profile.as_deref() {
            Some(name) => (name, Named::DefaultProfile),
            None => ("default", Named::Builtin),
        });
        let settings = self.settings(name, by, source, local)?;
        let at = Resolving {
            name,
            source,
            local,
        };
        let timing = at.timing(&settings)?;
        let (label, show) = at.label_and_show(&settings)?;
        let dir = match &settings.dir {
            Some(d) if d.trim().is_empty() => {
                return Err(at.invalid("dir is empty; remove it or name a directory".into()));
            }
            Some(d) => Some(at.checked_dir(d, "dir")?),
            None => None,
        };
        let extra = match &settings.dirs {
            Some(value) => at.extra_dirs(value)?,
            None => Vec::new(),
        };
        // `dir` is where the profile writes: the first entry of `dirs` when
        // only `dirs` is set.
        let (dir, dir_is_default) = match (dir, extra.first()) {
            (Some(dir), _) => (dir, false),
            (None, Some((_, first))) => (first.clone(), false),
            (None, None) => (local.data.join(name), true),
        };
        let dirs = at.read_dirs(&dir, settings.dir.is_some(), extra)?;
        let expires_others = !is_hermes_dir(&dir, &local.home);
        Ok(Profile {
            name: name.into(),
            dir,
            dirs,
            dir_is_default,
            ttl: timing.ttl,
            refresh_interval: timing.refresh_interval,
            skew: timing.skew,
            gc_after: timing.gc_after,
            clock_margin: timing.clock_margin,
            client: settings.client.clone().unwrap_or_else(|| "terminal".into()),
            strict: settings.strict.unwrap_or(false),
            expires_others,
            label,
            show,
            open_handlers: self.open_handlers.clone(),
            discover: self.discover.clone(),
        })
    }

    /// The `[profiles.NAME]` table of `name`; `default` and [`HERMES_PROFILE`]
    /// exist without one.
    fn settings(
        &self,
        name: &str,
        by: Named,
        source: &ConfigSource,
        local: &LocalDirs,
    ) -> Result<ProfileSettings, ConfigError> {
        match self.profiles.get(name) {
            Some(s) => Ok(s.clone()),
            None if name == "default" => Ok(ProfileSettings::default()),
            None if name == HERMES_PROFILE => Ok(ProfileSettings {
                dir: Some(hermes_dir(&local.home).to_string_lossy().into_owned()),
                label: Some("default".into()),
                show: Some(vec!["*".into()]),
                ..ProfileSettings::default()
            }),
            None => Err(ConfigError::UnknownProfile {
                name: name.into(),
                known: self.profile_names(),
                path: source.path.clone(),
                origin: by.origin().into(),
                from_command_line: by != Named::DefaultProfile,
            }),
        }
    }
}

/// A profile's durations, each within its limits.
struct Timing {
    ttl: Duration,
    refresh_interval: Duration,
    skew: Duration,
    gc_after: Duration,
    clock_margin: Duration,
}

/// The profile being resolved: its name and where its settings come from,
/// for relative paths and error messages.
struct Resolving<'a> {
    name: &'a str,
    source: &'a ConfigSource,
    local: &'a LocalDirs,
}

impl Resolving<'_> {
    /// An invalid setting of this profile.
    fn invalid(&self, message: String) -> ConfigError {
        ConfigError::Invalid {
            path: self.source.path.clone(),
            profile: self.name.into(),
            message,
        }
    }

    /// The durations, the defaults for those unset, checked.
    fn timing(&self, settings: &ProfileSettings) -> Result<Timing, ConfigError> {
        let secs = |d: &Option<DurationSetting>, default: Duration| d.map_or(default, |d| d.0);
        let ttl = secs(&settings.ttl, limits::DEFAULT_TTL);
        let refresh_interval = secs(&settings.refresh_interval, limits::DEFAULT_REFRESH_INTERVAL);
        let skew = secs(&settings.skew, limits::DEFAULT_SKEW);
        let gc_after = secs(&settings.gc_after, limits::DEFAULT_GC_AFTER);
        let clock_margin = secs(&settings.clock_margin, limits::CLOCK_MARGIN);
        if clock_margin > limits::MAX_CLOCK_MARGIN {
            return Err(self.invalid(format!(
                "clock_margin = {} is over a minute; it covers the error of a learned clock \
                 offset, which is seconds (the default is 1s)",
                humantime::format_duration(clock_margin)
            )));
        }
        if !limits::ttl_in_range(ttl) {
            return Err(self.invalid(format!(
                "ttl = {} is out of range; use 1s to 1h",
                humantime::format_duration(ttl)
            )));
        }
        if let Some(problem) = crate::liveness::refresh_problem(refresh_interval, ttl) {
            return Err(self.invalid(format!(
                "refresh_interval = {} {problem}",
                humantime::format_duration(refresh_interval)
            )));
        }
        if skew > limits::MAX_SKEW {
            return Err(self.invalid("skew is over a day; use at most 24h".into()));
        }
        Ok(Timing {
            ttl,
            refresh_interval,
            skew,
            gc_after,
            clock_margin,
        })
    }

    /// The label stamped into records (default: the profile's name) and the
    /// labels shown (default: that label).
    fn label_and_show(&self, settings: &ProfileSettings) -> Result<(String, ShowSet), ConfigError> {
        let label = settings
            .label
            .clone()
            .unwrap_or_else(|| self.name.to_string());
        if label.trim().is_empty() {
            return Err(self.invalid("label must not be empty".into()));
        }
        let show = match &settings.show {
            None => ShowSet::Labels(vec![label.clone()]),
            Some(v) if v.iter().any(|l| l == "*") => ShowSet::All,
            Some(v) if v.is_empty() || v.iter().any(|l| l.trim().is_empty()) => {
                return Err(
                    self.invalid("show must list at least one non-empty label, or \"*\"".into())
                );
            }
            Some(v) => ShowSet::Labels(v.clone()),
        };
        Ok((label, show))
    }

    /// `given` (the value of `key`), expanded against the home directory and
    /// the config file's directory, and refused if `expire` must not clean it.
    fn checked_dir(&self, given: &str, key: &str) -> Result<PathBuf, ConfigError> {
        let base = self.source.path.parent().unwrap_or(Path::new("."));
        let dir = expand_path(given, &self.local.home, base);
        check_dir(
            &dir,
            &self.local.home,
            format!(
                "`{key}` of [profiles.{}] in {}",
                self.name,
                self.source.path.display()
            ),
            false,
        )?;
        Ok(dir)
    }

    /// The entries of `dirs`, each as written and as a checked path.
    fn extra_dirs<'v>(
        &self,
        value: &'v toml::Value,
    ) -> Result<Vec<(&'v str, PathBuf)>, ConfigError> {
        const E_G: &str =
            "write e.g. dirs = [\"~/Sync/presence\", \"~/.hermes/session-presence/active\"]";
        let entries: Vec<&str> = match value {
            toml::Value::Array(items) => items
                .iter()
                .map(toml::Value::as_str)
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    self.invalid(format!(
                        "dirs must list directory paths, each a string; {E_G}"
                    ))
                })?,
            other => {
                return Err(self.invalid(format!(
                    "dirs must be an array of directory paths, not {}; {E_G}",
                    other.type_str()
                )));
            }
        };
        if entries.is_empty() {
            return Err(self.invalid(
                "dirs = [] lists no directory; remove it, or list the directories to read, \
                 e.g. dirs = [\"~/Sync/presence\", \"~/.hermes/session-presence/active\"]"
                    .into(),
            ));
        }
        let mut extra = Vec::new();
        for (i, d) in entries.iter().enumerate() {
            if d.trim().is_empty() {
                return Err(self.invalid(format!(
                    "entry {} of dirs is empty; remove it or name a directory",
                    i + 1
                )));
            }
            extra.push((*d, self.checked_dir(d, "dirs")?));
        }
        Ok(extra)
    }

    /// What the profile reads: `dir` (when the file sets it), then each entry
    /// of `dirs` (`dir` listed there too is read once; any other directory
    /// twice is a mistake); just `dir` when that leaves none.
    fn read_dirs(
        &self,
        dir: &Path,
        dir_is_set: bool,
        extra: Vec<(&str, PathBuf)>,
    ) -> Result<Vec<PathBuf>, ConfigError> {
        let mut dirs: Vec<PathBuf> = Vec::new();
        let mut seen: Vec<(String, PathBuf)> = Vec::new();
        if dir_is_set {
            seen.push(("dir".into(), resolve_existing(dir)));
            dirs.push(dir.to_path_buf());
        }
        for (i, (given, path)) in extra.into_iter().enumerate() {
            let resolved = resolve_existing(&path);
            match seen.iter().find(|(_, r)| *r == resolved) {
                Some((what, _)) if what == "dir" => continue,
                Some((what, _)) => {
                    return Err(self.invalid(format!(
                        "entry {} of dirs ({given}) is the same directory as {what} ({}); \
                         list each directory once",
                        i + 1,
                        resolved.display()
                    )));
                }
                None => {}
            }
            seen.push((format!("entry {} of dirs", i + 1), resolved));
            dirs.push(path);
        }
        if dirs.is_empty() {
            dirs.push(dir.to_path_buf());
        }
        Ok(dirs)
    }
}

/// The one resolver: loads the configuration, picks the profile by
/// `--profile`, `PRESENCE_PROFILE`, `default_profile`, `default`, and applies
/// `--dir`. Every command goes through here.
pub(crate) fn resolve(selection: &Selection, local: &LocalDirs) -> Result<(Profile, ConfigSource)> {
    let (config, source) = Config::load(selection, local)?;
    let mut profile = config.selected(selection, &source, local)?;
    if let Some(dir) = &selection.dir {
        check_dir(dir, &local.home, "--dir".into(), true)?;
        profile.dir = dir.clone();
        profile.dirs = vec![dir.clone()];
        profile.dir_is_default = false;
        profile.expires_others = !is_hermes_dir(dir, &local.home);
    }
    Ok((profile, source))
}

/// Every profile of the configuration (`default` included), each resolved and
/// with `--dir` applied: what `refresh --all-profiles` covers.
pub(crate) fn resolve_all(selection: &Selection, local: &LocalDirs) -> Result<Vec<Profile>> {
    let (config, source) = Config::load(selection, local)?;
    if let Some(dir) = &selection.dir {
        check_dir(dir, &local.home, "--dir".into(), true)?;
    }
    config
        .profile_names()
        .iter()
        .map(|name| {
            let mut p = config.profile(Some(name), &source, local)?;
            if let Some(dir) = &selection.dir {
                p.dir = dir.clone();
                p.dirs = vec![dir.clone()];
                p.dir_is_default = false;
                p.expires_others = !is_hermes_dir(dir, &local.home);
            }
            Ok(p)
        })
        .collect()
}
