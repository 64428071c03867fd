//! `clear`: this device's records of a session turned into tombstones.

use crate::error::{Error, Result};
use crate::liveness::end_of;
use crate::record::Record;
use crate::registry::change::{Change, Done};
use crate::store::{self};

use super::Registry;

/// One record that `clear` turned into a tombstone.
#[derive(Debug, Clone)]
pub struct Cleared {
    /// File name.
    pub file: String,
    /// The tombstone as written.
    pub record: Record,
}

/// The outcome of `clear`.
#[derive(Debug, Clone, Default)]
pub struct ClearOutcome {
    /// Records turned into tombstones.
    pub cleared: Vec<Cleared>,
    /// Matching records that were tombstones already.
    pub already_ended: usize,
    /// Matching records that changed between the scan and the lock, and were left alone.
    pub changed_meanwhile: usize,
}

impl Registry {
    /// The records this device published under this profile's label and has
    /// not ended, as it last wrote them, sorted by file name: read from the
    /// ledger alone, not from the directory, so the cost follows this
    /// device's records, not every device's (a Hermes hook that must find
    /// the session it replaces while the agent waits). A file may hold
    /// something else by now; [`clear`](Self::clear) checks under the lock.
    pub fn own_records(&self) -> Result<Vec<Record>> {
        let dir = self.dir.open()?;
        if !dir.exists() {
            return Ok(Vec::new());
        }
        let label = crate::record::label_of(&self.profile.label);
        Ok(self
            .ledger(&dir)
            .entries()?
            .into_iter()
            .filter(|e| e.ended_at.is_none() && crate::record::label_of(&e.label) == label)
            .filter_map(|e| e.record)
            .filter(|r| r.ended_at.is_none())
            .collect())
    }

    /// Turns this device's records with this profile's label that match
    /// `session` (id or key) and/or `instance` into tombstones at `now`. At
    /// least one of the two must be given. Conflict copies and other devices'
    /// records are never touched.
    pub fn clear(
        &self,
        session: Option<&str>,
        instance: Option<&str>,
        now: f64,
    ) -> Result<ClearOutcome> {
        if session.is_none() && instance.is_none() {
            return Err(Error::InvalidRecord {
                field: "clear".into(),
                message: "name what to clear with --session ID and/or --instance ID".into(),
            });
        }
        self.clear_matching(session, instance, false, now)
    }

    /// Turns every record this device published in this profile's
    /// directory and has not ended into a tombstone at `now` (at logout, or
    /// when the device leaves the sync group): those of this profile's
    /// label, or of any label with `any_label` (`clear --all
    /// --all-profiles`, once per directory). Other devices' records and
    /// conflict copies are never touched.
    pub fn clear_all(&self, any_label: bool, now: f64) -> Result<ClearOutcome> {
        self.clear_matching(None, None, any_label, now)
    }

    /// [`clear`](Self::clear) and [`clear_all`](Self::clear_all): the
    /// records matching `session` and `instance` (each, when given).
    fn clear_matching(
        &self,
        session: Option<&str>,
        instance: Option<&str>,
        any_label: bool,
        now: f64,
    ) -> Result<ClearOutcome> {
        let mut outcome = ClearOutcome::default();
        let dir = self.dir.open()?;
        if !dir.exists() {
            return Ok(outcome);
        }
        // Named by instance and session (a command inside `presence run`
        // clearing its own record), wait for that record's lock first: `run`
        // holds it from before its command starts until the record and its
        // ledger entry are written, so the ledger read below sees them.
        if let (Some(s), Some(i)) = (session, instance) {
            let file = store::file_name(i, s);
            drop(
                self.local
                    .lock(dir.canonical().unwrap_or(dir.path()), &file)?,
            );
        }
        // Every entry: a session may be named by its key, which another
        // file's record holds.
        let planned_entries = self.ledger(&dir).entries()?;
        let label = crate::record::label_of(&self.profile.label);
        let skew = self.profile.skew.as_secs_f64();
        // Only what the ledger says this device published: a record another
        // device wrote is never cleared, whatever device_id it claims.
        for planned in planned_entries {
            if (!any_label && crate::record::label_of(&planned.label) != label)
                || instance.is_some_and(|i| planned.life.instance_id != i)
            {
                continue;
            }
            let (done, what) = self.change(&dir, &planned.file, |cur| {
                // Only the life planned: a newer one started meanwhile is left alone.
                let Some(mine) = cur.mine.as_ref().filter(|m| m.life == planned.life) else {
                    return Ok((Change::Leave, ClearStep::Changed));
                };
                let held = cur.entry.as_ref().filter(|_| cur.holds_mine());
                // The key is the one the file holds, or, when the file is
                // gone, the one this device last wrote.
                let key = held
                    .map(|e| &e.record)
                    .or(mine.record.as_ref().filter(|_| cur.gone()))
                    .map(|r| r.session_key.as_str());
                let named = session.is_none_or(|s| mine.life.session_id == s || key == Some(s));
                let end = |base| {
                    let tomb = end_of(base, now, skew);
                    (
                        Change::Write(Box::new(tomb.clone())),
                        ClearStep::Ended(Box::new(tomb)),
                    )
                };
                Ok(match held {
                    _ if !named => (Change::Leave, ClearStep::NotNamed),
                    Some(e) if e.record.ended_at.is_some() => {
                        (Change::Leave, ClearStep::AlreadyEnded)
                    }
                    // Live, or a live copy of a life this device already
                    // ended (a sync engine brought an older copy back):
                    // either way the tombstone is (re)written.
                    Some(_) => end(cur.base().ok_or(Error::Ended {
                        file: planned.file.clone(),
                    })?),
                    // Gone while the ledger says the life goes on (another
                    // device's expire, a user's rm): ended all the same, its
                    // tombstone written from what this device last wrote,
                    // or a refresh would write the life again.
                    None if cur.gone() && mine.ended_at.is_none() => {
                        match cur.base().filter(|b| b.ended_at.is_none()) {
                            Some(base) => end(base),
                            None => (Change::Leave, ClearStep::AlreadyEnded),
                        }
                    }
                    None => (Change::Leave, ClearStep::AlreadyEnded),
                })
            })?;
            match (done, what) {
                (Done::Written, ClearStep::Ended(record)) => outcome.cleared.push(Cleared {
                    file: planned.file.clone(),
                    record: *record,
                }),
                (_, ClearStep::NotNamed) => {}
                (Done::Left, ClearStep::AlreadyEnded) => outcome.already_ended += 1,
                _ => outcome.changed_meanwhile += 1,
            }
        }
        Ok(outcome)
    }
}

/// What `clear` made of one ledger entry.
enum ClearStep {
    Ended(Box<Record>),
    AlreadyEnded,
    NotNamed,
    Changed,
}
