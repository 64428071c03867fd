//! The handlers in force per scheme: the built-ins and the configured
//! templates, each checked when it is read.

use std::collections::BTreeMap;

use super::argv::pieces;
use super::{BUILTIN_SCHEMES, OpenError};

/// The handlers in force: the built-ins, overridden or extended per scheme
/// by the configuration's `[open.handlers.SCHEME] command = [...]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Handlers {
    configured: BTreeMap<String, Vec<String>>,
}

impl Handlers {
    /// Checks each configured template: not empty, a literal program
    /// (no placeholder in the first element), only known placeholders.
    pub fn new(configured: BTreeMap<String, Vec<String>>) -> Result<Handlers, OpenError> {
        let mut checked = BTreeMap::new();
        for (scheme, command) in configured {
            let bad = |why: String| OpenError::Template {
                scheme: scheme.clone(),
                why,
            };
            let Some(program) = command.first() else {
                return Err(bad("`command` is empty".into()));
            };
            if program.is_empty() || program.contains(['{', '}']) {
                return Err(bad(
                    "the program (the first element of `command`) must be a literal name".into(),
                ));
            }
            for element in &command[1..] {
                pieces(element).map_err(bad)?;
            }
            checked.insert(scheme.to_ascii_lowercase(), command);
        }
        Ok(Handlers {
            configured: checked,
        })
    }

    /// The configured template for `scheme`, if any.
    pub fn configured(&self, scheme: &str) -> Option<&[String]> {
        self.configured.get(scheme).map(Vec::as_slice)
    }

    /// Every scheme with a handler, sorted.
    pub fn schemes(&self) -> Vec<String> {
        let mut all: Vec<String> = BUILTIN_SCHEMES.iter().map(|s| s.to_string()).collect();
        all.extend(self.configured.keys().cloned());
        all.sort();
        all.dedup();
        all
    }
}

/// What a built-in handler runs, for `presence config show`. `opener` is
/// the platform's (see [`platform_opener`]).
pub fn builtin_description(scheme: &str, opener: &str) -> Option<String> {
    // Shell-like notation, `[…]` optional; no shell ever runs it.
    let d = match scheme {
        "tmux" => "tmux attach -t {session}  (HOST is this machine), else \
                   ssh -t [-p {port}] -- {user_at_host} tmux attach -t {session}"
            .to_string(),
        "ssh" => "ssh -t [-p {port}] -- {user_at_host} \
                  ['cd -- {path} && exec \"${SHELL:-/bin/sh}\" -l']"
            .to_string(),
        "mosh" => "mosh [--ssh='ssh -p {port}'] -- {user_at_host}".to_string(),
        "http" | "https" => format!("{opener} {{url}}"),
        _ => return None,
    };
    Some(d)
}

/// The program that opens a URL on this platform.
pub fn platform_opener() -> &'static str {
    if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    }
}
