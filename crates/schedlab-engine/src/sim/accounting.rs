//! Accounting: the PELT bookkeeping of tasks and CPUs (sync to now, join/leave the runnable
//! sums, move a task's contribution on migration), busy/idle time per CPU, idle-while-waiting
//! time, SMT speed of the running segment, and the final counters of a run.
//!
//! State: reads and writes `core` (CPU and task PELT, busy/idle time, SMT speed), `stats`
//! (counters, migration levels, idle-while-waiting time) and `idle` (the idle-CPU count);
//! reads `run` (which CPU is executing).

use super::Simulation;
use crate::config::ClassKind;
use crate::pelt::Signal;
use crate::policy::{Affine, PlacementRecord, Step};
use crate::seg_timers;
use crate::state::TaskState;
use crate::task::TaskId;
use crate::time::Time;
use schedlab_topo::{CpuId, DomainLevel};
use schedlab_trace::TraceEvent;

impl Simulation {
    pub(super) fn finish_accounting(&mut self) {
        for cpu in CpuId::range(self.core.cpus.len()) {
            self.account_mode(cpu);
        }
        self.flush_iw();
        let stats = &mut self.stats;
        stats
            .short_latency
            .flush(&mut stats.counters.wakeup_latency);
        self.stats.counters.elapsed_ns = self.core.now;
        self.stats.counters.place_steps = Step::ALL
            .iter()
            .filter(|&&st| self.stats.place_steps[st as usize] > 0)
            .map(|&st| {
                (
                    PlacementRecord::step_name(st).to_string(),
                    self.stats.place_steps[st as usize],
                )
            })
            .collect();
        self.stats.counters.place_affine = Affine::ALL
            .iter()
            .filter(|&&a| self.stats.place_affine[a as usize] > 0)
            .map(|&a| {
                (
                    PlacementRecord::affine_name(a).to_string(),
                    self.stats.place_affine[a as usize],
                )
            })
            .collect();
        self.stats.counters.idle_states = self
            .idle
            .idle_state_exits
            .iter()
            .enumerate()
            .filter(|&(_, &k)| k > 0)
            .map(|(i, &k)| (self.core.profile.wakeup.idle_states[i].name.clone(), k))
            .collect();
        self.stats.counters.migrations_by_level = (0..16)
            .filter(|&i| self.stats.mig_levels[i] > 0)
            .map(|i| (level_name(i), self.stats.mig_levels[i]))
            .collect();
        self.stats.counters.run_delay_ns = self.core.tasks.iter().map(|t| t.run_delay_ns).sum();
        self.stats.counters.busy_ns = self.core.cpus.iter().map(|c| c.busy_ns).collect();
        self.stats.counters.idle_ns = self.core.cpus.iter().map(|c| c.idle_ns).collect();
    }

    pub(super) fn sync_cpu_pelt(&mut self, cpu: CpuId) {
        let now = self.core.now;
        let c = &mut self.core.cpus[cpu];
        let w = c.runnable_weight as f64;
        let busy = if c.curr.is_some() { 1.0 } else { 0.0 };
        Signal::advance_all(
            [&mut c.load, &mut c.util, &mut c.runnable],
            now,
            [w, busy, w],
        );
    }

    pub(super) fn sync_task_pelt(&mut self, t: TaskId) {
        let now = self.core.now;
        let task = &mut self.core.tasks[t];
        let (runnable, running) = match task.state {
            TaskState::Running(_) => (1.0, 1.0),
            TaskState::Queued(_) => (1.0, 0.0),
            _ if task.delayed => (1.0, 0.0),
            _ => (0.0, 0.0),
        };
        Signal::advance_all([&mut task.load, &mut task.util], now, [runnable, running]);
    }

    /// `t` becomes runnable on `cpu`: counts, the instantaneous load and the runnable-load
    /// PELT sum (task and CPU signals must be synced to now).
    pub(super) fn join_runnable(&mut self, cpu: CpuId, t: TaskId) {
        let w = self.core.tasks[t].weight;
        let rl = self.core.tasks[t].load.sum * w as f64;
        let c = &mut self.core.cpus[cpu];
        c.nr_running += 1;
        if c.nr_running == 2 {
            self.core.nr_overloaded += 1;
        }
        c.runnable_weight += w;
        c.runnable.sum += rl;
    }

    /// `t` stops being runnable on `cpu` (the reverse of [`Self::join_runnable`]).
    pub(super) fn leave_runnable(&mut self, cpu: CpuId, t: TaskId) {
        let w = self.core.tasks[t].weight;
        let rl = self.core.tasks[t].load.sum * w as f64;
        let c = &mut self.core.cpus[cpu];
        c.nr_running -= 1;
        if c.nr_running == 1 {
            self.core.nr_overloaded -= 1;
        }
        c.runnable_weight -= w;
        c.runnable.sum = (c.runnable.sum - rl).max(0.0);
    }

    /// Moves a task's attachment (CPU, PELT contribution, relative vruntime) to `to`.
    pub(super) fn migrate_task(&mut self, t: TaskId, to: CpuId, by_balance: bool) {
        let from = self.core.tasks[t].cpu;
        if from == to {
            return;
        }
        self.sync_task_pelt(t);
        self.sync_cpu_pelt(from);
        self.sync_cpu_pelt(to);
        let w = self.core.tasks[t].weight as f64;
        let (ls, us) = (self.core.tasks[t].load.sum, self.core.tasks[t].util.sum);
        {
            let c = &mut self.core.cpus[from];
            c.load.sum = (c.load.sum - ls * w).max(0.0);
            c.util.sum = (c.util.sum - us).max(0.0);
        }
        {
            let c = &mut self.core.cpus[to];
            c.load.sum += ls * w;
            c.util.sum += us;
        }
        if self.core.cfg.class == ClassKind::Cfs {
            // Pre-6.6: vruntime travels relative to min_vruntime.
            let task = &mut self.core.tasks[t];
            task.vruntime = task.vruntime - self.core.cpus[from].rq.min_vruntime
                + self.core.cpus[to].rq.min_vruntime;
        }
        self.core.tasks[t].cpu = to;
        self.core.tasks[t].nr_migrations += 1;
        if self.core.cfg.features.track_migrations {
            self.hints.task[t].last_migration = Some(self.core.now);
        }
        if by_balance {
            self.stats.counters.migrations_balance += 1;
        } else {
            self.stats.counters.migrations_wake += 1;
        }
        let level = self
            .core
            .domains
            .lowest_spanning(from, to)
            .map_or(15, |d| level_index(d.level));
        self.stats.mig_levels[level] += 1;
        if let Some(tr) = &mut self.stats.trace {
            tr.events.push(TraceEvent::MigrateTask {
                ts_ns: self.core.now,
                cpu: self.run.executing.unwrap_or(from).index() as u32,
                pid: t.pid(),
                prio: 120 + self.core.tasks[t].nice,
                orig_cpu: from.index() as u32,
                dest_cpu: to.index() as u32,
            });
        }
    }

    /// Closes `cpu`'s current busy or idle interval at now.
    pub(super) fn account_mode(&mut self, cpu: CpuId) {
        let now = self.core.now;
        let c = &mut self.core.cpus[cpu];
        let d = now - c.last_mode_change;
        if c.curr.is_some() {
            c.busy_ns += d;
        } else {
            c.idle_ns += d;
        }
        c.last_mode_change = now;
    }

    pub(super) fn flush_iw(&mut self) {
        if self.run.nr_waiting > 0 {
            self.stats.counters.idle_while_waiting_ns +=
                (self.core.now - self.stats.iw_last) * self.idle.nr_idle_cpus as u64;
        }
        self.stats.iw_last = self.core.now;
    }

    pub(super) fn set_waiting(&mut self, delta: isize) {
        self.flush_iw();
        self.run.nr_waiting = (self.run.nr_waiting as isize + delta) as usize;
    }

    /// Sets `curr` of a CPU, keeping busy/idle accounting and SMT speeds right.
    pub(super) fn set_curr(&mut self, cpu: CpuId, curr: Option<TaskId>) {
        let was_busy = self.core.cpus[cpu].curr.is_some();
        let busy = curr.is_some();
        if was_busy != busy {
            self.account_mode(cpu);
            self.flush_iw();
            let core = self.core.topo.cpu(cpu).core;
            if busy {
                self.idle.nr_idle_cpus -= 1;
                self.core.core_busy[core] += 1;
            } else {
                self.idle.nr_idle_cpus += 1;
                self.core.core_busy[core] -= 1;
            }
            // Utilisation accrues while busy: close the interval before the level changes.
            self.sync_cpu_pelt(cpu);
        }
        self.core.cpus[cpu].curr = curr;
        if was_busy != busy && self.core.smt {
            for i in 0..self.core.smt_sibs[cpu].len() {
                let s = self.core.smt_sibs[cpu][i];
                if self.core.cpus[s].curr.is_some() && self.run.executing != Some(s) {
                    self.settle(s);
                    self.start_segment(s);
                }
            }
        }
    }

    pub(super) fn smt_speed(&self, cpu: CpuId) -> f64 {
        let busy = self.core.core_busy[self.core.topo.cpu(cpu).core] as usize;
        let v = &self.core.profile.cpu.smt_speed;
        v[busy.clamp(1, v.len()) - 1]
    }

    /// Folds the progress of the running segment into `seg_left`.
    pub(super) fn settle(&mut self, cpu: CpuId) {
        let Some(t) = self.core.cpus[cpu].curr else {
            return;
        };
        let c = &self.core.cpus[cpu];
        let wall = (self.core.now - c.seg_start) as f64;
        let done = wall * c.speed;
        self.stats.smt_stretch += wall - done;
        let task = &mut self.core.tasks[t];
        task.seg_left = (task.seg_left - done).max(0.0);
        self.core.cpus[cpu].seg_start = self.core.now;
    }

    /// (Re)times the running segment of `cpu` at the current speed.
    pub(super) fn start_segment(&mut self, cpu: CpuId) {
        let Some(t) = self.core.cpus[cpu].curr else {
            return;
        };
        let speed = self.smt_speed(cpu);
        let left = self.core.tasks[t].seg_left;
        let due = self.core.now + crate::time::ceil_u64(left / speed);
        let c = &mut self.core.cpus[cpu];
        c.speed = speed;
        c.seg_start = self.core.now;
        c.seg_due = due;
        // A completion event already armed no later than the new due time can serve this
        // segment too: it re-arms itself when it fires early. Only an earlier due time needs
        // a new one.
        if c.seg_key != seg_timers::IDLE && due >= (c.seg_key >> 64) as Time {
            return;
        }
        self.arm_seg_done(cpu, due);
    }
}

fn level_index(l: DomainLevel) -> usize {
    match l {
        DomainLevel::Smt => 0,
        DomainLevel::Cls => 1,
        DomainLevel::Mc => 2,
        DomainLevel::Pkg => 3,
        DomainLevel::Node => 4,
        DomainLevel::Numa(k) => (5 + k as usize).min(14),
    }
}

fn level_name(i: usize) -> String {
    match i {
        0 => "SMT".into(),
        1 => "CLS".into(),
        2 => "MC".into(),
        3 => "PKG".into(),
        4 => "NODE".into(),
        15 => "NONE".into(),
        k => format!("NUMA{}", k - 5),
    }
}
