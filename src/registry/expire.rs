//! `expire`: applies [`crate::expire::decide`] to each directory the
//! profile reads, deleting through the one write path (this device's
//! records under their lock) or only if unchanged (every other file).

use std::collections::HashSet;

use serde::Serialize;

use crate::clock::Clocks;
use crate::config::ShowSet;
use crate::dedupe::Digest;
use crate::dedupe::Facts;
use crate::error::Result;
use crate::expire::{Garbage, Judged, Policy, Reading, decide};
use crate::owner::{self, OwnerState};
use crate::registry::Registry;
use crate::registry::change::{Change, Done, Own};
use crate::registry::read::{self, Pass};
use crate::store::{NameKind, Stamp};

/// What `expire` did (or, with `dry_run`, would do).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ExpireOutcome {
    /// Files deleted (or that would be).
    pub removed: Vec<Garbage>,
    /// Files judged garbage that changed before they could be deleted; kept.
    pub changed: usize,
    /// Records and temp files kept.
    pub kept: usize,
}

impl Registry {
    /// Garbage-collects the whole directory (every label: garbage belongs to
    /// no one) at `now` — each directory the profile reads, by its own rule
    /// (see [`crate::Profile::expires_others`]) and on its own: a file is
    /// judged among the files of its directory. With `dry_run`, only
    /// reports. A directory is opened once, so one whose path became a
    /// symlink is an error ([`crate::error::Error::DirectoryReplaced`]) and
    /// nothing more is deleted.
    ///
    /// The lives this device ended, by the ledgers of every directory, are
    /// ended in each of them: a copy of one is deleted wherever it lies.
    pub fn expire(&self, now: f64, dry_run: bool) -> Result<ExpireOutcome> {
        let mut out = ExpireOutcome::default();
        for at in 0..self.dirs.len() {
            self.refuse_dir(at)?;
        }
        let dirs = self.open_dirs()?;
        let owns = self.owns(&dirs)?;
        for (at, dir) in dirs.iter().enumerate() {
            self.expire_dir(at, dir, &owns, now, dry_run, &mut out)?;
        }
        Ok(out)
    }

    /// An error if the profile's `at`-th directory is one never to expire.
    fn refuse_dir(&self, at: usize) -> Result<()> {
        let path = self.read_dir(at);
        // The resolver refuses these already; a Profile built by hand is
        // checked here, before anything is deleted.
        if let Some((what, resolved)) = crate::config::refused_dir(path, &self.local.home) {
            return Err(crate::error::ConfigError::RefusedDir {
                dir: path.to_path_buf(),
                resolved,
                what,
                origin: match at {
                    0 => "the profile's `dir`".into(),
                    _ => "the profile's `dirs`".into(),
                },
                from_command_line: false,
            }
            .into());
        }
        Ok(())
    }

    /// [`expire`](Self::expire) of `dir`, the profile's `at`-th directory;
    /// `owns` are the ledgers of all of them.
    fn expire_dir(
        &self,
        at: usize,
        dir: &crate::store::Dir,
        owns: &[Own],
        now: f64,
        dry_run: bool,
        out: &mut ExpireOutcome,
    ) -> Result<()> {
        let path = self.read_dir(at);
        // In Hermes' own directory, Hermes removes what it wrote.
        let expires_others = match at {
            0 => self.profile.expires_others,
            _ => crate::config::expires_others_in(path, &self.local.home),
        };
        let shown = (self.dirs.len() > 1).then(|| path.to_path_buf());
        let no_ledger = Own::default();
        let own = owns.get(at).unwrap_or(&no_ledger);
        let policy = Policy {
            skew: self.profile.skew.as_secs_f64(),
            gc_after: self.profile.gc_after.as_secs_f64(),
        };
        // Each writer's times are read through its learned clock (see
        // clock.rs); what this scan teaches is kept for the next reader.
        // Garbage belongs to no one: every label is judged.
        let (names, mut report) = dir.candidates()?;
        let (_, caches) = self.scan_caches(std::slice::from_ref(dir), &[names.len()]);
        let cache = caches.into_iter().next().flatten();
        // Begun once the cache is read (see `list_once`).
        let pass = Pass::begin(self, ShowSet::All, owns);
        let lookup = cache.as_ref().map(|c| c.index(&names));
        let scan = (&names, &mut report, lookup.as_ref());
        let (files, learned) = self.expire_scan(dir, scan, own, &pass, now);
        let temps = report.temps;
        // Asked only of this device's records, and of the owner its ledger
        // recorded: a file's pid is whatever its last writer put there.
        let owner_alive = |s: &Seen<'_>| {
            s.owner
                .is_some_and(|(pid, start)| owner::owner_state(pid, start) == OwnerState::Alive)
        };
        let plan = decide(
            &files,
            &temps,
            |s: &Seen<'_>| s.mine,
            policy,
            now,
            owner_alive,
            |s: &Seen<'_>| s.reading,
        );
        pass.end(self, &learned, now);
        let total = files.len() + temps.len();
        let before = out.removed.len();
        let mut gone = HashSet::new();
        for mut g in plan {
            if !g.own && !expires_others {
                continue;
            }
            g.dir = shown.clone();
            if !gone.insert(g.file.clone()) {
                continue;
            }
            let removed = if dry_run {
                true
            } else if g.own {
                // Ours: under the lock, only if it is still the version judged.
                let (done, ()) = self.change(dir, &g.file, |cur| {
                    let same = cur.stamp == Some(g.stamp) && cur.holds_written();
                    Ok((if same { Change::Remove } else { Change::Leave }, ()))
                })?;
                done == Done::Removed
            } else {
                dir.remove_if_unchanged(&g.file, g.stamp)?
            };
            if removed {
                out.removed.push(g);
            } else {
                out.changed += 1;
            }
        }
        out.kept += total - (out.removed.len() - before);
        if !dry_run {
            // Forget lives whose file is gone (deleted here or by another
            // device's expire), so the ledger does not grow forever — but
            // only once no copy of them can be live anywhere (see
            // `ledger::Entry::needs`).
            for (file, m) in own.files() {
                let needed = m.needs(now, policy.skew, policy.gc_after);
                if !needed && matches!(dir.stamp(file), Ok(None)) {
                    self.change(dir, file, |_| Ok((Change::Forget, ())))?;
                }
            }
        }
        Ok(())
    }
}

impl Registry {
    /// Every record file of `dir` as [`decide`] judges it, its temp files,
    /// and what the files taught of their writers' clocks. A file is taken
    /// from the scan cache in the version it knows, or read and probed, as
    /// `list` takes it (see `read::each_file`); none is parsed in full but
    /// those this device's ledger names, which are read again whole to tell
    /// whether they hold what this device wrote.
    fn expire_scan<'n>(
        &self,
        dir: &crate::store::Dir,
        (names, report, lookup): (
            &'n crate::store::Names,
            &mut crate::store::ScanReport,
            Option<&crate::scan_cache::Lookup<'_>>,
        ),
        own: &Own,
        pass: &Pass,
        now: f64,
    ) -> (Vec<Seen<'n>>, Clocks) {
        let seen = |file: u32, f: &Facts<&str>, stamp: Stamp| {
            let (name, kind) = names.get(file as usize);
            Seen {
                file: name,
                kind,
                stamp,
                verdict: f.verdict,
                group: f.group,
                life: f.life,
                times: f.times(),
                seq: f.seq,
                reading: Reading {
                    clock: pass.clock(f.device, now),
                    ended_here: pass.ended_here(f.life),
                },
                mine: false,
                owner: None,
            }
        };
        type Part<'n> = (Clocks, Vec<Seen<'n>>);
        let parts = read::each_file(
            dir,
            names,
            report,
            lookup,
            <Part>::default,
            |(learned, files): &mut Part, k: read::Known<'_>| {
                pass.judge(learned, &k.facts, k.stamp.ctime(), now);
                files.push(seen(k.file, &k.facts, k.stamp));
            },
            |(learned, files): &mut Part, p: read::Probed<'_>| {
                pass.judge(learned, &p.facts, p.raw.ctime, now);
                files.push(seen(p.file, &p.facts, p.raw.stamp));
            },
        );
        let mut learned = Clocks::default();
        let mut files = Vec::with_capacity(names.len());
        for (part_learned, part) in parts {
            learned.merge(&part_learned, now);
            files.extend(part);
        }
        // The files this device's ledger names: read whole, as they are now.
        let mut gone = Vec::new();
        for (i, s) in files.iter_mut().enumerate() {
            if !own.names(s.file) {
                continue;
            }
            match dir.read_entry(s.file) {
                Ok(Some(e)) => {
                    let m = own.get(&e.file, e.kind, &e.record);
                    *s = Seen {
                        file: s.file,
                        kind: e.kind,
                        stamp: e.stamp,
                        verdict: e.verdict,
                        group: e.group(),
                        life: e.life(),
                        times: e.times(),
                        seq: e.record.seq,
                        reading: Reading {
                            clock: pass.clock(&e.record.device_id, now),
                            ended_here: pass.ended_here(e.life()),
                        },
                        mine: m.is_some(),
                        owner: m.and_then(|m| m.owner_start.map(|start| (m.pid, start))),
                    };
                }
                // Gone, or no record any more: nothing to judge.
                Ok(None) | Err(_) => gone.push(i),
            }
        }
        for i in gone.into_iter().rev() {
            files.swap_remove(i);
        }
        (files, learned)
    }
}

/// A record file as `expire` judges it (see [`Registry::expire_scan`]).
#[derive(Debug, Clone)]
struct Seen<'n> {
    file: &'n str,
    kind: NameKind,
    stamp: Stamp,
    verdict: crate::identity::Verdict,
    group: Digest,
    life: Digest,
    times: [Option<f64>; 3],
    seq: u64,
    reading: Reading,
    /// A record this device wrote, as its ledger says.
    mine: bool,
    /// Its owner process as the ledger recorded it (pid, start time).
    owner: Option<(u32, u64)>,
}

impl Judged for Seen<'_> {
    fn file(&self) -> &str {
        self.file
    }
    fn kind(&self) -> NameKind {
        self.kind
    }
    fn ctime(&self) -> f64 {
        self.stamp.ctime()
    }
    fn stamp(&self) -> Stamp {
        self.stamp
    }
    fn verdict(&self) -> crate::identity::Verdict {
        self.verdict
    }
    fn group(&self) -> Digest {
        self.group
    }
    fn life(&self) -> Digest {
        self.life
    }
    fn times(&self) -> [Option<f64>; 3] {
        self.times
    }
    fn seq(&self) -> u64 {
        self.seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expire::Reason;

    /// A registry on `dir` with its local state under `root/name`.
    fn registry(root: &std::path::Path, name: &str, dir: &std::path::Path) -> Registry {
        let local = crate::LocalDirs::under(&root.join(name));
        let sel = crate::Selection {
            dir: Some(dir.to_path_buf()),
            ..crate::Selection::default()
        };
        let (profile, _) = crate::config::resolve(&sel, &local).unwrap();
        Registry::new(profile, local).with_host(name)
    }

    fn publish(r: &Registry, session: &str, now: f64) {
        let req = crate::PublishRequest {
            session_id: session.into(),
            ..crate::PublishRequest::default()
        };
        r.publish(&req, now).unwrap();
    }

    fn names(dir: &std::path::Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_directory_swapped_for_a_symlink_is_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let (shared, decoy) = (root.join("shared"), root.join("decoy"));
        let t = crate::local::unix_now();
        // Garbage an hour from now, in both directories.
        publish(&registry(&root, "other", &shared), "s1", t);
        publish(&registry(&root, "other", &decoy), "d1", t);
        let me = registry(&root, "me", &shared);
        let (before_shared, before_decoy) = (names(&shared), names(&decoy));
        std::fs::rename(&shared, root.join("shared.away")).unwrap();
        std::os::unix::fs::symlink(&decoy, &shared).unwrap();
        for dry_run in [true, false] {
            match me.expire(t + 7200.0, dry_run) {
                Err(crate::error::Error::DirectoryReplaced { link, .. }) => {
                    assert_eq!(link, shared)
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(names(&decoy), before_decoy);
        assert_eq!(names(&root.join("shared.away")), before_shared);
        // The decoy's record was garbage: a registry configured with the
        // link from the start follows it and deletes it.
        let through_link = registry(&root, "me", &shared);
        let out = through_link.expire(t + 7200.0, false).unwrap();
        assert_eq!(out.removed.len(), 1, "{out:?}");
        assert!(names(&decoy).is_empty());
    }

    #[test]
    fn expire_deletes_only_records_and_temps_named_after_them() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let dir = root.join("shared");
        let t = crate::local::unix_now();
        publish(&registry(root, "other", &dir), "s1", t);
        let record = names(&dir).pop().unwrap();
        let own_temp = format!(".{record}.4242.aB3xYz.tmp");
        let keep = [
            ("notes.json", r#"{"title": "my notes, no session_id"}"#),
            ("torn.json", r#"{"session_id": "x", "upd"#),
            (".notes.tmp", "scratch"),
            (".notes.json.tmp", "scratch"),
            (".other.tmp.4242.aB3xYz.tmp", "scratch"),
        ];
        for (name, text) in keep {
            std::fs::write(dir.join(name), text).unwrap();
        }
        std::fs::write(dir.join(&own_temp), "{").unwrap();
        let out = registry(root, "me", &dir)
            .expire(t + 7200.0, false)
            .unwrap();
        let mut removed: Vec<(&str, Reason)> = out
            .removed
            .iter()
            .map(|g| (g.file.as_str(), g.reason))
            .collect();
        removed.sort_by_key(|(f, _)| f.to_string());
        let mut want = vec![
            (own_temp.as_str(), Reason::StaleTemp),
            (record.as_str(), Reason::Garbage),
        ];
        want.sort_by_key(|(f, _)| f.to_string());
        assert_eq!(removed, want);
        let mut left: Vec<String> = keep.iter().map(|(n, _)| n.to_string()).collect();
        left.sort();
        assert_eq!(names(&dir), left);
    }
}
