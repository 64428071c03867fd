//! The keep-alive guard: publishes a record and refreshes it from a
//! background thread until dropped, which clears it. Separate from the
//! refresh pass because it keeps one record of this process alive, while
//! `refresh` walks every record this device published.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::ledger::Life;
use crate::liveness;
use crate::liveness::refreshed;
use crate::owner;
use crate::record::Record;
use crate::registry::change::{Change, Done};
use crate::registry::{PublishRequest, Published, Registry, secret_free};
use crate::store;

impl Registry {
    /// How often a guard re-publishes a record with this ttl:
    /// min(`refresh_interval`, ttl / 3).
    pub(crate) fn keep_alive_interval(&self, ttl: Duration) -> Duration {
        liveness::keep_alive_interval(self.profile.refresh_interval, ttl)
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
        let published = self.publish(&req, crate::local::unix_now())?;
        self.guard(published, req.strict)
    }

    /// Starts `command` as the owner of session `req` and keeps the
    /// session's record alive until the returned [`Guard`] is dropped (or
    /// [`Guard::end`] is called), as `presence run` does; `req.owner_pid`
    /// is ignored.
    ///
    /// The command starts under the record's lock, after everything else
    /// about the publish is settled: if it cannot start
    /// ([`Error::Spawn`]), nothing is published — no other device sees a
    /// session that never ran — and a `presence publish` that the command
    /// runs at once waits for this record and patches it. Its environment
    /// names the record: `PRESENCE_SESSION`, `PRESENCE_INSTANCE`,
    /// `PRESENCE_PROFILE` (the profile's name) and `PRESENCE_DIR` (its
    /// directory, absolute), so that a bare `presence publish --status
    /// waiting` inside updates this record.
    ///
    /// If the publish fails after the command started (the file cannot be
    /// written), the command is killed and the error returned.
    ///
    /// ```
    /// # fn main() -> Result<(), presence::Error> {
    /// # let tmp = tempfile::tempdir().unwrap();
    /// # let local = presence::LocalDirs::under(tmp.path());
    /// # let (profile, _) = presence::Profile::resolve(&Default::default(), &local)?;
    /// let registry = presence::Registry::new(profile, local);
    /// let mut req = presence::PublishRequest::new("build-7");
    /// req.status = Some("working".into());
    /// let mut cmd = std::process::Command::new("sh");
    /// cmd.args(["-c", r#"test "$PRESENCE_SESSION" = build-7"#]);
    /// let (mut child, guard) = registry.spawn(&req, &mut cmd)?;
    /// assert_eq!(guard.record().pid, child.id());
    /// assert!(child.wait().expect("wait").success());
    /// guard.end()?; // the session ends with its command
    ///
    /// let mut missing = std::process::Command::new("no-such-program-here");
    /// let err = registry.spawn(&req, &mut missing).unwrap_err();
    /// assert!(matches!(err, presence::Error::Spawn { .. }));
    /// # Ok(()) }
    /// ```
    pub fn spawn(
        &self,
        req: &PublishRequest,
        command: &mut std::process::Command,
    ) -> Result<(std::process::Child, Guard)> {
        let dir = std::path::absolute(&self.profile.dir)
            .map_err(|e| Error::io("resolve", &self.profile.dir, e))?;
        command
            .env("PRESENCE_SESSION", &req.session_id)
            .env("PRESENCE_INSTANCE", self.instance_of(req)?)
            .env("PRESENCE_PROFILE", &self.profile.name)
            .env("PRESENCE_DIR", dir);
        let mut child = None;
        let mut start = || {
            let c = command.spawn().map_err(|error| Error::Spawn {
                program: command.get_program().to_string_lossy().into_owned(),
                error,
            })?;
            let pid = c.id();
            child = Some(c);
            Ok(pid)
        };
        let published = self.publish_with(req, crate::local::unix_now(), Some(&mut start));
        let guard = published.and_then(|p| self.guard(p, req.strict));
        match (guard, child) {
            (Ok(guard), Some(child)) => Ok((child, guard)),
            (Err(e), child) => {
                if let Some(mut c) = child {
                    let _ = c.kill();
                    let _ = c.wait();
                }
                Err(e)
            }
            // Not reached: a publish with `start` writes only once the
            // command has started.
            (Ok(guard), None) => {
                let _ = guard.end();
                Err(Error::Spawn {
                    program: command.get_program().to_string_lossy().into_owned(),
                    error: std::io::Error::other("the command was not started"),
                })
            }
        }
    }

    /// A guard keeping `published` alive from a background thread.
    fn guard(&self, published: Published, strict: bool) -> Result<Guard> {
        let file = store::file_name(&published.record.instance_id, &published.record.session_id);
        let ttl = Duration::from_secs_f64(liveness::record_ttl(&published.record));
        let interval = self.keep_alive_interval(ttl);
        let shared = Arc::new(Shared {
            registry: self.clone(),
            file,
            strict: strict || self.profile.strict,
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
                    if !worker.refresh(crate::local::unix_now()) {
                        break;
                    }
                }
            });
        let thread = match thread {
            Ok(t) => t,
            Err(e) => {
                // Nothing would keep the record alive: end it rather than
                // leave it to expire.
                let record = shared.state().record.clone();
                let _ = self.end_life(&shared.file, &record, crate::local::unix_now());
                return Err(Error::io(
                    "start the keep-alive thread for",
                    &self.profile.dir,
                    e,
                ));
            }
        };
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
        let life = Life::of(&st.record);
        let strict = self.strict;
        let dir = self.registry.dir.open()?;
        let (done, written) = self.registry.change(&dir, &self.file, |cur| {
            let ongoing = cur
                .mine
                .as_ref()
                .is_some_and(|m| m.ended_at.is_none() && m.life == life);
            // The file holds this life, still going — or is gone (another
            // device's expire, a user's rm): only this guard ends its life.
            let held = cur.entry.as_ref().is_some_and(|e| {
                cur.holds_mine() && Life::of(&e.record) == life && e.record.ended_at.is_none()
            });
            if !ongoing || !(held || cur.gone()) {
                return Ok((Change::Leave, None));
            }
            // From what this device wrote, never from the file's fields.
            let Some(mut r) = cur.base() else {
                return Ok((Change::Leave, None));
            };
            change(&mut r);
            secret_free(&mut r, strict)?;
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
        if self.shared.rewrite(crate::local::unix_now(), change)? {
            Ok(())
        } else {
            Err(Error::Ended {
                file: self.shared.file.clone(),
            })
        }
    }

    /// Makes process `pid` the owner ([`Registry::spawn`] starts the owner
    /// under the record's lock instead, so that it owns the record from the
    /// first write).
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
        let ended = self.shared.registry.end_life(
            &self.shared.file,
            &expected,
            crate::local::unix_now(),
        )?;
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
    use crate::registry::refresh::tests::{fixture, req};

    #[test]
    fn a_guard_refreshes_updates_and_clears_on_drop() {
        let f = fixture();
        let mut r = req("g", None);
        r.ttl = Some(Duration::from_secs(1));
        let guard = f.reg.keep_alive(&r).unwrap();
        assert_eq!(guard.record().pid, std::process::id());
        assert!(guard.record().owner_start.is_some());
        // Two refreshes, a third of the ttl apart; the deadline is for a
        // guard that never refreshes, not for a slow machine.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
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
        f.reg
            .clear(Some("g"), None, crate::local::unix_now())
            .unwrap();
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
    fn a_guard_whose_file_was_deleted_writes_it_again() {
        let f = fixture();
        let guard = f.reg.keep_alive(&req("g", None)).unwrap();
        let path = f.reg.profile.dir.join(guard.file());
        let started = guard.record().started_at;
        // Another device's expire, or a user's rm: only the guard ends its life.
        std::fs::remove_file(&path).unwrap();
        guard.update(|r| r.status = "working".into()).unwrap();
        assert!(guard.is_active());
        let back = store::read_entry(&f.reg.profile.dir, guard.file())
            .unwrap()
            .unwrap()
            .record;
        assert_eq!(
            (back.status.as_str(), back.started_at),
            ("working", started)
        );
        drop(guard);
        let end = store::read_entry(
            &f.reg.profile.dir,
            &path.file_name().unwrap().to_string_lossy(),
        )
        .unwrap()
        .unwrap()
        .record;
        assert!(end.ended_at.is_some());
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

    #[test]
    fn a_status_published_over_a_guarded_record_survives_its_refresh() {
        let f = fixture();
        let mut r = req("g", None);
        r.title = Some("T".into());
        let guard = f.reg.keep_alive(&r).unwrap();
        let mut status = PublishRequest::new("g");
        status.status = Some("waiting".into());
        let patched = f
            .reg
            .publish(&status, crate::local::unix_now())
            .unwrap()
            .record;
        assert_eq!(
            (patched.status.as_str(), patched.title.as_str()),
            ("waiting", "T")
        );
        // The guard's own refresh re-reads under the lock: only the times move.
        assert!(guard.shared.refresh(crate::local::unix_now() + 1.0));
        let after = guard.record();
        assert_eq!(
            (after.status.as_str(), after.title.as_str()),
            ("waiting", "T")
        );
        assert_eq!(after.seq, patched.seq + 1);
        assert_eq!(after.started_at, patched.started_at);
        assert!(after.updated_at > patched.updated_at);
    }

    #[test]
    fn a_command_that_cannot_start_publishes_nothing() {
        let f = fixture();
        let mut cmd = std::process::Command::new("/nonexistent/program");
        let err = f.reg.spawn(&req("s", None), &mut cmd).unwrap_err();
        match err {
            Error::Spawn { program, error } => {
                assert_eq!(program, "/nonexistent/program");
                assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
            }
            other => panic!("{other}"),
        }
        let files: Vec<_> = std::fs::read_dir(&f.reg.profile.dir).unwrap().collect();
        assert!(files.is_empty(), "{files:?}");
        assert!(
            f.reg
                .ledger(&f.reg.dir.open().unwrap())
                .entries()
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_spawned_command_owns_its_record_and_knows_it() {
        let f = fixture();
        let mut cmd = std::process::Command::new("sh");
        cmd.args([
            "-c",
            r#"test "$PRESENCE_SESSION/$PRESENCE_PROFILE" = "s/default" && test -d "$PRESENCE_DIR""#,
        ]);
        let (mut child, guard) = f.reg.spawn(&req("s", Some(1)), &mut cmd).unwrap();
        let rec = guard.record();
        assert_eq!(
            rec.pid,
            child.id(),
            "owner_pid is the command, not the request's"
        );
        assert_eq!(
            guard.file(),
            store::file_name(&f.reg.default_instance().unwrap(), "s")
        );
        assert!(child.wait().unwrap().success());
        assert!(guard.end().unwrap());
    }
}
