//! schedlab-policies (skeleton; see ARCHITECTURE.md).
