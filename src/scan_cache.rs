//! What `list` learned from each file of a large directory, kept on this
//! machine so that the next `list` need not read and parse the files that
//! did not change: per file, its dedupe keys, times, `seq`, label, device
//! and listing-order keys, under the file's name, inode, size and change
//! time here.
//!
//! A file whose inode, size and ctime are those cached has the bytes it had
//! when it was probed: every write and every rename that replaces it changes
//! its ctime, which only this machine's kernel sets (a sync engine or a
//! hostile peer can set mtime, never ctime). The one gap is a change within
//! the file system's timestamp granularity, so files that changed less than
//! [`SETTLE_S`] before a listing are never cached. Liveness is still judged
//! at each listing, from the ctime read then, and the records listed are
//! read again and parsed in full; only the facts dedupe needs come from
//! here. Files that are not records are never cached.
//!
//! The file lives in this device's local state directory, never in the
//! synced one, and is read defensively all the same: anything amiss (a bad
//! header, a bound out of range, another directory's cache) and it is
//! ignored and rewritten. Its hashes use a key drawn at random when it is
//! made and kept in it, so no file name or record can aim at a collision.

use std::io;
use std::path::{Path, PathBuf};

use crate::dedupe::{Digest, Facts};
use crate::store::Stamp;

/// Files that changed this recently (seconds) are not cached.
pub(crate) const SETTLE_S: f64 = 2.0;

/// Directories with fewer candidate files are listed without a cache.
pub(crate) const CACHE_FROM: usize = 1000;

/// A cache is rewritten for a few changed files at most this often.
pub(crate) const REWRITE_AFTER: std::time::Duration = std::time::Duration::from_secs(10);

/// Whether the file at `path` was last written longer than `age` ago (or
/// its age cannot be told).
pub(crate) fn older_than(path: &Path, age: std::time::Duration) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_none_or(|e| e >= age)
}

/// Larger cache files are ignored (about 600 000 files).
const MAX_BYTES: u64 = 64 << 20;

const MAGIC: &[u8; 8] = b"PRSCAN\x00\x04";
const HEADER: usize = 8 + 16 + 16 + 4 + 4 + 4;
const ENTRY: usize = 108;

/// The name of `dir`'s cache file under `state`.
pub(crate) fn path_for(state: &Path, dir: &Path) -> PathBuf {
    let id = crate::local::short_hex(dir.as_os_str().as_encoded_bytes());
    state.join("scan-cache").join(format!("{id}.bin"))
}

/// What identifies a file's version on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileKey {
    ino: u64,
    size: u64,
    ctime_ns: i64,
}

impl FileKey {
    pub(crate) fn of(stamp: &Stamp) -> FileKey {
        FileKey {
            ino: stamp.ino,
            size: stamp.size,
            ctime_ns: stamp
                .ctime_s
                .saturating_mul(1_000_000_000)
                .saturating_add(stamp.ctime_ns),
        }
    }
}

/// A cache as read from disk: its bytes, looked into in place.
pub(crate) struct Cache {
    key: [u64; 2],
    bytes: Vec<u8>,
    strings: usize,
    entries: usize,
    count: usize,
}

/// The hashing key of this process's digests and of its cache.
pub(crate) fn name_hash(key: [u64; 2], name: &str) -> u64 {
    use std::hash::Hasher;
    let mut h = siphasher::sip::SipHasher13::new_with_keys(key[0], key[1]);
    h.write(name.as_bytes());
    h.finish()
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn time_at(b: &[u8], at: usize) -> Option<Option<f64>> {
    let t = f64::from_bits(u64_at(b, at)?);
    // No JSON number is NaN: NaN stands for a missing time.
    Some((!t.is_nan()).then_some(t))
}

impl Cache {
    /// Reads the cache at `path` made for the directory `dir_id`; `None`
    /// when there is none or it cannot be used.
    pub(crate) fn load(path: &Path, dir_id: (u64, u64)) -> Option<Cache> {
        let bytes = crate::local::read_small(path, MAX_BYTES).ok()??;
        Cache::parse(bytes, dir_id)
    }

    fn parse(bytes: Vec<u8>, dir_id: (u64, u64)) -> Option<Cache> {
        if bytes.get(..8)? != MAGIC {
            return None;
        }
        let key = [u64_at(&bytes, 8)?, u64_at(&bytes, 16)?];
        if (u64_at(&bytes, 24)?, u64_at(&bytes, 32)?) != dir_id {
            return None;
        }
        let strings_len = u32_at(&bytes, 40)? as usize;
        let count = u32_at(&bytes, 44)? as usize;
        let strings = HEADER;
        let entries = strings.checked_add(strings_len)?;
        if entries.checked_add(count.checked_mul(ENTRY)?)? != bytes.len() {
            return None;
        }
        let cache = Cache {
            key,
            bytes,
            strings,
            entries,
            count,
        };
        // Entries are checked as they are looked up: one with a string out
        // of bounds or not UTF-8 is no entry.
        Some(cache)
    }

    /// The hashing key the cache was made with.
    pub(crate) fn key(&self) -> [u64; 2] {
        self.key
    }

    fn string(&self, at: u32) -> Option<&str> {
        let at = self.strings + at as usize;
        let len = usize::from(u16::from_le_bytes(
            self.bytes.get(at..at + 2)?.try_into().ok()?,
        ));
        if at + 2 + len > self.entries {
            return None;
        }
        std::str::from_utf8(self.bytes.get(at + 2..at + 2 + len)?).ok()
    }

    /// The cache's entries for `names`, found by one merge of the two
    /// sorted lists.
    pub(crate) fn index<'c>(&'c self, names: &crate::store::Names) -> Lookup<'c> {
        let mut by_hash: Vec<(u64, u32)> = (0..names.len())
            .map(|i| (name_hash(self.key, names.get(i).0), i as u32))
            .collect();
        by_hash.sort_unstable();
        let mut firsts = vec![u32::MAX; names.len()];
        let mut e = 0;
        for (h, i) in by_hash {
            while e < self.count && self.hash_of(e) < h {
                e += 1;
            }
            if e < self.count && self.hash_of(e) == h {
                firsts[i as usize] = e as u32;
            }
        }
        Lookup {
            cache: self,
            firsts,
        }
    }

    fn hash_of(&self, i: usize) -> u64 {
        u64_at(&self.bytes, self.entries + i * ENTRY).unwrap_or(0)
    }

    /// The facts cached for the entry `first` (the first under its name's
    /// hash) or one after it under the same hash, in the version `key`; and
    /// the entry's index.
    fn lookup(&self, first: usize, key: FileKey) -> Option<(usize, Facts<&str>)> {
        let mut i = first;
        let h = self.hash_of(i);
        // Two names may share a hash: the version tells them apart.
        while i < self.count && self.hash_of(i) == h {
            if let Some(facts) = self.entry(i, key) {
                return Some((i, facts));
            }
            i += 1;
        }
        None
    }

    /// Entry `i`, if it is of the version `key`.
    fn entry(&self, i: usize, key: FileKey) -> Option<Facts<&str>> {
        let b = &self.bytes;
        let at = self.entries + i * ENTRY;
        let cached = FileKey {
            ino: u64_at(b, at + 8)?,
            size: u64_at(b, at + 16)?,
            ctime_ns: u64_at(b, at + 24)? as i64,
        };
        if cached != key {
            return None;
        }
        let flags = u32_at(b, at + 80)?;
        Some(Facts {
            group: Digest::from_raw(u64_at(b, at + 32)?),
            life: Digest::from_raw(u64_at(b, at + 40)?),
            updated: time_at(b, at + 48)?,
            expires: time_at(b, at + 56)?,
            started: time_at(b, at + 64)?,
            seq: u64_at(b, at + 72)?,
            ended: flags & 1 != 0,
            long: flags & 2 != 0,
            // A byte no verdict has: the entry is not this cache's.
            verdict: crate::identity::Verdict::from_code((flags >> 8) as u8)?,
            label: self.string(u32_at(b, at + 84)?)?,
            device: self.string(u32_at(b, at + 88)?)?,
            session: self.string(u32_at(b, at + 92)?)?,
            session_key: self.string(u32_at(b, at + 96)?)?,
            host: self.string(u32_at(b, at + 100)?)?,
            instance: self.string(u32_at(b, at + 104)?)?,
        })
    }

    /// How many entries.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// Entry `i` as a new cache takes it over (its version unchecked).
    fn raw_entry(&self, i: usize) -> Option<Row<'_>> {
        let b = &self.bytes;
        let at = self.entries + i * ENTRY;
        let key = FileKey {
            ino: u64_at(b, at + 8)?,
            size: u64_at(b, at + 16)?,
            ctime_ns: u64_at(b, at + 24)? as i64,
        };
        Some((u64_at(b, at)?, key, self.entry(i, key)?, self.secrets(i)))
    }

    /// Whether entry `i`'s record carries credentials, if a reader that
    /// redacted it (`doctor`) said so.
    fn secrets(&self, i: usize) -> Option<bool> {
        let flags = u32_at(&self.bytes, self.entries + i * ENTRY + 80)?;
        (flags & 4 != 0).then_some(flags & 8 != 0)
    }
}

/// An entry as [`save`] writes it: its name's hash, version, facts and
/// whether its record carries credentials (when known).
type Row<'a> = (u64, FileKey, Facts<&'a str>, Option<bool>);

/// A cache's entries for the files of one listing ([`Cache::index`]).
pub(crate) struct Lookup<'c> {
    cache: &'c Cache,
    /// Per file, the index of the first entry under its name's hash
    /// (`u32::MAX`: none).
    firsts: Vec<u32>,
}

impl<'c> Lookup<'c> {
    /// Whether the record of the cache's entry `entry` (as [`Lookup::get`]
    /// gave it) carries credentials, if that is known.
    pub(crate) fn secrets(&self, entry: usize) -> Option<bool> {
        self.cache.secrets(entry)
    }

    /// The facts cached for the `file`-th name, if the cache holds it in
    /// the version `key`; and the entry's index.
    pub(crate) fn get(&self, file: u32, key: FileKey) -> Option<(usize, Facts<&'c str>)> {
        let first = *self.firsts.get(file as usize)?;
        if first == u32::MAX {
            return None;
        }
        self.cache.lookup(first as usize, key)
    }
}

/// A file probed in this listing, for the next cache: its name's hash,
/// its version and its facts.
#[derive(Debug, Clone)]
pub(crate) struct Fresh {
    pub name_hash: u64,
    pub key: FileKey,
    pub facts: Facts<Box<str>>,
    /// Whether its record carries credentials, if the reader redacted it.
    pub secrets: Option<bool>,
}

impl Fresh {
    /// The file named by `name_hash` in the version `key`, as `f` says.
    pub(crate) fn new(name_hash: u64, key: FileKey, f: &Facts<&str>) -> Fresh {
        Fresh {
            name_hash,
            key,
            facts: f.owned(),
            secrets: None,
        }
    }
}

/// The offset of `s` in the string area, added if new.
fn intern<'a>(
    at: &mut std::collections::HashMap<&'a str, u32>,
    strings: &mut Vec<u8>,
    s: &'a str,
) -> Option<u32> {
    if let Some(&i) = at.get(s) {
        return Some(i);
    }
    let len = u16::try_from(s.len()).ok()?;
    let i = u32::try_from(strings.len()).ok()?;
    strings.extend_from_slice(&len.to_le_bytes());
    strings.extend_from_slice(s.as_bytes());
    at.insert(s, i);
    Some(i)
}

/// Writes the cache for the directory `dir_id` at `path` (atomically):
/// the entries of `old` that `kept` marks, and `fresh`.
pub(crate) fn save(
    path: &Path,
    dir_id: (u64, u64),
    key: [u64; 2],
    old: Option<&Cache>,
    kept: &[bool],
    mut fresh: Vec<Fresh>,
) -> crate::error::Result<()> {
    let io_err = |e: io::Error| crate::error::Error::io("write the scan cache", path, e);
    let mut rows: Vec<Row<'_>> = Vec::with_capacity(kept.len() + fresh.len());
    if let Some(old) = old {
        for (i, &k) in kept.iter().enumerate().take(old.len()) {
            if k && let Some(e) = old.raw_entry(i) {
                rows.push(e);
            }
        }
    }
    fresh.sort_by_key(|f| f.name_hash);
    for f in &fresh {
        rows.push((f.name_hash, f.key, f.facts.borrowed(), f.secrets));
    }
    rows.sort_by_key(|r| r.0);
    // One copy of each distinct string.
    let mut strings: Vec<u8> = Vec::new();
    let mut at: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    let mut body: Vec<u8> = Vec::with_capacity(rows.len() * ENTRY);
    let mut count = 0u32;
    let none = f64::NAN.to_bits();
    for (h, key, f, secrets) in &rows {
        let (Some(label), Some(device), Some(session), Some(session_key)) = (
            intern(&mut at, &mut strings, f.label),
            intern(&mut at, &mut strings, f.device),
            intern(&mut at, &mut strings, f.session),
            intern(&mut at, &mut strings, f.session_key),
        ) else {
            continue;
        };
        let (Some(host), Some(instance)) = (
            intern(&mut at, &mut strings, f.host),
            intern(&mut at, &mut strings, f.instance),
        ) else {
            continue;
        };
        for n in [
            *h,
            key.ino,
            key.size,
            key.ctime_ns as u64,
            f.group.raw(),
            f.life.raw(),
            f.updated.map_or(none, f64::to_bits),
            f.expires.map_or(none, f64::to_bits),
            f.started.map_or(none, f64::to_bits),
            f.seq,
        ] {
            body.extend_from_slice(&n.to_le_bytes());
        }
        let flags = u32::from(f.ended)
            | u32::from(f.long) << 1
            | u32::from(secrets.is_some()) << 2
            | u32::from(secrets == &Some(true)) << 3
            | u32::from(f.verdict.code()) << 8;
        for n in [flags, label, device, session, session_key, host, instance] {
            body.extend_from_slice(&n.to_le_bytes());
        }
        count += 1;
    }
    let mut out: Vec<u8> = Vec::with_capacity(HEADER + strings.len() + body.len());
    out.extend_from_slice(MAGIC);
    for n in [key[0], key[1], dir_id.0, dir_id.1] {
        out.extend_from_slice(&n.to_le_bytes());
    }
    let strings_len =
        u32::try_from(strings.len()).map_err(|_| io_err(io::Error::other("too big")))?;
    for n in [strings_len, count, 0] {
        out.extend_from_slice(&n.to_le_bytes());
    }
    out.extend_from_slice(&strings);
    out.extend_from_slice(&body);
    let Some(parent) = path.parent() else {
        return Err(io_err(io::ErrorKind::NotFound.into()));
    };
    crate::local::make_private_dir(parent)?;
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| io_err(io::ErrorKind::InvalidInput.into()))?;
    crate::local::write_small(parent, name, &out, "write the scan cache")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const KEY: [u64; 2] = [7, 11];
    const DIR: (u64, u64) = (1, 2);

    fn fresh(name: &str, ino: u64, session: &str) -> Fresh {
        Fresh {
            name_hash: name_hash(KEY, name),
            key: FileKey {
                ino,
                size: 100,
                ctime_ns: 5,
            },
            facts: Facts {
                group: Digest::from_raw(ino * 3),
                life: Digest::from_raw(ino * 5),
                updated: Some(10.0),
                expires: None,
                ended: ino.is_multiple_of(2),
                seq: ino,
                started: Some(1.5),
                label: "default".into(),
                device: "dev".into(),
                session: session.into(),
                session_key: format!("key-{session}").into(),
                host: "laptop".into(),
                instance: format!("i-{ino}").into(),
                long: ino.is_multiple_of(5),
                verdict: if ino.is_multiple_of(3) {
                    crate::identity::Verdict::Verified
                } else {
                    crate::identity::Verdict::Forged(crate::identity::Forgery::BadSignature)
                },
            },
            secrets: [None, Some(false), Some(true)][(ino % 3) as usize],
        }
    }

    fn names(list: &[&str]) -> crate::store::Names {
        let mut n = crate::store::Names::default();
        for name in list {
            n.push(name, crate::store::NameKind::Record);
        }
        n
    }

    #[test]
    fn what_is_saved_is_found_in_the_same_version_only() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("scan-cache/x.bin");
        let files = vec![fresh("a.json", 1, "s1"), fresh("b.json", 2, "s2")];
        save(&path, DIR, KEY, None, &[], files).unwrap();
        let cache = Cache::load(&path, DIR).unwrap();
        assert_eq!(cache.key(), KEY);
        assert!(
            Cache::load(&path, (1, 3)).is_none(),
            "another directory's cache"
        );
        let listed = names(&["b.json", "c.json", "a.json"]);
        let found = cache.index(&listed);
        assert_eq!(found.firsts[1], u32::MAX);
        let (_, f) = found.get(2, fresh("a.json", 1, "").key).unwrap();
        assert_eq!((f.session, f.label, f.device), ("s1", "default", "dev"));
        assert_eq!(f.session_key, "key-s1");
        assert_eq!(
            (f.updated, f.expires, f.started),
            (Some(10.0), None, Some(1.5))
        );
        assert_eq!(
            (f.group, f.life, f.seq, f.ended, f.verdict),
            (
                Digest::from_raw(3),
                Digest::from_raw(5),
                1,
                false,
                crate::identity::Verdict::Forged(crate::identity::Forgery::BadSignature)
            )
        );
        assert_eq!((f.host, f.instance, f.long), ("laptop", "i-1", false));
        let (entry, f) = found.get(0, fresh("b.json", 2, "").key).unwrap();
        assert!(f.ended);
        // What a reader that redacted the records said (fresh(_, 2, _): yes).
        assert_eq!(found.secrets(entry), Some(true));
        let (entry, _) = found.get(2, fresh("a.json", 1, "").key).unwrap();
        assert_eq!(found.secrets(entry), Some(false));
        // Any change of inode, size or ctime is another version.
        let mut k = fresh("a.json", 1, "").key;
        k.ctime_ns += 1;
        assert!(found.get(2, k).is_none());
        k = fresh("a.json", 9, "").key;
        assert!(found.get(2, k).is_none());
    }

    #[test]
    fn a_new_cache_keeps_the_entries_marked_and_adds_the_fresh() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("c.bin");
        save(
            &path,
            DIR,
            KEY,
            None,
            &[],
            vec![fresh("a.json", 1, "s1"), fresh("b.json", 3, "s3")],
        )
        .unwrap();
        let old = Cache::load(&path, DIR).unwrap();
        // Keep the entry of b.json only (entries are in hash order).
        let listed = names(&["a.json", "b.json"]);
        let found = old.index(&listed);
        let mut kept = vec![false; old.len()];
        kept[found.firsts[1] as usize] = true;
        save(
            &path,
            DIR,
            KEY,
            Some(&old),
            &kept,
            vec![fresh("c.json", 5, "s5")],
        )
        .unwrap();
        let new = Cache::load(&path, DIR).unwrap();
        assert_eq!(new.len(), 2);
        let listed = names(&["a.json", "b.json", "c.json"]);
        let found = new.index(&listed);
        assert_eq!(found.firsts[0], u32::MAX, "a.json was not kept");
        let (entry, f) = found.get(1, fresh("b.json", 3, "").key).unwrap();
        assert_eq!(f.session, "s3");
        // A kept entry keeps what was known of its credentials (none: 3 % 3).
        assert_eq!(found.secrets(entry), None);
        let (entry, f) = found.get(2, fresh("c.json", 5, "").key).unwrap();
        assert!(f.long);
        assert_eq!(found.secrets(entry), Some(true));
        assert_eq!(
            found.get(2, fresh("c.json", 5, "").key).unwrap().1.session,
            "s5"
        );
    }

    proptest! {
        /// A damaged cache is refused or yields entries, never a panic.
        #[test]
        fn any_bytes_load_and_look_up_without_panicking(
            cut in 0usize..400,
            flips in prop::collection::vec((0usize..400, any::<u8>()), 0..8),
        ) {
            let tmp = tempfile::tempdir().unwrap();
            let path = tmp.path().join("c.bin");
            save(&path, DIR, KEY, None, &[], vec![fresh("a.json", 1, "s1"), fresh("b.json", 2, "s2")]).unwrap();
            let mut bytes = std::fs::read(&path).unwrap();
            for (at, b) in flips {
                if let Some(x) = bytes.get_mut(at) {
                    *x = b;
                }
            }
            bytes.truncate(cut.max(8).min(bytes.len()));
            if let Some(cache) = Cache::parse(bytes, DIR) {
                let listed = names(&["a.json", "b.json"]);
                let found = cache.index(&listed);
                for file in 0..2 {
                    let _ = found.get(file, fresh("a.json", 1, "").key);
                }
            }
        }
    }
}
