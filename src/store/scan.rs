//! The read side of the directory: listing it, reading record files safely
//! (no symlinks, no blocking, size checked before reading) and scanning them,
//! on several threads for large directories.
//!
//! Separate from the writes because readers must cope with anything another
//! device left in the directory; every problem with a single file becomes a
//! [`Skipped`] entry with its reason, never an error.

#[cfg(test)]
use std::path::Path;

use super::bounded::{self, ReadError};
use super::names::{NameKind, classify, is_plain_name, replaced_by};
use super::settle::each_entry;
use super::{Dir, DirHandle, Entry, Stamp};
use crate::error::{Error, Result};
use crate::record::{MAX_FILE_BYTES, ParseError, Record};

/// Why a directory entry was not read as a record.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SkipReason {
    /// The name is not valid UTF-8.
    NameNotUtf8,
    /// Not a regular file (what it is instead).
    NotRegular(&'static str),
    /// Larger than [`MAX_FILE_BYTES`].
    TooLarge(u64),
    /// Its contents are not a usable record.
    Unparseable(ParseError),
    /// It could not be opened or read.
    Unreadable(String),
    /// A temp or placeholder file, not a record (what kind, in words).
    Temp(String),
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkipReason::NameNotUtf8 => f.write_str("file name is not valid UTF-8"),
            SkipReason::NotRegular(what) => write!(f, "not a regular file ({what})"),
            SkipReason::TooLarge(n) => write!(f, "{n} bytes, larger than {MAX_FILE_BYTES}"),
            SkipReason::Unparseable(e) => e.fmt(f),
            SkipReason::Unreadable(e) => write!(f, "cannot read: {e}"),
            SkipReason::Temp(what) => f.write_str(what),
        }
    }
}

/// A directory entry that was passed over, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    /// File name (lossy if not UTF-8).
    pub file: String,
    /// The reason.
    pub reason: SkipReason,
}

/// The result of scanning a directory.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// Whether the directory exists.
    pub exists: bool,
    /// Records and conflict copies that parsed.
    pub entries: Vec<Entry>,
    /// `*.json` files and temp files that were not records (reported by
    /// `--verbose`); other files (`.stfolder`, notes) are not reported.
    pub skipped: Vec<Skipped>,
}

impl DirHandle {
    /// Reads one record file safely into `buf` (see [`super::bounded`]):
    /// never follows a symlink, never blocks on a FIFO or device, checks the
    /// type and size with `fstat` before reading and never reads past
    /// [`MAX_FILE_BYTES`]. Returns the file's [`Stamp`], or `Ok(None)` when
    /// it vanished meanwhile.
    fn read(&self, name: &str, buf: &mut Vec<u8>) -> Result<Option<Stamp>, SkipReason> {
        match bounded::read_at(&self.0, name, MAX_FILE_BYTES, buf) {
            Ok(st) => Ok(st.as_ref().map(Stamp::of)),
            Err(ReadError::NotRegular(what)) => Err(SkipReason::NotRegular(what)),
            Err(ReadError::TooLarge { size, .. }) => Err(SkipReason::TooLarge(size)),
            Err(e) => Err(SkipReason::Unreadable(e.to_string())),
        }
    }

    fn entry(
        &self,
        name: &str,
        kind: NameKind,
        buf: &mut Vec<u8>,
        judged: Option<Stamp>,
    ) -> Result<Option<Entry>, SkipReason> {
        let Some(stamp) = self.read_settled(name, || self.read(name, buf))? else {
            return Ok(None);
        };
        let raw = Raw {
            file: name,
            kind,
            ctime: stamp.ctime(),
            stamp,
            bytes: buf,
        };
        match judged {
            Some(judged) if judged == stamp => raw.parse_judged(),
            _ => raw.parse(),
        }
        .map(Some)
    }
}

/// A record file as read, not yet parsed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Raw<'a> {
    /// File name within the directory.
    pub file: &'a str,
    /// Record or conflict copy.
    pub kind: NameKind,
    /// Change time on this machine (Unix seconds).
    pub ctime: f64,
    /// The file as it was read.
    pub stamp: Stamp,
    /// The contents.
    pub bytes: &'a [u8],
}

impl Raw<'_> {
    /// [`Raw::parse`] of bytes whose verdict is known to count (a file
    /// judged already, in this very version: the bytes probed, or a
    /// version the scan cache holds a verdict for), so that the signature
    /// is not checked twice ([`crate::identity::counting_verdict`]).
    pub fn parse_judged(&self) -> Result<Entry, SkipReason> {
        self.parse_with(|record, _| crate::identity::counting_verdict(&record.device_id))
    }

    /// Parses the contents into an [`Entry`], verifying its signature.
    pub fn parse(&self) -> Result<Entry, SkipReason> {
        self.parse_with(|record, bytes| crate::identity::verdict_of(&record.device_id, bytes))
    }

    /// The one parse of both, its verdict given by `verdict`.
    fn parse_with(
        &self,
        verdict: impl FnOnce(&Record, &[u8]) -> crate::identity::Verdict,
    ) -> Result<Entry, SkipReason> {
        let record = Record::from_json(self.bytes).map_err(SkipReason::Unparseable)?;
        Ok(Entry {
            file: self.file.to_owned(),
            kind: self.kind,
            ctime: self.ctime,
            stamp: self.stamp,
            verdict: verdict(&record, self.bytes),
            record,
        })
    }
}

/// Reads one record file of the directory at `dir` (symlinks in `dir`
/// followed, as its caller named it). `Ok(None)` when it or the directory is
/// missing.
#[cfg(test)]
pub(crate) fn read_entry(dir: &Path, file: &str) -> Result<Option<Entry>, SkipReason> {
    match Dir::open_path(dir) {
        Ok(d) => d.read_entry(file),
        Err(e) => Err(SkipReason::Unreadable(e.to_string())),
    }
}

/// What a scan found besides the records it handed to the visitor.
#[derive(Debug, Default)]
pub(crate) struct ScanReport {
    /// Whether the directory exists.
    pub exists: bool,
    /// Entries passed over, and why.
    pub skipped: Vec<Skipped>,
    /// Our own temp files as found.
    pub temps: Vec<(String, Stamp)>,
}

/// Below this many candidate files a scan stays on one thread.
const PARALLEL_FROM: usize = 1024;

impl Dir {
    /// The names a scan would read — records and conflict copies, valid
    /// UTF-8, not known (by `d_type`) to be anything but a regular file —
    /// with their kinds. Nothing is opened.
    pub fn records(&self) -> Result<Vec<(Box<str>, NameKind)>> {
        use rustix::fs::FileType;
        let Some(handle) = &self.handle else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        each_entry(handle, |bytes, ft| {
            let Ok(name) = std::str::from_utf8(bytes) else {
                return;
            };
            let kind = classify(name);
            if !matches!(kind, NameKind::Record | NameKind::ConflictCopy(_)) {
                return;
            }
            if ft != FileType::RegularFile && ft != FileType::Unknown {
                return;
            }
            out.push((name.into(), kind));
        })
        .map_err(|e| Error::io("list directory", &self.path, e.into()))?;
        Ok(out)
    }

    /// Reads the named files with the safety rules of a scan — on several
    /// threads for large batches, as a scan does — and hands each outcome to
    /// `fold`, which folds it into its thread's state made by `init`. The
    /// states are returned in no particular order.
    pub fn read_each<S: Send>(
        &self,
        names: &[Box<str>],
        init: impl Fn() -> S + Sync,
        fold: impl Fn(&mut S, &str, ReadOutcome<'_>) + Sync,
    ) -> Vec<S> {
        in_parallel(
            names.len(),
            || (init(), Vec::with_capacity(4096)),
            |(state, buf): &mut (S, Vec<u8>), range| {
                for name in &names[range] {
                    let outcome = match &self.handle {
                        Some(h) if is_plain_name(name) => match h.read(name, buf) {
                            Ok(Some(stamp)) => Ok(Some((stamp, &buf[..]))),
                            Ok(None) => Ok(None),
                            Err(reason) => Err(reason),
                        },
                        _ => Ok(None),
                    };
                    fold(state, name, outcome);
                }
            },
        )
        .into_iter()
        .map(|(state, _)| state)
        .collect()
    }

    /// Reads one record file safely. `Ok(None)` when it (or the directory)
    /// is missing.
    pub fn read_entry(&self, file: &str) -> Result<Option<Entry>, SkipReason> {
        self.read_entry_judged(file, None)
    }

    /// [`Dir::read_entry`] of a file judged already in the version `judged`
    /// (see [`Raw::parse_judged`]): in that version its signature is not
    /// checked again; in any other it is.
    pub fn read_entry_judged(
        &self,
        file: &str,
        judged: Option<Stamp>,
    ) -> Result<Option<Entry>, SkipReason> {
        match &self.handle {
            Some(h) if is_plain_name(file) => {
                h.entry(file, classify(file), &mut Vec::new(), judged)
            }
            Some(_) => Err(SkipReason::Unreadable("not a file name".into())),
            None => Ok(None),
        }
    }

    /// Scans the directory into a list of every record (see [`Dir::scan_fold`]).
    pub fn scan(&self) -> Result<Scan> {
        let (parts, report) = self.scan_fold(Vec::new, |v: &mut Vec<Entry>, e| v.push(e))?;
        Ok(Scan {
            exists: report.exists,
            entries: parts.into_iter().flatten().collect(),
            skipped: report.skipped,
        })
    }

    /// Scans the directory, reading and parsing the record files on up to
    /// `available_parallelism` threads (for large directories). Each thread
    /// folds the entries it reads into its own state, made by `init`; the
    /// states are returned in no particular order. A missing directory is an
    /// empty scan with `exists == false`; problems with single files land in
    /// [`ScanReport::skipped`].
    pub fn scan_fold<S: Send>(
        &self,
        init: impl Fn() -> S + Sync,
        fold: impl Fn(&mut S, Entry) + Sync,
    ) -> Result<(Vec<S>, ScanReport)> {
        self.scan_fold_raw(init, |state, raw| {
            fold(state, raw.parse()?);
            Ok(())
        })
    }

    /// [`Dir::scan_fold`] on unparsed files: `fold` parses what it needs and
    /// returns the reason when a file is not a record.
    pub fn scan_fold_raw<S: Send>(
        &self,
        init: impl Fn() -> S + Sync,
        fold: impl Fn(&mut S, Raw<'_>) -> Result<(), SkipReason> + Sync,
    ) -> Result<(Vec<S>, ScanReport)> {
        let (names, mut report) = self.candidates()?;
        let states = self.read_candidates(&names, &mut report, init, |s, _, raw| fold(s, raw));
        Ok((states, report))
    }

    /// The record files a scan reads — records and conflict copies, valid
    /// UTF-8, not known (by `d_type`) to be anything but a regular file —
    /// listed without opening any, and what the listing passed over. A
    /// missing directory lists nothing, with `exists == false`.
    pub fn candidates(&self) -> Result<(Names, ScanReport)> {
        use rustix::fs::{AtFlags, FileType};
        let mut report = ScanReport::default();
        let mut names = Names::default();
        let Some(handle) = &self.handle else {
            return Ok((names, report));
        };
        report.exists = true;
        // Records a sync engine is putting in place (see settle.rs).
        let mut replacing: Vec<(String, String)> = Vec::new();
        each_entry(handle, |bytes, ft| {
            let Ok(name) = std::str::from_utf8(bytes) else {
                if bytes.ends_with(b".json") {
                    report.skipped.push(Skipped {
                        file: String::from_utf8_lossy(bytes).into_owned(),
                        reason: SkipReason::NameNotUtf8,
                    });
                }
                return;
            };
            let kind = classify(name);
            match kind {
                NameKind::Record | NameKind::ConflictCopy(_) => {}
                NameKind::OwnTemp | NameKind::SyncTemp(_) => {
                    if kind == NameKind::OwnTemp
                        && let Ok(st) =
                            rustix::fs::statat(&handle.0, name, AtFlags::SYMLINK_NOFOLLOW)
                        && FileType::from_raw_mode(st.st_mode) == FileType::RegularFile
                    {
                        report.temps.push((name.to_owned(), Stamp::of(&st)));
                    }
                    if let Some(target) = replaced_by(name) {
                        replacing.push((target.to_owned(), name.to_owned()));
                    }
                    report.skipped.push(Skipped {
                        file: name.to_owned(),
                        reason: SkipReason::Temp(match kind {
                            NameKind::OwnTemp => "temp file of an interrupted write".into(),
                            NameKind::SyncTemp(e) => format!("{} temp file", e.as_str()),
                            _ => "temp file".into(),
                        }),
                    });
                    return;
                }
                NameKind::Hidden | NameKind::Other => return,
            }
            // d_type from readdir: skip non-files without opening them (an
            // unknown type is settled by the fstat of the read).
            if ft != FileType::RegularFile && ft != FileType::Unknown {
                report.skipped.push(Skipped {
                    file: name.to_owned(),
                    reason: SkipReason::NotRegular(bounded::type_name(ft)),
                });
                return;
            }
            names.push(name, kind);
        })
        .map_err(|e| Error::io("list directory", &self.path, e.into()))?;
        if !replacing.is_empty() {
            // A record whose name was missing while the engine's temp file
            // for it was there: waited for, briefly (see settle.rs).
            let listed: std::collections::HashSet<&str> =
                (0..names.len()).map(|i| names.get(i).0).collect();
            let missing: Vec<(String, String)> = replacing
                .into_iter()
                .filter(|(target, _)| !listed.contains(target.as_str()))
                .collect();
            drop(listed);
            for target in handle.wait_for(missing) {
                let kind = classify(&target);
                names.push(&target, kind);
            }
        }
        names.shrink_to_fit();
        Ok((names, report))
    }

    /// Reads every file of `names` (from [`Dir::candidates`]) with the
    /// safety rules of a scan, on several threads for large directories,
    /// and folds each into its thread's state, made by `init`; `fold` gets
    /// the file's index in `names`. Files that are not records are added to
    /// `report`. The states are returned in no particular order.
    pub fn read_candidates<S: Send>(
        &self,
        names: &Names,
        report: &mut ScanReport,
        init: impl Fn() -> S + Sync,
        fold: impl Fn(&mut S, u32, Raw<'_>) -> Result<(), SkipReason> + Sync,
    ) -> Vec<S> {
        self.read_candidates_known(
            names,
            report,
            init,
            None::<fn(&mut S, u32, Stamp) -> bool>,
            fold,
        )
    }

    /// [`Dir::read_candidates`] that first asks `known` (if any) about each
    /// file's stamp (from an `fstatat` that does not follow symlinks): a
    /// file it says it knows (returning `true`) is not read. Files that are
    /// not regular are read, so that the read reports why they are skipped.
    /// Without `known`, no file is stat'ed before it is read.
    pub fn read_candidates_known<S: Send>(
        &self,
        names: &Names,
        report: &mut ScanReport,
        init: impl Fn() -> S + Sync,
        known: Option<impl Fn(&mut S, u32, Stamp) -> bool + Sync>,
        fold: impl Fn(&mut S, u32, Raw<'_>) -> Result<(), SkipReason> + Sync,
    ) -> Vec<S> {
        use rustix::fs::{AtFlags, FileType};
        let Some(handle) = &self.handle else {
            return Vec::new();
        };
        let results = in_parallel(
            names.len(),
            || (init(), Vec::new(), Vec::with_capacity(4096)),
            |(state, skipped, buf): &mut (S, Vec<Skipped>, Vec<u8>), range| {
                for i in range {
                    let (name, kind) = names.get(i);
                    if let Some(known) = &known
                        && let Ok(st) =
                            rustix::fs::statat(&handle.0, name, AtFlags::SYMLINK_NOFOLLOW)
                        && FileType::from_raw_mode(st.st_mode) == FileType::RegularFile
                        && known(state, i as u32, Stamp::of(&st))
                    {
                        continue;
                    }
                    let outcome = match handle.read_settled(name, || handle.read(name, buf)) {
                        Ok(Some(stamp)) => {
                            let raw = Raw {
                                file: name,
                                kind,
                                ctime: stamp.ctime(),
                                stamp,
                                bytes: buf,
                            };
                            fold(state, i as u32, raw)
                        }
                        Ok(None) => Ok(()),
                        Err(reason) => Err(reason),
                    };
                    if let Err(reason) = outcome {
                        skipped.push(Skipped {
                            file: name.to_owned(),
                            reason,
                        });
                    }
                }
            },
        );
        let mut states = Vec::with_capacity(results.len());
        for (state, skipped, _) in results {
            states.push(state);
            report.skipped.extend(skipped);
        }
        states
    }
}

/// The names of a directory's record files, in one buffer (a listing of
/// 100 000 files makes no allocation per name), each with its kind.
#[derive(Debug, Default)]
pub(crate) struct Names {
    text: String,
    items: Vec<(u32, u32, NameKind)>,
}

impl Names {
    pub(crate) fn push(&mut self, name: &str, kind: NameKind) {
        let start = self.text.len();
        self.text.push_str(name);
        // File names are short; a directory's listing stays far below 4 GiB.
        let (start, end) = (
            u32::try_from(start).unwrap_or(u32::MAX),
            u32::try_from(self.text.len()).unwrap_or(u32::MAX),
        );
        self.items.push((start, end, kind));
    }

    /// Gives back what the buffers hold beyond the names (they grew by
    /// doubling): a listing of 100 000 files keeps them to its end.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.items.shrink_to_fit();
    }

    /// How many names.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// The `i`th name and its kind.
    pub fn get(&self, i: usize) -> (&str, NameKind) {
        let (start, end, kind) = self.items[i];
        (
            self.text.get(start as usize..end as usize).unwrap_or(""),
            kind,
        )
    }
}

/// The outcome of reading one file with [`Dir::read_each`]: its stamp and
/// contents, `Ok(None)` when it vanished, or why it is not a record.
pub(crate) type ReadOutcome<'a> = Result<Option<(Stamp, &'a [u8])>, SkipReason>;

/// Files a thread takes from the shared queue at a time: large enough that
/// taking is cheap, small enough that both threads finish together.
const BATCH: usize = 256;

/// Runs `work` over the indexes `0..n`, in batches taken from a shared
/// queue: on one thread below [`PARALLEL_FROM`] items, else on up to
/// `available_parallelism` (at most 8) threads, each folding its batches
/// into its own state made by `init`. Returns the states.
fn in_parallel<S: Send>(
    n: usize,
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, std::ops::Range<usize>) + Sync,
) -> Vec<S> {
    let threads = if n < PARALLEL_FROM {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |t| t.get().min(8))
    };
    if threads == 1 {
        let mut state = init();
        work(&mut state, 0..n);
        return vec![state];
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let run = || {
        let mut state = init();
        loop {
            let start = next.fetch_add(BATCH, std::sync::atomic::Ordering::Relaxed);
            if start >= n {
                break;
            }
            work(&mut state, start..(start + BATCH).min(n));
        }
        state
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = (1..threads).map(|_| scope.spawn(run)).collect();
        let mut states = vec![run()];
        for h in handles {
            states.push(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
        states
    })
}
