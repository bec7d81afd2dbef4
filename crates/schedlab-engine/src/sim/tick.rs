//! The scheduler tick and the balancer's calls: tick preemption (`scheduler_tick` →
//! `task_tick_fair`), the periodic and newly-idle balance passes (`sched_balance_rq`, formerly
//! `load_balance`, decided by the [`crate::balance::Balancer`]), and applying the moves it
//! returns.
//!
//! State: reads and writes `core` (CPUs, tasks), `stats` (counters) and the balancer's
//! hints; pushes events; calls the balancer.

use super::Simulation;
use super::queue::Event;
use crate::config::ClassKind;
use crate::state::TaskState;
use crate::task::TaskId;
use schedlab_topo::CpuId;

impl Simulation {
    pub(super) fn arm_tick(&mut self, cpu: CpuId) {
        if self.core.cpus[cpu].tick_armed {
            return;
        }
        let tick = self.core.cfg.tunables.tick_ns();
        let next = (self.core.now / tick + 1) * tick;
        let c = &mut self.core.cpus[cpu];
        c.tick_armed = true;
        c.tick_gen = c.tick_gen.wrapping_add(1);
        let g_n = c.tick_gen;
        self.events.push(
            next,
            Event::Tick {
                cpu: cpu.index() as u32,
                g_n,
            },
        );
    }

    pub(super) fn tick(&mut self, cpu: CpuId, g_n: u32) {
        if self.core.cpus[cpu].tick_gen != g_n || !self.core.cpus[cpu].tick_armed {
            return;
        }
        self.core.cpus[cpu].tick_armed = false;
        let busy = self.core.cpus[cpu].curr.is_some();
        if !busy && !self.balancer.wants_idle_ticks() {
            return;
        }
        self.sync_cpu_pelt(cpu);
        // The 2020/2022 idle cpumask: the tick of a busy CPU clears its bit.
        if busy && self.core.cfg.features.idle_cpumask {
            let llc = self.core.topo.cpu(cpu).llc;
            self.hints.llc[llc].idle_cpus.remove(cpu);
        }
        if busy {
            // scheduler_tick() refreshes cpu_load[] (update_cpu_load()) before balancing.
            let load = self.view().cpu_load(cpu);
            let tick_ns = self.core.cfg.tunables.tick_ns();
            self.core.cpus[cpu]
                .cpu_load_avg
                .update(load, self.core.now, tick_ns);
        }
        // PREEMPT_LAZY (6.13 `sched_tick()`): a lazy request left from before is upgraded to
        // a full one before the tick's own checks.
        self.core.cpus[cpu].resched_lazy = false;
        if busy && self.check_preempt_tick(cpu) {
            self.stats.counters.preempt_tick += 1;
            // The tick's own request (`update_curr()` → `resched_curr_lazy()` in 6.13+) is
            // lazy under PREEMPT_LAZY: acted on at the return to user or the next tick.
            self.request_resched(cpu);
        }
        self.run_balancer(cpu, false);
        if self.core.cpus[cpu].need_resched && self.resched_takes_effect(cpu) {
            self.schedule(cpu, None);
        }
        if self.core.cpus[cpu].curr.is_some() || self.balancer.wants_idle_ticks() {
            self.arm_tick(cpu);
        }
    }

    pub(super) fn run_balancer(&mut self, cpu: CpuId, newidle: bool) {
        let mut out = std::mem::take(&mut self.balance_out);
        out.migrations.clear();
        out.active.clear();
        out.cost_ns = 0;
        out.passes = 0;
        {
            let view = self.core.view();
            if newidle {
                self.balancer.newidle(cpu, &view, &mut self.hints, &mut out);
            } else {
                self.balancer.tick(cpu, &view, &mut self.hints, &mut out);
            }
        }
        if out.cost_ns > 0 {
            self.stats.counters.balance_cost_ns += out.cost_ns;
            if let Some(t) = self.core.cpus[cpu].curr
                && self.run.executing != Some(cpu)
            {
                self.settle(cpu);
                self.core.tasks[t].seg_left += out.cost_ns as f64;
                self.stats.counters.balance_charged_ns += out.cost_ns;
                self.start_segment(cpu);
            }
        }
        if newidle {
            self.stats.counters.newidle_passes += u64::from(out.passes > 0);
        }
        self.stats.counters.balance_passes += out.passes as u64;
        let migs = std::mem::take(&mut out.migrations);
        for m in &migs {
            self.apply_migration(m.task, m.from, m.to);
        }
        out.migrations = migs;
        // Active balances run after the ordinary moves (their own module: sim/active.rs).
        let pushes = std::mem::take(&mut out.active);
        for m in &pushes {
            self.active_balance(m.task, m.from, m.to);
        }
        out.active = pushes;
        self.balance_out = out;
    }

    pub(super) fn newidle_balance(&mut self, cpu: CpuId) {
        self.core.cpus[cpu].idle_stamp = Some(self.core.now);
        self.run_balancer(cpu, true);
    }

    pub(super) fn apply_migration(&mut self, t: TaskId, from: CpuId, to: CpuId) {
        if self.core.tasks[t].state != TaskState::Queued(from)
            || !self.core.tasks[t].allowed.contains(to)
            || from == to
        {
            return;
        }
        if self.core.tasks[t].delayed {
            return;
        }
        self.sync_task_pelt(t);
        self.sync_cpu_pelt(from);
        self.sync_cpu_pelt(to);
        // `detach_task()` → `dequeue_entity()`: the lag while it still counts in the average.
        self.update_curr(from);
        self.save_lag(from, t);
        self.rq_remove(from, t);
        self.leave_runnable(from, t);
        self.migrate_task(t, to, true);
        self.join_runnable(to, t);
        if self.core.cfg.class == ClassKind::Eevdf {
            // attach_task() → enqueue_entity(): curr's vruntime first, then the placement.
            self.update_curr(to);
            self.place_entity(to, t, false);
        }
        self.core.tasks[t].state = TaskState::Queued(to);
        self.rq_insert(to, t);
        // attach_task() → wakeup_preempt(): the moved task may preempt on its new CPU.
        self.wakeup_preempt(to, t, false, false);
    }
}
