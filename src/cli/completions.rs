//! `presence completions SHELL`: print a completion script; and the hidden
//! `presence complete profiles` the scripts call to offer profile names.
//!
//! clap_complete writes static scripts from the argument definitions. Three
//! things it cannot know are added here: the profile names in the user's
//! configuration (asked of the binary when completing, so they follow the
//! file), the usual status words, and that what follows `run --` is a
//! command of its own, completed as the shell completes commands. Hidden
//! subcommands are left out of the scripts.

use clap::builder::PossibleValuesParser;
use clap::{Args, CommandFactory, ValueEnum, ValueHint};
use clap_complete::Shell;

use super::{Ctx, Exit};

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell
    pub shell: Shell,
}

/// What `presence complete` lists.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Completable {
    /// The profile names of the configuration file (`default` always).
    Profiles,
}

#[derive(Debug, Args)]
pub struct CompleteArgs {
    /// What to list, one per line
    pub what: Completable,
}

/// Status words offered for `--status` (any other word is accepted).
const STATUS_WORDS: [&str; 4] = ["idle", "working", "waiting", "interrupted"];

#[derive(Debug, Args)]
pub struct ManpageArgs {
    /// Directory to write the pages into (docs/man in the repository)
    pub dir: std::path::PathBuf,
}

/// The man pages, rendered by clap_mangen from the same definitions as
/// `--help`: `presence.1` and one page per subcommand, which the first one's
/// SUBCOMMANDS section refers to.
pub fn manpage(args: ManpageArgs) -> anyhow::Result<Exit> {
    // The plain version, so that the checked-in pages do not change at
    // every commit.
    let cmd = super::Cli::command().version(env!("CARGO_PKG_VERSION"));
    std::fs::create_dir_all(&args.dir)?;
    clap_mangen::generate_to(cmd, &args.dir)?;
    Ok(Exit::Ok)
}

/// The command as completion scripts should see it: without hidden
/// subcommands, with status words and a command after `run --`.
fn completion_command() -> clap::Command {
    let full = super::Cli::command();
    let status = |a: clap::Arg| a.value_parser(PossibleValuesParser::new(STATUS_WORDS));
    let mut cmd = clap::Command::new("presence")
        .about(full.get_about().cloned().unwrap_or_default())
        .version(env!("CARGO_PKG_VERSION"));
    for arg in full.get_arguments() {
        cmd = cmd.arg(arg.clone());
    }
    for sub in full.get_subcommands().filter(|s| !s.is_hide_set()) {
        let mut sub = sub.clone();
        if sub.get_arguments().any(|a| a.get_id() == "status") {
            sub = sub.mut_arg("status", status);
        }
        if sub.get_name() == "run" {
            sub = sub.mut_arg("command", |a| a.value_hint(ValueHint::CommandWithArguments));
        }
        cmd = cmd.subcommand(sub);
    }
    cmd
}

pub fn run(args: CompletionsArgs) -> anyhow::Result<Exit> {
    let mut cmd = completion_command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "presence", &mut out);
    let script = String::from_utf8(out)?;
    let script = match args.shell {
        Shell::Bash => bash(script),
        Shell::Zsh => zsh(script),
        Shell::Fish => fish(script),
        _ => script,
    };
    super::output::stdout().verbatim(&script)?;
    Ok(Exit::Ok)
}

/// `presence complete profiles`: the profile names, one per line. Only names
/// made of safe characters are printed, since a shell evaluates them; a
/// missing or broken configuration lists `default` alone, quietly.
pub fn complete(ctx: &Ctx, args: CompleteArgs) -> anyhow::Result<Exit> {
    let mut out = super::output::stdout();
    match args.what {
        Completable::Profiles => {
            let mut names: Vec<String> =
                presence::Profile::resolve_all(&ctx.selection(), &ctx.local)
                    .map(|all| all.into_iter().map(|p| p.name).collect())
                    .unwrap_or_default();
            if !names.iter().any(|n| n == "default") {
                names.insert(0, "default".into());
            }
            for name in names {
                if !name.is_empty()
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
                {
                    out.say(name)?;
                }
            }
        }
    }
    Ok(Exit::Ok)
}

/// Replaces `from` with `to` everywhere, insisting it is there: a change in
/// clap_complete's output must fail the completion tests, not go unnoticed.
fn patch(script: String, from: &str, to: &str) -> String {
    assert!(
        script.contains(from),
        "completion script: `{from}` not found"
    );
    script.replace(from, to)
}

fn bash(script: String) -> String {
    let script = patch(
        script,
        "                --profile)\n                    COMPREPLY=($(compgen -f \"${cur}\"))",
        "                --profile)\n                    COMPREPLY=($(compgen -W \"$(presence complete profiles 2>/dev/null)\" -- \"${cur}\"))",
    );
    // After `run ... --`, the rest is a command line of its own.
    patch(
        script,
        "        presence__subcmd__run)\n",
        r#"        presence__subcmd__run)
            local j
            for ((j = 1; j < COMP_CWORD; j++)); do
                if [[ "${COMP_WORDS[j]}" == "--" ]]; then
                    if declare -F _comp_command_offset >/dev/null; then
                        _comp_command_offset $((j + 1))
                    elif declare -F _command_offset >/dev/null; then
                        _command_offset $((j + 1))
                    elif ((j + 1 == COMP_CWORD)); then
                        COMPREPLY=($(compgen -c -- "${cur}"))
                    else
                        COMPREPLY=($(compgen -f -- "${cur}"))
                    fi
                    return 0
                fi
            done
"#,
    )
}

fn zsh(script: String) -> String {
    patch(
        script,
        ":NAME:_default' \\",
        ":NAME:{compadd -- ${(f)\"$(presence complete profiles 2>/dev/null)\"}}' \\",
    )
}

fn fish(script: String) -> String {
    let script = script
        + r#"
# After `run ... --`, complete the rest as the command line it is.
function __fish_presence_run_command
    set -l tokens (commandline -opc)
    set -l i (contains -i -- -- $tokens)
    or return
    complete -C (string join ' ' -- (string escape -- $tokens[(math $i + 1)..-1]) (commandline -ct))
end
complete -c presence -n "__fish_presence_using_subcommand run; and contains -- -- (commandline -opc)" -f -a '(__fish_presence_run_command)'
"#;
    patch(
        script,
        "-l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else \"default\"]' -r",
        "-l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else \"default\"]' -r -f -a '(presence complete profiles 2>/dev/null)'",
    )
}
