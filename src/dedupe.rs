//! Dedupe: one streaming reducer that every reader uses (pure, no I/O).
//!
//! Every parseable record — tombstones and expired ones included — is grouped
//! by `(profile, client or source, endpoint or session_id)`, the key Hermes
//! Agent uses: a second runtime on the same endpoint is a successor, and a
//! sync-engine conflict copy of a record lands in the same group as the
//! original.
//!
//! Within a group, records are sorted into **lives**. A life is one run of a
//! session by one writer: `(instance_id, session_id, started_at)`. The rules:
//!
//! - Once any copy of a life is ended (carries `ended_at`), the life is ended
//!   in every reader and every group (a copy left in another group after its
//!   endpoint changed included), whatever the timestamps of its other
//!   copies: no conflict copy or late arrival revives it.
//! - A tombstone ends only its own life; it never hides another life (a
//!   successor, another device's session on the same endpoint).
//! - Among the lives of a group, the newest **live** one wins; when none is
//!   live, the newest one (for `--expired`, `show` and `expire`).
//!
//! "Newest" is the rank: `updated_at` (missing counts as oldest), then `seq`,
//! then the file name, so the result never depends on the order in which the
//! directory lists files. The reducer takes copies one at a time, in any order
//! and on any number of threads ([`Reducer::merge`]), and holds per life only
//! its newest copy and its newest tombstone — plus, when asked, every other
//! copy for `list --all` and `expire`.
use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use crate::liveness::{self, State};
use crate::record::Record;

/// What decides recency within a group: `updated_at` (missing counts as
/// oldest), then `seq`, then the file name, then the directory (for a
/// profile that reads several: the earlier one ranks higher). Ordered:
/// greater is newer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rank<'a> {
    updated: f64,
    seq: u64,
    file: &'a str,
    dir: usize,
}

impl<'a> Rank<'a> {
    /// The rank of `record`, stored in `file`.
    pub fn of(record: &Record, file: &'a str) -> Self {
        Rank::new(
            record.updated_at.unwrap_or(f64::NEG_INFINITY),
            record.seq,
            file,
        )
    }

    /// A rank from its parts (`updated` is `-inf` for a missing `updated_at`).
    pub fn new(updated: f64, seq: u64, file: &'a str) -> Self {
        Rank {
            updated,
            seq,
            file,
            dir: 0,
        }
    }

    /// The same rank for a file in the profile's `dir`-th directory.
    pub fn in_dir(self, dir: usize) -> Self {
        Rank { dir, ..self }
    }
}

impl Ord for Rank<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.updated
            .total_cmp(&other.updated)
            .then(self.seq.cmp(&other.seq))
            .then_with(|| self.file.as_bytes().cmp(other.file.as_bytes()))
            .then(other.dir.cmp(&self.dir))
    }
}

impl PartialOrd for Rank<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Rank<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Rank<'_> {}

/// A group key as one string: the three parts of [`Record::group_key`]
/// joined by NULs (one allocation per file instead of three).
pub(crate) fn group_id((profile, client, target): (&str, &str, &str)) -> Box<str> {
    let mut s = String::with_capacity(profile.len() + client.len() + target.len() + 2);
    for (i, part) in [profile, client, target].into_iter().enumerate() {
        if i > 0 {
            s.push('\0');
        }
        s.push_str(part);
    }
    s.into()
}

/// A group or a life as the reducer keys it: a 64-bit SipHash of its parts
/// under a key drawn at random once per process. No file can aim at a
/// collision without knowing the key; by chance, two of 100 000 groups
/// collide with odds of about one in 3·10⁹. Hashing beats allocating the
/// strings: `list` reduces every file of the directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Digest(u64);

impl Digest {
    fn of(parts: [&str; 3], started: Option<f64>) -> Digest {
        let [k0, k1] = digest_key();
        let mut h = siphasher::sip::SipHasher13::new_with_keys(k0, k1);
        for part in parts {
            h.write(crate::record::clip(part).as_bytes());
            // 0xff never occurs in UTF-8: the parts cannot run together.
            h.write_u8(0xff);
        }
        match started {
            Some(t) => h.write_u64(t.to_bits()),
            None => h.write_u8(0),
        }
        Digest(h.finish())
    }

    /// A digest as stored (see `scan_cache.rs`).
    pub(crate) fn from_raw(n: u64) -> Digest {
        Digest(n)
    }

    /// The digest as stored.
    pub(crate) fn raw(self) -> u64 {
        self.0
    }

    /// The digest of a group key (see [`Record::group_key`]).
    pub(crate) fn group((profile, client, target): (&str, &str, &str)) -> Digest {
        Digest::of([profile, client, target], None)
    }

    /// The digest of a life.
    pub(crate) fn life(instance: &str, session: &str, started_at: Option<f64>) -> Digest {
        // A distinct first part keeps a life from ever equalling a group.
        Digest::of(
            [instance, session, "\u{1}life"],
            Some(started_at.unwrap_or(f64::NAN)),
        )
    }
}

static DIGEST_KEY: OnceLock<[u64; 2]> = OnceLock::new();

/// The key of this process's digests: drawn at random on first use, unless
/// a scan cache made earlier set its own first ([`use_digest_key`]).
pub(crate) fn digest_key() -> [u64; 2] {
    *DIGEST_KEY.get_or_init(|| {
        let mut b = [0u8; 16];
        if getrandom::fill(&mut b).is_err() {
            // No randomness: a key from the clock and the pid still differs
            // between runs and machines.
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            b[..8].copy_from_slice(&(t as u64).to_le_bytes());
            b[8..].copy_from_slice(&u64::from(std::process::id()).to_le_bytes());
        }
        let (a, c) = b.split_at(8);
        [
            u64::from_le_bytes(a.try_into().unwrap_or_default()),
            u64::from_le_bytes(c.try_into().unwrap_or_default()),
        ]
    })
}

/// Makes `key` this process's digest key if none is in use yet; whether
/// `key` is the one in use.
pub(crate) fn use_digest_key(key: [u64; 2]) -> bool {
    *DIGEST_KEY.get_or_init(|| key) == key
}

/// Digests are random already: a map keyed by them need not hash again.
#[derive(Default)]
pub(crate) struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type ByDigest<V> = HashMap<Digest, V, BuildHasherDefault<Identity>>;

/// One file as the reducer sees it: its rank, whether it ends its life, its
/// own liveness, and what the caller wants back (`None`: nothing to keep).
#[derive(Debug, Clone)]
pub(crate) struct Copy<T> {
    /// File name.
    pub file: Box<str>,
    /// Which of the profile's directories holds the file (0: `dir`).
    pub dir: usize,
    /// `updated_at`, `-inf` when missing.
    pub updated: f64,
    /// `seq`.
    pub seq: u64,
    /// Carries `ended_at`.
    pub ended: bool,
    /// The file's own liveness (see [`crate::liveness::state_of`]).
    pub state: State,
    /// The caller's payload.
    pub item: Option<T>,
}

impl<T> Copy<T> {
    /// A file's copy as the reducer ranks it (a missing `updated_at` ranks
    /// lowest), holding no payload yet.
    pub(crate) fn new(
        file: &str,
        updated_at: Option<f64>,
        seq: u64,
        ended: bool,
        state: State,
    ) -> Self {
        Copy {
            file: file.into(),
            dir: 0,
            updated: updated_at.unwrap_or(f64::NEG_INFINITY),
            seq,
            ended,
            state,
            item: None,
        }
    }

    /// This copy's rank.
    pub(crate) fn rank(&self) -> Rank<'_> {
        Rank::new(self.updated, self.seq, &self.file).in_dir(self.dir)
    }
}

/// A life and its copies.
#[derive(Debug)]
struct Life<T> {
    /// The newest copy without `ended_at`.
    open: Option<Copy<T>>,
    /// The newest copy with `ended_at`: present iff the life is ended.
    tomb: Option<Copy<T>>,
    /// Every other copy (only when the reducer keeps all).
    others: Vec<Copy<T>>,
    /// A copy of this life in another group (its endpoint changed) is a
    /// tombstone: the life is over here too.
    ended_elsewhere: bool,
}

impl<T> Life<T> {
    fn new() -> Self {
        Life {
            open: None,
            tomb: None,
            others: Vec::new(),
            ended_elsewhere: false,
        }
    }

    /// The copy that speaks for the life: its newest tombstone if ended, else its newest copy.
    fn speaker(&self) -> Option<&Copy<T>> {
        self.tomb.as_ref().or(self.open.as_ref())
    }

    fn state(&self) -> State {
        if self.ended_elsewhere {
            return State::Ended;
        }
        match (&self.tomb, &self.open) {
            (Some(_), _) => State::Ended,
            (None, Some(c)) => c.state,
            (None, None) => State::Expired,
        }
    }

    fn is_live(&self) -> bool {
        self.state() == State::Live
    }

    fn add(&mut self, copy: Copy<T>, keep_all: bool) {
        let slot = if copy.ended {
            &mut self.tomb
        } else {
            &mut self.open
        };
        let loser = match slot {
            Some(held) if held.rank() >= copy.rank() => copy,
            _ => match slot.replace(copy) {
                Some(old) => old,
                None => return,
            },
        };
        if keep_all {
            self.others.push(loser);
        }
    }
}

/// What the reducer takes of `record`, stored in `file` whose ctime is
/// `ctime`, judged at `now`: its group, its life and its copy (no payload).
pub(crate) fn describe<T>(
    record: &Record,
    file: &str,
    ctime: f64,
    now: f64,
    clock: impl Into<liveness::WriterClock>,
) -> (Digest, Digest, Copy<T>) {
    let state = liveness::state(record, ctime, now, clock);
    let copy = Copy::new(
        file,
        record.updated_at,
        record.seq,
        record.ended_at.is_some(),
        state,
    );
    let life = Digest::life(&record.instance_id, &record.session_id, record.started_at);
    (Digest::group(record.group_key()), life, copy)
}

/// Why a file lost to its group's winner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LossReason {
    /// The winner has a higher `updated_at`.
    Older,
    /// Same `updated_at`, the winner has a higher `seq`.
    LowerSeq,
    /// Same `updated_at` and `seq`; the winner's file name sorts after.
    FileName,
    /// The same file name, `updated_at` and `seq` in another directory of
    /// the profile, which comes first in its list.
    Directory,
    /// Another copy of its life is a tombstone: that life is over.
    LifeEnded,
    /// Newer, but of a life that is not live; a live life wins.
    NotLive,
}

impl LossReason {
    /// Short name used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            LossReason::Older => "older",
            LossReason::LowerSeq => "lower_seq",
            LossReason::FileName => "file_name",
            LossReason::Directory => "directory",
            LossReason::LifeEnded => "life_ended",
            LossReason::NotLive => "not_live",
        }
    }
}

/// Why `loser` ranks below `winner` (which must rank above it).
fn rank_reason(winner: Rank<'_>, loser: Rank<'_>) -> LossReason {
    if winner.updated.total_cmp(&loser.updated) != Ordering::Equal {
        LossReason::Older
    } else if winner.seq != loser.seq {
        LossReason::LowerSeq
    } else if winner.file != loser.file {
        LossReason::FileName
    } else {
        LossReason::Directory
    }
}

/// One group, decided.
#[derive(Debug)]
pub(crate) struct Outcome<T> {
    /// The file that speaks for the group.
    pub winner: Copy<T>,
    /// The state of the winner's life (`Ended` when any of its copies is a tombstone).
    pub state: State,
    /// The other files, each with why it lost (only when the reducer keeps all;
    /// otherwise just the other lives' speakers).
    pub losers: Vec<(Copy<T>, LossReason)>,
}

/// Folds copies into groups and lives; see the module docs.
#[derive(Debug)]
pub(crate) struct Reducer<T> {
    groups: ByDigest<Lives<T>>,
    keep_all: bool,
}

/// The lives of one group: nearly always one, so that one is held inline;
/// more go in a map, so that adding a copy costs one lookup however many
/// lives a (hostile) group holds.
#[derive(Debug)]
enum Lives<T> {
    One(Digest, Life<T>),
    Many(ByDigest<Life<T>>),
}

impl<T> Lives<T> {
    fn life(&mut self, id: Digest) -> &mut Life<T> {
        if let Lives::One(held, _) = self
            && *held != id
        {
            let Lives::One(held, life) = std::mem::replace(self, Lives::Many(ByDigest::default()))
            else {
                unreachable!("matched just above")
            };
            if let Lives::Many(map) = self {
                map.insert(held, life);
            }
        }
        match self {
            Lives::One(_, life) => life,
            Lives::Many(map) => map.entry(id).or_insert_with(Life::new),
        }
    }

    fn into_pairs(self) -> Vec<(Digest, Life<T>)> {
        match self {
            Lives::One(id, life) => vec![(id, life)],
            Lives::Many(map) => map.into_iter().collect(),
        }
    }
}

impl<T> Reducer<T> {
    /// A reducer; with `keep_all` it also keeps every losing copy.
    pub(crate) fn new(keep_all: bool) -> Self {
        Reducer {
            groups: ByDigest::default(),
            keep_all,
        }
    }

    /// Adds one file of group `key` and life `life`.
    pub(crate) fn add(&mut self, group: Digest, life: Digest, copy: Copy<T>) {
        let keep_all = self.keep_all;
        self.groups
            .entry(group)
            .or_insert_with(|| Lives::One(life, Life::new()))
            .life(life)
            .add(copy, keep_all);
    }

    /// Adds `record`, stored in `file` whose ctime is `ctime`, judged at `now`.
    pub(crate) fn add_record(
        &mut self,
        record: &Record,
        file: &str,
        ctime: f64,
        (now, clock): (f64, impl Into<liveness::WriterClock>),
        item: T,
    ) {
        let (key, life, mut copy) = describe(record, file, ctime, now, clock);
        copy.item = Some(item);
        self.add(key, life, copy);
    }

    /// Adds everything another reducer (another thread's share) holds.
    #[cfg(test)]
    pub(crate) fn merge(&mut self, other: Reducer<T>) {
        for (group, lives) in other.groups {
            for (id, life) in lives.into_pairs() {
                let copies = life.open.into_iter().chain(life.tomb).chain(life.others);
                for copy in copies {
                    self.add(group, id, copy);
                }
            }
        }
    }

    /// The groups decided, newest winner first.
    pub(crate) fn finish(self) -> Vec<Outcome<T>> {
        // A life ends everywhere: a tombstone in one group (say, after the
        // endpoint changed) ends its copies in every other.
        let mut groups: Vec<Vec<(Digest, Life<T>)>> =
            self.groups.into_values().map(Lives::into_pairs).collect();
        let ended: std::collections::HashSet<Digest> = groups
            .iter()
            .flatten()
            .filter(|(_, life)| life.tomb.is_some())
            .map(|(id, _)| *id)
            .collect();
        if !ended.is_empty() {
            for (id, life) in groups.iter_mut().flatten() {
                life.ended_elsewhere = life.tomb.is_none() && ended.contains(id);
            }
        }
        let mut out: Vec<Outcome<T>> = groups
            .into_iter()
            .filter_map(|lives| decide(lives.into_iter().map(|(_, l)| l).collect()))
            .collect();
        out.sort_by(|a, b| b.winner.rank().cmp(&a.winner.rank()));
        out
    }
}

/// The winner of one group: the newest live life, else the newest life.
fn decide<T>(lives: Vec<Life<T>>) -> Option<Outcome<T>> {
    fn best<T>(l: &Life<T>) -> (bool, Option<Rank<'_>>) {
        (l.is_live(), l.speaker().map(Copy::rank))
    }
    let win = (0..lives.len()).max_by(|&a, &b| best(&lives[a]).cmp(&best(&lives[b])))?;
    let mut losers = Vec::new();
    let mut winner = None;
    let mut state = State::Expired;
    for (i, life) in lives.into_iter().enumerate() {
        let life_state = life.state();
        let ended = life_state == State::Ended;
        let (speaker, rest) = match (life.tomb, life.open) {
            (Some(t), open) => (t, open),
            (None, Some(o)) => (o, None),
            (None, None) => continue,
        };
        let within = rest.into_iter().chain(life.others);
        for copy in within {
            let why = if ended && !copy.ended {
                LossReason::LifeEnded
            } else {
                rank_reason(speaker.rank(), copy.rank())
            };
            losers.push((copy, why));
        }
        if i == win {
            state = life_state;
            winner = Some(speaker);
        } else if ended && !speaker.ended {
            losers.push((speaker, LossReason::LifeEnded));
        } else {
            losers.push((speaker, LossReason::Older));
        }
    }
    let winner = winner?;
    let win_live = state == State::Live;
    for (copy, why) in &mut losers {
        if *why == LossReason::LifeEnded {
            continue;
        }
        // The speakers of the other lives (and copies within the winner's life).
        *why = if win_live && copy.rank() > winner.rank() {
            LossReason::NotLive
        } else if *why == LossReason::Older {
            rank_reason(winner.rank(), copy.rank())
        } else {
            *why
        };
    }
    losers.sort_by(|a, b| b.0.rank().cmp(&a.0.rank()));
    Some(Outcome {
        winner,
        state,
        losers,
    })
}

/// One file as a listing holds it while the directory is read: what
/// dedupe and liveness need, in 48 bytes and no allocation. A listing of
/// 100 000 files holds 100 000 of these and the bytes of the files that
/// may be listed, nothing else.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    /// Its group.
    pub group: Digest,
    /// Its life.
    pub life: Digest,
    /// `updated_at`, `-inf` when missing.
    pub updated: f64,
    /// `seq`.
    pub seq: u64,
    /// The caller's handle on the file (its name).
    pub file: u32,
    /// The caller's handle on what it kept of the file (`u32::MAX`: nothing).
    pub kept: u32,
    /// Which of the profile's directories holds the file (0: `dir`).
    pub dir: u32,
    /// The caller's second handle (which thread kept it).
    pub part: u8,
    /// Carries `ended_at`.
    pub ended: bool,
    /// The file's own liveness.
    pub state: State,
}

/// A group decided from [`Slot`]s: the index of the winner's slot and the
/// state of its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// Index into the slots as sorted by [`decide_slots`].
    pub winner: usize,
    /// The state of the winner's life.
    pub state: State,
}

/// Decides every group of `slots` — the same rules as [`Reducer`], which a
/// property test checks — by sorting them by group and life, so that no map
/// is built. `name` gives a slot's file name (ties of rank are broken by
/// it). Sorts `slots`; the winners index the sorted slice.
pub(crate) fn decide_slots<'n>(
    slots: &mut [Slot],
    name: impl Fn(&Slot) -> &'n str,
    mut each: impl FnMut(Verdict),
) {
    slots.sort_unstable_by_key(|s| (s.group, s.life));
    // A life ends everywhere: a tombstone in one group (say, after the
    // endpoint changed) ends its copies in every other.
    let mut ended: Vec<Digest> = slots.iter().filter(|s| s.ended).map(|s| s.life).collect();
    ended.sort_unstable();
    ended.dedup();
    let ended_elsewhere = |life: Digest| ended.binary_search(&life).is_ok();
    let mut lives: Vec<Life<usize>> = Vec::new();
    let mut start = 0;
    while start < slots.len() {
        let group = slots[start].group;
        let end = start
            + slots[start..]
                .iter()
                .position(|s| s.group != group)
                .unwrap_or(slots.len() - start);
        if end - start == 1 {
            // Nearly every group is one file: its life's state is its own.
            let s = &slots[start];
            let state = if s.ended || ended_elsewhere(s.life) {
                State::Ended
            } else {
                s.state
            };
            each(Verdict {
                winner: start,
                state,
            });
            start = end;
            continue;
        }
        lives.clear();
        let mut life_id = None;
        for (i, s) in slots.iter().enumerate().take(end).skip(start) {
            if life_id != Some(s.life) {
                if let (Some(id), Some(life)) = (life_id, lives.last_mut()) {
                    life.ended_elsewhere = life.tomb.is_none() && ended_elsewhere(id);
                }
                life_id = Some(s.life);
                lives.push(Life::new());
            }
            let copy = Copy {
                file: name(s).into(),
                dir: s.dir as usize,
                updated: s.updated,
                seq: s.seq,
                ended: s.ended,
                state: s.state,
                item: Some(i),
            };
            if let Some(life) = lives.last_mut() {
                life.add(copy, false);
            }
        }
        if let (Some(id), Some(life)) = (life_id, lives.last_mut()) {
            life.ended_elsewhere = life.tomb.is_none() && ended_elsewhere(id);
        }
        if let Some(out) = decide(std::mem::take(&mut lives))
            && let Some(winner) = out.winner.item
        {
            each(Verdict {
                winner,
                state: out.state,
            });
        }
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const NOW: f64 = 1_000_000.0;
    const SKEW: f64 = 300.0;

    /// A record of session `session` by instance `inst` on `endpoint`,
    /// started at `started`, written at `updated` with `seq`, ended if `ended`.
    fn rec(
        inst: &str,
        session: &str,
        endpoint: &str,
        started: f64,
        updated: f64,
        seq: u64,
        ended: bool,
    ) -> Record {
        let mut r = Record::new(session);
        r.profile = "default".into();
        r.client = "t".into();
        r.endpoint = endpoint.into();
        r.instance_id = inst.into();
        r.started_at = Some(started);
        r.updated_at = Some(updated);
        r.expires_at = Some(updated + 90.0);
        r.seq = seq;
        if ended {
            r.ended_at = Some(updated);
            r.expires_at = Some(updated - SKEW);
        }
        r
    }

    /// Reduces `(record, file, ctime)` in the given order; returns, per group
    /// newest first, the winner's file and state and the losers' files with
    /// their reasons.
    type Decided = Vec<(String, State, Vec<(String, LossReason)>)>;

    fn reduce(items: &[(Record, &str, f64)]) -> Decided {
        let mut r = Reducer::new(true);
        for (record, file, ctime) in items {
            r.add_record(record, file, *ctime, (NOW, SKEW), ());
        }
        show(r.finish())
    }

    fn show(out: Vec<Outcome<()>>) -> Decided {
        out.into_iter()
            .map(|o| {
                let losers = o
                    .losers
                    .into_iter()
                    .map(|(c, why)| (c.file.to_string(), why))
                    .collect();
                (o.winner.file.to_string(), o.state, losers)
            })
            .collect()
    }

    #[test]
    fn rules_table() {
        use LossReason::*;
        use State::*;
        let fresh = NOW - 1.0;
        type Case = (
            &'static str,
            Vec<(Record, &'static str, f64)>,
            Vec<(&'static str, State, Vec<(&'static str, LossReason)>)>,
        );
        let cases: Vec<Case> = vec![
            (
                "distinct sessions stay apart, newest first",
                vec![
                    (
                        rec("i", "a", "", 1.0, NOW - 20.0, 1, false),
                        "a.json",
                        fresh,
                    ),
                    (
                        rec("i", "b", "", 1.0, NOW - 10.0, 1, false),
                        "b.json",
                        fresh,
                    ),
                ],
                vec![("b.json", Live, vec![]), ("a.json", Live, vec![])],
            ),
            (
                "a conflict copy collapses; the newer updated_at wins",
                vec![
                    (
                        rec("i", "a", "", 1.0, NOW - 20.0, 5, false),
                        "i.a.json",
                        fresh,
                    ),
                    (
                        rec("i", "a", "", 1.0, NOW - 10.0, 4, false),
                        "i.a.sync-conflict-20261130-101010-ABCDEFG.json",
                        fresh,
                    ),
                ],
                vec![(
                    "i.a.sync-conflict-20261130-101010-ABCDEFG.json",
                    Live,
                    vec![("i.a.json", Older)],
                )],
            ),
            (
                "same time: the higher seq wins; same seq: the greater name",
                vec![
                    (
                        rec("i", "a", "", 1.0, NOW - 10.0, 7, false),
                        "x.json",
                        fresh,
                    ),
                    (
                        rec("i", "a", "", 1.0, NOW - 10.0, 8, false),
                        "w.json",
                        fresh,
                    ),
                    (
                        rec("i", "a", "", 1.0, NOW - 10.0, 7, false),
                        "y.json",
                        fresh,
                    ),
                ],
                vec![(
                    "w.json",
                    Live,
                    vec![("y.json", LowerSeq), ("x.json", LowerSeq)],
                )],
            ),
            (
                "a live copy newer than its life's tombstone stays ended",
                vec![
                    (
                        rec("i", "a", "", 1.0, NOW - 30.0, 3, true),
                        "i.a.json",
                        fresh,
                    ),
                    (
                        rec("i", "a", "", 1.0, NOW - 5.0, 9, false),
                        "i.a.sync-conflict-20261130-101010-ABCDEFG.json",
                        fresh,
                    ),
                ],
                vec![(
                    "i.a.json",
                    Ended,
                    vec![("i.a.sync-conflict-20261130-101010-ABCDEFG.json", LifeEnded)],
                )],
            ),
            (
                "a successor on the same endpoint replaces the first runtime",
                vec![
                    (
                        rec("h1", "run1", "tmux://h/main", 1.0, NOW - 20.0, 1, false),
                        "h1.run1.json",
                        fresh,
                    ),
                    (
                        rec("h2", "run2", "tmux://h/main", 2.0, NOW - 10.0, 1, false),
                        "h2.run2.json",
                        fresh,
                    ),
                ],
                vec![("h2.run2.json", Live, vec![("h1.run1.json", Older)])],
            ),
            (
                "a tombstone from a clock two hours ahead never hides another life",
                vec![
                    (
                        rec("b", "s1", "ssh://h/x", NOW, NOW + 7200.0, 2, true),
                        "b.s1.json",
                        fresh,
                    ),
                    (
                        rec("a", "s2", "ssh://h/x", NOW - 30.0, NOW - 10.0, 4, false),
                        "a.s2.json",
                        fresh,
                    ),
                ],
                vec![("a.s2.json", Live, vec![("b.s1.json", NotLive)])],
            ),
            (
                "the newest live life wins over a newer expired one",
                vec![
                    (
                        rec("a", "s1", "ssh://h/x", 1.0, NOW - 10.0, 1, false),
                        "a.json",
                        fresh,
                    ),
                    (
                        rec("b", "s2", "ssh://h/x", 2.0, NOW - 5.0, 1, false),
                        "b.json",
                        NOW - 200.0,
                    ),
                ],
                vec![("a.json", Live, vec![("b.json", NotLive)])],
            ),
            (
                "no life live: the newest speaks",
                vec![
                    (
                        rec("a", "s1", "ssh://h/x", 1.0, NOW - 10.0, 1, true),
                        "a.json",
                        fresh,
                    ),
                    (
                        rec("b", "s2", "ssh://h/x", 2.0, NOW - 500.0, 1, false),
                        "b.json",
                        NOW - 500.0,
                    ),
                ],
                vec![("a.json", Ended, vec![("b.json", Older)])],
            ),
            (
                "a tombstone in one group ends its life's copies in another (the endpoint changed)",
                vec![
                    (
                        rec("i", "a", "ssh://old/x", 1.0, NOW - 30.0, 3, false),
                        "i.a.sync-conflict-20261130-101010-ABCDEFG.json",
                        fresh,
                    ),
                    (
                        rec("i", "a", "ssh://new/x", 1.0, NOW - 10.0, 4, true),
                        "i.a.json",
                        fresh,
                    ),
                ],
                vec![
                    ("i.a.json", Ended, vec![]),
                    (
                        "i.a.sync-conflict-20261130-101010-ABCDEFG.json",
                        Ended,
                        vec![],
                    ),
                ],
            ),
            (
                "a new life of the same session after a clear is live",
                vec![
                    (
                        rec("i", "a", "", 1.0, NOW - 30.0, 3, true),
                        "i.a.sync-conflict-20261130-101010-ABCDEFG.json",
                        fresh,
                    ),
                    (
                        rec("i", "a", "", NOW - 20.0, NOW - 10.0, 4, false),
                        "i.a.json",
                        fresh,
                    ),
                ],
                vec![(
                    "i.a.json",
                    Live,
                    vec![("i.a.sync-conflict-20261130-101010-ABCDEFG.json", Older)],
                )],
            ),
        ];
        for (case, items, want) in cases {
            let want: Decided = want
                .into_iter()
                .map(|(w, s, l)| {
                    let l = l.into_iter().map(|(f, why)| (f.to_string(), why)).collect();
                    (w.to_string(), s, l)
                })
                .collect();
            assert_eq!(reduce(&items), want, "{case}");
        }
    }

    #[test]
    fn the_label_is_part_of_the_key_and_empty_is_default() {
        let a = rec("i", "s", "", 1.0, NOW - 2.0, 1, false);
        let mut b = rec("j", "s", "", 1.0, NOW - 1.0, 1, false);
        b.profile = "work".into();
        let mut c = rec("k", "s", "", 1.0, NOW - 3.0, 1, false);
        c.profile = String::new();
        let items = [(a, "a.json", NOW), (b, "b.json", NOW), (c, "c.json", NOW)];
        let out = reduce(&items);
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(out[1].0, "a.json");
        assert_eq!(out[1].2, vec![("c.json".to_string(), LossReason::Older)]);
    }

    /// The same file in two directories of a profile: a tie in everything
    /// else goes to the directory read first, whatever the order of arrival;
    /// a tombstone in either ends the life in both.
    #[test]
    fn directories_break_the_last_tie_and_share_lives() {
        let live = rec("i", "s", "", 1.0, NOW - 1.0, 3, false);
        let decide = |order: &[usize], tomb_in: Option<usize>| {
            let mut r = Reducer::new(true);
            for &dir in order {
                let mut record = live.clone();
                if tomb_in == Some(dir) {
                    record.ended_at = Some(NOW - 0.5);
                    record.updated_at = Some(NOW - 2.0);
                }
                let (key, life, mut copy) = describe(&record, "i.s.json", NOW, NOW, SKEW);
                copy.dir = dir;
                copy.item = Some(dir);
                r.add(key, life, copy);
            }
            let out = r.finish();
            assert_eq!(out.len(), 1);
            let o = out.into_iter().next().unwrap();
            let losers: Vec<_> = o.losers.iter().map(|(c, why)| (c.dir, *why)).collect();
            (o.winner.dir, o.state, losers)
        };
        for order in [[0, 1], [1, 0]] {
            assert_eq!(
                decide(&order, None),
                (0, State::Live, vec![(1, LossReason::Directory)])
            );
            // The tombstone speaks for the life, wherever it is.
            assert_eq!(
                decide(&order, Some(1)),
                (1, State::Ended, vec![(0, LossReason::LifeEnded)])
            );
        }
        let rank = |dir| Rank::new(1.0, 1, "f.json").in_dir(dir);
        assert!(rank(0) > rank(1) && rank(1) > rank(2));
        assert!(Rank::new(1.0, 1, "g.json").in_dir(5) > rank(0));
    }

    #[test]
    fn a_group_of_many_lives_is_reduced_in_one_pass() {
        // A hostile directory can put every file in one group, each its own
        // life; adding a copy must not scan the group's lives (that was
        // quadratic: minutes at 100 000 files).
        let n = 50_000u32;
        let mut r = Reducer::new(false);
        for i in 0..n {
            let updated = NOW - 60.0 + f64::from(i) / f64::from(n);
            let rec = rec(
                &format!("w{i}"),
                &format!("s{i}"),
                "ssh://h/x",
                1.0,
                updated,
                1,
                i % 2 == 1,
            );
            r.add_record(&rec, &format!("w{i}.s{i}.json"), NOW - 1.0, (NOW, SKEW), i);
        }
        let out = r.finish();
        assert_eq!(out.len(), 1);
        // The newest life is a tombstone (odd); the newest live one wins.
        assert_eq!(out[0].winner.item, Some(n - 2));
        assert_eq!(out[0].state, State::Live);
    }

    /// One writer's history on a shared endpoint, as files a reader may hold.
    #[derive(Debug, Clone)]
    struct Spec {
        writer: u8,
        life: u8,
        version: u8,
        ended: bool,
        conflict: bool,
        arrived_ago: u8,
    }

    fn spec() -> impl Strategy<Value = Spec> {
        (
            0u8..3,
            0u8..3,
            0u8..6,
            any::<bool>(),
            any::<bool>(),
            0u8..120,
        )
            .prop_map(
                |(writer, life, version, ended, conflict, arrived_ago)| Spec {
                    writer,
                    life,
                    version,
                    ended: ended && version > 0,
                    conflict,
                    arrived_ago,
                },
            )
    }

    /// The files a reader holds: every spec becomes one file, written by a
    /// writer whose clock runs `offsets[writer]` seconds off ours.
    fn files(specs: &[Spec], offsets: &[i32; 3]) -> Vec<(Record, String, f64)> {
        specs
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let clock = NOW + f64::from(offsets[usize::from(s.writer)]);
                let started = clock - 1000.0 + f64::from(s.life) * 100.0;
                let updated = started + f64::from(s.version) * 10.0 - f64::from(s.arrived_ago);
                let r = rec(
                    &format!("w{}", s.writer),
                    &format!("s{}", s.life),
                    "ssh://shared/x",
                    started,
                    updated,
                    u64::from(s.version) + 1,
                    s.ended,
                );
                let name = if s.conflict {
                    format!(
                        "w{}.s{}.sync-conflict-20261130-101010-{i:07}.json",
                        s.writer, s.life
                    )
                } else {
                    format!("w{}.s{}.{i}.json", s.writer, s.life)
                };
                (r, name, NOW - f64::from(s.arrived_ago))
            })
            .collect()
    }

    fn shuffled<T: Clone>(items: &[T], seed: u64) -> Vec<T> {
        let mut v = items.to_vec();
        let mut x = seed | 1;
        for i in (1..v.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v.swap(i, (x % (i as u64 + 1)) as usize);
        }
        v
    }

    fn decide_all(items: &[(Record, String, f64)], split: usize) -> Decided {
        // Two "threads", merged: the order and the split must not matter.
        let mut a = Reducer::new(true);
        let mut b = Reducer::new(true);
        for (i, (r, f, c)) in items.iter().enumerate() {
            let half = if i < split { &mut a } else { &mut b };
            half.add_record(r, f, *c, (NOW, SKEW), ());
        }
        a.merge(b);
        show(a.finish())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn lives_hold_for_any_arrival_order_and_clock_offsets(
            specs in prop::collection::vec(spec(), 1..14),
            offsets in [-7200i32..=7200, -7200i32..=7200, -7200i32..=7200],
            seed in any::<u64>(),
            split in 0usize..14,
        ) {
            let items = files(&specs, &offsets);
            let base = decide_all(&items, 0);
            // Any order of arrival, any split across threads: one answer.
            prop_assert_eq!(&decide_all(&shuffled(&items, seed), split), &base);

            let life_of = |file: &str| {
                let (r, _, _) = items.iter().find(|(_, f, _)| f == file).expect("file");
                (r.instance_id.clone(), r.session_id.clone())
            };
            let ended_lives: Vec<_> = items
                .iter()
                .filter(|(r, _, _)| r.ended_at.is_some())
                .map(|(r, _, _)| (r.instance_id.clone(), r.session_id.clone()))
                .collect();
            // Some life with no tombstone whose newest copy is live.
            let live_life_exists = items.iter().any(|(r, f, c)| {
                let life = (r.instance_id.clone(), r.session_id.clone());
                !ended_lives.contains(&life)
                    && items
                        .iter()
                        .filter(|(o, _, _)| (o.instance_id.clone(), o.session_id.clone()) == life)
                        .all(|(o, g, _)| Rank::of(o, g) <= Rank::of(r, f))
                    && liveness::state(r, *c, NOW, SKEW) == State::Live
            });
            prop_assert_eq!(base.len(), 1);
            let (winner, state, _) = &base[0];
            if *state == State::Live {
                // No ended life is ever listed live.
                prop_assert!(!ended_lives.contains(&life_of(winner)), "{:?}", base);
            }
            // A live life is never hidden, by a tombstone or anything else.
            prop_assert_eq!(*state == State::Live, live_life_exists, "{:?}", base);
        }

        #[test]
        fn slots_decide_as_the_reducer_does(
            specs in prop::collection::vec(spec(), 1..14),
            offsets in [-7200i32..=7200, -7200i32..=7200, -7200i32..=7200],
            seed in any::<u64>(),
            moved in prop::collection::vec(0usize..3, 14),
        ) {
            // Lives that moved to another endpoint, or have none (grouped by
            // session id): a tombstone in one group ends copies in others.
            let mut items = files(&specs, &offsets);
            for (item, m) in items.iter_mut().zip(&moved) {
                item.0.endpoint = ["ssh://shared/x", "ssh://other/y", ""][*m].to_owned();
            }
            let items = shuffled(&items, seed);
            let mut want: Vec<(String, State)> = decide_all(&items, 0)
                .into_iter()
                .map(|(file, state, _)| (file, state))
                .collect();
            want.sort_by(|a, b| a.0.cmp(&b.0));
            let mut slots: Vec<Slot> = items
                .iter()
                .enumerate()
                .map(|(i, (r, f, c))| {
                    let (group, life, copy) = describe::<()>(r, f, *c, NOW, SKEW);
                    Slot {
                        group,
                        life,
                        updated: copy.updated,
                        seq: copy.seq,
                        file: i as u32,
                        kept: 0,
                        dir: 0,
                        part: 0,
                        ended: copy.ended,
                        state: copy.state,
                    }
                })
                .collect();
            let mut verdicts = Vec::new();
            decide_slots(&mut slots, |s| items[s.file as usize].1.as_str(), |v| verdicts.push(v));
            let mut got: Vec<(String, State)> = verdicts
                .iter()
                .map(|v| (items[slots[v.winner].file as usize].1.clone(), v.state))
                .collect();
            got.sort_by(|a, b| a.0.cmp(&b.0));
            prop_assert_eq!(got, want);
        }
    }
}
