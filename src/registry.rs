//! The registry: one profile's directory seen through the rules — publish,
//! list, show and clear. The CLI is a thin layer over this type, and so is
//! any Rust program that links the crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::change::{Change, Done, Own};
use crate::clock::Clocks;
use crate::config::{Profile, ShowSet};
use crate::dedupe::{self, Digest, LossReason, Reducer};
use crate::error::{Error, Result};
use crate::lifecycle::end_of;
use crate::liveness::{self, State, WriterClock};
use crate::local::{self, LocalDirs};
use crate::owner;
use crate::record::{Probe, Record};
use crate::redact::{self, Redaction};
use crate::scan_cache;
use crate::store::{self, Entry, NameKind, Skipped};

/// What a publish says about a session; everything else is stamped by the
/// registry.
///
/// A request is a **patch**. Re-publishing a session life this device has
/// going — its ledger says this device wrote the record, the file still holds
/// exactly what it wrote, and the life has not been cleared — changes only
/// what the request names: a field left `None` keeps the record's value,
/// [`unset`](Self::unset) empties a field, and a [`metadata`](Self::metadata)
/// entry with an empty value removes that entry. The owner, ttl and
/// `started_at` are kept too unless given. With [`replace`](Self::replace),
/// or when there is no such record (a first publish, a record another device
/// wrote, a file changed since this device wrote it), the request is the
/// whole record: what it leaves out takes its default.
///
/// ```
/// # fn main() -> Result<(), presence::Error> {
/// # let tmp = tempfile::tempdir().unwrap();
/// # let local = presence::LocalDirs::under(tmp.path());
/// # let (profile, _) = presence::Profile::resolve(&Default::default(), &local)?;
/// use presence::{Field, PublishRequest, Registry};
///
/// let registry = Registry::new(profile, local);
/// let now = presence::unix_now();
/// let mut req = PublishRequest::new("s-1");
/// req.title = Some("Refactor the parser".into());
/// req.model = Some("gpt-5".into());
/// req.metadata.insert("branch".into(), "main".into());
/// registry.publish(&req, now)?;
///
/// // A hook that only sets the status keeps everything else.
/// let mut status = PublishRequest::new("s-1");
/// status.status = Some("waiting".into());
/// let r = registry.publish(&status, now + 1.0)?.record;
/// assert_eq!((r.status.as_str(), r.title.as_str()), ("waiting", "Refactor the parser"));
/// assert_eq!(r.metadata["branch"], "main");
///
/// // Remove what is no longer true: a field, and a metadata entry.
/// let mut less = PublishRequest::new("s-1");
/// less.unset.insert(Field::Model);
/// less.metadata.insert("branch".into(), String::new());
/// let r = registry.publish(&less, now + 2.0)?.record;
/// assert_eq!((r.model.as_str(), r.metadata.len()), ("", 0));
/// assert_eq!(r.title, "Refactor the parser");
///
/// // `replace`: exactly what is given, defaults for the rest.
/// let mut all = PublishRequest::new("s-1");
/// all.replace = true;
/// let r = registry.publish(&all, now + 3.0)?.record;
/// assert_eq!((r.status.as_str(), r.title.as_str()), ("idle", ""));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct PublishRequest {
    /// Runtime session id (required).
    pub session_id: String,
    /// Durable session id; default (and when empty): `session_id`.
    pub session_key: Option<String>,
    /// State word; default `idle`. An empty one counts as not given.
    pub status: Option<String>,
    /// Display title.
    pub title: Option<String>,
    /// Model name.
    pub model: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Client name; default: the profile's `client`.
    pub client: Option<String>,
    /// Source.
    pub source: Option<String>,
    /// Attach hint (redacted before it is written).
    pub endpoint: Option<String>,
    /// Extra labels to set; an empty value removes the label.
    pub metadata: BTreeMap<String, String>,
    /// Fields to empty. [`Field::Metadata`] removes every label that
    /// [`metadata`](Self::metadata) does not set. A field both given and
    /// unset is refused.
    pub unset: BTreeSet<Field>,
    /// Write exactly what is given, with defaults for the rest, instead of
    /// patching the record this device has going.
    pub replace: bool,
    /// Time to live; default: the record's own ttl when patching, else the
    /// profile's `ttl`.
    pub ttl: Option<Duration>,
    /// Owner process; its start time is recorded so a reused pid is not
    /// mistaken for it. Default: the record's owner when patching, else none.
    pub owner_pid: Option<u32>,
    /// Writer instance; default `<host>-<first 8 chars of the device id>`.
    pub instance_id: Option<String>,
    /// Refuse instead of redacting (also on when the profile says `strict = true`).
    pub strict: bool,
    /// The endpoint of a record that would otherwise have none: used when
    /// [`endpoint`](Self::endpoint) is not given, not unset, and the record
    /// patched has none. What a publisher can tell about where it runs
    /// (`presence publish` and `run` inside tmux: `tmux://HOST/SESSION`).
    pub default_endpoint: Option<String>,
}

impl PublishRequest {
    /// A request for session `session_id`, everything else at its default.
    pub fn new(session_id: impl Into<String>) -> Self {
        PublishRequest {
            session_id: session_id.into(),
            ..PublishRequest::default()
        }
    }

    /// The value the request gives to an unsettable text field.
    fn given(&self, field: Field) -> Option<&String> {
        match field {
            Field::Title => self.title.as_ref(),
            Field::Model => self.model.as_ref(),
            Field::Cwd => self.cwd.as_ref(),
            Field::Client => self.client.as_ref(),
            Field::Source => self.source.as_ref(),
            Field::Endpoint => self.endpoint.as_ref(),
            Field::Metadata => None,
        }
    }

    /// Refuses a field that is both given and unset.
    fn check(&self) -> Result<()> {
        match self.unset.iter().find(|f| self.given(**f).is_some()) {
            Some(f) => Err(Error::InvalidRecord {
                field: f.name().into(),
                message: "both given and unset; give a value or unset it, not both".into(),
            }),
            None => Ok(()),
        }
    }

    /// The record this request makes of `base` (the record this device has
    /// going, when patching), before the registry stamps who wrote it and
    /// when. `client` is the profile's default client.
    fn merged(&self, base: Option<&Record>, client: &str) -> Record {
        let mut r = match base {
            Some(b) => b.clone(),
            None => {
                let mut r = Record::new(self.session_id.clone());
                r.status = "idle".into();
                r.client = client.to_owned();
                r
            }
        };
        if let Some(k) = &self.session_key {
            r.session_key = if k.is_empty() {
                self.session_id.clone()
            } else {
                k.clone()
            };
        }
        if let Some(s) = self.status.as_ref().filter(|s| !s.is_empty()) {
            r.status = s.clone();
        }
        for field in &self.unset {
            match field {
                Field::Metadata => r.metadata.clear(),
                text => *text_field(&mut r, *text) = String::new(),
            }
        }
        for field in Field::ALL {
            if let Some(v) = self.given(field) {
                *text_field(&mut r, field) = v.clone();
            }
        }
        if let Some(d) = &self.default_endpoint
            && self.endpoint.is_none()
            && !self.unset.contains(&Field::Endpoint)
            && r.endpoint.trim().is_empty()
        {
            r.endpoint = d.clone();
        }
        r.endpoint = r.endpoint.trim().to_owned();
        for (k, v) in &self.metadata {
            if v.is_empty() {
                r.metadata.remove(k);
            } else {
                r.metadata.insert(k.clone(), v.clone());
            }
        }
        r
    }
}

/// The record's text field `field` (never [`Field::Metadata`]).
fn text_field(r: &mut Record, field: Field) -> &mut String {
    match field {
        Field::Title => &mut r.title,
        Field::Model => &mut r.model,
        Field::Cwd => &mut r.cwd,
        Field::Client => &mut r.client,
        Field::Source => &mut r.source,
        Field::Endpoint | Field::Metadata => &mut r.endpoint,
    }
}

/// A field of a record that a publish can empty (`--unset FIELD`): the
/// optional text fields, and the metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Field {
    /// `title`.
    Title,
    /// `model`.
    Model,
    /// `cwd`.
    Cwd,
    /// `client`.
    Client,
    /// `source`.
    Source,
    /// `endpoint`.
    Endpoint,
    /// Every `metadata` entry.
    Metadata,
}

impl Field {
    /// Every field that can be unset.
    pub const ALL: [Field; 7] = [
        Field::Title,
        Field::Model,
        Field::Cwd,
        Field::Client,
        Field::Source,
        Field::Endpoint,
        Field::Metadata,
    ];

    /// Its name in the record (and on the command line).
    pub fn name(self) -> &'static str {
        match self {
            Field::Title => "title",
            Field::Model => "model",
            Field::Cwd => "cwd",
            Field::Client => "client",
            Field::Source => "source",
            Field::Endpoint => "endpoint",
            Field::Metadata => "metadata",
        }
    }
}

impl std::fmt::Display for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Field {
    type Err = UnknownField;

    fn from_str(s: &str) -> std::result::Result<Field, UnknownField> {
        Field::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| UnknownField { name: s.to_owned() })
    }
}

/// A name that is not a [`Field`] a publish can unset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{name}' cannot be unset; the fields that can: {}",
    Field::ALL.map(Field::name).join(", ")
)]
pub struct UnknownField {
    /// The name given.
    pub name: String,
}

/// The outcome of a publish.
#[derive(Debug, Clone)]
pub struct Published {
    /// The record as written.
    pub record: Record,
    /// Its path.
    pub path: PathBuf,
    /// What redaction removed (field and kind, never the value).
    pub redactions: Vec<Redaction>,
    /// Fields cut to their limits, and similar notes.
    pub warnings: Vec<String>,
}

impl Published {
    /// How long the record lives unless refreshed, seconds: its ttl as every
    /// reader takes it (clamped, see `liveness::record_ttl`).
    pub fn ttl_s(&self) -> f64 {
        crate::liveness::record_ttl(&self.record)
    }
}

/// What `list` includes.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct ListOptions {
    /// Also groups whose newest record is not live (marked `live: false`).
    pub include_expired: bool,
    /// Every record: also the losers of dedupe, each with why it lost.
    pub all: bool,
    /// Every label in the directory, whatever the profile's `show` says.
    pub all_profiles: bool,
}

/// One row of a listing: a record and what this device computes about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The record (redacted).
    #[serde(flatten)]
    pub record: Record,
    /// File name in the directory.
    pub file: String,
    /// The directory that holds the file, as configured (expanded): only
    /// for a profile that reads several directories (`dirs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
    /// Which of the profile's directories holds the file (0: `dir`).
    #[serde(skip)]
    pub dir_index: usize,
    /// Whether the record is live.
    pub live: bool,
    /// `live`, `ended`, `stale` or `expired`.
    pub state: State,
    /// Written by this device.
    pub local: bool,
    /// Whether the file is a sync engine's conflict copy.
    pub conflict_copy: bool,
    /// Seconds since the file last arrived or changed here (local clock, from ctime).
    pub age_s: f64,
    /// Seconds since `updated_at` (writer clock); null without `updated_at`.
    pub claimed_age_s: Option<f64>,
    /// Seconds until the record stops being live; null for tombstones.
    pub expires_in_s: Option<f64>,
    /// With `--all`, on losers: the file name of the group's winner.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    /// How far the writer's clock runs ahead of ours (negative: behind), as
    /// learned from its records; null while its device has no estimate yet
    /// (its times are then read with the skew tolerance).
    pub writer_offset_s: Option<f64>,
    /// With `--all`, on losers: `older`, `lower_seq` or `file_name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_because: Option<LossReason>,
    /// Fields that carried credentials in the file and were redacted for display.
    #[serde(skip)]
    pub redactions: Vec<Redaction>,
}

impl Row {
    /// Recomputes the fields that count from `now` (`age_s`,
    /// `claimed_age_s`, `expires_in_s`) for a record whose file has `ctime`,
    /// so that a row kept across time (by a watcher) says what a listing
    /// would say now.
    pub(crate) fn retime(&mut self, ctime: f64, now: f64, (skew, margin): (f64, f64)) {
        let clock = match self.writer_offset_s {
            Some(offset) => WriterClock::Known { offset, margin },
            None => WriterClock::Unknown { skew },
        };
        self.age_s = round_ms(now - ctime);
        self.claimed_age_s = self.record.updated_at.map(|u| round_ms(now - u));
        self.expires_in_s =
            liveness::deadline(&self.record, ctime, clock).map(|d| round_ms(d - now));
    }

    /// Says what the row's life is: a copy that looks live on its own but
    /// whose life another copy ended is shown as ended.
    pub(crate) fn mark_life(&mut self, life: State) {
        if life == State::Ended && self.live {
            self.live = false;
            self.state = State::Ended;
            self.expires_in_s = None;
        }
    }

    /// The order of a listing: `started_at`, newest first (a record without
    /// one last), then session id, then file name. Unlike `updated_at`,
    /// none of these changes when a session is refreshed, so a row keeps its
    /// place from one listing to the next.
    pub fn listing_order(&self, other: &Row) -> std::cmp::Ordering {
        listing_order(
            (self.record.started_at, &self.record.session_id, &self.file),
            (
                other.record.started_at,
                &other.record.session_id,
                &other.file,
            ),
        )
    }

    /// The names of the fields of a row's JSON form (`list --json`), for
    /// templates: the record's fields, the computed ones, and the two that
    /// only losers of `--all` carry.
    pub fn field_names() -> Vec<String> {
        let row = Row {
            record: Record::new("x"),
            file: String::new(),
            dir: Some(PathBuf::new()),
            dir_index: 0,
            live: false,
            state: State::Live,
            local: false,
            conflict_copy: false,
            age_s: 0.0,
            claimed_age_s: None,
            expires_in_s: None,
            superseded_by: Some(String::new()),
            lost_because: Some(LossReason::Older),
            writer_offset_s: None,
            redactions: Vec::new(),
        };
        match serde_json::to_value(&row) {
            Ok(serde_json::Value::Object(map)) => map.keys().cloned().collect(),
            _ => Vec::new(),
        }
    }
}

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

/// One device seen in the directory, and what this machine knows of its clock.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Device {
    /// Its `device_id` (empty for writers that stamp none).
    pub device_id: String,
    /// The hosts its records name.
    pub hosts: Vec<String>,
    /// The instance ids its records name.
    pub instances: Vec<String>,
    /// Records of it in the directory (every label, live or not).
    pub records: usize,
    /// Of them, live.
    pub live: usize,
    /// Whether it is this device (it wrote a record the ledger knows).
    pub this_device: bool,
    /// Seconds since the newest of its records arrived here (or, for this
    /// device, was written), on this machine's clock.
    pub last_seen_s: f64,
    /// How far its clock runs ahead of ours (negative: behind), as learned;
    /// null while it has no estimate (its times are then read with the skew
    /// tolerance).
    pub offset_s: Option<f64>,
    /// Records that taught the estimate something when they were read
    /// (a new minute of arrivals, a later arrival, a higher sample).
    pub samples: u64,
    /// No sample arrived within the last 10 minutes: the estimate is the
    /// last one learned, kept.
    pub stale: bool,
}

/// One record that `clear` turned into a tombstone.
#[derive(Debug, Clone)]
pub struct Cleared {
    /// File name.
    pub file: String,
    /// The tombstone as written.
    pub record: Record,
}

/// The outcome of `clear`.
#[derive(Debug, Clone, Default)]
pub struct ClearOutcome {
    /// Records turned into tombstones.
    pub cleared: Vec<Cleared>,
    /// Matching records that were tombstones already.
    pub already_ended: usize,
    /// Matching records that changed between the scan and the lock, and were left alone.
    pub changed_meanwhile: usize,
}

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

    /// Runs every `doctor` check of this profile at `now`; `config` is
    /// where its configuration came from.
    pub fn doctor(
        &self,
        config: &crate::config::ConfigSource,
        now: f64,
    ) -> Vec<crate::doctor::Check> {
        crate::doctor::run(self, config, now)
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

    /// This device's default instance id: `<host>-<first 8 chars of device
    /// id>`, with `-<label>` appended for labels other than `default`, so that
    /// profiles sharing a directory never write the same file.
    pub fn default_instance(&self) -> Result<String> {
        let device = self.local.device_id()?;
        Ok(self.instance_for(&device))
    }

    fn instance_for(&self, device_id: &str) -> String {
        let base = format!("{}-{}", self.host, crate::text::prefix_chars(device_id, 8));
        if self.profile.label == "default" {
            base
        } else {
            format!("{base}-{}", self.profile.label)
        }
    }

    /// Publishes (creates or updates) a record at `now` (Unix seconds): a
    /// patch over the session life this device has going, or the whole
    /// record (see [`PublishRequest`]). Redaction, `strict` and the limits
    /// apply to the record as merged.
    pub fn publish(&self, req: &PublishRequest, now: f64) -> Result<Published> {
        self.publish_with(req, now, None)
    }

    /// The instance id a request writes as.
    pub(crate) fn instance_of(&self, req: &PublishRequest) -> Result<String> {
        match &req.instance_id {
            Some(i) if !i.trim().is_empty() => Ok(i.clone()),
            Some(_) => Err(Error::InvalidRecord {
                field: "instance_id".into(),
                message: "must not be empty; omit --instance to use the default".into(),
            }),
            None => self.default_instance(),
        }
    }

    /// The record a publish of `session` as `instance` patches: the one
    /// this device wrote at that file, if the file still holds exactly that
    /// and its life goes on under this profile's label. A record another
    /// device wrote, or one changed since this device wrote it, is never a
    /// base: whatever it says is not this device's to keep.
    fn patch_base<'a>(
        &self,
        cur: &'a crate::change::Current,
        instance: &str,
        session: &str,
    ) -> Option<&'a Record> {
        let (e, m) = (cur.entry.as_ref()?, cur.mine.as_ref()?);
        let label = crate::record::label_of;
        (cur.holds_written()
            && m.ended_at.is_none()
            && e.record.ended_at.is_none()
            && label(&m.label) == label(&self.profile.label)
            && e.record.instance_id == instance
            && e.record.session_id == session)
            .then_some(&e.record)
    }

    /// [`publish`](Self::publish); with `start`, the owner is the process
    /// that `start` starts (it returns its pid), started under the record's
    /// lock once everything else about the publish is settled: nothing is
    /// written if it cannot start, and it cannot write its own record
    /// before this publish has.
    pub(crate) fn publish_with(
        &self,
        req: &PublishRequest,
        now: f64,
        mut start: Option<&mut dyn FnMut() -> Result<u32>>,
    ) -> Result<Published> {
        let device_id = self.local.device_id()?;
        let ttl = req.ttl.unwrap_or(self.profile.ttl);
        if !crate::limits::ttl_in_range(ttl) {
            return Err(Error::InvalidRecord {
                field: "ttl".into(),
                message: format!(
                    "{} is out of range; use 1s to 1h",
                    humantime::format_duration(ttl)
                ),
            });
        }
        req.check()?;
        let owner = match req.owner_pid {
            Some(_) if start.is_some() => None,
            Some(pid) => match owner::process_info(pid) {
                Some(info) if !info.zombie => Some((pid, info.start)),
                _ => return Err(Error::NoSuchOwner { pid }),
            },
            None => None,
        };
        let instance = self.instance_of(req)?;
        let file = store::file_name(&instance, &req.session_id);
        store::ensure_dir(&self.profile.dir)?;
        let dir = self.dir.open()?;
        let skew = self.profile.skew.as_secs_f64();
        let label = crate::record::label_of;
        let strict = req.strict || self.profile.strict;
        // The process `start` started, once it has: a retry must not start another.
        let mut started: Option<(u32, Option<u64>)> = None;
        // A sync engine may replace the file between our read and our write:
        // then decide again on what it holds.
        for _ in 0..3 {
            let (done, out) = self.change(&dir, &file, |cur| {
                let base = match req.replace {
                    true => None,
                    false => self.patch_base(cur, &instance, &req.session_id),
                };
                let mut new = req.merged(base, &self.profile.client);
                new.profile = self.profile.label.clone();
                new.host = self.host.clone();
                new.instance_id = instance.clone();
                new.device_id = device_id.clone();
                match (owner, base) {
                    (Some((pid, since)), _) => (new.pid, new.owner_start) = (pid, Some(since)),
                    // A patch keeps the owner: a hook that sets the status
                    // is not the session's process.
                    (None, Some(_)) => {}
                    (None, None) => (new.pid, new.owner_start) = (std::process::id(), None),
                }
                refuse_credential_ids(&new)?;
                let redactions = redact::redact_record(&mut new);
                if !redactions.is_empty() && strict {
                    let mut fields: Vec<String> =
                        redactions.iter().map(|r| r.field.clone()).collect();
                    fields.dedup();
                    return Err(Error::Refused { fields });
                }
                let mut warnings = new.enforce_limits()?;
                let ttl = match (req.ttl, base) {
                    (Some(ttl), _) => ttl.as_secs_f64(),
                    (None, Some(b)) => liveness::record_ttl(b),
                    (None, None) => self.profile.ttl.as_secs_f64(),
                };
                new.seq = 1;
                new.started_at = Some(now);
                // What the ledger says this device published here, if the
                // file still holds it and it has not ended.
                let ongoing = cur.entry.as_ref().filter(|e| {
                    cur.holds_mine()
                        && e.record.ended_at.is_none()
                        && cur.mine.as_ref().is_some_and(|m| m.ended_at.is_none())
                });
                if let Some(old) = ongoing {
                    let live = liveness::state(&old.record, old.ctime, now, skew) == State::Live;
                    // Only a live record of this device's other profile is
                    // protected; whatever another device wrote (or planted)
                    // here is replaced, so a planted file never stops a
                    // publish nor keeps `run` from starting its command.
                    let mine = cur.mine.as_ref().map_or("", |m| m.label.as_str());
                    if live && label(mine) != label(&new.profile) {
                        return Err(Error::InvalidRecord {
                            field: "instance_id".into(),
                            message: format!(
                                "{file} already holds session '{}' of profile label '{}'; \
                                 publishing here would replace it. Use another --instance \
                                 for this profile",
                                old.record.session_id, old.record.profile
                            ),
                        });
                    }
                    if old.record.session_id == new.session_id {
                        new.started_at = old.record.started_at.or(Some(now));
                    }
                }
                if let Some(old) = &cur.entry {
                    // Readers rank by seq after updated_at: keep it rising.
                    new.seq = old.record.seq.saturating_add(1);
                    if !cur.holds_mine() {
                        let who = if old.record.device_id == device_id {
                            "a writer claiming this device's id".to_string()
                        } else if old.record.device_id.is_empty() {
                            "another writer".to_string()
                        } else {
                            format!(
                                "device {}",
                                crate::text::prefix_chars(&old.record.device_id, 8)
                            )
                        };
                        warnings.push(format!(
                            "replaced {file}, which {who} had written (same instance id on two devices?)"
                        ));
                    }
                }
                new.updated_at = Some(now);
                new.expires_at = Some(now + ttl);
                if let Some(start) = start.as_mut() {
                    let (pid, owner_start) = match started {
                        Some(s) => s,
                        None => {
                            let pid = start()?;
                            let s = (pid, owner::process_info(pid).map(|i| i.start));
                            started = Some(s);
                            s
                        }
                    };
                    (new.pid, new.owner_start) = (pid, owner_start);
                }
                Ok((
                    Change::Write(Box::new(new.clone())),
                    (warnings, redactions, new),
                ))
            })?;
            if done == Done::Written {
                let (warnings, redactions, record) = out;
                let path = self.profile.dir.join(&file);
                return Ok(Published {
                    record,
                    path,
                    redactions,
                    warnings,
                });
            }
        }
        Err(Error::KeptChanging {
            path: self.profile.dir.join(&file),
        })
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
        }
    }

    /// The labels this registry shows, given the options.
    pub(crate) fn show_set(&self, all_profiles: bool) -> ShowSet {
        if all_profiles {
            ShowSet::All
        } else {
            self.profile.show.clone()
        }
    }

    /// Lists the directory at `now`: deduped, live only unless the options
    /// say otherwise, in [`Row::listing_order`] (newest start first).
    /// Records are redacted for display.
    pub fn list(&self, opts: ListOptions, now: f64) -> Result<Listing> {
        if opts.all {
            return self.list_all(opts, now);
        }
        let mut rows = Vec::new();
        let (dir_exists, skipped) = self.list_each(opts, now, |row| {
            rows.push(row);
            true
        })?;
        Ok(Listing {
            dir_exists,
            rows,
            skipped,
        })
    }

    /// Like [`list`](Self::list) without `all`, but hands the rows to `each`
    /// one at a time, in [`Row::listing_order`], parsing each record only
    /// when its turn comes, so that memory follows the directory's groups
    /// rather than the rows (a listing can be streamed out). `each` returns `false` to stop.
    /// Returns whether the directory exists (for a profile that reads
    /// several, whether every one does) and the files passed over (named by
    /// their paths when there are several directories).
    pub fn list_each(
        &self,
        opts: ListOptions,
        now: f64,
        mut each: impl FnMut(Row) -> bool,
    ) -> Result<(bool, Vec<Skipped>)> {
        let dirs = self.open_dirs()?;
        let owns = self.owns(&dirs)?;
        let show = self.show_set(opts.all_profiles);
        let clocks = self.local.clocks();
        // Each file is probed for the few fields dedupe and liveness need
        // and becomes a 48-byte slot; only a file that may be listed keeps
        // its bytes, in its thread's buffer. The groups are then decided by
        // sorting the slots, and only the winners are fully parsed, as their
        // turn comes. Memory follows the files that can still win, not the
        // directory's bytes. A profile that reads several directories puts
        // the slots of all of them into the one decision, each slot carrying
        // its directory's index.
        let mut learned = Clocks::default();
        let mut all_exist = true;
        let mut skipped = Vec::new();
        // The files of each directory, and its scan cache if it has one and
        // is large enough to gain from it (see scan_cache.rs).
        let mut listed_names = Vec::with_capacity(dirs.len());
        for dir in &dirs {
            listed_names.push(dir.candidates()?);
        }
        let counts: Vec<usize> = listed_names.iter().map(|(n, _)| n.len()).collect();
        let (caching, caches) = self.scan_caches(&dirs, &counts);
        // Every thread hands its slots over in small batches to one vector
        // made once at the size of the directories: no thread's vector
        // grows to its share, and none is copied when they are joined.
        let shared = std::sync::Mutex::new(Vec::with_capacity(counts.iter().sum()));
        let key = dedupe::digest_key();
        // From this machine's clock, whatever `now` the caller judges at.
        let settled = crate::unix_now() - scan_cache::SETTLE_S;
        let mut scans: Vec<(store::Names, Vec<Part<'_>>)> = Vec::with_capacity(dirs.len());
        for (at, (dir, (names, mut report))) in dirs.iter().zip(listed_names).enumerate() {
            let cache = caches.get(at).and_then(Option::as_ref);
            let cache_to = caching.get(at).and_then(Option::as_ref);
            let lookup = cache.map(|c| c.index(&names));
            let part = std::sync::atomic::AtomicU8::new(0);
            let init = || Part {
                id: part.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                ..Part::default()
            };
            // What a file says, from the cache or from its probe: its
            // writer's clock sample (every record teaches it, whatever its
            // label), and — for a label shown — its liveness.
            let judge = |learned: &mut Clocks, f: &scan_cache::Facts<'_>, ctime: f64| {
                if let Some(updated) = f.updated {
                    learned.learn(f.device, ctime, updated);
                }
                if !show.shows(f.label) {
                    return None;
                }
                let clock = self.writer_clock(&clocks, f.device, now);
                Some(liveness::state_of(f.times(), ctime, now, clock))
            };
            let listable = |state: State| opts.include_expired || state == State::Live;
            let slot =
                |f: &scan_cache::Facts<'_>, file: u32, kept: u32, part: u8, state| dedupe::Slot {
                    group: f.group,
                    life: f.life,
                    updated: f.updated.unwrap_or(f64::NEG_INFINITY),
                    seq: f.seq,
                    file,
                    kept,
                    dir: at as u32,
                    part,
                    ended: f.ended,
                    state,
                };
            // A file the cache knows in this very version is judged from
            // what the cache says, and read again only if it wins.
            let known = knows(|p, file, stamp| {
                let Some((i, f)) = lookup
                    .as_ref()
                    .and_then(|l| l.get(file, scan_cache::FileKey::of(&stamp)))
                else {
                    return false;
                };
                p.hits.push(i as u32);
                if let Some(state) = judge(&mut p.learned, &f, stamp.ctime()) {
                    let kept = if listable(state) {
                        p.hold(Held::Reread {
                            stamp,
                            started_at: f.started,
                            session_id: f.session,
                        })
                    } else {
                        u32::MAX
                    };
                    p.push(&shared, slot(&f, file, kept, p.id, state));
                }
                true
            });
            let fold = |p: &mut Part<'_>, file: u32, raw: store::Raw<'_>| {
                let probe = Probe::parse(raw.bytes).map_err(store::SkipReason::Unparseable)?;
                let f = scan_cache::Facts::of(&probe);
                if cache_to.is_some() && raw.ctime < settled {
                    let name = scan_cache::name_hash(key, raw.file);
                    let version = scan_cache::FileKey::of(&raw.stamp);
                    p.fresh.push(scan_cache::Fresh::new(name, version, &f));
                }
                if let Some(state) = judge(&mut p.learned, &f, raw.ctime) {
                    let kept = if listable(state) {
                        p.keep(raw.bytes, raw.stamp)
                    } else {
                        u32::MAX
                    };
                    p.push(&shared, slot(&f, file, kept, p.id, state));
                }
                Ok(())
            };
            let known = cache.is_some().then_some(known);
            let mut parts = dir.read_candidates_known(&names, &mut report, init, known, fold);
            parts.sort_by_key(|p| p.id);
            let mut fresh = Vec::new();
            let mut hits = vec![false; cache.map_or(0, scan_cache::Cache::len)];
            for p in &mut parts {
                learned.merge(&p.learned, now);
                p.flush(&shared);
                fresh.append(&mut p.fresh);
                for &i in &p.hits {
                    if let Some(h) = hits.get_mut(i as usize) {
                        *h = true;
                    }
                }
                p.hits = Vec::new();
            }
            // Written again when it learned something or lost an entry —
            // but in a busy directory, where every listing finds changes,
            // at most every REWRITE_AFTER unless a tenth of it changed: a
            // file the cache does not know yet is only read, as without it.
            // A failure to write is not the listing's (it is made again).
            let changed = fresh.len() + hits.iter().filter(|h| !**h).count();
            let rewrite = match cache {
                None => true,
                Some(c) => {
                    changed > 0
                        && (changed * 10 >= c.len().max(1)
                            || cache_to.is_some_and(|(path, _)| {
                                scan_cache::older_than(path, scan_cache::REWRITE_AFTER)
                            }))
                }
            };
            if let Some((path, id)) = cache_to
                && rewrite
            {
                let _ = scan_cache::save(path, *id, key, cache, &hits, fresh);
            }
            all_exist &= report.exists;
            skipped.extend(self.qualify(at, report.skipped));
            scans.push((names, parts));
        }
        let mut slots = shared.into_inner().unwrap_or_else(|e| e.into_inner());
        self.remember_clocks(&clocks, &learned, now);
        let name_of = |s: &dedupe::Slot| {
            scans
                .get(s.dir as usize)
                .map_or("", |(names, _)| names.get(s.file as usize).0)
        };
        let mut winners = Vec::new();
        dedupe::decide_slots(&mut slots, name_of, |d| {
            if opts.include_expired || d.state == State::Live {
                winners.push(d);
            }
        });
        // The listing order's keys, probed again from the kept bytes.
        let mut order: Vec<Listed<'_>> = Vec::with_capacity(winners.len());
        for d in winners {
            let slot = &slots[d.winner];
            let at = slot.dir as usize;
            let Some((names, parts)) = scans.get(at) else {
                continue;
            };
            let Some(held) = parts
                .get(slot.part as usize)
                .and_then(|p| p.held(slot.kept))
            else {
                continue;
            };
            let (file, kind) = names.get(slot.file as usize);
            let (started_at, session_id, bytes, stamp) = match held {
                Held::Bytes(start, len, stamp) => {
                    let Some(bytes) = parts[slot.part as usize].bytes.get(start..start + len)
                    else {
                        continue;
                    };
                    let Ok(probe) = Probe::parse(bytes) else {
                        continue;
                    };
                    (
                        probe.started_at,
                        probe.into_session_id(),
                        Some(bytes),
                        stamp,
                    )
                }
                Held::Reread {
                    stamp,
                    started_at,
                    session_id,
                } => (started_at, session_id.into(), None, stamp),
            };
            order.push(Listed {
                started_at,
                session_id,
                file,
                kind,
                at,
                bytes,
                stamp,
                group: slot.group,
                life: slot.life,
                state: d.state,
            });
        }
        drop(slots);
        order.sort_by(|a, b| {
            listing_order(
                (a.started_at, &a.session_id, a.file),
                (b.started_at, &b.session_id, b.file),
            )
            .then(a.at.cmp(&b.at))
        });
        let make = |l: &Listed<'_>| {
            let entry = match l.bytes {
                Some(bytes) => store::Raw {
                    file: l.file,
                    kind: l.kind,
                    ctime: l.stamp.ctime(),
                    stamp: l.stamp,
                    bytes,
                }
                .parse(),
                // Judged from the scan cache: read now.
                None => match dirs[l.at].read_entry(l.file) {
                    Ok(Some(e)) => Ok(e),
                    Ok(None) => return None,
                    Err(reason) => Err(reason),
                },
            };
            let entry = match entry {
                Ok(e) => e,
                Err(reason) => {
                    let file = l.file.to_owned();
                    return Some(Err((l.at, store::Skipped { file, reason })));
                }
            };
            let mut state = l.state;
            if scan_cache::FileKey::of(&entry.stamp) != scan_cache::FileKey::of(&l.stamp) {
                // Rewritten since it was judged (a refresh): listed as it is
                // now if it is still a copy of that life and listable itself.
                let clock = self.writer_clock(&clocks, &entry.record.device_id, now);
                let (group, life, copy) =
                    dedupe::describe::<()>(&entry.record, l.file, entry.ctime, now, clock);
                // A new life of the session (restarted) speaks for the
                // group as well as the old one did.
                if group != l.group || !(opts.include_expired || copy.state == State::Live) {
                    return None;
                }
                if life != l.life || copy.state != State::Live {
                    state = copy.state;
                }
            }
            let mut row = self.row(entry, l.at, &owns[l.at], now, &clocks);
            row.mark_life(state);
            Some(Ok(row))
        };
        in_order(&order, make, |made| match made {
            None => true,
            Some(Ok(row)) => each(row),
            Some(Err((at, s))) => {
                skipped.extend(self.qualify(at, vec![s]));
                true
            }
        });
        Ok((all_exist, skipped))
    }

    /// For each of `dirs` (holding `counts` record files): where its scan
    /// cache lives and the directory's identity, if it is to have one, and
    /// the cache as read, if it can be used (see scan_cache.rs).
    #[allow(clippy::type_complexity)]
    fn scan_caches(
        &self,
        dirs: &[store::Dir],
        counts: &[usize],
    ) -> (
        Vec<Option<(PathBuf, (u64, u64))>>,
        Vec<Option<scan_cache::Cache>>,
    ) {
        let caching: Vec<Option<(PathBuf, (u64, u64))>> = dirs
            .iter()
            .zip(counts)
            .map(|(dir, &count)| {
                let wanted = match std::env::var("PRESENCE_SCAN_CACHE").as_deref() {
                    Ok("off") => false,
                    Ok("on") => true,
                    _ => count >= scan_cache::CACHE_FROM && dir.local_ctimes(),
                };
                let id = dir.identity().filter(|_| wanted)?;
                let path = scan_cache::path_for(&self.local.state, dir.canonical()?);
                Some((path, id))
            })
            .collect();
        let caches = caching
            .iter()
            .map(|c| {
                let (path, id) = c.as_ref()?;
                scan_cache::Cache::load(path, *id).filter(|c| dedupe::use_digest_key(c.key()))
            })
            .collect();
        (caching, caches)
    }

    /// `list --all`: every record, each group's losers after its winner.
    fn list_all(&self, opts: ListOptions, now: f64) -> Result<Listing> {
        let dirs = self.open_dirs()?;
        let owns = self.owns(&dirs)?;
        let show = self.show_set(opts.all_profiles);
        let clocks = self.local.clocks();
        let mut learned = Clocks::default();
        let mut entries = Vec::new();
        let mut all_exist = true;
        let mut skipped = Vec::new();
        for (at, dir) in dirs.iter().enumerate() {
            let scan = dir.scan()?;
            all_exist &= scan.exists;
            skipped.extend(self.qualify(at, scan.skipped));
            // Every record teaches its writer's clock, whatever its label.
            for e in &scan.entries {
                learned.learn_record(&e.record, e.ctime);
            }
            entries.extend(
                scan.entries
                    .into_iter()
                    .filter(|e| show.shows(&e.record.profile))
                    .map(|e| (at, e)),
            );
        }
        let rows = self.every_row(entries, opts, &owns, now, &clocks);
        self.remember_clocks(&clocks, &learned, now);
        Ok(Listing {
            dir_exists: all_exist,
            rows,
            skipped,
        })
    }

    /// The rows of `list --all` for `entries` (each with the index of its
    /// directory): each group's winner, then its losers with why they
    /// lost, groups in listing order.
    fn every_row(
        &self,
        entries: Vec<(usize, Entry)>,
        opts: ListOptions,
        owns: &[Own],
        now: f64,
        clocks: &Clocks,
    ) -> Vec<Row> {
        let mut reducer = Reducer::new(true);
        for (at, e) in entries {
            let clock = self.writer_clock(clocks, &e.record.device_id, now);
            let (key, life, mut copy) = dedupe::describe(&e.record, &e.file, e.ctime, now, clock);
            copy.dir = at;
            copy.item = Some(e);
            reducer.add(key, life, copy);
        }
        let mut groups: Vec<Vec<Row>> = Vec::new();
        for group in reducer.finish() {
            if !opts.include_expired && group.state != State::Live && !opts.all {
                continue;
            }
            let at = group.winner.dir;
            let Some(winner) = group.winner.item else {
                continue;
            };
            let winner_file = winner.file.clone();
            let mut row = self.row(winner, at, &owns[at], now, clocks);
            row.mark_life(group.state);
            let mut rows = vec![row];
            for (copy, why) in group.losers {
                let at = copy.dir;
                let Some(e) = copy.item else { continue };
                let mut r = self.row(e, at, &owns[at], now, clocks);
                if why == LossReason::LifeEnded {
                    r.mark_life(State::Ended);
                }
                r.superseded_by = Some(winner_file.clone());
                r.lost_because = Some(why);
                rows.push(r);
            }
            groups.push(rows);
        }
        groups.sort_by(|a, b| a[0].listing_order(&b[0]));
        groups.into_iter().flatten().collect()
    }

    /// How to read the times of a record written by `device`: through its
    /// learned clock offset, or with the skew tolerance for a device not
    /// known yet (see `clock.rs`).
    pub(crate) fn writer_clock(&self, clocks: &Clocks, device: &str, now: f64) -> WriterClock {
        clocks.writer(
            device,
            now,
            self.profile.skew.as_secs_f64(),
            self.profile.clock_margin.as_secs_f64(),
        )
    }

    /// The skew tolerance and the clock margin, seconds.
    pub(crate) fn tolerance(&self) -> (f64, f64) {
        (
            self.profile.skew.as_secs_f64(),
            self.profile.clock_margin.as_secs_f64(),
        )
    }

    /// Writes down what a read learned of the devices' clocks, if it says
    /// something new. A failure to write is not the reader's failure: the
    /// estimates are learned again on the next read.
    pub(crate) fn remember_clocks(&self, known: &Clocks, learned: &Clocks, now: f64) {
        if known.learns_from(learned) {
            let _ = self.local.save_clocks(learned, now);
        }
    }

    /// The row of `e`, a file in the profile's `at`-th directory, whose
    /// ledger is `own`.
    pub(crate) fn row(&self, e: Entry, at: usize, own: &Own, now: f64, clocks: &Clocks) -> Row {
        let clock = self.writer_clock(clocks, &e.record.device_id, now);
        let state = liveness::state(&e.record, e.ctime, now, clock);
        let local = own.is_mine(&e.file, e.kind, &e.record);
        let mut record = e.record;
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
            redactions,
            record,
        };
        row.retime(e.ctime, now, self.tolerance());
        row
    }

    /// Every device with a record in the directory (every label), with what
    /// this machine has learned of its clock, most records first.
    pub fn devices(&self, now: f64) -> Result<Vec<Device>> {
        let opts = ListOptions {
            all: true,
            include_expired: true,
            all_profiles: true,
        };
        let listing = self.list(opts, now)?;
        let clocks = self.local.clocks();
        let mut by_id: BTreeMap<String, Device> = BTreeMap::new();
        for row in &listing.rows {
            let id = row.record.device_id.clone();
            let d = by_id.entry(id.clone()).or_insert_with(|| {
                let estimate = clocks.estimate(&id, now);
                Device {
                    device_id: id,
                    hosts: Vec::new(),
                    instances: Vec::new(),
                    records: 0,
                    live: 0,
                    this_device: false,
                    last_seen_s: row.age_s,
                    offset_s: estimate.map(|e| round_ms(e.offset)),
                    samples: estimate.map_or(0, |e| e.samples),
                    stale: estimate.is_some_and(|e| e.stale),
                }
            });
            d.records += 1;
            d.live += usize::from(row.live);
            d.this_device |= row.local;
            d.last_seen_s = d.last_seen_s.min(row.age_s);
            if !d.hosts.contains(&row.record.host) {
                d.hosts.push(row.record.host.clone());
            }
            if !d.instances.contains(&row.record.instance_id) {
                d.instances.push(row.record.instance_id.clone());
            }
        }
        let mut out: Vec<Device> = by_id.into_values().collect();
        out.sort_by(|a, b| {
            b.records
                .cmp(&a.records)
                .then(a.device_id.cmp(&b.device_id))
        });
        Ok(out)
    }

    /// The newest record (live or not) whose `session_id` or `session_key` is
    /// `id`, among the labels this profile shows, and how many others matched.
    pub fn show(&self, id: &str, now: f64) -> Result<Option<(Row, usize)>> {
        let dirs = self.open_dirs()?;
        let show = self.show_set(false);
        let clocks = self.local.clocks();
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
        let wild = id.contains("[redacted");
        // The scan cache, read but not written: `list` keeps it.
        let (_, caches) = self.scan_caches(&dirs, &counts);
        let mut scans = Vec::with_capacity(dirs.len());
        for (at, (dir, (names, mut report))) in dirs.iter().zip(listed_names).enumerate() {
            let cache = caches.get(at).and_then(Option::as_ref);
            let lookup = cache.map(|c| c.index(&names));
            type Acc = (Vec<dedupe::Slot>, Clocks);
            // Every record teaches its writer's clock; a file of a label
            // shown becomes a slot, marked when it matches.
            let add = |(slots, learned): &mut Acc, f: &scan_cache::Facts<'_>, file, ctime| {
                if let Some(updated) = f.updated {
                    learned.learn(f.device, ctime, updated);
                }
                if show.shows(f.label) {
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
            let known = |acc: &mut Acc, file: u32, stamp: store::Stamp| {
                let found = lookup
                    .as_ref()
                    .and_then(|l| l.get(file, scan_cache::FileKey::of(&stamp)));
                if let Some((_, f)) = &found {
                    add(acc, f, file, stamp.ctime());
                }
                found.is_some()
            };
            let fold = |acc: &mut Acc, file: u32, raw: store::Raw<'_>| {
                let probe = Probe::parse(raw.bytes).map_err(store::SkipReason::Unparseable)?;
                add(acc, &scan_cache::Facts::of(&probe), file, raw.ctime);
                Ok(())
            };
            let known = cache.is_some().then_some(known);
            let parts =
                dir.read_candidates_known(&names, &mut report, Default::default, known, fold);
            for (part, samples) in parts {
                learned.merge(&samples, now);
                slots.extend(part);
            }
            scans.push(names);
        }
        self.remember_clocks(&clocks, &learned, now);
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
                show.shows(&e.record.profile).then_some((at, e))
            })
            .collect();
        let owns = self.owns(&dirs)?;
        let opts = ListOptions {
            all: true,
            ..ListOptions::default()
        };
        let listing = Listing {
            dir_exists: true,
            rows: self.every_row(entries, opts, &owns, now, &clocks),
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
        let others = matches.len() - 1;
        Ok(Some((matches.swap_remove(0), others)))
    }

    /// Turns this device's records with this profile's label that match
    /// `session` (id or key) and/or `instance` into tombstones at `now`. At
    /// least one of the two must be given. Conflict copies and other devices'
    /// records are never touched.
    pub fn clear(
        &self,
        session: Option<&str>,
        instance: Option<&str>,
        now: f64,
    ) -> Result<ClearOutcome> {
        if session.is_none() && instance.is_none() {
            return Err(Error::InvalidRecord {
                field: "clear".into(),
                message: "name what to clear with --session ID and/or --instance ID".into(),
            });
        }
        let mut outcome = ClearOutcome::default();
        let dir = self.dir.open()?;
        if !dir.exists() {
            return Ok(outcome);
        }
        // Named by instance and session (a command inside `presence run`
        // clearing its own record), wait for that record's lock first: `run`
        // holds it from before its command starts until the record and its
        // ledger entry are written, so the ledger read below sees them.
        if let (Some(s), Some(i)) = (session, instance) {
            let file = store::file_name(i, s);
            drop(
                self.local
                    .lock(dir.canonical().unwrap_or(dir.path()), &file)?,
            );
        }
        // Every entry: a session may be named by its key, which another
        // file's record holds.
        let planned_entries = self.ledger(&dir).entries()?;
        let label = crate::record::label_of(&self.profile.label);
        let skew = self.profile.skew.as_secs_f64();
        // Only what the ledger says this device published: a record another
        // device wrote is never cleared, whatever device_id it claims.
        for planned in planned_entries {
            if crate::record::label_of(&planned.label) != label
                || instance.is_some_and(|i| planned.life.instance_id != i)
            {
                continue;
            }
            let (done, what) = self.change(&dir, &planned.file, |cur| {
                // Only the life planned: a newer one started meanwhile is left alone.
                let Some(mine) = cur.mine.as_ref().filter(|m| m.life == planned.life) else {
                    return Ok((Change::Leave, ClearStep::Changed));
                };
                let held = cur.entry.as_ref().filter(|_| cur.holds_mine());
                let named = session.is_none_or(|s| {
                    mine.life.session_id == s || held.is_some_and(|e| e.record.session_key == s)
                });
                Ok(match held {
                    _ if !named => (Change::Leave, ClearStep::NotNamed),
                    Some(e) if e.record.ended_at.is_some() => {
                        (Change::Leave, ClearStep::AlreadyEnded)
                    }
                    // Live, or a live copy of a life this device already
                    // ended (a sync engine brought an older copy back):
                    // either way the tombstone is (re)written.
                    Some(_) => {
                        let base = cur.base().ok_or(Error::Ended {
                            file: planned.file.clone(),
                        })?;
                        let tomb = end_of(base, now, skew);
                        (
                            Change::Write(Box::new(tomb.clone())),
                            ClearStep::Ended(Box::new(tomb)),
                        )
                    }
                    None => (Change::Leave, ClearStep::AlreadyEnded),
                })
            })?;
            match (done, what) {
                (Done::Written, ClearStep::Ended(record)) => outcome.cleared.push(Cleared {
                    file: planned.file.clone(),
                    record: *record,
                }),
                (_, ClearStep::NotNamed) => {}
                (Done::Left, ClearStep::AlreadyEnded) => outcome.already_ended += 1,
                _ => outcome.changed_meanwhile += 1,
            }
        }
        Ok(outcome)
    }
}

/// What `clear` made of one ledger entry.
enum ClearStep {
    Ended(Box<Record>),
    AlreadyEnded,
    NotNamed,
    Changed,
}

/// [`Row::listing_order`] on its keys: `(started_at, session_id, file)`.
fn listing_order(a: (Option<f64>, &str, &str), b: (Option<f64>, &str, &str)) -> std::cmp::Ordering {
    let started = |t: Option<f64>| t.unwrap_or(f64::NEG_INFINITY);
    started(b.0)
        .total_cmp(&started(a.0))
        .then_with(|| a.1.cmp(b.1))
        .then_with(|| a.2.cmp(b.2))
}

/// What one scan thread of a listing holds: the slots of the files it
/// read, and the bytes of those that may be listed, in one buffer; with a
/// scan cache, what the cache knew and what it will learn.
#[derive(Default)]
struct Part<'c> {
    id: u8,
    slots: Vec<dedupe::Slot>,
    bytes: Vec<u8>,
    held: Vec<Held<'c>>,
    learned: Clocks,
    /// The cache entries that were of use.
    hits: Vec<u32>,
    /// Files probed that the next cache keeps.
    fresh: Vec<scan_cache::Fresh>,
}

/// What a listing holds of a file that may be listed.
#[derive(Debug, Clone, Copy)]
enum Held<'c> {
    /// Its bytes, in its part's buffer (start, length), as read.
    Bytes(usize, usize, store::Stamp),
    /// Judged from the scan cache: read again if it wins.
    Reread {
        stamp: store::Stamp,
        started_at: Option<f64>,
        session_id: &'c str,
    },
}

/// How many slots a scan thread gathers before it hands them over.
const SLOT_BATCH: usize = 256;

impl<'c> Part<'c> {
    /// Adds a slot, handing the gathered ones over to `shared` in batches.
    fn push(&mut self, shared: &std::sync::Mutex<Vec<dedupe::Slot>>, slot: dedupe::Slot) {
        if self.slots.capacity() == 0 {
            self.slots.reserve_exact(SLOT_BATCH);
        }
        self.slots.push(slot);
        if self.slots.len() >= SLOT_BATCH {
            self.flush(shared);
        }
    }

    /// Hands the gathered slots over to `shared`.
    fn flush(&mut self, shared: &std::sync::Mutex<Vec<dedupe::Slot>>) {
        let mut all = shared.lock().unwrap_or_else(|e| e.into_inner());
        all.append(&mut self.slots);
    }

    /// Keeps a file's bytes; returns the handle for [`Part::held`].
    fn keep(&mut self, bytes: &[u8], stamp: store::Stamp) -> u32 {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(bytes);
        self.hold(Held::Bytes(start, bytes.len(), stamp))
    }

    fn hold(&mut self, held: Held<'c>) -> u32 {
        self.held.push(held);
        u32::try_from(self.held.len() - 1).unwrap_or(u32::MAX)
    }

    /// What is held under `handle`.
    fn held(&self, handle: u32) -> Option<Held<'c>> {
        self.held.get(handle as usize).copied()
    }
}

/// Gives a listing's cache lookup its signature: it may hold what it found
/// in the cache for as long as the cache lives (`'c`).
fn knows<'c, F: Fn(&mut Part<'c>, u32, store::Stamp) -> bool>(f: F) -> F {
    f
}

/// A group's winner, about to be listed.
struct Listed<'a> {
    started_at: Option<f64>,
    session_id: std::borrow::Cow<'a, str>,
    file: &'a str,
    kind: NameKind,
    /// Which of the profile's directories holds it.
    at: usize,
    /// Its bytes; `None` when it was judged from the scan cache.
    bytes: Option<&'a [u8]>,
    stamp: store::Stamp,
    group: Digest,
    life: Digest,
    state: State,
}

/// Below this many rows a listing builds them on the calling thread.
const ROWS_IN_PARALLEL_FROM: usize = 128;

/// Maps `items` through `make` and hands the results to `each` in order,
/// until it returns `false`. Large inputs are made on up to
/// `available_parallelism` threads (at most 4) while `each` consumes them
/// on the calling thread: item `i` is made by thread `i % threads`, each
/// sending down its own bounded channel, so order needs no buffer.
fn in_order<T: Sync, R: Send>(
    items: &[T],
    make: impl Fn(&T) -> R + Sync,
    mut each: impl FnMut(R) -> bool,
) {
    let threads = if items.len() < ROWS_IN_PARALLEL_FROM {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
    };
    if threads == 1 {
        for item in items {
            if !each(make(item)) {
                return;
            }
        }
        return;
    }
    std::thread::scope(|scope| {
        let make = &make;
        let receivers: Vec<_> = (0..threads)
            .map(|k| {
                let (tx, rx) = std::sync::mpsc::sync_channel(64);
                scope.spawn(move || {
                    for item in items.iter().skip(k).step_by(threads) {
                        if tx.send(make(item)).is_err() {
                            // The consumer stopped.
                            return;
                        }
                    }
                });
                rx
            })
            .collect();
        for i in 0..items.len() {
            let Ok(made) = receivers[i % threads].recv() else {
                return;
            };
            if !each(made) {
                return;
            }
        }
    });
}

/// Ids are never rewritten: one that looks like a credential is refused.
pub(crate) fn refuse_credential_ids(record: &Record) -> Result<()> {
    match redact::credential_in_id(record) {
        Some(found) => Err(Error::CredentialId {
            field: found.field,
            kind: found.kind,
        }),
        None => Ok(()),
    }
}

fn round_ms(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_endpoint_fills_only_an_empty_one() {
        let mut req = PublishRequest::new("s");
        req.default_endpoint = Some("tmux://h/w".into());
        let mut kept = Record::new("s");
        kept.endpoint = "ssh://h/".into();
        assert_eq!(req.merged(None, "c").endpoint, "tmux://h/w");
        assert_eq!(
            req.merged(Some(&Record::new("s")), "c").endpoint,
            "tmux://h/w"
        );
        assert_eq!(req.merged(Some(&kept), "c").endpoint, "ssh://h/");
        req.endpoint = Some("https://x/".into());
        assert_eq!(req.merged(None, "c").endpoint, "https://x/");
        req.endpoint = Some(String::new());
        assert_eq!(req.merged(None, "c").endpoint, "");
        req.endpoint = None;
        req.unset.insert(Field::Endpoint);
        assert_eq!(req.merged(Some(&kept), "c").endpoint, "");
    }

    #[test]
    fn listing_order_is_newest_start_then_id_then_file() {
        let keys = [
            (None, "a", "f"),
            (Some(10.0), "b", "f"),
            (Some(20.0), "z", "f"),
            (Some(10.0), "a", "g"),
            (Some(10.0), "a", "f"),
        ];
        let mut sorted = keys.to_vec();
        sorted.sort_by(|a, b| listing_order(*a, *b));
        assert_eq!(
            sorted,
            [
                (Some(20.0), "z", "f"),
                (Some(10.0), "a", "f"),
                (Some(10.0), "a", "g"),
                (Some(10.0), "b", "f"),
                (None, "a", "f"),
            ]
        );
    }
}
