//! sched_feat-style switches: `NAME` turns a feature on, `NO_NAME` off, `name=value` sets a
//! tunable, and `orig`/`ingo`/`ingofix`/`ingoB0` pick the 2.5.59 balancer.
//!
//! One table says, for every switch, which kernel versions have it, whether the engine or
//! only the placement reads it, what it means and whether it is mainline code re-expressed,
//! a reconstruction of a mailing-list patch, or a tunable (with its unit and range). A
//! switch is its row: a placement switch's row also gives its default per era and the files
//! that read it, and the code reads it by name, `s.on(sw!("WA_IDLE"))`, which resolves the
//! row at compile time (a misspelt name does not build); there is no field to keep in step.
//! An engine switch's row names the engine's configuration field it writes, whose default
//! is the era's configuration. Era applicability (see docs/policies/switches.md): a switch
//! applies where that era's kernel has the feature, or where it is a debated variant
//! proposed against that era. What a row is (provenance, scope, kind) and the macros that
//! write rows are in `switch_def.rs`; the rows are in `switches/placement.rs` and
//! `switches/engine.rs`, listed in the order of `SECTIONS`.
//!
//! A new placement switch is one `placement!` row in `switches/placement.rs` and its use,
//! `s.on(sw!("NAME"))`, in one of the files its row lists.

use crate::era::Era;
pub(crate) use crate::switch_def::{Kind, SwitchDef};
pub use crate::switch_def::{Provenance, Scope};

mod engine;
mod placement;

/// The switch table in listing order: section after section.
pub(crate) const SECTIONS: [&[SwitchDef]; 6] = [
    placement::MAINLINE,
    engine::FEATURES,
    placement::DEBATED,
    engine::O1_BALANCER,
    engine::TUNABLES,
    engine::PREEMPT,
];

/// How many rows the table has (the length of [`Settings`]' value array).
pub(crate) const NR_SWITCHES: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < SECTIONS.len() {
        n += SECTIONS[i].len();
        i += 1;
    }
    n
};

/// Every switch, in listing order.
pub(crate) fn all() -> impl Iterator<Item = &'static SwitchDef> {
    SECTIONS.iter().flat_map(|s| s.iter())
}

/// A placement switch's row, as `sw!` finds it: the index of its value in [`Settings`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SwitchId(usize);

impl SwitchId {
    /// The row named `name` (exact spelling). In a constant (as `sw!` uses it) a name
    /// that is not a placement row stops the build; at run time it panics, so it is only
    /// called with names the table holds.
    pub(crate) const fn of(name: &str) -> SwitchId {
        let mut base = 0;
        let mut s = 0;
        while s < SECTIONS.len() {
            let rows = SECTIONS[s];
            let mut i = 0;
            while i < rows.len() {
                if str_eq(rows[i].name, name) {
                    assert!(
                        matches!(
                            rows[i].kind,
                            Kind::Feature(crate::switch_def::Store::Placement { .. })
                                | Kind::Tunable(crate::switch_def::Store::Placement { .. }, _)
                        ),
                        "sw!: an engine switch has no placement value"
                    );
                    return SwitchId(base + i);
                }
                i += 1;
            }
            base += rows.len();
            s += 1;
        }
        panic!("sw!: no switch of that name")
    }

    /// The index in [`Settings`]' value array.
    pub(crate) const fn index(self) -> usize {
        self.0
    }
}

/// Byte equality of two names, usable in a constant.
const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// `sw!("NAME")`: the [`SwitchId`] of placement switch `NAME`, found at compile time.
macro_rules! sw {
    ($name:literal) => {{
        const ID: $crate::switches::SwitchId = $crate::switches::SwitchId::of($name);
        ID
    }};
}
pub(crate) use sw;

/// The definition of `name` (case-insensitive), if any.
pub(crate) fn find(name: &str) -> Option<&'static SwitchDef> {
    all().find(|d| d.name.eq_ignore_ascii_case(name))
}

/// Whether `name` (case-insensitive) is one of the 2.5.59 balancer variants (`orig`, `ingo`,
/// `ingofix`, `ingoB0`), which replace each other rather than switch something on or off.
pub fn is_balancer_variant(name: &str) -> bool {
    find(name).is_some_and(|d| matches!(d.kind, Kind::Balancer(_)))
}

/// The switches valid for `era`, in listing order.
pub(crate) fn valid_for(era: Era) -> impl Iterator<Item = &'static SwitchDef> {
    all().filter(move |d| d.applies(era))
}

#[cfg(test)]
mod tests;
