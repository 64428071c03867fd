//! The one read pass. Every reader — `list`, `list --all`, `show`, `expire`,
//! the watcher — reads the shared directories the same way:
//!
//! 1. the writers' clocks as this device learned them, loaded once;
//! 2. every record teaches its writer's clock, whatever its label;
//! 3. a file of a label shown is judged through its writer's clock
//!    ([`liveness::state_of`]) — or is ended, if it is a copy of a life this
//!    device ended ([`EndedHere`]);
//! 4. what the pass taught is written down once, at its end, and only if it
//!    says something new (a burst of arrivals alone teaches nothing; see
//!    clock.rs).
//!
//! [`Pass`] is that sequence; the readers differ only in what they keep of
//! each file (a 48-byte slot, a full entry, a watcher's facts).

use crate::clock::Clocks;
use crate::config::ShowSet;
use crate::dedupe::{Digest, Facts};
use crate::identity::Verdict;
use crate::liveness::{self, State, WriterClock};
use crate::record::{Probe, Record};
use crate::registry::Registry;
use crate::registry::change::{EndedHere, Own};
use crate::scan_cache::{FileKey, Lookup};
use crate::store::{Dir, Entry, Names, Raw, ScanReport, SkipReason, Stamp};

/// One read of the directories; see the module docs. A watcher keeps one
/// for as long as it runs, each batch ending with [`Pass::end`].
#[derive(Debug, Clone)]
pub(crate) struct Pass {
    show: ShowSet,
    /// The clocks as known when the pass began (or its last batch ended).
    known: Clocks,
    /// This device's id, if it has one: its records are read on its own
    /// clock and teach nothing (see [`crate::clock::is_own`]).
    me: Option<String>,
    /// The lives this device ended, by the ledgers of the directories read.
    ended: EndedHere,
    skew: f64,
    margin: f64,
}

impl Pass {
    /// A pass over `registry`'s directories showing the labels of `show`,
    /// whose ledgers say `owns` (see [`Registry::owns`]).
    pub(crate) fn begin(registry: &Registry, show: ShowSet, owns: &[Own]) -> Pass {
        // The device id is read once, for the clocks and for the pass.
        let me = registry.local.existing_device_id().ok().flatten();
        let known = registry.local.clocks_of(me.as_deref());
        Pass::with(registry, show, owns, known, me)
    }

    /// [`Pass::begin`] judging through the clocks `known` (what a pass
    /// that just read the directories learned: see
    /// [`Pass::first_estimates`]).
    pub(crate) fn begin_with(
        registry: &Registry,
        show: ShowSet,
        owns: &[Own],
        known: Clocks,
    ) -> Pass {
        // Read, never created: a device that has published nothing has no
        // records of its own to read.
        let me = registry.local.existing_device_id().ok().flatten();
        Pass::with(registry, show, owns, known, me)
    }

    fn with(
        registry: &Registry,
        show: ShowSet,
        owns: &[Own],
        known: Clocks,
        me: Option<String>,
    ) -> Pass {
        let (skew, margin) = registry.tolerance();
        Pass {
            show,
            known,
            ended: EndedHere::of(owns, me.as_deref()),
            me,
            skew,
            margin,
        }
    }

    /// Whether the pass shows records of `label`.
    pub(crate) fn shows(&self, label: &str) -> bool {
        self.show.shows(label)
    }

    /// How to read the times of a record written by `device` at `now`:
    /// through its learned clock offset, or with the skew tolerance for a
    /// device not known yet.
    pub(crate) fn clock(&self, device: &str, now: f64) -> WriterClock {
        self.known
            .writer(device, self.me.as_deref(), now, self.skew, self.margin)
    }

    /// For a watcher, whose pass outlives a read of the ledgers: the lives
    /// this device ended are now those of `owns`.
    pub(crate) fn ledgers(&mut self, owns: &[Own]) {
        self.ended = EndedHere::of(owns, self.me.as_deref());
    }

    /// Whether `life` is one this device ended (see [`EndedHere`]): every
    /// copy of it is then [`State::Ended`], whatever its own times say.
    pub(crate) fn ended_here(&self, life: Digest) -> bool {
        self.ended.contains(life)
    }

    /// The state at `now` of a copy of `life` carrying `times`
    /// (`[updated_at, expires_at, ended_at]`) from `device`, whose file
    /// arrived at `ctime`: the one rule every reader judges a file by.
    pub(crate) fn state(
        &self,
        life: Digest,
        times: [Option<f64>; 3],
        ctime: f64,
        now: f64,
        device: &str,
    ) -> State {
        if self.ended_here(life) {
            return State::Ended;
        }
        liveness::state_of(times, ctime, now, self.clock(device, now))
    }

    /// What the reducer takes of `record`, stored in `file` whose ctime is
    /// `ctime` (see [`crate::dedupe::describe`]), judged at `now` by
    /// [`Pass::state`]'s rule.
    pub(crate) fn describe<T>(
        &self,
        record: &Record,
        file: &str,
        ctime: f64,
        now: f64,
    ) -> (Digest, Digest, crate::dedupe::FileCopy<T>) {
        let clock = self.clock(&record.device_id, now);
        let (group, life, mut copy) = crate::dedupe::describe(record, file, ctime, now, clock);
        if self.ended_here(life) {
            copy.state = State::Ended;
        }
        (group, life, copy)
    }

    /// The one gate every clock sample passes: a record of `device` whose
    /// file arrived at `arrived` teaches `learned` its writer's clock only
    /// if it may. This device's own id never does (see
    /// [`crate::clock::is_own`]), and a forged record never does: a device
    /// is clocked only by records that speak for it ([`crate::identity`]).
    fn teach(
        &self,
        learned: &mut Clocks,
        (device, verdict): (&str, Verdict),
        arrived: f64,
        updated: Option<f64>,
    ) {
        let may_teach = verdict.counts() && !crate::clock::is_own(device, self.me.as_deref());
        if let Some(updated) = updated
            && may_teach
        {
            learned.learn(device, arrived, updated);
        }
    }

    /// Steps 2 and 3 for a file whose facts are `f`, arrived at `ctime`:
    /// its writer's clock sample goes into `learned`; its state at `now`,
    /// or `None` for a label the pass does not show.
    pub(crate) fn judge(
        &self,
        learned: &mut Clocks,
        f: &Facts<&str>,
        ctime: f64,
        now: f64,
    ) -> Option<State> {
        // A forged file speaks for nobody: it teaches no clock and no
        // reader of facts shows it (`list --all` shows it from its entry).
        if !f.verdict.counts() {
            return None;
        }
        self.teach(learned, (f.device, f.verdict), ctime, f.updated);
        self.shows(f.label)
            .then(|| self.state(f.life, f.times(), ctime, now, f.device))
    }

    /// [`judge`](Self::judge) for a record read in full: `None` for a label
    /// the pass does not show. A forged record is judged (`list --all`
    /// shows it, `expire` may delete it) but teaches nothing.
    pub(crate) fn judge_record(
        &self,
        learned: &mut Clocks,
        entry: &Entry,
        now: f64,
    ) -> Option<State> {
        let (record, ctime) = (&entry.record, entry.ctime);
        let device = (record.device_id.as_str(), entry.verdict);
        self.teach(learned, device, ctime, record.updated_at);
        self.shows(&record.profile).then(|| {
            let times = [record.updated_at, record.expires_at, record.ended_at];
            let life = Digest::life(record.author(), record.life());
            self.state(life, times, ctime, now, &record.device_id)
        })
    }

    /// Step 4: writes down what the pass taught, if it says something new.
    /// The pass itself goes on judging with what it knew when it began —
    /// but a `list` whose pass gave a writer its first estimate reads
    /// again through it ([`Pass::first_estimates`]). A failure to write is
    /// not the reader's: the estimates are learned again on the next read.
    pub(crate) fn end(&self, registry: &Registry, learned: &Clocks, now: f64) {
        if self.known.learns_from(learned, now) {
            let _ = registry.local.save_clocks(learned, now);
        }
    }

    /// The clocks to judge with, if what this pass `learned` gives a
    /// writer its first estimate (see [`Clocks::with_first_estimates`]): a
    /// reader that can judge that writer's files better now reads again.
    pub(crate) fn first_estimates(&self, learned: &Clocks, now: f64) -> Option<Clocks> {
        self.known.with_first_estimates(learned, now)
    }

    /// For a watcher, whose pass never ends: [`end`](Self::end) one batch,
    /// and judge with what it taught from now on (its own groups included).
    pub(crate) fn end_batch(&mut self, registry: &Registry, learned: &Clocks, now: f64) {
        let before = std::mem::take(&mut self.known);
        self.known = before.clone();
        self.known.merge(learned, now);
        if before.learns_from(learned, now) {
            let _ = registry.local.save_clocks(learned, now);
        }
    }
}

/// A record file the cache knew in this very version: its handle in the
/// directory's names, the cache entry's index, its facts as the cache holds
/// them (borrowed from the cache for as long as it lives), its version.
pub(crate) struct Known<'c> {
    pub file: u32,
    pub entry: usize,
    pub facts: Facts<&'c str>,
    pub stamp: Stamp,
}

/// A record file read now: its handle, its facts as probed, and the file as
/// read (its bytes, stamp and arrival).
pub(crate) struct Probed<'b> {
    pub file: u32,
    pub facts: Facts<&'b str>,
    pub raw: Raw<'b>,
}

/// The one cache-or-probe fold of a directory's record files (`list`,
/// `show`): a file the scan cache knows in this very version is taken from
/// the cache (`known`) and not read; any other is read and probed for its
/// facts (`read`); one that does not probe as a record is passed over with
/// its reason. Runs on the store's threads, each with its own `S`.
pub(crate) fn each_file<'c, S: Send>(
    dir: &Dir,
    names: &Names,
    report: &mut ScanReport,
    cache: Option<&Lookup<'c>>,
    init: impl Fn() -> S + Sync,
    known: impl Fn(&mut S, Known<'c>) + Sync,
    read: impl Fn(&mut S, Probed<'_>) + Sync,
) -> Vec<S> {
    let knows = cache.map(|lookup| {
        move |s: &mut S, file: u32, stamp: Stamp| match lookup.get(file, FileKey::of(&stamp)) {
            Some((entry, facts)) => {
                known(
                    s,
                    Known {
                        file,
                        entry,
                        facts,
                        stamp,
                    },
                );
                true
            }
            None => false,
        }
    });
    let fold = |s: &mut S, file: u32, raw: Raw<'_>| {
        let probe = Probe::parse(raw.bytes).map_err(SkipReason::Unparseable)?;
        let verdict = crate::identity::verdict_of(probe.device_id(), raw.bytes);
        let facts = Facts::of(&probe, verdict);
        read(s, Probed { file, facts, raw });
        Ok(())
    };
    dir.read_candidates_known(names, report, init, knows, fold)
}
