//! The map engine: copies folded into groups and lives one at a time, in
//! any order (`list --all`, `show`, `expire`, the watcher's groups).
use super::{ByDigest, Digest, EndedLives, FileCopy, Life, Outcome, decide};
#[cfg(test)]
use crate::{liveness, record::Record};

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

    fn each(&self, mut f: impl FnMut(Digest, &Life<T>)) {
        match self {
            Lives::One(id, life) => f(*id, life),
            Lives::Many(map) => map.iter().for_each(|(id, life)| f(*id, life)),
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
    pub(crate) fn add(&mut self, group: Digest, life: Digest, copy: FileCopy<T>) {
        let keep_all = self.keep_all;
        self.groups
            .entry(group)
            .or_insert_with(|| Lives::One(life, Life::new()))
            .life(life)
            .add(copy, keep_all);
    }

    /// Adds `record`, stored in `file` whose ctime is `ctime`, judged at `now`.
    #[cfg(test)]
    pub(crate) fn add_record(
        &mut self,
        record: &Record,
        file: &str,
        ctime: f64,
        (now, clock): (f64, impl Into<liveness::WriterClock>),
        item: T,
    ) {
        let (key, life, mut copy) = super::describe(record, file, ctime, now, clock);
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
        let mut ended = EndedLives::default();
        for lives in self.groups.values() {
            lives.each(|id, life| {
                if life.tomb.is_some() {
                    ended.add(id, true);
                }
            });
        }
        self.finish_against(&ended)
    }

    /// The groups decided against `ended`, the lives over anywhere (a
    /// watcher holds more files than it hands the reducer), newest winner
    /// first.
    pub(crate) fn finish_against(self, ended: &EndedLives) -> Vec<Outcome<T>> {
        let mut out: Vec<Outcome<T>> = self
            .groups
            .into_values()
            .filter_map(|lives| decide(lives.into_pairs(), ended))
            .collect();
        out.sort_by(|a, b| b.winner.rank().cmp(&a.winner.rank()));
        out
    }
}
