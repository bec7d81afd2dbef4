//! Thin wrappers over the Linux calls the benchmarks are made of: pipes, socketpairs, raw
//! read/write loops, futexes, CPU affinity, fork, and CLOCK_MONOTONIC.
//!
//! The benchmarks call the kernel directly (not through buffered std I/O) so that each message
//! is exactly one `write` and the kernel sees the same system calls as under the real tools.
//! Functions marked *fork-safe* allocate nothing and take no locks, so a forked child of this
//! multi-threaded process may call them before `_exit`.

use schedlab_topo::CpuId;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

/// Why a worker loop stopped early (fork-safe: no allocation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The controller asked it to stop.
    Asked,
    /// The other end closed.
    Eof,
    /// A system call failed with this errno.
    Errno(i32),
}

impl Stop {
    pub(crate) fn describe(self) -> String {
        match self {
            Stop::Asked => "stopped".to_string(),
            Stop::Eof => "unexpected end of file".to_string(),
            Stop::Errno(e) => io::Error::from_raw_os_error(e).to_string(),
        }
    }
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// A pipe, both ends close-on-exec.
pub(crate) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds is a valid array of two ints.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 returned two fresh descriptors that we now own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// An AF_UNIX stream socketpair, close-on-exec.
pub(crate) fn socketpair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds is a valid array of two ints.
    let rc = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: socketpair returned two fresh descriptors that we now own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Writes all of `buf`, one `write` per call unless it is short. Fork-safe.
pub(crate) fn write_all(fd: RawFd, mut buf: &[u8], stop: &AtomicBool) -> Result<(), Stop> {
    while !buf.is_empty() {
        // SAFETY: buf is a valid readable slice.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if stop.load(Ordering::Relaxed) {
            return Err(Stop::Asked);
        }
        if n < 0 {
            match errno() {
                libc::EINTR => continue,
                e => return Err(Stop::Errno(e)),
            }
        }
        buf = &buf[n as usize..];
    }
    Ok(())
}

/// Fills `buf`, looping over short reads. Fork-safe.
pub(crate) fn read_exact(fd: RawFd, mut buf: &mut [u8], stop: &AtomicBool) -> Result<(), Stop> {
    while !buf.is_empty() {
        // SAFETY: buf is a valid writable slice.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if stop.load(Ordering::Relaxed) {
            return Err(Stop::Asked);
        }
        if n < 0 {
            match errno() {
                libc::EINTR => continue,
                e => return Err(Stop::Errno(e)),
            }
        }
        if n == 0 {
            return Err(Stop::Eof);
        }
        buf = &mut buf[n as usize..];
    }
    Ok(())
}

/// Waits until `fd` is readable, without consuming anything (start gates). Fork-safe.
pub(crate) fn wait_readable(fd: RawFd, stop: &AtomicBool) -> Result<(), Stop> {
    loop {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: p is one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, -1) };
        if stop.load(Ordering::Relaxed) {
            return Err(Stop::Asked);
        }
        if n < 0 {
            match errno() {
                libc::EINTR => continue,
                e => return Err(Stop::Errno(e)),
            }
        }
        if n > 0 {
            return Ok(());
        }
    }
}

/// Polls `fd` for `events` for at most `timeout_ms`; true if ready.
pub(crate) fn poll_one(fd: RawFd, events: libc::c_short, timeout_ms: i32) -> bool {
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    // SAFETY: p is one valid pollfd.
    unsafe { libc::poll(&mut p, 1, timeout_ms) > 0 && (p.revents & events) != 0 }
}

/// A second, non-blocking open file description of the pipe end `fd` (via /proc/self/fd), so
/// a controller can read or write it without ever blocking, even while workers share `fd`.
fn nonblocking_reopen(fd: RawFd, write: bool) -> Option<OwnedFd> {
    if fd < 0 {
        return None;
    }
    let path = std::ffi::CString::new(format!("/proc/self/fd/{fd}")).ok()?;
    let mode = if write {
        libc::O_WRONLY
    } else {
        libc::O_RDONLY
    };
    // SAFETY: a valid C string; the result is checked.
    let nfd = unsafe { libc::open(path.as_ptr(), mode | libc::O_NONBLOCK | libc::O_CLOEXEC) };
    // SAFETY: a fresh descriptor that we now own.
    (nfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(nfd) })
}

/// Unblocks threads stuck on a pipe: drains what it holds (waking blocked writers) and puts one
/// byte in (waking a blocked reader). Never blocks; `-1` skips an end.
pub(crate) fn poke_pipe(read_end: RawFd, write_end: RawFd) {
    use std::os::fd::AsRawFd;
    let mut buf = [0u8; 4096];
    if let Some(r) = nonblocking_reopen(read_end, false) {
        // SAFETY: buf is a valid writable buffer; the descriptor is non-blocking.
        while unsafe { libc::read(r.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
    }
    if let Some(w) = nonblocking_reopen(write_end, true) {
        // SAFETY: one byte from a valid buffer; the descriptor is non-blocking.
        unsafe { libc::write(w.as_raw_fd(), buf.as_ptr().cast(), 1) };
    }
}

/// Shuts a socket down both ways, waking every thread blocked on it.
pub(crate) fn shutdown(fd: RawFd) {
    // SAFETY: shutdown on any descriptor is harmless; errors are ignored on purpose.
    unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
}

/// CLOCK_MONOTONIC in nanoseconds (the clock `Instant` and the `mono` trace clock use).
/// Fork-safe.
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Spins on the clock for `d` (a busy CPU, as schbench's workers). Fork-safe.
pub(crate) fn spin_for(d: Duration, stop: &AtomicBool) {
    let end = monotonic_ns() + d.as_nanos() as u64;
    while monotonic_ns() < end {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        std::hint::spin_loop();
    }
}

/// Sleeps for `d` with nanosleep.
pub(crate) fn sleep(d: Duration) {
    let ts = libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    };
    // SAFETY: ts is valid; an early return on a signal is acceptable here.
    unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
}

/// FUTEX_WAIT on `word` while it equals `val`, for at most `timeout`.
pub(crate) fn futex_wait(word: &AtomicU32, val: u32, timeout: Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: word is a valid, aligned u32 that outlives the call; ts is valid.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            val,
            &ts as *const libc::timespec,
        )
    };
}

/// FUTEX_WAKE up to `n` waiters on `word`; returns how many it woke (negative on error).
pub(crate) fn futex_wake(word: &AtomicU32, n: i32) -> i64 {
    // SAFETY: word is a valid, aligned u32.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            n,
        )
    }
}

/// The calling thread's id (for `/proc/self/task/TID/stat`).
pub(crate) fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// Whether thread `tid` of this process is asleep (`S` in `/proc/self/task/TID/stat`).
pub(crate) fn thread_sleeping(tid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, r)| r.starts_with('S')))
        .unwrap_or(false)
}

/// Makes the calling thread `SCHED_IDLE`: woken, it never preempts a normal task
/// (`check_preempt_wakeup()` returns early for a wakee of that policy, 2.6.23 on).
pub(crate) fn set_sched_idle() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; param is a valid sched_param.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Pins the calling thread to `cpu`.
pub(crate) fn pin_to_cpu(cpu: CpuId) -> io::Result<()> {
    let cpu = cpu.index();
    // SAFETY: an all-zero cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: CPU_SET on a valid set with an index below CPU_SETSIZE (checked by the caller's
    // use of configured CPUs, and guarded here).
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: set is a valid cpu_set_t of the size given.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The CPUs the calling thread may run on.
pub(crate) fn allowed_cpus() -> Vec<CpuId> {
    // SAFETY: an all-zero cpu_set_t is valid; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: set is valid and of the size given.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return vec![CpuId::new(0)];
    }
    CpuId::range(libc::CPU_SETSIZE as usize)
        // SAFETY: index below CPU_SETSIZE.
        .filter(|&c| unsafe { libc::CPU_ISSET(c.index(), &set) })
        .collect()
}

/// The CPU the caller runs on now.
pub(crate) fn current_cpu() -> CpuId {
    // SAFETY: no arguments.
    let c = unsafe { libc::sched_getcpu() };
    CpuId::new(c.max(0) as usize)
}

/// Number of configured CPUs.
pub(crate) fn nr_cpus_configured() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    n.max(1) as usize
}

/// Whether the effective user is root.
pub(crate) fn is_root() -> bool {
    // SAFETY: no arguments.
    unsafe { libc::geteuid() == 0 }
}

/// Forks a child that runs `body` and `_exit`s with its return value.
///
/// The child asks to be killed when the forking thread dies (`PR_SET_PDEATHSIG`), so a
/// crashed or killed harness leaves no benchmark processes behind. `body` runs in a copy of a
/// multi-threaded process: it must be fork-safe (no allocation, no locks, no panics).
///
/// The child takes the task name `comm` (`PR_SET_NAME`): the simulator's model of the same
/// benchmark names its tasks so, and a trace of the real run then tells the roles apart the
/// same way (`host check`'s dynamics table compares them by name).
pub(crate) fn fork_child(
    comm: &std::ffi::CStr,
    body: impl FnOnce() -> i32,
) -> io::Result<libc::pid_t> {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: fork; the child only calls fork-safe code and _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: prctl/getppid/_exit are async-signal-safe system calls.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            libc::prctl(libc::PR_SET_NAME, comm.as_ptr() as libc::c_ulong);
            if libc::getppid() != parent {
                libc::_exit(111);
            }
        }
        let code = body();
        // SAFETY: _exit ends the child without running the parent's destructors.
        unsafe { libc::_exit(code) };
    }
    Ok(pid)
}

/// Blocking `waitpid`, retried on EINTR; returns the raw status.
pub(crate) fn waitpid(pid: libc::pid_t) -> io::Result<i32> {
    let mut status = 0;
    loop {
        // SAFETY: status is a valid int.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            return Ok(status);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

/// Sends `sig` to `pid` (errors ignored: the process may be gone).
pub(crate) fn kill(pid: libc::pid_t, sig: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(pid, sig) };
}

/// Describes a wait status: `exit 0`, `exit 3`, `signal 9`.
pub(crate) fn describe_status(status: i32) -> String {
    if libc::WIFEXITED(status) {
        format!("exit {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        format!("signal {}", libc::WTERMSIG(status))
    } else {
        format!("status {status:#x}")
    }
}

/// Whether a wait status is a clean exit 0.
pub(crate) fn status_ok(status: i32) -> bool {
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

/// Never set: the stop flag of loops that are stopped otherwise (SIGKILL, EOF).
pub(crate) static NEVER: AtomicBool = AtomicBool::new(false);

/// `waitpid` that gives up after `timeout`; the raw status if the child ended.
pub(crate) fn waitpid_timeout(pid: libc::pid_t, timeout: Duration) -> Option<i32> {
    let end = std::time::Instant::now() + timeout;
    loop {
        let mut status = 0;
        // SAFETY: status is a valid int.
        let rc = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if rc == pid {
            return Some(status);
        }
        if rc < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return None;
        }
        if std::time::Instant::now() >= end {
            return None;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Makes the child that `cmd` starts get SIGKILL when schedlab dies (`PR_SET_PDEATHSIG`),
/// so a SIGKILL of schedlab does not leave a traced command, a database server or its
/// clients running. The child is also in its own process group (the callers' `process_group(0)`),
/// which schedlab kills on every other way out. The signal follows the *thread* that
/// spawned the child: callers spawn from threads that outlive their children.
pub(crate) fn die_with_parent(cmd: &mut std::process::Command) {
    die_with_parent_by(cmd, libc::SIGKILL);
}

/// [`die_with_parent`] with another signal: PostgreSQL's postmaster gets SIGQUIT (its
/// immediate shutdown, which stops its backends and removes its shared memory) rather than a
/// SIGKILL that would leave both behind. The signal is set after `Command::uid`'s credential
/// change (std runs `pre_exec` closures after it), which would otherwise clear it.
pub(crate) fn die_with_parent_by(cmd: &mut std::process::Command, sig: libc::c_int) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child before exec and calls only the
    // async-signal-safe prctl, getppid and _exit.
    let parent = std::process::id() as libc::pid_t;
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died between fork and prctl: then no signal will come.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// The uid and gid of the user `name`, if it exists.
pub(crate) fn user_ids(name: &str) -> Option<(u32, u32)> {
    let cname = std::ffi::CString::new(name).ok()?;
    // SAFETY: passwd is plain data (integers and pointers); all zeroes is a valid value.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; getpwnam_r writes only into pw and buf.
    let rc = unsafe {
        libc::getpwnam_r(
            cname.as_ptr(),
            &mut pw,
            buf.as_mut_ptr(),
            buf.len(),
            &mut out,
        )
    };
    (rc == 0 && !out.is_null()).then_some((pw.pw_uid, pw.pw_gid))
}

/// Whether a process `pid` exists (a zombie counts: its pid is not free yet).
pub(crate) fn pid_exists(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks for existence and permission.
    pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0
            || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}
