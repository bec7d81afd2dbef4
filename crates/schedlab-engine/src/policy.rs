//! The placement extension point: [`PlacementPolicy`] picks a CPU for a waking, forking or
//! exec'ing task from a read-only [`SchedView`] of the machine, and may update the shared
//! [`Hints`] policies keep (wakee_flips, recent_used_cpu, has_idle_cores, ...).
//!
//! Every decision fills a [`PlacementRecord`]: which path was taken and why, and how many
//! CPUs were examined. The engine charges the search to the waker, counts the paths, and
//! writes them into traces.

use crate::config::{ClassKind, LoadSignal, SchedConfig};
use crate::pelt;
use crate::state::{Cpu, CpuMode, Task, TaskState};
use crate::task::TaskId;
use crate::time::Time;
use schedlab_topo::{CpuId, CpuSet, SchedDomains, Topology};
use std::fmt;

bitflags::bitflags! {
    /// `WF_*` wake flags: why a task is being placed and what the waker promised. A typed set,
    /// so wake flags and sched-domain flags ([`schedlab_topo::SdFlags`]) cannot be mixed up.
    /// Bit values are our own; [`WakeFlags::bits`] is what an in-flight event stores.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct WakeFlags: u32 {
        /// `WF_SYNC`: the waker promises to sleep soon (pipes, sockets, wait4).
        const SYNC = 1 << 0;
        /// `WF_FORK`: a new task (`wake_up_new_task`).
        const FORK = 1 << 1;
        /// `WF_EXEC`: exec balancing (`sched_exec`).
        const EXEC = 1 << 2;
        /// `WF_TTWU`: a regular `try_to_wake_up`.
        const TTWU = 1 << 3;
    }
}

/// The [`WakeFlags`] bits as constants, so call sites read `wake_flags::TTWU | wake_flags::SYNC`.
pub mod wake_flags {
    use super::WakeFlags;

    /// See [`WakeFlags::SYNC`].
    pub const SYNC: WakeFlags = WakeFlags::SYNC;
    /// See [`WakeFlags::FORK`].
    pub const FORK: WakeFlags = WakeFlags::FORK;
    /// See [`WakeFlags::EXEC`].
    pub const EXEC: WakeFlags = WakeFlags::EXEC;
    /// See [`WakeFlags::TTWU`].
    pub const TTWU: WakeFlags = WakeFlags::TTWU;
}

/// One placement question.
#[derive(Clone, Copy, Debug)]
pub struct WakeCtx {
    /// When.
    pub now: Time,
    /// The task to place.
    pub wakee: TaskId,
    /// The waking task (`current`); `None` for timer and interrupt wakeups.
    pub waker: Option<TaskId>,
    /// `smp_processor_id()`: the CPU the wakeup runs on.
    pub waker_cpu: CpuId,
    /// `task_cpu(p)`: where the wakee last ran.
    pub prev_cpu: CpuId,
    /// Why the task is placed (`WF_*`).
    pub flags: WakeFlags,
}

impl WakeCtx {
    /// WF_SYNC set and the waker is a task (not exiting).
    pub fn sync(&self) -> bool {
        self.flags.contains(WakeFlags::SYNC) && self.waker.is_some()
    }
    /// A fork placement.
    pub fn is_fork(&self) -> bool {
        self.flags.contains(WakeFlags::FORK)
    }
    /// An exec placement.
    pub fn is_exec(&self) -> bool {
        self.flags.contains(WakeFlags::EXEC)
    }
    /// A plain wakeup.
    pub fn is_ttwu(&self) -> bool {
        self.flags.contains(WakeFlags::TTWU)
    }
}

/// How the affine (waker vs prev) question was settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Affine {
    /// Not asked (fork/exec, policy without an affine step, prev == waker CPU).
    #[default]
    NotAsked,
    /// `wake_wide()` said the relationship is 1:N: no affine pull.
    WakeWide,
    /// No domain spans both CPUs with WAKE_AFFINE.
    NoDomain,
    /// Switched off (`NO_WAKE_AFFINE`, AFFINE_WAKEUPS off) or WAKEUP_BUDDY found no buddy.
    Declined,
    /// `wake_affine_idle` (or an era's idle test) chose the waker's CPU.
    PulledIdle,
    /// `wake_affine_idle` chose prev.
    KeptIdle,
    /// The sync shortcut chose the waker's CPU.
    PulledSync,
    /// The load test chose the waker's CPU.
    PulledWeight,
    /// The load test kept prev.
    KeptWeight,
    /// WAKEUP_BUDDY: the two are buddies, pulled.
    PulledBuddy,
    /// An idle sibling found during the domain walk made the wakeup affine (2.6.32-34, RAMP).
    PulledSibling,
}

impl Affine {
    /// Every verdict, for tallies.
    pub const ALL: [Affine; 11] = [
        Affine::NotAsked,
        Affine::WakeWide,
        Affine::NoDomain,
        Affine::Declined,
        Affine::PulledIdle,
        Affine::KeptIdle,
        Affine::PulledSync,
        Affine::PulledWeight,
        Affine::KeptWeight,
        Affine::PulledBuddy,
        Affine::PulledSibling,
    ];
}

/// Which step produced the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Step {
    /// No search: the target as given.
    #[default]
    Target,
    /// The target was idle.
    TargetIdle,
    /// prev was idle and shares the cache.
    PrevIdle,
    /// `recent_used_cpu` was idle.
    Recent,
    /// A fully idle core (select_idle_core / the idle-core pass).
    IdleCore,
    /// An idle CPU from the LLC scan.
    IdleCpu,
    /// An idle SMT sibling.
    IdleSmt,
    /// A fully idle group from the pre-4.9 group scan (OLD_IDLE).
    IdleGroup,
    /// 3.6 idle_buddy.
    IdleBuddy,
    /// An idle CPU found by a scan beyond the LLC (SIS_NODE, WAKE_WIDE_IDLE, PREFER_IDLE_CPU).
    WideIdle,
    /// find_idlest_group/find_idlest_cpu.
    SlowPath,
    /// The search found nothing: the target.
    Fallback,
    /// A reference policy's own rule (prev, waker, idlest, random).
    Reference,
    /// The only allowed CPU.
    Pinned,
    /// The 2.5.59 rule: sync pulls to the waker, else prev.
    O1Rule,
}

impl Step {
    /// Every step, for tallies.
    pub const ALL: [Step; 15] = [
        Step::Target,
        Step::TargetIdle,
        Step::PrevIdle,
        Step::Recent,
        Step::IdleCore,
        Step::IdleCpu,
        Step::IdleSmt,
        Step::IdleGroup,
        Step::IdleBuddy,
        Step::WideIdle,
        Step::SlowPath,
        Step::Fallback,
        Step::Reference,
        Step::Pinned,
        Step::O1Rule,
    ];
}

/// What one placement did and why.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlacementRecord {
    /// wake_wide verdict, when evaluated.
    pub wake_wide: Option<bool>,
    /// The affine verdict.
    pub affine: Affine,
    /// The step that produced the CPU.
    pub step: Step,
    /// The CPU the search started from (waker's or prev after the affine decision).
    pub target: Option<CpuId>,
    /// CPUs examined in the waker's LLC.
    pub examined: u32,
    /// CPUs examined outside it.
    pub examined_remote: u32,
    /// `wake_affine_weight` numbers (this_eff, prev_eff), when computed.
    pub affine_loads: Option<(i64, i64)>,
}

impl PlacementRecord {
    /// Counts one read of CPU `c`'s runqueue state by a placement running on `this` (the
    /// waker's CPU): in `examined` when `c` shares `this`'s LLC, else in `examined_remote`;
    /// reading `this` itself is free. The engine charges the waker the profile's scan cost
    /// per count, so every policy that reads other CPUs should count through here.
    pub fn count_read(&mut self, topo: &Topology, this: CpuId, c: CpuId) {
        if c == this {
            return;
        }
        if topo.cpus_share_cache(this, c) {
            self.examined += 1;
        } else {
            self.examined_remote += 1;
        }
    }
    /// CPUs read so far, (inside the waker's LLC, outside it): pair with
    /// [`PlacementRecord::scan_cost_since`] to time a scan.
    pub fn reads(&self) -> (u32, u32) {
        (self.examined, self.examined_remote)
    }
    /// Simulated time of the reads made since `since` (from [`PlacementRecord::reads`]),
    /// at `(local, remote)` ns per CPU.
    pub fn scan_cost_since(&self, since: (u32, u32), (local, remote): (u64, u64)) -> u64 {
        u64::from(self.examined - since.0) * local
            + u64::from(self.examined_remote - since.1) * remote
    }
    /// Lower-case names used in counters and traces.
    pub fn step_name(step: Step) -> &'static str {
        match step {
            Step::Target => "target",
            Step::TargetIdle => "target_idle",
            Step::PrevIdle => "prev_idle",
            Step::Recent => "recent_used_cpu",
            Step::IdleCore => "idle_core",
            Step::IdleCpu => "idle_cpu",
            Step::IdleSmt => "idle_smt",
            Step::IdleGroup => "idle_group",
            Step::IdleBuddy => "idle_buddy",
            Step::WideIdle => "wide_idle",
            Step::SlowPath => "slow_path",
            Step::Fallback => "fallback",
            Step::Reference => "reference",
            Step::Pinned => "pinned",
            Step::O1Rule => "o1_rule",
        }
    }
    /// Lower-case names of affine verdicts.
    pub fn affine_name(a: Affine) -> &'static str {
        match a {
            Affine::NotAsked => "not_asked",
            Affine::WakeWide => "wake_wide",
            Affine::NoDomain => "no_domain",
            Affine::Declined => "declined",
            Affine::PulledIdle => "pulled_idle",
            Affine::KeptIdle => "kept_idle",
            Affine::PulledSync => "pulled_sync",
            Affine::PulledWeight => "pulled_weight",
            Affine::KeptWeight => "kept_weight",
            Affine::PulledBuddy => "pulled_buddy",
            Affine::PulledSibling => "pulled_sibling",
        }
    }
    /// Whether the wakee was pulled toward the waker.
    pub fn pulled(&self) -> bool {
        matches!(
            self.affine,
            Affine::PulledIdle
                | Affine::PulledSync
                | Affine::PulledWeight
                | Affine::PulledBuddy
                | Affine::PulledSibling
        )
    }
}

impl fmt::Display for PlacementRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "affine={}", Self::affine_name(self.affine))?;
        if let Some(w) = self.wake_wide {
            write!(f, " wake_wide={w}")?;
        }
        if let Some((a, b)) = self.affine_loads {
            write!(f, " this_eff={a} prev_eff={b}")?;
        }
        if let Some(t) = self.target {
            write!(f, " target={t}")?;
        }
        write!(
            f,
            " step={} examined={}",
            Self::step_name(self.step),
            self.examined
        )?;
        if self.examined_remote > 0 {
            write!(f, " examined_remote={}", self.examined_remote)?;
        }
        Ok(())
    }
}

/// Per-task state that placement heuristics keep.
#[derive(Clone, Debug, Default)]
pub struct TaskHints {
    /// `wakee_flips`: how often this task switched whom it wakes.
    pub wakee_flips: u32,
    /// When flips were last decayed.
    pub wakee_flip_decay_ts: Time,
    /// `last_wakee`.
    pub last_wakee: Option<TaskId>,
    /// Consecutive wakeups of `last_wakee` (WAKEUP_BUDDY).
    pub wakee_streak: u32,
    /// `recent_used_cpu`.
    pub recent_used_cpu: Option<CpuId>,
    /// SIS_CACHE: EWMA (1/8) of the task's short sleeps, ns (kept only under
    /// [`crate::Features::track_short_sleep`]).
    pub sleep_avg: u64,
    /// SIS_CACHE: when the task last blocked (under `track_short_sleep`).
    pub sleep_start: Option<Time>,
    /// Migration damping: when the task last changed CPU (under
    /// [`crate::Features::track_migrations`]).
    pub last_migration: Option<Time>,
}

/// Per-LLC shared state (`sd_llc_shared`).
#[derive(Clone, Debug, Default)]
pub struct LlcHints {
    /// `has_idle_cores`: set when a CPU goes idle with all siblings idle, cleared by a failed
    /// idle-core scan (a hysteresis: the kernel's `set_idle_cores` / `test_idle_cores`, 4.9 on).
    pub has_idle_cores: bool,
    /// SIS_UTIL scan budget, refreshed at LLC-level periodic balancing.
    pub nr_idle_scan: u32,
    /// SIS_PROP: average scan cost (ns), EWMA 1/8.
    pub avg_scan_cost: f64,
    /// The idle cpumask of the 2020/2022 scan filters: set at idle entry, cleared by the
    /// tick of a busy CPU (kept only under [`crate::Features::idle_cpumask`]).
    pub idle_cpus: CpuSet,
}

/// Per-CPU hints (SIS_PROP aging of avg_idle).
#[derive(Clone, Debug, Default)]
pub struct CpuHints {
    /// `wake_avg_idle` (5.13+).
    pub wake_avg_idle: u64,
    /// `wake_stamp` in jiffies.
    pub wake_stamp: u64,
    /// SIS_CACHE: `rq->cache_hot_timeout`, the end of the reservation a short sleeper
    /// left on this CPU (under [`crate::Features::track_short_sleep`]).
    pub cache_hot_until: Time,
    /// Mazumdar's 2019 rotating scan: where the next `select_idle_cpu` from this target
    /// starts (`next_cpu`; written only under that switch).
    pub sis_next_cpu: Option<CpuId>,
}

/// Mutable state shared between the engine and policies.
#[derive(Clone, Debug, Default)]
pub struct Hints {
    /// Indexed by task.
    pub task: Vec<TaskHints>,
    /// Indexed by LLC index (`Topology::cpu(c).llc`).
    pub llc: Vec<LlcHints>,
    /// Indexed by CPU.
    pub cpu: Vec<CpuHints>,
}

/// A read-only view of the machine at one instant.
pub struct SchedView<'a> {
    pub(crate) now: Time,
    pub(crate) topo: &'a Topology,
    pub(crate) domains: &'a SchedDomains,
    pub(crate) cpus: &'a [Cpu],
    pub(crate) tasks: &'a [Task],
    pub(crate) cfg: &'a SchedConfig,
    pub(crate) profile: &'a crate::profile::MachineProfile,
    pub(crate) nr_overloaded: usize,
}

impl<'a> SchedView<'a> {
    /// Now.
    pub fn now(&self) -> Time {
        self.now
    }
    /// Jiffies at `now`.
    pub fn jiffies(&self) -> u64 {
        self.now / self.cfg.tunables.tick_ns()
    }
    /// The machine.
    pub fn topo(&self) -> &'a Topology {
        self.topo
    }
    /// The domain tree.
    pub fn domains(&self) -> &'a SchedDomains {
        self.domains
    }
    /// The kernel configuration.
    pub fn config(&self) -> &'a SchedConfig {
        self.cfg
    }
    /// The machine profile (for policies that weigh costs).
    pub fn profile(&self) -> &'a crate::profile::MachineProfile {
        self.profile
    }
    /// Number of CPUs.
    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }
    /// `idle_cpu()`: nothing running, nothing queued, and (when `ttwu_pending` is visible in
    /// this era) no wakeup on its way.
    pub fn idle(&self, cpu: CpuId) -> bool {
        let c = &self.cpus[cpu];
        c.curr.is_none()
            && c.nr_running == 0
            && (c.pending == 0 || !self.cfg.features.ttwu_pending_visible)
    }
    /// [`SchedView::idle`] of `cpu`, counted in `rec` as read by a placement on `this`
    /// (see [`PlacementRecord::count_read`]): the scan helper of a policy's search.
    pub fn idle_counted(&self, this: CpuId, cpu: CpuId, rec: &mut PlacementRecord) -> bool {
        rec.count_read(self.topo, this, cpu);
        self.idle(cpu)
    }
    /// `available_idle_cpu()` (no vCPU preemption in the simulator: same as idle).
    pub fn available_idle(&self, cpu: CpuId) -> bool {
        self.idle(cpu)
    }
    /// 2.6.32 `cfs_rq.nr_running == 0` test (ignores a wakeup in flight).
    pub fn cfs_empty(&self, cpu: CpuId) -> bool {
        self.cpus[cpu].nr_running == 0
    }
    /// Whether every SMT sibling of `cpu` is idle.
    pub fn core_idle(&self, cpu: CpuId) -> bool {
        self.topo.smt_siblings(cpu).iter().all(|s| self.idle(s))
    }
    /// `nr_running` (plus visible pending wakeups).
    pub fn nr_running(&self, cpu: CpuId) -> u32 {
        let c = &self.cpus[cpu];
        c.nr_running
            + if self.cfg.features.ttwu_pending_visible {
                c.pending
            } else {
                0
            }
    }
    /// Runnable tasks not counting delayed-dequeue ones (6.12 `h_nr_runnable`).
    pub fn nr_runnable(&self, cpu: CpuId) -> u32 {
        self.nr_running(cpu) - self.cpus[cpu].nr_delayed
    }
    /// Whether some CPU has more than one task (`root_domain.overload`).
    pub fn overloaded(&self) -> bool {
        self.nr_overloaded > 0
    }
    /// CPU capacity (1024 = full).
    pub fn capacity(&self, cpu: CpuId) -> u64 {
        self.topo.cpu(cpu).capacity as u64
    }
    /// `cpu_load()` / `weighted_cpuload()` in the era's load signal.
    pub fn cpu_load(&self, cpu: CpuId) -> u64 {
        let c = &self.cpus[cpu];
        match self.cfg.load_signal {
            LoadSignal::Instant => c.runnable_weight,
            LoadSignal::PeltRunnable => {
                // runnable_load_avg: the aggregate of the tasks runnable here now.
                let mut sig = c.runnable;
                sig.advance(self.now, c.runnable_weight as f64);
                crate::time::round_u64(sig.sum / pelt::divider(self.now))
            }
            LoadSignal::PeltBlocked => {
                let mut sig = c.load;
                sig.advance(self.now, c.runnable_weight as f64);
                crate::time::round_u64(sig.sum / pelt::divider(self.now))
            }
        }
    }
    /// `source_load(cpu, idx)` (2.6.x-4.18): with `idx` > 0 the smaller of `cpu_load[idx-1]`
    /// and the current load (`LB_BIAS`); with 0 the current load. See [`crate::cpu_load`].
    pub fn source_load(&self, cpu: CpuId, idx: usize) -> u64 {
        let now = self.cpu_load(cpu);
        if idx == 0 {
            return now;
        }
        crate::cpu_load::source_load(self.cpu_load_avg(cpu, idx - 1), now)
    }
    /// `target_load(cpu, idx)`: the larger of `cpu_load[idx-1]` and the current load.
    pub fn target_load(&self, cpu: CpuId, idx: usize) -> u64 {
        let now = self.cpu_load(cpu);
        if idx == 0 {
            return now;
        }
        crate::cpu_load::target_load(self.cpu_load_avg(cpu, idx - 1), now)
    }
    /// `rq->cpu_load[i]` as read now (decayed for the ticks an idle CPU missed).
    fn cpu_load_avg(&self, cpu: CpuId, i: usize) -> u64 {
        let c = &self.cpus[cpu];
        c.cpu_load_avg
            .read(i, self.now, self.cfg.tunables.tick_ns(), c.curr.is_none())
    }
    fn task_load_f(&self, t: TaskId) -> f64 {
        let task = &self.tasks[t];
        let active = if matches!(task.state, TaskState::Running(_) | TaskState::Queued(_)) {
            1.0
        } else {
            0.0
        };
        let mut s = task.load;
        s.advance(self.now, active);
        task.weight as f64 * s.sum / pelt::divider(self.now)
    }
    /// `cpu_util()`: PELT utilisation, 0..=capacity.
    pub fn cpu_util(&self, cpu: CpuId) -> u64 {
        let c = &self.cpus[cpu];
        let mut sig = c.util;
        let running = if c.curr.is_some() { 1.0 } else { 0.0 };
        sig.advance(self.now, running);
        crate::time::round_u64((sig.sum / pelt::divider(self.now)) * 1024.0).min(self.capacity(cpu))
    }
    /// `task_h_load(p)` in the era's load signal (static weight before PELT).
    pub fn task_load(&self, t: TaskId) -> u64 {
        match self.cfg.load_signal {
            LoadSignal::Instant => self.tasks[t].weight,
            _ => crate::time::round_u64(self.task_load_f(t)),
        }
    }
    /// `task_util(p)`, 0..=1024.
    pub fn task_util(&self, t: TaskId) -> u64 {
        let task = &self.tasks[t];
        let running = if matches!(task.state, TaskState::Running(_)) {
            1.0
        } else {
            0.0
        };
        let mut s = task.util;
        s.advance(self.now, running);
        crate::time::round_u64((s.sum / pelt::divider(self.now)) * 1024.0)
    }
    /// Weight of a task.
    pub fn weight(&self, t: TaskId) -> u64 {
        self.tasks[t].weight
    }
    /// Where a task last ran / is queued.
    pub fn task_cpu(&self, t: TaskId) -> CpuId {
        self.tasks[t].cpu
    }
    /// CPUs a task may run on.
    pub fn allowed(&self, t: TaskId) -> &'a CpuSet {
        &self.tasks[t].allowed
    }
    /// Address space of a task.
    pub fn mm(&self, t: TaskId) -> u32 {
        self.tasks[t].mm
    }
    /// Nice level of a task.
    pub fn nice(&self, t: TaskId) -> i32 {
        self.tasks[t].nice
    }
    /// 2.6.2x–2.6.33 `avg_overlap`: how long the task keeps running after waking another.
    pub fn avg_overlap(&self, t: TaskId) -> u64 {
        self.tasks[t].avg_overlap
    }
    /// The task running on `cpu`.
    pub fn curr(&self, cpu: CpuId) -> Option<TaskId> {
        self.cpus[cpu].curr
    }
    /// Tasks queued (not running) on `cpu`, in pick order.
    pub fn queued(&self, cpu: CpuId) -> impl Iterator<Item = TaskId> + '_ {
        self.cpus[cpu].rq.tree.iter().map(|&(_, t)| t)
    }
    /// Tasks queued on `cpu`, least recently run first (`cfs_tasks` walked from its tail).
    pub fn queued_coldest(&self, cpu: CpuId) -> impl Iterator<Item = TaskId> + '_ {
        self.cpus[cpu].rq.coldest(self.tasks)
    }
    /// When a task last started running (`exec_start`, for task_hot).
    pub fn exec_start(&self, t: TaskId) -> Time {
        self.tasks[t].exec_start
    }
    /// When a task last stopped running.
    pub fn last_ran(&self, t: TaskId) -> Time {
        self.tasks[t].last_ran_end
    }
    /// Whether `t` is a CFS buddy (next/last) on its CPU.
    pub fn is_buddy(&self, t: TaskId) -> bool {
        let c = &self.cpus[self.tasks[t].cpu];
        c.rq.next == Some(t) || c.rq.last == Some(t)
    }
    /// Whether a task is delayed-dequeued (blocked but still queued, 6.12+).
    pub fn is_delayed(&self, t: TaskId) -> bool {
        self.tasks[t].delayed
    }
    /// `rq.avg_idle`.
    pub fn avg_idle(&self, cpu: CpuId) -> u64 {
        self.cpus[cpu].avg_idle
    }
    /// When the CPU became idle (`idle_stamp`), if idle.
    pub fn idle_since(&self, cpu: CpuId) -> Option<Time> {
        match self.cpus[cpu].mode {
            CpuMode::Idle { since, .. } => Some(since),
            _ => None,
        }
    }
    /// Exit latency of the idle state the CPU is in now (0 when not idle); used by
    /// `find_idlest_group_cpu` to prefer shallow states.
    pub fn idle_exit_latency(&self, cpu: CpuId) -> u64 {
        match self.cpus[cpu].mode {
            CpuMode::Idle { since, state, hold } => {
                crate::idle::state_at(self.profile, state, since, hold, self.now)
                    .map_or(0, |s| s.exit_ns)
            }
            _ => 0,
        }
    }
    /// The class in force (policies rarely care).
    pub fn class(&self) -> ClassKind {
        self.cfg.class
    }
}

/// A wake-up placement policy. Implementations must be deterministic given the view,
/// hints and their own seeded state.
pub trait PlacementPolicy: Send {
    /// Display name including switches (e.g. `linux-3.10,WAKEUP_BUDDY`).
    fn name(&self) -> String;

    /// Chooses a CPU for `ctx.wakee` (`select_task_rq`). The engine falls back to an
    /// allowed CPU if the answer is not allowed.
    fn select_task_rq(
        &mut self,
        ctx: &WakeCtx,
        view: &SchedView<'_>,
        hints: &mut Hints,
        rec: &mut PlacementRecord,
    ) -> CpuId;

    /// Called when the engine creates a task (fork or initial), before its placement.
    fn task_created(&mut self, _task: TaskId, _parent: Option<TaskId>, _hints: &mut Hints) {}
}

/// Keep every task on its previous CPU (forks stay on the parent's CPU). The reference
/// for "no placement at all".
#[derive(Clone, Debug, Default)]
pub struct PrevCpu;

impl PlacementPolicy for PrevCpu {
    fn name(&self) -> String {
        "prev".into()
    }
    fn select_task_rq(
        &mut self,
        ctx: &WakeCtx,
        _view: &SchedView<'_>,
        _hints: &mut Hints,
        rec: &mut PlacementRecord,
    ) -> CpuId {
        rec.step = Step::Reference;
        ctx.prev_cpu
    }
}

/// Always the waker's CPU (maximal stacking).
#[derive(Clone, Debug, Default)]
pub struct WakerCpu;

impl PlacementPolicy for WakerCpu {
    fn name(&self) -> String {
        "waker".into()
    }
    fn select_task_rq(
        &mut self,
        ctx: &WakeCtx,
        _view: &SchedView<'_>,
        _hints: &mut Hints,
        rec: &mut PlacementRecord,
    ) -> CpuId {
        rec.step = Step::Reference;
        ctx.waker_cpu
    }
}

/// A fixed CPU per task (tests and "what if" placements); unlisted tasks stay on prev.
#[derive(Clone, Debug, Default)]
pub struct FixedPlacement {
    /// `cpu_of[task]`.
    pub cpu_of: Vec<Option<CpuId>>,
}

impl PlacementPolicy for FixedPlacement {
    fn name(&self) -> String {
        "fixed".into()
    }
    fn select_task_rq(
        &mut self,
        ctx: &WakeCtx,
        _view: &SchedView<'_>,
        _hints: &mut Hints,
        rec: &mut PlacementRecord,
    ) -> CpuId {
        rec.step = Step::Reference;
        self.cpu_of
            .get(ctx.wakee.index())
            .copied()
            .flatten()
            .unwrap_or(ctx.prev_cpu)
    }
}
