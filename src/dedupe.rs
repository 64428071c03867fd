//! Grouping and winner choice (pure).
//!
//! Every parseable record — tombstones and expired ones included — is grouped
//! by `(profile, client or source, endpoint or session_id)`, the key Hermes
//! Agent uses: a second runtime on the same endpoint is a successor, and a
//! sync-engine conflict copy of a record lands in the same group as the
//! original. The winner of a group is the record with the highest
//! `updated_at`, then the higher `seq`, then the greater file name, so the
//! result does not depend on the order in which the directory lists files.
//! Callers list a group iff its winner is live: the latest word decides.

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::record::Record;

/// One group after dedupe: indices into the input slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The newest record of the group.
    pub winner: usize,
    /// The others, newest first.
    pub losers: Vec<usize>,
}

/// Why a record lost to its group's winner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossReason {
    /// The winner has a higher `updated_at`.
    Older,
    /// Same `updated_at`, the winner has a higher `seq`.
    LowerSeq,
    /// Same `updated_at` and `seq`; the winner's file name sorts after.
    FileName,
}

impl LossReason {
    /// Short name used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            LossReason::Older => "older",
            LossReason::LowerSeq => "lower_seq",
            LossReason::FileName => "file_name",
        }
    }
}

/// What decides recency within a group: `updated_at` (missing counts as
/// oldest), then `seq`, then the file name. Ordered: greater is newer.
#[derive(Debug, Clone, Copy)]
pub struct Rank<'a> {
    updated: f64,
    seq: u64,
    file: &'a str,
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
        Rank { updated, seq, file }
    }
}

impl Ord for Rank<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.updated
            .total_cmp(&other.updated)
            .then(self.seq.cmp(&other.seq))
            .then_with(|| self.file.as_bytes().cmp(other.file.as_bytes()))
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

/// Total order of recency: `Greater` means `a` is newer than `b`.
pub fn newer(a: (&Record, &str), b: (&Record, &str)) -> Ordering {
    Rank::of(a.0, a.1).cmp(&Rank::of(b.0, b.1))
}

/// Why `loser` lost to `winner` (which must be newer).
pub fn loss_reason(winner: &Record, loser: &Record) -> LossReason {
    let time = |r: &Record| r.updated_at.unwrap_or(f64::NEG_INFINITY);
    if time(winner).total_cmp(&time(loser)) != Ordering::Equal {
        LossReason::Older
    } else if winner.seq != loser.seq {
        LossReason::LowerSeq
    } else {
        LossReason::FileName
    }
}

/// Groups `items` and returns the groups, newest winner first. `get` yields
/// each item's record and file name.
pub fn dedupe<T>(items: &[T], get: impl Fn(&T) -> (&Record, &str)) -> Vec<Group> {
    let mut by_key: HashMap<(&str, &str, &str), Vec<usize>> = HashMap::new();
    for (i, item) in items.iter().enumerate() {
        by_key.entry(get(item).0.group_key()).or_default().push(i);
    }
    let cmp = |a: &usize, b: &usize| newer(get(&items[*b]), get(&items[*a]));
    let mut groups: Vec<Group> = by_key
        .into_values()
        .map(|mut members| {
            members.sort_by(cmp);
            let winner = members.remove(0);
            Group {
                winner,
                losers: members,
            }
        })
        .collect();
    groups.sort_by(|a, b| cmp(&a.winner, &b.winner));
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rec(session: &str, client: &str, endpoint: &str, updated: f64, seq: u64) -> Record {
        let mut r = Record::new(session);
        r.profile = "default".into();
        r.client = client.into();
        r.endpoint = endpoint.into();
        r.updated_at = Some(updated);
        r.expires_at = Some(updated + 90.0);
        r.seq = seq;
        r
    }

    fn run(items: &[(Record, String)]) -> Vec<(String, Vec<String>)> {
        dedupe(items, |(r, f)| (r, f.as_str()))
            .into_iter()
            .map(|g| {
                (
                    items[g.winner].1.clone(),
                    g.losers.iter().map(|&i| items[i].1.clone()).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn dedupe_table() {
        type Case = (
            &'static str,
            Vec<(Record, &'static str)>,
            Vec<(&'static str, Vec<&'static str>)>,
        );
        let cases: Vec<Case> = vec![
            (
                "distinct sessions stay apart, newest first",
                vec![
                    (rec("a", "t", "", 10.0, 1), "a.json"),
                    (rec("b", "t", "", 20.0, 1), "b.json"),
                ],
                vec![("b.json", vec![]), ("a.json", vec![])],
            ),
            (
                "conflict copy collapses; newer updated_at wins",
                vec![
                    (rec("a", "t", "", 10.0, 5), "i.a.json"),
                    (
                        rec("a", "t", "", 11.0, 4),
                        "i.a.sync-conflict-20261130-101010-ABCDEFG.json",
                    ),
                ],
                vec![(
                    "i.a.sync-conflict-20261130-101010-ABCDEFG.json",
                    vec!["i.a.json"],
                )],
            ),
            (
                "same time: higher seq wins",
                vec![
                    (rec("a", "t", "", 10.0, 7), "x.json"),
                    (rec("a", "t", "", 10.0, 8), "w.json"),
                ],
                vec![("w.json", vec!["x.json"])],
            ),
            (
                "same time and seq: greater file name wins",
                vec![
                    (rec("a", "t", "", 10.0, 1), "x.json"),
                    (rec("a", "t", "", 10.0, 1), "y.json"),
                ],
                vec![("y.json", vec!["x.json"])],
            ),
            (
                "successor on the same endpoint replaces the first runtime",
                vec![
                    (rec("run1", "t", "tmux://h/main", 10.0, 1), "h1.run1.json"),
                    (rec("run2", "t", "tmux://h/main", 12.0, 1), "h2.run2.json"),
                ],
                vec![("h2.run2.json", vec!["h1.run1.json"])],
            ),
            (
                "same endpoint, different client: two groups",
                vec![
                    (rec("run1", "t", "tmux://h/main", 10.0, 1), "a.json"),
                    (rec("run2", "d", "tmux://h/main", 12.0, 1), "b.json"),
                ],
                vec![("b.json", vec![]), ("a.json", vec![])],
            ),
        ];
        for (case, items, want) in cases {
            let items: Vec<(Record, String)> =
                items.into_iter().map(|(r, f)| (r, f.to_string())).collect();
            let want: Vec<(String, Vec<String>)> = want
                .into_iter()
                .map(|(w, l)| (w.to_string(), l.into_iter().map(String::from).collect()))
                .collect();
            assert_eq!(run(&items), want, "{case}");
        }
    }

    #[test]
    fn profile_is_part_of_the_key() {
        let a = rec("s", "t", "", 1.0, 1);
        let mut b = rec("s", "t", "", 2.0, 1);
        b.profile = "work".into();
        let items = vec![(a, "a.json".to_string()), (b, "b.json".to_string())];
        assert_eq!(run(&items).len(), 2);
    }

    #[test]
    fn missing_updated_at_loses() {
        let mut a = rec("s", "t", "", 1.0, 1);
        a.updated_at = None;
        let b = rec("s", "t", "", -5.0, 0);
        let items = vec![(a, "z.json".to_string()), (b, "a.json".to_string())];
        assert_eq!(
            run(&items),
            vec![("a.json".to_string(), vec!["z.json".to_string()])]
        );
        assert_eq!(loss_reason(&items[1].0, &items[0].0), LossReason::Older);
    }

    proptest! {
        #[test]
        fn result_does_not_depend_on_directory_order(
            specs in prop::collection::vec((0u8..4, 0u8..3, 0u8..3, 0u8..5, 0u64..3), 0..24),
            seed in any::<u64>(),
        ) {
            let items: Vec<(Record, String)> = specs
                .iter()
                .enumerate()
                .map(|(i, &(s, c, e, t, q))| {
                    let endpoint = if e == 0 { String::new() } else { format!("ssh://h/{e}") };
                    (rec(&format!("s{s}"), &format!("c{c}"), &endpoint, f64::from(t), q), format!("f{i}.json"))
                })
                .collect();
            let mut shuffled = items.clone();
            // Deterministic shuffle from the seed.
            let mut x = seed | 1;
            for i in (1..shuffled.len()).rev() {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                shuffled.swap(i, (x % (i as u64 + 1)) as usize);
            }
            prop_assert_eq!(run(&items), run(&shuffled));
        }
    }
}
