//! The `.stignore` plan: the one line that keeps presence's temp files out
//! of a Syncthing folder, added above the user's own patterns.

use std::path::Path;

use anyhow::Context as _;

use super::Platform;
use super::dir::syncthing_root;
use super::plan::{Action, Change, Note, read_small};

/// The line docs/syncthing.md recommends, and the comment setup puts above it.
pub(super) const STIGNORE_LINE: &str = "(?d).*.tmp";
pub(super) const STIGNORE_MARK: &str = "// presence's temp files (added by `presence setup`; `presence setup --uninstall` removes these two lines)";

/// Adds `(?d).*.tmp` at the top of the Syncthing folder's `.stignore` (the
/// first matching pattern decides, so no `!` line can undo it) unless the
/// patterns, with what they include, already ignore the temp files. The
/// folder is found by [`syncthing_root`], never by a `.stfolder` another
/// device put in the records directory; a `.stignore` that is a symbolic
/// link is left alone, never read or written through.
pub(super) fn stignore_plan(
    platform: &Platform,
    dir: &Path,
    notes: &mut Vec<Note>,
) -> anyhow::Result<Vec<Change>> {
    let Some(root) = syncthing_root(dir, &platform.home) else {
        return Ok(Vec::new());
    };
    let file = root.join(".stignore");
    if std::fs::symlink_metadata(&file).is_ok_and(|m| m.file_type().is_symlink()) {
        notes.push(Note::Say(format!(
            "left {} alone: it is a symbolic link, and setup never reads or writes through a \
             link in a synced folder (another device may have put it there); replace it with a \
             plain file holding your patterns and the line `{STIGNORE_LINE}`",
            file.display()
        )));
        return Ok(Vec::new());
    }
    match presence::stignore_ignores_temp_files(&root, dir) {
        Ok(true) => Ok(Vec::new()),
        Ok(false) => {
            let old = read_small(&file)
                .with_context(|| format!("cannot read {}", file.display()))?
                .unwrap_or_default();
            Ok(vec![Change {
                what: format!(
                    "add the line `{STIGNORE_LINE}` to {} (keeps temp files out of the sync)",
                    file.display()
                ),
                action: Action::Write {
                    path: file,
                    text: format!("{STIGNORE_MARK}\n{STIGNORE_LINE}\n{old}"),
                },
            }])
        }
        Err(e) => {
            notes.push(Note::Say(format!(
                "left {} alone: {e}; add the line `{STIGNORE_LINE}` once it loads",
                file.display()
            )));
            Ok(Vec::new())
        }
    }
}
