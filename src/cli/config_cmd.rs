//! `presence config path|show|init|edit`.

use std::fmt::Write as _;
use std::io::Write as _;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use presence::{Profile, ShowSet};

use super::{Ctx, Exit};

#[derive(Debug, Args)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, Subcommand)]
pub enum Action {
    /// Print the path of the configuration file in use
    Path,
    /// Print the selected profile with every setting resolved
    Show,
    /// Write the commented example configuration (refuses to overwrite)
    Init,
    /// Open the configuration file in $VISUAL or $EDITOR (the example first, when there is
    /// none), then check what was saved
    Edit,
}

pub fn run(ctx: &Ctx, args: ConfigArgs) -> anyhow::Result<Exit> {
    let sel = ctx.selection();
    let path = sel
        .config
        .clone()
        .unwrap_or_else(|| ctx.local.config_file());
    // What this command prints is its own making: a path the user gave or
    // the defaults chose, and TOML whose strings escape their control
    // characters. It is written as it is.
    let mut out = String::new();
    match args.action {
        Action::Path => {
            writeln!(out, "{}", path.display())?;
            if !path.exists() {
                ctx.detail("the file does not exist; the built-in defaults apply");
            }
        }
        Action::Show => {
            let (p, source) =
                Profile::resolve(&sel, &ctx.local).context("cannot load the configuration")?;
            let from = if source.exists {
                source.path.display().to_string()
            } else {
                format!(
                    "built-in defaults ({} does not exist)",
                    source.path.display()
                )
            };
            let q = |s: &str| toml_string(s);
            let d = |d: std::time::Duration| q(&humantime::format_duration(d).to_string());
            writeln!(out, "# from: {from}")?;
            let key = if bare_key(&p.name) {
                p.name.clone()
            } else {
                q(&p.name)
            };
            writeln!(out, "[profiles.{key}]")?;
            writeln!(out, "dir = {}", q(&p.dir.display().to_string()))?;
            if p.dirs.len() > 1 {
                // Every directory read, `dir` first.
                let dirs: Vec<String> =
                    p.dirs.iter().map(|d| q(&d.display().to_string())).collect();
                writeln!(out, "dirs = [{}]", dirs.join(", "))?;
            }
            writeln!(out, "ttl = {}", d(p.ttl))?;
            writeln!(out, "refresh_interval = {}", d(p.refresh_interval))?;
            writeln!(out, "skew = {}", d(p.skew))?;
            writeln!(out, "gc_after = {}", d(p.gc_after))?;
            writeln!(out, "clock_margin = {}", d(p.clock_margin))?;
            writeln!(out, "client = {}", q(&p.client))?;
            writeln!(out, "strict = {}", p.strict)?;
            writeln!(out, "label = {}", q(&p.label))?;
            let show = match &p.show {
                ShowSet::Labels(l) => l.iter().map(|s| q(s)).collect::<Vec<_>>().join(", "),
                _ => q("*"),
            };
            writeln!(out, "show = [{show}]")?;
            let handlers = &p.open_handlers;
            writeln!(out, "\n# `presence open`: the handler in force per scheme")?;
            let opener = presence::open::platform_opener();
            for scheme in handlers.schemes() {
                let key = if bare_key(&scheme) {
                    scheme.clone()
                } else {
                    q(&scheme)
                };
                match handlers.configured(&scheme) {
                    Some(command) => {
                        let argv: Vec<String> = command.iter().map(|a| q(a)).collect();
                        writeln!(out, "[open.handlers.{key}]")?;
                        writeln!(out, "command = [{}]", argv.join(", "))?;
                        if let Some(inside) = handlers.configured_inside_tmux(&scheme) {
                            let argv: Vec<String> = inside.iter().map(|a| q(a)).collect();
                            writeln!(out, "inside_tmux = [{}]", argv.join(", "))?;
                        }
                    }
                    None => {
                        let builtin = presence::open::builtin_description(&scheme, opener)
                            .unwrap_or_default();
                        writeln!(out, "# {key} (built-in): {builtin}")?;
                    }
                }
            }
            let agents: Vec<String> = p.discover.iter().map(|a| q(a)).collect();
            writeln!(
                out,
                "\n# The local agents whose sessions `presence refresh` publishes"
            )?;
            writeln!(out, "[discover]")?;
            writeln!(out, "agents = [{}]", agents.join(", "))?;
        }
        Action::Edit => return edit(ctx, &path),
        Action::Init => {
            if path.exists() {
                anyhow::bail!(
                    "{} already exists; edit it, or move it away and run `presence config init` again",
                    path.display()
                );
            }
            write_example(&path)?;
            if !ctx.global.quiet {
                writeln!(out, "wrote {}", path.display())?;
            }
        }
    }
    super::output::stdout().verbatim(&out)?;
    Ok(Exit::Ok)
}

/// Writes the commented example at `path`, which must not exist (its
/// directory made); a write cut short leaves no half example behind.
fn write_example(path: &std::path::Path) -> anyhow::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create directory {}", parent.display()))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    if let Err(e) = f.write_all(presence::CONFIG_EXAMPLE.as_bytes()) {
        drop(f);
        let _ = std::fs::remove_file(path);
        return Err(e).with_context(|| format!("cannot write {}", path.display()));
    }
    Ok(())
}

/// `config edit`: the file at `path` in the user's editor (`$VISUAL`, else
/// `$EDITOR`, else `vi`, run through `sh -c` as git runs it, so that
/// `EDITOR="code -w"` works), the commented example written first when
/// there is no file; then every profile of what was saved resolved, and a
/// mistake reported as every command would report it (exit 1), with the
/// way back into the editor.
fn edit(ctx: &Ctx, path: &std::path::Path) -> anyhow::Result<Exit> {
    let mut out = super::output::stdout();
    match std::fs::metadata(path) {
        // A FIFO or a device would hang the editor, or worse.
        Ok(m) if !m.is_file() => anyhow::bail!(
            "{} is not a regular file; point --config or PRESENCE_CONFIG at a TOML file, or \
             move it away and run `presence config edit` again",
            path.display()
        ),
        Ok(_) => {}
        Err(_) => {
            write_example(path)?;
            if !ctx.global.quiet {
                out.say(format_args!(
                    "wrote {} (the commented example)",
                    path.display()
                ))?;
            }
        }
    }
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(std::env::var_os)
        .find(|e| !e.is_empty())
        .unwrap_or_else(|| "vi".into());
    let mut script = std::ffi::OsString::from(&editor);
    script.push(" \"$@\"");
    // While the editor runs, a Ctrl-C or Ctrl-\ at the terminal is the
    // editor's to take (as git does): this process waits on, the handlers
    // set only for that long (an exec'd child starts with the default).
    let caught = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let handlers: Vec<signal_hook::SigId> =
        [signal_hook::consts::SIGINT, signal_hook::consts::SIGQUIT]
            .into_iter()
            .filter_map(|sig| signal_hook::flag::register(sig, caught.clone()).ok())
            .collect();
    let status = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(&script)
        .arg("presence-editor")
        // A relative path that begins with `-` or `+` is no option to it.
        .arg(if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::path::Path::new(".").join(path)
        })
        .status();
    for id in handlers {
        signal_hook::low_level::unregister(id);
    }
    let status =
        status.with_context(|| format!("cannot run the editor ({})", editor.to_string_lossy()))?;
    if !status.success() {
        anyhow::bail!(
            "the editor ({}) exited with {status}; {} was not checked (run `presence config \
             edit` again, or set VISUAL or EDITOR to another editor)",
            editor.to_string_lossy(),
            path.display()
        );
    }
    // Every profile, and the one commands pick (default_profile, --profile,
    // PRESENCE_PROFILE, --dir).
    let checked = Profile::resolve_all(&ctx.selection(), &ctx.local)
        .and_then(|all| Profile::resolve(&ctx.selection(), &ctx.local).map(|_| all));
    match checked {
        Ok(profiles) => {
            if !ctx.global.quiet {
                out.say(format_args!(
                    "{}: ok ({} profile(s): {})",
                    path.display(),
                    profiles.len(),
                    profiles
                        .iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))?;
            }
            Ok(Exit::Ok)
        }
        Err(e) => {
            super::output::report(&anyhow::Error::new(e).context(format!(
                "{} as saved is not a configuration presence can use",
                path.display()
            )));
            super::output::notice(
                "commands that use it refuse it until it is fixed: run `presence config edit` \
                 again",
            );
            Ok(Exit::Failure)
        }
    }
}

/// Whether `key` can stand unquoted as a TOML key.
fn bare_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}
