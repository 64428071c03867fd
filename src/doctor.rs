//! `presence doctor`: checks of the configuration, the directory, the sync
//! engine around it and the records in it, each with a verdict and a fix.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::registry::{ListOptions, Registry};

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

/// One check.
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
}

fn check(check: &'static str, status: Status, message: String, fix: Option<String>) -> Check {
    Check {
        check,
        status,
        message,
        fix,
    }
}

/// Records that carry this device's id but that the ledger says this device
/// never wrote: another device forged them, or this home directory was
/// cloned from another machine's (both then have one device id).
fn foreign_claims(registry: &Registry, listing: &crate::registry::Listing) -> Option<Check> {
    let id = registry.local().existing_device_id().ok().flatten()?;
    let files: Vec<&str> = listing
        .rows
        .iter()
        .filter(|r| !r.local && r.record.device_id == id)
        .map(|r| r.file.as_str())
        .collect();
    if files.is_empty() {
        return None;
    }
    Some(check(
        "device-id",
        Status::Warn,
        format!(
            "{} record(s) claim this device's id ({}) but this device did not write them: {}",
            files.len(),
            crate::text::prefix_chars(&id, 8),
            files.join(", ")
        ),
        Some(format!(
            "they are shown as another device's and never refreshed or cleared here. If this \
             home directory was copied from another machine, give this one its own id: delete \
             {} and publish again; otherwise find the device that writes them",
            registry.local().device_id_file().display()
        )),
    ))
}

/// The sync engine that manages `dir`, by the marks it leaves up the tree.
fn sync_engine(dir: &Path) -> Option<(&'static str, PathBuf)> {
    let mut cur = Some(dir);
    while let Some(d) = cur {
        if d.join(".stfolder").exists() {
            return Some(("Syncthing", d.to_path_buf()));
        }
        if d.join(".dropbox").exists() || d.join(".dropbox.cache").exists() {
            return Some(("Dropbox", d.to_path_buf()));
        }
        let nextcloud = std::fs::read_dir(d).ok().is_some_and(|rd| {
            rd.flatten().any(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.starts_with(".sync_") && n.ends_with(".db") || n == ".owncloudsync.log"
            })
        });
        if nextcloud {
            return Some(("Nextcloud/ownCloud", d.to_path_buf()));
        }
        if d.to_string_lossy().contains("Mobile Documents") {
            return Some(("iCloud Drive", d.to_path_buf()));
        }
        cur = d.parent();
    }
    None
}

/// Whether a Syncthing `.stignore` keeps `.*.tmp` files out of the sync.
fn stignore_has_tmp_line(root: &Path) -> bool {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    // The folder is shared: a FIFO or a huge file planted as `.stignore`
    // must not hang or exhaust `doctor`.
    let mut text = String::new();
    let read = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(root.join(".stignore"))
        .and_then(|f| {
            if !f.metadata()?.is_file() {
                return Err(std::io::ErrorKind::InvalidInput.into());
            }
            f.take(1 << 20).read_to_string(&mut text)
        });
    read.is_ok_and(|_| {
        text.lines().map(str::trim).any(|l| {
            let l = l.trim_start_matches("(?d)");
            l == ".*.tmp" || l == "*.tmp" || l == ".*"
        })
    })
}

/// Runs every check on `registry`'s profile at `now`; `config` is the
/// outcome of loading the configuration (the path and whether it exists).
pub(crate) fn run(
    registry: &Registry,
    config: &crate::config::ConfigSource,
    now: f64,
) -> Vec<Check> {
    let p = registry.profile();
    let dir = &p.dir;
    let mut out = Vec::new();
    out.push(if config.exists {
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
    });
    out.push(check(
        "refresh-interval",
        Status::Ok,
        format!(
            "profile '{}': refresh every {}, ttl {} (two chances to refresh before expiry at ttl / 3)",
            p.name,
            humantime::format_duration(p.refresh_interval),
            humantime::format_duration(p.ttl)
        ),
        None,
    ));
    match std::fs::metadata(dir) {
        Err(_) => {
            out.push(check(
                "directory",
                if p.dir_is_default { Status::Ok } else { Status::Warn },
                format!("{} does not exist yet", dir.display()),
                Some("it is created by the first `presence publish`; check `dir` if you expected records there".into()),
            ));
            return out;
        }
        Ok(m) if !m.is_dir() => {
            out.push(check(
                "directory",
                Status::Fail,
                format!("{} is not a directory", dir.display()),
                Some("remove it, or point `dir` at a directory".into()),
            ));
            return out;
        }
        Ok(_) if let Some((what, _)) = crate::config::refused_dir(dir, &registry.local().home) => {
            // Never advise a chmod of `/`, a home or a system directory.
            out.push(check(
                "directory",
                Status::Fail,
                format!("{} is {what}, not a records directory", dir.display()),
                Some("point `dir` at a directory of its own, e.g. ~/Sync/presence".into()),
            ));
            return out;
        }
        Ok(m) => {
            out.push(check(
                "directory",
                Status::Ok,
                format!("{} exists", dir.display()),
                None,
            ));
            let mode = m.permissions().mode() & 0o777;
            out.push(if mode & 0o077 == 0 {
                check(
                    "permissions",
                    Status::Ok,
                    format!("mode {mode:o}: private"),
                    None,
                )
            } else {
                check(
                    "permissions",
                    Status::Warn,
                    format!("mode {mode:o}: other users of this machine can read it"),
                    Some(format!("chmod 700 {}", dir.display())),
                )
            });
        }
    }
    out.push(
        match tempfile::Builder::new()
            .prefix(".doctor.")
            .suffix(".tmp")
            .tempfile_in(dir)
        {
            Ok(_) => check(
                "writable",
                Status::Ok,
                "records can be written".into(),
                None,
            ),
            Err(e) => check(
                "writable",
                Status::Fail,
                format!("cannot write in {}: {e}", dir.display()),
                Some("fix the permissions or the mount, or choose another `dir`".into()),
            ),
        },
    );
    match sync_engine(dir) {
        Some(("Syncthing", root)) => {
            out.push(check(
                "sync-engine",
                Status::Ok,
                format!("Syncthing folder at {}", root.display()),
                None,
            ));
            out.push(if stignore_has_tmp_line(&root) {
                check(
                    "stignore",
                    Status::Ok,
                    "temp files are kept out of the sync".into(),
                    None,
                )
            } else {
                check(
                    "stignore",
                    Status::Warn,
                    format!(
                        "{} does not ignore .*.tmp: half-written temp files get synced",
                        root.join(".stignore").display()
                    ),
                    Some(format!(
                        "add the line `(?d).*.tmp` to {}",
                        root.join(".stignore").display()
                    )),
                )
            });
        }
        Some((engine, root)) => out.push(check(
            "sync-engine",
            Status::Ok,
            format!("{engine} folder at {}", root.display()),
            None,
        )),
        None => out.push(check(
            "sync-engine",
            Status::Ok,
            "no sync engine found above the directory: records stay on this device".into(),
            Some("point `dir` into a synced folder to see other devices' sessions".into()),
        )),
    }
    let all = ListOptions {
        all: true,
        include_expired: true,
        all_profiles: true,
    };
    let Ok(listing) = registry.list(all, now) else {
        out.push(check(
            "records",
            Status::Fail,
            format!("cannot list {}", dir.display()),
            None,
        ));
        return out;
    };
    // Records per device, and each device's clock offset: ctime − updated_at
    // is how far behind ours its clock runs, plus the sync delay.
    let mut devices: BTreeMap<String, (usize, Vec<f64>)> = BTreeMap::new();
    for r in &listing.rows {
        let name = if r.local {
            "this device".to_string()
        } else if r.record.device_id.is_empty() {
            format!("host {}", r.record.host)
        } else {
            format!(
                "device {} ({})",
                crate::text::prefix_chars(&r.record.device_id, 8),
                r.record.host
            )
        };
        let entry = devices.entry(name).or_default();
        entry.0 += 1;
        if let Some(claimed) = r.claimed_age_s
            && r.live
        {
            entry.1.push(claimed - r.age_s);
        }
    }
    for (device, (count, mut skews)) in devices {
        skews.sort_by(f64::total_cmp);
        let skew = skews.get(skews.len() / 2).copied();
        let (status, clock) = match skew {
            Some(s) if s.abs() > p.skew.as_secs_f64() => (
                Status::Warn,
                format!(
                    "clock about {s:.0} s {} ours, beyond the skew tolerance",
                    if s > 0.0 { "behind" } else { "ahead of" }
                ),
            ),
            Some(s) => (
                Status::Ok,
                format!("clock within {:.0} s of ours", s.abs().ceil()),
            ),
            None => (Status::Ok, "no live record to estimate its clock".into()),
        };
        out.push(check(
            "device",
            status,
            format!("{device}: {count} record(s), {clock}"),
            (status == Status::Warn)
                .then(|| "set up NTP on that device, or raise `skew`".to_string()),
        ));
    }
    out.extend(foreign_claims(registry, &listing));
    let secrets: Vec<&str> = listing
        .rows
        .iter()
        .filter(|r| !r.redactions.is_empty())
        .map(|r| r.file.as_str())
        .collect();
    if !secrets.is_empty() {
        out.push(check(
            "secrets",
            Status::Warn,
            format!("{} file(s) carry credentials (shown redacted): {}", secrets.len(), secrets.join(", ")),
            Some("find the writer that published them and stop it; `presence expire` or deleting the files removes them".into()),
        ));
    }
    let skipped = listing
        .skipped
        .iter()
        .filter(|s| !matches!(s.reason, crate::store::SkipReason::Temp(_)))
        .count();
    if skipped > 0 {
        out.push(check(
            "unreadable",
            Status::Warn,
            format!("{skipped} file(s) named like records are not records"),
            Some("`presence -v list` names each and says why".into()),
        ));
    }
    match registry.expire(now, true) {
        Ok(g) if g.removed.is_empty() => out.push(check(
            "garbage",
            Status::Ok,
            "nothing for `expire` to delete".into(),
            None,
        )),
        Ok(g) => out.push(check(
            "garbage",
            Status::Warn,
            format!("{} file(s) wait for `presence expire`", g.removed.len()),
            Some("run `presence expire` now, and daily from a timer (docs/lifecycle.md)".into()),
        )),
        Err(e) => out.push(check("garbage", Status::Fail, e.to_string(), None)),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_advises_a_chmod_of_a_refused_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let local = crate::LocalDirs::under(tmp.path());
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let (profile, source) =
            crate::config::resolve(&crate::Selection::default(), &local).unwrap();
        // A profile built by hand skips the resolver's refusal.
        for dir in [tmp.path(), Path::new("/"), Path::new("/etc")] {
            let mut p = profile.clone();
            p.dir = dir.to_path_buf();
            let registry = Registry::new(p, local.clone());
            let checks = run(&registry, &source, crate::unix_now());
            assert!(
                checks
                    .iter()
                    .all(|c| c.fix.as_ref().is_none_or(|f| !f.contains("chmod"))),
                "{checks:?}"
            );
            assert!(
                checks
                    .iter()
                    .any(|c| c.check == "directory" && c.status == Status::Fail),
                "{checks:?}"
            );
            let err = registry.expire(crate::unix_now(), false).unwrap_err();
            assert!(err.to_string().contains("refusing"), "{err}");
        }
    }
}
