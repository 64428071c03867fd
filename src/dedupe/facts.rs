//! The facts of one file: the few fields of a record that dedupe and
//! liveness read, and its group and life as digests.
use super::Digest;
use crate::record::{Probe, clip};

/// The facts of one record file: what dedupe and liveness need of it,
/// borrowed from its probe or from the scan cache. Every reader judges a
/// file from these ([`crate::registry`]'s read pass), and the scan cache
/// keeps exactly these.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Facts<'a> {
    pub group: Digest,
    pub life: Digest,
    pub updated: Option<f64>,
    pub expires: Option<f64>,
    pub ended: bool,
    pub seq: u64,
    pub started: Option<f64>,
    pub label: &'a str,
    pub device: &'a str,
    /// The session id as the listing order compares it (clipped).
    pub session: &'a str,
    /// The session key as `show` matches it (clipped; the id when none).
    pub session_key: &'a str,
}

impl<'a> Facts<'a> {
    /// What `probe` says, as the cache keeps it.
    pub(crate) fn of(probe: &'a Probe<'a>) -> Facts<'a> {
        Facts {
            group: Digest::group(probe.group_key()),
            life: Digest::life(probe.life()),
            updated: probe.updated_at,
            expires: probe.expires_at,
            ended: probe.ended_at.is_some(),
            seq: probe.seq,
            started: probe.started_at,
            label: probe.profile(),
            device: probe.device_id(),
            session: clip(probe.session_id()),
            session_key: clip(probe.session_key()),
        }
    }

    /// The times liveness reads: `[updated_at, expires_at, ended_at]`, where
    /// only whether `ended_at` is set counts.
    pub(crate) fn times(&self) -> [Option<f64>; 3] {
        [self.updated, self.expires, self.ended.then_some(0.0)]
    }
}
