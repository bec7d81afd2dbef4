//! What a switch is: where its behaviour comes from ([`Provenance`]), who reads it
//! ([`Scope`]), where its value lives (`Store`: a placement switch has no field of its own,
//! an engine switch is the engine's configuration field), its kind (feature, tunable with
//! its range, 2.5.59 balancer variant) and the definition row (`SwitchDef`), with the
//! macros that write the rows of the table in [`crate::switches`]. Split from the table so
//! that each file reads on its own.

use crate::era::Era;
use crate::tunables::Range;
use crate::version::Versions;
use schedlab_engine::Features;
use schedlab_engine::SchedConfig;
use schedlab_engine::balance_o1::{O1Params, O1Variant};

/// Where a switch's behaviour comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provenance {
    /// Mainline kernel code of that era, described in our own words (or a bisect switch
    /// that turns a mainline heuristic off).
    Mainline,
    /// A reconstruction of a mailing-list patch from its description (marked \[M\]).
    Reconstruction,
    /// A numeric tunable.
    Tunable,
}

impl Provenance {
    /// Lower-case label.
    pub fn label(self) -> &'static str {
        match self {
            Provenance::Mainline => "mainline",
            Provenance::Reconstruction => "reconstruction",
            Provenance::Tunable => "tunable",
        }
    }
}

/// Who reads a switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The engine or the era's balancer (kernel configuration, pick and preemption): it
    /// means the same under any placement, so the reference policies accept it too.
    Engine,
    /// Only the era's `select_task_rq`.
    Placement,
}

impl Scope {
    /// Lower-case label.
    pub fn label(self) -> &'static str {
        match self {
            Scope::Engine => "engine",
            Scope::Placement => "placement",
        }
    }
}

/// Where a switch's value lives: the one place that holds it.
#[derive(Clone, Copy)]
pub(crate) enum Store {
    /// A placement switch: no field of its own. Its value sits in `Settings` under the
    /// row's index, starts at `default(era)`, and the placement code reads it by name with
    /// `sw!("NAME")` (checked at compile time) in the files of `read_in` and nowhere else.
    Placement {
        /// The default in each era.
        default: fn(Era) -> u64,
        /// The files of `src/` that read it (a test holds the code to this list).
        read_in: &'static [&'static str],
        /// Engine bookkeeping the patch needs, turned on with the switch (so runs without it
        /// do no extra work).
        track: Option<fn(&mut Features)>,
    },
    /// A field of the engine's configuration or of the 2.5.59 balancer's parameters: the
    /// engine reads it there, and the era's configuration ([`crate::Era::config`]) gives its
    /// default.
    Engine {
        get: fn(&SchedConfig) -> u64,
        set: fn(&mut SchedConfig, u64),
    },
    /// A parameter of the 2.5.59 balancer, which the engine's `O1NodeBalancer` reads.
    O1 {
        get: fn(&O1Params) -> u64,
        set: fn(&mut O1Params, u64),
    },
}

/// Kinds of switch.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    /// A boolean feature (value 0 or 1).
    Feature(Store),
    /// A numeric tunable; it is only given values inside `range`.
    Tunable(Store, Range),
    /// A 2.5.59 balancer variant.
    Balancer(O1Variant),
}

/// One switch definition.
#[derive(Clone, Copy)]
pub(crate) struct SwitchDef {
    pub name: &'static str,
    /// The kernel versions that have it (or against which it was proposed): a preset
    /// added later gets it by its own version.
    pub versions: Versions,
    /// Who reads it.
    pub scope: Scope,
    pub kind: Kind,
    pub provenance: Provenance,
    pub meaning: &'static str,
}

impl SwitchDef {
    pub(crate) fn applies(&self, era: Era) -> bool {
        self.versions.contains(era.version())
    }
    /// The unit and bounds of a tunable (`None` for the other kinds).
    pub(crate) fn range(&self) -> Option<Range> {
        match self.kind {
            Kind::Tunable(_, range) => Some(range),
            _ => None,
        }
    }
    /// Where a feature's or tunable's value lives (`None` for a balancer variant).
    pub(crate) fn store(&self) -> Option<Store> {
        match self.kind {
            Kind::Feature(store) | Kind::Tunable(store, _) => Some(store),
            Kind::Balancer(_) => None,
        }
    }
    /// Canonical spelling as it appears in the listing (`NAME`, `name=`, `ingoB0`).
    pub(crate) fn display(&self) -> String {
        match self.kind {
            Kind::Tunable(..) => format!("{}=", self.name),
            _ => self.name.to_string(),
        }
    }
}

/// One placement feature row: name, versions, provenance, default per era (`|era| 0 or 1`),
/// the files that read it, and its meaning; optionally the engine bookkeeping it needs
/// (`track: field`).
macro_rules! placement {
    ($name:expr, $versions:expr, $prov:expr, default: $default:expr, read_in: $read_in:expr,
     $meaning:expr $(, track: $track:ident)?) => {
        SwitchDef {
            name: $name,
            versions: $versions,
            scope: Scope::Placement,
            kind: Kind::Feature(Store::Placement {
                default: $default,
                read_in: $read_in,
                track: placement!(@track $($track)?),
            }),
            provenance: $prov,
            meaning: $meaning,
        }
    };
    (@track $track:ident) => { Some(|f: &mut Features| f.$track = true) };
    (@track) => { None };
}

/// One placement tunable row: as [`placement!`] with its range; the default is a number.
macro_rules! placement_tunable {
    ($name:expr, $versions:expr, $range:expr, default: $default:expr, read_in: $read_in:expr,
     $meaning:expr) => {
        SwitchDef {
            name: $name,
            versions: $versions,
            scope: Scope::Placement,
            kind: Kind::Tunable(
                Store::Placement {
                    default: |_| $default,
                    read_in: $read_in,
                    track: None,
                },
                $range,
            ),
            provenance: Provenance::Tunable,
            meaning: $meaning,
        }
    };
}

/// One engine feature row: the engine's `Features` field it sets.
macro_rules! engine_feature {
    ($name:expr, $versions:expr, $field:ident, $meaning:expr) => {
        SwitchDef {
            name: $name,
            versions: $versions,
            scope: Scope::Engine,
            kind: Kind::Feature(Store::Engine {
                get: |c| u64::from(c.features.$field),
                set: |c, v| c.features.$field = v != 0,
            }),
            provenance: Provenance::Mainline,
            meaning: $meaning,
        }
    };
}

/// One engine tunable row: `name=value` with its versions, range, how it reads and writes
/// the engine's configuration (`config`) or the 2.5.59 balancer's parameters (`o1`) (`set`
/// only sees values inside the range) and its meaning.
macro_rules! tunable {
    ($name:expr, $versions:expr, $range:expr, $store:ident,
     get: |$gs:ident| $get:expr, set: |$ss:ident, $v:ident| $set:expr, $meaning:expr) => {
        SwitchDef {
            name: $name,
            versions: $versions,
            scope: Scope::Engine,
            kind: Kind::Tunable(tunable!(@store $store, |$gs| $get, |$ss, $v| $set), $range),
            provenance: Provenance::Tunable,
            meaning: $meaning,
        }
    };
    (@store config, $get:expr, $set:expr) => { Store::Engine { get: $get, set: $set } };
    (@store o1, $get:expr, $set:expr) => { Store::O1 { get: $get, set: $set } };
}

/// One preemption-model row: `NAME` selects the model; `NO_NAME` goes back to the presets'
/// PREEMPT_VOLUNTARY if this model was selected (a model is one of four, not a flag).
macro_rules! preempt_model {
    ($name:expr, $versions:expr, $model:ident, $meaning:expr) => {
        SwitchDef {
            name: $name,
            versions: $versions,
            scope: Scope::Engine,
            kind: Kind::Feature(Store::Engine {
                get: |c| u64::from(c.preempt == PreemptModel::$model),
                set: |c, on| {
                    if on != 0 {
                        c.preempt = PreemptModel::$model;
                    } else if c.preempt == PreemptModel::$model {
                        c.preempt = PreemptModel::Voluntary;
                    }
                },
            }),
            provenance: Provenance::Mainline,
            meaning: $meaning,
        }
    };
}
