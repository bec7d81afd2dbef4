//! schedlab-trace (skeleton; see ARCHITECTURE.md).
