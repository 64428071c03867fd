//! `presence open`: turning a record's endpoint hint into the argv of a
//! handler, and nothing else. Pure functions, no I/O: the binary runs what
//! `argv` returns.
//!
//! An endpoint comes from another device and may be hostile, so it is data
//! that fills slots, never a command. It is parsed by its scheme; every part
//! is checked (ASCII only, no control characters, no whitespace, no leading
//! `-`, a character set per part); each placeholder of a handler template
//! becomes part of exactly one argv element; no shell runs on this side.
//! What ssh hands to the remote shell is joined there into one command line,
//! so those values are single-quoted for it (built-in `ssh`) or must stay in
//! a conservative character set (the remote `tmux` session, every value a
//! configured template uses, `{url}` included).

mod argv;
mod endpoint;
mod handlers;
#[cfg(test)]
mod tests;

use crate::redact::REDACTED;

pub use argv::{Target, argv, shell_line, shell_quote};
pub use endpoint::Endpoint;
pub use handlers::{Handlers, builtin_description, platform_opener};

/// The schemes with a built-in handler.
pub const BUILTIN_SCHEMES: [&str; 5] = ["http", "https", "mosh", "ssh", "tmux"];

/// The placeholders a handler template may use.
pub const PLACEHOLDERS: [&str; 9] = [
    "url",
    "scheme",
    "user",
    "host",
    "port",
    "user_at_host",
    "path",
    "session",
    "session_id",
];

/// Why an endpoint cannot be opened. The message names the part at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The record has no endpoint.
    #[error("the session has no endpoint to open (its publisher set none)")]
    NoEndpoint,
    /// The endpoint carried a credential and was redacted.
    #[error("the endpoint was redacted (it carried a credential) and cannot be opened")]
    Redacted,
    /// A part of the endpoint (or a value a handler needs) is refused.
    #[error("refused to open: {} \"{value}\" {why}", part_name(field))]
    Invalid {
        /// The part: `endpoint`, `scheme`, `user`, `host`, `port`, `path`,
        /// `session`, `session_id`, or `url` (the whole endpoint, as a
        /// configured template's `{url}`).
        field: &'static str,
        /// The value as found. The message quotes it as it is: whoever
        /// prints it for a terminal makes it safe (the CLI's output layer
        /// does, once), and JSON keeps it exact.
        value: String,
        /// What is wrong with it.
        why: String,
    },
    /// No handler, built-in or configured, for the scheme.
    #[error("no handler for scheme '{scheme}'; handlers exist for: {known}")]
    UnknownScheme {
        /// The endpoint's scheme.
        scheme: String,
        /// The schemes with a handler, comma-separated.
        known: String,
    },
    /// A configured handler template is unusable.
    #[error("handler [open.handlers.{scheme}]: {why}")]
    Template {
        /// The scheme whose handler it is.
        scheme: String,
        /// What is wrong with it.
        why: String,
    },
}

fn invalid(field: &'static str, value: &str, why: impl Into<String>) -> OpenError {
    OpenError::Invalid {
        field,
        value: value.to_string(),
        why: why.into(),
    }
}

/// How an [`OpenError::Invalid`] names the part it refuses: the whole
/// endpoint as itself, any other part as the endpoint's.
fn part_name(field: &str) -> String {
    match field {
        // `url`: the whole endpoint, as a configured template's `{url}`.
        "endpoint" | "url" => "the endpoint".into(),
        part => format!("the endpoint's {part}"),
    }
}
