//! The one way a record file changes (front layer, over the mechanics of
//! [`crate::store::Dir`], [`crate::local::LocalDirs::lock`] and the
//! [`crate::ledger`]).
//!
//! publish, refresh, clear, the keep-alive guard and `expire` all go through
//! [`Registry::change`]: take the record's lock, read what the file holds
//! now and what the ledger says this device wrote there, let the caller
//! decide, and carry the decision out only if the file is still the version
//! that was read ([`Dir::replace_if_unchanged`], [`Dir::remove_if_unchanged`]).
//! The ledger is written first, so a crash between the two leaves at worst
//! a ledger entry whose file holds something else (harmless: nothing acts on
//! a file that does not hold the ledger's life), never a record of ours the
//! ledger does not know.

use crate::error::Result;
use crate::ledger::{self, Ledger};
use crate::record::Record;
use crate::registry::Registry;
use crate::store::{Dir, Entry, NameKind, Stamp};

/// What a locked look at one record file found.
#[derive(Debug)]
pub(crate) struct Current {
    /// The record the file holds, if it parses.
    pub entry: Option<Entry>,
    /// The version on disk; `None` when the file is absent.
    pub stamp: Option<Stamp>,
    /// What the ledger says this device published at this file name.
    pub mine: Option<ledger::Entry>,
}

impl Current {
    /// The file holds a copy of the life the ledger says this device
    /// published there — as written, or changed by another writer that kept
    /// the life's ids (a sync engine bringing an older version back, or a
    /// forgery).
    pub fn holds_mine(&self) -> bool {
        match (&self.entry, &self.mine) {
            (Some(e), Some(m)) => holds(e, m),
            _ => false,
        }
    }

    /// The file holds exactly the record this device last wrote there.
    pub fn holds_written(&self) -> bool {
        match (&self.entry, &self.mine) {
            (Some(e), Some(m)) => holds_written(e, m),
            _ => false,
        }
    }

    /// What a rewrite of this device's life starts from: the record as
    /// this device last wrote it (never the file's fields, which another
    /// writer may have changed), its `seq` raised to the file's so that
    /// the rewrite ranks above whatever the file holds. `None` unless the
    /// file holds a copy of the ledger's life.
    ///
    /// When the file is gone (another device's `expire`, a user's `rm`, a
    /// sync engine's delete), the base is what this device last wrote: only
    /// this device's own `clear` ends its lives.
    pub fn base(&self) -> Option<Record> {
        let m = self.mine.as_ref()?;
        let Some(e) = self.entry.as_ref() else {
            return m.record.clone().filter(|_| self.gone());
        };
        if !holds(e, m) {
            return None;
        }
        let mut r = m.record.clone().unwrap_or_else(|| e.record.clone());
        r.seq = r.seq.max(e.record.seq);
        Some(r)
    }

    /// The file is absent (not merely unreadable).
    pub fn gone(&self) -> bool {
        self.entry.is_none() && self.stamp.is_none()
    }
}

/// Whether `e` holds exactly the record ledger entry `m` says was written.
pub(crate) fn holds_written(e: &Entry, m: &ledger::Entry) -> bool {
    wrote(m, e.kind, &e.record)
}

/// Whether a file of `kind` holding `record` is exactly what ledger entry
/// `m` says this device wrote there: the one test of ownership.
fn wrote(m: &ledger::Entry, kind: NameKind, record: &Record) -> bool {
    kind == NameKind::Record && m.record.as_ref() == Some(record)
}

/// Whether `e` is a copy of the life ledger entry `m` records.
pub(crate) fn holds(e: &Entry, m: &ledger::Entry) -> bool {
    e.kind == NameKind::Record && ledger::Life::of(&e.record) == m.life
}

/// What to do with the file.
#[derive(Debug)]
pub(crate) enum Change {
    /// Replace it with this record (of this device, so the ledger learns it).
    Write(Box<Record>),
    /// Remove it (and the ledger entry if it holds the ledger's life).
    Remove,
    /// The file is gone: forget the ledger entry (only if it still is).
    Forget,
    /// Leave it.
    Leave,
}

/// What became of a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Done {
    /// The record was written.
    Written,
    /// The file was removed.
    Removed,
    /// The decision was to leave it.
    Left,
    /// The file changed between the read and the write (a sync engine takes
    /// no lock); nothing was done.
    Raced,
}

/// The ledger entry for a record this device writes.
fn ledger_entry(file: &str, r: &Record) -> ledger::Entry {
    ledger::Entry {
        file: file.to_owned(),
        life: ledger::Life::of(r),
        label: r.profile.clone(),
        ended_at: r.ended_at,
        pid: r.pid,
        owner_start: r.owner_start,
        record: Some(r.clone()),
    }
}

impl Registry {
    /// This directory's ledger.
    pub(crate) fn ledger(&self, dir: &Dir) -> Ledger {
        Ledger::new(&self.local, dir.canonical().unwrap_or(dir.path()))
    }

    /// Under the record's lock: reads `file` and its ledger entry, asks
    /// `decide`, and carries out its decision if the file is still the
    /// version read. See the module docs.
    pub(crate) fn change<R>(
        &self,
        dir: &Dir,
        file: &str,
        decide: impl FnOnce(&Current) -> Result<(Change, R)>,
    ) -> Result<(Done, R)> {
        let ledger = self.ledger(dir);
        let _lock = self
            .local
            .lock(dir.canonical().unwrap_or(dir.path()), file)?;
        let entry = dir.read_entry(file).ok().flatten();
        let stamp = match &entry {
            Some(e) => Some(e.stamp),
            None => dir
                .stamp(file)
                .map_err(|e| crate::error::Error::io("inspect", dir.path().join(file), e))?,
        };
        let current = Current {
            entry,
            stamp,
            mine: ledger.get(file)?,
        };
        let (change, out) = decide(&current)?;
        let done = match change {
            Change::Leave => Done::Left,
            Change::Write(mut record) => {
                // Every record this device writes is signed as this
                // device's, whatever `device_id` the caller's base carried
                // (a record written before this device had a key moves to
                // the key's id at its next write).
                crate::identity::sign(&mut record, &self.device_key()?.key);
                let entry = ledger_entry(file, &record);
                if let Some(m) = &current.mine
                    && m.life == entry.life
                    && m.ended_at.is_some()
                    && record.ended_at.is_none()
                {
                    // The one guarantee every writer relies on: a life this
                    // device ended is never written live again.
                    return Ok((Done::Left, out));
                }
                ledger.put(&entry)?;
                if dir.replace_if_unchanged(file, current.stamp, &record.to_json())? {
                    Done::Written
                } else {
                    Done::Raced
                }
            }
            Change::Forget if current.stamp.is_none() => {
                ledger.remove(file)?;
                Done::Removed
            }
            Change::Forget => Done::Raced,
            Change::Remove => {
                let Some(stamp) = current.stamp else {
                    return Ok((Done::Raced, out));
                };
                if dir.remove_if_unchanged(file, stamp)? {
                    if current.holds_mine() {
                        ledger.remove(file)?;
                    }
                    Done::Removed
                } else {
                    Done::Raced
                }
            }
        };
        Ok((done, out))
    }
}

/// The lives this device published, by file name: what makes a row "ours".
#[derive(Debug, Default, Clone)]
pub(crate) struct Own(std::collections::HashMap<String, ledger::Entry>);

impl Own {
    /// The ledger entry for `file` if the file holds exactly the record
    /// this device last wrote there.
    pub fn get(&self, file: &str, kind: NameKind, record: &Record) -> Option<&ledger::Entry> {
        let m = self.0.get(file)?;
        wrote(m, kind, record).then_some(m)
    }

    /// Every file the ledger knows.
    pub fn files(&self) -> impl Iterator<Item = (&String, &ledger::Entry)> {
        self.0.iter()
    }

    /// Whether `file`, holding `record`, is a record this device published.
    pub fn is_mine(&self, file: &str, kind: NameKind, record: &Record) -> bool {
        self.get(file, kind, record).is_some()
    }
}

impl Registry {
    /// What the ledger says this device published in `dir`. For reading
    /// (list, watch, expire): a ledger that cannot be read counts as empty
    /// — nothing is starred, and `expire` treats every record by the rules
    /// for other devices' (which delete less) — rather than failing.
    pub(crate) fn own(&self, dir: &Dir) -> Result<Own> {
        if !dir.exists() {
            return Ok(Own::default());
        }
        let entries = self.ledger(dir).entries().unwrap_or_default();
        Ok(Own(entries
            .into_iter()
            .map(|e| (e.file.clone(), e))
            .collect()))
    }
}
