//! Keyed hashing of groups and lives: what the engines key their maps and
//! sorts by, one 64-bit digest instead of three strings per file.
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

/// A group or a life as the reducer keys it: a 64-bit SipHash of its parts
/// under a key drawn at random once per process. No file can aim at a
/// collision without knowing the key; by chance, two of 100 000 groups
/// collide with odds of about one in 3·10⁹. Hashing beats allocating the
/// strings: `list` reduces every file of the directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Digest(u64);

impl Digest {
    fn of<const N: usize>(parts: [&str; N], started: Option<f64>) -> Digest {
        let [k0, k1] = digest_key();
        let mut h = siphasher::sip::SipHasher13::new_with_keys(k0, k1);
        for part in parts {
            h.write(crate::record::clip(part).as_bytes());
            // 0xff never occurs in UTF-8: the parts cannot run together.
            h.write_u8(0xff);
        }
        match started {
            Some(t) => h.write_u64(t.to_bits()),
            None => h.write_u8(0),
        }
        Digest(h.finish())
    }

    /// A digest as stored (see `scan_cache.rs`).
    pub(crate) fn from_raw(n: u64) -> Digest {
        Digest(n)
    }

    /// The digest as stored.
    pub(crate) fn raw(self) -> u64 {
        self.0
    }

    /// The digest of a group key (see [`Record::group_key`](crate::record::Record::group_key)) of records by
    /// `author` ([`crate::record::author`]): a device's records never
    /// share a group with another device's, nor signed ones with unsigned.
    pub(crate) fn group(author: &str, (profile, client, target): (&str, &str, &str)) -> Digest {
        Digest::of([author, profile, client, target], None)
    }

    /// The digest of a life of `author`'s: only its author's tombstone ends it.
    pub(crate) fn life(
        author: &str,
        (instance, session, started_at): crate::record::Life<'_>,
    ) -> Digest {
        // A distinct last part keeps a life from ever equalling a group.
        Digest::of(
            [author, instance, session, "\u{1}life"],
            Some(started_at.unwrap_or(f64::NAN)),
        )
    }
}

static DIGEST_KEY: OnceLock<[u64; 2]> = OnceLock::new();

/// The key of this process's digests: drawn at random on first use, unless
/// a scan cache made earlier set its own first ([`use_digest_key`]).
pub(crate) fn digest_key() -> [u64; 2] {
    *DIGEST_KEY.get_or_init(|| {
        let mut b = [0u8; 16];
        if getrandom::fill(&mut b).is_err() {
            // No randomness: a key from the clock and the pid still differs
            // between runs and machines.
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            b[..8].copy_from_slice(&(t as u64).to_le_bytes());
            b[8..].copy_from_slice(&u64::from(std::process::id()).to_le_bytes());
        }
        let (a, c) = b.split_at(8);
        [
            u64::from_le_bytes(a.try_into().unwrap_or_default()),
            u64::from_le_bytes(c.try_into().unwrap_or_default()),
        ]
    })
}

/// Makes `key` this process's digest key if none is in use yet; whether
/// `key` is the one in use.
pub(crate) fn use_digest_key(key: [u64; 2]) -> bool {
    *DIGEST_KEY.get_or_init(|| key) == key
}

/// Digests are random already: a map keyed by them need not hash again.
#[derive(Default)]
pub(crate) struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

pub(crate) type ByDigest<V> = HashMap<Digest, V, BuildHasherDefault<Identity>>;
