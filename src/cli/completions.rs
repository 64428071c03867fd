//! `presence completions SHELL`: print a completion script; and the hidden
//! `presence complete profiles|sessions|hosts` the scripts call to offer
//! profile names, live session ids and their hosts.
//!
//! clap_complete writes static scripts from the argument definitions. What
//! it cannot know is added here: the profile names in the user's
//! configuration, and the live sessions and hosts of the directory (asked
//! of the binary when completing, so they follow the file and the
//! directory; the sessions and hosts of the profile and directory that the
//! command line being completed names), the usual status words, and that
//! what follows `run --` is a command of its own, completed as the shell
//! completes commands. Hidden subcommands are left out of the scripts.

use clap::builder::PossibleValuesParser;
use clap::{Args, ValueEnum, ValueHint};
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
    /// The ids of the live sessions, newest start first.
    Sessions,
    /// The hosts of the live sessions, A to Z.
    Hosts,
}

#[derive(Debug, Args)]
pub struct CompleteArgs {
    /// What to list, one per line
    pub what: Completable,
}

/// What completes with the live sessions, and with their hosts: the
/// arguments `(subcommand, argument id)`. The completion scripts get a
/// marker as their only possible value, which each shell's patch turns
/// into a call of `presence complete sessions` (or `hosts`).
const LIVE_SESSIONS: [(&str, &str); 4] = [
    ("show", "id"),
    ("open", "id"),
    ("clear", "session"),
    ("list", "session"),
];
const LIVE_HOSTS: [(&str, &str); 1] = [("list", "host")];
const SESSIONS_MARK: &str = "__presence_live_sessions__";
const HOSTS_MARK: &str = "__presence_live_hosts__";

/// Status words offered for `--status` (any other word is accepted).
const STATUS_WORDS: [&str; 4] = ["idle", "working", "waiting", "interrupted"];

#[derive(Debug, Args)]
pub struct ManpageArgs {
    /// Directory to write the pages into (docs/man in the repository)
    // Not the id `dir`, which the global `--dir` has: a subcommand's
    // arguments are made after the global ones are given to it (see
    // `cli::Command`), so the two would clash.
    #[arg(id = "out_dir", value_name = "DIR")]
    pub dir: std::path::PathBuf,
}

/// The man pages (`manpage.rs`).
pub fn manpage(args: ManpageArgs) -> anyhow::Result<Exit> {
    super::manpage::write(&args.dir)?;
    Ok(Exit::Ok)
}

/// The command as completion scripts should see it: without hidden
/// subcommands, with status words and a command after `run --`.
fn completion_command() -> clap::Command {
    let full = super::command();
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
        for (marks, mark) in [
            (&LIVE_SESSIONS[..], SESSIONS_MARK),
            (&LIVE_HOSTS[..], HOSTS_MARK),
        ] {
            for &(name, arg) in marks {
                if sub.get_name() == name {
                    sub = sub.mut_arg(arg, |a| a.value_parser(PossibleValuesParser::new([mark])));
                }
            }
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
    assert!(
        !script.contains(SESSIONS_MARK) && !script.contains(HOSTS_MARK),
        "completion script: a live-value marker was left in it"
    );
    super::output::stdout().verbatim(&script)?;
    Ok(Exit::Ok)
}

/// Whether a shell may be given `word` to complete with: the completion
/// scripts evaluate what they are given (bash's `compgen -W` expands it),
/// and a session id or a host comes from any device.
fn completable(word: &str) -> bool {
    !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// `presence complete profiles`: the profile names, one per line; `sessions`
/// and `hosts`: those of the live sessions. Only words made of safe
/// characters are printed, since a shell evaluates them; a missing or
/// broken configuration lists `default` alone, and no session, quietly.
pub fn complete(ctx: &Ctx, args: CompleteArgs) -> anyhow::Result<Exit> {
    let mut out = super::output::stdout();
    let live = || -> Vec<presence::Row> {
        ctx.registry()
            .and_then(|r| Ok(r.list(presence::ListOptions::default(), presence::unix_now())?))
            .map(|l| l.rows)
            .unwrap_or_default()
    };
    match args.what {
        Completable::Sessions => {
            let mut seen = std::collections::HashSet::new();
            for row in live() {
                let id = row.record.session_id;
                if completable(&id) && seen.insert(id.clone()) {
                    out.say(id)?;
                }
            }
        }
        Completable::Hosts => {
            let mut hosts: Vec<String> = live()
                .into_iter()
                .map(|r| r.record.host)
                .filter(|h| completable(h))
                .collect();
            hosts.sort_by_key(|h| (h.to_lowercase(), h.clone()));
            hosts.dedup();
            for host in hosts {
                out.say(host)?;
            }
        }
        Completable::Profiles => {
            let mut names: Vec<String> =
                presence::Profile::resolve_all(&ctx.selection(), &ctx.local)
                    .map(|all| all.into_iter().map(|p| p.name).collect())
                    .unwrap_or_default();
            if !names.iter().any(|n| n == "default") {
                names.insert(0, "default".into());
            }
            for name in names {
                if completable(&name) {
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

/// Replaces `from` with `to` once, in the block of `script` that starts
/// with `block` (up to the next subcommand's), insisting it is there.
fn patch_in(script: String, block: &str, from: &str, to: &str) -> String {
    let start = script
        .find(block)
        .unwrap_or_else(|| panic!("completion script: `{block}` not found"));
    let end = script[start + block.len()..]
        .find("\n        presence__")
        .map_or(script.len(), |e| start + block.len() + e);
    let at = script[start..end]
        .find(from)
        .map(|i| start + i)
        .unwrap_or_else(|| panic!("completion script: `{from}` not found in `{block}`"));
    format!("{}{to}{}", &script[..at], &script[at + from.len()..])
}

/// The shell function that the bash and zsh scripts call for live values,
/// handing on the `--profile`, `--config` and `--dir` of the command line.
const BASH_LIVE: &str = r#"# Live session ids and hosts, of the profile and directory the command line names.
__presence_complete() {
    local i args=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
            --profile | --config | --dir)
                if [[ "${COMP_WORDS[i + 1]}" == "=" ]]; then
                    args+=("${COMP_WORDS[i]}" "${COMP_WORDS[i + 2]}")
                else
                    args+=("${COMP_WORDS[i]}" "${COMP_WORDS[i + 1]}")
                fi
                ;;
        esac
    done
    presence "${args[@]}" complete "$1" 2>/dev/null
}

"#;

fn bash(script: String) -> String {
    let mut script = BASH_LIVE.to_string() + &script;
    // A session id where the subcommand takes one (not an option's value).
    for sub in ["show", "open"] {
        let block = format!("        presence__subcmd__{sub})\n");
        script = patch_in(script, &block, &format!(" {SESSIONS_MARK}\""), "\"");
        script = patch(
            script,
            &block,
            &format!(
                r#"{block}            if [[ ${{cur}} != -* && ${{prev}} != --profile && ${{prev}} != --config && ${{prev}} != --dir ]]; then
                COMPREPLY=($(compgen -W "$(__presence_complete sessions)" -- "${{cur}}"))
                return 0
            fi
"#
            ),
        );
    }
    let script = script
        .replace(
            &format!("\"{SESSIONS_MARK}\""),
            "\"$(__presence_complete sessions)\"",
        )
        .replace(
            &format!("\"{HOSTS_MARK}\""),
            "\"$(__presence_complete hosts)\"",
        );
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

/// The zsh function for live values: the `--profile`, `--config` and
/// `--dir` of the whole command line (`words` holds only the subcommand's).
const ZSH_LIVE: &str = r#"# Live session ids and hosts, of the profile and directory the command line names.
__presence_complete() {
    local -a line args
    local i
    line=(${(Q)${(z)BUFFER}})
    for ((i = 2; i < ${#line}; i++)); do
        case ${line[i]} in
            --profile | --config | --dir) args+=(${line[i]} ${line[i + 1]}) ;;
            --profile=* | --config=* | --dir=*) args+=(${line[i]}) ;;
        esac
    done
    presence $args complete $1 2>/dev/null
}

"#;

fn zsh(script: String) -> String {
    let script = patch(
        script,
        ":NAME:_default' \\",
        ":NAME:{compadd -- ${(f)\"$(presence complete profiles 2>/dev/null)\"}}' \\",
    );
    let script = patch(
        script,
        &format!(":({SESSIONS_MARK})'"),
        ":{compadd -- ${(f)\"$(__presence_complete sessions)\"}}'",
    );
    let script = patch(
        script,
        &format!(":({HOSTS_MARK})'"),
        ":{compadd -- ${(f)\"$(__presence_complete hosts)\"}}'",
    );
    // After the `#compdef` line, which must stay first.
    patch(
        script,
        "#compdef presence\n",
        &format!("#compdef presence\n\n{ZSH_LIVE}"),
    )
}

/// The fish functions for live values (with the `--profile`, `--config`
/// and `--dir` of the command line) and for the global options' place.
const FISH_LIVE: &str = r#"
# Live session ids and hosts, of the profile and directory the command line names.
function __fish_presence_complete
    set -l tokens (commandline -opc)
    set -l args
    for i in (seq 2 (count $tokens))
        switch $tokens[$i]
            case --profile --config --dir
                set -l next (math $i + 1)
                set -q tokens[$next]; and set args $args $tokens[$i] $tokens[$next]
            case '--profile=*' '--config=*' '--dir=*'
                set args $args $tokens[$i]
        end
    end
    presence $args complete $argv 2>/dev/null
end
complete -c presence -n "__fish_presence_using_subcommand show open" -f -a '(__fish_presence_complete sessions)'
# `presence --profile <TAB>`, before the subcommand: the generated condition
# fails while the option still lacks its value.
function __fish_presence_global_profile
    set -l tokens (commandline -opc)
    test (count $tokens) -ge 2; and test "$tokens[-1]" = --profile; or return 1
    set -e tokens[-1]
    set -e tokens[1]
    argparse -s (__fish_presence_global_optspecs) -- $tokens 2>/dev/null; or return 1
    not set -q argv[1]
end
complete -c presence -n "__fish_presence_global_profile" -f -a '(presence complete profiles 2>/dev/null)'
"#;

fn fish(script: String) -> String {
    let script = script
        .replace(
            &format!("\"{SESSIONS_MARK}\\t''\""),
            "'(__fish_presence_complete sessions)'",
        )
        .replace(
            &format!("\"{HOSTS_MARK}\\t''\""),
            "'(__fish_presence_complete hosts)'",
        )
        + FISH_LIVE
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
