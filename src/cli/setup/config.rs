//! The config-edit plan: `[profiles.NAME] dir` set in place, every other
//! byte of the file kept.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::plan::{Action, Change, read_small};

/// How `dir` is written in the configuration: `~/…` under the home directory.
pub(super) fn config_value(dir: &Path, home: &Path) -> String {
    match dir.strip_prefix(home) {
        Ok(rest) if !rest.as_os_str().is_empty() => format!("~/{}", rest.display()),
        _ => dir.display().to_string(),
    }
}

/// Sets `[profiles.NAME] dir` in the configuration file, editing it in place:
/// comments, other keys and other profiles stay byte for byte.
pub(super) fn config_plan(
    path: &Path,
    profile: &str,
    dir: &Path,
    home: &Path,
) -> anyhow::Result<Vec<Change>> {
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
            "# presence configuration (docs/configuration.md; `presence config show` prints what\n\
             # applies). Written by `presence setup`; edit freely.\n{new}"
        );
    }
    let what = match current {
        None if text.is_empty() => format!(
            "write {} with [profiles.{profile}] dir = \"{value}\"",
            path.display()
        ),
        None => format!(
            "set [profiles.{profile}] dir = \"{value}\" in {}",
            path.display()
        ),
        Some(old) => format!(
            "change [profiles.{profile}] dir from \"{old}\" to \"{value}\" in {}",
            path.display()
        ),
    };
    Ok(vec![Change {
        what,
        action: Action::Write {
            path: path.to_path_buf(),
            text: new,
        },
    }])
}
