//! Tests of the tunables' ranges, through the variant parser.

use crate::era::{Era, REFERENCE_BASE};
use crate::error::PolicyError;
use crate::switches::{Kind, all};
use crate::variant::resolve;

/// A preset where the switch applies.
fn preset_of(name: &str) -> &'static str {
    let d = crate::switches::find(name).expect("switch");
    Era::ALL
        .iter()
        .find(|&&e| d.applies(e))
        .map(|e| e.name())
        .expect("an era has it")
}

#[test]
fn every_tunable_takes_its_bounds_and_refuses_one_past_them() {
    let mut tunables = 0;
    for d in all() {
        let Kind::Tunable(_, range) = d.kind else {
            continue;
        };
        tunables += 1;
        let p = preset_of(d.name);
        assert!(range.min <= range.max, "{}", d.name);
        for ok in [range.min, range.max] {
            let s = resolve(&format!("{p},{}={ok}", d.name))
                .unwrap_or_else(|e| panic!("{}={ok}: {e}", d.name))
                .settings;
            assert_eq!(s.read(d), ok, "{} reads back what it was set to", d.name);
        }
        let mut outside = vec![u128::from(range.max) + 1];
        if range.min > 0 {
            outside.push(u128::from(range.min) - 1);
        }
        for bad in outside {
            let e = resolve(&format!("{p},{}={bad}", d.name)).unwrap_err();
            let PolicyError::BadValue { key, reason, .. } = &e else {
                panic!("{}={bad}: expected BadValue, got {e}", d.name);
            };
            assert_eq!(key, d.name);
            assert!(reason.contains(&range.describe()), "{e}");
            let line = e.to_string();
            assert!(!line.contains('\n') && line.contains(d.name), "{line}");
        }
    }
    assert_eq!(tunables, 21, "a new tunable row needs its range");
}

#[test]
fn a_slice_past_u64_is_out_of_range_not_a_panic() {
    for v in [
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999999",
    ] {
        let e = resolve(&format!("linux-6.6,sched_base_slice_ns={v}")).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "bad value for 'sched_base_slice_ns' in linux-6.6: '{v}': out of range: \
                 must be 100000 to 1000000000 ns"
            )
        );
    }
    let e = resolve("linux-6.6,sched_base_slice_ns=-1").unwrap_err();
    assert!(e.to_string().ends_with("not a non-negative integer"), "{e}");
    assert!(resolve(&format!("{},hz=5", REFERENCE_BASE.name())).is_err());
}
