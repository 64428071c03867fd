//! The write side of the directory: atomic writes through a temp file,
//! writes and removals that act only if the file is still the one judged,
//! and creating the directory.
//!
//! Separate from the reads because these are the only operations that change
//! the shared directory; each is relative to the directory's fd and checks
//! the file's [`Stamp`] as late as it can, since a sync engine writes without
//! taking any lock.

use std::fs;
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;

use super::names::is_plain_name;
use super::{Dir, Stamp};
use crate::error::{Error, Result};

impl Dir {
    /// Removes `name` if it is still the regular file judged (same
    /// [`Stamp`]), with `unlinkat` on the directory's fd: never a symlink,
    /// never outside the directory. `Ok(false)` when it changed or vanished
    /// meanwhile.
    pub fn remove_if_unchanged(&self, name: &str, stamp: Stamp) -> Result<bool> {
        use rustix::fs::{AtFlags, FileType};
        use rustix::io::Errno;
        let Some(handle) = &self.handle else {
            return Ok(false);
        };
        let path = self.path.join(name);
        if !is_plain_name(name) {
            return Ok(false);
        }
        let st = match rustix::fs::statat(&handle.0, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(Errno::NOENT) => return Ok(false),
            Err(e) => return Err(Error::io("inspect", &path, e.into())),
        };
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile || Stamp::of(&st) != stamp {
            return Ok(false);
        }
        match rustix::fs::unlinkat(&handle.0, name, AtFlags::empty()) {
            Ok(()) => Ok(true),
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(Error::io("remove", &path, e.into())),
        }
    }

    /// [`Dir::replace_if_unchanged`] whatever the file holds (tests).
    #[cfg(test)]
    pub fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<()> {
        self.write_atomic_if(name, bytes, |_| true, false)
            .map(|_| ())
    }

    /// Writes `bytes` to `name` atomically — a temp file
    /// `.<name>.<pid>.<random>.tmp` created in the directory (`O_EXCL`,
    /// `O_NOFOLLOW`, mode 0600), renamed over the final name, both relative
    /// to the directory's fd, so readers see the old file or the new one,
    /// never a torn one, and on failure the temp file is removed and the old
    /// file is untouched — but only if `name` is still the version that
    /// was read: `expected` is its [`Stamp`] as read, `None` if it was
    /// absent. The check runs after the temp file is written, just before
    /// the rename, so the window in which another writer (a sync engine,
    /// which takes no lock) can slip in is as short as it can be. Returns
    /// whether the file was replaced.
    pub fn replace_if_unchanged(
        &self,
        name: &str,
        expected: Option<Stamp>,
        bytes: &[u8],
    ) -> Result<bool> {
        self.write_atomic_if(
            name,
            bytes,
            |dir| matches!(dir.stamp(name), Ok(current) if current == expected),
            // Where the file was absent, one created since (a sync engine
            // takes no lock) is never overwritten: the rename refuses to
            // replace it.
            expected.is_none(),
        )
    }

    fn write_atomic_if(
        &self,
        name: &str,
        bytes: &[u8],
        still: impl FnOnce(&Dir) -> bool,
        no_replace: bool,
    ) -> Result<bool> {
        use rustix::fs::{AtFlags, Mode, OFlags};
        use rustix::io::Errno;
        let handle = self.handle()?;
        let target = self.path.join(name);
        if !is_plain_name(name) {
            return Err(Error::io(
                "write",
                &target,
                io::Error::new(io::ErrorKind::InvalidInput, "not a plain file name"),
            ));
        }
        let flags = OFlags::WRONLY
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::CLOEXEC
            | OFlags::NOCTTY;
        let mut attempts = 0;
        let (tmp, fd) = loop {
            let tmp = format!(".{name}.{}.{}.tmp", std::process::id(), random_suffix());
            match rustix::fs::openat(&handle.0, tmp.as_str(), flags, Mode::from_raw_mode(0o600)) {
                Ok(fd) => break (tmp, fd),
                Err(Errno::EXIST) if attempts < 8 => attempts += 1,
                Err(e) => return Err(Error::io("create temp file in", &self.path, e.into())),
            }
        };
        let written = write_all(&fd, bytes)
            .map_err(|e| Error::io("write temp file for", &target, e))
            .and_then(|()| {
                drop(fd);
                if !still(self) {
                    return Ok(false);
                }
                let renamed = if no_replace {
                    #[cfg(any(target_os = "linux", target_os = "android"))]
                    let r = match rustix::fs::renameat_with(
                        &handle.0,
                        tmp.as_str(),
                        &handle.0,
                        name,
                        rustix::fs::RenameFlags::NOREPLACE,
                    ) {
                        Err(Errno::EXIST) => return Ok(false),
                        // A filesystem without the flag (some network ones):
                        // the check just above is all there is.
                        Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {
                            rustix::fs::renameat(&handle.0, tmp.as_str(), &handle.0, name)
                        }
                        other => other,
                    };
                    #[cfg(not(any(target_os = "linux", target_os = "android")))]
                    let r = rustix::fs::renameat(&handle.0, tmp.as_str(), &handle.0, name);
                    r
                } else {
                    rustix::fs::renameat(&handle.0, tmp.as_str(), &handle.0, name)
                };
                renamed
                    .map(|()| true)
                    .map_err(|e| Error::io("rename temp file over", &target, e.into()))
            });
        if !matches!(written, Ok(true)) {
            let _ = rustix::fs::unlinkat(&handle.0, tmp.as_str(), AtFlags::empty());
        }
        written
    }
}

fn write_all(fd: &rustix::fd::OwnedFd, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match rustix::io::write(fd, bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Six random alphanumerics for a temp name (unique enough with the pid and
/// `O_EXCL`; a clash only costs a retry).
fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut bytes = [0u8; 6];
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        bytes = [
            nanos as u8,
            (nanos >> 8) as u8,
            (nanos >> 16) as u8,
            (nanos >> 24) as u8,
            7,
            11,
        ];
    }
    bytes
        .iter()
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect()
}

/// Creates `dir` (and missing parents) with mode 0700. An existing directory
/// is left as it is; an existing non-directory is an error that says so.
pub(crate) fn ensure_dir(dir: &Path) -> Result<()> {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => return Ok(()),
        Ok(_) => {
            return Err(Error::NotADirectory {
                dir: dir.to_path_buf(),
            });
        }
        Err(_) => {}
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| Error::io("create directory", dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_atomic_is_private_and_leaves_no_temp() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_path(tmp.path()).unwrap();
        dir.write_atomic("h.s.json", b"one").unwrap();
        dir.write_atomic("h.s.json", b"two").unwrap();
        let names: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["h.s.json"]);
        let path = tmp.path().join("h.s.json");
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        for bad in ["", "..", "a/b"] {
            assert!(dir.write_atomic(bad, b"x").is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_failed_write_leaves_no_temp_and_the_old_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_path(tmp.path()).unwrap();
        // A directory in the way: the rename fails after the temp was written.
        fs::create_dir(tmp.path().join("h.s.json")).unwrap();
        fs::write(tmp.path().join("h.s.json/keep"), "x").unwrap();
        let err = dir
            .write_atomic("h.s.json", b"new")
            .unwrap_err()
            .to_string();
        assert!(err.contains("rename temp file over"), "{err}");
        let names: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["h.s.json"]);
    }

    #[test]
    fn replace_if_unchanged_writes_only_over_the_version_read() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_path(tmp.path()).unwrap();
        // Read as absent, but created meanwhile: never overwritten.
        fs::write(tmp.path().join("h.s.json"), "theirs").unwrap();
        assert!(!dir.replace_if_unchanged("h.s.json", None, b"ours").unwrap());
        assert_eq!(
            fs::read_to_string(tmp.path().join("h.s.json")).unwrap(),
            "theirs"
        );
        // Read as one version, replaced by another meanwhile: left alone.
        let read = dir.stamp("h.s.json").unwrap();
        fs::remove_file(tmp.path().join("h.s.json")).unwrap();
        fs::write(tmp.path().join("h.s.json"), "newer").unwrap();
        assert!(!dir.replace_if_unchanged("h.s.json", read, b"ours").unwrap());
        assert_eq!(
            fs::read_to_string(tmp.path().join("h.s.json")).unwrap(),
            "newer"
        );
        // Still the version read: replaced; and an absent file is created.
        let read = dir.stamp("h.s.json").unwrap();
        assert!(dir.replace_if_unchanged("h.s.json", read, b"ours").unwrap());
        assert_eq!(
            fs::read_to_string(tmp.path().join("h.s.json")).unwrap(),
            "ours"
        );
        assert!(dir.replace_if_unchanged("h.t.json", None, b"new").unwrap());
        let left: Vec<_> = fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(left.len(), 2, "no temp file is left behind");
    }

    #[test]
    fn remove_if_unchanged_checks_the_file_judged() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_path(tmp.path()).unwrap();
        dir.write_atomic("h.s.json", b"{\"session_id\":\"s\"}")
            .unwrap();
        let judged = dir.read_entry("h.s.json").unwrap().unwrap().stamp;
        // Replaced meanwhile by another file under the same name: kept.
        dir.write_atomic("h.s.json", b"{\"session_id\":\"s\"}")
            .unwrap();
        assert!(!dir.remove_if_unchanged("h.s.json", judged).unwrap());
        let now = dir.read_entry("h.s.json").unwrap().unwrap().stamp;
        assert!(dir.remove_if_unchanged("h.s.json", now).unwrap());
        assert!(!tmp.path().join("h.s.json").exists());
        // A symlink is never removed, whatever it points to.
        std::os::unix::fs::symlink("/etc/hostname", tmp.path().join("l.s.json")).unwrap();
        assert!(!dir.remove_if_unchanged("l.s.json", now).unwrap());
        assert!(tmp.path().join("l.s.json").symlink_metadata().is_ok());
    }
}
