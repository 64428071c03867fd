//! Every reader agrees on the live set: generated directories (live,
//! expired and ended records, conflict copies of every engine, lives that
//! ended in another group, successors, two directories of one profile,
//! writers with skewed clocks, hostile files) are read by `list --json`,
//! `list --count`, the table, `list --watch --count`, `watch --json`'s
//! initial set, `show` of every id, `list --all`, `devices`, `doctor` and
//! `expire --dry-run`, and their answers are compared.
//!
//! Every deadline lies at least 10 minutes from the time the commands run,
//! so time passing during the test never changes a record's state.
//!
//! Replay one case: `DIFFTEST_SEED=<seed> DIFFTEST_CASE=<n> cargo test --test
//! integration differential::`; `DIFFTEST_CASES=<n>` sets how many run.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::*;

/// splitmix64: a small generator whose sequence depends on the seed alone.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
    fn hex(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| char::from_digit(self.below(16) as u32, 16).unwrap())
            .collect()
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// A device writing to the directory (not the reader), with its clock
/// `offset` seconds off ours.
#[derive(Clone)]
struct Writer {
    device: String,
    host: String,
    instance: String,
    offset: f64,
}

/// What the reader must make of an id found in the directory.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    /// A parseable record of the profile: `show` finds it.
    Found,
    /// Only in files the docs say are not read (too big, a symlink, a dot
    /// file, another label…): `show` finds nothing.
    Absent,
    /// Hostile, without a documented outcome for `show`: it only has to
    /// agree with `list`.
    Either,
}

struct Case {
    index: u64,
    world: World,
    dirs: Vec<PathBuf>,
    reader: Device,
    writers: Vec<Writer>,
    ids: BTreeMap<String, Expect>,
    /// What was generated, one line per session or file, for the report.
    plan: Vec<String>,
    /// Files written in the second burst (after the writers' clocks can be
    /// learned from the first).
    later: Vec<(PathBuf, Vec<u8>)>,
}

const ENDPOINTS: [&str; 4] = [
    "tmux://h/main",
    "ssh://host1/a",
    "ssh://host2/b",
    "mosh://h/x",
];
const OFFSETS: [f64; 6] = [0.0, 0.0, 120.0, -120.0, 3.0 * 3600.0, -3.0 * 3600.0];

impl Case {
    fn new(index: u64, rng: &mut Rng) -> Case {
        let world = World::new();
        let mut dirs = vec![world.shared()];
        if rng.chance(30) {
            dirs.push(world.tmp.path().join("second/active"));
        }
        for d in &dirs {
            std::fs::create_dir_all(d).unwrap();
        }
        let reader = world.bare_device("reader");
        let quoted: Vec<String> = dirs
            .iter()
            .map(|d| format!("{:?}", d.display().to_string()))
            .collect();
        reader.write_config(&format!(
            "[profiles.default]\ndirs = [{}]\n",
            quoted.join(", ")
        ));
        let writers = (0..1 + rng.below(4))
            .map(|k| {
                let device = rng.hex(32);
                Writer {
                    host: format!("host{k}"),
                    instance: format!("host{k}-{}", &device[..8]),
                    device,
                    offset: *rng.pick(&OFFSETS),
                }
            })
            .collect();
        Case {
            index,
            world,
            dirs,
            reader,
            writers,
            ids: BTreeMap::new(),
            plan: Vec::new(),
            later: Vec::new(),
        }
    }

    fn dir(&self, rng: &mut Rng) -> PathBuf {
        self.dirs[rng.below(self.dirs.len() as u64) as usize].clone()
    }

    /// Writes `bytes` as `name` in one of the directories, now or in the
    /// second burst; sometimes in every directory.
    fn put(&mut self, rng: &mut Rng, name: &OsStr, bytes: Vec<u8>, now: bool) {
        let targets = if self.dirs.len() > 1 && rng.chance(15) {
            self.dirs.clone()
        } else {
            vec![self.dir(rng)]
        };
        for d in targets {
            let path = d.join(name);
            if now {
                std::fs::write(&path, &bytes).unwrap();
            } else {
                self.later.push((path, bytes.clone()));
            }
        }
    }

    fn put_json(&mut self, rng: &mut Rng, name: &str, rec: &Value, now: bool) {
        let bytes = serde_json::to_vec(rec).unwrap();
        self.put(rng, OsStr::new(name), bytes, now);
    }

    /// The first burst: one live record of some writers, so that a reader
    /// can learn their clocks from two arrivals seconds apart.
    fn first_burst(&mut self, rng: &mut Rng, t: f64) {
        for (k, w) in self.writers.clone().iter().enumerate() {
            if rng.chance(60) {
                let sid = format!("beacon{k}");
                let rec =
                    record(w, &sid, Some(t + w.offset - 3000.0), "").live(t + w.offset - 5.0, 1);
                self.put_json(rng, &format!("{}.{sid}.json", w.instance), &rec.0, true);
                self.ids.insert(sid.clone(), Expect::Found);
                self.plan.push(format!("{sid}: live beacon of {}", w.host));
                // Read again in the second burst: a second arrival.
                let rec = record(w, &sid, Some(t + w.offset - 3000.0), "").live(t + w.offset, 2);
                self.put_json(rng, &format!("{}.{sid}.json", w.instance), &rec.0, false);
            }
        }
    }

    /// The sessions and hostile files of the second burst, written at `t`
    /// (this machine's clock) by the call to [`Case::write_later`].
    fn plan_sessions(&mut self, rng: &mut Rng, t: f64) {
        let sessions = 1 + rng.below(10);
        for i in 0..sessions {
            let sid = format!("s{i}");
            let w = rng.pick(&self.writers).clone();
            let base = t + w.offset;
            let endpoint = if rng.chance(40) {
                rng.pick(&ENDPOINTS).to_string()
            } else {
                String::new()
            };
            let other = loop {
                let e = rng.pick(&ENDPOINTS).to_string();
                if e != endpoint {
                    break e;
                }
            };
            let started = base - 3000.0 - rng.below(500) as f64;
            let u = rng.below(120) as f64;
            let main = format!("{}.{sid}.json", w.instance);
            let life = |e: &str| record(&w, &sid, Some(started), e);
            let kind = rng.below(10);
            let (what, files): (&str, Vec<(String, Rec)>) = match kind {
                0 => ("live", vec![(main, life(&endpoint).live(base - u, 3))]),
                1 => ("expired", vec![(main, life(&endpoint).expired(base, 3))]),
                2 => ("ended", vec![(main, life(&endpoint).ended(base - 30.0, 4))]),
                3 => (
                    "live, with a conflict copy of the same life",
                    vec![
                        (
                            conflict_name(rng, &main),
                            life(&endpoint).live(base - u + *rng.pick(&[-10.0, 5.0]), 2),
                        ),
                        (main, life(&endpoint).live(base - u, 3)),
                    ],
                ),
                4 => (
                    "ended, with a newer live conflict copy of the same life",
                    vec![
                        (
                            conflict_name(rng, &main),
                            life(&endpoint).live(base - 10.0, 2),
                        ),
                        (main, life(&endpoint).ended(base - 30.0, 4)),
                    ],
                ),
                5 => (
                    "ended in a new group, a live copy left in the old one",
                    vec![
                        (conflict_name(rng, &main), life(&other).live(base - 10.0, 1)),
                        (main, life(&endpoint).ended(base - 30.0, 3)),
                    ],
                ),
                6 => (
                    "live in a new group, ended in the old one (a conflict copy)",
                    vec![
                        (
                            conflict_name(rng, &main),
                            life(&other).ended(base - 30.0, 2),
                        ),
                        (main, life(&endpoint).live(base - 5.0, 4)),
                    ],
                ),
                7 => {
                    let old = if rng.chance(50) {
                        endpoint.clone()
                    } else {
                        other.clone()
                    };
                    let old_life = life(&old);
                    let old_copy = match rng.below(3) {
                        0 => old_life.ended(base - 200.0, 5),
                        1 => old_life.live(base - 100.0, 5),
                        _ => old_life.expired(base, 5),
                    };
                    (
                        "a successor: a new life, an old one in a conflict copy",
                        vec![
                            (conflict_name(rng, &main), old_copy),
                            (
                                main,
                                record(&w, &sid, Some(started + 1000.0), &endpoint)
                                    .live(base - u, 1),
                            ),
                        ],
                    )
                }
                8 => (
                    "a successor that ended; the old life still live in a copy",
                    vec![
                        (
                            conflict_name(rng, &main),
                            life(&endpoint).live(base - 50.0, 5),
                        ),
                        (
                            main,
                            record(&w, &sid, Some(started + 1000.0), &endpoint)
                                .ended(base - 20.0, 2),
                        ),
                    ],
                ),
                _ => (
                    "a Hermes record: no started_at, no seq, no device id",
                    vec![(main, {
                        let mut r = record(&w, &sid, None, &endpoint).live(base - u, 0);
                        let o = r.0.as_object_mut().unwrap();
                        o.remove("started_at");
                        o.remove("seq");
                        o.insert("device_id".into(), json!(""));
                        r
                    })],
                ),
            };
            self.ids.insert(sid.clone(), Expect::Found);
            self.plan.push(format!(
                "{sid}: {what}; writer {} ({:+}s), endpoint {endpoint:?}",
                w.host, w.offset
            ));
            for (name, rec) in files {
                self.plan.push(format!("  {name}: {}", rec.0));
                self.put_json(rng, &name, &rec.0, false);
            }
        }
        self.hostile(rng, t);
    }

    fn hostile(&mut self, rng: &mut Rng, t: f64) {
        let w = rng.pick(&self.writers).clone();
        let live =
            |sid: &str| record(&w, sid, Some(t + w.offset - 100.0), "").live(t + w.offset, 1);
        let mut raw: Vec<(Vec<u8>, Vec<u8>, &str, Expect)> = Vec::new();
        let text = |v: &Value| serde_json::to_vec(v).unwrap();
        for _ in 0..rng.below(8) {
            match rng.below(17) {
                0 => raw.push((
                    b"junk.hbad.json".to_vec(),
                    b"{not json".to_vec(),
                    "",
                    Expect::Either,
                )),
                1 => raw.push((
                    b"empty.hempty.json".to_vec(),
                    Vec::new(),
                    "",
                    Expect::Either,
                )),
                2 => {
                    let mut r = live("hhuge");
                    r.0["title"] = json!("x".repeat(70_000));
                    raw.push((
                        b"big.hhuge.json".to_vec(),
                        text(&r.0),
                        "hhuge",
                        Expect::Absent,
                    ));
                }
                3 => {
                    let body = String::from_utf8(text(&live("hdup").0)).unwrap();
                    let body = body.replacen('{', "{\"session_id\":\"hdup\",", 1);
                    raw.push((
                        b"dup.hdup.json".to_vec(),
                        body.into_bytes(),
                        "hdup",
                        Expect::Absent,
                    ));
                }
                4 => {
                    let mut r = live("hv2");
                    r.0["version"] = json!(2);
                    raw.push((b"v2.hv2.json".to_vec(), text(&r.0), "hv2", Expect::Absent));
                }
                5 => {
                    let mut r = live("hnoexp");
                    r.0.as_object_mut().unwrap().remove("expires_at");
                    raw.push((
                        b"x.hnoexp.json".to_vec(),
                        text(&r.0),
                        "hnoexp",
                        Expect::Found,
                    ));
                }
                6 => {
                    let mut r = live("hctl");
                    r.0["title"] = json!("\u{1b}[31mred\u{7}\nsecond line\r");
                    r.0["status"] = json!("work\ting\n");
                    r.0["cwd"] = json!("/tmp/\u{1b}]0;title\u{7}");
                    r.0["model"] = json!("\u{9b}31m\u{202e}x");
                    r.0["metadata"] = json!({"k": "\u{1b}[2J", "b": "\u{0}"});
                    raw.push((b"ctl.hctl.json".to_vec(), text(&r.0), "hctl", Expect::Found));
                }
                7 => {
                    let mut r = live("hstr");
                    let (u, e) = (r.0["updated_at"].clone(), r.0["expires_at"].clone());
                    r.0["updated_at"] = json!(u.to_string());
                    r.0["expires_at"] = json!(e.to_string());
                    raw.push((b"str.hstr.json".to_vec(), text(&r.0), "hstr", Expect::Found));
                }
                8 => {
                    let mut body = "\u{feff}".as_bytes().to_vec();
                    body.extend(text(&live("hbom").0));
                    raw.push((b"bom.hbom.json".to_vec(), body, "hbom", Expect::Found));
                }
                9 => {
                    let mut r = live("hwork");
                    r.0["profile"] = json!("work");
                    raw.push((
                        b"work.hwork.json".to_vec(),
                        text(&r.0),
                        "hwork",
                        Expect::Absent,
                    ));
                }
                10 => raw.push((
                    b".hidden.hhid.json".to_vec(),
                    text(&live("hhid").0),
                    "hhid",
                    Expect::Absent,
                )),
                11 => raw.push((
                    b"x.hext.txt".to_vec(),
                    text(&live("hext").0),
                    "hext",
                    Expect::Absent,
                )),
                12 => {
                    let body = String::from_utf8(text(&live("hnum").0)).unwrap();
                    let body = body.replacen("\"seq\":1", "\"seq\":1,\"updated_at\":1e400", 1);
                    raw.push((
                        b"num.hnum.json".to_vec(),
                        body.into_bytes(),
                        "hnum",
                        Expect::Absent,
                    ));
                }
                13 => raw.push((
                    b"nl\nname.hnl.json".to_vec(),
                    text(&live("hnl").0),
                    "hnl",
                    Expect::Either,
                )),
                14 => raw.push((
                    b"\xff\xfe.hutf.json".to_vec(),
                    text(&live("hutf").0),
                    "hutf",
                    Expect::Either,
                )),
                15 => {
                    // A FIFO, a directory and a symlink to a live record
                    // outside: none of them is read.
                    let d = self.dir(rng);
                    mkfifo(&d.join("fifo.hfifo.json"));
                    std::fs::create_dir_all(d.join("sub.hsub.json")).unwrap();
                    let outside = self.world.tmp.path().join("outside.json");
                    std::fs::write(&outside, text(&live("hlink").0)).unwrap();
                    let _ = std::os::unix::fs::symlink(&outside, d.join("link.hlink.json"));
                    self.ids.insert("hlink".into(), Expect::Absent);
                    self.plan
                        .push(format!("fifo, dir and symlink (hlink) in {}", d.display()));
                }
                _ => raw.push((
                    b".x.hx.json.123.abc.tmp".to_vec(),
                    text(&live("htmp").0),
                    "htmp",
                    Expect::Absent,
                )),
            }
        }
        for (name, bytes, id, expect) in raw {
            if !id.is_empty() {
                self.ids.insert(id.to_string(), expect);
            }
            self.plan
                .push(format!("hostile {:?}", String::from_utf8_lossy(&name)));
            self.put(rng, OsStr::from_bytes(&name), bytes, false);
        }
    }

    fn write_later(&mut self) {
        for (path, bytes) in std::mem::take(&mut self.later) {
            std::fs::write(path, bytes).unwrap();
        }
    }

    /// Every entry of every directory, with the start of its content.
    fn listing(&self) -> String {
        let mut s = String::new();
        for d in &self.dirs {
            s.push_str(&format!("{}:\n", d.display()));
            let mut names: Vec<_> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            names.sort();
            for p in names {
                let meta = std::fs::symlink_metadata(&p).unwrap();
                let body = if meta.file_type().is_file() {
                    let b = std::fs::read(&p).unwrap();
                    let t = String::from_utf8_lossy(&b[..b.len().min(400)]).into_owned();
                    format!("{} bytes: {t}", b.len())
                } else {
                    format!("{:?}", meta.file_type())
                };
                s.push_str(&format!(
                    "  {:?}  {body}\n",
                    p.file_name().unwrap().to_string_lossy()
                ));
            }
        }
        s
    }
}

/// A record being built.
struct Rec(Value);

fn record(w: &Writer, sid: &str, started: Option<f64>, endpoint: &str) -> Rec {
    Rec(json!({
        "version": 1, "session_id": sid, "profile": "default", "client": "terminal",
        "host": w.host, "device_id": w.device, "instance_id": w.instance,
        "started_at": started, "endpoint": endpoint, "status": "working", "title": sid,
    }))
}

impl Rec {
    /// Live: refreshed at `updated` (the writer's clock), 15-minute ttl.
    fn live(mut self, updated: f64, seq: u64) -> Rec {
        self.0["updated_at"] = json!(updated);
        self.0["expires_at"] = json!(updated + 900.0);
        self.0["seq"] = json!(seq);
        self
    }
    /// Expired 20 minutes before `now` (the writer's clock).
    fn expired(mut self, now: f64, seq: u64) -> Rec {
        self.0["updated_at"] = json!(now - 2100.0);
        self.0["expires_at"] = json!(now - 1200.0);
        self.0["seq"] = json!(seq);
        self
    }
    /// A tombstone written at `at`, as `clear` writes it.
    fn ended(mut self, at: f64, seq: u64) -> Rec {
        self.0["updated_at"] = json!(at);
        self.0["ended_at"] = json!(at);
        self.0["expires_at"] = json!(at - 300.0);
        self.0["status"] = json!("ended");
        self.0["seq"] = json!(seq);
        self
    }
}

/// A conflict copy's name for `main`, in the style of one of the engines.
fn conflict_name(rng: &mut Rng, main: &str) -> String {
    let stem = main.strip_suffix(".json").unwrap();
    let n = rng.below(90) + 10;
    match rng.below(4) {
        0 => format!("{stem}.sync-conflict-202611{n}-1011{n}-ABCD{n}E.json"),
        1 => format!("{stem} (host9's conflicted copy 2026-11-{n}).json"),
        2 => format!("{stem} (conflicted copy 2026-11-30 10{n}12).json"),
        _ => format!("{stem} {}.json", n % 9 + 2),
    }
}

/// A row's place: its directory (only for several) and file.
fn key(r: &JsonRow) -> (String, String) {
    (r.dir.clone().unwrap_or_default(), r.file.clone())
}

fn shows_label(r: &JsonRow) -> bool {
    r.profile == "default" || r.profile.is_empty()
}

/// What one case's commands said, for the report.
#[derive(Default)]
struct Views {
    lines: Vec<String>,
    disagreements: Vec<String>,
}

impl Views {
    fn saw(&mut self, what: &str, v: impl std::fmt::Debug) {
        self.lines.push(format!("{what}: {v:?}"));
    }
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.disagreements.push(what());
        }
    }
}

fn run_case(case: &Case) -> Views {
    let r = &case.reader;
    let mut v = Views::default();
    // Learn the writers' clocks.
    r.run(&["list", "--all", "--json"]).success();
    let names_before = case.listing();

    let list = r.list(&[]);
    let shown: Vec<(String, String)> = list.iter().map(key).collect();
    let shown_set: BTreeSet<_> = shown.iter().cloned().collect();
    let mut ids: Vec<String> = sessions(&list);
    ids.sort();
    v.saw(
        "list --json",
        list.iter()
            .map(|r| (key(r), &r.session_id))
            .collect::<Vec<_>>(),
    );
    for row in &list {
        v.check(row.live && row.state == "live", || {
            format!("list --json shows a row that is not live: {row:?}")
        });
    }
    v.check(shown_set.len() == shown.len(), || {
        "list --json shows a file twice".into()
    });

    let count = r.run(&["list", "--count"]).success().stdout;
    v.saw("list --count", count.trim());
    v.check(count.trim() == list.len().to_string(), || {
        format!(
            "list --count says {}, list --json has {} rows",
            count.trim(),
            list.len()
        )
    });

    let table = run_ok(
        r.cmd()
            .env("COLUMNS", "400")
            .args(["list", "--no-trunc", "--no-header"]),
    );
    let table = String::from_utf8_lossy(&table.stdout).into_owned();
    let mut table_ids: Vec<String> = table
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(|id| id.trim_start_matches(['*', '?']).to_string())
        .collect();
    table_ids.sort();
    v.saw("list (table)", &table);
    v.check(table_ids == ids, || {
        format!("the table lists {table_ids:?}, list --json {ids:?}")
    });

    let s = Stream::start(r, &["list", "--watch", "--count"]);
    let first = s.next();
    s.stop();
    v.saw("list --watch --count", &first);
    v.check(first == list.len().to_string(), || {
        format!(
            "list --watch --count starts at {first}, list --json has {} rows",
            list.len()
        )
    });

    let s = Stream::start(r, &["watch", "--json"]);
    let mut ups = Vec::new();
    let ready = loop {
        let e = s.json();
        if e.event == "ready" {
            break e;
        }
        ups.push(e);
    };
    s.stop();
    let up_keys: Vec<(String, String)> = ups.iter().map(|e| key(e.row())).collect();
    v.saw("watch --json initial", &up_keys);
    let up_set: BTreeSet<_> = up_keys.iter().cloned().collect();
    v.check(up_set == shown_set, || {
        let extra: Vec<_> = up_set.difference(&shown_set).collect();
        let missing: Vec<_> = shown_set.difference(&up_set).collect();
        format!("watch's initial set has {extra:?} more and {missing:?} fewer than list --json")
    });
    v.check(up_set != shown_set || up_keys == shown, || {
        format!("watch's initial set {up_keys:?}, list --json {shown:?} (same order, docs/json-output.md)")
    });
    v.check(
        ups.iter()
            .all(|e| e.event == "up" && e.initial == Some(true)),
        || format!("watch's initial lines are not all `up` with `initial`: {ups:?}"),
    );
    v.check(ready.count == Some(ups.len()), || {
        format!(
            "watch's ready says {:?} after {} up lines",
            ready.count,
            ups.len()
        )
    });

    // `list --all`: every record of every label; the winners that are live
    // (and of the label shown) are exactly what `list` shows.
    let all = r.list(&["--all", "--all-profiles"]);
    v.saw(
        "list --all --all-profiles",
        all.iter()
            .map(|r| (key(r), &r.session_id, &r.state, r.live, &r.lost_because))
            .collect::<Vec<_>>(),
    );
    let winners: BTreeSet<_> = all
        .iter()
        .filter(|r| r.live && r.superseded_by.is_none() && shows_label(r))
        .map(key)
        .collect();
    v.check(winners == shown_set, || {
        format!("list --all's live winners {winners:?}, list --json {shown_set:?}")
    });
    for row in &all {
        if row.lost_because.as_deref() == Some("life_ended") {
            v.check(!row.live && row.state == "ended", || {
                format!("a life_ended copy is not shown ended (record-format.md, rule 1): {row:?}")
            });
        }
    }

    for (id, expect) in &case.ids {
        let out = r.run(&["show", id, "--json"]);
        let listed: Vec<(String, String)> = list
            .iter()
            .filter(|r| &r.session_id == id)
            .map(key)
            .collect();
        if out.code == 1 {
            v.saw(&format!("show {id}"), "none (exit 1)");
            v.check(listed.is_empty() && *expect != Expect::Found, || {
                format!("show {id} finds nothing; list shows {listed:?}; generated as {expect:?}")
            });
            continue;
        }
        assert_eq!(out.code, 0, "show {id}: {}", out.stderr);
        let row: JsonRow = parse_json(&out.stdout, "show --json");
        v.saw(
            &format!("show {id}"),
            (key(&row), row.live, &row.state, &row.superseded_by),
        );
        v.check(*expect != Expect::Absent, || {
            format!(
                "show {id} finds {:?}, in a file that is never read",
                key(&row)
            )
        });
        if listed.is_empty() {
            v.check(!row.live || row.superseded_by.is_some(), || {
                format!("show {id} says live (not superseded), list does not show it: {row:?}")
            });
        } else {
            v.check(
                row.live && row.superseded_by.is_none() && listed.contains(&key(&row)),
                || {
                    format!(
                        "list shows {id} as {listed:?}, show says {:?} live={} superseded_by={:?}",
                        key(&row),
                        row.live,
                        row.superseded_by
                    )
                },
            );
        }
    }

    // devices and doctor count every record of every label, live or not.
    let mut by_device: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut by_name: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for row in &all {
        let d = by_device.entry(row.device_id.clone()).or_default();
        d.0 += 1;
        d.1 += usize::from(row.live);
        let name = if row.local {
            "this device".to_string()
        } else if row.device_id.is_empty() {
            format!("host {}", row.host)
        } else {
            format!(
                "device {} ({})",
                &row.device_id[..8.min(row.device_id.len())],
                row.host
            )
        };
        let n = by_name.entry(name).or_default();
        n.0 += 1;
        n.1 += usize::from(row.live);
    }
    let devices: Vec<JsonDevice> = r.json(&["devices", "--json"]);
    let seen: BTreeMap<String, (usize, usize)> = devices
        .iter()
        .map(|d| (d.device_id.clone(), (d.records, d.live)))
        .collect();
    v.saw("devices --json (records, live)", &seen);
    v.check(seen == by_device, || {
        format!("devices says {seen:?}; list --all --all-profiles has {by_device:?}")
    });
    for row in &list {
        let live = seen.get(&row.device_id).map_or(0, |d| d.1);
        let listed = list.iter().filter(|r| r.device_id == row.device_id).count();
        v.check(live >= listed, || {
            format!(
                "devices says {live} live for {:?}, list shows {listed}",
                row.device_id
            )
        });
    }

    let doctor = r.run(&["doctor", "--json"]);
    let checks: Vec<JsonCheck> = parse_json(&doctor.stdout, "doctor --json");
    let mut counted: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for c in checks.iter().filter(|c| c.check == "device") {
        let Some((name, rest)) = c.message.split_once(": ") else {
            v.check(false, || {
                format!("doctor's device check has no name: {c:?}")
            });
            continue;
        };
        let nums: Vec<usize> = rest
            .split(", ")
            .take(2)
            .filter_map(|p| p.split(' ').next().and_then(|n| n.parse().ok()))
            .collect();
        if let [records, live] = nums[..] {
            counted.insert(name.to_string(), (records, live));
        } else {
            v.check(false, || {
                format!("doctor's device check without counts: {c:?}")
            });
        }
    }
    v.saw("doctor device checks (records, live)", &counted);
    v.check(counted == by_name, || {
        format!("doctor counts {counted:?}; list --all --all-profiles has {by_name:?}")
    });

    let expire: JsonExpire = r.json(&["expire", "--dry-run", "--json"]);
    v.saw("expire --dry-run", &expire.removed);
    for g in &expire.removed {
        let k = (g.dir.clone().unwrap_or_default(), g.file.clone());
        v.check(!shown_set.contains(&k), || {
            format!(
                "expire --dry-run would delete {k:?} ({}), which list shows live",
                g.reason
            )
        });
    }
    v.check(expire.dry_run, || {
        "expire --dry-run says dry_run false".into()
    });
    let names_after = case.listing();
    v.check(names_before == names_after, || {
        "the directory changed during the reads (expire --dry-run deleted?)".into()
    });

    // Nothing above changed what `list` shows.
    let again: Vec<(String, String)> = r.list(&[]).iter().map(key).collect();
    v.check(again == shown, || {
        format!("list --json changed during the case: first {shown:?}, now {again:?}")
    });
    v
}

#[test]
fn every_reader_agrees_on_the_live_set() {
    let seed = env_u64("DIFFTEST_SEED").unwrap_or(0x5eed_2025);
    let cases = env_u64("DIFFTEST_CASES").unwrap_or(40);
    let only = env_u64("DIFFTEST_CASE");
    let mut rng = Rng(seed);
    let t = now();
    let mut built = Vec::new();
    for index in 0..cases {
        // Each case from its own stream, so one can be replayed alone.
        let mut r = Rng(seed ^ rng.next());
        if only.is_some_and(|o| o != index) {
            continue;
        }
        let mut case = Case::new(index, &mut r);
        case.first_burst(&mut r, t);
        built.push((case, r));
    }
    // Two arrivals at least 2 s apart: a reader may learn clocks from them.
    std::thread::sleep(Duration::from_millis(2500));
    let t = now();
    for (case, r) in &mut built {
        case.plan_sessions(r, t);
        if r.chance(25) {
            case.reader
                .publish("own", &["--ttl", "15m", "--endpoint", "tmux://h/main"]);
            case.ids.insert("own".into(), Expect::Found);
            case.plan
                .push("own: published by the reader, on tmux://h/main".into());
        }
        case.write_later();
    }
    let mut failed = Vec::new();
    for (case, _) in &built {
        let views = run_case(case);
        if !views.disagreements.is_empty() {
            failed.push(format!(
                "case {} (replay: DIFFTEST_SEED={seed} DIFFTEST_CASE={}):\n\
                 disagreements:\n  {}\nplan:\n  {}\ndirectory:\n{}views:\n  {}\n",
                case.index,
                case.index,
                views.disagreements.join("\n  "),
                case.plan.join("\n  "),
                case.listing(),
                views.lines.join("\n  ")
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} cases disagree:\n\n{}",
        failed.len(),
        built.len(),
        failed.join("\n")
    );
}

#[test]
fn the_generator_depends_on_the_seed_alone() {
    let (mut a, mut b) = (Rng(7), Rng(7));
    let xs: Vec<u64> = (0..8).map(|_| a.next()).collect();
    let ys: Vec<u64> = (0..8).map(|_| b.next()).collect();
    assert_eq!(xs, ys);
    assert_ne!(Rng(8).next(), xs[0]);
}
