//! Each built-in model: the task graph and message counts it builds on a small machine, the
//! direction its metric moves under an obvious change, and its native output read back by
//! the real tool's parser (metrics::native).

mod common;

use common::*;
use schedlab_engine::{EndReason, MachineProfile};
use schedlab_metrics::Better;
use schedlab_metrics::native::{
    parse_aim7, parse_hackbench, parse_kernbench, parse_lat_ctx, parse_lmbench_bw,
    parse_netperf_rr, parse_numa_test, parse_perf_pipe, parse_pgbench, parse_schbench_old,
    parse_schbench_v1, parse_sysbench, parse_tbench,
};
use schedlab_workloads::{catalog, instantiate, parse_spec};

fn delivered(sim: &schedlab_engine::Simulation, name_prefix: &str) -> u64 {
    sim.workload()
        .channels
        .iter()
        .enumerate()
        .filter(|(_, c)| c.name.starts_with(name_prefix))
        .map(|(i, _)| sim.channel_delivered(i))
        .sum()
}

#[test]
fn hackbench_moves_every_message_and_scales_with_loops() {
    let topo = quad();
    let (r, sim, inst) = run_spec("hackbench:groups=2,loops=10", &topo).unwrap();
    // main + 2 groups × (20 senders + 20 receivers), all created by fork.
    assert_eq!(sim.nr_tasks(), 81);
    assert_eq!(sim.counters().forks, 81);
    assert!(sim.task_stats().iter().all(|t| t.exited));
    assert_eq!(inst.workload.channels.len(), 40);
    // groups × 20 × 20 × loops messages, all delivered, nothing left queued.
    assert_eq!(delivered(&sim, ""), 2 * 20 * 20 * 10);
    assert!((0..40).all(|c| sim.channel_backlog(c) == 0));
    let parsed = parse_hackbench(&r.native).unwrap();
    assert_eq!(
        (parsed.groups, parsed.fds, parsed.loops, parsed.datasize),
        (2, 20, 10, 100)
    );
    assert!(!parsed.threads);
    assert!(
        (parsed.time_s - val(&r, "time_s")).abs() < 0.0011,
        "{}",
        r.native
    );
    assert_eq!(r.headline().unwrap().name, "time_s");
    assert_eq!(inst.headline(), ("time_s".to_string(), Better::Lower));

    // Twice the loops: about twice the time on an otherwise idle machine.
    let t1 = val(
        &run_spec("hackbench:groups=1,loops=400", &topo).unwrap().0,
        "time_s",
    );
    let t2 = val(
        &run_spec("hackbench:groups=1,loops=800", &topo).unwrap().0,
        "time_s",
    );
    let ratio = t2 / t1;
    assert!(
        (1.5..2.5).contains(&ratio),
        "loops ×2 gave time ×{ratio} ({t1} → {t2})"
    );
}

#[test]
fn hackbench_variants_build_the_right_channels_and_address_spaces() {
    let topo = quad();
    for (spec, kind) in [
        ("ipc=pipe", "Pipe"),
        ("ipc=socket", "Unix"),
        ("ipc=inet", "Tcp"),
    ] {
        let inst = instantiate(
            &parse_spec(&format!("hackbench:groups=1,loops=5,{spec}")).unwrap(),
            &topo,
        )
        .unwrap();
        assert!(
            inst.workload
                .channels
                .iter()
                .all(|c| format!("{:?}", c.kind).starts_with(kind)),
            "{spec}"
        );
        let (sim, end) = run_instance(&inst, &topo, 1);
        inst.result(&sim, &end).unwrap();
        assert_eq!(delivered(&sim, ""), 20 * 20 * 5);
    }
    let thr = instantiate(
        &parse_spec("hackbench:groups=1,loops=5,mode=thread,fds=4").unwrap(),
        &topo,
    )
    .unwrap();
    assert!(thr.workload.specs.iter().all(|s| s.mm == Some(0)));
    let (r, _, _) = run_spec("hackbench:groups=1,loops=5,mode=thread,fds=4", &topo).unwrap();
    let p = parse_hackbench(&r.native).unwrap();
    assert!(p.threads && p.fds == 4 && p.groups == 1);
    let prc = instantiate(&parse_spec("hackbench:groups=1,loops=5").unwrap(), &topo).unwrap();
    assert!(prc.workload.specs.iter().all(|s| s.mm.is_none()));
}

#[test]
fn pipe_is_a_strict_ping_pong() {
    let topo = quad();
    let (r, sim, _) = run_spec("pipe:loops=5000", &topo).unwrap();
    assert_eq!(sim.nr_tasks(), 2);
    assert_eq!(delivered(&sim, ""), 2 * 5000);
    // Every message wakes the other side: one sync wakeup per message (minus start-up).
    let c = sim.counters();
    assert!(c.wakeups_sync >= 2 * 5000 - 2, "{}", c.to_text());
    let p = parse_perf_pipe(&r.native).unwrap();
    assert_eq!(p.loops, Some(5000));
    assert!((p.usecs_per_op - val(&r, "usecs_per_op")).abs() < 1e-5);
    let t1 = sim.now();
    let (_, sim2, _) = run_spec("pipe:loops=10000", &topo).unwrap();
    let ratio = sim2.now() as f64 / t1 as f64;
    assert!((1.8..2.2).contains(&ratio), "{ratio}");
    let (_, sim4, _) = run_spec("pipe:loops=1000,pairs=3,threads=on", &topo).unwrap();
    assert_eq!(sim4.nr_tasks(), 6);
    assert_eq!(delivered(&sim4, ""), 3 * 2 * 1000);
}

#[test]
fn tbench_pairs_fork_servers_and_count_payload() {
    let topo = quad();
    let (r, sim, _) = run_spec("tbench:clients=2,duration=50ms", &topo).unwrap();
    // 2 clients, the listener, and 2 servers forked on accept.
    assert_eq!(sim.nr_tasks(), 5);
    assert!(
        sim.task_stats()
            .iter()
            .filter(|t| t.comm == "tbench_srv")
            .count()
            == 3
    );
    let ops = delivered(&sim, "conn") / 2;
    assert!(ops > 100, "{ops} ops");
    let p = parse_tbench(&r.native).unwrap();
    assert_eq!((p.clients, p.procs), (2, 2));
    // MB/sec: each operation counts its own ReadX/WriteX bytes; over whole load-file cycles
    // that averages 5,428 B per operation (a partial cycle moves it by well under 2 %).
    let expect = ops as f64 * 5428.0 / 1e6 / 0.05;
    assert!(
        (p.throughput_mb_s - expect).abs() / expect < 0.02,
        "{} vs {expect}",
        p.throughput_mb_s
    );
    assert!(val(&r, "avg_latency_ms") > 0.0 && val(&r, "avg_latency_ms") <= p.max_latency_ms);

    // More clients than CPUs: lower throughput per client.
    let per = |n: u64| {
        let (r, _, _) = run_spec(&format!("tbench:clients={n},duration=50ms"), &topo).unwrap();
        val(&r, "throughput_mb_s") / n as f64
    };
    let (few, many) = (per(1), per(16));
    assert!(
        many < 0.7 * few,
        "per-client MB/s: 1 client {few}, 16 clients {many}"
    );
}

#[test]
fn netperf_rr_counts_transactions_per_pair() {
    let topo = quad();
    let (r, sim, _) = run_spec("netperf-rr:pairs=2,duration=20ms", &topo).unwrap();
    assert_eq!(sim.nr_tasks(), 5);
    let total = delivered(&sim, "conn") / 2;
    let p = parse_netperf_rr(&r.native).unwrap();
    assert_eq!((p.request, p.response), (1, 1));
    // The first block is pair 0; the headline sums the pairs.
    assert!((val(&r, "trans_per_sec") - total as f64 / 0.02).abs() <= 2.0 / 0.02 + 1.0);
    assert!(p.trans_per_sec < val(&r, "trans_per_sec"));
    let (r8, _, _) = run_spec("netperf-rr:pairs=8,duration=20ms", &topo).unwrap();
    let (two, eight) = (
        val(&r, "trans_per_sec_per_pair"),
        val(&r8, "trans_per_sec_per_pair"),
    );
    // 16 tasks on 4 CPUs share the CPUs, but their wakeups become cheap local ones instead of
    // IPIs to idle CPUs, so per-pair throughput drops by about a quarter, not by half.
    assert!(
        eight < 0.85 * two,
        "per-pair trans/s: 2 pairs {two}, 8 pairs {eight}"
    );
}

#[test]
fn pgbench_round_trips_and_background_processes() {
    let topo = quad();
    let (r, sim, _) =
        run_spec("pgbench:clients=4,builtin=select-only,duration=20ms", &topo).unwrap();
    // The postmaster, 1 pgbench thread, 4 backends, walwriter, bgwriter and checkpointer;
    // select-only commits nothing, so no WAL flush leader.
    assert_eq!(sim.nr_tasks(), 1 + 1 + 4 + 3);
    let p = parse_pgbench(&r.native).unwrap();
    let txns = p.transactions.unwrap();
    assert!(txns > 100);
    // One statement per select-only transaction.
    let queries = delivered(&sim, "thread0.queries");
    assert!(
        queries >= txns && queries <= txns + 4,
        "{queries} queries for {txns} transactions"
    );
    assert!((p.tps - val(&r, "tps")).abs() < 1e-3);

    // TPC-B: 7 round trips per transaction, and the WAL flush leader beside.
    let (r7, sim7, _) = run_spec("pgbench:clients=4,scale=4,duration=20ms", &topo).unwrap();
    let t7 = parse_pgbench(&r7.native).unwrap().transactions.unwrap();
    let q7 = delivered(&sim7, "thread0.queries");
    assert!(
        q7 >= 7 * t7 && q7 <= 7 * t7 + 4 * 7,
        "{q7} queries for {t7} transactions"
    );
    assert_eq!(sim7.nr_tasks(), 1 + 1 + 4 + 3 + 1);
    assert!(sim7.task_stats().iter().any(|t| t.comm == "walwriter"));
    // Two pgbench threads split the sessions.
    let inst = instantiate(&parse_spec("pgbench:clients=5,jobs=2").unwrap(), &topo).unwrap();
    assert_eq!(
        inst.workload
            .channels
            .iter()
            .filter(|c| c.name.ends_with("queries"))
            .count(),
        2
    );
    assert!(instantiate(&parse_spec("pgbench:clients=2,jobs=3").unwrap(), &topo).is_err());
}

#[test]
fn sysbench_runs_twenty_statements_per_transaction() {
    let topo = quad();
    for spec in [
        "sysbench:threads=3,duration=20ms",
        "sysbench:threads=6,thread_handling=pool,thread_pool_size=2,duration=20ms",
    ] {
        let (r, sim, _) = run_spec(spec, &topo).unwrap();
        let p = parse_sysbench(&r.native).unwrap();
        let q = sim
            .workload()
            .channels
            .iter()
            .enumerate()
            .filter(|(_, c)| c.name.contains("quer"))
            .map(|(i, _)| sim.channel_delivered(i))
            .sum::<u64>();
        let n = p.transactions;
        let clients = if spec.contains("pool") { 6 } else { 3 };
        assert!(
            q >= 20 * n && q <= 20 * n + 20 * clients,
            "{spec}: {q} queries, {n} transactions"
        );
        assert_eq!((p.reads, p.writes, p.other), (14 * n, 4 * n, 2 * n));
        assert!((p.transactions_per_sec - val(&r, "transactions_per_sec")).abs() < 0.01);
    }
    // The pool: 2 groups of 3 connections, each group served by 1 + oversubscribe threads.
    let mysqld = |spec: &str| {
        let (_, sim, _) = run_spec(spec, &topo).unwrap();
        sim.task_stats()
            .iter()
            .filter(|t| t.comm == "mysqld")
            .count()
    };
    let pool = "sysbench:threads=6,thread_handling=pool,thread_pool_size=2,duration=5ms";
    assert_eq!(mysqld(&format!("{pool},thread_pool_oversubscribe=0")), 2);
    assert_eq!(mysqld(&format!("{pool},thread_pool_oversubscribe=1")), 4);
    // One thread per connection (8.0): the acceptor and the 6 threads it creates.
    assert_eq!(mysqld("sysbench:threads=6,duration=5ms"), 1 + 6);
}

#[test]
fn schbench_old_latency_grows_past_the_cpu_count() {
    let topo = quad();
    let (r, sim, _) =
        run_spec("schbench:message_threads=1,threads=2,runtime=500ms", &topo).unwrap();
    assert_eq!(sim.nr_tasks(), 3);
    let p = parse_schbench_old(&r.native).unwrap();
    assert_eq!(p.p99 as f64, val(&r, "wakeup_lat_p99_us"));
    assert!(
        p.p50 <= p.p90 && p.p90 <= p.p99 && p.p99 <= p.p99_9 && p.min <= p.p50 && p.p99_9 <= p.max
    );
    // 2 × 16 workers spinning 30 ms on 4 CPUs: wakeups wait behind other workers.
    let (busy, _, _) = run_spec("schbench:runtime=500ms", &topo).unwrap();
    let pb = parse_schbench_old(&busy.native).unwrap();
    assert!(
        pb.p99 > 10 * p.p99.max(1),
        "p99 {} µs unloaded vs {} µs overloaded",
        p.p99,
        pb.p99
    );
}

#[test]
fn schbench_v1_requests_take_the_calibrated_work() {
    let topo = quad();
    let (r, sim, inst) = run_spec("schbench:version=v1,runtime=1s", &topo).unwrap();
    // m = 1, t = CPUs / m = 4 workers.
    assert_eq!(sim.nr_tasks(), 5);
    assert_eq!(inst.params.get("threads").map(String::as_str), Some("4"));
    assert_eq!(inst.params.get("cputime").map(String::as_str), Some("17ms"));
    let p = parse_schbench_v1(&r.native).unwrap();
    assert!((p.average_rps - val(&r, "rps")).abs() < 0.01);
    // 4 workers on 4 CPUs, each request 100 µs sleep + 17 ms of work: ~4 / 17.1 ms ≈ 234 RPS
    // (the bound allows for engine_issue_compute_cut_short_after_list_wakeups in files.rs).
    assert!((180.0..290.0).contains(&p.average_rps), "{}", p.average_rps);
    let req50 = p.request.at(50.0).unwrap();
    assert!(
        (16_500..18_500).contains(&req50),
        "request p50 {req50} µs (17.1 ms ± the profile's jitter)"
    );
    // Twice the operations: twice the work, half the requests.
    let (r2, _, _) = run_spec("schbench:version=v1,runtime=1s,operations=10", &topo).unwrap();
    let ratio = val(&r, "rps") / val(&r2, "rps");
    assert!((1.7..2.3).contains(&ratio), "{ratio}");
}

#[test]
fn aim7_jobs_per_minute_saturate_with_users() {
    let topo = quad();
    let (r, sim, _) = run_spec("aim7-compute:tasks=2,jobs=5", &topo).unwrap();
    // reaim + 2 users + 2 pipe partners + one child per job.
    assert_eq!(sim.nr_tasks(), 1 + 2 + 2 + 2 * 5);
    assert_eq!(delivered(&sim, "user"), 2 * 2 * 5);
    let p = parse_aim7(&r.native).unwrap();
    assert!((p.max_jobs_per_min - val(&r, "jobs_per_min")).abs() < 0.01);
    let jpm = |n: u64| {
        val(
            &run_spec(&format!("aim7-compute:tasks={n},jobs=5"), &topo)
                .unwrap()
                .0,
            "jobs_per_min",
        )
    };
    let (two, eight, thirtytwo) = (jpm(2), jpm(8), jpm(32));
    assert!(eight > 1.5 * two, "2 users {two}, 8 users {eight}");
    assert!(
        thirtytwo < 2.0 * eight,
        "past the CPU count jobs/min stops scaling: 8 users {eight}, 32 users {thirtytwo}"
    );
}

#[test]
fn kernbench_forks_every_job_and_parallelises_to_the_token_limit() {
    let topo = quad();
    let (r, sim, inst) = run_spec("kernbench:files=40,jobs=2", &topo).unwrap();
    // make + 40 × (gcc, cc1, as) + ld.
    assert_eq!(sim.nr_tasks(), 1 + 40 * 3 + 1);
    assert_eq!(sim.counters().forks, 1 + 40 * 3 + 1);
    assert_eq!(delivered(&sim, "jobserver"), 40);
    let k = &parse_kernbench(&r.native).unwrap()[0];
    assert_eq!(k.load, "Half load -j 2");
    assert!((k.elapsed_s.0 - val(&r, "elapsed_s")).abs() < 0.006);
    // User time: 40 × cc1 (lognormal, median 2 ms at scale 0.01) + as + ld.
    assert!(
        k.user_s.0 > 0.04 && k.system_s.0 < k.user_s.0,
        "{}",
        r.native
    );
    // Without the serial link step the build parallelises up to the CPU count.
    let (r1, _, _) = run_spec("kernbench:files=40,jobs=1,link=0s", &topo).unwrap();
    let (r, _, _) = run_spec("kernbench:files=40,jobs=2,link=0s", &topo).unwrap();
    let (r4, _, i4) = run_spec("kernbench:files=40,link=0s", &topo).unwrap();
    assert_eq!(i4.params.get("jobs").map(String::as_str), Some("16"));
    assert!(
        parse_kernbench(&r4.native).unwrap()[0]
            .load
            .starts_with("Optimal load -j 16")
    );
    let (e1, e2, e4) = (
        val(&r1, "elapsed_s"),
        val(&r, "elapsed_s"),
        val(&r4, "elapsed_s"),
    );
    assert!(
        e2 < 0.6 * e1 && e4 < 0.7 * e2,
        "-j1 {e1}, -j2 {e2}, -j16 {e4}"
    );
    let _ = inst;
}

#[test]
fn kernbench_jobs_carry_memory_on_a_fixed_tree_and_split_user_from_system() {
    let topo = two_nodes();
    let spec = "kernbench:files=40,scale=0.1,link=0s";
    let inst = instantiate(&parse_spec(spec).unwrap(), &topo).unwrap();
    // Every compile job is memory-bound (first touch) and cut into 1 ms computes.
    let jobs: Vec<_> = inst
        .workload
        .specs
        .iter()
        .filter(|s| matches!(s.comm.as_str(), "cc1" | "as" | "ld"))
        .collect();
    assert_eq!(jobs.len(), 40 + 2);
    for s in &jobs {
        assert_eq!(s.mem_intensity, 0.25, "{}", s.comm);
        assert_eq!(s.home_node, None, "{}", s.comm);
        assert!(matches!(s.program[0], schedlab_engine::Op::Exec));
    }
    assert!(jobs.iter().any(|s| {
        s.program
            .iter()
            .any(|op| matches!(op, schedlab_engine::Op::Loop(n) if *n > 1))
    }));
    // One source tree: two seeds compile the same files, so user time differs only by the
    // profile's jitter (±2 % per burst, averaging out) and by where the jobs ran (their
    // remote-memory slowdown on the two nodes, ~1 %), not by fresh per-file draws.
    let (a, _) = run_instance(&inst, &topo, 1);
    let (b, _) = run_instance(&inst, &topo, 2);
    let user = |sim: &schedlab_engine::Simulation| -> u64 {
        sim.task_stats().iter().map(|t| t.user_ns).sum()
    };
    let (ua, ub) = (user(&a) as f64, user(&b) as f64);
    assert!((ua / ub - 1.0).abs() < 0.015, "user {ua} vs {ub}");
    // kernbench's user + system is all the CPU time, and exec is system time.
    let r = inst.result(&a, &EndReason::AllExited).unwrap();
    let k = &parse_kernbench(&r.native).unwrap()[0];
    let cpu: u64 = a.task_stats().iter().map(|t| t.sum_exec_ns).sum();
    assert!((k.user_s.0 + k.system_s.0 - cpu as f64 / 1e9).abs() < 0.02);
    let execs = 40 * 2 + 1;
    assert!(
        val(&r, "system_s") * 1e9 >= (execs * MachineProfile::default().cpu.exec_ns) as f64,
        "{}",
        r.native
    );
}

#[test]
fn numa_test_is_disturbed_by_hackbench() {
    let topo = two_nodes();
    let (r, sim, _) = run_spec("numa-test:tasks=8,work=20ms,hackbench_groups=0", &topo).unwrap();
    assert_eq!(sim.nr_tasks(), 9);
    let p = parse_numa_test(&r.native).unwrap();
    assert_eq!(p.tasks, 8);
    assert!(
        p.elapsed_s >= 0.0199 && p.total_user_s >= 8.0 * 0.0199,
        "{}",
        r.native
    );
    assert!((p.average_user_s - p.total_user_s / 8.0).abs() < 0.006);
    let (rd, simd, _) = run_spec(
        "numa-test:tasks=8,work=20ms,hackbench_groups=4,hackbench_loops=50,delay=2ms",
        &topo,
    )
    .unwrap();
    // The hackbench ran to completion alongside: 4 groups × 20 × 20 × 50 messages.
    assert_eq!(delivered(&simd, "hb-"), 4 * 20 * 20 * 50);
    let (quiet, disturbed) = (val(&r, "elapsed_s"), val(&rd, "elapsed_s"));
    assert!(
        disturbed > quiet * 1.05,
        "disturbed {disturbed} vs quiet {quiet}"
    );
}

#[test]
fn lmbench_bandwidth_and_ring_latency() {
    let topo = quad();
    for kind in ["pipe", "unix", "tcp"] {
        let (r, sim, _) =
            run_spec(&format!("lmbench-bw:kind={kind},size=64K,total=4M"), &topo).unwrap();
        assert_eq!(delivered(&sim, "data"), 64, "{kind}");
        assert!(val(&r, "bandwidth_mb_s") > 0.0);
        if kind != "tcp" {
            let p = parse_lmbench_bw(&r.native).unwrap();
            assert!((p.mb_per_sec - val(&r, "bandwidth_mb_s")).abs() < 0.01);
        } else {
            assert!(r.native.starts_with("Socket bandwidth using localhost: "));
        }
    }
    let (r, sim, _) = run_spec("lat-ctx:procs=4,rounds=500", &topo).unwrap();
    assert_eq!(delivered(&sim, "ring"), 4 * 500);
    assert_eq!(delivered(&sim, "overhead"), 500);
    let p = parse_lat_ctx(&r.native).unwrap();
    assert_eq!(p.points.len(), 1);
    assert_eq!(p.points[0].0, 4);
    assert!(p.points[0].1 > 0.0 && p.overhead_us > 0.0);
    // A private working set to refetch after each switch makes a switch dearer.
    let (rs, _, _) = run_spec("lat-ctx:procs=4,rounds=500,size=64", &topo).unwrap();
    assert!(
        val(&rs, "ctx_us_4") > val(&r, "ctx_us_4"),
        "{} vs {}",
        rs.native,
        r.native
    );
}

/// lmbench's `-P`: that many copies of the ring, each with its own overhead task and its
/// own pipes, every token passed `rounds` times around its own ring; too many tasks is a
/// refusal naming the parameter.
#[test]
fn lat_ctx_parallel_runs_copies_of_the_ring() {
    let topo = quad();
    let (r, sim, _) = run_spec("lat-ctx:procs=3,rounds=200,parallel=4", &topo).unwrap();
    assert_eq!(delivered(&sim, "ring"), 4 * 3 * 200);
    assert_eq!(delivered(&sim, "overhead"), 4 * 200);
    assert!(val(&r, "ctx_us_3") > 0.0);
    // The time is each copy's ring time averaged over the copies (every copy's token
    // records its last return home), not the last copy's: with 8 copies on 4 CPUs the
    // copies finish at different times, and the mean lies below the last one.
    let (r8, sim8, _) = run_spec("lat-ctx:procs=3,rounds=200,parallel=8", &topo).unwrap();
    let hist = |name: &str| {
        let id = sim8
            .workload()
            .hists
            .iter()
            .position(|h| h == name)
            .unwrap();
        sim8.user_hist(id)
    };
    let (start, ends) = (hist("ring_start").min() as f64, hist("ring_end"));
    assert_eq!(ends.len(), 8);
    let per_hop = |end: f64| (end - start) / 1e3 / 600.0 - val(&r8, "overhead_us");
    let (mean, last) = (per_hop(ends.mean()), per_hop(ends.max() as f64));
    let got = val(&r8, "ctx_us_3");
    assert!(
        (got - mean).abs() < 0.01 * mean,
        "{got} µs, mean {mean}, last {last}"
    );
    assert!(got < 0.98 * last, "{got} µs, last copy's {last}");
    // As in lat_ctx.c, only the token's first holder (and each copy's overhead loop) waits
    // for benchmp's start; the ring's other processes block on their pipes from the start,
    // so the start wakes 2 tasks per copy, not the whole ring.
    let inst = instantiate(
        &parse_spec("lat-ctx:procs=3,rounds=200,parallel=4").unwrap(),
        &topo,
    )
    .unwrap();
    let waiting = inst
        .workload
        .specs
        .iter()
        .filter(|s| {
            s.program
                .iter()
                .any(|op| matches!(op, schedlab_engine::Op::Barrier(_)))
        })
        .count();
    assert_eq!(waiting, 2 * 4);
    let e = run_spec("lat-ctx:procs=1000,parallel=100000", &topo)
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("parallel") && e.contains("tasks"), "{e}");
}

#[test]
fn every_catalog_workload_runs_with_its_defaults_and_leads_with_its_headline() {
    let topo = quad();
    for w in catalog().iter().filter(|w| !w.takes_path()) {
        let t = if w.name == "numa-test" {
            two_nodes()
        } else {
            topo.clone()
        };
        let (r, _, inst) = run_spec(w.name, &t).unwrap_or_else(|e| panic!("{}: {e}", w.name));
        let (name, better) = inst.headline();
        let h = r.headline().unwrap();
        assert_eq!(
            (h.name.as_str(), h.better),
            (name.as_str(), better),
            "{}",
            w.name
        );
        assert!(h.value.is_finite() && h.value > 0.0, "{}: {h:?}", w.name);
        assert_eq!(r.workload, w.name);
        // Every parameter's value is reported, defaults included.
        for p in w.params {
            let v1_only =
                w.name == "schbench" && ["footprint", "operations", "locking"].contains(&p.name);
            assert!(
                v1_only || r.params.contains_key(p.name),
                "{}: {} missing from {:?}",
                w.name,
                p.name,
                r.params
            );
        }
    }
}

#[test]
fn same_seed_same_result() {
    let topo = quad();
    let a = run_spec("tbench:clients=3,duration=20ms", &topo).unwrap().0;
    let b = run_spec("tbench:clients=3,duration=20ms", &topo).unwrap().0;
    assert_eq!(a, b);
}

/// The brief's size check: 64 M messages on an 80-CPU machine (about 20 s in release).
/// Run with `cargo test --release -p schedlab-workloads -- --ignored`.
#[test]
#[ignore]
fn hackbench_400_groups_400_loops_on_80_cpus() {
    let topo = schedlab_topo::regular("2s20c2t", "test", 2, 1, 20, 2, true).unwrap();
    let t = std::time::Instant::now();
    let (r, sim, _) = run_spec("hackbench:groups=400,loops=400", &topo).unwrap();
    assert_eq!(delivered(&sim, ""), 400 * 20 * 20 * 400);
    eprintln!(
        "{}wall {:?}, {} events",
        r.native,
        t.elapsed(),
        sim.counters().events
    );
}
