//! The `presence` command: parse the flags, run the subcommand, map the
//! outcome to an exit code (0 ok, 1 runtime error, 2 usage error, 3 refused
//! by `--strict`). All logic lives in the library and in `cli/`.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args = <cli::Cli as clap::Parser>::parse();
    match cli::run(args) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            if cli::is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            let msg = format!("{err:#}");
            eprintln!("presence: error: {}", cli::safe(&msg));
            ExitCode::from(cli::exit_code(&err))
        }
    }
}
