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
//!   [`Stamp`] and the few fields dedupe and liveness need (as a
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
//! interval (at least [`MIN_POLL`]). A record rewritten in place, to the same
//! size, within one tick of the filesystem's timestamp clock after a poll
//! looked at it keeps its stamp and goes unnoticed until it changes again;
//! atomic writes (a new inode each time) never do.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::clock::Clocks;
use crate::config::ShowSet;
use crate::dedupe::{self, Digest, EndedLives, Rank, Reducer};
use crate::error::{Error, Result};
use crate::liveness::{self, State};
use crate::record::Probe;
use crate::registry::change::Own;
use crate::registry::{Registry, Row};
use crate::store::{self, Dir, Stamp};

mod backend;

use backend::{Backend, Msg};

mod diff;

pub use diff::{DownReason, Event};
use diff::{Key, Snapshot, diff, newest_first};

/// The shortest poll interval; [`Watcher::new`] raises shorter ones to it.
/// A poll costs a `stat` of every file, so polling faster only burns CPU.
pub const MIN_POLL: Duration = crate::limits::MIN_POLL;

/// How a [`Watcher`] watches.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct WatchOptions {
    /// Rescan at this interval instead of listening for native events (at
    /// least [`MIN_POLL`]).
    pub poll: Option<Duration>,
    /// After the first file event, wait until events pause this long
    /// (default 10 ms)…
    pub quiet: Duration,
    /// …but no longer than this after the first (default 100 ms).
    pub max_delay: Duration,
    /// With native events, rescan (stat every file, read those that changed)
    /// at least this often (default 5 min); with `poll`, the poll interval.
    pub rescan: Duration,
    /// Show every label, as `list --all-profiles`.
    pub all_profiles: bool,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            poll: None,
            quiet: crate::limits::WATCH_QUIET,
            max_delay: crate::limits::WATCH_MAX_DELAY,
            rescan: crate::limits::WATCH_RESCAN,
            all_profiles: false,
        }
    }
}

/// Counters of the work a [`Watcher`] did since it started (for tests and
/// benchmarks).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WatchStats {
    /// Full looks at the directory: the first, and those after an overflow,
    /// a backend error, a moved directory, the safety-net interval, or each
    /// poll. Each lists the directory and stats every record file.
    pub rescans: u64,
    /// Wake-ups for file events (each a coalesced batch).
    pub batches: u64,
    /// Record files opened and read.
    pub files_read: u64,
}

/// A file the watcher knows: the index of its directory among those the
/// profile reads (0: `dir`), and its name there.
type FileId = (usize, Box<str>);

/// What one wake-up collected.
#[derive(Default)]
struct Pending {
    names: HashSet<FileId>,
    rescan: bool,
    rearm: bool,
}

/// What the watcher knows of one record file.
struct Known {
    /// The last rescan that listed it (those it did not are gone).
    look: u64,
    /// As of the last read; `None` if it could not be taken.
    stamp: Option<Stamp>,
    /// `None` for a file that is not a record this profile shows.
    probe: Option<Probed>,
}

/// A dedupe group's key ([`dedupe::group_id`]).
type GroupId = Key;

/// The fields of a record that dedupe and liveness need, owned.
struct Probed {
    key: GroupId,
    /// The writer's device, whose learned clock reads its times.
    device: Box<str>,
    group: Digest,
    life: Digest,
    session_id: Box<str>,
    updated_at: Option<f64>,
    seq: u64,
    /// `[updated_at, expires_at, ended_at]`, as [`liveness::state_of`] takes them.
    times: [Option<f64>; 3],
    ctime: f64,
}

impl Probed {
    fn new(p: &Probe<'_>, ctime: f64) -> Probed {
        Probed {
            key: dedupe::group_id(p.group_key()),
            device: p.device_id().into(),
            group: Digest::group(p.group_key()),
            life: Digest::life(p.instance_id(), p.session_id(), p.started_at),
            session_id: p.session_id().into(),
            updated_at: p.updated_at,
            seq: p.seq,
            times: [p.updated_at, p.expires_at, p.ended_at],
            ctime,
        }
    }
}

/// A live group's row, with what it takes to bring its times up to date.
struct Live {
    row: Row,
    ctime: f64,
    deadline: Option<f64>,
}

/// A deadline, ordered (deadlines are finite; `total_cmp` keeps the order total anyway).
#[derive(Debug, Clone, Copy)]
struct At(f64);

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
struct Batch {
    /// Each file read, and what it is (`None`: it vanished).
    read: Vec<(FileId, Option<Known>)>,
    /// The newest file of each group among those read.
    best: HashMap<GroupId, Fresh>,
    /// What the files read teach of their writers' clocks.
    learned: Clocks,
}

impl Batch {
    fn add_best(&mut self, key: GroupId, fresh: Fresh) {
        add_best(&mut self.best, key, fresh);
    }
}

/// The newest file of a group among those read in a batch, with its bytes
/// if it is live: the group's winner, if any file read is, can only be this
/// one, so a batch holds one file's bytes per group (as `list` does), however
/// many copies a group has.
struct Fresh {
    updated: f64,
    seq: u64,
    file: Box<str>,
    dir: usize,
    bytes: Option<Box<[u8]>>,
}

impl Fresh {
    fn rank(&self) -> Rank<'_> {
        Rank::new(self.updated, self.seq, &self.file).in_dir(self.dir)
    }
}

fn add_best(best: &mut HashMap<GroupId, Fresh>, key: GroupId, fresh: Fresh) {
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
    show: ShowSet,
    /// What this device published (the ledger of each directory), as of
    /// the last batch.
    owns: Vec<Own>,
    /// What this device knows of every writer's clock, learned as it reads.
    clocks: Clocks,
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
        let registry_clocks = registry.local().clocks();
        let mut w = Watcher {
            show: registry.show_set(opts.all_profiles),
            registry,
            opts,
            rx,
            tx,
            _backend: backends,
            owns: Vec::new(),
            clocks: registry_clocks,
            files: HashMap::new(),
            groups: HashMap::new(),
            lives: HashMap::new(),
            ended: EndedLives::default(),
            turned: Vec::new(),
            live: HashMap::new(),
            deadlines: BTreeSet::new(),
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
    pub fn stats(&self) -> WatchStats {
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
        let gone: Vec<FileId> = self
            .files
            .iter()
            .filter(|(_, known)| known.look != look)
            .map(|(id, _)| id.clone())
            .collect();
        self.apply(&dirs, &changed, gone, now, emit)
    }

    /// Re-reads the named files (they changed: no stat is trusted over an
    /// event) and whatever expired meanwhile.
    fn update(&mut self, names: HashSet<FileId>, now: f64) -> Result<Vec<Event>> {
        let expiring = self.deadlines.first().is_some_and(|(at, _)| at.0 <= now);
        if names.is_empty() && !expiring {
            return Ok(Vec::new());
        }
        let dirs = self.registry.open_dirs()?;
        if !dirs[0].exists() {
            return self.rescan(now, true);
        }
        let names: Vec<FileId> = names.into_iter().collect();
        self.apply(&dirs, &names, Vec::new(), now, true)
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
        // This device may publish (or clear) while we watch.
        self.owns = self.registry.owns(dirs)?;
        let (show, look) = (&self.show, self.stats.rescans);
        let (registry, clocks) = (&self.registry, &self.clocks);
        let mut parts = Vec::new();
        for (at, dir) in dirs.iter().enumerate() {
            let names: Vec<Box<str>> = changed
                .iter()
                .filter(|(d, _)| *d == at)
                .map(|(_, n)| n.clone())
                .collect();
            if names.is_empty() {
                continue;
            }
            parts.extend(dir.read_each(
                &names,
                Batch::default,
                |batch: &mut Batch, name, outcome| {
                    let known = match outcome {
                        Ok(None) => None,
                        Ok(Some((stamp, bytes))) => {
                            let probe = Probe::parse(bytes).ok();
                            // Every record teaches its writer's clock, whatever its label.
                            if let Some(p) = &probe
                                && let Some(updated) = p.updated_at
                            {
                                batch.learned.learn(p.device_id(), stamp.ctime(), updated);
                            }
                            let probe = probe
                                .filter(|p| show.shows(p.profile()))
                                .map(|p| Probed::new(&p, stamp.ctime()));
                            if let Some(p) = &probe {
                                // Only a file that is live itself can give a live row.
                                let clock = registry.writer_clock(clocks, &p.device, now);
                                let live =
                                    liveness::state_of(p.times, p.ctime, now, clock) == State::Live;
                                let fresh = Fresh {
                                    updated: p.updated_at.unwrap_or(f64::NEG_INFINITY),
                                    seq: p.seq,
                                    file: name.into(),
                                    dir: at,
                                    bytes: live.then(|| bytes.into()),
                                };
                                batch.add_best(p.key.clone(), fresh);
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
        self.stats.files_read += changed.len() as u64;

        let mut affected: HashSet<GroupId> = HashSet::new();
        let mut fresh: HashMap<GroupId, Fresh> = HashMap::new();
        let mut learned = Clocks::default();
        for part in parts {
            learned.merge(&part.learned, now);
            for (id, known) in part.read {
                affected.extend(self.forget(&id));
                if let Some(known) = known {
                    if let Some(p) = &known.probe {
                        affected.insert(p.key.clone());
                        let members = self.groups.entry(p.key.clone()).or_default();
                        members.insert(id.clone());
                        self.lives.entry(p.life).or_default().push(p.key.clone());
                        if self.ended.add(p.life, p.times[2].is_some()) {
                            self.turned.push(p.life);
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
        let known = self.clocks.clone();
        self.clocks.merge(&learned, now);
        self.registry.remember_clocks(&known, &learned, now);
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
                    self.deadlines.remove(&(At(d), key.clone()));
                }
                if emit {
                    let mut row = l.row.clone();
                    row.retime(l.ctime, now, self.registry.tolerance());
                    old.live.insert(key.clone(), row);
                }
                now_live.push((key.clone(), Some(l)));
            } else {
                now_live.push((key.clone(), None));
            }
        }
        // The files read in this batch: a winner among them that was not the
        // batch's newest in its group was read but not kept, so it is read
        // again rather than taken from the last batch.
        let read_now: HashSet<&FileId> = changed.iter().collect();
        let mut next = Vec::new();
        for (key, before) in now_live {
            let Some((winner, state)) = self.winner(&key, now) else {
                continue;
            };
            if emit {
                for (session, ended) in self.sessions(&key) {
                    new.sessions.insert((key.clone(), session), ended);
                }
            }
            if state != State::Live {
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
                        && !read_now.contains(&winner) =>
                {
                    Some(l)
                }
                (None, _) => self.reread(dirs, &winner, now),
            };
            if let Some(mut l) = live.filter(|l| l.row.live) {
                if emit {
                    l.row.retime(l.ctime, now, self.registry.tolerance());
                    new.live.insert(key.clone(), l.row.clone());
                }
                next.push((key, l));
            }
        }
        for (key, l) in next {
            if let Some(d) = l.deadline {
                self.deadlines.insert((At(d), key.clone()));
            }
            self.live.insert(key, l);
        }
        Ok(if emit { diff(&old, &new) } else { Vec::new() })
    }

    /// Drops what is known of `id`; returns the group it belonged to.
    fn forget(&mut self, id: &FileId) -> Option<GroupId> {
        let p = self.files.remove(id)?.probe?;
        if let Some(members) = self.groups.get_mut(&p.key) {
            members.remove(id);
            if members.is_empty() {
                self.groups.remove(&p.key);
            }
        }
        if let Some(groups) = self.lives.get_mut(&p.life) {
            if let Some(i) = groups.iter().position(|g| *g == p.key) {
                groups.swap_remove(i);
            }
            if groups.is_empty() {
                self.lives.remove(&p.life);
            }
        }
        if self.ended.remove(p.life, p.times[2].is_some()) {
            self.turned.push(p.life);
        }
        Some(p.key)
    }

    /// Every session with a record in group `key`, and whether any of its
    /// records is a tombstone.
    fn sessions(&self, key: &str) -> BTreeMap<String, bool> {
        let mut out: BTreeMap<String, bool> = BTreeMap::new();
        for id in self.groups.get(key).into_iter().flatten() {
            if let Some(p) = self.files.get(id).and_then(|k| k.probe.as_ref()) {
                *out.entry(p.session_id.to_string()).or_default() |=
                    p.times[2].is_some() || self.ended.contains(p.life);
            }
        }
        out
    }

    /// The file that speaks for a group at `now`, and its life's state,
    /// by the reducer `list` uses.
    fn winner(&self, key: &str, now: f64) -> Option<(FileId, State)> {
        let mut reducer = Reducer::<()>::new(false);
        for id in self.groups.get(key)? {
            let Some(p) = self.files.get(id).and_then(|k| k.probe.as_ref()) else {
                continue;
            };
            let clock = self.registry.writer_clock(&self.clocks, &p.device, now);
            let state = liveness::state_of(p.times, p.ctime, now, clock);
            let mut copy =
                dedupe::FileCopy::new(&id.1, p.updated_at, p.seq, p.times[2].is_some(), state);
            copy.dir = id.0;
            reducer.add(p.group, p.life, copy);
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
        let row = self.registry.row(entry, id.0, own, now, &self.clocks);
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

    /// The last error the file-event backend reported (events were then
    /// recovered by a rescan).
    pub fn last_backend_error(&self) -> Option<&str> {
        self.last_backend_error.as_deref()
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
mod fs_tests {
    //! The watcher on a real directory, with two simulated devices sharing it.
    use super::*;
    use crate::config::{self, Selection};
    use crate::local::LocalDirs;
    use crate::record::Record;
    use crate::registry::PublishRequest;

    struct Devices {
        _tmp: tempfile::TempDir,
        a: Registry,
        b: Registry,
    }

    fn devices() -> Devices {
        let tmp = tempfile::tempdir().unwrap();
        let shared = tmp.path().join("shared");
        let sel = Selection {
            dir: Some(shared.clone()),
            ..Selection::default()
        };
        let reg = |name: &str| {
            let local = LocalDirs::under(&tmp.path().join(name));
            let (profile, _) = config::resolve(&sel, &local).unwrap();
            Registry::new(profile, local).with_host(name)
        };
        let (a, b) = (reg("a"), reg("b"));
        crate::store::ensure_dir(&shared).unwrap();
        Devices { a, b, _tmp: tmp }
    }

    /// A record that lives an hour: none of these tests sees one expire
    /// unless it says so.
    fn req(session: &str) -> PublishRequest {
        PublishRequest {
            session_id: session.into(),
            ttl: Some(Duration::from_secs(3600)),
            ..PublishRequest::default()
        }
    }

    /// How long a test waits for what the watcher promises will happen
    /// soon: long enough for a one-core machine with a busy loop beside the
    /// tests, so that it runs out only when the promise is broken. A test
    /// that passes never waits this long.
    const PATIENCE: Duration = Duration::from_secs(60);

    /// Collects event names until `want` many arrived, or [`PATIENCE`]
    /// passed.
    fn collect(w: &mut Watcher, want: usize) -> Vec<String> {
        collect_until(w, want, PATIENCE)
    }

    fn collect_until(w: &mut Watcher, want: usize, limit: Duration) -> Vec<String> {
        collect_at(w, want, limit, crate::unix_now)
    }

    /// [`collect_until`] with the watcher's clock `now`.
    fn collect_at(
        w: &mut Watcher,
        want: usize,
        limit: Duration,
        now: impl Fn() -> f64,
    ) -> Vec<String> {
        let deadline = Instant::now() + limit;
        let mut got = Vec::new();
        while got.len() < want && Instant::now() < deadline {
            for e in w.next_events(Duration::from_millis(50), &now).unwrap() {
                got.push(summary(&e));
            }
        }
        got
    }

    fn summary(e: &Event) -> String {
        let extra = match e {
            Event::Down { reason, .. } => format!(" {reason:?}"),
            Event::Update { changed, .. } => format!(" {}", changed.join(",")),
            Event::Ready { count } => return format!("ready {count}"),
            _ => String::new(),
        };
        let row = e.row().unwrap();
        format!(
            "{} {}@{}{extra}",
            e.name(),
            row.record.session_id,
            row.record.host
        )
    }

    #[test]
    fn the_initial_events_are_the_live_set_then_ready() {
        let d = devices();
        let mut w = Watcher::new(d.b.clone(), WatchOptions::default(), crate::unix_now()).unwrap();
        assert_eq!(w.initial_events(), [Event::Ready { count: 0 }]);
        d.a.publish(&req("one"), crate::unix_now()).unwrap();
        d.a.publish(&req("two"), crate::unix_now()).unwrap();
        let w2 = Watcher::new(d.b.clone(), WatchOptions::default(), crate::unix_now()).unwrap();
        let got: Vec<String> = w2.initial_events().iter().map(summary).collect();
        assert_eq!(got, ["up two@a", "up one@a", "ready 2"]);
        // The first watcher goes on with the changes only, never a second `ready`.
        let mut later = collect(&mut w, 2);
        later.sort();
        assert_eq!(later, ["up one@a", "up two@a"]);
    }

    fn scenario(poll: Option<Duration>) {
        let d = devices();
        d.a.publish(&req("before"), crate::unix_now()).unwrap();
        let opts = WatchOptions {
            poll,
            quiet: Duration::from_millis(5),
            max_delay: Duration::from_millis(50),
            ..WatchOptions::default()
        };
        // The watcher's clock: this machine's, moved on by `ahead` seconds
        // once the test says so.
        let ahead = std::cell::Cell::new(0.0);
        let now = || crate::unix_now() + ahead.get();
        let collect = |w: &mut Watcher, want: usize| collect_at(w, want, PATIENCE, now);
        let mut w = Watcher::new(d.b.clone(), opts, now()).unwrap();
        assert_eq!(w.live().len(), 1, "the initial live set");

        d.a.publish(&req("s1"), crate::unix_now()).unwrap();
        assert_eq!(collect(&mut w, 1), ["up s1@a"]);
        let mut changed = req("s1");
        changed.status = Some("working".into());
        d.a.publish(&changed, crate::unix_now()).unwrap();
        assert_eq!(collect(&mut w, 1), ["update s1@a status"]);
        // A plain refresh is not news.
        d.a.publish(&changed, crate::unix_now()).unwrap();
        assert!(collect_at(&mut w, 1, Duration::from_secs(1), now).is_empty());
        d.a.clear(Some("s1"), None, crate::unix_now()).unwrap();
        assert_eq!(collect(&mut w, 1), ["down s1@a Cleared"]);

        // This device's own record, with a ttl shorter than the others':
        // down on the expiry timer once the watcher's clock passes it
        // (nothing changes on disk). The clock is moved on rather than the
        // ttl waited out, so that the record is up until the test says.
        let mut short = req("short");
        short.ttl = Some(Duration::from_secs(120));
        d.b.publish(&short, crate::unix_now()).unwrap();
        assert_eq!(collect(&mut w, 1), ["up short@b"]);
        ahead.set(121.0);
        assert_eq!(collect(&mut w, 1), ["down short@b Expired"]);

        // A successor on the same endpoint.
        let mut run1 = req("run1");
        run1.endpoint = Some("tmux://h/main".into());
        d.b.publish(&run1, crate::unix_now()).unwrap();
        assert_eq!(collect(&mut w, 1), ["up run1@b"]);
        let mut run2 = req("run2");
        run2.endpoint = Some("tmux://h/main".into());
        d.a.publish(&run2, crate::unix_now()).unwrap();
        assert_eq!(collect(&mut w, 2), ["down run1@b Superseded", "up run2@a"]);
    }

    #[test]
    fn events_with_native_notifications() {
        scenario(None);
    }

    #[test]
    fn events_with_polling() {
        scenario(Some(Duration::from_millis(100)));
    }

    #[test]
    fn a_burst_of_writes_to_one_record_is_at_most_one_update_per_batch() {
        let d = devices();
        let mut w = Watcher::new(d.b.clone(), WatchOptions::default(), crate::unix_now()).unwrap();
        d.a.publish(&req("busy"), crate::unix_now()).unwrap();
        assert_eq!(collect(&mut w, 1), ["up busy@a"]);
        let start = w.stats();
        let writer = d.a.clone();
        let burst = std::thread::spawn(move || {
            let mut r = req("busy");
            for i in 0..1000 {
                r.title = Some(format!("step {i}"));
                writer.publish(&r, crate::unix_now()).unwrap();
            }
        });
        let mut events = Vec::new();
        while !burst.is_finished() {
            events.extend(collect_until(&mut w, 1, Duration::from_millis(200)));
        }
        burst.join().unwrap();
        // The last write wins, however the writes fell into batches.
        let title = |w: &Watcher| w.live().first().map(|r| r.record.title.clone());
        let deadline = Instant::now() + PATIENCE;
        while title(&w).as_deref() != Some("step 999") {
            assert!(
                Instant::now() < deadline,
                "the watcher shows {:?} after the last write",
                title(&w)
            );
            events.extend(collect_until(&mut w, 1, Duration::from_millis(200)));
        }
        // Every wake-up (a batch of file events, or a rescan) yields at most
        // one update of the record, every one an update of its title.
        let end = w.stats();
        let wakeups = (end.batches - start.batches) + (end.rescans - start.rescans);
        assert!(!events.is_empty());
        assert!(
            events.len() as u64 <= wakeups,
            "{} events in {wakeups} wake-ups ({end:?})",
            events.len()
        );
        assert!(
            events.iter().all(|e| e == "update busy@a title"),
            "{events:?}"
        );
        assert_eq!(w.live().len(), 1, "{events:?}");
    }

    #[test]
    fn a_flapping_record_yields_alternating_up_and_down() {
        let d = devices();
        let mut w = Watcher::new(d.b.clone(), WatchOptions::default(), crate::unix_now()).unwrap();
        // How many `up` the watcher reported so far.
        let ups = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let writer = d.a.clone();
        let seen = std::sync::Arc::clone(&ups);
        let flapper = std::thread::spawn(move || {
            let seen = || seen.load(std::sync::atomic::Ordering::SeqCst);
            for i in 0..30 {
                let before = seen();
                writer.publish(&req("flap"), crate::unix_now()).unwrap();
                if i % 10 == 0 {
                    // Now and then the record stays up until the watcher
                    // reported an `up`, so that one is seen however loaded
                    // the machine.
                    let deadline = Instant::now() + PATIENCE;
                    while seen() == before {
                        assert!(Instant::now() < deadline, "no `up` reported");
                        std::thread::sleep(Duration::from_millis(5));
                    }
                } else {
                    // Mostly faster than the watcher's coalescing.
                    std::thread::sleep(Duration::from_millis(7));
                }
                writer.clear(Some("flap"), None, crate::unix_now()).unwrap();
                std::thread::sleep(Duration::from_millis(7));
            }
        });
        let mut events: Vec<String> = Vec::new();
        let record = |events: &mut Vec<String>, more: Vec<String>| {
            events.extend(more);
            let n = events.iter().filter(|e| e.starts_with("up ")).count();
            ups.store(n, std::sync::atomic::Ordering::SeqCst);
        };
        while !flapper.is_finished() {
            record(
                &mut events,
                collect_until(&mut w, 1, Duration::from_millis(100)),
            );
        }
        flapper.join().unwrap();
        // The last write was a clear: whatever is still up goes down.
        let deadline = Instant::now() + PATIENCE;
        while !w.live().is_empty() {
            assert!(Instant::now() < deadline, "still up: {events:?}");
            record(
                &mut events,
                collect_until(&mut w, 1, Duration::from_millis(100)),
            );
        }
        assert!(!events.is_empty());
        for pair in events.chunks(2) {
            assert_eq!(pair[0], "up flap@a", "{events:?}");
            assert_eq!(
                pair.get(1).map(String::as_str),
                Some("down flap@a Cleared"),
                "{events:?}"
            );
        }
    }

    #[test]
    fn a_deleted_directory_is_an_error_after_retries() {
        let d = devices();
        let mut w = Watcher::new(d.b.clone(), WatchOptions::default(), crate::unix_now()).unwrap();
        std::fs::remove_dir_all(&d.b.profile().dir).unwrap();
        let deadline = Instant::now() + PATIENCE;
        let err = loop {
            match w.next_events(Duration::from_millis(50), crate::unix_now) {
                Err(e) => break e,
                Ok(_) => assert!(
                    Instant::now() < deadline,
                    "no error for a deleted directory"
                ),
            }
        };
        assert!(err.to_string().contains("disappeared"), "{err}");
    }

    /// Reads every file in `dir` from another process, as a reader (`list`,
    /// `cat`, a backup) would.
    fn read_all_elsewhere(dir: &Path) {
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg("cat -- \"$1\"/*.json > /dev/null")
            .arg("sh")
            .arg(dir)
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for events until a wait of `quiet` brings none.
    fn settle(w: &mut Watcher, quiet: Duration) {
        while !w.next_events(quiet, crate::unix_now).unwrap().is_empty() {}
    }

    /// Waits until the watcher's live set, each row seen through `key`, is
    /// what `list` on `reg` says; then, once the watcher has had nothing more
    /// to say for a while, checks that it still is. Returns `list`'s rows.
    fn agree<K: PartialEq + std::fmt::Debug>(
        w: &mut Watcher,
        reg: &Registry,
        step: &str,
        key: impl Fn(&Row) -> K,
    ) -> Vec<K> {
        let both = |w: &Watcher| {
            let listed = reg
                .list(crate::registry::ListOptions::default(), crate::unix_now())
                .unwrap();
            let want: Vec<K> = listed.rows.iter().map(&key).collect();
            let got: Vec<K> = w.live().iter().map(&key).collect();
            (got, want)
        };
        let deadline = Instant::now() + PATIENCE;
        loop {
            let (got, want) = both(w);
            if got == want {
                break;
            }
            if Instant::now() >= deadline {
                assert_eq!(got, want, "after: {step} (waited {PATIENCE:?})");
            }
            w.next_events(Duration::from_millis(50), crate::unix_now)
                .unwrap();
        }
        settle(w, Duration::from_millis(300));
        let (got, want) = both(w);
        assert_eq!(got, want, "after: {step}");
        want
    }

    fn idle_then_one_change(poll: Option<Duration>) {
        let d = devices();
        for i in 0..50 {
            d.a.publish(&req(&format!("s{i}")), crate::unix_now())
                .unwrap();
        }
        let opts = WatchOptions {
            poll,
            ..WatchOptions::default()
        };
        let mut w = Watcher::new(d.b.clone(), opts, crate::unix_now()).unwrap();
        assert_eq!(w.live().len(), 50);
        let start = w.stats();
        assert_eq!((start.rescans, start.files_read), (1, 50), "{start:?}");

        read_all_elsewhere(&d.b.profile().dir);
        for e in std::fs::read_dir(&d.b.profile().dir).unwrap() {
            std::fs::read(e.unwrap().path()).unwrap();
        }
        // Ten waits, each long enough for any wake-up (and, polling, a poll).
        for _ in 0..10 {
            let events = w
                .next_events(Duration::from_millis(150), crate::unix_now)
                .unwrap();
            assert!(events.is_empty(), "{events:?}");
        }
        let idle = w.stats();
        assert_eq!(idle.files_read, start.files_read, "reads read: {idle:?}");
        if poll.is_none() {
            assert_eq!(idle, start, "reads woke the watcher");
        } else {
            assert!(idle.rescans > start.rescans, "no poll happened: {idle:?}");
        }

        let mut changed = req("s7");
        changed.status = Some("working".into());
        d.a.publish(&changed, crate::unix_now()).unwrap();
        assert_eq!(collect(&mut w, 1), ["update s7@a status"]);
        let after = w.stats();
        assert_eq!(after.files_read, idle.files_read + 1, "{after:?}");
        if poll.is_none() {
            assert_eq!(after.rescans, idle.rescans, "{after:?}");
        }
    }

    #[test]
    fn reads_never_wake_the_watcher_and_a_change_rereads_one_file() {
        idle_then_one_change(None);
    }

    #[test]
    fn a_poll_reads_only_the_file_that_changed() {
        idle_then_one_change(Some(Duration::from_millis(100)));
    }

    /// After every step the watcher's live set is exactly what `list` says.
    fn agrees_with_list(poll: Option<Duration>) {
        let d = devices();
        let dir = d.b.profile().dir.clone();
        let opts = WatchOptions {
            poll,
            quiet: Duration::from_millis(5),
            max_delay: Duration::from_millis(50),
            ..WatchOptions::default()
        };
        let mut w = Watcher::new(d.b.clone(), opts, crate::unix_now()).unwrap();
        let check = |w: &mut Watcher, step: &str| {
            agree(w, &d.b, step, |r| (r.file.clone(), r.record.status.clone()));
        };
        let mut run1 = req("run1");
        run1.endpoint = Some("tmux://h/main".into());
        d.a.publish(&run1, crate::unix_now()).unwrap();
        d.a.publish(&req("solo"), crate::unix_now()).unwrap();
        check(&mut w, "two records");

        // A conflict copy, newer than its original: it wins the group.
        let original = d.a.list(Default::default(), crate::unix_now()).unwrap();
        let solo = original.rows.iter().find(|r| r.record.session_id == "solo");
        let mut copy = solo.unwrap().record.clone();
        copy.status = "from-the-copy".into();
        copy.updated_at = copy.updated_at.map(|u| u + 1.0);
        let copy_name = solo
            .unwrap()
            .file
            .replace(".json", ".sync-conflict-20261130-101112-ABCDEFG.json");
        std::fs::write(dir.join(&copy_name), copy.to_json()).unwrap();
        check(&mut w, "a newer conflict copy");

        // The copy goes: the unchanged original wins again.
        std::fs::remove_file(dir.join(&copy_name)).unwrap();
        check(&mut w, "the copy deleted");

        // A successor on the same endpoint, from the other device.
        let mut run2 = req("run2");
        run2.endpoint = Some("tmux://h/main".into());
        d.b.publish(&run2, crate::unix_now()).unwrap();
        check(&mut w, "a successor");

        // Another label's record is not shown; a tombstone ends a session.
        let mut other = Record::new("other-label");
        other.profile = "work".into();
        other.updated_at = Some(crate::unix_now());
        other.expires_at = Some(crate::unix_now() + 90.0);
        std::fs::write(dir.join("x.other-label.json"), other.to_json()).unwrap();
        d.a.clear(Some("solo"), None, crate::unix_now()).unwrap();
        check(&mut w, "another label, and a tombstone");

        // Garbage, a record rewritten in place, a file renamed away.
        std::fs::write(dir.join("junk.json"), b"{not json").unwrap();
        let run2_file = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .find(|n| n.ends_with(".run2.json"))
            .unwrap();
        let mut text = std::fs::read_to_string(dir.join(&run2_file)).unwrap();
        text = text.replace("\"idle\"", "\"edited\"");
        std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(dir.join(&run2_file))
            .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
            .unwrap();
        check(&mut w, "garbage and an edit in place");
        std::fs::rename(dir.join(&run2_file), dir.join("moved.txt")).unwrap();
        check(&mut w, "the successor renamed away");
    }

    #[test]
    fn the_live_set_is_what_list_says_with_native_events() {
        agrees_with_list(None);
    }

    #[test]
    fn the_live_set_is_what_list_says_when_polling() {
        agrees_with_list(Some(Duration::from_millis(100)));
    }

    /// A profile that reads two directories: device a writes to the first,
    /// device c to the second, which does not exist when the watch starts.
    fn two_directories_agree_with_list(poll: Option<Duration>) {
        let d = devices();
        let shared = d.a.profile().dir.clone();
        let other = shared.with_file_name("other");
        let mut profile = d.b.profile().clone();
        profile.dirs = vec![shared.clone(), other.clone()];
        let m = Registry::new(profile, d.b.local().clone()).with_host("m");
        let mut c_profile = d.a.profile().clone();
        (c_profile.dir, c_profile.dirs) = (other.clone(), vec![other.clone()]);
        let c_local = LocalDirs::under(&shared.with_file_name("c"));
        let c = Registry::new(c_profile, c_local).with_host("c");
        let opts = WatchOptions {
            poll,
            quiet: Duration::from_millis(5),
            max_delay: Duration::from_millis(50),
            // So that the directory made later is found soon.
            rescan: Duration::from_millis(200),
            ..WatchOptions::default()
        };
        let mut w = Watcher::new(m.clone(), opts, crate::unix_now()).unwrap();
        let check = |w: &mut Watcher, step: &str| {
            agree(w, &m, step, |r| {
                (r.file.clone(), r.dir_index, r.record.status.clone())
            })
        };
        d.a.publish(&req("s1"), crate::unix_now()).unwrap();
        assert_eq!(
            check(&mut w, "one record, the other directory missing").len(),
            1
        );
        crate::store::ensure_dir(&other).unwrap();
        c.publish(&req("s2"), crate::unix_now()).unwrap();
        let rows = check(&mut w, "the other directory made, with a record");
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert!(rows.iter().any(|r| r.1 == 1), "{rows:?}");

        // The same file in both: one row, from the first directory.
        let s1 =
            d.a.list(Default::default(), crate::unix_now())
                .unwrap()
                .rows;
        let name = s1[0].file.clone();
        std::fs::copy(shared.join(&name), other.join(&name)).unwrap();
        let rows = check(&mut w, "a copy in the other directory");
        assert_eq!(rows.iter().filter(|r| r.0 == name).count(), 1);
        assert!(rows.iter().any(|r| r.0 == name && r.1 == 0), "{rows:?}");
        // Newer there: it wins; gone again: the first one is back.
        let mut newer = s1[0].record.clone();
        newer.status = "newer".into();
        newer.seq += 1;
        std::fs::write(other.join(&name), newer.to_json()).unwrap();
        let rows = check(&mut w, "a newer copy in the other directory");
        assert!(rows.iter().any(|r| r.0 == name && r.1 == 1), "{rows:?}");
        std::fs::remove_file(other.join(&name)).unwrap();
        let rows = check(&mut w, "the newer copy deleted");
        assert!(rows.iter().any(|r| r.0 == name && r.1 == 0), "{rows:?}");

        // A tombstone in the other directory ends a session.
        c.clear(Some("s2"), None, crate::unix_now()).unwrap();
        assert_eq!(check(&mut w, "s2 cleared").len(), 1);
    }

    #[test]
    fn two_directories_with_native_events() {
        two_directories_agree_with_list(None);
    }

    #[test]
    fn two_directories_when_polling() {
        two_directories_agree_with_list(Some(Duration::from_millis(100)));
    }

    #[test]
    fn a_replaced_directory_is_watched_anew() {
        let d = devices();
        let dir = d.b.profile().dir.clone();
        d.a.publish(&req("before"), crate::unix_now()).unwrap();
        let mut w = Watcher::new(d.b.clone(), WatchOptions::default(), crate::unix_now()).unwrap();
        // A sync engine swaps the directory for a new one.
        let new = dir.with_file_name("shared.new");
        std::fs::create_dir(&new).unwrap();
        std::fs::rename(&dir, dir.with_file_name("shared.old")).unwrap();
        std::fs::rename(&new, &dir).unwrap();
        assert_eq!(collect(&mut w, 1), ["down before@a Cleared"]);
        // Events come from the new directory.
        d.a.publish(&req("after"), crate::unix_now()).unwrap();
        assert_eq!(collect(&mut w, 1), ["up after@a"]);
    }
}
