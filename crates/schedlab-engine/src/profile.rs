//! The machine profile: every cost the simulated machine charges.
//!
//! No cost constant lives in code: the simulator reads all of them from a [`MachineProfile`],
//! which is TOML on disk (`--profile FILE`, schema `schedlab.profile/1`, the same file
//! `schedlab host calibrate` writes). The schema, its defaults and validation, and the
//! built-in profiles (`profiles/*.toml`, one per published topology preset) live in
//! `schedlab-profile`, the crate the host harness writes calibrated profiles through; this
//! module re-exports it so the engine's callers keep `schedlab_engine::profile::*`.

pub use schedlab_profile::{
    BUILTIN, CacheCosts, CpuCosts, DistanceClass, Governor, IdleState, MachineProfile,
    PROFILE_SCHEMA, ProfileError, SearchCosts, TransferCosts, WakeupCosts,
};
