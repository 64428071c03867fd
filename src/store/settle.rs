//! A name that is being replaced is still there.
//!
//! Syncthing does not replace a changed file on the receiving device with
//! one rename: it deletes the old file, then renames its temp file
//! (`.syncthing.<name>.tmp`) into place. For that moment — well under a
//! millisecond, a few when the machine is busy — a record that was only
//! refreshed has no file. A reader that lists the directory then, or opens
//! the name then, would miss a live session.
//!
//! So a reader waits that moment out, and only then: when a record's name
//! is missing but a *fresh* temp file of the engine for it is present (one
//! changed within [`FRESH_S`]: a temp file a crashed transfer left behind
//! makes no reader wait), it looks again for up to [`MAX_WAIT`], with a
//! backoff from 1 ms. A name that vanished between the listing and the open
//! is looked at once more at once (the rename may just have happened). A
//! file that is really deleted costs one more `stat` — and, while a fresh
//! temp file for it lingers, at most [`MAX_WAIT`].
//!
//! Also here: the listing itself ([`each_entry`]) reads the directory with a
//! 64 KiB buffer, so a directory of up to several hundred records is listed
//! by one `getdents` call, which a rename cannot cut in two: the old name
//! and the new one are never both missed.

use std::time::Duration;

use rustix::fs::{AtFlags, FileType};

use super::DirHandle;
use super::names::syncthing_temps;

/// How long a reader waits for a name being replaced, at most.
pub(crate) const MAX_WAIT: Duration = Duration::from_millis(100);

/// A temp file changed longer ago than this (seconds) is not a transfer in
/// progress: nobody waits for it.
pub(crate) const FRESH_S: f64 = 10.0;

/// The buffer the directory is listed with.
const LIST_BUFFER: usize = 64 * 1024;

impl DirHandle {
    /// Whether `temp` is a regular file changed within [`FRESH_S`] of this
    /// machine's clock.
    pub(super) fn fresh_temp(&self, temp: &str) -> bool {
        let Ok(st) = rustix::fs::statat(&self.0, temp, AtFlags::SYMLINK_NOFOLLOW) else {
            return false;
        };
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return false;
        }
        fresh(st.st_ctime as f64 + st.st_ctime_nsec as f64 / 1e9, now())
    }

    /// Whether the sync engine is putting `name` in place: a fresh temp
    /// file of Syncthing's for it is there.
    pub(super) fn being_replaced(&self, name: &str) -> bool {
        syncthing_temps(name).iter().any(|t| self.fresh_temp(t))
    }

    /// Whether `name` is in the directory (as anything).
    pub(super) fn has(&self, name: &str) -> bool {
        rustix::fs::statat(&self.0, name, AtFlags::SYMLINK_NOFOLLOW).is_ok()
    }

    /// Waits for the names of `missing`, each missing while its temp
    /// file (the second of the pair) was seen: looks again with a backoff
    /// while any of those temp files stays fresh, [`MAX_WAIT`] in all
    /// however many there are. Returns the names that are there now.
    pub(super) fn wait_for(&self, mut missing: Vec<(String, String)>) -> Vec<String> {
        let mut waits = Backoff::default();
        let mut found = Vec::new();
        loop {
            let mut waiting = Vec::new();
            for (name, temp) in missing {
                if self.has(&name) {
                    found.push(name);
                } else if self.fresh_temp(&temp) {
                    waiting.push((name, temp));
                } else if self.has(&name) {
                    // Renamed into place since the look before.
                    found.push(name);
                }
            }
            if waiting.is_empty() || !waits.wait() {
                return found;
            }
            missing = waiting;
        }
    }

    /// Reads `name` with `read`, which gives `Ok(None)` when the file is
    /// missing; when it is, looks again: once at once, then with a backoff
    /// while the engine's temp file for it is fresh (see the module docs).
    pub(super) fn read_settled<T, E>(
        &self,
        name: &str,
        mut read: impl FnMut() -> Result<Option<T>, E>,
    ) -> Result<Option<T>, E> {
        let mut waits = Backoff::default();
        let mut again = true;
        loop {
            if let Some(found) = read()? {
                return Ok(Some(found));
            }
            if self.being_replaced(name) {
                if !waits.wait() {
                    return Ok(None);
                }
            } else if !std::mem::take(&mut again) {
                return Ok(None);
            }
        }
    }
}

impl super::Dir {
    /// Whether the sync engine is putting the record file `name` in place
    /// (a fresh temp file of Syncthing's for it is there; see the module
    /// docs): a watcher keeps a vanished record that long.
    pub(crate) fn being_replaced(&self, name: &str) -> bool {
        self.handle
            .as_ref()
            .is_some_and(|h| super::is_plain_name(name) && h.being_replaced(name))
    }
}

/// Waits of 1, 2, 4, … ms, [`MAX_WAIT`] in all.
#[derive(Default)]
struct Backoff {
    waited: Duration,
    step: u32,
}

impl Backoff {
    /// Sleeps the next step; `false` when the time is up.
    fn wait(&mut self) -> bool {
        let left = MAX_WAIT.saturating_sub(self.waited);
        if left.is_zero() {
            return false;
        }
        let step = Duration::from_millis(1u64 << self.step.min(6)).min(left);
        std::thread::sleep(step);
        self.waited += step;
        self.step += 1;
        true
    }
}

/// Whether a temp file changed at `ctime` is fresh at `now`: changed
/// within [`FRESH_S`] (either way: a clock set back is no reason to wait
/// for ever, nor to stop waiting).
fn fresh(ctime: f64, now: f64) -> bool {
    (now - ctime).abs() <= FRESH_S
}

/// This machine's clock, Unix seconds (the ctimes compared with it are its own).
fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Hands every entry of the directory `handle` to `each` (name bytes and
/// `d_type`), in the order the filesystem gives them, `.` and `..` left out.
pub(super) fn each_entry(
    handle: &DirHandle,
    mut each: impl FnMut(&[u8], FileType),
) -> rustix::io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::{Mode, OFlags};
        // Its own open file description: its offset is nobody else's.
        let fd = rustix::fs::openat(
            &handle.0,
            c".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let mut buf = Vec::<u8>::with_capacity(LIST_BUFFER);
        let mut entries = rustix::fs::RawDir::new(&fd, buf.spare_capacity_mut());
        while let Some(entry) = entries.next() {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                each(name, entry.file_type());
            }
        }
        Ok(())
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = LIST_BUFFER;
        for entry in rustix::fs::Dir::read_from(&handle.0)? {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                each(name, entry.file_type());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Dir;

    fn dir() -> (tempfile::TempDir, Dir) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_path(tmp.path()).unwrap();
        (tmp, dir)
    }

    fn handle(d: &Dir) -> &DirHandle {
        d.handle.as_ref().unwrap()
    }

    #[test]
    fn a_name_put_back_while_its_temp_file_is_there_is_waited_for() {
        let (tmp, d) = dir();
        let temp = tmp.path().join(".syncthing.h.s.json.tmp");
        std::fs::write(&temp, "{}").unwrap();
        assert!(handle(&d).being_replaced("h.s.json"));
        let to = tmp.path().join("h.s.json");
        // Missing at the first two reads (the second one the look at once
        // that any missing name gets); the engine renames its temp file
        // into place before the third, which only a reader that waits for
        // a fresh temp file makes.
        let mut reads = 0;
        let found = handle(&d)
            .read_settled("h.s.json", || {
                reads += 1;
                if reads == 3 {
                    std::fs::rename(&temp, &to).unwrap();
                }
                Ok::<_, ()>(to.exists().then_some(()))
            })
            .unwrap();
        assert_eq!((found, reads), (Some(()), 3));
    }

    #[test]
    fn a_deleted_name_is_looked_at_once_more_and_a_stale_temp_is_not_waited_for() {
        let (tmp, d) = dir();
        let mut reads = 0;
        let found = handle(&d)
            .read_settled("h.s.json", || {
                reads += 1;
                Ok::<Option<()>, ()>(None)
            })
            .unwrap();
        assert_eq!((found, reads), (None, 2));
        assert!(!handle(&d).being_replaced("h.s.json"));
        assert!(handle(&d).wait_for(pair("h.s.json")).is_empty());
        // Not a temp file: a directory of that name.
        std::fs::create_dir(tmp.path().join(".syncthing.h.s.json.tmp")).unwrap();
        assert!(!handle(&d).being_replaced("h.s.json"));
        // A temp file an interrupted transfer left a minute ago is not a
        // transfer in progress (a ctime cannot be set back, so the rule is
        // checked on its own).
        let now = 1_800_000_000.0;
        assert!(fresh(now - 0.5, now) && fresh(now - FRESH_S, now));
        assert!(!fresh(now - 60.0, now) && !fresh(now + 60.0, now));
    }

    #[test]
    fn a_temp_that_stays_is_waited_for_only_so_long() {
        let (tmp, d) = dir();
        std::fs::write(tmp.path().join(".syncthing.h.s.json.tmp"), "{}").unwrap();
        let mut reads = 0;
        let found = handle(&d)
            .read_settled("h.s.json", || {
                reads += 1;
                Ok::<Option<()>, ()>(None)
            })
            .unwrap();
        assert_eq!(found, None);
        // 1 + 2 + 4 + … ms up to MAX_WAIT: a bounded number of looks.
        assert!((2..=12).contains(&reads), "{reads}");
        assert!(handle(&d).wait_for(pair("h.s.json")).is_empty());
        // A listing that missed it while it was replaced finds it.
        std::fs::write(tmp.path().join("h.s.json"), "{}").unwrap();
        assert_eq!(handle(&d).wait_for(pair("h.s.json")), ["h.s.json"]);
    }

    fn pair(name: &str) -> Vec<(String, String)> {
        vec![(name.to_owned(), format!(".syncthing.{name}.tmp"))]
    }

    #[test]
    fn a_listing_taken_while_a_record_is_replaced_still_has_it() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::{Arc, Barrier};
        let (tmp, d) = dir();
        std::fs::write(tmp.path().join("h.a.json"), "{}").unwrap();
        let (temp, to) = (
            tmp.path().join(".syncthing.h.b.json.tmp"),
            tmp.path().join("h.b.json"),
        );
        // The engine deleted h.b.json and renames its temp file 5 ms after
        // the listing begins. A listing that returned before the rename
        // proves nothing, and neither does one that returned without it
        // just after a rename the machine held back past MAX_WAIT: either
        // way the scene is played again, up to 50 times. It fails only if
        // no listing ever returned with the renamed record.
        let mut seen = false;
        for _ in 0..50 {
            let _ = std::fs::remove_file(&to);
            std::fs::write(&temp, "{}").unwrap();
            let renamed = Arc::new(AtomicBool::new(false));
            let go = Arc::new(Barrier::new(2));
            let mover = {
                let (temp, to) = (temp.clone(), to.clone());
                let (renamed, go) = (renamed.clone(), go.clone());
                std::thread::spawn(move || {
                    go.wait();
                    std::thread::sleep(Duration::from_millis(5));
                    std::fs::rename(temp, to).unwrap();
                    renamed.store(true, Ordering::SeqCst);
                })
            };
            go.wait();
            let (names, _) = d.candidates().unwrap();
            let in_time = renamed.load(Ordering::SeqCst);
            mover.join().unwrap();
            let mut listed: Vec<&str> = (0..names.len()).map(|i| names.get(i).0).collect();
            listed.sort();
            if in_time && listed == ["h.a.json", "h.b.json"] {
                seen = true;
                break;
            }
        }
        assert!(seen, "no listing waited for the rename");
        // A temp file of a record that is there adds nothing.
        std::fs::write(tmp.path().join(".syncthing.h.a.json.tmp"), "{}").unwrap();
        let (names, report) = d.candidates().unwrap();
        assert_eq!(names.len(), 2);
        assert_eq!(report.skipped.len(), 1, "{:?}", report.skipped);
    }

    #[test]
    fn every_entry_is_listed_once() {
        let (tmp, d) = dir();
        for i in 0..3000 {
            std::fs::write(tmp.path().join(format!("h.s{i}.json")), "").unwrap();
        }
        let mut names = Vec::new();
        each_entry(handle(&d), |n, _| {
            names.push(String::from_utf8(n.to_vec()).unwrap())
        })
        .unwrap();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 3000);
    }
}
