//! Bounds on what a workload may ask of the simulator, checked when it is built so that a
//! run that would never end, or exhaust memory, is refused with a reason instead of
//! started. The engine stores every task it ever created (a forked task's slot is never
//! reused) and interprets each op, so the static bounds are on tasks ever created, on ops
//! executed, and on loops that run forever:
//!
//! * at most [`MAX_TASKS`] tasks over the whole run: the started ones plus every fork, with
//!   forks inside loops multiplied by the loop counts; a fork inside a forever loop, and a
//!   task that forks its own template (directly or through others), are refused;
//! * without a duration, no loop may run forever (unless its body exits) and the run may
//!   execute at most [`MAX_OPS`] ops (loop counts × ops × tasks);
//! * with a duration, a forever loop must take simulated time (a body of counters and
//!   stamps alone would spin at one instant), and so must any loop of more than
//!   [`MAX_OPS`] ops.
//!
//! The input-side bounds (durations, sizes, channel counts) are checked where the input is
//! read ([`crate::ir`], [`crate::file`], [`crate::rtapp`], each model's parameters); all
//! are documented in `docs/workloads/file-format.md`.

use schedlab_engine::task::{Op, SpecId};
use schedlab_engine::{Dist, Workload};
use std::collections::BTreeMap;

/// The largest number of tasks one run may create (memory guard: the engine keeps every
/// task it created).
pub(crate) const MAX_TASKS: u64 = 200_000;

/// The most ops a workload without a duration may execute: at the interpreter's few
/// million ops per second, about an hour of wall time.
pub(crate) const MAX_OPS: u64 = 10_000_000_000;

/// The most channels a workload may declare (each holds queues and wait lists).
pub(crate) const MAX_CHANNELS: u64 = 200_000;

/// The longest single time a workload may name (an op's time, a period, a duration): one
/// hour of simulated time, the longest any model's parameter allows.
pub(crate) const MAX_TIME_NS: u64 = 3_600_000_000_000;

/// The largest working set or message a workload may name: 1 TiB.
pub(crate) const MAX_BYTES: u64 = 1 << 40;

/// Why a built workload is refused: each names the task and the bound it breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BoundsError {
    /// The workload's duration is over [`MAX_TIME_NS`].
    #[error(
        "a duration of {} s is more than the {} s a run may last",
        .duration_ns / 1_000_000_000,
        MAX_TIME_NS / 1_000_000_000
    )]
    RunTooLong {
        /// The duration asked for.
        duration_ns: u64,
    },
    /// Templates that fork each other round a cycle, in fork order, the first repeated at
    /// the end (`[a, a]` when one forks itself).
    #[error("{}: the run would create tasks without end", fork_cycle(.cycle))]
    ForkCycle {
        /// The task names round the cycle.
        cycle: Vec<String>,
    },
    /// A task that never ends (a forever loop without a duration, or without simulated time).
    #[error("task '{task}' {why}: the run would never end")]
    Endless {
        /// The task.
        task: String,
        /// Why it never ends.
        why: String,
    },
    /// A fork inside a forever loop.
    #[error(
        "task '{task}' forks '{child}' inside a forever loop: the run would create tasks without end"
    )]
    ForkInForeverLoop {
        /// The forking task.
        task: String,
        /// What it forks.
        child: String,
    },
    /// More than [`MAX_TASKS`] tasks over the run.
    #[error(
        "the run would create {} tasks (started and forked), more than the {} allowed",
        show(*.total),
        MAX_TASKS
    )]
    TooManyTasks {
        /// Tasks started and forked (`u64::MAX`: without bound).
        total: u64,
    },
    /// More than [`MAX_OPS`] ops in a run without a duration.
    #[error(
        "the run would execute {} ops (loop counts × ops × tasks), more than the {} \
         a run without a duration may (about an hour of simulation); give fewer loops or \
         tasks, or a duration",
        show(*.ops),
        MAX_OPS
    )]
    TooManyOps {
        /// Ops executed (`u64::MAX`: without bound).
        ops: u64,
    },
}

/// `task 'a' forks its own template`, or `tasks fork each other in a cycle (a → b → a)`.
fn fork_cycle(names: &[String]) -> String {
    if names.len() == 2 {
        format!("task '{}' forks its own template", names[0])
    } else {
        format!("tasks fork each other in a cycle ({})", names.join(" → "))
    }
}

/// What one template's program does, statically.
#[derive(Default)]
struct Summary {
    /// Ops executed by one task (saturating; `u64::MAX` = without bound).
    ops: u64,
    /// Forks by one task, per template (saturating).
    forks: BTreeMap<SpecId, u64>,
    /// The program reaches an `exit` (there are no conditionals, so it always does).
    exits: bool,
    /// Some op takes simulated time (a blocking op, a syscall, non-zero work).
    takes_time: bool,
    /// Why the program never ends, if it does not.
    endless: Option<String>,
}

/// Whether `op` advances simulated time (or blocks) when it runs.
fn takes_time(op: &Op) -> bool {
    match op {
        Op::Compute(d) => !matches!(d, Dist::Const(0)),
        Op::Stamp(_)
        | Op::RecordSince { .. }
        | Op::Count { .. }
        | Op::CountLastRecv(_)
        | Op::ListAdd(_)
        | Op::Loop(_)
        | Op::EndLoop => false,
        _ => true,
    }
}

/// Summarises `prog[*pc..]` up to the matching `EndLoop` (or the end), advancing `pc`.
fn walk(prog: &[Op], pc: &mut usize, has_duration: bool) -> Summary {
    let mut s = Summary::default();
    while *pc < prog.len() {
        let op = &prog[*pc];
        *pc += 1;
        if s.exits {
            // Ops after an exit never run; skip them (but keep the loop structure).
            if let Op::Loop(_) = op {
                let _ = walk(prog, pc, has_duration);
            } else if let Op::EndLoop = op {
                return s;
            }
            continue;
        }
        match op {
            Op::EndLoop => return s,
            Op::Loop(n) => {
                let body = walk(prog, pc, has_duration);
                let iters = if body.exits { (*n).min(1) } else { *n };
                let forever = iters == u64::MAX;
                if forever && s.endless.is_none() {
                    if !has_duration {
                        s.endless = Some("loops forever and the workload has no duration".into());
                    } else if !body.takes_time {
                        s.endless = Some(
                            "loops forever in zero simulated time (counters and stamps only)"
                                .into(),
                        );
                    }
                }
                if !forever
                    && has_duration
                    && !body.takes_time
                    && iters.saturating_mul(body.ops.saturating_add(1)) > MAX_OPS
                    && s.endless.is_none()
                {
                    s.endless = Some(format!(
                        "has a loop of {iters} iterations that takes no simulated time (more than {MAX_OPS} ops)"
                    ));
                }
                if iters == 0 {
                    continue;
                }
                if s.endless.is_none() {
                    s.endless = body.endless;
                }
                s.ops = s
                    .ops
                    .saturating_add(iters.saturating_mul(body.ops.saturating_add(1)));
                for (k, f) in body.forks {
                    let e = s.forks.entry(k).or_default();
                    *e = e.saturating_add(f.saturating_mul(iters));
                }
                s.takes_time |= body.takes_time;
                s.exits |= body.exits;
            }
            Op::Exit => {
                s.ops = s.ops.saturating_add(1);
                s.exits = true;
            }
            other => {
                s.ops = s.ops.saturating_add(1);
                s.takes_time |= takes_time(other);
                if let Op::Fork(k) = other {
                    let e = s.forks.entry(*k).or_default();
                    *e = e.saturating_add(1);
                }
            }
        }
    }
    s
}

/// Checks `w` against the bounds above; the message names the task and the bound.
pub(crate) fn check(w: &Workload) -> Result<(), BoundsError> {
    let has_duration = w.duration_ns.is_some();
    if let Some(d) = w.duration_ns
        && d > MAX_TIME_NS
    {
        return Err(BoundsError::RunTooLong { duration_ns: d });
    }
    let sums: Vec<Summary> = w
        .specs
        .iter()
        .map(|s| walk(&s.program, &mut 0, has_duration))
        .collect();
    let comm = |k: SpecId| w.specs[k].comm.as_str();
    // Order the fork graph (Kahn); whatever is left over lies on a cycle.
    let n = w.specs.len();
    let mut indeg = vec![0usize; n];
    for s in &sums {
        for &k in s.forks.keys() {
            indeg[k] += 1;
        }
    }
    let mut order: Vec<SpecId> = (0..n).filter(|&k| indeg[k] == 0).collect();
    let mut i = 0;
    while i < order.len() {
        for &k in sums[order[i]].forks.keys() {
            indeg[k] -= 1;
            if indeg[k] == 0 {
                order.push(k);
            }
        }
        i += 1;
    }
    if order.len() < n {
        // Every template left over has a left-over parent (one with no parent would have
        // been ordered), so walking parents back must meet a template twice: a cycle.
        let left = |k: SpecId| indeg[k] > 0;
        let start = (0..n).find(|&k| left(k)).unwrap_or(0);
        let mut path = vec![start];
        let mut at = start;
        while let Some(p) = (0..n).find(|&p| left(p) && sums[p].forks.contains_key(&at)) {
            if let Some(i) = path.iter().position(|&x| x == p) {
                path.drain(..i);
                break;
            }
            path.push(p);
            at = p;
        }
        // path[j + 1] forks path[j]: reversed, it is the cycle in fork order. Start it
        // from its first template, for a stable message.
        path.reverse();
        let first = (0..path.len()).min_by_key(|&i| path[i]).unwrap_or(0);
        path.rotate_left(first);
        path.push(path[0]);
        let cycle = path.iter().map(|&k| comm(k).to_string()).collect();
        return Err(BoundsError::ForkCycle { cycle });
    }
    // Tasks ever created from each template, in fork order.
    let mut made = vec![0u64; n];
    for &k in &w.initial {
        made[k] = made[k].saturating_add(1);
    }
    for &k in &order {
        if made[k] == 0 {
            continue;
        }
        if let Some(why) = &sums[k].endless {
            return Err(BoundsError::Endless {
                task: comm(k).into(),
                why: why.clone(),
            });
        }
        for (&c, &f) in &sums[k].forks {
            if f == u64::MAX {
                return Err(BoundsError::ForkInForeverLoop {
                    task: comm(k).into(),
                    child: comm(c).into(),
                });
            }
            made[c] = made[c].saturating_add(made[k].saturating_mul(f));
        }
    }
    let total = made.iter().fold(0u64, |a, &m| a.saturating_add(m));
    if total > MAX_TASKS {
        return Err(BoundsError::TooManyTasks { total });
    }
    if !has_duration {
        let ops = made
            .iter()
            .zip(&sums)
            .fold(0u64, |a, (&m, s)| a.saturating_add(m.saturating_mul(s.ops)));
        if ops > MAX_OPS {
            return Err(BoundsError::TooManyOps { ops });
        }
    }
    Ok(())
}

/// A count for a message (`u64::MAX` reads as "without bound").
fn show(n: u64) -> String {
    if n == u64::MAX {
        "an unbounded number of".into()
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_engine::TaskSpec;

    fn wl(progs: Vec<Vec<Op>>, duration: Option<u64>) -> Workload {
        let mut w = Workload::new("t");
        for (i, p) in progs.into_iter().enumerate() {
            w.spec(TaskSpec::new(format!("t{i}"), p));
        }
        w.initial.push(0);
        w.duration_ns = duration;
        w
    }

    #[test]
    fn an_exit_inside_a_forever_loop_ends_it() {
        let p = vec![
            Op::Loop(u64::MAX),
            Op::Compute(Dist::Const(5)),
            Op::Exit,
            Op::EndLoop,
        ];
        assert_eq!(check(&wl(vec![p], None)), Ok(()));
        let p = vec![Op::Loop(u64::MAX), Op::Compute(Dist::Const(5)), Op::EndLoop];
        let e = check(&wl(vec![p], None)).unwrap_err().to_string();
        assert_eq!(
            e,
            "task 't0' loops forever and the workload has no duration: the run would never end"
        );
    }

    #[test]
    fn forks_multiply_by_loop_counts() {
        // 1 parent forking 1000 × 300 children: 300001 tasks.
        let parent = vec![
            Op::Loop(1000),
            Op::Loop(300),
            Op::Fork(1),
            Op::EndLoop,
            Op::EndLoop,
        ];
        let child = vec![Op::Compute(Dist::Const(1))];
        let e = check(&wl(vec![parent.clone(), child.clone()], None)).unwrap_err();
        assert_eq!(e, BoundsError::TooManyTasks { total: 300_001 });
        assert_eq!(
            e.to_string(),
            "the run would create 300001 tasks (started and forked), more than the 200000 allowed"
        );
        let small = vec![Op::Loop(1000), Op::Fork(1), Op::EndLoop, Op::WaitChildren];
        assert_eq!(check(&wl(vec![small, child], None)), Ok(()));
    }

    #[test]
    fn fork_cycles_are_named() {
        let a = vec![Op::Fork(1)];
        let b = vec![Op::Fork(2)];
        let c = vec![Op::Fork(1)];
        let e = check(&wl(vec![a, b, c], Some(1_000_000))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tasks fork each other in a cycle (t1 → t2 → t1): the run would create tasks without end"
        );
        let e = check(&wl(vec![vec![Op::Fork(0)]], Some(1_000_000))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "task 't0' forks its own template: the run would create tasks without end"
        );
    }

    #[test]
    fn zero_time_forever_loops_are_refused_even_with_a_duration() {
        let p = vec![
            Op::Loop(u64::MAX),
            Op::Stamp(schedlab_engine::task::Slot::Task(0)),
            Op::EndLoop,
        ];
        let e = check(&wl(vec![p], Some(1_000_000)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("zero simulated time"), "{e}");
        let p = vec![Op::Loop(u64::MAX), Op::Sleep(Dist::Const(10)), Op::EndLoop];
        assert_eq!(check(&wl(vec![p], Some(1_000_000))), Ok(()));
    }
}
