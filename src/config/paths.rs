//! Path safety for records directories and the config file: `~` expansion,
//! normalising by spelling and on disk, the directories refused as records
//! directories, and the bounded, non-blocking read of the config file.

use std::io::Read as _;
use std::path::{Component, Path, PathBuf};

use crate::error::ConfigError;
use crate::limits;

/// The largest configuration file that is read: 1 MiB.
pub(crate) const MAX_CONFIG_BYTES: u64 = limits::MAX_CONFIG_BYTES;

/// Top-level system directories refused as records directories (besides `/`
/// and the home directory), compared after resolving symlinks on both sides.
const SYSTEM_DIRS: [&str; 21] = [
    "/etc", "/usr", "/var", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/boot", "/dev", "/proc",
    "/sys", "/tmp", "/run", "/opt", "/srv", "/root", "/home", "/Users", "/System", "/private",
];

/// Expands a leading `~` to `home` and makes a relative path relative to `base`
/// (the config file's directory).
pub(crate) fn expand_path(path: &str, home: &Path, base: &Path) -> PathBuf {
    let p = if path == "~" {
        home.to_path_buf()
    } else if let Some(rest) = path.strip_prefix("~/") {
        home.join(rest)
    } else {
        PathBuf::from(path)
    };
    if p.is_absolute() { p } else { base.join(p) }
}

/// Why reading a config file failed.
pub(super) enum ReadError {
    Io(std::io::Error),
    /// The problem and the fix.
    Unusable(String, &'static str),
}

/// Reads a config file without ever blocking or reading without bound: opened
/// with `O_NONBLOCK` (a FIFO does not wait for a writer), checked with `fstat`
/// to be a regular file of at most [`MAX_CONFIG_BYTES`], read up to one byte
/// past the limit (in case it grows meanwhile).
pub(super) fn read_bounded(path: &Path) -> Result<String, ReadError> {
    use rustix::fs::{FileType, Mode, OFlags};
    const FIX: &str = "point --config or PRESENCE_CONFIG at a regular TOML file (`presence config init` writes one)";
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = rustix::fs::open(path, flags, Mode::empty()).map_err(|e| ReadError::Io(e.into()))?;
    let st = rustix::fs::fstat(&fd).map_err(|e| ReadError::Io(e.into()))?;
    let what = match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => None,
        FileType::Directory => Some("a directory"),
        FileType::Fifo => Some("a FIFO"),
        FileType::Socket => Some("a socket"),
        FileType::CharacterDevice | FileType::BlockDevice => Some("a device"),
        _ => Some("not a file"),
    };
    if let Some(what) = what {
        return Err(ReadError::Unusable(
            format!("it is {what}, not a regular file"),
            FIX,
        ));
    }
    let too_big = |n: u64| {
        ReadError::Unusable(
            format!("it is {n} bytes, over the {MAX_CONFIG_BYTES}-byte (1 MiB) limit"),
            "a configuration is a few lines of TOML; check that the path names the right file",
        )
    };
    let size = u64::try_from(st.st_size).unwrap_or(0);
    if size > MAX_CONFIG_BYTES {
        return Err(too_big(size));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    std::fs::File::from(fd)
        .take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|_| {
        ReadError::Unusable(
            "it is not UTF-8 text".into(),
            "a config file is TOML; check that the path names the right file",
        )
    })
}

/// `path` made absolute (against the current directory) with `.`, `..` and
/// repeated or trailing slashes resolved by their spelling, not the disk.
fn normalize(path: &Path) -> PathBuf {
    let absolute;
    let path = if path.is_absolute() {
        path
    } else {
        absolute = std::env::current_dir().unwrap_or_default().join(path);
        &absolute
    };
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Where `path` leads on disk: its symlinks resolved as far as it exists,
/// the missing rest appended.
pub(super) fn resolve_existing(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    let lexical = normalize(path);
    for ancestor in lexical.ancestors().skip(1) {
        if let Ok(p) = std::fs::canonicalize(ancestor)
            && let Ok(rest) = lexical.strip_prefix(ancestor)
        {
            return p.join(rest);
        }
    }
    lexical
}

/// Whether `dir` must not be a records directory, and why: it is `/`, the
/// home directory `home` or a top-level system directory (`/etc`, `/usr`,
/// `/tmp` itself, …), after normalising both as spelt and as resolved on
/// disk (`~/link` with `link -> /` is `/`). `expire` deletes files there, and
/// `doctor` would advise changing its mode. Returns what it is and, when it
/// differs, where it leads.
pub(crate) fn refused_dir(dir: &Path, home: &Path) -> Option<(String, Option<PathBuf>)> {
    let lexical = normalize(dir);
    let resolved = resolve_existing(dir);
    let mut refused: Vec<(PathBuf, String)> =
        vec![(PathBuf::from("/"), "the root directory".into())];
    for h in [normalize(home), resolve_existing(home)] {
        refused.push((h, "the home directory".into()));
    }
    for s in SYSTEM_DIRS {
        for p in [PathBuf::from(s), resolve_existing(Path::new(s))] {
            let what = format!("the system directory {}", p.display());
            refused.push((p, what));
        }
    }
    let leads_elsewhere = (resolved != lexical).then(|| resolved.clone());
    [&lexical, &resolved].into_iter().find_map(|candidate| {
        refused
            .iter()
            .find(|(p, _)| p == candidate)
            .map(|(_, what)| (what.clone(), leads_elsewhere.clone()))
    })
}

pub(super) fn check_dir(
    dir: &Path,
    home: &Path,
    origin: String,
    from_command_line: bool,
) -> Result<(), ConfigError> {
    match refused_dir(dir, home) {
        None => Ok(()),
        Some((what, resolved)) => Err(ConfigError::RefusedDir {
            dir: dir.to_path_buf(),
            resolved,
            what,
            origin,
            from_command_line,
        }),
    }
}
