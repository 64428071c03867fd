//! Where the watcher's file events come from, reduced to what it needs: the
//! names of record files whose directory entry changed, or word that events
//! may have been lost (rescan) or that the directory itself moved (re-arm).
//!
//! On Linux the watcher reads inotify itself, with a mask of entry changes
//! only — created, written, renamed, deleted, attributes changed — so that
//! opens and reads, its own or any other reader's, never even become events:
//! notify's inotify backend asks for `IN_OPEN` and offers no way to leave it
//! out, and every open of a file in the directory would then cost the kernel
//! an event and the watcher a wake-up. Elsewhere notify's recommended watcher
//! (FSEvents, kqueue, …) is used, and [`triage`] drops its access events.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use crate::error::Error;
use crate::store::{self, NameKind};

/// What the event source passes on.
#[derive(Debug, PartialEq)]
pub(super) enum Msg {
    /// These entries of the directory changed (with the directory's index
    /// among those watched).
    Files(usize, Vec<Box<str>>),
    /// Events may have been lost: look at everything.
    Rescan,
    /// The directory itself was moved or deleted: watch it anew.
    Rearm,
    /// The source failed (then rescan).
    Failed(String),
}

/// A running event source; dropping it stops it.
// Only held, never read: the source runs on its own thread until dropped.
#[allow(dead_code)]
pub(super) enum Backend {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    Inotify(inotify::Watch),
    Notify(notify::RecommendedWatcher),
}

/// The name of a directory entry if it can be a record (or a conflict copy
/// of one): temp files of atomic writes and of sync engines never wake the
/// watcher.
fn record_name(name: &OsStr) -> Option<Box<str>> {
    let name = name.to_str()?;
    matches!(
        store::classify(name),
        NameKind::Record | NameKind::ConflictCopy(_)
    )
    .then(|| name.into())
}

fn watch_error(dir: &Path, e: impl std::fmt::Display) -> Error {
    Error::io(
        "watch",
        dir,
        std::io::Error::other(format!(
            "{e}; on network or FUSE mounts try --poll, and on Linux check \
             fs.inotify.max_user_watches"
        )),
    )
}

/// Starts the native event source for `dir`, the `at`-th directory watched.
pub(super) fn start(dir: &Path, at: usize, tx: mpsc::Sender<Msg>) -> crate::error::Result<Backend> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        inotify::Watch::start(dir, at, tx)
            .map(Backend::Inotify)
            .map_err(|e| watch_error(dir, e))
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        start_notify(dir, at, tx)
    }
}

/// notify's recommended watcher, its events passed through [`triage`].
// Compiled on Linux as well, so that it is type-checked and `triage` tested there.
#[cfg_attr(any(target_os = "linux", target_os = "android"), allow(dead_code))]
fn start_notify(dir: &Path, at: usize, tx: mpsc::Sender<Msg>) -> crate::error::Result<Backend> {
    use notify::Watcher as _;
    let mut dirs = vec![dir.to_path_buf()];
    if let Ok(canonical) = dir.canonicalize()
        && canonical != dir
    {
        dirs.push(canonical);
    }
    let handler = move |res: notify::Result<notify::Event>| {
        let msg = match res {
            Ok(ev) => match triage(&dirs, &ev) {
                Some(Msg::Files(_, names)) => Msg::Files(at, names),
                Some(msg) => msg,
                None => return,
            },
            Err(e) => Msg::Failed(e.to_string()),
        };
        let _ = tx.send(msg);
    };
    let mut w = notify::recommended_watcher(handler).map_err(|e| watch_error(dir, e))?;
    w.watch(dir, notify::RecursiveMode::NonRecursive)
        .map_err(|e| watch_error(dir, e))?;
    Ok(Backend::Notify(w))
}

/// What a notify event means to the watcher, or `None` for an event that
/// changes nothing a listing reads: opens, reads and closes without a write,
/// and files that cannot be records. `dirs` is the watched directory as
/// given and as canonicalised (FSEvents reports the latter).
#[cfg_attr(any(target_os = "linux", target_os = "android"), allow(dead_code))]
pub(super) fn triage(dirs: &[PathBuf], ev: &notify::Event) -> Option<Msg> {
    use notify::EventKind;
    use notify::event::{AccessKind, AccessMode, ModifyKind};
    if ev.need_rescan() {
        return Some(Msg::Rescan);
    }
    match ev.kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => {}
        EventKind::Access(_) => return None,
        _ => {}
    }
    let mut names = Vec::new();
    for path in &ev.paths {
        if dirs.iter().any(|d| d == path) {
            match ev.kind {
                EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(_)) => {
                    return Some(Msg::Rearm);
                }
                _ => continue,
            }
        }
        if !path.parent().is_some_and(|p| dirs.iter().any(|d| d == p)) {
            // Not an entry of the directory: nothing to go by but a rescan.
            return Some(Msg::Rescan);
        }
        names.extend(path.file_name().and_then(record_name));
    }
    if !names.is_empty() {
        Some(Msg::Files(0, names))
    } else if ev.paths.is_empty() && matches!(ev.kind, EventKind::Any | EventKind::Other) {
        Some(Msg::Rescan)
    } else {
        None
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
mod inotify {
    //! A thread that reads one inotify watch of the directory.

    use std::ffi::OsStr;
    use std::mem::MaybeUninit;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;
    use std::sync::{Arc, mpsc};

    use rustix::fd::OwnedFd;
    use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
    use rustix::io::Errno;

    use super::{Msg, record_name};

    /// Entry changes, and the directory itself moving or going away. Not
    /// `OPEN`, `ACCESS` or `CLOSE_NOWRITE`: reads change nothing.
    /// `EXCL_UNLINK`: nothing about files already deleted.
    const MASK: WatchFlags = WatchFlags::CREATE
        .union(WatchFlags::CLOSE_WRITE)
        .union(WatchFlags::MODIFY)
        .union(WatchFlags::ATTRIB)
        .union(WatchFlags::MOVED_FROM)
        .union(WatchFlags::MOVED_TO)
        .union(WatchFlags::DELETE)
        .union(WatchFlags::DELETE_SELF)
        .union(WatchFlags::MOVE_SELF)
        .union(WatchFlags::ONLYDIR)
        .union(WatchFlags::EXCL_UNLINK);

    /// The watch; dropping it removes the watch, and the kernel's
    /// `IN_IGNORED` that follows ends the reading thread.
    pub(crate) struct Watch {
        fd: Arc<OwnedFd>,
        wd: i32,
    }

    impl Watch {
        pub(crate) fn start(
            dir: &Path,
            at: usize,
            tx: mpsc::Sender<Msg>,
        ) -> std::io::Result<Watch> {
            let fd = Arc::new(inotify::init(CreateFlags::CLOEXEC)?);
            let wd = inotify::add_watch(&*fd, dir, MASK)?;
            let reader = Arc::clone(&fd);
            std::thread::Builder::new()
                .name("presence-inotify".into())
                .spawn(move || read_loop(&reader, at, &tx))?;
            Ok(Watch { fd, wd })
        }
    }

    impl Drop for Watch {
        fn drop(&mut self) {
            // Fails only if the kernel dropped the watch already (the
            // directory is gone), and then the thread has ended.
            let _ = inotify::remove_watch(&*self.fd, self.wd);
        }
    }

    /// Reads events until the watch is removed, passing on one message per
    /// `read` (the names of that batch) and any rescan or re-arm notice.
    fn read_loop(fd: &OwnedFd, at: usize, tx: &mpsc::Sender<Msg>) {
        let mut buf = vec![MaybeUninit::uninit(); 16 * 1024];
        let mut reader = inotify::Reader::new(fd, &mut buf);
        loop {
            let mut names = Vec::new();
            let mut notices = Vec::new();
            let mut ended = false;
            loop {
                let ev = match reader.next() {
                    Ok(ev) => ev,
                    Err(Errno::INTR) => continue,
                    Err(e) => {
                        let _ = tx.send(Msg::Failed(format!("reading inotify events: {e}")));
                        return;
                    }
                };
                let flags = ev.events();
                if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                    notices.push(Msg::Rescan);
                }
                if flags.intersects(ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF) {
                    notices.push(Msg::Rearm);
                }
                if flags.intersects(ReadFlags::IGNORED | ReadFlags::UNMOUNT) {
                    ended = true;
                }
                if let Some(name) = ev.file_name() {
                    names.extend(record_name(OsStr::from_bytes(name.to_bytes())));
                }
                if reader.is_buffer_empty() {
                    break;
                }
            }
            if !names.is_empty() && tx.send(Msg::Files(at, names)).is_err() {
                return;
            }
            for msg in notices {
                if tx.send(msg).is_err() {
                    return;
                }
            }
            if ended {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{AccessKind, AccessMode, CreateKind, Flag, ModifyKind, RemoveKind};
    use notify::{Event, EventKind};

    #[test]
    fn triage_table() {
        let dir = PathBuf::from("/p/shared");
        let dirs = [dir.clone()];
        let rec = dir.join("h-1.s1.json");
        let ev = |kind: EventKind, paths: &[&Path]| {
            paths
                .iter()
                .fold(Event::new(kind), |e, p| e.add_path(p.to_path_buf()))
        };
        let files = |n: &[&str]| Some(Msg::Files(0, n.iter().map(|&s| s.into()).collect()));
        let open = EventKind::Access(AccessKind::Open(AccessMode::Any));
        let cases: Vec<(&str, Event, Option<Msg>)> = vec![
            ("an open is nothing", ev(open, &[&rec]), None),
            (
                "a read close is nothing",
                ev(
                    EventKind::Access(AccessKind::Close(AccessMode::Read)),
                    &[&rec],
                ),
                None,
            ),
            (
                "a write close names the file",
                ev(
                    EventKind::Access(AccessKind::Close(AccessMode::Write)),
                    &[&rec],
                ),
                files(&["h-1.s1.json"]),
            ),
            (
                "a create",
                ev(EventKind::Create(CreateKind::File), &[&rec]),
                files(&["h-1.s1.json"]),
            ),
            (
                "a temp file of an atomic write is nothing",
                ev(
                    EventKind::Create(CreateKind::File),
                    &[&dir.join(".h-1.s1.json.123.abcdef.tmp")],
                ),
                None,
            ),
            (
                "a rename names both ends that can be records",
                ev(
                    EventKind::Modify(ModifyKind::Name(notify::event::RenameMode::Both)),
                    &[&dir.join(".x.tmp"), &rec],
                ),
                files(&["h-1.s1.json"]),
            ),
            (
                "the directory deleted",
                ev(EventKind::Remove(RemoveKind::Folder), &[&dir]),
                Some(Msg::Rearm),
            ),
            ("the directory opened", ev(open, &[&dir]), None),
            (
                "an overflow",
                Event::new(EventKind::Other).set_flag(Flag::Rescan),
                Some(Msg::Rescan),
            ),
            (
                "a path outside the directory",
                ev(
                    EventKind::Create(CreateKind::File),
                    &[Path::new("/elsewhere/x.json")],
                ),
                Some(Msg::Rescan),
            ),
        ];
        for (case, event, want) in cases {
            assert_eq!(triage(&dirs, &event), want, "{case}");
        }
    }
}
