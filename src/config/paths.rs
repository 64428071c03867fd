//! Path safety for records directories and the config file: `~` expansion,
//! normalising by spelling and on disk, the directories refused as records
//! directories, and the bounded, non-blocking read of the config file.

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

/// Reads a config file through the one bounded read (store/bounded.rs):
/// never blocking (a FIFO does not wait for a writer), never reading more
/// than [`MAX_CONFIG_BYTES`], only a regular file. The user's own config may
/// be a symlink (dotfile managers make them): the path is resolved once, and
/// what it resolved to is opened without following a link, so a file
/// swapped for a link meanwhile is refused, not followed.
pub(super) fn read_bounded(path: &Path) -> Result<String, ReadError> {
    use crate::store::bounded::{self, ReadError as Bounded};
    const FIX: &str = "point --config or PRESENCE_CONFIG at a regular TOML file (`presence config init` writes one)";
    let resolved = std::fs::canonicalize(path).map_err(ReadError::Io)?;
    let limit = usize::try_from(MAX_CONFIG_BYTES).unwrap_or(usize::MAX);
    let bytes = match bounded::read_path(&resolved, limit) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err(ReadError::Io(std::io::ErrorKind::NotFound.into())),
        Err(Bounded::NotRegular(what)) => {
            return Err(ReadError::Unusable(
                format!("it is {what}, not a regular file"),
                FIX,
            ));
        }
        Err(Bounded::TooLarge { size, .. }) => {
            return Err(ReadError::Unusable(
                format!("it is {size} bytes, over the {MAX_CONFIG_BYTES}-byte (1 MiB) limit"),
                "a configuration is a few lines of TOML; check that the path names the right file",
            ));
        }
        Err(Bounded::Open(e) | Bounded::Read(e)) => return Err(ReadError::Io(e)),
    };
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
    // The deepest ancestor that is there, found with a `stat` each and
    // resolved once (a failed resolution costs a `readlink` per component).
    for ancestor in lexical.ancestors().skip(1) {
        if std::fs::metadata(ancestor).is_ok()
            && let Ok(p) = std::fs::canonicalize(ancestor)
            && let Ok(rest) = lexical.strip_prefix(ancestor)
        {
            return p.join(rest);
        }
    }
    lexical
}

/// Whether `a` and `b` are the same directory: the same file on disk when
/// both exist (a `stat` each: the common case, where one is missing, costs
/// no walk up its ancestors), else the same path once resolved as far as
/// it exists.
pub(super) fn same_dir(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => (x.dev(), x.ino()) == (y.dev(), y.ino()),
        (Ok(_), Err(_)) | (Err(_), Ok(_)) => false,
        (Err(_), Err(_)) => resolve_existing(a) == resolve_existing(b),
    }
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
    let home_resolved = resolve_existing(home);
    // A directory inside the home directory (the usual `~/Sync/presence`)
    // is no system directory, whatever their links: they need not be
    // resolved (two dozen `readlink` calls a run). Not so for a home that
    // is `/`, a system directory or one just below (root's `/root`).
    let deep_home = home_resolved
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .count()
        >= 2;
    let inside_home =
        deep_home && resolved.starts_with(&home_resolved) && resolved != home_resolved;
    for h in [normalize(home), home_resolved] {
        refused.push((h, "the home directory".into()));
    }
    for s in SYSTEM_DIRS {
        let spelt = PathBuf::from(s);
        let resolved = (!inside_home).then(|| resolve_existing(&spelt));
        for p in std::iter::once(spelt).chain(resolved) {
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
