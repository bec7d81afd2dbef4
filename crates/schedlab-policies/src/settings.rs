//! [`Settings`]: everything a preset plus its switches decides. The placement switches have
//! no fields here: their values sit in one array indexed by their row of the switch table
//! ([`crate::switches`]), start at the row's default for the era, and are read by the
//! placement code with `sw!("NAME")`, which finds the row at compile time. So a switch is
//! its row and its use, nothing to keep in step. The engine's switches are fields of the
//! engine's configuration ([`SchedConfig`]) and of the 2.5.59 balancer's parameters.

use crate::era::Era;
use crate::switch_def::{Kind, Store, SwitchDef};
use crate::switches::{NR_SWITCHES, SwitchId, all, find};
use schedlab_engine::SchedConfig;
use schedlab_engine::balance_o1::O1Params;

/// Everything a preset plus switches decides: the placement switches' values, the 2.5.59
/// balancer constants and the engine configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// The era.
    pub era: Era,
    /// The placement switches' values by switch-table row (features 0 or 1); rows of other
    /// kinds stay 0.
    values: [u64; NR_SWITCHES],
    /// 2.5.59 balancer.
    pub o1: O1Params,
    /// Engine configuration.
    pub config: SchedConfig,
}

impl Settings {
    /// The era's defaults: each placement row's default for `era`, the era's balancer
    /// parameters and kernel configuration.
    pub fn defaults(era: Era) -> Settings {
        let mut values = [0; NR_SWITCHES];
        for (v, d) in values.iter_mut().zip(all()) {
            if let Some(Store::Placement { default, .. }) = d.store() {
                *v = default(era);
            }
        }
        Settings {
            era,
            values,
            o1: O1Params::default(),
            config: era.config(),
        }
    }

    /// A placement feature, by the id `sw!` gives.
    #[inline]
    pub(crate) fn on(&self, id: SwitchId) -> bool {
        self.values[id.index()] != 0
    }

    /// A placement switch's value, by the id `sw!` gives.
    #[inline]
    pub(crate) fn value(&self, id: SwitchId) -> u64 {
        self.values[id.index()]
    }

    pub(crate) fn set_value(&mut self, id: SwitchId, v: u64) {
        self.values[id.index()] = v;
    }

    /// The value of row `d` (a feature: 0 or 1; a balancer variant: 1 when it is the one).
    pub(crate) fn read(&self, d: &SwitchDef) -> u64 {
        let s = self;
        match (d.store(), d.kind) {
            (Some(Store::Placement { .. }), _) => s.value(SwitchId::of(d.name)),
            (Some(Store::Engine { get, .. }), _) => get(&s.config),
            (Some(Store::O1 { get, .. }), _) => get(&s.o1),
            (None, Kind::Balancer(v)) => u64::from(s.o1.variant == v),
            (None, _) => 0,
        }
    }
    /// Sets row `d`'s value (a tunable's already checked against its range).
    pub(crate) fn write(&mut self, d: &SwitchDef, v: u64) {
        let s = self;
        match d.store() {
            Some(Store::Placement { track, .. }) => {
                s.set_value(SwitchId::of(d.name), v);
                if let Some(track) = track
                    && v != 0
                {
                    track(&mut s.config.features);
                }
            }
            Some(Store::Engine { set, .. }) => set(&mut s.config, v),
            Some(Store::O1 { set, .. }) => set(&mut s.o1, v),
            None => {}
        }
    }
    /// Row `d`'s default in `era`, as the listing shows it (`on`/`off`, a number).
    pub(crate) fn default_text(d: &SwitchDef, era: Era) -> String {
        let s = Settings::defaults(era);
        let v = s.read(d);
        match d.kind {
            Kind::Feature(_) => if v != 0 { "on" } else { "off" }.into(),
            Kind::Tunable(..) => v.to_string(),
            Kind::Balancer(_) => if v != 0 {
                "on (default variant)"
            } else {
                "off"
            }
            .into(),
        }
    }

    /// The value of any switch by name (case-insensitive; a feature 0 or 1, a tunable its
    /// number, a balancer variant 1 when selected); `None` for an unknown name.
    pub fn get(&self, name: &str) -> Option<u64> {
        find(name).map(|d| self.read(d))
    }

    /// Whether the feature `name` is on (false for an unknown name).
    pub fn is_on(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| v != 0)
    }
}
