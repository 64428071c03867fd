//! `presence completions SHELL`: print a completion script.

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::Exit;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell
    pub shell: Shell,
}

/// The man page, rendered by clap_mangen from the same definitions as `--help`.
pub fn manpage() -> anyhow::Result<Exit> {
    // The plain version, so that the checked-in page does not change at
    // every commit.
    let cmd = super::Cli::command().long_version(None::<&str>);
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut out)?;
    std::io::Write::write_all(&mut std::io::stdout().lock(), &out)?;
    Ok(Exit::Ok)
}

pub fn run(args: CompletionsArgs) -> anyhow::Result<Exit> {
    let mut cmd = super::Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "presence", &mut std::io::stdout());
    Ok(Exit::Ok)
}
