//! The native formats: every registered format's output parses back to the numbers it was
//! given (up to the tool's printed precision; one test for all of them), the formatters print
//! the real tools' lines, and every parser reads the committed sample outputs of the real
//! tools (`tests/samples/`, provenance in its README).

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

/// The one round-trip test: every registered format's examples parse back to their numbers at
/// the tool's printed precision.
#[test]
fn every_registered_format_round_trips() {
    let tools: Vec<_> = formats().iter().map(|f| f.tool()).collect();
    let mut unique = tools.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), tools.len(), "{tools:?}");
    assert!(tools.len() >= 14, "{tools:?}");
    for f in formats() {
        let n = f.check_round_trip().unwrap_or_else(|e| panic!("{e}"));
        assert!(n > 0, "{}: no examples", f.tool());
    }
}

// ---- what the formatters print, beyond the round trip ---------------------------------------

#[test]
fn hackbench_prints_rt_tests_lines() {
    let r = &Hackbench::examples()[0];
    assert!(!r.threads);
    // The exact lines rt-tests 2.4 hackbench prints.
    assert_eq!(
        Hackbench::format(r),
        "Running in process mode with 10 groups using 40 file descriptors each (== 400 tasks)\n\
         Each sender will pass 100 messages of 100 bytes\nTime: 0.715\n"
    );
    let text = PerfMessaging::format(&PerfMessaging::examples()[0]);
    assert!(text.contains("     Total time: 1.250 [sec]\n"), "{text}");
}

#[test]
fn perf_pipe_prints_perfs_layout() {
    let r = &PerfPipe::examples()[0];
    let text = format_perf_pipe(r);
    let p = parse_perf_pipe(&text).unwrap();
    assert_eq!(p.total_s, Some(8.813));
    assert!(close(p.usecs_per_op, 8.813985, 1e-6), "{text}");
    assert_eq!(p.ops_per_sec, Some(113_456.0));
    // Same layout as perf 6.1's output for these numbers.
    assert_eq!(text, sample("perf_pipe_spec.txt"));
    let names: Vec<_> = r.metrics().into_iter().map(|m| m.name).collect();
    assert_eq!(names, ["usecs_per_op", "ops_per_sec"]);
}

#[test]
fn tbench_prints_dbench_throughput_line() {
    let r = &Tbench::examples()[0];
    let text = format_tbench(r);
    assert!(
        text.ends_with("Throughput 287.617 MB/sec  1 clients  1 procs  max_latency=5.487 ms\n"),
        "{text}"
    );
    let p = parse_tbench(&text).unwrap();
    // (300 * 0.02 + 100 * 0.06) / 400 = 0.03
    assert!(close(p.avg_latency_ms().unwrap(), 0.03, 1e-12));
    let m = p.metrics();
    assert_eq!(m[0].name, "throughput_mb_s");
    assert_eq!(m[0].better, Better::Higher);
    assert_eq!(m[2].name, "avg_latency_ms");
}

#[test]
fn schbench_prints_both_generations_blocks() {
    let r = &SchbenchOld::examples()[0];
    // Byte-identical to the 2019-2022 block of the sample.
    assert_eq!(format_schbench_old(r), sample("schbench_old_spec.txt"));
    let m = r.metrics();
    assert_eq!(m[0].name, "wakeup_lat_p99_us");
    assert_eq!(m[0].value, 14288.0);

    let r = v1_spec_report();
    assert_eq!(SchbenchV1::examples(), vec![r.clone()]);
    let text = format_schbench_v1(&r);
    // The sample is this text plus the `sched delay` line that the formatter does not print.
    let spec = sample("schbench_v1_spec.txt");
    assert!(spec.starts_with(&text), "{text}\n---\n{spec}");
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
fn lmbench_bw_prints_lmbench_line() {
    assert_eq!(LmbenchBw::examples().len(), 2);
    let b = format_lmbench_bw(&LmbenchBwReport {
        kind: LmbenchBwKind::Unix,
        mb_per_sec: 1.0,
    });
    assert_eq!(b, "AF_UNIX sock stream bandwidth: 1.00 MB/sec\n");
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
    for f in formats() {
        assert!(f.accepts(junk).is_err(), "{} accepted junk", f.tool());
    }
    let e = parse_hackbench("Time: 1.2.3\n");
    // "1.2.3" matches the digits-and-dots pattern but is not a number.
    assert_eq!(
        e.unwrap_err().to_string(),
        "hackbench output line 1: bad number \"1.2.3\""
    );
}
