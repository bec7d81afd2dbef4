//! What one run keeps for `explain`: the time budget's parts (CPU-ns) and every decision
//! counter as a machine total under the kernel's name where it has one (`ttwu_count`,
//! `lb_balanced.idle`, ...), taken from the engine's [`Counters`] at the end of the run.

use schedlab_engine::Counters;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The budget's parts and the decision counters of one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExplainCounters {
    /// CPUs of the machine.
    pub nr_cpus: u64,
    /// Simulated time, ns.
    pub elapsed_ns: u64,
    /// CPU time with a task on the CPU, ns.
    pub busy_ns: u64,
    /// CPU time without one, ns.
    pub idle_ns: u64,
    /// Kernel cost classes charged to running tasks, CPU-ns, by class key (see
    /// [`super::budget::CLASSES`]).
    pub costs: BTreeMap<String, u64>,
    /// Idle-exit time by idle state, CPU-ns.
    pub idle_exit: BTreeMap<String, u64>,
    /// CPU time idle while a task waited on some CPU, ns.
    pub idle_while_waiting_ns: u64,
    /// Time tasks were runnable but not running, task-ns (not CPU time).
    pub run_delay_ns: u64,
    /// Decision counters, machine totals.
    pub counts: BTreeMap<String, u64>,
}

impl ExplainCounters {
    /// Takes what `explain` needs from a finished run's counters.
    pub fn from_engine(c: &Counters) -> ExplainCounters {
        let costs = [
            ("ctx_switch", c.ctx_switch_cost_ns),
            ("wake_local", c.wake_local_cost_ns),
            ("wake_remote", c.wake_remote_cost_ns),
            ("ipi", c.ipi_send_cost_ns),
            ("refetch", c.refetch_cost_ns),
            ("transfer", c.transfer_cost_ns),
            ("contention", c.contention_ns.iter().sum()),
            ("search", c.search_cost_ns),
            ("balance", c.balance_charged_ns),
            ("softirq", c.softirq_ns),
            ("smt", c.smt_stretch_ns),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        ExplainCounters {
            nr_cpus: c.busy_ns.len() as u64,
            elapsed_ns: c.elapsed_ns,
            busy_ns: c.busy_ns.iter().sum(),
            idle_ns: c.idle_ns.iter().sum(),
            costs,
            idle_exit: c.idle_exit_ns_by_state.iter().cloned().collect(),
            idle_while_waiting_ns: c.idle_while_waiting_ns,
            run_delay_ns: c.run_delay_ns,
            counts: counts(c),
        }
    }
}

/// Every decision counter of a run by name: the engine's tallies, then `/proc/schedstat`'s
/// per-CPU and per-domain counts summed over the machine, then the idle-search tallies.
fn counts(c: &Counters) -> BTreeMap<String, u64> {
    let mut m: BTreeMap<String, u64> = [
        ("wakeups", c.wakeups),
        ("wakeups_local", c.wakeups_local),
        ("wakeups_remote", c.wakeups_remote),
        ("wakeups_affine", c.wakeups_affine),
        ("wakeups_to_idle", c.wakeups_to_idle),
        ("wakeups_sync", c.wakeups_sync),
        ("wakeups_polling", c.wakeups_polling),
        ("ipis", c.ipis),
        ("forks", c.forks),
        ("migrations_wake", c.migrations_wake),
        ("migrations_balance", c.migrations_balance),
        ("migrations_active", c.migrations_active),
        ("ctx_switches", c.ctx_switches),
        ("ctx_voluntary", c.ctx_voluntary),
        ("ctx_involuntary", c.ctx_involuntary),
        ("preempt_wakeup", c.preempt_wakeup),
        ("preempt_tick", c.preempt_tick),
        ("idle_exits", c.idle_exits),
        ("balance_passes", c.balance_passes),
        ("newidle_passes", c.newidle_passes),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    for (state, n) in &c.idle_states {
        m.insert(format!("idle_exits.{state}"), *n);
    }
    let st = &c.schedstat;
    let sum = |f: fn(&schedlab_engine::schedstat::CpuStat) -> u64| st.cpus.iter().map(f).sum();
    m.insert("yld_count".into(), sum(|c| c.yld_count));
    m.insert("sched_count".into(), sum(|c| c.sched_count));
    m.insert("sched_goidle".into(), sum(|c| c.sched_goidle));
    m.insert("ttwu_count".into(), sum(|c| c.ttwu_count));
    m.insert("ttwu_local".into(), sum(|c| c.ttwu_local));
    m.insert("timeslices".into(), sum(|c| c.timeslices));
    let (_, by, alb) = st.lb_total();
    for (i, lb) in by.iter().enumerate() {
        let t = schedlab_engine::schedstat::IDLE_TYPE_NAMES[i];
        let names = [
            "lb_count",
            "lb_balanced",
            "lb_failed",
            "lb_imbalance",
            "lb_gained",
            "lb_hot_gained",
            "lb_nobusyq",
            "lb_nobusyg",
        ];
        for (n, v) in names.iter().zip(lb.fields()) {
            m.insert(format!("{n}.{t}"), v);
        }
    }
    m.insert("alb_count".into(), alb.alb_count);
    m.insert("alb_failed".into(), alb.alb_failed);
    m.insert("alb_pushed".into(), alb.alb_pushed);
    let doms = || st.cpus.iter().flat_map(|c| &c.domains);
    m.insert(
        "ttwu_wake_remote".into(),
        doms().map(|d| d.ttwu_wake_remote).sum(),
    );
    m.insert(
        "ttwu_move_affine".into(),
        doms().map(|d| d.ttwu_move_affine).sum(),
    );
    let s = &st.sis;
    for (k, v) in [
        ("sis.searches", s.searches),
        ("sis.cpus_scanned", s.cpus_scanned),
        ("sis.idle_core", s.idle_core),
        ("sis.idle_cpu", s.idle_cpu),
        ("sis.idle_smt", s.idle_smt),
        ("sis.prev", s.prev),
        ("sis.target", s.target),
        ("sis.recent_used_cpu", s.recent_used_cpu),
        ("sis.failures", s.failures),
    ] {
        m.insert(k.into(), v);
    }
    m
}
