//! What keeps records refreshed: systemd user units, launchd agents or a
//! crontab line, each as shipped in docs/ with the running binary's path
//! and setup's marker.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::plan::{Action, Change, read_small};
use super::{Platform, Timer};

/// The first line of every unit file and launchd agent setup writes.
pub(super) const UNIT_MARK: &str =
    "# Installed by `presence setup`; `presence setup --uninstall` removes it.";
pub(super) const PLIST_MARK: &str =
    "<!-- Installed by `presence setup`; `presence setup --uninstall` removes it. -->";
/// The timers `systemctl --user enable` starts.
pub(super) const TIMERS: [&str; 2] = ["presence-refresh.timer", "presence-expire.timer"];
/// The user units, as docs/systemd ships them (with `ExecStart=presence …`).
pub(super) const UNITS: [(&str, &str); 4] = [
    (
        "presence-refresh.service",
        include_str!("../../../docs/systemd/presence-refresh.service"),
    ),
    (
        "presence-refresh.timer",
        include_str!("../../../docs/systemd/presence-refresh.timer"),
    ),
    (
        "presence-expire.service",
        include_str!("../../../docs/systemd/presence-expire.service"),
    ),
    (
        "presence-expire.timer",
        include_str!("../../../docs/systemd/presence-expire.timer"),
    ),
];
/// The launchd agents, as docs/launchd ships them (for `~/.cargo/bin`).
pub(super) const AGENTS: [(&str, &str); 2] = [
    (
        "dev.presence.refresh.plist",
        include_str!("../../../docs/launchd/dev.presence.refresh.plist"),
    ),
    (
        "dev.presence.expire.plist",
        include_str!("../../../docs/launchd/dev.presence.expire.plist"),
    ),
];

/// Whether a systemd user manager answers.
pub(super) fn systemd_user_works() -> bool {
    quiet(Command::new("systemctl").args(["--user", "show-environment"]))
        .is_some_and(|o| o.status.success())
}

/// Runs `cmd` with no input and its output captured; `None` when it cannot start.
pub(super) fn quiet(cmd: &mut Command) -> Option<std::process::Output> {
    cmd.stdin(Stdio::null()).output().ok()
}

/// A unit as shipped, with the binary's path and setup's marker.
pub(super) fn unit_text(shipped: &str, binary: &Path) -> String {
    let mut text = format!("{UNIT_MARK}\n");
    for line in shipped.lines() {
        match line.strip_prefix("ExecStart=presence ") {
            Some(rest) => text.push_str(&format!("ExecStart={} {rest}", binary.display())),
            None => text.push_str(line),
        }
        text.push('\n');
    }
    text
}

/// How many of the timers the user manager has enabled.
pub(super) fn timers_enabled() -> usize {
    // One line per unit; the exit status is 0 if any one is enabled.
    quiet(
        Command::new("systemctl")
            .args(["--user", "is-enabled"])
            .args(TIMERS),
    )
    .map_or(0, |o| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| l.trim() == "enabled")
            .count()
    })
}

/// Whether the system's user units (the Debian package's, in
/// `/usr/lib/systemd/user`) are all there and start `binary`.
pub(super) fn packaged_units_start(binary: &Path) -> bool {
    let dir = Path::new("/usr/lib/systemd/user");
    UNITS.iter().all(|(name, shipped)| {
        let Ok(Some(text)) = read_small(&dir.join(name)) else {
            return false;
        };
        let want = unit_text(shipped, binary);
        text == want[UNIT_MARK.len() + 1..]
    })
}

/// A launchd agent as shipped, with the binary's path and setup's marker.
pub(super) fn agent_text(shipped: &str, binary: &Path) -> String {
    // Inside `sh -c "exec \"PATH\" …"`, then inside XML.
    let sh: String = binary
        .display()
        .to_string()
        .chars()
        .flat_map(|c| match c {
            '"' | '$' | '`' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect();
    let xml = sh
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    shipped
        .replacen("?>\n", &format!("?>\n{PLIST_MARK}\n"), 1)
        .replace("$HOME/.cargo/bin/presence", &xml)
}

pub(super) fn timer_plan(
    platform: &Platform,
    timer: Timer,
    notes: &mut Vec<String>,
) -> anyhow::Result<Vec<Change>> {
    let mut plan = Vec::new();
    let write_if_changed = |plan: &mut Vec<Change>, path: PathBuf, text: String| {
        let old = read_small(&path).ok().flatten();
        if old.as_deref() != Some(text.as_str()) {
            plan.push(Change {
                what: format!(
                    "{} {}",
                    if old.is_some() { "update" } else { "write" },
                    path.display()
                ),
                action: Action::Write { path, text },
            });
        }
    };
    match timer {
        Timer::None => {}
        Timer::Systemd => {
            // The Debian package's units already start this binary: enabling
            // them is enough, and a copy in ~/.config would only shadow them.
            if !packaged_units_start(&platform.binary) {
                for (name, shipped) in UNITS {
                    let path = platform.unit_dir().join(name);
                    write_if_changed(&mut plan, path, unit_text(shipped, &platform.binary));
                }
            }
            let enable: Vec<String> = ["systemctl", "--user", "enable", "--now"]
                .iter()
                .map(|s| s.to_string())
                .chain(TIMERS.iter().map(|t| t.to_string()))
                .collect();
            if systemd_user_works() {
                let enabled = timers_enabled() == TIMERS.len();
                if !plan.is_empty() || !enabled {
                    plan.push(Change {
                        what: "reload systemd's user units".into(),
                        action: Action::Run(
                            ["systemctl", "--user", "daemon-reload"]
                                .map(String::from)
                                .to_vec(),
                        ),
                    });
                    plan.push(Change {
                        what: format!("enable and start {}", TIMERS.join(" and ")),
                        action: Action::Run(enable),
                    });
                }
            } else {
                notes.push(format!(
                    "no systemd user manager answers here: once one runs, start the timers with \
                     `{}`",
                    enable.join(" ")
                ));
            }
        }
        Timer::Launchd => {
            for (name, shipped) in AGENTS {
                let path = platform.agent_dir().join(name);
                let before = plan.len();
                write_if_changed(
                    &mut plan,
                    path.clone(),
                    agent_text(shipped, &platform.binary),
                );
                if plan.len() > before && cfg!(target_os = "macos") {
                    let uid = rustix::process::getuid().as_raw();
                    plan.push(Change {
                        what: format!("load {name} with launchctl"),
                        action: Action::Run(vec![
                            "launchctl".into(),
                            "bootstrap".into(),
                            format!("gui/{uid}"),
                            path.display().to_string(),
                        ]),
                    });
                }
            }
            if !cfg!(target_os = "macos") && !plan.is_empty() {
                notes.push(
                    "this is not macOS: load the agents with `launchctl bootstrap gui/$(id -u) \
                     ~/Library/LaunchAgents/dev.presence.refresh.plist` (and expire) where \
                     launchd runs"
                        .into(),
                );
            }
        }
        Timer::Cron => {
            let has = quiet(Command::new("crontab").arg("-l")).is_some_and(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .map(str::trim)
                    .any(|l| {
                        !l.starts_with('#') && l.contains("presence") && l.contains(" refresh")
                    })
            });
            if !has {
                notes.push(format!(
                    "no systemd user manager here: add these lines to your crontab (`crontab -e`) \
                     to keep records refreshed and the directory clean:\n\
                     * * * * * {bin} --quiet refresh --all-profiles\n\
                     17 4 * * * {bin} --quiet expire",
                    bin = platform.binary.display()
                ));
            }
        }
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_name_the_binary() {
        let text = unit_text(UNITS[0].1, Path::new("/opt/p/presence"));
        assert!(text.starts_with(UNIT_MARK));
        assert!(text.contains("\nExecStart=/opt/p/presence --quiet refresh --all-profiles\n"));
        let plist = agent_text(AGENTS[0].1, Path::new("/opt/a&b/presence"));
        assert!(
            plist.contains("exec \"/opt/a&amp;b/presence\" --quiet refresh"),
            "{plist}"
        );
        assert!(plist.contains(PLIST_MARK));
    }
}
