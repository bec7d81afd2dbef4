//! schedlab-engine (skeleton; see ARCHITECTURE.md).
