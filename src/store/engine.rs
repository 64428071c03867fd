//! Sync engines: the one type that names them ([`Engine`]), used by the
//! names of conflict copies and temp files (`names`), by `doctor`'s
//! `sync-engine` check and by `presence setup`; and how to find the engine
//! that shares a folder, by the marks it leaves up the tree ([`find`]) or,
//! for Syncthing, by its own configuration ([`syncthing_folders`]).

use std::path::{Path, PathBuf};

use super::bounded;
pub use super::names::Engine;

/// A folder a sync engine shares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncFolder {
    /// Which engine.
    pub engine: Engine,
    /// The folder's root: where the engine's mark is.
    pub root: PathBuf,
}

impl SyncFolder {
    /// The engine as a folder of it is named: `Syncthing`, `iCloud Drive`,
    /// `cloud storage (<provider>)`.
    pub fn engine_name(&self) -> String {
        match self.engine {
            Engine::ICloud => "iCloud Drive".into(),
            Engine::CloudStorage => format!(
                "cloud storage ({})",
                self.root.file_name().unwrap_or_default().to_string_lossy()
            ),
            e => e.as_str().into(),
        }
    }
}

/// The sync engine that manages `dir`, by the marks it leaves up the tree
/// (`.stfolder`, `.dropbox`, …), and the folder's root.
///
/// The root is the outermost directory, from `dir` up, that carries a mark:
/// below a folder's root every file is synced content that any device
/// sharing the folder may have written, so a `.stfolder` (or `.dropbox`, …)
/// found in `dir` itself or between it and a marked directory further up was
/// planted there, by a buggy or hostile device, and is no root. Only where
/// no directory above carries a mark is `dir`'s own mark its folder's root
/// (the folder docs/syncthing.md sets up: the records directory shared by
/// itself).
pub fn find(dir: &Path) -> Option<SyncFolder> {
    dir.ancestors().filter_map(mark).last()
}

/// The engine whose mark `d` carries, if any, with `d` as the root.
fn mark(d: &Path) -> Option<SyncFolder> {
    let found = |engine| {
        Some(SyncFolder {
            engine,
            root: d.to_path_buf(),
        })
    };
    if d.join(".stfolder").exists() {
        return found(Engine::Syncthing);
    }
    if d.join(".dropbox").exists() || d.join(".dropbox.cache").exists() {
        return found(Engine::Dropbox);
    }
    if d.join(".sync").join("ID").exists() {
        return found(Engine::ResilioSync);
    }
    let nextcloud = std::fs::read_dir(d).ok().is_some_and(|rd| {
        rd.flatten().take(10_000).any(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with(".sync_") && n.ends_with(".db") || n == ".owncloudsync.log"
        })
    });
    if nextcloud {
        return found(Engine::Nextcloud);
    }
    if d.file_name().is_some_and(|n| n == "Mobile Documents") {
        return found(Engine::ICloud);
    }
    // macOS's File Provider folders: ~/Library/CloudStorage/<provider>.
    if let Some(parent) = d.parent()
        && parent.ends_with("Library/CloudStorage")
        && d.file_name().is_some()
    {
        return found(Engine::CloudStorage);
    }
    None
}

/// The most read of a Syncthing `config.xml`.
const MAX_CONFIG_XML: usize = 4 << 20;

/// The folders of Syncthing's configuration on this device (`config.xml`
/// under `$XDG_CONFIG_HOME`, `$XDG_STATE_HOME` or macOS's Application
/// Support, in that order): `(label or id, path)`, `~` expanded against
/// `home`, only absolute paths. An unreadable file is no folders.
pub fn syncthing_folders(home: &Path) -> Vec<(String, PathBuf)> {
    let xdg = |var: &str, default: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| home.join(default))
    };
    let configs = [
        xdg("XDG_CONFIG_HOME", ".config").join("syncthing/config.xml"),
        xdg("XDG_STATE_HOME", ".local/state").join("syncthing/config.xml"),
        home.join("Library/Application Support/Syncthing/config.xml"),
    ];
    configs
        .iter()
        .flat_map(|file| match bounded::read_path(file, MAX_CONFIG_XML) {
            Ok(Some(bytes)) => folders_in(&String::from_utf8_lossy(&bytes), home),
            _ => Vec::new(),
        })
        .collect()
}

/// The `<folder>` elements of a Syncthing `config.xml`.
fn folders_in(text: &str, home: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<folder ") {
        rest = &rest[start + "<folder ".len()..];
        let Some(end) = rest.find('>') else { break };
        let tag = &rest[..end];
        let (Some(path), id) = (attribute(tag, "path"), attribute(tag, "id")) else {
            continue;
        };
        let label = attribute(tag, "label")
            .filter(|l| !l.is_empty())
            .or(id)
            .unwrap_or_default();
        let path = match path.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None if path == "~" => home.to_path_buf(),
            None => PathBuf::from(path),
        };
        if path.is_absolute() {
            out.push((label, path));
        }
    }
    out
}

/// An XML attribute's value in a start tag, entities decoded.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let mut at = 0;
    while let Some(i) = tag[at..].find(name) {
        let i = at + i;
        let before_ok = i == 0 || tag[..i].ends_with(char::is_whitespace);
        let after = tag[i + name.len()..].trim_start();
        if before_ok && let Some(after) = after.strip_prefix('=') {
            let after = after.trim_start();
            let quote = after.chars().next()?;
            if quote != '"' && quote != '\'' {
                return None;
            }
            let value = &after[1..];
            let value = &value[..value.find(quote)?];
            return Some(
                value
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&quot;", "\"")
                    .replace("&apos;", "'")
                    .replace("&amp;", "&"),
            );
        }
        at = i + name.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_attributes() {
        let tag = r#"id="a-b" label="Tom &amp; Jerry" path='~/Sync' xpath="no""#;
        assert_eq!(attribute(tag, "id").as_deref(), Some("a-b"));
        assert_eq!(attribute(tag, "label").as_deref(), Some("Tom & Jerry"));
        assert_eq!(attribute(tag, "path").as_deref(), Some("~/Sync"));
        assert_eq!(attribute(tag, "missing"), None);
        assert_eq!(attribute("path=unquoted", "path"), None);
        assert_eq!(attribute("path=\"open", "path"), None);
    }

    #[test]
    fn folders_of_a_config_xml() {
        let home = Path::new("/home/u");
        let xml = "<configuration>\n<folder id=\"x1\" label=\"Tom &amp; Jerry\" \
                   path=\"~/Shared Stuff\"></folder>\n<folder id=\"d\" label=\"\" path=\"~\">\
                   </folder><folder id=\"rel\" path=\"relative\"></folder>\
                   <folder id=\"nopath\"></folder><folder id=\"abs\" path=\"/srv/s\">";
        assert_eq!(
            folders_in(xml, home),
            [
                (
                    "Tom & Jerry".to_string(),
                    PathBuf::from("/home/u/Shared Stuff")
                ),
                ("d".to_string(), PathBuf::from("/home/u")),
                ("abs".to_string(), PathBuf::from("/srv/s")),
            ]
        );
    }

    #[test]
    fn engines_are_found_by_their_marks() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let deep = root.join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(root.join("a/.stfolder"), "").unwrap();
        let f = find(&deep).unwrap();
        assert_eq!((f.engine, f.root), (Engine::Syncthing, root.join("a")));
        let cloud = root.join("Library/CloudStorage/Dropbox-Me/x");
        std::fs::create_dir_all(&cloud).unwrap();
        let f = find(&cloud).unwrap();
        assert_eq!(f.engine_name(), "cloud storage (Dropbox-Me)");
        let icloud = root.join("Mobile Documents/y");
        std::fs::create_dir_all(&icloud).unwrap();
        assert_eq!(find(&icloud).unwrap().engine_name(), "iCloud Drive");
    }

    /// Marks below a folder's root are synced files any device may have
    /// planted: the outermost mark is the root, whatever lies below it.
    #[test]
    fn a_mark_planted_below_the_root_is_no_root() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("Sync");
        let dir = root.join("team/presence");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir(root.join(".stfolder")).unwrap();
        for planted in [dir.clone(), root.join("team")] {
            std::fs::create_dir(planted.join(".stfolder")).unwrap();
            std::fs::create_dir(planted.join(".dropbox")).unwrap();
        }
        std::fs::create_dir_all(dir.join("Mobile Documents")).unwrap();
        let f = find(&dir).unwrap();
        assert_eq!((f.engine, f.root), (Engine::Syncthing, root.clone()));
        assert_eq!(find(&dir.join("Mobile Documents")).unwrap().root, root);
        // The records directory shared by itself is its own root.
        let alone = tmp.path().join("alone");
        std::fs::create_dir_all(alone.join(".stfolder")).unwrap();
        assert_eq!(find(&alone).unwrap().root, alone);
    }
}
