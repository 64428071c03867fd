//! Every default and limit in one table (no I/O). The rules, the config
//! resolver, the CLI and the docs read them from here; docs/config.md and
//! docs/record-format.md quote them.

use std::time::Duration;

/// Default time to live of a record.
pub const DEFAULT_TTL: Duration = Duration::from_secs(90);
/// Shortest ttl honoured (a record's own, clamped) and accepted (config, `--ttl`).
pub const MIN_TTL: Duration = Duration::from_secs(1);
/// Longest ttl honoured and accepted.
pub const MAX_TTL: Duration = Duration::from_secs(3600);
/// Default tolerance for writer clocks running behind ours.
pub const DEFAULT_SKEW: Duration = Duration::from_secs(300);
/// What covers the error of a device's learned clock offset (see
/// docs/record-format.md): a record is read as expired this long after its
/// `expires_at`, translated into this machine's clock.
pub const CLOCK_MARGIN: Duration = Duration::from_secs(1);
/// Largest `clock_margin` accepted: it covers seconds of error, not minutes.
pub const MAX_CLOCK_MARGIN: Duration = Duration::from_secs(60);
/// Largest skew tolerance accepted.
pub const MAX_SKEW: Duration = Duration::from_secs(86_400);
/// Default interval of `refresh --every` and of the keep-alive guard (which
/// also refreshes at least every ttl / 3).
pub const DEFAULT_REFRESH_INTERVAL: Duration = Duration::from_secs(30);
/// Default time a record must be dead before any device deletes it.
pub const DEFAULT_GC_AFTER: Duration = Duration::from_secs(3600);
/// How long this device's tombstones stay, so that every device sees the end
/// before the file goes (sync engines propagate writes before deletes).
pub const TOMBSTONE_GRACE: Duration = Duration::from_secs(600);
/// How old a temp file of an interrupted write must be before it is removed.
pub const TEMP_GRACE: Duration = Duration::from_secs(600);

/// Largest record file read; bigger ones are skipped.
pub const MAX_FILE_BYTES: usize = 64 * 1024;
/// Longest string field kept (UTF-8 bytes) when a record is written or listed.
pub const MAX_STRING_BYTES: usize = 1024;
/// Longest title kept, in characters.
pub const MAX_TITLE_CHARS: usize = 256;
/// Most metadata entries kept.
pub const MAX_METADATA_ENTRIES: usize = 32;
/// Longest metadata key kept (UTF-8 bytes).
pub const MAX_METADATA_KEY_BYTES: usize = 128;
/// Largest configuration file read.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// What a redacted credential is replaced with. Cutting a field to its
/// limit ([`MAX_STRING_BYTES`], [`MAX_TITLE_CHARS`]) never splits it.
pub const REDACTED: &str = "[redacted]";

/// Shortest `watch --poll` interval.
pub const MIN_POLL: Duration = Duration::from_millis(100);
/// `watch`: how long the folder must be quiet before a batch is read.
pub const WATCH_QUIET: Duration = Duration::from_millis(2);
/// `watch`: the longest a change waits for the folder to go quiet.
pub const WATCH_MAX_DELAY: Duration = Duration::from_millis(100);
/// `watch`: the full safety rescan, in case a notification was lost.
pub const WATCH_RESCAN: Duration = Duration::from_secs(300);

/// A duration as the `f64` seconds the rules compute with.
pub(crate) const fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// Whether a ttl is within [[`MIN_TTL`], [`MAX_TTL`]].
pub(crate) fn ttl_in_range(ttl: Duration) -> bool {
    (MIN_TTL..=MAX_TTL).contains(&ttl)
}

/// Length of a key-derived device id, in base32 characters (200 bits).
pub(crate) const KEY_ID_CHARS: usize = 40;

/// At most what signing adds to a record's bytes: the `key` and `sig`
/// members and a `device_id` of [`KEY_ID_CHARS`].
pub(crate) const SIGNED_EXTRA_BYTES: usize = 200;
