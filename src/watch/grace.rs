//! A refresh is not an ending: the grace a vanished record file gets before
//! the watcher believes it is gone.
//!
//! Syncthing replaces a changed file on the receiving device by deleting it
//! and then renaming its temp file into place, so a record that was only
//! refreshed has no file for a moment (see `store/settle.rs`). A watcher that
//! took the deletion at its word would report `down` and then `up` again for
//! a session that never ended. So a record file that vanishes is kept, with
//! what was last read of it, for [`GRACE_S`]; while it is kept it still
//! speaks for its session. Then it is looked at again:
//!
//! - it is back: it is read as any changed file (an `update`, or nothing);
//! - it is still missing, but the engine's fresh temp file for it is there:
//!   another [`GRACE_S`], up to [`LONGEST_S`] after it vanished;
//! - otherwise it is gone, and its session is `down` (reason `cleared`, as
//!   for any deleted record) — a real deletion is reported, [`GRACE_S`] late.
//!
//! A tombstone is a write, not a deletion: it ends its session at once.
//! The times are this machine's clock as the watcher is given it, so the
//! rule is tested with a fake one.

use std::collections::HashMap;

use super::files::FileId;

/// How long a vanished record file still speaks for its session (seconds).
pub(crate) const GRACE_S: f64 = 0.5;

/// The longest a vanished file is kept while the engine's temp file for it
/// is there (seconds): a transfer that takes longer is not a replacement.
pub(crate) const LONGEST_S: f64 = 5.0;

/// The record files that vanished and are not given up yet.
#[derive(Debug, Default)]
pub(super) struct Grace {
    /// When each vanished, and when it is to be looked at again.
    missing: HashMap<FileId, (f64, f64)>,
}

/// What [`Grace::due`] decided.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Due {
    /// Back in the directory: to be read.
    pub(super) back: Vec<FileId>,
    /// Gone for good: to be forgotten.
    pub(super) gone: Vec<FileId>,
}

impl Grace {
    /// `id` was found missing at `now`; its grace starts unless it has one.
    pub(super) fn vanished(&mut self, id: FileId, now: f64) {
        self.missing.entry(id).or_insert((now, now + GRACE_S));
    }

    /// `id` was read: it is no longer missing.
    pub(super) fn read(&mut self, id: &FileId) {
        self.missing.remove(id);
    }

    /// Whether `id` is missing and within its grace.
    pub(super) fn holds(&self, id: &FileId) -> bool {
        self.missing.contains_key(id)
    }

    /// When the next look is due.
    pub(super) fn next(&self) -> Option<f64> {
        self.missing
            .values()
            .map(|&(_, check)| check)
            .reduce(f64::min)
    }

    /// Settles every file whose look is due at `now`: `present` says
    /// whether it is in the directory again, `replacing` whether the sync
    /// engine's fresh temp file for it is there.
    pub(super) fn due(
        &mut self,
        now: f64,
        present: impl Fn(&FileId) -> bool,
        replacing: impl Fn(&FileId) -> bool,
    ) -> Due {
        let mut due = Due::default();
        let ids: Vec<FileId> = self
            .missing
            .iter()
            .filter(|(_, (_, check))| *check <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for id in ids {
            let Some(&(since, _)) = self.missing.get(&id) else {
                continue;
            };
            if present(&id) {
                self.missing.remove(&id);
                due.back.push(id);
            } else if replacing(&id) && now - since < LONGEST_S {
                let check = (now + GRACE_S).min(since + LONGEST_S);
                self.missing.insert(id, (since, check));
            } else {
                self.missing.remove(&id);
                due.gone.push(id);
            }
        }
        due.back.sort();
        due.gone.sort();
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(name: &str) -> FileId {
        (0, name.into())
    }

    #[test]
    fn a_file_back_within_its_grace_is_read_and_never_gone() {
        let mut g = Grace::default();
        g.vanished(id("a"), 100.0);
        assert!(g.holds(&id("a")));
        assert_eq!(g.next(), Some(100.0 + GRACE_S));
        // Nothing is due before the grace ends.
        let none = g.due(100.4, |_| panic!("looked early"), |_| false);
        assert_eq!(none, Due::default());
        // Read again meanwhile (its event came): no look at all.
        g.read(&id("a"));
        assert!(!g.holds(&id("a")) && g.next().is_none());
        // Back when the look is due: read, not gone.
        g.vanished(id("b"), 200.0);
        let due = g.due(200.5, |_| true, |_| false);
        assert_eq!((due.back, due.gone), (vec![id("b")], vec![]));
    }

    #[test]
    fn a_file_still_missing_after_its_grace_is_gone() {
        let mut g = Grace::default();
        g.vanished(id("a"), 100.0);
        // A second report of the same deletion does not restart the grace.
        g.vanished(id("a"), 100.3);
        let due = g.due(100.5, |_| false, |_| false);
        assert_eq!((due.back, due.gone), (vec![], vec![id("a")]));
        assert!(!g.holds(&id("a")) && g.next().is_none());
    }

    #[test]
    fn a_file_being_replaced_is_kept_up_to_the_longest() {
        let mut g = Grace::default();
        g.vanished(id("a"), 100.0);
        let mut t = 100.0 + GRACE_S;
        let mut looks = 0;
        loop {
            let due = g.due(t, |_| false, |_| true);
            looks += 1;
            if !due.gone.is_empty() {
                assert_eq!(due.gone, vec![id("a")]);
                break;
            }
            assert!(g.holds(&id("a")));
            t = g.next().unwrap();
            assert!(t <= 100.0 + LONGEST_S);
        }
        assert_eq!(t, 100.0 + LONGEST_S);
        assert_eq!(looks, (LONGEST_S / GRACE_S) as usize);
    }

    #[test]
    fn each_file_has_its_own_grace() {
        let mut g = Grace::default();
        g.vanished(id("a"), 100.0);
        g.vanished(id("b"), 100.4);
        let due = g.due(100.6, |_| false, |_| false);
        assert_eq!(due.gone, vec![id("a")]);
        assert!(g.holds(&id("b")));
        assert_eq!(g.next(), Some(100.4 + GRACE_S));
    }
}
