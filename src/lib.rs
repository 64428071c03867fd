//! `presence` publishes, lists, expires and dedupes small, secret-free
//! **session presence records** in a directory that a file-sync engine
//! (Syncthing, Dropbox, Nextcloud, iCloud, NFS) shares between devices.
//!
//! A record says "session X is live on device Y, refreshed at T". Each is one
//! JSON file, written atomically; a record is live while its refreshes keep
//! arriving, judged on this machine's clock so that devices whose clocks
//! disagree still agree on who is live.
//!
//! The surface is small: a [`Registry`] is one profile's directory;
//! [`Registry::open`] finds it from the user's configuration (a
//! [`Selection`] says which profile), [`Registry::new`] takes a [`Profile`]
//! and [`LocalDirs`] you resolved yourself. Every time is Unix seconds as
//! `f64`, passed in as `now` (read it with [`unix_now`]): the rules never
//! read the clock themselves, so they can be tested with any clock.
//!
//! # Publish and list
//!
//! ```
//! use presence::{ListOptions, LocalDirs, Profile, PublishRequest, Registry, Selection};
//!
//! # fn main() -> Result<(), presence::Error> {
//! # let tmp = tempfile::tempdir().unwrap();
//! // In a program: `Registry::open(&Selection::default())?`. Here, everything
//! // lives in a temp dir.
//! let local = LocalDirs::under(tmp.path());
//! let (profile, _source) = Profile::resolve(&Selection::default(), &local)?;
//! let registry = Registry::new(profile, local).with_host("laptop");
//!
//! let now = presence::unix_now();
//! let mut req = PublishRequest::new("s-42");
//! req.title = Some("Refactor the parser".into());
//! registry.publish(&req, now)?;
//!
//! let listing = registry.list(ListOptions::default(), now)?;
//! assert_eq!(listing.rows.len(), 1);
//! assert!(listing.rows[0].live && listing.rows[0].local);
//!
//! registry.clear(Some("s-42"), None, now + 1.0)?;
//! assert!(registry.list(ListOptions::default(), now + 1.0)?.rows.is_empty());
//! # Ok(())
//! # }
//! ```
//!
//! # Keep a record alive while you work
//!
//! ```
//! # use presence::{LocalDirs, Profile, PublishRequest, Registry, Selection};
//! # fn main() -> Result<(), presence::Error> {
//! # let tmp = tempfile::tempdir().unwrap();
//! # let local = LocalDirs::under(tmp.path());
//! # let (profile, _) = Profile::resolve(&Selection::default(), &local)?;
//! let registry = Registry::new(profile, local);
//! let mut req = PublishRequest::new("build-7");
//! req.status = Some("working".into());
//! let guard = registry.keep_alive(&req)?;
//! // ... work; the record is refreshed every min(refresh_interval, ttl / 3) ...
//! guard.update(|r| r.status = "waiting".into())?;
//! assert_eq!(guard.record().status, "waiting");
//! drop(guard); // ends the session: a tombstone every device sees
//! # Ok(()) }
//! ```
//!
//! # Watch for changes
//!
//! ```
//! # use presence::{Event, LocalDirs, Profile, PublishRequest, Registry, Selection};
//! # use presence::{WatchOptions, Watcher};
//! # use std::time::Duration;
//! # fn main() -> Result<(), presence::Error> {
//! # let tmp = tempfile::tempdir().unwrap();
//! # let local = LocalDirs::under(tmp.path());
//! # let (profile, _) = Profile::resolve(&Selection::default(), &local)?;
//! let registry = Registry::new(profile, local);
//! let mut watcher = Watcher::new(registry.clone(), WatchOptions::default(), presence::unix_now())?;
//! registry.publish(&PublishRequest::new("s-1"), presence::unix_now())?;
//! let mut events = Vec::new();
//! while events.is_empty() {
//!     events = watcher.next_events(Duration::from_secs(5), presence::unix_now)?;
//! }
//! assert!(matches!(&events[0], Event::Up(row) if row.record.session_id == "s-1"));
//! # Ok(()) }
//! ```

#![deny(missing_docs)]

// The module map: each concern, the module that owns it, and the one place
// each of its rules lives. The layers these modules sit on follow (checked).
//
//  Record ........ record: the schema, limits enforcement, Record::group_key
//                  (the group key), Record::life (the life identity),
//                  client_or_source; record::parse (the lenient reader and
//                  the borrowed Probe); record::lenient (field readers);
//                  limits (every default and limit, the REDACTED marker)
//  Liveness ...... liveness: state_of, deadline, record_ttl (clamped); the
//                  lifecycle as transformations (tombstone, end_of,
//                  refreshed); the refresh rule (refresh_problem,
//                  keep_alive_interval, refresh_margin)
//  Clocks ........ clock: learning each writer's clock offset
//  Dedupe ........ dedupe: Rank, decide (a group's winner), EndedLives (a
//                  life ended in any group is ended in all), Facts (the
//                  facts of one file); dedupe::digest (group and life
//                  digests, the one encoding of both); dedupe::reducer (the
//                  map engine); dedupe::slots (the sort engine)
//  Secret-free ... redact (detection); text (terminal_safe, the sanitiser)
//  Rows .......... row: Row and the listing order
//  Expire ........ expire: decide (pure); registry::expire applies it
//  Watch events .. watch::diff: the events between two live sets
//  Opening ....... open: an endpoint hint checked part by part into a
//                  handler's argv, never a shell line
//  The directory . store: the directory opened once, by fd; store::names
//                  (record and conflict-copy names, the Engine enum);
//                  store::entry (Stamp, Entry); store::bounded (the one
//                  bounded, non-blocking, no-follow read, and the names of
//                  file types); store::scan; store::write (replace or remove
//                  only if unchanged); store::engine (sync-engine discovery)
//  This device ... local (device id, the one record lock, clocks.json,
//                  write_small: the one atomic write of local state,
//                  unix_now); ledger (the lives this device published);
//                  owner (owner processes); scan_cache (the listing's cache);
//                  child (a helper program run with a deadline and bounded
//                  output)
//  Configuration . config (profiles, the one resolver); config::file,
//                  config::paths, config::hermes
//  The front ..... registry: Registry; registry::read (the one read pass,
//                  Pass, and the one cache-or-probe fold, each_file);
//                  registry::change (the one write path, and Own: what this
//                  device owns); registry::publish (and secret_free, the one
//                  write-time policy); list, show, clear, devices, refresh,
//                  guard, expire: one file per operation
//  Consumers ..... watch (the watcher; watch::backend wraps notify); doctor
//                  (one function per check); discover (local agents'
//                  sessions: the types readers share, the process scan
//                  discover::procs, one reader per agent, the tmux endpoint
//                  discover::tmux, discover::sqlite (the one read-only,
//                  bounded way to read an agent's SQLite database), and
//                  discover::refresh, the refresher's pass that publishes
//                  what they find)
//  The binary .... src/cli: one file per subcommand; cli::output (the one
//                  sanitizing output layer, which clippy.toml enforces);
//                  cli::json (the JSON shapes); cli::exit (exit codes)
//
// The layers, lowest first. A module imports only modules on its own
// layer or a lower one; imports form no cycle; library code imports an item
// from the module that defines it, never through this file's re-exports.
// A module is on the layer of its longest listed ancestor (`record::lenient`
// is on `record`'s). Test code (`#[cfg(test)]` items) is exempt; the binary
// (src/main.rs, src/cli) sits above all of them. tests/integration/layers.rs
// reads the lines below and checks every file under src/ against them.
//
// layer 0 base: error limits
// layer 1 rules: text record identity liveness clock dedupe redact open row expire watch::diff store::names store::entry
// layer 2 mechanics: store local ledger owner scan_cache child config watch::backend
// layer 3 front: registry
// layer 4 consumers: watch doctor discover

mod child;
mod clock;
mod config;
mod dedupe;
mod discover;
mod doctor;
mod error;
mod expire;
mod identity;
mod ledger;
#[doc(hidden)] // Every default and limit; the CLI states them in its help and checks.
pub mod limits;
mod liveness;
mod local;
#[doc(hidden)] // Endpoint hints to argv, for `presence open`.
pub mod open;
mod owner;
mod record;
mod redact;
mod registry;
mod row;
mod scan_cache;
mod store;
mod text;
mod watch;

// The documented surface: the registry and its operations' inputs and
// outcomes, the watcher, the record, errors, configuration, and the two
// text functions every embedder that prints needs.
pub use config::{Profile, Selection};
pub use dedupe::LossReason;
pub use error::{ConfigError, Error, Result};
pub use liveness::State;
pub use local::{LocalDirs, unix_now};
pub use record::Record;
pub use redact::redact_text;
pub use registry::{
    ClearOutcome, Device, DiscoverOutcome, ExpireOutcome, Field, Guard, ListOptions, Listing,
    PublishRequest, Published, RefreshOutcome, Registry, Row,
};
pub use store::Skipped;
pub use text::terminal_safe;
pub use watch::{DownReason, Event, WatchOptions, Watcher};

// Public because the binary (src/cli) is a second crate that links this
// one, not because they are a stable API: the pieces of outcomes that only
// the CLI prints, the CLI's own parsers and checks, and its helpers.
#[doc(hidden)]
// What `Profile::resolve` says of where the configuration came from; the CLI prints it.
pub use config::ConfigSource;
#[doc(hidden)]
// The agents `presence setup` offers to discover, and its check of what it writes.
pub use config::{AGENTS, discover_agents_of};
#[doc(hidden)] // The CLI's value parsers and `presence config`'s example and label sets.
pub use config::{DurationError, EXAMPLE as CONFIG_EXAMPLE, ShowSet, parse_duration};
#[doc(hidden)] // The refresher's pass with discovery, for `presence refresh`.
pub use discover::refresh as discover_and_refresh;
#[doc(hidden)] // `presence doctor` and `setup`: the checks' texts are the CLI's output.
pub use doctor::{Check, Status, doctor, stignore_ignores_temp_files};
#[doc(hidden)] // Parts of outcomes (`ExpireOutcome::removed`), as the CLI prints them.
pub use expire::{Garbage, Reason as GarbageReason};
#[doc(hidden)] // The binary's `refresh --every` check; the resolver makes the same one.
pub use liveness::refresh_problem;
#[doc(hidden)] // Why a file was passed over or a record unparseable, as the CLI prints it.
pub use record::ParseError;
#[doc(hidden)] // What redaction removed, as `publish` reports it.
pub use redact::{REDACTED, Redaction};
#[doc(hidden)] // Parts of outcomes and `Field`'s parse error, as the CLI prints them.
pub use registry::{Cleared, UnknownField};
#[doc(hidden)] // Why a file was passed over, as the CLI prints it.
pub use store::SkipReason;
#[doc(hidden)] // The one bounded read, for `presence setup`.
pub use store::bounded;
#[doc(hidden)] // The one sync-engine type and its discovery, for `presence setup`.
pub use store::engine;
#[doc(hidden)] // Durations and clock offsets as the CLI shows them, clamped.
pub use text::{short_duration, signed_seconds, within_a_century};
