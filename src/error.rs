//! Typed errors of the library. Every variant that concerns a file carries its
//! path, and the message says what to do next. The variants say what went
//! wrong, never how the process should end: the binary adds context with
//! `anyhow` and decides the exit status from the variant.

use std::io;
use std::path::PathBuf;

/// Result alias used throughout the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A filesystem operation failed.
    #[error("cannot {op} {}: {source}", path.display())]
    Io {
        /// What we were doing ("create directory", "write record", …).
        op: &'static str,
        /// The path it concerned.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
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

    /// Something other than a directory is where the presence directory should be.
    #[error("{} exists but is not a directory; remove it or point `dir` elsewhere", dir.display())]
    NotADirectory {
        /// The path.
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
    #[error("cannot run {program}: {source}; nothing was published")]
    Spawn {
        /// The program, as given.
        program: String,
        /// Why it could not start: `NotFound` when there is no such
        /// program, `PermissionDenied` when it is not executable.
        #[source]
        source: io::Error,
    },

    /// The owner process given with `--owner-pid` does not exist.
    #[error("owner process {pid} does not exist; pass the pid of a running process to --owner-pid")]
    NoSuchOwner {
        /// The pid.
        pid: u32,
    },
}

impl Error {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            op,
            path: path.into(),
            source,
        }
    }
}

/// Errors of the configuration file and the profile resolver.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// An explicitly named configuration file does not exist.
    #[error(
        "config file {} does not exist; create it with `presence --config {} config init`, \
         or drop --config / PRESENCE_CONFIG to use the defaults",
        path.display(), path.display()
    )]
    NotFound {
        /// The path that was named.
        path: PathBuf,
        /// Whether the user named it (`--config`, `PRESENCE_CONFIG`).
        explicit: bool,
    },

    /// The file could not be read.
    #[error("cannot read config file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
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
    #[error(
        "unknown profile '{name}' (known: {}); define [profiles.{name}] in {} or pick a known one",
        known.join(", "), path.display()
    )]
    UnknownProfile {
        /// The requested name.
        name: String,
        /// The profiles that exist.
        known: Vec<String>,
        /// The config file consulted.
        path: PathBuf,
    },
}
