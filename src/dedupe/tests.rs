//! Table tests and property tests of the dedupe rules.
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
