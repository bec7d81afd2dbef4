//! Progress where no bar can be drawn: when stderr is not a terminal (a CI log, `nohup`, a
//! batch job), a [`Ticker`] prints one line every few seconds with the runs done so far, read
//! from a hidden `indicatif` bar that the runner counts on as usual. Nothing it prints reaches
//! stdout or the results.

use indicatif::{ProgressBar, ProgressDrawTarget};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Seconds between two progress lines off a terminal, unless [`set_tick`] says otherwise.
pub const TICK: Duration = Duration::from_secs(5);

/// The interval in use, in ms (0: [`TICK`]); the CLI sets it from `SCHEDLAB_PROGRESS_SECS`.
static TICK_MS: AtomicU64 = AtomicU64::new(0);

/// Sets the interval between two progress lines off a terminal (a batch log that wants
/// them denser or sparser; the tests, which cannot wait 5 s).
pub fn set_tick(every: Duration) {
    TICK_MS.store((every.as_millis() as u64).max(1), Ordering::Relaxed);
}

fn tick() -> Duration {
    match TICK_MS.load(Ordering::Relaxed) {
        0 => TICK,
        ms => Duration::from_millis(ms),
    }
}

/// A bar that counts but never draws (its position is what a [`Ticker`] prints).
pub fn hidden_bar(len: u64) -> ProgressBar {
    ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden())
}

/// Prints `LABEL: N of M runs done, T s elapsed` on stderr every [`TICK`] (or what
/// [`set_tick`] set) until dropped.
pub struct Ticker {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Ticker {
    /// Starts the thread; `what` names the unit counted (`runs`, `repetitions`).
    pub fn start(label: &str, what: &str, bar: ProgressBar) -> Ticker {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let (label, what) = (label.to_string(), what.to_string());
        let handle = std::thread::spawn(move || {
            let t0 = Instant::now();
            let every = tick();
            let mut next = every;
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100).min(every));
                if t0.elapsed() >= next {
                    next += every;
                    eprintln!(
                        "{label}: {} of {} {what} done, {:.0} s elapsed",
                        bar.position(),
                        bar.length().unwrap_or(0),
                        t0.elapsed().as_secs_f64()
                    );
                }
            }
        });
        Ticker {
            stop,
            handle: Some(handle),
        }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
