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
//! a ledger entry whose file holds something else (nothing acts on a file
//! that does not hold the ledger's life, though a clear cut short this way
//! ends its life in this device's listings, as it meant to, and the next
//! `refresh` writes the tombstone), never a record of ours the ledger does
//! not know. A write that fails puts the ledger entry back.

use crate::dedupe::{ByDigest, Digest};
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

/// The ledger entry for a record this device writes, over `before`, the
/// entry it replaces: the lives this device ended at this file name stay in
/// it (`ended_before`) while a copy of them could still come up — those
/// ended more than `horizon` ago (see [`ledger::ended_horizon`]) before this
/// write, and beyond the newest [`ledger::MAX_ENDED_BEFORE`], are forgotten.
fn ledger_entry(
    file: &str,
    r: &Record,
    before: Option<&ledger::Entry>,
    horizon: f64,
) -> ledger::Entry {
    let life = ledger::Life::of(r);
    let mut ended_before: Vec<ledger::Ended> = Vec::new();
    if let Some(m) = before {
        ended_before.extend(m.ended_before.iter().cloned());
        if let Some(ended_at) = m.ended_at
            && m.life != life
        {
            ended_before.push(ledger::Ended {
                life: m.life.clone(),
                ended_at,
            });
        }
    }
    let now = r.updated_at.unwrap_or(f64::NEG_INFINITY);
    ended_before.retain(|e| e.life != life && now <= e.ended_at + horizon);
    ended_before.sort_by(|a, b| b.ended_at.total_cmp(&a.ended_at));
    ended_before.truncate(ledger::MAX_ENDED_BEFORE);
    ledger::Entry {
        file: file.to_owned(),
        life,
        label: r.profile.clone(),
        ended_at: r.ended_at,
        pid: r.pid,
        owner_start: r.owner_start,
        record: Some(r.clone()),
        ended_before,
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
                let (skew, gc_after) = (
                    self.profile.skew.as_secs_f64(),
                    self.profile.gc_after.as_secs_f64(),
                );
                let horizon = ledger::ended_horizon(skew, gc_after);
                let entry = ledger_entry(file, &record, current.mine.as_ref(), horizon);
                if let Some(m) = &current.mine
                    && m.ended().any(|life| *life == entry.life)
                    && record.ended_at.is_none()
                {
                    // The one guarantee every writer relies on: a life this
                    // device ended is never written live again.
                    return Ok((Done::Left, out));
                }
                ledger.put(&entry)?;
                match dir.replace_if_unchanged(file, current.stamp, &record.to_json()) {
                    Ok(true) => Done::Written,
                    Ok(false) => Done::Raced,
                    Err(e) => {
                        // The write failed (a read-only directory, a full
                        // disk): the ledger goes back to what the file
                        // holds, so that a clear that failed ends nothing
                        // here either (the ledger's ended lives are ended
                        // in every listing).
                        let _ = match &current.mine {
                            Some(m) => ledger.put(m),
                            None => ledger.remove(file),
                        };
                        return Err(e);
                    }
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
                    // An ended life stays in the ledger after its tombstone
                    // goes, as long as a late copy of it could come up (see
                    // `ledger::Entry::needs`): `expire` forgets it then.
                    let ended = current
                        .mine
                        .as_ref()
                        .is_some_and(|m| m.ended().next().is_some());
                    if current.holds_mine() && !ended {
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

    /// Whether the ledger names `file` (whatever the file holds now).
    pub fn names(&self, file: &str) -> bool {
        self.0.contains_key(file)
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

/// The lives this device ended, by the ledgers of every directory a profile
/// reads. A copy of one of them is ended in every reader of this device,
/// whatever its own times say and whichever directory holds it, even once
/// every tombstone of it is gone: a late copy (a conflict copy of the
/// record as it was before the clear, a copy in another directory) never
/// shows it live again here, and `expire` deletes such copies.
#[derive(Debug, Default, Clone)]
pub(crate) struct EndedHere(ByDigest<()>);

impl EndedHere {
    /// The ended lives of `owns` (the ledgers of a profile's directories),
    /// for this device `me`. Each is ended as this device's (signed) and as
    /// an unsigned author's: a copy an older version of this device wrote
    /// before it signed is unsigned, and an unsigned copy with this
    /// device's life ids is that or a forgery — ended either way.
    pub fn of(owns: &[Own], me: Option<&str>) -> EndedHere {
        let authors: Vec<&str> = std::iter::once("")
            .chain(me.map(crate::record::author).filter(|a| !a.is_empty()))
            .collect();
        let lives = owns
            .iter()
            .flat_map(|own| own.0.values())
            .flat_map(ledger::Entry::ended)
            .flat_map(|l| {
                authors.iter().map(move |author| {
                    (
                        Digest::life(author, (&l.instance_id, &l.session_id, l.started_at)),
                        (),
                    )
                })
            });
        EndedHere(lives.collect())
    }

    /// Whether this device ended `life`.
    pub fn contains(&self, life: Digest) -> bool {
        !self.0.is_empty() && self.0.contains_key(&life)
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

#[cfg(test)]
mod tests {
    use crate::ledger::Life;
    use crate::registry::ListOptions;
    use crate::registry::refresh::tests::{T, fixture, req};

    #[test]
    fn a_new_life_of_a_session_keeps_the_end_of_the_old_one() {
        let f = fixture();
        let first = f.reg.publish(&req("s", None), T).unwrap();
        f.reg.clear(Some("s"), None, T + 1.0).unwrap();
        // The session runs again: a new life in the same file, whose
        // ledger entry replaces the old one's.
        let second = f.reg.publish(&req("s", None), T + 2.0).unwrap();
        assert_eq!(first.path, second.path);
        let file = first.path.file_name().unwrap().to_str().unwrap();
        let dir = f.reg.dir.open().unwrap();
        let m = f.reg.ledger(&dir).get(file).unwrap().unwrap();
        let ended: Vec<&Life> = m.ended_before.iter().map(|e| &e.life).collect();
        assert_eq!(ended, [&Life::of(&first.record)]);
        // The new life ends too, and a late copy of the first arrives (a
        // conflict copy of the record as it was before its clear): with no
        // tombstone of its life left in the directory, only the ledger says
        // it ended.
        f.reg.clear(Some("s"), None, T + 3.0).unwrap();
        let stem = file.strip_suffix(".json").unwrap();
        let copy = format!("{stem}.sync-conflict-20260101-000000-ABCDEFG.json");
        let path = first.path.with_file_name(&copy);
        std::fs::write(&path, first.record.to_json()).unwrap();
        let rows = f.reg.list(ListOptions::default(), T + 4.0).unwrap().rows;
        assert!(rows.is_empty(), "{rows:#?}");
        // `expire` deletes the copy (a conflict copy that lost to the
        // tombstone of the new life).
        let out = f.reg.expire(T + 4.0, false).unwrap();
        let removed: Vec<&str> = out.removed.iter().map(|g| g.file.as_str()).collect();
        assert_eq!(removed, [copy.as_str()]);
        assert!(!path.exists());
    }

    #[test]
    fn ended_lives_are_forgotten_past_their_horizon() {
        let f = fixture();
        let p = f.reg.publish(&req("s", None), T).unwrap();
        let file = p.path.file_name().unwrap().to_str().unwrap();
        f.reg.clear(Some("s"), None, T + 1.0).unwrap();
        f.reg.publish(&req("s", None), T + 2.0).unwrap();
        let (skew, gc) = (300.0, 3600.0);
        let horizon = crate::ledger::ended_horizon(skew, gc);
        // Another write long after: the old end is no longer carried.
        f.reg
            .clear(Some("s"), None, T + 1.0 + horizon + 1.0)
            .unwrap();
        let dir = f.reg.dir.open().unwrap();
        let m = f.reg.ledger(&dir).get(file).unwrap().unwrap();
        assert!(m.ended_before.is_empty(), "{m:#?}");
        assert!(m.needs(m.ended_at.unwrap() + horizon, skew, gc));
        assert!(!m.needs(m.ended_at.unwrap() + horizon + 1.0, skew, gc));
    }
}
