//! `--uninstall`: what setup added, found by its marker lines, and nothing
//! else (never records or the configuration, never a unit or agent edited
//! since setup wrote it unless `--force`).

use std::path::{Path, PathBuf};

use super::Platform;
use super::dir::syncthing_root;
use super::plan::{Action, Change, Note, read_small};
use super::stignore::{STIGNORE_LINE, STIGNORE_MARK};
use super::timers::{
    AGENTS, Launchctl, Marker, Owner, PLIST_MARK, TIMERS, UNIT_MARK, UNITS, agent_body, launchctl,
    packaged_units_start, systemd_user_works, timers_enabled, unit_body,
};

/// Whether setup may remove the file at `path`: setup wrote it and nobody
/// edited it since, or it was edited and `force` says remove it anyway. An
/// edited one kept is said in `notes`.
fn removable(
    path: &Path,
    marker: &Marker,
    body: Option<String>,
    force: bool,
    notes: &mut Vec<Note>,
) -> bool {
    match marker.owner_of(path, body.as_deref()) {
        Owner::Setup(_) => true,
        Owner::Edited if force => true,
        Owner::Edited => {
            notes.push(Note::Say(format!(
                "left {} alone: setup wrote it, but it was edited since; remove it yourself, or \
                 pass --force to have setup remove it",
                path.display()
            )));
            false
        }
        Owner::Missing | Owner::Copy | Owner::User(_) => false,
    }
}

/// What `--uninstall` removes: the unit files and agents carrying setup's
/// marker and unedited (the timers stopped first), and setup's lines in
/// `.stignore` and in the crontab.
pub(super) fn uninstall_plan(
    platform: &Platform,
    dir: &Path,
    force: bool,
    notes: &mut Vec<Note>,
) -> anyhow::Result<Vec<Change>> {
    let mut plan = Vec::new();
    let units: Vec<(&str, PathBuf)> = UNITS
        .iter()
        .map(|(n, shipped)| (*n, platform.unit_dir().join(n), shipped))
        .filter(|(_, p, shipped)| {
            let body = unit_body(shipped, &platform.binary).ok();
            removable(p, &UNIT_MARK, body, force, notes)
        })
        .map(|(n, p, _)| (n, p))
        .collect();
    // With the package's units setup only enabled the timers; else only the
    // timers it removes are stopped (an edited one kept runs on).
    let stop: Vec<&str> = if packaged_units_start(&platform.binary) {
        TIMERS.to_vec()
    } else {
        TIMERS
            .into_iter()
            .filter(|t| units.iter().any(|(n, _)| n == t))
            .collect()
    };
    if !stop.is_empty() && systemd_user_works() && timers_enabled() > 0 {
        plan.push(Change {
            what: format!("disable and stop {}", stop.join(" and ")),
            action: Action::Run(
                ["systemctl", "--user", "disable", "--now"]
                    .iter()
                    .chain(stop.iter())
                    .map(|s| s.to_string())
                    .collect(),
            ),
        });
    }
    for (_, p) in &units {
        plan.push(Change {
            what: format!("remove {}", p.display()),
            action: Action::Remove(p.clone()),
        });
    }
    if !units.is_empty() && systemd_user_works() {
        plan.push(Change {
            what: "reload systemd's user units".into(),
            action: Action::Run(
                ["systemctl", "--user", "daemon-reload"]
                    .map(String::from)
                    .to_vec(),
            ),
        });
    }
    for (name, shipped) in AGENTS {
        let path = platform.agent_dir().join(name);
        let body = agent_body(shipped, &platform.binary).ok();
        if !removable(&path, &PLIST_MARK, body, force, notes) {
            continue;
        }
        if cfg!(target_os = "macos") {
            plan.push(launchctl(Launchctl::Bootout, &path));
        }
        plan.push(Change {
            what: format!("remove {}", path.display()),
            action: Action::Remove(path),
        });
    }
    if let Some(root) = syncthing_root(dir, &platform.home) {
        let file = root.join(".stignore");
        if let Some(text) = read_small(&file).ok().flatten() {
            let pair = format!("{STIGNORE_MARK}\n{STIGNORE_LINE}\n");
            if let Some(at) = text.find(&pair) {
                let rest = format!("{}{}", &text[..at], &text[at + pair.len()..]);
                let what = format!("remove setup's lines from {}", file.display());
                let action = if rest.is_empty() {
                    Action::Remove(file)
                } else {
                    Action::Write {
                        path: file,
                        text: rest,
                    }
                };
                plan.push(Change { what, action });
            }
        }
    }
    super::cron::uninstall_plan(force, &mut plan, notes)?;
    Ok(plan)
}

/// The change that takes setup's hooks out of Claude Code's settings, if
/// any are there; a settings file setup cannot edit is left alone, and said.
pub(super) fn claude_plan(
    platform: &Platform,
    dir: &Path,
    notes: &mut Vec<Note>,
) -> Option<Change> {
    let link = super::claude::state_dir(&platform.home).join("settings.json");
    let synced = super::dir::synced_root(dir, &platform.home);
    match super::claude::read(&link, dir, synced.as_deref()).and_then(|s| s.uninstall()) {
        Ok(change) => change,
        Err(e) => {
            notes.push(Note::Say(format!(
                "left Claude Code's settings alone: {e:#}; remove presence's hooks from it by hand"
            )));
            None
        }
    }
}
