//! `explain --sensitivity`: would the verdict hold on a machine with other costs? The
//! comparison is rerun with each cost class of the machine profile (the classes of the time
//! budget) scaled by 0.5 and by 2, one at a time, and each verdict's direction (better,
//! worse, no significant difference) is compared with the original's.

use crate::error::ExperimentError;
use crate::plan::Plan;
use crate::report::{CompareReport, Direction, build_report};
use crate::runner::{ExecOptions, Machine, execute};
use schedlab_engine::MachineProfile;
use serde::{Deserialize, Serialize};

/// The factors each class is scaled by.
pub const FACTORS: [f64; 2] = [0.5, 2.0];

/// Scales one cost class of a profile by a factor.
pub type Scale = fn(&mut MachineProfile, f64);

/// The cost classes a profile can scale: the budget's key, its label, and how to scale it.
pub const SCALED: [(&str, &str, Scale); 11] = [
    ("ctx_switch", "context switch", |p, f| {
        p.cpu.ctx_switch_ns = scale(p.cpu.ctx_switch_ns, f);
        p.cpu.ctx_switch_mm_ns = scale(p.cpu.ctx_switch_mm_ns, f);
    }),
    ("wake_local", "local wakeup", |p, f| {
        p.wakeup.local_wake_ns = scale(p.wakeup.local_wake_ns, f);
    }),
    ("wake_remote", "remote wakeup", |p, f| {
        // The IPI send is part of the remote wake: keep it so.
        p.wakeup.remote_wake_ns = scale(p.wakeup.remote_wake_ns, f).max(p.wakeup.ipi_send_ns);
        p.wakeup.remote_busy_wake_ns = scale(p.wakeup.remote_busy_wake_ns, f);
    }),
    ("ipi", "IPI", |p, f| {
        p.wakeup.ipi_ns = scale(p.wakeup.ipi_ns, f);
        p.wakeup.ttwu_queue_delay_ns = scale(p.wakeup.ttwu_queue_delay_ns, f);
        p.wakeup.ipi_send_ns = scale(p.wakeup.ipi_send_ns, f).min(p.wakeup.remote_wake_ns);
    }),
    ("refetch", "refetch after migration", |p, f| {
        p.cache.refetch_smt_ns *= f;
        p.cache.refetch_llc_ns *= f;
        p.cache.refetch_cross_llc_ns *= f;
        p.cache.refetch_cross_node_ns *= f;
    }),
    ("transfer", "message transfer", |p, f| {
        p.transfer.same_cpu_ns_per_byte *= f;
        p.transfer.smt_ns_per_byte *= f;
        p.transfer.llc_ns_per_byte *= f;
        p.transfer.cross_llc_ns_per_byte *= f;
        p.transfer.cross_node_ns_per_byte *= f;
    }),
    ("contention", "contention", |p, f| {
        p.contention.pipe_lines *= f;
        p.contention.socket_lines *= f;
        p.contention.futex_lines *= f;
        p.contention.lock_lines *= f;
    }),
    ("search", "idle search", |p, f| {
        p.search.scan_per_cpu_ns = scale(p.search.scan_per_cpu_ns, f);
        p.search.scan_per_cpu_remote_ns = scale(p.search.scan_per_cpu_remote_ns, f);
    }),
    ("balance", "balancing", |p, f| {
        p.search.lb_per_cpu_ns = scale(p.search.lb_per_cpu_ns, f);
        p.search.lb_per_task_ns = scale(p.search.lb_per_task_ns, f);
    }),
    ("softirq", "softirq", |p, f| {
        p.transfer.tcp_delivery_ns = scale(p.transfer.tcp_delivery_ns, f);
    }),
    ("idle_exit", "idle exit", |p, f| {
        for s in &mut p.wakeup.idle_states {
            s.exit_ns = scale(s.exit_ns, f);
        }
    }),
];

fn scale(x: u64, f: f64) -> u64 {
    (x as f64 * f).round() as u64
}

/// One rerun: a class scaled by a factor, and what became of each verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SensitivityRow {
    /// The class's key.
    pub class: String,
    /// Its label.
    pub label: String,
    /// The factor.
    pub factor: f64,
    /// Per (point, variant): `label`, ratio, verdict, whether it holds.
    pub verdicts: Vec<(String, f64, String, bool)>,
    /// Whether every verdict kept its direction.
    pub holds: bool,
}

/// Every rerun.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sensitivity {
    /// The reruns, class by class.
    pub rows: Vec<SensitivityRow>,
    /// Reruns under which every verdict held.
    pub held: usize,
    /// Reruns.
    pub total: usize,
}

/// The directions of a report's non-baseline verdicts, with their labels and ratios.
fn verdicts(r: &CompareReport) -> Vec<(String, f64, String, Direction)> {
    let mut v = Vec::new();
    for p in &r.points {
        let n = p.variants.first().map_or(0, |b| b.samples.len());
        for x in p.variants.iter().skip(1) {
            let vd = x.verdict_or_derived(r.metric.better, n, false);
            let label = match crate::report::point_label(p) {
                l if l.is_empty() || l == "-" => x.variant.clone(),
                l => format!("{l} {}", x.variant),
            };
            v.push((label, x.ratio, vd.text, vd.direction));
        }
    }
    v
}

/// Runs the comparison of `plan` once per (class, factor) and compares each verdict with
/// `base`'s.
pub fn sensitivity(
    plan: &Plan,
    opts: &ExecOptions,
    base: &CompareReport,
) -> Result<Sensitivity, ExperimentError> {
    let (machine, metric) = crate::pipeline::prepare(plan)?;
    let keys = plan.keys(0..plan.experiment.reps);
    // The reruns are not the comparison's runs: none goes to its --out file or its bar. Off
    // a terminal they count on a bar of their own, which a ticker prints as "sensitivity".
    let reruns = (keys.len() * SCALED.len() * FACTORS.len()) as u64;
    let hidden = (!opts.progress).then(|| crate::progress::hidden_bar(reruns));
    let _ticker = hidden
        .clone()
        .map(|b| crate::progress::Ticker::start("sensitivity", "runs", b));
    let opts = ExecOptions {
        out: None,
        resume: false,
        shard: None,
        bar: hidden,
        ..opts.clone()
    };
    let orig = verdicts(base);
    let mut rows = Vec::new();
    let interrupted = || crate::runner::INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst);
    'classes: for (class, label, f) in SCALED {
        for factor in FACTORS {
            let mut profile = machine.profile.clone();
            f(&mut profile, factor);
            let m = Machine {
                topo: machine.topo.clone(),
                profile,
            };
            let recs = execute(plan, &m, &keys, &[], &opts)?;
            // Ctrl-C: a rerun cut short says nothing; the ones before it are the answer.
            if interrupted() {
                break 'classes;
            }
            let report = build_report(plan, &recs, &metric);
            let now = verdicts(&report);
            let verdicts: Vec<(String, f64, String, bool)> = now
                .into_iter()
                .zip(&orig)
                .map(|((l, ratio, text, d), o)| (l, ratio, text, d == o.3))
                .collect();
            rows.push(SensitivityRow {
                class: class.into(),
                label: label.into(),
                factor,
                holds: verdicts.iter().all(|v| v.3),
                verdicts,
            });
        }
    }
    let held = rows.iter().filter(|r| r.holds).count();
    Ok(Sensitivity {
        total: rows.len(),
        held,
        rows,
    })
}

impl Sensitivity {
    /// The text: one line per rerun and variant, then the summary line.
    pub fn text(&self) -> String {
        let mut s = String::from("\nsensitivity: each cost class scaled alone\n");
        s.push_str(&format!(
            "  {:<26} {:>6}  {:<40} {:>8}  {:<30} holds\n",
            "class", "factor", "variant", "ratio", "verdict"
        ));
        for r in &self.rows {
            for (l, ratio, text, holds) in &r.verdicts {
                s.push_str(&format!(
                    "  {:<26} {:>6}  {:<40} {:>8.4}  {:<30} {}\n",
                    r.label,
                    format!("x{}", r.factor),
                    l,
                    ratio,
                    text,
                    if *holds { "yes" } else { "NO" }
                ));
            }
        }
        s.push_str(&format!(
            "verdict holds under {} of {} cost changes\n",
            self.held, self.total
        ));
        s
    }
}
