//! The TOML configuration and the one profile resolver that every command
//! uses, so that read, write, clear and list can never disagree about the
//! directory or the scope.
//!
//! The file lives at `<config dir>/presence/config.toml`, or wherever
//! `--config` / `PRESENCE_CONFIG` point. Without a file, one profile exists:
//! `default`, with its records in `<data dir>/presence/default`.
//!
//! The file is read only if it is a regular file of at most
//! [`MAX_CONFIG_BYTES`] (a FIFO or `/dev/zero` named as config is an error,
//! not a hang), and a records directory that `expire` must never clean — `/`,
//! the home directory, a top-level system directory — is refused, whether it
//! comes from the file or from `--dir` ([`refused_dir`]).

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::error::{ConfigError, Result};
use crate::limits;
use crate::local::LocalDirs;

/// The commented example that `presence config init` writes. It sets
/// nothing: every setting is commented out and shows its default, so that a
/// file written today does not pin today's defaults. Tests check that it
/// parses to exactly the built-in defaults, commented or uncommented.
pub const EXAMPLE: &str = r#"# presence configuration
# Location: <config dir>/presence/config.toml (override with --config or PRESENCE_CONFIG).
# Durations accept "90s", "5m", "1h 30m" or a number of seconds.
# Every setting below is commented out and shows its default: uncomment one to change it.

# Profile used when neither --profile nor PRESENCE_PROFILE names one.
# default_profile = "default"

[profiles.default]
# The shared (synced) directory of records. Default: <data dir>/presence/<profile name>.
# Point it into a synced folder to see sessions of other devices, e.g. "~/Sync/presence".
# dir = "~/Sync/presence"
# More directories to read: `list`, `show` and `watch` merge them with `dir` into one
# deduped listing; presence writes only to `dir` (without `dir`: the first entry here).
# dirs = ["~/Sync/presence", "~/.hermes/session-presence/active"]

# How long a record stays live after its last refresh arrived (1s to 1h).
# ttl = "90s"
# How often `refresh`, `run` and the library guard re-publish; must be below ttl.
# refresh_interval = "30s"
# How far behind ours another device's clock may run before its records count as expired.
# skew = "5m"
# How long after expiry `expire` deletes another device's records.
# gc_after = "1h"
# Slack added to a device's learned clock offset when reading its records' expiry (at most 1m).
# clock_margin = "1s"
# Client name stamped into records published without --client.
# client = "terminal"
# Refuse (exit 3) to publish a record that would need redaction, instead of redacting it.
# strict = false
# Label stamped into the `profile` field of records. Default: the profile's name.
# label = "default"
# Labels that list/watch show. Default: [<label>]. ["*"] shows every record in dir.
# show = ["default"]

# A profile that shows what Hermes Agent publishes, in its own directory:
# [profiles.hermes]
# dir = "~/.hermes/session-presence/active"
# label = "default"
# show = ["*"]

# `presence open` runs a built-in handler per endpoint scheme (tmux, ssh, mosh,
# http, https). Add or override one per scheme with an argv template; each
# placeholder fills part of one argument, never a shell: {url} {scheme} {user}
# {host} {port} {user_at_host} {path} {session} {session_id}.
# [open.handlers.tmux]
# command = ["wezterm", "ssh", "{user_at_host}", "--", "tmux", "attach", "-t", "{session}"]
"#;

/// The largest configuration file that is read: 1 MiB.
pub(crate) const MAX_CONFIG_BYTES: u64 = limits::MAX_CONFIG_BYTES;

/// Top-level system directories refused as records directories (besides `/`
/// and the home directory), compared after resolving symlinks on both sides.
const SYSTEM_DIRS: [&str; 21] = [
    "/etc", "/usr", "/var", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/boot", "/dev", "/proc",
    "/sys", "/tmp", "/run", "/opt", "/srv", "/root", "/home", "/Users", "/System", "/private",
];

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
}

/// The profile that exists without being defined: it reads Hermes Agent's
/// presence directory in place ([`hermes_dir`]), showing every label.
pub(crate) const HERMES_PROFILE: &str = "hermes";

/// Hermes Agent's local presence directory, found the way Hermes finds it:
/// `HERMES_SESSION_PRESENCE_DIR` names the directory itself; otherwise it
/// is `$HERMES_HOME/session-presence/active`, with `HERMES_HOME` defaulting
/// to `~/.hermes`. Like Hermes, values are trimmed and taken as given (no
/// `~`), a relative one against the current directory.
pub(crate) fn hermes_dir(home: &Path) -> PathBuf {
    hermes_dir_from(
        std::env::var_os("HERMES_SESSION_PRESENCE_DIR"),
        std::env::var_os("HERMES_HOME"),
        home,
        &std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
    )
}

/// Whether `expire` deletes other writers' garbage in `dir`: everywhere
/// but in Hermes Agent's own local presence directory, where removing
/// Hermes' records is Hermes' job.
pub(crate) fn expires_others_in(dir: &Path, home: &Path) -> bool {
    !is_hermes_dir(dir, home)
}

/// Whether `dir` is Hermes Agent's local presence directory.
fn is_hermes_dir(dir: &Path, home: &Path) -> bool {
    resolve_existing(dir) == resolve_existing(&hermes_dir(home))
}

fn hermes_dir_from(
    presence_dir: Option<std::ffi::OsString>,
    hermes_home: Option<std::ffi::OsString>,
    home: &Path,
    cwd: &Path,
) -> PathBuf {
    let set = |v: Option<std::ffi::OsString>| {
        v.map(|v| PathBuf::from(v.to_string_lossy().trim()))
            .filter(|p| !p.as_os_str().is_empty())
    };
    let dir = match (set(presence_dir), set(hermes_home)) {
        (Some(dir), _) => dir,
        (None, Some(hermes_home)) => hermes_home.join("session-presence/active"),
        (None, None) => home.join(".hermes/session-presence/active"),
    };
    cwd.join(dir)
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
}

/// A parsed configuration file.
#[derive(Debug, Clone, Default)]
pub(crate) struct Config {
    /// `default_profile`.
    pub default_profile: Option<String>,
    /// The `[profiles.NAME]` tables, unresolved.
    pub profiles: BTreeMap<String, ProfileSettings>,
    /// The `[open.handlers.SCHEME]` tables, checked.
    pub open_handlers: crate::open::Handlers,
}

/// One `[profiles.NAME]` table as written; unset fields take defaults.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProfileSettings {
    /// `dir`.
    pub dir: Option<String>,
    /// `dirs`: checked to be an array of strings when the profile is
    /// resolved, so that the error names the profile.
    pub dirs: Option<toml::Value>,
    /// `ttl`.
    pub ttl: Option<DurationSetting>,
    /// `refresh_interval`.
    pub refresh_interval: Option<DurationSetting>,
    /// `skew`.
    pub skew: Option<DurationSetting>,
    /// `gc_after`.
    pub gc_after: Option<DurationSetting>,
    /// `clock_margin`.
    pub clock_margin: Option<DurationSetting>,
    /// `client`.
    pub client: Option<String>,
    /// `strict`.
    pub strict: Option<bool>,
    /// `label`.
    pub label: Option<String>,
    /// `show`.
    pub show: Option<Vec<String>>,
}

/// A duration written as `"90s"` or as a number of seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct DurationSetting(pub Duration);

impl<'de> Deserialize<'de> for DurationSetting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Secs(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Secs(s) => Ok(DurationSetting(Duration::from_secs(s))),
            Raw::Text(t) => parse_duration(&t)
                .map(DurationSetting)
                .map_err(serde::de::Error::custom),
        }
    }
}

/// Parses a duration such as `90s`, `5m`, `1h 30m`, `1.5s` or a bare number
/// of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let t = text.trim();
    if let Ok(secs) = t.parse::<f64>()
        && secs.is_finite()
        && secs >= 0.0
    {
        // A number too large for a Duration is an error, not a panic.
        return Duration::try_from_secs_f64(secs).map_err(|_| DurationError {
            text: text.into(),
            why: "too large".into(),
        });
    }
    humantime::parse_duration(t).map_err(|e| DurationError {
        text: text.into(),
        why: e.to_string(),
    })
}

/// A duration that [`parse_duration`] cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration '{text}': {why} (write e.g. \"90s\", \"5m\", \"1h\")")]
pub struct DurationError {
    /// The text as given.
    pub text: String,
    /// What is wrong with it.
    pub why: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileShape {
    default_profile: Option<String>,
    #[serde(default)]
    profiles: BTreeMap<String, ProfileSettings>,
    #[serde(default)]
    open: OpenSettings,
}

/// `[open]`: how `presence open` acts on endpoints.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct OpenSettings {
    /// `[open.handlers.SCHEME]`, one table per scheme.
    #[serde(default)]
    handlers: BTreeMap<String, HandlerSettings>,
}

/// `[open.handlers.SCHEME]`: `command`, an argv template.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HandlerSettings {
    command: Vec<String>,
}

impl crate::open::Handlers {
    /// The handlers in force under the configuration `selection` names:
    /// the built-ins and the file's `[open.handlers.SCHEME]` tables.
    pub fn load(selection: &Selection, local: &LocalDirs) -> Result<crate::open::Handlers> {
        Ok(Config::load(selection, local)?.0.open_handlers)
    }
}

impl Config {
    /// Parses configuration text; `path` is only used in error messages.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let shape: FileShape = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().replace('\n', "\n  "),
        })?;
        let templates = shape
            .open
            .handlers
            .into_iter()
            .map(|(scheme, h)| (scheme, h.command))
            .collect();
        let open_handlers =
            crate::open::Handlers::new(templates).map_err(|e| ConfigError::Parse {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        Ok(Config {
            default_profile: shape.default_profile,
            profiles: shape.profiles,
            open_handlers,
        })
    }

    /// Loads the configuration chosen by `selection` (or the default file, if
    /// it exists; else the built-in defaults).
    pub fn load(selection: &Selection, local: &LocalDirs) -> Result<(Config, ConfigSource)> {
        let explicit = selection.config.is_some();
        let path = selection
            .config
            .clone()
            .unwrap_or_else(|| local.config_file());
        match read_bounded(&path) {
            Ok(text) => Ok((
                Config::parse(&text, &path)?,
                ConfigSource { path, exists: true },
            )),
            Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                if explicit {
                    Err(ConfigError::NotFound {
                        path,
                        explicit: true,
                    }
                    .into())
                } else {
                    Ok((
                        Config::default(),
                        ConfigSource {
                            path,
                            exists: false,
                        },
                    ))
                }
            }
            Err(ReadError::Io(source)) => Err(ConfigError::Read { path, source }.into()),
            Err(ReadError::Unusable(problem, fix)) => {
                Err(ConfigError::Unusable { path, problem, fix }.into())
            }
        }
    }

    /// The names of the profiles that can be selected (`default` always
    /// can; so can [`HERMES_PROFILE`], which is left out here so that
    /// `refresh --all-profiles` does not reach into Hermes' directory).
    pub fn profile_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.profiles.keys().cloned().collect();
        if !self.profiles.contains_key("default") {
            names.insert(0, "default".into());
        }
        names
    }

    /// Resolves the profile named `name` (or the default choice when `None`).
    pub fn profile(
        &self,
        name: Option<&str>,
        source: &ConfigSource,
        local: &LocalDirs,
    ) -> Result<Profile, ConfigError> {
        let name = name
            .or(self.default_profile.as_deref())
            .unwrap_or("default");
        let settings = match self.profiles.get(name) {
            Some(s) => s.clone(),
            None if name == "default" => ProfileSettings::default(),
            None if name == HERMES_PROFILE => ProfileSettings {
                dir: Some(hermes_dir(&local.home).to_string_lossy().into_owned()),
                label: Some("default".into()),
                show: Some(vec!["*".into()]),
                ..ProfileSettings::default()
            },
            None => {
                return Err(ConfigError::UnknownProfile {
                    name: name.into(),
                    known: self.profile_names(),
                    path: source.path.clone(),
                });
            }
        };
        let invalid = |message: String| ConfigError::Invalid {
            path: source.path.clone(),
            profile: name.into(),
            message,
        };
        let secs = |d: &Option<DurationSetting>, default: Duration| d.map_or(default, |d| d.0);
        let ttl = secs(&settings.ttl, limits::DEFAULT_TTL);
        let refresh_interval = secs(&settings.refresh_interval, limits::DEFAULT_REFRESH_INTERVAL);
        let skew = secs(&settings.skew, limits::DEFAULT_SKEW);
        let gc_after = secs(&settings.gc_after, limits::DEFAULT_GC_AFTER);
        let clock_margin = secs(&settings.clock_margin, limits::CLOCK_MARGIN);
        if clock_margin > limits::MAX_CLOCK_MARGIN {
            return Err(invalid(format!(
                "clock_margin = {} is over a minute; it covers the error of a learned clock \
                 offset, which is seconds (the default is 1s)",
                humantime::format_duration(clock_margin)
            )));
        }
        if !limits::ttl_in_range(ttl) {
            return Err(invalid(format!(
                "ttl = {} is out of range; use 1s to 1h",
                humantime::format_duration(ttl)
            )));
        }
        if refresh_interval.is_zero() || refresh_interval >= ttl {
            return Err(invalid(format!(
                "refresh_interval = {} is not below ttl = {}; records would expire between \
                 refreshes. Set refresh_interval to at most ttl / 3 (here {})",
                humantime::format_duration(refresh_interval),
                humantime::format_duration(ttl),
                humantime::format_duration(Duration::from_secs_f64(
                    (ttl.as_secs_f64() / 3.0).floor().max(1.0)
                ))
            )));
        }
        if skew > limits::MAX_SKEW {
            return Err(invalid("skew is over a day; use at most 24h".into()));
        }
        let label = settings.label.clone().unwrap_or_else(|| name.to_string());
        if label.trim().is_empty() {
            return Err(invalid("label must not be empty".into()));
        }
        let show = match &settings.show {
            None => ShowSet::Labels(vec![label.clone()]),
            Some(v) if v.iter().any(|l| l == "*") => ShowSet::All,
            Some(v) if v.is_empty() || v.iter().any(|l| l.trim().is_empty()) => {
                return Err(invalid(
                    "show must list at least one non-empty label, or \"*\"".into(),
                ));
            }
            Some(v) => ShowSet::Labels(v.clone()),
        };
        let base = source.path.parent().unwrap_or(Path::new("."));
        let (dir, dir_is_default) = match &settings.dir {
            Some(d) if d.trim().is_empty() => {
                return Err(invalid(
                    "dir is empty; remove it or name a directory".into(),
                ));
            }
            Some(d) => {
                let dir = expand_path(d, &local.home, base);
                check_dir(
                    &dir,
                    &local.home,
                    format!("`dir` of [profiles.{name}] in {}", source.path.display()),
                    false,
                )?;
                (Some(dir), false)
            }
            None => (None, true),
        };
        let mut extra = Vec::new();
        if let Some(value) = &settings.dirs {
            const E_G: &str =
                "write e.g. dirs = [\"~/Sync/presence\", \"~/.hermes/session-presence/active\"]";
            let entries: Vec<&str> = match value {
                toml::Value::Array(items) => items
                    .iter()
                    .map(toml::Value::as_str)
                    .collect::<Option<_>>()
                    .ok_or_else(|| {
                        invalid(format!(
                            "dirs must list directory paths, each a string; {E_G}"
                        ))
                    })?,
                other => {
                    return Err(invalid(format!(
                        "dirs must be an array of directory paths, not {}; {E_G}",
                        other.type_str()
                    )));
                }
            };
            if entries.is_empty() {
                return Err(invalid(
                    "dirs = [] lists no directory; remove it, or list the directories to read, \
                     e.g. dirs = [\"~/Sync/presence\", \"~/.hermes/session-presence/active\"]"
                        .into(),
                ));
            }
            for (i, d) in entries.iter().enumerate() {
                if d.trim().is_empty() {
                    return Err(invalid(format!(
                        "entry {} of dirs is empty; remove it or name a directory",
                        i + 1
                    )));
                }
                let path = expand_path(d, &local.home, base);
                check_dir(
                    &path,
                    &local.home,
                    format!("`dirs` of [profiles.{name}] in {}", source.path.display()),
                    false,
                )?;
                extra.push((*d, path));
            }
        }
        // `dir` is where the profile writes: the first entry of `dirs` when
        // only `dirs` is set.
        let (dir, dir_is_default) = match (dir, extra.first()) {
            (Some(dir), _) => (dir, dir_is_default),
            (None, Some((_, first))) => (first.clone(), false),
            (None, None) => (local.data.join(name), true),
        };
        // Read: `dir`, then each entry of `dirs` (`dir` listed there too is
        // read once; any other directory twice is a mistake).
        let mut dirs: Vec<PathBuf> = Vec::new();
        let mut seen: Vec<(String, PathBuf)> = Vec::new();
        if settings.dir.is_some() {
            seen.push(("dir".into(), resolve_existing(&dir)));
            dirs.push(dir.clone());
        }
        for (i, (given, path)) in extra.into_iter().enumerate() {
            let resolved = resolve_existing(&path);
            match seen.iter().find(|(_, r)| *r == resolved) {
                Some((what, _)) if what == "dir" => continue,
                Some((what, _)) => {
                    return Err(invalid(format!(
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
            dirs.push(dir.clone());
        }
        let expires_others = !is_hermes_dir(&dir, &local.home);
        Ok(Profile {
            name: name.into(),
            dir,
            dirs,
            dir_is_default,
            ttl,
            refresh_interval,
            skew,
            gc_after,
            clock_margin,
            client: settings.client.clone().unwrap_or_else(|| "terminal".into()),
            strict: settings.strict.unwrap_or(false),
            expires_others,
            label,
            show,
            open_handlers: self.open_handlers.clone(),
        })
    }
}

/// Expands a leading `~` to `home` and makes a relative path relative to `base`
/// (the config file's directory).
pub(crate) fn expand_path(path: &str, home: &Path, base: &Path) -> PathBuf {
    let p = if path == "~" {
        home.to_path_buf()
    } else if let Some(rest) = path.strip_prefix("~/") {
        home.join(rest)
    } else {
        PathBuf::from(path)
    };
    if p.is_absolute() { p } else { base.join(p) }
}

/// Why reading a config file failed.
enum ReadError {
    Io(std::io::Error),
    /// The problem and the fix.
    Unusable(String, &'static str),
}

/// Reads a config file without ever blocking or reading without bound: opened
/// with `O_NONBLOCK` (a FIFO does not wait for a writer), checked with `fstat`
/// to be a regular file of at most [`MAX_CONFIG_BYTES`], read up to one byte
/// past the limit (in case it grows meanwhile).
fn read_bounded(path: &Path) -> Result<String, ReadError> {
    use rustix::fs::{FileType, Mode, OFlags};
    const FIX: &str = "point --config or PRESENCE_CONFIG at a regular TOML file (`presence config init` writes one)";
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = rustix::fs::open(path, flags, Mode::empty()).map_err(|e| ReadError::Io(e.into()))?;
    let st = rustix::fs::fstat(&fd).map_err(|e| ReadError::Io(e.into()))?;
    let what = match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => None,
        FileType::Directory => Some("a directory"),
        FileType::Fifo => Some("a FIFO"),
        FileType::Socket => Some("a socket"),
        FileType::CharacterDevice | FileType::BlockDevice => Some("a device"),
        _ => Some("not a file"),
    };
    if let Some(what) = what {
        return Err(ReadError::Unusable(
            format!("it is {what}, not a regular file"),
            FIX,
        ));
    }
    let too_big = |n: u64| {
        ReadError::Unusable(
            format!("it is {n} bytes, over the {MAX_CONFIG_BYTES}-byte (1 MiB) limit"),
            "a configuration is a few lines of TOML; check that the path names the right file",
        )
    };
    let size = u64::try_from(st.st_size).unwrap_or(0);
    if size > MAX_CONFIG_BYTES {
        return Err(too_big(size));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    std::fs::File::from(fd)
        .take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|_| {
        ReadError::Unusable(
            "it is not UTF-8 text".into(),
            "a config file is TOML; check that the path names the right file",
        )
    })
}

/// `path` made absolute (against the current directory) with `.`, `..` and
/// repeated or trailing slashes resolved by their spelling, not the disk.
fn normalize(path: &Path) -> PathBuf {
    let absolute;
    let path = if path.is_absolute() {
        path
    } else {
        absolute = std::env::current_dir().unwrap_or_default().join(path);
        &absolute
    };
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Where `path` leads on disk: its symlinks resolved as far as it exists,
/// the missing rest appended.
fn resolve_existing(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    let lexical = normalize(path);
    for ancestor in lexical.ancestors().skip(1) {
        if let Ok(p) = std::fs::canonicalize(ancestor)
            && let Ok(rest) = lexical.strip_prefix(ancestor)
        {
            return p.join(rest);
        }
    }
    lexical
}

/// Whether `dir` must not be a records directory, and why: it is `/`, the
/// home directory `home` or a top-level system directory (`/etc`, `/usr`,
/// `/tmp` itself, …), after normalising both as spelt and as resolved on
/// disk (`~/link` with `link -> /` is `/`). `expire` deletes files there, and
/// `doctor` would advise changing its mode. Returns what it is and, when it
/// differs, where it leads.
pub(crate) fn refused_dir(dir: &Path, home: &Path) -> Option<(String, Option<PathBuf>)> {
    let lexical = normalize(dir);
    let resolved = resolve_existing(dir);
    let mut refused: Vec<(PathBuf, String)> =
        vec![(PathBuf::from("/"), "the root directory".into())];
    for h in [normalize(home), resolve_existing(home)] {
        refused.push((h, "the home directory".into()));
    }
    for s in SYSTEM_DIRS {
        for p in [PathBuf::from(s), resolve_existing(Path::new(s))] {
            let what = format!("the system directory {}", p.display());
            refused.push((p, what));
        }
    }
    let leads_elsewhere = (resolved != lexical).then(|| resolved.clone());
    [&lexical, &resolved].into_iter().find_map(|candidate| {
        refused
            .iter()
            .find(|(p, _)| p == candidate)
            .map(|(_, what)| (what.clone(), leads_elsewhere.clone()))
    })
}

fn check_dir(
    dir: &Path,
    home: &Path,
    origin: String,
    from_command_line: bool,
) -> Result<(), ConfigError> {
    match refused_dir(dir, home) {
        None => Ok(()),
        Some((what, resolved)) => Err(ConfigError::RefusedDir {
            dir: dir.to_path_buf(),
            resolved,
            what,
            origin,
            from_command_line,
        }),
    }
}

/// The one resolver: loads the configuration, picks the profile by
/// `--profile`, `PRESENCE_PROFILE`, `default_profile`, `default`, and applies
/// `--dir`. Every command goes through here.
pub(crate) fn resolve(selection: &Selection, local: &LocalDirs) -> Result<(Profile, ConfigSource)> {
    let (config, source) = Config::load(selection, local)?;
    let mut profile = config.profile(selection.profile.as_deref(), &source, local)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn local() -> LocalDirs {
        LocalDirs::under(Path::new("/home/u"))
    }

    fn src() -> ConfigSource {
        ConfigSource {
            path: "/home/u/config/presence/config.toml".into(),
            exists: true,
        }
    }

    fn profile(text: &str, name: Option<&str>) -> Result<Profile, ConfigError> {
        Config::parse(text, &src().path)?.profile(name, &src(), &local())
    }

    /// The example with the settings of its top and of `[profiles.default]`
    /// uncommented, except `dir` (an example of a synced folder); the
    /// commented `[profiles.hermes]` example stays as it is.
    fn example_uncommented() -> (String, Vec<String>) {
        let mut keys = Vec::new();
        let mut text = String::new();
        let mut in_defaults = true;
        for line in EXAMPLE.lines() {
            in_defaults &= !line.starts_with("# [profiles.");
            let setting = line
                .strip_prefix("# ")
                .filter(|rest| in_defaults && rest.contains(" = "))
                .filter(|rest| !rest.starts_with("dir ") && !rest.starts_with("dirs "));
            match setting {
                Some(rest) => {
                    keys.push(rest.split(' ').next().unwrap_or_default().to_string());
                    text.push_str(rest);
                }
                None => text.push_str(line),
            }
            text.push('\n');
        }
        (text, keys)
    }

    #[test]
    fn example_sets_nothing_and_uncommented_states_the_defaults() {
        let table: toml::Table = toml::from_str(EXAMPLE).unwrap();
        let mut profiles = toml::Table::new();
        profiles.insert("default".into(), toml::Table::new().into());
        let mut only = toml::Table::new();
        only.insert("profiles".into(), profiles.into());
        assert_eq!(table, only, "the example sets a value");

        let (text, keys) = example_uncommented();
        // Every setting a profile has, as the parser names them when it
        // refuses an unknown one.
        let refusal = toml::from_str::<ProfileSettings>("unknown = 1")
            .unwrap_err()
            .to_string();
        let expected = &refusal[refusal.find("expected one of").unwrap()..];
        let mut want: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
        assert!(want.len() >= 10, "{refusal}");
        want.retain(|k| *k != "dir" && *k != "dirs");
        want.insert(0, "default_profile");
        assert_eq!(keys, want, "a setting without its default in the example");
        let builtin = Config::default().profile(None, &src(), &local()).unwrap();
        assert_eq!(profile(&text, None).unwrap(), builtin);
    }

    #[test]
    fn hermes_dir_is_found_the_way_hermes_finds_it() {
        let os = |s: &str| Some(std::ffi::OsString::from(s));
        let (home, cwd) = (Path::new("/home/u"), Path::new("/w"));
        let cases = [
            (None, None, "/home/u/.hermes/session-presence/active"),
            (None, os("/srv/h"), "/srv/h/session-presence/active"),
            (None, os("  "), "/home/u/.hermes/session-presence/active"),
            (os("/p/d"), os("/srv/h"), "/p/d"),
            (os(" rel/d "), None, "/w/rel/d"),
            (os(""), os("h"), "/w/h/session-presence/active"),
        ];
        for (dir, hermes_home, want) in cases {
            let what = format!("{dir:?} {hermes_home:?}");
            assert_eq!(
                hermes_dir_from(dir, hermes_home, home, cwd),
                Path::new(want),
                "{what}"
            );
        }
    }

    #[test]
    fn the_hermes_profile_is_built_in_and_a_defined_one_wins() {
        let p = profile("", Some("hermes")).unwrap();
        assert_eq!(p.dir, hermes_dir(Path::new("/home/u")));
        assert_eq!((p.label.as_str(), &p.show), ("default", &ShowSet::All));
        assert!(!p.dir_is_default && !p.expires_others);
        let p = profile("[profiles.hermes]\ndir = \"/srv/x\"\n", Some("hermes")).unwrap();
        assert_eq!(
            (p.dir.as_path(), p.label.as_str()),
            (Path::new("/srv/x"), "hermes")
        );
        assert!(p.expires_others);
        assert!(profile("", None).unwrap().expires_others);
    }

    #[test]
    fn example_parses_to_the_builtin_defaults() {
        let from_example = profile(EXAMPLE, None).unwrap();
        let builtin = Config::default().profile(None, &src(), &local()).unwrap();
        assert_eq!(from_example, builtin);
        assert_eq!(builtin.dir, Path::new("/home/u/data/presence/default"));
        assert!(builtin.dir_is_default);
        assert_eq!(builtin.ttl, Duration::from_secs(90));
        assert_eq!(builtin.refresh_interval, Duration::from_secs(30));
        assert_eq!(builtin.skew, Duration::from_secs(300));
        assert_eq!(builtin.gc_after, Duration::from_secs(3600));
        assert_eq!(builtin.label, "default");
        assert_eq!(builtin.show, ShowSet::Labels(vec!["default".into()]));
    }

    #[test]
    fn profile_selection_and_settings() {
        let text = r#"
            default_profile = "work"
            [profiles.work]
            dir = "~/Sync/presence"
            ttl = 60
            refresh_interval = "15s"
            label = "team"
            [profiles.hermes]
            dir = "rel/dir"
            label = "default"
            show = ["*"]
        "#;
        let work = profile(text, None).unwrap();
        assert_eq!(work.name, "work");
        assert_eq!(work.dir, Path::new("/home/u/Sync/presence"));
        assert_eq!(work.ttl, Duration::from_secs(60));
        assert_eq!(work.label, "team");
        assert_eq!(work.show, ShowSet::Labels(vec!["team".into()]));
        let hermes = profile(text, Some("hermes")).unwrap();
        assert_eq!(hermes.dir, Path::new("/home/u/config/presence/rel/dir"));
        assert_eq!(hermes.show, ShowSet::All);
        // `default` always exists.
        assert_eq!(profile(text, Some("default")).unwrap().label, "default");
    }

    #[test]
    fn error_table() {
        let cases = [
            ("[profiles.a]\nttl = \"forever\"", "invalid duration"),
            ("[profiles.a]\nttl = \"2h\"", "out of range"),
            (
                "[profiles.a]\nttl = \"30s\"\nrefresh_interval = \"30s\"",
                "not below ttl",
            ),
            ("[profiles.a]\ntll = \"30s\"", "unknown field `tll`"),
            (
                "[profiles.a]\nclock_margin = \"2m\"",
                "clock_margin = 2m is over a minute",
            ),
            ("[profiles.a]\ndir = \"\"", "dir is empty"),
            ("[profiles.a]\nshow = []", "show must list"),
            (
                "[profiles.a]\ndirs = []",
                "dirs = [] lists no directory; remove it",
            ),
            (
                "[profiles.a]\ndirs = [\"x\", \" \"]",
                "entry 2 of dirs is empty",
            ),
            (
                "[profiles.a]\ndirs = \"x\"",
                "dirs must be an array of directory paths, not string",
            ),
            (
                "[profiles.a]\ndirs = [\"x\", 2]",
                "dirs must list directory paths, each a string",
            ),
            (
                "[profiles.a]\ndirs = [\"x\", \"y\", \"./x/\"]",
                "entry 3 of dirs (./x/) is the same directory as entry 1 of dirs",
            ),
            (
                "[profiles.a]\ndirs = [\"x\", \"/usr\"]",
                "the system directory /usr",
            ),
            ("[profiles.a]\nlabel = \" \"", "label must not be empty"),
            ("[profiles.a\n", "line 1"),
            ("default_profile = 3", "default_profile"),
            (
                "[profiles.a]\ndir = \"/\"",
                "refusing / as the presence directory",
            ),
            ("[profiles.a]\ndir = \"~/\"", "it is the home directory"),
            (
                "[profiles.a]\ndir = \"/etc/\"",
                "it is the system directory /etc",
            ),
        ];
        for (text, want) in cases {
            let err = profile(text, Some("a")).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
            assert!(err.contains("config.toml"), "{text:?}: {err}");
        }
    }

    #[test]
    fn dirs_are_read_dir_first_and_written_to_dir() {
        let cfg = "/home/u/config/presence";
        // Without `dir`, the first entry is `dir`.
        let p = profile("[profiles.a]\ndirs = [\"~/Sync/p\", \"rel\"]\n", Some("a")).unwrap();
        assert_eq!(p.dir, Path::new("/home/u/Sync/p"));
        assert_eq!(
            p.dirs,
            [
                PathBuf::from("/home/u/Sync/p"),
                PathBuf::from(cfg).join("rel")
            ]
        );
        assert!(!p.dir_is_default);
        // With `dir`, it comes first, and listed again it is read once.
        let text = "[profiles.a]\ndir = \"/srv/w\"\ndirs = [\"/srv/r\", \"/srv/w/\"]\n";
        let p = profile(text, Some("a")).unwrap();
        assert_eq!(p.dir, Path::new("/srv/w"));
        assert_eq!(p.dirs, [PathBuf::from("/srv/w"), PathBuf::from("/srv/r")]);
        // Without `dirs`, just `dir` (or the default).
        assert_eq!(
            profile("", None).unwrap().dirs,
            [local().data.join("default")]
        );
        // `--dir` replaces both.
        let tmp = tempfile::tempdir().unwrap();
        let local = LocalDirs::under(tmp.path());
        let path = tmp.path().join("c.toml");
        std::fs::write(
            &path,
            "[profiles.default]\ndirs = [\"/srv/a\", \"/srv/b\"]\n",
        )
        .unwrap();
        let sel = Selection {
            config: Some(path),
            dir: Some("/srv/only".into()),
            ..Selection::default()
        };
        let (p, _) = resolve(&sel, &local).unwrap();
        assert_eq!(
            (p.dir.as_path(), &p.dirs[..]),
            (Path::new("/srv/only"), &[PathBuf::from("/srv/only")][..])
        );
        // Hermes' own directory among them: expire leaves other writers' records there.
        let hermes = hermes_dir(&local.home);
        assert!(!expires_others_in(&hermes, &local.home));
        assert!(expires_others_in(Path::new("/srv/a"), &local.home));
    }

    #[test]
    fn unknown_profile_lists_known_ones() {
        let err = profile("[profiles.work]\n", Some("wrok"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("'wrok'") && err.contains("default, work"),
            "{err}"
        );
    }

    #[test]
    fn show_set_maps_empty_label_to_default() {
        let s = ShowSet::Labels(vec!["default".into()]);
        assert!(s.shows("") && s.shows("default") && !s.shows("work"));
        assert!(ShowSet::All.shows("anything"));
    }

    #[test]
    fn duration_table() {
        for (text, secs) in [
            ("90s", 90.0),
            ("5m", 300.0),
            ("1h 30m", 5400.0),
            ("1.5", 1.5),
            ("0", 0.0),
        ] {
            assert_eq!(parse_duration(text).unwrap().as_secs_f64(), secs, "{text}");
        }
        for bad in [
            "",
            "-1",
            "ten",
            "5 parsecs",
            "inf",
            "1e30",
            "99999999999999999999999",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    proptest::proptest! {
        #[test]
        fn config_parsing_never_panics(text in "\\PC{0,200}") {
            if let Ok(c) = Config::parse(&text, Path::new("x.toml")) {
                for name in c.profile_names() {
                    let _ = c.profile(Some(&name), &src(), &local());
                }
            }
        }

        #[test]
        fn config_shaped_text_never_panics(
            key in "(ttl|refresh_interval|skew|gc_after|dir|label|show|strict|client|bogus)",
            value in "(\"[0-9a-z ]{0,8}\"|[0-9]{1,20}|-?[0-9.e]{1,8}|true|\\[\"[a-z*]{0,3}\"\\]|\\[\\])",
        ) {
            let text = format!("[profiles.p]\n{key} = {value}\n");
            if let Ok(c) = Config::parse(&text, Path::new("x.toml")) {
                let _ = c.profile(Some("p"), &src(), &local());
            }
        }
    }

    #[test]
    fn refused_dirs_after_normalising() {
        let tmp = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(tmp.path()).unwrap();
        std::os::unix::fs::symlink("/", home.join("root-link")).unwrap();
        std::os::unix::fs::symlink(&home, home.join("home-link")).unwrap();
        std::os::unix::fs::symlink("/etc", home.join("etc-link")).unwrap();
        std::fs::create_dir(home.join("Sync")).unwrap();
        let h = |rest: &str| format!("{}/{rest}", home.display());
        let refused = [
            ("/".to_string(), "the root directory"),
            ("//".into(), "the root directory"),
            ("/./.".into(), "the root directory"),
            ("/usr/..".into(), "the root directory"),
            ("/etc/".into(), "the system directory /etc"),
            ("/usr/share/..".into(), "the system directory /usr"),
            ("/tmp".into(), "the system directory /tmp"),
            ("/proc/".into(), "the system directory /proc"),
            (h(""), "the home directory"),
            (h("."), "the home directory"),
            (h("Sync/.."), "the home directory"),
            (h("root-link"), "the root directory"),
            (h("root-link/"), "the root directory"),
            (h("home-link"), "the home directory"),
            (h("etc-link"), "the system directory"),
        ];
        for (dir, want) in refused {
            let (what, _) = refused_dir(Path::new(&dir), &home)
                .unwrap_or_else(|| panic!("{dir} was not refused"));
            assert!(what.starts_with(want), "{dir}: {what}");
        }
        let (_, leads) = refused_dir(&home.join("root-link"), &home).unwrap();
        assert_eq!(leads.as_deref(), Some(Path::new("/")));
        for fine in [
            h("Sync"),
            h("Sync/presence"),
            h("root-link/tmp/x"),
            "/tmp/presence".into(),
            "/etc/presence".into(),
        ] {
            assert_eq!(refused_dir(Path::new(&fine), &home), None, "{fine}");
        }
    }

    #[test]
    fn a_refused_dir_on_the_command_line_is_a_usage_error() {
        let tmp = tempfile::tempdir().unwrap();
        let local = LocalDirs::under(tmp.path());
        for dir in ["/", "/var/", "/usr/lib/.."] {
            let sel = Selection {
                dir: Some(dir.into()),
                ..Selection::default()
            };
            for err in [
                resolve(&sel, &local).unwrap_err(),
                resolve_all(&sel, &local).unwrap_err(),
            ] {
                assert!(
                    matches!(
                        err,
                        crate::Error::Config(ConfigError::RefusedDir {
                            from_command_line: true,
                            ..
                        })
                    ),
                    "{dir}: {err:?}"
                );
                let msg = err.to_string();
                assert!(msg.contains("refusing") && msg.contains("--dir"), "{msg}");
            }
        }
    }

    /// Loads the configuration at `path`.
    fn load(path: &Path) -> Result<(Config, ConfigSource)> {
        let tmp = tempfile::tempdir().unwrap();
        let sel = Selection {
            config: Some(path.to_path_buf()),
            ..Selection::default()
        };
        Config::load(&sel, &LocalDirs::under(tmp.path()))
    }

    #[test]
    fn config_files_are_bounded_regular_files() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("fifo.toml");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let big = tmp.path().join("big.toml");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_CONFIG_BYTES + 1)
            .unwrap();
        let huge = tmp.path().join("huge.toml");
        std::fs::File::create(&huge)
            .unwrap()
            .set_len(1 << 40)
            .unwrap();
        let zero_link = tmp.path().join("zero.toml");
        std::os::unix::fs::symlink("/dev/zero", &zero_link).unwrap();
        let binary = tmp.path().join("binary.toml");
        std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
        let cases = [
            (fifo.as_path(), "it is a FIFO, not a regular file"),
            (Path::new("/dev/zero"), "it is a device, not a regular file"),
            (zero_link.as_path(), "it is a device, not a regular file"),
            (tmp.path(), "it is a directory, not a regular file"),
            (
                big.as_path(),
                "1048577 bytes, over the 1048576-byte (1 MiB) limit",
            ),
            (huge.as_path(), "over the 1048576-byte (1 MiB) limit"),
            (binary.as_path(), "not UTF-8 text"),
        ];
        for (path, want) in cases {
            let err = load(path).unwrap_err().to_string();
            assert!(err.contains(want), "{}: {err}", path.display());
            assert!(err.contains(&path.display().to_string()), "{err}");
        }
        // Exactly at the limit is fine.
        let full = tmp.path().join("full.toml");
        let mut text = "# padding\n".repeat(MAX_CONFIG_BYTES as usize / 10);
        text.push_str(&"#".repeat(MAX_CONFIG_BYTES as usize - text.len()));
        std::fs::write(&full, text).unwrap();
        assert!(load(&full).unwrap().1.exists);
    }

    #[test]
    fn open_handlers_are_read_and_checked() {
        let path = Path::new("c.toml");
        let text = "[open.handlers.tmux]\ncommand = [\"wezterm\", \"ssh\", \"{user_at_host}\"]\n";
        let config = Config::parse(text, path).unwrap();
        assert_eq!(
            config.open_handlers.configured("tmux"),
            Some(&["wezterm".to_string(), "ssh".into(), "{user_at_host}".into()][..])
        );
        // The example's handler, uncommented, is one.
        let example = EXAMPLE
            .replace("# [open.", "[open.")
            .replace("# command", "command");
        let config = Config::parse(&example, path).unwrap();
        assert!(config.open_handlers.configured("tmux").is_some());
        for bad in [
            "[open.handlers.tmux]\ncommand = []\n",
            "[open.handlers.tmux]\ncommand = [\"{host}\"]\n",
            "[open.handlers.tmux]\ncommand = [\"x\", \"{nope}\"]\n",
            "[open.handlers.tmux]\nargv = [\"x\"]\n",
            "[open]\nhandler = 1\n",
        ] {
            let e = Config::parse(bad, path).unwrap_err();
            assert!(matches!(e, ConfigError::Parse { .. }), "{bad}: {e}");
        }
    }

    #[test]
    fn tilde_expansion() {
        let home = Path::new("/h");
        let base = Path::new("/cfg");
        assert_eq!(expand_path("~", home, base), Path::new("/h"));
        assert_eq!(expand_path("~/x", home, base), Path::new("/h/x"));
        assert_eq!(expand_path("/abs", home, base), Path::new("/abs"));
        assert_eq!(expand_path("rel", home, base), Path::new("/cfg/rel"));
        assert_eq!(
            expand_path("~user/x", home, base),
            Path::new("/cfg/~user/x")
        );
    }
}
