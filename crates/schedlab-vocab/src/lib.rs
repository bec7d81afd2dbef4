//! schedlab-vocab: the vocabulary the simulator, the workload models, the host harness and
//! the CLI share, so that one spelling means one thing everywhere.
//!
//! * [`spec`] — the grammar `NAME[:key=value,...]` of `-w/--workload` and `schedlab host run`;
//! * [`units`] — durations (`100us`, `2.5ms`, `2s`; a unit is never guessed) and sizes
//!   (`64K`, `10M`; powers of 1024);
//! * [`distance`] — how far apart two CPUs are (same CPU, SMT sibling, same LLC, same node,
//!   another node), the classes the machine profile prices and calibration measures;
//! * [`suggest`] — the nearest valid name to a mistyped one and the ` (did you mean 'x'?)`
//!   hint of every "unknown name" error;
//! * [`text`] — a file's bytes as text (a byte-order mark dropped; gzip, UTF-16 and other
//!   non-UTF-8 bytes refused by name);
//! * [`retired`] — workload names that no longer run and the name to use instead, so that
//!   the simulator and the host harness refuse them alike.
//!
//! Invariant: this crate depends on no schedlab crate (its one third-party crate, `strsim`,
//! scores name similarity). It holds words, not models: nothing here knows a workload, a
//! topology or a cost (the retired names are spellings: which name replaces which).
#![warn(missing_docs)]

pub mod distance;
pub mod retired;
pub mod spec;
pub mod suggest;
pub mod text;
pub mod units;

pub use distance::DistanceClass;
pub use spec::{SpecError, parse_params, split_spec};
pub use units::{
    UnitError, format_duration, parse_duration, parse_duration_or_bare, parse_kib, parse_size,
};
