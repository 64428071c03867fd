//! The one way to read a file that may be hostile: a record another device
//! synced here, a `.stignore` and what it includes, this device's own state,
//! a file `presence setup` edits or inspects, an agent's state file or
//! transcript that discovery reads.
//!
//! [`read_path`] (and `read_at`, relative to a directory's fd) opens
//! without following a symbolic link (`O_NOFOLLOW`) and without blocking
//! (`O_NONBLOCK`: a FIFO never waits for a writer, a device never for
//! input), checks with `fstat` that it opened a regular file no
//! larger than the caller's limit, and reads at most one byte past the limit
//! (the file may grow after `fstat`). A missing file is `Ok(None)`, not an
//! error, so that each caller keeps its own meaning for "missing"; whatever
//! else it refuses is a [`ReadError`] saying why, and a file that is not
//! regular is named by its type (`type_name`, the one place those names
//! are written).
//!
//! `read_part` reads one end of a file of any size (the head or the tail
//! of an agent's transcript), with the same refusals.
//!
//! The syscalls are what a scan of 100 000 records can afford: `openat`,
//! `fstat` and, for a file no larger than `fstat` said, one `read`.

use std::io;
use std::os::fd::AsFd;
use std::path::Path;

use rustix::fs::{FileType, Mode, OFlags, Stat};
use rustix::io::Errno;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// It is not a regular file; what it is instead, in words ("a FIFO",
    /// "a symbolic link", …).
    #[error("not a regular file ({0})")]
    NotRegular(&'static str),
    /// It is larger than the limit: its size (as far as it was read).
    #[error("{size} bytes, larger than {limit}")]
    TooLarge {
        /// The size `fstat` reported, or the bytes read when it grew.
        size: u64,
        /// The caller's limit.
        limit: u64,
    },
    /// It is there but could not be opened (no permission, …).
    #[error(transparent)]
    Open(io::Error),
    /// It was opened, but `fstat` or a read failed.
    #[error(transparent)]
    Read(io::Error),
}

/// What a file that is not a regular one is, in words, for messages.
pub(crate) fn type_name(ft: FileType) -> &'static str {
    match ft {
        FileType::Directory => "a directory",
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::BlockDevice | FileType::CharacterDevice => "a device node",
        _ => "an unusual kind of file",
    }
}

/// Opens `name` relative to `dir` with the rules of this module (no
/// symlink, no blocking) and checks with `fstat` that it is a regular
/// file: the open file and its `fstat`, or `Ok(None)` when there is none.
fn open_regular<P: rustix::path::Arg>(
    dir: impl AsFd,
    name: P,
) -> Result<Option<(rustix::fd::OwnedFd, Stat)>, ReadError> {
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        // What O_NOFOLLOW answers when the last component is a symlink.
        Err(Errno::LOOP) => return Err(ReadError::NotRegular(type_name(FileType::Symlink))),
        Err(e) => return Err(ReadError::Open(e.into())),
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| ReadError::Read(e.into()))?;
    let ft = FileType::from_raw_mode(st.st_mode);
    if ft != FileType::RegularFile {
        return Err(ReadError::NotRegular(type_name(ft)));
    }
    Ok(Some((fd, st)))
}

/// Reads the file `name` relative to the directory `dir` (an absolute
/// `name` ignores `dir`) into `buf`, replacing its contents: at most `limit`
/// bytes, with the rules of this module. Returns the file's `fstat`, or
/// `Ok(None)` when there is no such file.
///
/// `buf` is reused between calls by a scan, so that reading a directory
/// makes no allocation per file.
pub(crate) fn read_at<P: rustix::path::Arg>(
    dir: impl AsFd,
    name: P,
    limit: usize,
    buf: &mut Vec<u8>,
) -> Result<Option<Stat>, ReadError> {
    let Some((fd, st)) = open_regular(dir, name)? else {
        return Ok(None);
    };
    let too_large = |size: u64| ReadError::TooLarge {
        size,
        limit: limit as u64,
    };
    let size = u64::try_from(st.st_size).unwrap_or(0);
    if size > limit as u64 {
        return Err(too_large(size));
    }
    let size = size as usize;
    // Room for one byte more than fstat said, to notice a file that grew.
    buf.clear();
    buf.resize(size + 1, 0);
    let mut len = 0;
    loop {
        match rustix::io::read(&fd, &mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(Errno::INTR) => continue,
            Err(e) => return Err(ReadError::Read(e.into())),
        }
        if len == size {
            // All that fstat promised: no need for a read that returns 0.
            break;
        }
        if len == buf.len() {
            // It grew after fstat (or fstat does not know, as in /proc):
            // read on, up to one byte past the limit.
            if len > limit {
                return Err(too_large(len as u64));
            }
            let grown = (buf.len() * 2).max(4096).min(limit.saturating_add(1));
            buf.resize(grown, 0);
        }
    }
    buf.truncate(len);
    Ok(Some(st))
}

/// Reads the file at `path` (relative to the current directory unless
/// absolute) with the rules of this module: its bytes, at most `limit`, or
/// `Ok(None)` when there is no such file. Only the last component is
/// refused as a symlink; the caller chose the directories above it.
pub fn read_path(path: &Path, limit: usize) -> Result<Option<Vec<u8>>, ReadError> {
    let mut buf = Vec::new();
    Ok(read_at(rustix::fs::CWD, path, limit, &mut buf)?.map(|_| buf))
}

/// Which part of a file [`read_part`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// At most this many bytes from the start.
    Head(usize),
    /// At most this many bytes before the end.
    Tail(usize),
}

/// What [`read_part`] read: the bytes, where they start in the file, and
/// the file's size when it was opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Span {
    pub bytes: Vec<u8>,
    pub offset: u64,
    pub size: u64,
}

impl Span {
    /// Whether the span holds the whole file.
    pub fn whole(&self) -> bool {
        self.offset == 0 && self.bytes.len() as u64 >= self.size
    }
}

/// Reads one part of the file at `path` with the rules of this module (no
/// symlink, no blocking, a regular file only), whatever its size: a 2 GB
/// agent transcript costs one `pread` of the part asked for. `Ok(None)`
/// when there is no such file.
pub(crate) fn read_part(path: &Path, part: Part) -> Result<Option<Span>, ReadError> {
    let Some((fd, st)) = open_regular(rustix::fs::CWD, path)? else {
        return Ok(None);
    };
    let size = u64::try_from(st.st_size).unwrap_or(0);
    let (offset, len) = match part {
        Part::Head(n) => (0, size.min(n as u64)),
        Part::Tail(n) => (size.saturating_sub(n as u64), size.min(n as u64)),
    };
    let mut bytes = vec![0; len as usize];
    let mut got = 0;
    while got < bytes.len() {
        match rustix::io::pread(&fd, &mut bytes[got..], offset + got as u64) {
            // Truncated since fstat: what there is.
            Ok(0) => break,
            Ok(n) => got += n,
            Err(Errno::INTR) => continue,
            Err(e) => return Err(ReadError::Read(e.into())),
        }
    }
    bytes.truncate(got);
    Ok(Some(Span {
        bytes,
        offset,
        size,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &Path, limit: usize) -> Result<Option<Vec<u8>>, ReadError> {
        read_path(path, limit)
    }

    #[test]
    fn a_regular_file_is_read_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f");
        std::fs::write(&file, "hello").unwrap();
        assert_eq!(read(&file, 5).unwrap().as_deref(), Some(&b"hello"[..]));
        std::fs::write(&file, "").unwrap();
        assert_eq!(read(&file, 5).unwrap().as_deref(), Some(&b""[..]));
    }

    #[test]
    fn a_missing_file_is_none() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(read(&tmp.path().join("absent"), 5).unwrap().is_none());
    }

    #[test]
    fn a_symlink_is_refused_even_to_a_regular_file() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("target");
        std::fs::write(&target, "secret").unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = read(&link, 1024).unwrap_err();
        assert!(
            matches!(err, ReadError::NotRegular("a symbolic link")),
            "{err:?}"
        );
        assert_eq!(err.to_string(), "not a regular file (a symbolic link)");
        // A dangling one too: it is there, and not a file.
        let dangling = tmp.path().join("dangling");
        std::os::unix::fs::symlink(tmp.path().join("nowhere"), &dangling).unwrap();
        assert!(matches!(
            read(&dangling, 1024),
            Err(ReadError::NotRegular("a symbolic link"))
        ));
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, Mode::from_raw_mode(0o600)).unwrap();
        // No writer ever opens it: a blocking open would never return, and
        // the test would hang rather than fail.
        let err = read(&fifo, 1024).unwrap_err();
        assert!(matches!(err, ReadError::NotRegular("a FIFO")), "{err:?}");
    }

    #[test]
    fn directories_and_devices_are_named() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(matches!(
            read(tmp.path(), 1024),
            Err(ReadError::NotRegular("a directory"))
        ));
        assert!(matches!(
            read(Path::new("/dev/null"), 1024),
            Err(ReadError::NotRegular("a device node"))
        ));
    }

    #[test]
    fn a_file_over_the_limit_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f");
        std::fs::write(&file, "123456").unwrap();
        let err = read(&file, 5).unwrap_err();
        assert!(
            matches!(err, ReadError::TooLarge { size: 6, limit: 5 }),
            "{err:?}"
        );
        assert_eq!(err.to_string(), "6 bytes, larger than 5");
        // A sparse file is refused by its size, never read.
        let sparse = std::fs::File::create(tmp.path().join("sparse")).unwrap();
        sparse.set_len(1 << 32).unwrap();
        assert!(matches!(
            read(&tmp.path().join("sparse"), 1 << 20),
            Err(ReadError::TooLarge { size, .. }) if size == 1 << 32
        ));
    }

    #[test]
    fn a_file_fstat_cannot_size_is_read_to_the_limit() {
        // /proc reports size 0 and has contents.
        let Ok(Some(bytes)) = read(Path::new("/proc/self/status"), 1 << 20) else {
            return; // not Linux
        };
        assert!(bytes.starts_with(b"Name:"), "{bytes:?}");
        assert!(matches!(
            read(Path::new("/proc/self/status"), 10),
            Err(ReadError::TooLarge {
                size: 11,
                limit: 10
            })
        ));
    }

    #[test]
    fn relative_to_a_directory_fd() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("f"), "x").unwrap();
        let dir = std::fs::File::open(tmp.path()).unwrap();
        let mut buf = vec![9; 100];
        let st = read_at(&dir, "f", 10, &mut buf).unwrap().unwrap();
        assert_eq!((buf.as_slice(), st.st_size), (&b"x"[..], 1));
        assert!(read_at(&dir, "g", 10, &mut buf).unwrap().is_none());
    }

    #[test]
    fn a_part_of_a_file_of_any_size_is_read_from_either_end() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f");
        std::fs::write(&file, "0123456789").unwrap();
        let head = read_part(&file, Part::Head(4)).unwrap().unwrap();
        assert_eq!(
            (head.bytes.as_slice(), head.offset, head.size),
            (&b"0123"[..], 0, 10)
        );
        assert!(!head.whole());
        let tail = read_part(&file, Part::Tail(3)).unwrap().unwrap();
        assert_eq!((tail.bytes.as_slice(), tail.offset), (&b"789"[..], 7));
        let all = read_part(&file, Part::Tail(100)).unwrap().unwrap();
        assert!(all.whole() && all.bytes == b"0123456789");
        // A sparse 4 GiB file costs the part asked for.
        let sparse = std::fs::File::create(tmp.path().join("sparse")).unwrap();
        sparse.set_len(1 << 32).unwrap();
        let t = read_part(&tmp.path().join("sparse"), Part::Tail(16))
            .unwrap()
            .unwrap();
        assert_eq!((t.bytes.len(), t.offset), (16, (1 << 32) - 16));
        assert!(
            read_part(&tmp.path().join("absent"), Part::Head(1))
                .unwrap()
                .is_none()
        );
        let fifo = tmp.path().join("fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, Mode::from_raw_mode(0o600)).unwrap();
        assert!(matches!(
            read_part(&fifo, Part::Tail(1)),
            Err(ReadError::NotRegular("a FIFO"))
        ));
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(matches!(
            read_part(&link, Part::Head(1)),
            Err(ReadError::NotRegular("a symbolic link"))
        ));
    }
}
