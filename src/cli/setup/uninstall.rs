//! `--uninstall`: what setup added, found by its marker lines, and nothing
//! else (never records or the configuration).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::Platform;
use super::dir::syncthing_root;
use super::plan::{Action, Change, read_small};
use super::stignore::{STIGNORE_LINE, STIGNORE_MARK};
use super::timers::{
    AGENTS, PLIST_MARK, TIMERS, UNIT_MARK, UNITS, packaged_units_start, quiet, systemd_user_works,
    timers_enabled,
};

/// What `--uninstall` removes: the unit files and agents carrying setup's
/// marker (the timers stopped first), and setup's lines in `.stignore`.
pub(super) fn uninstall_plan(
    platform: &Platform,
    dir: &Path,
    notes: &mut Vec<String>,
) -> anyhow::Result<Vec<Change>> {
    let mut plan = Vec::new();
    let ours = |path: &Path, mark: &str| {
        read_small(path)
            .ok()
            .flatten()
            .is_some_and(|t| t.lines().any(|l| l == mark))
    };
    let units: Vec<PathBuf> = UNITS
        .iter()
        .map(|(n, _)| platform.unit_dir().join(n))
        .filter(|p| ours(p, UNIT_MARK))
        .collect();
    // With the package's units setup only enabled the timers.
    let packaged = packaged_units_start(&platform.binary);
    if (!units.is_empty() || packaged) && systemd_user_works() && timers_enabled() > 0 {
        plan.push(Change {
            what: format!("disable and stop {}", TIMERS.join(" and ")),
            action: Action::Run(
                ["systemctl", "--user", "disable", "--now"]
                    .iter()
                    .chain(TIMERS.iter())
                    .map(|s| s.to_string())
                    .collect(),
            ),
        });
    }
    for p in &units {
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
    for (name, _) in AGENTS {
        let path = platform.agent_dir().join(name);
        if !ours(&path, PLIST_MARK) {
            continue;
        }
        if cfg!(target_os = "macos") {
            let uid = rustix::process::getuid().as_raw();
            plan.push(Change {
                what: format!("unload {name} with launchctl"),
                action: Action::Run(vec![
                    "launchctl".into(),
                    "bootout".into(),
                    format!("gui/{uid}"),
                    path.display().to_string(),
                ]),
            });
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
    let cron = quiet(Command::new("crontab").arg("-l")).is_some_and(|o| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .any(|l| !l.trim().starts_with('#') && l.contains("presence") && l.contains(" refresh"))
    });
    if cron {
        notes.push(
            "your crontab runs `presence refresh`: remove that line with `crontab -e`".into(),
        );
    }
    Ok(plan)
}
