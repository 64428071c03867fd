//! Keeping records alive exactly while their sessions live: `refresh` (one
//! pass, for cron, a systemd timer or a loop), the keep-alive [`Guard`] (the
//! library's, and the one `presence run` uses), and the locking rule that
//! prevents lost updates and resurrection.
//!
//! Every rewrite goes through [`Registry::change`]: under the record's lock,
//! after re-reading the file, and only if it is still the version the
//! decision was made on. So a refresh that read a record just before it was
//! cleared never writes it back, and a clear never ends a newer life of a
//! session that it did not read. Only the lives the ledger says this device
//! published are refreshed or cleared, and their owner process is the one the
//! ledger recorded — never what a file (which another device may have
//! written) claims.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::Serialize;

use crate::change::{Change, Done};
use crate::dedupe::LifeId;
use crate::error::{Error, Result};
use crate::ledger;
use crate::liveness;
use crate::owner::{self, OwnerState};
use crate::record::Record;
use crate::redact;
use crate::registry::{PublishRequest, Registry};
use crate::store::{self, Stamp};

/// What one refresh pass decided for one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum StepKind {
    /// The owner runs: re-publish with new times and `seq + 1`.
    Refresh,
    /// The owner is gone (or its pid was reused): write a tombstone.
    Clear,
    /// No owner recorded: leave the record to expire.
    Leave,
}

/// One planned action of a refresh pass, with the version it was decided on.
#[derive(Debug, Clone)]
pub struct RefreshStep {
    /// The record file.
    pub file: String,
    /// What to do.
    pub kind: StepKind,
    life: ledger::Life,
    stamp: Stamp,
}

/// What a refresh pass did.
#[derive(Debug, Clone, Default, Serialize)]
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
}

impl RefreshOutcome {
    /// Adds another pass's counts (for `--all-profiles`).
    pub fn merge(&mut self, other: RefreshOutcome) {
        self.refreshed.extend(other.refreshed);
        self.cleared.extend(other.cleared);
        self.left += other.left;
        self.changed += other.changed;
    }
}

/// `record` turned into a tombstone at `now`.
///
/// `expires_at` is set `skew` before `ended_at`, so that a reader that only
/// filters on `expires_at > now` (Hermes does) stops showing the session as
/// soon as the tombstone arrives, even with a clock up to `skew` behind.
pub(crate) fn tombstone(mut record: Record, now: f64, skew: f64) -> Record {
    record.ended_at = Some(now);
    record.expires_at = Some(now - skew);
    record.updated_at = Some(now);
    record.status = "ended".into();
    record.seq = record.seq.saturating_add(1);
    record
}

/// `record` re-published at `now`, keeping its own ttl.
fn refreshed(mut record: Record, now: f64) -> Record {
    let ttl = liveness::record_ttl(&record);
    record.updated_at = Some(now);
    record.expires_at = Some(now + ttl);
    record.seq = record.seq.saturating_add(1);
    record
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
        let life = LifeId::of(expected);
        let skew = self.profile.skew.as_secs_f64();
        let (done, tomb) = self.change(&dir, file, |cur| {
            Ok(match &cur.entry {
                Some(e)
                    if cur.holds_mine()
                        && LifeId::of(&e.record) == life
                        && e.record.ended_at.is_none() =>
                {
                    let tomb = tombstone(e.record.clone(), now, skew);
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
    pub fn plan_refresh(&self, any_label: bool) -> Result<Vec<RefreshStep>> {
        let dir = self.dir.open()?;
        if !dir.exists() {
            return Ok(Vec::new());
        }
        let label = crate::record::label_of(&self.profile.label);
        let mut steps = Vec::new();
        for mine in self.ledger(&dir).entries()? {
            if !any_label && crate::record::label_of(&mine.label) != label {
                continue;
            }
            let Ok(Some(e)) = dir.read_entry(&mine.file) else {
                continue;
            };
            if !crate::change::holds(&e, &mine) || e.record.ended_at.is_some() {
                continue;
            }
            let kind = match (mine.ended_at, mine.owner_start) {
                (Some(_), _) => StepKind::Clear,
                (None, None) => StepKind::Leave,
                (None, Some(start)) => match owner::owner_state(mine.pid, start) {
                    OwnerState::Alive => StepKind::Refresh,
                    OwnerState::Dead => StepKind::Clear,
                },
            };
            steps.push(RefreshStep {
                file: mine.file,
                kind,
                life: mine.life,
                stamp: e.stamp,
            });
        }
        Ok(steps)
    }

    /// Carries out a plan at `now`. A step whose file changed since the plan
    /// (another version on disk, or no longer this device's life) is skipped
    /// and counted in [`RefreshOutcome::changed`].
    pub fn apply_refresh(&self, steps: &[RefreshStep], now: f64) -> Result<RefreshOutcome> {
        let mut out = RefreshOutcome::default();
        let dir = self.dir.open()?;
        let skew = self.profile.skew.as_secs_f64();
        for step in steps {
            if step.kind == StepKind::Leave {
                out.left += 1;
                continue;
            }
            let (done, ()) = self.change(&dir, &step.file, |cur| {
                let unchanged = cur.stamp == Some(step.stamp)
                    && cur.holds_mine()
                    && cur.mine.as_ref().is_some_and(|m| m.life == step.life);
                let Some(e) = cur.entry.as_ref().filter(|_| unchanged) else {
                    return Ok((Change::Leave, ()));
                };
                let r = e.record.clone();
                let new = match step.kind {
                    StepKind::Refresh => refreshed(r, now),
                    _ => tombstone(r, now, skew),
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

    /// One refresh pass: [`plan_refresh`](Self::plan_refresh) then
    /// [`apply_refresh`](Self::apply_refresh).
    pub fn refresh(&self, any_label: bool, now: f64) -> Result<RefreshOutcome> {
        let plan = self.plan_refresh(any_label)?;
        self.apply_refresh(&plan, now)
    }

    /// How often a guard re-publishes a record with this ttl:
    /// min(`refresh_interval`, ttl / 3).
    pub fn keep_alive_interval(&self, ttl: Duration) -> Duration {
        self.profile.refresh_interval.min(ttl / 3)
    }

    /// Publishes `req` and keeps it alive from a background thread until the
    /// returned [`Guard`] is dropped (or [`Guard::end`] is called), which
    /// clears it. Without `owner_pid`, the calling process is the owner, so a
    /// `presence refresh` on this device also clears the record if the
    /// process dies without dropping the guard.
    ///
    /// ```
    /// # fn main() -> Result<(), presence::Error> {
    /// # let tmp = tempfile::tempdir().unwrap();
    /// # let local = presence::LocalDirs::under(tmp.path());
    /// # let (profile, _) = presence::Profile::resolve(&Default::default(), &local)?;
    /// let registry = presence::Registry::new(profile, local);
    /// let mut req = presence::PublishRequest::new("build-7");
    /// req.status = Some("working".into());
    /// let guard = registry.keep_alive(&req)?;
    /// // ... work; the record is refreshed every min(refresh_interval, ttl / 3) ...
    /// guard.update(|r| r.status = "waiting".into())?;
    /// assert_eq!(guard.record().status, "waiting");
    /// drop(guard); // clears the record (a tombstone)
    /// # Ok(()) }
    /// ```
    pub fn keep_alive(&self, req: &PublishRequest) -> Result<Guard> {
        let mut req = req.clone();
        req.owner_pid.get_or_insert_with(std::process::id);
        let now = crate::unix_now();
        let published = self.publish(&req, now)?;
        let file = store::file_name(&published.record.instance_id, &published.record.session_id);
        let ttl = Duration::from_secs_f64(liveness::record_ttl(&published.record));
        let interval = self.keep_alive_interval(ttl);
        let shared = Arc::new(Shared {
            registry: self.clone(),
            file,
            strict: req.strict || self.profile.strict,
            state: Mutex::new(GuardState {
                record: published.record,
                active: true,
                last_error: None,
            }),
        });
        let (stop, stopped) = mpsc::channel::<()>();
        let worker = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("presence-keep-alive".into())
            .spawn(move || {
                // Until the guard says stop (or drops its sender), refresh on
                // every timeout; stop early once the record is not ours to keep.
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(interval) {
                    if !worker.refresh(crate::unix_now()) {
                        break;
                    }
                }
            })
            .map_err(|e| Error::io("start the keep-alive thread for", &self.profile.dir, e))?;
        Ok(Guard {
            shared,
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

struct Shared {
    registry: Registry,
    file: String,
    strict: bool,
    state: Mutex<GuardState>,
}

struct GuardState {
    record: Record,
    active: bool,
    last_error: Option<String>,
}

impl Shared {
    fn state(&self) -> std::sync::MutexGuard<'_, GuardState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Re-publishes with `change` applied; `Ok(false)` once the record was
    /// cleared or replaced by someone else (the guard then stops).
    fn rewrite(&self, now: f64, change: impl FnOnce(&mut Record)) -> Result<bool> {
        let mut st = self.state();
        if !st.active {
            return Ok(false);
        }
        let life = LifeId::of(&st.record);
        let strict = self.strict;
        let dir = self.registry.dir.open()?;
        let (done, written) = self.registry.change(&dir, &self.file, |cur| {
            let Some(e) = cur.entry.as_ref().filter(|e| {
                cur.holds_mine()
                    && LifeId::of(&e.record) == life
                    && e.record.ended_at.is_none()
                    && cur.mine.as_ref().is_some_and(|m| m.ended_at.is_none())
            }) else {
                return Ok((Change::Leave, None));
            };
            let mut r = e.record.clone();
            change(&mut r);
            crate::registry::refuse_credential_ids(&r)?;
            let redactions = redact::redact_record(&mut r);
            if strict && !redactions.is_empty() {
                return Err(Error::Refused {
                    fields: redactions.into_iter().map(|x| x.field).collect(),
                });
            }
            r.enforce_limits()?;
            let r = refreshed(r, now);
            Ok((Change::Write(Box::new(r.clone())), Some(r)))
        })?;
        let written = written.filter(|_| done == Done::Written);
        match written {
            Some(r) => {
                st.record = r;
                st.last_error = None;
                Ok(true)
            }
            None => {
                st.active = false;
                Ok(false)
            }
        }
    }

    /// A timer refresh; errors are kept for [`Guard::last_error`] and retried.
    fn refresh(&self, now: f64) -> bool {
        match self.rewrite(now, |_| {}) {
            Ok(active) => active,
            Err(e) => {
                self.state().last_error = Some(e.to_string());
                true
            }
        }
    }
}

/// Keeps one record alive until dropped; see [`Registry::keep_alive`].
pub struct Guard {
    shared: Arc<Shared>,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("file", &self.shared.file)
            .field("active", &self.is_active())
            .finish()
    }
}

impl Guard {
    /// The record as last written.
    pub fn record(&self) -> Record {
        self.shared.state().record.clone()
    }

    /// The record's file name.
    pub fn file(&self) -> &str {
        &self.shared.file
    }

    /// False once the record was cleared or replaced by another writer; the
    /// guard then no longer refreshes it (it never resurrects a record).
    pub fn is_active(&self) -> bool {
        self.shared.state().active
    }

    /// The error of the last background refresh, if it failed (it is retried).
    pub fn last_error(&self) -> Option<String> {
        self.shared.state().last_error.clone()
    }

    /// Changes the record (status, title, …) and re-publishes it at once,
    /// without a gap in liveness. Redaction and limits apply as on publish.
    pub fn update(&self, change: impl FnOnce(&mut Record)) -> Result<()> {
        if self.shared.rewrite(crate::unix_now(), change)? {
            Ok(())
        } else {
            Err(Error::Ended {
                file: self.shared.file.clone(),
            })
        }
    }

    /// Makes process `pid` the owner (as `presence run` does with its child).
    pub fn set_owner(&self, pid: u32) -> Result<()> {
        let info = owner::process_info(pid)
            .filter(|i| !i.zombie)
            .ok_or(Error::NoSuchOwner { pid })?;
        self.update(|r| {
            r.pid = pid;
            r.owner_start = Some(info.start);
        })
    }

    fn stop_thread(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// Stops refreshing and clears the record; unlike dropping, reports errors.
    /// Returns whether a tombstone was written (false if someone else had
    /// cleared or replaced the record already).
    pub fn end(mut self) -> Result<bool> {
        self.end_inner()
    }

    fn end_inner(&mut self) -> Result<bool> {
        self.stop_thread();
        let mut st = self.shared.state();
        if !st.active {
            return Ok(false);
        }
        st.active = false;
        let expected = st.record.clone();
        drop(st);
        let ended =
            self.shared
                .registry
                .end_life(&self.shared.file, &expected, crate::unix_now())?;
        Ok(ended.is_some())
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.end_inner();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{self, Selection};
    use crate::local::LocalDirs;
    use crate::registry::ListOptions;

    struct Fixture {
        _tmp: tempfile::TempDir,
        reg: Registry,
    }

    fn fixture() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let local = LocalDirs::under(tmp.path());
        let (profile, _) = config::resolve(&Selection::default(), &local).unwrap();
        Fixture {
            reg: Registry::new(profile, local).with_host("h"),
            _tmp: tmp,
        }
    }

    fn req(session: &str, owner: Option<u32>) -> PublishRequest {
        PublishRequest {
            session_id: session.into(),
            owner_pid: owner,
            ..PublishRequest::default()
        }
    }

    const T: f64 = 1_000_000_000.0;

    fn all(reg: &Registry, now: f64) -> Vec<Record> {
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

    #[test]
    fn a_guard_refreshes_updates_and_clears_on_drop() {
        let f = fixture();
        let mut r = req("g", None);
        r.ttl = Some(Duration::from_secs(1));
        let guard = f.reg.keep_alive(&r).unwrap();
        assert_eq!(guard.record().pid, std::process::id());
        assert!(guard.record().owner_start.is_some());
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while guard.record().seq < 3 {
            assert!(
                std::time::Instant::now() < deadline,
                "guard never refreshed"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        guard.update(|r| r.title = "new title".into()).unwrap();
        let rec = guard.record();
        assert_eq!(rec.title, "new title");
        let file = guard.file().to_string();
        drop(guard);
        let on_disk = store::read_entry(&f.reg.profile.dir, &file)
            .unwrap()
            .unwrap();
        assert!(on_disk.record.ended_at.is_some());
        assert_eq!(on_disk.record.title, "new title");
    }

    #[test]
    fn a_guard_whose_record_was_cleared_stops_and_never_resurrects_it() {
        let f = fixture();
        let guard = f.reg.keep_alive(&req("g", None)).unwrap();
        f.reg.clear(Some("g"), None, crate::unix_now()).unwrap();
        let err = guard.update(|r| r.status = "working".into()).unwrap_err();
        assert!(matches!(err, Error::Ended { .. }), "{err}");
        assert!(!guard.is_active());
        let file = guard.file().to_string();
        let before = store::read_entry(&f.reg.profile.dir, &file)
            .unwrap()
            .unwrap()
            .record;
        assert!(!guard.end().unwrap());
        let after = store::read_entry(&f.reg.profile.dir, &file)
            .unwrap()
            .unwrap()
            .record;
        assert_eq!(before, after);
        assert_eq!(after.status, "ended");
    }

    #[test]
    fn guard_updates_are_redacted_and_strict_refuses() {
        let f = fixture();
        let guard = f.reg.keep_alive(&req("g", None)).unwrap();
        guard
            .update(|r| r.endpoint = "ssh://u:pw@h/x".into())
            .unwrap();
        assert_eq!(guard.record().endpoint, "ssh://u@h/x");
        let mut strict = req("h", None);
        strict.strict = true;
        let guard = f.reg.keep_alive(&strict).unwrap();
        let err = guard
            .update(|r| r.title = "AKIAIOSFODNN7EXAMPLE".into())
            .unwrap_err();
        assert!(matches!(err, Error::Refused { .. }), "{err}");
        assert_eq!(guard.record().title, "");
        // An id is never rewritten, strict or not: the update is refused.
        let guard = f.reg.keep_alive(&req("i", None)).unwrap();
        let err = guard
            .update(|r| r.session_key = "ghp_0123456789abcdefghijABCDEFGHIJ012345".into())
            .unwrap_err();
        assert!(
            matches!(&err, Error::CredentialId { field, .. } if field == "session_key"),
            "{err}"
        );
        assert_eq!(guard.record().session_key, "i");
    }
}
