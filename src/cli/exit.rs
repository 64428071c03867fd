//! The process exit status, decided here and nowhere else: every subcommand
//! returns an [`Exit`], and [`of_error`] classifies the error that ended one.
//! The library reports what went wrong; which status that means is the
//! command's business. docs/json-output.md lists the codes.

use std::process::ExitCode;

use presence::{ConfigError, Error};

use super::UsageError;

/// How the process ends. A fixed code is the variant's discriminant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// 0: the command did what was asked. An empty listing, and a closed
    /// stdout pipe, count as success.
    Ok = 0,
    /// 1: a runtime failure (unreadable directory, invalid configuration
    /// file, `show` found nothing, a `doctor` check failed).
    Failure = 1,
    /// 2: the command line is wrong (a bad flag or value, an unknown
    /// profile, a missing `--config` file, a nonexistent `--owner-pid`).
    Usage = 2,
    /// 3: a publish refused because it would carry a credential or an
    /// endpoint that will not open (`--strict`), or a credential-shaped id;
    /// nothing was written.
    Refused = 3,
    /// 126: `run` found CMD but could not start it.
    CannotRun = 126,
    /// 127: `run` did not find CMD.
    NotFound = 127,
    /// `run`: CMD's own status, or 128 + N when signal N killed it.
    Child(u8),
}

impl Exit {
    /// The status the process exits with.
    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Failure => 1,
            Exit::Usage => 2,
            Exit::Refused => 3,
            Exit::CannotRun => 126,
            Exit::NotFound => 127,
            Exit::Child(code) => code,
        }
    }

    /// Success, or [`Exit::Failure`] when `failed`.
    pub fn failure_if(failed: bool) -> Exit {
        if failed { Exit::Failure } else { Exit::Ok }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit.code())
    }
}

/// The status for an error that ended a command: the first typed error in its
/// chain decides; anything else is a runtime failure.
pub fn of_error(err: &anyhow::Error) -> Exit {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<Error>() {
            return of_library(e);
        }
        if let Some(e) = cause.downcast_ref::<ConfigError>() {
            return of_config(e);
        }
        if cause.is::<UsageError>() {
            return Exit::Usage;
        }
    }
    Exit::Failure
}

// The library's errors are `#[non_exhaustive]`: a variant added later is a
// runtime failure until it is given a status here.
fn of_library(e: &Error) -> Exit {
    match e {
        Error::Refused { .. } | Error::CredentialId { .. } => Exit::Refused,
        Error::InvalidRecord { .. } | Error::NoSuchOwner { .. } => Exit::Usage,
        Error::Config(e) => of_config(e),
        Error::Io { .. }
        | Error::DeviceId { .. }
        | Error::NoHome { .. }
        | Error::Ended { .. }
        | Error::DirectoryReplaced { .. }
        | Error::NoDirectory { .. }
        | Error::NotADirectory { .. }
        | Error::DirectoryVanished { .. }
        | Error::KeptChanging { .. } => Exit::Failure,
        _ => Exit::Failure,
    }
}

/// A usage error when the command line (or the environment standing for it)
/// named something that is not there or not allowed (a profile, a config
/// file, a `--dir`); a failure when the file itself is at fault (its
/// `default_profile` or `dir`).
fn of_config(e: &ConfigError) -> Exit {
    match e {
        ConfigError::NotFound { .. } => Exit::Usage,
        ConfigError::UnknownProfile {
            from_command_line, ..
        }
        | ConfigError::RefusedDir {
            from_command_line, ..
        } => {
            if *from_command_line {
                Exit::Usage
            } else {
                Exit::Failure
            }
        }
        ConfigError::Read { .. }
        | ConfigError::Parse { .. }
        | ConfigError::Invalid { .. }
        | ConfigError::Unusable { .. } => Exit::Failure,
        _ => Exit::Failure,
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn refused_dir(from_command_line: bool) -> ConfigError {
        ConfigError::RefusedDir {
            dir: "/".into(),
            resolved: None,
            what: "the root directory".into(),
            origin: "--dir".into(),
            from_command_line,
        }
    }

    fn unknown_profile(origin: &str, from_command_line: bool) -> ConfigError {
        ConfigError::UnknownProfile {
            name: "work".into(),
            known: vec!["default".into()],
            path: "c.toml".into(),
            origin: origin.into(),
            from_command_line,
        }
    }

    #[test]
    fn the_first_typed_error_in_the_chain_decides() {
        let cases: Vec<(anyhow::Error, Exit)> = vec![
            (
                Error::Refused {
                    fields: vec!["title".into()],
                }
                .into(),
                Exit::Refused,
            ),
            (
                Error::CredentialId {
                    field: "session_id".into(),
                    kind: "token".into(),
                }
                .into(),
                Exit::Refused,
            ),
            (Error::NoSuchOwner { pid: 1 }.into(), Exit::Usage),
            (Error::NoHome { what: "data" }.into(), Exit::Failure),
            (Error::Config(refused_dir(true)).into(), Exit::Usage),
            (refused_dir(false).into(), Exit::Failure),
            (
                ConfigError::NotFound {
                    path: PathBuf::from("x.toml"),
                    explicit: true,
                    from_env: false,
                }
                .into(),
                Exit::Usage,
            ),
            (unknown_profile("--profile", true).into(), Exit::Usage),
            (
                unknown_profile("$PRESENCE_PROFILE", true).into(),
                Exit::Usage,
            ),
            // `default_profile` names it: the file is at fault.
            (
                unknown_profile("default_profile", false).into(),
                Exit::Failure,
            ),
            (UsageError("bad".into()).into(), Exit::Usage),
            (anyhow::anyhow!("plain"), Exit::Failure),
            (
                anyhow::Error::from(Error::Refused { fields: Vec::new() })
                    .context("cannot publish"),
                Exit::Refused,
            ),
        ];
        for (err, want) in cases {
            assert_eq!(of_error(&err), want, "{err:#}");
        }
    }

    #[test]
    fn codes_are_the_documented_ones() {
        let codes: Vec<u8> = [
            Exit::Ok,
            Exit::Failure,
            Exit::Usage,
            Exit::Refused,
            Exit::CannotRun,
            Exit::NotFound,
            Exit::Child(0),
            Exit::Child(137),
        ]
        .map(Exit::code)
        .into();
        assert_eq!(codes, [0, 1, 2, 3, 126, 127, 0, 137]);
        assert_eq!(Exit::failure_if(true), Exit::Failure);
        assert_eq!(Exit::failure_if(false), Exit::Ok);
    }

    #[test]
    fn the_documented_table_lists_every_fixed_code() {
        let doc = include_str!("../../docs/json-output.md");
        let table = doc
            .split_once("## Exit codes")
            .map(|(_, t)| t)
            .expect("docs/json-output.md has an exit codes section");
        let documented: Vec<u8> = table
            .lines()
            .filter_map(|l| l.strip_prefix("| ")?.split_once(" |")?.0.parse().ok())
            .collect();
        let fixed = [
            Exit::Ok,
            Exit::Failure,
            Exit::Usage,
            Exit::Refused,
            Exit::CannotRun,
            Exit::NotFound,
        ]
        .map(Exit::code);
        assert_eq!(documented, fixed);
    }
}
