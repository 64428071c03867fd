//! The agents installed on this device, and which of them setup turns
//! discovery on for (`[discover] agents`): what `--agents` says, else what
//! the user answers on a terminal. Publishing one's sessions to the other
//! devices is a choice about privacy, so `--yes` alone never makes it:
//! setup says what it found and the option that turns discovery on.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use clap::ValueEnum;

use super::config::{agents_value, same_agents};
use super::plan::{Note, ask};
use crate::cli::UsageError;
use crate::cli::output::Out;

/// A value of `--agents`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AgentArg {
    /// Claude Code (~/.claude, or $CLAUDE_CONFIG_DIR)
    ClaudeCode,
    /// Codex CLI (~/.codex, or $CODEX_HOME)
    Codex,
    /// Hermes Agent (~/.hermes, or $HERMES_HOME)
    Hermes,
    /// OpenCode (~/.local/share/opencode, or $XDG_DATA_HOME/opencode)
    Opencode,
    /// Every one of them found on this device
    Found,
    /// None: turn discovery off
    None,
}

impl AgentArg {
    /// The agent's name as `[discover] agents` spells it (`None` for
    /// `found` and `none`).
    fn agent(self) -> Option<&'static str> {
        let name = self.to_possible_value()?.get_name().to_string();
        presence::AGENTS.into_iter().find(|a| *a == name)
    }
}

/// An agent found on this device, and how.
#[derive(Debug, PartialEq)]
pub(super) struct Found {
    pub(super) agent: &'static str,
    /// Its state directory, or its program on PATH, in words.
    pub(super) how: String,
}

/// Where each agent keeps its state, and its program's name.
fn places(home: &Path) -> [(&'static str, PathBuf, &'static str); 4] {
    let var = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    [
        ("claude-code", super::claude::state_dir(home), "claude"),
        (
            "codex",
            var("CODEX_HOME").unwrap_or_else(|| home.join(".codex")),
            "codex",
        ),
        (
            "hermes",
            var("HERMES_HOME").unwrap_or_else(|| home.join(".hermes")),
            "hermes",
        ),
        (
            "opencode",
            var("XDG_DATA_HOME")
                .unwrap_or_else(|| home.join(".local/share"))
                .join("opencode"),
            "opencode",
        ),
    ]
}

/// The agents installed here: those whose state directory exists or whose
/// program is on PATH, in [`presence::AGENTS`]' order.
pub(super) fn found(home: &Path) -> Vec<Found> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    places(home)
        .into_iter()
        .filter_map(|(agent, dir, program)| {
            let how = if dir.is_dir() {
                dir.display().to_string()
            } else {
                let bin = std::env::split_paths(&path)
                    .filter(|d| d.is_absolute())
                    .map(|d| d.join(program))
                    .find(|p| {
                        std::fs::metadata(p)
                            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                    })?;
                bin.display().to_string()
            };
            Some(Found { agent, how })
        })
        .collect()
}

/// The found agents in words: `claude-code (~/.claude), codex (/usr/bin/codex)`.
pub(super) fn listed(found: &[Found]) -> String {
    let each: Vec<String> = found
        .iter()
        .map(|f| format!("{} ({})", f.agent, f.how))
        .collect();
    each.join(", ")
}

/// What discovery publishes, in words.
pub(super) const PUBLISHES: &str = "the agent's name, its status (working, waiting or idle) \
    and the session's title (the agent's own, else the directory's name), never what you type";

/// The `[discover] agents` setup is to write, `None` to leave them as they
/// are: `--agents` (`found`: those found here; `none`: off), else, on a
/// terminal, those already on and, if the user says yes, the ones found
/// that are not. What setup found and left off is said in `notes`.
pub(super) fn choose(
    arg: Option<&[AgentArg]>,
    current: &[&'static str],
    found: &[Found],
    interactive: bool,
    out: &mut Out,
    notes: &mut Vec<Note>,
) -> anyhow::Result<Option<Vec<&'static str>>> {
    if let Some(arg) = arg {
        if arg.len() > 1 && arg.iter().any(|a| a.agent().is_none()) {
            return Err(UsageError(
                "--agents takes agent names (claude-code, codex, hermes, opencode), or `found` \
                 or `none` alone"
                    .into(),
            )
            .into());
        }
        let named: Vec<&'static str> = match arg.first() {
            Some(AgentArg::Found) => {
                if found.is_empty() {
                    notes.push(Note::Say(
                        "no agent found on this device (no state directory, no program on PATH)"
                            .into(),
                    ));
                }
                found.iter().map(|f| f.agent).collect()
            }
            Some(AgentArg::None) | None => Vec::new(),
            _ => arg.iter().filter_map(|a| a.agent()).collect(),
        };
        let mut wanted: Vec<&'static str> = Vec::new();
        for a in named {
            if !wanted.contains(&a) {
                wanted.push(a);
            }
        }
        let absent: Vec<&str> = wanted
            .iter()
            .filter(|a| !found.iter().any(|f| f.agent == **a))
            .copied()
            .collect();
        if !absent.is_empty() {
            notes.push(Note::Say(format!(
                "{} not found on this device (no state directory, no program on PATH): \
                 discovery publishes their sessions once they run here",
                absent.join(", ")
            )));
        }
        if !wanted.is_empty() && same_agents(&wanted, current) {
            notes.push(Note::Say(format!(
                "discovery is on for {}",
                current.join(", ")
            )));
        }
        return Ok(Some(wanted));
    }
    let new: Vec<&'static str> = found
        .iter()
        .map(|f| f.agent)
        .filter(|a| !current.contains(a))
        .collect();
    if new.is_empty() {
        if !current.is_empty() {
            notes.push(Note::Say(format!(
                "discovery is on for {}",
                current.join(", ")
            )));
        }
        return Ok(None);
    }
    let mut all = current.to_vec();
    all.extend(&new);
    let new_found: Vec<Found> = found
        .iter()
        .filter(|f| new.contains(&f.agent))
        .map(|f| Found {
            agent: f.agent,
            how: f.how.clone(),
        })
        .collect();
    if interactive {
        out.say(format_args!("Agents found here: {}", listed(&new_found)))?;
        out.say(format_args!(
            "Discovery publishes each of their live sessions to your other devices: {PUBLISHES}."
        ))?;
        if ask(out, &format!("Turn on discovery for {}?", new.join(", ")))? {
            return Ok(Some(all));
        }
    }
    let how = if same_agents(&new, &all) {
        "--agents found".to_string()
    } else {
        format!("--agents {}", all.join(","))
    };
    notes.push(Note::Say(format!(
        "found {} here; discovery of their sessions is off{}. `presence setup {how}` turns it \
         on ([discover] agents = {} in the configuration): the refresher then publishes each \
         of their live sessions, with {PUBLISHES}",
        listed(&new_found),
        if current.is_empty() {
            String::new()
        } else {
            format!(" (it is on for {})", current.join(", "))
        },
        agents_value(&all)
    )));
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_values_are_the_agents_discovery_knows() {
        let names: Vec<&str> = AgentArg::value_variants()
            .iter()
            .filter_map(|a| a.agent())
            .collect();
        assert_eq!(names, presence::AGENTS);
        assert_eq!(AgentArg::Found.agent(), None);
        assert_eq!(AgentArg::None.agent(), None);
    }
}
