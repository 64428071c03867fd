//! The ledger: which records this device published, kept in local state
//! (`<state>/ledger/<hex of the canonical presence directory>/`), never in
//! the synced folder. A record's `device_id` is readable and writable by every
//! device in the group, so it cannot tell whether this device wrote the
//! record; the ledger can, because no other device can write to it.
//!
//! One small JSON file per record, under the record's file name. Callers hold
//! the record's lock ([`LocalDirs::lock`]) while they change an entry, so the
//! ledger needs no locking of its own; each write is atomic (a temp file in
//! the same directory, renamed over the entry) so a crash never tears one.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::local::{LocalDirs, make_private_dir, read_small, short_hex, write_small};
use crate::record::Record;

/// Entries larger than this are corrupt: a real one is a few hundred bytes.
const MAX_ENTRY: u64 = 64 * 1024;

/// One life of a session: what tells a record this device published from a
/// later re-publish or a record another device planted at the same file name.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Life {
    pub instance_id: String,
    pub session_id: String,
    #[serde(default)]
    pub started_at: Option<f64>,
}

/// Equality compares `started_at` bit for bit: a life is identified by the
/// exact value this device wrote, not by a value merely close to it.
impl PartialEq for Life {
    fn eq(&self, other: &Life) -> bool {
        self.instance_id == other.instance_id
            && self.session_id == other.session_id
            && same_time(self.started_at, other.started_at)
    }
}

impl Eq for Life {}

impl Life {
    /// The life `record` is a copy of: its writer instance, its session, and
    /// when that run started (the copies of one instance's session that carry
    /// no `started_at`, as Hermes Agent writes them, are one life).
    pub fn of(record: &Record) -> Life {
        let (instance, session, started_at) = record.life();
        Life {
            instance_id: instance.to_owned(),
            session_id: session.to_owned(),
            started_at,
        }
    }
}

/// What this device published at one record file name.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// The record's file name in the presence directory.
    pub file: String,
    pub life: Life,
    /// The profile label it was published under.
    #[serde(default)]
    pub label: String,
    /// When this device cleared it, if it did.
    #[serde(default)]
    pub ended_at: Option<f64>,
    /// The owner process as published: `refresh` asks whether it still runs
    /// from here, never from the file (which another device could rewrite).
    #[serde(default)]
    pub pid: u32,
    /// The owner's start time (see [`crate::owner`]); `None`: no owner.
    #[serde(default)]
    pub owner_start: Option<u64>,
    /// The record exactly as this device last wrote it. A file is this
    /// device's only while it holds exactly this; and every rewrite starts
    /// from this copy, never from the file, which another device may have
    /// changed while keeping the life's ids.
    #[serde(default)]
    pub record: Option<Record>,
    /// Earlier lives at this file name that this device ended, kept while a
    /// copy of them could still come up (see [`Entry::needs`]): a new life
    /// of the session replaces the entry, not the end of the old one.
    #[serde(default)]
    pub ended_before: Vec<Ended>,
}

/// A life this device ended, and when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Ended {
    pub life: Life,
    pub ended_at: f64,
}

/// The most earlier ended lives an entry keeps (each a few hundred bytes;
/// the entry must stay under [`MAX_ENTRY`]).
pub(crate) const MAX_ENDED_BEFORE: usize = 16;

/// How long after its end this device remembers an ended life: as long as
/// a copy of it could still show up live anywhere, or lie in a directory to
/// be judged. A copy written before the end claims at most a ttl
/// ([`crate::limits::MAX_TTL`], the longest honoured) past it, read with the
/// skew tolerance by a device that does not know this one's clock; and a
/// dead copy may stay in a directory `gc_after` longer before any device's
/// `expire` deletes it.
pub(crate) fn ended_horizon(skew: f64, gc_after: f64) -> f64 {
    crate::limits::secs(crate::limits::MAX_TTL) + gc_after + skew
}

impl Entry {
    /// The lives of this entry this device ended: its own if it did, and
    /// the earlier ones it keeps.
    pub fn ended(&self) -> impl Iterator<Item = &Life> {
        self.ended_at
            .map(|_| &self.life)
            .into_iter()
            .chain(self.ended_before.iter().map(|e| &e.life))
    }

    /// Whether this device must still remember this entry at `now`, its
    /// file being gone: an ended life until [`ended_horizon`] after its
    /// end; a life still going until its record's `expires_at` (with the
    /// skew tolerance) has passed, so that a file only briefly absent (a
    /// sync engine deleting and re-creating it) keeps its owner.
    pub fn needs(&self, now: f64, skew: f64, gc_after: f64) -> bool {
        let horizon = ended_horizon(skew, gc_after);
        let own = match (self.ended_at, self.record.as_ref()) {
            (Some(ended), _) => now <= ended + horizon,
            (None, Some(r)) => r.expires_at.is_some_and(|x| now <= x + skew),
            (None, None) => false,
        };
        own || self
            .ended_before
            .iter()
            .any(|e| now <= e.ended_at + horizon)
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        self.file == other.file
            && self.life == other.life
            && self.label == other.label
            && same_time(self.ended_at, other.ended_at)
            && self.pid == other.pid
            && self.owner_start == other.owner_start
            && self.record == other.record
            && self.ended_before == other.ended_before
    }
}

impl Eq for Entry {}

fn same_time(a: Option<f64>, b: Option<f64>) -> bool {
    a.map(f64::to_bits) == b.map(f64::to_bits)
}

/// The ledger of one presence directory.
#[derive(Debug, Clone)]
pub(crate) struct Ledger {
    dir: PathBuf,
}

impl Ledger {
    /// The ledger of the presence directory whose canonical path (see
    /// [`crate::store::Dir::canonical`]) is `canonical_dir`. Nothing is
    /// created until the first [`Ledger::put`].
    pub fn new(local: &LocalDirs, canonical_dir: &Path) -> Ledger {
        let key = short_hex(canonical_dir.as_os_str().as_encoded_bytes());
        Ledger {
            dir: local.state.join("ledger").join(key),
        }
    }

    /// The entry for record `file`. A missing, unreadable-as-JSON, oversized
    /// or mismatched entry is `None`, like a missing one: `None` means "not
    /// this device's", the safe default, since a damaged entry then costs at
    /// most a record of ours treated as foreign (it expires), while guessing
    /// would let a planted record be adopted.
    pub fn get(&self, file: &str) -> Result<Option<Entry>> {
        read(&self.path("read ledger entry", file)?, file)
    }

    /// Writes `entry` atomically, replacing any entry for the same file.
    pub fn put(&self, entry: &Entry) -> Result<()> {
        let path = self.path("write ledger entry", &entry.file)?;
        let earlier = entry
            .ended_before
            .iter()
            .flat_map(|e| [e.life.started_at, Some(e.ended_at)]);
        let times = [entry.life.started_at, entry.ended_at];
        if times
            .into_iter()
            .chain(earlier)
            .flatten()
            .any(|t| !t.is_finite())
        {
            // JSON has no NaN or infinity: it would be written as null and
            // come back as a different life.
            return Err(invalid("write ledger entry", &path, "a time is not finite"));
        }
        let json = serde_json::to_vec(entry)
            .map_err(|e| Error::io("write ledger entry", &path, io::Error::other(e)))?;
        make_private_dir(&self.dir)?;
        write_small(&self.dir, &entry.file, &json, "write ledger entry")
    }

    /// Removes the entry for record `file`; one already gone is fine.
    pub fn remove(&self, file: &str) -> Result<()> {
        let path = self.path("remove ledger entry", file)?;
        match fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io("remove ledger entry", &path, e)),
        }
    }

    /// Every valid entry, sorted by file name. Damaged entries are passed
    /// over (see [`Ledger::get`]), so one bad file never hides the rest.
    pub fn entries(&self) -> Result<Vec<Entry>> {
        let list_err = |e| Error::io("list ledger", &self.dir, e);
        let rd = match fs::read_dir(&self.dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(list_err(e)),
        };
        let mut out = Vec::new();
        for dirent in rd {
            let dirent = dirent.map_err(list_err)?;
            let name = dirent.file_name();
            // Temp files start with '.'; a non-UTF-8 name was never ours.
            let Some(name) = name.to_str().filter(|n| valid_name(n)) else {
                continue;
            };
            if let Some(entry) = read(&dirent.path(), name)? {
                out.push(entry);
            }
        }
        out.sort_by(|a, b| a.file.cmp(&b.file));
        Ok(out)
    }

    /// The entry file for record `file`. Record file names are single path
    /// components by construction; this check keeps a bad caller from
    /// escaping the ledger or colliding with a temp file all the same.
    fn path(&self, op: &'static str, file: &str) -> Result<PathBuf> {
        let path = self.dir.join(file);
        if valid_name(file) {
            Ok(path)
        } else {
            Err(invalid(op, &path, "not a record file name"))
        }
    }
}

fn valid_name(file: &str) -> bool {
    !file.is_empty() && !file.starts_with('.') && !file.contains(['/', '\0'])
}

fn invalid(op: &'static str, path: &Path, message: &'static str) -> Error {
    Error::io(
        op,
        path,
        io::Error::new(io::ErrorKind::InvalidInput, message),
    )
}

/// Reads the entry at `path` for record `file`; `None` when it is missing or
/// damaged (see [`read_small`]: one bad entry never stops a listing or
/// hides the others).
fn read(path: &Path, file: &str) -> Result<Option<Entry>> {
    let bytes = read_small(path, MAX_ENTRY).map_err(|e| Error::io("read ledger entry", path, e))?;
    Ok(bytes
        .and_then(|b| serde_json::from_slice::<Entry>(&b).ok())
        .filter(|e| e.file == file))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(file: &str, session: &str, started_at: f64) -> Entry {
        Entry {
            file: file.into(),
            life: Life {
                instance_id: "laptop".into(),
                session_id: session.into(),
                started_at: Some(started_at),
            },
            label: "work".into(),
            ended_at: None,
            pid: 42,
            owner_start: Some(7),
            record: None,
            ended_before: Vec::new(),
        }
    }

    fn ledger(root: &Path, dir: &str) -> Ledger {
        Ledger::new(&LocalDirs::under(root), Path::new(dir))
    }

    #[test]
    fn put_get_remove_round_trip() {
        let tmp = tempfile::tempdir().unwrap();
        let l = ledger(tmp.path(), "/srv/sync/presence");
        assert_eq!(l.get("laptop.s-1.json").unwrap(), None);
        // An awkward time survives exactly: the entry is compared by bits.
        let mut e = entry("laptop.s-1.json", "s-1", 1_700_000_000.123_456_7);
        l.put(&e).unwrap();
        assert_eq!(l.get("laptop.s-1.json").unwrap(), Some(e.clone()));
        e.ended_at = Some(1_700_000_100.000_000_1);
        l.put(&e).unwrap();
        assert_eq!(l.get("laptop.s-1.json").unwrap(), Some(e));
        l.remove("laptop.s-1.json").unwrap();
        assert_eq!(l.get("laptop.s-1.json").unwrap(), None);
        l.remove("laptop.s-1.json").unwrap();
        // Nothing but the entries is left behind: no temp files.
        let left: Vec<_> = fs::read_dir(&l.dir).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn the_ledger_is_private_and_outside_the_presence_directory() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let local = LocalDirs::under(tmp.path());
        let l = Ledger::new(&local, Path::new("/srv/sync/presence"));
        l.put(&entry("laptop.s-1.json", "s-1", 1.0)).unwrap();
        // printf '/srv/sync/presence' | sha256sum | cut -c1-24
        let file = local
            .state
            .join("ledger/3f429ae62b662c66c4113c81/laptop.s-1.json");
        assert_eq!(
            fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let dir = file.parent().unwrap();
        assert_eq!(
            fs::metadata(dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
    }

    #[test]
    fn lives_differ_by_any_part_and_started_at_by_bits() {
        let a = entry("f.json", "s", 1.0).life;
        let mut b = a.clone();
        assert_eq!(a, b);
        b.started_at = Some(1.0 + f64::EPSILON);
        assert_ne!(a, b);
        b.started_at = None;
        assert_ne!(a, b);
        let (mut z, mut nz) = (a.clone(), a.clone());
        (z.started_at, nz.started_at) = (Some(0.0), Some(-0.0));
        assert_ne!(z, nz);
        let mut c = a.clone();
        c.instance_id = "desk".into();
        assert_ne!(a, c);
        let mut d = a.clone();
        d.session_id = "t".into();
        assert_ne!(a, d);
    }

    #[test]
    fn entries_are_sorted_and_garbage_is_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let l = ledger(tmp.path(), "/srv/sync/presence");
        for f in ["c.s.json", "a.s.json", "b.s.json"] {
            l.put(&entry(f, "s", 5.0)).unwrap();
        }
        // Damage of every kind beside them.
        fs::write(l.dir.join("garbage.json"), "{not json").unwrap();
        fs::write(l.dir.join("empty.json"), "").unwrap();
        let mut big = serde_json::to_vec(&entry("big.json", "s", 5.0)).unwrap();
        big.truncate(big.len() - 1);
        big.extend(std::iter::repeat_n(b' ', 65 * 1024));
        big.push(b'}');
        fs::write(l.dir.join("big.json"), big).unwrap();
        // An entry filed under another record's name.
        let wrong = serde_json::to_vec(&entry("a.s.json", "s", 5.0)).unwrap();
        fs::write(l.dir.join("wrong.json"), wrong).unwrap();
        std::os::unix::fs::symlink(l.dir.join("a.s.json"), l.dir.join("link.json")).unwrap();
        fs::create_dir(l.dir.join("sub.json")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            l.dir.join("fifo.json"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        fs::write(l.dir.join(".a.s.json.x.tmp"), "{").unwrap();
        // Forward compatible: a field a later version adds is ignored.
        fs::write(
            l.dir.join("d.s.json"),
            r#"{"file":"d.s.json","life":{"instance_id":"laptop","session_id":"s","started_at":5.0},
               "label":"work","ended_at":null,"pid":42,"owner_start":7,"added_later":[1,2]}"#,
        )
        .unwrap();

        let files: Vec<String> = l.entries().unwrap().into_iter().map(|e| e.file).collect();
        assert_eq!(files, ["a.s.json", "b.s.json", "c.s.json", "d.s.json"]);
        for damaged in ["garbage.json", "empty.json", "big.json", "wrong.json"] {
            assert_eq!(l.get(damaged).unwrap(), None, "{damaged}");
        }
        for other in ["link.json", "sub.json", "fifo.json"] {
            assert_eq!(l.get(other).unwrap(), None, "{other}");
        }
        assert_eq!(
            l.get("d.s.json").unwrap(),
            Some(entry("d.s.json", "s", 5.0))
        );
    }

    #[test]
    fn an_entry_that_cannot_be_opened_is_passed_over() {
        let tmp = tempfile::tempdir().unwrap();
        let l = ledger(tmp.path(), "/srv/sync/presence");
        l.put(&entry("a.s.json", "s", 1.0)).unwrap();
        // A socket cannot be opened (ENXIO): before, it failed the listing.
        let _sock = std::os::unix::net::UnixListener::bind(l.dir.join("b.s.json")).unwrap();
        assert_eq!(l.get("b.s.json").unwrap(), None);
        let files: Vec<String> = l.entries().unwrap().into_iter().map(|e| e.file).collect();
        assert_eq!(files, ["a.s.json"]);
    }

    #[test]
    fn an_entry_at_the_size_limit_is_read() {
        let tmp = tempfile::tempdir().unwrap();
        let l = ledger(tmp.path(), "/srv/sync/presence");
        let e = entry("a.s.json", "s", 5.0);
        l.put(&e).unwrap();
        let mut bytes = serde_json::to_vec(&e).unwrap();
        bytes.pop();
        bytes.resize(MAX_ENTRY as usize - 1, b' ');
        bytes.push(b'}');
        fs::write(l.dir.join("a.s.json"), &bytes).unwrap();
        assert_eq!(l.get("a.s.json").unwrap(), Some(e));
        bytes.insert(1, b' ');
        fs::write(l.dir.join("a.s.json"), &bytes).unwrap();
        assert_eq!(l.get("a.s.json").unwrap(), None);
    }

    #[test]
    fn names_that_are_not_single_record_names_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let l = ledger(tmp.path(), "/srv/sync/presence");
        for bad in [
            "",
            ".hidden.json",
            "../escape.json",
            "a/b.json",
            "..",
            "nul\0.json",
        ] {
            assert!(l.get(bad).is_err(), "get {bad:?}");
            assert!(l.remove(bad).is_err(), "remove {bad:?}");
            assert!(l.put(&entry(bad, "s", 1.0)).is_err(), "put {bad:?}");
        }
        assert!(
            !tmp.path()
                .join("state/presence/ledger/escape.json")
                .exists()
        );
        assert_eq!(l.entries().unwrap(), []);
    }

    #[test]
    fn times_json_cannot_hold_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let l = ledger(tmp.path(), "/srv/sync/presence");
        let mut e = entry("a.s.json", "s", f64::NAN);
        assert!(l.put(&e).is_err());
        e.life.started_at = Some(1.0);
        e.ended_at = Some(f64::INFINITY);
        assert!(l.put(&e).is_err());
        assert_eq!(l.get("a.s.json").unwrap(), None);
    }

    #[test]
    fn each_directory_has_its_own_ledger() {
        let tmp = tempfile::tempdir().unwrap();
        let work = ledger(tmp.path(), "/srv/sync/presence");
        let home = ledger(tmp.path(), "/srv/sync/presence-home");
        work.put(&entry("a.s.json", "s", 1.0)).unwrap();
        assert_eq!(home.get("a.s.json").unwrap(), None);
        assert_eq!(home.entries().unwrap(), []);
        home.put(&entry("a.s.json", "s", 2.0)).unwrap();
        assert_eq!(
            work.get("a.s.json").unwrap(),
            Some(entry("a.s.json", "s", 1.0))
        );
        assert_eq!(
            home.get("a.s.json").unwrap(),
            Some(entry("a.s.json", "s", 2.0))
        );
    }

    #[test]
    fn another_devices_state_root_does_not_see_this_ledger() {
        let tmp = tempfile::tempdir().unwrap();
        let ours = ledger(&tmp.path().join("laptop"), "/srv/sync/presence");
        let theirs = ledger(&tmp.path().join("desk"), "/srv/sync/presence");
        ours.put(&entry("a.s.json", "s", 1.0)).unwrap();
        assert_eq!(theirs.get("a.s.json").unwrap(), None);
        assert_eq!(theirs.entries().unwrap(), []);
        assert_eq!(ours.entries().unwrap(), [entry("a.s.json", "s", 1.0)]);
    }
}
