//! The configuration file's TOML shape, read and parsed, and the durations
//! it is written in. The commented example `presence config init` writes is
//! `config.example.toml` beside this file.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::paths::{ReadError, read_bounded};
use super::{ConfigSource, Selection};
use crate::error::{ConfigError, Result};
use crate::local::LocalDirs;

/// The commented example that `presence config init` writes. It sets
/// nothing: every setting is commented out and shows its default, so that a
/// file written today does not pin today's defaults. Tests check that it
/// parses to exactly the built-in defaults, commented or uncommented.
pub const EXAMPLE: &str = include_str!("config.example.toml");

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
    if t.starts_with('-') {
        return Err(DurationError {
            text: text.into(),
            why: "a duration cannot be negative".into(),
        });
    }
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
    /// can; so can [`HERMES_PROFILE`](super::hermes::HERMES_PROFILE), which
    /// is left out here so that `refresh --all-profiles` does not reach into
    /// Hermes' directory).
    pub fn profile_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.profiles.keys().cloned().collect();
        if !self.profiles.contains_key("default") {
            names.insert(0, "default".into());
        }
        names
    }
}
