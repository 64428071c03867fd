//! The TOML configuration and the one profile resolver that every command
//! uses, so that read, write, clear and list can never disagree about the
//! directory or the scope.
//!
//! The file lives at `<config dir>/presence/config.toml`, or wherever
//! `--config` / `PRESENCE_CONFIG` point. Without a file, one profile exists:
//! `default`, with its records in `<data dir>/presence/default`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::error::{ConfigError, Result};
use crate::local::LocalDirs;

/// The commented example that `presence config init` writes. It states every
/// default; a test checks that it parses to exactly the built-in defaults.
pub const EXAMPLE: &str = r#"# presence configuration
# Location: <config dir>/presence/config.toml (override with --config or PRESENCE_CONFIG).
# Durations accept "90s", "5m", "1h 30m" or a number of seconds.

# Profile used when neither --profile nor PRESENCE_PROFILE names one.
default_profile = "default"

[profiles.default]
# The shared (synced) directory of records. Default: <data dir>/presence/<profile name>.
# Point it into a synced folder to see sessions of other devices, e.g. "~/Sync/presence".
# dir = "~/Sync/presence"

# How long a record stays live after its last refresh arrived (1s to 1h).
ttl = "90s"
# How often `refresh`, `run` and the library guard re-publish; must be below ttl.
refresh_interval = "30s"
# How far behind ours another device's clock may run before its records count as expired.
skew = "5m"
# How long after expiry `expire` deletes another device's records.
gc_after = "1h"
# Client name stamped into records published without --client.
client = "terminal"
# Refuse (exit 3) to publish a record that would need redaction, instead of redacting it.
strict = false
# Label stamped into the `profile` field of records. Default: the profile's name.
# label = "default"
# Labels that list/watch show. Default: [<label>]. ["*"] shows every record in dir.
# show = ["default"]

# A profile that shows what Hermes Agent publishes, in its own directory:
# [profiles.hermes]
# dir = "~/.hermes/session-presence/active"
# label = "default"
# show = ["*"]
"#;

/// Which records `list` and `watch` show.
#[derive(Debug, Clone, PartialEq, Eq)]
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
                let label = if profile.is_empty() {
                    "default"
                } else {
                    profile
                };
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
    /// The records directory (absolute unless a relative `--dir` was given).
    pub dir: PathBuf,
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
    /// Default client name. Default `terminal`.
    pub client: String,
    /// Refuse publishes that need redaction. Default false.
    pub strict: bool,
    /// Label stamped into records. Default: the profile's name.
    pub label: String,
    /// Labels shown by list/watch. Default: `[label]`.
    pub show: ShowSet,
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
#[derive(Debug, Clone, Default)]
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
pub struct Config {
    /// `default_profile`.
    pub default_profile: Option<String>,
    /// The `[profiles.NAME]` tables, unresolved.
    pub profiles: BTreeMap<String, ProfileSettings>,
}

/// One `[profiles.NAME]` table as written; unset fields take defaults.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProfileSettings {
    /// `dir`.
    pub dir: Option<String>,
    /// `ttl`.
    pub ttl: Option<DurationSetting>,
    /// `refresh_interval`.
    pub refresh_interval: Option<DurationSetting>,
    /// `skew`.
    pub skew: Option<DurationSetting>,
    /// `gc_after`.
    pub gc_after: Option<DurationSetting>,
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
pub struct DurationSetting(pub Duration);

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
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if let Ok(secs) = t.parse::<f64>()
        && secs.is_finite()
        && secs >= 0.0
    {
        // A number too large for a Duration is an error, not a panic.
        return Duration::try_from_secs_f64(secs)
            .map_err(|_| format!("invalid duration '{text}': too large"));
    }
    humantime::parse_duration(t)
        .map_err(|e| format!("invalid duration '{text}': {e} (write e.g. \"90s\", \"5m\", \"1h\")"))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileShape {
    default_profile: Option<String>,
    #[serde(default)]
    profiles: BTreeMap<String, ProfileSettings>,
}

impl Config {
    /// Parses configuration text; `path` is only used in error messages.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let shape: FileShape = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().replace('\n', "\n  "),
        })?;
        Ok(Config {
            default_profile: shape.default_profile,
            profiles: shape.profiles,
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
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok((
                Config::parse(&text, &path)?,
                ConfigSource { path, exists: true },
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
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
            Err(source) => Err(ConfigError::Read { path, source }.into()),
        }
    }

    /// The names of the profiles that can be selected (`default` always can).
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
        let secs = |d: &Option<DurationSetting>, default: u64| {
            d.map(|d| d.0).unwrap_or(Duration::from_secs(default))
        };
        let ttl = secs(&settings.ttl, 90);
        let refresh_interval = secs(&settings.refresh_interval, 30);
        let skew = secs(&settings.skew, 300);
        let gc_after = secs(&settings.gc_after, 3600);
        if ttl < Duration::from_secs(1) || ttl > Duration::from_secs(3600) {
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
        if skew > Duration::from_secs(86_400) {
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
        let (dir, dir_is_default) = match &settings.dir {
            Some(d) if d.trim().is_empty() => {
                return Err(invalid(
                    "dir is empty; remove it or name a directory".into(),
                ));
            }
            Some(d) => {
                let base = source.path.parent().unwrap_or(Path::new("."));
                (expand_path(d, &local.home, base), false)
            }
            None => (local.data.join(name), true),
        };
        Ok(Profile {
            name: name.into(),
            dir,
            dir_is_default,
            ttl,
            refresh_interval,
            skew,
            gc_after,
            client: settings.client.clone().unwrap_or_else(|| "terminal".into()),
            strict: settings.strict.unwrap_or(false),
            label,
            show,
        })
    }
}

/// Expands a leading `~` to `home` and makes a relative path relative to `base`
/// (the config file's directory).
pub fn expand_path(path: &str, home: &Path, base: &Path) -> PathBuf {
    let p = if path == "~" {
        home.to_path_buf()
    } else if let Some(rest) = path.strip_prefix("~/") {
        home.join(rest)
    } else {
        PathBuf::from(path)
    };
    if p.is_absolute() { p } else { base.join(p) }
}

/// The one resolver: loads the configuration, picks the profile by
/// `--profile`, `PRESENCE_PROFILE`, `default_profile`, `default`, and applies
/// `--dir`. Every command goes through here.
pub fn resolve(selection: &Selection, local: &LocalDirs) -> Result<(Profile, ConfigSource)> {
    let (config, source) = Config::load(selection, local)?;
    let mut profile = config.profile(selection.profile.as_deref(), &source, local)?;
    if let Some(dir) = &selection.dir {
        profile.dir = dir.clone();
        profile.dir_is_default = false;
    }
    Ok((profile, source))
}

/// Every profile of the configuration (`default` included), each resolved and
/// with `--dir` applied: what `refresh --all-profiles` covers.
pub fn resolve_all(selection: &Selection, local: &LocalDirs) -> Result<Vec<Profile>> {
    let (config, source) = Config::load(selection, local)?;
    config
        .profile_names()
        .iter()
        .map(|name| {
            let mut p = config.profile(Some(name), &source, local)?;
            if let Some(dir) = &selection.dir {
                p.dir = dir.clone();
                p.dir_is_default = false;
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
            ("[profiles.a]\ndir = \"\"", "dir is empty"),
            ("[profiles.a]\nshow = []", "show must list"),
            ("[profiles.a]\nlabel = \" \"", "label must not be empty"),
            ("[profiles.a\n", "line 1"),
            ("default_profile = 3", "default_profile"),
        ];
        for (text, want) in cases {
            let err = profile(text, Some("a")).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
            assert!(err.contains("config.toml"), "{text:?}: {err}");
        }
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
