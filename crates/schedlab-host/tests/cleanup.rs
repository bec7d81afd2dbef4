//! Runs that time out or are cancelled leave nothing behind: no child processes, no threads,
//! no open descriptors. One test function, so nothing else in this process runs meanwhile.

use schedlab_host::{HostError, HostRunOptions, clear_cancel, request_cancel, run_workload};
use std::time::{Duration, Instant};

fn threads() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap()
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// True if this process has no children (alive or zombie).
fn no_children() -> bool {
    let mut status = 0;
    // SAFETY: status is a valid int; WNOHANG never blocks.
    let rc = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
    rc == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD)
}

fn opts(ms: u64) -> HostRunOptions {
    HostRunOptions {
        timeout: Duration::from_millis(ms),
        external: false,
    }
}

#[test]
fn timeouts_and_cancels_leave_nothing_behind() {
    let (t0, f0) = (threads(), open_fds());
    assert!(no_children());
    let long = [
        "pipe:loops=1000000000",
        "pipe:loops=1000000000,threads=true",
        "hackbench:groups=2,loops=100000000,ipc=pipe,mode=process",
        "hackbench:groups=2,loops=100000000,ipc=pipe,mode=thread",
        "hackbench:groups=2,loops=100000000,ipc=socket,mode=thread",
        "tbench:clients=2,duration=60s",
    ];
    for spec in long {
        let t = Instant::now();
        let e = run_workload(spec, &opts(300)).unwrap_err();
        assert!(matches!(e, HostError::Timeout { .. }), "{spec}: {e}");
        assert!(
            t.elapsed() < Duration::from_secs(15),
            "{spec}: took {:?}",
            t.elapsed()
        );
        assert!(no_children(), "{spec}: children left");
        assert_eq!(threads(), t0, "{spec}: threads left");
        assert_eq!(open_fds(), f0, "{spec}: descriptors left");
    }
    // Model-only keys are accepted and recorded as ignored; a simulated-only workload is not.
    let r = run_workload("tbench:duration=50ms,client_work=1us", &opts(30_000)).unwrap();
    assert_eq!(r.result.params["client_work"], "1us");
    // A schbench runtime longer than the timeout is refused up front.
    let e = run_workload("schbench:runtime=5s", &opts(1000)).unwrap_err();
    assert!(e.to_string().contains("less than the run's timeout"), "{e}");

    // Ctrl-C (request_cancel) from another thread mid-run.
    for spec in [
        "pipe:loops=1000000000",
        "hackbench:groups=1,loops=100000000,mode=thread",
        "schbench:runtime=20s",
    ] {
        let canceller = std::thread::spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            request_cancel();
        });
        let e = run_workload(spec, &opts(30_000)).unwrap_err();
        canceller.join().unwrap();
        clear_cancel();
        assert!(matches!(e, HostError::Cancelled { .. }), "{spec}: {e}");
        assert!(no_children(), "{spec}: children left");
        assert_eq!(threads(), t0, "{spec}: threads left");
        assert_eq!(open_fds(), f0, "{spec}: descriptors left");
    }

    // And a normal run afterwards still works and also leaves nothing.
    let r = run_workload("hackbench:groups=1,loops=5", &opts(30_000)).unwrap();
    assert_eq!(r.result.workload, "hackbench");
    assert!(no_children());
    assert_eq!(threads(), t0);
    assert_eq!(open_fds(), f0);
}
