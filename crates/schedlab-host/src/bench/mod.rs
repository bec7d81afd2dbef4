//! The built-in benchmark implementations: real threads and processes, real pipes, sockets,
//! loopback TCP and futexes. None of this shares code with the simulator it checks.
//!
//! Every worker thread or process carries the task name (comm) the simulator's model of the
//! same benchmark gives it (`sender`, `receiver`, `sched-pipe`, `tbench`, `tbench_srv`,
//! `schbench-msg`, `schbench-worker`), so a trace of the real run and the simulated trace
//! can be held to each other role by role.

pub(crate) mod hackbench;
pub(crate) mod pipe;
pub(crate) mod schbench;
pub(crate) mod tbench;
