//! The one way discovery reads an agent's SQLite database, and the one rule
//! that pairs the sessions it holds with running processes.
//!
//! # Reading
//!
//! [`open`] never writes, never creates a file and never waits long:
//!
//! - A missing file costs one failed `open(2)`: no SQLite connection is
//!   attempted. The file is first opened by us with `O_NOFOLLOW |
//!   O_NONBLOCK`: a symbolic link, a directory, a FIFO or a device is refused
//!   by type, a file larger than [`MAX_DB_BYTES`] by size, and a file whose
//!   first 100 bytes are not an SQLite header as not a database. (This reads
//!   a fixed prefix, where `store::bounded` reads whole files.)
//! - The connection is `SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW`, without
//!   `SQLITE_OPEN_CREATE`, with `query_only`, `trusted_schema = OFF` and the
//!   defensive flag, and a value-length limit of [`MAX_VALUE_BYTES`].
//! - An agent keeps its database in WAL mode while it runs, with `-wal` and
//!   `-shm` files beside it. A read-only connection reads through them and
//!   sees every committed write; a WAL reader never blocks the writer. But a
//!   read-only connection to a WAL database that has no `-wal` (no process
//!   has it open) would create `-wal` and `-shm` and leave them behind, so
//!   such a database (its header says WAL) is opened `immutable=1` instead:
//!   no locks, no side files, the main file as it is, which is all there is
//!   when no writer is attached (a writer attaching during the read can make
//!   that one read fail or miss its first commit, nothing worse). A `-wal`
//!   without a `-shm` is a writer in
//!   exclusive locking mode (or one just attaching): that is [`DbError::Busy`],
//!   nothing is read. A database in rollback-journal mode (Hermes falls back
//!   to it on network filesystems) is opened read-only with ordinary shared
//!   locks.
//! - Everything is read in one read transaction (one snapshot, at most one
//!   wait for a lock), with a busy timeout of [`BUSY_TIMEOUT`]; a progress
//!   handler interrupts any statement once the whole pass has taken
//!   [`BUDGET`]. Every query has a row `LIMIT`.
//! - Every failure is a [`DbError`], never a panic: the readers turn a
//!   locked, corrupt, foreign or missing database into no sessions.
//!
//! # Matching sessions to processes
//!
//! A database row names a session and the directory it runs in; it does not
//! name the process. [`pair`] is the rule both SQLite readers use:
//!
//! - a session may belong to an agent process whose working directory is
//!   the session's and that was already running when the session was last
//!   active (a session left behind by an earlier process, which never said
//!   it ended, is not claimed by a new process that merely starts in the
//!   same directory);
//! - of those processes, it goes to the one started most recently before
//!   the session itself started (the one that could have created it); a
//!   session older than all of them (one a process resumed) goes to the
//!   most recently started;
//! - sessions are handed out most recently active first, and a process gets
//!   one session at most: the most recently active of its own.
//!
//! A process's start comes from `/proc/PID/stat`'s field 22 (clock ticks
//! since boot) and `/proc/stat`'s `btime`. Where the boot time cannot be
//! read, the time conditions are dropped and the most recently started
//! process in the directory is preferred.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::limits::Limit;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, Params, Row};
use rustix::io::Errno;

use super::{Proc, procs};
use crate::store::bounded::{self, Part, ReadError};

/// The largest database file discovery opens: far above what an agent's
/// session history reaches, low enough that a stray disk image is refused.
pub(super) const MAX_DB_BYTES: u64 = 4 << 30;

/// How long a statement waits for a lock another connection holds.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_millis(250);

/// How long one database's whole pass may take, open to last row.
pub(super) const BUDGET: Duration = Duration::from_millis(750);

/// The longest string or blob SQLite will hand over.
pub(super) const MAX_VALUE_BYTES: i32 = 16 << 20;

/// The longest text a reader keeps from a column (titles, models, paths),
/// in bytes; longer text is cut at a character boundary.
pub(super) const MAX_TEXT_BYTES: usize = 4096;

/// How often (in SQLite virtual-machine steps) the budget is checked.
const PROGRESS_STEPS: i32 = 1000;

/// Slack for comparing a process's start with a database timestamp: the
/// boot time is whole seconds, and the two clocks are read apart.
pub(super) const START_SLACK: f64 = 2.0;

/// Why a database yielded nothing.
#[derive(Debug, thiserror::Error)]
pub(super) enum DbError {
    /// It is not a regular file (a symlink, a directory, …).
    #[error("{} is {kind}, not a database file", path.display())]
    NotRegular { path: PathBuf, kind: &'static str },
    /// It is larger than [`MAX_DB_BYTES`].
    #[error("{} is {size} bytes, more than the {limit} discovery reads", path.display())]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },
    /// Its first bytes are not an SQLite header.
    #[error("{} is not an SQLite database", path.display())]
    NotSqlite { path: PathBuf },
    /// It could not be opened or inspected.
    #[error("cannot open {}: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },
    /// Another connection holds a lock the read needs.
    #[error("{} is locked by another connection", path.display())]
    Busy { path: PathBuf },
    /// SQLite says the file is damaged.
    #[error("{} is corrupt: {error}", path.display())]
    Corrupt {
        path: PathBuf,
        error: rusqlite::Error,
    },
    /// The pass took longer than [`BUDGET`] and was interrupted.
    #[error("reading {} took longer than {:?} and was abandoned", path.display(), BUDGET)]
    Slow { path: PathBuf },
    /// Any other SQLite failure (a table or column it lacks, …).
    #[error("cannot read {}: {error}", path.display())]
    Sqlite {
        path: PathBuf,
        error: rusqlite::Error,
    },
}

/// What the header says of the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Journal {
    /// Rollback journal (header bytes 18 and 19 are 1).
    Rollback,
    /// Write-ahead log (header bytes 18 and 19 are 2).
    Wal,
}

/// An open, read-only database inside one read transaction.
pub(super) struct Db {
    conn: Connection,
    path: PathBuf,
    deadline: Instant,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("path", &self.path).finish()
    }
}

/// Opens `path` read-only with the rules of this module; `Ok(None)` when
/// there is no such file (and then nothing else was tried).
pub(super) fn open(path: &Path) -> Result<Option<Db>, DbError> {
    let Some(journal) = inspect(path)? else {
        return Ok(None);
    };
    let side = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    let (wal, shm) = (side("-wal").exists(), side("-shm").exists());
    if journal == Journal::Wal && wal && !shm {
        // A writer in exclusive locking mode keeps its WAL index in memory
        // and holds the file's lock; a plain reader would wait on it and
        // create the `-shm` it lacks.
        return Err(DbError::Busy {
            path: path.to_owned(),
        });
    }
    let immutable = journal == Journal::Wal && !wal;
    let uri = uri(path, immutable);
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let fail = |error| classify(path, error);
    let mut conn = Connection::open_with_flags(&uri, flags).map_err(fail)?;
    let deadline = Instant::now() + BUDGET;
    conn.progress_handler(PROGRESS_STEPS, Some(move || Instant::now() >= deadline))
        .map_err(fail)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(fail)?;
    conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        .map_err(fail)?;
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)
        .map_err(fail)?;
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA,
        false,
    )
    .map_err(fail)?;
    conn.execute_batch("PRAGMA query_only = ON; BEGIN DEFERRED")
        .map_err(fail)?;
    Ok(Some(Db {
        conn,
        path: path.to_owned(),
        deadline,
    }))
}

impl Db {
    /// The rows of `sql`, at most `limit` of them (the SQL should say
    /// `LIMIT` too, so that SQLite stops early), each through `map`.
    pub(super) fn rows<T, P: Params>(
        &self,
        sql: &str,
        params: P,
        limit: usize,
        mut map: impl FnMut(&Row<'_>) -> T,
    ) -> Result<Vec<T>, DbError> {
        if Instant::now() >= self.deadline {
            return Err(DbError::Slow {
                path: self.path.clone(),
            });
        }
        let fail = |error| classify(&self.path, error);
        let mut stmt = self.conn.prepare(sql).map_err(fail)?;
        let mut rows = stmt.query(params).map_err(fail)?;
        let mut out = Vec::new();
        while out.len() < limit {
            match rows.next().map_err(fail)? {
                Some(row) => out.push(map(row)),
                None => break,
            }
        }
        Ok(out)
    }

    /// The first row of `sql`, if any.
    pub(super) fn row<T, P: Params>(
        &self,
        sql: &str,
        params: P,
        map: impl FnMut(&Row<'_>) -> T,
    ) -> Result<Option<T>, DbError> {
        Ok(self.rows(sql, params, 1, map)?.into_iter().next())
    }

    /// The column names of `table` (empty when there is no such table).
    pub(super) fn columns(&self, table: &str) -> Result<Vec<String>, DbError> {
        self.rows(
            "SELECT name FROM pragma_table_info(?1) LIMIT 500",
            [table],
            500,
            |r| text(r, 0).unwrap_or_default(),
        )
    }
}

/// Checks what is at `path` without following a symlink or blocking, and
/// reads its header: `Ok(None)` when there is nothing there.
fn inspect(path: &Path) -> Result<Option<Journal>, DbError> {
    let io = |error: io::Error| DbError::Io {
        path: path.to_owned(),
        error,
    };
    let span = match bounded::read_part(path, Part::Head(100)) {
        Ok(Some(span)) => span,
        Ok(None) => return Ok(None),
        // A file where a directory of the path should be: nothing there.
        Err(ReadError::Open(e)) if e.raw_os_error() == Some(Errno::NOTDIR.raw_os_error()) => {
            return Ok(None);
        }
        Err(ReadError::NotRegular(kind)) => {
            return Err(DbError::NotRegular {
                path: path.to_owned(),
                kind,
            });
        }
        Err(ReadError::TooLarge { size, .. }) => {
            return Err(DbError::TooLarge {
                path: path.to_owned(),
                size,
                limit: MAX_DB_BYTES,
            });
        }
        Err(ReadError::Open(e) | ReadError::Read(e)) => return Err(io(e)),
    };
    if span.size > MAX_DB_BYTES {
        return Err(DbError::TooLarge {
            path: path.to_owned(),
            size: span.size,
            limit: MAX_DB_BYTES,
        });
    }
    let header = span.bytes;
    if header.len() < 100 || &header[..16] != b"SQLite format 3\0" {
        return Err(DbError::NotSqlite {
            path: path.to_owned(),
        });
    }
    Ok(Some(if header[18] == 2 || header[19] == 2 {
        Journal::Wal
    } else {
        Journal::Rollback
    }))
}

/// The `file:` URI SQLite opens: the path percent-encoded wherever a URI
/// would read it otherwise, `mode=ro`, and `immutable=1` when asked.
fn uri(path: &Path, immutable: bool) -> String {
    let mut out = String::from("file:");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out.push_str("?mode=ro");
    if immutable {
        out.push_str("&immutable=1");
    }
    out
}

/// The typed error for a failure SQLite reported.
fn classify(path: &Path, error: rusqlite::Error) -> DbError {
    use rusqlite::ErrorCode as C;
    let path = path.to_owned();
    match error.sqlite_error_code() {
        Some(C::DatabaseBusy | C::DatabaseLocked) => DbError::Busy { path },
        Some(C::OperationInterrupted) => DbError::Slow { path },
        Some(C::DatabaseCorrupt | C::NotADatabase) => DbError::Corrupt { path, error },
        _ => DbError::Sqlite { path, error },
    }
}

/// Column `i` as text: a text value (invalid UTF-8 replaced), cut to
/// [`MAX_TEXT_BYTES`]; `None` for NULL, empty text and every other type.
pub(super) fn text(row: &Row<'_>, i: usize) -> Option<String> {
    let bytes = match row.get_ref(i).ok()? {
        ValueRef::Text(t) => t,
        _ => return None,
    };
    let s = String::from_utf8_lossy(bytes);
    let mut end = s.len().min(MAX_TEXT_BYTES);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let s = s[..end].trim();
    (!s.is_empty()).then(|| s.to_owned())
}

/// Column `i` as a finite number (an integer or a real); `None` otherwise.
pub(super) fn number(row: &Row<'_>, i: usize) -> Option<f64> {
    let n = match row.get_ref(i).ok()? {
        ValueRef::Integer(n) => n as f64,
        ValueRef::Real(n) => n,
        _ => return None,
    };
    n.is_finite().then_some(n)
}

/// Column `i` as a path: absolute text only.
pub(super) fn path(row: &Row<'_>, i: usize) -> Option<PathBuf> {
    let s = text(row, i)?;
    let p = PathBuf::from(s);
    p.is_absolute().then_some(p)
}

/// The base name of `arg`, as a program is named in an argv.
pub(super) fn base(arg: &str) -> &str {
    Path::new(arg)
        .file_name()
        .and_then(OsStr::to_str)
        .unwrap_or(arg)
}

/// A session as [`pair`] sees it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Candidate {
    /// The directory the session runs in.
    pub cwd: PathBuf,
    /// Unix seconds: when the session started.
    pub started_at: f64,
    /// Unix seconds: the session's last recorded activity.
    pub last_active: f64,
}

/// Pairs sessions with processes by the rule in the module docs: for each
/// process (by index into `procs`) that gets one, the index of its session
/// in `cands`, sorted. `boot` is the boot time; `None` drops the time
/// conditions.
pub(super) fn pair(procs: &[&Proc], cands: &[Candidate], boot: Option<f64>) -> Vec<(usize, usize)> {
    let start = |p: &Proc| boot.map(|b| procs::started_at(p, b));
    let mut order: Vec<usize> = (0..cands.len()).collect();
    order.sort_by(|&a, &b| cands[b].last_active.total_cmp(&cands[a].last_active));
    let mut taken = vec![false; procs.len()];
    let mut out = Vec::new();
    for c in order {
        let cand = &cands[c];
        let eligible = procs.iter().enumerate().filter(|&(i, p)| {
            !taken[i]
                && p.cwd.as_deref() == Some(cand.cwd.as_path())
                && start(p).is_none_or(|s| cand.last_active + START_SLACK >= s)
        });
        // (could have created it, start ticks, lower pid): the greatest wins.
        let best = eligible.max_by_key(|&(_, p)| {
            let creator = start(p).is_some_and(|s| s <= cand.started_at + START_SLACK);
            (creator, p.start, std::cmp::Reverse(p.pid))
        });
        if let Some((i, _)) = best {
            taken[i] = true;
            out.push((i, c));
        }
    }
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::{FileType, Mode};

    fn make(dir: &Path, wal: bool) -> PathBuf {
        let db = dir.join("a.db");
        let c = Connection::open(&db).unwrap();
        if wal {
            c.pragma_update(None, "journal_mode", "wal").unwrap();
        }
        c.execute_batch("CREATE TABLE t (a TEXT, n REAL); INSERT INTO t VALUES ('one', 1.5);")
            .unwrap();
        drop(c);
        db
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn read_all(db: &Db) -> Vec<(Option<String>, Option<f64>)> {
        db.rows("SELECT a, n FROM t LIMIT 10", [], 10, |r| {
            (text(r, 0), number(r, 1))
        })
        .unwrap()
    }

    #[test]
    fn a_missing_file_is_none_and_nothing_is_created() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(open(&tmp.path().join("absent.db")).unwrap().is_none());
        assert!(
            open(&tmp.path().join("no-dir/absent.db"))
                .unwrap()
                .is_none()
        );
        assert!(names(tmp.path()).is_empty());
    }

    #[test]
    fn a_closed_wal_database_is_read_without_creating_side_files() {
        let tmp = tempfile::tempdir().unwrap();
        let db = make(tmp.path(), true);
        assert_eq!(names(tmp.path()), ["a.db"], "the writer cleaned up");
        let r = open(&db).unwrap().unwrap();
        assert_eq!(read_all(&r), [(Some("one".into()), Some(1.5))]);
        drop(r);
        assert_eq!(names(tmp.path()), ["a.db"]);
    }

    #[test]
    fn a_rollback_database_is_read_without_creating_files() {
        let tmp = tempfile::tempdir().unwrap();
        let db = make(tmp.path(), false);
        let r = open(&db).unwrap().unwrap();
        assert_eq!(read_all(&r), [(Some("one".into()), Some(1.5))]);
        drop(r);
        assert_eq!(names(tmp.path()), ["a.db"]);
    }

    #[test]
    fn an_attached_wal_database_shows_the_writers_latest_commit() {
        let tmp = tempfile::tempdir().unwrap();
        let db = make(tmp.path(), true);
        let w = Connection::open(&db).unwrap();
        w.execute("INSERT INTO t VALUES ('two', 2)", []).unwrap();
        assert_eq!(names(tmp.path()), ["a.db", "a.db-shm", "a.db-wal"]);
        let r = open(&db).unwrap().unwrap();
        assert_eq!(read_all(&r).len(), 2, "the commit still in the WAL is seen");
        drop(r);
        // The writer can go on writing and checkpointing.
        w.execute("INSERT INTO t VALUES ('three', 3)", []).unwrap();
        w.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        drop(w);
        assert_eq!(names(tmp.path()), ["a.db"]);
    }

    #[test]
    fn a_write_lock_held_elsewhere_leaves_the_last_commit_readable() {
        let tmp = tempfile::tempdir().unwrap();
        let db = make(tmp.path(), true);
        let w = Connection::open(&db).unwrap();
        w.execute_batch("BEGIN EXCLUSIVE; INSERT INTO t VALUES ('uncommitted', 9);")
            .unwrap();
        let r = open(&db).unwrap().unwrap();
        assert_eq!(read_all(&r), [(Some("one".into()), Some(1.5))]);
        drop(r);
        w.execute_batch("COMMIT").unwrap();
    }

    #[test]
    fn an_exclusive_lock_on_a_rollback_database_is_busy_not_a_hang() {
        let tmp = tempfile::tempdir().unwrap();
        let db = make(tmp.path(), false);
        let w = Connection::open(&db).unwrap();
        w.execute_batch("BEGIN EXCLUSIVE; INSERT INTO t VALUES ('x', 1);")
            .unwrap();
        let r = open(&db).unwrap().unwrap();
        let err = r
            .rows("SELECT a FROM t LIMIT 1", [], 1, |r| text(r, 0))
            .unwrap_err();
        assert!(matches!(err, DbError::Busy { .. }), "{err:?}");
        w.execute_batch("ROLLBACK").unwrap();
    }

    #[test]
    fn an_exclusive_locking_mode_writer_makes_a_busy_error() {
        let tmp = tempfile::tempdir().unwrap();
        let db = make(tmp.path(), true);
        let w = Connection::open(&db).unwrap();
        w.execute_batch(
            "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; INSERT INTO t VALUES ('x', 1); COMMIT;",
        )
        .unwrap();
        let err = open(&db)
            .and_then(|r| {
                let r = r.unwrap();
                r.rows("SELECT a FROM t LIMIT 1", [], 1, |r| text(r, 0))
            })
            .unwrap_err();
        assert!(matches!(err, DbError::Busy { .. }), "{err:?}");
    }

    #[test]
    fn what_is_not_a_database_file_is_refused_by_kind() {
        let tmp = tempfile::tempdir().unwrap();
        let db = make(tmp.path(), true);
        let link = tmp.path().join("link.db");
        std::os::unix::fs::symlink(&db, &link).unwrap();
        assert!(matches!(
            open(&link).unwrap_err(),
            DbError::NotRegular {
                kind: "a symbolic link",
                ..
            }
        ));
        let dir = tmp.path().join("dir.db");
        std::fs::create_dir(&dir).unwrap();
        assert!(matches!(
            open(&dir).unwrap_err(),
            DbError::NotRegular {
                kind: "a directory",
                ..
            }
        ));
        let fifo = tmp.path().join("fifo.db");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert!(matches!(
            open(&fifo).unwrap_err(),
            DbError::NotRegular { kind: "a FIFO", .. }
        ));
        let text = tmp.path().join("text.db");
        std::fs::write(&text, "just some text, not a database at all, long enough to have a header-sized prefix of one hundred bytes").unwrap();
        assert!(matches!(
            open(&text).unwrap_err(),
            DbError::NotSqlite { .. }
        ));
        let empty = tmp.path().join("empty.db");
        std::fs::write(&empty, "").unwrap();
        assert!(matches!(
            open(&empty).unwrap_err(),
            DbError::NotSqlite { .. }
        ));
    }

    #[test]
    fn a_huge_file_is_refused_by_size() {
        let tmp = tempfile::tempdir().unwrap();
        let db = make(tmp.path(), false);
        // Sparse: no disk is used.
        let f = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
        f.set_len(MAX_DB_BYTES + 1).unwrap();
        assert!(matches!(
            open(&db).unwrap_err(),
            DbError::TooLarge { size, .. } if size == MAX_DB_BYTES + 1
        ));
    }

    #[test]
    fn a_truncated_or_scribbled_database_is_an_error_not_a_panic() {
        let tmp = tempfile::tempdir().unwrap();
        let db = make(tmp.path(), false);
        let c = Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE TABLE big (x TEXT); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000) INSERT INTO big SELECT printf('%0500d', i) FROM n;",
        )
        .unwrap();
        drop(c);
        let bytes = std::fs::read(&db).unwrap();
        // Truncated to half: the schema page survives, the data does not.
        std::fs::write(&db, &bytes[..bytes.len() / 2]).unwrap();
        let r = open(&db).unwrap().unwrap();
        let err = r
            .rows("SELECT count(*) FROM big LIMIT 1", [], 1, |r| number(r, 0))
            .unwrap_err();
        assert!(matches!(err, DbError::Corrupt { .. }), "{err:?}");
        drop(r);
        // Every page after the first scribbled over.
        let mut scribbled = bytes.clone();
        for (i, b) in scribbled.iter_mut().enumerate().skip(4096) {
            *b = (i * 7 % 251) as u8;
        }
        std::fs::write(&db, &scribbled).unwrap();
        let result = open(&db).and_then(|r| {
            let r = r.unwrap();
            r.rows("SELECT x FROM big LIMIT 5000", [], 5000, |r| text(r, 0))
        });
        assert!(result.is_err(), "{result:?}");
    }

    #[test]
    fn a_slow_query_is_interrupted_within_the_budget() {
        let tmp = tempfile::tempdir().unwrap();
        let db = make(tmp.path(), false);
        let r = open(&db).unwrap().unwrap();
        // Would run for ages; the progress handler stops it.
        let err = r
            .rows(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n) SELECT count(*) FROM n LIMIT 1",
                [],
                1,
                |r| number(r, 0),
            )
            .unwrap_err();
        assert!(matches!(err, DbError::Slow { .. }), "{err:?}");
        // And every later query of the pass is refused at once.
        let err = r
            .rows("SELECT a FROM t LIMIT 1", [], 1, |r| text(r, 0))
            .unwrap_err();
        assert!(matches!(err, DbError::Slow { .. }), "{err:?}");
    }

    #[test]
    fn the_connection_cannot_write() {
        let tmp = tempfile::tempdir().unwrap();
        let db = make(tmp.path(), true);
        let r = open(&db).unwrap().unwrap();
        let err = r
            .rows("INSERT INTO t VALUES ('w', 0) RETURNING a", [], 1, |r| {
                text(r, 0)
            })
            .unwrap_err();
        assert!(matches!(err, DbError::Sqlite { .. }), "{err:?}");
        drop(r);
        assert_eq!(names(tmp.path()), ["a.db"]);
        let c = Connection::open(&db).unwrap();
        let n: i64 = c
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
    }

    #[test]
    fn odd_paths_are_encoded_into_the_uri() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a dir?#%&=");
        std::fs::create_dir(&dir).unwrap();
        let db = make(&dir, true);
        let r = open(&db).unwrap().unwrap();
        assert_eq!(read_all(&r).len(), 1);
        assert_eq!(
            uri(Path::new("/a b/c?d"), true),
            "file:/a%20b/c%3Fd?mode=ro&immutable=1"
        );
    }

    #[test]
    fn values_of_the_wrong_type_or_size_are_none_or_cut() {
        let tmp = tempfile::tempdir().unwrap();
        let db = make(tmp.path(), false);
        let c = Connection::open(&db).unwrap();
        c.execute_batch(&format!(
            "INSERT INTO t VALUES (CAST(x'ff41' AS TEXT), 'nan'); INSERT INTO t VALUES ('{}', 1e999); INSERT INTO t VALUES ('  ', NULL); INSERT INTO t VALUES (CAST('caf\u{e9}' AS BLOB), 3);",
            "é".repeat(MAX_TEXT_BYTES)
        ))
        .unwrap();
        drop(c);
        let r = open(&db).unwrap().unwrap();
        let rows = read_all(&r);
        assert_eq!(rows[1], (Some("\u{fffd}A".into()), None));
        let long = rows[2].0.as_ref().unwrap();
        assert!(long.len() <= MAX_TEXT_BYTES && long.len() > MAX_TEXT_BYTES - 2);
        assert_eq!(rows[2].1, None, "infinity is not a time");
        assert_eq!(rows[3], (None, None));
        assert_eq!(rows[4], (None, Some(3.0)), "a blob is not text");
    }

    fn proc(pid: u32, cwd: &str, start: u64) -> Proc {
        Proc {
            pid,
            cwd: Some(cwd.into()),
            start,
            ..Proc::default()
        }
    }

    fn cand(cwd: &str, started_at: f64, last_active: f64) -> Candidate {
        Candidate {
            cwd: cwd.into(),
            started_at,
            last_active,
        }
    }

    #[test]
    fn pairing_by_directory_creator_and_activity() {
        let tps = rustix::param::clock_ticks_per_second() as f64;
        let boot = 1000.0;
        let at = |t: f64| ((t - boot) * tps) as u64;
        // Processes 1 and 2 in /p, started at 1100 and 1200; 3 in /q at 1100.
        let p1 = proc(1, "/p", at(1100.0));
        let p2 = proc(2, "/p", at(1200.0));
        let p3 = proc(3, "/q", at(1100.0));
        let procs = [&p1, &p2, &p3];
        let cands = [
            cand("/p", 1101.0, 1300.0), // p1's (only p1 ran when it began), busy
            cand("/p", 1201.0, 1210.0), // p2's, quiet since
            cand("/p", 1000.0, 1050.0), // before either started: stale
            cand("/r", 1250.0, 1300.0), // nobody's directory
            cand("/q", 1099.0, 1099.0), // within the slack of p3's start
        ];
        assert_eq!(pair(&procs, &cands, Some(boot)), [(0, 0), (1, 1), (2, 4)]);
        // A session older than every process (resumed) goes to the newest.
        let resumed = [cand("/p", 900.0, 1250.0)];
        assert_eq!(pair(&procs, &resumed, Some(boot)), [(1, 0)]);
        // Without a boot time: directory only, newest process first, each
        // process one session, the most recently active.
        assert_eq!(pair(&procs, &cands, None), [(0, 1), (1, 0), (2, 4)]);
        let stale = [cand("/p", 1000.0, 1050.0)];
        assert_eq!(pair(&[&p1], &stale, None), [(0, 0)]);
        assert!(pair(&[&p1], &stale, Some(boot)).is_empty());
    }
}
