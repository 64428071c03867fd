//! The `sync-engine` and `stignore` checks: which sync engine, if any,
//! shares the directory, found by the marks it leaves up the tree
//! (`store::engine`) or by the network file system it is mounted from. Apart because it reads files
//! that are not ours (`.stignore` and what it includes, engine marks), which
//! a shared folder may have planted.

use std::path::{Path, PathBuf};

use super::stignore::{LoadError, Patterns};
use super::{Check, Status, check};
use crate::config::Profile;
use crate::store::engine::{self, Engine};

/// `sync-engine`, and for Syncthing also `stignore`.
pub(super) fn sync_engine(p: &Profile) -> Vec<Check> {
    let dir = &p.dir;
    match engine::find(dir) {
        Some(folder) => {
            let mut out = vec![check(
                "sync-engine",
                Status::Ok,
                format!(
                    "{} folder at {}",
                    folder.engine_name(),
                    folder.root.display()
                ),
                None,
            )];
            if folder.engine == Engine::Syncthing {
                out.push(stignore(&folder.root, dir));
            }
            out
        }
        None => match network_mount(dir) {
            Some((fs, at)) => vec![check(
                "sync-engine",
                Status::Ok,
                format!("a network file system ({fs}) mounted at {}", at.display()),
                None,
            )],
            None if p.dir_is_default => vec![check(
                "sync-engine",
                Status::Ok,
                "no sync engine found above the directory: records stay on this device".into(),
                Some(
                    "`presence setup` points `dir` into a synced folder, to see other devices' \
                     sessions"
                        .into(),
                ),
            )],
            // A directory chosen by hand is meant to be shared; if nothing
            // shares it, no other device ever sees a session.
            None => vec![check(
                "sync-engine",
                Status::Warn,
                format!(
                    "no sync engine shares {}: no Syncthing, Dropbox, Nextcloud/ownCloud, \
                     Resilio Sync, iCloud Drive or cloud storage folder above it, and it is \
                     not on a network file system, so other devices never see its records",
                    dir.display()
                ),
                Some(format!(
                    "share it with Syncthing (see {}), or point `dir` into a folder a sync \
                     engine shares (`presence setup` finds them); if another tool copies it \
                     between devices, this warning does not apply",
                    super::doc_url("syncthing.md#setting-up-a-presence-folder")
                )),
            )],
        },
    }
}

/// The network file system `dir` lives on, and where it is mounted: from
/// `/proc/self/mountinfo` (Linux), the mount with the longest mount point
/// that holds the directory.
fn network_mount(dir: &Path) -> Option<(String, PathBuf)> {
    const NETWORK: [&str; 14] = [
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "9p",
        "afs",
        "ceph",
        "glusterfs",
        "lustre",
        "davfs",
        "fuse.sshfs",
        "fuse.rclone",
        "fuse.glusterfs",
    ];
    let dir = std::fs::canonicalize(dir).ok()?;
    let info = super::stignore::read_regular(Path::new("/proc/self/mountinfo")).ok()??;
    let mut best: Option<(PathBuf, String)> = None;
    // Fields: id parent major:minor root mount-point options … - fstype source …
    let mounts = info.lines().filter_map(|line| {
        let (head, tail) = line.split_once(" - ")?;
        let point = PathBuf::from(unescape(head.split(' ').nth(4)?));
        Some((point, tail.split(' ').next()?.to_string()))
    });
    for (point, fstype) in mounts {
        if dir.starts_with(&point)
            && best
                .as_ref()
                .is_none_or(|(b, _)| point.as_os_str().len() >= b.as_os_str().len())
        {
            best = Some((point, fstype));
        }
    }
    let (point, fstype) = best?;
    NETWORK
        .contains(&fstype.as_str())
        .then_some((fstype, point))
}

/// A mountinfo field with its octal escapes (`\040` for a space) undone.
fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `stignore`: whether Syncthing keeps this directory's temp files out of
/// the sync and its records in it, reading `.stignore` and what it
/// includes.
fn stignore(root: &Path, dir: &Path) -> Check {
    let file = root.join(".stignore");
    let patterns = match Patterns::load(root) {
        Ok(p) => p,
        Err(LoadError::Unreadable(e)) => {
            return check(
                "stignore",
                Status::Warn,
                format!("{e}: temp files may get synced"),
                Some(format!(
                    "make {} a plain file with the line `(?d).*.tmp`",
                    file.display()
                )),
            );
        }
        Err(LoadError::Refused(e)) => {
            return check(
                "stignore",
                Status::Fail,
                format!(
                    "Syncthing cannot load the ignore patterns of {}: {e}; until they load it \
                     neither scans nor pulls the folder",
                    root.display()
                ),
                Some(format!("fix {} (or what it includes)", file.display())),
            );
        }
    };
    let (record, temp) = sample_paths(root, dir);
    let read = if patterns.files.len() > 1 {
        format!(
            "{} and the {} file(s) it includes",
            file.display(),
            patterns.files.len() - 1
        )
    } else {
        file.display().to_string()
    };
    if patterns.ignores(&record) {
        check(
            "stignore",
            Status::Fail,
            format!("{read} ignore(s) the records themselves ({record}): they never sync"),
            Some(format!(
                "remove or narrow the pattern that matches {record}; keep only `(?d).*.tmp` \
                 for presence's files"
            )),
        )
    } else if patterns.ignores(&temp) {
        check(
            "stignore",
            Status::Ok,
            format!("temp files are kept out of the sync ({read})"),
            None,
        )
    } else {
        check(
            "stignore",
            Status::Warn,
            format!("{read} does not ignore .*.tmp: half-written temp files get synced"),
            Some(format!(
                "add the line `(?d).*.tmp` to {}, above any `!` line that matches it",
                file.display()
            )),
        )
    }
}

/// A record's and a temp file's paths in `dir`, relative to the folder
/// `root` and `/`-separated, as Syncthing matches them. A `dir` that does
/// not exist yet is placed by its nearest existing ancestor.
pub(super) fn sample_paths(root: &Path, dir: &Path) -> (String, String) {
    let mut existing = dir;
    let mut missing = Vec::new();
    let base = loop {
        match std::fs::canonicalize(existing) {
            Ok(c) => break Some(c),
            Err(_) => match (existing.parent(), existing.file_name()) {
                (Some(parent), Some(name)) => {
                    missing.push(name.to_owned());
                    existing = parent;
                }
                _ => break None,
            },
        }
    };
    let rel = base
        .map(|b| missing.iter().rev().fold(b, |p, n| p.join(n)))
        .zip(std::fs::canonicalize(root).ok())
        .and_then(|(d, r)| d.strip_prefix(r).ok().map(Path::to_path_buf))
        .unwrap_or_default();
    let under = |name: &str| {
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        parts.push(name.to_string());
        parts.join("/")
    };
    (
        under("host-1.sess.json"),
        under(".host-1.sess.json.12345.aB3dE9.tmp"),
    )
}
