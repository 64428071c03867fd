//! The watch events, as a pure function of two successive live sets: which
//! sessions came up, changed or went down, and why. Separate from the
//! [`Watcher`](super::Watcher), which reads files and keeps the live set; this
//! file only compares two of them, so its rules can be tested as a table.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::liveness::State;
use crate::row::Row;

/// Why a session left the live set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum DownReason {
    /// Its newest record is a tombstone, or its file was deleted.
    Cleared,
    /// No refresh arrived within its ttl (or its writer's expiry passed).
    Expired,
    /// Another runtime on the same endpoint replaced it.
    Superseded,
}

/// A change of the live set.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A session became live.
    Up(Row),
    /// A live session changed a field other than `updated_at`, `expires_at`
    /// and `seq` (a plain refresh is not news).
    Update {
        /// The record now.
        row: Row,
        /// Names of the fields that changed.
        changed: Vec<&'static str>,
    },
    /// A session left the live set.
    Down {
        /// The last live version seen, as it left: `live` is false and
        /// `state` says how — [`State::Ended`] (cleared),
        /// [`State::Stale`] or [`State::Expired`] (expired),
        /// [`State::Superseded`] (its `superseded_by` names the successor's
        /// file).
        row: Row,
        /// Why.
        reason: DownReason,
    },
    /// The initial live set is complete: it follows the `Up` events of
    /// [`Watcher::initial_events`](super::Watcher::initial_events), so that a
    /// consumer can tell an empty set from one still loading.
    /// [`Watcher::next_events`](super::Watcher::next_events) never returns it:
    /// after a rescan or a replaced directory it reports only what changed.
    Ready {
        /// How many sessions the initial live set holds.
        count: usize,
    },
}

impl Event {
    /// `up`, `update`, `down` or `ready`.
    pub fn name(&self) -> &'static str {
        match self {
            Event::Up(_) => "up",
            Event::Update { .. } => "update",
            Event::Down { .. } => "down",
            Event::Ready { .. } => "ready",
        }
    }

    /// The record the event is about; `None` for [`Event::Ready`].
    pub fn row(&self) -> Option<&Row> {
        match self {
            Event::Up(r) | Event::Update { row: r, .. } | Event::Down { row: r, .. } => Some(r),
            Event::Ready { .. } => None,
        }
    }
}

/// A dedupe group's key: its digest, as the engines key it.
pub(crate) type Key = crate::dedupe::Digest;

#[cfg(test)]
fn key(row: &Row) -> Key {
    crate::dedupe::Digest::group(row.record.author(), row.record.group_key())
}

/// The live set and, for reasons of departure, every session that still
/// has a record in each group.
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    /// Live groups by key.
    pub live: BTreeMap<Key, Row>,
    /// `(group, session)` → whether that session's life is ended, for every
    /// session with a record in the group (live or not).
    pub sessions: BTreeMap<(Key, String), bool>,
    /// The state of each group that has records but no live life.
    pub states: BTreeMap<Key, State>,
}

impl Snapshot {
    /// Builds a snapshot from listed rows (`--include-expired` gives every
    /// group's winner; with `--all`, losers carry `superseded_by` and are skipped).
    #[cfg(test)]
    pub fn from_rows(rows: Vec<Row>) -> Self {
        let mut s = Snapshot::default();
        for row in rows.into_iter().filter(|r| r.superseded_by.is_none()) {
            let ended = row.record.ended_at.is_some();
            s.sessions
                .insert((key(&row), row.record.session_id.clone()), ended);
            if row.live {
                s.live.insert(key(&row), row);
            } else {
                s.states.insert(key(&row), row.state);
            }
        }
        s
    }

    /// The live rows, newest first (as `list` orders them).
    #[cfg(test)]
    pub fn rows(&self) -> Vec<Row> {
        let mut rows: Vec<Row> = self.live.values().cloned().collect();
        newest_first(&mut rows);
        rows
    }

    /// The earliest time (this machine's clock) at which a live row expires.
    #[cfg(test)]
    pub fn next_deadline(&self, now: f64) -> Option<f64> {
        self.live
            .values()
            .filter_map(|r| r.expires_in_s.map(|e| now + e))
            .min_by(f64::total_cmp)
    }
}

/// Sorts rows as `list` does: newest start first.
pub(crate) fn newest_first(rows: &mut [Row]) {
    rows.sort_by(Row::listing_order);
}

/// The fields compared for `update`.
fn changed_fields(old: &Row, new: &Row) -> Vec<&'static str> {
    let (a, b) = (&old.record, &new.record);
    let mut out = Vec::new();
    macro_rules! cmp {
        ($($f:ident),*) => { $( if a.$f != b.$f { out.push(stringify!($f)); } )* };
    }
    cmp!(
        status,
        title,
        model,
        cwd,
        client,
        source,
        endpoint,
        host,
        profile,
        session_key,
        instance_id,
        device_id,
        metadata
    );
    // Without an owner, `pid` is just whichever process published last.
    if (a.owner_start.is_some() || b.owner_start.is_some())
        && (a.pid != b.pid || a.owner_start != b.owner_start)
    {
        out.push("owner");
    }
    if old.file != new.file {
        out.push("file");
    }
    out
}

/// Whether `after` is a new life of the session `before` was (cleared and
/// published again between two looks, or taken over by another writer
/// instance): another [`Record::life`](crate::record::Record::life).
fn new_life(before: &Row, after: &Row) -> bool {
    before.record.life() != after.record.life() || before.record.author() != after.record.author()
}

/// The live groups of `live` in listing order.
fn in_order(live: &BTreeMap<Key, Row>) -> Vec<(&Key, &Row)> {
    let mut rows: Vec<(&Key, &Row)> = live.iter().collect();
    rows.sort_by(|a, b| a.1.listing_order(b.1));
    rows
}

/// `before`, the last live version of a session, as it left the live set
/// in `state`: what a consumer that keeps its model from the rows of the
/// events must see (a `down` row that still said `live` would mark the
/// session live on the very event that says it left).
fn gone(before: &Row, state: State) -> Row {
    let mut row = before.clone();
    row.live = false;
    row.state = state;
    if state == State::Ended {
        row.expires_in_s = None;
    }
    row
}

/// The events that turn `old` into `new` (pure).
pub(crate) fn diff(old: &Snapshot, new: &Snapshot) -> Vec<Event> {
    let mut events = Vec::new();
    // Keys are digests, random per process: each side is taken in listing
    // order, so that a batch's events come in the same order on every run.
    for (k, before) in in_order(&old.live) {
        match new.live.get(k) {
            Some(after) if after.record.session_id != before.record.session_id => {
                let mut row = gone(before, State::Superseded);
                row.superseded_by = Some(after.file.clone());
                events.push(Event::Down {
                    row,
                    reason: DownReason::Superseded,
                });
            }
            Some(after) if new_life(before, after) => {
                events.push(Event::Down {
                    row: gone(before, State::Ended),
                    reason: DownReason::Cleared,
                });
            }
            Some(after) => {
                let changed = changed_fields(before, after);
                if !changed.is_empty() {
                    events.push(Event::Update {
                        row: after.clone(),
                        changed,
                    });
                }
            }
            None => {
                // No live life is left in the group (a live successor is
                // the arm above): the session ended, expired, or its file
                // went away.
                let session = (*k, before.record.session_id.clone());
                let reason = match new.sessions.get(&session) {
                    Some(true) => DownReason::Cleared,
                    Some(false) => DownReason::Expired,
                    // The file is gone: deleted by its writer (Hermes Agent
                    // clears by deleting) or by `expire`.
                    None => DownReason::Cleared,
                };
                let state = match (reason, new.states.get(k)) {
                    (DownReason::Cleared, _) => State::Ended,
                    (_, Some(&s @ (State::Stale | State::Expired))) => s,
                    _ => State::Expired,
                };
                events.push(Event::Down {
                    row: gone(before, state),
                    reason,
                });
            }
        }
    }
    for (k, after) in in_order(&new.live) {
        let is_new = match old.live.get(k) {
            None => true,
            Some(before) => {
                before.record.session_id != after.record.session_id || new_life(before, after)
            }
        };
        if is_new {
            events.push(Event::Up(after.clone()));
        }
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Record;

    fn row(session: &str, endpoint: &str, status: &str, file: &str) -> Row {
        let mut r = Record::new(session);
        r.profile = "default".into();
        r.client = "t".into();
        r.endpoint = endpoint.into();
        r.status = status.into();
        Row {
            record: r,
            file: file.into(),
            dir: None,
            dir_index: 0,
            live: true,
            state: State::Live,
            local: false,
            conflict_copy: false,
            age_s: 0.0,
            claimed_age_s: None,
            expires_in_s: Some(10.0),
            superseded_by: None,
            lost_because: None,
            verified: false,
            forged: None,
            writer_offset_s: None,
            redactions: Vec::new(),
        }
    }

    fn dead(mut r: Row, ended: bool) -> Row {
        r.live = false;
        r.state = State::Stale;
        if ended {
            r.record.ended_at = Some(1.0);
            r.state = State::Ended;
        }
        r
    }

    fn names(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .map(|e| match e {
                Event::Up(r) => format!("up {}", r.record.session_id),
                Event::Update { row, changed } => {
                    format!("update {} {}", row.record.session_id, changed.join(","))
                }
                Event::Down { row, reason } => {
                    format!("down {} {reason:?}", row.record.session_id)
                }
                Event::Ready { count } => format!("ready {count}"),
            })
            .collect()
    }

    #[test]
    fn diff_table() {
        let mut a = row("a", "", "idle", "i.a.json");
        a.record.started_at = Some(1.0);
        let mut a_again = a.clone();
        a_again.record.started_at = Some(7.0);
        let mut a_refreshed = a.clone();
        a_refreshed.record.updated_at = Some(5.0);
        a_refreshed.record.seq = 9;
        a_refreshed.expires_in_s = Some(90.0);
        let mut a_working = a.clone();
        a_working.record.status = "working".into();
        let s1 = row("run1", "tmux://h/x", "idle", "i.run1.json");
        let s2 = row("run2", "tmux://h/x", "idle", "i.run2.json");
        let snap = |rows: Vec<Row>| Snapshot::from_rows(rows);
        let cases: Vec<(&str, Snapshot, Snapshot, Vec<&str>)> = vec![
            ("nothing", snap(vec![]), snap(vec![]), vec![]),
            ("up", snap(vec![]), snap(vec![a.clone()]), vec!["up a"]),
            (
                "a plain refresh is not news",
                snap(vec![a.clone()]),
                snap(vec![a_refreshed]),
                vec![],
            ),
            (
                "status change",
                snap(vec![a.clone()]),
                snap(vec![a_working]),
                vec!["update a status"],
            ),
            (
                "cleared",
                snap(vec![a.clone()]),
                snap(vec![dead(a.clone(), true)]),
                vec!["down a Cleared"],
            ),
            (
                "expired",
                snap(vec![a.clone()]),
                snap(vec![dead(a.clone(), false)]),
                vec!["down a Expired"],
            ),
            (
                "file deleted",
                snap(vec![a.clone()]),
                snap(vec![]),
                vec!["down a Cleared"],
            ),
            (
                "cleared and published again between looks",
                snap(vec![a.clone()]),
                snap(vec![a_again]),
                vec!["down a Cleared", "up a"],
            ),
            (
                "successor",
                snap(vec![s1.clone()]),
                snap(vec![s2.clone()]),
                vec!["down run1 Superseded", "up run2"],
            ),
            (
                "a newer life that is dead never supersedes: the first expired",
                snap(vec![s1.clone()]),
                snap(vec![dead(s1.clone(), false), dead(s2.clone(), false)]),
                vec!["down run1 Expired"],
            ),
            (
                "a newer tombstone of another life: the first was deleted",
                snap(vec![s1.clone()]),
                snap(vec![dead(s2.clone(), true)]),
                vec!["down run1 Cleared"],
            ),
        ];
        for (case, old, new, want) in cases {
            assert_eq!(names(&diff(&old, &new)), want, "{case}");
        }
    }

    /// A `down` row is the last live version as it left: never `live`, and
    /// its `state` says how (a consumer that keeps its model from
    /// `record.state` must not mark the session live on its `down`).
    #[test]
    fn down_rows_carry_the_state_they_went_down_in() {
        let a = row("a", "", "idle", "i.a.json");
        let mut expired = dead(a.clone(), false);
        expired.state = State::Expired;
        let s1 = row("run1", "tmux://h/x", "idle", "i.run1.json");
        let s2 = row("run2", "tmux://h/x", "idle", "i.run2.json");
        let snap = |rows: Vec<Row>| Snapshot::from_rows(rows);
        let cases = [
            (
                snap(vec![a.clone()]),
                snap(vec![dead(a.clone(), true)]),
                State::Ended,
            ),
            (snap(vec![a.clone()]), snap(vec![]), State::Ended),
            (
                snap(vec![a.clone()]),
                snap(vec![dead(a.clone(), false)]),
                State::Stale,
            ),
            (snap(vec![a.clone()]), snap(vec![expired]), State::Expired),
            (
                snap(vec![s1.clone()]),
                snap(vec![s2.clone()]),
                State::Superseded,
            ),
        ];
        for (old, new, want) in cases {
            let events = diff(&old, &new);
            let Some(Event::Down { row, .. }) = events.first() else {
                panic!("no down: {events:?}");
            };
            assert!(!row.live, "{row:?}");
            assert_eq!(row.state, want);
            assert_eq!(row.record, old.rows()[0].record, "the last live version");
            if want == State::Superseded {
                assert_eq!(row.superseded_by.as_deref(), Some("i.run2.json"));
            }
            if want == State::Ended {
                assert_eq!(row.expires_in_s, None);
            }
        }
    }

    #[test]
    fn losers_never_enter_the_live_set() {
        let mut loser = row("a", "", "idle", "i.a.sync-conflict-x.json");
        loser.superseded_by = Some("i.a.json".into());
        let s = Snapshot::from_rows(vec![row("a", "", "working", "i.a.json"), loser]);
        assert_eq!(s.live.len(), 1);
        assert_eq!(s.rows()[0].file, "i.a.json");
    }

    #[test]
    fn next_deadline_is_the_earliest() {
        let mut a = row("a", "", "idle", "a.json");
        a.expires_in_s = Some(30.0);
        let mut b = row("b", "", "idle", "b.json");
        b.expires_in_s = Some(5.0);
        let s = Snapshot::from_rows(vec![a, b]);
        assert_eq!(s.next_deadline(100.0), Some(105.0));
    }
}
