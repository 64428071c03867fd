//! Watching the presence directory: typed events computed by diffing
//! successive live sets, with exactly the dedupe and liveness rules of `list`.
//!
//! A [`Watcher`] wraps the `notify` crate's recommended watcher (inotify,
//! FSEvents, …) and adds what file events cannot provide:
//!
//! - **coalescing**: a burst of writes (an atomic rename is several events; a
//!   sync engine may land hundreds of files) becomes one rescan, so one record
//!   rewritten many times yields at most one `update` per rescan;
//! - **an expiry timer**: nothing happens on disk when a record expires, so
//!   the watcher wakes at the earliest deadline of the live set;
//! - **a periodic full rescan** as a safety net for filesystems that drop
//!   events, and a rescan on every overflow notice.
//!
//! On network and FUSE mounts native events do not arrive; there
//! [`WatchOptions::poll`] replaces them with a full rescan at that interval.
//! (notify's own poll watcher compares modification times in whole seconds,
//! so it misses a record rewritten twice within a second; a rescan reads the
//! records anyway, and compares what matters.)

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use notify::RecursiveMode;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::registry::{ListOptions, Registry, Row};

/// Why a session left the live set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DownReason {
    /// Its newest record is a tombstone, or its file was deleted.
    Cleared,
    /// No refresh arrived within its ttl (or its writer's expiry passed).
    Expired,
    /// Another runtime on the same endpoint replaced it.
    Superseded,
}

/// A change of the live set.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A session became live.
    Up(Row),
    /// A live session changed a field other than `updated_at`, `expires_at`
    /// and `seq` (a plain refresh is not news).
    Update {
        /// The record now.
        row: Row,
        /// Names of the fields that changed.
        changed: Vec<&'static str>,
    },
    /// A session left the live set.
    Down {
        /// The last live version seen.
        row: Row,
        /// Why.
        reason: DownReason,
    },
}

impl Event {
    /// `up`, `update` or `down`.
    pub fn name(&self) -> &'static str {
        match self {
            Event::Up(_) => "up",
            Event::Update { .. } => "update",
            Event::Down { .. } => "down",
        }
    }

    /// The record the event is about.
    pub fn row(&self) -> &Row {
        match self {
            Event::Up(r) | Event::Update { row: r, .. } | Event::Down { row: r, .. } => r,
        }
    }
}

type Key = (String, String, String);

fn key(row: &Row) -> Key {
    let (a, b, c) = row.record.group_key();
    (a.to_owned(), b.to_owned(), c.to_owned())
}

/// The live set and, for reasons of departure, every group's winner.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Live groups by key.
    pub live: BTreeMap<Key, Row>,
    /// Every group's winner (live or not) by key.
    winners: BTreeMap<Key, Row>,
}

impl Snapshot {
    /// Builds a snapshot from listed rows (`--include-expired` gives every
    /// group's winner; with `--all`, losers carry `superseded_by` and are skipped).
    pub fn from_rows(rows: Vec<Row>) -> Self {
        let mut s = Snapshot::default();
        for row in rows.into_iter().filter(|r| r.superseded_by.is_none()) {
            if row.live {
                s.live.insert(key(&row), row.clone());
            }
            s.winners.insert(key(&row), row);
        }
        s
    }

    /// The live rows, newest first (as `list` orders them).
    pub fn rows(&self) -> Vec<Row> {
        let mut rows: Vec<Row> = self.live.values().cloned().collect();
        rows.sort_by(|a, b| {
            crate::dedupe::newer((&b.record, b.file.as_str()), (&a.record, a.file.as_str()))
        });
        rows
    }

    /// The earliest time (this machine's clock) at which a live row expires.
    pub fn next_deadline(&self, now: f64) -> Option<f64> {
        self.live
            .values()
            .filter_map(|r| r.expires_in_s.map(|e| now + e))
            .min_by(f64::total_cmp)
    }
}

/// The fields compared for `update`.
fn changed_fields(old: &Row, new: &Row) -> Vec<&'static str> {
    let (a, b) = (&old.record, &new.record);
    let mut out = Vec::new();
    macro_rules! cmp {
        ($($f:ident),*) => { $( if a.$f != b.$f { out.push(stringify!($f)); } )* };
    }
    cmp!(
        status,
        title,
        model,
        cwd,
        client,
        source,
        endpoint,
        host,
        profile,
        session_key,
        instance_id,
        device_id,
        metadata
    );
    // Without an owner, `pid` is just whichever process published last.
    if (a.owner_start.is_some() || b.owner_start.is_some())
        && (a.pid != b.pid || a.owner_start != b.owner_start)
    {
        out.push("owner");
    }
    if old.file != new.file {
        out.push("file");
    }
    out
}

/// Whether `after` is a new life of the session `before` was: cleared and
/// published again between two looks (a new `started_at`).
fn new_life(before: &Row, after: &Row) -> bool {
    matches!(
        (before.record.started_at, after.record.started_at),
        (Some(a), Some(b)) if a != b
    )
}

/// The events that turn `old` into `new` (pure).
pub fn diff(old: &Snapshot, new: &Snapshot) -> Vec<Event> {
    let mut events = Vec::new();
    for (k, before) in &old.live {
        match new.live.get(k) {
            Some(after) if after.record.session_id != before.record.session_id => {
                events.push(Event::Down {
                    row: before.clone(),
                    reason: DownReason::Superseded,
                });
            }
            Some(after) if new_life(before, after) => {
                events.push(Event::Down {
                    row: before.clone(),
                    reason: DownReason::Cleared,
                });
            }
            Some(after) => {
                let changed = changed_fields(before, after);
                if !changed.is_empty() {
                    events.push(Event::Update {
                        row: after.clone(),
                        changed,
                    });
                }
            }
            None => {
                let reason = match new.winners.get(k) {
                    Some(w) if w.record.ended_at.is_some() => DownReason::Cleared,
                    Some(w) if w.record.session_id != before.record.session_id => {
                        DownReason::Superseded
                    }
                    Some(_) => DownReason::Expired,
                    // The file is gone: deleted by its writer (Hermes Agent
                    // clears by deleting) or by `expire`.
                    None => DownReason::Cleared,
                };
                events.push(Event::Down {
                    row: before.clone(),
                    reason,
                });
            }
        }
    }
    for (k, after) in &new.live {
        let is_new = match old.live.get(k) {
            None => true,
            Some(before) => {
                before.record.session_id != after.record.session_id || new_life(before, after)
            }
        };
        if is_new {
            events.push(Event::Up(after.clone()));
        }
    }
    events
}

/// How a [`Watcher`] watches.
#[derive(Debug, Clone, Copy)]
pub struct WatchOptions {
    /// Rescan at this interval instead of listening for native events.
    pub poll: Option<Duration>,
    /// After the first file event, wait until events pause this long
    /// (default 10 ms)…
    pub quiet: Duration,
    /// …but no longer than this after the first (default 100 ms).
    pub max_delay: Duration,
    /// Full rescan at least this often (default 30 s).
    pub rescan: Duration,
    /// Show every label, as `list --all-profiles`.
    pub all_profiles: bool,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            poll: None,
            quiet: Duration::from_millis(10),
            max_delay: Duration::from_millis(100),
            rescan: Duration::from_secs(30),
            all_profiles: false,
        }
    }
}

enum Msg {
    Fs,
    Failed(String),
}

/// Watches one profile's directory; see the module docs.
pub struct Watcher {
    registry: Registry,
    opts: WatchOptions,
    rx: Receiver<Msg>,
    tx: mpsc::Sender<Msg>,
    _backend: Option<notify::RecommendedWatcher>,
    snapshot: Snapshot,
    next_rescan: Instant,
    last_backend_error: Option<String>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher")
            .field("dir", &self.registry.profile().dir)
            .field("live", &self.snapshot.live.len())
            .finish()
    }
}

/// The native watcher, or none when polling.
fn backend(
    dir: &Path,
    opts: &WatchOptions,
    tx: mpsc::Sender<Msg>,
) -> Result<Option<notify::RecommendedWatcher>> {
    if opts.poll.is_some() {
        return Ok(None);
    }
    let handler = move |res: notify::Result<notify::Event>| {
        let msg = match res {
            Ok(_) => Msg::Fs,
            Err(e) => Msg::Failed(e.to_string()),
        };
        let _ = tx.send(msg);
    };
    let watch_err = |e: notify::Error| {
        Error::io(
            "watch",
            dir,
            std::io::Error::other(format!(
                "{e}; on network or FUSE mounts try --poll, and on Linux check \
                 fs.inotify.max_user_watches"
            )),
        )
    };
    let mut w = notify::recommended_watcher(handler).map_err(watch_err)?;
    notify::Watcher::watch(&mut w, dir, RecursiveMode::NonRecursive).map_err(watch_err)?;
    Ok(Some(w))
}

impl Watcher {
    /// Starts watching `registry`'s directory, which must exist, and takes
    /// the first snapshot at `now`.
    pub fn new(registry: Registry, opts: WatchOptions, now: f64) -> Result<Self> {
        let dir = registry.profile().dir.clone();
        if !dir.is_dir() {
            return Err(Error::io(
                "watch",
                &dir,
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "the presence directory does not exist; publish once or create it",
                ),
            ));
        }
        let (tx, rx) = mpsc::channel();
        let backend = backend(&dir, &opts, tx.clone())?;
        let mut opts = opts;
        if let Some(interval) = opts.poll {
            opts.rescan = interval;
        }
        let mut w = Watcher {
            registry,
            opts,
            rx,
            tx,
            _backend: backend,
            snapshot: Snapshot::default(),
            next_rescan: Instant::now() + opts.rescan,
            last_backend_error: None,
        };
        w.snapshot = w.scan(now)?;
        Ok(w)
    }

    /// The current live set, newest first.
    pub fn live(&self) -> Vec<Row> {
        self.snapshot.rows()
    }

    fn scan(&mut self, now: f64) -> Result<Snapshot> {
        // Every group's winner, live or not (losers never matter here).
        let opts = ListOptions {
            all: false,
            include_expired: true,
            all_profiles: self.opts.all_profiles,
        };
        let listing = self.registry.list(opts, now)?;
        if !listing.dir_exists {
            self.recover()?;
            return self.scan(now);
        }
        self.next_rescan = Instant::now() + self.opts.rescan;
        Ok(Snapshot::from_rows(listing.rows))
    }

    /// The directory vanished: wait for it to come back (a remount, a sync
    /// engine replacing it) a few times with backoff, then give up.
    fn recover(&mut self) -> Result<()> {
        let dir = self.registry.profile().dir.clone();
        for delay_ms in [100, 300, 900, 2700] {
            std::thread::sleep(Duration::from_millis(delay_ms));
            if dir.is_dir() {
                self._backend = backend(&dir, &self.opts, self.tx.clone())?;
                return Ok(());
            }
        }
        Err(Error::io(
            "watch",
            &dir,
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the presence directory disappeared and did not come back within 4 s",
            ),
        ))
    }

    /// Waits up to `max_wait` for changes and returns the events (possibly
    /// none). `now` gives this machine's clock.
    pub fn next_events(&mut self, max_wait: Duration, now: impl Fn() -> f64) -> Result<Vec<Event>> {
        let start = Instant::now();
        let mut wake = start + max_wait;
        let mut timer_due = false;
        if let Some(deadline) = self.snapshot.next_deadline(now()) {
            // A millisecond past the deadline, so that the rule says "expired".
            let until = Duration::from_secs_f64((deadline - now()).max(0.0) + 0.001);
            if start + until <= wake {
                wake = start + until;
                timer_due = true;
            }
        }
        if self.next_rescan <= wake {
            wake = self.next_rescan.max(start);
            timer_due = true;
        }
        let timeout = wake.saturating_duration_since(Instant::now());
        match self.rx.recv_timeout(timeout) {
            Ok(msg) => {
                self.check(msg)?;
                self.coalesce()?;
            }
            Err(RecvTimeoutError::Timeout) if timer_due => {}
            Err(RecvTimeoutError::Timeout) => return Ok(Vec::new()),
            Err(RecvTimeoutError::Disconnected) => {
                return Err(Error::io(
                    "watch",
                    &self.registry.profile().dir,
                    std::io::Error::other("the file watcher stopped"),
                ));
            }
        }
        let new = self.scan(now())?;
        let events = diff(&self.snapshot, &new);
        self.snapshot = new;
        Ok(events)
    }

    /// A backend error (an overflowed queue, a watch the kernel dropped) is
    /// not fatal: it only means events may have been lost, and the rescan
    /// that follows every message recovers from that — or finds the
    /// directory gone and says so.
    fn check(&mut self, msg: Msg) -> Result<()> {
        if let Msg::Failed(e) = msg {
            self.last_backend_error = Some(e);
        }
        Ok(())
    }

    /// The last error the file-event backend reported (events were then
    /// recovered by a rescan).
    pub fn last_backend_error(&self) -> Option<&str> {
        self.last_backend_error.as_deref()
    }

    /// Drains events until they pause for `quiet`, or `max_delay` passed.
    fn coalesce(&mut self) -> Result<()> {
        let end = Instant::now() + self.opts.max_delay;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                // Drop what is queued: the rescan sees its effect anyway.
                while let Ok(msg) = self.rx.try_recv() {
                    self.check(msg)?;
                }
                return Ok(());
            }
            match self.rx.recv_timeout(self.opts.quiet.min(left)) {
                Ok(msg) => self.check(msg)?,
                Err(_) => return Ok(()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Record;

    fn row(session: &str, endpoint: &str, status: &str, file: &str) -> Row {
        let mut r = Record::new(session);
        r.profile = "default".into();
        r.client = "t".into();
        r.endpoint = endpoint.into();
        r.status = status.into();
        Row {
            record: r,
            file: file.into(),
            live: true,
            state: "live",
            local: false,
            conflict_copy: false,
            age_s: 0.0,
            claimed_age_s: None,
            expires_in_s: Some(10.0),
            superseded_by: None,
            lost_because: None,
            redactions: Vec::new(),
        }
    }

    fn dead(mut r: Row, ended: bool) -> Row {
        r.live = false;
        if ended {
            r.record.ended_at = Some(1.0);
        }
        r
    }

    fn names(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .map(|e| match e {
                Event::Up(r) => format!("up {}", r.record.session_id),
                Event::Update { row, changed } => {
                    format!("update {} {}", row.record.session_id, changed.join(","))
                }
                Event::Down { row, reason } => {
                    format!("down {} {reason:?}", row.record.session_id)
                }
            })
            .collect()
    }

    #[test]
    fn diff_table() {
        let mut a = row("a", "", "idle", "i.a.json");
        a.record.started_at = Some(1.0);
        let mut a_again = a.clone();
        a_again.record.started_at = Some(7.0);
        let mut a_refreshed = a.clone();
        a_refreshed.record.updated_at = Some(5.0);
        a_refreshed.record.seq = 9;
        a_refreshed.expires_in_s = Some(90.0);
        let mut a_working = a.clone();
        a_working.record.status = "working".into();
        let s1 = row("run1", "tmux://h/x", "idle", "i.run1.json");
        let s2 = row("run2", "tmux://h/x", "idle", "i.run2.json");
        let snap = |rows: Vec<Row>| Snapshot::from_rows(rows);
        let cases: Vec<(&str, Snapshot, Snapshot, Vec<&str>)> = vec![
            ("nothing", snap(vec![]), snap(vec![]), vec![]),
            ("up", snap(vec![]), snap(vec![a.clone()]), vec!["up a"]),
            (
                "a plain refresh is not news",
                snap(vec![a.clone()]),
                snap(vec![a_refreshed]),
                vec![],
            ),
            (
                "status change",
                snap(vec![a.clone()]),
                snap(vec![a_working]),
                vec!["update a status"],
            ),
            (
                "cleared",
                snap(vec![a.clone()]),
                snap(vec![dead(a.clone(), true)]),
                vec!["down a Cleared"],
            ),
            (
                "expired",
                snap(vec![a.clone()]),
                snap(vec![dead(a.clone(), false)]),
                vec!["down a Expired"],
            ),
            (
                "file deleted",
                snap(vec![a.clone()]),
                snap(vec![]),
                vec!["down a Cleared"],
            ),
            (
                "cleared and published again between looks",
                snap(vec![a.clone()]),
                snap(vec![a_again]),
                vec!["down a Cleared", "up a"],
            ),
            (
                "successor",
                snap(vec![s1.clone()]),
                snap(vec![s2.clone()]),
                vec!["down run1 Superseded", "up run2"],
            ),
            (
                "successor that is already dead",
                snap(vec![s1.clone()]),
                snap(vec![dead(s2.clone(), false)]),
                vec!["down run1 Superseded"],
            ),
        ];
        for (case, old, new, want) in cases {
            assert_eq!(names(&diff(&old, &new)), want, "{case}");
        }
    }

    #[test]
    fn losers_never_enter_the_live_set() {
        let mut loser = row("a", "", "idle", "i.a.sync-conflict-x.json");
        loser.superseded_by = Some("i.a.json".into());
        let s = Snapshot::from_rows(vec![row("a", "", "working", "i.a.json"), loser]);
        assert_eq!(s.live.len(), 1);
        assert_eq!(s.rows()[0].file, "i.a.json");
    }

    #[test]
    fn next_deadline_is_the_earliest() {
        let mut a = row("a", "", "idle", "a.json");
        a.expires_in_s = Some(30.0);
        let mut b = row("b", "", "idle", "b.json");
        b.expires_in_s = Some(5.0);
        let s = Snapshot::from_rows(vec![a, b]);
        assert_eq!(s.next_deadline(100.0), Some(105.0));
    }
}

#[cfg(test)]
mod fs_tests {
    //! The watcher on a real directory, with two simulated devices sharing it.
    use super::*;
    use crate::config::{self, Selection};
    use crate::local::LocalDirs;
    use crate::registry::PublishRequest;

    struct Devices {
        _tmp: tempfile::TempDir,
        a: Registry,
        b: Registry,
    }

    fn devices() -> Devices {
        let tmp = tempfile::tempdir().unwrap();
        let shared = tmp.path().join("shared");
        let sel = Selection {
            dir: Some(shared.clone()),
            ..Selection::default()
        };
        let reg = |name: &str| {
            let local = LocalDirs::under(&tmp.path().join(name));
            let (profile, _) = config::resolve(&sel, &local).unwrap();
            Registry::new(profile, local).with_host(name)
        };
        let (a, b) = (reg("a"), reg("b"));
        crate::store::ensure_dir(&shared).unwrap();
        Devices { a, b, _tmp: tmp }
    }

    fn req(session: &str) -> PublishRequest {
        PublishRequest {
            session_id: session.into(),
            ..PublishRequest::default()
        }
    }

    /// Collects event names until `want` many arrived or 10 s passed.
    fn collect(w: &mut Watcher, want: usize) -> Vec<String> {
        collect_until(w, want, Duration::from_secs(10))
    }

    fn collect_until(w: &mut Watcher, want: usize, limit: Duration) -> Vec<String> {
        let deadline = Instant::now() + limit;
        let mut got = Vec::new();
        while got.len() < want && Instant::now() < deadline {
            for e in w
                .next_events(Duration::from_millis(50), crate::unix_now)
                .unwrap()
            {
                let extra = match &e {
                    Event::Down { reason, .. } => format!(" {reason:?}"),
                    Event::Update { changed, .. } => format!(" {}", changed.join(",")),
                    Event::Up(_) => String::new(),
                };
                got.push(format!(
                    "{} {}@{}{extra}",
                    e.name(),
                    e.row().record.session_id,
                    e.row().record.host
                ));
            }
        }
        got
    }

    fn scenario(poll: Option<Duration>) {
        let d = devices();
        d.a.publish(&req("before"), crate::unix_now()).unwrap();
        let opts = WatchOptions {
            poll,
            quiet: Duration::from_millis(5),
            max_delay: Duration::from_millis(50),
            ..WatchOptions::default()
        };
        let mut w = Watcher::new(d.b.clone(), opts, crate::unix_now()).unwrap();
        assert_eq!(w.live().len(), 1, "the initial live set");

        d.a.publish(&req("s1"), crate::unix_now()).unwrap();
        assert_eq!(collect(&mut w, 1), ["up s1@a"]);
        let mut changed = req("s1");
        changed.status = Some("working".into());
        d.a.publish(&changed, crate::unix_now()).unwrap();
        assert_eq!(collect(&mut w, 1), ["update s1@a status"]);
        // A plain refresh is not news.
        d.a.publish(&changed, crate::unix_now()).unwrap();
        assert!(collect_until(&mut w, 1, Duration::from_secs(1)).is_empty());
        d.a.clear(Some("s1"), None, crate::unix_now()).unwrap();
        assert_eq!(collect(&mut w, 1), ["down s1@a Cleared"]);

        // This device's own records, a short ttl: down on the expiry timer.
        let mut short = req("short");
        short.ttl = Some(Duration::from_secs(1));
        d.b.publish(&short, crate::unix_now()).unwrap();
        assert_eq!(collect(&mut w, 2), ["up short@b", "down short@b Expired"]);

        // A successor on the same endpoint.
        let mut run1 = req("run1");
        run1.endpoint = Some("tmux://h/main".into());
        d.b.publish(&run1, crate::unix_now()).unwrap();
        assert_eq!(collect(&mut w, 1), ["up run1@b"]);
        let mut run2 = req("run2");
        run2.endpoint = Some("tmux://h/main".into());
        d.a.publish(&run2, crate::unix_now()).unwrap();
        assert_eq!(collect(&mut w, 2), ["down run1@b Superseded", "up run2@a"]);
    }

    #[test]
    fn events_with_native_notifications() {
        scenario(None);
    }

    #[test]
    fn events_with_polling() {
        scenario(Some(Duration::from_millis(100)));
    }

    #[test]
    fn a_burst_of_writes_to_one_record_is_one_update_per_rescan() {
        let d = devices();
        let mut w = Watcher::new(d.b.clone(), WatchOptions::default(), crate::unix_now()).unwrap();
        d.a.publish(&req("busy"), crate::unix_now()).unwrap();
        assert_eq!(collect(&mut w, 1), ["up busy@a"]);
        let writer = d.a.clone();
        let burst = std::thread::spawn(move || {
            let mut r = req("busy");
            for i in 0..1000 {
                r.title = Some(format!("step {i}"));
                writer.publish(&r, crate::unix_now()).unwrap();
            }
        });
        let mut events = Vec::new();
        while !burst.is_finished() {
            events.extend(collect_until(&mut w, 1, Duration::from_millis(200)));
        }
        burst.join().unwrap();
        // Whatever is left arrives in one more rescan.
        events.extend(collect_until(&mut w, 1, Duration::from_secs(2)));
        assert!(!events.is_empty());
        // Far fewer than one per write, every one an update of that record.
        assert!(
            events.len() < 200,
            "{} events for 1000 writes",
            events.len()
        );
        assert!(
            events.iter().all(|e| e == "update busy@a title"),
            "{events:?}"
        );
        assert_eq!(w.live()[0].record.title, "step 999");
    }

    #[test]
    fn a_flapping_record_yields_alternating_up_and_down() {
        let d = devices();
        let mut w = Watcher::new(d.b.clone(), WatchOptions::default(), crate::unix_now()).unwrap();
        let writer = d.a.clone();
        let flapper = std::thread::spawn(move || {
            for _ in 0..30 {
                writer.publish(&req("flap"), crate::unix_now()).unwrap();
                std::thread::sleep(Duration::from_millis(7));
                writer.clear(Some("flap"), None, crate::unix_now()).unwrap();
                std::thread::sleep(Duration::from_millis(7));
            }
        });
        let mut events = Vec::new();
        while !flapper.is_finished() {
            events.extend(collect_until(&mut w, 1, Duration::from_millis(100)));
        }
        flapper.join().unwrap();
        events.extend(collect_until(&mut w, 1, Duration::from_secs(1)));
        assert!(!events.is_empty());
        for pair in events.chunks(2) {
            assert_eq!(pair[0], "up flap@a", "{events:?}");
            assert_eq!(
                pair.get(1).map(String::as_str),
                Some("down flap@a Cleared"),
                "{events:?}"
            );
        }
        assert!(w.live().is_empty());
    }

    #[test]
    fn a_deleted_directory_is_an_error_after_retries() {
        let d = devices();
        let mut w = Watcher::new(d.b.clone(), WatchOptions::default(), crate::unix_now()).unwrap();
        std::fs::remove_dir_all(&d.b.profile().dir).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let err = loop {
            match w.next_events(Duration::from_millis(50), crate::unix_now) {
                Err(e) => break e,
                Ok(_) => assert!(
                    Instant::now() < deadline,
                    "no error for a deleted directory"
                ),
            }
        };
        assert!(err.to_string().contains("disappeared"), "{err}");
    }
}
