//! Keeping records alive exactly while their sessions live: `refresh` (one
//! pass, for cron, a systemd timer or a loop) here, and the keep-alive
//! [`Guard`](super::guard::Guard) (the library's, and the one `presence run` uses) in
//! [`guard`](super::guard).
//!
//! Every rewrite goes through [`Registry::change`]: under the record's lock,
//! after re-reading the file, and only if it is still the version the
//! decision was made on. So a refresh that read a record just before it was
//! cleared never writes it back, and a clear never ends a newer life of a
//! session that it did not read. Only the lives the ledger says this device
//! published are refreshed or cleared, and their owner process is the one the
//! ledger recorded — never what a file (which another device may have
//! written) claims.

use serde::Serialize;

use crate::error::Result;
use crate::ledger;
use crate::liveness::{end_of, refreshed, tombstone};
use crate::owner::{self, OwnerState};
use crate::record::Record;
use crate::registry::Registry;
use crate::registry::change::{Change, Done};
use crate::store::Stamp;

/// What one refresh pass decided for one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub(crate) enum StepKind {
    /// The owner runs: re-publish with new times and `seq + 1`.
    Refresh,
    /// The owner is gone (or its pid was reused): write a tombstone.
    Clear,
    /// No owner recorded: leave the record to expire.
    Leave,
}

/// One planned action of a refresh pass, with the version it was decided on.
#[derive(Debug, Clone)]
pub(crate) struct RefreshStep {
    /// The record file.
    pub file: String,
    /// What to do.
    pub kind: StepKind,
    life: ledger::Life,
    /// The version planned on; `None`: the file was gone.
    stamp: Option<Stamp>,
}

/// What a refresh pass did.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct RefreshOutcome {
    /// Files re-published.
    pub refreshed: Vec<String>,
    /// Files turned into tombstones because their owner is gone.
    pub cleared: Vec<String>,
    /// Records without an owner, left to expire.
    pub left: usize,
    /// Records that changed between the plan and the lock (another writer
    /// got there first); left as they are.
    pub changed: usize,
    /// What discovery of local agents' sessions did in this pass; `None`
    /// when the pass ran no discovery (`[discover] agents` is empty, or the
    /// pass was [`Registry::refresh`]). `presence refresh` runs it.
    pub discover: Option<DiscoverOutcome>,
}

/// What discovery did in one refresh pass: the live sessions of the
/// configured agents that it found, and what became of their records.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct DiscoverOutcome {
    /// The agents looked for (`[discover] agents`).
    pub agents: Vec<String>,
    /// Live sessions found (each with its agent's process running).
    pub found: usize,
    /// Files written: sessions new to the directory, or whose status,
    /// title, model, cwd, endpoint or process changed.
    pub published: Vec<String>,
    /// Files turned into tombstones: discovered sessions no longer found
    /// while their process runs (a new session in the same process, an
    /// agent no longer named).
    pub cleared: Vec<String>,
    /// Sessions whose record already said it all (the pass refreshed them).
    pub kept: usize,
    /// Sessions left to the live record a hook publishes for them.
    pub hooked: usize,
    /// What went wrong with one session (it could not be published or
    /// cleared) and what was redacted, one line each.
    pub warnings: Vec<String>,
}

impl RefreshOutcome {
    /// Adds another pass's counts (for `--all-profiles`).
    pub fn merge(&mut self, other: RefreshOutcome) {
        self.refreshed.extend(other.refreshed);
        self.cleared.extend(other.cleared);
        self.left += other.left;
        self.changed += other.changed;
        if self.discover.is_none() {
            self.discover = other.discover;
        }
    }
}

impl Registry {
    /// Ends `expected`'s life in `file` at `now`, if the file still holds
    /// that life and the ledger says this device published it. Returns the
    /// tombstone written.
    pub(crate) fn end_life(
        &self,
        file: &str,
        expected: &Record,
        now: f64,
    ) -> Result<Option<Record>> {
        let dir = self.dir.open()?;
        let life = ledger::Life::of(expected);
        let skew = self.profile.skew.as_secs_f64();
        let (done, tomb) = self.change(&dir, file, |cur| {
            Ok(match &cur.entry {
                Some(e)
                    if cur.holds_mine()
                        && ledger::Life::of(&e.record) == life
                        && e.record.ended_at.is_none() =>
                {
                    let base = cur.base().unwrap_or_else(|| e.record.clone());
                    let tomb = tombstone(base, now, skew);
                    (Change::Write(Box::new(tomb.clone())), Some(tomb))
                }
                _ => (Change::Leave, None),
            })
        })?;
        Ok(tomb.filter(|_| done == Done::Written))
    }

    /// Decides, for each live-or-expired (not ended) record that the ledger
    /// says this device published, whether to refresh, clear or leave it;
    /// and re-ends any life this device ended whose file a sync engine has
    /// turned back into a live copy. With `any_label`, records of every
    /// label count; otherwise only this profile's label. Reads only this
    /// device's files, not the whole directory.
    pub(crate) fn plan_refresh(&self, any_label: bool) -> Result<Vec<RefreshStep>> {
        let dir = self.dir.open()?;
        if !dir.exists() {
            return Ok(Vec::new());
        }
        let label = crate::record::label_of(&self.profile.label);
        let mut steps = Vec::new();
        // Many records share an owner (a gateway's sessions): each is asked
        // about once per pass.
        let mut owners = std::collections::HashMap::new();
        let mut owner_state = |pid: u32, start: u64| {
            *owners
                .entry((pid, start))
                .or_insert_with(|| owner::owner_state(pid, start))
        };
        for mine in self.ledger(&dir).entries()? {
            if !any_label && crate::record::label_of(&mine.label) != label {
                continue;
            }
            let stamp = match dir.read_entry(&mine.file) {
                Ok(Some(e))
                    if crate::registry::change::holds(&e, &mine) && e.record.ended_at.is_none() =>
                {
                    Some(e.stamp)
                }
                // Gone while this device's ledger says the life goes on
                // (another device's expire, a user's rm): written again if
                // its owner still runs. Only this device's clear ends a life.
                Ok(None) if mine.ended_at.is_none() && mine.record.is_some() => None,
                _ => continue,
            };
            let kind = match (mine.ended_at, mine.owner_start) {
                (None, _) if stamp.is_none() => match mine.owner_start {
                    Some(start) if owner_state(mine.pid, start) == OwnerState::Alive => {
                        StepKind::Refresh
                    }
                    _ => continue,
                },
                (Some(_), _) => StepKind::Clear,
                (None, None) => StepKind::Leave,
                (None, Some(start)) => match owner_state(mine.pid, start) {
                    OwnerState::Alive => StepKind::Refresh,
                    OwnerState::Dead => StepKind::Clear,
                },
            };
            steps.push(RefreshStep {
                file: mine.file,
                kind,
                life: mine.life,
                stamp,
            });
        }
        Ok(steps)
    }

    /// Carries out a plan at `now`. A step whose file changed since the plan
    /// (another version on disk, or no longer this device's life) is skipped
    /// and counted in [`RefreshOutcome::changed`].
    pub(crate) fn apply_refresh(&self, steps: &[RefreshStep], now: f64) -> Result<RefreshOutcome> {
        let mut out = RefreshOutcome::default();
        let dir = self.dir.open()?;
        let skew = self.profile.skew.as_secs_f64();
        for step in steps {
            if step.kind == StepKind::Leave {
                out.left += 1;
                continue;
            }
            let (done, ()) = self.change(&dir, &step.file, |cur| {
                let unchanged = cur.stamp == step.stamp
                    && (cur.holds_mine() || cur.gone())
                    && cur.mine.as_ref().is_some_and(|m| m.life == step.life);
                // From what this device wrote, never from the file's fields.
                let Some(r) = cur.base().filter(|_| unchanged) else {
                    return Ok((Change::Leave, ()));
                };
                let new = match step.kind {
                    StepKind::Refresh => refreshed(r, now),
                    _ => end_of(r, now, skew),
                };
                Ok((Change::Write(Box::new(new)), ()))
            })?;
            match (done, step.kind) {
                (Done::Written, StepKind::Refresh) => out.refreshed.push(step.file.clone()),
                (Done::Written, _) => out.cleared.push(step.file.clone()),
                _ => out.changed += 1,
            }
        }
        Ok(out)
    }

    /// One refresh pass at `now`: refreshes this device's live lives whose
    /// owner still runs and clears those whose owner is gone, each through
    /// the one write path (planned first, then applied, so that a clear
    /// between the two is never undone).
    pub fn refresh(&self, any_label: bool, now: f64) -> Result<RefreshOutcome> {
        self.refresh_except(any_label, &std::collections::HashSet::new(), now)
    }

    /// [`refresh`](Self::refresh), leaving out the files in `written`
    /// (discovery wrote them in this pass: once is enough).
    pub(crate) fn refresh_except(
        &self,
        any_label: bool,
        written: &std::collections::HashSet<String>,
        now: f64,
    ) -> Result<RefreshOutcome> {
        let mut plan = self.plan_refresh(any_label)?;
        plan.retain(|step| !written.contains(&step.file));
        self.apply_refresh(&plan, now)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::{self, Selection};
    use crate::local::LocalDirs;
    use crate::registry::{ListOptions, PublishRequest};
    use crate::store;
    use std::time::Duration;

    pub(crate) struct Fixture {
        _tmp: tempfile::TempDir,
        pub(crate) reg: Registry,
    }

    pub(crate) fn fixture() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let local = LocalDirs::under(tmp.path());
        let (profile, _) = config::resolve(&Selection::default(), &local).unwrap();
        Fixture {
            reg: Registry::new(profile, local).with_host("h"),
            _tmp: tmp,
        }
    }

    pub(crate) fn req(session: &str, owner: Option<u32>) -> PublishRequest {
        PublishRequest {
            session_id: session.into(),
            owner_pid: owner,
            ..PublishRequest::default()
        }
    }

    pub(crate) const T: f64 = 1_000_000_000.0;

    pub(crate) fn all(reg: &Registry, now: f64) -> Vec<Record> {
        let opts = ListOptions {
            all: true,
            ..ListOptions::default()
        };
        reg.list(opts, now)
            .unwrap()
            .rows
            .into_iter()
            .map(|r| r.record)
            .collect()
    }

    #[test]
    fn a_refresh_planned_before_a_clear_does_not_resurrect() {
        let f = fixture();
        f.reg
            .publish(&req("s", Some(std::process::id())), T)
            .unwrap();
        let plan = f.reg.plan_refresh(false).unwrap();
        assert_eq!(plan.len(), 1);
        assert_eq!(plan[0].kind, StepKind::Refresh);
        let cleared = f.reg.clear(Some("s"), None, T + 1.0).unwrap();
        assert_eq!(cleared.cleared.len(), 1);
        let out = f.reg.apply_refresh(&plan, T + 2.0).unwrap();
        assert_eq!((out.refreshed.len(), out.changed), (0, 1));
        let recs = all(&f.reg, T + 2.0);
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].ended_at, Some(T + 1.0));
        assert_eq!(recs[0].seq, 2);
    }

    #[test]
    fn a_clear_after_a_refresh_still_ends_the_session() {
        let f = fixture();
        f.reg
            .publish(&req("s", Some(std::process::id())), T)
            .unwrap();
        // clear's scan and refresh interleave: the refresh lands first.
        f.reg.refresh(false, T + 1.0).unwrap();
        let out = f.reg.clear(Some("s"), None, T + 2.0).unwrap();
        assert_eq!(out.cleared.len(), 1);
        assert_eq!(out.cleared[0].record.seq, 3);
        // A refresh after the clear finds nothing to do.
        assert!(f.reg.plan_refresh(false).unwrap().is_empty());
    }

    #[test]
    fn of_two_refreshers_with_one_plan_only_one_writes() {
        let f = fixture();
        f.reg
            .publish(&req("s", Some(std::process::id())), T)
            .unwrap();
        let p1 = f.reg.plan_refresh(false).unwrap();
        let p2 = f.reg.plan_refresh(false).unwrap();
        let o1 = f.reg.apply_refresh(&p1, T + 1.0).unwrap();
        let o2 = f.reg.apply_refresh(&p2, T + 1.5).unwrap();
        assert_eq!((o1.refreshed.len(), o1.changed), (1, 0));
        assert_eq!((o2.refreshed.len(), o2.changed), (0, 1));
        let recs = all(&f.reg, T + 2.0);
        assert_eq!(recs[0].seq, 2);
        assert_eq!(recs[0].updated_at, Some(T + 1.0));
    }

    #[test]
    fn a_clear_never_ends_a_newer_life() {
        let f = fixture();
        let first = f.reg.publish(&req("s", None), T).unwrap().record;
        let file = store::file_name(&first.instance_id, &first.session_id);
        f.reg.clear(Some("s"), None, T + 1.0).unwrap();
        let second = f.reg.publish(&req("s", None), T + 2.0).unwrap().record;
        assert_eq!(second.started_at, Some(T + 2.0));
        // A clear that read the first life arrives late.
        assert!(f.reg.end_life(&file, &first, T + 3.0).unwrap().is_none());
        let recs = all(&f.reg, T + 3.0);
        assert_eq!(recs[0].ended_at, None);
        assert_eq!(recs[0].seq, 3);
    }

    #[test]
    fn refresh_refreshes_live_owners_clears_dead_ones_and_leaves_the_rest() {
        let f = fixture();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        f.reg
            .publish(&req("alive", Some(std::process::id())), T)
            .unwrap();
        let mut short = req("short", Some(std::process::id()));
        short.ttl = Some(Duration::from_secs(5));
        f.reg.publish(&short, T).unwrap();
        f.reg.publish(&req("dies", Some(child.id())), T).unwrap();
        f.reg.publish(&req("ownerless", None), T).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        let out = f.reg.refresh(false, T + 10.0).unwrap();
        assert_eq!(out.refreshed.len(), 2, "{out:?}");
        assert_eq!(out.cleared.len(), 1, "{out:?}");
        assert!(out.cleared[0].contains("dies"));
        assert_eq!(out.left, 1);
        let recs = all(&f.reg, T + 10.0);
        let get = |s: &str| recs.iter().find(|r| r.session_id == s).unwrap();
        assert_eq!(get("alive").updated_at, Some(T + 10.0));
        assert_eq!(get("alive").expires_at, Some(T + 100.0));
        // A refresh keeps the record's own ttl.
        assert_eq!(get("short").expires_at, Some(T + 15.0));
        assert_eq!(get("alive").seq, 2);
        assert!(get("dies").ended_at.is_some());
        assert_eq!(get("ownerless").seq, 1);
    }

    #[test]
    fn refresh_is_scoped_to_the_label_unless_any_label() {
        let f = fixture();
        f.reg
            .publish(&req("s", Some(std::process::id())), T)
            .unwrap();
        let mut other = f.reg.clone();
        other.profile.label = "work".into();
        assert!(other.plan_refresh(false).unwrap().is_empty());
        assert_eq!(other.plan_refresh(true).unwrap().len(), 1);
    }
}
