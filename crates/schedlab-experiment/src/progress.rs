//! Progress where no bar can be drawn: when stderr is not a terminal (a CI log, `nohup`, a
//! batch job), a [`Ticker`] prints one line every few seconds with the runs done so far, read
//! from a hidden `indicatif` bar that the runner counts on as usual. Nothing it prints reaches
//! stdout or the results.

use indicatif::{ProgressBar, ProgressDrawTarget};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Seconds between two progress lines off a terminal.
pub const TICK: Duration = Duration::from_secs(5);

/// A bar that counts but never draws (its position is what a [`Ticker`] prints).
pub fn hidden_bar(len: u64) -> ProgressBar {
    ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden())
}

/// Prints `LABEL: N of M runs done, T s elapsed` on stderr every [`TICK`] until dropped.
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
            let mut next = TICK;
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                if t0.elapsed() >= next {
                    next += TICK;
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
