//! What a scan makes of one file: its version stamp and, for a record, the
//! entry every reader and `expire`'s decision take. Plain data, no I/O.

use super::names::NameKind;
use crate::record::Record;

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
    /// Whether the file proves its author ([`crate::identity::verify`]).
    pub verdict: crate::identity::Verdict,
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
    pub(crate) fn of(st: &rustix::fs::Stat) -> Stamp {
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

fn secs(s: i64, ns: i64) -> f64 {
    s as f64 + ns as f64 / 1e9
}
