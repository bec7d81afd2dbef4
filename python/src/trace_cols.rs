//! A run's trace as columns: one row per `sched_switch`, `sched_waking`, `sched_wakeup` and
//! `sched_wakeup_new`, in time order, under the field names ftrace prints for them
//! (`prev_comm prev_pid prev_prio prev_state next_comm next_pid next_prio`;
//! `comm pid prio target_cpu`), as `schedlab run --trace FILE.txt` writes them. A field an
//! event does not have is `None`.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use schedlab_trace::{Trace, TraceEvent, idle_comm};

/// The columns, built without the GIL.
#[derive(Default)]
pub struct Columns {
    ts_ns: Vec<u64>,
    cpu: Vec<u32>,
    event: Vec<&'static str>,
    prev_comm: Vec<Option<String>>,
    prev_pid: Vec<Option<u32>>,
    prev_prio: Vec<Option<i32>>,
    prev_state: Vec<Option<&'static str>>,
    next_comm: Vec<Option<String>>,
    next_pid: Vec<Option<u32>>,
    next_prio: Vec<Option<i32>>,
    comm: Vec<Option<String>>,
    pid: Vec<Option<u32>>,
    prio: Vec<Option<i32>>,
    target_cpu: Vec<Option<u32>>,
}

impl Columns {
    /// The rows of `trace`'s scheduler events, stable-sorted by time as ftrace text is.
    pub fn of(trace: &Trace) -> Columns {
        // ftrace names the idle task swapper/CPU.
        let name = |pid: u32, cpu: u32| {
            if pid == 0 {
                idle_comm(cpu)
            } else {
                trace.comm(pid).to_string()
            }
        };
        let mut order: Vec<&TraceEvent> = trace.events.iter().collect();
        order.sort_by_key(|e| e.ts_ns());
        let mut c = Columns::default();
        for ev in order {
            let cpu = ev.cpu();
            match *ev {
                TraceEvent::Switch {
                    prev_pid,
                    prev_prio,
                    prev_state,
                    next_pid,
                    next_prio,
                    ..
                } => {
                    c.prev_comm.push(Some(name(prev_pid, cpu)));
                    c.prev_pid.push(Some(prev_pid));
                    c.prev_prio.push(Some(prev_prio));
                    c.prev_state.push(Some(prev_state.letter()));
                    c.next_comm.push(Some(name(next_pid, cpu)));
                    c.next_pid.push(Some(next_pid));
                    c.next_prio.push(Some(next_prio));
                    c.comm.push(None);
                    c.pid.push(None);
                    c.prio.push(None);
                    c.target_cpu.push(None);
                }
                TraceEvent::Waking {
                    pid,
                    prio,
                    target_cpu,
                    ..
                }
                | TraceEvent::Wakeup {
                    pid,
                    prio,
                    target_cpu,
                    ..
                }
                | TraceEvent::WakeupNew {
                    pid,
                    prio,
                    target_cpu,
                    ..
                } => {
                    c.prev_comm.push(None);
                    c.prev_pid.push(None);
                    c.prev_prio.push(None);
                    c.prev_state.push(None);
                    c.next_comm.push(None);
                    c.next_pid.push(None);
                    c.next_prio.push(None);
                    c.comm.push(Some(name(pid, cpu)));
                    c.pid.push(Some(pid));
                    c.prio.push(Some(prio));
                    c.target_cpu.push(Some(target_cpu));
                }
                _ => continue,
            }
            c.ts_ns.push(ev.ts_ns());
            c.cpu.push(cpu);
            c.event.push(ev.name());
        }
        c
    }

    /// `{column: list}`, ready for `pandas.DataFrame`.
    pub fn into_dict(self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        let d = PyDict::new(py);
        d.set_item("ts_ns", self.ts_ns)?;
        d.set_item("cpu", self.cpu)?;
        d.set_item("event", self.event)?;
        d.set_item("prev_comm", self.prev_comm)?;
        d.set_item("prev_pid", self.prev_pid)?;
        d.set_item("prev_prio", self.prev_prio)?;
        d.set_item("prev_state", self.prev_state)?;
        d.set_item("next_comm", self.next_comm)?;
        d.set_item("next_pid", self.next_pid)?;
        d.set_item("next_prio", self.next_prio)?;
        d.set_item("comm", self.comm)?;
        d.set_item("pid", self.pid)?;
        d.set_item("prio", self.prio)?;
        d.set_item("target_cpu", self.target_cpu)?;
        Ok(d.unbind())
    }
}
