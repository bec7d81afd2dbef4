//! The invariant checker: the machine's invariants (ARCHITECTURE.md, "Invariants"), checked
//! after every event when `SimOptions::check_invariants` is set (tests and property tests).
//!
//! State: reads only: `core`, `objects`, `run` (the liveness counts) and the event queue.

use super::Simulation;
use crate::config::ClassKind;
use crate::seg_timers;
use crate::state::{TaskState, WaitOn};
use crate::task::TaskId;
use crate::time::Time;
use schedlab_topo::CpuId;

impl Simulation {
    /// Checks the machine's invariants; `Err` says which one broke.
    pub fn check_invariants(&self) -> Result<(), String> {
        let n = self.core.cpus.len();
        let counted = self.check_task_states()?;
        for c in CpuId::range(n) {
            self.check_cpu(c, &counted)?;
        }
        self.check_pelt()?;
        if counted.active != self.run.nr_active {
            return Err(format!(
                "nr_active {} but counted {}",
                self.run.nr_active, counted.active
            ));
        }
        if counted.waiting != self.run.nr_waiting {
            return Err(format!(
                "nr_waiting {} but counted {}",
                self.run.nr_waiting, counted.waiting
            ));
        }
        self.check_waits()
    }

    /// Each task's state agrees with the runqueues and CPUs; returns what they count.
    fn check_task_states(&self) -> Result<Counted, String> {
        let n = self.core.cpus.len();
        let mut running_on = vec![None; n];
        let mut nr_run = vec![0u32; n];
        let mut pending = vec![0u32; n];
        let mut active = 0;
        let mut waiting = 0;
        for (i, t) in self.core.tasks.iter().enumerate() {
            let i = TaskId::new(i);
            match t.state {
                TaskState::Running(c) => {
                    if self.core.cpus[c].curr != Some(i) {
                        return Err(format!(
                            "task {i} Running on {c} but curr is {:?}",
                            self.core.cpus[c].curr
                        ));
                    }
                    if running_on[c].replace(i).is_some() {
                        return Err(format!("two tasks running on cpu {c}"));
                    }
                    if self.core.cpus[c].rq.tree.iter().any(|&(_, x)| x == i) {
                        return Err(format!("running task {i} also queued on {c}"));
                    }
                    nr_run[c] += 1;
                    active += 1;
                }
                TaskState::Queued(c) => {
                    let in_rq = self
                        .core
                        .cpus
                        .iter()
                        .enumerate()
                        .filter(|(_, cpu)| cpu.rq.tree.iter().any(|&(_, x)| x == i))
                        .map(|(k, _)| CpuId::new(k))
                        .collect::<Vec<_>>();
                    if in_rq != vec![c] {
                        return Err(format!("task {i} Queued({c}) but found in rqs {in_rq:?}"));
                    }
                    if t.cpu != c {
                        return Err(format!("task {i} Queued({c}) but task_cpu {}", t.cpu));
                    }
                    nr_run[c] += 1;
                    active += 1;
                    waiting += 1;
                }
                TaskState::Waking(c) => {
                    pending[c] += 1;
                    active += 1;
                }
                TaskState::Sleeping(_) => {
                    if t.delayed {
                        nr_run[t.cpu] += 1;
                    } else if self
                        .core
                        .cpus
                        .iter()
                        .any(|cpu| cpu.rq.tree.iter().any(|&(_, x)| x == i))
                    {
                        return Err(format!("sleeping task {i} is on a runqueue"));
                    }
                }
                TaskState::Dead => {}
            }
        }
        Ok(Counted {
            nr_run,
            pending,
            active,
            waiting,
        })
    }

    /// One CPU's counts, running task, queue keys and order, segment timer and time
    /// accounting.
    fn check_cpu(&self, c: CpuId, counted: &Counted) -> Result<(), String> {
        let (nr_run, pending) = (&counted.nr_run, &counted.pending);
        if self.core.cpus[c].nr_running != nr_run[c] {
            return Err(format!(
                "cpu {c} nr_running {} but counted {}",
                self.core.cpus[c].nr_running, nr_run[c]
            ));
        }
        if self.core.cpus[c].pending != pending[c] {
            return Err(format!(
                "cpu {c} pending {} but counted {}",
                self.core.cpus[c].pending, pending[c]
            ));
        }
        if let Some(t) = self.core.cpus[c].curr
            && self.core.tasks[t].state != TaskState::Running(c)
        {
            return Err(format!(
                "cpu {c} curr {t} is {:?}",
                self.core.tasks[t].state
            ));
        }
        let keys_sorted = self.core.cpus[c].rq.tree.iter().all(|&(k, t)| {
            let task = &self.core.tasks[t];
            match self.core.cfg.class {
                ClassKind::Cfs => k == task.vruntime,
                ClassKind::Eevdf => k == task.deadline,
                ClassKind::O1 => true,
            }
        });
        if !keys_sorted {
            return Err(format!("cpu {c}: runqueue key out of date"));
        }
        if self.core.cfg.class == ClassKind::Eevdf {
            self.check_eevdf(c)?;
        }
        self.check_lru(c)?;
        // The segment timer: a running CPU's segment end is armed (or it would never be
        // handled), and the CPU's slot never holds a key later than the live one.
        let live = self.core.cpus[c].seg_key;
        if self.core.cpus[c].curr.is_some() && live == seg_timers::IDLE {
            return Err(format!("cpu {c} runs a task with no segment end armed"));
        }
        if self.events.seg_slot(c) > live {
            return Err(format!(
                "cpu {c}: timer slot later than its live segment end"
            ));
        }
        if live != seg_timers::IDLE && ((live >> 64) as Time) < self.core.now {
            return Err(format!("cpu {c}: segment end armed in the past"));
        }
        let c_ = &self.core.cpus[c];
        let accounted = c_.busy_ns + c_.idle_ns + (self.core.now - c_.last_mode_change);
        if accounted != self.core.now {
            return Err(format!(
                "cpu {c}: busy+idle {accounted} != elapsed {}",
                self.core.now
            ));
        }
        Ok(())
    }

    /// EEVDF: the running sums match the queue, and the zero-lag point they give equals
    /// the weighted average of the absolute vruntimes (whatever the reference).
    fn check_eevdf(&self, c: CpuId) -> Result<(), String> {
        let rq = &self.core.cpus[c].rq;
        let (mut sum, mut load) = (0i128, 0i128);
        for &(_, t) in rq.tree.iter() {
            let task = &self.core.tasks[t];
            sum += task.vruntime as i128 * task.weight as i128;
            load += task.weight as i128;
        }
        let rel = sum - load * rq.min_vruntime as i128;
        if rel != rq.avg_vruntime || load != rq.avg_load as i128 {
            return Err(format!("cpu {c}: EEVDF sums differ from the queue"));
        }
        if let Some(t) = self.core.cpus[c].curr
            && self.core.tasks[t].state == TaskState::Running(c)
        {
            sum += self.core.tasks[t].vruntime as i128 * self.core.tasks[t].weight as i128;
            load += self.core.tasks[t].weight as i128;
        }
        if load > 0 {
            let (got, want) = (self.avg_vruntime(c) as i128, sum.div_euclid(load));
            if got != want {
                return Err(format!(
                    "cpu {c}: avg_vruntime {got} is not the weighted average {want}"
                ));
            }
        }
        Ok(())
    }

    /// The balancer's order is kept (with current keys) exactly while the queue is long,
    /// and what the balancer reads, kept or sorted on demand, is the queue, least recently
    /// run first.
    fn check_lru(&self, c: CpuId) -> Result<(), String> {
        let rq = &self.core.cpus[c].rq;
        let kept_ok = if rq.lru_kept() {
            rq.tree.len() >= crate::rq::LRU_SHORT
                && (rq.lru.iter()).all(|&(k, t)| k == self.core.tasks[t].exec_start as i64)
        } else {
            rq.tree.len() <= crate::rq::LRU_LONG
        };
        let mut coldest: Vec<(i64, TaskId)> = (rq.tree.iter())
            .map(|&(_, t)| (self.core.tasks[t].exec_start as i64, t))
            .collect();
        coldest.sort_unstable();
        if !kept_ok
            || !rq
                .coldest(&self.core.tasks)
                .eq(coldest.iter().map(|&(_, t)| t))
        {
            return Err(format!(
                "cpu {c}: cfs_tasks order differs from the runqueue"
            ));
        }
        Ok(())
    }

    /// PELT: a CPU's sums are exactly the sums of its tasks' (up to float rounding).
    fn check_pelt(&self) -> Result<(), String> {
        let n = self.core.cpus.len();
        for c in CpuId::range(n) {
            let (mut load, mut rload, mut util) = (0.0, 0.0, 0.0);
            for t in self
                .core
                .tasks
                .iter()
                .filter(|t| t.cpu == c && t.state != TaskState::Dead)
            {
                let (runnable, running) = match t.state {
                    TaskState::Running(_) => (1.0, 1.0),
                    TaskState::Queued(_) => (1.0, 0.0),
                    _ if t.delayed => (1.0, 0.0),
                    _ => (0.0, 0.0),
                };
                let (mut l, mut u) = (t.load, t.util);
                l.advance(self.core.now, runnable);
                u.advance(self.core.now, running);
                load += l.sum * t.weight as f64;
                util += u.sum;
                if runnable > 0.0 {
                    rload += l.sum * t.weight as f64;
                }
            }
            let cpu = &self.core.cpus[c];
            let (mut cl, mut cu, mut cr) = (cpu.load, cpu.util, cpu.runnable);
            cl.advance(self.core.now, cpu.runnable_weight as f64);
            cu.advance(self.core.now, if cpu.curr.is_some() { 1.0 } else { 0.0 });
            cr.advance(self.core.now, cpu.runnable_weight as f64);
            // Sums are in weight·ns (a busy nice-0 task reaches ~5e10); rounding and the clamp
            // at zero leave absolute drift far below 1, i.e. below 1e-7 of a task's load.
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1e6);
            if !close(load, cl.sum) || !close(util, cu.sum) || !close(rload, cr.sum) {
                return Err(format!(
                    "cpu {c}: PELT sums (load {:.1}, util {:.1}, runnable {:.1}) != sums of its tasks ({load:.1}, {util:.1}, {rload:.1})",
                    cl.sum, cu.sum, cr.sum
                ));
            }
        }
        Ok(())
    }

    /// No lost wakeup: every sleeping task waits on something that can still wake it.
    fn check_waits(&self) -> Result<(), String> {
        for (i, t) in self.core.tasks.iter().enumerate() {
            let i = TaskId::new(i);
            if let TaskState::Sleeping(w) = t.state {
                let ok = match w {
                    WaitOn::ChannelRead(c) => self.objects.channels[c].readers.contains(&i),
                    WaitOn::ChannelWrite(c) => self.objects.channels[c].writers.contains(&i),
                    WaitOn::Futex(f) => self.objects.futexes[f].waiters.contains(&i),
                    WaitOn::Mutex(m) => self.objects.mutexes[m].waiters.contains(&i),
                    WaitOn::Barrier(b) => self.objects.barriers[b].waiting.contains(&i),
                    WaitOn::RwLock(l) => self.objects.rwlocks[l].is_sleeping(i),
                    WaitOn::SelfEvent => !t.self_posted,
                    WaitOn::Children => t.live_children > 0 || t.delayed,
                    WaitOn::Timer => true,
                };
                if !ok && !t.delayed {
                    return Err(format!(
                        "task {i} sleeps on {w:?} but nothing will wake it (lost wakeup)"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// What the task states count, per CPU and in all, for the CPUs' own counts to match.
struct Counted {
    nr_run: Vec<u32>,
    pending: Vec<u32>,
    active: usize,
    waiting: usize,
}
