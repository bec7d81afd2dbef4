//! Per-run counters in the shape of schedstat (issue 3, item 7), plus the placement-path
//! tallies and the costs the machine charged.

use hdrhistogram::Histogram;
use serde::Serialize;

/// Counters of one run.
#[derive(Clone, Debug, Serialize)]
pub struct Counters {
    /// Events processed by the event loop.
    pub events: u64,
    /// try_to_wake_up calls that placed a task (not fork).
    pub wakeups: u64,
    /// ... whose chosen CPU was the waker's CPU.
    pub wakeups_local: u64,
    /// ... whose chosen CPU was another CPU.
    pub wakeups_remote: u64,
    /// ... where the policy pulled the wakee toward the waker (affine).
    pub wakeups_affine: u64,
    /// ... whose chosen CPU was idle at selection time.
    pub wakeups_to_idle: u64,
    /// ... that carried WF_SYNC.
    pub wakeups_sync: u64,
    /// ... from timers or interrupts (no waker task).
    pub wakeups_irq: u64,
    /// ... issued from NET_RX softirq context (loopback receive path on the sender's CPU).
    pub wakeups_softirq: u64,
    /// ... issued by a task (or on its behalf in softirq) without WF_SYNC.
    pub wakeups_nonsync: u64,
    /// CPU time spent in softirq receive processing (charged to the CPU that ran it), ns.
    pub softirq_ns: u64,
    /// Times a CPU's `ksoftirqd` was woken (or created).
    pub ksoftirqd_wakeups: u64,
    /// Wakeups issued by `ksoftirqd` (deferred loopback receive processing, 4.10-6.4).
    pub wakeups_by_ksoftirqd: u64,
    /// Loopback deliveries left to `ksoftirqd` instead of run at the end of the send.
    pub softirq_deferred: u64,
    /// TCP ACKs sent at once from the receive softirq (quickack, or a full segment unacked).
    pub tcp_acks_now: u64,
    /// TCP ACKs sent by the delayed-ACK timer.
    pub tcp_acks_delayed: u64,
    /// Delayed TCP ACKs carried on the receiver's next data instead.
    pub tcp_acks_carried: u64,
    /// Time wakers kept running after a remote wakeup's IPI left, until they blocked, ns.
    pub overlap_ns: u64,
    /// Cost of shared objects' cache lines moving between CPUs, ns, by class
    /// (`pipe`, `socket`, `futex`, `lock`).
    #[serde(serialize_with = "by_class")]
    pub contention_ns: [u64; 4],
    /// Fork placements.
    pub forks: u64,
    /// Task migrations done by wakeup placement.
    pub migrations_wake: u64,
    /// Task migrations done by load balancing.
    pub migrations_balance: u64,
    /// ... of which active balances (the stopper pushing a task, possibly the running one).
    pub migrations_active: u64,
    /// Migrations by lowest domain level spanning source and destination (`SMT`, `MC`, ...).
    pub migrations_by_level: Vec<(String, u64)>,
    /// Context switches.
    pub ctx_switches: u64,
    /// ... because the task blocked.
    pub ctx_voluntary: u64,
    /// ... because it was preempted.
    pub ctx_involuntary: u64,
    /// Preemptions decided at wakeup.
    pub preempt_wakeup: u64,
    /// Preemptions decided at the tick.
    pub preempt_tick: u64,
    /// Wakeup-to-run latency, ns.
    #[serde(skip)]
    pub wakeup_latency: Histogram<u64>,
    /// Busy time per CPU, ns.
    pub busy_ns: Vec<u64>,
    /// Idle time per CPU, ns.
    pub idle_ns: Vec<u64>,
    /// CPU-time a CPU spent idle while some CPU had a task waiting, ns.
    pub idle_while_waiting_ns: u64,
    /// Total run delay (time runnable but not running) over all tasks, ns.
    pub run_delay_ns: u64,
    /// Placement searches.
    pub searches: u64,
    /// CPUs examined by searches.
    pub cpus_examined: u64,
    /// Placements by step (`idle_core`, `prev_idle`, ...).
    pub place_steps: Vec<(String, u64)>,
    /// Placements by affine verdict.
    pub place_affine: Vec<(String, u64)>,
    /// Idle exits, and the time spent in them, ns.
    pub idle_exits: u64,
    /// Time CPUs spent leaving idle states, ns.
    pub idle_exit_ns: u64,
    /// IPIs sent for wakeups.
    pub ipis: u64,
    /// Idle exits by the state the CPU was in (states with none left out).
    pub idle_states: Vec<(String, u64)>,
    /// Wakeups that found their CPU polling (`TIF_POLLING_NRFLAG`): no IPI was sent.
    pub wakeups_polling: u64,
    /// Cost charged for context switches, ns.
    pub ctx_switch_cost_ns: u64,
    /// Cost charged for refetching working sets, ns.
    pub refetch_cost_ns: u64,
    /// Cost charged for reading data written elsewhere (beyond the plain copy), ns.
    pub transfer_cost_ns: u64,
    /// Cost charged to wakers for searches, ns.
    pub search_cost_ns: u64,
    /// Cost charged for balancing passes, ns.
    pub balance_cost_ns: u64,
    /// Balancing passes.
    pub balance_passes: u64,
    /// Newidle balancing passes.
    pub newidle_passes: u64,
    /// Simulated time at the end, ns.
    pub elapsed_ns: u64,
    /// The part of `balance_cost_ns` a running task's segment paid (a newly idle CPU's pass
    /// costs it nothing: it stays idle), ns.
    pub balance_charged_ns: u64,
    /// Wakers' time in local wakeups (`local_wake_ns` each), ns.
    pub wake_local_cost_ns: u64,
    /// Wakers' time in remote wakeups less the IPI sends, ns.
    pub wake_remote_cost_ns: u64,
    /// Wakers' time sending IPIs (`ipi_send_ns` of each IPI a waker task sent), ns.
    pub ipi_send_cost_ns: u64,
    /// Busy time beyond the work done, lost to a busy SMT sibling (`cpu.smt_speed`), ns.
    pub smt_stretch_ns: u64,
    /// Time CPUs spent leaving idle states, by state (states with none left out), ns.
    pub idle_exit_ns_by_state: Vec<(String, u64)>,
    /// The kernel's `/proc/schedstat` counters and the idle-search tallies; like
    /// `wake_graph`, not part of [`Counters::to_text`].
    pub schedstat: crate::schedstat::Schedstat,
    /// Who woke whom (`sim/wakegraph.rs`); not part of [`Counters::to_text`], which the
    /// determinism snapshots pin: see [`crate::WakeGraph::to_text`].
    pub wake_graph: crate::sim::wakegraph::WakeGraph,
}

/// The contention costs as a JSON object keyed by class.
fn by_class<S: serde::Serializer>(v: &[u64; 4], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(v.len()))?;
    for (k, x) in crate::sim::contention::CLASSES.iter().zip(v) {
        m.serialize_entry(k, x)?;
    }
    m.end()
}

impl Default for Counters {
    fn default() -> Self {
        Counters {
            events: 0,
            wakeups: 0,
            wakeups_local: 0,
            wakeups_remote: 0,
            wakeups_affine: 0,
            wakeups_to_idle: 0,
            wakeups_sync: 0,
            wakeups_irq: 0,
            wakeups_softirq: 0,
            wakeups_nonsync: 0,
            softirq_ns: 0,
            overlap_ns: 0,
            contention_ns: [0; 4],
            ksoftirqd_wakeups: 0,
            wakeups_by_ksoftirqd: 0,
            softirq_deferred: 0,
            tcp_acks_now: 0,
            tcp_acks_delayed: 0,
            tcp_acks_carried: 0,
            forks: 0,
            migrations_wake: 0,
            migrations_balance: 0,
            migrations_active: 0,
            migrations_by_level: Vec::new(),
            ctx_switches: 0,
            ctx_voluntary: 0,
            ctx_involuntary: 0,
            preempt_wakeup: 0,
            preempt_tick: 0,
            wakeup_latency: Histogram::new_with_bounds(1, 60_000_000_000, 3)
                .expect("static histogram bounds are valid"),
            busy_ns: Vec::new(),
            idle_ns: Vec::new(),
            idle_while_waiting_ns: 0,
            run_delay_ns: 0,
            searches: 0,
            cpus_examined: 0,
            place_steps: Vec::new(),
            place_affine: Vec::new(),
            idle_exits: 0,
            idle_exit_ns: 0,
            ipis: 0,
            idle_states: Vec::new(),
            wakeups_polling: 0,
            ctx_switch_cost_ns: 0,
            refetch_cost_ns: 0,
            transfer_cost_ns: 0,
            search_cost_ns: 0,
            balance_cost_ns: 0,
            balance_passes: 0,
            newidle_passes: 0,
            elapsed_ns: 0,
            balance_charged_ns: 0,
            wake_local_cost_ns: 0,
            wake_remote_cost_ns: 0,
            ipi_send_cost_ns: 0,
            smt_stretch_ns: 0,
            idle_exit_ns_by_state: Vec::new(),
            schedstat: Default::default(),
            wake_graph: Default::default(),
        }
    }
}

impl Counters {
    /// Wakeup latency percentile in ns (q in 0..=100).
    pub fn wakeup_latency_ns(&self, q: f64) -> u64 {
        self.wakeup_latency.value_at_quantile(q / 100.0)
    }

    /// Total CPU time, busy and idle: equals `elapsed × nr_cpus` (an invariant).
    pub fn cpu_time_ns(&self) -> u64 {
        self.busy_ns.iter().sum::<u64>() + self.idle_ns.iter().sum::<u64>()
    }

    /// A multi-line human summary.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        self.wakeup_text(&mut s);
        self.switch_text(&mut s);
        self.idle_cost_text(&mut s);
        s
    }

    /// The summary's lines on time, wakeups and their paths, overlap and contention.
    fn wakeup_text(&self, s: &mut String) {
        let busy: u64 = self.busy_ns.iter().sum();
        let total = self.cpu_time_ns().max(1);
        s.push_str(&format!(
            "elapsed {:.6} s, {} events, CPU busy {:.1}%\n",
            self.elapsed_ns as f64 / 1e9,
            self.events,
            100.0 * busy as f64 / total as f64
        ));
        s.push_str(&format!(
            "wakeups {} (local {}, remote {}, affine {}, to idle {}, sync {}, irq {}), forks {}\n",
            self.wakeups,
            self.wakeups_local,
            self.wakeups_remote,
            self.wakeups_affine,
            self.wakeups_to_idle,
            self.wakeups_sync,
            self.wakeups_irq,
            self.forks
        ));
        if self.wakeups_softirq + self.softirq_ns > 0 || self.wakeups_nonsync > 0 {
            s.push_str(&format!(
                "wake paths: from softirq {}, non-sync task wakeups {}; softirq time {:.3} ms\n",
                self.wakeups_softirq,
                self.wakeups_nonsync,
                self.softirq_ns as f64 / 1e6
            ));
        }
        if self.tcp_acks_now + self.tcp_acks_delayed + self.tcp_acks_carried > 0 {
            s.push_str(&format!(
                "tcp acks: sent at once {}, by the delayed-ack timer {}, carried on data {}\n",
                self.tcp_acks_now, self.tcp_acks_delayed, self.tcp_acks_carried
            ));
        }
        if self.ksoftirqd_wakeups > 0 {
            s.push_str(&format!(
                "ksoftirqd: woken {}, wakeups from ksoftirqd {}, deliveries deferred to it {}\n",
                self.ksoftirqd_wakeups, self.wakeups_by_ksoftirqd, self.softirq_deferred
            ));
        }
        if self.overlap_ns > 0 || self.contention_ns.iter().any(|&c| c > 0) {
            let by: Vec<String> = crate::sim::contention::CLASSES
                .iter()
                .zip(self.contention_ns)
                .map(|(k, v)| format!("{k} {:.3}", v as f64 / 1e6))
                .collect();
            s.push_str(&format!(
                "overlap {:.3} ms; contention ms: {}\n",
                self.overlap_ns as f64 / 1e6,
                by.join(", ")
            ));
        }
    }

    /// The summary's lines on migrations, switches, wakeup latency and placement.
    fn switch_text(&self, s: &mut String) {
        let lv: Vec<String> = self
            .migrations_by_level
            .iter()
            .map(|(l, n)| format!("{l} {n}"))
            .collect();
        s.push_str(&format!(
            "migrations: wakeup {}, balance {} (active {}) [{}]\n",
            self.migrations_wake,
            self.migrations_balance,
            self.migrations_active,
            lv.join(", ")
        ));
        s.push_str(&format!(
            "context switches {} (voluntary {}, involuntary {}); preemptions wakeup {}, tick {}\n",
            self.ctx_switches,
            self.ctx_voluntary,
            self.ctx_involuntary,
            self.preempt_wakeup,
            self.preempt_tick
        ));
        if !self.wakeup_latency.is_empty() {
            s.push_str(&format!(
                "wakeup latency us: p50 {:.1}  p90 {:.1}  p99 {:.1}  max {:.1}\n",
                self.wakeup_latency_ns(50.0) as f64 / 1e3,
                self.wakeup_latency_ns(90.0) as f64 / 1e3,
                self.wakeup_latency_ns(99.0) as f64 / 1e3,
                self.wakeup_latency.max() as f64 / 1e3
            ));
        }
        let steps: Vec<String> = self
            .place_steps
            .iter()
            .map(|(l, n)| format!("{l} {n}"))
            .collect();
        s.push_str(&format!(
            "placement: {} searches, {} CPUs examined; steps [{}]\n",
            self.searches,
            self.cpus_examined,
            steps.join(", ")
        ));
    }

    /// The summary's lines on idle time, idle exits and what the machine's work cost.
    fn idle_cost_text(&self, s: &mut String) {
        s.push_str(&format!(
            "idle while tasks waited {:.3} ms; run delay {:.3} ms; idle exits {} ({:.3} ms); IPIs {}\n",
            self.idle_while_waiting_ns as f64 / 1e6,
            self.run_delay_ns as f64 / 1e6,
            self.idle_exits,
            self.idle_exit_ns as f64 / 1e6,
            self.ipis
        ));
        if !self.idle_states.is_empty() || self.wakeups_polling > 0 {
            let states: Vec<String> = self
                .idle_states
                .iter()
                .map(|(l, n)| format!("{l} {n}"))
                .collect();
            s.push_str(&format!(
                "idle exits by state: [{}]; wakeups of a polling CPU (no IPI) {}\n",
                states.join(", "),
                self.wakeups_polling
            ));
        }
        s.push_str(&format!(
            "costs ms: ctx switch {:.3}, refetch {:.3}, transfer {:.3}, search {:.3}, balance {:.3} ({} passes, {} newidle)\n",
            self.ctx_switch_cost_ns as f64 / 1e6,
            self.refetch_cost_ns as f64 / 1e6,
            self.transfer_cost_ns as f64 / 1e6,
            self.search_cost_ns as f64 / 1e6,
            self.balance_cost_ns as f64 / 1e6,
            self.balance_passes,
            self.newidle_passes
        ));
    }
}
