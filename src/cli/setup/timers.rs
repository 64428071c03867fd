//! What keeps records refreshed: systemd user units or launchd agents, each
//! as shipped in docs/ with the running binary's path (quoted as each format
//! needs) and setup's marker; or crontab lines (`cron.rs`).
//!
//! The marker is a comment line carrying a digest of the rest of the file.
//! A file whose digest still matches is setup's, unedited: setup updates it,
//! and `--uninstall` removes it. A file edited since setup wrote it, or one
//! setup did not write (no marker, a symbolic link), is the user's: setup
//! leaves it alone and says so, unless `--force`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::bail;
use sha2::{Digest, Sha256};

use super::plan::{Action, Change, Note, read_small};
use super::{Platform, Timer};

/// Setup's marker line: `open`, the digest of the rest of the file, `close`;
/// and the line earlier versions wrote, with no digest.
pub(super) struct Marker {
    open: &'static str,
    close: &'static str,
    legacy: &'static str,
    /// The lines of the file above the marker.
    after_lines: usize,
}

/// The first line of every unit file setup writes.
pub(super) const UNIT_MARK: Marker = Marker {
    open: "# Installed by `presence setup` (digest ",
    close: " of the lines below); `presence setup --uninstall` removes it unless it was edited.",
    legacy: "# Installed by `presence setup`; `presence setup --uninstall` removes it.",
    after_lines: 0,
};
/// The line setup puts under a launchd agent's XML declaration. An XML
/// comment must not hold `--`, so no option is named.
pub(super) const PLIST_MARK: Marker = Marker {
    open: "<!-- Installed by presence setup (digest ",
    close: " of the rest of this file); setup's uninstall removes it unless it was edited. -->",
    legacy: "<!-- Installed by `presence setup`; `presence setup --uninstall` removes it. -->",
    after_lines: 1,
};

/// The digest a marker carries: 16 hex digits of the sha256 of the file
/// without the marker line.
pub(super) fn digest(body: &str) -> String {
    Sha256::digest(body.as_bytes())[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Who wrote a unit file or an agent.
#[derive(Debug, PartialEq)]
pub(super) enum Owner {
    /// There is none.
    Missing,
    /// Setup, and nobody edited it since: its text.
    Setup(String),
    /// Setup, but it was edited since.
    Edited,
    /// Not setup (no marker), but just what setup writes, marker aside.
    Copy,
    /// Not setup (no marker), or it is not a plain file: why, in words.
    User(String),
}

impl Marker {
    /// `body` with the marker line put in.
    pub(super) fn stamp(&self, body: &str) -> String {
        let at: usize = body
            .split_inclusive('\n')
            .take(self.after_lines)
            .map(str::len)
            .sum();
        format!(
            "{}{}{}{}\n{}",
            &body[..at],
            self.open,
            digest(body),
            self.close,
            &body[at..]
        )
    }

    /// Who wrote `text`, a file that holds `body` (and the marker) when
    /// setup writes it now. A file with the marker of earlier versions is
    /// setup's only as long as the rest is what setup writes now.
    pub(super) fn owner(&self, text: &str, body: Option<&str>) -> Owner {
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            let bare = line.strip_suffix('\n').unwrap_or(line);
            let rest = || format!("{}{}", &text[..at], &text[at + line.len()..]);
            if let Some(d) = bare
                .strip_prefix(self.open)
                .and_then(|l| l.strip_suffix(self.close))
            {
                return if d == digest(&rest()) {
                    Owner::Setup(text.to_string())
                } else {
                    Owner::Edited
                };
            }
            if bare == self.legacy {
                return if body == Some(rest().as_str()) {
                    Owner::Setup(text.to_string())
                } else {
                    Owner::Edited
                };
            }
            at += line.len();
        }
        if body == Some(text) {
            Owner::Copy
        } else {
            Owner::User("setup did not write it".into())
        }
    }

    /// Who wrote the file at `path`, read without following a link.
    pub(super) fn owner_of(&self, path: &Path, body: Option<&str>) -> Owner {
        match read_small(path) {
            Ok(None) => Owner::Missing,
            Ok(Some(text)) => self.owner(&text, body),
            Err(e) => Owner::User(e.to_string()),
        }
    }
}

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

/// The binary's path as text, refused when it is not UTF-8 or holds a
/// control character (a newline would end the line that names it).
fn path_text<'a>(binary: &'a Path, format: &str) -> anyhow::Result<&'a str> {
    let fix = "install presence where its path is plain (e.g. ~/.local/bin/presence) and \
               run setup from there, or pass another --timer (or --no-timer)";
    let Some(text) = binary.to_str() else {
        bail!(
            "cannot name {} in {format}: the path is not UTF-8; {fix}",
            binary.display()
        );
    };
    if text.chars().any(char::is_control) {
        bail!(
            "cannot name {} in {format}: the path holds a control character; {fix}",
            binary.display()
        );
    }
    Ok(text)
}

/// The binary's path as the first word of `ExecStart=`: `%` (a specifier)
/// doubled, the word double-quoted when it holds a space. systemd refuses
/// `\`, `"` and `'` in an executable's path however they are written; `$`
/// needs nothing (the path is not expanded).
pub(super) fn systemd_exec(binary: &Path) -> anyhow::Result<String> {
    let text = path_text(binary, "a systemd unit")?;
    if let Some(c) = text.chars().find(|c| matches!(c, '\\' | '"' | '\'')) {
        bail!(
            "cannot name {} in a systemd unit: systemd refuses `{c}` in the path of the program \
             it starts; install presence where its path has no `\\`, `\"` or `'` (e.g. \
             ~/.local/bin/presence) and run setup from there, or pass another --timer (or \
             --no-timer)",
            binary.display()
        );
    }
    let word = text.replace('%', "%%");
    Ok(if word.contains(' ') {
        format!("\"{word}\"")
    } else {
        word
    })
}

/// A unit as shipped, with the binary's path put in (no marker).
pub(super) fn unit_body(shipped: &str, binary: &Path) -> anyhow::Result<String> {
    let exec = systemd_exec(binary)?;
    let mut text = String::new();
    for line in shipped.lines() {
        match line.strip_prefix("ExecStart=presence ") {
            Some(rest) => text.push_str(&format!("ExecStart={exec} {rest}")),
            None => text.push_str(line),
        }
        text.push('\n');
    }
    Ok(text)
}

/// How often the shipped refresh timer starts the refresh.
pub(super) const SHIPPED_INTERVAL: Duration = Duration::from_secs(30);

/// The refresh timer's text for `interval` (the shortest refresh_interval
/// of the profiles, which `refresh --all-profiles` must keep up with): the
/// shipped one at the shipped interval, else its `OnUnitActiveSec=`, its
/// description and its comment say `interval`, with an `AccuracySec=` a
/// tenth of it when that is below the shipped second.
pub(super) fn timer_at(body: &str, interval: Duration) -> String {
    if interval == SHIPPED_INTERVAL {
        return body.to_string();
    }
    // Whole seconds where it is, else milliseconds (at least one).
    let span = |d: Duration| {
        if d.subsec_nanos() == 0 {
            format!("{}s", d.as_secs())
        } else {
            format!("{}ms", d.as_millis().max(1))
        }
    };
    let every = span(interval);
    let mut text = String::new();
    for line in body.lines() {
        let line = if line.starts_with("# Runs presence-refresh.service every ") {
            format!("# Runs presence-refresh.service every {every}: the shortest refresh_interval")
        } else if line.starts_with("# a third of the default ") {
            "# of the profiles when `presence setup` wrote it (run setup again after a change)."
                .to_string()
        } else if line.starts_with("Description=") {
            format!("Description=Refresh presence records every {every}")
        } else if line.starts_with("OnUnitActiveSec=") {
            format!("OnUnitActiveSec={every}")
        } else if line.starts_with("AccuracySec=") && interval < Duration::from_secs(10) {
            format!("AccuracySec={}", span(interval / 10))
        } else {
            line.to_string()
        };
        text.push_str(&line);
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
        unit_body(shipped, binary).is_ok_and(|want| text == want)
    })
}

/// A launchd agent as shipped, with the binary's path put in (no marker).
pub(super) fn agent_body(shipped: &str, binary: &Path) -> anyhow::Result<String> {
    // Inside `sh -c "exec \"PATH\" …"`, then inside XML.
    let sh: String = path_text(binary, "a launchd agent")?
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
    Ok(shipped.replace("$HOME/.cargo/bin/presence", &xml))
}

/// The binary's path as the start of a crontab line's command, for `sh`:
/// each `%` (which cron turns into a newline) written `\%` outside quotes
/// (so that a cron that passes `\%` on unchanged leaves `sh` a `%` too), and
/// each piece between them single-quoted when it holds anything but plain
/// characters.
pub(super) fn cron_command(binary: &Path) -> anyhow::Result<String> {
    let text = path_text(binary, "a crontab line")?;
    let quote = |piece: &str| {
        if piece
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._+,:@=-".contains(c))
        {
            piece.to_string()
        } else {
            format!("'{}'", piece.replace('\'', r"'\''"))
        }
    };
    Ok(text.split('%').map(quote).collect::<Vec<_>>().join(r"\%"))
}

/// What `launchctl` does to an agent.
#[derive(Debug, Clone, Copy)]
pub(super) enum Launchctl {
    Bootstrap,
    Bootout,
}

/// The step that loads or unloads the agent at `path` with `launchctl`.
pub(super) fn launchctl(op: Launchctl, path: &Path) -> Change {
    let (verb, what) = match op {
        Launchctl::Bootstrap => ("bootstrap", "load"),
        Launchctl::Bootout => ("bootout", "unload"),
    };
    let uid = rustix::process::getuid().as_raw();
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    Change {
        what: format!("{what} {name} with launchctl"),
        action: Action::Run(vec![
            "launchctl".into(),
            verb.into(),
            format!("gui/{uid}"),
            path.display().to_string(),
        ]),
    }
}

/// Plans writing `body`, stamped with `marker`, to `path`: nothing when
/// setup's copy is there, an update of setup's own, and only with `force` a
/// replacement of a file that was edited or that setup did not write (else a
/// note saying so). Returns whether it planned a write.
fn install(
    plan: &mut Vec<Change>,
    notes: &mut Vec<Note>,
    force: bool,
    path: PathBuf,
    body: &str,
    marker: &Marker,
) -> bool {
    let text = marker.stamp(body);
    let verb = match marker.owner_of(&path, Some(body)) {
        Owner::Setup(old) if old == text => return false,
        Owner::Copy => return false,
        Owner::Missing => "write".to_string(),
        Owner::Setup(_) => "update".to_string(),
        Owner::Edited if force => "replace (edited since setup wrote it)".to_string(),
        Owner::User(why) if force => format!("replace ({why})"),
        Owner::Edited => {
            notes.push(Note::Say(format!(
                "left {} alone: it was edited since setup wrote it; to replace it with setup's \
                 (your edits are lost), pass --force, or remove it and run setup again",
                path.display()
            )));
            return false;
        }
        Owner::User(why) => {
            notes.push(Note::Say(format!(
                "left {} alone: {why}; to replace it with setup's, pass --force, or remove it \
                 and run setup again",
                path.display()
            )));
            return false;
        }
    };
    let what = match verb.split_once(' ') {
        Some((verb, why)) => format!("{verb} {} {why}", path.display()),
        None => format!("{verb} {}", path.display()),
    };
    plan.push(Change {
        what,
        action: Action::Write { path, text },
    });
    true
}

/// The refresher's part of the plan (but cron's), and `Some(why)` when
/// nothing will refresh the records once it is carried out (the user is
/// told why, and what to do).
pub(super) fn timer_plan(
    platform: &Platform,
    timer: Timer,
    interval: Duration,
    force: bool,
    notes: &mut Vec<Note>,
) -> anyhow::Result<(Vec<Change>, Option<String>)> {
    let mut plan = Vec::new();
    let mut missing = None;
    match timer {
        Timer::None => {
            missing = Some(
                "--no-timer installs none; a record published with --owner-pid expires one ttl \
                 after its last publish unless `presence run` or a `presence refresh --every` \
                 keeps it (run setup again without --no-timer to install one)"
                    .into(),
            );
        }
        Timer::Systemd => {
            // The Debian package's units already start this binary at the
            // shipped interval: enabling them is enough, and a copy in
            // ~/.config would only shadow them. Another interval, or copies
            // setup wrote before (which shadow them), and setup's copies are
            // what runs: written, or brought up to date.
            let own_copies = UNITS.iter().any(|(name, _)| {
                matches!(
                    UNIT_MARK.owner_of(&platform.unit_dir().join(name), None),
                    Owner::Setup(_)
                )
            });
            if own_copies || interval != SHIPPED_INTERVAL || !packaged_units_start(&platform.binary)
            {
                for (name, shipped) in UNITS {
                    let path = platform.unit_dir().join(name);
                    let mut body = unit_body(shipped, &platform.binary)?;
                    if name == TIMERS[0] {
                        body = timer_at(&body, interval);
                    }
                    install(&mut plan, notes, force, path, &body, &UNIT_MARK);
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
                missing = Some(format!(
                    "no systemd user manager answers here; once one runs, start the timers with \
                     `{}`",
                    enable.join(" ")
                ));
            }
        }
        Timer::Launchd => {
            for (name, shipped) in AGENTS {
                let path = platform.agent_dir().join(name);
                let body = agent_body(shipped, &platform.binary)?;
                if install(&mut plan, notes, force, path.clone(), &body, &PLIST_MARK)
                    && cfg!(target_os = "macos")
                {
                    plan.push(launchctl(Launchctl::Bootstrap, &path));
                }
            }
            if !cfg!(target_os = "macos") {
                missing = Some(
                    "this is not macOS: load the agents with `launchctl bootstrap gui/$(id -u) \
                     ~/Library/LaunchAgents/dev.presence.refresh.plist` (and expire) where \
                     launchd runs"
                        .into(),
                );
            }
        }
        // Its lines in the crontab are `cron.rs`'s, which `run` asks.
        Timer::Cron => {}
    }
    Ok((plan, missing))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_name_the_binary() {
        let body = unit_body(UNITS[0].1, Path::new("/opt/p/presence")).unwrap();
        let text = UNIT_MARK.stamp(&body);
        assert!(text.starts_with(UNIT_MARK.open));
        assert!(text.contains("\nExecStart=/opt/p/presence --quiet refresh --all-profiles\n"));
        let body = agent_body(AGENTS[0].1, Path::new("/opt/a&b/presence")).unwrap();
        let plist = PLIST_MARK.stamp(&body);
        assert!(
            plist.contains("exec \"/opt/a&amp;b/presence\" --quiet refresh"),
            "{plist}"
        );
        assert!(plist.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- Installed"));
        // No `--` inside an XML comment: the plist would not be well-formed.
        let mark = plist.lines().nth(1).unwrap();
        assert!(!mark["<!--".len()..mark.len() - "-->".len()].contains("--"));
    }

    #[test]
    fn a_path_with_a_space_and_a_percent_sign_is_quoted_for_each_format() {
        let bin = Path::new("/opt/my tools/100%/presence");
        assert_eq!(
            systemd_exec(bin).unwrap(),
            "\"/opt/my tools/100%%/presence\""
        );
        assert_eq!(systemd_exec(Path::new("/a/$x")).unwrap(), "/a/$x");
        assert_eq!(
            cron_command(bin).unwrap(),
            r"'/opt/my tools/100'\%/presence"
        );
        assert_eq!(cron_command(Path::new("/a\\%b")).unwrap(), r"'/a\'\%b");
        assert_eq!(cron_command(Path::new("/a/b")).unwrap(), "/a/b");
        assert_eq!(cron_command(Path::new("/a/50%")).unwrap(), r"/a/50\%");
        assert_eq!(cron_command(Path::new("/a/it's")).unwrap(), r"'/a/it'\''s'");
        for bad in ["/a/\"b", "/a/b\\c", "/a/it's", "/a/new\nline"] {
            let e = systemd_exec(Path::new(bad)).unwrap_err().to_string();
            assert!(e.contains("--timer"), "{e}");
        }
        assert!(cron_command(Path::new("/a/new\nline")).is_err());
        assert!(agent_body(AGENTS[0].1, Path::new("/a/new\nline")).is_err());
    }

    #[test]
    fn the_marker_tells_setups_files_from_edited_ones() {
        let body = unit_body(UNITS[0].1, Path::new("/opt/p/presence")).unwrap();
        let ours = UNIT_MARK.stamp(&body);
        assert_eq!(
            UNIT_MARK.owner(&ours, Some(&body)),
            Owner::Setup(ours.clone())
        );
        // Setup's file from another binary or version is still setup's.
        assert_eq!(UNIT_MARK.owner(&ours, None), Owner::Setup(ours.clone()));
        let edited = ours.replace("--all-profiles", "--all-profiles --verbose");
        assert_eq!(UNIT_MARK.owner(&edited, Some(&body)), Owner::Edited);
        let appended = format!("{ours}Environment=X=1\n");
        assert_eq!(UNIT_MARK.owner(&appended, Some(&body)), Owner::Edited);
        assert!(matches!(
            UNIT_MARK.owner(&body[1..], Some(&body)),
            Owner::User(_)
        ));
        assert_eq!(UNIT_MARK.owner(&body, Some(&body)), Owner::Copy);
        // Earlier versions' marker: setup's while the rest is what it writes.
        let legacy = format!("{}\n{body}", UNIT_MARK.legacy);
        assert_eq!(
            UNIT_MARK.owner(&legacy, Some(&body)),
            Owner::Setup(legacy.clone())
        );
        let legacy_edited = format!("{}\n{body}# mine\n", UNIT_MARK.legacy);
        assert_eq!(UNIT_MARK.owner(&legacy_edited, Some(&body)), Owner::Edited);

        let body = agent_body(AGENTS[1].1, Path::new("/opt/p/presence")).unwrap();
        let ours = PLIST_MARK.stamp(&body);
        assert_eq!(
            PLIST_MARK.owner(&ours, Some(&body)),
            Owner::Setup(ours.clone())
        );
        let edited = ours.replace("<integer>4</integer>", "<integer>5</integer>");
        assert_eq!(PLIST_MARK.owner(&edited, Some(&body)), Owner::Edited);
    }
}
