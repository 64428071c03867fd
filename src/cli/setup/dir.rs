//! Choosing the records directory: `--dir`, the configured one, or a synced
//! folder found on this device (Syncthing's folders come from the library,
//! which reads Syncthing's configuration), and the Syncthing folder that
//! holds a directory (its root, where the `.stignore` setup edits is).

use std::io::BufRead;
use std::path::{Path, PathBuf};

use presence::Profile;
use presence::engine::{self, Engine};

use crate::cli::output::{self, Styled};
use crate::cli::{Ctx, UsageError};

/// The records directory: `--dir`, else the one already configured, else a
/// synced folder found here (asked on a terminal, the first with `--yes`).
pub(super) fn choose_dir(
    ctx: &Ctx,
    current: &Profile,
    interactive: bool,
) -> anyhow::Result<PathBuf> {
    if let Some(dir) = &ctx.global.dir {
        return Ok(std::path::absolute(dir)?);
    }
    if !current.dir_is_default {
        return Ok(current.dir.clone());
    }
    let candidates = candidates(&ctx.local.home);
    if !interactive {
        return candidates.first().map(|c| c.dir()).ok_or_else(|| {
            UsageError(
                "no synced folder found (Syncthing, ~/Sync, Dropbox, Nextcloud, iCloud Drive): \
                 pass --dir DIR"
                    .into(),
            )
            .into()
        });
    }
    let mut out = output::stdout();
    out.say("Where should this device keep its presence records?")?;
    for (i, c) in candidates.iter().enumerate() {
        out.say(format_args!(
            "  {}) {}  ({})",
            i + 1,
            c.dir().display(),
            c.what
        ))?;
    }
    let default = if candidates.is_empty() { "" } else { "1" };
    out.prompt(&Styled::new(format_args!(
        "Enter a number or a directory (in a folder your devices sync) [{default}]: "
    )))?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    let answer = answer.trim();
    let answer = if answer.is_empty() { default } else { answer };
    if let Ok(n) = answer.parse::<usize>()
        && let Some(c) = n.checked_sub(1).and_then(|i| candidates.get(i))
    {
        return Ok(c.dir());
    }
    if answer.is_empty() {
        return Err(UsageError("no directory given".into()).into());
    }
    let path = match answer.strip_prefix("~/") {
        Some(rest) => ctx.local.home.join(rest),
        None => PathBuf::from(answer),
    };
    Ok(std::path::absolute(path)?)
}

/// A synced folder found on this device.
#[derive(Debug, PartialEq)]
pub(crate) struct Candidate {
    pub folder: PathBuf,
    /// Which engine, and the folder's name there.
    pub what: String,
    /// Named by Syncthing's configuration (not only by where it is).
    pub syncthing: bool,
}

impl Candidate {
    fn dir(&self) -> PathBuf {
        self.folder.join("presence")
    }
}

/// Synced folders on this device, best first: Syncthing's (from its
/// configuration, read by the library), then `~/Sync`, Dropbox, Nextcloud and iCloud Drive, each
/// once and only if it exists.
pub(crate) fn candidates(home: &Path) -> Vec<Candidate> {
    let mut found: Vec<Candidate> = Vec::new();
    for (label, path) in engine::syncthing_folders(home) {
        found.push(Candidate {
            folder: path,
            what: format!("Syncthing folder \"{label}\""),
            syncthing: true,
        });
    }
    let plain = [
        ("Sync", "Syncthing's default folder"),
        ("Dropbox", "Dropbox"),
        ("Nextcloud", "Nextcloud"),
        (
            "Library/Mobile Documents/com~apple~CloudDocs",
            "iCloud Drive",
        ),
    ];
    for (rel, what) in plain {
        found.push(Candidate {
            folder: home.join(rel),
            what: what.into(),
            syncthing: false,
        });
    }
    let mut seen = Vec::new();
    found.retain(|c| {
        let key = std::fs::canonicalize(&c.folder).ok();
        match key {
            Some(k) if k.is_dir() && !seen.contains(&k) => {
                seen.push(k);
                true
            }
            _ => false,
        }
    });
    found
}

/// The Syncthing folder that holds `dir`: the innermost folder of
/// Syncthing's configuration (this device's own file, which no other device
/// writes) that holds it, else the outermost `.stfolder` from `dir` up
/// ([`engine::find`]: a `.stfolder` below a folder's root, in the records
/// directory itself say, is a synced file another device may have planted).
pub(super) fn syncthing_root(dir: &Path, home: &Path) -> Option<PathBuf> {
    let configured = candidates(home)
        .into_iter()
        .filter(|c| c.syncthing)
        .map(|c| c.folder)
        .filter(|f| dir.starts_with(f))
        .max_by_key(|f| f.as_os_str().len());
    configured.or_else(|| {
        engine::find(dir)
            .filter(|f| f.engine == Engine::Syncthing)
            .map(|f| f.root)
    })
}

/// The root of the synced folder that holds `dir`, where any device may
/// have put a file (or a symbolic link): Syncthing's, else any engine's.
pub(super) fn synced_root(dir: &Path, home: &Path) -> Option<PathBuf> {
    syncthing_root(dir, home).or_else(|| engine::find(dir).map(|f| f.root))
}
