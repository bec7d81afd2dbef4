//! The kernel's own decision counters, under the names of `/proc/schedstat` (version 15,
//! kernels 4.x–6.5): per CPU `yld_count`, `sched_count`, `sched_goidle`, `ttwu_count`,
//! `ttwu_local`, run time, run delay and timeslices; per CPU and domain the balancer's
//! `lb_*` by idle type, `alb_*`, `sbe_*`/`sbf_*` and the `ttwu_*` of wakeups; plus the
//! `select_idle_sibling` tallies the kernel has no counter for. Observation only: nothing
//! here feeds a decision, and the counts are plain increments.
//!
//! [`Schedstat::to_proc`] writes the `/proc/schedstat` text (version line, timestamp,
//! `cpuN` lines each followed by their `domainN` lines), so existing readers parse it.

use serde::{Deserialize, Serialize};

/// Idle types of a balance pass in version 15's order (`enum cpu_idle_type`: `CPU_IDLE`,
/// `CPU_NOT_IDLE`, `CPU_NEWLY_IDLE`).
pub const IDLE_TYPE_NAMES: [&str; 3] = ["idle", "busy", "newidle"];

/// The schedstat version [`Schedstat::to_proc`] writes.
pub const SCHEDSTAT_VERSION: u32 = 15;

/// A balancer's counts at one domain for one idle type (`sd->lb_*[idle]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LbCounts {
    /// `load_balance()` calls.
    pub lb_count: u64,
    /// ... that found the domain balanced (or this CPU not the one to balance it).
    pub lb_balanced: u64,
    /// ... that found an imbalance but moved nothing.
    pub lb_failed: u64,
    /// Sum of the imbalances found (load units, or tasks where the mode counts tasks).
    pub lb_imbalance: u64,
    /// Tasks pulled.
    pub lb_gained: u64,
    /// ... of which cache-hot (`task_hot()`, moved after too many failures).
    pub lb_hot_gained: u64,
    /// Passes whose busiest group had no busiest queue.
    pub lb_nobusyq: u64,
    /// Passes that found no busiest group.
    pub lb_nobusyg: u64,
}

impl LbCounts {
    /// The eight fields in the order of a `domainN` line.
    pub fn fields(&self) -> [u64; 8] {
        [
            self.lb_count,
            self.lb_balanced,
            self.lb_failed,
            self.lb_imbalance,
            self.lb_gained,
            self.lb_hot_gained,
            self.lb_nobusyq,
            self.lb_nobusyg,
        ]
    }

    /// Adds `o` field by field.
    pub fn add(&mut self, o: &LbCounts) {
        self.lb_count += o.lb_count;
        self.lb_balanced += o.lb_balanced;
        self.lb_failed += o.lb_failed;
        self.lb_imbalance += o.lb_imbalance;
        self.lb_gained += o.lb_gained;
        self.lb_hot_gained += o.lb_hot_gained;
        self.lb_nobusyq += o.lb_nobusyq;
        self.lb_nobusyg += o.lb_nobusyg;
    }
}

/// The balancer's counters of one CPU at one domain.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LbDomain {
    /// By idle type, in [`IDLE_TYPE_NAMES`] order.
    pub lb: [LbCounts; 3],
    /// Active balances kicked (`alb_count`).
    pub alb_count: u64,
    /// ... that found nothing to push (`alb_failed`).
    pub alb_failed: u64,
    /// ... that pushed a task (`alb_pushed`).
    pub alb_pushed: u64,
}

/// One CPU's domain line.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DomainStat {
    /// The level's name (`SMT`, `MC`, `NUMA`, ...); not in the `/proc` text.
    pub level: String,
    /// The CPUs the domain spans.
    pub span: Vec<u32>,
    /// The balancer's counts.
    #[serde(flatten)]
    pub lb: LbDomain,
    /// Wakeups issued on this CPU whose wakee went to another CPU of this domain (the
    /// lowest spanning both): `ttwu_wake_remote`.
    pub ttwu_wake_remote: u64,
    /// Wakeups that `wake_affine()` pulled toward this CPU at this domain.
    pub ttwu_move_affine: u64,
    /// Always 0: the kernel has not counted it since 2.6.x.
    pub ttwu_move_balance: u64,
}

/// One CPU's line and its domains.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuStat {
    /// `sched_yield()` calls.
    pub yld_count: u64,
    /// `schedule()` calls.
    pub sched_count: u64,
    /// ... that left the CPU idle.
    pub sched_goidle: u64,
    /// Wakeups issued on this CPU (`ttwu_count`, counted on the waker's CPU).
    pub ttwu_count: u64,
    /// ... whose wakee was placed on this CPU.
    pub ttwu_local: u64,
    /// Time tasks ran on this CPU, ns (`rq_cpu_time`).
    pub run_time_ns: u64,
    /// Time tasks waited on this CPU's runqueue before running here, ns.
    pub run_delay_ns: u64,
    /// Timeslices run on this CPU (`pcount`: a task got the CPU).
    pub timeslices: u64,
    /// Its domains, lowest first.
    pub domains: Vec<DomainStat>,
}

/// What `select_idle_sibling` (and the era's other idle searches) found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SisStat {
    /// Placement searches.
    pub searches: u64,
    /// CPUs they read.
    pub cpus_scanned: u64,
    /// Found a fully idle core.
    pub idle_core: u64,
    /// Found an idle CPU in the LLC scan (or a scan beyond it).
    pub idle_cpu: u64,
    /// Found an idle SMT sibling.
    pub idle_smt: u64,
    /// Took prev, idle and cache-sharing.
    pub prev: u64,
    /// Took the target (idle, or given without a search).
    pub target: u64,
    /// Took `recent_used_cpu`.
    pub recent_used_cpu: u64,
    /// Found nothing and fell back to the target.
    pub failures: u64,
}

/// Every CPU's counters and the search tallies.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schedstat {
    /// By CPU number.
    pub cpus: Vec<CpuStat>,
    /// The idle searches.
    pub sis: SisStat,
}

impl Schedstat {
    /// The `/proc/schedstat` text of version 15 at `now_ns` (the timestamp line is in
    /// jiffies of `tick_ns`).
    pub fn to_proc(&self, now_ns: u64, tick_ns: u64) -> String {
        let mut s = format!(
            "version {SCHEDSTAT_VERSION}\ntimestamp {}\n",
            now_ns / tick_ns.max(1)
        );
        let nr = self.cpus.len();
        for (i, c) in self.cpus.iter().enumerate() {
            s.push_str(&format!(
                "cpu{i} {} 0 {} {} {} {} {} {} {}\n",
                c.yld_count,
                c.sched_count,
                c.sched_goidle,
                c.ttwu_count,
                c.ttwu_local,
                c.run_time_ns,
                c.run_delay_ns,
                c.timeslices
            ));
            for (k, d) in c.domains.iter().enumerate() {
                s.push_str(&format!("domain{k} {}", cpumask_hex(&d.span, nr)));
                for lb in &d.lb.lb {
                    for f in lb.fields() {
                        s.push_str(&format!(" {f}"));
                    }
                }
                // alb_*, then sbe_* and sbf_* (no longer counted by the kernel), then ttwu_*.
                let tail = [
                    d.lb.alb_count,
                    d.lb.alb_failed,
                    d.lb.alb_pushed,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    d.ttwu_wake_remote,
                    d.ttwu_move_affine,
                    d.ttwu_move_balance,
                ];
                for f in tail {
                    s.push_str(&format!(" {f}"));
                }
                s.push('\n');
            }
        }
        s
    }

    /// The balancer's counts over every CPU and domain, by idle type.
    pub fn lb_total(&self) -> (LbCounts, [LbCounts; 3], LbDomain) {
        let mut all = LbCounts::default();
        let mut by = [LbCounts::default(); 3];
        let mut alb = LbDomain::default();
        for d in self.cpus.iter().flat_map(|c| &c.domains) {
            for (i, lb) in d.lb.lb.iter().enumerate() {
                all.add(lb);
                by[i].add(lb);
            }
            alb.alb_count += d.lb.alb_count;
            alb.alb_failed += d.lb.alb_failed;
            alb.alb_pushed += d.lb.alb_pushed;
        }
        (all, by, alb)
    }
}

/// A cpumask as the kernel's `%*pb` prints it: hex, in 32-bit words, most significant first,
/// separated by commas.
pub fn cpumask_hex(cpus: &[u32], nr_cpus: usize) -> String {
    let words = nr_cpus.div_ceil(32).max(1);
    let mut w = vec![0u32; words];
    for &c in cpus {
        if let Some(x) = w.get_mut(c as usize / 32) {
            *x |= 1 << (c % 32);
        }
    }
    // The top word is printed only as wide as the CPUs it holds.
    let top_bits = nr_cpus - (words - 1) * 32;
    let top_digits = top_bits.div_ceil(4).max(1);
    let mut parts = Vec::with_capacity(words);
    for (i, x) in w.iter().enumerate().rev() {
        if i == words - 1 {
            parts.push(format!("{x:0top_digits$x}"));
        } else {
            parts.push(format!("{x:08x}"));
        }
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpumask_is_printed_like_the_kernel() {
        assert_eq!(cpumask_hex(&[0, 1], 2), "3");
        assert_eq!(cpumask_hex(&[0, 1, 2, 3, 4, 5, 6, 7], 8), "ff");
        assert_eq!(cpumask_hex(&[0, 33], 40), "02,00000001");
    }

    #[test]
    fn a_domain_line_has_the_36_fields_of_version_15() {
        let st = Schedstat {
            cpus: vec![CpuStat {
                domains: vec![DomainStat {
                    span: vec![0],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            sis: SisStat::default(),
        };
        let text = st.to_proc(4_000_000, 4_000_000);
        let dom = text.lines().find(|l| l.starts_with("domain0")).unwrap();
        assert_eq!(dom.split_whitespace().count(), 2 + 36);
        let cpu = text.lines().find(|l| l.starts_with("cpu0")).unwrap();
        assert_eq!(cpu.split_whitespace().count(), 1 + 9);
        assert!(text.starts_with("version 15\ntimestamp 1\n"));
    }
}
