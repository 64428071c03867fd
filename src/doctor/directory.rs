//! The checks of the records directory itself: that it is one (`directory`),
//! who else can read it (`permissions`) and whether this device can write in
//! it (`writable`). Apart from the others because a directory that fails here
//! ends the run: there is nothing further to examine.

use std::ops::ControlFlow;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::{Check, Status, check};
use crate::config::Profile;

/// `directory` and `permissions`. Breaks with the one `directory` verdict
/// when the directory is missing, not a directory or refused; the run stops
/// there. `config_exists`: whether a configuration file was read.
pub(super) fn directory(
    p: &Profile,
    home: &Path,
    config_exists: bool,
) -> ControlFlow<Check, [Check; 2]> {
    let dir = &p.dir;
    match std::fs::metadata(dir) {
        // The built-in directory, not there yet: this device was never set
        // up (nor has it published anything).
        Err(_) if p.dir_is_default => ControlFlow::Break(check(
            "directory",
            Status::Warn,
            format!(
                "{} does not exist yet, and {}: nothing is set up on this device",
                dir.display(),
                if config_exists {
                    "the configuration names no directory"
                } else {
                    "there is no configuration file"
                }
            ),
            Some(
                "run `presence setup`: it chooses a folder your devices sync, writes the \
                 configuration and installs a refresher (`presence setup --dry-run` shows its \
                 plan first); without it, the first `presence publish` creates this directory, \
                 which no other device reads"
                    .into(),
            ),
        )),
        Err(_) => ControlFlow::Break(check(
            "directory",
            Status::Warn,
            format!("{} does not exist yet", dir.display()),
            Some("it is created by the first `presence publish`; check `dir` if you expected records there".into()),
        )),
        Ok(m) if !m.is_dir() => ControlFlow::Break(check(
            "directory",
            Status::Fail,
            format!("{} is not a directory", dir.display()),
            Some("remove it, or point `dir` at a directory".into()),
        )),
        Ok(_) if let Some((what, _)) = crate::config::refused_dir(dir, home) => {
            // Never advise a chmod of `/`, a home or a system directory.
            ControlFlow::Break(check(
                "directory",
                Status::Fail,
                format!("{} is {what}, not a records directory", dir.display()),
                Some("point `dir` at a directory of its own, e.g. ~/Sync/presence".into()),
            ))
        }
        Ok(m) => {
            let mode = m.permissions().mode() & 0o777;
            ControlFlow::Continue([
                check(
                    "directory",
                    Status::Ok,
                    format!("{} exists", dir.display()),
                    None,
                ),
                if mode & 0o077 == 0 {
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
                },
            ])
        }
    }
}

/// `writable`: whether a file can be created in `dir` (a temp file, removed
/// when dropped).
pub(super) fn writable(dir: &Path) -> Check {
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

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
            let checks = super::super::doctor(&registry, &source, crate::unix_now());
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
