//! The variant syntax, switch validation against eras, error messages, and what `build`
//! returns per era (class, domain era, balancer, feature defaults, R2's 4.6 defaults).

use schedlab_engine::{ClassKind, LoadSignal};
use schedlab_policies::{
    Era, PolicyError, PresetKind, Provenance, build, parse_variant, presets, settings, switches,
};
use schedlab_topo::{DomainEra, regular};

fn topo() -> schedlab_topo::Topology {
    regular("t", "test", 2, 1, 2, 2, true).unwrap()
}

#[test]
fn syntax() {
    let v =
        parse_variant("linux-4.6, NO_OLD_IDLE ,IDLE_CORE,sched_migration_cost_ns=250000").unwrap();
    assert_eq!(v.policy, "linux-4.6");
    assert_eq!(
        v.switches,
        vec!["NO_OLD_IDLE", "IDLE_CORE", "sched_migration_cost_ns=250000"]
    );
    for bad in [
        "",
        ",WA_IDLE",
        "linux-6.6,",
        "linux-6.6,,WA_IDLE",
        "linux 6.6",
        "linux-6.6,WA IDLE",
        "linux-6.6,x=",
        "linux-6.6,=3",
        "linux-6.6,a=b=c",
    ] {
        let e = parse_variant(bad).unwrap_err();
        assert!(matches!(e, PolicyError::Syntax { .. }), "{bad:?}: {e}");
        assert!(e.to_string().contains("POLICY[,SWITCH]"), "{e}");
    }
}

#[test]
fn unknown_policy_suggests_and_lists() {
    let e = build("linux-3.1O", &topo(), 1).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("unknown policy 'linux-3.1O'"), "{msg}");
    assert!(msg.contains("did you mean"), "{msg}");
    assert!(
        msg.contains("linux-2.5.59") && msg.contains("random"),
        "{msg}"
    );
}

#[test]
fn unknown_switch_suggests_the_closest_valid_one() {
    let e = build("linux-3.10,WAKEUP_BUDY", &topo(), 1).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, PolicyError::UnknownSwitch { .. }), "{msg}");
    assert!(msg.contains("did you mean 'WAKEUP_BUDDY'"), "{msg}");
    assert!(
        msg.contains("valid switches for linux-3.10") && msg.contains("WAKEUP_PREEMPTION"),
        "{msg}"
    );
}

#[test]
fn a_typo_of_another_eras_switch_says_where_that_switch_exists() {
    let e = build("linux-4.14,WAKEUP_BUDY", &topo(), 1).unwrap_err();
    let msg = e.to_string();
    match &e {
        PolicyError::UnknownSwitch {
            suggestion,
            suggestion_eras,
            ..
        } => {
            assert_eq!(suggestion.as_deref(), Some("WAKEUP_BUDDY"), "{msg}");
            let eras = suggestion_eras.as_deref().unwrap_or_default();
            assert!(eras.starts_with("which exists only in linux-3.6"), "{msg}");
        }
        other => panic!("expected UnknownSwitch, got {other:?}"),
    }
    assert!(
        msg.contains("(did you mean 'WAKEUP_BUDDY', which exists only in linux-3.6"),
        "{msg}"
    );
}

#[test]
fn switch_of_another_era_is_rejected_with_where_it_applies() {
    let e = build("linux-4.14,WAKEUP_BUDDY", &topo(), 1).unwrap_err();
    let msg = e.to_string();
    match &e {
        PolicyError::NotApplicable {
            applies_to, valid, ..
        } => {
            assert!(
                applies_to.contains("linux-3.10") && applies_to.contains("linux-3.6"),
                "{msg}"
            );
            assert!(!applies_to.contains("linux-4.14"), "{msg}");
            assert!(valid.contains("WA_BIAS"), "{msg}");
        }
        other => panic!("expected NotApplicable, got {other:?}"),
    }
    // Debated variants only where they were proposed (mailing-list debates).
    for (ok, bad) in [
        ("linux-2.6.33,RAMP", "linux-2.6.35,RAMP"),
        ("linux-2.6.32,AFFINE_TARGET", "linux-3.10,AFFINE_TARGET"),
        ("linux-4.2,PREFER_IDLE_CPU", "linux-4.6,PREFER_IDLE_CPU"),
        ("linux-4.2,WAKE_WIDE_IDLE_BOTH", "linux-4.9,WAKE_WIDE_IDLE"),
        ("linux-4.9,NO_OLD_IDLE", "linux-4.14,OLD_IDLE"),
        ("linux-6.0,SIS_NODE", "linux-6.12,SIS_NODE"),
        ("linux-2.5.59,ingofix", "linux-2.6.30,ingo"),
        ("linux-6.6,SIS_PROP", "linux-6.12,SIS_PROP"),
        ("linux-6.12,DELAY_DEQUEUE", "linux-6.6,DELAY_DEQUEUE"),
        ("linux-5.13,LAST_BUDDY", "linux-6.6,LAST_BUDDY"),
        (
            "linux-6.6,sched_base_slice_ns=3000000",
            "linux-6.6,sched_latency_ns=6000000",
        ),
        ("linux-3.12,WAKE_WIDE", "linux-3.10,NO_WAKE_WIDE"),
    ] {
        assert!(build(ok, &topo(), 1).is_ok(), "{ok} should build");
        assert!(
            matches!(
                build(bad, &topo(), 1),
                Err(PolicyError::NotApplicable { .. })
            ),
            "{bad} should be rejected"
        );
    }
}

#[test]
fn values_are_checked() {
    for (v, key) in [
        ("linux-6.6,WA_IDLE=1", "WA_IDLE"),
        (
            "linux-6.6,sched_migration_cost_ns",
            "sched_migration_cost_ns",
        ),
        (
            "linux-6.6,sched_migration_cost_ns=abc",
            "sched_migration_cost_ns",
        ),
        ("linux-6.6,sched_tunable_scaling=7", "sched_tunable_scaling"),
        ("linux-2.5.59,idle_rebalance_tick=0", "idle_rebalance_tick"),
        ("linux-6.6,hz=5", "hz"),
    ] {
        let e = build(v, &topo(), 1).unwrap_err();
        match &e {
            PolicyError::BadValue { key: k, .. } => assert_eq!(k, key, "{v}: {e}"),
            other => panic!("{v}: expected BadValue, got {other}"),
        }
        assert!(e.to_string().contains(key), "{e}");
    }
    // NO_ on a tunable or a balancer variant is not a switch.
    assert!(matches!(
        build("linux-6.6,NO_hz", &topo(), 1),
        Err(PolicyError::UnknownSwitch { .. })
    ));
    assert!(matches!(
        build("linux-2.5.59,NO_ingo", &topo(), 1),
        Err(PolicyError::UnknownSwitch { .. })
    ));
}

#[test]
fn canonical_names() {
    let b = build(
        "LINUX-4.6,no_old_idle,idle_core,Sched_Migration_Cost_ns=1_000",
        &topo(),
        1,
    )
    .unwrap();
    assert_eq!(
        b.name,
        "linux-4.6,NO_OLD_IDLE,IDLE_CORE,sched_migration_cost_ns=1000"
    );
    assert_eq!(b.policy.name(), b.name);
    assert_eq!(b.config.tunables.migration_cost_ns, 1000);
    let b = build("linux-2.5.59,INGOB0", &topo(), 1).unwrap();
    assert_eq!(b.name, "linux-2.5.59,ingoB0");
    assert_eq!(b.balancer.name(), "o1-numa-ingoB0");
}

#[test]
fn eras_configure_the_kernel() {
    let t = topo();
    for e in Era::ALL {
        let b = build(e.name(), &t, 1).unwrap();
        let want_domains = if e <= Era::V2_6_35 {
            DomainEra::Linux26
        } else if e <= Era::V4_14 {
            DomainEra::Linux3
        } else {
            DomainEra::Linux510
        };
        assert_eq!(b.config.domain_era, want_domains, "{}", e.name());
        assert_eq!(b.config.label, e.name());
        // EEVDF replaced CFS in 6.6, for every later era too.
        let class = if e == Era::V2_5_59 {
            ClassKind::O1
        } else if e >= Era::V6_6 {
            ClassKind::Eevdf
        } else {
            ClassKind::Cfs
        };
        assert_eq!(b.config.class, class, "{}", e.name());
        if e == Era::V2_5_59 {
            assert_eq!(b.balancer.name(), "o1-numa-orig");
        } else {
            assert_eq!(b.balancer.name(), "cfs");
        }
    }
    let c = build("linux-2.6.30", &t, 1).unwrap().config;
    assert_eq!(
        (
            c.tunables.latency_ns,
            c.tunables.min_granularity_ns,
            c.tunables.wakeup_granularity_ns
        ),
        (20_000_000, 4_000_000, 5_000_000)
    );
    assert!(!c.features.gentle_fair_sleepers && c.features.start_debit && !c.features.ttwu_queue);
    let c = build("linux-2.6.32", &t, 1).unwrap().config;
    assert_eq!(
        (c.tunables.latency_ns, c.tunables.min_granularity_ns),
        (5_000_000, 1_000_000)
    );
    assert_eq!(c.load_signal, LoadSignal::Instant);
    // 3.10's weighted_cpuload() is still rq->load.weight; 3.11 moved to runnable_load_avg.
    let c = build("linux-3.10", &t, 1).unwrap().config;
    assert_eq!(c.load_signal, LoadSignal::Instant);
    assert!(c.features.ttwu_queue);
    let c = build("linux-3.12", &t, 1).unwrap().config;
    assert_eq!(c.load_signal, LoadSignal::PeltRunnable);
    let c = build("linux-5.13", &t, 1).unwrap().config;
    assert_eq!(c.load_signal, LoadSignal::PeltBlocked);
    assert!(c.features.base_slice && !c.features.ttwu_pending_visible);
    let c = build("linux-6.6", &t, 1).unwrap().config;
    assert!(
        c.features.place_lag
            && c.features.run_to_parity
            && !c.features.last_buddy
            && !c.features.start_debit
    );
    assert!(!c.features.delay_dequeue && c.features.ttwu_pending_visible);
    let c = build("linux-6.12", &t, 1).unwrap().config;
    assert!(c.features.delay_dequeue && c.features.preempt_short);
}

#[test]
fn r2_defaults_at_4_6_are_the_old_search() {
    let s = settings("linux-4.6").unwrap();
    assert!(
        s.is_on("OLD_IDLE")
            && s.is_on("ORDER_IDLE")
            && !s.is_on("IDLE_CORE")
            && !s.is_on("IDLE_CPU")
            && !s.is_on("IDLE_SMT")
    );
    let s = settings("linux-4.9").unwrap();
    assert!(
        !s.is_on("OLD_IDLE")
            && !s.is_on("ORDER_IDLE")
            && s.is_on("IDLE_CORE")
            && s.is_on("IDLE_CPU")
            && s.is_on("IDLE_SMT")
    );
    let s = settings("linux-4.6,NO_OLD_IDLE,NO_ORDER_IDLE,IDLE_CORE,IDLE_CPU,IDLE_SMT").unwrap();
    assert!(
        !s.is_on("OLD_IDLE")
            && !s.is_on("ORDER_IDLE")
            && s.is_on("IDLE_CORE")
            && s.is_on("IDLE_CPU")
            && s.is_on("IDLE_SMT")
    );
    assert_eq!(s.era, Era::V4_6);
}

#[test]
fn later_switches_win_and_balancer_variants_reset_their_ticks_first() {
    let s = settings("linux-6.6,NO_SIS_UTIL,SIS_UTIL").unwrap();
    assert!(s.config.features.sis_util);
    // A tick tunable given before the variant still applies (variants are applied first).
    let s = settings("linux-2.5.59,idle_node_rebalance_tick=5,ingoB0").unwrap();
    assert_eq!(s.o1.idle_node_rebalance_tick, 5);
    assert_eq!(s.o1.busy_node_rebalance_tick, 400);
    let s = settings("linux-2.5.59,ingoB0,idle_node_rebalance_mult=10,busy_node_rebalance_mult=5")
        .unwrap();
    assert_eq!(
        (s.o1.idle_node_rebalance_tick, s.o1.busy_node_rebalance_tick),
        (10, 1000)
    );
    let s = settings("linux-2.5.59").unwrap();
    assert_eq!(
        (
            s.o1.busy_rebalance_tick,
            s.o1.node_balance_rate,
            s.o1.node_threshold
        ),
        (250, 10, 125)
    );
}

#[test]
fn balancer_follows_sis_util_and_the_era() {
    // The built balancer is opaque; its SIS_UTIL refresh shows in the settings it came from.
    assert!(settings("linux-6.0").unwrap().config.features.sis_util);
    assert!(
        !settings("linux-6.0,NO_SIS_UTIL")
            .unwrap()
            .config
            .features
            .sis_util
    );
    assert!(!settings("linux-5.13").unwrap().config.features.sis_util);
}

#[test]
fn find_busiest_group_is_load_based_until_5_5() {
    // 3.10's capacity in tasks until 4.0, 4.1's utilisation test until 5.4, 5.5's group
    // types after (0b0695f2b34a); 2.5.59 has its own node balancer.
    use schedlab_engine::LbRules;
    use schedlab_policies::era::BalancerKind;
    let rules = |name: &str| match schedlab_policies::settings(name)
        .unwrap()
        .era
        .def()
        .balancer
    {
        BalancerKind::Cfs { rules, .. } => Some(rules),
        BalancerKind::O1Node => None,
    };
    assert_eq!(rules("linux-2.5.59"), None);
    for (era, want) in [
        ("linux-2.6.30", LbRules::Capacity),
        ("linux-3.10", LbRules::Capacity),
        ("linux-3.12", LbRules::Capacity),
        ("linux-4.2", LbRules::Util),
        ("linux-4.6", LbRules::Util),
        ("linux-4.14", LbRules::Util),
        ("linux-5.13", LbRules::GroupTypes),
        ("linux-6.6", LbRules::GroupTypes),
    ] {
        assert_eq!(rules(era), Some(want), "{era}");
    }
}

#[test]
fn preset_list_and_switch_listing() {
    let names: Vec<&str> = presets().iter().map(|p| p.name).collect();
    for want in [
        "linux-2.5.59",
        "linux-2.6.30",
        "linux-2.6.32",
        "linux-2.6.33",
        "linux-2.6.35",
        "linux-3.6",
        "linux-3.10",
        "linux-3.12",
        "linux-4.2",
        "linux-4.6",
        "linux-4.9",
        "linux-4.14",
        "linux-5.13",
        "linux-6.0",
        "linux-6.6",
        "linux-6.12",
        "prev",
        "waker",
        "idlest",
        "random",
    ] {
        assert!(names.contains(&want), "missing preset {want}");
    }
    assert_eq!(
        presets()
            .iter()
            .filter(|p| p.kind == PresetKind::Reference)
            .count(),
        4
    );
    let sw = switches("linux-4.6").unwrap();
    let get = |n: &str| {
        sw.iter()
            .find(|s| s.name == n)
            .unwrap_or_else(|| panic!("{n} not listed"))
    };
    assert_eq!(get("OLD_IDLE").default, "on");
    assert_eq!(get("IDLE_CORE").default, "off");
    assert_eq!(get("IDLE_CORE").provenance, Provenance::Reconstruction);
    assert_eq!(get("WAKE_WIDE").provenance, Provenance::Mainline);
    assert_eq!(get("sched_migration_cost_ns=").default, "500000");
    assert_eq!(
        get("sched_migration_cost_ns=").provenance,
        Provenance::Tunable
    );
    assert!(sw.iter().all(|s| !s.meaning.is_empty()));
    let sw = switches("linux-2.5.59").unwrap();
    assert!(
        sw.iter()
            .any(|s| s.name == "orig" && s.default.starts_with("on"))
    );
    assert!(sw.iter().any(|s| s.name == "ingoB0" && s.default == "off"));
    // Reference policies take only engine-level switches.
    let sw = switches("random").unwrap();
    assert!(sw.iter().any(|s| s.name == "WAKEUP_PREEMPTION"));
    assert!(!sw.iter().any(|s| s.name == "WA_IDLE"));
    assert!(matches!(
        build("random,WA_IDLE", &topo(), 1),
        Err(PolicyError::NotApplicable { .. })
    ));
    assert!(build("idlest,NO_WAKEUP_PREEMPTION", &topo(), 1).is_ok());
}

#[test]
fn describe_texts() {
    let list = schedlab_policies::describe_presets();
    assert!(
        list.contains("linux-4.9") && list.contains("CFS-5") && list.contains("POLICY[,SWITCH]")
    );
    let one = schedlab_policies::describe_preset("linux-3.10").unwrap();
    assert!(
        one.contains("WAKEUP_BUDDY")
            && one.contains("reconstruction")
            && one.contains("wakeup_buddy_ref=")
    );
    assert!(one.contains("[M]"), "{one}");
    let o1 = schedlab_policies::describe_preset("linux-2.5.59,ingoB0").unwrap();
    assert!(
        o1.contains("'ingoB0'") && o1.contains("node ticks: idle 2, busy 400"),
        "{o1}"
    );
    assert!(schedlab_policies::describe_preset("linux-9.9").is_err());
}
