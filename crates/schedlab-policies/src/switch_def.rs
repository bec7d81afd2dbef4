//! What a switch is: where its behaviour comes from ([`Provenance`]), who reads it
//! ([`Scope`]), its kind (feature, tunable with its range, 2.5.59 balancer variant) and the
//! definition row ([`SwitchDef`]), with the macros that write the rows of the table in
//! [`crate::switches`]. Split from the table so that each file reads on its own.

use crate::era::Era;
use crate::settings::Settings;
use crate::tunables::Range;
use crate::version::Versions;
use schedlab_engine::balance_o1::O1Variant;

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

/// Kinds of switch.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    /// A boolean feature.
    Feature {
        get: fn(&Settings) -> bool,
        set: fn(&mut Settings, bool),
    },
    /// A numeric tunable; `set` is only given values inside `range`.
    Tunable {
        get: fn(&Settings) -> u64,
        set: fn(&mut Settings, u64),
        range: Range,
    },
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
            Kind::Tunable { range, .. } => Some(range),
            _ => None,
        }
    }
    /// Canonical spelling as it appears in the listing (`NAME`, `name=`, `ingoB0`).
    pub(crate) fn display(&self) -> String {
        match self.kind {
            Kind::Tunable { .. } => format!("{}=", self.name),
            _ => self.name.to_string(),
        }
    }
    pub(crate) fn default_text(&self, era: Era) -> String {
        let s = Settings::defaults(era);
        match self.kind {
            Kind::Feature { get, .. } => if get(&s) { "on" } else { "off" }.into(),
            Kind::Tunable { get, .. } => get(&s).to_string(),
            Kind::Balancer(v) => if s.o1.variant == v {
                "on (default variant)"
            } else {
                "off"
            }
            .into(),
        }
    }
}

macro_rules! feature {
    ($scope:expr, $name:expr, $versions:expr, $prov:expr, $field:ident, $meaning:expr) => {
        SwitchDef {
            name: $name,
            versions: $versions,
            scope: $scope,
            kind: Kind::Feature {
                get: |s| s.$field,
                set: |s, v| s.$field = v,
            },
            provenance: $prov,
            meaning: $meaning,
        }
    };
    // A placement switch whose patch needs engine bookkeeping (`track`): turning it on turns
    // the bookkeeping on, so runs without it do no extra work.
    ($scope:expr, $name:expr, $versions:expr, $prov:expr, $field:ident, $meaning:expr, $track:ident) => {
        SwitchDef {
            name: $name,
            versions: $versions,
            scope: $scope,
            kind: Kind::Feature {
                get: |s| s.$field,
                set: |s, v| {
                    s.$field = v;
                    s.config.features.$track = s.config.features.$track || v;
                },
            },
            provenance: $prov,
            meaning: $meaning,
        }
    };
}

macro_rules! engine_feature {
    ($name:expr, $versions:expr, $field:ident, $meaning:expr) => {
        SwitchDef {
            name: $name,
            versions: $versions,
            scope: Scope::Engine,
            kind: Kind::Feature {
                get: |s| s.config.features.$field,
                set: |s, v| s.config.features.$field = v,
            },
            provenance: Provenance::Mainline,
            meaning: $meaning,
        }
    };
}

/// One tunable row: `name=value` with its versions, scope, range, how it reads and writes
/// the settings (`set` only sees values inside the range) and its meaning.
macro_rules! tunable {
    ($scope:expr, $name:expr, $versions:expr, $range:expr,
     get: |$gs:ident| $get:expr, set: |$ss:ident, $v:ident| $set:expr, $meaning:expr) => {
        SwitchDef {
            name: $name,
            versions: $versions,
            scope: $scope,
            kind: Kind::Tunable {
                get: |$gs| $get,
                set: |$ss, $v| $set,
                range: $range,
            },
            provenance: Provenance::Tunable,
            meaning: $meaning,
        }
    };
}

/// One preemption-model row: `NAME` selects the model; `NO_NAME` goes back to the presets'
/// PREEMPT_VOLUNTARY if this model was selected (a model is one of four, not a flag).
macro_rules! preempt_model {
    ($name:expr, $versions:expr, $model:ident, $meaning:expr) => {
        SwitchDef {
            name: $name,
            versions: $versions,
            scope: Scope::Engine,
            kind: Kind::Feature {
                get: |s| s.config.preempt == PreemptModel::$model,
                set: |s, on| {
                    if on {
                        s.config.preempt = PreemptModel::$model;
                    } else if s.config.preempt == PreemptModel::$model {
                        s.config.preempt = PreemptModel::Voluntary;
                    }
                },
            },
            provenance: Provenance::Mainline,
            meaning: $meaning,
        }
    };
}
