//! The presence directory: file names, name classification, atomic writes and
//! the safe scan.
//!
//! Everything here treats the directory as hostile: readers open files
//! without following symlinks and without blocking (a FIFO or device node
//! never hangs a listing), check the size with `fstat` before reading, never
//! read more than [`MAX_FILE_BYTES`], and skip — with a reason, never an
//! error — anything that is not a regular `*.json` record. The directory is
//! resolved once ([`SharedDir`]) and each operation holds it by its fd
//! ([`Dir`]): every open, rename and unlink is relative to that fd, so none
//! can be redirected by a directory swapped for a symlink.

use std::fs;
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::record::{MAX_FILE_BYTES, ParseError, Record};

/// Longest reduced id part of a file name, in bytes (before the hash suffix).
pub(crate) const MAX_ID_BYTES: usize = 100;

/// Base names Windows reserves whatever follows the first dot (`con.x.json`
/// cannot be created on a Windows share, so it would never sync).
const WINDOWS_RESERVED: [&str; 22] = [
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
    "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

/// Reduces a session id for use in a file name (see [`file_name`]).
pub(crate) fn reduce_id(id: &str) -> String {
    reduce(id, false)
}

/// Reduces an instance id for use in a file name: as [`reduce_id`], and dots
/// become `_` too, so that the first dot of a record name always ends the
/// instance part (`a.b` + `c` and `a` + `b.c` must not share `a.b.c.json`).
pub(crate) fn reduce_instance_id(id: &str) -> String {
    reduce(id, true)
}

/// The reduction rule: characters outside `[A-Za-z0-9._-]` become `_`, letters
/// are lowercased, leading dots are stripped, the result is cut to
/// [`MAX_ID_BYTES`], and shapes that would make the name look like something
/// else are neutralised (`sync-conflict` becomes `sync_conflict`, a trailing
/// `.tmp` becomes `_tmp`, an empty id `_`, a Windows device name gets a `_`).
/// When that changed the id — or the id already ends like a hash suffix —
/// `-<8 hex of SHA-256 of the original>` is appended. So a reduced name is
/// either the id itself or ends in a suffix that only the hash writes: two
/// ids differing in anything, letter case included, never share a name, even
/// on a case-insensitive filesystem.
fn reduce(id: &str, instance: bool) -> String {
    let mut out: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-') || (c == '.' && !instance) {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let stripped = out.trim_start_matches('.').len();
    out.drain(..out.len() - stripped);
    out.truncate(MAX_ID_BYTES);
    // Same length, so the cut above still holds.
    out = out.replace("sync-conflict", "sync_conflict");
    if out.ends_with(".tmp") {
        let dot = out.len() - 4;
        out.replace_range(dot..=dot, "_");
    }
    if out.is_empty() {
        out.push('_');
    }
    if instance && WINDOWS_RESERVED.contains(&out.as_str()) {
        out.push('_');
    }
    if out != id || ends_like_hash(&out) {
        out.push('-');
        out.push_str(&hash8(id));
    }
    out
}

/// The first 8 hex digits of the SHA-256 of `id`.
fn hash8(id: &str) -> String {
    Sha256::digest(id.as_bytes())[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether `s` ends in `-` and 8 lowercase hex digits, the shape of a suffix.
fn ends_like_hash(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 9
        && b[b.len() - 9] == b'-'
        && b[b.len() - 8..]
            .iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

/// The file name of a record: `<instance>.<session>.json`, the instance part
/// reduced by [`reduce_instance_id`] and the session part by [`reduce_id`].
/// [`classify`] always calls it a [`NameKind::Record`], and distinct
/// `(instance, session)` pairs give names that differ even under ASCII case
/// folding (short of a collision of the 32-bit hash suffix). At most 224 bytes.
pub(crate) fn file_name(instance_id: &str, session_id: &str) -> String {
    format!(
        "{}.{}.json",
        reduce_instance_id(instance_id),
        reduce_id(session_id)
    )
}

/// The sync engine a file name points to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Engine {
    /// Syncthing.
    Syncthing,
    /// Dropbox.
    Dropbox,
    /// Nextcloud or ownCloud.
    Nextcloud,
    /// iCloud Drive.
    ICloud,
    /// A copy of unknown origin (a name with a space in it).
    Unknown,
}

impl Engine {
    /// Display name.
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Syncthing => "Syncthing",
            Engine::Dropbox => "Dropbox",
            Engine::Nextcloud => "Nextcloud/ownCloud",
            Engine::ICloud => "iCloud",
            Engine::Unknown => "unknown engine",
        }
    }
}

/// What a directory entry's name says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameKind {
    /// `<instance>.<session>.json`: a record.
    Record,
    /// A sync engine's conflict copy of a record; parsed like a record.
    ConflictCopy(Engine),
    /// Our own temp file (`.<record name>.<pid>.<random>.tmp`), left by a crash if old.
    OwnTemp,
    /// A sync engine's temp or placeholder file.
    SyncTemp(Engine),
    /// Another dot file (`.stfolder`, `.stignore`, …).
    Hidden,
    /// Not a `*.json` file.
    Other,
}

/// Classifies a file name (see the module docs of the directory rules).
pub(crate) fn classify(name: &str) -> NameKind {
    if let Some(rest) = name.strip_prefix('.') {
        if rest.starts_with("syncthing.") && rest.ends_with(".tmp") {
            return NameKind::SyncTemp(Engine::Syncthing);
        }
        if rest.ends_with(".icloud") {
            return NameKind::SyncTemp(Engine::ICloud);
        }
        if let Some((_, tail)) = rest.rsplit_once(".~")
            && !tail.is_empty()
            && tail.chars().all(|c| c.is_ascii_hexdigit())
        {
            return NameKind::SyncTemp(Engine::Nextcloud);
        }
        if is_own_temp(rest) {
            return NameKind::OwnTemp;
        }
        return NameKind::Hidden;
    }
    if name.starts_with("~syncthing~") {
        return NameKind::SyncTemp(Engine::Syncthing);
    }
    let Some(stem) = name.strip_suffix(".json") else {
        return NameKind::Other;
    };
    if stem.is_empty() {
        return NameKind::Other;
    }
    if stem.contains(".sync-conflict-") {
        return NameKind::ConflictCopy(Engine::Syncthing);
    }
    if stem.contains("'s conflicted copy") {
        return NameKind::ConflictCopy(Engine::Dropbox);
    }
    if stem.contains("(conflicted copy") {
        return NameKind::ConflictCopy(Engine::Nextcloud);
    }
    // Our own names never hold a space; every engine's copy names do.
    if let Some((_, n)) = stem.rsplit_once(' ') {
        if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) {
            return NameKind::ConflictCopy(Engine::ICloud);
        }
        return NameKind::ConflictCopy(Engine::Unknown);
    }
    NameKind::Record
}

/// Whether `rest` (a name without its leading dot) is `<record name>.<pid>.<random>.tmp`,
/// the shape [`Dir::write_atomic`] gives its temp files: only those are ours
/// to delete, not any dot file that happens to end in `.tmp`.
fn is_own_temp(rest: &str) -> bool {
    let Some((body, random)) = rest.strip_suffix(".tmp").and_then(|b| b.rsplit_once('.')) else {
        return false;
    };
    let Some((target, pid)) = body.rsplit_once('.') else {
        return false;
    };
    !random.is_empty()
        && random.bytes().all(|b| b.is_ascii_alphanumeric())
        && !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && classify(target) == NameKind::Record
}

/// Which file a directory entry was when it was judged, and enough of what
/// `fstat` says to tell whether it changed without reading it: a later
/// operation on the name acts only if it still finds the same file (same
/// device, inode, size, change and modification times), not one that took
/// its place; a watcher re-reads only files whose stamp changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Stamp {
    /// Device of the file system.
    pub dev: u64,
    /// Inode number (a rewrite by rename is a new one).
    pub ino: u64,
    /// Size in bytes.
    pub size: u64,
    /// Change time, seconds part.
    pub ctime_s: i64,
    /// Change time, nanoseconds part.
    pub ctime_ns: i64,
    /// Modification time, seconds part.
    pub mtime_s: i64,
    /// Modification time, nanoseconds part.
    pub mtime_ns: i64,
}

impl Stamp {
    // The stat field types differ between platforms.
    #[allow(clippy::unnecessary_cast)]
    fn of(st: &rustix::fs::Stat) -> Stamp {
        Stamp {
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
            size: u64::try_from(st.st_size).unwrap_or(0),
            ctime_s: st.st_ctime as i64,
            ctime_ns: st.st_ctime_nsec as i64,
            mtime_s: st.st_mtime as i64,
            mtime_ns: st.st_mtime_nsec as i64,
        }
    }

    /// The change time as Unix seconds (this machine's clock).
    pub fn ctime(&self) -> f64 {
        secs(self.ctime_s, self.ctime_ns)
    }
}

/// A record file read from the directory.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// File name within the directory.
    pub file: String,
    /// Record or conflict copy.
    pub kind: NameKind,
    /// Change time on this machine (Unix seconds): when the file last arrived or changed here.
    pub ctime: f64,
    /// The file as it was read.
    pub stamp: Stamp,
    /// The parsed record.
    pub record: Record,
}

/// Why a directory entry was not read as a record.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SkipReason {
    /// The name is not valid UTF-8.
    NameNotUtf8,
    /// Not a regular file (what it is instead).
    NotRegular(&'static str),
    /// Larger than [`MAX_FILE_BYTES`].
    TooLarge(u64),
    /// Its contents are not a usable record.
    Unparseable(ParseError),
    /// It could not be opened or read.
    Unreadable(String),
    /// A temp or placeholder file, not a record (what kind, in words).
    Temp(String),
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkipReason::NameNotUtf8 => f.write_str("file name is not valid UTF-8"),
            SkipReason::NotRegular(what) => write!(f, "not a regular file ({what})"),
            SkipReason::TooLarge(n) => write!(f, "{n} bytes, larger than {MAX_FILE_BYTES}"),
            SkipReason::Unparseable(e) => e.fmt(f),
            SkipReason::Unreadable(e) => write!(f, "cannot read: {e}"),
            SkipReason::Temp(what) => f.write_str(what),
        }
    }
}

/// A directory entry that was passed over, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    /// File name (lossy if not UTF-8).
    pub file: String,
    /// The reason.
    pub reason: SkipReason,
}

/// The result of scanning a directory.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// Whether the directory exists.
    pub exists: bool,
    /// Records and conflict copies that parsed.
    pub entries: Vec<Entry>,
    /// `*.json` files and temp files that were not records (reported by
    /// `--verbose`); other files (`.stfolder`, notes) are not reported.
    pub skipped: Vec<Skipped>,
    /// Our own temp files (regular files only) as found, for `expire`.
    pub temps: Vec<(String, Stamp)>,
}

fn secs(s: i64, ns: i64) -> f64 {
    s as f64 + ns as f64 / 1e9
}

fn type_name(ft: rustix::fs::FileType) -> &'static str {
    use rustix::fs::FileType;
    match ft {
        FileType::Directory => "a directory",
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::BlockDevice | FileType::CharacterDevice => "a device node",
        _ => "not a regular file",
    }
}

fn mode_name(mode: u32) -> &'static str {
    type_name(rustix::fs::FileType::from_raw_mode(mode))
}

/// Directory fds opened on the way down to the presence directory need no
/// read permission (`O_PATH`) where the platform has it.
#[cfg(any(target_os = "linux", target_os = "android"))]
const WALK: rustix::fs::OFlags = rustix::fs::OFlags::PATH;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const WALK: rustix::fs::OFlags = rustix::fs::OFlags::RDONLY;

/// The directory, opened once; files are opened relative to it (`openat`),
/// so reading a file costs no path building and no lookups of the directory.
struct DirHandle(rustix::fd::OwnedFd);

impl DirHandle {
    /// Reads one record file safely into `buf`: never follows a symlink, never
    /// blocks on a FIFO or device (`O_NONBLOCK`), checks the type and size
    /// with `fstat` before reading and never reads past the limit. Returns
    /// the file's [`Stamp`], or `Ok(None)` when it vanished meanwhile.
    fn read(&self, name: &str, buf: &mut Vec<u8>) -> Result<Option<Stamp>, SkipReason> {
        use rustix::fs::{Mode, OFlags};
        use rustix::io::Errno;
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
        let fd = match rustix::fs::openat(&self.0, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(Errno::LOOP) => return Err(SkipReason::NotRegular("a symbolic link")),
            Err(e) => return Err(SkipReason::Unreadable(io::Error::from(e).to_string())),
        };
        let st = rustix::fs::fstat(&fd)
            .map_err(|e| SkipReason::Unreadable(io::Error::from(e).to_string()))?;
        if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
            return Err(SkipReason::NotRegular(mode_name(st.st_mode)));
        }
        let size = u64::try_from(st.st_size).unwrap_or(0);
        if size > MAX_FILE_BYTES as u64 {
            return Err(SkipReason::TooLarge(size));
        }
        // Room for one byte more than fstat said, to notice a file that grew.
        let want = size as usize + 1;
        buf.clear();
        buf.resize(want, 0);
        let mut len = 0;
        loop {
            match rustix::io::read(&fd, &mut buf[len..]) {
                Ok(0) => break,
                Ok(n) => len += n,
                Err(Errno::INTR) => continue,
                Err(e) => return Err(SkipReason::Unreadable(io::Error::from(e).to_string())),
            }
            if len == size as usize {
                // All that fstat promised: no need for a read that returns 0.
                break;
            }
            if len == buf.len() {
                // It grew after fstat: read on, up to one byte past the limit.
                if len > MAX_FILE_BYTES {
                    return Err(SkipReason::TooLarge(len as u64));
                }
                let grown = (buf.len() * 2).min(MAX_FILE_BYTES + 1);
                buf.resize(grown, 0);
            }
        }
        buf.truncate(len);
        Ok(Some(Stamp::of(&st)))
    }

    fn entry(
        &self,
        name: &str,
        kind: NameKind,
        buf: &mut Vec<u8>,
    ) -> Result<Option<Entry>, SkipReason> {
        let Some(stamp) = self.read(name, buf)? else {
            return Ok(None);
        };
        let raw = Raw {
            file: name,
            kind,
            ctime: stamp.ctime(),
            stamp,
            bytes: buf,
        };
        raw.parse().map(Some)
    }
}

/// A record file as read, not yet parsed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Raw<'a> {
    /// File name within the directory.
    pub file: &'a str,
    /// Record or conflict copy.
    pub kind: NameKind,
    /// Change time on this machine (Unix seconds).
    pub ctime: f64,
    /// The file as it was read.
    pub stamp: Stamp,
    /// The contents.
    pub bytes: &'a [u8],
}

impl Raw<'_> {
    /// Parses the contents into an [`Entry`].
    pub fn parse(&self) -> Result<Entry, SkipReason> {
        let record = Record::from_json(self.bytes).map_err(SkipReason::Unparseable)?;
        Ok(Entry {
            file: self.file.to_owned(),
            kind: self.kind,
            ctime: self.ctime,
            stamp: self.stamp,
            record,
        })
    }
}

/// Reads one record file of the directory at `dir` (symlinks in `dir`
/// followed, as its caller named it). `Ok(None)` when it or the directory is
/// missing.
#[cfg(test)]
pub(crate) fn read_entry(dir: &Path, file: &str) -> Result<Option<Entry>, SkipReason> {
    match Dir::open_path(dir) {
        Ok(d) => d.read_entry(file),
        Err(e) => Err(SkipReason::Unreadable(e.to_string())),
    }
}

/// What a scan found besides the records it handed to the visitor.
#[derive(Debug, Default)]
pub(crate) struct ScanReport {
    /// Whether the directory exists.
    pub exists: bool,
    /// Entries passed over, and why.
    pub skipped: Vec<Skipped>,
    /// Our own temp files as found.
    pub temps: Vec<(String, Stamp)>,
}

/// Below this many candidate files a scan stays on one thread.
const PARALLEL_FROM: usize = 1024;

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
    /// ([`Dir::open_path`]) or a directory never seen. The per-record lock
    /// and the ledger are keyed by it: [`Dir::path`] may be a spelling.
    pub fn canonical(&self) -> Option<&Path> {
        self.canonical.then_some(self.path.as_path())
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

    /// Opens `dir` (following symlinks in it, as its caller named it);
    /// `Ok(None)` when it does not exist.
    pub fn open(dir: &Path) -> Result<Option<Dir>> {
        let d = Dir::open_path(dir)?;
        Ok(d.exists().then_some(d))
    }

    /// The names a scan would read — records and conflict copies, valid
    /// UTF-8, not known (by `d_type`) to be anything but a regular file —
    /// with their kinds. Nothing is opened.
    pub fn records(&self) -> Result<Vec<(Box<str>, NameKind)>> {
        use rustix::fs::FileType;
        let Some(handle) = &self.handle else {
            return Ok(Vec::new());
        };
        let list_err = |e: rustix::io::Errno| Error::io("list directory", &self.path, e.into());
        let rd = rustix::fs::Dir::read_from(&handle.0).map_err(list_err)?;
        let mut out = Vec::new();
        for dirent in rd {
            let dirent = dirent.map_err(list_err)?;
            let Ok(name) = std::str::from_utf8(dirent.file_name().to_bytes()) else {
                continue;
            };
            let kind = classify(name);
            if !matches!(kind, NameKind::Record | NameKind::ConflictCopy(_)) {
                continue;
            }
            let ft = dirent.file_type();
            if ft != FileType::RegularFile && ft != FileType::Unknown {
                continue;
            }
            out.push((name.into(), kind));
        }
        Ok(out)
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

    /// Reads the named files with the safety rules of a scan — on several
    /// threads for large batches, as a scan does — and hands each outcome to
    /// `fold`, which folds it into its thread's state made by `init`. The
    /// states are returned in no particular order.
    pub fn read_each<S: Send>(
        &self,
        names: &[Box<str>],
        init: impl Fn() -> S + Sync,
        fold: impl Fn(&mut S, &str, ReadOutcome<'_>) + Sync,
    ) -> Vec<S> {
        in_parallel(names, |chunk| {
            let mut state = init();
            let mut buf = Vec::with_capacity(4096);
            for name in chunk {
                let outcome = match &self.handle {
                    Some(h) if is_plain_name(name) => match h.read(name, &mut buf) {
                        Ok(Some(stamp)) => Ok(Some((stamp, &buf[..]))),
                        Ok(None) => Ok(None),
                        Err(reason) => Err(reason),
                    },
                    _ => Ok(None),
                };
                fold(&mut state, name, outcome);
            }
            state
        })
    }

    /// Reads one record file safely. `Ok(None)` when it (or the directory)
    /// is missing.
    pub fn read_entry(&self, file: &str) -> Result<Option<Entry>, SkipReason> {
        match &self.handle {
            Some(h) if is_plain_name(file) => h.entry(file, classify(file), &mut Vec::new()),
            Some(_) => Err(SkipReason::Unreadable("not a file name".into())),
            None => Ok(None),
        }
    }

    /// Scans the directory into a list of every record (see [`Dir::scan_fold`]).
    pub fn scan(&self) -> Result<Scan> {
        let (parts, report) = self.scan_fold(Vec::new, |v: &mut Vec<Entry>, e| v.push(e))?;
        Ok(Scan {
            exists: report.exists,
            entries: parts.into_iter().flatten().collect(),
            skipped: report.skipped,
            temps: report.temps,
        })
    }

    /// Scans the directory, reading and parsing the record files on up to
    /// `available_parallelism` threads (for large directories). Each thread
    /// folds the entries it reads into its own state, made by `init`; the
    /// states are returned in no particular order. A missing directory is an
    /// empty scan with `exists == false`; problems with single files land in
    /// [`ScanReport::skipped`].
    pub fn scan_fold<S: Send>(
        &self,
        init: impl Fn() -> S + Sync,
        fold: impl Fn(&mut S, Entry) + Sync,
    ) -> Result<(Vec<S>, ScanReport)> {
        self.scan_fold_raw(init, |state, raw| {
            fold(state, raw.parse()?);
            Ok(())
        })
    }

    /// [`Dir::scan_fold`] on unparsed files: `fold` parses what it needs and
    /// returns the reason when a file is not a record.
    pub fn scan_fold_raw<S: Send>(
        &self,
        init: impl Fn() -> S + Sync,
        fold: impl Fn(&mut S, Raw<'_>) -> Result<(), SkipReason> + Sync,
    ) -> Result<(Vec<S>, ScanReport)> {
        use rustix::fs::{AtFlags, FileType};
        let mut report = ScanReport::default();
        let Some(handle) = &self.handle else {
            return Ok((Vec::new(), report));
        };
        report.exists = true;
        let list_err = |e: rustix::io::Errno| Error::io("list directory", &self.path, e.into());
        let rd = rustix::fs::Dir::read_from(&handle.0).map_err(list_err)?;
        let mut candidates: Vec<(Box<str>, NameKind)> = Vec::new();
        for dirent in rd {
            let dirent = dirent.map_err(list_err)?;
            let bytes = dirent.file_name().to_bytes();
            let Ok(name) = std::str::from_utf8(bytes) else {
                if bytes.ends_with(b".json") {
                    report.skipped.push(Skipped {
                        file: String::from_utf8_lossy(bytes).into_owned(),
                        reason: SkipReason::NameNotUtf8,
                    });
                }
                continue;
            };
            let kind = classify(name);
            match kind {
                NameKind::Record | NameKind::ConflictCopy(_) => {}
                NameKind::OwnTemp | NameKind::SyncTemp(_) => {
                    if kind == NameKind::OwnTemp
                        && let Ok(st) =
                            rustix::fs::statat(&handle.0, name, AtFlags::SYMLINK_NOFOLLOW)
                        && FileType::from_raw_mode(st.st_mode) == FileType::RegularFile
                    {
                        report.temps.push((name.to_owned(), Stamp::of(&st)));
                    }
                    report.skipped.push(Skipped {
                        file: name.to_owned(),
                        reason: SkipReason::Temp(match kind {
                            NameKind::OwnTemp => "temp file of an interrupted write".into(),
                            NameKind::SyncTemp(e) => format!("{} temp file", e.as_str()),
                            _ => "temp file".into(),
                        }),
                    });
                    continue;
                }
                NameKind::Hidden | NameKind::Other => continue,
            }
            // d_type from readdir: skip non-files without opening them (an
            // unknown type is settled by the fstat of the read).
            let ft = dirent.file_type();
            if ft != FileType::RegularFile && ft != FileType::Unknown {
                report.skipped.push(Skipped {
                    file: name.to_owned(),
                    reason: SkipReason::NotRegular(type_name(ft)),
                });
                continue;
            }
            candidates.push((name.into(), kind));
        }
        let work = |chunk: &[(Box<str>, NameKind)]| {
            let mut state = init();
            let mut skipped = Vec::new();
            let mut buf = Vec::with_capacity(4096);
            for (name, kind) in chunk {
                let outcome = match handle.read(name, &mut buf) {
                    Ok(Some(stamp)) => {
                        let raw = Raw {
                            file: name,
                            kind: *kind,
                            ctime: stamp.ctime(),
                            stamp,
                            bytes: &buf,
                        };
                        fold(&mut state, raw)
                    }
                    Ok(None) => Ok(()),
                    Err(reason) => Err(reason),
                };
                if let Err(reason) = outcome {
                    skipped.push(Skipped {
                        file: name.to_string(),
                        reason,
                    });
                }
            }
            (state, skipped)
        };
        let results = in_parallel(&candidates, work);
        let mut states = Vec::with_capacity(results.len());
        for (state, skipped) in results {
            states.push(state);
            report.skipped.extend(skipped);
        }
        Ok((states, report))
    }

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

    /// Writes `bytes` to `name` atomically: a temp file
    /// `.<name>.<pid>.<random>.tmp` created in the directory (`O_EXCL`,
    /// `O_NOFOLLOW`, mode 0600), renamed over the final name, both relative
    /// to the directory's fd. Readers see the old file or the new one, never
    /// a torn one. On failure the temp file is removed and the old file is
    /// untouched.
    #[cfg(test)]
    pub fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<()> {
        self.write_atomic_if(name, bytes, |_| true).map(|_| ())
    }

    /// [`Dir::write_atomic`], but only if `name` is still the version that
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
        )
    }

    fn write_atomic_if(
        &self,
        name: &str,
        bytes: &[u8],
        still: impl FnOnce(&Dir) -> bool,
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
                rustix::fs::renameat(&handle.0, tmp.as_str(), &handle.0, name)
                    .map(|()| true)
                    .map_err(|e| Error::io("rename temp file over", &target, e.into()))
            });
        if !matches!(written, Ok(true)) {
            let _ = rustix::fs::unlinkat(&handle.0, tmp.as_str(), AtFlags::empty());
        }
        written
    }
}

/// The outcome of reading one file with [`Dir::read_each`]: its stamp and
/// contents, `Ok(None)` when it vanished, or why it is not a record.
pub(crate) type ReadOutcome<'a> = Result<Option<(Stamp, &'a [u8])>, SkipReason>;

/// Runs `work` on chunks of `items`: on one thread below [`PARALLEL_FROM`]
/// items, else on up to `available_parallelism` (at most 8) threads.
fn in_parallel<T: Sync, R: Send>(items: &[T], work: impl Fn(&[T]) -> R + Sync) -> Vec<R> {
    let threads = if items.len() < PARALLEL_FROM {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
    };
    if threads == 1 {
        return vec![work(items)];
    }
    let size = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(size)
            .map(|chunk| scope.spawn(|| work(chunk)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

/// A name that stays in the directory: one path component, not `.` or `..`.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\0'])
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
    fn reduce_id_table() {
        // Digests from `printf '%s' ID | sha256sum`, not from the code under test.
        let cases = [
            ("abc-def_1.2", "abc-def_1.2".to_string()),
            ("abc-DEF_1.2", "abc-def_1.2-832ae800".to_string()),
            ("ABC", "abc-b5d4045c".to_string()),
            ("a b", "a_b-c8687a08".to_string()),
            ("a/b", "a_b-c14cddc0".to_string()),
            ("", "_-e3b0c442".to_string()),
            // Already shaped like a suffix: suffixed, so no id can take its name.
            ("laptop-3f9c2a1b", "laptop-3f9c2a1b-8edc2e6c".to_string()),
            ("..hidden", format!("hidden-{}", hash8("..hidden"))),
            ("é", format!("_-{}", hash8("é"))),
            (
                "x.sync-conflict-1",
                format!("x.sync_conflict-1-{}", hash8("x.sync-conflict-1")),
            ),
            ("x.tmp", format!("x_tmp-{}", hash8("x.tmp"))),
            ("x.tmp.y", "x.tmp.y".to_string()),
        ];
        for (id, want) in cases {
            assert_eq!(reduce_id(id), want, "{id:?}");
        }
        let long = "x".repeat(150);
        let r = reduce_id(&long);
        assert_eq!(r.len(), MAX_ID_BYTES + 9);
        assert!(r.starts_with(&"x".repeat(100)));
    }

    #[test]
    fn instance_parts_hold_no_dot_and_no_device_name() {
        let cases = [
            ("laptop", "laptop".to_string()),
            ("a.b", format!("a_b-{}", hash8("a.b"))),
            ("con", format!("con_-{}", hash8("con"))),
            ("LPT1", format!("lpt1_-{}", hash8("LPT1"))),
            ("con1", "con1".to_string()),
        ];
        for (id, want) in cases {
            assert_eq!(reduce_instance_id(id), want, "{id:?}");
        }
        assert_ne!(file_name("a.b", "c"), file_name("a", "b.c"));
    }

    #[test]
    fn hash_is_stable() {
        // SHA-256("a b") begins c8687a08 (`printf 'a b' | sha256sum`): pinned
        // so that names stay the same across versions and platforms.
        assert_eq!(hash8("a b"), "c8687a08");
        assert_eq!(reduce_id("a b"), "a_b-c8687a08");
        assert_eq!(file_name("h-1234", "s1"), "h-1234.s1.json");
    }

    #[test]
    fn classify_table() {
        use Engine::*;
        use NameKind::*;
        let cases = [
            ("host-1.sess.json", Record),
            (
                "host-1.sess.sync-conflict-20261130-101112-ABCDEFG.json",
                ConflictCopy(Syncthing),
            ),
            (
                "host-1.sess.sync-conflict-20261130-101112-.json",
                ConflictCopy(Syncthing),
            ),
            (
                "host-1.sess (laptop's conflicted copy 2026-11-30).json",
                ConflictCopy(Dropbox),
            ),
            (
                "host-1.sess (conflicted copy 2026-11-30 101112).json",
                ConflictCopy(Nextcloud),
            ),
            ("host-1.sess 2.json", ConflictCopy(ICloud)),
            ("host-1.sess (1).json", ConflictCopy(Unknown)),
            (".host-1.sess.json.1234.abcdef.tmp", OwnTemp),
            // Only a temp named after a record, with a pid and a random part, is ours.
            (".notes.tmp", Hidden),
            (".host-1.sess.json.tmp", Hidden),
            (".host-1.sess.json.12a.abcdef.tmp", Hidden),
            (".host-1.sess.json.1234..tmp", Hidden),
            (".host-1.sess 2.json.1234.abcdef.tmp", Hidden),
            ("..host-1.sess.json.1234.abcdef.tmp", Hidden),
            (".syncthing.host-1.sess.json.tmp", SyncTemp(Syncthing)),
            ("~syncthing~host-1.sess.json.tmp", SyncTemp(Syncthing)),
            (".host-1.sess.json.~1a2b3c", SyncTemp(Nextcloud)),
            (".host-1.sess.json.icloud", SyncTemp(ICloud)),
            (".stfolder", Hidden),
            (".hidden.json", Hidden),
            ("notes.txt", Other),
            (".json", Hidden),
            ("x.json.bak", Other),
        ];
        for (name, want) in cases {
            assert_eq!(classify(name), want, "{name}");
        }
    }

    #[test]
    fn own_names_classify_as_records() {
        for id in [
            "a b",
            "..x",
            "x (1)",
            "x 2",
            "sync-conflict",
            "",
            ".",
            "x.tmp",
        ] {
            assert_eq!(classify(&file_name("h", id)), NameKind::Record, "{id}");
            assert_eq!(classify(&file_name(id, "s")), NameKind::Record, "{id}");
        }
        assert_eq!(
            classify(&file_name("h", "sync-conflict-20261130-101112-A")),
            NameKind::Record
        );
    }

    /// Ids built from the shapes that could make a name mistaken: conflict
    /// infixes, temp and json suffixes, dots, spaces, case variants, device
    /// names, suffix look-alikes, non-ASCII.
    fn adversarial_id() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let token = prop::sample::select(vec![
            "a",
            "A",
            "b",
            "B",
            ".",
            "..",
            " ",
            "-",
            "_",
            "/",
            "~",
            "é",
            "É",
            ".sync-conflict-",
            "SYNC-CONFLICT",
            " (conflicted copy ",
            "'s conflicted copy",
            " 2.json",
            ".tmp",
            ".TMP",
            ".json",
            "~syncthing~",
            ".icloud",
            ".~1a",
            "con",
            "NUL",
            "-1a2b3c4d",
            "-e3b0c442",
        ]);
        prop_oneof![
            prop::collection::vec(token, 0..8).prop_map(|v| v.concat()),
            "\\PC{0,40}",
            "[a-zA-Z0-9._-]{0,120}",
            "[a-z0-9._-]{0,12}",
        ]
    }

    /// Two `(instance, session)` pairs, the second often a near neighbour of
    /// the first: its letter case toggled here and there, the dot between the
    /// parts moved, or the parts swapped.
    fn pair_and_neighbour()
    -> impl proptest::strategy::Strategy<Value = ((String, String), (String, String))> {
        use proptest::prelude::*;
        let ids = || (adversarial_id(), adversarial_id());
        (ids(), ids(), any::<u64>()).prop_map(|((i, s), other, bits)| {
            let toggle = |t: &str, salt: u32| -> String {
                t.chars()
                    .enumerate()
                    .map(|(k, c)| {
                        if bits.rotate_left(salt + k as u32) & 1 == 1 {
                            if c.is_ascii_lowercase() {
                                c.to_ascii_uppercase()
                            } else {
                                c.to_ascii_lowercase()
                            }
                        } else {
                            c
                        }
                    })
                    .collect()
            };
            let joined = format!("{i}.{s}");
            let dots: Vec<usize> = joined.match_indices('.').map(|(p, _)| p).collect();
            let neighbour = match bits % 4 {
                0 => other,
                1 => (toggle(&i, 0), toggle(&s, 17)),
                2 => {
                    let p = dots[(bits / 4) as usize % dots.len()];
                    (joined[..p].to_string(), joined[p + 1..].to_string())
                }
                _ => (s.clone(), i.clone()),
            };
            ((i, s), neighbour)
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        #[test]
        fn own_names_are_plain_records(
            name in "\\PC{0,60}",
            instance in adversarial_id(),
            session in adversarial_id(),
        ) {
            let _ = classify(&name);
            let own = file_name(&instance, &session);
            proptest::prop_assert_eq!(classify(&own), NameKind::Record, "{}", own);
            proptest::prop_assert!(own.len() <= 255, "{} bytes", own.len());
            proptest::prop_assert!(
                own.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')),
                "{}", own
            );
            // Its temp file is ours, and only ours.
            let temp = format!(".{own}.4242.aB3xYz.tmp");
            proptest::prop_assert_eq!(classify(&temp), NameKind::OwnTemp, "{}", temp);
        }

        #[test]
        fn distinct_ids_never_share_a_name_even_ignoring_case((a, b) in pair_and_neighbour()) {
            if a != b {
                let (x, y) = (file_name(&a.0, &a.1), file_name(&b.0, &b.1));
                proptest::prop_assert!(!x.eq_ignore_ascii_case(&y), "{:?} {:?} -> {}", a, b, x);
            }
        }
    }

    #[test]
    fn near_ids_never_share_a_name_even_ignoring_case() {
        // Every pair from ids that differ by case, a dot's position or a
        // reduced character: the collisions a random search rarely meets.
        let ids = [
            "a",
            "A",
            "a.b",
            "a_b",
            "a b",
            "A.B",
            "a.B",
            "b",
            "b.c",
            "a.b.c",
            "c",
            "",
            ".",
            "_",
            "con",
            "CON",
            "x.tmp",
            "x_tmp",
            "x.TMP",
            "sync-conflict",
            "sync_conflict",
            "é",
            "_-",
            "a-1a2b3c4d",
            "a_b-c8687a08",
        ];
        let mut seen = std::collections::HashMap::new();
        for i in ids {
            for s in ids {
                let name = file_name(i, s).to_ascii_lowercase();
                if let Some(prev) = seen.insert(name.clone(), (i, s)) {
                    panic!("{prev:?} and {:?} share {name}", (i, s));
                }
            }
        }
    }

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
