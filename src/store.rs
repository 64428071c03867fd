//! The presence directory itself: resolved once ([`SharedDir`]), then held
//! by its file descriptor ([`Dir`]) for each operation.
//!
//! Everything under this module treats the directory as hostile: readers
//! open files without following symlinks and without blocking (a FIFO or
//! device node never hangs a listing), check the size with `fstat` before
//! reading, never read more than [`crate::record::MAX_FILE_BYTES`], and skip —
//! with a reason, never an error — anything that is not a regular `*.json`
//! record. Every open, rename and unlink is relative to the directory's fd, so
//! none can be redirected by a directory swapped for a symlink.
//!
//! The concerns that share that fd live in submodules: `names` (what a file
//! name says it is, and which name a record gets), `scan` (reading records
//! safely, through `bounded`, the one bounded read every hostile file goes
//! through), `engine` (the one sync-engine type, and how to find the engine
//! sharing a folder) and `write` (atomic and conditional writes and removals). This
//! file holds what all three stand on: the directory, opened by its fd, and
//! [`Stamp`], which tells one file from another.

pub mod bounded;
pub mod engine;
pub(crate) mod entry;
pub(crate) mod names;
mod scan;
mod settle;
mod write;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};

pub(crate) use entry::{Entry, Stamp};
#[cfg(test)]
pub(crate) use names::Engine;
use names::is_plain_name;
pub(crate) use names::{NameKind, classify, file_name};
#[cfg(test)]
pub(crate) use scan::read_entry;
pub(crate) use scan::{Names, Raw, ScanReport};
pub use scan::{SkipReason, Skipped};
pub(crate) use write::ensure_dir;

/// Directory fds opened on the way down to the presence directory need no
/// read permission (`O_PATH`) where the platform has it.
#[cfg(any(target_os = "linux", target_os = "android"))]
const WALK: rustix::fs::OFlags = rustix::fs::OFlags::PATH;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const WALK: rustix::fs::OFlags = rustix::fs::OFlags::RDONLY;

/// The directory, opened once; files are opened relative to it (`openat`),
/// so reading a file costs no path building and no lookups of the directory.
struct DirHandle(rustix::fd::OwnedFd);

/// The presence directory of a registry: the path as configured, resolved
/// once to a path without symlinks — when the registry is made, or on first
/// use if the directory did not exist yet. A symlinked directory the user
/// configured (`~/Sync` is often a link) is thus followed once; a directory
/// that is swapped for a symlink afterwards is not followed: opening it
/// fails (see [`Dir::open_resolved`]).
#[derive(Debug, Clone)]
pub(crate) struct SharedDir {
    configured: PathBuf,
    resolved: Arc<OnceLock<PathBuf>>,
}

impl SharedDir {
    /// Resolves `configured` now if it exists.
    pub fn new(configured: &Path) -> SharedDir {
        let resolved = OnceLock::new();
        if let Ok(p) = fs::canonicalize(configured) {
            let _ = resolved.set(p);
        }
        SharedDir {
            configured: configured.to_path_buf(),
            resolved: Arc::new(resolved),
        }
    }

    /// Opens the directory for one operation (a missing one gives an empty
    /// [`Dir`]). Everything the operation does goes through this fd.
    pub fn open(&self) -> Result<Dir> {
        let resolved = match self.resolved.get() {
            Some(p) => p,
            None => match fs::canonicalize(&self.configured) {
                Ok(p) => self.resolved.get_or_init(|| p),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Ok(Dir::missing(&self.configured));
                }
                Err(e) => return Err(Error::io("resolve directory", &self.configured, e)),
            },
        };
        Dir::open_resolved(resolved)
    }
}

/// A presence directory held open by its file descriptor (or known to be
/// missing). Scans, reads, writes and removals all happen relative to the fd,
/// so they stay in the directory that was opened whatever happens to its path
/// meanwhile.
pub(crate) struct Dir {
    handle: Option<DirHandle>,
    path: PathBuf,
    /// Whether `path` is the resolved path (opened by [`Dir::open_resolved`]).
    canonical: bool,
}

impl std::fmt::Debug for Dir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dir")
            .field("path", &self.path)
            .field("exists", &self.exists())
            .finish()
    }
}

impl Dir {
    fn missing(path: &Path) -> Dir {
        Dir {
            handle: None,
            path: path.to_path_buf(),
            canonical: false,
        }
    }

    /// Opens the directory at `path`, following symlinks in it.
    #[cfg(test)]
    pub fn open_path(path: &Path) -> Result<Dir> {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        match rustix::fs::open(path, flags, Mode::empty()) {
            Ok(fd) => Ok(Dir {
                handle: Some(DirHandle(fd)),
                path: path.to_path_buf(),
                canonical: false,
            }),
            Err(rustix::io::Errno::NOENT) => Ok(Dir::missing(path)),
            Err(e) => Err(Error::io("open directory", path, e.into())),
        }
    }

    /// Opens `resolved`, an absolute path without symlinks, one component at
    /// a time from `/` without following any symlink. A component that has
    /// become a symlink since the path was resolved is
    /// [`Error::DirectoryReplaced`]; a missing one gives an empty [`Dir`].
    pub fn open_resolved(resolved: &Path) -> Result<Dir> {
        use rustix::fs::{AtFlags, FileType, Mode, OFlags};
        use rustix::io::Errno;
        use std::path::Component;
        let open_err = |at: &Path, e: Errno| Error::io("open directory", at, e.into());
        let mut cur = rustix::fs::open(
            "/",
            WALK | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| open_err(Path::new("/"), e))?;
        let mut at = PathBuf::from("/");
        let parts: Vec<_> = resolved.components().collect();
        let names: Vec<&std::ffi::OsStr> = parts
            .iter()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(*n),
                _ => None,
            })
            .collect();
        if !resolved.is_absolute() || names.len() + 1 != parts.len() {
            return Err(Error::io(
                "open directory",
                resolved,
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not an absolute, resolved path",
                ),
            ));
        }
        for (i, name) in names.iter().enumerate() {
            let last = i + 1 == names.len();
            let kind = if last { OFlags::RDONLY } else { WALK };
            let flags = kind | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            at.push(name);
            match rustix::fs::openat(&cur, *name, flags, Mode::empty()) {
                Ok(fd) => cur = fd,
                Err(Errno::NOENT) => {
                    return Ok(Dir {
                        canonical: true,
                        ..Dir::missing(resolved)
                    });
                }
                // O_NOFOLLOW with O_DIRECTORY: ENOTDIR on Linux, ELOOP elsewhere.
                Err(e @ (Errno::NOTDIR | Errno::LOOP)) => {
                    let st = rustix::fs::statat(&cur, *name, AtFlags::SYMLINK_NOFOLLOW);
                    return Err(match st {
                        Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                            Error::DirectoryReplaced {
                                path: resolved.to_path_buf(),
                                link: at,
                            }
                        }
                        // A file where a directory should be (`--dir` at a file).
                        Ok(st) if FileType::from_raw_mode(st.st_mode) != FileType::Directory => {
                            Error::NotADirectory { dir: at }
                        }
                        _ => open_err(&at, e),
                    });
                }
                Err(e) => return Err(open_err(&at, e)),
            }
        }
        if names.is_empty() {
            cur = rustix::fs::open(
                "/",
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| open_err(Path::new("/"), e))?;
        }
        Ok(Dir {
            handle: Some(DirHandle(cur)),
            path: resolved.to_path_buf(),
            canonical: true,
        })
    }

    /// The path the directory was opened by (for messages and lock names).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The canonical path (absolute, symlinks resolved) when the directory
    /// was opened through its resolved path ([`SharedDir::open`] of a
    /// directory that exists or existed); `None` for a path as spelled
    /// (`Dir::open_path`, in tests) or a directory never seen. The per-record lock
    /// and the ledger are keyed by it: [`Dir::path`] may be a spelling.
    pub fn canonical(&self) -> Option<&Path> {
        self.canonical.then_some(self.path.as_path())
    }

    /// Whether the directory is on a file system whose ctimes only this
    /// machine's kernel sets — a local one (ext4, XFS, Btrfs, F2FS, ZFS,
    /// bcachefs, tmpfs, overlayfs). On NFS, SMB or FUSE mounts the server
    /// or the file system's daemon may set them. Only Linux can tell.
    pub fn local_ctimes(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            const LOCAL: [u64; 8] = [
                0xEF53,      // ext2/3/4
                0x5846_5342, // XFS
                0x9123_683E, // Btrfs
                0xF2F5_2010, // F2FS
                0x2FC1_2FC1, // ZFS
                0xCA45_1A4E, // bcachefs
                0x0102_1994, // tmpfs
                0x794C_7630, // overlayfs
            ];
            self.handle
                .as_ref()
                .and_then(|h| rustix::fs::fstatfs(&h.0).ok())
                .is_some_and(|st| LOCAL.contains(&(st.f_type as u64)))
        }
        #[cfg(not(target_os = "linux"))]
        {
            false
        }
    }

    /// The directory's device and inode, while it is open.
    #[allow(clippy::unnecessary_cast)]
    pub fn identity(&self) -> Option<(u64, u64)> {
        let st = rustix::fs::fstat(&self.handle.as_ref()?.0).ok()?;
        Some((st.st_dev as u64, st.st_ino as u64))
    }

    /// Whether the directory exists.
    pub fn exists(&self) -> bool {
        self.handle.is_some()
    }

    fn handle(&self) -> Result<&DirHandle> {
        self.handle.as_ref().ok_or_else(|| Error::NoDirectory {
            dir: self.path.clone(),
        })
    }

    /// The stamp of `name` (`fstatat`, never following a symlink), without
    /// opening it; `Ok(None)` when it (or the directory) does not exist.
    pub fn stamp(&self, name: &str) -> io::Result<Option<Stamp>> {
        let Some(handle) = &self.handle else {
            return Ok(None);
        };
        if !is_plain_name(name) {
            return Ok(None);
        }
        match rustix::fs::statat(&handle.0, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(Stamp::of(&st))),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resolved_path_is_never_followed_through_a_new_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        fs::create_dir_all(base.join("sync/presence")).unwrap();
        fs::create_dir_all(base.join("elsewhere/presence")).unwrap();
        let shared = SharedDir::new(&base.join("sync/presence"));
        assert!(shared.open().unwrap().exists());
        // A parent swapped for a symlink is caught as well as the directory.
        fs::rename(base.join("sync"), base.join("sync.away")).unwrap();
        std::os::unix::fs::symlink(base.join("elsewhere"), base.join("sync")).unwrap();
        match shared.open() {
            Err(Error::DirectoryReplaced { link, .. }) => assert_eq!(link, base.join("sync")),
            other => panic!("{other:?}"),
        }
        // Gone altogether: an empty directory, not an error.
        fs::remove_file(base.join("sync")).unwrap();
        assert!(!shared.open().unwrap().exists());
    }

    #[test]
    fn a_configured_symlink_is_resolved_once() {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        fs::create_dir(base.join("real")).unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
        let shared = SharedDir::new(&base.join("link"));
        let dir = shared.open().unwrap();
        assert_eq!(dir.canonical(), Some(base.join("real").as_path()));
        dir.write_atomic("h.s.json", b"{}").unwrap();
        assert!(base.join("real/h.s.json").exists());
    }

    #[test]
    fn every_spelling_of_a_directory_has_one_canonical_path() {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        fs::create_dir(base.join("real")).unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
        let real = base.join("real");
        for spelling in [
            real.clone(),
            base.join("real/"),
            base.join("./real/."),
            base.join("link"),
            base.join("link/"),
        ] {
            let dir = SharedDir::new(&spelling).open().unwrap();
            assert_eq!(
                dir.canonical(),
                Some(real.as_path()),
                "{}",
                spelling.display()
            );
        }
        // A path as spelled, or a directory never seen, has none.
        assert_eq!(
            Dir::open_path(&base.join("link")).unwrap().canonical(),
            None
        );
        let never = SharedDir::new(&base.join("never")).open().unwrap();
        assert_eq!(never.canonical(), None);
        // Once resolved, a directory deleted since keeps its canonical path.
        let gone = SharedDir::new(&real);
        fs::remove_file(base.join("link")).unwrap();
        fs::remove_dir(&real).unwrap();
        assert_eq!(gone.open().unwrap().canonical(), Some(real.as_path()));
    }
}
