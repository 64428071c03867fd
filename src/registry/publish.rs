//! Publish: a request merged onto the life this device has going, made
//! secret-free, stamped and written through the one write path.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::liveness::{self, State};
use crate::owner;
use crate::record::Record;
use crate::redact::{self, Redaction};
use crate::registry::change::{Change, Done};
use crate::store::{self};

use super::Registry;

/// What a publish says about a session; everything else is stamped by the
/// registry.
///
/// A request is a **patch**. Re-publishing a session life this device has
/// going — its ledger says this device wrote the record, the file still holds
/// exactly what it wrote, the life has not been cleared, and the record is
/// live or its owner still runs — changes only what the request names: a field left `None` keeps the record's value,
/// [`unset`](Self::unset) empties a field, and a [`metadata`](Self::metadata)
/// entry with an empty value removes that entry. The owner, ttl and
/// `started_at` are kept too unless given. With [`replace`](Self::replace),
/// or when there is no such record (a first publish, a record another device
/// wrote, a file changed since this device wrote it, a record that expired
/// with no owner running), the request is the whole record: what it leaves
/// out takes its default, and its life starts now.
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
    /// When the session started, as its agent says (discovery): the
    /// `started_at` of a new life, if it is not in the future and later
    /// than every life this device remembers at the record's file (a life is
    /// told apart by its `started_at`, so an ended one is never taken up
    /// again). Default, and otherwise: now.
    pub(crate) started_at: Option<f64>,
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

    /// The `started_at` of a new life published at `now` over `mine`, what
    /// the ledger says this device published at the file (see
    /// [`started_at`](Self::started_at)).
    fn life_start(&self, mine: Option<&crate::ledger::Entry>, now: f64) -> f64 {
        let Some(t) = self
            .started_at
            .filter(|t| t.is_finite() && *t > 0.0 && *t <= now)
        else {
            return now;
        };
        let remembered = mine
            .into_iter()
            .flat_map(|m| {
                std::iter::once(m.life.started_at)
                    .chain(m.ended_before.iter().map(|e| e.life.started_at))
            })
            .flatten();
        for s in remembered {
            if s >= t {
                return now;
            }
        }
        t
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
    pub(crate) fn merged(&self, base: Option<&Record>, client: &str) -> Record {
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

impl Registry {
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
        cur: &'a crate::registry::change::Current,
        instance: &str,
        session: &str,
        now: f64,
    ) -> Option<&'a Record> {
        let (e, m) = (cur.entry.as_ref()?, cur.mine.as_ref()?);
        let label = crate::record::label_of;
        (cur.holds_written()
            && m.ended_at.is_none()
            && e.record.ended_at.is_none()
            && label(&m.label) == label(&self.profile.label)
            && e.record.instance_id == instance
            && e.record.session_id == session
            && self.goes_on(cur, now))
        .then_some(&e.record)
    }

    /// Whether the life of this device's record in `cur` goes on at `now`:
    /// the record is live, or its owner (as the ledger recorded it, never
    /// the file) still runs — a laptop that slept, a refresh that failed:
    /// the session did not stop. A record that expired with no owner
    /// running is over, as a cleared one is: a publish starts a new life
    /// (a new `started_at`, the ttl given or the profile's), which every
    /// reader shows as a new session.
    fn goes_on(&self, cur: &crate::registry::change::Current, now: f64) -> bool {
        let (Some(e), Some(m)) = (cur.entry.as_ref(), cur.mine.as_ref()) else {
            return false;
        };
        // This device's own record, on its own clock (as `list` reads it).
        let (_, margin) = self.tolerance();
        let own = liveness::WriterClock::Known {
            offset: 0.0,
            margin,
        };
        liveness::state(&e.record, e.ctime, now, own) == State::Live
            || m.owner_start
                .is_some_and(|start| owner::owner_state(m.pid, start) == owner::OwnerState::Alive)
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
                    false => self.patch_base(cur, &instance, &req.session_id, now),
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
                let (redactions, mut warnings) = secret_free(&mut new, strict)?;
                let ttl = match (req.ttl, base) {
                    (Some(ttl), _) => ttl.as_secs_f64(),
                    (None, Some(b)) => liveness::record_ttl(b),
                    (None, None) => self.profile.ttl.as_secs_f64(),
                };
                new.seq = 1;
                new.started_at = Some(req.life_start(cur.mine.as_ref(), now));
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
                    if old.record.session_id == new.session_id && self.goes_on(cur, now) {
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
                // Signed here too (the write signs it again, to the same
                // bytes: Ed25519 is deterministic), so that what publish
                // returns is the record as written.
                crate::identity::sign(&mut new, &self.device_key()?.key);
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
}

/// The write-time policy, for every record this device writes (publish and
/// the keep-alive's updates): an id that looks like a credential is refused
/// (ids are never rewritten); credentials in other fields are redacted, or
/// with `strict` refused, naming each field once; then every field is held
/// to its limit. Returns what was redacted and the notes of what was cut.
pub(crate) fn secret_free(
    record: &mut Record,
    strict: bool,
) -> Result<(Vec<Redaction>, Vec<String>)> {
    if let Some(found) = redact::credential_in_id(record) {
        return Err(Error::CredentialId {
            field: found.field,
            kind: found.kind,
        });
    }
    let redactions = redact::redact_record(record);
    if strict && !redactions.is_empty() {
        let mut fields: Vec<String> = redactions.iter().map(|r| r.field.clone()).collect();
        fields.dedup();
        return Err(Error::Refused { fields });
    }
    let warnings = record.enforce_limits()?;
    Ok((redactions, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::refresh::tests::{T, fixture, req};

    /// A life goes on while its record is live or its owner runs; one
    /// that expired with no owner running is over, and a publish starts a
    /// new one: its own start, the profile's ttl, no field kept.
    #[test]
    fn an_expired_life_with_no_owner_running_is_not_continued() {
        let f = fixture();
        let first = |session: &str, owner: Option<u32>| {
            let mut r = req(session, owner);
            r.ttl = Some(Duration::from_secs(1));
            r.title = Some("old".into());
            f.reg.publish(&r, T).unwrap().record
        };
        let again = |session: &str, at: f64| f.reg.publish(&req(session, None), at).unwrap().record;
        let profile_ttl = f.reg.profile.ttl.as_secs_f64();

        // Live: a patch of the same life.
        first("s", None);
        let r = again("s", T + 0.5);
        assert_eq!((r.started_at, r.title.as_str()), (Some(T), "old"));
        assert_eq!(r.expires_at, Some(T + 0.5 + 1.0));

        // Expired, no owner: a new life.
        let r = again("s", T + 100.0);
        assert_eq!((r.started_at, r.title.as_str()), (Some(T + 100.0), ""));
        assert_eq!(r.expires_at, Some(T + 100.0 + profile_ttl));

        // Expired while its owner still runs: the same life.
        first("o", Some(std::process::id()));
        let r = again("o", T + 100.0);
        assert_eq!((r.started_at, r.title.as_str()), (Some(T), "old"));
        assert_eq!(r.expires_at, Some(T + 100.0 + 1.0));
    }

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
}
