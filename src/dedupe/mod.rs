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
//! and on any number of threads ([`Reducer`]'s `merge`), and holds per life only
//! its newest copy and its newest tombstone — plus, when asked, every other
//! copy for `list --all` and `expire`.
use std::cmp::Ordering;

use crate::liveness::{self, State};
use crate::record::Record;

mod digest;
mod facts;
mod reducer;
mod slots;
#[cfg(test)]
mod tests;

pub(crate) use digest::{ByDigest, Digest, digest_key, use_digest_key};
pub(crate) use facts::Facts;
pub(crate) use reducer::Reducer;
pub(crate) use slots::{Slot, decide_slots};

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

/// One file as the reducer sees it: its rank, whether it ends its life, its
/// own liveness, and what the caller wants back (`None`: nothing to keep).
#[derive(Debug, Clone)]
pub(crate) struct FileCopy<T> {
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

impl<T> FileCopy<T> {
    /// A file's copy as the reducer ranks it (a missing `updated_at` ranks
    /// lowest), holding no payload yet.
    pub(crate) fn new(
        file: &str,
        updated_at: Option<f64>,
        seq: u64,
        ended: bool,
        state: State,
    ) -> Self {
        FileCopy {
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
    open: Option<FileCopy<T>>,
    /// The newest copy with `ended_at`: present iff the life is ended.
    tomb: Option<FileCopy<T>>,
    /// Every other copy (only when the reducer keeps all).
    others: Vec<FileCopy<T>>,
}

impl<T> Life<T> {
    fn new() -> Self {
        Life {
            open: None,
            tomb: None,
            others: Vec::new(),
        }
    }

    /// The copy that speaks for the life: its newest tombstone if ended, else its newest copy.
    fn speaker(&self) -> Option<&FileCopy<T>> {
        self.tomb.as_ref().or(self.open.as_ref())
    }

    /// The life's state, `ended` telling whether the life is over anywhere
    /// (see [`EndedLives`]).
    fn state(&self, ended: bool) -> State {
        life_state(
            self.open.as_ref().map(|c| c.state),
            self.tomb.is_some() || ended,
        )
    }

    fn add(&mut self, copy: FileCopy<T>, keep_all: bool) {
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

/// The state of a life from its newest open copy's own state and whether
/// it is over: a tombstone among its copies, here or in any other group.
fn life_state(open: Option<State>, over: bool) -> State {
    match (over, open) {
        (true, _) => State::Ended,
        (false, Some(state)) => state,
        (false, None) => State::Expired,
    }
}

/// The lives that are over: every life with a tombstone among the files
/// read, in whatever group. "A life ended anywhere is ended everywhere" is
/// this set: every engine ([`Reducer`], [`decide_slots`], the watcher) fills
/// it from all the files it holds and decides each group against it, so a
/// copy left in an old group after the endpoint changed never outlives the
/// tombstone in the new one. Counted, so that a watcher can take a file
/// away again.
#[derive(Debug, Default, Clone)]
pub(crate) struct EndedLives(ByDigest<u32>);

impl EndedLives {
    /// Counts a file of `life`; only a tombstone (`ended`) ends it. Whether
    /// the life was not over before and is now.
    pub(crate) fn add(&mut self, life: Digest, ended: bool) -> bool {
        if !ended {
            return false;
        }
        let n = self.0.entry(life).or_default();
        *n += 1;
        *n == 1
    }

    /// Takes a file of `life` away again; whether the life was over and is
    /// no longer.
    pub(crate) fn remove(&mut self, life: Digest, ended: bool) -> bool {
        if !ended {
            return false;
        }
        match self.0.get_mut(&life) {
            Some(n) if *n > 1 => {
                *n -= 1;
                false
            }
            Some(_) => {
                self.0.remove(&life);
                true
            }
            None => false,
        }
    }

    /// Whether `life` is over.
    pub(crate) fn contains(&self, life: Digest) -> bool {
        !self.0.is_empty() && self.0.contains_key(&life)
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
) -> (Digest, Digest, FileCopy<T>) {
    let state = liveness::state(record, ctime, now, clock);
    let copy = FileCopy::new(
        file,
        record.updated_at,
        record.seq,
        record.ended_at.is_some(),
        state,
    );
    let life = Digest::life(record.author(), record.life());
    (
        Digest::group(record.author(), record.group_key()),
        life,
        copy,
    )
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
    /// It claims a device id it does not prove: it decides nothing and
    /// wins nothing (`forged` says why).
    Forged,
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
            LossReason::Forged => "forged",
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
    pub winner: FileCopy<T>,
    /// The state of the winner's life (`Ended` when any of its copies is a tombstone).
    pub state: State,
    /// The other files, each with why it lost (only when the reducer keeps all;
    /// otherwise just the other lives' speakers).
    pub losers: Vec<(FileCopy<T>, LossReason)>,
}

/// The winner of one group: the newest live life, else the newest life.
///
/// `lives` are the group's lives with their digests; a life in `ended` is
/// over here whatever its copies in this group say. Every engine decides a
/// group through this one function.
fn decide<T>(lives: Vec<(Digest, Life<T>)>, ended: &EndedLives) -> Option<Outcome<T>> {
    fn best<'l, T>((id, l): &'l (Digest, Life<T>), ended: &EndedLives) -> (bool, Option<Rank<'l>>) {
        (
            l.state(ended.contains(*id)) == State::Live,
            l.speaker().map(FileCopy::rank),
        )
    }
    let win =
        (0..lives.len()).max_by(|&a, &b| best(&lives[a], ended).cmp(&best(&lives[b], ended)))?;
    let mut losers = Vec::new();
    let mut winner = None;
    let mut state = State::Expired;
    for (i, (id, life)) in lives.into_iter().enumerate() {
        let life_state = life.state(ended.contains(id));
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
