//! schedlab-host (skeleton; see ARCHITECTURE.md).
