//! Wake-up placement policies of every Linux era, with sched_feat-style switches.
//!
//! A *variant* string names a preset and switches: `POLICY[,SWITCH]...`, e.g.
//! `linux-3.10,WAKEUP_BUDDY`, `linux-4.6,NO_OLD_IDLE,NO_ORDER_IDLE,IDLE_CORE,IDLE_CPU,IDLE_SMT`,
//! `linux-6.6,NO_SIS_UTIL,SIS_PROP` or `linux-2.5.59,ingoB0`. [`build`] turns one into
//! everything the engine needs: the kernel configuration of the era ([`SchedConfig`]), the
//! placement policy and the load balancer.
//!
//! ```text
//!  "linux-4.14,NO_WA_BIAS" ─parse_variant─▶ Variant ─resolve (era table + switch table)─▶ Settings
//!        Settings ─▶ Built { config: SchedConfig, policy: LinuxPolicy, balancer: CfsBalancer }
//! ```
//!
//! The placement is laid out as fair.c is: one file per kernel function, named after it
//! (`select_task_rq_fair.rs`, `wake_affine.rs`, `select_idle_sibling.rs`, ...), each holding
//! every era's version of that function oldest first, with its kernel range and commits;
//! calls go from [`select_task_rq`] down and never back. The decision code is generic over
//! [`machine::Machine`] (the engine's [`schedlab_engine::SchedView`] in the simulator, a
//! hand-built state in the decision tests). Each decision explains itself in the
//! [`schedlab_engine::PlacementRecord`]: the wake_wide verdict, the wake_affine verdict and
//! its numbers, the step that found the CPU and the CPUs examined.
//!
//! Sources: the kernel code of each era and the mailing-list threads of the debated variants,
//! described in our own words (no kernel source is copied); each function's doc comment names
//! the kernel function, the versions it covers and the commits that bound them. What is a
//! reconstruction or dated by us is marked \[M\] in the code and in `schedlab policies NAME`.
//! Docs: docs/policies/*.md.
#![warn(missing_docs)]

mod debated;
mod describe;
pub mod era;
mod error;
pub mod find_idlest_cpu;
mod load;
pub mod machine;
pub mod record_wakee;
pub mod reference;
mod rules;
mod scan;
pub mod sched_best_cpu;
pub mod select_idle_core;
pub mod select_idle_cpu;
pub mod select_idle_sibling;
pub mod select_idle_smt;
pub mod select_task_rq;
pub mod select_task_rq_fair;
mod settings;
#[macro_use]
mod switch_def;
pub mod switches;
mod tunables;
mod variant;
pub mod version;
pub mod wake_affine;
pub mod wake_affine_idle;
pub mod wake_affine_weight;
pub mod wake_idle;
pub mod wake_paths;
pub mod wake_wide;

pub use describe::{
    SWITCHES_MD_BEGIN, SWITCHES_MD_END, describe_preset, describe_presets, switches_markdown_table,
    update_switches_markdown,
};
pub use era::{BalancerKind, ERAS, Era, EraDef, Flow, IdleSearch, PresetInfo, PresetKind, presets};
pub use error::PolicyError;
pub use select_task_rq::LinuxPolicy;
pub use settings::Settings;
pub use switches::{Provenance, Scope, is_balancer_variant};
pub use tunables::Range;
pub use variant::{Variant, parse_variant};
pub use version::KernelVersion;

use schedlab_engine::balance_o1::O1NodeBalancer;
use schedlab_engine::policy::{PrevCpu, WakerCpu};
use schedlab_engine::{Balancer, CfsBalancer, PlacementPolicy, SchedConfig};
use schedlab_topo::Topology;
use variant::{Target, resolve};

/// Everything a variant string builds.
pub struct Built {
    /// Kernel configuration of the era with the switches applied.
    pub config: SchedConfig,
    /// The placement policy.
    pub policy: Box<dyn PlacementPolicy>,
    /// The load balancer of the era.
    pub balancer: Box<dyn Balancer>,
    /// Canonical variant string (preset name, switches in canonical spelling).
    pub name: String,
}

impl std::fmt::Debug for Built {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Built")
            .field("name", &self.name)
            .field("policy", &self.policy.name())
            .field("balancer", &self.balancer.name())
            .field("config", &self.config)
            .finish()
    }
}

/// The settings a variant resolves to (validated), for inspection and tests.
pub fn settings(variant: &str) -> Result<Settings, PolicyError> {
    Ok(resolve(variant)?.settings)
}

/// Builds the configuration, policy and balancer of `variant` for a machine. Every switch
/// is validated against the preset's era. `seed` feeds the `random` policy's stream. The
/// machine is not needed by the built-in policies (they read it at decision time); it is in
/// the signature for policies that precompute per-machine tables.
pub fn build(variant: &str, _topo: &Topology, seed: u64) -> Result<Built, PolicyError> {
    let r = resolve(variant)?;
    let s = r.settings;
    let config = s.config.clone();
    let tick_ns = config.tunables.tick_ns();
    let balancer: Box<dyn Balancer> = match s.era.def().balancer {
        BalancerKind::O1Node => Box::new(O1NodeBalancer::new(s.o1, tick_ns)),
        BalancerKind::Cfs {
            newidle,
            active,
            load_idx,
            rules,
        } => {
            let mut b = CfsBalancer::for_config(&config);
            b.newidle_gate = newidle;
            b.active_balance = active;
            b.load_idx = load_idx;
            b.lb_rules = rules;
            Box::new(b)
        }
    };
    let policy: Box<dyn PlacementPolicy> = match r.target {
        Target::Era(_) => Box::new(LinuxPolicy::new(s, r.name.clone())),
        Target::Reference("prev") => Box::new(PrevCpu),
        Target::Reference("waker") => Box::new(WakerCpu),
        Target::Reference("idlest") => Box::new(reference::Idlest),
        Target::Reference(_) => Box::new(reference::RandomCpu::new(seed)),
    };
    Ok(Built {
        config,
        policy,
        balancer,
        name: r.name,
    })
}

/// One switch of a preset, as `schedlab policies NAME` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchInfo {
    /// `NAME` (feature: `NAME` / `NO_NAME`), `name=` (tunable) or a balancer variant.
    pub name: String,
    /// Default in this preset: `on`/`off`, or the tunable's value.
    pub default: String,
    /// What it changes.
    pub meaning: String,
    /// Mainline code, reconstruction of a mailing-list patch, or tunable.
    pub provenance: Provenance,
    /// Whether the engine reads it (accepted under the reference policies) or only the
    /// era's placement.
    pub scope: Scope,
    /// A tunable's unit and accepted values (`None` for the other kinds).
    pub range: Option<Range>,
    /// A placement switch: the files of `src/` that read it (`sw!("NAME")`); empty for an
    /// engine switch, which the engine reads from its configuration.
    pub read_in: &'static [&'static str],
}

/// The switches valid for `preset`, with their defaults there.
pub fn switches(preset: &str) -> Result<Vec<SwitchInfo>, PolicyError> {
    let r = resolve(preset)?;
    let (era, reference) = match r.target {
        Target::Era(e) => (e, false),
        Target::Reference(_) => (era::REFERENCE_BASE, true),
    };
    Ok(switches::valid_for(era)
        .filter(|d| !reference || variant::is_engine_level(d))
        .map(|d| SwitchInfo {
            name: d.display(),
            default: Settings::default_text(d, era),
            meaning: d.meaning.to_string(),
            provenance: d.provenance,
            scope: d.scope,
            range: d.range(),
            read_in: match d.store() {
                Some(switch_def::Store::Placement { read_in, .. }) => read_in,
                _ => &[],
            },
        })
        .collect())
}
