//! The simulated machine: a discrete-event simulator of a multi-CPU Linux box.
//!
//! * [`sim::Simulation`] — one event queue (`(time, seq)` order), one clock (`u64` ns), the
//!   wakeup path, context switches, ticks, idle states and the task interpreter, each in its
//!   own child module of `sim`, its state owned by subsystems (`core`, `objects`, `idle`,
//!   `net`, `stats`, `run`);
//! * `rq` — the per-CPU runqueue data structure; `fair` — the fair class: CFS, EEVDF or the
//!   O(1) approximation; `idle` — idle states and their exit latencies; `pelt` —
//!   deterministic load tracking;
//! * [`policy`] — the [`policy::PlacementPolicy`] trait and the read-only [`policy::SchedView`];
//! * [`balance`] — the [`balance::Balancer`] trait and the sched-domain balancer;
//! * [`profile`] — the machine profile: every cost the machine charges;
//! * [`task`] / `ipc` — task programs and the objects they block on; [`wake_rules`] — how
//!   each object's wakeups are issued (`WF_SYNC`, task or softirq context);
//! * [`Counters`] — schedstat-shaped counters; [`schedstat`] — the kernel's
//!   `/proc/schedstat` counters and their text.
//!
//! # API boundary
//!
//! What other crates may use is `pub`; the rest is `pub(crate)`. The public surface is:
//!
//! * running a simulation: [`Simulation`] (`new`, `run`, the results), [`SimOptions`],
//!   [`EndReason`], [`TaskStat`], [`Counters`], [`WakeGraph`];
//! * describing a workload: [`task`] ([`Workload`], [`TaskSpec`], [`Op`]), [`Dist`],
//!   [`ChannelKind`], [`rwlock::RwWake`];
//! * configuring the scheduler: [`config`] ([`SchedConfig`] and its parts), [`wake_rules`],
//!   [`cpu_load::LoadIdx`], [`profile`] ([`MachineProfile`]);
//! * writing a placement policy or balancer: [`policy`] ([`PlacementPolicy`], [`SchedView`],
//!   [`WakeCtx`], hints and records), [`balance`] ([`Balancer`], [`CfsBalancer`]),
//!   [`balance_o1`];
//! * shared helpers: [`rng`] (the seeded streams), [`time`] (durations), [`mod@bench`] (the
//!   benchmark scenarios).
//!
//! The machine's internals — `sim`'s child modules and subsystems, `state` (per-task and
//! per-CPU state, read through [`SchedView`]), `rq`, `fair`, `pelt`, `idle`, `ipc`,
//! `seg_timers`, `counters`, `dist` — are crate-private; their public types are re-exported
//! here where the boundary needs them.
//!
//! Identical inputs and seed give identical results on any machine (see ARCHITECTURE.md).
#![warn(missing_docs)]

pub mod balance;
pub mod balance_o1;
pub mod bench;
pub mod config;
pub(crate) mod counters;
pub mod cpu_load;
pub(crate) mod dist;
pub(crate) mod fair;
pub(crate) mod idle;
pub(crate) mod ipc;
pub(crate) mod pelt;
pub mod policy;
pub mod profile;
pub mod rng;
pub(crate) mod rq;
pub mod rwlock;
pub mod schedstat;
pub(crate) mod seg_timers;
pub mod sim;
pub(crate) mod state;
pub mod task;
pub mod time;
pub mod wake_rules;

pub use balance::{Balancer, CfsBalancer, LbRules, NoBalance};
pub use config::{ClassKind, Features, LoadSignal, PreemptModel, SchedConfig, Tunables};
pub use counters::Counters;
pub use dist::Dist;
pub use ipc::ChannelKind;
pub use policy::{PlacementPolicy, PlacementRecord, SchedView, WakeCtx, WakeFlags};
pub use profile::MachineProfile;
pub use sim::wakegraph::WakeGraph;
pub use sim::{EndReason, SimError, SimOptions, Simulation, TaskStat};
pub use task::{Op, TaskSpec, Workload};
pub use wake_rules::{WakeContext, WakeRule, WakeRules};
