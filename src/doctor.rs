//! `presence doctor`: checks of the configuration, the directory, the sync
//! engine around it and the records in it, each with a verdict and a fix.
//!
//! [`doctor`] lists the checks in the order they are reported. Each check is one
//! function, kept with the others that look at the same thing: the directory
//! itself (`directory`), the sync engine around it (`sync`), the records
//! in it (`records`) and what keeps this device's records fresh
//! (`refresher`).

use std::ops::ControlFlow;
use std::path::Path;

use serde::Serialize;

use crate::config::{ConfigSource, Profile};
use crate::registry::Registry;

mod directory;
mod records;
mod refresher;
mod stignore;
mod sync;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Status {
    /// Fine.
    Ok,
    /// Works, but deserves attention.
    Warn,
    /// Broken: `presence` cannot work like this.
    Fail,
}

/// One check: its verdict and what it found in words, and, for a program,
/// what it is about (the fields after `fix`, each only where it applies).
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// Short name: `config`, `directory`, `permissions`, `sync-engine`, …
    pub check: &'static str,
    /// The verdict.
    pub status: Status,
    /// What was found.
    pub message: String,
    /// What to do, when something is to be done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// `device`, `device-id`: the `device_id` of the device it is about
    /// (empty for records that carry none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_id: Option<String>,
    /// `device`: the host its records name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// `device`: whether it is this device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub this_device: Option<bool>,
    /// `device`: its records (of every profile, expired or not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub records: Option<usize>,
    /// `device`: how many of them are live.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live: Option<usize>,
    /// `device`: seconds since its newest record arrived (for this device:
    /// was written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_seen_s: Option<f64>,
    /// `device` (another one): its clock minus this one's, in seconds, as
    /// learned or, before that, estimated from its records; absent when no
    /// record says its time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset_s: Option<f64>,
    /// `device` (another one): whether `offset_s` is learned (`false`: the
    /// estimate of the records at hand).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset_learned: Option<bool>,
    /// `refresher`: the sessions it names.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<String>,
    /// `secrets`, `forged`, `device-id`: the record files it names.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// `discovery`: the agents whose sessions the refresher discovers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<&'static str>,
}

impl Default for Check {
    /// An `ok` check with no name, message or details, to fill in.
    fn default() -> Check {
        Check {
            check: "",
            status: Status::Ok,
            message: String::new(),
            fix: None,
            device_id: None,
            host: None,
            this_device: None,
            records: None,
            live: None,
            last_seen_s: None,
            offset_s: None,
            offset_learned: None,
            sessions: Vec::new(),
            files: Vec::new(),
            agents: Vec::new(),
        }
    }
}

fn check(check: &'static str, status: Status, message: String, fix: Option<String>) -> Check {
    Check {
        check,
        status,
        message,
        fix,
        ..Check::default()
    }
}

/// Runs every check on `registry`'s profile at `now`; `config` is the
/// outcome of loading the configuration (the path and whether it exists).
pub fn doctor(registry: &Registry, config: &ConfigSource, now: f64) -> Vec<Check> {
    let p = registry.profile();
    let mut out = vec![config_file(config), refresh_interval(p), discovery(p)];
    if registry.dirs.len() > 1 {
        out.extend(several_dirs(registry, config.exists, now));
        return out;
    }
    match directory::directory(p, &registry.local().home, config.exists) {
        ControlFlow::Continue(found) => out.extend(found),
        ControlFlow::Break(last) => {
            out.push(last);
            return out;
        }
    }
    out.push(directory::writable(&p.dir));
    out.extend(sync::sync_engine(p));
    let Some(census) = census_checks(registry, now, &mut out) else {
        return out;
    };
    out.extend(records::secrets(&census, p));
    out.extend(records::unreadable(&census));
    out.push(records::garbage(registry, now));
    out
}

/// The checks of a profile that reads several directories (`dirs`): those
/// of the directory, the sync engine and the records, once per directory
/// (each message names it; `writable` only for `dir`, the one written to),
/// then those of the devices, over every directory as `list` merges them.
/// A directory that is missing is reported and the others are checked.
fn several_dirs(registry: &Registry, config_exists: bool, now: f64) -> Vec<Check> {
    let mut out = Vec::new();
    for at in 0..registry.dirs.len() {
        let view = registry.only_dir(at);
        let p = view.profile();
        let mut found = Vec::new();
        match directory::directory(p, &registry.local().home, config_exists) {
            ControlFlow::Continue(checks) => {
                found.extend(checks);
                if at == 0 {
                    found.push(directory::writable(&p.dir));
                }
                if at > 0 && !p.expires_others {
                    // Hermes' own directory is local by design.
                    found.push(check(
                        "sync-engine",
                        Status::Ok,
                        "Hermes Agent's own directory, read in place on this device".into(),
                        None,
                    ));
                } else {
                    found.extend(sync::sync_engine(p));
                }
                match records::census(&view, now) {
                    Ok(census) => {
                        // Forged files are named once, in the checks over
                        // every directory (`count` leaves them out).
                        found.push(records::count(&census));
                        found.extend(records::secrets(&census, p));
                        found.extend(records::unreadable(&census));
                        found.push(records::garbage(&view, now));
                    }
                    Err(failed) => found.push(*failed),
                }
            }
            ControlFlow::Break(last) => found.push(last),
        }
        let shown = p.dir.display().to_string();
        for mut c in found {
            if !c.message.contains(&shown) {
                c.message = format!("{shown}: {}", c.message);
            }
            out.push(c);
        }
    }
    census_checks(registry, now, &mut out);
    out
}

/// The checks of the census of every record `registry` reads (of every
/// directory, merged as `list` merges them): per device, the refresher,
/// and records that claim this device's id. The census, for more checks;
/// `None` when it failed, which is then the last check in `out`.
fn census_checks(
    registry: &Registry,
    now: f64,
    out: &mut Vec<Check>,
) -> Option<crate::registry::devices::Census> {
    let census = match records::census(registry, now) {
        Ok(census) => census,
        Err(failed) => {
            out.push(*failed);
            return None;
        }
    };
    out.extend(records::moved_id(registry));
    out.extend(records::forged(&census));
    out.extend(records::devices(registry, &census, now));
    out.extend(refresher::refresher(registry, &census));
    out.extend(records::foreign_claims(registry, &census));
    Some(census)
}

/// Whether the ignore patterns of the Syncthing folder at `root` — its
/// `.stignore` and every file that includes — keep presence's temp files
/// in `dir` out of the sync (what the `stignore` check looks for). `Err`
/// says why the patterns cannot be read; Syncthing would not read them
/// either.
pub fn stignore_ignores_temp_files(root: &Path, dir: &Path) -> Result<bool, String> {
    let patterns = stignore::Patterns::load(root).map_err(|e| e.to_string())?;
    let (_, temp) = sync::sample_paths(root, dir);
    Ok(patterns.ignores(&temp))
}

/// `config`: which configuration applies, the file or the built-in defaults.
fn config_file(config: &ConfigSource) -> Check {
    if config.exists {
        check(
            "config",
            Status::Ok,
            format!("{} is valid", config.path.display()),
            None,
        )
    } else {
        check(
            "config",
            Status::Ok,
            format!("no {}: built-in defaults apply", config.path.display()),
            Some("`presence config init` writes a commented file to edit".into()),
        )
    }
}

/// `refresh-interval`: the profile's timing, stated for the reader to judge.
fn refresh_interval(p: &Profile) -> Check {
    check(
        "refresh-interval",
        Status::Ok,
        format!(
            "profile '{}': refresh every {}, ttl {} ({})",
            p.name,
            humantime::format_duration(p.refresh_interval),
            humantime::format_duration(p.ttl),
            crate::liveness::refresh_margin(p.refresh_interval, p.ttl)
        ),
        None,
    )
}

/// `discovery`: the local agents whose live sessions the refresher
/// publishes (`[discover] agents`), stated for the reader to judge.
fn discovery(p: &Profile) -> Check {
    if p.discover.is_empty() {
        return check(
            "discovery",
            Status::Ok,
            "off: the refresher publishes no local agent's sessions".into(),
            Some(
                "`presence setup --agents found` turns it on for the agents installed here".into(),
            ),
        );
    }
    Check {
        agents: p.discover.clone(),
        ..check(
            "discovery",
            Status::Ok,
            format!(
                "on for {}: the refresher publishes their live sessions",
                p.discover.join(", ")
            ),
            None,
        )
    }
}

/// Where `docs/NAME` (with an optional `#anchor`) is read outside a
/// checkout: the project's page of it (the Debian package also installs it
/// under /usr/share/doc/presence/docs).
fn doc_url(name: &str) -> String {
    format!("{}/blob/main/docs/{name}", env!("CARGO_PKG_REPOSITORY"))
}

/// `secs` as a rounded duration: `45s`, `1m 30s`.
fn duration(secs: f64) -> String {
    let whole = if secs.is_finite() {
        secs.max(0.0).round()
    } else {
        0.0
    };
    humantime::format_duration(std::time::Duration::from_secs(whole as u64)).to_string()
}

/// A clock offset with its sign always shown: `+600 s`, `-900 s`; `>100y`
/// for an absurd one (a hostile record's).
fn signed(offset: f64) -> String {
    let rounded = offset.round();
    if rounded == 0.0 {
        "0 s".to_string()
    } else {
        crate::text::signed_seconds(rounded, 0)
    }
}

/// What a positive or negative offset means, in words.
fn ahead_or_behind(offset: f64) -> &'static str {
    match offset.round() {
        o if o < 0.0 => "behind ours",
        o if o > 0.0 => "ahead of ours",
        _ => "with ours",
    }
}
