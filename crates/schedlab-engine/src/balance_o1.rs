//! The 2.5.59 NUMA balancer and its January-2003 variants (linux-wakeup.md §10, §15.6).
//! (Filled in with the policies; placeholder so the module map is stable.)
