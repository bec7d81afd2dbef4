//! AIM7 / re-aim-7 with a compute-heavy workfile (the `compute` workfile), at one user count.
//!
//! ```text
//!   reaim ──fork──▶ users U_0..U_{N-1} and their pipe partners P_i ──barrier──▶ start
//!   U_i: jobs × { compute(Exp(work)); pipe round trip with P_i; sleep(Exp(100us));
//!                 fork a short child; wait for it }
//!   P_i: jobs × { read; compute(20us); write }
//!   reaim: wait for every child ──▶ end;   jobs/min = N × jobs × 60 / (end − start)
//! ```

use super::{ABS, Built, MAX_TASKS, secs};
use crate::catalog::{WorkloadInfo, param};
use crate::error::WorkloadError;
use crate::instance::{Report, first_abs_time, no_samples};
use crate::spec::Args;
use schedlab_engine::task::{HistId, Op};
use schedlab_engine::{ChannelKind, Dist, Simulation, TaskSpec, Workload};
use schedlab_metrics::native::{Aim7Report, format_aim7};
use schedlab_metrics::{Better, Metric};
use schedlab_topo::Topology;
use std::sync::Arc;

/// The catalog entry of `aim7-compute`: its parameters (names as the real tool calls them),
/// defaults, help and builder.
pub(crate) const INFO: WorkloadInfo = WorkloadInfo {
    name: "aim7-compute",
    mirrors: "AIM7 / re-aim-7 (compute workfile), one user count",
    follows: "AIM7 / re-aim-7 with its compute workfile",
    reconstructed: "the workfile's mix as one job (compute, a pipe exchange, a short sleep, a fork/exit) with exponential costs",
    about: "N users, each running jobs that mix compute with a pipe exchange, a short sleep and \
            a fork/exit; jobs per minute.",
    params: &[
        param("tasks", "16", "count", "users"),
        param("jobs", "10", "count", "jobs per user"),
        param("work", "2ms", "duration", "mean compute per job"),
    ],
    build,
};

pub(crate) fn build(a: &mut Args, _topo: &Topology) -> Result<Built, WorkloadError> {
    let tasks = a.int("tasks", 1, MAX_TASKS / 3)?;
    let jobs = a.int("jobs", 1, 1_000_000)?;
    let work = a.int("work", 0, 60_000_000_000)?;
    let mut w = Workload::new("aim7-compute");
    let start = w.hist("start");
    let barrier = w.barrier(tasks as u32 + 1);
    let child = w.spec(TaskSpec::new(
        "aim7-child",
        vec![Op::Compute(Dist::Const(200_000))],
    ));
    let mut main = Vec::new();
    for i in 0..tasks {
        let to = w.channel(ChannelKind::pipe(), format!("user{i}.to"));
        let from = w.channel(ChannelKind::pipe(), format!("user{i}.from"));
        let user = w.spec(TaskSpec::new(
            "aim7-user",
            vec![
                Op::Barrier(barrier),
                Op::RecordSince {
                    hist: start,
                    slot: ABS,
                },
                Op::Loop(jobs),
                Op::Compute(Dist::Exp { mean: work }),
                Op::Send {
                    ch: to,
                    bytes: Dist::Const(128),
                },
                Op::Recv { ch: from },
                Op::Sleep(Dist::Exp { mean: 100_000 }),
                Op::Fork(child),
                Op::WaitChildren,
                Op::EndLoop,
            ],
        ));
        let partner = w.spec(TaskSpec::new(
            "aim7-pipe",
            vec![
                Op::Loop(jobs),
                Op::Recv { ch: to },
                Op::Compute(Dist::Const(20_000)),
                Op::Send {
                    ch: from,
                    bytes: Dist::Const(128),
                },
                Op::EndLoop,
            ],
        ));
        main.extend([Op::Fork(partner), Op::Fork(user)]);
    }
    main.extend([Op::Barrier(barrier), Op::WaitChildren]);
    w.spawn(TaskSpec::new("reaim", main));
    Ok((
        w,
        Arc::new(Aim7Out {
            jobs: tasks * jobs,
            start,
        }),
    ))
}

struct Aim7Out {
    jobs: u64,
    start: HistId,
}

impl Report for Aim7Out {
    fn headline(&self) -> (String, Better) {
        ("jobs_per_min".into(), Better::Higher)
    }
    fn duration_based(&self) -> bool {
        false
    }
    fn extract(&self, sim: &Simulation) -> Result<(String, Vec<Metric>), WorkloadError> {
        let start = first_abs_time(sim.user_hist(self.start))
            .ok_or_else(|| no_samples("aim7-compute", "start"))?;
        let t = secs(sim.now().saturating_sub(start)).max(1e-9);
        let r = Aim7Report {
            max_jobs_per_min: self.jobs as f64 * 60.0 / t,
        };
        let mut m = r.metrics();
        m.push(crate::instance::metric("elapsed_s", t, "s", Better::Lower));
        Ok((format_aim7(&r), m))
    }
}
