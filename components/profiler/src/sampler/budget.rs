//! The process's sample budget: whether a sample finds room, and the fair shares that
//! decide who yields once it has run out (the sampler's module docs, "Fair shares of the
//! budget").

use crate::frame::RawStack;
use crate::recorder::{Added, BufferPolicy};
use crate::time::Nanos;
use crate::trace::ProfilerMarker;

use super::messages::SessionId;
use super::state::SamplerCore;

/// Where a sample finds room in the process's budget.
enum Room {
    /// In the budget (or in a buffer at its own limit, which takes none of it).
    Free,
    /// In place of the session's own oldest sample (a ring at its share).
    OwnOldest,
    /// Nowhere: the session is full.
    Full,
}

impl SamplerCore {
    pub(super) fn record(
        &mut self,
        id: SessionId,
        at: Nanos,
        stack: Option<&RawStack>,
        marker: Option<ProfilerMarker>,
    ) {
        let Some(slot) = self.sessions.get_mut(&id) else {
            return;
        };
        if slot.full {
            return;
        }
        // A buffer at its own limit takes nothing more from the budget (it is full, or a
        // ring that replaces its oldest sample), and while the budget has room any session
        // takes it: the common case, one lookup.
        let room =
            if slot.recorder.is_full() || !self.contended && self.buffered < self.max_buffered {
                Room::Free
            } else {
                self.room_for(id)
            };
        let Some(slot) = self.sessions.get_mut(&id) else {
            return;
        };
        let added = match room {
            Room::Free => slot.recorder.add(at, stack, marker),
            Room::OwnOldest => {
                slot.recorder.drop_oldest();
                self.buffered -= 1;
                slot.recorder.add(at, stack, marker)
            }
            Room::Full => Added::Full,
        };
        match added {
            Added::Stored => self.buffered += 1,
            Added::Replaced => {}
            Added::Full => self.fill(id),
        }
    }

    /// Session `id` is full (decision 4): it stops taking samples and its host is told, once.
    fn fill(&mut self, id: SessionId) {
        let Some(slot) = self.sessions.get_mut(&id) else {
            return;
        };
        let was_active = slot.active();
        slot.full = true;
        if let Some(notify) = slot.on_full.take() {
            notify();
        }
        if was_active {
            self.plan_change(id, false);
        }
    }

    /// The share of the budget each unstopped session may hold once it has run out.
    fn fair_share(&self) -> u64 {
        self.max_buffered / self.sessions.len().max(1) as u64
    }

    /// Where session `id`'s next sample finds room once the budget has run out (see "Fair
    /// shares" in the module docs). O(1), but for the cut it may make (amortised).
    fn room_for(&mut self, id: SessionId) -> Room {
        let Some(slot) = self.sessions.get(&id) else {
            return Room::Full;
        };
        self.contended = true;
        let held = slot.recorder.len() as u64;
        let ring = slot.recorder.policy() == BufferPolicy::Ring;
        let share = self.fair_share();
        if held < share && (self.buffered < self.max_buffered || self.reclaim(share)) {
            return Room::Free;
        }
        // At its share (or, impossibly, with nobody above theirs): it yields.
        if ring && held > 0 {
            Room::OwnOldest
        } else {
            Room::Full
        }
    }

    /// Cuts every session holding more than `share` samples down to `share`: a ring drops
    /// its oldest samples and goes on; any other drops its newest, so that its trace is
    /// the samples it took first, and is full from now on (told once, as at its own
    /// `maxBufferSize`). O(sessions + samples taken back). Whether the budget has room now.
    fn reclaim(&mut self, share: u64) -> bool {
        self.stats.reclaims += 1;
        let mut filled = Vec::new();
        let mut taken = 0;
        for (&id, slot) in self.sessions.iter_mut() {
            let held = slot.recorder.len() as u64;
            if held <= share {
                continue;
            }
            let ring = slot.recorder.policy() == BufferPolicy::Ring;
            for _ in share..held {
                if ring {
                    slot.recorder.drop_oldest();
                } else {
                    slot.recorder.drop_newest();
                }
            }
            if !ring && !slot.full {
                filled.push(id);
            }
            taken += held - share;
        }
        self.buffered -= taken;
        self.stats.reclaimed += taken;
        // Told in id order, so that runs are deterministic.
        filled.sort_unstable();
        for id in filled {
            self.fill(id);
        }
        self.buffered < self.max_buffered
    }

    /// `n` samples left the budget (a session stopped or restarted): once it has drained
    /// to half, sessions may again take more than their share.
    pub(super) fn release(&mut self, n: u64) {
        self.buffered -= n;
        if self.buffered <= self.max_buffered / 2 {
            self.contended = false;
        }
    }
}
