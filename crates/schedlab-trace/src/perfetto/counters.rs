//! Counter tracks: the per-CPU `/proc/schedstat` counts a trace shows, over time. From the
//! events alone, so a simulated and a captured trace get the same tracks: per CPU
//! `ttwu_count` (wakeups issued on it, `sched_waking` on the waker's CPU), `ttwu_local`
//! (... whose wakee stays on it), `timeslices` (switches to a task) and `sched_goidle`
//! (switches to idle), each cumulative, sampled once per period and at the end; at the end
//! they equal the run's schedstat counts of the same names.

use super::proto::{self, CounterDescriptor, PacketData, TrackEvent};
use super::{COUNTER_SEQUENCE, PacketSink, packet};
use crate::{Trace, TraceEvent};
use std::collections::BTreeSet;
use std::io::{self, Write};

/// The counters, in track order per CPU.
pub const COUNTERS: [&str; 4] = ["ttwu_count", "ttwu_local", "timeslices", "sched_goidle"];

/// One counter track: its name and `(ts_ns, value)` samples in time order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterTrack {
    /// `cpuN ttwu_count`, ...
    pub name: String,
    /// Cumulative values.
    pub points: Vec<(u64, i64)>,
}

/// The per-CPU tracks of `trace`, sampled every `period_ns` (and at the last event).
pub fn schedstat_tracks(trace: &Trace, period_ns: u64) -> Vec<CounterTrack> {
    let n = trace.effective_nr_cpus() as usize;
    let order = trace.sorted_indices();
    let mut now = vec![[0i64; 4]; n];
    let mut tracks: Vec<CounterTrack> = (0..n)
        .flat_map(|c| {
            COUNTERS.iter().map(move |k| CounterTrack {
                name: format!("cpu{c} {k}"),
                points: Vec::new(),
            })
        })
        .collect();
    let period = period_ns.max(1);
    let mut next_sample: Option<u64> = None;
    // A sample is kept where the value changed, and at the end (`last`) so every track
    // spans the trace.
    let sample = |tracks: &mut Vec<CounterTrack>, now: &[[i64; 4]], ts: u64, last: bool| {
        for (c, vals) in now.iter().enumerate() {
            for (k, v) in vals.iter().enumerate() {
                let t = &mut tracks[c * 4 + k];
                let keep = match t.points.last() {
                    None => true,
                    Some(&(at, prev)) => prev != *v || (last && at != ts),
                };
                if keep {
                    t.points.push((ts, *v));
                }
            }
        }
    };
    let mut last_ts = 0;
    for &i in &order {
        let ev = &trace.events[i];
        let ts = ev.ts_ns();
        match next_sample {
            None => {
                sample(&mut tracks, &now, ts, false);
                next_sample = Some(ts + period);
            }
            Some(at) if ts >= at => {
                sample(&mut tracks, &now, at, false);
                next_sample = Some(ts - (ts - at) % period + period);
            }
            _ => {}
        }
        last_ts = ts;
        let cpu = ev.cpu() as usize;
        let Some(c) = now.get_mut(cpu) else { continue };
        match ev {
            TraceEvent::Waking { target_cpu, .. } => {
                c[0] += 1;
                c[1] += i64::from(*target_cpu as usize == cpu);
            }
            TraceEvent::Switch {
                prev_pid, next_pid, ..
            } if prev_pid != next_pid => {
                if *next_pid == 0 {
                    c[3] += 1;
                } else {
                    c[2] += 1;
                }
            }
            _ => {}
        }
    }
    if !order.is_empty() {
        sample(&mut tracks, &now, last_ts, true);
    }
    tracks
}

/// The uuid of counter track `i` (apart from the CPU and thread tracks).
fn counter_uuid(i: usize) -> u64 {
    0xC0_0000_0000 + i as u64
}

/// Writes `tracks` as Perfetto counter tracks on their own sequence, to append to a trace
/// [`super::write_perfetto`] wrote (a trace is a sequence of packets).
pub fn write_counter_tracks(tracks: &[CounterTrack], w: &mut impl Write) -> io::Result<()> {
    let mut sink = PacketSink {
        w,
        buf: Vec::new(),
        seq_started: BTreeSet::new(),
    };
    for (i, t) in tracks.iter().enumerate() {
        sink.emit(packet(
            COUNTER_SEQUENCE,
            None,
            PacketData::TrackDescriptor(proto::TrackDescriptor {
                uuid: Some(counter_uuid(i)),
                name: Some(t.name.clone()),
                thread: None,
                parent_uuid: None,
                counter: Some(CounterDescriptor {}),
            }),
        ))?;
    }
    for (i, t) in tracks.iter().enumerate() {
        for &(ts, v) in &t.points {
            sink.emit(packet(
                COUNTER_SEQUENCE,
                Some(ts),
                PacketData::TrackEvent(TrackEvent {
                    r#type: Some(proto::TRACK_EVENT_TYPE_COUNTER),
                    track_uuid: Some(counter_uuid(i)),
                    counter_value: Some(v),
                    ..Default::default()
                }),
            ))?;
        }
    }
    Ok(())
}

/// [`super::write_perfetto`] followed by the schedstat counter tracks of the trace, sampled
/// every millisecond.
pub fn write_perfetto_with_counters(trace: &Trace, w: &mut impl Write) -> io::Result<()> {
    super::write_perfetto(trace, w)?;
    write_counter_tracks(&schedstat_tracks(trace, 1_000_000), w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PrevState;

    fn waking(ts: u64, cpu: u32, target: u32) -> TraceEvent {
        TraceEvent::Waking {
            ts_ns: ts,
            cpu,
            pid: 5,
            prio: 120,
            target_cpu: target,
        }
    }

    #[test]
    fn the_tracks_end_at_the_counts_of_the_events() {
        let mut t = Trace::new(2);
        t.events = vec![
            waking(10, 0, 0),
            waking(20, 0, 1),
            TraceEvent::Switch {
                ts_ns: 2_000_000,
                cpu: 1,
                prev_pid: 0,
                prev_prio: 120,
                prev_state: PrevState::Runnable,
                next_pid: 5,
                next_prio: 120,
            },
            waking(3_000_000, 1, 1),
        ];
        let tracks = schedstat_tracks(&t, 1_000_000);
        let last = |name: &str| {
            tracks
                .iter()
                .find(|t| t.name == name)
                .unwrap()
                .points
                .last()
                .copied()
        };
        assert_eq!(last("cpu0 ttwu_count"), Some((3_000_000, 2)));
        assert_eq!(last("cpu0 ttwu_local"), Some((3_000_000, 1)));
        assert_eq!(last("cpu1 timeslices"), Some((3_000_000, 1)));
        assert_eq!(last("cpu1 ttwu_local").map(|p| p.1), Some(1));
        let mut out = Vec::new();
        write_perfetto_with_counters(&t, &mut out).unwrap();
        // The decoder reads the trace back and leaves the counter tracks aside.
        let back = crate::perfetto::decode_perfetto(&out).unwrap();
        assert_eq!(back.events.len(), 4);
    }
}
