//! The scheduler tick and the balancer's calls: tick preemption (`scheduler_tick` →
//! `task_tick_fair`), the periodic and newly-idle balance passes (`sched_balance_rq`, formerly
//! `load_balance`, decided by the [`crate::balance::Balancer`]), and applying the moves it
//! returns.

use super::Simulation;
use super::queue::Event;
use crate::config::ClassKind;
use crate::policy::SchedView;
use crate::state::TaskState;
use crate::task::TaskId;
use schedlab_topo::CpuId;

impl Simulation {
    pub(super) fn arm_tick(&mut self, cpu: CpuId) {
        if self.cpus[cpu].tick_armed {
            return;
        }
        let tick = self.cfg.tunables.tick_ns();
        let next = (self.now / tick + 1) * tick;
        let c = &mut self.cpus[cpu];
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
        if self.cpus[cpu].tick_gen != g_n || !self.cpus[cpu].tick_armed {
            return;
        }
        self.cpus[cpu].tick_armed = false;
        let busy = self.cpus[cpu].curr.is_some();
        if !busy && !self.balancer.wants_idle_ticks() {
            return;
        }
        self.sync_cpu_pelt(cpu);
        if busy {
            // scheduler_tick() refreshes cpu_load[] (update_cpu_load()) before balancing.
            let load = self.view().cpu_load(cpu);
            let tick_ns = self.cfg.tunables.tick_ns();
            self.cpus[cpu].cpu_load_avg.update(load, self.now, tick_ns);
        }
        if busy && self.check_preempt_tick(cpu) {
            self.counters.preempt_tick += 1;
            self.cpus[cpu].need_resched = true;
        }
        self.run_balancer(cpu, false);
        if self.cpus[cpu].need_resched && self.cpus[cpu].curr.is_some() {
            self.schedule(cpu, None);
        }
        if self.cpus[cpu].curr.is_some() || self.balancer.wants_idle_ticks() {
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
            let view = sched_view!(self);
            if newidle {
                self.balancer.newidle(cpu, &view, &mut self.hints, &mut out);
            } else {
                self.balancer.tick(cpu, &view, &mut self.hints, &mut out);
            }
        }
        if out.cost_ns > 0 {
            self.counters.balance_cost_ns += out.cost_ns;
            if let Some(t) = self.cpus[cpu].curr
                && self.executing != Some(cpu)
            {
                self.settle(cpu);
                self.tasks[t].seg_left += out.cost_ns as f64;
                self.start_segment(cpu);
            }
        }
        if newidle {
            self.counters.newidle_passes += u64::from(out.passes > 0);
        }
        self.counters.balance_passes += out.passes as u64;
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
        self.cpus[cpu].idle_stamp = Some(self.now);
        self.run_balancer(cpu, true);
    }

    pub(super) fn apply_migration(&mut self, t: TaskId, from: CpuId, to: CpuId) {
        if self.tasks[t].state != TaskState::Queued(from)
            || !self.tasks[t].allowed.contains(to)
            || from == to
        {
            return;
        }
        if self.tasks[t].delayed {
            return;
        }
        self.sync_task_pelt(t);
        self.sync_cpu_pelt(from);
        self.sync_cpu_pelt(to);
        self.rq_remove(from, t);
        self.save_lag(from, t);
        self.leave_runnable(from, t);
        self.migrate_task(t, to, true);
        self.join_runnable(to, t);
        if self.cfg.class == ClassKind::Eevdf {
            self.place_entity(to, t, false);
        }
        self.tasks[t].state = TaskState::Queued(to);
        self.rq_insert(to, t);
        // attach_task() → wakeup_preempt(): the moved task may preempt on its new CPU.
        self.wakeup_preempt(to, t, false, false);
    }
}
