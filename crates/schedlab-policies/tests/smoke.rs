//! End to end: every preset, and every feature switch of every era flipped away from its
//! default, builds and runs small hackbench-like and ping-pong workloads to completion on
//! SMT machines with two nodes (with the engine's invariant checks on the small machine).

mod common;

use common::{hackbench, pingpong_and_timer, run};
use schedlab_policies::{Provenance, presets, switches};
use schedlab_topo::regular;
use std::sync::Arc;

/// The preset plus each of its feature switches set against its default.
fn variants() -> Vec<String> {
    let mut out = Vec::new();
    for p in presets() {
        out.push(p.name.to_string());
        for s in switches(p.name).unwrap() {
            if s.provenance == Provenance::Tunable {
                continue;
            }
            let v = match s.default.as_str() {
                "on" => format!("{},NO_{}", p.name, s.name),
                "off" => format!("{},{}", p.name, s.name),
                _ => continue, // the default balancer variant
            };
            out.push(v);
        }
    }
    out
}

#[test]
fn every_preset_and_switch_runs_with_invariants() {
    // 2 nodes x 1 LLC x 2 cores x SMT-2 = 8 CPUs.
    let topo = Arc::new(regular("smoke-8", "test", 2, 1, 2, 2, true).unwrap());
    let vs = variants();
    assert!(vs.len() > 150, "only {} variants", vs.len());
    for (i, v) in vs.iter().enumerate() {
        let sim = run(v, &topo, hackbench(2, 2, 60), true, i as u64 + 1);
        let c = sim.counters();
        assert_eq!(c.forks, 1 + 8, "{v}");
        // (6.12: a delayed task is woken without a placement, so searches may be fewer.)
        assert!(
            c.searches >= c.forks && c.searches <= c.forks + c.wakeups,
            "{v}: {}",
            c.to_text()
        );
        assert!(
            c.wakeups >= 8,
            "{v}: receivers and blocked senders must be woken: {}",
            c.to_text()
        );
        let sim = run(v, &topo, pingpong_and_timer(50), true, i as u64 + 1);
        assert!(sim.counters().wakeups_irq >= 20, "{v}");
    }
}

#[test]
fn presets_run_on_larger_machines() {
    let machines = [
        Arc::new(regular("smoke-32", "test", 2, 2, 4, 2, true).unwrap()),
        Arc::new(schedlab_topo::preset("kunpeng920-2n").unwrap()),
        Arc::new(schedlab_topo::preset("tx7-4n2c").unwrap()),
    ];
    for topo in &machines {
        for p in presets() {
            let sim = run(p.name, topo, hackbench(3, 3, 8), false, 7);
            let c = sim.counters();
            assert!(
                c.cpus_examined > 0
                    || p.name == "prev"
                    || p.name == "waker"
                    || p.name == "random"
                    || p.name == "linux-2.5.59",
                "{} on {}: nothing examined",
                p.name,
                topo.name
            );
        }
    }
}

#[test]
fn runs_are_deterministic_per_seed() {
    let topo = Arc::new(regular("smoke-8", "test", 2, 1, 2, 2, true).unwrap());
    for v in [
        "linux-6.12",
        "linux-3.10,WAKEUP_BUDDY",
        "random",
        "linux-2.5.59,ingo",
    ] {
        let a = run(v, &topo, hackbench(2, 2, 10), false, 5);
        let b = run(v, &topo, hackbench(2, 2, 10), false, 5);
        assert_eq!(a.event_hash(), b.event_hash(), "{v}");
        assert_eq!(a.now(), b.now(), "{v}");
    }
}
