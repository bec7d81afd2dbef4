//! The native-format formatters and parsers: every formatter's output parses back to the
//! numbers it was given (up to the tool's printed precision), and every parser reads the
//! committed sample outputs of the real tools (`tests/samples/`, provenance in its README).

use schedlab_metrics::Better;
use schedlab_metrics::native::*;

fn sample(name: &str) -> String {
    let path = format!("{}/tests/samples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

// ---- round trips ------------------------------------------------------------------------------

#[test]
fn hackbench_round_trip() {
    for threads in [false, true] {
        let r = HackbenchReport {
            threads,
            groups: 10,
            fds: 20,
            loops: 100,
            datasize: 100,
            time_s: 0.715,
        };
        let text = format_hackbench(&r);
        assert_eq!(parse_hackbench(&text).unwrap(), r, "{text}");
    }
    let text = format_hackbench(&HackbenchReport {
        threads: false,
        groups: 10,
        fds: 20,
        loops: 100,
        datasize: 100,
        time_s: 0.715,
    });
    // The exact rt-tests lines (benchmarks.md §2.1).
    assert_eq!(
        text,
        "Running in process mode with 10 groups using 40 file descriptors each (== 400 tasks)\n\
         Each sender will pass 100 messages of 100 bytes\nTime: 0.715\n"
    );
}

#[test]
fn perf_messaging_round_trip() {
    let r = PerfMessagingReport {
        threads: true,
        groups: 4,
        fds: 20,
        time_s: 1.25,
    };
    let text = format_perf_messaging(&r);
    assert!(text.contains("     Total time: 1.250 [sec]\n"), "{text}");
    assert_eq!(parse_perf_messaging(&text).unwrap(), r);
}

#[test]
fn perf_pipe_round_trip() {
    let r = PipeReport {
        loops: 1_000_000,
        threads: false,
        total_s: 8.813_985,
    };
    let text = format_perf_pipe(&r);
    let p = parse_perf_pipe(&text).unwrap();
    assert_eq!(p.loops, Some(1_000_000));
    assert_eq!(p.threads, Some(false));
    assert_eq!(p.total_s, Some(8.813));
    assert!(close(p.usecs_per_op, 8.813985, 1e-6), "{text}");
    assert_eq!(p.ops_per_sec, Some(113_456.0));
    // Same layout as the example in benchmarks.md §2.2.
    assert_eq!(text, sample("perf_pipe_spec.txt"));
    let names: Vec<_> = r.metrics().into_iter().map(|m| m.name).collect();
    assert_eq!(names, ["usecs_per_op", "ops_per_sec"]);
}

#[test]
fn tbench_round_trip() {
    let r = TbenchReport {
        ops: vec![
            TbenchOpStat {
                name: "ReadX".into(),
                count: 300,
                avg_lat_ms: 0.02,
                max_lat_ms: 1.5,
            },
            TbenchOpStat {
                name: "NTCreateX".into(),
                count: 100,
                avg_lat_ms: 0.06,
                max_lat_ms: 0.25,
            },
        ],
        throughput_mb_s: 287.617,
        clients: 1,
        procs: 1,
        max_latency_ms: 5.487,
    };
    let text = format_tbench(&r);
    assert!(
        text.ends_with("Throughput 287.617 MB/sec  1 clients  1 procs  max_latency=5.487 ms\n"),
        "{text}"
    );
    let p = parse_tbench(&text).unwrap();
    assert_eq!(p, r);
    // (300 * 0.02 + 100 * 0.06) / 400 = 0.03
    assert!(close(p.avg_latency_ms().unwrap(), 0.03, 1e-12));
    let m = p.metrics();
    assert_eq!(m[0].name, "throughput_mb_s");
    assert_eq!(m[0].better, Better::Higher);
    assert_eq!(m[2].name, "avg_latency_ms");
}

#[test]
fn netperf_round_trip() {
    let r = NetperfRrReport {
        send_socket: 16384,
        recv_socket: 131072,
        request: 1,
        response: 1,
        elapsed_s: 10.0,
        trans_per_sec: 35432.12,
    };
    assert_eq!(parse_netperf_rr(&format_netperf_rr(&r)).unwrap(), r);
}

#[test]
fn pgbench_round_trip() {
    let r = PgbenchReport {
        transaction_type: "<builtin: select only>".into(),
        scale: 1,
        clients: 4,
        threads: 1,
        duration_s: 5,
        transactions: 100_000,
        latency_avg_ms: 0.2,
        initial_connection_ms: 12.5,
        tps: 20_000.123_456,
    };
    let p = parse_pgbench(&format_pgbench(&r)).unwrap();
    assert!(close(p.tps, r.tps, 1e-9));
    assert_eq!(p.latency_avg_ms, Some(0.2));
    assert_eq!(p.transactions, Some(100_000));
    assert_eq!(p.clients, Some(4));
}

#[test]
fn sysbench_round_trip() {
    let r = SysbenchReport {
        reads: 140_000,
        writes: 40_000,
        other: 20_000,
        transactions: 10_000,
        transactions_per_sec: 999.87,
        latency_avg_ms: 5.0,
        latency_p95_ms: 8.0,
    };
    assert_eq!(parse_sysbench(&format_sysbench(&r)).unwrap(), r);
}

#[test]
fn schbench_old_round_trip() {
    let r = SchbenchOldReport {
        p50: 33,
        p75: 45,
        p90: 51,
        p95: 4152,
        p99: 14288,
        p99_5: 14288,
        p99_9: 14288,
        min: 0,
        max: 14276,
    };
    let text = format_schbench_old(&r);
    // Byte-identical to the block quoted in benchmarks.md §2.3.
    assert_eq!(text, sample("schbench_old_spec.txt"));
    assert_eq!(parse_schbench_old(&text).unwrap(), r);
    let m = r.metrics();
    assert_eq!(m[0].name, "wakeup_lat_p99_us");
    assert_eq!(m[0].value, 14288.0);
}

fn block(rows: &[(f64, u64, u64)], star: usize, total: u64, min: u64, max: u64) -> PctBlock {
    PctBlock {
        total_samples: total,
        rows: rows
            .iter()
            .map(|&(pct, value, samples)| PctRow {
                pct,
                value,
                samples,
            })
            .collect(),
        star,
        min,
        max,
    }
}

fn v1_spec_report() -> SchbenchV1Report {
    SchbenchV1Report {
        runtime_s: 30,
        wakeup: block(
            &[
                (50.0, 7, 1729909),
                (90.0, 7, 0),
                (99.0, 8, 71575),
                (99.9, 14, 20272),
            ],
            2,
            2631154,
            1,
            562,
        ),
        request: block(
            &[
                (50.0, 16784, 45123),
                (90.0, 17040, 35120),
                (99.0, 17552, 8021),
                (99.9, 18080, 812),
            ],
            2,
            90310,
            16478,
            23110,
        ),
        rps: block(
            &[(20.0, 2996, 3), (50.0, 3004, 2), (90.0, 3020, 4)],
            1,
            30,
            2982,
            3021,
        ),
        average_rps: 3009.10,
    }
}

#[test]
fn schbench_v1_round_trip() {
    let r = v1_spec_report();
    let text = format_schbench_v1(&r);
    // The sample is this text plus the `sched delay` line that the formatter does not print.
    let spec = sample("schbench_v1_spec.txt");
    assert!(spec.starts_with(&text), "{text}\n---\n{spec}");
    assert_eq!(parse_schbench_v1(&text).unwrap(), r);
    let names: Vec<_> = r.metrics().into_iter().map(|m| m.name).collect();
    assert_eq!(
        names,
        [
            "wakeup_lat_p99_us",
            "wakeup_lat_p50_us",
            "wakeup_lat_p90_us",
            "wakeup_lat_p99_9_us",
            "rps"
        ]
    );
}

#[test]
fn aim7_kernbench_numa_lmbench_round_trip() {
    let a = Aim7Report {
        max_jobs_per_min: 12345.67,
    };
    assert_eq!(parse_aim7(&format_aim7(&a)).unwrap(), a);

    let k = vec![
        KernbenchReport {
            load: "Half load -j 16".into(),
            elapsed_s: (80.5, 0.3),
            user_s: (600.25, 1.5),
            system_s: (55.0, 0.25),
            percent_cpu: (810.0, 2.0),
            context_switches: (50000.0, 120.0),
            sleeps: (70000.0, 300.0),
        },
        KernbenchReport {
            load: "Optimal load -j 128".into(),
            elapsed_s: (45.23, 0.21),
            user_s: (620.12, 1.02),
            system_s: (60.33, 0.44),
            percent_cpu: (1504.0, 3.2),
            context_switches: (123456.0, 789.0),
            sleeps: (98765.0, 432.0),
        },
    ];
    assert_eq!(parse_kernbench(&format_kernbench(&k)).unwrap(), k);

    let n = NumaTestReport {
        tasks: 8,
        average_user_s: 12.5,
        elapsed_s: 15.75,
        total_user_s: 100.0,
        total_sys_s: 0.25,
    };
    assert_eq!(parse_numa_test(&format_numa_test(&n)).unwrap(), n);

    for kind in [LmbenchBwKind::Pipe, LmbenchBwKind::Unix] {
        let b = LmbenchBwReport {
            kind,
            mb_per_sec: 4321.5,
        };
        assert_eq!(parse_lmbench_bw(&format_lmbench_bw(&b)).unwrap(), b);
    }
    let b = format_lmbench_bw(&LmbenchBwReport {
        kind: LmbenchBwKind::Unix,
        mb_per_sec: 1.0,
    });
    assert_eq!(b, "AF_UNIX sock stream bandwidth: 1.00 MB/sec\n");

    let l = LatCtxReport {
        size_kb: 16,
        overhead_us: 1.23,
        points: vec![(2, 3.45), (4, 4.1), (8, 4.87)],
    };
    assert_eq!(parse_lat_ctx(&format_lat_ctx(&l)).unwrap(), l);
}

// ---- real and quoted samples ------------------------------------------------------------------

#[test]
fn hackbench_samples() {
    let r = parse_hackbench(&sample("hackbench_rt_default.txt")).unwrap();
    assert_eq!(
        (r.threads, r.groups, r.fds, r.loops, r.datasize),
        (false, 10, 20, 100, 100)
    );
    assert_eq!(r.time_s, 0.505);
    let r = parse_hackbench(&sample("hackbench_rt_pipe_thread.txt")).unwrap();
    assert_eq!((r.threads, r.groups, r.loops), (true, 1, 200));
    assert_eq!(r.time_s, 0.043);
}

#[test]
fn perf_messaging_samples() {
    let r = parse_perf_messaging(&sample("perf_messaging.txt")).unwrap();
    assert_eq!(
        (r.threads, r.groups, r.fds, r.time_s),
        (false, 10, 20, 0.575)
    );
    let r = parse_perf_messaging(&sample("perf_messaging_pipe_thread.txt")).unwrap();
    assert_eq!((r.threads, r.groups, r.time_s), (true, 2, 0.035));
    // `-f simple` prints only the number.
    let r = parse_perf_messaging("0.939\n").unwrap();
    assert_eq!(r.time_s, 0.939);
}

#[test]
fn perf_pipe_samples() {
    let p = parse_perf_pipe(&sample("perf_pipe.txt")).unwrap();
    assert_eq!(p.loops, Some(20000));
    assert_eq!(p.threads, Some(false));
    assert_eq!(p.total_s, Some(1.493));
    assert_eq!(p.usecs_per_op, 74.66825);
    assert_eq!(p.ops_per_sec, Some(13392.0));
    let p = parse_perf_pipe(&sample("perf_pipe_T.txt")).unwrap();
    assert_eq!(p.threads, Some(true));
    assert_eq!(p.usecs_per_op, 87.00515);
    // Our formatter reproduces the real tool's text exactly for the same numbers:
    // 20000 loops in 1.740103 s (87.005150 us/op).
    let ours = format_perf_pipe(&PipeReport {
        loops: 20000,
        threads: true,
        total_s: 1.740103,
    });
    assert_eq!(ours, sample("perf_pipe_T.txt"));
}

#[test]
fn tbench_samples() {
    let r = parse_tbench(&sample("tbench_1.txt")).unwrap();
    assert_eq!((r.clients, r.procs), (1, 1));
    assert_eq!(r.throughput_mb_s, 78.4789);
    assert_eq!(r.max_latency_ms, 3.274);
    assert_eq!(r.ops.len(), 16);
    assert_eq!(r.ops[0].name, "NTCreateX");
    assert_eq!(r.ops[0].count, 6024);
    assert_eq!(r.ops[15].name, "Flush");
    let avg = r.avg_latency_ms().unwrap();
    assert!(avg > 0.0 && avg < 0.1, "{avg}");
    let r = parse_tbench(&sample("tbench_2.txt")).unwrap();
    assert_eq!((r.clients, r.procs), (2, 2));
    assert_eq!(r.throughput_mb_s, 1105.93);
    // Our formatter writes the table and Throughput line byte-identically to dbench's.
    let text = sample("tbench_1.txt");
    let tail = &text[text.find(" Operation").unwrap()..];
    assert_eq!(format_tbench(&parse_tbench(&text).unwrap()), tail);
}

#[test]
fn pgbench_samples() {
    let p = parse_pgbench(&sample("pgbench_select_c2.txt")).unwrap();
    assert_eq!(p.tps, 20395.300305);
    assert_eq!(p.latency_avg_ms, Some(0.098));
    assert_eq!(p.transactions, Some(40578));
    assert_eq!(p.clients, Some(2));
    // Old format: the "excluding" line wins over "including".
    let p = parse_pgbench(&sample("pgbench_old_spec.txt")).unwrap();
    assert_eq!(p.tps, 85.296346);
    assert_eq!(p.latency_avg_ms, None);
    assert_eq!(p.transactions, Some(10000));
}

#[test]
fn schbench_samples() {
    let r = parse_schbench_old(&sample("schbench_old_2016_style.txt")).unwrap();
    assert_eq!((r.p50, r.p99, r.p99_9, r.max), (12, 31, 1200, 4019));
    let r = parse_schbench_v1(&sample("schbench_v1_spec.txt")).unwrap();
    assert_eq!(r, v1_spec_report());
}

#[test]
fn recalled_samples() {
    let s = parse_sysbench(&sample("sysbench_oltp_recalled.txt")).unwrap();
    assert_eq!((s.transactions, s.transactions_per_sec), (10000, 999.87));
    assert_eq!((s.reads, s.writes, s.other), (140000, 40000, 20000));
    assert_eq!((s.latency_avg_ms, s.latency_p95_ms), (5.0, 8.0));
    let k = parse_kernbench(&sample("kernbench_recalled.txt")).unwrap();
    assert_eq!(k.len(), 1);
    assert_eq!(k[0].load, "Optimal load -j 32");
    assert_eq!(k[0].elapsed_s, (45.23, 0.21));
    assert_eq!(k[0].sleeps, (98765.0, 432.0));
    let n = parse_netperf_rr(&sample("netperf_tcp_rr_recalled.txt")).unwrap();
    assert_eq!((n.request, n.response, n.trans_per_sec), (1, 1, 35432.12));
    let l = parse_lat_ctx(&sample("lmbench_lat_ctx_spec.txt")).unwrap();
    assert_eq!(l.size_kb, 0);
    assert_eq!(l.points, vec![(2, 3.45), (4, 4.10), (8, 4.87)]);
}

#[test]
fn parsers_reject_foreign_output() {
    let junk = "segmentation fault\n";
    assert!(matches!(
        parse_hackbench(junk),
        Err(NativeError::Missing { .. })
    ));
    assert!(parse_perf_pipe(junk).is_err());
    assert!(parse_tbench(junk).is_err());
    assert!(parse_pgbench(junk).is_err());
    assert!(parse_schbench_old(junk).is_err());
    assert!(parse_schbench_v1(junk).is_err());
    assert!(parse_sysbench(junk).is_err());
    assert!(parse_kernbench(junk).is_err());
    assert!(parse_numa_test(junk).is_err());
    assert!(parse_aim7(junk).is_err());
    assert!(parse_lmbench_bw(junk).is_err());
    assert!(parse_lat_ctx(junk).is_err());
    assert!(parse_netperf_rr(junk).is_err());
    let e = parse_hackbench("Time: 1.2.3\n");
    // "1.2.3" matches the digits-and-dots pattern but is not a number.
    assert_eq!(
        e.unwrap_err().to_string(),
        "hackbench output line 1: bad number \"1.2.3\""
    );
}
