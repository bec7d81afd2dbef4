//! The list of built-in workloads and their parameters: names, defaults, units, and the real
//! tool each one mirrors. `schedlab workloads` prints it; the spec parser validates against it.
//!
//! The `unit` of a parameter also says how its value is read (see `ValueKind`): `count`
//! (a whole number), `bytes` (`100`, `64K`, `10M`), `KB`, `duration` (a number with a unit:
//! `2s`, `100us`), `bool` (`on`/`off`, `true`/`false`, `yes`/`no`, `1`/`0`), `fraction` (0..=1),
//! `factor` (a positive number), a `|`-separated list of choices, or `path`. A default of
//! `auto` means "derived from the machine or from other parameters" (the help says how).

/// One parameter of a workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    /// Name as used in `NAME:key=value`.
    pub name: &'static str,
    /// Default value as text (`auto` = derived, see `help`).
    pub default: &'static str,
    /// Unit, which also decides how values parse.
    pub unit: &'static str,
    /// One line for `schedlab workloads NAME`.
    pub help: &'static str,
}

/// One built-in workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkloadInfo {
    /// Name as used in `-w NAME`.
    pub name: &'static str,
    /// The real tool (and options) it mirrors.
    pub mirrors: &'static str,
    /// Its parameters, in canonical order.
    pub params: &'static [ParamInfo],
    /// What it models, in a sentence or two.
    pub about: &'static str,
}

/// How a parameter value is read, derived from its unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ValueKind {
    Count,
    Bytes,
    KiB,
    Duration,
    Bool,
    Fraction,
    Factor,
    Choice(&'static str),
    Path,
}

impl ParamInfo {
    pub(crate) fn kind(&self) -> ValueKind {
        match self.unit {
            "count" => ValueKind::Count,
            "bytes" => ValueKind::Bytes,
            "KB" => ValueKind::KiB,
            "duration" => ValueKind::Duration,
            "bool" => ValueKind::Bool,
            "fraction" => ValueKind::Fraction,
            "factor" => ValueKind::Factor,
            "path" => ValueKind::Path,
            other => ValueKind::Choice(other),
        }
    }
}

const fn p(
    name: &'static str,
    default: &'static str,
    unit: &'static str,
    help: &'static str,
) -> ParamInfo {
    ParamInfo {
        name,
        default,
        unit,
        help,
    }
}

static CATALOG: &[WorkloadInfo] = &[
    WorkloadInfo {
        name: "hackbench",
        mirrors: "rt-tests hackbench (-g -l -f -s -p/-i -T/-P); perf bench sched messaging",
        about: "G groups of F senders and F receivers; every sender writes `loops` messages to every \
                receiver of its group. Workers are forked at t=0 and started through a barrier; the \
                time runs from the barrier to the reaping of the last worker (fork time excluded).",
        params: &[
            p("groups", "10", "count", "groups (-g)"),
            p(
                "loops",
                "100",
                "count",
                "messages each sender passes to each receiver (-l)",
            ),
            p("fds", "20", "count", "senders and receivers per group (-f)"),
            p("datasize", "100", "bytes", "bytes per message (-s)"),
            p(
                "ipc",
                "socket",
                "pipe|socket|inet",
                "channel: pipe (-p), AF_UNIX socket (default), TCP loopback (-i)",
            ),
            p(
                "mode",
                "process",
                "process|thread",
                "workers as processes (-P, default) or threads (-T)",
            ),
        ],
    },
    WorkloadInfo {
        name: "pipe",
        mirrors: "perf bench sched pipe (-l -T); will-it-scale context_switch1 with pairs>1",
        about: "A 4-byte ping-pong over two pipes; one loop is a round trip. With pairs>1, that many \
                independent pairs run at once.",
        params: &[
            p(
                "loops",
                "100000",
                "count",
                "round trips per pair (-l; perf's default 1000000 shrunk to keep runs short)",
            ),
            p(
                "threads",
                "off",
                "bool",
                "the two sides are threads of one process (-T)",
            ),
            p("pairs", "1", "count", "independent ping-pong pairs"),
        ],
    },
    WorkloadInfo {
        name: "tbench",
        mirrors: "dbench tbench NPROCS 127.0.0.1 (-t) with tbench_srv",
        about: "N client/server pairs over TCP loopback; request/reply sizes drawn from the dbench \
                client.txt mix (mean 2,280 B / 3,290 B, 5,428 B counted per op); tbench_srv forks \
                one server per accepted connection.",
        params: &[
            p("clients", "1", "count", "client processes (NPROCS)"),
            p(
                "duration",
                "1s",
                "duration",
                "run time (-t; tbench's default 600s shrunk to keep runs short)",
            ),
            p(
                "client_work",
                "2us",
                "duration",
                "client user-space work per operation",
            ),
            p(
                "server_work",
                "3us",
                "duration",
                "server user-space work per operation",
            ),
        ],
    },
    WorkloadInfo {
        name: "netperf-rr",
        mirrors: "netperf -t TCP_RR -r 1,1 -l SECS, N instances in parallel",
        about: "N request/response pairs over TCP loopback (netserver forks a child per test); \
                transactions per second summed over the instances.",
        params: &[
            p("pairs", "1", "count", "parallel netperf instances"),
            p(
                "duration",
                "1s",
                "duration",
                "run time (-l; netperf's default 10s shrunk)",
            ),
            p("request", "1", "bytes", "request size (-r R,_)"),
            p("response", "1", "bytes", "response size (-r _,R)"),
            p(
                "client_work",
                "500ns",
                "duration",
                "netperf user-space work per transaction",
            ),
            p(
                "server_work",
                "500ns",
                "duration",
                "netserver user-space work per transaction",
            ),
        ],
    },
    WorkloadInfo {
        name: "pgbench",
        mirrors: "pgbench -c C -j J -T SECS [-S|-N] against PostgreSQL over a Unix socket",
        about: "J pgbench threads (hubs) each poll over C/J sessions; one backend process per \
                session. tpcb-like: 7 round trips per transaction, the branch row (scale rows) \
                locked from its update to commit, commit waits for the WAL writer.",
        params: &[
            p("clients", "1", "count", "client sessions (-c)"),
            p("jobs", "1", "count", "pgbench threads (-j)"),
            p(
                "builtin",
                "tpcb-like",
                "select-only|simple-update|tpcb-like",
                "transaction script (-b; -S = select-only, -N = simple-update)",
            ),
            p(
                "scale",
                "1",
                "count",
                "scale factor: number of branch rows (-s at -i)",
            ),
            p("duration", "1s", "duration", "run time (-T)"),
            p(
                "query_work",
                "15us",
                "duration",
                "backend CPU per statement",
            ),
            p("hub_work", "3us", "duration", "pgbench CPU per statement"),
            p(
                "wal_flush",
                "50us",
                "duration",
                "WAL flush (fsync) device time per commit group",
            ),
        ],
    },
    WorkloadInfo {
        name: "sysbench-oltp",
        mirrors: "sysbench oltp_read_write --threads=T --time=SECS against MySQL/MariaDB",
        about: "T client threads, each with one connection, 20 queries per transaction \
                (14 reads, 4 writes, 2 other). pool=0: one server thread per connection; \
                pool=P: a pool of P server threads serves all connections.",
        params: &[
            p("threads", "1", "count", "client threads (--threads)"),
            p(
                "pool",
                "0",
                "count",
                "server thread pool size (0 = one thread per connection)",
            ),
            p(
                "duration",
                "1s",
                "duration",
                "run time (--time; sysbench's default 10s shrunk)",
            ),
            p("query_work", "30us", "duration", "server CPU per query"),
            p("client_work", "5us", "duration", "client CPU per query"),
        ],
    },
    WorkloadInfo {
        name: "schbench",
        mirrors: "schbench -m -t -r -s -c (old, 2016-2023) or schbench v1.0 -m -t -r -F -n -s [-L]",
        about: "Message threads wake their workers in bursts (futex, no sync hint). old: workers \
                spin cputime then post; the message thread sleeps sleeptime and wakes them all. v1: \
                each request is a wakeup, a 100us sleep and matrix work under a per-CPU lock.",
        params: &[
            p(
                "version",
                "old",
                "old|v1",
                "schbench generation (old: LKML 2016-2023; v1: April 2023 on)",
            ),
            p(
                "message_threads",
                "auto",
                "count",
                "message threads (-m; auto: 2 old, 1 v1)",
            ),
            p(
                "threads",
                "auto",
                "count",
                "workers per message thread (-t; auto: 16 old, CPUs/m v1)",
            ),
            p(
                "runtime",
                "1s",
                "duration",
                "run time (-r; schbench's default 30s shrunk)",
            ),
            p(
                "sleeptime",
                "auto",
                "duration",
                "message thread sleep (old) or worker sleep (v1) (-s; auto: 30ms old, 100us v1)",
            ),
            p(
                "cputime",
                "auto",
                "duration",
                "worker spin (old -c; auto 30ms) or request work (v1; auto from footprint and operations)",
            ),
            p(
                "footprint",
                "256",
                "KB",
                "v1: matrix footprint per worker (-F)",
            ),
            p(
                "operations",
                "5",
                "count",
                "v1: matrix multiplies per request (-n)",
            ),
            p(
                "locking",
                "on",
                "bool",
                "v1: per-CPU locking around the work (-L turns it off)",
            ),
        ],
    },
    WorkloadInfo {
        name: "aim7-compute",
        mirrors: "AIM7 / re-aim-7 (compute workfile), one user count",
        about: "N users, each running jobs that mix compute with a pipe exchange, a short sleep and \
                a fork/exit; jobs per minute.",
        params: &[
            p("tasks", "16", "count", "users"),
            p("jobs", "10", "count", "jobs per user"),
            p("work", "2ms", "duration", "mean compute per job"),
        ],
    },
    WorkloadInfo {
        name: "kernbench",
        mirrors: "kernbench (a kernel make -j N), one load",
        about: "make forks at most `jobs` compile jobs at a time through a jobserver token pipe; \
                each job forks cc1 (LogNormal CPU, median 200ms x scale) and as; then a serial link.",
        params: &[
            p(
                "jobs",
                "auto",
                "count",
                "make -j (auto: 4 x CPUs, kernbench's optimal load; 0 = unbounded)",
            ),
            p("files", "400", "count", "compile jobs"),
            p(
                "scale",
                "0.01",
                "factor",
                "CPU time scale (1 = real compile times, median 200ms per file)",
            ),
            p(
                "link",
                "2s",
                "duration",
                "serial link step CPU at scale 1 (vmlinux link, sized to the 400-file default)",
            ),
            p(
                "mem_intensity",
                "0.25",
                "fraction",
                "how memory-bound cc1/as/ld are (remote-node slowdown off their first-touch node)",
            ),
        ],
    },
    WorkloadInfo {
        name: "numa-test",
        mirrors: "numa_test N (Erich Focht, 2002-2003) with a hackbench 10 disturbance",
        about: "N memory-bound tasks (first-touch home node) disturbed by a short hackbench started \
                shortly after; elapsed, total user and system time.",
        params: &[
            p(
                "tasks",
                "auto",
                "count",
                "memory-bound tasks (auto: one per CPU)",
            ),
            p(
                "work",
                "100ms",
                "duration",
                "CPU work per task at home-node speed",
            ),
            p("ws", "4M", "bytes", "working set per task"),
            p(
                "mem_intensity",
                "0.8",
                "fraction",
                "how memory-bound the tasks are (remote-node slowdown)",
            ),
            p(
                "hackbench_groups",
                "10",
                "count",
                "groups of the disturbing hackbench (0 = none)",
            ),
            p(
                "hackbench_loops",
                "20",
                "count",
                "loops of the disturbing hackbench",
            ),
            p("delay", "10ms", "duration", "when the hackbench starts"),
        ],
    },
    WorkloadInfo {
        name: "lmbench-bw",
        mirrors: "lmbench bw_pipe / bw_unix / bw_tcp (-m SIZE)",
        about: "One writer streams `total` bytes in `size` writes to one reader.",
        params: &[
            p(
                "kind",
                "pipe",
                "pipe|unix|tcp",
                "bw_pipe, bw_unix or bw_tcp",
            ),
            p("size", "64K", "bytes", "bytes per write (-m)"),
            p("total", "10M", "bytes", "bytes moved"),
        ],
    },
    WorkloadInfo {
        name: "lat-ctx",
        mirrors: "lmbench lat_ctx -s SIZE N",
        about: "A ring of N processes passing a token through pipes, each summing SIZE KB of private \
                data before passing it on; microseconds per context switch (overhead subtracted).",
        params: &[
            p("procs", "2", "count", "processes in the ring"),
            p("size", "0", "KB", "private data summed per hop (-s)"),
            p(
                "rounds",
                "10000",
                "count",
                "trips of the token around the ring",
            ),
        ],
    },
    WorkloadInfo {
        name: "file",
        mirrors: "a schedlab workload file (TOML), see docs/workloads/file-format.md",
        about: "Tasks, channels, barriers and programs written in TOML: `-w file:PATH`.",
        params: &[p("path", "", "path", "the TOML file")],
    },
    WorkloadInfo {
        name: "rtapp",
        mirrors: "rt-app JSON workload (scheduler-tools/rt-app)",
        about: "An rt-app JSON file whose events map onto the engine's primitives: `-w rtapp:PATH`.",
        params: &[p("path", "", "path", "the rt-app JSON file")],
    },
];

/// Every built-in workload, in display order.
pub fn catalog() -> &'static [WorkloadInfo] {
    CATALOG
}

/// The catalog entry of `name`.
pub fn info(name: &str) -> Option<&'static WorkloadInfo> {
    CATALOG.iter().find(|w| w.name == name)
}

impl WorkloadInfo {
    /// The parameter called `name`.
    pub fn param(&self, name: &str) -> Option<&'static ParamInfo> {
        self.params.iter().find(|p| p.name == name)
    }

    /// Whether the spec takes a path after the colon rather than `key=value` pairs.
    pub fn takes_path(&self) -> bool {
        self.params.len() == 1 && self.params[0].unit == "path"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_is_a_valid_value_of_its_kind() {
        for w in catalog() {
            for p in w.params {
                if p.default == "auto" || p.kind() == ValueKind::Path {
                    continue;
                }
                crate::spec::check_value(w, p, p.default).unwrap_or_else(|e| {
                    panic!("{}.{}: default {:?}: {e}", w.name, p.name, p.default)
                });
            }
        }
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = catalog().iter().map(|w| w.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), catalog().len());
        for w in catalog() {
            let mut ps: Vec<_> = w.params.iter().map(|p| p.name).collect();
            ps.sort_unstable();
            ps.dedup();
            assert_eq!(ps.len(), w.params.len(), "{}", w.name);
        }
    }
}
