//! This device's local state, which must never live in the shared directory
//! (everything there is synced to every device): the device id, the per-record
//! locks, the hostname and process facts.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// The local directories of this device (from the `directories` crate, so
/// `XDG_*` and `HOME` decide on Linux).
#[derive(Debug, Clone)]
pub struct LocalDirs {
    /// The user's home directory, for `~` expansion.
    pub home: PathBuf,
    /// `<config dir>/presence`: holds `config.toml`.
    pub config: PathBuf,
    /// `<data dir>/presence`: holds `device-id` and the default record directories.
    pub data: PathBuf,
    /// `<runtime dir>/presence` (or the cache dir where there is no runtime dir): locks.
    pub runtime: PathBuf,
}

impl LocalDirs {
    /// The standard directories for the current user.
    pub fn from_env() -> Result<Self> {
        let base = directories::BaseDirs::new().ok_or(Error::NoHome {
            what: "local data and config directories",
        })?;
        let runtime = base
            .runtime_dir()
            .unwrap_or_else(|| base.cache_dir())
            .join("presence");
        Ok(LocalDirs {
            home: base.home_dir().to_path_buf(),
            config: base.config_dir().join("presence"),
            data: base.data_dir().join("presence"),
            runtime,
        })
    }

    /// Directories rooted in one place, for tests and embedding.
    pub fn under(root: &Path) -> Self {
        LocalDirs {
            home: root.to_path_buf(),
            config: root.join("config/presence"),
            data: root.join("data/presence"),
            runtime: root.join("runtime/presence"),
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

    /// This device's id, if one was created already.
    pub fn existing_device_id(&self) -> Result<Option<String>> {
        let path = self.device_id_file();
        let mut text = String::new();
        match File::open(&path) {
            Ok(mut f) => f
                .read_to_string(&mut text)
                .map_err(|e| Error::io("read device id", &path, e))?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("read device id", &path, e)),
        };
        let id = text.trim();
        if id.len() != 32 || !id.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(Error::DeviceId {
                path,
                message: "expected 32 hex digits".into(),
            });
        }
        Ok(Some(id.to_ascii_lowercase()))
    }

    /// This device's id, created on first use: 128 random bits as 32 hex
    /// digits. Two processes racing to create it agree on one id.
    pub fn device_id(&self) -> Result<String> {
        if let Some(id) = self.existing_device_id()? {
            return Ok(id);
        }
        let path = self.device_id_file();
        make_private_dir(&self.data)?;
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| {
            Error::io(
                "generate device id for",
                &path,
                io::Error::other(e.to_string()),
            )
        })?;
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut tmp = tempfile::Builder::new()
            .prefix(".device-id.")
            .tempfile_in(&self.data)
            .map_err(|e| Error::io("create temp file in", &self.data, e))?;
        writeln!(tmp, "{id}").map_err(|e| Error::io("write device id", &path, e))?;
        match tmp.persist_noclobber(&path) {
            Ok(_) => Ok(id),
            // Another process created it first: use theirs.
            Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => self
                .existing_device_id()?
                .ok_or_else(|| Error::io("read device id", &path, e.error)),
            Err(e) => Err(Error::io("create device id", &path, e.error)),
        }
    }

    /// The advisory lock file for record `file` in presence directory `dir`.
    pub fn lock_file(&self, dir: &Path, file: &str) -> PathBuf {
        let mut h = Sha256::new();
        h.update(dir.as_os_str().as_encoded_bytes());
        h.update([0]);
        h.update(file.as_bytes());
        let digest = h.finalize();
        let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
        self.runtime.join("locks").join(format!("{hex}.lock"))
    }

    /// Takes the per-record advisory lock (blocking); released when the guard drops.
    pub fn lock(&self, dir: &Path, file: &str) -> Result<RecordLock> {
        let path = self.lock_file(dir, file);
        if let Some(parent) = path.parent() {
            make_private_dir(parent)?;
        }
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| Error::io("open lock file", &path, e))?;
        f.lock().map_err(|e| Error::io("lock", &path, e))?;
        Ok(RecordLock { _file: f })
    }
}

/// A held per-record lock.
#[derive(Debug)]
pub struct RecordLock {
    _file: File,
}

fn make_private_dir(dir: &Path) -> Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| Error::io("create directory", dir, e))
}

/// This machine's hostname (lossy UTF-8).
pub fn hostname() -> String {
    gethostname::gethostname().to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_id_is_created_once_and_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = LocalDirs::under(tmp.path());
        assert_eq!(dirs.existing_device_id().unwrap(), None);
        let a = dirs.device_id().unwrap();
        assert_eq!(a.len(), 32);
        assert_eq!(dirs.device_id().unwrap(), a);
        assert_eq!(dirs.existing_device_id().unwrap(), Some(a));
    }

    #[test]
    fn corrupt_device_id_is_an_error_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = LocalDirs::under(tmp.path());
        fs::create_dir_all(&dirs.data).unwrap();
        fs::write(dirs.device_id_file(), "garbage").unwrap();
        let err = dirs.device_id().unwrap_err().to_string();
        assert!(
            err.contains("device-id") && err.contains("delete it"),
            "{err}"
        );
    }

    #[test]
    fn lock_files_differ_per_dir_and_record() {
        let dirs = LocalDirs::under(Path::new("/x"));
        let a = dirs.lock_file(Path::new("/d1"), "a.json");
        assert_ne!(a, dirs.lock_file(Path::new("/d2"), "a.json"));
        assert_ne!(a, dirs.lock_file(Path::new("/d1"), "b.json"));
        assert!(a.starts_with("/x/runtime/presence/locks"));
    }
}
