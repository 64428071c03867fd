//! `presence` publishes, lists, expires and dedupes small, secret-free
//! **session presence records** in a directory that a file-sync engine
//! (Syncthing, Dropbox, Nextcloud, iCloud, NFS) shares between devices.
//!
//! A record says "session X is live on device Y, refreshed at T". Each is one
//! JSON file, written atomically; a record is live while its refreshes keep
//! arriving, judged on this machine's clock so that devices whose clocks
//! disagree still agree on who is live.
//!
//! ```
//! use presence::{LocalDirs, Registry, PublishRequest, ListOptions, config};
//!
//! # fn main() -> Result<(), presence::Error> {
//! let tmp = tempfile::tempdir().unwrap();
//! let local = LocalDirs::under(tmp.path());
//! let (profile, _source) = config::resolve(&config::Selection::default(), &local)?;
//! let registry = Registry::new(profile, local).with_host("laptop");
//!
//! let now = presence::unix_now();
//! let req = PublishRequest {
//!     session_id: "s-42".into(),
//!     title: Some("Refactor the parser".into()),
//!     ..PublishRequest::default()
//! };
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

#![deny(missing_docs)]

mod change;
pub mod config;
pub mod dedupe;
pub mod doctor;
pub mod error;
pub mod expire;
mod ledger;
pub mod lifecycle;
pub mod limits;
pub mod liveness;
pub mod local;
pub mod owner;
pub mod record;
pub mod redact;
pub mod registry;
pub mod store;
pub mod text;
pub mod watch;

pub use config::{Profile, Selection};
pub use error::{ConfigError, Error, Result};
pub use local::LocalDirs;
pub use record::Record;
pub use registry::{ListOptions, Listing, PublishRequest, Published, Registry, Row};

/// This machine's clock as Unix seconds. Only callers at the edge (the
/// binary) read the clock; every rule takes `now` as a parameter.
pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
