//! `presence completions SHELL`: print a completion script.

use clap::{Args, CommandFactory};
use clap_complete::Shell;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell
    pub shell: Shell,
}

pub fn run(args: CompletionsArgs) -> anyhow::Result<u8> {
    let mut cmd = super::Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "presence", &mut std::io::stdout());
    Ok(0)
}
