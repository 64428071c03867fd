//! `list`: the slot fast path (every file probed into 48 bytes, groups
//! decided by sorting, winners parsed as their turn comes) and `list --all`.

use std::path::PathBuf;

use crate::clock::Clocks;
use crate::dedupe::{self, Digest, LossReason, Reducer};
use crate::error::Result;
use crate::liveness::State;
use crate::record::Probe;
use crate::registry::change::Own;
use crate::scan_cache;
use crate::store::{self, Entry, NameKind, Skipped};

use super::read::{self, Pass};
use super::{Listing, Registry, Row, listing_order};

/// What `list` includes.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct ListOptions {
    /// Also groups whose newest record is not live (marked `live: false`).
    pub include_expired: bool,
    /// Every record: also the losers of dedupe, each with why it lost.
    pub all: bool,
    /// Every label in the directory, whatever the profile's `show` says.
    pub all_profiles: bool,
}

impl Registry {
    /// Lists the directory at `now`: deduped, live only unless the options
    /// say otherwise, in [`Row::listing_order`] (newest start first).
    /// Records are redacted for display.
    pub fn list(&self, opts: ListOptions, now: f64) -> Result<Listing> {
        if opts.all {
            return self.list_all(opts, now);
        }
        let mut rows = Vec::new();
        let (dir_exists, skipped) = self.list_each(opts, now, |row| {
            rows.push(row);
            true
        })?;
        Ok(Listing {
            dir_exists,
            rows,
            skipped,
        })
    }

    /// Like [`list`](Self::list) without `all`, but hands the rows to `each`
    /// one at a time, in [`Row::listing_order`], parsing each record only
    /// when its turn comes, so that memory follows the directory's groups
    /// rather than the rows (a listing can be streamed out). `each` returns `false` to stop.
    /// Returns whether the directory exists (for a profile that reads
    /// several, whether every one does) and the files passed over (named by
    /// their paths when there are several directories).
    pub fn list_each(
        &self,
        opts: ListOptions,
        now: f64,
        mut each: impl FnMut(Row) -> bool,
    ) -> Result<(bool, Vec<Skipped>)> {
        let mut known = None;
        loop {
            match self.list_once(opts, now, known.take(), &mut each)? {
                Once::Done(exists, skipped) => return Ok((exists, skipped)),
                // This read gave a writer its first clock estimate: read
                // again through it (at most once: a pass given its clocks
                // never asks again).
                Once::Again(clocks) => known = Some(clocks),
            }
        }
    }

    /// Reads every record file of the directories once, as `list` does,
    /// only to learn every writer's clock (see the clock rules in
    /// docs/syncthing.md), and lists nothing. The refresher does it at
    /// every pass, so that the first `list` after a device joined already
    /// judges that device's records through its clock: with no estimate
    /// yet, a record from a clock more than the skew tolerance behind reads
    /// as expired.
    pub fn learn_clocks(&self, now: f64) -> Result<()> {
        let opts = ListOptions {
            all_profiles: true,
            ..ListOptions::default()
        };
        self.list_each(opts, now, |_| false).map(|_| ())
    }

    /// One read of [`list_each`](Self::list_each), through the clocks
    /// `known` (else those on disk). Without `known`, a read that gives a
    /// writer its first estimate hands the clocks back before any row is
    /// made, to be read again through them.
    fn list_once(
        &self,
        opts: ListOptions,
        now: f64,
        known: Option<Clocks>,
        each: &mut impl FnMut(Row) -> bool,
    ) -> Result<Once> {
        let dirs = self.open_dirs()?;
        let owns = self.owns(&dirs)?;
        let show = self.show_set(opts.all_profiles);
        let may_ask = known.is_none();
        // Each file is probed for the few fields dedupe and liveness need
        // and becomes a 48-byte slot; only a file that may be listed keeps
        // its bytes, in its thread's buffer. The groups are then decided by
        // sorting the slots, and only the winners are fully parsed, as their
        // turn comes. Memory follows the files that can still win, not the
        // directory's bytes. A profile that reads several directories puts
        // the slots of all of them into the one decision, each slot carrying
        // its directory's index.
        let mut learned = Clocks::default();
        let mut all_exist = true;
        let mut skipped = Vec::new();
        // The files of each directory, and its scan cache if it has one and
        // is large enough to gain from it (see scan_cache.rs).
        let mut listed_names = Vec::with_capacity(dirs.len());
        for dir in &dirs {
            listed_names.push(dir.candidates()?);
        }
        let counts: Vec<usize> = listed_names.iter().map(|(n, _)| n.len()).collect();
        let (caching, caches) = self.scan_caches(&dirs, &counts);
        // Begun once the caches are read: a cache's digests are keyed by its
        // own key, which the process takes from it (see `dedupe::digest_key`),
        // and the pass digests the lives this device ended.
        let pass = match known {
            Some(known) => Pass::begin_with(self, show, &owns, known),
            None => Pass::begin(self, show, &owns),
        };
        // Every thread hands its slots over in small batches to one vector
        // made once at the size of the directories: no thread's vector
        // grows to its share, and none is copied when they are joined.
        let shared = std::sync::Mutex::new(Vec::with_capacity(counts.iter().sum()));
        let key = dedupe::digest_key();
        // From this machine's clock, whatever `now` the caller judges at.
        let settled = crate::local::unix_now() - scan_cache::SETTLE_S;
        let mut scans: Vec<(store::Names, Vec<Part<'_>>)> = Vec::with_capacity(dirs.len());
        for (at, (dir, (names, mut report))) in dirs.iter().zip(listed_names).enumerate() {
            let cache = caches.get(at).and_then(Option::as_ref);
            let cache_to = caching.get(at).and_then(Option::as_ref);
            let lookup = cache.map(|c| c.index(&names));
            let part = std::sync::atomic::AtomicU8::new(0);
            let init = || Part {
                id: part.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                ..Part::default()
            };
            // What a file says, from the cache or from its probe.
            let pass = &pass;
            let judge = |learned: &mut Clocks, f: &dedupe::Facts<&str>, ctime| {
                pass.judge(learned, f, ctime, now)
            };
            let listable = |state: State| opts.include_expired || state == State::Live;
            let slot =
                |f: &dedupe::Facts<&str>, file: u32, kept: u32, part: u8, state| dedupe::Slot {
                    group: f.group,
                    life: f.life,
                    updated: f.updated.unwrap_or(f64::NEG_INFINITY),
                    seq: f.seq,
                    file,
                    kept,
                    dir: at as u32,
                    part,
                    ended: f.ended,
                    state,
                };
            // A file the cache knows in this very version is judged from
            // what the cache says, and read again only if it wins.
            let known = knows(|p, k| {
                let (f, stamp) = (k.facts, k.stamp);
                p.hits.push(k.entry as u32);
                if let Some(state) = judge(&mut p.learned, &f, stamp.ctime()) {
                    let kept = if listable(state) {
                        p.hold(Held::Reread {
                            stamp,
                            started_at: f.started,
                            session_id: f.session,
                        })
                    } else {
                        u32::MAX
                    };
                    p.push(&shared, slot(&f, k.file, kept, p.id, state));
                }
            });
            let probed = |p: &mut Part<'_>, r: read::Probed<'_>| {
                let (f, raw) = (r.facts, r.raw);
                if cache_to.is_some() && raw.ctime < settled {
                    let name = scan_cache::name_hash(key, raw.file);
                    let version = scan_cache::FileKey::of(&raw.stamp);
                    p.fresh.push(scan_cache::Fresh::new(name, version, &f));
                }
                if let Some(state) = judge(&mut p.learned, &f, raw.ctime) {
                    let kept = if listable(state) {
                        p.keep(raw.bytes, raw.stamp)
                    } else {
                        u32::MAX
                    };
                    p.push(&shared, slot(&f, r.file, kept, p.id, state));
                }
            };
            let mut parts = read::each_file(
                dir,
                &names,
                &mut report,
                lookup.as_ref(),
                init,
                known,
                probed,
            );
            parts.sort_by_key(|p| p.id);
            let mut fresh = Vec::new();
            let mut hits = vec![false; cache.map_or(0, scan_cache::Cache::len)];
            for p in &mut parts {
                learned.merge(&p.learned, now);
                p.flush(&shared);
                fresh.append(&mut p.fresh);
                for &i in &p.hits {
                    if let Some(h) = hits.get_mut(i as usize) {
                        *h = true;
                    }
                }
                p.hits = Vec::new();
            }
            // Written again when it learned something or lost an entry —
            // but in a busy directory, where every listing finds changes,
            // at most every REWRITE_AFTER unless a tenth of it changed: a
            // file the cache does not know yet is only read, as without it.
            // A failure to write is not the listing's (it is made again).
            let changed = fresh.len() + hits.iter().filter(|h| !**h).count();
            let rewrite = match cache {
                None => true,
                Some(c) => {
                    changed > 0
                        && (changed * 10 >= c.len().max(1)
                            || cache_to.is_some_and(|(path, _)| {
                                scan_cache::older_than(path, scan_cache::REWRITE_AFTER)
                            }))
                }
            };
            if let Some((path, id)) = cache_to
                && rewrite
            {
                let _ = scan_cache::save(path, *id, key, cache, &hits, fresh);
            }
            all_exist &= report.exists;
            skipped.extend(self.qualify(at, report.skipped));
            scans.push((names, parts));
        }
        let mut slots = shared.into_inner().unwrap_or_else(|e| e.into_inner());
        pass.end(self, &learned, now);
        if may_ask && let Some(clocks) = pass.first_estimates(&learned, now) {
            return Ok(Once::Again(clocks));
        }
        let name_of = |s: &dedupe::Slot| {
            scans
                .get(s.dir as usize)
                .map_or("", |(names, _)| names.get(s.file as usize).0)
        };
        let mut winners = Vec::new();
        dedupe::decide_slots(&mut slots, name_of, |d| {
            if opts.include_expired || d.state == State::Live {
                winners.push(d);
            }
        });
        // The listing order's keys, probed again from the kept bytes.
        let mut order: Vec<Listed<'_>> = Vec::with_capacity(winners.len());
        for d in winners {
            let slot = &slots[d.winner];
            let at = slot.dir as usize;
            let Some((names, parts)) = scans.get(at) else {
                continue;
            };
            let Some(held) = parts
                .get(slot.part as usize)
                .and_then(|p| p.held(slot.kept))
            else {
                continue;
            };
            let (file, kind) = names.get(slot.file as usize);
            let (started_at, session_id, bytes, stamp) = match held {
                Held::Bytes(start, len, stamp) => {
                    let Some(bytes) = parts[slot.part as usize].bytes.get(start..start + len)
                    else {
                        continue;
                    };
                    let Ok(probe) = Probe::parse(bytes) else {
                        continue;
                    };
                    (
                        probe.started_at,
                        probe.into_session_id(),
                        Some(bytes),
                        stamp,
                    )
                }
                Held::Reread {
                    stamp,
                    started_at,
                    session_id,
                } => (started_at, session_id.into(), None, stamp),
            };
            order.push(Listed {
                started_at,
                session_id,
                file,
                kind,
                at,
                bytes,
                stamp,
                group: slot.group,
                life: slot.life,
                state: d.state,
            });
        }
        drop(slots);
        order.sort_by(|a, b| {
            listing_order(
                (a.started_at, &a.session_id, a.file),
                (b.started_at, &b.session_id, b.file),
            )
            .then(a.at.cmp(&b.at))
        });
        let make = |l: &Listed<'_>| {
            let entry = match l.bytes {
                Some(bytes) => store::Raw {
                    file: l.file,
                    kind: l.kind,
                    ctime: l.stamp.ctime(),
                    stamp: l.stamp,
                    bytes,
                }
                // The bytes judged: their verdict counted.
                .parse_judged(),
                // Judged from the scan cache: read now.
                None => match dirs[l.at].read_entry_judged(l.file, Some(l.stamp)) {
                    Ok(Some(e)) => Ok(e),
                    Ok(None) => return None,
                    Err(reason) => Err(reason),
                },
            };
            let entry = match entry {
                Ok(e) => e,
                Err(reason) => {
                    let file = l.file.to_owned();
                    return Some(Err((l.at, store::Skipped { file, reason })));
                }
            };
            let mut state = l.state;
            if scan_cache::FileKey::of(&entry.stamp) != scan_cache::FileKey::of(&l.stamp) {
                // Rewritten since it was judged (a refresh): listed as it is
                // now if it is still a copy of that life and listable itself.
                let (group, life, copy) =
                    pass.describe::<()>(&entry.record, l.file, entry.ctime, now);
                // A new life of the session (restarted) speaks for the
                // group as well as the old one did.
                if group != l.group || !(opts.include_expired || copy.state == State::Live) {
                    return None;
                }
                if life != l.life || copy.state != State::Live {
                    state = copy.state;
                }
            }
            let mut row = self.row(entry, l.at, &owns[l.at], now, &pass);
            row.mark_life(state);
            Some(Ok(row))
        };
        in_order(&order, make, |made| match made {
            None => true,
            Some(Ok(row)) => each(row),
            Some(Err((at, s))) => {
                skipped.extend(self.qualify(at, vec![s]));
                true
            }
        });
        Ok(Once::Done(all_exist, skipped))
    }

    /// For each of `dirs` (holding `counts` record files): where its scan
    /// cache lives and the directory's identity, if it is to have one, and
    /// the cache as read, if it can be used (see scan_cache.rs).
    #[allow(clippy::type_complexity)]
    pub(crate) fn scan_caches(
        &self,
        dirs: &[store::Dir],
        counts: &[usize],
    ) -> (
        Vec<Option<(PathBuf, (u64, u64))>>,
        Vec<Option<scan_cache::Cache>>,
    ) {
        let caching: Vec<Option<(PathBuf, (u64, u64))>> = dirs
            .iter()
            .zip(counts)
            .map(|(dir, &count)| {
                let wanted = match std::env::var("PRESENCE_SCAN_CACHE").as_deref() {
                    Ok("off") => false,
                    Ok("on") => true,
                    _ => count >= scan_cache::CACHE_FROM && dir.local_ctimes(),
                };
                let id = dir.identity().filter(|_| wanted)?;
                let path = scan_cache::path_for(&self.local.state, dir.canonical()?);
                Some((path, id))
            })
            .collect();
        let caches = caching
            .iter()
            .map(|c| {
                let (path, id) = c.as_ref()?;
                scan_cache::Cache::load(path, *id).filter(|c| dedupe::use_digest_key(c.key()))
            })
            .collect();
        (caching, caches)
    }

    /// `list --all`: every record, each group's losers after its winner.
    fn list_all(&self, opts: ListOptions, now: f64) -> Result<Listing> {
        let dirs = self.open_dirs()?;
        let owns = self.owns(&dirs)?;
        let pass = Pass::begin(self, self.show_set(opts.all_profiles), &owns);
        let mut learned = Clocks::default();
        let mut entries = Vec::new();
        let mut all_exist = true;
        let mut skipped = Vec::new();
        for (at, dir) in dirs.iter().enumerate() {
            let scan = dir.scan()?;
            all_exist &= scan.exists;
            skipped.extend(self.qualify(at, scan.skipped));
            for e in scan.entries {
                if pass.judge_record(&mut learned, &e, now).is_some() {
                    entries.push((at, e));
                }
            }
        }
        let rows = self.every_row(entries, opts, &owns, now, &pass);
        pass.end(self, &learned, now);
        Ok(Listing {
            dir_exists: all_exist,
            rows,
            skipped,
        })
    }

    /// The rows of `list --all` for `entries` (each with the index of its
    /// directory): each group's winner, then its losers with why they
    /// lost, groups in listing order.
    pub(super) fn every_row(
        &self,
        entries: Vec<(usize, Entry)>,
        opts: ListOptions,
        owns: &[Own],
        now: f64,
        pass: &Pass,
    ) -> Vec<Row> {
        let mut reducer = Reducer::new(true);
        let mut forged = Vec::new();
        for (at, e) in entries {
            if !e.verdict.counts() {
                // Decides nothing; `--all` shows it on a row of its own.
                if opts.all {
                    let mut row = self.row(e, at, &owns[at], now, pass);
                    // Whatever its times say, it is nobody's live session.
                    row.live = false;
                    forged.push(row);
                }
                continue;
            }
            let (key, life, mut copy) = pass.describe(&e.record, &e.file, e.ctime, now);
            copy.dir = at;
            copy.item = Some(e);
            reducer.add(key, life, copy);
        }
        let mut groups: Vec<Vec<Row>> = Vec::new();
        for group in reducer.finish() {
            if !opts.include_expired && group.state != State::Live && !opts.all {
                continue;
            }
            let at = group.winner.dir;
            let Some(winner) = group.winner.item else {
                continue;
            };
            let winner_file = winner.file.clone();
            let mut row = self.row(winner, at, &owns[at], now, pass);
            row.mark_life(group.state);
            let mut rows = vec![row];
            for (copy, why) in group.losers {
                let at = copy.dir;
                let Some(e) = copy.item else { continue };
                let mut r = self.row(e, at, &owns[at], now, pass);
                if why == LossReason::LifeEnded {
                    r.mark_life(State::Ended);
                }
                r.superseded_by = Some(winner_file.clone());
                r.lost_because = Some(why);
                rows.push(r);
            }
            groups.push(rows);
        }
        groups.extend(forged.into_iter().map(|mut r| {
            r.lost_because = Some(LossReason::Forged);
            vec![r]
        }));
        groups.sort_by(|a, b| a[0].listing_order(&b[0]));
        groups.into_iter().flatten().collect()
    }
}

/// How one read of a listing ended.
enum Once {
    /// Listed: whether every directory exists, and the files passed over.
    Done(bool, Vec<Skipped>),
    /// To be read again through these clocks.
    Again(Clocks),
}

/// What one scan thread of a listing holds: the slots of the files it
/// read, and the bytes of those that may be listed, in one buffer; with a
/// scan cache, what the cache knew and what it will learn.
#[derive(Default)]
struct Part<'c> {
    id: u8,
    slots: Vec<dedupe::Slot>,
    bytes: Vec<u8>,
    held: Vec<Held<'c>>,
    learned: Clocks,
    /// The cache entries that were of use.
    hits: Vec<u32>,
    /// Files probed that the next cache keeps.
    fresh: Vec<scan_cache::Fresh>,
}

/// What a listing holds of a file that may be listed.
#[derive(Debug, Clone, Copy)]
enum Held<'c> {
    /// Its bytes, in its part's buffer (start, length), as read.
    Bytes(usize, usize, store::Stamp),
    /// Judged from the scan cache: read again if it wins.
    Reread {
        stamp: store::Stamp,
        started_at: Option<f64>,
        session_id: &'c str,
    },
}

/// How many slots a scan thread gathers before it hands them over.
const SLOT_BATCH: usize = 256;

impl<'c> Part<'c> {
    /// Adds a slot, handing the gathered ones over to `shared` in batches.
    fn push(&mut self, shared: &std::sync::Mutex<Vec<dedupe::Slot>>, slot: dedupe::Slot) {
        if self.slots.capacity() == 0 {
            self.slots.reserve_exact(SLOT_BATCH);
        }
        self.slots.push(slot);
        if self.slots.len() >= SLOT_BATCH {
            self.flush(shared);
        }
    }

    /// Hands the gathered slots over to `shared`.
    fn flush(&mut self, shared: &std::sync::Mutex<Vec<dedupe::Slot>>) {
        let mut all = shared.lock().unwrap_or_else(|e| e.into_inner());
        all.append(&mut self.slots);
    }

    /// Keeps a file's bytes; returns the handle for [`Part::held`].
    fn keep(&mut self, bytes: &[u8], stamp: store::Stamp) -> u32 {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(bytes);
        self.hold(Held::Bytes(start, bytes.len(), stamp))
    }

    fn hold(&mut self, held: Held<'c>) -> u32 {
        self.held.push(held);
        u32::try_from(self.held.len() - 1).unwrap_or(u32::MAX)
    }

    /// What is held under `handle`.
    fn held(&self, handle: u32) -> Option<Held<'c>> {
        self.held.get(handle as usize).copied()
    }
}

/// Gives a listing's cache lookup its signature: it may hold what it found
/// in the cache for as long as the cache lives (`'c`).
fn knows<'c, F: Fn(&mut Part<'c>, read::Known<'c>)>(f: F) -> F {
    f
}

/// A group's winner, about to be listed.
struct Listed<'a> {
    started_at: Option<f64>,
    session_id: std::borrow::Cow<'a, str>,
    file: &'a str,
    kind: NameKind,
    /// Which of the profile's directories holds it.
    at: usize,
    /// Its bytes; `None` when it was judged from the scan cache.
    bytes: Option<&'a [u8]>,
    stamp: store::Stamp,
    group: Digest,
    life: Digest,
    state: State,
}

/// Below this many rows a listing builds them on the calling thread.
const ROWS_IN_PARALLEL_FROM: usize = 128;

/// Maps `items` through `make` and hands the results to `each` in order,
/// until it returns `false`. Large inputs are made on up to
/// `available_parallelism` threads (at most 4) while `each` consumes them
/// on the calling thread: item `i` is made by thread `i % threads`, each
/// sending down its own bounded channel, so order needs no buffer.
fn in_order<T: Sync, R: Send>(
    items: &[T],
    make: impl Fn(&T) -> R + Sync,
    mut each: impl FnMut(R) -> bool,
) {
    let threads = if items.len() < ROWS_IN_PARALLEL_FROM {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
    };
    if threads == 1 {
        for item in items {
            if !each(make(item)) {
                return;
            }
        }
        return;
    }
    std::thread::scope(|scope| {
        let make = &make;
        let receivers: Vec<_> = (0..threads)
            .map(|k| {
                let (tx, rx) = std::sync::mpsc::sync_channel(64);
                scope.spawn(move || {
                    for item in items.iter().skip(k).step_by(threads) {
                        if tx.send(make(item)).is_err() {
                            // The consumer stopped.
                            return;
                        }
                    }
                });
                rx
            })
            .collect();
        for i in 0..items.len() {
            let Ok(made) = receivers[i % threads].recv() else {
                return;
            };
            if !each(made) {
                return;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{self, Selection};
    use crate::local::LocalDirs;
    use crate::registry::PublishRequest;

    /// Two devices sharing one directory: a writer and a reader.
    fn two(tmp: &std::path::Path) -> (Registry, Registry) {
        let sel = Selection {
            dir: Some(tmp.join("shared")),
            ..Selection::default()
        };
        let reg = |name: &str| {
            let local = LocalDirs::under(&tmp.join(name));
            let (profile, _) = config::resolve(&sel, &local).unwrap();
            Registry::new(profile, local).with_host(name)
        };
        (reg("writer"), reg("reader"))
    }

    #[test]
    fn one_read_that_sees_a_writer_arrive_twice_judges_it_by_its_clock() {
        let tmp = tempfile::tempdir().unwrap();
        let (writer, reader) = two(tmp.path());
        // The writer's clock runs an hour behind; its two sessions arrive
        // (their ctimes, this machine's clock) more than a burst apart.
        let behind = |t: f64| t - 3600.0;
        let mut req = PublishRequest::new("one");
        req.ttl = Some(std::time::Duration::from_secs(60));
        writer
            .publish(&req, behind(crate::local::unix_now()))
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2100));
        req.session_id = "two".into();
        writer
            .publish(&req, behind(crate::local::unix_now()))
            .unwrap();
        // Nobody read the directory before: the first listing learns the
        // writer's clock from both files and lists both through it, not
        // through the skew tolerance (which would call them an hour old).
        let now = crate::local::unix_now();
        let listing = reader.list(ListOptions::default(), now).unwrap();
        let mut live: Vec<&str> = listing
            .rows
            .iter()
            .filter(|r| r.live)
            .map(|r| r.record.session_id.as_str())
            .collect();
        live.sort();
        assert_eq!(live, ["one", "two"]);
        assert!(listing.rows.iter().all(|r| r.writer_offset_s.is_some()));
    }
}
