//! The examples, exit codes and pointers to more shown at the end of each
//! subcommand's `--help`; its man page shows them as EXAMPLES, EXIT STATUS
//! and SEE ALSO (`manpage.rs` reads them back by their headings). Every
//! example line is parsed by the test below with the real argument
//! definitions, so none can drift from the flags.

/// Exit codes shared by most subcommands.
macro_rules! exit_common {
    () => {
        "  0  done
  1  runtime failure: unreadable directory, invalid configuration file, …
  2  usage: a bad flag or value, an unknown profile, a missing --config file"
    };
}

/// The project's page of a file in the repository (`docs/lifecycle.md`,
/// with an optional `#anchor`): the docs as they travel, outside a checkout.
macro_rules! project_page {
    ($path:expr) => {
        concat!(env!("CARGO_PKG_REPOSITORY"), "/blob/main/", $path)
    };
}

/// A subcommand's text after its options: examples, exit codes, and under
/// "Learn more" its man page with related ones (`man:`, without the
/// `presence-` of each) and the document that tells more (`doc:`).
macro_rules! help {
    ($name:ident, $examples:expr, $exit:expr, man: $man:expr, doc: $doc:expr) => {
        pub const $name: &str = concat!(
            "Examples:\n",
            $examples,
            "\n\nExit status:\n",
            $exit,
            "\n\nLearn more:\n  man ",
            $man,
            "\n  ",
            project_page!($doc)
        );
    };
}

/// The end of `presence --help`.
pub const MAIN: &str = concat!(
    "Learn more:\n  presence COMMAND --help; man presence, man presence-COMMAND\n  ",
    env!("CARGO_PKG_REPOSITORY"),
    "/tree/main/docs (with the Debian package: /usr/share/doc/presence)"
);

// Plain headings: the same text serves `--help`, a pipe and the man page.
help!(
    PUBLISH,
    "  presence publish --session build-42 --title 'Nightly build' --status working
  presence publish --session build-42 --status waiting     # a hook: only the status changes
  presence publish --session build-42 --meta branch=main --meta ticket=
  presence publish --session build-42 --unset model
  presence publish --session build-42 --replace --status idle   # exactly this, nothing kept
  presence publish --status waiting        # inside `presence run`: its own session",
    "  0  published
  1  the directory cannot be written
  2  usage: a bad flag, field or duration
  3  refused (--strict): the record would carry a credential, or its endpoint
     would not open; nothing written",
    man: "presence-publish, presence-run, presence-clear, presence-refresh",
    doc: "docs/lifecycle.md"
);

help!(
    LIST,
    "  presence list                             # live sessions, newest start first
  presence list --host laptop --client hermes
  presence list --status waiting --count    # how many wait for you
  presence list --session gw                # an id, or the start of one
  presence list --sort seen --reverse
  presence list --no-trunc --color always | less -R
  presence list --format '{client}@{host}\\t{title} {metadata.branch} {up}'
  presence list --format '{session_id}'     # ids only, as docker ps -q
  presence list --count                     # for a shell prompt
  presence list --watch --count             # one line per change, for a status bar
  presence list --watch --json              # one JSON array per change
  presence list --json",
    "  0  listed (also when nothing is live)
  1  the directory cannot be read, or the configuration file is invalid
  2  usage: a bad flag, an unknown profile, a bad --format template",
    man: "presence-list, presence-show, presence-watch, presence-open",
    doc: "docs/json-output.md"
);

/// `list --help`'s description: what the table's marks and columns mean.
pub const LIST_ABOUT: &str = "List live sessions, newest start first

Columns:
  SESSION  the id: * this device's, ? unsigned (its device not proven)
  STATUS   the state word its publisher set: working, waiting, idle, …
  UP       how long the session has run
  SEEN     when its record last arrived here (a refresh or a change)
  EXPIRES  when it stops being live unless refreshed (--all: its state)

-q (--quiet) leaves out notes and warnings, never rows; for ids only:
--format '{session_id}'.";

help!(
    SHOW,
    "  presence show build-42
  presence show build-42 --json",
    "  0  shown: the newest record of that session, live or not (an ended or
     expired session too)
  1  no record with that session id or key (or the directory cannot be read)
  2  usage",
    man: "presence-show, presence-list, presence-open",
    doc: "docs/json-output.md"
);

help!(
    OPEN,
    "  presence open build-42                   # the session's tmux, ssh, mosh or web page
  presence open                            # on a terminal: type to filter, Enter opens
  presence open build --print              # the command, shell-quoted, run nothing
  presence open build-42 --yes             # another device's session, without asking",
    "  0  opened (the handler's own status when it ends), or printed
  1  no such live session, an endpoint refused or absent, or not confirmed
  2  usage: an ambiguous prefix, no ID and no terminal, another device's
     session and no terminal to confirm on without --yes
  127  the handler's program was not found",
    man: "presence-open, presence-list",
    doc: "docs/integrations.md#opening-a-session"
);

help!(
    CLEAR,
    "  presence clear --session build-42
  presence clear --instance laptop-3f9c2a1b
  presence clear                           # inside `presence run`: its own session
  presence clear --all --all-profiles      # at logout: every record of this device",
    exit_common!(),
    man: "presence-clear, presence-publish, presence-run",
    doc: "docs/lifecycle.md"
);

help!(
    REFRESH,
    "  presence refresh                         # one pass, from cron or a systemd timer
  presence refresh --every 30s             # a long-running service
  presence refresh --all-profiles --json",
    exit_common!(),
    man: "presence-refresh, presence-setup, presence-expire",
    doc: "docs/lifecycle.md#presence-refresh"
);

help!(
    RUN,
    "  presence run --session build-42 --title 'Nightly build' -- make -j4
  presence run --session chat --client hermes -- hermes
  Inside, the command finds its record in PRESENCE_SESSION, PRESENCE_INSTANCE,
  PRESENCE_PROFILE and PRESENCE_DIR; `presence publish --status waiting` updates it.",
    "  N    the command's own status (128 + N when signal N killed it)
  2    usage: a bad flag; nothing was published
  126  the command was found but cannot be executed; nothing was published
  127  the command was not found; nothing was published",
    man: "presence-run, presence-publish, presence-clear",
    doc: "docs/lifecycle.md"
);

help!(
    EXPIRE,
    "  presence expire --dry-run                # what would be deleted, and why
  presence expire
  presence expire --json",
    exit_common!(),
    man: "presence-expire, presence-setup, presence-refresh",
    doc: "docs/lifecycle.md#scheduling"
);

help!(
    WATCH,
    "  presence watch
  presence watch --json                    # NDJSON for apps: up, update, down, ready
  presence watch --poll 2s                 # network filesystems without file events
  presence watch --on waiting -- notify-send 'a session waits'   # CMD per transition, fields in its env",
    exit_common!(),
    man: "presence-watch, presence-list",
    doc: "docs/json-output.md"
);

help!(
    HOOK,
    "  presence hook hermes                     # in Hermes' config.yaml `hooks:` block
  presence hook claude                     # in Claude Code's settings.json `hooks` block
  presence --profile work hook hermes      # the same, into another profile's directory",
    "  0  done, or ignored: an event of no interest, input that is not an event
     (one line on stderr); nothing is ever printed on stdout
  1  the record cannot be written (the agent logs the stderr line and goes on);
     for `hook claude`, any failure, a terminal on stdin included
  2  `hook hermes` only: stdin is a terminal (the event comes from Hermes);
     `hook claude` never exits 2, which would block Claude",
    man: "presence-hook, presence-hook-hermes, presence-hook-claude",
    doc: "docs/integrations.md#claude-code"
);

help!(
    HOOK_HERMES,
    "  presence hook hermes                     # the command of a hook in Hermes' config.yaml
  presence --profile work hook hermes      # the same, into another profile's directory",
    "  0  done, or ignored: an event of no interest, input that is not an event
     (one line on stderr); nothing is ever printed on stdout
  1  the record cannot be written (Hermes logs the stderr line and goes on)
  2  stdin is a terminal (the event comes from Hermes)",
    man: "presence-hook, presence-hook-claude, presence-run",
    doc: "docs/integrations.md#hermes-agent"
);

help!(
    HOOK_CLAUDE,
    "  presence hook claude                     # the command of each hook in ~/.claude/settings.json
  presence --profile work hook claude      # the same, into another profile's directory",
    "  0  done, or ignored: an event of no interest, input that is not an event
     (one line on stderr); nothing is ever printed on stdout
  1  any failure, a terminal on stdin included (Claude Code shows it as a
     hook error that blocks nothing); never 2, which would block Claude",
    man: "presence-hook, presence-hook-hermes, presence-watch",
    doc: "docs/integrations.md#claude-code"
);

help!(
    SETUP,
    "  presence setup                           # on a terminal: asks where, shows the plan
  presence setup --yes --dir ~/Sync/presence
  presence setup --dry-run                 # every change it would make; makes none
  presence setup --yes --timer cron        # lines in your crontab instead of units
  presence setup --yes --profile work --dir ~/Sync/work-presence --no-timer
  presence setup --yes --agents found      # also publish the sessions of the agents found here
  presence setup --yes --claude-hooks      # add presence's hooks to Claude Code's settings.json
  presence setup --uninstall --yes         # the units, crontab, .stignore lines and hooks it added
  presence setup --yes --force             # also replace units or agents you edited",
    "  0  set up (or nothing to change), and doctor found nothing failing
  1  a change could not be made (a configuration or, with --claude-hooks, a
     settings.json it cannot edit), or a doctor check failed
  2  usage: stdin is not a terminal and no --yes, no synced folder found and no --dir",
    man: "presence-setup, presence-doctor",
    doc: "docs/lifecycle.md#scheduling"
);

help!(
    DOCTOR,
    "  presence doctor
  presence doctor --json",
    "  0  every check passed (warnings allowed)
  1  a check failed
  2  usage",
    man: "presence-doctor, presence-setup, presence-devices",
    doc: "docs/syncthing.md#checking-the-folder-presence-doctor"
);

help!(
    DEVICES,
    "  presence devices
  presence devices --json",
    exit_common!(),
    man: "presence-devices, presence-doctor",
    doc: "docs/json-output.md"
);

help!(
    CONFIG,
    "  presence config init                     # write a commented example file
  presence config edit                     # edit it in $EDITOR, then check it
  presence config show                     # the settings in force, and where from",
    exit_common!(),
    man: "presence-config, presence-config-edit, presence-config-init, presence-config-path, \
          presence-config-show",
    doc: "docs/configuration.md"
);

help!(
    COMPLETIONS,
    "  presence completions bash > ~/.local/share/bash-completion/completions/presence
  presence completions zsh > ~/.zfunc/_presence
  presence completions fish > ~/.config/fish/completions/presence.fish",
    "  0  printed
  2  usage: an unknown shell",
    man: "presence-completions",
    doc: "README.md"
);

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::super::{Cli, command};

    /// Splits an example line the way a POSIX shell would for these simple
    /// cases: single quotes, and a `#` comment or a pipe or redirection ends it.
    fn words(line: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut word = String::new();
        let mut quoted = false;
        let mut started = false;
        for c in line.chars() {
            match c {
                '\'' => {
                    quoted = !quoted;
                    started = true;
                }
                c if quoted => word.push(c),
                '#' | '|' | '>' if !started => break,
                ' ' => {
                    if started {
                        out.push(std::mem::take(&mut word));
                        started = false;
                    }
                }
                c => {
                    word.push(c);
                    started = true;
                }
            }
        }
        if started {
            out.push(word);
        }
        out
    }

    #[test]
    fn every_subcommand_has_examples_and_exit_codes() {
        let cmd = command();
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            if sub.get_name() == "help" {
                continue;
            }
            let after = sub
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            assert!(
                after.contains("Examples:") && after.contains("Exit status:"),
                "`presence {} --help` has no examples or exit codes",
                sub.get_name()
            );
            assert!(
                after.contains(&format!("presence {}", sub.get_name())),
                "the examples of {} do not use it",
                sub.get_name()
            );
        }
    }

    /// Every subcommand at any depth (`hook claude`, `config init`).
    fn all_subcommands(cmd: &clap::Command) -> Vec<&clap::Command> {
        let mut out = Vec::new();
        for sub in cmd.get_subcommands() {
            out.push(sub);
            out.extend(all_subcommands(sub));
        }
        out
    }

    #[test]
    fn every_example_parses_with_the_real_flags() {
        let cmd = command();
        let mut checked = 0;
        for sub in all_subcommands(&cmd) {
            let after = sub
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            for line in after.lines() {
                let Some(example) = line.trim_start().strip_prefix("presence ") else {
                    continue;
                };
                let argv: Vec<String> = std::iter::once("presence".to_string())
                    .chain(words(example))
                    .collect();
                if let Err(e) = Cli::try_parse_from(&argv) {
                    panic!("example `{}` does not parse: {e}", line.trim());
                }
                checked += 1;
            }
        }
        assert!(checked > 30, "only {checked} examples found");
    }

    #[test]
    fn the_splitter_handles_quotes_and_comments() {
        assert_eq!(
            words("list --format '{a} {b}' # c"),
            ["list", "--format", "{a} {b}"]
        );
        assert_eq!(words("show x | less"), ["show", "x"]);
    }
}
