//! schedlab-profile: the machine profile schema `schedlab.profile/1` — every cost the
//! simulated machine charges, its units, defaults, validation and TOML form — and the
//! built-in profiles (`profiles/*.toml` at the repository root, compiled in).
//!
//! One schema for both sides of the validation: the simulator (`schedlab-engine`, which
//! re-exports it as `schedlab_engine::profile`) reads profiles through [`MachineProfile`],
//! and the host harness (`schedlab-host`, which never links the simulator) writes the
//! profiles it calibrates through the same struct ([`MachineProfile::to_toml_annotated`]),
//! so a key cannot exist on one side only.
//!
//! Per-distance costs are keyed by [`DistanceClass`] (from `schedlab-vocab`), the classes
//! `schedlab-topo` computes and the calibration measures.
//!
//! Invariant: depends on no schedlab crate but `schedlab-vocab`. Numbers round-trip: a
//! profile written by [`MachineProfile::to_toml`] parses back to the same `f64`s.
#![warn(missing_docs)]

mod annotate;
mod builtin;
mod overlay;

pub use builtin::BUILTIN;
pub use overlay::unit_of;
pub use schedlab_vocab::DistanceClass;

use serde::{Deserialize, Serialize};

/// Schema tag of profile files.
pub const PROFILE_SCHEMA: &str = "schedlab.profile/1";

/// The slowest an SMT sibling may run relative to a lone thread (below is no machine, and
/// a near-zero speed turned busy fractions into nonsense).
pub const MIN_SMT_SPEED: f64 = 0.01;
/// The longest any one operation of the profile may take, ns (one second).
pub const MAX_OP_NS: u64 = 1_000_000_000;

/// All the costs of one machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MachineProfile {
    /// Schema tag (`schedlab.profile/1`).
    pub schema: String,
    /// Profile name.
    pub name: String,
    /// Where the numbers come from.
    pub source: String,
    /// Execution speed and switch costs.
    pub cpu: CpuCosts,
    /// Cache affinity of a task's own working set.
    pub cache: CacheCosts,
    /// Data passed between tasks.
    pub transfer: TransferCosts,
    /// Wakeup path latency.
    pub wakeup: WakeupCosts,
    /// Cost of deciding (searches, balancing).
    pub search: SearchCosts,
    /// Cache lines of shared kernel objects that move between the CPUs using them.
    pub contention: ContentionCosts,
}

/// Execution speed and switch costs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CpuCosts {
    /// Per-thread speed when 1, 2, ... threads of a core are busy.
    pub smt_speed: Vec<f64>,
    /// Switch between threads of one process, ns.
    pub ctx_switch_ns: u64,
    /// Switch between processes (address-space change), ns.
    pub ctx_switch_mm_ns: u64,
    /// Entry and exit of one syscall, ns.
    pub syscall_ns: u64,
    /// Extra run time fraction per step of `distance/10 - 1` away from the home node, at
    /// memory intensity 1.
    pub remote_memory_slowdown: f64,
    /// Parent-side cost of fork (copying the address space description), ns.
    pub fork_ns: u64,
    /// Cost of an execve (loading the new image), ns.
    pub exec_ns: u64,
    /// Run-to-run noise: each CPU burst (user work or syscall) takes `1 ± jitter` (uniform)
    /// times its nominal cost, drawn from the run's machine stream. Real machines vary from
    /// interrupts, frequency and cache state; this makes repetitions with different seeds
    /// differ by a little, as on hardware. 0 makes every repetition identical.
    pub jitter: f64,
}

/// Cache refetch costs, per 64-byte line, by how far the task moved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheCosts {
    /// Cache line size.
    pub line_bytes: u64,
    /// Moved to an SMT sibling.
    pub refetch_smt_ns: f64,
    /// Moved to another core of the same LLC.
    pub refetch_llc_ns: f64,
    /// Moved to another LLC of the same node (or refetched from memory).
    pub refetch_cross_llc_ns: f64,
    /// Moved to another node, at distance 20 (scaled by distance).
    pub refetch_cross_node_ns: f64,
    /// Time off-CPU after which half of the working set has been evicted, µs.
    pub hot_half_life_us: f64,
}

/// Per-byte costs for a reader of data written by another task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TransferCosts {
    /// The copy itself, wherever the data is.
    pub copy_ns_per_byte: f64,
    /// Extra when written on the same CPU.
    pub same_cpu_ns_per_byte: f64,
    /// Extra when written on an SMT sibling.
    pub smt_ns_per_byte: f64,
    /// Extra when written on another core of the LLC.
    pub llc_ns_per_byte: f64,
    /// Extra when written in another LLC of the node.
    pub cross_llc_ns_per_byte: f64,
    /// Extra when written on another node (distance 20; scaled by distance).
    pub cross_node_ns_per_byte: f64,
    /// Kernel work of one pipe write or read beyond the syscall and the copy (buffer and
    /// page handling), ns.
    pub pipe_op_ns: u64,
    /// Kernel work of one AF_UNIX stream send or receive beyond the syscall and the copy
    /// (skb allocation, socket locking), ns.
    pub unix_op_ns: u64,
    /// Kernel work of one TCP loopback send or receive beyond the syscall and the copy, ns.
    /// Defaults (with `tcp_delivery_ns`) put a 1-byte loopback round trip near the ~10 µs
    /// reported on LKML for netperf TCP_RR on Zen3 (102,840 transactions/s, one client).
    pub tcp_op_ns: u64,
    /// Loopback delivery (softirq receive path) of one TCP message, charged to the sender's
    /// CPU, ns.
    pub tcp_delivery_ns: u64,
    /// Cache lines of kernel metadata a message drags from the writer's CPU to the reader's
    /// (pipe buffer or skb head, socket and wait-queue state), charged to the reader at the
    /// `cache.refetch_*` cost of the distance between the two CPUs. This, more than the
    /// payload, is what makes N:N messaging across sockets expensive.
    pub message_lines: f64,
}

/// Shared-object contention: the cache lines an operation writes in the object itself
/// (locks, queue heads, counters), which move to the CPU of each operation from the CPU of
/// the one before. An operation from another CPU pays `lines × cache.refetch_*` at the
/// distance between the two CPUs; one from the same CPU pays nothing. The more CPUs (and
/// LLCs, nodes) use an object, the more of its operations pay, and at the larger distances.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ContentionCosts {
    /// Lines of a pipe written by a read or a write: `pipe->mutex`, the ring's head and
    /// tail, the wait queue head.
    pub pipe_lines: f64,
    /// Lines of a socket written by a send or a receive (AF_UNIX and inet): the socket
    /// lock, the receive queue's lock and head, `sk_wmem_alloc`, the wait queue head.
    pub socket_lines: f64,
    /// Lines of a futex written by a wait or a wake: the hash bucket's lock and the futex
    /// word.
    pub futex_lines: f64,
    /// Lines of a user-space lock (the lock word) written by an acquire or a release.
    pub lock_lines: f64,
}

/// Latencies on the wakeup path.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WakeupCosts {
    /// Sending the wake IPI to a remote CPU, ns.
    pub ipi_ns: u64,
    /// Selection to enqueue on a remote CPU through the wakelist, ns.
    pub ttwu_queue_delay_ns: u64,
    /// Waker-side cost of waking a task onto its own CPU, ns.
    pub local_wake_ns: u64,
    /// Waker-side cost of waking a task onto another CPU, ns: onto an idle one (the wakelist
    /// or the IPI that ends its idle), and onto any other where `remote_busy_wake_ns` is 0.
    pub remote_wake_ns: u64,
    /// Waker-side cost of waking a task onto another CPU of its LLC that is running a task,
    /// ns: `ttwu_queue()` takes that CPU's runqueue lock and enqueues there, and sends no IPI
    /// unless the wakee preempts (`ttwu_queue_cond()` uses the wakelist only for an idle CPU
    /// or another LLC). 0: not measured, the same as `remote_wake_ns`.
    pub remote_busy_wake_ns: u64,
    /// Of `remote_wake_ns`, the sending of the IPI (the APIC write; in a guest a VM exit or a
    /// send-IPI hypercall), ns: the waker pays it after the IPI has left, so it overlaps the
    /// delivery instead of delaying the wakee. 0: not separated.
    pub ipi_send_ns: u64,
    /// Which cpuidle governor picks the idle state (`cpuidle/current_governor`).
    pub governor: Governor,
    /// Idle states, shallowest first.
    pub idle_states: Vec<IdleState>,
}

/// The cpuidle governor: what decides which idle state a CPU that goes idle enters, and so
/// what the wakeup that ends the idle period pays to leave it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Governor {
    /// `drivers/cpuidle/governors/menu.c` (2.6.24 on, the default of tickless kernels): the
    /// next timer scaled by a learnt correction factor, or the typical recent idle interval.
    #[default]
    Menu,
    /// `drivers/cpuidle/governors/teo.c` (5.1 on): the timer's state unless most recent
    /// wakeups came sooner ("intercepts").
    Teo,
    /// `drivers/cpuidle/governors/haltpoll.c` (5.4 on, KVM guests): poll for an adaptive
    /// window (50-200 µs) before halting; needs a polling first state.
    Haltpoll,
    /// No prediction: a CPU is in the deepest state whose target residency its idle period
    /// has reached. A perfect governor, and what a guest without a cpuidle driver sees when
    /// the host decides (KVM halt polling, then descheduling the halted vCPU).
    Elapsed,
}

impl IdleState {
    /// cpuidle's `POLL` state (`cpuidle_poll_state_init()`): exit 0, residency 0, polling.
    pub fn poll() -> IdleState {
        IdleState {
            name: "POLL".into(),
            exit_ns: 0,
            target_residency_ns: 0,
            polling: true,
        }
    }
}

impl Governor {
    /// The name used in profiles and sysfs.
    pub fn name(self) -> &'static str {
        match self {
            Governor::Menu => "menu",
            Governor::Teo => "teo",
            Governor::Haltpoll => "haltpoll",
            Governor::Elapsed => "elapsed",
        }
    }
}

/// One idle state (C-state).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdleState {
    /// Name, e.g. `C1`.
    pub name: String,
    /// Exit latency, ns.
    pub exit_ns: u64,
    /// Idle time after which the governor picks this state, ns.
    pub target_residency_ns: u64,
    /// The CPU polls `need_resched` in this state (`CPUIDLE_FLAG_POLLING`, the `POLL`
    /// state): a wakeup sets the flag and sends no IPI.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub polling: bool,
}

/// The cost of looking at other CPUs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchCosts {
    /// Per CPU examined by a wakeup search in the waker's LLC, ns.
    pub scan_per_cpu_ns: u64,
    /// Per CPU examined in another LLC, ns.
    pub scan_per_cpu_remote_ns: u64,
    /// Per CPU examined by a balancing pass, ns.
    pub lb_per_cpu_ns: u64,
    /// Per task examined by a balancing pass, ns.
    pub lb_per_task_ns: u64,
}

impl Default for MachineProfile {
    fn default() -> Self {
        MachineProfile {
            schema: PROFILE_SCHEMA.into(),
            name: "default".into(),
            source: "starting values: a 2010s x86 server with shallow C-states".into(),
            cpu: CpuCosts::default(),
            cache: CacheCosts::default(),
            transfer: TransferCosts::default(),
            wakeup: WakeupCosts::default(),
            search: SearchCosts::default(),
            contention: ContentionCosts::default(),
        }
    }
}

impl Default for ContentionCosts {
    fn default() -> Self {
        ContentionCosts {
            pipe_lines: 3.0,
            socket_lines: 4.0,
            futex_lines: 2.0,
            lock_lines: 1.0,
        }
    }
}

impl Default for CpuCosts {
    fn default() -> Self {
        CpuCosts {
            smt_speed: vec![1.0, 0.62],
            ctx_switch_ns: 1200,
            ctx_switch_mm_ns: 1800,
            syscall_ns: 150,
            remote_memory_slowdown: 0.5,
            fork_ns: 30_000,
            exec_ns: 100_000,
            jitter: 0.02,
        }
    }
}

impl Default for CacheCosts {
    fn default() -> Self {
        CacheCosts {
            line_bytes: 64,
            refetch_smt_ns: 2.0,
            refetch_llc_ns: 15.0,
            refetch_cross_llc_ns: 60.0,
            refetch_cross_node_ns: 120.0,
            hot_half_life_us: 2000.0,
        }
    }
}

impl Default for TransferCosts {
    fn default() -> Self {
        TransferCosts {
            copy_ns_per_byte: 0.1,
            same_cpu_ns_per_byte: 0.0,
            smt_ns_per_byte: 0.02,
            llc_ns_per_byte: 0.08,
            cross_llc_ns_per_byte: 0.25,
            cross_node_ns_per_byte: 0.4,
            pipe_op_ns: 300,
            unix_op_ns: 1200,
            tcp_op_ns: 1000,
            tcp_delivery_ns: 800,
            message_lines: 8.0,
        }
    }
}

impl Default for WakeupCosts {
    fn default() -> Self {
        WakeupCosts {
            ipi_ns: 1500,
            ttwu_queue_delay_ns: 2000,
            local_wake_ns: 300,
            remote_wake_ns: 1000,
            remote_busy_wake_ns: 0,
            ipi_send_ns: 0,
            governor: Governor::Menu,
            idle_states: vec![
                IdleState {
                    name: "C1".into(),
                    exit_ns: 2000,
                    target_residency_ns: 2000,
                    polling: false,
                },
                IdleState {
                    name: "C6".into(),
                    exit_ns: 80_000,
                    target_residency_ns: 600_000,
                    polling: false,
                },
            ],
        }
    }
}

impl Default for SearchCosts {
    fn default() -> Self {
        SearchCosts {
            scan_per_cpu_ns: 40,
            scan_per_cpu_remote_ns: 100,
            lb_per_cpu_ns: 50,
            lb_per_task_ns: 100,
        }
    }
}

/// Why a profile could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// TOML syntax or unknown/mistyped key.
    #[error("{path}: {message}")]
    Parse {
        /// File.
        path: String,
        /// What toml said (with line and column).
        message: String,
    },
    /// A value outside its meaningful range.
    #[error("{path}: {key} = {value}: {why}")]
    Value {
        /// File.
        path: String,
        /// Dotted key.
        key: String,
        /// Offending value.
        value: String,
        /// What was expected.
        why: String,
    },
    /// Unreadable file.
    #[error("cannot read profile {path}: {source}")]
    Io {
        /// File.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
}

impl MachineProfile {
    /// Parses TOML text; `path` is only used in messages.
    pub fn from_toml(text: &str, path: &str) -> Result<Self, ProfileError> {
        let p: MachineProfile = toml::from_str(text).map_err(|e| ProfileError::Parse {
            path: path.into(),
            message: e.to_string(),
        })?;
        p.validate(path)?;
        Ok(p)
    }

    /// Reads a profile file.
    pub fn load(path: &std::path::Path) -> Result<Self, ProfileError> {
        let text = std::fs::read(path)
            .and_then(schedlab_vocab::text::decode_io)
            .map_err(|source| ProfileError::Io {
                path: path.display().to_string(),
                source,
            })?;
        Self::from_toml(&text, &path.display().to_string())
    }

    /// Renders as TOML, in the layout of `profiles/*.toml` (one line per value).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    /// Checks ranges.
    pub fn validate(&self, path: &str) -> Result<(), ProfileError> {
        let bad = |key: &str, value: String, why: &str| ProfileError::Value {
            path: path.into(),
            key: key.into(),
            value,
            why: why.into(),
        };
        if self.schema != PROFILE_SCHEMA {
            return Err(bad(
                "schema",
                self.schema.clone(),
                "expected \"schedlab.profile/1\"",
            ));
        }
        if self.cpu.smt_speed.is_empty() {
            return Err(bad(
                "cpu.smt_speed",
                "[]".into(),
                "needs at least one entry (1.0)",
            ));
        }
        for (i, s) in self.cpu.smt_speed.iter().enumerate() {
            if !(s.is_finite() && *s >= MIN_SMT_SPEED && *s <= 1.0) {
                return Err(bad(
                    &format!("cpu.smt_speed[{i}]"),
                    s.to_string(),
                    "must be in [0.01, 1] (the speed of a thread with that many siblings busy)",
                ));
            }
        }
        if !(self.cpu.jitter.is_finite() && (0.0..1.0).contains(&self.cpu.jitter)) {
            return Err(bad(
                "cpu.jitter",
                self.cpu.jitter.to_string(),
                "must be in [0, 1)",
            ));
        }
        if self.cache.line_bytes == 0 || self.cache.line_bytes > 4096 {
            return Err(bad(
                "cache.line_bytes",
                self.cache.line_bytes.to_string(),
                "must be in 1..=4096",
            ));
        }
        // Every per-operation time is at most a second: larger is no machine, and a sum of
        // them must not overflow the simulator's u64 nanoseconds.
        let mut times = vec![
            ("cpu.ctx_switch_ns", self.cpu.ctx_switch_ns),
            ("cpu.ctx_switch_mm_ns", self.cpu.ctx_switch_mm_ns),
            ("cpu.syscall_ns", self.cpu.syscall_ns),
            ("cpu.fork_ns", self.cpu.fork_ns),
            ("cpu.exec_ns", self.cpu.exec_ns),
            ("transfer.pipe_op_ns", self.transfer.pipe_op_ns),
            ("transfer.unix_op_ns", self.transfer.unix_op_ns),
            ("transfer.tcp_op_ns", self.transfer.tcp_op_ns),
            ("transfer.tcp_delivery_ns", self.transfer.tcp_delivery_ns),
            ("wakeup.ipi_ns", self.wakeup.ipi_ns),
            (
                "wakeup.ttwu_queue_delay_ns",
                self.wakeup.ttwu_queue_delay_ns,
            ),
            ("wakeup.local_wake_ns", self.wakeup.local_wake_ns),
            ("wakeup.remote_wake_ns", self.wakeup.remote_wake_ns),
            (
                "wakeup.remote_busy_wake_ns",
                self.wakeup.remote_busy_wake_ns,
            ),
            ("wakeup.ipi_send_ns", self.wakeup.ipi_send_ns),
            ("search.scan_per_cpu_ns", self.search.scan_per_cpu_ns),
            (
                "search.scan_per_cpu_remote_ns",
                self.search.scan_per_cpu_remote_ns,
            ),
            ("search.lb_per_cpu_ns", self.search.lb_per_cpu_ns),
            ("search.lb_per_task_ns", self.search.lb_per_task_ns),
        ];
        for st in &self.wakeup.idle_states {
            times.push(("wakeup.idle_states.exit_ns", st.exit_ns));
            times.push((
                "wakeup.idle_states.target_residency_ns",
                st.target_residency_ns,
            ));
        }
        for (k, v) in times {
            if v > MAX_OP_NS {
                return Err(bad(
                    k,
                    v.to_string(),
                    "must be at most 1000000000 (one second)",
                ));
            }
        }
        let bounded = [
            ("transfer.message_lines", self.transfer.message_lines, 1e6),
            ("contention.pipe_lines", self.contention.pipe_lines, 1e6),
            ("contention.socket_lines", self.contention.socket_lines, 1e6),
            ("contention.futex_lines", self.contention.futex_lines, 1e6),
            ("contention.lock_lines", self.contention.lock_lines, 1e6),
            (
                "cpu.remote_memory_slowdown",
                self.cpu.remote_memory_slowdown,
                100.0,
            ),
            ("cache.refetch_smt_ns", self.cache.refetch_smt_ns, 1e6),
            ("cache.refetch_llc_ns", self.cache.refetch_llc_ns, 1e6),
            (
                "cache.refetch_cross_llc_ns",
                self.cache.refetch_cross_llc_ns,
                1e6,
            ),
            (
                "cache.refetch_cross_node_ns",
                self.cache.refetch_cross_node_ns,
                1e6,
            ),
            ("cache.hot_half_life_us", self.cache.hot_half_life_us, 1e9),
            (
                "transfer.copy_ns_per_byte",
                self.transfer.copy_ns_per_byte,
                1e3,
            ),
            (
                "transfer.same_cpu_ns_per_byte",
                self.transfer.same_cpu_ns_per_byte,
                1e3,
            ),
            (
                "transfer.smt_ns_per_byte",
                self.transfer.smt_ns_per_byte,
                1e3,
            ),
            (
                "transfer.llc_ns_per_byte",
                self.transfer.llc_ns_per_byte,
                1e3,
            ),
            (
                "transfer.cross_llc_ns_per_byte",
                self.transfer.cross_llc_ns_per_byte,
                1e3,
            ),
            (
                "transfer.cross_node_ns_per_byte",
                self.transfer.cross_node_ns_per_byte,
                1e3,
            ),
        ];
        for (k, v, max) in bounded {
            if !(v.is_finite() && (0.0..=max).contains(&v)) {
                return Err(bad(
                    k,
                    v.to_string(),
                    &format!("must be a number in [0, {max}]"),
                ));
            }
        }
        let nonneg = [
            (
                "cpu.remote_memory_slowdown",
                self.cpu.remote_memory_slowdown,
            ),
            ("cache.refetch_smt_ns", self.cache.refetch_smt_ns),
            ("cache.refetch_llc_ns", self.cache.refetch_llc_ns),
            (
                "cache.refetch_cross_llc_ns",
                self.cache.refetch_cross_llc_ns,
            ),
            (
                "cache.refetch_cross_node_ns",
                self.cache.refetch_cross_node_ns,
            ),
            ("transfer.copy_ns_per_byte", self.transfer.copy_ns_per_byte),
            (
                "transfer.same_cpu_ns_per_byte",
                self.transfer.same_cpu_ns_per_byte,
            ),
            ("transfer.smt_ns_per_byte", self.transfer.smt_ns_per_byte),
            ("transfer.llc_ns_per_byte", self.transfer.llc_ns_per_byte),
            (
                "transfer.cross_llc_ns_per_byte",
                self.transfer.cross_llc_ns_per_byte,
            ),
            (
                "transfer.cross_node_ns_per_byte",
                self.transfer.cross_node_ns_per_byte,
            ),
        ];
        for (k, v) in nonneg {
            if !(v.is_finite() && v >= 0.0) {
                return Err(bad(k, v.to_string(), "must be a non-negative number"));
            }
        }
        if !(self.cache.hot_half_life_us.is_finite() && self.cache.hot_half_life_us > 0.0) {
            return Err(bad(
                "cache.hot_half_life_us",
                self.cache.hot_half_life_us.to_string(),
                "must be positive",
            ));
        }
        for w in self.wakeup.idle_states.windows(2) {
            if w[1].target_residency_ns < w[0].target_residency_ns {
                return Err(bad(
                    "wakeup.idle_states",
                    w[1].name.clone(),
                    "states must be listed shallowest first (increasing target_residency_ns)",
                ));
            }
        }
        if self.wakeup.ipi_send_ns > self.wakeup.remote_wake_ns {
            return Err(bad(
                "wakeup.ipi_send_ns",
                self.wakeup.ipi_send_ns.to_string(),
                "is a part of remote_wake_ns and cannot exceed it",
            ));
        }
        let states = &self.wakeup.idle_states;
        if let Some(i) = states.iter().skip(1).position(|s| s.polling) {
            return Err(bad(
                "wakeup.idle_states",
                states[i + 1].name.clone(),
                "only the first state can be a polling one (POLL is cpuidle's state 0)",
            ));
        }
        if self.wakeup.governor == Governor::Haltpoll && !(states.len() >= 2 && states[0].polling) {
            return Err(bad(
                "wakeup.governor",
                "haltpoll".into(),
                "needs a polling first state and a halt state after it (as the haltpoll cpuidle driver registers)",
            ));
        }
        Ok(())
    }

    /// The built-in profile for a topology preset (`profiles/PRESET.toml`), or the default
    /// for anything else.
    pub fn for_preset(preset: &str) -> MachineProfile {
        builtin::get(preset).unwrap_or_default()
    }
}

impl CacheCosts {
    /// Cost of refetching one cache line last touched at distance `class`, ns; a cross-node
    /// line is scaled by the node distance `slit` over 20 (the remote distance the key is
    /// given at). The same CPU costs nothing.
    pub fn refetch_ns(&self, class: DistanceClass, slit: f64) -> f64 {
        match class {
            DistanceClass::Same => 0.0,
            DistanceClass::Smt => self.refetch_smt_ns,
            DistanceClass::Llc => self.refetch_llc_ns,
            DistanceClass::CrossLlc => self.refetch_cross_llc_ns,
            DistanceClass::CrossNode => self.refetch_cross_node_ns * slit / 20.0,
        }
    }
}

impl TransferCosts {
    /// Extra cost per byte of reading data written at distance `class`, ns (cross-node
    /// scaled by `slit` / 20, as [`CacheCosts::refetch_ns`]).
    pub fn ns_per_byte(&self, class: DistanceClass, slit: f64) -> f64 {
        match class {
            DistanceClass::Same => self.same_cpu_ns_per_byte,
            DistanceClass::Smt => self.smt_ns_per_byte,
            DistanceClass::Llc => self.llc_ns_per_byte,
            DistanceClass::CrossLlc => self.cross_llc_ns_per_byte,
            DistanceClass::CrossNode => self.cross_node_ns_per_byte * slit / 20.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values that would break the arithmetic (they once gave a CPU busy 19774821055818308 %,
    /// NaN jitter, a syscall that never ends) are refused by key.
    #[test]
    fn values_outside_physical_ranges_are_refused() {
        type Edit = fn(&mut MachineProfile);
        let cases: [(&str, Edit); 8] = [
            ("cpu.smt_speed[1]", |p| p.cpu.smt_speed = vec![1.0, 1e-20]),
            ("cpu.jitter", |p| p.cpu.jitter = f64::NAN),
            ("cpu.jitter", |p| p.cpu.jitter = -0.5),
            ("transfer.message_lines", |p| {
                p.transfer.message_lines = f64::NAN
            }),
            ("transfer.message_lines", |p| {
                p.transfer.message_lines = -1.0
            }),
            ("cpu.ctx_switch_ns", |p| p.cpu.ctx_switch_ns = u64::MAX),
            ("cpu.syscall_ns", |p| p.cpu.syscall_ns = u64::MAX),
            ("transfer.llc_ns_per_byte", |p| {
                p.transfer.llc_ns_per_byte = f64::INFINITY
            }),
        ];
        for (key, edit) in cases {
            let mut p = MachineProfile::default();
            edit(&mut p);
            let e = p.validate("t").unwrap_err().to_string();
            assert!(e.contains(key), "{key}: {e}");
        }
        for (preset, _) in BUILTIN {
            MachineProfile::for_preset(preset).validate(preset).unwrap();
        }
    }

    #[test]
    fn default_round_trips_through_toml() {
        let p = MachineProfile::default();
        let back = MachineProfile::from_toml(&p.to_toml(), "x").unwrap();
        assert_eq!(p, back);
    }

    #[test]
    fn unknown_key_is_named() {
        let e = MachineProfile::from_toml(
            "schema = \"schedlab.profile/1\"\n[cpu]\nctx_swich_ns = 5\n",
            "f.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("ctx_swich_ns"), "{e}");
        assert!(e.contains("f.toml"), "{e}");
    }

    #[test]
    fn bad_value_is_named() {
        let e = MachineProfile::from_toml("[cpu]\nsmt_speed = [1.0, 1.5]\n", "p.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("smt_speed[1]"), "{e}");
    }

    #[test]
    fn per_distance_costs_by_class() {
        let p = MachineProfile::default();
        assert_eq!(p.cache.refetch_ns(DistanceClass::Same, 10.0), 0.0);
        assert_eq!(p.cache.refetch_ns(DistanceClass::Llc, 10.0), 15.0);
        assert_eq!(p.cache.refetch_ns(DistanceClass::CrossNode, 40.0), 240.0);
        assert_eq!(p.transfer.ns_per_byte(DistanceClass::Smt, 10.0), 0.02);
        assert_eq!(p.transfer.ns_per_byte(DistanceClass::CrossNode, 20.0), 0.4);
    }
}
