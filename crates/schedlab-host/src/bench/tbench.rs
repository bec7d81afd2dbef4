//! tbench-like request/response pairs over TCP on 127.0.0.1 (dbench 4.0's `tbench` and
//! `tbench_srv`, `sockio.c`).
//!
//! `clients` independent 1:1 pairs. Each client thread connects to a listener on an ephemeral
//! loopback port; a server thread per connection answers. Per operation the client writes one
//! request (an 8-byte header carrying the request and reply sizes, then padding) and reads the
//! whole reply; the server reads the request and writes the reply. Both sockets set
//! TCP_NODELAY, as tbench does.
//!
//! Sizes follow a fixed mix of 1,000 operations that stands in for dbench's client.txt: means
//! 2,271 B per request, 3,293 B per reply and 5,427 B of counted (ReadX/WriteX) payload per op,
//! against 2,280 / 3,290 / 5,428 in the real loadfile. Each client walks the mix in its own
//! shuffled order. Throughput counts only the payload, in MB of 10^6 bytes per second, as
//! tbench does. Differences from tbench: threads instead of forked processes, no warm-up, no
//! per-second progress lines.
//!
//! `client_work` / `server_work` (the simulator's per-operation user-space work) default to 0
//! here, since the real code's own work stands in for them; given, each side also spins that
//! long per operation.

use crate::control::{Deadline, Threads, Watchdog};
use crate::error::HostError;
use crate::spec::Params;
use schedlab_metrics::native::{TbenchOpStat, TbenchReport};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// tbench parameters.
#[derive(Clone, Debug)]
pub(crate) struct TbenchParams {
    pub clients: u64,
    pub duration: Duration,
    pub client_work: Duration,
    pub server_work: Duration,
}

impl TbenchParams {
    pub(crate) fn read(p: &mut Params) -> Result<Self, HostError> {
        let max = Duration::from_secs(3600);
        let work_max = Duration::from_millis(100);
        Ok(TbenchParams {
            clients: p.u64("clients", 1, 1, 512)?,
            duration: p.duration(
                "duration",
                Duration::from_secs(5),
                Duration::from_millis(10),
                max,
            )?,
            client_work: p.duration("client_work", Duration::ZERO, Duration::ZERO, work_max)?,
            server_work: p.duration("server_work", Duration::ZERO, Duration::ZERO, work_max)?,
        })
    }
}

/// One kind of operation of the mix: its table name, how many per 1,000, request and reply
/// sizes on the wire, and the payload bytes it counts towards throughput.
struct OpKind {
    name: &'static str,
    per_1000: u32,
    request: u32,
    reply: u32,
    counted: u32,
}

/// The operation mix (sizes from sockio.c's SMB-like framing: WriteX sends 59 + size and gets
/// 55; ReadX sends 59 and gets 59 + size; the rest are 40-130 B each way).
const MIX: &[OpKind] = &[
    OpKind {
        name: "ReadX",
        per_1000: 202,
        request: 59,
        reply: 59 + 4096,
        counted: 4096,
    },
    OpKind {
        name: "ReadX",
        per_1000: 39,
        request: 59,
        reply: 59 + 61440,
        counted: 61440,
    },
    OpKind {
        name: "WriteX",
        per_1000: 33,
        request: 59 + 65536,
        reply: 55,
        counted: 65536,
    },
    OpKind {
        name: "WriteX",
        per_1000: 10,
        request: 59 + 4096,
        reply: 55,
        counted: 4096,
    },
    OpKind {
        name: "WriteX",
        per_1000: 10,
        request: 60,
        reply: 55,
        counted: 1,
    },
    OpKind {
        name: "NTCreateX",
        per_1000: 200,
        request: 100,
        reply: 75,
        counted: 0,
    },
    OpKind {
        name: "Close",
        per_1000: 150,
        request: 45,
        reply: 45,
        counted: 0,
    },
    OpKind {
        name: "Qpathinfo",
        per_1000: 180,
        request: 70,
        reply: 95,
        counted: 0,
    },
    OpKind {
        name: "Find",
        per_1000: 60,
        request: 70,
        reply: 129,
        counted: 0,
    },
    OpKind {
        name: "Unlink",
        per_1000: 40,
        request: 70,
        reply: 40,
        counted: 0,
    },
    OpKind {
        name: "Qfileinfo",
        per_1000: 76,
        request: 45,
        reply: 60,
        counted: 0,
    },
];

/// Table names in printed order.
const NAMES: &[&str] = &[
    "NTCreateX",
    "Close",
    "Unlink",
    "Qpathinfo",
    "Qfileinfo",
    "Find",
    "WriteX",
    "ReadX",
];

const HEADER: usize = 8;

/// The mix as a list of indices into [`MIX`], shuffled by `seed` (xorshift, Fisher-Yates).
fn schedule(seed: u64) -> Vec<u8> {
    let mut v: Vec<u8> = MIX
        .iter()
        .enumerate()
        .flat_map(|(i, k)| std::iter::repeat_n(i as u8, k.per_1000 as usize))
        .collect();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for i in (1..v.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
    v
}

#[derive(Clone, Default)]
struct ClientStats {
    counted: u64,
    /// Per [`NAMES`] entry: count, total latency ns, max latency ns.
    per_name: Vec<(u64, u64, u64)>,
}

fn client(
    mut s: TcpStream,
    seed: u64,
    run_for: Duration,
    work: Duration,
    stop: &AtomicBool,
) -> std::io::Result<ClientStats> {
    let sched = schedule(seed);
    let max = MIX
        .iter()
        .map(|k| k.request.max(k.reply))
        .max()
        .unwrap_or(0) as usize;
    let mut buf = vec![0u8; max];
    let mut st = ClientStats {
        counted: 0,
        per_name: vec![(0, 0, 0); NAMES.len()],
    };
    let end = Instant::now() + run_for;
    let mut i = 0;
    while Instant::now() < end && !stop.load(Ordering::Relaxed) {
        let k = &MIX[sched[i % sched.len()] as usize];
        i += 1;
        let t0 = Instant::now();
        if !work.is_zero() {
            crate::sys::spin_for(work, stop);
        }
        buf[..4].copy_from_slice(&k.request.to_le_bytes());
        buf[4..8].copy_from_slice(&k.reply.to_le_bytes());
        s.write_all(&buf[..k.request as usize])?;
        s.read_exact(&mut buf[..k.reply as usize])?;
        let lat = t0.elapsed().as_nanos() as u64;
        st.counted += u64::from(k.counted);
        let slot = NAMES.iter().position(|n| *n == k.name).unwrap_or(0);
        let e = &mut st.per_name[slot];
        e.0 += 1;
        e.1 += lat;
        e.2 = e.2.max(lat);
    }
    let _ = s.shutdown(Shutdown::Write);
    Ok(st)
}

fn server(mut s: TcpStream, work: Duration) -> std::io::Result<()> {
    let max = MIX
        .iter()
        .map(|k| k.request.max(k.reply))
        .max()
        .unwrap_or(0) as usize;
    let mut buf = vec![0u8; max.max(HEADER)];
    loop {
        match s.read_exact(&mut buf[..HEADER]) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
        let req = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
        let reply = u32::from_le_bytes([buf[4], buf[5], buf[6], buf[7]]) as usize;
        if req < HEADER || req > buf.len() || reply > buf.len() {
            return Err(std::io::Error::other("bad request header"));
        }
        s.read_exact(&mut buf[HEADER..req])?;
        if !work.is_zero() {
            crate::sys::spin_for(work, &crate::sys::NEVER);
        }
        s.write_all(&buf[..reply])?;
    }
}

/// Runs the pairs for `duration`; the report carries payload throughput and latencies.
pub(crate) fn run(tp: &TbenchParams, limit: Duration) -> Result<TbenchReport, HostError> {
    let what = "tbench";
    let deadline = Deadline::new(limit);
    let io = |what: &'static str| move |e| HostError::io(format!("tbench: {what}"), e);
    let listener = TcpListener::bind("127.0.0.1:0").map_err(io("binding 127.0.0.1"))?;
    let addr = listener.local_addr().map_err(io("local_addr"))?;
    listener.set_nonblocking(true).map_err(io("listener"))?;
    let socks: Arc<Mutex<Vec<TcpStream>>> = Arc::new(Mutex::new(Vec::new()));
    let poke = {
        let socks = socks.clone();
        move || {
            for s in socks.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
    };
    let keep = |s: &TcpStream| -> Result<(), HostError> {
        s.set_nodelay(true).map_err(io("TCP_NODELAY"))?;
        let c = s.try_clone().map_err(io("dup socket"))?;
        socks.lock().unwrap_or_else(|e| e.into_inner()).push(c);
        Ok(())
    };
    let stop = Arc::new(AtomicBool::new(false));
    let mut servers: Threads<std::io::Result<()>> = Threads::new(stop.clone(), poke.clone());
    let mut clients: Threads<std::io::Result<ClientStats>> =
        Threads::new(stop.clone(), poke.clone());
    let mut conns = Vec::new();
    let (server_work, client_work) = (tp.server_work, tp.client_work);
    for _ in 0..tp.clients {
        let c = TcpStream::connect(addr).map_err(io("connect to 127.0.0.1"))?;
        keep(&c)?;
        let srv = loop {
            deadline.check(what)?;
            match listener.accept() {
                Ok((s, _)) => break s,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => return Err(io("accept")(e)),
            }
        };
        srv.set_nonblocking(false).map_err(io("server socket"))?;
        keep(&srv)?;
        let h = std::thread::Builder::new()
            .name("tbench_srv".into())
            .spawn(move || server(srv, server_work))
            .map_err(io("spawning a thread"))?;
        servers.push(h);
        conns.push(c);
    }
    let st = stop.clone();
    let dog = Watchdog::start(&deadline, move || {
        st.store(true, Ordering::SeqCst);
        poke()
    });
    let start = Instant::now();
    for (i, c) in conns.into_iter().enumerate() {
        let (stop, run_for) = (stop.clone(), tp.duration);
        let h = std::thread::Builder::new()
            .name("tbench".into())
            .spawn(move || client(c, i as u64 + 1, run_for, client_work, &stop))
            .map_err(io("spawning a thread"))?;
        clients.push(h);
    }
    let results = clients.join_all();
    let elapsed = start.elapsed();
    let server_results = servers.join_all();
    dog.finish(what)?;
    let fail = |detail: String| HostError::WorkerFailed {
        what: what.into(),
        detail,
    };
    let mut total = ClientStats {
        counted: 0,
        per_name: vec![(0, 0, 0); NAMES.len()],
    };
    for r in results {
        let st = r
            .ok_or_else(|| fail("a client thread panicked".into()))?
            .map_err(|e| fail(format!("client: {e}")))?;
        total.counted += st.counted;
        for (t, s) in total.per_name.iter_mut().zip(&st.per_name) {
            t.0 += s.0;
            t.1 += s.1;
            t.2 = t.2.max(s.2);
        }
    }
    for r in server_results {
        r.ok_or_else(|| fail("a server thread panicked".into()))?
            .map_err(|e| fail(format!("server: {e}")))?;
    }
    let ms = |ns: u64| ns as f64 / 1e6;
    let ops: Vec<TbenchOpStat> = NAMES
        .iter()
        .zip(&total.per_name)
        .filter(|(_, s)| s.0 > 0)
        .map(|(n, s)| TbenchOpStat {
            name: n.to_string(),
            count: s.0,
            avg_lat_ms: ms(s.1) / s.0 as f64,
            max_lat_ms: ms(s.2),
        })
        .collect();
    let max_latency_ms = total.per_name.iter().map(|s| ms(s.2)).fold(0.0, f64::max);
    Ok(TbenchReport {
        ops,
        throughput_mb_s: total.counted as f64 / 1e6 / elapsed.as_secs_f64().max(1e-9),
        clients: tp.clients,
        procs: tp.clients,
        max_latency_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_matches_client_txt_means() {
        let n: u32 = MIX.iter().map(|k| k.per_1000).sum();
        assert_eq!(n, 1000);
        let mean = |f: fn(&OpKind) -> u32| {
            MIX.iter()
                .map(|k| f64::from(k.per_1000) * f64::from(f(k)))
                .sum::<f64>()
                / 1000.0
        };
        // dbench 4.0's `client.txt` loadfile averages 2,280 B per request and 3,290 B per
        // reply; 5,428 B per op count towards MB/sec (only ReadX/WriteX payload).
        assert!((mean(|k| k.request) - 2280.0).abs() < 0.01 * 2280.0);
        assert!((mean(|k| k.reply) - 3290.0).abs() < 0.01 * 3290.0);
        assert!((mean(|k| k.counted) - 5428.0).abs() < 0.01 * 5428.0);
        assert!(MIX.iter().all(|k| k.request as usize >= HEADER));
        assert!(MIX.iter().all(|k| NAMES.contains(&k.name)));
    }

    #[test]
    fn schedule_is_a_permutation_of_the_mix() {
        let s = schedule(7);
        assert_eq!(s.len(), 1000);
        let reads = s.iter().filter(|&&i| i == 0).count();
        assert_eq!(reads, 202);
        assert_ne!(s, schedule(8));
    }
}
