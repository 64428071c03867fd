//! The `presence` command: parse the flags, run the subcommand, exit with the
//! status it decided (`cli::Exit`). All logic lives in the library and in
//! `cli/`.

mod cli;

use std::process::ExitCode;

use cli::Exit;

fn main() -> ExitCode {
    let args = match <cli::Cli as clap::Parser>::try_parse_from(cli::args()) {
        Ok(args) => args,
        Err(err) => {
            // clap prints help and the version on stdout, errors on stderr.
            let _ = err.print();
            let exit = if err.use_stderr() {
                Exit::Usage
            } else {
                Exit::Ok
            };
            return exit.into();
        }
    };
    let exit = match cli::run(args) {
        Ok(exit) => exit,
        Err(err) if cli::is_broken_pipe(&err) => Exit::Ok,
        Err(err) => {
            cli::output::error(format_args!("{err:#}"));
            cli::exit::of_error(&err)
        }
    };
    exit.into()
}
