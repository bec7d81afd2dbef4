//! schedlab-experiment (skeleton; see ARCHITECTURE.md).
