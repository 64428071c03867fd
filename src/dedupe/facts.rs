//! The facts of one file: the few fields of a record that dedupe and
//! liveness read, and its group and life as digests.
use super::Digest;
use crate::identity::Verdict;
use crate::limits::MAX_STRING_BYTES;
use crate::record::{Probe, clip};

/// The facts of one record file: what dedupe and liveness need of it.
/// Every reader judges a file from these (the registry's read pass), the
/// scan cache keeps exactly these, and the watcher holds them for every file
/// it knows. `S` is how the strings are held: borrowed (`&str`) from a probe
/// or the scan cache's bytes while a directory is read, owned (`Box<str>`)
/// by what outlives the read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Facts<S> {
    pub group: Digest,
    pub life: Digest,
    pub updated: Option<f64>,
    pub expires: Option<f64>,
    pub ended: bool,
    pub seq: u64,
    pub started: Option<f64>,
    pub label: S,
    pub device: S,
    /// The session id as the listing order compares it (clipped).
    pub session: S,
    /// The session key as `show` matches it (clipped; the id when none).
    pub session_key: S,
    /// The host and the instance the record names (clipped), which
    /// `devices` and `doctor` count by.
    pub host: S,
    pub instance: S,
    /// Whether the host or the instance was longer than the clip: a reader
    /// that shows them reads the record itself.
    pub long: bool,
    /// Whether the file proves its author (see [`crate::identity`]).
    pub verdict: Verdict,
}

impl<'a> Facts<&'a str> {
    /// What `probe` of a file whose verdict is `verdict` says, as the
    /// cache keeps it.
    pub(crate) fn of(probe: &'a Probe<'a>, verdict: Verdict) -> Facts<&'a str> {
        Facts {
            group: Digest::group(probe.author(), probe.group_key()),
            life: Digest::life(probe.author(), probe.life()),
            updated: probe.updated_at,
            expires: probe.expires_at,
            ended: probe.ended_at.is_some(),
            seq: probe.seq,
            started: probe.started_at,
            label: probe.profile(),
            device: probe.device_id(),
            session: clip(probe.session_id()),
            session_key: clip(probe.session_key()),
            host: clip(probe.host()),
            instance: clip(probe.instance_id()),
            long: probe.host().len() > MAX_STRING_BYTES
                || probe.instance_id().len() > MAX_STRING_BYTES,
            verdict,
        }
    }

    /// The same facts, holding their own strings.
    pub(crate) fn owned(self) -> Facts<Box<str>> {
        self.with_strings(|s| Box::from(*s))
    }
}

impl Facts<Box<str>> {
    /// The same facts, borrowing these strings.
    pub(crate) fn borrowed(&self) -> Facts<&str> {
        self.with_strings(|s| &**s)
    }
}

impl<S> Facts<S> {
    /// The same facts, each string made by `f` from this one's.
    fn with_strings<'s, T>(&'s self, f: impl Fn(&'s S) -> T) -> Facts<T> {
        Facts {
            group: self.group,
            life: self.life,
            updated: self.updated,
            expires: self.expires,
            ended: self.ended,
            seq: self.seq,
            started: self.started,
            label: f(&self.label),
            device: f(&self.device),
            session: f(&self.session),
            session_key: f(&self.session_key),
            host: f(&self.host),
            instance: f(&self.instance),
            long: self.long,
            verdict: self.verdict,
        }
    }

    /// The times liveness reads: `[updated_at, expires_at, ended_at]`, where
    /// only whether `ended_at` is set counts.
    pub(crate) fn times(&self) -> [Option<f64>; 3] {
        [self.updated, self.expires, self.ended.then_some(0.0)]
    }
}
