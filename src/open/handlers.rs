//! The handlers in force per scheme: the built-ins and the configured
//! templates, each checked when it is read.

use std::collections::BTreeMap;

use super::argv::pieces;
use super::{BUILTIN_SCHEMES, OpenError};

/// The handlers in force: the built-ins, overridden or extended per scheme
/// by the configuration's `[open.handlers.SCHEME] command = [...]`, with an
/// optional `inside_tmux = [...]` that runs instead when `presence open`
/// runs inside tmux.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Handlers {
    configured: BTreeMap<String, Vec<String>>,
    inside_tmux: BTreeMap<String, Vec<String>>,
}

/// Checks one template, `key` naming it in the message: not empty, a
/// literal program (no placeholder in the first element), only known
/// placeholders.
fn check(scheme: &str, key: &str, command: &[String]) -> Result<(), OpenError> {
    let bad = |why: String| OpenError::Template {
        scheme: scheme.to_string(),
        why,
    };
    let Some(program) = command.first() else {
        return Err(bad(format!("`{key}` is empty")));
    };
    if program.is_empty() || program.contains(['{', '}']) {
        return Err(bad(format!(
            "the program (the first element of `{key}`) must be a literal name"
        )));
    }
    for element in &command[1..] {
        pieces(element).map_err(|why| bad(format!("`{key}`: {why}")))?;
    }
    Ok(())
}

impl Handlers {
    /// Checks each configured template (`command`): not empty, a literal
    /// program (no placeholder in the first element), only known
    /// placeholders.
    pub fn new(configured: BTreeMap<String, Vec<String>>) -> Result<Handlers, OpenError> {
        let mut checked = BTreeMap::new();
        for (scheme, command) in configured {
            check(&scheme, "command", &command)?;
            checked.insert(scheme.to_ascii_lowercase(), command);
        }
        Ok(Handlers {
            configured: checked,
            inside_tmux: BTreeMap::new(),
        })
    }

    /// Adds the `inside_tmux` templates, checked as `command` is: each runs
    /// instead of its scheme's `command` when `presence open` runs inside
    /// tmux. A scheme needs a `command` for one.
    pub fn with_inside_tmux(
        mut self,
        templates: BTreeMap<String, Vec<String>>,
    ) -> Result<Handlers, OpenError> {
        for (scheme, command) in templates {
            check(&scheme, "inside_tmux", &command)?;
            let scheme_lc = scheme.to_ascii_lowercase();
            if !self.configured.contains_key(&scheme_lc) {
                return Err(OpenError::Template {
                    scheme,
                    why: "`inside_tmux` needs a `command` next to it (what runs outside tmux)"
                        .into(),
                });
            }
            self.inside_tmux.insert(scheme_lc, command);
        }
        Ok(self)
    }

    /// The configured template for `scheme` (its `command`), if any.
    pub fn configured(&self, scheme: &str) -> Option<&[String]> {
        self.configured.get(scheme).map(Vec::as_slice)
    }

    /// The configured `inside_tmux` template for `scheme`, if any.
    pub fn configured_inside_tmux(&self, scheme: &str) -> Option<&[String]> {
        self.inside_tmux.get(scheme).map(Vec::as_slice)
    }

    /// The template that runs for `scheme`: inside tmux its `inside_tmux`
    /// if it has one, else its `command`; None for a built-in.
    pub(super) fn template(&self, scheme: &str, inside_tmux: bool) -> Option<&[String]> {
        inside_tmux
            .then(|| self.configured_inside_tmux(scheme))
            .flatten()
            .or_else(|| self.configured(scheme))
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
        "tmux" => "tmux attach -t {session}  (HOST is this machine; inside tmux: \
                   tmux switch-client -t {session}), else \
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
