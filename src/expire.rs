//! Garbage collection of the presence directory. Without it every
//! short-lived session leaves a file behind forever; with it, deletions
//! propagate through the sync engine to every device.
//!
//! This module is the pure half: given the scanned entries and `now`,
//! [`decide`] names the files to delete and why. `Registry::expire`
//! (registry/expire.rs) then deletes them, each only if it
//! is still the file that was judged (this device's records under their lock,
//! every file by an unchanged device, inode and ctime), never a symlink, never
//! outside the directory: the directory is opened once and every removal is
//! an `unlinkat` on its fd. Only files whose names and contents are records
//! (or conflict copies of them), and old temp files named after a record, are
//! ever candidates; a `notes.json` that is not a record is left alone.

use std::collections::HashSet;

use serde::Serialize;

use crate::dedupe;
use crate::limits;
use crate::liveness::{self, State, WriterClock};
use crate::store::entry::{Entry, Stamp};
use crate::store::names::NameKind;

/// [`limits::TOMBSTONE_GRACE`] in seconds.
pub(crate) const TOMBSTONE_GRACE: f64 = limits::secs(limits::TOMBSTONE_GRACE);
/// [`limits::TEMP_GRACE`] in seconds.
pub(crate) const TEMP_GRACE: f64 = limits::secs(limits::TEMP_GRACE);

/// Why a file is garbage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Reason {
    /// This device's record, expired, and its owner (if any) is gone.
    OwnExpired,
    /// This device's tombstone, older than 10 minutes.
    OwnTombstone,
    /// Any device's record, dead for longer than `gc_after`.
    Garbage,
    /// A sync engine's conflict copy that lost its group.
    ConflictLost,
    /// A sync engine's conflict copy that won its group but is not live.
    ConflictExpired,
    /// A temp file of an interrupted write, older than 10 minutes.
    StaleTemp,
    /// A copy of a session life that another copy ended: no reader lists
    /// it, and once the tombstone goes it must not come back.
    EndedLife,
    /// A record that claims a device id it does not prove (see
    /// `docs/security.md`), unchanged here for longer than `gc_after`.
    Forged,
}

impl Reason {
    /// Human wording.
    pub fn describe(self) -> &'static str {
        match self {
            Reason::OwnExpired => "this device's record, expired",
            Reason::OwnTombstone => "this device's tombstone, older than 10 min",
            Reason::Garbage => "dead for longer than gc_after",
            Reason::ConflictLost => "conflict copy superseded by a newer record",
            Reason::ConflictExpired => "conflict copy, expired",
            Reason::StaleTemp => "temp file of an interrupted write, older than 10 min",
            Reason::EndedLife => "copy of a session life that was ended",
            Reason::Forged => "forged: claims a device id it does not prove",
        }
    }
}

/// One file to delete.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Garbage {
    /// File name in the directory.
    pub file: String,
    /// The directory, as configured: only for a profile that reads several
    /// directories (`dirs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dir: Option<std::path::PathBuf>,
    /// Why.
    pub reason: Reason,
    /// The file as judged; deleted only if unchanged.
    #[serde(skip)]
    pub(crate) stamp: Stamp,
    /// For this device's records: the version judged (`instance_id`, `seq`).
    #[serde(skip)]
    pub(crate) own: bool,
}

/// The settings [`decide`] needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Policy {
    /// Skew tolerance, seconds.
    pub skew: f64,
    /// Seconds a record must be dead before any device deletes it.
    pub gc_after: f64,
}

/// How [`decide`] reads a file: through its writer's clock, and whether it
/// is a copy of a life this device ended (by its ledgers: see
/// `registry::change::EndedHere`), which is then ended whatever its times.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reading {
    pub clock: WriterClock,
    pub ended_here: bool,
}

impl From<WriterClock> for Reading {
    fn from(clock: WriterClock) -> Self {
        Reading {
            clock,
            ended_here: false,
        }
    }
}

impl From<f64> for Reading {
    fn from(skew: f64) -> Self {
        WriterClock::from(skew).into()
    }
}

/// What [`decide`] reads of a file: its name, kind and version, whether it
/// proves its author, its group and life, and the times and `seq` that
/// rank and judge it. A full [`Entry`] is one; `registry::expire` makes
/// them from the scan cache and probes, without parsing every record.
pub(crate) trait Judged {
    fn file(&self) -> &str;
    fn kind(&self) -> NameKind;
    /// Its arrival here (the file's ctime).
    fn ctime(&self) -> f64;
    fn stamp(&self) -> Stamp;
    fn verdict(&self) -> crate::identity::Verdict;
    fn group(&self) -> dedupe::Digest;
    fn life(&self) -> dedupe::Digest;
    /// `[updated_at, expires_at, ended_at]`. Of `ended_at`, only whether
    /// it is set counts, but for this device's own records (`mine`), whose
    /// tombstones' age is read from it.
    fn times(&self) -> [Option<f64>; 3];
    fn seq(&self) -> u64;
}

impl Judged for Entry {
    fn file(&self) -> &str {
        &self.file
    }
    fn kind(&self) -> NameKind {
        self.kind
    }
    fn ctime(&self) -> f64 {
        self.ctime
    }
    fn stamp(&self) -> Stamp {
        self.stamp
    }
    fn verdict(&self) -> crate::identity::Verdict {
        self.verdict
    }
    fn group(&self) -> dedupe::Digest {
        dedupe::Digest::group(self.record.author(), self.record.group_key())
    }
    fn life(&self) -> dedupe::Digest {
        dedupe::Digest::life(self.record.author(), self.record.life())
    }
    fn times(&self) -> [Option<f64>; 3] {
        let r = &self.record;
        [r.updated_at, r.expires_at, r.ended_at]
    }
    fn seq(&self) -> u64 {
        self.record.seq
    }
}

/// When a record stopped being live, on this machine's clock, and never
/// before it last arrived here: a tombstone or a record without `expires_at`
/// when it arrived; otherwise its deadline (see [`liveness::deadline`]), or
/// its arrival if that is later. The writer's timestamps alone never make a
/// record garbage: one whose writer's clock runs hours behind looks long
/// expired, but while its refreshes keep arriving it is never deleted. Here
/// the arrival is the ctime itself, not the bound the liveness rule puts on
/// it (see liveness.rs): an estimate kept across an outage, while the
/// writer's clock was set back, would otherwise date a fresh copy hours
/// back and have it deleted. A change of the file's metadata alone thus
/// puts off its deletion by `gc_after`; it does not make it live.
fn dead_since(e: &impl Judged, clock: WriterClock) -> f64 {
    let times = e.times();
    if times[2].is_some() {
        return e.ctime();
    }
    liveness::deadline_of(times, e.ctime(), clock)
        .unwrap_or(e.ctime())
        .max(e.ctime())
}

/// Decides what to delete. `device` is this device's id; `owner_alive` says
/// whether a record's owner still runs (only asked about this device's
/// records). Losers are listed before winners, so that a winner is only
/// deleted after the losers that it hides.
pub(crate) fn decide<E: Judged>(
    entries: &[E],
    temps: &[(String, Stamp)],
    mine: impl Fn(&E) -> bool,
    policy: Policy,
    now: f64,
    owner_alive: impl Fn(&E) -> bool,
    reading: impl Fn(&E) -> Reading,
) -> Vec<Garbage> {
    let device = &|e: &E| e.kind() == NameKind::Record && mine(e);
    let writer = |e: &E| reading(e).clock;
    let state = |e: &E| match reading(e) {
        Reading {
            ended_here: true, ..
        } => State::Ended,
        Reading { clock, .. } => liveness::state_of(e.times(), e.ctime(), now, clock),
    };
    let mut reducer = dedupe::Reducer::new(true);
    let mut out = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if !e.verdict().counts() {
            if now - e.ctime() > policy.gc_after {
                // A forged file speaks for nobody: it ends, hides and keeps
                // nothing, and its own times are not to be believed. Its
                // writer's rewrites would keep its ctime recent; this one
                // has stayed as it is for `gc_after`.
                out.push(garbage(e, Reason::Forged, device));
            }
            continue;
        }
        let r = reading(e);
        let times = e.times();
        let mut copy = dedupe::FileCopy::new(
            e.file(),
            times[0],
            e.seq(),
            times[2].is_some(),
            if r.ended_here {
                State::Ended
            } else {
                liveness::state_of(times, e.ctime(), now, r.clock)
            },
        );
        copy.item = Some(i);
        reducer.add(e.group(), e.life(), copy);
    }
    let mut winners = Vec::new();
    let life_of = |e: &E| e.life();
    for group in reducer.finish() {
        // Lives whose live-looking copies go in this pass: their tombstones
        // stay until a later one, so that should a deletion fail (or reach
        // another device late), no copy ever outlives the end.
        let ending: HashSet<dedupe::Digest> = group
            .losers
            .iter()
            .filter(|(_, why)| *why == dedupe::LossReason::LifeEnded)
            .filter_map(|(copy, _)| copy.item.map(|i| life_of(&entries[i])))
            .collect();
        let holds_back = |e: &E| e.times()[2].is_some() && ending.contains(&life_of(e));
        let mut keep_winner = false;
        for (copy, why) in &group.losers {
            let Some(i) = copy.item else { continue };
            let e = &entries[i];
            if holds_back(e) {
                continue;
            }
            if matches!(e.kind(), NameKind::ConflictCopy(_)) {
                out.push(garbage(e, Reason::ConflictLost, device));
                continue;
            }
            if *why == dedupe::LossReason::LifeEnded {
                // Its tombstone stays until a later pass, so that should
                // this deletion fail, the copy never outlives the end.
                out.push(garbage(e, Reason::EndedLife, device));
                keep_winner = true;
                continue;
            }
            let st = state(e);
            if let Some(reason) = judge(e, st, device, (policy, writer(e)), now, &owner_alive) {
                out.push(garbage(e, reason, device));
            } else if st == State::Live {
                // A dead winner that hides a live copy stays: deleting it
                // would let the older copy show again.
                keep_winner = true;
            }
        }
        // A winner that is itself a live-looking copy of a life this device
        // ended is no tombstone to keep: it goes with the rest.
        let ended_here = |i: usize| reading(&entries[i]).ended_here;
        if let Some(i) = group.winner.item
            && (!keep_winner || ended_here(i))
        {
            winners.push(i);
        }
    }
    for i in winners {
        let e = &entries[i];
        let st = state(e);
        let reason = if st == State::Ended && e.times()[2].is_none() {
            // A live-looking copy of a life this device ended, with no
            // tombstone left beside it: it goes at once.
            Some(Reason::EndedLife)
        } else if matches!(e.kind(), NameKind::ConflictCopy(_)) && st != State::Live {
            Some(Reason::ConflictExpired)
        } else {
            judge(e, st, device, (policy, writer(e)), now, &owner_alive)
        };
        if let Some(reason) = reason {
            out.push(garbage(e, reason, device));
        }
    }
    for (file, stamp) in temps {
        if now - stamp.ctime() > TEMP_GRACE {
            out.push(Garbage {
                file: file.clone(),
                dir: None,
                reason: Reason::StaleTemp,
                stamp: *stamp,
                own: false,
            });
        }
    }
    out
}

/// The rule for one record, conflict status aside. Never returns a reason
/// for a live record.
fn judge<E: Judged>(
    e: &E,
    st: State,
    device: &impl Fn(&E) -> bool,
    (policy, clock): (Policy, WriterClock),
    now: f64,
    owner_alive: &impl Fn(&E) -> bool,
) -> Option<Reason> {
    if st == State::Live {
        return None;
    }
    if device(e) {
        match e.times()[2] {
            Some(ended) if now - ended.min(e.ctime()) > TOMBSTONE_GRACE => {
                return Some(Reason::OwnTombstone);
            }
            Some(_) => {}
            None if !owner_alive(e) => return Some(Reason::OwnExpired),
            None => return None,
        }
    }
    (now - dead_since(e, clock) > policy.gc_after).then_some(Reason::Garbage)
}

fn garbage<E: Judged>(e: &E, reason: Reason, mine: &impl Fn(&E) -> bool) -> Garbage {
    Garbage {
        file: e.file().to_owned(),
        dir: None,
        reason,
        stamp: e.stamp(),
        own: mine(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Record;
    use crate::store::{self, Engine};

    const NOW: f64 = 1_000_000.0;
    const ME: &str = "me";
    const POLICY: Policy = Policy {
        skew: 300.0,
        gc_after: 3600.0,
    };

    fn entry(file: &str, device: &str, updated: f64, ctime: f64) -> Entry {
        let mut r = Record::new(file.split('.').nth(1).unwrap_or(file));
        r.device_id = device.into();
        r.profile = "default".into();
        r.instance_id = "i".into();
        r.updated_at = Some(updated);
        r.expires_at = Some(updated + 90.0);
        Entry {
            file: file.into(),
            kind: store::classify(file),
            ctime,
            stamp: Stamp::default(),
            verdict: crate::identity::verdict_of(&r.device_id, &r.to_json()),
            record: r,
        }
    }

    fn ended(mut e: Entry, at: f64) -> Entry {
        e.record.ended_at = Some(at);
        e.record.expires_at = Some(at);
        e.record.updated_at = Some(at);
        e
    }

    fn run(entries: &[Entry], alive: bool) -> Vec<(String, Reason)> {
        let mine = |e: &Entry| e.record.device_id == ME;
        let mut v: Vec<_> = decide(
            entries,
            &[],
            mine,
            POLICY,
            NOW,
            |_| alive,
            |_| POLICY.skew.into(),
        )
        .into_iter()
        .map(|g| (g.file, g.reason))
        .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    #[test]
    fn expire_table() {
        use Reason::*;
        type Case = (&'static str, Vec<Entry>, bool, Vec<(&'static str, Reason)>);
        let cases: Vec<Case> = vec![
            (
                "live records stay",
                vec![
                    entry("i.a.json", ME, NOW - 5.0, NOW - 5.0),
                    entry("o.b.json", "other", NOW - 5.0, NOW - 5.0),
                ],
                false,
                vec![],
            ),
            (
                "own expired goes at once",
                vec![entry("i.a.json", ME, NOW - 100.0, NOW - 100.0)],
                false,
                vec![("i.a.json", OwnExpired)],
            ),
            (
                "own expired with a live owner stays (refresh will revive it)",
                vec![entry("i.a.json", ME, NOW - 100.0, NOW - 100.0)],
                true,
                vec![],
            ),
            (
                "own tombstone within 10 min stays",
                vec![ended(entry("i.a.json", ME, NOW, NOW - 500.0), NOW - 500.0)],
                false,
                vec![],
            ),
            (
                "own tombstone after 10 min goes",
                vec![ended(entry("i.a.json", ME, NOW, NOW - 700.0), NOW - 700.0)],
                false,
                vec![("i.a.json", OwnTombstone)],
            ),
            (
                "foreign expired within gc_after stays",
                vec![entry("o.b.json", "other", NOW - 1000.0, NOW - 1000.0)],
                false,
                vec![],
            ),
            (
                "foreign expired past gc_after goes",
                vec![entry("o.b.json", "other", NOW - 4000.0, NOW - 4000.0)],
                false,
                vec![("o.b.json", Garbage)],
            ),
            (
                "foreign tombstone past gc_after goes",
                vec![ended(
                    entry("o.b.json", "other", NOW, NOW - 3700.0),
                    NOW - 3700.0,
                )],
                false,
                vec![("o.b.json", Garbage)],
            ),
            // Writer clock a day ahead: its expires_at is far in the future, but it
            // arrived here 2 h ago and was never refreshed: dead since ctime + ttl.
            (
                "foreign with a clock ahead, dead by local age",
                vec![entry("o.b.json", "other", NOW + 86_400.0, NOW - 7200.0)],
                false,
                vec![("o.b.json", Garbage)],
            ),
            // Writer clock 2 h behind, refreshing: every copy looks long
            // expired by its own times, but it keeps arriving here.
            (
                "foreign with a clock 2 h behind that keeps arriving stays",
                vec![entry("o.b.json", "other", NOW - 7200.0, NOW - 5.0)],
                false,
                vec![],
            ),
            (
                "foreign with a clock 2 h behind that stopped arriving goes after gc_after",
                vec![entry(
                    "o.b.json",
                    "other",
                    NOW - 7200.0 - 3700.0,
                    NOW - 3700.0,
                )],
                false,
                vec![("o.b.json", Garbage)],
            ),
            (
                "losing conflict copy goes even while live",
                vec![
                    entry("o.b.json", "other", NOW - 1.0, NOW - 1.0),
                    entry(
                        "o.b.sync-conflict-20261130-101010-AAA.json",
                        "other",
                        NOW - 2.0,
                        NOW - 2.0,
                    ),
                ],
                false,
                vec![("o.b.sync-conflict-20261130-101010-AAA.json", ConflictLost)],
            ),
            (
                "winning conflict copy that expired goes",
                vec![entry(
                    "o.b (conflicted copy 2026-11-30 101010).json",
                    "other",
                    NOW - 200.0,
                    NOW - 200.0,
                )],
                false,
                vec![(
                    "o.b (conflicted copy 2026-11-30 101010).json",
                    ConflictExpired,
                )],
            ),
            (
                "winning live conflict copy stays; the base it beat stays too",
                vec![
                    entry("o.b.json", "other", NOW - 10.0, NOW - 10.0),
                    entry("o.b 2.json", "other", NOW - 1.0, NOW - 1.0),
                ],
                false,
                vec![],
            ),
            (
                "another life's tombstone hides nothing, so it goes in its time",
                vec![
                    ended(entry("i.a.json", ME, NOW, NOW - 700.0), NOW - 700.0),
                    {
                        let mut e = entry("j.a.json", "other", NOW - 800.0, NOW - 5.0);
                        e.record.instance_id = "j".into();
                        e.record.expires_at = Some(NOW + 100.0);
                        e
                    },
                ],
                false,
                vec![("i.a.json", OwnTombstone)],
            ),
            (
                "a live-looking copy of an ended life goes; the tombstone stays this pass",
                vec![
                    ended(entry("i.a.json", ME, NOW, NOW - 700.0), NOW - 700.0),
                    {
                        let mut e = entry("j.a.json", "other", NOW - 800.0, NOW - 5.0);
                        e.record.expires_at = Some(NOW + 100.0);
                        e
                    },
                ],
                false,
                vec![("j.a.json", EndedLife)],
            ),
            (
                "a losing life's tombstone stays while its live-looking copies go",
                vec![
                    {
                        let mut e = entry("k.a.json", "other", NOW - 5.0, NOW - 5.0);
                        e.record.instance_id = "k".into();
                        e
                    },
                    {
                        let mut e = ended(
                            entry(
                                "j.a.sync-conflict-20261130-101010-ABCDEFG.json",
                                "other",
                                NOW - 50.0,
                                NOW - 4000.0,
                            ),
                            NOW - 4000.0,
                        );
                        e.record.instance_id = "j".into();
                        e
                    },
                    {
                        let mut e = entry("j.a.json", "other", NOW - 60.0, NOW - 5.0);
                        e.record.instance_id = "j".into();
                        e.record.expires_at = Some(NOW + 100.0);
                        e
                    },
                ],
                false,
                vec![("j.a.json", EndedLife)],
            ),
            (
                "a dead winner hiding a live copy of its own life stays",
                vec![entry("i.a.json", ME, NOW - 50.0, NOW - 200.0), {
                    let mut e = entry("k.a.json", "other", NOW - 60.0, NOW - 5.0);
                    e.record.expires_at = Some(NOW + 100.0);
                    e
                }],
                false,
                vec![],
            ),
        ];
        for (case, entries, alive, want) in cases {
            let want: Vec<(String, Reason)> =
                want.into_iter().map(|(f, r)| (f.to_string(), r)).collect();
            assert_eq!(run(&entries, alive), want, "{case}");
        }
    }

    #[test]
    fn never_a_live_record_unless_a_losing_copy() {
        // Every live entry in a mixed directory survives.
        let entries = vec![
            entry("i.a.json", ME, NOW - 1.0, NOW - 1.0),
            entry("o.b.json", "other", NOW - 1.0, NOW - 1.0),
            entry("o.c 2.json", "other", NOW - 1.0, NOW - 1.0),
        ];
        assert!(run(&entries, false).is_empty());
        assert_eq!(
            store::classify("o.c 2.json"),
            NameKind::ConflictCopy(Engine::ICloud)
        );
    }

    #[test]
    fn a_live_looking_copy_of_a_life_this_device_ended_goes_at_once() {
        // Its tombstone collected already: only this device's ledger says
        // the life ended, and every copy of it goes, conflict copy or not.
        let entries = vec![
            entry("o.a.json", "other", NOW - 5.0, NOW - 5.0),
            {
                let mut e = entry("o.a 2.json", "other", NOW - 4.0, NOW - 4.0);
                e.record.session_id = "a".into();
                e
            },
            entry("o.b.json", "other", NOW - 5.0, NOW - 5.0),
        ];
        let reading = |e: &Entry| Reading {
            clock: POLICY.skew.into(),
            ended_here: e.record.session_id == "a",
        };
        let mut g: Vec<(String, Reason)> =
            decide(&entries, &[], |_| false, POLICY, NOW, |_| false, reading)
                .into_iter()
                .map(|g| (g.file, g.reason))
                .collect();
        g.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            g,
            [
                ("o.a 2.json".to_string(), Reason::EndedLife),
                ("o.a.json".to_string(), Reason::EndedLife),
            ]
        );
    }

    #[test]
    fn temps_go_after_ten_minutes() {
        let at = |t: f64| Stamp {
            ctime_s: t as i64,
            ..Stamp::default()
        };
        let temps = vec![
            (".a.json.1.x.tmp".to_string(), at(NOW - 601.0)),
            (".b.json.1.x.tmp".to_string(), at(NOW - 10.0)),
        ];
        let g = decide(
            &[] as &[Entry],
            &temps,
            |_| false,
            POLICY,
            NOW,
            |_| false,
            |_| POLICY.skew.into(),
        );
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].file, ".a.json.1.x.tmp");
        assert_eq!(g[0].reason, Reason::StaleTemp);
    }
}
