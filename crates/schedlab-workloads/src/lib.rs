//! schedlab-workloads (skeleton; see ARCHITECTURE.md).
