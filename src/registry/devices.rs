//! `devices`: every writer seen in the directories, and its clock.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use crate::clock::Clocks;
use crate::config::ShowSet;
use crate::dedupe::{Digest, Facts, FileCopy, LossReason, Reducer};
use crate::error::Result;
use crate::liveness::{self, State};
use crate::scan_cache;
use crate::store::{Entry, Stamp};

use super::read::{self, Pass};
use super::{Registry, round_ms};

/// One device seen in the directory, and what this machine knows of its clock.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Device {
    /// Its `device_id` (empty for writers that stamp none).
    pub device_id: String,
    /// The hosts its records name.
    pub hosts: Vec<String>,
    /// The instance ids its records name.
    pub instances: Vec<String>,
    /// Records of it in the directory (every label, live or not; forged
    /// ones not counted).
    pub records: usize,
    /// Of them, live.
    pub live: usize,
    /// The fingerprint of its public key (`SHA256:…`, as `ssh-keygen -l`
    /// shows one), from its verified records; null for a device that does
    /// not sign.
    pub fingerprint: Option<String>,
    /// Of its records, those whose signature proves its id.
    pub verified: usize,
    /// Records that claim its id and do not prove it: another device's
    /// forgeries. They are counted here and decide nothing.
    pub forged: usize,
    /// Whether it is this device (it wrote a record the ledger knows).
    pub this_device: bool,
    /// Seconds since the newest of its records arrived here (or, for this
    /// device, was written), on this machine's clock.
    pub last_seen_s: f64,
    /// How far its clock runs ahead of ours (negative: behind), as learned;
    /// null while it has no estimate (its times are then read with the skew
    /// tolerance).
    pub offset_s: Option<f64>,
    /// Records that taught the estimate something when they were read
    /// (a new minute of arrivals, a later arrival, a higher sample).
    pub samples: u64,
    /// No sample arrived within the last 10 minutes: the estimate is the
    /// last one learned, kept.
    pub stale: bool,
}

impl Registry {
    /// Every device with a record in the directory (every label), with what
    /// this machine has learned of its clock, most records first.
    pub fn devices(&self, now: f64) -> Result<Vec<Device>> {
        let census = self.census(now, Wants::default())?;
        let clocks = self.local.clocks();
        let mut by_id: BTreeMap<&str, Device> = BTreeMap::new();
        let mut hosts: BTreeMap<&str, (BTreeSet<&str>, BTreeSet<&str>)> = BTreeMap::new();
        // A verified file of each device, whose key is its fingerprint's.
        let mut keyed: BTreeMap<&str, (usize, u32)> = BTreeMap::new();
        for f in &census.files {
            let id = census.string(f.device);
            let d = by_id.entry(id).or_insert_with(|| {
                let estimate = clocks.estimate(id, now);
                Device {
                    device_id: id.to_string(),
                    hosts: Vec::new(),
                    instances: Vec::new(),
                    records: 0,
                    live: 0,
                    fingerprint: None,
                    verified: 0,
                    forged: 0,
                    this_device: false,
                    last_seen_s: f64::INFINITY,
                    offset_s: estimate.map(|e| round_ms(e.offset)),
                    samples: estimate.map_or(0, |e| e.samples),
                    stale: estimate.is_some_and(|e| e.stale),
                }
            });
            let age = census.age_s(f, now);
            if f.verdict.forgery().is_some() {
                d.forged += 1;
                // Forgeries say when the id was last seen only while no
                // record of its own does.
                if d.records == 0 {
                    d.last_seen_s = d.last_seen_s.min(age);
                }
                continue;
            }
            if d.records == 0 {
                d.last_seen_s = f64::INFINITY;
            }
            if f.verdict.verified() {
                d.verified += 1;
                keyed.entry(id).or_insert((f.dir, f.file));
            }
            d.records += 1;
            d.live += usize::from(f.live);
            d.this_device |= f.local;
            d.last_seen_s = d.last_seen_s.min(age);
            let (h, i) = hosts.entry(id).or_default();
            h.insert(census.string(f.host));
            i.insert(census.string(f.instance));
        }
        for (id, d) in &mut by_id {
            if let Some((h, i)) = hosts.remove(id) {
                d.hosts = h.into_iter().map(str::to_string).collect();
                d.instances = i.into_iter().map(str::to_string).collect();
            }
            if let Some(&(at, file)) = keyed.get(id) {
                d.fingerprint = census
                    .read(at, file)
                    .and_then(|e| crate::identity::fingerprint(&e.record.key));
            }
        }
        let mut out: Vec<Device> = by_id.into_values().collect();
        out.sort_by(|a, b| {
            b.records
                .cmp(&a.records)
                .then(a.device_id.cmp(&b.device_id))
        });
        Ok(out)
    }

    /// Every record file of the directories, every label, live or not, as
    /// `devices` and `doctor` count them: what `list --all --include-expired
    /// --all-profiles` would make a row of, without making the rows. Each
    /// file is taken from the scan cache in the version it knows, or read
    /// and probed (as `list` reads them), and the groups are decided as
    /// `list --all` decides them; only the files this device's ledger names,
    /// and those whose host or instance is too long to be kept whole, are
    /// read in full.
    pub(crate) fn census(&self, now: f64, wants: Wants) -> Result<Census> {
        let dirs = self.open_dirs()?;
        let owns = self.owns(&dirs)?;
        // Each directory's files and scan cache, read before the pass
        // begins (see `list_once`).
        let mut listed = Vec::with_capacity(dirs.len());
        for dir in &dirs {
            let (names, report) = dir.candidates()?;
            let (caching, caches) = self.scan_caches(std::slice::from_ref(dir), &[names.len()]);
            let cache_to = caching.into_iter().next().flatten();
            listed.push((names, report, cache_to, caches.into_iter().next().flatten()));
        }
        let pass = Pass::begin(self, ShowSet::All, &owns);
        let mut census = Census::default();
        let mut learned = Clocks::default();
        let mut strings: HashMap<String, u32> = HashMap::new();
        census.exists = true;
        let digest_key = crate::dedupe::digest_key();
        // From this machine's clock, whatever `now` the caller judges at.
        let settled = crate::local::unix_now() - scan_cache::SETTLE_S;
        for (at, (dir, (names, mut report, cache_to, cache))) in dirs.iter().zip(listed).enumerate()
        {
            let cache = cache.as_ref();
            // With `secrets`, what is learned is written to the cache.
            let cache_to = cache_to.as_ref().filter(|_| wants.secrets);
            let lookup = cache.map(|c| c.index(&names));
            let seen = |part: &mut Part, file: u32, f: &Facts<&str>, ctime: f64| {
                pass.judge(&mut part.learned, f, ctime, now);
                let own_state =
                    liveness::state_of(f.times(), ctime, now, pass.clock(f.device, now));
                let mut intern = |s: &str| part.intern(s);
                let (device, host, instance) =
                    (intern(f.device), intern(f.host), intern(f.instance));
                part.files.push(Counted {
                    dir: at,
                    file,
                    device,
                    host,
                    instance,
                    verdict: f.verdict,
                    ctime,
                    updated: f.updated,
                    expires: f.expires,
                    live: own_state == State::Live,
                    state: own_state,
                    local: false,
                    secrets: None,
                    long: f.long,
                });
                part.decide.push(Decided {
                    group: f.group,
                    life: f.life,
                    seq: f.seq,
                    ended: f.ended,
                    state: if pass.ended_here(f.life) {
                        State::Ended
                    } else {
                        own_state
                    },
                });
            };
            // Whether a record shown as a row would show credentials
            // redacted; `None` for a forged one, which no row shows.
            let carries = |f: &Facts<&str>, bytes: &[u8]| {
                if !wants.secrets || f.verdict.forgery().is_some() {
                    return None;
                }
                let mut record = crate::record::Record::from_json(bytes).ok()?;
                Some(!crate::redact::redact_record(&mut record).is_empty())
            };
            let parts = read::each_file(
                dir,
                &names,
                &mut report,
                lookup.as_ref(),
                Part::default,
                |part: &mut Part, k: read::Known<'_>| {
                    seen(part, k.file, &k.facts, k.stamp.ctime());
                    part.hits.push(k.entry as u32);
                    let known = lookup.as_ref().and_then(|l| l.secrets(k.entry));
                    if let Some(f) = part.files.last_mut() {
                        f.secrets = known.filter(|_| wants.secrets);
                    }
                    if wants.secrets && known.is_none() && k.facts.verdict.forgery().is_none() {
                        // Read again below, and redacted.
                        let i = part.files.len() - 1;
                        part.pending.push((i, k.entry, k.facts.owned(), k.stamp));
                    }
                },
                |part: &mut Part, p: read::Probed<'_>| {
                    seen(part, p.file, &p.facts, p.raw.ctime);
                    let secrets = carries(&p.facts, p.raw.bytes);
                    if let Some(f) = part.files.last_mut() {
                        f.secrets = secrets;
                    }
                    if cache_to.is_some() && p.raw.ctime < settled {
                        let name = scan_cache::name_hash(digest_key, p.raw.file);
                        let version = scan_cache::FileKey::of(&p.raw.stamp);
                        let mut fresh = scan_cache::Fresh::new(name, version, &p.facts);
                        fresh.secrets = secrets;
                        part.fresh.push(fresh);
                    }
                },
            );
            census.exists &= report.exists;
            census.skipped.extend(self.qualify(at, report.skipped));
            let mut hits = vec![false; cache.map_or(0, scan_cache::Cache::len)];
            let mut fresh = Vec::new();
            let mut pending = Vec::new();
            for part in parts {
                learned.merge(&part.learned, now);
                let remap: Vec<u32> = part
                    .strings
                    .into_iter()
                    .map(|s| census.intern(&mut strings, s))
                    .collect();
                let base = census.files.len();
                for (mut f, d) in part.files.into_iter().zip(part.decide) {
                    f.device = remap[f.device as usize];
                    f.host = remap[f.host as usize];
                    f.instance = remap[f.instance as usize];
                    census.files.push(f);
                    census.decide.push(d);
                }
                for &e in &part.hits {
                    if let Some(h) = hits.get_mut(e as usize) {
                        *h = true;
                    }
                }
                fresh.extend(part.fresh);
                pending.extend(
                    part.pending
                        .into_iter()
                        .map(|(i, entry, facts, stamp)| (base + i, entry, facts, stamp)),
                );
            }
            // The files the cache knew without knowing whether they carry
            // credentials: read and redacted now, on the scan's threads.
            let wanted: Vec<Box<str>> = pending
                .iter()
                .map(|(i, ..)| Box::from(names.get(census.files[*i].file as usize).0))
                .collect();
            let found = dir.read_each(
                &wanted,
                Vec::new,
                |out: &mut Vec<(Box<str>, Stamp, Option<bool>)>, name, outcome| {
                    if let Ok(Some((stamp, bytes))) = outcome {
                        let carries = crate::record::Record::from_json(bytes)
                            .ok()
                            .map(|mut r| !crate::redact::redact_record(&mut r).is_empty());
                        out.push((name.into(), stamp, carries));
                    }
                },
            );
            let found: HashMap<Box<str>, (Stamp, Option<bool>)> = found
                .into_iter()
                .flatten()
                .map(|(name, stamp, carries)| (name, (stamp, carries)))
                .collect();
            for ((i, entry, facts, stamp), name) in pending.into_iter().zip(wanted) {
                let Some(&(read, carries)) = found.get(&name) else {
                    continue;
                };
                census.files[i].secrets = carries;
                // Kept for the next census only if it is the version the
                // cache knew (the facts are that version's).
                if read == stamp && cache_to.is_some() {
                    let mut f = scan_cache::Fresh::new(
                        scan_cache::name_hash(digest_key, &name),
                        scan_cache::FileKey::of(&stamp),
                        &facts.borrowed(),
                    );
                    f.secrets = carries;
                    fresh.push(f);
                    if let Some(h) = hits.get_mut(entry) {
                        *h = false;
                    }
                }
            }
            if let Some((path, id)) = cache_to
                && !fresh.is_empty()
            {
                // A failure to write is not the census's (it is made again).
                let _ = scan_cache::save(path, *id, digest_key, cache, &hits, fresh);
            }
            census.names.push(names);
        }
        census.dirs = dirs;
        // The files read whole: this device's (the ledger tells whether each
        // holds what it wrote) and those too long to count by their facts.
        for i in 0..census.files.len() {
            let f = &census.files[i];
            let (at, file) = (f.dir, f.file);
            let name = census.names[at].get(file as usize).0;
            if !owns[at].names(name) && !f.long {
                continue;
            }
            let Some(e) = census.read(at, file) else {
                continue;
            };
            let local = owns[at].is_mine(&e.file, e.kind, &e.record);
            let mut record = e.record.clone();
            crate::redact::redact_record(&mut record);
            record.cut_to_limits();
            let f = &mut census.files[i];
            f.local = local;
            if f.long {
                let device = census.intern_shown(&mut strings, &record.device_id);
                let host = census.intern_shown(&mut strings, &record.host);
                let instance = census.intern_shown(&mut strings, &record.instance_id);
                let f = &mut census.files[i];
                (f.device, f.host, f.instance) = (device, host, instance);
            }
        }
        census.show_strings();
        census.decide_groups();
        pass.end(self, &learned, now);
        if wants.local_rows {
            for f in census.files.iter().filter(|f| f.local) {
                if let Some(e) = census.read(f.dir, f.file) {
                    let mut row = self.row(e, f.dir, &owns[f.dir], now, &pass);
                    row.mark_life(f.state);
                    census.local_rows.push(row);
                }
            }
        }
        if wants.secrets {
            census.secrets = (0..census.files.len())
                .filter(|&i| census.files[i].secrets == Some(true))
                .collect();
        }
        Ok(census)
    }
}

/// One record file as the census counts it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Counted {
    /// Which of the profile's directories holds it, and its index in that
    /// directory's names.
    pub dir: usize,
    pub file: u32,
    /// Its device id, host and instance as a row shows them (redacted and
    /// cut), as indexes into [`Census::string`].
    pub device: u32,
    pub host: u32,
    pub instance: u32,
    pub verdict: crate::identity::Verdict,
    /// When it arrived here.
    pub ctime: f64,
    pub updated: Option<f64>,
    pub expires: Option<f64>,
    /// As its row says: live, and its state (a copy of a life ended
    /// elsewhere is ended).
    pub live: bool,
    pub state: State,
    /// Written by this device, as its ledger says.
    pub local: bool,
    /// With [`Wants::secrets`]: whether its record carries credentials
    /// (`None` for a forged one, or one that could not be read again).
    pub secrets: Option<bool>,
    long: bool,
}

/// What a census finds besides the counts.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Wants {
    /// The rows of this device's records, as `list --all` makes them.
    pub local_rows: bool,
    /// Which records carry credentials: each record is read and redacted
    /// (once per version of its file, with the scan cache).
    pub secrets: bool,
}

/// What ranks a file in its group.
#[derive(Debug, Clone, Copy)]
struct Decided {
    group: Digest,
    life: Digest,
    seq: u64,
    ended: bool,
    state: State,
}

/// Every record file of a registry's directories; see [`Registry::census`].
#[derive(Default)]
pub(crate) struct Census {
    pub files: Vec<Counted>,
    /// With [`Wants::local_rows`]: the rows of the files this device wrote.
    pub local_rows: Vec<crate::row::Row>,
    /// With [`Wants::secrets`]: the files (indexes into `files`, forged ones
    /// left out) whose records carry credentials, which rows show redacted.
    /// Whether a file's record does is kept in the scan cache with the
    /// file's facts, so a file is read and redacted for it only once in
    /// each version.
    pub secrets: Vec<usize>,
    /// Files passed over (named by their paths when there are several
    /// directories), and whether every directory exists.
    pub skipped: Vec<crate::store::Skipped>,
    pub exists: bool,
    dirs: Vec<crate::store::Dir>,
    names: Vec<crate::store::Names>,
    strings: Vec<String>,
    decide: Vec<Decided>,
}

impl Census {
    /// A string of the census ([`Counted::device`], …).
    pub fn string(&self, i: u32) -> &str {
        self.strings.get(i as usize).map_or("", String::as_str)
    }

    /// The file name of `f`.
    pub fn file(&self, f: &Counted) -> &str {
        self.names
            .get(f.dir)
            .map_or("", |n| n.get(f.file as usize).0)
    }

    /// The ttl `f` claims ([`liveness::ttl_of`]).
    pub fn ttl(&self, f: &Counted) -> f64 {
        liveness::ttl_of(f.updated, f.expires)
    }

    /// Seconds since `f` claims it was written, as its row says.
    pub fn claimed_age_s(&self, f: &Counted, now: f64) -> Option<f64> {
        f.updated.map(|u| round_ms(now - u))
    }

    /// Seconds since `f` arrived, as its row says.
    pub fn age_s(&self, f: &Counted, now: f64) -> f64 {
        round_ms(now - f.ctime)
    }

    /// The `file`-th record of the `at`-th directory, read in full.
    pub fn read(&self, at: usize, file: u32) -> Option<Entry> {
        let name = self.names.get(at)?.get(file as usize).0;
        self.dirs.get(at)?.read_entry(name).ok().flatten()
    }

    fn intern(&mut self, at: &mut HashMap<String, u32>, s: String) -> u32 {
        if let Some(&i) = at.get(&s) {
            return i;
        }
        let i = u32::try_from(self.strings.len()).unwrap_or(u32::MAX);
        self.strings.push(s.clone());
        at.insert(s, i);
        i
    }

    /// `s` as a row shows it already (redacted and cut), interned; marked
    /// so that [`Census::show_strings`] leaves it as it is.
    fn intern_shown(&mut self, at: &mut HashMap<String, u32>, s: &str) -> u32 {
        let key = format!("\0shown\0{s}");
        if let Some(&i) = at.get(&key) {
            return i;
        }
        let i = u32::try_from(self.strings.len()).unwrap_or(u32::MAX);
        self.strings.push(key.clone());
        at.insert(key, i);
        i
    }

    /// Every string as a row shows it: redacted, then cut to its limit.
    fn show_strings(&mut self) {
        for s in &mut self.strings {
            if let Some(shown) = s.strip_prefix("\0shown\0") {
                *s = shown.to_string();
                continue;
            }
            let (mut clean, kinds) = crate::redact::redact_text(s);
            if kinds.is_empty() {
                clean = std::mem::take(s);
            }
            crate::record::truncate_at_boundary(&mut clean, crate::limits::MAX_STRING_BYTES);
            *s = clean;
        }
    }

    /// Decides the groups as `list --all` does, and marks each file's row
    /// as it would be marked: a group's winner and the copies that lost to
    /// an ended life are ended when their life is.
    fn decide_groups(&mut self) {
        let mut reducer = Reducer::new(true);
        for (i, (f, d)) in self.files.iter().zip(&self.decide).enumerate() {
            if !f.verdict.counts() {
                continue;
            }
            let name = self
                .names
                .get(f.dir)
                .map_or("", |n| n.get(f.file as usize).0);
            let mut copy = FileCopy::new(name, f.updated, d.seq, d.ended, d.state);
            copy.dir = f.dir;
            copy.item = Some(i);
            reducer.add(d.group, d.life, copy);
        }
        let mut marks: Vec<usize> = Vec::new();
        for group in reducer.finish() {
            if group.state == State::Ended
                && let Some(i) = group.winner.item
            {
                marks.push(i);
            }
            for (copy, why) in group.losers {
                if why == LossReason::LifeEnded
                    && let Some(i) = copy.item
                {
                    marks.push(i);
                }
            }
        }
        for i in marks {
            if let Some(f) = self.files.get_mut(i) {
                f.live = false;
                f.state = State::Ended;
            }
        }
        for f in &mut self.files {
            if !f.verdict.counts() {
                // Whatever its times say, it is nobody's live session.
                f.live = false;
            }
        }
        self.decide = Vec::new();
    }
}

/// What one scan thread of a census gathers.
#[derive(Default)]
struct Part {
    files: Vec<Counted>,
    decide: Vec<Decided>,
    learned: Clocks,
    /// The cache entries of use, the files probed (for the next cache) and
    /// the cached ones whose credentials are not known yet.
    hits: Vec<u32>,
    fresh: Vec<scan_cache::Fresh>,
    pending: Vec<(usize, usize, Facts<Box<str>>, Stamp)>,
    strings: Vec<String>,
    at: HashMap<String, u32>,
}

impl Part {
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.at.get(s) {
            return i;
        }
        let i = u32::try_from(self.strings.len()).unwrap_or(u32::MAX);
        self.strings.push(s.to_string());
        self.at.insert(s.to_string(), i);
        i
    }
}
