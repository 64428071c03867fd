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
//!   the skew tolerance, as before ([`WriterClock::Unknown`]).
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
}

impl DeviceClock {
    fn add(&mut self, arrived: f64, sample: f64) {
        if !arrived.is_finite() || !sample.is_finite() {
            return;
        }
        let minute = (arrived / 60.0).floor() as i64;
        self.samples += 1;
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
}

/// Whether `learned` holds a minute of samples `known` lacks, a sample half a
/// second above a minute's maximum, or arrivals that widen a minute's span.
fn teaches(known: &DeviceClock, learned: &DeviceClock) -> bool {
    learned.buckets.iter().any(
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
            None => WriterClock::Unknown { skew },
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
            if teaches(mine, theirs) {
                mine.samples += theirs.samples;
            }
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
    }

    /// Whether `learned` (samples of one read) teaches `self` something
    /// worth writing down: a device or a minute of samples not seen yet, a
    /// sample half a second above the minute's maximum, or arrivals that
    /// widen a minute's span past a burst. A prompt's `list` that only sees
    /// what it saw a moment ago writes nothing.
    pub(crate) fn learns_from(&self, learned: &Clocks) -> bool {
        learned
            .devices
            .iter()
            .any(|(device, l)| match self.devices.get(device) {
                None => !l.buckets.is_empty(),
                Some(k) => teaches(k, l),
            })
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
        assert!(Clocks::default().learns_from(&a));
        assert!(!a.learns_from(&a.clone()));
        let mut again = Clocks::default();
        again.learn("d", T + 30.5, T + 30.5 - 9.2);
        assert!(!a.learns_from(&again), "a sample within what is known");
        again.learn("d", T + 45.0, T + 45.0 - 9.0);
        assert!(a.learns_from(&again), "a later arrival widens the span");
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
