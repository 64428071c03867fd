//! The registry: one profile's directory seen through the rules — publish,
//! list, show and clear. The CLI is a thin layer over this type, and so is
//! any Rust program that links the crate.

use crate::config::{Profile, ShowSet};
use crate::error::Result;
use crate::liveness::{self, State, WriterClock};
use crate::local::{self, LocalDirs};
use crate::redact;
use crate::registry::change::Own;
use crate::store::{self, Entry, NameKind, Skipped};

pub(crate) mod change;
mod clear;
pub(crate) mod devices;
mod expire;
mod guard;
mod list;
mod publish;
pub(crate) mod read;
pub(crate) mod refresh;
mod show;

use read::Pass;

pub use crate::row::Row;
use crate::row::{listing_order, round_ms};
pub use clear::{ClearOutcome, Cleared};
pub use devices::Device;
pub use expire::ExpireOutcome;
pub use guard::Guard;
pub use list::ListOptions;
pub(crate) use publish::secret_free;
pub use publish::{Field, PublishRequest, Published, UnknownField};
pub use refresh::{DiscoverOutcome, RefreshOutcome};

/// A listing and what was passed over to produce it.
#[derive(Debug, Default)]
pub struct Listing {
    /// Whether the directory exists (for a profile that reads several
    /// directories, whether every one does).
    pub dir_exists: bool,
    /// Rows in [`Row::listing_order`] (with `--all`, each group's losers
    /// after its winner, newest first).
    pub rows: Vec<Row>,
    /// Files that were not records.
    pub skipped: Vec<Skipped>,
}

/// [`Row::listing_order`] on its keys: `(started_at, session_id, file)`.
/// One profile's presence directory — or directories: a profile with
/// `dirs` reads every one of them as one (one dedupe over all their files;
/// [`Row::dir`] names each row's), and writes to `dir` alone.
#[derive(Debug, Clone)]
pub struct Registry {
    pub(crate) profile: Profile,
    pub(crate) local: LocalDirs,
    pub(crate) host: String,
    /// The profile's directory, resolved once.
    pub(crate) dir: store::SharedDir,
    /// Every directory the profile reads, `dir` first (see [`Profile::dirs`]).
    pub(crate) dirs: Vec<store::SharedDir>,
    /// This device's signing key, loaded (or made) at the first write.
    key: std::sync::Arc<std::sync::OnceLock<crate::local::DeviceKey>>,
}

impl Registry {
    /// A registry for `profile`, with this device's local state in `local`.
    pub fn new(profile: Profile, local: LocalDirs) -> Self {
        let dir = store::SharedDir::new(&profile.dir);
        let mut dirs = vec![dir.clone()];
        dirs.extend(
            profile
                .dirs
                .iter()
                .skip(1)
                .map(|d| store::SharedDir::new(d)),
        );
        Registry {
            dir,
            dirs,
            profile,
            local,
            host: local::hostname(),
            key: Default::default(),
        }
    }

    /// The common case: this user's local directories and configuration
    /// file, and the profile `selection` picks (see [`Profile::resolve`]).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), presence::Error> {
    /// let registry = presence::Registry::open(&presence::Selection::default())?;
    /// for row in registry.list(presence::ListOptions::default(), presence::unix_now())?.rows {
    ///     println!("{} {}", row.record.session_id, row.record.status);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn open(selection: &crate::config::Selection) -> Result<Registry> {
        let local = LocalDirs::from_env()?;
        let (profile, _) = crate::config::resolve(selection, &local)?;
        Ok(Registry::new(profile, local))
    }

    /// Overrides the hostname stamped into records (tests, embedding).
    pub fn with_host(mut self, host: impl Into<String>) -> Self {
        self.host = host.into();
        self
    }

    /// The hostname stamped into records: this machine's, unless
    /// [`with_host`](Self::with_host) said otherwise.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The profile.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The local directories.
    pub fn local(&self) -> &LocalDirs {
        &self.local
    }

    /// Every directory the profile reads, opened, `dir` first. A missing
    /// one is an empty [`store::Dir`].
    pub(crate) fn open_dirs(&self) -> Result<Vec<store::Dir>> {
        self.dirs.iter().map(store::SharedDir::open).collect()
    }

    /// What the ledger of each of `dirs` says this device published there:
    /// a file is this device's only in the directory it wrote it to.
    pub(crate) fn owns(&self, dirs: &[store::Dir]) -> Result<Vec<Own>> {
        dirs.iter().map(|d| self.own(d)).collect()
    }

    /// The `at`-th directory the profile reads, as configured (the 0th is
    /// `dir`, even in a profile built by hand whose `dirs` says otherwise).
    pub(crate) fn read_dir(&self, at: usize) -> &std::path::Path {
        match self.profile.dirs.get(at) {
            Some(d) if at > 0 => d,
            _ => &self.profile.dir,
        }
    }

    /// Files passed over in the `at`-th directory: named by their path when
    /// the profile reads several directories.
    fn qualify(&self, at: usize, skipped: Vec<Skipped>) -> Vec<Skipped> {
        if self.dirs.len() < 2 {
            return skipped;
        }
        let dir = self.read_dir(at);
        skipped
            .into_iter()
            .map(|s| Skipped {
                file: dir.join(&s.file).display().to_string(),
                ..s
            })
            .collect()
    }

    /// This registry narrowed to the `at`-th directory its profile reads,
    /// as a profile whose only directory that is (for the checks `doctor`
    /// runs on each directory).
    pub(crate) fn only_dir(&self, at: usize) -> Registry {
        let mut profile = self.profile.clone();
        let path = self.read_dir(at).to_path_buf();
        if at > 0 {
            profile.expires_others = crate::config::expires_others_in(&path, &self.local.home);
            profile.dir_is_default = false;
        }
        profile.dir = path.clone();
        profile.dirs = vec![path];
        let dir = self.dirs.get(at).unwrap_or(&self.dir).clone();
        Registry {
            dir: dir.clone(),
            dirs: vec![dir],
            profile,
            local: self.local.clone(),
            host: self.host.clone(),
            key: self.key.clone(),
        }
    }

    /// This device's signing key and id (made on first use; see
    /// [`LocalDirs::device_key`]), loaded once per registry.
    pub(crate) fn device_key(&self) -> Result<&crate::local::DeviceKey> {
        if let Some(k) = self.key.get() {
            return Ok(k);
        }
        let k = self.local.device_key()?;
        Ok(self.key.get_or_init(|| k))
    }

    /// The labels this registry shows, given the options.
    pub(crate) fn show_set(&self, all_profiles: bool) -> ShowSet {
        if all_profiles {
            ShowSet::All
        } else {
            self.profile.show.clone()
        }
    }

    /// The skew tolerance and the clock margin, seconds.
    pub(crate) fn tolerance(&self) -> (f64, f64) {
        (
            self.profile.skew.as_secs_f64(),
            self.profile.clock_margin.as_secs_f64(),
        )
    }

    /// The row of `e`, a file in the profile's `at`-th directory, whose
    /// ledger is `own`.
    pub(crate) fn row(&self, e: Entry, at: usize, own: &Own, now: f64, pass: &Pass) -> Row {
        let clock = pass.clock(&e.record.device_id, now);
        let state = liveness::state(&e.record, e.ctime, now, clock);
        let local = own.is_mine(&e.file, e.kind, &e.record);
        let mut record = e.record;
        // The row says `verified` (and keeps the public `key`, whose
        // fingerprint `devices` shows); the signature itself is the file's.
        record.sig.clear();
        // Redact the whole strings, then cut: the other order can leave half
        // a token that no rule recognises.
        let redactions = redact::redact_record(&mut record);
        record.cut_to_limits();
        let mut row = Row {
            local,
            file: e.file,
            dir: (self.dirs.len() > 1).then(|| self.read_dir(at).to_path_buf()),
            dir_index: at,
            live: state == State::Live,
            state,
            conflict_copy: matches!(e.kind, NameKind::ConflictCopy(_)),
            age_s: 0.0,
            claimed_age_s: None,
            expires_in_s: None,
            superseded_by: None,
            lost_because: None,
            writer_offset_s: match clock {
                WriterClock::Known { offset, .. } => Some(round_ms(offset)),
                WriterClock::Unknown { .. } => None,
            },
            verified: e.verdict.verified(),
            forged: e.verdict.forgery().map(crate::identity::Forgery::name),
            redactions,
            record,
        };
        row.retime(e.ctime, now, self.tolerance());
        row
    }
}
