//! Garbage collection of the presence directory. Without it every
//! short-lived session leaves a file behind forever; with it, deletions
//! propagate through the sync engine to every device.
//!
//! [`decide`] is pure: given the scanned entries and `now`, it names the files
//! to delete and why. [`Registry::expire`] then deletes them, each only if it
//! is still the file that was judged (this device's records under their lock,
//! every file by an unchanged device, inode and ctime), never a symlink, never
//! outside the directory: the directory is opened once and every removal is
//! an `unlinkat` on its fd. Only files whose names and contents are records
//! (or conflict copies of them), and old temp files named after a record, are
//! ever candidates; a `notes.json` that is not a record is left alone.

use std::collections::HashSet;

use serde::Serialize;

use crate::change::{Change, Done};
use crate::dedupe;
use crate::error::Result;
use crate::limits;
use crate::liveness::{self, State, WriterClock};
use crate::owner::{self, OwnerState};
use crate::registry::Registry;
use crate::store::{Entry, NameKind, Stamp};

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

/// When a record stopped being live, on this machine's clock, and never
/// before it last arrived here: a tombstone or a record without `expires_at`
/// when it arrived; otherwise its deadline (see [`liveness::deadline`]), or
/// its arrival if that is later. The writer's timestamps alone never make a
/// record garbage: one whose writer's clock runs hours behind looks long
/// expired, but while its refreshes keep arriving it is never deleted.
fn dead_since(e: &Entry, clock: WriterClock) -> f64 {
    if e.record.ended_at.is_some() {
        return e.ctime;
    }
    liveness::deadline(&e.record, e.ctime, clock)
        .unwrap_or(e.ctime)
        .max(e.ctime)
}

/// Decides what to delete. `device` is this device's id; `owner_alive` says
/// whether a record's owner still runs (only asked about this device's
/// records). Losers are listed before winners, so that a winner is only
/// deleted after the losers that it hides.
pub(crate) fn decide(
    entries: &[Entry],
    temps: &[(String, Stamp)],
    mine: impl Fn(&Entry) -> bool,
    policy: Policy,
    now: f64,
    owner_alive: impl Fn(&Entry) -> bool,
    writer: impl Fn(&Entry) -> WriterClock,
) -> Vec<Garbage> {
    let device = &|e: &Entry| e.kind == NameKind::Record && mine(e);
    let state = |e: &Entry| liveness::state(&e.record, e.ctime, now, writer(e));
    let mut reducer = dedupe::Reducer::new(true);
    for (i, e) in entries.iter().enumerate() {
        reducer.add_record(&e.record, &e.file, e.ctime, (now, writer(e)), i);
    }
    let mut out = Vec::new();
    let mut winners = Vec::new();
    let life_of = |e: &Entry| {
        dedupe::Digest::life(
            &e.record.instance_id,
            &e.record.session_id,
            e.record.started_at,
        )
    };
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
        let holds_back = |e: &Entry| e.record.ended_at.is_some() && ending.contains(&life_of(e));
        let mut keep_winner = false;
        for (copy, why) in &group.losers {
            let Some(i) = copy.item else { continue };
            let e = &entries[i];
            if holds_back(e) {
                continue;
            }
            if matches!(e.kind, NameKind::ConflictCopy(_)) {
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
        if let Some(i) = group.winner.item
            && !keep_winner
        {
            winners.push(i);
        }
    }
    for i in winners {
        let e = &entries[i];
        let st = state(e);
        let reason = if matches!(e.kind, NameKind::ConflictCopy(_)) && st != State::Live {
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
fn judge(
    e: &Entry,
    st: State,
    device: &impl Fn(&Entry) -> bool,
    (policy, clock): (Policy, WriterClock),
    now: f64,
    owner_alive: &impl Fn(&Entry) -> bool,
) -> Option<Reason> {
    if st == State::Live {
        return None;
    }
    let r = &e.record;
    if device(e) {
        match r.ended_at {
            Some(ended) if now - ended.min(e.ctime) > TOMBSTONE_GRACE => {
                return Some(Reason::OwnTombstone);
            }
            Some(_) => {}
            None if !owner_alive(e) => return Some(Reason::OwnExpired),
            None => return None,
        }
    }
    (now - dead_since(e, clock) > policy.gc_after).then_some(Reason::Garbage)
}

fn garbage(e: &Entry, reason: Reason, mine: &impl Fn(&Entry) -> bool) -> Garbage {
    Garbage {
        file: e.file.clone(),
        dir: None,
        reason,
        stamp: e.stamp,
        own: mine(e),
    }
}

/// What `expire` did (or, with `dry_run`, would do).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ExpireOutcome {
    /// Files deleted (or that would be).
    pub removed: Vec<Garbage>,
    /// Files judged garbage that changed before they could be deleted; kept.
    pub changed: usize,
    /// Records and temp files kept.
    pub kept: usize,
}

impl Registry {
    /// Garbage-collects the whole directory (every label: garbage belongs to
    /// no one) at `now` — each directory the profile reads, by its own rule
    /// (see [`crate::Profile::expires_others`]) and on its own: a file is
    /// judged among the files of its directory. With `dry_run`, only
    /// reports. A directory is opened once, so one whose path became a
    /// symlink is an error ([`crate::Error::DirectoryReplaced`]) and
    /// nothing more is deleted.
    pub fn expire(&self, now: f64, dry_run: bool) -> Result<ExpireOutcome> {
        let mut out = ExpireOutcome::default();
        for at in 0..self.dirs.len() {
            self.expire_dir(at, now, dry_run, &mut out)?;
        }
        Ok(out)
    }

    /// [`expire`](Self::expire) of the profile's `at`-th directory.
    fn expire_dir(
        &self,
        at: usize,
        now: f64,
        dry_run: bool,
        out: &mut ExpireOutcome,
    ) -> Result<()> {
        let path = self.read_dir(at);
        // The resolver refuses these already; a Profile built by hand is
        // checked here, before anything is deleted.
        if let Some((what, resolved)) = crate::config::refused_dir(path, &self.local.home) {
            return Err(crate::ConfigError::RefusedDir {
                dir: path.to_path_buf(),
                resolved,
                what,
                origin: match at {
                    0 => "the profile's `dir`".into(),
                    _ => "the profile's `dirs`".into(),
                },
                from_command_line: false,
            }
            .into());
        }
        // In Hermes' own directory, Hermes removes what it wrote.
        let expires_others = match at {
            0 => self.profile.expires_others,
            _ => crate::config::expires_others_in(path, &self.local.home),
        };
        let shown = (self.dirs.len() > 1).then(|| path.to_path_buf());
        let dir = self.dirs[at].open()?;
        let scan = dir.scan()?;
        let own = self.own(&dir)?;
        let mine = |e: &Entry| own.is_mine(&e.file, e.kind, &e.record);
        let policy = Policy {
            skew: self.profile.skew.as_secs_f64(),
            gc_after: self.profile.gc_after.as_secs_f64(),
        };
        // Asked only of this device's records, and of the owner its ledger
        // recorded: a file's pid is whatever its last writer put there.
        let owner_alive = |e: &Entry| {
            own.get(&e.file, e.kind, &e.record).is_some_and(|m| {
                m.owner_start
                    .is_some_and(|s| owner::owner_state(m.pid, s) == OwnerState::Alive)
            })
        };
        // Each writer's times are read through its learned clock (see
        // clock.rs); what this scan teaches is kept for the next reader.
        let clocks = self.local.clocks();
        let mut learned = crate::clock::Clocks::default();
        for e in &scan.entries {
            learned.learn_record(&e.record, e.ctime);
        }
        let writer = |e: &Entry| self.writer_clock(&clocks, &e.record.device_id, now);
        let plan = decide(
            &scan.entries,
            &scan.temps,
            mine,
            policy,
            now,
            owner_alive,
            writer,
        );
        self.remember_clocks(&clocks, &learned, now);
        let total = scan.entries.len() + scan.temps.len();
        let before = out.removed.len();
        let mut gone = HashSet::new();
        for mut g in plan {
            if !g.own && !expires_others {
                continue;
            }
            g.dir = shown.clone();
            if !gone.insert(g.file.clone()) {
                continue;
            }
            let removed = if dry_run {
                true
            } else if g.own {
                // Ours: under the lock, only if it is still the version judged.
                let (done, ()) = self.change(&dir, &g.file, |cur| {
                    let same = cur.stamp == Some(g.stamp) && cur.holds_written();
                    Ok((if same { Change::Remove } else { Change::Leave }, ()))
                })?;
                done == Done::Removed
            } else {
                dir.remove_if_unchanged(&g.file, g.stamp)?
            };
            if removed {
                out.removed.push(g);
            } else {
                out.changed += 1;
            }
        }
        out.kept += total - (out.removed.len() - before);
        if !dry_run {
            // Forget lives whose file is gone (deleted here or by another
            // device's expire), so the ledger does not grow forever — but
            // only once no copy of them can be live anywhere: a file only
            // briefly absent (a sync engine deleting and re-creating it)
            // must not lose its owner, and an ended life is remembered as
            // long as a late copy of it could show up live.
            let horizon = limits::secs(limits::MAX_TTL) + policy.skew;
            for (file, m) in own.files() {
                let done_with = match (m.ended_at, m.record.as_ref()) {
                    (Some(ended), _) => now > ended + horizon,
                    (None, Some(r)) => r.expires_at.is_none_or(|x| now > x + policy.skew),
                    (None, None) => true,
                };
                if done_with && matches!(dir.stamp(file), Ok(None)) {
                    self.change(&dir, file, |_| Ok((Change::Forget, ())))?;
                }
            }
        }
        Ok(())
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

    /// A registry on `dir` with its local state under `root/name`.
    fn registry(root: &std::path::Path, name: &str, dir: &std::path::Path) -> Registry {
        let local = crate::LocalDirs::under(&root.join(name));
        let sel = crate::Selection {
            dir: Some(dir.to_path_buf()),
            ..crate::Selection::default()
        };
        let (profile, _) = crate::config::resolve(&sel, &local).unwrap();
        Registry::new(profile, local).with_host(name)
    }

    fn publish(r: &Registry, session: &str, now: f64) {
        let req = crate::PublishRequest {
            session_id: session.into(),
            ..crate::PublishRequest::default()
        };
        r.publish(&req, now).unwrap();
    }

    fn names(dir: &std::path::Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_directory_swapped_for_a_symlink_is_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let (shared, decoy) = (root.join("shared"), root.join("decoy"));
        let t = crate::unix_now();
        // Garbage an hour from now, in both directories.
        publish(&registry(&root, "other", &shared), "s1", t);
        publish(&registry(&root, "other", &decoy), "d1", t);
        let me = registry(&root, "me", &shared);
        let (before_shared, before_decoy) = (names(&shared), names(&decoy));
        std::fs::rename(&shared, root.join("shared.away")).unwrap();
        std::os::unix::fs::symlink(&decoy, &shared).unwrap();
        for dry_run in [true, false] {
            match me.expire(t + 7200.0, dry_run) {
                Err(crate::Error::DirectoryReplaced { link, .. }) => assert_eq!(link, shared),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(names(&decoy), before_decoy);
        assert_eq!(names(&root.join("shared.away")), before_shared);
        // The decoy's record was garbage: a registry configured with the
        // link from the start follows it and deletes it.
        let through_link = registry(&root, "me", &shared);
        let out = through_link.expire(t + 7200.0, false).unwrap();
        assert_eq!(out.removed.len(), 1, "{out:?}");
        assert!(names(&decoy).is_empty());
    }

    #[test]
    fn expire_deletes_only_records_and_temps_named_after_them() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let dir = root.join("shared");
        let t = crate::unix_now();
        publish(&registry(root, "other", &dir), "s1", t);
        let record = names(&dir).pop().unwrap();
        let own_temp = format!(".{record}.4242.aB3xYz.tmp");
        let keep = [
            ("notes.json", r#"{"title": "my notes, no session_id"}"#),
            ("torn.json", r#"{"session_id": "x", "upd"#),
            (".notes.tmp", "scratch"),
            (".notes.json.tmp", "scratch"),
            (".other.tmp.4242.aB3xYz.tmp", "scratch"),
        ];
        for (name, text) in keep {
            std::fs::write(dir.join(name), text).unwrap();
        }
        std::fs::write(dir.join(&own_temp), "{").unwrap();
        let out = registry(root, "me", &dir)
            .expire(t + 7200.0, false)
            .unwrap();
        let mut removed: Vec<(&str, Reason)> = out
            .removed
            .iter()
            .map(|g| (g.file.as_str(), g.reason))
            .collect();
        removed.sort_by_key(|(f, _)| f.to_string());
        let mut want = vec![
            (own_temp.as_str(), Reason::StaleTemp),
            (record.as_str(), Reason::Garbage),
        ];
        want.sort_by_key(|(f, _)| f.to_string());
        assert_eq!(removed, want);
        let mut left: Vec<String> = keep.iter().map(|(n, _)| n.to_string()).collect();
        left.sort();
        assert_eq!(names(&dir), left);
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
            &[],
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
