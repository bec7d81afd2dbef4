//! The built-in benchmark implementations: real threads and processes, real pipes, sockets,
//! loopback TCP and futexes. None of this shares code with the simulator it checks.

pub(crate) mod hackbench;
pub(crate) mod pipe;
pub(crate) mod schbench;
pub(crate) mod tbench;
