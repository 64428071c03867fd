//! What the watcher holds of the files it knows, and what one batch
//! collects.
use std::collections::{HashMap, HashSet};

use super::diff::Key;
use crate::clock::Clocks;
use crate::dedupe::{Facts, Rank};
use crate::row::Row;
use crate::store::Stamp;

/// A file the watcher knows: the index of its directory among those the
/// profile reads (0: `dir`), and its name there.
pub(super) type FileId = (usize, Box<str>);

/// What one wake-up collected.
#[derive(Default)]
pub(super) struct Pending {
    pub(super) names: HashSet<FileId>,
    pub(super) rescan: bool,
    pub(super) rearm: bool,
}

/// What the watcher knows of one record file.
pub(super) struct Known {
    /// The last rescan that listed it (those it did not are gone).
    pub(super) look: u64,
    /// As of the last read; `None` if it could not be taken.
    pub(super) stamp: Option<Stamp>,
    /// `None` for a file that is not a record this profile shows.
    pub(super) probe: Option<Probed>,
}

/// A dedupe group's key: its digest, as every engine keys it.
pub(super) type GroupId = Key;

/// What the watcher holds of a record file it knows: its facts and when
/// it arrived.
pub(super) struct Probed {
    pub(super) facts: Facts<Box<str>>,
    pub(super) ctime: f64,
}

/// A live group's row, with what it takes to bring its times up to date.
pub(super) struct Live {
    pub(super) row: Row,
    pub(super) ctime: f64,
    pub(super) deadline: Option<f64>,
}

/// A deadline, ordered (deadlines are finite; `total_cmp` keeps the order total anyway).
#[derive(Debug, Clone, Copy)]
pub(super) struct At(pub(super) f64);

impl PartialEq for At {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl Eq for At {}

impl PartialOrd for At {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for At {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// What a reading thread made of its share of a batch.
#[derive(Default)]
pub(super) struct Batch {
    /// Each file read, and what it is (`None`: it vanished).
    pub(super) read: Vec<(FileId, Option<Known>)>,
    /// The newest file of each group among those read.
    pub(super) best: HashMap<GroupId, Fresh>,
    /// What the files read teach of their writers' clocks.
    pub(super) learned: Clocks,
}

impl Batch {
    pub(super) fn add_best(&mut self, key: GroupId, fresh: Fresh) {
        add_best(&mut self.best, key, fresh);
    }
}

/// The newest file of a group among those read in a batch, with its bytes
/// if it is live: the group's winner, if any file read is, can only be this
/// one, so a batch holds one file's bytes per group (as `list` does), however
/// many copies a group has.
pub(super) struct Fresh {
    pub(super) updated: f64,
    pub(super) seq: u64,
    pub(super) file: Box<str>,
    pub(super) dir: usize,
    pub(super) bytes: Option<Box<[u8]>>,
}

impl Fresh {
    pub(super) fn rank(&self) -> Rank<'_> {
        Rank::new(self.updated, self.seq, &self.file).in_dir(self.dir)
    }
}

pub(super) fn add_best(best: &mut HashMap<GroupId, Fresh>, key: GroupId, fresh: Fresh) {
    match best.entry(key) {
        std::collections::hash_map::Entry::Vacant(v) => {
            v.insert(fresh);
        }
        std::collections::hash_map::Entry::Occupied(mut o) => {
            if fresh.rank() > o.get().rank() {
                o.insert(fresh);
            }
        }
    }
}
