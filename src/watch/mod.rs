//! Watching the presence directory: typed events computed by diffing
//! successive live sets (the pure comparison is in [`mod@diff`]), with exactly
//! the dedupe and liveness rules of `list`.
//!
//! A [`Watcher`] wraps the `notify` crate's recommended watcher (inotify,
//! FSEvents, …) and adds what file events cannot provide:
//!
//! - **filtering**: only changes to the directory's entries wake it —
//!   creation, writes, renames, deletion, attribute changes — and only for
//!   names that can be records. Opens, reads and closes without a write, the
//!   watcher's own or any reader's, never do (on Linux the kernel is not
//!   even asked for them; see `watch/backend.rs`), so an idle directory
//!   costs nothing however often it is read.
//! - **re-reading only what changed**: the watcher keeps, per file, its
//!   [`Stamp`](crate::store::Stamp) and the few fields dedupe and liveness need (as a
//!   [`Probe`] reads them); an event re-reads just the files it names and
//!   recomputes just their groups, with the dedupe rank and the liveness rule
//!   of `list`. Only live winners are parsed in full.
//! - **coalescing**: a burst of events (an atomic rename is several; a sync
//!   engine may land hundreds of files) is handled as one batch, so one
//!   record rewritten many times yields at most one `update` per batch;
//! - **an expiry timer**: nothing happens on disk when a record expires, so
//!   the watcher wakes at the earliest deadline of the live set;
//! - **a full rescan** after an overflow notice or a backend error, when the
//!   directory itself is moved or deleted, and as a safety net every
//!   [`WatchOptions::rescan`] (5 min). A rescan lists the directory, compares
//!   each file's stamp (`fstatat`: inode, size, ctime and mtime to the
//!   nanosecond) with the one last read, and reads only the files that
//!   differ. It still costs a `stat` per file — tens of milliseconds of CPU
//!   at 100 000 files — hence the long interval: inotify does not drop events
//!   silently but reports an overflow, which rescans at once.
//!
//! On network and FUSE mounts native events do not arrive; there
//! [`WatchOptions::poll`] replaces them with that same rescan at the given
//! interval (at least `limits::MIN_POLL`). A record rewritten in place, to the same
//! size, within one tick of the filesystem's timestamp clock after a poll
//! looked at it keeps its stamp and goes unnoticed until it changes again;
//! atomic writes (a new inode each time) never do.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::clock::Clocks;
use crate::dedupe::{self, Digest, EndedLives, Facts, Reducer};
use crate::error::{Error, Result};
use crate::limits::MIN_POLL;
use crate::liveness::State;
use crate::record::Probe;
use crate::registry::change::Own;
use crate::registry::read::Pass;
use crate::registry::{Registry, Row};
use crate::store::{self, Dir};

mod backend;

use backend::{Backend, Msg};

mod diff;

pub use diff::{DownReason, Event};
use diff::{Snapshot, diff, newest_first};

mod files;
mod grace;
mod options;

use files::{At, Batch, FileId, Fresh, GroupId, Known, Live, Pending, Probed, add_best};
use grace::Grace;
pub use options::WatchOptions;
use options::WatchStats;

/// Watches one profile's directories (every one it reads, as one listing);
/// see the module docs.
pub struct Watcher {
    registry: Registry,
    opts: WatchOptions,
    rx: Receiver<Msg>,
    tx: mpsc::Sender<Msg>,
    /// One event source per directory read (none when polling, or for a
    /// directory that does not exist).
    _backend: Vec<Option<Backend>>,
    /// What this device published (the ledger of each directory), as of
    /// the last batch.
    owns: Vec<Own>,
    /// What this device knows of every writer's clock, learned as it reads.
    pass: Pass,
    files: HashMap<FileId, Known>,
    /// The files of each dedupe group.
    groups: HashMap<GroupId, HashSet<FileId>>,
    /// The group of each file of each life (a life's files nearly always
    /// share one group; a copy left behind by a changed endpoint does not).
    lives: HashMap<Digest, Vec<GroupId>>,
    /// The lives over anywhere, among every file known: each group is
    /// decided against all of them, as `list` decides.
    ended: EndedLives,
    /// Lives that came to an end, or stopped being ended, in this batch:
    /// every group holding one of their files is decided again.
    turned: Vec<Digest>,
    live: HashMap<GroupId, Live>,
    deadlines: BTreeSet<(At, GroupId)>,
    /// Record files that vanished and still speak for their sessions
    /// (see [`mod@grace`]).
    grace: Grace,
    next_rescan: Instant,
    /// The clock at the last look, for [`Watcher::live`].
    now: f64,
    stats: WatchStats,
    last_backend_error: Option<String>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher")
            .field("dir", &self.registry.profile().dir)
            .field("files", &self.files.len())
            .field("live", &self.live.len())
            .field("stats", &self.stats)
            .field("last_backend_error", &self.last_backend_error)
            .finish()
    }
}

/// The native event source of `dir`, the `at`-th directory read, or none
/// when polling.
fn backend(
    dir: &Path,
    at: usize,
    opts: &WatchOptions,
    tx: mpsc::Sender<Msg>,
) -> Result<Option<Backend>> {
    match opts.poll {
        Some(_) => Ok(None),
        None => backend::start(dir, at, tx).map(Some),
    }
}

impl Watcher {
    /// Starts watching `registry`'s directory, which must exist, and takes
    /// the first snapshot at `now`.
    pub fn new(registry: Registry, opts: WatchOptions, now: f64) -> Result<Self> {
        let dir = registry.profile().dir.clone();
        if registry.profile().dir_is_default && !dir.exists() {
            // The built-in directory is this device's own: make it, so a
            // watch started before the first publish sees that publish.
            crate::store::ensure_dir(&dir)?;
        }
        if !dir.is_dir() {
            return Err(Error::NoDirectory { dir });
        }
        let mut opts = opts;
        if let Some(interval) = opts.poll {
            let interval = interval.max(MIN_POLL);
            opts.poll = Some(interval);
            opts.rescan = interval;
        }
        let (tx, rx) = mpsc::channel();
        // The other directories read need not exist: a missing one is empty
        // until a rescan finds it.
        let mut backends = vec![backend(&dir, 0, &opts, tx.clone())?];
        for (at, extra) in registry.profile().dirs.iter().enumerate().skip(1) {
            backends.push(match extra.is_dir() {
                true => backend(extra, at, &opts, tx.clone())?,
                false => None,
            });
        }
        // The ledgers are read at every batch (`apply`).
        let pass = Pass::begin(&registry, registry.show_set(opts.all_profiles), &[]);
        let mut w = Watcher {
            registry,
            opts,
            rx,
            tx,
            _backend: backends,
            owns: Vec::new(),
            pass,
            files: HashMap::new(),
            groups: HashMap::new(),
            lives: HashMap::new(),
            ended: EndedLives::default(),
            turned: Vec::new(),
            live: HashMap::new(),
            deadlines: BTreeSet::new(),
            grace: Grace::default(),
            next_rescan: Instant::now() + opts.rescan,
            now,
            stats: WatchStats::default(),
            last_backend_error: None,
        };
        // The first look's events would be the initial live set, which `live` gives.
        w.rescan(now, false)?;
        Ok(w)
    }

    /// The current live set, newest first, with ages and time left as of
    /// the last look.
    pub fn live(&self) -> Vec<Row> {
        let mut rows: Vec<Row> = self
            .live
            .values()
            .map(|l| {
                let mut row = l.row.clone();
                row.retime(l.ctime, self.now, self.registry.tolerance());
                row
            })
            .collect();
        newest_first(&mut rows);
        rows
    }

    /// The current live set as a stream's beginning: one [`Event::Up`] per
    /// live session, newest first, then [`Event::Ready`] with their count
    /// (for an empty set, `Ready { count: 0 }` alone). Continued with
    /// [`Watcher::next_events`], every change is seen once.
    pub fn initial_events(&self) -> Vec<Event> {
        let rows = self.live();
        let count = rows.len();
        let mut events: Vec<Event> = rows.into_iter().map(Event::Up).collect();
        events.push(Event::Ready { count });
        events
    }

    /// What the watcher did so far.
    #[cfg(test)]
    pub(crate) fn stats(&self) -> WatchStats {
        self.stats
    }

    /// Opens every directory read. The first (`dir`) is waited for if it
    /// vanished (see [`Watcher::recover`]); another that is missing counts
    /// as empty, and one that appeared is watched from now on.
    fn open_dirs(&mut self) -> Result<Vec<Dir>> {
        let mut dirs = self.registry.open_dirs()?;
        if !dirs[0].exists() {
            self.recover()?;
            dirs = self.registry.open_dirs()?;
        }
        for (at, dir) in dirs.iter().enumerate().skip(1) {
            match (&self._backend[at], dir.exists()) {
                (None, true) if self.opts.poll.is_none() => {
                    let path = self.registry.read_dir(at).to_path_buf();
                    self._backend[at] = backend(&path, at, &self.opts, self.tx.clone())?;
                }
                (Some(_), false) => self._backend[at] = None,
                _ => {}
            }
        }
        Ok(dirs)
    }

    /// Looks at every file: lists the directories, stats each record file
    /// and reads those whose stamp differs from the last read, then
    /// recomputes the groups that changed. A vanished directory is waited
    /// for (see [`Watcher::recover`]).
    fn rescan(&mut self, now: f64, emit: bool) -> Result<Vec<Event>> {
        self.stats.rescans += 1;
        self.next_rescan = Instant::now() + self.opts.rescan;
        let dirs = self.open_dirs()?;
        let look = self.stats.rescans;
        let mut changed = Vec::new();
        for (at, dir) in dirs.iter().enumerate() {
            for (name, _) in dir.records()? {
                let id: FileId = (at, name);
                // A file not known before is read without a stat first.
                if let Some(known) = self.files.get_mut(&id) {
                    known.look = look;
                    if known.stamp.is_some() && known.stamp == dir.stamp(&id.1).ok().flatten() {
                        continue;
                    }
                }
                changed.push(id);
            }
        }
        let missing: Vec<FileId> = self
            .files
            .iter()
            .filter(|(_, known)| known.look != look)
            .map(|(id, _)| id.clone())
            .collect();
        // A record missing from the listing gets its grace; what else went
        // is forgotten at once.
        let mut gone = Vec::new();
        for id in missing {
            if self.files.get(&id).is_some_and(|k| k.probe.is_some()) {
                self.grace.vanished(id, now);
            } else {
                gone.push(id);
            }
        }
        let due = self.settle(&dirs, now);
        changed.extend(due.back);
        gone.extend(due.gone);
        self.apply(&dirs, &changed, gone, now, emit)
    }

    /// Settles the vanished files whose grace is over at `now` (see
    /// [`mod@grace`]).
    fn settle(&mut self, dirs: &[Dir], now: f64) -> grace::Due {
        let present = |id: &FileId| {
            dirs.get(id.0)
                .is_some_and(|d| d.stamp(&id.1).ok().flatten().is_some())
        };
        let replacing = |id: &FileId| dirs.get(id.0).is_some_and(|d| d.being_replaced(&id.1));
        self.grace.due(now, present, replacing)
    }

    /// Re-reads the named files (they changed: no stat is trusted over an
    /// event) and whatever expired meanwhile.
    fn update(&mut self, names: HashSet<FileId>, now: f64) -> Result<Vec<Event>> {
        let expiring = self.deadlines.first().is_some_and(|(at, _)| at.0 <= now);
        let settling = self.grace.next().is_some_and(|at| at <= now);
        if names.is_empty() && !expiring && !settling {
            return Ok(Vec::new());
        }
        let dirs = self.registry.open_dirs()?;
        if !dirs[0].exists() {
            return self.rescan(now, true);
        }
        let mut names = names;
        let due = self.settle(&dirs, now);
        names.extend(due.back);
        let names: Vec<FileId> = names.into_iter().collect();
        self.apply(&dirs, &names, due.gone, now, true)
    }

    /// Reads `changed`, forgets `gone`, and recomputes the groups those files
    /// belong or belonged to, and those whose live winner expired by `now`:
    /// each one's winner by the dedupe rank, its liveness by the rule of
    /// `list`. Returns the events of those groups if `emit`.
    fn apply(
        &mut self,
        dirs: &[Dir],
        changed: &[FileId],
        gone: Vec<FileId>,
        now: f64,
        emit: bool,
    ) -> Result<Vec<Event>> {
        // The first look takes what the scan cache knows, read before the
        // ledgers' lives are digested (see `registry::list`).
        let mut cached = if self.stats.rescans == 1 && self.files.is_empty() {
            self.cached(dirs, changed)
        } else {
            vec![HashMap::new(); dirs.len()]
        };
        // This device may publish (or clear) while we watch.
        self.owns = self.registry.owns(dirs)?;
        self.pass.ledgers(&self.owns);
        let (pass, look) = (&self.pass, self.stats.rescans);
        let mut parts = Vec::new();
        let mut read = 0;
        for (at, dir) in dirs.iter().enumerate() {
            let known = cached.get_mut(at).map(std::mem::take).unwrap_or_default();
            let names: Vec<Box<str>> = changed
                .iter()
                .filter(|(d, n)| *d == at && !known.contains_key(n))
                .map(|(_, n)| n.clone())
                .collect();
            if !known.is_empty() {
                // Judged from the cache; a live winner among them is read
                // when its row is made.
                let mut batch = Batch::default();
                for (name, (stamp, facts)) in known {
                    let ctime = stamp.ctime();
                    let probe = pass
                        .judge(&mut batch.learned, &facts.borrowed(), ctime, now)
                        .map(|_| Probed { facts, ctime });
                    let known = Known {
                        look,
                        stamp: Some(stamp),
                        probe,
                    };
                    batch.read.push(((at, name), Some(known)));
                }
                parts.push(batch);
            }
            if names.is_empty() {
                continue;
            }
            read += names.len();
            parts.extend(dir.read_each(
                &names,
                Batch::default,
                |batch: &mut Batch, name, outcome| {
                    let known = match outcome {
                        Ok(None) => None,
                        Ok(Some((stamp, bytes))) => {
                            let probe = Probe::parse(bytes).ok();
                            let judged = probe.as_ref().and_then(|p| {
                                let verdict = crate::identity::verdict_of(p.device_id(), bytes);
                                let f = Facts::of(p, verdict);
                                let state =
                                    pass.judge(&mut batch.learned, &f, stamp.ctime(), now)?;
                                Some((
                                    Probed {
                                        facts: f.owned(),
                                        ctime: stamp.ctime(),
                                    },
                                    state,
                                ))
                            });
                            let (probe, state) = judged.unzip();
                            if let (Some(p), Some(state)) = (&probe, state) {
                                // Only a file that is live itself can give a live row.
                                let live = state == State::Live;
                                let fresh = Fresh {
                                    updated: p.facts.updated.unwrap_or(f64::NEG_INFINITY),
                                    seq: p.facts.seq,
                                    file: name.into(),
                                    dir: at,
                                    bytes: live.then(|| bytes.into()),
                                };
                                batch.add_best(p.facts.group, fresh);
                            }
                            Some(Known {
                                look,
                                stamp: Some(stamp),
                                probe,
                            })
                        }
                        Err(_) => Some(Known {
                            look,
                            stamp: dir.stamp(name).ok().flatten(),
                            probe: None,
                        }),
                    };
                    batch.read.push(((at, name.into()), known));
                },
            ));
        }
        self.stats.files_read += read as u64;

        let mut affected: HashSet<GroupId> = HashSet::new();
        let mut fresh: HashMap<GroupId, Fresh> = HashMap::new();
        let mut learned = Clocks::default();
        for part in parts {
            learned.merge(&part.learned, now);
            for (id, known) in part.read {
                if known.is_none() && self.files.get(&id).is_some_and(|k| k.probe.is_some()) {
                    // Vanished: it speaks for its session through its grace.
                    self.grace.vanished(id, now);
                    continue;
                }
                self.grace.read(&id);
                affected.extend(self.forget(&id));
                if let Some(known) = known {
                    if let Some(p) = &known.probe {
                        affected.insert(p.facts.group);
                        let members = self.groups.entry(p.facts.group).or_default();
                        members.insert(id.clone());
                        self.lives
                            .entry(p.facts.life)
                            .or_default()
                            .push(p.facts.group);
                        if self.ended.add(p.facts.life, p.facts.ended) {
                            self.turned.push(p.facts.life);
                        }
                    }
                    self.files.insert(id, known);
                }
            }
            for (key, best) in part.best {
                add_best(&mut fresh, key, best);
            }
        }
        // What this batch taught of the writers' clocks serves its own
        // judgments already: a burst alone teaches nothing (see clock.rs).
        self.pass.end_batch(&self.registry, &learned, now);
        for id in gone {
            affected.extend(self.forget(&id));
        }
        // A tombstone that came or went changes its life in every group.
        for life in std::mem::take(&mut self.turned) {
            affected.extend(self.lives.get(&life).into_iter().flatten().cloned());
        }
        while let Some((at, _)) = self.deadlines.first()
            && at.0 <= now
        {
            if let Some((_, key)) = self.deadlines.pop_first() {
                affected.insert(key);
            }
        }

        let mut old = Snapshot::default();
        let mut new = Snapshot::default();
        let mut now_live = Vec::new();
        for key in affected {
            if let Some(l) = self.live.remove(&key) {
                if let Some(d) = l.deadline {
                    self.deadlines.remove(&(At(d), key));
                }
                if emit {
                    let mut row = l.row.clone();
                    row.retime(l.ctime, now, self.registry.tolerance());
                    old.live.insert(key, row);
                }
                now_live.push((key, Some(l)));
            } else {
                now_live.push((key, None));
            }
        }
        // The files read in this batch: a winner among them that was not the
        // batch's newest in its group was read but not kept, so it is read
        // again rather than taken from the last batch.
        let read_now: HashSet<&FileId> = changed.iter().collect();
        let mut next = Vec::new();
        for (key, before) in now_live {
            let Some((winner, state)) = self.winner(key, now) else {
                continue;
            };
            if emit {
                for (session, ended) in self.sessions(key) {
                    new.sessions.insert((key, session), ended);
                }
            }
            if state != State::Live {
                if emit {
                    new.states.insert(key, state);
                }
                continue;
            }
            // The winner is the newest file read in this batch, if it was read.
            let read = fresh
                .remove(&key)
                .filter(|f| f.dir == winner.0 && f.file == winner.1)
                .and_then(|f| f.bytes);
            let live = match (read, before) {
                (Some(bytes), _) => self.live_row(&winner, &bytes, now),
                // Its file did not change (another file of the group did).
                (None, Some(l))
                    if l.row.dir_index == winner.0
                        && l.row.file == *winner.1
                        && (!read_now.contains(&winner) || self.grace.holds(&winner)) =>
                {
                    Some(l)
                }
                (None, _) => self.reread(dirs, &winner, now),
            };
            if let Some(mut l) = live.filter(|l| l.row.live) {
                if emit {
                    l.row.retime(l.ctime, now, self.registry.tolerance());
                    new.live.insert(key, l.row.clone());
                }
                next.push((key, l));
            }
        }
        for (key, l) in next {
            if let Some(d) = l.deadline {
                self.deadlines.insert((At(d), key));
            }
            self.live.insert(key, l);
        }
        Ok(if emit { diff(&old, &new) } else { Vec::new() })
    }

    /// What the scan cache of each directory knows of the files `changed`
    /// in their present version (by an `fstatat` of each), as `list`
    /// takes it: per directory, by name.
    #[allow(clippy::type_complexity)]
    fn cached(
        &self,
        dirs: &[Dir],
        changed: &[FileId],
    ) -> Vec<HashMap<Box<str>, (store::Stamp, Facts<Box<str>>)>> {
        let mut out = vec![HashMap::new(); dirs.len()];
        for (at, dir) in dirs.iter().enumerate() {
            let mut names = store::Names::default();
            for (_, name) in changed.iter().filter(|(d, _)| *d == at) {
                names.push(name, store::classify(name));
            }
            let (_, caches) = self
                .registry
                .scan_caches(std::slice::from_ref(dir), &[names.len()]);
            let Some(cache) = caches.into_iter().next().flatten() else {
                continue;
            };
            let lookup = cache.index(&names);
            for i in 0..names.len() {
                let name = names.get(i).0;
                let Ok(Some(stamp)) = dir.stamp(name) else {
                    continue;
                };
                let key = crate::scan_cache::FileKey::of(&stamp);
                if let Some((_, facts)) = lookup.get(i as u32, key) {
                    out[at].insert(name.into(), (stamp, facts.owned()));
                }
            }
        }
        out
    }

    /// Drops what is known of `id`; returns the group it belonged to.
    fn forget(&mut self, id: &FileId) -> Option<GroupId> {
        let p = self.files.remove(id)?.probe?;
        if let Some(members) = self.groups.get_mut(&p.facts.group) {
            members.remove(id);
            if members.is_empty() {
                self.groups.remove(&p.facts.group);
            }
        }
        if let Some(groups) = self.lives.get_mut(&p.facts.life) {
            if let Some(i) = groups.iter().position(|g| *g == p.facts.group) {
                groups.swap_remove(i);
            }
            if groups.is_empty() {
                self.lives.remove(&p.facts.life);
            }
        }
        if self.ended.remove(p.facts.life, p.facts.ended) {
            self.turned.push(p.facts.life);
        }
        Some(p.facts.group)
    }

    /// Every session with a record in group `key`, and whether any of its
    /// records is a tombstone.
    fn sessions(&self, key: GroupId) -> BTreeMap<String, bool> {
        let mut out: BTreeMap<String, bool> = BTreeMap::new();
        for id in self.groups.get(&key).into_iter().flatten() {
            if let Some(p) = self.files.get(id).and_then(|k| k.probe.as_ref()) {
                *out.entry(p.facts.session.to_string()).or_default() |=
                    p.facts.ended || self.ended.contains(p.facts.life);
            }
        }
        out
    }

    /// The file that speaks for a group at `now`, and its life's state,
    /// by the reducer `list` uses.
    fn winner(&self, key: GroupId, now: f64) -> Option<(FileId, State)> {
        let mut reducer = Reducer::<()>::new(false);
        for id in self.groups.get(&key)? {
            let Some(p) = self.files.get(id).and_then(|k| k.probe.as_ref()) else {
                continue;
            };
            let state =
                self.pass
                    .state(p.facts.life, p.facts.times(), p.ctime, now, &p.facts.device);
            let mut copy =
                dedupe::FileCopy::new(&id.1, p.facts.updated, p.facts.seq, p.facts.ended, state);
            copy.dir = id.0;
            reducer.add(p.facts.group, p.facts.life, copy);
        }
        let group = reducer.finish_against(&self.ended).into_iter().next()?;
        Some(((group.winner.dir, group.winner.file), group.state))
    }

    /// Parses a live winner's bytes into its row, exactly as `list` does.
    fn live_row(&self, id: &FileId, bytes: &[u8], now: f64) -> Option<Live> {
        let stamp = self.files.get(id)?.stamp?;
        let raw = store::Raw {
            file: &id.1,
            kind: store::classify(&id.1),
            ctime: stamp.ctime(),
            stamp,
            bytes,
        };
        let entry = raw.parse().ok()?;
        let ctime = entry.ctime;
        let own = self.owns.get(id.0)?;
        let row = self.registry.row(entry, id.0, own, now, &self.pass);
        let deadline = row.expires_in_s.map(|e| now + e);
        Some(Live {
            row,
            ctime,
            deadline,
        })
    }

    /// Reads a winner that was not read in this batch: a file that did not
    /// change but now wins its group (the newer one went away). Should it
    /// have changed meanwhile, its own event (or the next poll) follows.
    fn reread(&mut self, dirs: &[Dir], id: &FileId, now: f64) -> Option<Live> {
        self.stats.files_read += 1;
        let names: [Box<str>; 1] = [id.1.clone()];
        let bytes = dirs
            .get(id.0)?
            .read_each(
                &names,
                || None,
                |out: &mut Option<Box<[u8]>>, _, outcome| {
                    if let Ok(Some((_, bytes))) = outcome {
                        *out = Some(bytes.into());
                    }
                },
            )
            .into_iter()
            .flatten()
            .next()?;
        self.live_row(id, &bytes, now)
    }

    /// The directory (`dir`) vanished: wait for it to come back (a remount,
    /// a sync engine replacing it) a few times with backoff, then give up.
    fn recover(&mut self) -> Result<()> {
        let dir = self.registry.profile().dir.clone();
        for delay_ms in [100, 300, 900, 2700] {
            std::thread::sleep(Duration::from_millis(delay_ms));
            if dir.is_dir() {
                self._backend[0] = backend(&dir, 0, &self.opts, self.tx.clone())?;
                return Ok(());
            }
        }
        Err(Error::DirectoryVanished {
            dir,
            waited: Duration::from_millis(100 + 300 + 900 + 2700),
        })
    }

    /// Waits up to `max_wait` for changes and returns the events (possibly
    /// none). `now` gives this machine's clock.
    pub fn next_events(&mut self, max_wait: Duration, now: impl Fn() -> f64) -> Result<Vec<Event>> {
        let start = Instant::now();
        self.now = now();
        let mut wake = start + max_wait;
        let mut timer_due = false;
        if let Some((At(deadline), _)) = self.deadlines.first() {
            // A millisecond past the deadline, so that the rule says "expired".
            let until = Duration::try_from_secs_f64((deadline - self.now).max(0.0) + 0.001)
                .unwrap_or(Duration::MAX);
            if until <= max_wait {
                wake = start + until;
                timer_due = true;
            }
        }
        if let Some(check) = self.grace.next() {
            // A vanished file's grace ends: look at it again.
            let until =
                Duration::try_from_secs_f64((check - self.now).max(0.0)).unwrap_or(Duration::MAX);
            if until <= wake.saturating_duration_since(start) {
                wake = start + until;
                timer_due = true;
            }
        }
        if self.next_rescan <= wake {
            wake = self.next_rescan.max(start);
            timer_due = true;
        }
        let timeout = wake.saturating_duration_since(Instant::now());
        let mut pending = Pending::default();
        match self.rx.recv_timeout(timeout) {
            Ok(msg) => {
                self.stats.batches += 1;
                self.absorb(msg, &mut pending);
                self.coalesce(&mut pending);
            }
            Err(RecvTimeoutError::Timeout) if timer_due => {}
            Err(RecvTimeoutError::Timeout) => return Ok(Vec::new()),
            Err(RecvTimeoutError::Disconnected) => {
                return Err(Error::io(
                    "watch",
                    &self.registry.profile().dir,
                    std::io::Error::other("the file watcher stopped"),
                ));
            }
        }
        self.now = now();
        if pending.rearm {
            // The watch followed the old directory; watch what is there now
            // (a directory other than `dir` that went away is empty).
            let dir = self.registry.profile().dir.clone();
            if dir.is_dir() {
                self._backend[0] = backend(&dir, 0, &self.opts, self.tx.clone())?;
            } else {
                self.recover()?;
            }
            for at in 1..self._backend.len() {
                let extra = self.registry.read_dir(at).to_path_buf();
                self._backend[at] = match extra.is_dir() {
                    true => backend(&extra, at, &self.opts, self.tx.clone())?,
                    false => None,
                };
            }
            pending.rescan = true;
        }
        if pending.rescan || Instant::now() >= self.next_rescan {
            return self.rescan(self.now, true);
        }
        self.update(pending.names, self.now)
    }

    /// Adds a message to the batch. A backend error (an overflowed queue, a
    /// watch the kernel dropped) is not fatal: it only means events may have
    /// been lost, and the rescan it asks for recovers from that — or finds
    /// the directory gone and says so.
    fn absorb(&mut self, msg: Msg, pending: &mut Pending) {
        match msg {
            Msg::Files(at, names) => pending.names.extend(names.into_iter().map(|n| (at, n))),
            Msg::Rescan => pending.rescan = true,
            Msg::Rearm => pending.rearm = true,
            Msg::Failed(e) => {
                self.last_backend_error = Some(e);
                pending.rescan = true;
            }
        }
    }

    /// Collects events until they pause for `quiet`, or `max_delay` passed.
    fn coalesce(&mut self, pending: &mut Pending) {
        let end = Instant::now() + self.opts.max_delay;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                // Take what is queued already; later events make a new batch.
                while let Ok(msg) = self.rx.try_recv() {
                    self.absorb(msg, pending);
                }
                return;
            }
            match self.rx.recv_timeout(self.opts.quiet.min(left)) {
                Ok(msg) => self.absorb(msg, pending),
                Err(_) => return,
            }
        }
    }
}

#[cfg(test)]
mod fs_tests;
