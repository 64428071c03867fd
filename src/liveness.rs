//! The expiry rule, safe under clock skew (pure functions; `now` is always a
//! parameter).
//!
//! A record's `updated_at` is on the writer's clock; the file's ctime is on
//! ours, taken when the file last arrived or changed here. A record is live iff
//!
//! ```text
//! ended_at is unset  ∧  now − arrived < ttl  ∧  now < expires_at + skew
//! ```
//!
//! where `ttl = expires_at − updated_at` clamped to [1 s, 1 h]. The arrival
//! term makes a dead session vanish `ttl` after its last refresh arrived
//! whatever the writer's clock says; the `expires_at` term drops stale copies
//! that arrive late (a device that was offline), allowing `skew` of clock
//! error. With the writer's clock learned (see clock.rs), `expires_at` is
//! read through it instead of with `skew`.
//!
//! **Arrival.** `arrived` is the file's ctime — but never later than the
//! record's own `updated_at` read on this machine's clock, as far as this
//! machine knows the writer's clock: `updated_at − offset + margin` for a
//! writer whose offset is learned (this device's own records: offset 0), and
//! `updated_at − s` for a writer seen lately without an estimate yet, `s`
//! being the largest sample of its clock in the window less the margin (see
//! [`WriterClock::arrival`]). A ctime also moves when only the file's
//! metadata changes — a `chmod`, a `chown`, an extended attribute, Syncthing
//! applying another device's permission bits in place — and the content,
//! which did not change, then says the copy is old: such a change never
//! gives a dead record another ttl. Neither bound is ever earlier than the
//! true write time (a learned offset or a sample never exceeds the true
//! offset, forged samples aside, which only end a device's sessions
//! earlier), so no genuine copy dies before its own `expires_at`.
//!
//! The mtime is no help: Syncthing (like most sync engines) sets it to the
//! writer's mtime, on the writer's clock, so `min(ctime, mtime)` would end
//! every record of a writer whose clock runs more than a ttl behind at
//! once; and a file's stat cannot tell a chmod from a copy of a writer
//! running behind that arrived just now. For a writer this machine knows
//! nothing of (first contact, or records without a `device_id`), a
//! metadata-only change can therefore still make a record live again until
//! its `expires_at + skew` — no longer than the skew tolerance allows any
//! copy — or, for a writer whose clock runs ahead and is not known yet,
//! for one more ttl.

use crate::record::Record;

use crate::limits::{self, secs};

/// Default time to live of a record, in seconds ([`limits::DEFAULT_TTL`]).
pub(crate) const DEFAULT_TTL: f64 = secs(limits::DEFAULT_TTL);
/// Shortest ttl honoured ([`limits::MIN_TTL`]).
pub(crate) const MIN_TTL: f64 = secs(limits::MIN_TTL);
/// Longest ttl honoured ([`limits::MAX_TTL`]).
pub(crate) const MAX_TTL: f64 = secs(limits::MAX_TTL);

/// Why a record is or is not live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum State {
    /// Shown.
    Live,
    /// A tombstone written by `clear`.
    Ended,
    /// No refresh arrived here within `ttl` (local clock; see the module
    /// docs for when a copy counts as arrived).
    Stale,
    /// The writer's own `expires_at` (plus skew) has passed, or is missing.
    Expired,
    /// Another live runtime on the same endpoint replaced it: only on the
    /// row of a `down` event ([`Event::Down`](crate::Event::Down)), which
    /// says how its session left the live set.
    Superseded,
}

impl State {
    /// Lower-case name used in JSON output (`live`, `ended`, `stale`,
    /// `expired`, `superseded`).
    pub fn as_str(self) -> &'static str {
        match self {
            State::Live => "live",
            State::Ended => "ended",
            State::Stale => "stale",
            State::Expired => "expired",
            State::Superseded => "superseded",
        }
    }
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The ttl a record claims: `expires_at − updated_at`, clamped to
/// [[`MIN_TTL`], [`MAX_TTL`]]; [`DEFAULT_TTL`] when either time is missing.
pub(crate) fn record_ttl(record: &Record) -> f64 {
    ttl_of(record.updated_at, record.expires_at)
}

/// [`record_ttl`] from the two times.
pub(crate) fn ttl_of(updated_at: Option<f64>, expires_at: Option<f64>) -> f64 {
    match (updated_at, expires_at) {
        (Some(u), Some(e)) if (e - u).is_finite() => (e - u).clamp(MIN_TTL, MAX_TTL),
        _ => DEFAULT_TTL,
    }
}

/// How this machine reads a writer's `expires_at`: through the writer's
/// clock offset learned from its earlier records (see `clock.rs`), or — for a
/// writer not known yet — with the skew tolerance. A bare `f64` is the skew.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum WriterClock {
    /// No estimate: `expires_at + skew`.
    Unknown {
        /// The skew tolerance, seconds.
        skew: f64,
        /// How far the writer's clock runs ahead of ours at least, less the
        /// margin: the largest sample of it seen lately, if any (one
        /// arrival, or one burst, is not enough for an estimate, but bounds
        /// a copy's arrival; see [`WriterClock::arrival`]).
        at_least: Option<f64>,
    },
    /// The writer's clock runs `offset` seconds ahead of ours (negative:
    /// behind): `expires_at − offset + margin`.
    Known {
        /// Seconds the writer's clock runs ahead of ours.
        offset: f64,
        /// What covers the estimate's error, seconds.
        margin: f64,
    },
}

impl WriterClock {
    /// `expires_at` on this machine's clock, with the tolerance.
    pub(crate) fn expiry(self, expires_at: f64) -> f64 {
        match self {
            WriterClock::Unknown { skew, .. } => expires_at + skew,
            WriterClock::Known { offset, margin } => expires_at - offset + margin,
        }
    }

    /// When a copy whose file has `ctime` and whose record says
    /// `updated_at` arrived here, for the liveness rule: its ctime, but
    /// never later than when its content was written, on this machine's
    /// clock, as far as the writer's clock is known (see the module docs).
    /// So a change of the file's metadata alone, which moves its ctime,
    /// does not make it newer.
    pub(crate) fn arrival(self, ctime: f64, updated_at: Option<f64>) -> f64 {
        let Some(updated_at) = updated_at else {
            return ctime;
        };
        let written = match self {
            WriterClock::Known { offset, margin } => updated_at - offset + margin,
            WriterClock::Unknown {
                at_least: Some(ahead),
                ..
            } => updated_at - ahead,
            WriterClock::Unknown { at_least: None, .. } => return ctime,
        };
        if written.is_finite() {
            ctime.min(written)
        } else {
            ctime
        }
    }
}

impl From<f64> for WriterClock {
    fn from(skew: f64) -> Self {
        WriterClock::Unknown {
            skew,
            at_least: None,
        }
    }
}

/// Evaluates the liveness rule for a record whose file has `ctime` (seconds,
/// this machine's clock), at `now`, reading its times through `clock` (a
/// bare `f64` is the skew tolerance).
pub(crate) fn state(record: &Record, ctime: f64, now: f64, clock: impl Into<WriterClock>) -> State {
    state_of(
        [record.updated_at, record.expires_at, record.ended_at],
        ctime,
        now,
        clock,
    )
}

/// [`state`] from the record's `[updated_at, expires_at, ended_at]`.
pub(crate) fn state_of(
    times: [Option<f64>; 3],
    ctime: f64,
    now: f64,
    clock: impl Into<WriterClock>,
) -> State {
    let [updated_at, expires_at, ended_at] = times;
    if ended_at.is_some() {
        return State::Ended;
    }
    let Some(expires_at) = expires_at else {
        return State::Expired;
    };
    let clock = clock.into();
    if now - clock.arrival(ctime, updated_at) >= ttl_of(updated_at, Some(expires_at)) {
        return State::Stale;
    }
    if now >= clock.expiry(expires_at) {
        return State::Expired;
    }
    State::Live
}

/// When a live record stops being live (this machine's clock): the earlier of
/// its arrival plus ttl (see [`WriterClock::arrival`]) and `expires_at +
/// skew`. `None` for tombstones and records without `expires_at`.
pub(crate) fn deadline(record: &Record, ctime: f64, clock: impl Into<WriterClock>) -> Option<f64> {
    deadline_of(
        [record.updated_at, record.expires_at, record.ended_at],
        ctime,
        clock,
    )
}

/// [`deadline`] from the record's `[updated_at, expires_at, ended_at]`.
pub(crate) fn deadline_of(
    times: [Option<f64>; 3],
    ctime: f64,
    clock: impl Into<WriterClock>,
) -> Option<f64> {
    let [updated_at, expires_at, ended_at] = times;
    if ended_at.is_some() {
        return None;
    }
    let expires_at = expires_at?;
    let clock = clock.into();
    let arrived = clock.arrival(ctime, updated_at);
    Some((arrived + ttl_of(updated_at, Some(expires_at))).min(clock.expiry(expires_at)))
}

// ---- A record's lifecycle as pure transformations: what refresh, clear
// and the keep-alive write.

/// `record` turned into a tombstone at `now`.
///
/// `expires_at` is set `skew` before `ended_at`, so that a reader that only
/// filters on `expires_at > now` (Hermes does) stops showing the session as
/// soon as the tombstone arrives, even with a clock up to `skew` behind.
pub(crate) fn tombstone(mut record: Record, now: f64, skew: f64) -> Record {
    record.ended_at = Some(now);
    record.expires_at = Some(now - skew);
    record.updated_at = Some(now);
    record.status = "ended".into();
    record.seq = record.seq.saturating_add(1);
    record
}

/// The tombstone to write for `base` (what this device last wrote for a
/// life, see `Current::base` in registry/change.rs) at `now`: a new one, or — when
/// the life had already ended here and a sync engine brought a live copy
/// back — the same end written again, ranked above that copy.
pub(crate) fn end_of(mut base: Record, now: f64, skew: f64) -> Record {
    if base.ended_at.is_some() {
        base.seq = base.seq.saturating_add(1);
        base
    } else {
        tombstone(base, now, skew)
    }
}

/// `record` re-published at `now`, keeping its own ttl.
pub(crate) fn refreshed(mut record: Record, now: f64) -> Record {
    let ttl = record_ttl(&record);
    record.updated_at = Some(now);
    record.expires_at = Some(now + ttl);
    record.seq = record.seq.saturating_add(1);
    record
}

// The refresh rule, said once. A record stays live only while its refreshes
// arrive within its ttl, so a refresher's interval must be above zero and
// below the ttl; a third of the ttl leaves two chances to refresh before a
// record expires, as etcd clients renew leases at a third of their TTL. The
// config resolver and `refresh --every` check an interval with
// [`refresh_problem`], the keep-alive guard refreshes every
// [`keep_alive_interval`], and `doctor` states [`refresh_margin`].

/// How often a keep-alive (`presence run`, the library guard) re-publishes a
/// record with `ttl`: the profile's `refresh_interval`, but at least every
/// ttl / 3, so that two chances to refresh remain whatever the record's ttl.
pub(crate) fn keep_alive_interval(
    refresh_interval: std::time::Duration,
    ttl: std::time::Duration,
) -> std::time::Duration {
    refresh_interval.min(ttl / 3)
}

/// What is wrong with refreshing records of `ttl` every `interval`, with the
/// fix, written to follow the interval as the user gave it
/// (`refresh_interval = 45s`, `--every 45s`); `None` when the interval keeps
/// such records alive.
pub fn refresh_problem(interval: std::time::Duration, ttl: std::time::Duration) -> Option<String> {
    let advice = format!(
        "Use at most ttl / 3 (here {}): that leaves two chances to refresh before a record expires",
        humantime::format_duration(third_of(ttl))
    );
    if interval.is_zero() {
        Some(format!(
            "is zero; a refresher would rewrite records without pause. {advice}"
        ))
    } else if interval >= ttl {
        Some(format!(
            "is not below the ttl ({}); records would expire between refreshes. {advice}",
            humantime::format_duration(ttl)
        ))
    } else {
        None
    }
}

/// How many refreshes every `interval` fall after one refresh and before the
/// record it wrote, of `ttl`, would expire: the chances a refresher has (two
/// at ttl / 3, none when the interval is not below the ttl).
pub(crate) fn refresh_chances(interval: std::time::Duration, ttl: std::time::Duration) -> u128 {
    match interval.as_nanos() {
        0 => 0,
        every => ttl.as_nanos().div_ceil(every).saturating_sub(1),
    }
}

/// What refreshing every `interval` leaves records of `ttl`, in words:
/// "two chances to refresh before a record expires".
pub(crate) fn refresh_margin(interval: std::time::Duration, ttl: std::time::Duration) -> String {
    const BEFORE: &str = "to refresh before a record expires";
    match refresh_chances(interval, ttl) {
        0 => format!("no chance {BEFORE}"),
        1 => format!(
            "one chance {BEFORE}; ttl / 3 (here {}) leaves two",
            humantime::format_duration(third_of(ttl))
        ),
        2 => format!("two chances {BEFORE}"),
        n => format!("{n} chances {BEFORE}"),
    }
}

/// A third of `ttl` as the advice states it: whole seconds, or whole
/// milliseconds under 3 s (never above ttl / 3).
fn third_of(ttl: std::time::Duration) -> std::time::Duration {
    let third = ttl / 3;
    if third.as_secs() >= 1 {
        std::time::Duration::from_secs(third.as_secs())
    } else {
        std::time::Duration::from_millis(third.as_millis() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(updated: Option<f64>, expires: Option<f64>) -> Record {
        let mut r = Record::new("s");
        r.updated_at = updated;
        r.expires_at = expires;
        r
    }

    const NOW: f64 = 1_000_000.0;
    const SKEW: f64 = secs(crate::limits::DEFAULT_SKEW);

    #[test]
    fn liveness_table() {
        // (case, updated_at, expires_at, ctime, now, expected)
        let h = 3600.0;
        let cases = [
            (
                "fresh, clocks agree",
                Some(NOW - 10.0),
                Some(NOW + 80.0),
                NOW - 10.0,
                NOW,
                State::Live,
            ),
            (
                "just published",
                Some(NOW),
                Some(NOW + 90.0),
                NOW,
                NOW,
                State::Live,
            ),
            (
                "arrived 89s ago",
                Some(NOW - 89.0),
                Some(NOW + 1.0),
                NOW - 89.0,
                NOW,
                State::Live,
            ),
            (
                "arrived 90s ago",
                Some(NOW - 90.0),
                Some(NOW),
                NOW - 90.0,
                NOW,
                State::Stale,
            ),
            // Writer clock 3 h ahead: it claims to expire in 3 h, but it
            // arrived here 91 s ago and nobody refreshed it.
            (
                "writer 3h ahead, dead",
                Some(NOW + 3.0 * h - 91.0),
                Some(NOW + 3.0 * h - 1.0),
                NOW - 91.0,
                NOW,
                State::Stale,
            ),
            (
                "writer 3h ahead, alive",
                Some(NOW + 3.0 * h - 5.0),
                Some(NOW + 3.0 * h + 85.0),
                NOW - 5.0,
                NOW,
                State::Live,
            ),
            // Writer clock 4 min behind, refreshed 5 s ago: its expires_at is
            // already in our past, but within skew.
            (
                "writer 4m behind, alive",
                Some(NOW - 245.0),
                Some(NOW - 155.0),
                NOW - 5.0,
                NOW,
                State::Live,
            ),
            (
                "writer 6m behind, beyond skew",
                Some(NOW - 365.0),
                Some(NOW - 275.0 - 30.0),
                NOW - 5.0,
                NOW,
                State::Expired,
            ),
            // A copy from a device that was offline for a day arrives now:
            // fresh ctime, ancient expires_at.
            (
                "stale copy arriving late",
                Some(NOW - 86_400.0),
                Some(NOW - 86_310.0),
                NOW,
                NOW,
                State::Expired,
            ),
            (
                "missing expires_at",
                Some(NOW),
                None,
                NOW,
                NOW,
                State::Expired,
            ),
            (
                "missing updated_at: default ttl",
                None,
                Some(NOW + 50.0),
                NOW - 89.0,
                NOW,
                State::Live,
            ),
            (
                "missing updated_at: default ttl ends",
                None,
                Some(NOW + 50.0),
                NOW - 90.0,
                NOW,
                State::Stale,
            ),
            (
                "ttl clamped up to 1s",
                Some(NOW),
                Some(NOW - 10.0),
                NOW - 0.5,
                NOW,
                State::Live,
            ),
            (
                "ttl clamped up to 1s, passed",
                Some(NOW),
                Some(NOW - 10.0),
                NOW - 1.0,
                NOW,
                State::Stale,
            ),
            (
                "ttl clamped down to 1h",
                Some(NOW),
                Some(NOW + 10.0 * h),
                NOW - h + 1.0,
                NOW,
                State::Live,
            ),
            (
                "ttl clamped down to 1h, passed",
                Some(NOW),
                Some(NOW + 10.0 * h),
                NOW - h,
                NOW,
                State::Stale,
            ),
            (
                "ctime in the future (clock stepped back)",
                Some(NOW),
                Some(NOW + 90.0),
                NOW + 30.0,
                NOW,
                State::Live,
            ),
        ];
        for (case, u, e, ctime, now, want) in cases {
            assert_eq!(state(&rec(u, e), ctime, now, SKEW), want, "{case}");
        }
    }

    #[test]
    fn a_metadata_change_is_no_arrival_once_the_writers_clock_is_seen() {
        let h = 3600.0;
        let known = |offset: f64| WriterClock::Known {
            offset,
            margin: 1.0,
        };
        let seen = |at_least: f64| WriterClock::Unknown {
            skew: SKEW,
            at_least: Some(at_least),
        };
        // (case, updated_at, ctime, clock, expected): ttl 90 s throughout.
        let cases = [
            // Written 100 s ago, chmodded 5 s ago.
            (
                "seen once, chmodded",
                NOW - 100.0,
                NOW - 5.0,
                seen(-0.5),
                State::Stale,
            ),
            (
                "unknown, chmodded",
                NOW - 100.0,
                NOW - 5.0,
                SKEW.into(),
                State::Live,
            ),
            (
                "own clock, chmodded",
                NOW - 100.0,
                NOW - 5.0,
                known(0.0),
                State::Stale,
            ),
            // A writer 3 h ahead, dead for 200 s, chmodded 5 s ago: its
            // expires_at alone is hours away.
            (
                "3 h ahead, seen, chmodded",
                NOW + 3.0 * h - 200.0,
                NOW - 5.0,
                seen(3.0 * h - 1.0),
                State::Stale,
            ),
            (
                "3 h ahead, unknown, chmodded",
                NOW + 3.0 * h - 200.0,
                NOW - 5.0,
                SKEW.into(),
                State::Live,
            ),
            // Genuine copies are live as before: a refresh of a writer 10
            // min behind, and one 3 h ahead, that arrived 5 s after it was
            // written (the estimate rests on a quicker copy).
            (
                "10 min behind, refreshed",
                NOW - 600.0 - 5.0,
                NOW,
                known(-600.2),
                State::Live,
            ),
            (
                "3 h ahead, refreshed",
                NOW + 3.0 * h - 5.0,
                NOW,
                seen(3.0 * h - 0.3),
                State::Live,
            ),
            (
                "this device, just written",
                NOW,
                NOW + 0.01,
                known(0.0),
                State::Live,
            ),
        ];
        for (case, updated, ctime, clock, want) in cases {
            let r = rec(Some(updated), Some(updated + 90.0));
            assert_eq!(state(&r, ctime, NOW, clock), want, "{case}");
        }
        // The deadline follows the same arrival.
        let r = rec(Some(NOW - 100.0), Some(NOW - 10.0));
        assert_eq!(
            deadline(&r, NOW - 5.0, seen(-0.5)),
            Some(NOW - 100.0 + 0.5 + 90.0)
        );
        assert_eq!(deadline(&r, NOW - 5.0, SKEW), Some(NOW + 85.0));
        // Without updated_at, the ctime alone.
        assert_eq!(known(0.0).arrival(NOW, None), NOW);
    }

    #[test]
    fn tombstone_is_never_live() {
        let mut r = rec(Some(NOW), Some(NOW));
        r.ended_at = Some(NOW);
        assert_eq!(state(&r, NOW, NOW, SKEW), State::Ended);
        r.expires_at = Some(NOW + 1000.0);
        assert_eq!(state(&r, NOW, NOW, SKEW), State::Ended);
        assert_eq!(deadline(&r, NOW, SKEW), None);
    }

    #[test]
    fn ttl_table() {
        let cases = [
            (Some(0.0), Some(90.0), 90.0),
            (Some(0.0), Some(30.0), 30.0),
            (Some(0.0), Some(0.2), 1.0),
            (Some(0.0), Some(-5.0), 1.0),
            (Some(0.0), Some(1e9), 3600.0),
            (None, Some(10.0), DEFAULT_TTL),
            (Some(10.0), None, DEFAULT_TTL),
        ];
        for (u, e, want) in cases {
            assert_eq!(record_ttl(&rec(u, e)), want, "{u:?} {e:?}");
        }
    }

    #[test]
    fn deadline_is_the_earlier_bound() {
        // Local bound first.
        assert_eq!(
            deadline(&rec(Some(NOW), Some(NOW + 90.0)), NOW, SKEW),
            Some(NOW + 90.0)
        );
        // Writer bound first: clock far behind.
        let r = rec(Some(NOW - 1000.0), Some(NOW - 910.0));
        assert_eq!(deadline(&r, NOW, 300.0), Some(NOW - 610.0));
        assert_eq!(deadline(&rec(Some(NOW), None), NOW, SKEW), None);
    }
}
