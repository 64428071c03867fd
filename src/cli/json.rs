//! The JSON contract of the binary, in one place: the row of `list --json`,
//! `show --json` and `watch --json` (the library's [`Row`] plus what
//! `presence open` would do with it) and the NDJSON events of
//! `watch --json`. docs/json-output.md documents both.

use presence::open::{self, Handlers, Target};
use presence::{DownReason, Registry, Row};
use serde::Serialize;

/// What the `--json` rows of `list`, `show` and `watch` say about opening a
/// session: the argv `presence open` would run, or why it would not.
pub struct Opener {
    handlers: Handlers,
    host: String,
    inside_tmux: bool,
}

/// A row as `--json` prints it: the row's fields, `open` (the argv, or
/// null) and `open_error` (null, or why not).
#[derive(Serialize)]
pub struct OpenRow<'a> {
    #[serde(flatten)]
    pub row: &'a Row,
    pub open: Option<Vec<String>>,
    pub open_error: Option<String>,
}

impl Opener {
    /// The opener of `registry`'s sessions, with its profile's handlers.
    pub fn new(registry: &Registry) -> Opener {
        Opener {
            handlers: registry.profile().open_handlers.clone(),
            host: registry.host().to_string(),
            inside_tmux: super::open::inside_tmux(),
        }
    }

    pub fn row<'a>(&self, row: &'a Row) -> OpenRow<'a> {
        let r = &row.record;
        let argv = if row.live {
            let target = Target {
                this_host: &self.host,
                session_id: &r.session_id,
                opener: open::platform_opener(),
                inside_tmux: self.inside_tmux,
            };
            open::argv(&r.endpoint, &self.handlers, target).map_err(|e| e.to_string())
        } else {
            Err(format!("the session is not live ({})", row.state))
        };
        match argv {
            Ok(argv) => OpenRow {
                row,
                open: Some(argv),
                open_error: None,
            },
            Err(why) => OpenRow {
                row,
                open: None,
                open_error: Some(why),
            },
        }
    }
}

/// One line of `watch --json`. Its keys, the record's included, are in
/// alphabetical order: the fields below are declared in that order, and the
/// record is a JSON object (a map with sorted keys).
#[derive(Serialize)]
pub struct WatchEvent<'a> {
    /// `update`: the fields that changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed: Option<&'a [&'static str]>,
    /// `ready`: the number of live sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    pub epoch: &'a str,
    /// `up`, `update`, `down` or `ready`.
    pub event: &'a str,
    /// `up` of the initial live set: true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial: Option<bool>,
    /// `down`: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<DownReason>,
    /// The row (an [`OpenRow`]), but for `ready`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<serde_json::Value>,
    pub seq: u64,
    pub time: f64,
}

impl<'a> WatchEvent<'a> {
    /// The event `event`, numbered `seq` in `epoch`, at `time`; the rest unset.
    pub fn new(event: &'a str, seq: u64, epoch: &'a str, time: f64) -> WatchEvent<'a> {
        WatchEvent {
            changed: None,
            count: None,
            epoch,
            event,
            initial: None,
            reason: None,
            record: None,
            seq,
            time,
        }
    }

    /// With `record`: the row as `--json` prints it, its keys sorted.
    pub fn record(mut self, row: OpenRow<'_>) -> anyhow::Result<WatchEvent<'a>> {
        self.record = Some(serde_json::to_value(row)?);
        Ok(self)
    }
}
