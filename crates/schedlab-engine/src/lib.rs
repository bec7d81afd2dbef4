//! The simulated machine: a discrete-event simulator of a multi-CPU Linux box.
//!
//! * [`sim::Simulation`] — one event queue (`(time, seq)` order), one clock (`u64` ns), the
//!   wakeup path, context switches, ticks, idle states and the task interpreter, each in its
//!   own child module of `sim`;
//! * [`rq`] — the per-CPU runqueue data structure;
//! * [`fair`] — the fair class: CFS, EEVDF or the O(1) approximation;
//! * [`idle`] — idle states and their exit latencies;
//! * [`pelt`] — deterministic load tracking;
//! * [`policy`] — the [`policy::PlacementPolicy`] trait and the read-only [`policy::SchedView`];
//! * [`balance`] — the [`balance::Balancer`] trait and the sched-domain balancer;
//! * [`profile`] — the machine profile: every cost the machine charges;
//! * [`task`] / [`ipc`] — task programs and the objects they block on; [`wake_rules`] — how
//!   each object's wakeups are issued (`WF_SYNC`, task or softirq context);
//! * [`counters`] — schedstat-shaped counters.
//!
//! Identical inputs and seed give identical results on any machine (see ARCHITECTURE.md).
#![warn(missing_docs)]

pub mod balance;
pub mod balance_o1;
pub mod bench;
pub mod config;
pub mod counters;
pub mod cpu_load;
pub mod dist;
pub mod fair;
pub mod idle;
pub mod ipc;
pub mod pelt;
pub mod policy;
pub mod profile;
pub mod rng;
pub mod rq;
pub mod rwlock;
pub mod seg_timers;
pub mod sim;
#[allow(missing_docs)]
pub(crate) mod state;
pub mod task;
pub mod time;
pub mod wake_rules;

pub use balance::{Balancer, CfsBalancer, NoBalance};
pub use config::{ClassKind, Features, LoadSignal, SchedConfig, Tunables};
pub use counters::Counters;
pub use dist::Dist;
pub use ipc::ChannelKind;
pub use policy::{PlacementPolicy, PlacementRecord, SchedView, WakeCtx, WakeFlags};
pub use profile::MachineProfile;
pub use sim::wakegraph::WakeGraph;
pub use sim::{EndReason, SimOptions, Simulation};
pub use task::{Op, TaskSpec, Workload};
pub use wake_rules::{WakeContext, WakeRule, WakeRules};
