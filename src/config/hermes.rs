//! Hermes Agent's local presence directory, found the way Hermes finds it,
//! and the built-in `hermes` profile that reads it in place.

use std::path::{Path, PathBuf};

use super::paths::same_dir;

/// The profile that exists without being defined: it reads Hermes Agent's
/// presence directory in place ([`hermes_dir`]), showing every label.
pub(crate) const HERMES_PROFILE: &str = "hermes";

/// Hermes Agent's local presence directory, found the way Hermes finds it:
/// `HERMES_SESSION_PRESENCE_DIR` names the directory itself; otherwise it
/// is `$HERMES_HOME/session-presence/active`, with `HERMES_HOME` defaulting
/// to `~/.hermes`. Like Hermes, values are trimmed and taken as given (no
/// `~`), a relative one against the current directory.
pub(crate) fn hermes_dir(home: &Path) -> PathBuf {
    hermes_dir_from(
        std::env::var_os("HERMES_SESSION_PRESENCE_DIR"),
        std::env::var_os("HERMES_HOME"),
        home,
        &std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
    )
}

/// Whether `expire` deletes other writers' garbage in `dir`: everywhere
/// but in Hermes Agent's own local presence directory, where removing
/// Hermes' records is Hermes' job.
pub(crate) fn expires_others_in(dir: &Path, home: &Path) -> bool {
    !is_hermes_dir(dir, home)
}

/// Whether `dir` is Hermes Agent's local presence directory.
pub(super) fn is_hermes_dir(dir: &Path, home: &Path) -> bool {
    same_dir(dir, &hermes_dir(home))
}

/// [`hermes_dir`] from the two variables, the home and the current directory.
pub(super) fn hermes_dir_from(
    presence_dir: Option<std::ffi::OsString>,
    hermes_home: Option<std::ffi::OsString>,
    home: &Path,
    cwd: &Path,
) -> PathBuf {
    let set = |v: Option<std::ffi::OsString>| {
        v.map(|v| PathBuf::from(v.to_string_lossy().trim()))
            .filter(|p| !p.as_os_str().is_empty())
    };
    let dir = match (set(presence_dir), set(hermes_home)) {
        (Some(dir), _) => dir,
        (None, Some(hermes_home)) => hermes_home.join("session-presence/active"),
        (None, None) => home.join(".hermes/session-presence/active"),
    };
    cwd.join(dir)
}
