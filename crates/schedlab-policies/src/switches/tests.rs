//! Tests of the switch table: the scope column against the engine's own list, and the ids
//! `sw!` gives (each row's `read_in` against the code: `tests/switch_rows.rs`).

use super::*;
use crate::era::REFERENCE_BASE;

/// The engine-scope switches of the reference policies' kernel (linux-6.6) are the
/// hand-kept list the scope column replaced: every tunable and these features.
#[test]
fn the_reference_policies_accept_what_the_name_list_named() {
    let named = [
        "TTWU_QUEUE",
        "WAKEUP_PREEMPTION",
        "NEXT_BUDDY",
        "CACHE_HOT_BUDDY",
        "PLACE_LAG",
        "PLACE_DEADLINE_INITIAL",
        "RUN_TO_PARITY",
        "SIS_UTIL",
        "PREEMPT_NONE",
        "PREEMPT_VOLUNTARY",
        "PREEMPT_FULL",
    ];
    // The tunables of the 2023 placement patches only their placement reads.
    let placement_tunables = ["migration_ratelimit_ns", "prev_idle_load"];
    for d in valid_for(REFERENCE_BASE) {
        let listed = (matches!(d.kind, Kind::Tunable(..)) && !placement_tunables.contains(&d.name))
            || named.contains(&d.name);
        assert_eq!(d.scope == Scope::Engine, listed, "{}", d.name);
    }
    // Engine features are engine-scope in every era; placement fields are not.
    for d in all() {
        if d.name == "PLACE_LAG" || d.name == "LAST_BUDDY" {
            assert_eq!(d.scope, Scope::Engine);
        }
        if d.name == "SIS_PROP" || d.name == "WAKEUP_BUDDY" {
            assert_eq!(d.scope, Scope::Placement);
        }
    }
}

/// The id `sw!` gives is the row's position in listing order, and reads back through the
/// row: a value set by name is the value the placement code sees.
#[test]
fn sw_ids_are_listing_positions() {
    let pos = all().position(|d| d.name == "WA_IDLE").unwrap();
    assert_eq!(sw!("WA_IDLE").index(), pos);
    let s = crate::variant::resolve("linux-4.14,NO_WA_IDLE")
        .unwrap()
        .settings;
    assert!(!s.on(sw!("WA_IDLE")) && s.on(sw!("WA_WEIGHT")));
    let s = crate::variant::resolve("linux-6.6,migration_ratelimit_ns=5000")
        .unwrap()
        .settings;
    assert_eq!(s.value(sw!("migration_ratelimit_ns")), 5000);
    assert_eq!(s.get("MIGRATION_RATELIMIT_NS"), Some(5000));
    assert_eq!(NR_SWITCHES, all().count());
}
