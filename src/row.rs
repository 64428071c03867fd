//! What a listing is made of: the rows, as this device computes them.

use std::path::PathBuf;

use serde::Serialize;

use crate::dedupe::LossReason;
use crate::liveness::{self, State, WriterClock};
use crate::record::Record;
use crate::redact::Redaction;

/// One row of a listing: a record and what this device computes about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The record (redacted).
    #[serde(flatten)]
    pub record: Record,
    /// File name in the directory.
    pub file: String,
    /// The directory that holds the file, as configured (expanded): only
    /// for a profile that reads several directories (`dirs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
    /// Which of the profile's directories holds the file (0: `dir`).
    #[serde(skip)]
    pub dir_index: usize,
    /// Whether the record is live.
    pub live: bool,
    /// `live`, `ended`, `stale` or `expired`; `superseded` only on the row of
    /// a `down` event.
    pub state: State,
    /// Written by this device.
    pub local: bool,
    /// Whether the file is a sync engine's conflict copy.
    pub conflict_copy: bool,
    /// Seconds since the file last arrived or changed here (local clock, from ctime).
    pub age_s: f64,
    /// Seconds since `updated_at` (writer clock); null without `updated_at`.
    pub claimed_age_s: Option<f64>,
    /// Seconds until the record stops being live; null for tombstones.
    pub expires_in_s: Option<f64>,
    /// With `--all`, on losers: the file name of the group's winner.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    /// How far the writer's clock runs ahead of ours (negative: behind), as
    /// learned from its records; null while its device has no estimate yet
    /// (its times are then read with the skew tolerance).
    pub writer_offset_s: Option<f64>,
    /// With `--all`, on losers: `older`, `lower_seq` or `file_name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_because: Option<LossReason>,
    /// Whether the record is signed by the key its `device_id` is derived
    /// from. Rows carry this instead of the record's `sig`.
    pub verified: bool,
    /// With `--all`: why a record that claims a key-derived `device_id`
    /// does not prove it (`no_key`, `key_mismatch`, `no_signature`,
    /// `not_canonical`, `bad_signature`). A forged record speaks for nobody.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forged: Option<&'static str>,
    /// Fields that carried credentials in the file and were redacted for display.
    #[serde(skip)]
    pub redactions: Vec<Redaction>,
}

impl Row {
    /// Recomputes the fields that count from `now` (`age_s`,
    /// `claimed_age_s`, `expires_in_s`) for a record whose file has `ctime`,
    /// so that a row kept across time (by a watcher) says what a listing
    /// would say now.
    pub(crate) fn retime(&mut self, ctime: f64, now: f64, (skew, margin): (f64, f64)) {
        let clock = match self.writer_offset_s {
            Some(offset) => WriterClock::Known { offset, margin },
            None => skew.into(),
        };
        self.age_s = round_ms(now - ctime);
        self.claimed_age_s = self.record.updated_at.map(|u| round_ms(now - u));
        self.expires_in_s =
            liveness::deadline(&self.record, ctime, clock).map(|d| round_ms(d - now));
    }

    /// Says what the row's life is: a copy whose life another copy ended is
    /// shown as ended, whether it looks live or expired on its own.
    pub(crate) fn mark_life(&mut self, life: State) {
        if life == State::Ended {
            if self.live {
                self.expires_in_s = None;
            }
            self.live = false;
            self.state = State::Ended;
        }
    }

    /// The order of a listing: `started_at`, newest first (a record without
    /// one last), then session id, then file name. Unlike `updated_at`,
    /// none of these changes when a session is refreshed, so a row keeps its
    /// place from one listing to the next.
    pub fn listing_order(&self, other: &Row) -> std::cmp::Ordering {
        listing_order(
            (self.record.started_at, &self.record.session_id, &self.file),
            (
                other.record.started_at,
                &other.record.session_id,
                &other.file,
            ),
        )
    }

    /// The names of the fields of a row's JSON form (`list --json`), for
    /// templates: the record's fields, the computed ones, and the two that
    /// only losers of `--all` carry.
    pub fn field_names() -> Vec<String> {
        let row = Row {
            record: Record::new("x"),
            file: String::new(),
            dir: Some(PathBuf::new()),
            dir_index: 0,
            live: false,
            state: State::Live,
            local: false,
            conflict_copy: false,
            age_s: 0.0,
            claimed_age_s: None,
            expires_in_s: None,
            superseded_by: Some(String::new()),
            lost_because: Some(LossReason::Older),
            writer_offset_s: None,
            verified: false,
            forged: Some(""),
            redactions: Vec::new(),
        };
        match serde_json::to_value(&row) {
            Ok(serde_json::Value::Object(map)) => map.keys().cloned().collect(),
            _ => Vec::new(),
        }
    }
}

/// `x` rounded to the millisecond, as the JSON output gives ages.
pub(crate) fn round_ms(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

pub(crate) fn listing_order(
    a: (Option<f64>, &str, &str),
    b: (Option<f64>, &str, &str),
) -> std::cmp::Ordering {
    let started = |t: Option<f64>| t.unwrap_or(f64::NEG_INFINITY);
    started(b.0)
        .total_cmp(&started(a.0))
        .then_with(|| a.1.cmp(b.1))
        .then_with(|| a.2.cmp(b.2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_order_is_newest_start_then_id_then_file() {
        let keys = [
            (None, "a", "f"),
            (Some(10.0), "b", "f"),
            (Some(20.0), "z", "f"),
            (Some(10.0), "a", "g"),
            (Some(10.0), "a", "f"),
        ];
        let mut sorted = keys.to_vec();
        sorted.sort_by(|a, b| listing_order(*a, *b));
        assert_eq!(
            sorted,
            [
                (Some(20.0), "z", "f"),
                (Some(10.0), "a", "f"),
                (Some(10.0), "a", "g"),
                (Some(10.0), "b", "f"),
                (None, "a", "f"),
            ]
        );
    }
}
