//! The sort engine: `list`'s fast path decides every group by sorting
//! 48-byte slots by group and life, with no map built.
use super::{Digest, EndedLives, FileCopy, Life, decide, life_state};
use crate::liveness::State;

/// One file as a listing holds it while the directory is read: what
/// dedupe and liveness need, in 48 bytes and no allocation. A listing of
/// 100 000 files holds 100 000 of these and the bytes of the files that
/// may be listed, nothing else.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    /// Its group.
    pub group: Digest,
    /// Its life.
    pub life: Digest,
    /// `updated_at`, `-inf` when missing.
    pub updated: f64,
    /// `seq`.
    pub seq: u64,
    /// The caller's handle on the file (its name).
    pub file: u32,
    /// The caller's handle on what it kept of the file (`u32::MAX`: nothing).
    pub kept: u32,
    /// Which of the profile's directories holds the file (0: `dir`).
    pub dir: u32,
    /// The caller's second handle (which thread kept it).
    pub part: u8,
    /// Carries `ended_at`.
    pub ended: bool,
    /// The file's own liveness.
    pub state: State,
}

/// A group decided from [`Slot`]s: the index of the winner's slot and the
/// state of its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// Index into the slots as sorted by [`decide_slots`].
    pub winner: usize,
    /// The state of the winner's life.
    pub state: State,
}

/// Decides every group of `slots` — the same rules as [`Reducer`](super::reducer::Reducer), which a
/// property test checks — by sorting them by group and life, so that no map
/// is built. `name` gives a slot's file name (ties of rank are broken by
/// it). Sorts `slots`; the winners index the sorted slice.
pub(crate) fn decide_slots<'n>(
    slots: &mut [Slot],
    name: impl Fn(&Slot) -> &'n str,
    mut each: impl FnMut(Verdict),
) {
    slots.sort_unstable_by_key(|s| (s.group, s.life));
    let mut ended = EndedLives::default();
    for s in slots.iter() {
        ended.add(s.life, s.ended);
    }
    let mut lives: Vec<(Digest, Life<usize>)> = Vec::new();
    let mut start = 0;
    while start < slots.len() {
        let group = slots[start].group;
        let end = start
            + slots[start..]
                .iter()
                .position(|s| s.group != group)
                .unwrap_or(slots.len() - start);
        if end - start == 1 {
            // Nearly every group is one file, one life: decided without
            // building it, by the same rule.
            let s = &slots[start];
            let open = (!s.ended).then_some(s.state);
            each(Verdict {
                winner: start,
                state: life_state(open, s.ended || ended.contains(s.life)),
            });
            start = end;
            continue;
        }
        lives.clear();
        for (i, s) in slots.iter().enumerate().take(end).skip(start) {
            if lives.last().is_none_or(|(id, _)| *id != s.life) {
                lives.push((s.life, Life::new()));
            }
            let copy = FileCopy {
                file: name(s).into(),
                dir: s.dir as usize,
                updated: s.updated,
                seq: s.seq,
                ended: s.ended,
                state: s.state,
                item: Some(i),
            };
            if let Some((_, life)) = lives.last_mut() {
                life.add(copy, false);
            }
        }
        if let Some(out) = decide(std::mem::take(&mut lives), &ended)
            && let Some(winner) = out.winner.item
        {
            each(Verdict {
                winner,
                state: out.state,
            });
        }
        start = end;
    }
}
