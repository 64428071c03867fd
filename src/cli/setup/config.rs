//! The config-edit plan: `[profiles.NAME] dir` set in place, every other
//! byte of the file kept; in the file a symbolic link leads to, as an editor
//! writes it, unless the link is in the synced folder.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

use super::plan::{Action, Change, read_small};

/// How `dir` is written in the configuration: `~/…` under the home directory.
pub(super) fn config_value(dir: &Path, home: &Path) -> String {
    match dir.strip_prefix(home) {
        Ok(rest) if !rest.as_os_str().is_empty() => format!("~/{}", rest.display()),
        _ => dir.display().to_string(),
    }
}

/// The file setup edits for the configuration at `path`: `path` itself, or,
/// when it is a symbolic link (dotfile managers make them), the file it
/// leads to, which is what an editor writes and what the configuration is
/// read from. A link in the records directory `dir` or in the synced folder
/// `synced` that holds it is refused: any device may have put it there, to
/// have setup edit a file of this device.
fn edited_file(path: &Path, dir: &Path, synced: Option<&Path>) -> anyhow::Result<PathBuf> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {}
        _ => return Ok(path.to_path_buf()),
    }
    let resolved = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let link_dir = resolved(
        std::path::absolute(path)?
            .parent()
            .unwrap_or(Path::new("/")),
    );
    if let Some(shared) = [Some(dir), synced]
        .into_iter()
        .flatten()
        .find(|d| link_dir.starts_with(resolved(d)))
    {
        bail!(
            "{} is a symbolic link in the synced folder {}, where any device may have put it: \
             setup never writes through it; point --config at a file outside the synced folder",
            path.display(),
            shared.display()
        );
    }
    std::fs::canonicalize(path).with_context(|| {
        format!(
            "{} is a symbolic link that leads to no file: create the file it names, or replace \
             the link with a plain file",
            path.display()
        )
    })
}

/// Sets `[profiles.NAME] dir` in the configuration file, editing it in place:
/// comments, other keys and other profiles stay byte for byte. A symbolic
/// link stays one: the file it leads to is edited.
pub(super) fn config_plan(
    link: &Path,
    profile: &str,
    dir: &Path,
    synced: Option<&Path>,
    home: &Path,
) -> anyhow::Result<Vec<Change>> {
    let path = &edited_file(link, dir, synced)?;
    let text = read_small(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .unwrap_or_default();
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("cannot parse {}", path.display()))?;
    let value = config_value(dir, home);
    let current = doc
        .get("profiles")
        .and_then(|p| p.get(profile))
        .and_then(|p| p.get("dir"))
        .and_then(|d| d.as_str())
        .map(str::to_string);
    if let Some(cur) = &current {
        let expanded = match cur.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => PathBuf::from(cur),
        };
        if expanded == dir || *cur == value {
            return Ok(Vec::new());
        }
    }
    let profiles = doc
        .entry("profiles")
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_mut()
        .context("`profiles` in the configuration is not a table")?;
    let table = profiles
        .entry(profile)
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .with_context(|| format!("`profiles.{profile}` in the configuration is not a table"))?;
    table.insert("dir", toml_edit::value(value.clone()));
    let mut new = doc.to_string();
    if text.is_empty() {
        new = format!(
            "# presence configuration: every setting is in\n# {}/blob/main/docs/configuration.md\n\
             # (`presence config show` prints what applies). Written by `presence setup`; edit\n\
             # freely.\n{new}",
            env!("CARGO_PKG_REPOSITORY")
        );
    }
    let file = if path == link {
        path.display().to_string()
    } else {
        format!(
            "{} (where the link {} leads)",
            path.display(),
            link.display()
        )
    };
    let what = match current {
        None if text.is_empty() => {
            format!("write {file} with [profiles.{profile}] dir = \"{value}\"")
        }
        None => format!("set [profiles.{profile}] dir = \"{value}\" in {file}"),
        Some(old) => {
            format!("change [profiles.{profile}] dir from \"{old}\" to \"{value}\" in {file}")
        }
    };
    Ok(vec![Change {
        what,
        action: Action::Write {
            path: path.to_path_buf(),
            text: new,
        },
    }])
}
