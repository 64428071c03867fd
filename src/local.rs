//! This device's local state, which must never live in the shared directory
//! (everything there is synced to every device): the device id, the per-record
//! locks, the state directory that also holds the ledger, the hostname.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::clock::Clocks;
use crate::error::{Error, Result};

/// The local directories of this device (from the `directories` crate, so
/// `XDG_*` and `HOME` decide on Linux, except for [`LocalDirs::state`]).
#[derive(Debug, Clone)]
pub struct LocalDirs {
    /// The user's home directory, for `~` expansion.
    pub home: PathBuf,
    /// `<config dir>/presence`: holds `config.toml`.
    pub config: PathBuf,
    /// `<data dir>/presence`: holds `device-id` and the default record directories.
    pub data: PathBuf,
    /// `$HOME/.local/state/presence`: the per-record locks and the ledger of
    /// the records this device published. Derived from `HOME` alone,
    /// ignoring `XDG_STATE_HOME` and `XDG_RUNTIME_DIR`: cron, systemd user
    /// units, login shells and `sudo -u` runs of one user agree on `HOME`
    /// but not on the XDG variables, and they must all take the same locks
    /// and read the same ledger.
    pub state: PathBuf,
}

impl LocalDirs {
    /// The standard directories for the current user.
    pub fn from_env() -> Result<Self> {
        let base = directories::BaseDirs::new().ok_or(Error::NoHome {
            what: "local data and config directories",
        })?;
        let home = base.home_dir();
        Ok(LocalDirs {
            home: home.to_path_buf(),
            config: base.config_dir().join("presence"),
            data: base.data_dir().join("presence"),
            state: home.join(".local/state/presence"),
        })
    }

    /// Directories rooted in one place, for tests and embedding.
    pub fn under(root: &Path) -> Self {
        LocalDirs {
            home: root.to_path_buf(),
            config: root.join("config/presence"),
            data: root.join("data/presence"),
            state: root.join("state/presence"),
        }
    }

    /// The default configuration file.
    pub fn config_file(&self) -> PathBuf {
        self.config.join("config.toml")
    }

    /// The file holding this device's id.
    pub fn device_id_file(&self) -> PathBuf {
        self.data.join("device-id")
    }

    /// The file holding this device's private key (0600, never shared).
    pub fn device_key_file(&self) -> PathBuf {
        self.data.join("device-key")
    }

    /// Where the random id this device used before it had a key is kept,
    /// once it moved to its key-derived id (for `doctor`).
    pub fn previous_device_id_file(&self) -> PathBuf {
        self.data.join("device-id.old")
    }

    /// This device's id, if one was made already: the key-derived id
    /// (from its public key), or the random 32 hex digits an older
    /// version made and this device has not moved from yet (it moves at
    /// its first write). Reading never makes one.
    pub fn existing_device_id(&self) -> Result<Option<String>> {
        let path = self.device_id_file();
        let Some(text) = read_text(&path, "read device id")? else {
            return Ok(None);
        };
        let id = text.trim();
        if crate::identity::is_key_id(id) {
            return Ok(Some(id.to_owned()));
        }
        if id.len() != 32 || !id.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(Error::DeviceId {
                path,
                message: "expected the 40-character id derived from this device's key \
                          (or an older 32 hex digits); delete the file and it is made again"
                    .into(),
            });
        }
        Ok(Some(id.to_ascii_lowercase()))
    }

    /// The previous random id, if this device moved from one.
    pub fn previous_device_id(&self) -> Option<String> {
        read_text(&self.previous_device_id_file(), "read")
            .ok()
            .flatten()
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
    }

    /// This device's id, made on first use: derived from its key
    /// (see docs/record-format.md, "Signatures").
    pub fn device_id(&self) -> Result<String> {
        Ok(self.device_key()?.id)
    }

    /// This device's signing key and the id derived from it, the key made
    /// on first use (32 random bytes, `device-key`, 0600, in the local data
    /// dir — never in a shared folder). Two processes racing to make it
    /// agree on one. A device that had a random id moves to the key's: the
    /// old id is kept in `device-id.old` and `device-id` names the new one.
    pub(crate) fn device_key(&self) -> Result<DeviceKey> {
        let path = self.device_key_file();
        let seed = match read_seed(&path)? {
            Some(seed) => seed,
            None => {
                make_private_dir(&self.data)?;
                let mut seed = [0u8; 32];
                getrandom::fill(&mut seed).map_err(|e| {
                    Error::io(
                        "generate device key for",
                        &path,
                        io::Error::other(e.to_string()),
                    )
                })?;
                let hex: String = seed.iter().map(|b| format!("{b:02x}")).collect();
                let mut tmp = tempfile::Builder::new()
                    .prefix(".device-key.")
                    .tempfile_in(&self.data)
                    .map_err(|e| Error::io("create temp file in", &self.data, e))?;
                writeln!(tmp, "{hex}").map_err(|e| Error::io("write device key", &path, e))?;
                match tmp.persist_noclobber(&path) {
                    Ok(_) => seed,
                    // Another process made it first: use theirs.
                    Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => {
                        read_seed(&path)?
                            .ok_or_else(|| Error::io("read device key", &path, e.error))?
                    }
                    Err(e) => return Err(Error::io("create device key", &path, e.error)),
                }
            }
        };
        let key = crate::identity::key_from_seed(&seed);
        let id = crate::identity::key_id(&key.verifying_key());
        // A damaged id file is replaced by the key's id: the key decides.
        let existing = self.existing_device_id().unwrap_or_default();
        if existing.as_deref() != Some(id.as_str()) {
            if let Some(old) = existing.filter(|old| !crate::identity::is_key_id(old))
                && self.previous_device_id().is_none()
            {
                write_small(
                    &self.data,
                    "device-id.old",
                    format!("{old}\n").as_bytes(),
                    "keep the previous device id",
                )?;
            }
            write_small(
                &self.data,
                "device-id",
                format!("{id}\n").as_bytes(),
                "write device id",
            )?;
        }
        Ok(DeviceKey { key, id })
    }

    /// The advisory lock file for record `file` in the presence directory
    /// whose canonical path (absolute, symlinks resolved, as
    /// [`crate::store::Dir::canonical`] gives it) is `dir`:
    /// `<state>/locks/<hex>.lock`, hex being the first 12 bytes of
    /// sha256(`dir`, a 0 byte, `file`). The path must be canonical because
    /// the lock is only as good as the agreement on its name: `/x`, `/x/`
    /// and a symlink to `/x` are one directory and must be one lock.
    pub(crate) fn lock_file(&self, dir: &Path, file: &str) -> PathBuf {
        let mut key = dir.as_os_str().as_encoded_bytes().to_vec();
        key.push(0);
        key.extend_from_slice(file.as_bytes());
        self.state
            .join("locks")
            .join(format!("{}.lock", short_hex(&key)))
    }

    /// Takes the per-record advisory lock on [`LocalDirs::lock_file`]
    /// (blocking); released when the guard drops. `dir` is the canonical
    /// path of the presence directory.
    pub(crate) fn lock(&self, dir: &Path, file: &str) -> Result<RecordLock> {
        let path = self.lock_file(dir, file);
        if let Some(parent) = path.parent() {
            make_private_dir(parent)?;
        }
        flock(&path)
    }
}

impl LocalDirs {
    /// What this device has learned of every device's clock
    /// (`<state>/clocks.json`, one line per device: see
    /// [`Clocks::to_lines`]). Missing or unreadable: nothing learned yet —
    /// every writer is then read with the skew tolerance; a damaged line
    /// costs only its device. A file over the size limit (only an older
    /// version, which kept every device ever seen, could write one) reads
    /// as nothing learned, once: what is written back is bounded
    /// ([`Clocks::prune`]).
    /// Never an estimate of this device's own clock (see
    /// [`crate::clock::is_own`]), whatever an older version wrote.
    pub(crate) fn clocks(&self) -> Clocks {
        let me = self.existing_device_id().ok().flatten();
        self.clocks_of(me.as_deref())
    }

    /// [`clocks`](Self::clocks) for a caller that has read this device's
    /// id already (`me`, as [`existing_device_id`](Self::existing_device_id)
    /// gave it).
    pub(crate) fn clocks_of(&self, me: Option<&str>) -> Clocks {
        let mut clocks = match read_small(&self.state.join("clocks.json"), MAX_CLOCKS_BYTES) {
            Ok(Some(bytes)) => Clocks::from_bytes(&bytes),
            _ => Clocks::default(),
        };
        if let Some(me) = me {
            clocks.forget(me);
        }
        clocks
    }

    /// Drops what `clocks` holds of this device's own id, if it has one.
    fn forget_own_clock(&self, clocks: &mut Clocks) {
        if let Ok(Some(me)) = self.existing_device_id() {
            clocks.forget(&me);
        }
    }

    /// Adds `learned` to what is on disk and writes the union, under a lock
    /// so that concurrent readers (a prompt's `list`, a `watch`) never lose
    /// each other's samples.
    pub(crate) fn save_clocks(&self, learned: &Clocks, now: f64) -> Result<()> {
        make_private_dir(&self.state)?;
        let _lock = flock(&self.state.join("clocks.lock"))?;
        let mut all = self.clocks();
        all.merge(learned, now);
        self.forget_own_clock(&mut all);
        write_small(
            &self.state,
            "clocks.json",
            &all.to_lines(),
            "write clock estimates",
        )
    }
}

/// This device's signing identity ([`LocalDirs::device_key`]).
pub(crate) struct DeviceKey {
    /// The private key.
    pub key: ed25519_dalek::SigningKey,
    /// The id derived from its public half.
    pub id: String,
}

impl std::fmt::Debug for DeviceKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the private key, not even in a debug print.
        f.debug_struct("DeviceKey").field("id", &self.id).finish()
    }
}

/// A small local text file: `None` when it is absent.
fn read_text(path: &Path, op: &'static str) -> Result<Option<String>> {
    match read_small(path, 4096) {
        Ok(Some(bytes)) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Ok(None) => match fs::symlink_metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            _ => Err(Error::DeviceId {
                path: path.to_path_buf(),
                message: "not a small regular file of this user; move it away and it is made again"
                    .into(),
            }),
        },
        Err(e) => Err(Error::io(op, path, e)),
    }
}

/// The 32-byte seed in the device key file: 64 hex digits.
fn read_seed(path: &Path) -> Result<Option<[u8; 32]>> {
    let Some(text) = read_text(path, "read device key")? else {
        return Ok(None);
    };
    let hex = text.trim();
    let bad = || Error::DeviceId {
        path: path.to_path_buf(),
        message: "expected 64 hex digits (this device's private key); move the file away to \
                  make a new key, and this device gets a new id"
            .into(),
    };
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    let mut seed = [0u8; 32];
    for (i, byte) in seed.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(Some(seed))
}

/// Takes the advisory lock on `path` (created 0600), blocking; released when
/// the guard drops.
fn flock(path: &Path) -> Result<RecordLock> {
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| Error::io("open lock file", path, e))?;
    f.lock().map_err(|e| Error::io("lock", path, e))?;
    Ok(RecordLock { _file: f })
}

/// Reads a small file of this device's local state (with the one bounded
/// read, [`crate::store::bounded`]). `Ok(None)` when it is missing or cannot
/// be opened (a symlink, a socket, another user's file after a `sudo` run),
/// is not a regular file, or is larger than `max`: such a file is treated as
/// absent. Opening never blocks (a FIFO would otherwise hang the caller).
pub(crate) fn read_small(path: &Path, max: u64) -> io::Result<Option<Vec<u8>>> {
    use crate::store::bounded::{ReadError, read_path};
    match read_path(path, usize::try_from(max).unwrap_or(usize::MAX)) {
        Ok(bytes) => Ok(bytes),
        Err(ReadError::Read(e)) => Err(e),
        Err(_) => Ok(None),
    }
}

/// Writes `bytes` as `dir/name` atomically: a 0600 temp file `.name.*.tmp`
/// in `dir`, renamed over the name, so a crash never leaves it torn.
pub(crate) fn write_small(dir: &Path, name: &str, bytes: &[u8], op: &'static str) -> Result<()> {
    let path = dir.join(name);
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| Error::io("create temp file in", dir, e))?;
    tmp.write_all(bytes)
        .map_err(|e| Error::io(op, tmp.path(), e))?;
    tmp.persist(&path)
        .map_err(|e| Error::io(op, &path, e.error))?;
    Ok(())
}

/// What [`crate::clock::MAX_DEVICES`] devices take (about a kilobyte each
/// at most) fits in far less.
const MAX_CLOCKS_BYTES: u64 = 4 * 1024 * 1024;

/// A held per-record lock.
#[derive(Debug)]
pub(crate) struct RecordLock {
    _file: File,
}

/// The first 12 bytes of sha256(`bytes`) as 24 hex digits: a fixed-length
/// file name for a path of any length and content, with 96 bits so that two
/// directories or records never share one in practice.
pub(crate) fn short_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest[..12].iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn make_private_dir(dir: &Path) -> Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| Error::io("create directory", dir, e))
}

/// This machine's hostname (lossy UTF-8).
pub(crate) fn hostname() -> String {
    gethostname::gethostname().to_string_lossy().into_owned()
}

/// This machine's clock as Unix seconds. Only the edge reads the clock:
/// the binary, the keep-alive's timer thread, and the scan cache's
/// "settled" horizon (about this machine's file times, not about `now`);
/// every rule takes `now` as a parameter.
pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_json_stays_bounded_and_readable_whatever_ids_a_directory_holds() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = LocalDirs::under(tmp.path());
        let t = 1_800_000_000.0;
        // A genuine device 10 min behind, its clock learned.
        let mut slow = Clocks::default();
        slow.learn("slow", t, t - 600.0);
        slow.learn("slow", t + 30.0, t + 30.0 - 600.0);
        dirs.save_clocks(&slow, t + 30.0).unwrap();
        // A directory that held 25 000 device ids (a planted crowd, years of
        // devices), each read once.
        let mut crowd = Clocks::default();
        for i in 0..25_000 {
            crowd.learn(&format!("{i:032x}"), t + 60.0, t + 59.0);
        }
        dirs.save_clocks(&crowd, t + 60.0).unwrap();
        let path = dirs.state.join("clocks.json");
        let size = fs::metadata(&path).unwrap().len();
        assert!(size < MAX_CLOCKS_BYTES / 2, "{size} bytes");
        let known = dirs.clocks();
        assert!(
            known.estimate("slow", t + 60.0).is_some(),
            "the crowd discarded every estimate"
        );
        // A damaged line costs only its own device.
        let mut text = fs::read_to_string(&path).unwrap();
        text.insert_str(0, "{not json\n");
        text.push_str("{\"device\": \"cut");
        fs::write(&path, text).unwrap();
        assert_eq!(dirs.clocks(), known);
    }

    #[test]
    fn device_id_is_created_once_and_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = LocalDirs::under(tmp.path());
        assert_eq!(dirs.existing_device_id().unwrap(), None);
        let a = dirs.device_id().unwrap();
        assert!(crate::identity::is_key_id(&a), "{a}");
        assert_eq!(dirs.device_id().unwrap(), a);
        assert_eq!(dirs.existing_device_id().unwrap(), Some(a.clone()));
        // The id is the key's.
        let key = dirs.device_key().unwrap();
        assert_eq!(crate::identity::key_id(&key.key.verifying_key()), a);
        let mode = fs::metadata(dirs.device_key_file()).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
        assert!(!format!("{key:?}").contains(&format!("{:?}", key.key.to_bytes())));
    }

    #[test]
    fn a_random_id_moves_to_the_keys_and_is_kept_as_the_previous_one() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = LocalDirs::under(tmp.path());
        fs::create_dir_all(&dirs.data).unwrap();
        let old = "0123456789abcdef0123456789abcdef";
        fs::write(dirs.device_id_file(), format!("{old}\n")).unwrap();
        // Reading does not move it.
        assert_eq!(dirs.existing_device_id().unwrap().as_deref(), Some(old));
        assert!(!dirs.device_key_file().exists());
        let new = dirs.device_id().unwrap();
        assert_ne!(new, old);
        assert_eq!(dirs.existing_device_id().unwrap(), Some(new.clone()));
        assert_eq!(dirs.previous_device_id().as_deref(), Some(old));
        // Kept once: a later start does not overwrite it.
        assert_eq!(dirs.device_id().unwrap(), new);
        assert_eq!(dirs.previous_device_id().as_deref(), Some(old));
    }

    #[test]
    fn a_damaged_key_is_an_error_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = LocalDirs::under(tmp.path());
        fs::create_dir_all(&dirs.data).unwrap();
        fs::write(dirs.device_key_file(), "short").unwrap();
        let err = dirs.device_id().unwrap_err().to_string();
        assert!(
            err.contains("device-key") && err.contains("64 hex"),
            "{err}"
        );
    }

    #[test]
    fn corrupt_device_id_is_an_error_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = LocalDirs::under(tmp.path());
        fs::create_dir_all(&dirs.data).unwrap();
        fs::write(dirs.device_id_file(), "garbage").unwrap();
        let err = dirs.existing_device_id().unwrap_err().to_string();
        assert!(
            err.contains("device-id") && err.contains("delete the file"),
            "{err}"
        );
        // The key decides: a first write replaces the damaged id with its own.
        let id = dirs.device_id().unwrap();
        assert_eq!(dirs.existing_device_id().unwrap(), Some(id));
    }

    #[test]
    fn lock_files_differ_per_dir_and_record() {
        let dirs = LocalDirs::under(Path::new("/x"));
        let a = dirs.lock_file(Path::new("/d1"), "a.json");
        assert_ne!(a, dirs.lock_file(Path::new("/d2"), "a.json"));
        assert_ne!(a, dirs.lock_file(Path::new("/d1"), "b.json"));
        // The separator keeps ("/d1", "a.json") and ("/d1a", ".json") apart.
        assert_ne!(a, dirs.lock_file(Path::new("/d1a"), ".json"));
        assert!(a.starts_with("/x/state/presence/locks"));
    }

    #[test]
    fn lock_file_name_is_the_sha256_of_dir_nul_file() {
        let dirs = LocalDirs::under(Path::new("/x"));
        // printf '/srv/sync/presence\0host.s-1.json' | sha256sum | cut -c1-24
        assert_eq!(
            dirs.lock_file(Path::new("/srv/sync/presence"), "host.s-1.json"),
            Path::new("/x/state/presence/locks/f0845918d846469a88fcde78.lock")
        );
    }

    /// Set in the child processes of `lock_file_depends_on_home_alone`: the
    /// file to write the lock path that `from_env` gives into.
    const PROBE: &str = "PRESENCE_TEST_LOCK_PROBE";

    #[test]
    fn lock_file_depends_on_home_alone() {
        let (dir, file) = (Path::new("/srv/sync/presence"), "host.s-1.json");
        if let Some(out) = std::env::var_os(PROBE) {
            let dirs = LocalDirs::from_env().unwrap();
            fs::write(
                out,
                dirs.lock_file(dir, file).as_os_str().as_encoded_bytes(),
            )
            .unwrap();
            return;
        }
        // The real environment lookup, in child processes, because this
        // process's environment is shared by every test running beside it.
        let tmp = tempfile::tempdir().unwrap();
        let probe = |name: &str, xdg: &[(&str, Option<&str>)]| {
            let out = tmp.path().join(name);
            let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
            cmd.args(["--exact", "local::tests::lock_file_depends_on_home_alone"])
                .env(PROBE, &out)
                .env("HOME", tmp.path().join("home"));
            for (var, value) in xdg {
                match value {
                    Some(v) => cmd.env(var, tmp.path().join(v)),
                    None => cmd.env_remove(var),
                };
            }
            let status = cmd.output().unwrap().status;
            assert!(status.success(), "{name}: {status}");
            PathBuf::from(fs::read_to_string(out).unwrap())
        };
        // As an interactive login shell sees it, and as cron does.
        let interactive = probe(
            "interactive",
            &[
                ("XDG_RUNTIME_DIR", Some("run")),
                ("XDG_STATE_HOME", Some("xdg-state")),
                ("XDG_CACHE_HOME", Some("cache")),
            ],
        );
        let cron = probe(
            "cron",
            &[
                ("XDG_RUNTIME_DIR", None),
                ("XDG_STATE_HOME", None),
                ("XDG_CACHE_HOME", None),
            ],
        );
        assert_eq!(interactive, cron);
        assert_eq!(
            interactive,
            tmp.path()
                .join("home/.local/state/presence/locks/f0845918d846469a88fcde78.lock")
        );
    }

    #[test]
    fn the_lock_excludes_others_until_the_guard_drops() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = LocalDirs::under(tmp.path());
        let (dir, file) = (Path::new("/srv/sync/presence"), "host.s-1.json");
        let guard = dirs.lock(dir, file).unwrap();
        // flock belongs to the open file description, so a second open of the
        // same file stands for another process.
        let other = File::open(dirs.lock_file(dir, file)).unwrap();
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(guard);
        other.try_lock().unwrap();
    }

    #[test]
    fn the_state_dir_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dirs = LocalDirs::under(tmp.path());
        drop(dirs.lock(Path::new("/d"), "a.json").unwrap());
        for d in [dirs.state.clone(), dirs.state.join("locks")] {
            let mode = fs::metadata(&d).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{}", d.display());
        }
    }
}
