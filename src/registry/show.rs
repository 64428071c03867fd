//! `show`: the newest record of one session, live or not.

use crate::clock::Clocks;
use crate::dedupe::{self, Digest};
use crate::error::Result;
use crate::liveness::State;
use crate::store::Entry;

use super::read::{self, Pass};
use super::{ListOptions, Listing, Registry, Row};
use crate::limits::REDACTED;

impl Registry {
    /// The newest record (live or not) whose `session_id` or `session_key` is
    /// `id`, among the labels this profile shows, and the others that matched
    /// (the copy that speaks for its life and group first, then the newest).
    pub fn show(&self, id: &str, now: f64) -> Result<Option<(Row, Vec<Row>)>> {
        let dirs = self.open_dirs()?;
        let owns = self.owns(&dirs)?;
        // Every file is probed into a slot, as `list` does; only the groups
        // holding a match, and the other copies of their lives (a tombstone
        // elsewhere ends a life), are then read in full, as `list --all`
        // reads them.
        let mut learned = Clocks::default();
        let mut slots = Vec::new();
        let mut listed_names = Vec::with_capacity(dirs.len());
        for dir in &dirs {
            listed_names.push(dir.candidates()?);
        }
        let counts: Vec<usize> = listed_names.iter().map(|(n, _)| n.len()).collect();
        // Rows show credential-shaped ids redacted, and `show` matches the
        // id as shown: an id holding the redaction mark may match any file.
        let wild = id.contains(REDACTED.trim_end_matches(']'));
        // The scan cache, read but not written: `list` keeps it.
        let (_, caches) = self.scan_caches(&dirs, &counts);
        // Begun once the caches are read (see `list_once`).
        let pass = Pass::begin(self, self.show_set(false), &owns);
        let mut scans = Vec::with_capacity(dirs.len());
        for (at, (dir, (names, mut report))) in dirs.iter().zip(listed_names).enumerate() {
            let cache = caches.get(at).and_then(Option::as_ref);
            let lookup = cache.map(|c| c.index(&names));
            type Acc = (Vec<dedupe::Slot>, Clocks);
            // Every record teaches its writer's clock; a file of a label
            // shown becomes a slot, marked when it matches.
            let pass = &pass;
            let add = |(slots, learned): &mut Acc, f: &dedupe::Facts<&str>, file, ctime| {
                if pass.judge(learned, f, ctime, now).is_some() {
                    let matched = wild || f.session == id || f.session_key == id;
                    slots.push(dedupe::Slot {
                        group: f.group,
                        life: f.life,
                        updated: 0.0,
                        seq: 0,
                        file,
                        kept: u32::from(matched),
                        dir: at as u32,
                        part: 0,
                        ended: false,
                        state: State::Live,
                    });
                }
            };
            let known = |acc: &mut Acc, k: read::Known<'_>| {
                add(acc, &k.facts, k.file, k.stamp.ctime());
            };
            let probed = |acc: &mut Acc, r: read::Probed<'_>| {
                add(acc, &r.facts, r.file, r.raw.ctime);
            };
            let parts = read::each_file(
                dir,
                &names,
                &mut report,
                lookup.as_ref(),
                Default::default,
                known,
                probed,
            );
            for (part, samples) in parts {
                learned.merge(&samples, now);
                slots.extend(part);
            }
            scans.push(names);
        }
        pass.end(self, &learned, now);
        let mut groups: Vec<Digest> = slots
            .iter()
            .filter(|s| s.kept == 1)
            .map(|s| s.group)
            .collect();
        if groups.is_empty() {
            return Ok(None);
        }
        groups.sort_unstable();
        groups.dedup();
        let mut lives: Vec<Digest> = slots
            .iter()
            .filter(|s| groups.binary_search(&s.group).is_ok())
            .map(|s| s.life)
            .collect();
        lives.sort_unstable();
        lives.dedup();
        let entries: Vec<(usize, Entry)> = slots
            .iter()
            .filter(|s| {
                groups.binary_search(&s.group).is_ok() || lives.binary_search(&s.life).is_ok()
            })
            .filter_map(|s| {
                let at = s.dir as usize;
                let file = scans.get(at)?.get(s.file as usize).0;
                let e = dirs.get(at)?.read_entry(file).ok().flatten()?;
                // Rewritten since it was probed into a forgery: not shown.
                (pass.shows(&e.record.profile) && e.verdict.counts()).then_some((at, e))
            })
            .collect();
        let opts = ListOptions {
            all: true,
            ..ListOptions::default()
        };
        let listing = Listing {
            dir_exists: true,
            rows: self.every_row(entries, opts, &owns, now, &pass),
            skipped: Vec::new(),
        };
        let mut matches: Vec<Row> = listing
            .rows
            .into_iter()
            .filter(|r| r.record.session_id == id || r.record.session_key == id)
            .collect();
        if matches.is_empty() {
            return Ok(None);
        }
        // The copy that speaks for its life and group first (what `list`
        // shows), then the newest of the rest.
        matches.sort_by(|a, b| {
            (
                a.superseded_by.is_none(),
                a.live,
                dedupe::Rank::of(&a.record, &a.file).in_dir(a.dir_index),
            )
                .cmp(&(
                    b.superseded_by.is_none(),
                    b.live,
                    dedupe::Rank::of(&b.record, &b.file).in_dir(b.dir_index),
                ))
                .reverse()
        });
        let shown = matches.remove(0);
        Ok(Some((shown, matches)))
    }
}
