//! How a watcher watches, and what it counts.
use std::time::Duration;

/// How a [`Watcher`](super::Watcher) watches.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct WatchOptions {
    /// Rescan at this interval instead of listening for native events (at
    /// least `limits::MIN_POLL`).
    pub poll: Option<Duration>,
    /// After the first file event, wait until events pause this long
    /// (default 10 ms)…
    pub quiet: Duration,
    /// …but no longer than this after the first (default 100 ms).
    pub max_delay: Duration,
    /// With native events, rescan (stat every file, read those that changed)
    /// at least this often (default 5 min); with `poll`, the poll interval.
    pub rescan: Duration,
    /// Show every label, as `list --all-profiles`.
    pub all_profiles: bool,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            poll: None,
            quiet: crate::limits::WATCH_QUIET,
            max_delay: crate::limits::WATCH_MAX_DELAY,
            rescan: crate::limits::WATCH_RESCAN,
            all_profiles: false,
        }
    }
}

/// Counters of the work a [`Watcher`](super::Watcher) did since it started (for tests and
/// benchmarks).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct WatchStats {
    /// Full looks at the directory: the first, and those after an overflow,
    /// a backend error, a moved directory, the safety-net interval, or each
    /// poll. Each lists the directory and stats every record file.
    pub rescans: u64,
    /// Wake-ups for file events (each a coalesced batch).
    pub batches: u64,
    /// Record files opened and read.
    pub files_read: u64,
}
