//! Idle states: which one an idle CPU reaches, and so what leaving it costs.
//!
//! Read by the engine when a wakeup kicks an idle CPU (its exit latency delays the wakee) and
//! by policies through [`crate::policy::SchedView`] (the exit latency of a candidate CPU). It
//! depends only on the machine profile, so neither the simulator nor the policy API owns it.

use crate::profile::{IdleState, MachineProfile};

/// The idle state a governor with perfect prediction picks after `idle_ns` of idleness:
/// the deepest state whose target residency has been reached (the shallowest if none has).
/// The kernel's menu/teo governors predict; this is the idealised choice \[M\].
pub fn idle_state_for(profile: &MachineProfile, idle_ns: u64) -> Option<&IdleState> {
    let states = &profile.wakeup.idle_states;
    states
        .iter()
        .rev()
        .find(|s| s.target_residency_ns <= idle_ns)
        .or(states.first())
}
