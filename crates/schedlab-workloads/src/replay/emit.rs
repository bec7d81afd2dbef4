//! Writing the derived workload as a TOML workload file (`docs/workloads/file-format.md`):
//! channels with a comment naming each edge, tasks with a comment saying what the trace
//! showed of the thread, programs folded into loops.

use super::compress::{Node, Sym, fold, merge_computes};
use super::derive::{Pass, Thread};
use super::{Background, DeriveOptions, DerivedTask, MAX_CHOICE, Model, RawOp};
use schedlab_trace::ThreadInfo;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

pub(crate) struct Written {
    pub toml: String,
    pub tasks: Vec<DerivedTask>,
}

/// A name safe in a workload file (no `{`, quotes or spaces).
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ':') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A duration with a unit, exact to the nanosecond.
pub(crate) fn dur(ns: u64) -> String {
    if ns.is_multiple_of(1000) {
        format!("{}us", ns / 1000)
    } else {
        format!("{:.3}us", ns as f64 / 1e3)
    }
}

/// The CPU of a per-CPU kernel thread (`ksoftirqd/3`, `migration/3`, `kworker/3:1`,
/// `cpuhp/3`), which the kernel binds to that CPU.
fn per_cpu_kthread(comm: &str) -> Option<u32> {
    let (_, tail) = comm.rsplit_once('/')?;
    let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
    let rest = &tail[digits.len()..];
    if digits.is_empty() || !(rest.is_empty() || rest.starts_with(':')) {
        return None;
    }
    digits.parse().ok()
}

pub(crate) fn write(
    pass: &mut Pass,
    info: &BTreeMap<u32, &ThreadInfo>,
    selected: &BTreeSet<u32>,
    opts: &DeriveOptions,
) -> Written {
    let keep_all = opts.background == Background::Keep;
    let kept = |p: u32| keep_all || selected.contains(&p);
    let first = pass.first_ts.unwrap_or(0);
    let span = pass.last_ts.saturating_sub(first);
    let comm = |p: u32| {
        info.get(&p)
            .map_or("unknown".to_string(), |t| t.comm.clone())
    };
    let name_of = |p: u32| format!("{}-{p}", clean(&comm(p)));

    // Programs: the kept threads' ops with edges to dropped threads turned into sleeps.
    let mut programs: BTreeMap<u32, Vec<(Sym, u64)>> = BTreeMap::new();
    let mut fork_target: BTreeMap<u32, u32> = BTreeMap::new();
    let pids: Vec<u32> = pass.threads.keys().copied().filter(|&p| kept(p)).collect();
    // A hand-off stands only on an edge that also carries traced wakeups: the waker is seen
    // to wait for the wakee's data at other times.
    let handoff_kept = |e: usize| {
        let ed = &pass.edges[e];
        opts.handoffs && ed.wakes > 0 && kept(ed.waker) && kept(ed.wakee)
    };
    for &pid in &pids {
        let t = &pass.threads[&pid];
        let mut ops = Vec::with_capacity(t.ops.len());
        // Per op, the kernel work to take off the burst after it (see below).
        let mut after: Vec<u64> = Vec::with_capacity(t.ops.len());
        for op in &t.ops {
            let n = ops.len();
            let mut cost = 0;
            match *op {
                RawOp::Compute(d) => ops.push((Sym::Compute, d)),
                RawOp::Sleep(d) => ops.push((Sym::Sleep, d)),
                RawOp::Send(e, remote) if kept(pass.edges[e].wakee) => {
                    ops.push((Sym::Send(e), 0));
                    let (local_ns, remote_ns) = opts.wake_cost_ns;
                    cost = if remote { remote_ns } else { local_ns };
                }
                RawOp::HandoffSend(e) if handoff_kept(e) => ops.push((Sym::Send(e), 0)),
                RawOp::HandoffRecv(e) if handoff_kept(e) => ops.push((Sym::Recv(e), 0)),
                RawOp::Send(..) | RawOp::Wait | RawOp::HandoffSend(_) | RawOp::HandoffRecv(_) => {}
                RawOp::Recv(e, d) => {
                    if kept(pass.edges[e].waker) {
                        ops.push((Sym::Recv(e), 0));
                        // Resumed by a traced wakeup (a real wait, d > 0): switched in.
                        if d > 0 {
                            cost = opts.switch_cost_ns;
                        }
                    } else {
                        ops.push((Sym::Sleep, d));
                    }
                }
                RawOp::Fork(c) => {
                    if kept(c) {
                        ops.push((Sym::Fork(c as usize), 0));
                        fork_target.insert(c, pid);
                    }
                }
            }
            after.resize(ops.len(), 0);
            if ops.len() > n {
                after[n] = cost;
            }
        }
        // The kernel work of each send and receive is in the traced burst before it; the
        // simulator charges its own from the profile, so the traced one is taken out.
        if opts.op_cost_ns > 0 {
            for i in 1..ops.len() {
                if matches!(ops[i].0, Sym::Send(_) | Sym::Recv(_)) && ops[i - 1].0 == Sym::Compute {
                    ops[i - 1].1 = ops[i - 1].1.saturating_sub(opts.op_cost_ns);
                }
            }
        }
        // The wakeup's own work follows its sched_waking in the waker's burst, and the
        // switch into a woken task starts the wakee's: both are charged by the simulator.
        for i in 0..ops.len().saturating_sub(1) {
            if after[i] > 0 && ops[i + 1].0 == Sym::Compute {
                ops[i + 1].1 = ops[i + 1].1.saturating_sub(after[i]);
            }
        }
        programs.insert(pid, merge_computes(ops));
    }
    // A task with nothing to do is left out, and so are the forks of it.
    let empty: BTreeSet<u32> = programs
        .iter()
        .filter(|(_, p)| p.is_empty())
        .map(|(k, _)| *k)
        .collect();
    for p in programs.values_mut() {
        p.retain(|(s, _)| !matches!(s, Sym::Fork(c) if empty.contains(&(*c as u32))));
    }
    programs.retain(|k, _| !empty.contains(k));

    let mut used_edges = BTreeSet::new();
    for p in programs.values() {
        for (s, _) in p {
            if let Sym::Send(e) | Sym::Recv(e) = s {
                used_edges.insert(*e);
            }
        }
    }

    pass.warn.rt_threads = programs
        .keys()
        .filter(|p| pass.threads[p].prio.is_some_and(|x| x < 100))
        .count() as u64;
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(
        w,
        "# Derived by `schedlab replay derive` from {}.",
        opts.source
    );
    let _ = writeln!(
        w,
        "# One task per traced thread; each wakeup is a send on the waker's channel to the wakee\n\
         # (a recv where the wakee blocked); blocks ended by no task are timed sleeps. Burst\n\
         # model: {}. Data sizes and working sets are not in a trace: sends carry 1 byte and\n\
         # tasks the default ws_kb (edit `bytes` and `ws_kb`; see docs/replay.md). {} of kernel\n\
         # work is taken off the burst before each send and recv (the simulator charges its own).",
        match opts.model {
            Model::Empirical => "empirical (the recorded lengths)",
            Model::Fitted => "fitted (a lognormal per op)",
        },
        dur(opts.op_cost_ns)
    );
    for l in pass.warn.lines() {
        let _ = writeln!(w, "# warning: {l}");
    }
    let _ = writeln!(w, "name = {:?}", opts.name);
    let _ = writeln!(
        w,
        "description = {:?}",
        format!(
            "replay of {} ({} threads, {:.3} s traced)",
            opts.source,
            programs.len(),
            span as f64 / 1e9
        )
    );
    let _ = writeln!(w, "headline = \"elapsed_s\"");

    let chan = |e: usize| {
        let ed = &pass.edges[e];
        format!("{}>{}", ed.waker, ed.wakee)
    };
    for &e in &used_edges {
        let ed = &pass.edges[e];
        let _ = writeln!(
            w,
            "\n# {} wakes {}: {} wakeups, {} sync-like (the waker slept within {} of CPU \
             time), {} hand-offs",
            name_of(ed.waker),
            name_of(ed.wakee),
            ed.wakes,
            ed.sync_like,
            dur(super::SYNC_WINDOW_NS),
            if handoff_kept(e) { ed.handoffs } else { 0 }
        );
        let _ = writeln!(w, "[[channel]]\nname = \"{}\"\nkind = \"pipe\"", chan(e));
    }

    let mut tasks = Vec::new();
    let mut order: Vec<u32> = programs.keys().copied().collect();
    order.sort_by_key(|p| (pass.threads[p].first_ts, *p));
    for pid in order {
        let t: &Thread = &pass.threads[&pid];
        let name = name_of(pid);
        let tinfo = info.get(&pid);
        let mut cpus: Vec<u32> = t.per_cpu.iter().map(|c| c.0).collect();
        cpus.sort_unstable();
        let cpu_list: Vec<String> = cpus.iter().map(u32::to_string).collect();
        let _ = writeln!(
            w,
            "\n# pid {pid}{}, {} CPU in {} runs on CPUs [{}]{}",
            tinfo.map_or(String::new(), |i| format!(", process {}", i.tgid)),
            dur(t.cpu_ns),
            t.runs,
            cpu_list.join(","),
            if t.exited {
                ", exited"
            } else {
                ", alive at the end"
            }
        );
        let _ = writeln!(w, "[[task]]\nname = \"{name}\"");
        if let Some(i) = tinfo {
            let _ = writeln!(w, "mm = \"p{}\"", i.tgid);
        }
        let nice = match t.prio {
            Some(p) if p < 100 => -20,
            Some(p) => (p - 120).clamp(-20, 19),
            None => 0,
        };
        if nice != 0 {
            let _ = writeln!(w, "nice = {nice}");
        }
        if let Some(c) = per_cpu_kthread(&comm(pid)).filter(|c| cpus == [*c]) {
            let _ = writeln!(w, "cpus = \"{c}\"  # a per-CPU kernel thread");
        }
        if fork_target.contains_key(&pid) {
            let _ = writeln!(
                w,
                "start = false  # forked by {}",
                name_of(fork_target[&pid])
            );
        } else if t.first_ts > first {
            let _ = writeln!(w, "delay = \"{}\"", dur(t.first_ts - first));
        }
        let _ = writeln!(w, "program = [");
        for node in fold(&programs[&pid]) {
            match node {
                Node::One(s, d) => {
                    let _ = writeln!(w, "  {},", op(s, &[d], opts.model, &chan, &name_of));
                }
                Node::Loop { count, body } => {
                    let _ = writeln!(w, "  {{ op = \"loop\", count = {count}, body = [");
                    for (s, lens) in body {
                        let _ = writeln!(w, "    {},", op(s, &lens, opts.model, &chan, &name_of));
                    }
                    let _ = writeln!(w, "  ] }},");
                }
            }
        }
        let _ = writeln!(w, "]");
        tasks.push(DerivedTask {
            pid,
            name,
            cpu_ns: t.cpu_ns,
        });
    }

    if opts.background == Background::Fold {
        fold_background(w, pass, selected, span);
    }
    tasks.sort_by_key(|t| t.pid);
    Written { toml: out, tasks }
}

/// One task per CPU standing for the dropped threads' time there: as many bursts as they
/// ran, each their mean length, with the mean gap between.
fn fold_background(w: &mut String, pass: &Pass, selected: &BTreeSet<u32>, span: u64) {
    let mut per_cpu: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    for (pid, t) in &pass.threads {
        if selected.contains(pid) {
            continue;
        }
        for &(cpu, ns, runs) in &t.per_cpu {
            let e = per_cpu.entry(cpu).or_insert((0, 0));
            e.0 += ns;
            e.1 += runs;
        }
    }
    for (cpu, (ns, runs)) in per_cpu {
        if ns == 0 || runs == 0 {
            continue;
        }
        let burst = ns / runs;
        let gap = span.saturating_sub(ns) / runs;
        let _ = writeln!(
            w,
            "\n# background folded: the other threads ran {} on CPU {cpu} in {runs} runs\n\
             [[task]]\nname = \"background-cpu{cpu}\"\ncpus = \"{cpu}\"\nprogram = [\n  \
             {{ op = \"loop\", count = {runs}, body = [\n    \
             {{ op = \"compute\", time = \"{}\" }},\n    {{ op = \"sleep\", time = \"{}\" }},\n  ] }},\n]",
            dur(ns),
            dur(burst.max(1)),
            dur(gap.max(1))
        );
    }
}

/// One op as an inline table.
fn op(
    s: Sym,
    lens: &[u64],
    model: Model,
    chan: &dyn Fn(usize) -> String,
    name_of: &dyn Fn(u32) -> String,
) -> String {
    match s {
        Sym::Compute => format!("{{ op = \"compute\", {} }}", timing(lens, model)),
        Sym::Sleep => format!("{{ op = \"sleep\", {} }}", timing(lens, model)),
        Sym::Send(e) => format!("{{ op = \"send\", channel = \"{}\" }}", chan(e)),
        Sym::Recv(e) => format!("{{ op = \"recv\", channel = \"{}\" }}", chan(e)),
        Sym::Fork(c) => format!("{{ op = \"fork\", task = \"{}\" }}", name_of(c as u32)),
    }
}

/// `time = ..` for one length, else the model's distribution of the lengths.
pub(crate) fn timing(lens: &[u64], model: Model) -> String {
    let mut v: Vec<u64> = lens.iter().map(|&d| d.max(1)).collect();
    v.sort_unstable();
    if v.first() == v.last() {
        return format!("time = \"{}\"", dur(v[0]));
    }
    match model {
        Model::Empirical => {
            let mut vals: Vec<(u64, u32)> = Vec::new();
            let mut distinct: Vec<(u64, u32)> = Vec::new();
            for &x in &v {
                match distinct.last_mut() {
                    Some(l) if l.0 == x => l.1 += 1,
                    _ => distinct.push((x, 1)),
                }
            }
            if distinct.len() <= MAX_CHOICE {
                vals = distinct;
            } else {
                // Equal-count bins, each its median.
                let n = v.len();
                for b in 0..MAX_CHOICE {
                    let (lo, hi) = (b * n / MAX_CHOICE, (b + 1) * n / MAX_CHOICE);
                    if hi > lo {
                        vals.push((v[(lo + hi) / 2], (hi - lo) as u32));
                    }
                }
            }
            let values: Vec<String> = vals
                .iter()
                .map(|(x, _)| format!("\"{}\"", dur(*x)))
                .collect();
            let weights: Vec<String> = vals.iter().map(|(_, c)| c.to_string()).collect();
            format!(
                "dist = \"choice\", values = [{}], weights = [{}]",
                values.join(", "),
                weights.join(", ")
            )
        }
        Model::Fitted => {
            let n = v.len() as f64;
            let logs: Vec<f64> = v.iter().map(|&x| (x as f64).ln()).collect();
            let mean = logs.iter().sum::<f64>() / n;
            let var = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / n;
            let sigma = var.sqrt().min(10.0);
            let median = mean.exp().round().max(1.0) as u64;
            format!(
                "dist = \"lognormal\", median = \"{}\", sigma = {:.4}",
                dur(median),
                sigma
            )
        }
    }
}
