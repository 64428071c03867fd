//! The `presence` command: parse the flags, run the subcommand, exit with the
//! status it decided (`cli::Exit`). All logic lives in the library and in
//! `cli/`.

mod cli;

use std::process::ExitCode;

use cli::Exit;

fn main() -> ExitCode {
    if let Some(version) = cli::version_only() {
        // As clap prints it, whose output errors are ignored too.
        let mut out = cli::output::stdout();
        let _ = out.verbatim(&version).and_then(|()| out.flush());
        return Exit::Ok.into();
    }
    let args = match cli::parse() {
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
            cli::output::report(&err);
            cli::exit::of_error(&err)
        }
    };
    exit.into()
}
