//! Learning each device's clock (rules, no I/O; the file it is kept in is
//! read and written by [`crate::local`]).
//!
//! Every record from device D that this machine reads is a sample of D's
//! clock: `updated_at − ctime` is how far D's clock runs ahead of ours, minus
//! the time the copy took to arrive. Delays are never negative, so the largest
//! recent sample is the best estimate of D's offset, and a late copy only
//! gives a smaller one.
//!
//! - **Windowed maximum.** Samples are kept as the largest per minute of
//!   arrival (our clock), over the last [`WINDOW_MINUTES`], so a clock that
//!   NTP sets right is followed within that window in either direction.
//! - **Bursts do not teach.** The copies that pile up during an outage all
//!   arrive within a second or two when it ends. A window whose samples come
//!   from a single such arrival is not enough to replace an estimate learned
//!   earlier (it could only be lower, and stale), nor to establish a first
//!   one: a device never seen arriving twice has no estimate.
//! - **Kept across outages.** When the window is empty, the last estimate is
//!   still used (marked stale) until fresh samples replace it.
//! - **First contact.** Without an estimate, a writer's records are read with
//!   the skew tolerance, as before ([`WriterClock::Unknown`]); the largest
//!   sample of the window still bounds when its copies can have arrived
//!   (see liveness.rs), which only ever ends them sooner.
//! - **Learned before anyone looks.** Every read teaches, the refresher's
//!   too: each `presence refresh` pass reads the directory after its own
//!   writes, and `refresh --every` watches it between rounds, so each
//!   arrival is a sample even when no user lists. A single read that sees
//!   several files of one device arriving [`BURST_S`] apart learns from
//!   them alone, and `list` then reads again through that first estimate
//!   ([`Clocks::with_first_estimates`]). The mtime a sync engine carries
//!   over is no second sample: it is the writer's clock at the instant of
//!   its `updated_at`. (docs/record-format.md states the rule for users.)
//! - **Bounded.** Devices unseen for [`FORGET_AFTER_S`] are forgotten, and
//!   at most [`MAX_DEVICES`] are kept ([`Clocks::prune`]).
//!
//! A device in the group can forge samples for another device's id. Raising
//! that device's estimate makes its sessions expire earlier here, which
//! deleting their files already allows. It cannot lower the estimate below
//! what genuine copies show. A forged sample can give a device its first
//! estimate from one genuine burst — but making a dead session show needs no
//! clock trick (a planted fresh copy of its record does that under any rule),
//! and no clock ever revives an *ended* life: that is the lives rule's, which
//! does not look at times at all.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::liveness::WriterClock;

/// How many minutes of samples the estimate looks back over.
pub(crate) const WINDOW_MINUTES: i64 = 10;

/// Two arrivals closer than this are one burst.
const BURST_S: f64 = 2.0;

/// A device no sample arrived from for this long (7 days) is forgotten.
pub(crate) const FORGET_AFTER_S: f64 = 7.0 * 86_400.0;

/// The most devices kept: beyond, those least worth keeping are forgotten
/// (see [`Clocks::prune`]). A sync group has a handful; this keeps the file
/// well under a megabyte however many ids a directory holds.
pub(crate) const MAX_DEVICES: usize = 1024;

/// One minute of samples from one device.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Bucket {
    /// Minute of arrival on our clock (Unix seconds / 60).
    minute: i64,
    /// The largest sample that arrived in it.
    max: f64,
    /// The first and last arrival times in it (to tell a burst from a stream).
    first: f64,
    last: f64,
}

/// What this machine knows of one device's clock.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct DeviceClock {
    buckets: Vec<Bucket>,
    /// The last estimate that rested on more than one arrival.
    estimate: Option<f64>,
    /// Samples seen in all.
    samples: u64,
    /// The latest arrival of a sample (this machine's clock); `None` in a
    /// file an older version wrote, until the next write.
    #[serde(default)]
    seen: Option<f64>,
}

impl DeviceClock {
    fn add(&mut self, arrived: f64, sample: f64) {
        if !arrived.is_finite() || !sample.is_finite() {
            return;
        }
        let minute = (arrived / 60.0).floor() as i64;
        self.samples += 1;
        self.seen = Some(self.seen.map_or(arrived, |s| s.max(arrived)));
        match self.buckets.iter_mut().find(|b| b.minute == minute) {
            Some(b) => {
                b.max = b.max.max(sample);
                b.first = b.first.min(arrived);
                b.last = b.last.max(arrived);
            }
            None => {
                self.buckets.push(Bucket {
                    minute,
                    max: sample,
                    first: arrived,
                    last: arrived,
                });
                self.buckets.sort_by_key(|b| b.minute);
            }
        }
        self.settle(arrived);
    }

    /// Drops buckets older than the window ending at `now`, and takes the
    /// window's maximum as the estimate if it rests on more than one arrival.
    fn settle(&mut self, now: f64) {
        let newest = (now / 60.0).floor() as i64;
        self.buckets.retain(|b| b.minute > newest - WINDOW_MINUTES);
        let (Some(first), Some(last)) = (
            self.buckets.iter().map(|b| b.first).reduce(f64::min),
            self.buckets.iter().map(|b| b.last).reduce(f64::max),
        ) else {
            return;
        };
        if last - first >= BURST_S
            && let Some(max) = self.buckets.iter().map(|b| b.max).reduce(f64::max)
        {
            self.estimate = Some(max);
        }
    }

    /// The estimated offset, and whether it is stale (no sample in the window).
    fn offset(&self, now: f64) -> Option<(f64, bool)> {
        let newest = (now / 60.0).floor() as i64;
        let fresh = self
            .buckets
            .iter()
            .any(|b| b.minute > newest - WINDOW_MINUTES);
        self.estimate.map(|o| (o, !fresh))
    }

    /// The largest sample in the window ending at `now`: the writer's clock
    /// runs at least this far ahead of ours (delays are never negative).
    fn window_max(&self, now: f64) -> Option<f64> {
        self.buckets
            .iter()
            .filter(|b| in_window(b, now))
            .map(|b| b.max)
            .reduce(f64::max)
    }

    /// How much it is worth keeping when there are too many: an estimate
    /// before none, then the latest seen.
    fn rank(&self) -> (bool, f64) {
        (
            self.estimate.is_some(),
            self.seen.unwrap_or(f64::NEG_INFINITY),
        )
    }
}

/// Whether `a` ranks above `b` (see [`DeviceClock::rank`]).
fn above(a: (bool, f64), b: (bool, f64)) -> bool {
    a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).is_gt()
}

/// Whether the minute `b` lies within the window ending at `now`.
fn in_window(b: &Bucket, now: f64) -> bool {
    b.minute > (now / 60.0).floor() as i64 - WINDOW_MINUTES
}

/// Whether `learned` holds a minute of samples `known` lacks, a sample half a
/// second above a minute's maximum, or arrivals that widen a minute's span —
/// within the window ending at `now`: an older minute is dropped as soon as
/// it is merged, and would otherwise "teach" at every read.
fn teaches(known: &DeviceClock, learned: &DeviceClock, now: f64) -> bool {
    learned
        .buckets
        .iter()
        .filter(|x| in_window(x, now))
        .any(
            |x| match known.buckets.iter().find(|y| y.minute == x.minute) {
                None => true,
                Some(y) => {
                    x.max >= y.max + 0.5
                        || (x.first < y.first - BURST_S / 2.0)
                        || (x.last > y.last + BURST_S / 2.0)
                }
            },
        )
}

/// Whether `device` is this device's own id, `me` (`None` while this device
/// has none: it has published nothing yet). This device never estimates its
/// own clock: records carrying its id are read on its own clock, with an
/// offset of 0 that is exact, and are never samples. Whoever writes a
/// record claiming that id — a forgery, or a copy of this home directory on
/// a machine whose clock runs fast — thus cannot make this device's own
/// sessions expire here.
pub(crate) fn is_own(device: &str, me: Option<&str>) -> bool {
    me.is_some_and(|me| !me.is_empty() && me == device)
}

/// What this machine knows of every device's clock.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Clocks {
    devices: BTreeMap<String, DeviceClock>,
}

/// One line of `clocks.json`.
#[derive(Serialize, Deserialize)]
struct Line {
    device: String,
    clock: DeviceClock,
}

/// One device's estimate, for display.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Estimate {
    /// Seconds the device's clock runs ahead of ours (negative: behind).
    pub offset: f64,
    /// Records that taught something when they were read, in all.
    pub samples: u64,
    /// No sample arrived within the window: the last estimate, kept.
    pub stale: bool,
}

impl Clocks {
    /// Learns from one record of `device` that arrived here at `arrived`
    /// (its ctime) carrying `updated_at`.
    pub(crate) fn learn(&mut self, device: &str, arrived: f64, updated_at: f64) {
        if device.is_empty() || device.len() > 64 {
            return;
        }
        // Looked up before inserting: `list` learns from every file, and
        // most devices are known already (no allocation per file).
        let sample = updated_at - arrived;
        match self.devices.get_mut(device) {
            Some(d) => d.add(arrived, sample),
            None => self
                .devices
                .entry(device.to_owned())
                .or_default()
                .add(arrived, sample),
        }
    }

    /// Drops all that was learned of `device` (this device's own id: see
    /// [`is_own`]).
    pub(crate) fn forget(&mut self, device: &str) {
        self.devices.remove(device);
    }

    /// How to read the times of a record from `device` at `now`, on the
    /// device whose own id is `me` (see [`is_own`]): this device's own
    /// records on its own clock, exactly; another device's through its
    /// estimate, or with the skew tolerance while it has none.
    pub(crate) fn writer(
        &self,
        device: &str,
        me: Option<&str>,
        now: f64,
        skew: f64,
        margin: f64,
    ) -> WriterClock {
        if is_own(device, me) {
            return WriterClock::Known {
                offset: 0.0,
                margin,
            };
        }
        match self.estimate(device, now) {
            Some(e) => WriterClock::Known {
                offset: e.offset,
                margin,
            },
            // No estimate yet, but what was seen of it lately bounds when
            // its copies can have arrived (see liveness.rs).
            None => WriterClock::Unknown {
                skew,
                at_least: self
                    .devices
                    .get(device)
                    .and_then(|d| d.window_max(now))
                    .map(|max| max - margin),
            },
        }
    }

    /// `device`'s estimate at `now`, if it has one.
    pub(crate) fn estimate(&self, device: &str, now: f64) -> Option<Estimate> {
        let d = self.devices.get(device)?;
        let (offset, stale) = d.offset(now)?;
        Some(Estimate {
            offset,
            samples: d.samples,
            stale,
        })
    }

    /// Adds what `other` learned (another process, another thread's share).
    pub(crate) fn merge(&mut self, other: &Clocks, now: f64) {
        for (device, theirs) in &other.devices {
            let mine = self.devices.entry(device.clone()).or_default();
            // Every read sees the same files again: only samples that teach
            // something count.
            if teaches(mine, theirs, now) {
                mine.samples += theirs.samples;
            }
            mine.seen = match (mine.seen, theirs.seen) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            for b in &theirs.buckets {
                match mine.buckets.iter_mut().find(|m| m.minute == b.minute) {
                    Some(m) => {
                        m.max = m.max.max(b.max);
                        m.first = m.first.min(b.first);
                        m.last = m.last.max(b.last);
                    }
                    None => mine.buckets.push(*b),
                }
            }
            mine.buckets.sort_by_key(|b| b.minute);
            if mine.estimate.is_none() {
                mine.estimate = theirs.estimate;
            }
            mine.settle(now);
        }
        self.prune(now);
    }

    /// Bounds what is kept (every merge ends with it, so neither the file
    /// nor a watcher's memory grows with the ids a directory ever held):
    /// forgets devices no sample arrived from for [`FORGET_AFTER_S`], and
    /// those that hold nothing (no estimate, no sample in the window); then,
    /// beyond [`MAX_DEVICES`], those without an estimate first, the least
    /// recently seen first. A device forgotten is met again as for the
    /// first time (the skew tolerance; two arrivals give it an estimate).
    pub(crate) fn prune(&mut self, now: f64) {
        self.devices.retain(|_, d| {
            // Never later than now (a ctime ahead after the clock stepped
            // back would keep it forever); unknown (an older file): now.
            d.seen = Some(d.seen.map_or(now, |s| s.min(now)));
            let recent = d.seen.is_some_and(|s| now - s <= FORGET_AFTER_S);
            // Only the minutes of the window, and no more than it holds
            // (ctimes ahead of a clock stepped back could add more).
            d.buckets.retain(|b| in_window(b, now));
            let extra = d.buckets.len().saturating_sub(WINDOW_MINUTES as usize);
            d.buckets.drain(..extra);
            recent && (d.estimate.is_some() || !d.buckets.is_empty())
        });
        if self.devices.len() > MAX_DEVICES {
            let mut ranked: Vec<((bool, f64), String)> = self
                .devices
                .iter()
                .map(|(id, d)| (d.rank(), id.clone()))
                .collect();
            ranked.sort_by(|a, b| {
                let (a, b) = (a.0, b.0);
                b.0.cmp(&a.0).then(b.1.total_cmp(&a.1))
            });
            for (_, id) in ranked.into_iter().skip(MAX_DEVICES) {
                self.devices.remove(&id);
            }
        }
    }

    /// Whether `learned` (samples of one read) teaches `self` something
    /// worth writing down: a device or a minute of samples not seen yet, a
    /// sample half a second above the minute's maximum, or arrivals that
    /// widen a minute's span past a burst — within the window ending at
    /// `now`, and for a device not known yet, only if it would be kept (see
    /// [`Clocks::prune`]). A prompt's `list` that only sees what it saw a
    /// moment ago writes nothing, nor does one in a directory of more ids
    /// than are kept.
    pub(crate) fn learns_from(&self, learned: &Clocks, now: f64) -> bool {
        // When no more devices are kept, the rank a newcomer must pass.
        let bar = (self.devices.len() >= MAX_DEVICES)
            .then(|| {
                self.devices
                    .values()
                    .map(DeviceClock::rank)
                    .reduce(|a, b| if above(a, b) { b } else { a })
            })
            .flatten();
        learned
            .devices
            .iter()
            .any(|(device, l)| match self.devices.get(device) {
                None => {
                    l.buckets.iter().any(|b| in_window(b, now))
                        && bar.is_none_or(|bar| above(l.rank(), bar))
                }
                Some(k) => teaches(k, l, now),
            })
    }

    /// What these clocks become with `learned` (one read's samples) added,
    /// if that gives some device its first estimate at `now`: a read that
    /// saw several of a device's files, arrived [`BURST_S`] apart or more,
    /// or a new copy of one file after an earlier read saw the last. The
    /// read can then judge that device's files through the estimate rather
    /// than the skew tolerance. `None` when no device gains one.
    pub(crate) fn with_first_estimates(&self, learned: &Clocks, now: f64) -> Option<Clocks> {
        let new: Vec<&String> = learned
            .devices
            .keys()
            .filter(|d| self.estimate(d, now).is_none())
            .collect();
        if new.is_empty() {
            return None;
        }
        let mut all = self.clone();
        all.merge(learned, now);
        new.iter()
            .any(|d| all.estimate(d, now).is_some())
            .then_some(all)
    }

    /// The devices known, in all.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.devices.len()
    }

    /// The form `clocks.json` holds: one line per device,
    /// `{"device": ID, "clock": …}`, so that a damaged line costs only its
    /// device and a file cut short keeps every line before the cut.
    pub(crate) fn to_lines(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (device, clock) in &self.devices {
            let line = Line {
                device: device.clone(),
                clock: clock.clone(),
            };
            if let Ok(json) = serde_json::to_vec(&line) {
                out.extend_from_slice(&json);
                out.push(b'\n');
            }
        }
        out
    }

    /// Reads what [`Clocks::to_lines`] wrote — or what an older version
    /// wrote, one JSON object — keeping every device whose line reads, and
    /// passing over the rest (a torn or damaged line, a file cut short).
    pub(crate) fn from_bytes(bytes: &[u8]) -> Clocks {
        if let Ok(whole) = serde_json::from_slice::<Clocks>(bytes) {
            return whole;
        }
        let mut clocks = Clocks::default();
        for line in bytes.split(|b| *b == b'\n') {
            if let Ok(Line { device, clock }) = serde_json::from_slice::<Line>(line)
                && !device.is_empty()
                && device.len() <= 64
            {
                clocks.devices.insert(device, clock);
            }
        }
        clocks
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const T: f64 = 1_800_000_000.0;

    #[test]
    fn one_arrival_teaches_nothing_two_do() {
        let mut c = Clocks::default();
        // A device 10 min behind, first seen: one record.
        c.learn("d", T, T - 600.0 - 0.3);
        assert_eq!(c.estimate("d", T), None);
        assert!(matches!(
            c.writer("d", None, T, 300.0, 5.0),
            WriterClock::Unknown { .. }
        ));
        // Its next refresh arrives 30 s later: an estimate, to the delay.
        c.learn("d", T + 30.0, T + 30.0 - 600.0 - 0.1);
        let e = c.estimate("d", T + 30.0).unwrap();
        assert!((e.offset + 600.1).abs() < 1e-3, "{e:?}");
        assert!(!e.stale);
    }

    #[test]
    fn this_devices_own_records_are_read_on_its_own_clock() {
        let mut c = Clocks::default();
        // Samples for "me", learned before the rule (an older clocks.json).
        c.learn("me", T, T + 7200.0);
        c.learn("me", T + 30.0, T + 30.0 + 7200.0);
        assert!(c.estimate("me", T + 30.0).is_some());
        let exact = WriterClock::Known {
            offset: 0.0,
            margin: 1.0,
        };
        assert_eq!(c.writer("me", Some("me"), T + 30.0, 300.0, 1.0), exact);
        // Without an id of its own, "me" is any other device.
        assert!(matches!(
            c.writer("me", None, T + 30.0, 300.0, 1.0),
            WriterClock::Known { offset, .. } if offset > 7000.0
        ));
        assert!(is_own("me", Some("me")));
        assert!(!is_own("me", None) && !is_own("", Some("")) && !is_own("d", Some("me")));
        c.forget("me");
        assert_eq!(c.estimate("me", T + 30.0), None);
    }

    #[test]
    fn a_burst_after_an_outage_never_lowers_an_estimate() {
        let mut c = Clocks::default();
        for i in 0..5 {
            let at = T + f64::from(i) * 30.0;
            c.learn("d", at, at + 120.0 - 0.2);
        }
        let learned = c.estimate("d", T + 120.0).unwrap().offset;
        // An hour offline; then 50 copies written meanwhile land at once.
        let back = T + 3600.0;
        assert!(c.estimate("d", back).unwrap().stale);
        for i in 0..50 {
            c.learn(
                "d",
                back + f64::from(i) * 0.01,
                back - 3000.0 + f64::from(i) * 60.0,
            );
        }
        let e = c.estimate("d", back + 1.0).unwrap();
        assert_eq!(e.offset, learned, "a burst replaced the estimate");
        // Fresh arrivals replace it at once.
        c.learn("d", back + 30.0, back + 30.0 + 7.0);
        assert!((c.estimate("d", back + 30.0).unwrap().offset - 7.0).abs() < 1e-3);
    }

    #[test]
    fn a_clock_set_right_is_followed_within_the_window_both_ways() {
        let mut c = Clocks::default();
        let mut at = T;
        for _ in 0..20 {
            c.learn("d", at, at + 900.0);
            at += 30.0;
        }
        // NTP sets it right: the old maximum ages out of the window.
        for _ in 0..(WINDOW_MINUTES * 2 + 2) {
            c.learn("d", at, at - 0.5);
            at += 30.0;
        }
        assert!((c.estimate("d", at).unwrap().offset + 0.5).abs() < 1e-3);
        // Set ahead again: followed at the next arrival.
        c.learn("d", at, at + 60.0);
        assert!((c.estimate("d", at).unwrap().offset - 60.0).abs() < 1e-3);
    }

    #[test]
    fn merging_is_the_union_of_what_was_learned() {
        let (mut a, mut b) = (Clocks::default(), Clocks::default());
        a.learn("d", T, T - 10.0);
        b.learn("d", T + 30.0, T + 30.0 - 9.0);
        a.merge(&b, T + 30.0);
        assert!((a.estimate("d", T + 30.0).unwrap().offset + 9.0).abs() < 1e-3);
        assert!(Clocks::default().learns_from(&a, T + 30.0));
        assert!(!a.learns_from(&a.clone(), T + 30.0));
        let mut again = Clocks::default();
        again.learn("d", T + 30.5, T + 30.5 - 9.2);
        assert!(
            !a.learns_from(&again, T + 45.0),
            "a sample within what is known"
        );
        again.learn("d", T + 45.0, T + 45.0 - 9.0);
        assert!(
            a.learns_from(&again, T + 45.0),
            "a later arrival widens the span"
        );
    }

    /// `n` devices seen once each at `at`, one sample apiece.
    fn crowd(n: usize, at: f64) -> Clocks {
        let mut c = Clocks::default();
        for i in 0..n {
            c.learn(&format!("{i:032x}"), at, at - 1.0);
        }
        c
    }

    #[test]
    fn a_crowd_of_ids_is_bounded_and_keeps_the_devices_with_estimates() {
        let mut known = Clocks::default();
        // A genuine device, 10 min behind, its estimate learned a while ago.
        known.learn("slow", T - 120.0, T - 120.0 - 600.0);
        known.learn("slow", T - 90.0, T - 90.0 - 600.0);
        known.prune(T - 90.0);
        // 20 000 ids, each seen once, more recently.
        let learned = crowd(20_000, T);
        assert!(known.learns_from(&learned, T));
        known.merge(&learned, T);
        assert_eq!(known.len(), MAX_DEVICES);
        assert!(
            known.estimate("slow", T).is_some(),
            "the estimate was dropped"
        );
        // The next read sees the same crowd: nothing to write down.
        assert!(!known.learns_from(&learned, T + 1.0));
        let before = known.clone();
        known.merge(&learned, T + 1.0);
        assert_eq!(known.len(), MAX_DEVICES);
        assert_eq!(before.to_lines().len(), known.to_lines().len());
        // Bounded however large each device's record: at most a window of
        // minutes each.
        let mut busy = Clocks::default();
        for i in 0..MAX_DEVICES {
            for m in 0..WINDOW_MINUTES * 3 {
                let at = T + (m * 60) as f64;
                busy.learn(&format!("{i:064x}"), at, at - 123.456_789_012_345);
            }
        }
        busy.merge(&crowd(5_000, T + 1800.0), T + 1800.0);
        let bytes = busy.to_lines().len();
        assert!(bytes < 2 * 1024 * 1024, "{bytes} bytes");
    }

    #[test]
    fn a_device_unseen_for_a_week_is_forgotten() {
        let mut c = Clocks::default();
        c.learn("d", T, T - 5.0);
        c.learn("d", T + 30.0, T + 25.0);
        c.prune(T + FORGET_AFTER_S);
        assert!(c.estimate("d", T + FORGET_AFTER_S).is_some(), "kept a week");
        c.prune(T + 30.0 + FORGET_AFTER_S + 1.0);
        assert_eq!(c.len(), 0);
        // One arrival and no estimate: nothing left once the window passes.
        c.learn("e", T, T);
        c.merge(
            &Clocks::default(),
            T + f64::from(WINDOW_MINUTES as i32 + 1) * 60.0,
        );
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn a_sample_older_than_the_window_teaches_nothing_twice() {
        // A record that arrived an hour ago (a tombstone waiting for gc)
        // is read by every listing: its sample is dropped when merged, and
        // must not count as new at every read.
        let mut known = Clocks::default();
        let mut learned = Clocks::default();
        learned.learn("d", T - 3600.0, T - 3600.0);
        known.merge(&learned, T);
        assert!(!known.learns_from(&learned, T));
        assert!(!Clocks::default().learns_from(&learned, T));
    }

    #[test]
    fn clocks_json_keeps_every_line_that_reads() {
        let mut c = Clocks::default();
        for d in ["a", "b", "c"] {
            c.learn(d, T, T - 60.0);
            c.learn(d, T + 30.0, T - 30.0);
        }
        let lines = c.to_lines();
        assert_eq!(Clocks::from_bytes(&lines), c);
        let text = String::from_utf8(lines).unwrap();
        let mut parts: Vec<&str> = text.lines().collect();
        assert_eq!(parts.len(), 3);
        // A damaged line, and a file cut short in the last one.
        parts[1] = "{\"device\": \"b\", \"clock\": {torn";
        let last = parts[2][..parts[2].len() / 2].to_string();
        parts[2] = &last;
        let read = Clocks::from_bytes(parts.join("\n").as_bytes());
        assert!(read.estimate("a", T + 30.0).is_some());
        assert_eq!(read.len(), 1);
        // What an older version wrote: one object.
        let legacy = serde_json::to_vec(&c).unwrap();
        assert_eq!(Clocks::from_bytes(&legacy), c);
        assert_eq!(Clocks::from_bytes(b"garbage"), Clocks::default());
    }

    proptest! {
        /// Forged samples (any value, any arrival) mixed in, in any order,
        /// never lower an estimate below what the genuine copies alone give:
        /// forgery can only make a device's sessions end earlier here.
        #[test]
        fn forged_samples_never_lower_an_estimate(
            offset in -7200.0f64..7200.0,
            genuine in prop::collection::vec((0.0f64..60.0, 0.0f64..500.0), 2..20),
            forged in prop::collection::vec((-1e6f64..1e6, 0.0f64..500.0), 0..20),
            seed in any::<u64>(),
        ) {
            let real: Vec<(f64, f64)> = genuine
                .iter()
                .enumerate()
                .map(|(i, (delay, at))| (T + at + i as f64 * 3.0, offset - delay))
                .collect();
            let fake: Vec<(f64, f64)> = forged.iter().map(|(s, at)| (T + at, *s)).collect();
            let mut alone = Clocks::default();
            for (at, s) in &real {
                alone.learn("d", *at, at + s);
            }
            let mut mixed_in: Vec<(f64, f64)> = real.iter().chain(&fake).copied().collect();
            // A deterministic shuffle from the seed.
            let mut x = seed | 1;
            for i in (1..mixed_in.len()).rev() {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                mixed_in.swap(i, (x % (i as u64 + 1)) as usize);
            }
            let mut mixed = Clocks::default();
            for (at, s) in &mixed_in {
                mixed.learn("d", *at, at + s);
            }
            let now = T + 600.0;
            if let Some(a) = alone.estimate("d", now) {
                let m = mixed.estimate("d", now).expect("an estimate");
                prop_assert!(m.offset >= a.offset - 1e-6, "{m:?} < {a:?}");
            }
        }

        /// Whatever the order copies arrive in and whatever their delays, the
        /// estimate never exceeds the true offset (so a record's expiry is
        /// never read as earlier than it is), and forged samples can only
        /// raise it.
        #[test]
        fn the_estimate_never_passes_the_true_offset(
            offset in -7200.0f64..7200.0,
            delays in prop::collection::vec((0.0f64..600.0, 0.0f64..900.0), 2..40),
        ) {
            let mut c = Clocks::default();
            for (i, (delay, gap)) in delays.iter().enumerate() {
                let arrived = T + gap + i as f64 * 3.0;
                c.learn("d", arrived, arrived - delay + offset);
            }
            let now = T + 1000.0 + delays.len() as f64 * 3.0;
            if let Some(e) = c.estimate("d", now) {
                prop_assert!(e.offset <= offset + 1e-6, "{e:?} > {offset}");
            }
        }
    }
}
