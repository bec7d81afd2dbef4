//! Task lifecycle: fork (`wake_up_new_task`: the policy places the child with WF_FORK, its
//! initial load is attached where it lands) and exit (the load leaves, a parent waiting in
//! `wait()` is woken). Exec placement (`sched_exec`, WF_EXEC) is an op: see `interp.rs`.
//!
//! State: reads and writes `core` (tasks, CPU load), `objects` (wake tokens), `run`
//! (liveness), `stats` (counters, trace, thread groups) and the policy's hints.

use super::Simulation;
use crate::pelt::Signal;
use crate::policy::{TaskHints, wake_flags};
use crate::state::{LoopStack, Task, TaskState, WaitOn};
use crate::task::{SpecId, TaskId, TaskSpec, nice_to_weight};
use schedlab_topo::{CpuId, CpuSet};
use schedlab_trace::{ThreadInfo, TraceEvent};

impl Simulation {
    /// Creates a task of spec `spec_id` (forked by `parent` on `parent_cpu`, or an initial
    /// task or kernel thread) and places it; returns it with the placement search's cost,
    /// which a forking parent pays.
    pub(super) fn create_task(
        &mut self,
        spec_id: SpecId,
        parent: Option<TaskId>,
        parent_cpu: CpuId,
    ) -> (TaskId, f64) {
        let id = TaskId::new(self.core.tasks.len());
        let task = self.new_task(spec_id, id, parent, parent_cpu);
        let (mm, prev, nice) = (task.mm, task.cpu, task.nice);
        self.core.mem_bound |= task.mem_intensity > 0.0;
        self.core.tasks.push(task);
        self.objects.token.push(false);
        self.hints.task.push(TaskHints::default());
        self.run.live += 1;
        if let Some(p) = parent {
            self.core.tasks[p].live_children += 1;
        }
        self.trace_new_task(spec_id, id, parent, prev, mm);
        self.policy.task_created(id, parent, &mut self.hints);
        // The new task's CPU starts as the parent's, then wake_up_new_task places it.
        let flags = wake_flags::FORK;
        self.stats.counters.forks += 1;
        let (cpu, search) = self.select_cpu(id, parent, prev, flags);
        // Its initial utilisation depends on where it landed (sim/util_init.rs).
        self.core.tasks[id].util.sum = self.initial_util_sum(id, cpu);
        // Attach the new task's initial load to its CPU.
        self.sync_cpu_pelt(cpu);
        let t = &mut self.core.tasks[id];
        t.cpu = cpu;
        let (ls, us, w) = (t.load.sum, t.util.sum, t.weight as f64);
        let c = &mut self.core.cpus[cpu];
        c.load.sum += ls * w;
        c.util.sum += us;
        if let Some(tr) = &mut self.stats.trace {
            tr.events.push(TraceEvent::WakeupNew {
                ts_ns: self.core.now,
                cpu: prev.index() as u32,
                pid: id.pid(),
                prio: 120 + nice,
                target_cpu: cpu.index() as u32,
            });
        }
        self.core.tasks[id].state = TaskState::Waking(cpu);
        self.run.nr_active += 1;
        self.core.cpus[cpu].pending += 1;
        self.core.tasks[id].wake_time = Some(self.core.now);
        self.enqueue_arrival(id, cpu, flags, true);
        (id, search)
    }

    /// The new task `id` of spec `spec_id`, on its parent's CPU (or `parent_cpu`), with the
    /// parent's vruntime and a full initial load; registers its thread group.
    fn new_task(
        &mut self,
        spec_id: SpecId,
        id: TaskId,
        parent: Option<TaskId>,
        parent_cpu: CpuId,
    ) -> Task {
        let spec: &TaskSpec = &self.workload.specs[spec_id];
        let n = self.core.topo.nr_cpus();
        let allowed = spec.affinity.clone().unwrap_or_else(|| CpuSet::full(n));
        let pid = id.pid();
        let mm = match spec.mm {
            None => pid,
            Some(m) => {
                let key = 0x8000_0000 | m;
                if !self.stats.tgids.iter().any(|(k, _)| *k == key) {
                    self.stats.tgids.push((key, pid));
                }
                key
            }
        };
        let (weight, nice) = (nice_to_weight(spec.nice), spec.nice);
        let prev = match parent {
            Some(p) => self.core.tasks[p].cpu,
            None => parent_cpu,
        };
        let mut vruntime = 0;
        if let Some(p) = parent {
            vruntime = self.core.tasks[p].vruntime;
        }
        let mut task = Task {
            spec: spec_id,
            program: spec.program.clone(),
            pc: 0,
            loops: LoopStack::default(),
            state: TaskState::Sleeping(WaitOn::Children),
            cpu: prev,
            weight,
            nice,
            mm,
            nr_allowed: allowed.count() as u32,
            allowed,
            parent,
            live_children: 0,
            waiting_children: false,
            vruntime,
            deadline: vruntime,
            slice: spec.slice_ns.unwrap_or(0),
            vlag: 0,
            protect_until_deadline: None,
            delayed: false,
            in_syscall: false,
            sum_exec: 0,
            prev_sum_exec: 0,
            exec_start: self.core.now,
            custom_slice: spec.slice_ns,
            o1_prio: 120 + nice,
            o1_timeslice_left: 0,
            o1_sleep_avg: 0.0,
            o1_seq: 0,
            load: Signal {
                sum: 0.0,
                last: self.core.now,
            },
            util: Signal {
                sum: 0.0,
                last: self.core.now,
            },
            ws_bytes: spec.ws_bytes,
            mem_intensity: spec.mem_intensity,
            home_node: spec.home_node,
            user_ns: 0.0,
            last_ran_cpu: None,
            last_ran_end: self.core.now,
            seg_left: 0.0,
            spin_left: 0,
            wake_time: None,
            runnable_since: self.core.now,
            run_delay_ns: 0,
            nr_voluntary: 0,
            nr_involuntary: 0,
            nr_migrations: 0,
            slots: [0; 8],
            last_recv_bytes: 0,
            self_posted: false,
            timer_gen: 0,
            started_at: self.core.now,
            ran_since_wake: 0,
            avg_overlap: 0,
            last_wakeup_ts: 0,
            syscall_entered: false,
            tcp_in: None,
            overlap_since: crate::time::NEVER,
        };
        // New tasks start with a full load contribution (PELT init: load_avg = weight).
        let full = crate::pelt::divider(self.core.now);
        task.load.sum = full;
        task.util.sum = full / 2.0;
        task
    }

    /// Records the new thread (and its fork) in the trace.
    fn trace_new_task(
        &mut self,
        spec_id: SpecId,
        id: TaskId,
        parent: Option<TaskId>,
        prev: CpuId,
        mm: u32,
    ) {
        let spec: &TaskSpec = &self.workload.specs[spec_id];
        let pid = id.pid();
        if let Some(tr) = &mut self.stats.trace {
            let tgid = self
                .stats
                .tgids
                .iter()
                .find(|(k, _)| *k == mm)
                .map_or(pid, |x| x.1);
            tr.threads.push(ThreadInfo {
                pid,
                tgid,
                comm: spec.comm.clone(),
            });
            if let Some(p) = parent {
                tr.events.push(TraceEvent::ProcessFork {
                    ts_ns: self.core.now,
                    cpu: prev.index() as u32,
                    parent_pid: p.pid(),
                    child_pid: pid,
                });
            }
        }
    }

    pub(super) fn exit_current(&mut self, cpu: CpuId, t: TaskId) {
        self.update_curr(cpu);
        self.close_overlap(t);
        self.sync_task_pelt(t);
        self.sync_cpu_pelt(cpu);
        self.leave_runnable(cpu, t);
        let w = self.core.tasks[t].weight;
        let (ls, us) = (self.core.tasks[t].load.sum, self.core.tasks[t].util.sum);
        let c = &mut self.core.cpus[cpu];
        c.load.sum = (c.load.sum - ls * w as f64).max(0.0);
        c.util.sum = (c.util.sum - us).max(0.0);
        self.core.tasks[t].state = TaskState::Dead;
        self.run.nr_active -= 1;
        self.run.live -= 1;
        if let Some(p) = self.core.tasks[t].parent {
            self.core.tasks[p].live_children -= 1;
            if self.core.tasks[p].live_children == 0 && self.core.tasks[p].waiting_children {
                self.core.tasks[p].waiting_children = false;
                if self.core.tasks[p].state == TaskState::Sleeping(WaitOn::Children) {
                    self.objects.token[p] = true;
                    // do_notify_parent() → __wake_up_parent(): sync in every modelled era.
                    let rule = self.core.cfg.wake.exit_parent;
                    let flags = if rule.sync {
                        wake_flags::TTWU | wake_flags::SYNC
                    } else {
                        wake_flags::TTWU
                    };
                    // The exiting task's work is over: the wakeup's cost stays unpaid,
                    // after what was unpaid already (the wakee's lead).
                    let ops = self.run.ops_started;
                    let cost = self.try_to_wake_up(p, Some(t), cpu, flags, self.run.unpaid);
                    if self.run.ops_started == ops {
                        cost.charge(&mut self.run.unpaid);
                    }
                }
            }
        }
        if let Some(tr) = &mut self.stats.trace {
            tr.events.push(TraceEvent::ProcessExit {
                ts_ns: self.core.now,
                cpu: cpu.index() as u32,
                pid: t.pid(),
            });
        }
    }
}
