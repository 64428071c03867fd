//! `expire`: applies [`crate::expire::decide`] to each directory the
//! profile reads, deleting through the one write path (this device's
//! records under their lock) or only if unchanged (every other file).

use std::collections::HashSet;

use serde::Serialize;

use crate::config::ShowSet;
use crate::dedupe::Digest;
use crate::error::Result;
use crate::expire::{Garbage, Policy, Reading, decide};
use crate::owner::{self, OwnerState};
use crate::registry::Registry;
use crate::registry::change::{Change, Done, Own};
use crate::registry::read::Pass;
use crate::store::Entry;

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
        let scan = dir.scan()?;
        let no_ledger = Own::default();
        let own = owns.get(at).unwrap_or(&no_ledger);
        let mine = |e: &Entry| own.is_mine(&e.file, e.kind, &e.record);
        let policy = Policy {
            skew: self.profile.skew.as_secs_f64(),
            gc_after: self.profile.gc_after.as_secs_f64(),
        };
        // Asked only of this device's records, and of the owner its ledger
        // recorded: a file's pid is whatever its last writer put there.
        let owner_alive = |e: &Entry| {
            own.get(&e.file, e.kind, &e.record).is_some_and(|m| {
                m.owner_start
                    .is_some_and(|s| owner::owner_state(m.pid, s) == OwnerState::Alive)
            })
        };
        // Each writer's times are read through its learned clock (see
        // clock.rs); what this scan teaches is kept for the next reader.
        // Garbage belongs to no one: every label is judged.
        let pass = Pass::begin(self, ShowSet::All, owns);
        let mut learned = crate::clock::Clocks::default();
        for e in &scan.entries {
            pass.judge_record(&mut learned, e, now);
        }
        let reading = |e: &Entry| Reading {
            clock: pass.clock(&e.record.device_id, now),
            ended_here: pass.ended_here(Digest::life(e.record.author(), e.record.life())),
        };
        let plan = decide(
            &scan.entries,
            &scan.temps,
            mine,
            policy,
            now,
            owner_alive,
            reading,
        );
        pass.end(self, &learned, now);
        let total = scan.entries.len() + scan.temps.len();
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
