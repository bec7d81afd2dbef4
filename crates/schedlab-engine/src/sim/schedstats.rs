//! The `/proc/schedstat` counters as the run goes (`ttwu_stat()`'s per-CPU and per-domain
//! counts) and at its end (the domain lines from the balancer's counts, run time, the
//! idle-search tallies), and the time-budget counters that are only known at the end (idle
//! exit time by state, the SMT stretch). Observation only.
//!
//! State: writes `stats` (`sched`, `ttwu_dom`, the final counters); reads `core` (domains,
//! CPUs, profile), `idle` (exits by state) and the balancer.

use super::Simulation;
use super::parts::MAX_DOMAINS;
use crate::policy::{PlacementRecord, Step};
use crate::schedstat::{DomainStat, SisStat};
use schedlab_topo::CpuId;

impl Simulation {
    /// `ttwu_stat()`: on the waker's CPU `ttwu_count`, and `ttwu_local` when the wakee
    /// stays there, else `ttwu_wake_remote` of its lowest domain spanning the wakee's CPU;
    /// `ttwu_move_affine` of the domain spanning the waker and prev when `wake_affine()`
    /// pulled.
    pub(super) fn ttwu_schedstat(
        &mut self,
        waker_cpu: CpuId,
        cpu: CpuId,
        prev: CpuId,
        rec: &PlacementRecord,
    ) {
        let st = &mut self.stats.sched[waker_cpu];
        st.ttwu_count += 1;
        let base = waker_cpu.index() * MAX_DOMAINS;
        if cpu == waker_cpu {
            st.ttwu_local += 1;
        } else if let Some(k) = self.domain_index(waker_cpu, cpu) {
            self.stats.ttwu_dom[base + k][0] += 1;
        }
        if rec.pulled()
            && let Some(k) = self.domain_index(waker_cpu, prev)
        {
            self.stats.ttwu_dom[base + k][1] += 1;
        }
    }

    /// The index in `cpu`'s domain chain of the lowest domain spanning `other`.
    fn domain_index(&self, cpu: CpuId, other: CpuId) -> Option<usize> {
        self.core
            .domains
            .of(cpu)
            .iter()
            .position(|d| d.span.contains(other))
            .filter(|&k| k < MAX_DOMAINS)
    }

    /// The time-budget counters and the `/proc/schedstat` counters of the finished run.
    pub(super) fn finish_schedstat(&mut self) {
        self.stats.counters.smt_stretch_ns = crate::time::round_u64(self.stats.smt_stretch);
        let states = &self.core.profile.wakeup.idle_states;
        self.stats.counters.idle_exit_ns_by_state = self
            .idle
            .idle_state_exits
            .iter()
            .enumerate()
            .filter(|&(_, &k)| k > 0)
            .map(|(i, &k)| (states[i].name.clone(), k * states[i].exit_ns))
            .collect();
        let mut cpus = self.stats.sched.clone();
        for (i, c) in cpus.iter_mut().enumerate() {
            let cpu = CpuId::new(i);
            c.run_time_ns = self.core.cpus[cpu].busy_ns;
            c.domains = self
                .core
                .domains
                .of(cpu)
                .iter()
                .enumerate()
                .map(|(k, d)| {
                    let t = self
                        .stats
                        .ttwu_dom
                        .get(i * MAX_DOMAINS + k)
                        .copied()
                        .unwrap_or_default();
                    DomainStat {
                        level: d.level.name(),
                        span: d.span.iter().map(|c| c.index() as u32).collect(),
                        lb: self.balancer.schedstat(cpu, k),
                        ttwu_wake_remote: t[0],
                        ttwu_move_affine: t[1],
                        ttwu_move_balance: 0,
                    }
                })
                .collect();
        }
        let step = |s: Step| self.stats.place_steps[s as usize];
        let sis = SisStat {
            searches: self.stats.counters.searches,
            cpus_scanned: self.stats.counters.cpus_examined,
            idle_core: step(Step::IdleCore) + step(Step::IdleGroup),
            idle_cpu: step(Step::IdleCpu) + step(Step::WideIdle) + step(Step::IdleBuddy),
            idle_smt: step(Step::IdleSmt),
            prev: step(Step::PrevIdle),
            target: step(Step::Target) + step(Step::TargetIdle),
            recent_used_cpu: step(Step::Recent),
            failures: step(Step::Fallback),
        };
        self.stats.counters.schedstat = crate::schedstat::Schedstat { cpus, sis };
    }
}
