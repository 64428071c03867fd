//! The plan/apply machine: each step setup would take is a [`Change`] (in
//! words, and how), applied only after the whole plan was shown; and how
//! setup reads the files it edits or inspects (the crontab among them).

use std::io::{BufRead, Write};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};

use crate::cli::output::{Out, Styled};

/// The most setup reads of a file it edits or inspects.
pub(super) const MAX_READ: usize = 4 << 20;

/// One step of the plan.
pub(super) struct Change {
    /// What it does, in words: printed before, or instead of, doing it.
    pub(super) what: String,
    pub(super) action: Action,
}

pub(super) enum Action {
    /// Write `text` to `path` (atomically, keeping the mode 0644 or the
    /// file's): a temp file renamed over whatever is at `path`, so a
    /// symbolic link there is replaced, never written through.
    Write { path: PathBuf, text: String },
    /// Replace the file at `path` (not a symbolic link) with `text`, if it
    /// still holds `before` (what the plan was made from; `None`: there was
    /// none), first copying it to `backup`; each written as [`Action::Write`]
    /// writes, with the file's mode (a new one 0600: a file of another
    /// program's settings may hold its secrets).
    Edit {
        path: PathBuf,
        before: Option<String>,
        text: String,
        backup: Option<PathBuf>,
    },
    /// Remove a file.
    Remove(PathBuf),
    /// Create a directory, mode 0700.
    MakeDir(PathBuf),
    /// Run a program.
    Run(Vec<String>),
    /// Install `after` as the user's crontab, if it still is `before`;
    /// `lines` are the ones added, shown with the plan.
    Crontab {
        before: String,
        after: String,
        lines: Vec<String>,
    },
}

impl Change {
    /// The lines this step adds to a file the user may want to read or
    /// copy them from (a crontab's), shown under its words.
    pub(super) fn lines(&self) -> &[String] {
        match &self.action {
            Action::Crontab { lines, .. } => lines,
            _ => &[],
        }
    }
}

/// What setup says after its plan.
pub(super) enum Note {
    /// Said as any text is, made safe for the terminal.
    Say(String),
}

/// A small text file (invalid UTF-8 replaced), `None` when it does not
/// exist. Read with the library's one bounded read: a `.stignore` is in a
/// shared folder, and a symlink planted there must not make setup read (and
/// write back into the folder) a file it points to, nor a FIFO hang setup.
pub(super) fn read_small(path: &Path) -> Result<Option<String>, presence::bounded::ReadError> {
    Ok(presence::bounded::read_path(path, MAX_READ)?
        .map(|b| String::from_utf8_lossy(&b).into_owned()))
}

/// Asks a yes/no question on the terminal; yes unless the answer starts with n.
pub(super) fn confirm(out: &mut Out, question: &str) -> anyhow::Result<bool> {
    out.prompt(&Styled::new(format_args!("{question} [Y/n] ")))?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(!answer.trim().to_lowercase().starts_with('n'))
}

/// Asks a yes/no question whose answer is no unless it starts with y: for
/// a choice about what this device shares, an answer not given is a no.
pub(super) fn ask(out: &mut Out, question: &str) -> anyhow::Result<bool> {
    out.prompt(&Styled::new(format_args!("{question} [y/N] ")))?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(answer.trim().to_lowercase().starts_with('y'))
}

/// Writes `text` to `path` atomically: a temp file beside it, with `mode`
/// (else the file's, else 0644), renamed over whatever is at `path`.
fn write_file(path: &Path, text: &str, mode: Option<u32>) -> anyhow::Result<()> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let mode = mode.unwrap_or_else(|| {
        std::fs::symlink_metadata(path)
            .ok()
            .filter(|m| m.is_file())
            .map_or(0o644, |m| m.permissions().mode() & 0o7777)
    });
    let mut tmp = tempfile::Builder::new()
        .prefix(".presence-setup.")
        .suffix(".tmp")
        .tempfile_in(parent)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)?;
    Ok(())
}

pub(super) fn apply(action: &Action) -> anyhow::Result<()> {
    match action {
        Action::Write { path, text } => write_file(path, text, None)?,
        Action::Edit {
            path,
            before,
            text,
            backup,
        } => {
            let now = presence::bounded::read_path(path, MAX_READ)
                .with_context(|| format!("cannot read {}", path.display()))?
                .map(|b| String::from_utf8_lossy(&b).into_owned());
            if now != *before {
                bail!(
                    "{} changed while setup ran, so setup left it as it is: run setup again",
                    path.display()
                );
            }
            let mode = std::fs::symlink_metadata(path)
                .ok()
                .filter(|m| m.is_file())
                .map_or(0o600, |m| m.permissions().mode() & 0o7777);
            if let (Some(backup), Some(old)) = (backup, before) {
                write_file(backup, old, Some(mode))
                    .with_context(|| format!("cannot write {}", backup.display()))?;
            }
            if let Some(parent) = path.parent()
                && !parent.exists()
            {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(parent)?;
            }
            write_file(path, text, Some(mode))?;
        }
        Action::Remove(path) => std::fs::remove_file(path)?,
        Action::MakeDir(dir) => {
            if let Some(parent) = dir.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::DirBuilder::new().mode(0o700).create(dir)?;
        }
        Action::Run(argv) => {
            let status = Command::new(&argv[0])
                .args(&argv[1..])
                .stdin(Stdio::null())
                .status()
                .with_context(|| format!("cannot run {}", argv[0]))?;
            anyhow::ensure!(status.success(), "`{}` failed ({status})", argv.join(" "));
        }
        Action::Crontab { before, after, .. } => install_crontab(before, after)?,
    }
    Ok(())
}

/// The crontab, as `crontab -l` gives it.
pub(super) enum Crontab {
    /// There is no `crontab` program.
    NotInstalled,
    /// `crontab -l` failed for another reason than there being none: why.
    Unreadable(String),
    /// The user's crontab (empty when there is none).
    Text(String),
}

/// Reads this user's crontab with `crontab -l` (setup's lines in it are
/// `cron.rs`'s).
pub(super) fn read_crontab() -> Crontab {
    let out = match Command::new("crontab")
        .arg("-l")
        .stdin(std::process::Stdio::null())
        .output()
    {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Crontab::NotInstalled,
        Err(e) => return Crontab::Unreadable(format!("cannot run crontab: {e}")),
    };
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        Crontab::Text(stdout)
    } else if stdout.is_empty() && stderr.to_lowercase().contains("no crontab") {
        Crontab::Text(String::new())
    } else {
        Crontab::Unreadable(format!(
            "`crontab -l` failed ({}): {}",
            out.status,
            stderr.trim()
        ))
    }
}

/// Installs `after` as this user's crontab, if the crontab still holds
/// `before` (what the plan was made from).
pub(super) fn install_crontab(before: &str, after: &str) -> anyhow::Result<()> {
    match read_crontab() {
        Crontab::Text(now) if now == before => {}
        Crontab::Text(_) => bail!(
            "your crontab changed while setup ran, so setup left it as it is: run setup again"
        ),
        Crontab::NotInstalled => bail!("there is no `crontab` program any more"),
        Crontab::Unreadable(why) => bail!("{why}"),
    }
    let mut file = tempfile::Builder::new()
        .prefix("presence-crontab.")
        .tempfile()
        .context("cannot write a temp file for crontab")?;
    std::io::Write::write_all(&mut file, after.as_bytes())?;
    let status = Command::new("crontab")
        .arg(file.path())
        .stdin(std::process::Stdio::null())
        .status()
        .context("cannot run crontab")?;
    anyhow::ensure!(status.success(), "`crontab FILE` failed ({status})");
    Ok(())
}
