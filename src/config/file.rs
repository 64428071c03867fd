//! The configuration file's TOML shape, read and parsed, and the durations
//! it is written in. The commented example `presence config init` writes is
//! `config.example.toml` beside this file.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde::de::{self, Visitor};
use std::fmt;

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
    /// `[discover] agents`, checked: each one of [`AGENTS`](super::AGENTS),
    /// once, in the file's order.
    pub discover: Vec<&'static str>,
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
    #[serde(default, deserialize_with = "duration_of::ttl")]
    pub ttl: Option<DurationSetting>,
    /// `refresh_interval`.
    #[serde(default, deserialize_with = "duration_of::refresh_interval")]
    pub refresh_interval: Option<DurationSetting>,
    /// `skew`.
    #[serde(default, deserialize_with = "duration_of::skew")]
    pub skew: Option<DurationSetting>,
    /// `gc_after`.
    #[serde(default, deserialize_with = "duration_of::gc_after")]
    pub gc_after: Option<DurationSetting>,
    /// `clock_margin`.
    #[serde(default, deserialize_with = "duration_of::clock_margin")]
    pub clock_margin: Option<DurationSetting>,
    /// `client`.
    pub client: Option<String>,
    /// `strict`.
    pub strict: Option<bool>,
    /// `label`.
    pub label: Option<String>,
    /// `show`.
    #[serde(default, deserialize_with = "labels")]
    pub show: Option<Vec<String>>,
}

/// A duration written as `"90s"` or as a whole number of seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct DurationSetting(pub Duration);

/// Reads the duration setting `key`; anything else than a duration text or
/// a whole number of seconds is refused with a message that names the key
/// and the forms it takes.
struct DurationOf(&'static str);

impl<'de> Visitor<'de> for DurationOf {
    type Value = DurationSetting;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let key = self.0;
        write!(
            f,
            "{key} as a duration: a text such as {key} = \"90s\", \"5m\" or \"1h 30m\", or a \
             whole number of seconds such as {key} = 90"
        )
    }

    fn visit_u64<E: de::Error>(self, secs: u64) -> Result<DurationSetting, E> {
        Ok(DurationSetting(Duration::from_secs(secs)))
    }

    fn visit_i64<E: de::Error>(self, secs: i64) -> Result<DurationSetting, E> {
        match u64::try_from(secs) {
            Ok(secs) => self.visit_u64(secs),
            Err(_) => Err(E::custom(format!(
                "{} = {secs} is negative; a duration is at least 0 (write e.g. {} = \"90s\")",
                self.0, self.0
            ))),
        }
    }

    fn visit_f64<E: de::Error>(self, secs: f64) -> Result<DurationSetting, E> {
        let key = self.0;
        Err(E::custom(if secs.is_finite() && secs >= 0.0 {
            format!(
                "{key} = {secs} is not a whole number of seconds; write {key} = \"{secs}s\" (a \
                 duration written as a text may have a fraction) or whole seconds, e.g. {key} = {}",
                secs.round()
            )
        } else {
            format!("{key} = {secs} is not a duration; write e.g. {key} = \"90s\" or {key} = 90")
        }))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<DurationSetting, E> {
        parse_duration(text)
            .map(DurationSetting)
            .map_err(|e| E::custom(format!("{}: {e}", self.0)))
    }
}

/// One deserializer per duration setting, each naming its key.
mod duration_of {
    use super::{DurationOf, DurationSetting};

    macro_rules! keys {
        ($($key:ident),*) => {$(
            pub(super) fn $key<'de, D: serde::Deserializer<'de>>(
                d: D,
            ) -> Result<Option<DurationSetting>, D::Error> {
                d.deserialize_any(DurationOf(stringify!($key))).map(Some)
            }
        )*};
    }

    keys!(ttl, refresh_interval, skew, gc_after, clock_margin);
}

/// Reads `show`, a list of labels; a single text is refused with the list
/// to write instead (`show = "*"`: write `show = ["*"]`).
fn labels<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    struct Labels;
    impl<'de> Visitor<'de> for Labels {
        type Value = Vec<String>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(
                "show as a list of labels, e.g. show = [\"default\", \"work\"], or [\"*\"] for \
                 every label",
            )
        }

        fn visit_str<E: de::Error>(self, label: &str) -> Result<Vec<String>, E> {
            let label = toml::Value::String(label.into());
            Err(E::custom(format!(
                "show = {label} is one text, and show is a list of labels: write show = [{label}]"
            )))
        }

        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
            let mut labels = Vec::new();
            while let Some(label) = seq.next_element()? {
                labels.push(label);
            }
            Ok(labels)
        }
    }
    d.deserialize_any(Labels).map(Some)
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
    #[serde(default)]
    discover: DiscoverSettings,
}

/// `[discover]`: the local agents whose sessions the refresher publishes.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct DiscoverSettings {
    /// Checked by [`discover_agents`], so that the error names the value.
    agents: Option<toml::Value>,
}

/// `[discover] agents`: an array of agent names, each one of
/// [`AGENTS`](super::AGENTS). A name given twice counts once.
fn discover_agents(value: Option<toml::Value>) -> Result<Vec<&'static str>, String> {
    let known = super::AGENTS.join(", ");
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let toml::Value::Array(items) = value else {
        return Err(format!(
            "[discover] agents must be an array of agent names, e.g. agents = [\"claude-code\", \
             \"codex\"] (the agents presence can discover: {known})"
        ));
    };
    let mut agents = Vec::new();
    for item in items {
        let toml::Value::String(name) = &item else {
            return Err(format!(
                "[discover] agents holds {item}, which is not an agent name; write names in \
                 quotes, from: {known}"
            ));
        };
        let Some(agent) = super::AGENTS.iter().find(|a| **a == name) else {
            return Err(format!(
                "[discover] agents names {name:?}, which presence cannot discover; the agents \
                 it can discover are {known}"
            ));
        };
        if !agents.contains(agent) {
            agents.push(*agent);
        }
    }
    Ok(agents)
}

/// `[open]`: how `presence open` acts on endpoints.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct OpenSettings {
    /// `[open.handlers.SCHEME]`, one table per scheme.
    #[serde(default)]
    handlers: BTreeMap<String, HandlerSettings>,
}

/// `[open.handlers.SCHEME]`: `command`, an argv template, and
/// `inside_tmux`, the one that runs instead inside tmux.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HandlerSettings {
    command: Option<Vec<String>>,
    inside_tmux: Option<Vec<String>>,
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
        let mut templates = BTreeMap::new();
        let mut inside_tmux = BTreeMap::new();
        for (scheme, h) in shape.open.handlers {
            if let Some(t) = h.inside_tmux {
                inside_tmux.insert(scheme.clone(), t);
            }
            match h.command {
                Some(command) => {
                    templates.insert(scheme, command);
                }
                None if inside_tmux.contains_key(&scheme) => {}
                None => {
                    return Err(ConfigError::Parse {
                        path: path.to_path_buf(),
                        message: format!(
                            "[open.handlers.{scheme}] has no `command`; write \
                             command = [\"PROGRAM\", \"ARG\", …] (placeholders such as \
                             {{host}} fill the arguments)"
                        ),
                    });
                }
            }
        }
        let open_handlers = crate::open::Handlers::new(templates)
            .and_then(|h| h.with_inside_tmux(inside_tmux))
            .map_err(|e| ConfigError::Parse {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        let discover =
            discover_agents(shape.discover.agents).map_err(|message| ConfigError::Parse {
                path: path.to_path_buf(),
                message,
            })?;
        Ok(Config {
            default_profile: shape.default_profile,
            profiles: shape.profiles,
            open_handlers,
            discover,
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
                        from_env: selection.config_from_env,
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
            Err(ReadError::Io(error)) => Err(ConfigError::Read { path, error }.into()),
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
