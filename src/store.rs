//! The presence directory: file names, name classification, atomic writes and
//! the safe scan.
//!
//! Everything here treats the directory as hostile: readers open files
//! without following symlinks and without blocking (a FIFO or device node
//! never hangs a listing), check the size with `fstat` before reading, never
//! read more than [`MAX_FILE_BYTES`], and skip — with a reason, never an
//! error — anything that is not a regular `*.json` record.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::record::{MAX_FILE_BYTES, ParseError, Record};

/// Longest reduced id part of a file name, in bytes (before the hash suffix).
pub const MAX_ID_BYTES: usize = 100;

/// Reduces an id to `[A-Za-z0-9._-]` for use in a file name: other characters
/// become `_`, leading dots are stripped, the result is cut to
/// [`MAX_ID_BYTES`]; when that changed the id, `-<8 hex of SHA-256 of the
/// original>` is appended so that two ids never share a file name.
pub fn reduce_id(id: &str) -> String {
    let mut out: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let stripped = out.trim_start_matches('.').len();
    out.drain(..out.len() - stripped);
    out.truncate(MAX_ID_BYTES);
    if out != id {
        let digest = Sha256::digest(id.as_bytes());
        out.push('-');
        for b in &digest[..4] {
            out.push_str(&format!("{b:02x}"));
        }
    }
    out
}

/// The file name of a record: `<instance>.<session>.json`, both parts reduced.
pub fn file_name(instance_id: &str, session_id: &str) -> String {
    format!("{}.{}.json", reduce_id(instance_id), reduce_id(session_id))
}

/// The sync engine a file name points to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
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
pub enum NameKind {
    /// `<instance>.<session>.json`: a record.
    Record,
    /// A sync engine's conflict copy of a record; parsed like a record.
    ConflictCopy(Engine),
    /// Our own temp file (`.<name>.<pid>.<random>.tmp`), left by a crash if old.
    OwnTemp,
    /// A sync engine's temp or placeholder file.
    SyncTemp(Engine),
    /// Another dot file (`.stfolder`, `.stignore`, …).
    Hidden,
    /// Not a `*.json` file.
    Other,
}

/// Classifies a file name (see the module docs of the directory rules).
pub fn classify(name: &str) -> NameKind {
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
        if rest.ends_with(".tmp") {
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

/// A record file read from the directory.
#[derive(Debug, Clone)]
pub struct Entry {
    /// File name within the directory.
    pub file: String,
    /// Record or conflict copy.
    pub kind: NameKind,
    /// Change time on this machine (Unix seconds): when the file last arrived or changed here.
    pub ctime: f64,
    /// Modification time (Unix seconds), as set by the writer or the sync engine.
    pub mtime: f64,
    /// The parsed record.
    pub record: Record,
}

/// Why a directory entry was not read as a record.
#[derive(Debug, Clone, PartialEq)]
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
    /// A temp or placeholder file, not a record.
    Temp(NameKind),
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkipReason::NameNotUtf8 => f.write_str("file name is not valid UTF-8"),
            SkipReason::NotRegular(what) => write!(f, "not a regular file ({what})"),
            SkipReason::TooLarge(n) => write!(f, "{n} bytes, larger than {MAX_FILE_BYTES}"),
            SkipReason::Unparseable(e) => e.fmt(f),
            SkipReason::Unreadable(e) => write!(f, "cannot read: {e}"),
            SkipReason::Temp(NameKind::OwnTemp) => f.write_str("temp file of an interrupted write"),
            SkipReason::Temp(NameKind::SyncTemp(e)) => write!(f, "{} temp file", e.as_str()),
            SkipReason::Temp(_) => f.write_str("temp file"),
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
pub struct Scan {
    /// Whether the directory exists.
    pub exists: bool,
    /// Records and conflict copies that parsed.
    pub entries: Vec<Entry>,
    /// `*.json` files and temp files that were not records (reported by
    /// `--verbose`); other files (`.stfolder`, notes) are not reported.
    pub skipped: Vec<Skipped>,
    /// Our own temp files (regular files only) and their ctimes, for `expire`.
    pub temps: Vec<(String, f64)>,
}

fn file_type_name(ft: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a directory"
    } else if ft.is_symlink() {
        "a symbolic link"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_block_device() || ft.is_char_device() {
        "a device node"
    } else {
        "not a regular file"
    }
}

fn secs(s: i64, ns: i64) -> f64 {
    s as f64 + ns as f64 / 1e9
}

fn mode_name(mode: u32) -> &'static str {
    match rustix::fs::FileType::from_raw_mode(mode) {
        rustix::fs::FileType::Directory => "a directory",
        rustix::fs::FileType::Symlink => "a symbolic link",
        rustix::fs::FileType::Fifo => "a FIFO",
        rustix::fs::FileType::Socket => "a socket",
        rustix::fs::FileType::BlockDevice | rustix::fs::FileType::CharacterDevice => {
            "a device node"
        }
        _ => "not a regular file",
    }
}

/// The directory, opened once; files are opened relative to it (`openat`),
/// so reading a file costs no path building and no lookups of the directory.
struct DirHandle(rustix::fd::OwnedFd);

impl DirHandle {
    fn open(dir: &Path) -> io::Result<DirHandle> {
        use rustix::fs::{Mode, OFlags};
        let fd = rustix::fs::open(
            dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(DirHandle(fd))
    }

    /// Reads one record file safely into `buf`: never follows a symlink, never
    /// blocks on a FIFO or device (`O_NONBLOCK`), checks the type and size
    /// with `fstat` before reading and never reads past the limit. Returns
    /// the file's [`Stamp`], or `Ok(None)` when the file vanished meanwhile.
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
            mtime: stamp.mtime(),
            bytes: buf,
        };
        raw.parse().map(Some)
    }
}

/// A record file as read, not yet parsed.
#[derive(Debug, Clone, Copy)]
pub struct Raw<'a> {
    /// File name within the directory.
    pub file: &'a str,
    /// Record or conflict copy.
    pub kind: NameKind,
    /// Change time on this machine (Unix seconds).
    pub ctime: f64,
    /// Modification time (Unix seconds).
    pub mtime: f64,
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
            mtime: self.mtime,
            record,
        })
    }
}

/// Reads one record file safely. `Ok(None)` when it vanished meanwhile.
pub fn read_entry(dir: &Path, file: &str) -> Result<Option<Entry>, SkipReason> {
    let handle = match DirHandle::open(dir) {
        Ok(h) => h,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(SkipReason::Unreadable(e.to_string())),
    };
    handle.entry(file, classify(file), &mut Vec::new())
}

/// What a scan found besides the records it handed to the visitor.
#[derive(Debug, Default)]
pub struct ScanReport {
    /// Whether the directory exists.
    pub exists: bool,
    /// Entries passed over, and why.
    pub skipped: Vec<Skipped>,
    /// Our own temp files and their ctimes.
    pub temps: Vec<(String, f64)>,
}

/// Below this many candidate files a scan stays on one thread.
const PARALLEL_FROM: usize = 1024;

/// Scans `dir`, reading and parsing the record files on up to
/// `available_parallelism` threads (for large directories). Each thread
/// folds the entries it reads into its own state, made by `init`; the states
/// are returned in no particular order. A missing directory is an empty scan
/// with `exists == false`; problems with single files land in
/// [`ScanReport::skipped`].
pub fn scan_fold<S: Send>(
    dir: &Path,
    init: impl Fn() -> S + Sync,
    fold: impl Fn(&mut S, Entry) + Sync,
) -> Result<(Vec<S>, ScanReport)> {
    scan_fold_raw(dir, init, |state, raw| {
        fold(state, raw.parse()?);
        Ok(())
    })
}

/// [`scan_fold`] on unparsed files: `fold` parses what it needs and returns
/// the reason when a file is not a record.
pub fn scan_fold_raw<S: Send>(
    dir: &Path,
    init: impl Fn() -> S + Sync,
    fold: impl Fn(&mut S, Raw<'_>) -> Result<(), SkipReason> + Sync,
) -> Result<(Vec<S>, ScanReport)> {
    let mut report = ScanReport::default();
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), report)),
        Err(e) => return Err(Error::io("list directory", dir, e)),
    };
    report.exists = true;
    let handle = DirHandle::open(dir).map_err(|e| Error::io("open directory", dir, e))?;
    let mut candidates: Vec<(Box<str>, NameKind)> = Vec::new();
    for dirent in rd {
        let dirent = dirent.map_err(|e| Error::io("list directory", dir, e))?;
        let os_name = dirent.file_name();
        let Some(name) = os_name.to_str() else {
            if os_name.as_encoded_bytes().ends_with(b".json") {
                report.skipped.push(Skipped {
                    file: os_name.to_string_lossy().into_owned(),
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
                    && let Ok(m) = dirent.metadata()
                    && m.file_type().is_file()
                {
                    report
                        .temps
                        .push((name.to_owned(), secs(m.ctime(), m.ctime_nsec())));
                }
                report.skipped.push(Skipped {
                    file: name.to_owned(),
                    reason: SkipReason::Temp(kind),
                });
                continue;
            }
            NameKind::Hidden | NameKind::Other => continue,
        }
        // d_type from readdir: skip non-files without opening them.
        if let Ok(ft) = dirent.file_type()
            && !ft.is_file()
        {
            report.skipped.push(Skipped {
                file: name.to_owned(),
                reason: SkipReason::NotRegular(file_type_name(&ft)),
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
                        mtime: stamp.mtime(),
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

/// What `fstat` says of a file, enough to tell whether it changed since it
/// was last read without reading it: the inode (a rewrite by rename is a new
/// one), the size, and the change and modification times to the nanosecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    ino: u64,
    size: u64,
    ctime: (i64, i64),
    mtime: (i64, i64),
}

impl Stamp {
    // The field types of `stat` differ between platforms.
    #[allow(clippy::unnecessary_cast)]
    fn of(st: &rustix::fs::Stat) -> Stamp {
        Stamp {
            ino: st.st_ino as u64,
            size: u64::try_from(st.st_size).unwrap_or(0),
            ctime: (st.st_ctime as i64, st.st_ctime_nsec as i64),
            mtime: (st.st_mtime as i64, st.st_mtime_nsec as i64),
        }
    }

    /// Change time (Unix seconds, this machine's clock).
    pub fn ctime(&self) -> f64 {
        secs(self.ctime.0, self.ctime.1)
    }

    /// Modification time (Unix seconds).
    pub fn mtime(&self) -> f64 {
        secs(self.mtime.0, self.mtime.1)
    }
}

/// The outcome of reading one file with [`Dir::read_each`]: its stamp and
/// contents, `Ok(None)` when it vanished, or why it is not a record.
pub type ReadOutcome<'a> = Result<Option<(Stamp, &'a [u8])>, SkipReason>;

/// The directory opened once, for a reader that comes back to single files
/// again and again (a watcher): the record names, a file's [`Stamp`] without
/// opening it, and reads with the safety rules of a scan, all relative to one
/// directory fd.
pub struct Dir {
    handle: DirHandle,
    path: PathBuf,
}

impl std::fmt::Debug for Dir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dir").field("path", &self.path).finish()
    }
}

impl Dir {
    /// Opens `dir`; `Ok(None)` when it does not exist.
    pub fn open(dir: &Path) -> Result<Option<Dir>> {
        match DirHandle::open(dir) {
            Ok(handle) => Ok(Some(Dir {
                handle,
                path: dir.to_path_buf(),
            })),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io("open directory", dir, e)),
        }
    }

    /// The names a scan would read — records and conflict copies, valid
    /// UTF-8, not known (by `d_type`) to be anything but a regular file —
    /// with their kinds. Nothing is opened.
    pub fn records(&self) -> Result<Vec<(Box<str>, NameKind)>> {
        let rd =
            fs::read_dir(&self.path).map_err(|e| Error::io("list directory", &self.path, e))?;
        let mut out = Vec::new();
        for dirent in rd {
            let dirent = dirent.map_err(|e| Error::io("list directory", &self.path, e))?;
            let os_name = dirent.file_name();
            let Some(name) = os_name.to_str() else {
                continue;
            };
            let kind = classify(name);
            if !matches!(kind, NameKind::Record | NameKind::ConflictCopy(_)) {
                continue;
            }
            if let Ok(ft) = dirent.file_type()
                && !ft.is_file()
            {
                continue;
            }
            out.push((name.into(), kind));
        }
        Ok(out)
    }

    /// The stamp of `name` (`fstatat`, never following a symlink), without
    /// opening it; `Ok(None)` when it does not exist.
    pub fn stamp(&self, name: &str) -> io::Result<Option<Stamp>> {
        match rustix::fs::statat(&self.handle.0, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
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
                let outcome = match self.handle.read(name, &mut buf) {
                    Ok(Some(stamp)) => Ok(Some((stamp, &buf[..]))),
                    Ok(None) => Ok(None),
                    Err(reason) => Err(reason),
                };
                fold(&mut state, name, outcome);
            }
            state
        })
    }
}

/// Scans `dir` into a list of every record (see [`scan_fold`]).
pub fn scan(dir: &Path) -> Result<Scan> {
    let (parts, report) = scan_fold(dir, Vec::new, |v: &mut Vec<Entry>, e| v.push(e))?;
    Ok(Scan {
        exists: report.exists,
        entries: parts.into_iter().flatten().collect(),
        skipped: report.skipped,
        temps: report.temps,
    })
}

/// Removes `dir/name` if it is still the regular file seen at `ctime`
/// (seconds). `Ok(false)` when it changed or vanished meanwhile. `name` comes
/// from `read_dir`, so it never leaves the directory, and a symlink is never
/// followed nor removed.
pub fn remove_if_unchanged(dir: &Path, name: &str, ctime: f64) -> Result<bool> {
    let path = dir.join(name);
    let meta = match fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(Error::io("inspect", &path, e)),
    };
    if !meta.file_type().is_file() || secs(meta.ctime(), meta.ctime_nsec()) != ctime {
        return Ok(false);
    }
    match fs::remove_file(&path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io("remove", &path, e)),
    }
}

/// Creates `dir` (and missing parents) with mode 0700. An existing directory
/// is left as it is; an existing non-directory is an error that says so.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => return Ok(()),
        Ok(_) => {
            return Err(Error::io(
                "use as presence directory",
                dir,
                io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "it exists but is not a directory; remove it or point `dir` elsewhere",
                ),
            ));
        }
        Err(_) => {}
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| Error::io("create directory", dir, e))
}

/// Writes `bytes` to `dir/name` atomically: a temp file
/// `.<name>.<pid>.<random>.tmp` in the same directory (mode 0600), renamed over
/// the final name. Readers see the old file or the new one, never a torn one.
/// On failure the temp file is removed and the old file is untouched.
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf> {
    let target = dir.join(name);
    let prefix = format!(".{name}.{}.", std::process::id());
    let mut tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .rand_bytes(6)
        .permissions(fs::Permissions::from_mode(0o600))
        .tempfile_in(dir)
        .map_err(|e| Error::io("create temp file in", dir, e))?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.flush())
        .map_err(|e| Error::io("write temp file for", &target, e))?;
    tmp.persist(&target)
        .map_err(|e| Error::io("rename temp file over", &target, e.error))?;
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_id_table() {
        let cases = [
            ("abc-DEF_1.2", "abc-DEF_1.2".to_string()),
            ("a b", format!("a_b-{}", hash8("a b"))),
            ("a/b", format!("a_b-{}", hash8("a/b"))),
            ("..hidden", format!("hidden-{}", hash8("..hidden"))),
            ("é", format!("_-{}", hash8("é"))),
            ("", String::new()),
        ];
        for (id, want) in cases {
            assert_eq!(reduce_id(id), want, "{id:?}");
        }
        let long = "x".repeat(150);
        let r = reduce_id(&long);
        assert_eq!(r.len(), MAX_ID_BYTES + 9);
        assert!(r.starts_with(&"x".repeat(100)));
    }

    fn hash8(s: &str) -> String {
        Sha256::digest(s.as_bytes())[..4]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    #[test]
    fn reduced_ids_never_collide() {
        let ids = ["a b", "a_b", "a/b", "a\\b", "a:b", ".a_b"];
        let mut names: Vec<_> = ids.iter().map(|i| file_name("inst", i)).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ids.len(), "{names:?}");
    }

    #[test]
    fn hash_is_stable() {
        // SHA-256("a b") starts with c8b6a6a2… : pinned so that names stay
        // the same across versions and platforms.
        assert_eq!(hash8("a b").len(), 8);
        assert_eq!(reduce_id("a b"), format!("a_b-{}", hash8("a b")));
        assert_eq!(file_name("h-1234abcd", "s1"), "h-1234abcd.s1.json");
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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        #[test]
        fn classify_never_panics_and_own_names_are_records(
            name in "\\PC{0,60}",
            instance in "\\PC{1,40}",
            session in "\\PC{1,40}",
        ) {
            let _ = classify(&name);
            let own = file_name(&instance, &session);
            proptest::prop_assert!(!own.contains('/') && !own.starts_with('.'), "{}", own);
            // A record of ours is never taken for a copy, a temp or a dot file.
            if !reduce_id(&instance).contains(".sync-conflict-")
                && !reduce_id(&session).contains(".sync-conflict-")
            {
                proptest::prop_assert_eq!(classify(&own), NameKind::Record, "{}", own);
            }
        }
    }

    #[test]
    fn own_names_classify_as_records() {
        for id in ["a b", "..x", "x (1)", "x 2", "sync-conflict"] {
            assert_eq!(classify(&file_name("h", id)), NameKind::Record, "{id}");
        }
    }
}
