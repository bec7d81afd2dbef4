//! [`Settings`]: everything a preset plus its switches decides. The placement switches have
//! no fields here: their values sit in one array indexed by their row of the switch table
//! ([`crate::switches`]), start at the row's default for the era, and are read by the
//! placement code with `sw!("NAME")`, which finds the row at compile time. So a switch is
//! its row and its use, nothing to keep in step. The engine's switches are fields of the
//! engine's configuration ([`SchedConfig`]) and of the 2.5.59 balancer's parameters.

use crate::era::Era;
use crate::switch_def::Store;
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

    /// The value of any switch by name (case-insensitive; a feature 0 or 1, a tunable its
    /// number, a balancer variant 1 when selected); `None` for an unknown name.
    pub fn get(&self, name: &str) -> Option<u64> {
        find(name).map(|d| d.get(self))
    }

    /// Whether the feature `name` is on (false for an unknown name).
    pub fn is_on(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| v != 0)
    }
}
