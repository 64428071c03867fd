//! The man pages, rendered by clap_mangen from the same definitions as
//! `--help`: `presence.1` and one page per subcommand, which the first
//! one's SUBCOMMANDS section refers to. clap_mangen puts a subcommand's
//! text after its options under one heading, EXTRA; here its three parts
//! (`help.rs`) become EXAMPLES, EXIT STATUS and SEE ALSO, and `presence.1`
//! gets the sections a man reader looks for: EXIT STATUS, ENVIRONMENT,
//! FILES and SEE ALSO.

use std::path::Path;

use anyhow::Context as _;
use clap_mangen::roff::{Roff, bold, italic, roman};

/// Writes every page into `dir`.
pub fn write(dir: &Path) -> anyhow::Result<()> {
    // The plain version, so that the checked-in pages do not change at
    // every commit.
    let mut cmd = super::command()
        .version(env!("CARGO_PKG_VERSION"))
        .long_version(None::<&str>)
        .disable_help_subcommand(true);
    cmd.build();
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    write_all(&cmd, None, dir)
}

/// The page of `cmd` and of each of its subcommands; `parent` is the page
/// of the command it belongs to.
fn write_all(cmd: &clap::Command, parent: Option<&str>, dir: &Path) -> anyhow::Result<()> {
    let name = page_name(cmd);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_all(sub, Some(&name), dir)?;
    }
    let path = dir.join(format!("{name}.1"));
    std::fs::write(&path, page(cmd, parent)?)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// `presence`, `presence-list`, `presence-config-init`.
fn page_name(cmd: &clap::Command) -> String {
    cmd.get_display_name()
        .unwrap_or_else(|| cmd.get_name())
        .to_string()
}

/// The parts of a subcommand's text after its options (`help.rs`).
#[derive(Default)]
struct After {
    examples: Vec<String>,
    /// Each code and what it means.
    exit: Vec<(String, String)>,
    /// The related pages (`presence-list`), and the documents' addresses.
    pages: Vec<String>,
    urls: Vec<String>,
}

impl After {
    fn parse(text: &str) -> After {
        let mut after = After::default();
        let mut part = "";
        for line in text.lines() {
            match line {
                "Examples:" | "Exit status:" | "Learn more:" => {
                    part = line;
                    continue;
                }
                "" => continue,
                _ => {}
            }
            let bare = line.strip_prefix("  ").unwrap_or(line);
            match part {
                "Examples:" => after.examples.push(bare.to_string()),
                "Exit status:" => match bare.split_once("  ") {
                    // A continuation line is indented under the meaning.
                    Some((code, meaning)) if !bare.starts_with(' ') => {
                        after
                            .exit
                            .push((code.to_string(), meaning.trim().to_string()));
                    }
                    _ => {
                        if let Some((_, meaning)) = after.exit.last_mut() {
                            meaning.push(' ');
                            meaning.push_str(bare.trim());
                        }
                    }
                },
                "Learn more:" => {
                    if let Some(pages) = bare.strip_prefix("man ") {
                        after
                            .pages
                            .extend(pages.split(", ").map(|p| p.trim().to_string()));
                    } else if bare.starts_with("https://") {
                        let url = bare.split_whitespace().next().unwrap_or(bare);
                        after.urls.push(url.to_string());
                    }
                }
                _ => {}
            }
        }
        after
    }
}

/// The roff of `roff`, without the preamble every rendering starts with
/// (the page's own rendering has it once).
fn sections(roff: &Roff) -> String {
    let text = roff.render();
    match text.strip_prefix(".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n") {
        Some(rest) => rest.to_string(),
        None => text,
    }
}

/// The page of `cmd`.
fn page(cmd: &clap::Command, parent: Option<&str>) -> anyhow::Result<String> {
    let name = page_name(cmd);
    let after = After::parse(
        &cmd.get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default(),
    );
    let mut text = Vec::new();
    clap_mangen::Man::new(cmd.clone().after_help(None::<&str>))
        // The same footer on every page.
        .source(format!("presence {}", env!("CARGO_PKG_VERSION")))
        .render(&mut text)?;
    let text = String::from_utf8(text)
        .context("clap_mangen wrote a page that is not UTF-8")?
        // The page is the long help: there is no summary to point to.
        .replace(
            "Print help (see a summary with \\*(Aq\\-h\\*(Aq)",
            "Print help",
        );
    // clap_mangen's VERSION section (on presence.1) goes last but one.
    let (body, version) = match text.find("\n.SH VERSION\n") {
        Some(at) => (&text[..=at], &text[at + 1..]),
        None => (text.as_str(), ""),
    };
    let mut roff = Roff::new();
    if parent.is_none() {
        exit_status(
            &mut roff,
            &MAIN_EXIT.map(|(c, m)| (c.to_string(), m.to_string())),
        );
        environment(&mut roff);
        files(&mut roff);
    } else if !after.exit.is_empty() {
        exit_status(&mut roff, &after.exit);
    }
    if !after.examples.is_empty() {
        roff.control("SH", ["EXAMPLES"]);
        roff.control("nf", []);
        roff.control("RS", ["4"]);
        for line in &after.examples {
            roff.text([roman(line.as_str())]);
        }
        roff.control("RE", []);
        roff.control("fi", []);
    }
    let mut see = Roff::new();
    see_also(&mut see, &name, parent, &after);
    Ok(format!(
        "{body}{}{version}{}",
        sections(&roff),
        sections(&see)
    ))
}

fn exit_status(roff: &mut Roff, codes: &[(String, String)]) {
    roff.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in codes {
        roff.control("TP", []);
        roff.text([bold(code.as_str())]);
        roff.text([roman(meaning.as_str())]);
    }
}

/// The exit codes of `presence`, as docs/json-output.md lists them.
const MAIN_EXIT: [(&str, &str); 6] = [
    (
        "0",
        "Success (an empty listing is one; so is a closed stdout pipe).",
    ),
    (
        "1",
        "A runtime failure: an unreadable directory, an invalid configuration file, a failed \
         doctor check, nothing found by show or open.",
    ),
    (
        "2",
        "A usage error: a bad flag or value, an unknown profile, a missing --config file, a \
         refused --dir; open needing a terminal it has not.",
    ),
    (
        "3",
        "publish refused a credential (--strict, or strict = true); nothing was written.",
    ),
    (
        "126, 127",
        "run: the command cannot be executed, or was not found (nothing was published); open: \
         the handler was not found.",
    ),
    (
        "N",
        "run passes on its command's status (128 + N when signal N killed it).",
    ),
];

/// A variable and what it does, for ENVIRONMENT.
const ENVIRONMENT: [(&str, &str); 14] = [
    (
        "PRESENCE_PROFILE",
        "The profile to use when --profile is not given (presence run sets it for its command).",
    ),
    (
        "PRESENCE_CONFIG",
        "The configuration file when --config is not given.",
    ),
    (
        "PRESENCE_DIR",
        "The records directory, instead of the profile's, unless --profile names another \
         profile than PRESENCE_PROFILE (presence run sets it for its command).",
    ),
    (
        "PRESENCE_SESSION",
        "The session publish and clear act on when given no --session (presence run sets it \
         for its command).",
    ),
    (
        "PRESENCE_INSTANCE",
        "With PRESENCE_SESSION, the writer instance of that session (presence run sets it).",
    ),
    (
        "PRESENCE_SCAN_CACHE",
        "off: list and show never use the scan cache; on: they use it at any size.",
    ),
    (
        "HERMES_HOME, HERMES_SESSION_PRESENCE_DIR",
        "Where the built-in hermes profile finds Hermes Agent's presence directory \
         (HERMES_SESSION_PRESENCE_DIR names it; else $HERMES_HOME/session-presence/active, \
         HERMES_HOME defaulting to ~/.hermes).",
    ),
    (
        "OPENCODE_DB",
        "OpenCode's database for discovery: an absolute path, or a name in \
         $XDG_DATA_HOME/opencode (else opencode.db there). Discovery reads Hermes Agent's \
         state.db in HERMES_HOME (else ~/.hermes).",
    ),
    (
        "TMUX, TMUX_PANE",
        "Inside tmux, publish and run default the endpoint to this pane; discovery reads an \
         agent process's own TMUX and TMUX_PANE for its endpoint.",
    ),
    (
        "CLAUDE_CONFIG_DIR, CODEX_HOME",
        "Where refresh's discovery ([discover] agents) finds Claude Code's and Codex CLI's files \
         (default ~/.claude and ~/.codex); an agent process's own value comes first. HERMES_HOME \
         and XDG_DATA_HOME (opencode/) likewise for Hermes Agent and OpenCode. presence setup \
         finds the agents installed here by the same directories (or each one's program on \
         PATH), and edits Claude Code's settings.json in CLAUDE_CONFIG_DIR.",
    ),
    (
        "NO_COLOR",
        "Set and not empty: no colour, unless --color always.",
    ),
    (
        "CLICOLOR_FORCE, FORCE_COLOR",
        "Set, not empty and not 0: colour also into a pipe (for less -R), unless NO_COLOR or \
         --color never.",
    ),
    (
        "CLICOLOR",
        "0: no colour, on a terminal too. TERM=dumb also means no colour on a terminal.",
    ),
    (
        "HOME, XDG_CONFIG_HOME, XDG_DATA_HOME",
        "Where the files below are (XDG_STATE_HOME is not used: cron, systemd units and login \
         shells agree on HOME).",
    ),
];

fn environment(roff: &mut Roff) {
    roff.control("SH", ["ENVIRONMENT"]);
    for (name, what) in ENVIRONMENT {
        roff.control("TP", []);
        roff.text([bold(name)]);
        roff.text([roman(what)]);
    }
}

/// A path and what it holds, for FILES.
const FILES: [(&str, &str); 4] = [
    (
        "$XDG_CONFIG_HOME/presence/config.toml",
        "The configuration (~/.config/presence/config.toml; on macOS ~/Library/Application \
         Support/presence/config.toml): profiles, their directories, ttl and refresh_interval. \
         presence config init writes a commented one; presence config path prints where it \
         is; without one, the built-in defaults apply.",
    ),
    (
        "$XDG_DATA_HOME/presence/",
        "This device's own data (~/.local/share/presence): device-key, its signing key (mode \
         0600, never shared); device-id, the id derived from it; and default/, the records \
         directory of a profile that names none (this device's alone).",
    ),
    (
        "~/.local/state/presence/",
        "Local state, never synced: the ledger of the records this device published, the \
         per-record locks, the clocks learned from other devices, the scan cache.",
    ),
    (
        "/usr/share/doc/presence/",
        "With the Debian package: the full documentation (README.md, and the other documents \
         under it, laid out as in the repository) and the systemd and launchd examples.",
    ),
];

fn files(roff: &mut Roff) {
    roff.control("SH", ["FILES"]);
    for (path, what) in FILES {
        roff.control("TP", []);
        roff.text([italic(path)]);
        roff.text([roman(what)]);
    }
}

/// SEE ALSO: the related pages (and the one this command belongs to), then
/// where the documentation is.
fn see_also(roff: &mut Roff, name: &str, parent: Option<&str>, after: &After) {
    let push = |p: &str, pages: &mut Vec<String>| {
        if p != name && !pages.iter().any(|q| q == p) {
            pages.push(p.to_string());
        }
    };
    let mut named: Vec<String> = Vec::new();
    match parent {
        None => {
            for p in ["presence-setup", "presence-doctor", "presence-list"] {
                push(p, &mut named);
            }
        }
        Some(parent) => {
            push("presence", &mut named);
            push(parent, &mut named);
        }
    }
    for p in &after.pages {
        push(p, &mut named);
    }
    roff.control("SH", ["SEE ALSO"]);
    let mut line = Vec::new();
    for (i, p) in named.iter().enumerate() {
        if i > 0 {
            line.push(roman(", "));
        }
        line.push(bold(p.as_str()));
        line.push(roman("(1)"));
    }
    roff.text(line);
    // Each address on a line of its own: too long to fill or adjust.
    roff.control("PP", []);
    roff.control("nf", []);
    let docs = concat!(env!("CARGO_PKG_REPOSITORY"), "/tree/main/docs");
    let mut urls: Vec<&str> = after.urls.iter().map(String::as_str).collect();
    if urls.is_empty() {
        urls.push(docs);
    }
    let page = concat!(env!("CARGO_PKG_REPOSITORY"), "/blob/main/");
    for url in urls {
        roff.text([roman(url)]);
        let installed = match url.strip_prefix(page) {
            Some(path) => path.split('#').next().unwrap_or(path),
            None => "",
        };
        roff.text([roman(format!(
            "/usr/share/doc/presence/{installed} (with the Debian package)"
        ))]);
    }
    roff.control("fi", []);
}

#[cfg(test)]
mod tests {
    use super::After;

    #[test]
    fn the_text_after_the_options_is_read_back_in_its_parts() {
        let after = After::parse(
            "Examples:\n  presence show x\n  presence show x --json\n\nExit status:\n  0  \
             shown: the newest\n     record\n  1  none\n\nLearn more:\n  man presence-show, \
             presence-list\n  https://example.org/docs/json-output.md",
        );
        assert_eq!(
            after.examples,
            ["presence show x", "presence show x --json"]
        );
        assert_eq!(
            after.exit,
            [
                ("0".to_string(), "shown: the newest record".to_string()),
                ("1".to_string(), "none".to_string())
            ]
        );
        assert_eq!(after.pages, ["presence-show", "presence-list"]);
        assert_eq!(after.urls, ["https://example.org/docs/json-output.md"]);
    }
}
