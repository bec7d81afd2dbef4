//! Shared-object contention and the overlap of a waker with its wakee.
//!
//! Contention: an operation on a pipe, socket, futex or lock writes some of the object's
//! cache lines (its lock, queue head, counters). Under MESI the lines then sit in the cache
//! of the CPU that wrote them, and the next operation from another CPU fetches them from
//! there: `contention.*_lines × cache.refetch_*` at the distance between the two CPUs
//! (the machine profile's per-distance costs). The object remembers the CPU of its last
//! operation; an operation from the same CPU pays nothing. So a pair that shares a CPU
//! never pays, a pair split over two cores pays on every operation, and hackbench's twenty
//! writers of one receiver's socket pay in proportion to how spread they are. Reconstructed
//! \[M\]: one owner CPU per object (no shared read copies), the costs are the profile's.
//!
//! Overlap: after a remote wakeup the waker keeps running (the rest of its syscall and the
//! entry of its next blocking call) while the wakee starts on its own CPU. The time from
//! the IPI leaving to the waker blocking is counted as overlap.
//!
//! State: reads `core` (profile, topology); writes `objects` (each object's last CPU),
//! `core` (the waker's overlap) and `stats` (the contention counters).

use super::Simulation;
use super::cost::Distance;
use crate::task::TaskId;
use crate::time::{NEVER, Time};
use schedlab_topo::CpuId;

/// A shared object an operation touches.
#[derive(Clone, Copy, Debug)]
pub(super) enum Object {
    /// A channel (a pipe or a socket, by its kind).
    Channel(usize),
    /// A futex.
    Futex(usize),
    /// A user-space lock.
    Mutex(usize),
}

/// Object classes of the contention counters, in their order.
pub(crate) const CLASSES: [&str; 4] = ["pipe", "socket", "futex", "lock"];

impl Simulation {
    /// The cost of the lines of `obj` reaching `cpu` for an operation there, ns; moves
    /// the object's lines to `cpu` and counts the cost by object class.
    pub(super) fn touch(&mut self, obj: Object, cpu: CpuId) -> f64 {
        let c = &self.core.profile.contention;
        let (slot, class, lines) = match obj {
            Object::Channel(ch) => {
                let pipe = matches!(
                    self.objects.channels[ch].kind,
                    crate::ipc::ChannelKind::Pipe { .. }
                );
                let (class, lines) = if pipe {
                    (0, c.pipe_lines)
                } else {
                    (1, c.socket_lines)
                };
                (&mut self.objects.channels[ch].last_cpu, class, lines)
            }
            Object::Futex(f) => (&mut self.objects.futexes[f].last_cpu, 2, c.futex_lines),
            Object::Mutex(m) => (&mut self.objects.mutexes[m].last_cpu, 3, c.lock_lines),
        };
        let last = slot.replace(cpu.index() as u32);
        let Some(last) = last.filter(|&l| l as usize != cpu.index()) else {
            return 0.0;
        };
        if lines == 0.0 {
            return 0.0;
        }
        let cost = lines
            * self.refetch_per_line(Distance::of(
                &self.core.topo,
                CpuId::new(last as usize),
                cpu,
            ));
        self.stats.counters.contention_ns[class] += cost as u64;
        cost
    }

    /// A remote wakeup by `w` whose IPI leaves at `at`: the overlap starts (closing one
    /// still open from an earlier wakeup).
    pub(super) fn open_overlap(&mut self, w: TaskId, at: Time) {
        self.close_overlap(w);
        self.core.tasks[w].overlap_since = at;
    }

    /// `w` blocks or exits (or wakes again): the overlap since its last remote wakeup ends.
    pub(super) fn close_overlap(&mut self, w: TaskId) {
        let since = std::mem::replace(&mut self.core.tasks[w].overlap_since, NEVER);
        if since != NEVER {
            self.stats.counters.overlap_ns += self.core.now.saturating_sub(since);
        }
    }
}
