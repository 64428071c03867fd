//! Typed errors of the library. Every variant that concerns a file carries its
//! path, and the message says what to do next. The variants say what went
//! wrong, never how the process should end: the binary adds context with
//! `anyhow` and decides the exit status from the variant.
//!
//! A variant that carries an OS error says it in its own message and does
//! not return it as its `source()`: a report that prints the chain of
//! causes (anyhow's `{:#}`) would otherwise print it twice.

use std::io;
use std::path::{Path, PathBuf};

/// Result alias used throughout the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A filesystem operation failed.
    #[error("cannot {op} {}: {error}", path.display())]
    Io {
        /// What we were doing ("create directory", "write record", …).
        op: &'static str,
        /// The path it concerned.
        path: PathBuf,
        /// The OS error (part of the message, not a `source()`).
        error: io::Error,
    },

    /// The configuration file could not be used.
    #[error(transparent)]
    Config(#[from] ConfigError),

    /// A record given to publish breaks a rule of the record format.
    #[error("invalid record: {field}: {message}")]
    InvalidRecord {
        /// The offending field (`session_id`, `metadata`, …).
        field: String,
        /// What is wrong and how to fix it.
        message: String,
    },

    /// `--strict` (or `strict = true`) refused a publish that would have needed redaction.
    #[error(
        "refused to publish: {} would carry a credential ({}); nothing was written. \
         Remove the secret, or publish without --strict to have it redacted",
        if .fields.len() == 1 { "a field" } else { "fields" },
        .fields.join(", ")
    )]
    Refused {
        /// Names of the fields (never their values) that needed redaction.
        fields: Vec<String>,
    },

    /// A session id, session key or instance id looks like a credential.
    /// Redacting it would mangle the id (two sessions could end up sharing a
    /// file, and `show` and `clear` could not find it), so nothing is written.
    #[error(
        "{field} looks like a credential ({kind}); refusing to publish it: choose an id that \
         is not a credential"
    )]
    CredentialId {
        /// `session_id`, `session_key` or `instance_id`.
        field: String,
        /// The kind of credential it looks like (never the value).
        kind: String,
    },

    /// The local device id file exists but does not hold a device id.
    #[error(
        "device id file {} is corrupt ({message}); delete it and a new id will be created \
         (this device's existing records will then count as another device's)",
        path.display()
    )]
    DeviceId {
        /// The device id file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },

    /// No home directory could be determined for the local data, config or state dirs.
    #[error("cannot find the home directory (set HOME); it is needed for the {what}")]
    NoHome {
        /// Which directory was wanted.
        what: &'static str,
    },

    /// A kept-alive record was cleared or replaced by another writer.
    #[error(
        "record {file} was cleared or replaced by another writer; it is not written back \
         (publish again to start a new session life)"
    )]
    Ended {
        /// The record file.
        file: String,
    },

    /// The presence directory, or a directory above it, became a symlink
    /// after the directory was resolved; it is not followed.
    #[error(
        "presence directory {} cannot be used: {} became a symbolic link after the directory \
         was resolved, and a symlink is followed only when it is already there at start; \
         nothing was changed. Find out what replaced it, put the directory back (or point \
         `dir` at the link's target), and run again",
        path.display(), link.display()
    )]
    DirectoryReplaced {
        /// The resolved presence directory.
        path: PathBuf,
        /// The component that is now a symlink.
        link: PathBuf,
    },

    /// The presence directory does not exist (and this operation does not create it).
    #[error("presence directory {} does not exist; publish once (which creates it) or create it", dir.display())]
    NoDirectory {
        /// The directory.
        dir: PathBuf,
    },

    /// Something other than a directory is where the presence directory,
    /// or a directory above it, should be.
    #[error(
        "{} is not a directory; point --dir (or the profile's `dir` in the config file) at a \
         directory",
        dir.display()
    )]
    NotADirectory {
        /// The path that is not a directory.
        dir: PathBuf,
    },

    /// The presence directory went away while it was watched, and did not come back.
    #[error(
        "presence directory {} disappeared and did not come back within {} s; check the \
         mount or the sync engine, then watch again",
        dir.display(), waited.as_secs()
    )]
    DirectoryVanished {
        /// The directory.
        dir: PathBuf,
        /// How long the watcher waited for it.
        waited: std::time::Duration,
    },

    /// A record file kept changing under a write (a sync engine was
    /// replacing it each time), so nothing was written.
    #[error("{} kept changing while it was being written (a sync engine replacing it?); nothing was written, try again", path.display())]
    KeptChanging {
        /// The record file.
        path: PathBuf,
    },

    /// The command to run as a session's owner could not be started
    /// ([`crate::Registry::spawn`]); nothing was published.
    #[error("cannot run {program}: {error}; nothing was published")]
    Spawn {
        /// The program, as given.
        program: String,
        /// Why it could not start: `NotFound` when there is no such
        /// program, `PermissionDenied` when it is not executable (part of
        /// the message, not a `source()`).
        error: io::Error,
    },

    /// The owner process given with `--owner-pid` does not exist.
    #[error("owner process {pid} does not exist; pass the pid of a running process to --owner-pid")]
    NoSuchOwner {
        /// The pid.
        pid: u32,
    },
}

impl Error {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, error: io::Error) -> Self {
        Error::Io {
            op,
            path: path.into(),
            error,
        }
    }
}

/// Errors of the configuration file and the profile resolver.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// An explicitly named configuration file does not exist.
    #[error(
        "{}",
        if *from_env {
            format!(
                "config file {} (from $PRESENCE_CONFIG) does not exist; create it with \
                 `presence config init`, or unset PRESENCE_CONFIG to use the defaults",
                path.display()
            )
        } else {
            format!(
                "config file {} does not exist; create it with `presence --config {} config \
                 init`, or drop --config to use the defaults",
                path.display(), path.display()
            )
        }
    )]
    NotFound {
        /// The path that was named.
        path: PathBuf,
        /// Whether the user named it (`--config`, `PRESENCE_CONFIG`).
        explicit: bool,
        /// Whether `PRESENCE_CONFIG` named it rather than `--config`.
        from_env: bool,
    },

    /// The file could not be read.
    #[error("cannot read config file {}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error (part of the message, not a `source()`).
        error: io::Error,
    },

    /// The file is not valid TOML or does not match the schema.
    #[error("config file {} is invalid: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },

    /// A setting has a value outside its range.
    #[error("config file {}: profile '{profile}': {message}", path.display())]
    Invalid {
        /// The file (or `<built-in defaults>`).
        path: PathBuf,
        /// The profile concerned.
        profile: String,
        /// What is wrong and the fix.
        message: String,
    },

    /// The configuration file is not a regular file of at most 1 MiB.
    #[error("cannot use config file {}: {problem}; {fix}", path.display())]
    Unusable {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
        /// What to do.
        fix: &'static str,
    },

    /// A presence directory that `expire` must never clean: `/`, the home
    /// directory or a top-level system directory.
    #[error(
        "refusing {} as the presence directory{}: it is {what}, and `expire` deletes files \
         there. Set {origin} to a directory of its own, e.g. ~/Sync/presence",
        dir.display(),
        match resolved { Some(r) => format!(" (it resolves to {})", r.display()), None => String::new() }
    )]
    RefusedDir {
        /// The directory as given.
        dir: PathBuf,
        /// Where it leads, when that differs from `dir`.
        resolved: Option<PathBuf>,
        /// What it is (`the root directory`, `the home directory`, `system directory /etc`).
        what: String,
        /// Where it was set: `--dir`, or the profile's `dir` in the file.
        origin: String,
        /// Whether the command line gave it (a usage error).
        from_command_line: bool,
    },

    /// The selected profile is not defined.
    #[error("{}", unknown_profile(name, known, path, origin))]
    UnknownProfile {
        /// The requested name.
        name: String,
        /// The profiles that exist.
        known: Vec<String>,
        /// The config file consulted.
        path: PathBuf,
        /// What named it: `--profile`, `$PRESENCE_PROFILE` or
        /// `default_profile` (the file's).
        origin: String,
        /// Whether the command line or the environment named it (a usage
        /// error), not the file.
        from_command_line: bool,
    },
}

/// The message of [`ConfigError::UnknownProfile`]: what named the profile,
/// the profiles there are, and the fix for that origin.
fn unknown_profile(name: &str, known: &[String], path: &Path, origin: &str) -> String {
    let known = known.join(", ");
    let path = path.display();
    let table = format!("[profiles.{}]", toml_key(name));
    match (origin, name.is_empty()) {
        ("default_profile", true) => format!(
            "default_profile = \"\" in {path} names no profile (known: {known}); remove the line \
             or name a known profile"
        ),
        ("default_profile", false) => format!(
            "default_profile = {} in {path} names no profile (known: {known}); define {table} \
             there or set default_profile to a known one",
            toml::Value::String(name.into())
        ),
        ("$PRESENCE_PROFILE", true) => format!(
            "PRESENCE_PROFILE is set but empty (known: {known}); unset it or name a known profile"
        ),
        ("$PRESENCE_PROFILE", false) => format!(
            "unknown profile '{name}' (from $PRESENCE_PROFILE; known: {known}); unset \
             PRESENCE_PROFILE or define {table} in {path}"
        ),
        (flag, true) => format!(
            "{flag} '' names no profile (known: {known}); pass one of them, or leave {flag} out \
             to use the default profile"
        ),
        (_, false) => format!(
            "unknown profile '{name}' (known: {known}); define {table} in {path} or pick a known \
             one"
        ),
    }
}

/// `name` as a TOML key: bare when it can be, quoted otherwise.
fn toml_key(name: &str) -> String {
    let bare = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        name.to_string()
    } else {
        toml::Value::String(name.into()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The OS error is in the message and not a `source()` as well, so
    /// that a report of the chain (anyhow's `{:#}`) prints it once.
    #[test]
    fn an_os_error_is_told_once() {
        let os = || io::Error::from_raw_os_error(libc::ENOTDIR);
        let errors: Vec<anyhow::Error> = vec![
            Error::io("open directory", "/x", os()).into(),
            Error::Spawn {
                program: "p".into(),
                error: os(),
            }
            .into(),
            ConfigError::Read {
                path: "/c.toml".into(),
                error: os(),
            }
            .into(),
            Error::Config(ConfigError::Read {
                path: "/c.toml".into(),
                error: os(),
            })
            .into(),
        ];
        let told = os().to_string();
        for e in errors {
            let report = format!("{:#}", e.context("cannot go on"));
            assert_eq!(report.matches(&told).count(), 1, "{report}");
        }
    }
}
