//! The config-edit plan: `[profiles.NAME] dir` and `[discover] agents` set
//! in place, every other byte of the file kept; in the file a symbolic link
//! leads to, as an editor writes it, unless the link is in the synced folder.

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
/// have setup edit a file of this device (`fix` says what to do instead).
pub(super) fn edited_file(
    path: &Path,
    dir: &Path,
    synced: Option<&Path>,
    fix: &str,
) -> anyhow::Result<PathBuf> {
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
             setup never writes through it; {fix}",
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

/// How a plan names the file `path` that it edits for `link`.
pub(super) fn shown(path: &Path, link: &Path) -> String {
    if path == link {
        path.display().to_string()
    } else {
        format!(
            "{} (where the link {} leads)",
            path.display(),
            link.display()
        )
    }
}

/// What setup sets in the configuration.
pub(super) struct Edit<'a> {
    /// `[profiles.NAME] dir`: the profile's name and the directory.
    pub(super) profile: &'a str,
    pub(super) dir: &'a Path,
    /// `[discover] agents`, when setup is to set it.
    pub(super) agents: Option<&'a [&'static str]>,
}

/// `agents` as the file writes them.
pub(super) fn agents_value(agents: &[&str]) -> String {
    let quoted: Vec<String> = agents.iter().map(|a| format!("\"{a}\"")).collect();
    format!("[{}]", quoted.join(", "))
}

/// Sets `[profiles.NAME] dir` and `[discover] agents` in the configuration
/// file, editing it in place: comments, other keys, tables and profiles
/// stay byte for byte (an `agents` already there keeps its place and its
/// comment). A symbolic link stays one: the file it leads to is edited.
/// What it writes is read back with the configuration's own parser.
pub(super) fn config_plan(
    link: &Path,
    edit: &Edit,
    synced: Option<&Path>,
    home: &Path,
) -> anyhow::Result<Vec<Change>> {
    let (profile, dir) = (edit.profile, edit.dir);
    let path = &edited_file(
        link,
        dir,
        synced,
        "point --config at a file outside the synced folder",
    )?;
    let text = read_small(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .unwrap_or_default();
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("cannot parse {}", path.display()))?;
    let file = shown(path, link);
    let mut said = Vec::new();
    if let Some(dir_said) = set_dir(&mut doc, profile, dir, home, text.is_empty())? {
        said.push(dir_said);
    }
    if let Some(agents) = edit.agents
        && let Some(agents_said) = set_agents(&mut doc, agents, text.is_empty())?
    {
        said.push(agents_said);
    }
    if said.is_empty() {
        return Ok(Vec::new());
    }
    let mut new = doc.to_string();
    if text.is_empty() {
        new = format!(
            "# presence configuration: every setting is in\n# {}/blob/main/docs/configuration.md\n\
             # (`presence config show` prints what applies). Written by `presence setup`; edit\n\
             # freely.\n{new}",
            env!("CARGO_PKG_REPOSITORY")
        );
    }
    if let Some(agents) = edit.agents {
        let read = presence::discover_agents_of(&new, path)
            .with_context(|| format!("setup's edit of {} would not load", path.display()))?;
        anyhow::ensure!(
            same_agents(&read, agents),
            "setup's edit of {} would not read back as [discover] agents = {}",
            path.display(),
            agents_value(agents)
        );
    }
    let mut what = if text.is_empty() {
        format!("write {file} with {}", said.join(" and "))
    } else {
        format!("{} in {file}", said.join(" and "))
    };
    if let Some(agents) = edit.agents.filter(|a| !a.is_empty())
        && what.contains("[discover]")
    {
        what.push_str(&format!(
            "; the refresher then publishes each live session of {}: the agent, its status and \
             its title, never what you type",
            agents.join(", ")
        ));
    }
    Ok(vec![Change {
        what,
        action: Action::Write {
            path: path.to_path_buf(),
            text: new,
        },
    }])
}

/// Whether two lists name the same agents, in any order.
pub(super) fn same_agents(a: &[&str], b: &[&str]) -> bool {
    a.iter().all(|x| b.contains(x)) && b.iter().all(|x| a.contains(x))
}

/// Sets `[profiles.NAME] dir` in `doc`, unless it is `dir` already: what
/// was done, in words (`fresh`: in a new file).
fn set_dir(
    doc: &mut toml_edit::DocumentMut,
    profile: &str,
    dir: &Path,
    home: &Path,
    fresh: bool,
) -> anyhow::Result<Option<String>> {
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
            return Ok(None);
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
    Ok(Some(match current {
        None if fresh => format!("[profiles.{profile}] dir = \"{value}\""),
        None => format!("set [profiles.{profile}] dir = \"{value}\""),
        Some(old) => format!("change [profiles.{profile}] dir from \"{old}\" to \"{value}\""),
    }))
}

/// Sets `[discover] agents` in `doc` to `agents`, unless it names them
/// already (in any order), or they are none and the file names none: what
/// was done, in words (`fresh`: in a new file).
fn set_agents(
    doc: &mut toml_edit::DocumentMut,
    agents: &[&'static str],
    fresh: bool,
) -> anyhow::Result<Option<String>> {
    let current: Option<Vec<&str>> = doc
        .get("discover")
        .and_then(|d| d.get("agents"))
        .and_then(|a| a.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect());
    if current.as_deref().unwrap_or(&[]).len() == agents.len()
        && same_agents(current.as_deref().unwrap_or(&[]), agents)
    {
        return Ok(None);
    }
    let table = doc
        .entry("discover")
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .context("`discover` in the configuration is not a table")?;
    let mut value = toml_edit::Value::Array(agents.iter().copied().collect());
    // The key keeps its place and the comments above it, the value its own.
    match table.get_mut("agents") {
        Some(old) => {
            if let Some(decor) = old.as_value().map(|v| v.decor().clone()) {
                *value.decor_mut() = decor;
            }
            *old = toml_edit::Item::Value(value);
        }
        None => {
            table.insert("agents", toml_edit::Item::Value(value));
        }
    }
    let setting = format!("[discover] agents = {}", agents_value(agents));
    Ok(Some(match (agents.is_empty(), fresh) {
        (true, _) => format!("turn discovery off: {setting}"),
        (false, true) => setting,
        (false, false) => format!("set {setting}"),
    }))
}
