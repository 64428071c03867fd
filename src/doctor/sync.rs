//! The `sync-engine` and `stignore` checks: which sync engine, if any,
//! shares the directory, found by the marks it leaves up the tree. Apart
//! because it reads files that are not ours (`.stignore`, engine marks),
//! which a shared folder may have planted.

use std::path::{Path, PathBuf};

use super::{Check, Status, check};

/// `sync-engine`, and for Syncthing also `stignore`.
pub(super) fn sync_engine(dir: &Path) -> Vec<Check> {
    match find_engine(dir) {
        Some(("Syncthing", root)) => vec![
            check(
                "sync-engine",
                Status::Ok,
                format!("Syncthing folder at {}", root.display()),
                None,
            ),
            if stignore_has_tmp_line(&root) {
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
            },
        ],
        Some((engine, root)) => vec![check(
            "sync-engine",
            Status::Ok,
            format!("{engine} folder at {}", root.display()),
            None,
        )],
        None => vec![check(
            "sync-engine",
            Status::Ok,
            "no sync engine found above the directory: records stay on this device".into(),
            Some("point `dir` into a synced folder to see other devices' sessions".into()),
        )],
    }
}

/// The sync engine that manages `dir`, by the marks it leaves up the tree.
fn find_engine(dir: &Path) -> Option<(&'static str, PathBuf)> {
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
