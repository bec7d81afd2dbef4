//! Text for `schedlab policies` (the preset list) and `schedlab policies NAME` (one preset:
//! what it models, its kernel configuration, what is reconstructed, and every switch with
//! its default, meaning and provenance). Kept here, not in the CLI, so it is tested.

use crate::era::{Era, PresetKind, REFERENCE_BASE, presets};
use crate::error::PolicyError;
use crate::variant::{Target, resolve};
use std::fmt::Write as _;

/// What each era models from reconstructions or [M] items of the spec.
fn notes(era: Era) -> &'static [&'static str] {
    match era {
        Era::V2_5_59 => &[
            "the O(1) pick is an approximation (priority order with a sleep bonus), not the arrays",
            "cache_decay_ticks = 10 and the balancer's candidate order are reconstructions [M]",
            "ingo, ingofix, ingoB0 follow the LKML descriptions of §10.4, not the patches' code",
        ],
        Era::V2_6_30 => &[
            "SD_WAKE_BALANCE (passive balancing) assumed on every non-NUMA level [M]",
            "wake_idle on the SMT level only; wake_idx 0 (instantaneous loads) [M]",
        ],
        Era::V2_6_32 => {
            &["the PREFER_SIBLING enabler is taken as the lowest level covering the package [M]"]
        }
        Era::V2_6_33 => &["the enabler move to SHARE_PKG_RESOURCES (vmark fix) dated 2.6.33 [M]"],
        Era::V3_6 => &["idle_buddy pairing of groups by first CPU, as described in §6.4 [S]"],
        Era::V3_10 => &["the LLC group scan dated ~3.9 [M]"],
        Era::V4_2 => &["wakee_flips halving decay dated ~3.16 [M]"],
        Era::V4_6 => &["the five RFC bits are reconstructions of an RFC not available to us [M]"],
        Era::V4_9 => &["the RFC bits (OLD_IDLE ... IDLE_SMT) are reconstructions [M]"],
        Era::V5_13 => &[
            "recent_used_cpu in its 4.16-5.15 form (waker records its CPU) [M]",
            "wake_affine_idle's final prev-idle clause dated 5.x [M]",
        ],
        Era::V6_12 => &["cluster-first scan from 6.7; SIS_PROP removed in 6.7"],
        _ => &[],
    }
}

/// The preset list: name, era and what it models.
pub fn describe_presets() -> String {
    let mut out = String::new();
    let w = presets().iter().map(|p| p.name.len()).max().unwrap_or(10);
    let _ = writeln!(out, "{:<w$}  {:<22}  models", "PRESET", "ERA");
    for p in presets() {
        let era = if p.kind == PresetKind::Reference {
            "reference"
        } else {
            p.era
        };
        let _ = writeln!(out, "{:<w$}  {:<22}  {}", p.name, era, p.models);
    }
    let _ = writeln!(
        out,
        "\nVariant syntax: POLICY[,SWITCH]...  (NAME on, NO_NAME off, name=value tunable)\n\
         `schedlab policies NAME` lists the switches of a preset with their defaults."
    );
    out
}

/// One preset in full: models, configuration, reconstructions, switches.
pub fn describe_preset(name: &str) -> Result<String, PolicyError> {
    let r = resolve(name)?;
    let (era, reference) = match r.target {
        Target::Era(e) => (e, None),
        Target::Reference(n) => (REFERENCE_BASE, Some(n)),
    };
    let info = presets()
        .iter()
        .find(|p| p.name == r.name.split(',').next().unwrap_or(""))
        .copied();
    let mut out = String::new();
    let _ = writeln!(out, "{}", r.name);
    if let Some(i) = info {
        let _ = writeln!(out, "  era:     {}", i.era);
        let _ = writeln!(out, "  models:  {}", i.models);
    }
    let c = &r.settings.config;
    let t = &c.tunables;
    let _ = writeln!(
        out,
        "  kernel:  class {:?}, load signal {:?}, domain parameters {}, HZ {}",
        c.class,
        c.load_signal,
        c.domain_era.label(),
        t.hz
    );
    if era == Era::V2_5_59 {
        let o = &r.settings.o1;
        let node = if o.variant == schedlab_engine::balance_o1::O1Variant::Orig {
            format!(
                "every {}th balancing call looks at other nodes",
                o.node_balance_rate
            )
        } else {
            format!(
                "node ticks: idle {}, busy {}",
                o.idle_node_rebalance_tick, o.busy_node_rebalance_tick
            )
        };
        let _ = writeln!(
            out,
            "  balancer: O(1) node balancer '{}' (ticks: idle {}, busy {}; {node}; threshold {} %, cache_decay_ticks {})",
            o.variant.name(),
            o.idle_rebalance_tick,
            o.busy_rebalance_tick,
            o.node_threshold,
            o.cache_decay_ticks
        );
    } else {
        let _ = writeln!(
            out,
            "  tunables (unscaled): latency {} ns, min_granularity/base_slice {} ns, wakeup_granularity {} ns, migration_cost {} ns",
            t.latency_ns, t.min_granularity_ns, t.wakeup_granularity_ns, t.migration_cost_ns
        );
        let _ = writeln!(out, "  balancer: sched-domain balancer (CfsBalancer)");
    }
    if reference.is_none() {
        for n in notes(era) {
            let _ = writeln!(out, "  note:    {n}");
        }
    } else {
        let _ = writeln!(
            out,
            "  note:    placement is the reference rule; kernel model from {}",
            REFERENCE_BASE.name()
        );
    }
    let list = crate::switches(name)?;
    let _ = writeln!(out, "\nswitches ({}):", list.len());
    let w = list.iter().map(|s| s.name.len()).max().unwrap_or(8);
    for s in &list {
        let _ = writeln!(
            out,
            "  {:<w$}  {:<21}  {:<14}  {}",
            s.name,
            s.default,
            s.provenance.label(),
            s.meaning
        );
    }
    Ok(out)
}
