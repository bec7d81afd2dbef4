//! Idle states and the cpuidle governor: which state a CPU that goes idle enters, which one
//! it is in when a wakeup reaches it, and so what leaving it costs and whether the wakeup
//! needs an IPI.
//!
//! Read by the engine when a CPU goes idle ([`IdleGov::select`], `cpuidle_select()`), when a
//! wakeup reaches it ([`state_at`]; a polling CPU needs no IPI) and when it leaves idle
//! ([`IdleGov::reflect`], `cpuidle_reflect()`), and by policies through
//! [`crate::policy::SchedView`] (the exit latency of a candidate CPU). The governor is the
//! profile's (`wakeup.governor`): it belongs to the machine and its kernel configuration,
//! not to the scheduler era, and menu exists in every modelled era.
//!
//! Reconstructed \[M\]:
//! * the next timer a governor sees (`tick_nohz_get_sleep_length()`) is the earliest sleep
//!   timer armed on the CPU (a task's `hrtimer_nanosleep()` is queued on the CPU it slept
//!   on), or, with none armed, [`NO_TIMER_NS`] away; kernels that keep the tick in idle
//!   (before NOHZ) see the next tick at the latest;
//! * a state chosen by prediction holds until the next tick (4.17+ keeps the tick running
//!   when the prediction is shorter than a tick, and the tick re-selects) or, for a polling
//!   state, until the poll limit (`cpuidle_poll_time()`; haltpoll's window); after
//!   that the CPU is in the deepest state its idle period has reached, never shallower than
//!   the chosen one;
//! * no iowait and no PM QoS latency limits (menu's `performance_multiplier()` is 1).

use crate::profile::{Governor, IdleState, MachineProfile};
use crate::time::Time;

/// The next event a CPU with no sleep timer armed expects: a second, the period of the
/// per-CPU housekeeping timers (`vmstat_update()` every `sysctl_stat_interval` = HZ)
/// \[M\]. menu's correction factors and teo's metrics learn what actually wakes the CPU.
pub const NO_TIMER_NS: u64 = 1_000_000_000;

/// menu.c: `INTERVALS`, `RESOLUTION`, `DECAY`, `MAX_INTERESTING` (50 ms).
const INTERVALS: usize = 8;
const RESOLUTION: u64 = 1024;
const DECAY: u64 = 8;
const MAX_INTERESTING_NS: u64 = 50_000_000;
/// menu.c buckets by the next timer: < 10 µs, 100 µs, 1 ms, 10 ms, 100 ms, more (no iowait).
const BUCKETS: usize = 6;
/// teo.c: `PULSE`, `DECAY_SHIFT`; at most `CPUIDLE_STATE_MAX` states.
const PULSE: u32 = 1024;
const DECAY_SHIFT: u32 = 3;
const MAX_STATES: usize = 10;
/// haltpoll.c's module parameters at their defaults: `guest_halt_poll_ns`,
/// `guest_halt_poll_grow_start`, `guest_halt_poll_grow`, `guest_halt_poll_shrink`.
const HALTPOLL_MAX_NS: u64 = 200_000;
const HALTPOLL_GROW_START_NS: u64 = 50_000;
const HALTPOLL_GROW: u64 = 2;
const HALTPOLL_SHRINK: u64 = 2;

/// The deepest state whose target residency an idle period of `idle_ns` has reached, at
/// least `floor` (the shallowest if none has); a polling state only if it is the only one.
/// What [`Governor::Elapsed`] picks, and where a predicted state gives way once the tick or
/// the poll limit has passed.
fn reached(states: &[IdleState], idle_ns: u64, floor: usize) -> usize {
    let first = usize::from(states.len() > 1 && states[0].polling);
    let deepest = states
        .iter()
        .rposition(|s| s.target_residency_ns <= idle_ns)
        .unwrap_or(0);
    deepest.max(first).max(floor)
}

/// The index of the state a CPU idle since `since`, which entered `chosen` and holds it
/// until `hold`, is in at `now`; `None` when the profile lists no idle states.
pub fn state_index_at(
    profile: &MachineProfile,
    chosen: u8,
    since: Time,
    hold: Time,
    now: Time,
) -> Option<usize> {
    let states = &profile.wakeup.idle_states;
    if states.is_empty() {
        return None;
    }
    let chosen = usize::from(chosen).min(states.len() - 1);
    Some(if now < hold {
        chosen
    } else {
        reached(states, now.saturating_sub(since), chosen)
    })
}

/// The state itself (see [`state_index_at`]).
pub fn state_at(
    profile: &MachineProfile,
    chosen: u8,
    since: Time,
    hold: Time,
    now: Time,
) -> Option<&IdleState> {
    state_index_at(profile, chosen, since, hold, now).map(|i| &profile.wakeup.idle_states[i])
}

/// One CPU's governor data (`struct menu_device`, `struct teo_cpu`, haltpoll's
/// `poll_limit_ns`), kept beside the CPU because only idle entry and exit touch it.
#[derive(Clone, Debug)]
pub struct IdleGov {
    /// menu: the last measured idle intervals, µs, and where the next one goes.
    intervals: [u32; INTERVALS],
    interval_ptr: usize,
    /// menu: correction factors, `RESOLUTION * DECAY` = 1.
    correction: [u64; BUCKETS],
    /// menu: the bucket and next timer of the current idle period.
    bucket: usize,
    /// The next timer the current idle period was selected with, ns.
    sleep_length: u64,
    /// teo: per state, wakeups by the timer (hits) and before it (intercepts), decaying.
    hits: [u32; MAX_STATES],
    intercepts: [u32; MAX_STATES],
    /// haltpoll: the poll window, ns (starts at 0: the first idle halts).
    poll_limit: u64,
}

impl Default for IdleGov {
    fn default() -> Self {
        IdleGov {
            intervals: [0; INTERVALS],
            interval_ptr: 0,
            correction: [RESOLUTION * DECAY; BUCKETS],
            bucket: 0,
            sleep_length: 0,
            hits: [0; MAX_STATES],
            intercepts: [0; MAX_STATES],
            poll_limit: 0,
        }
    }
}

/// menu.c `which_bucket()` without iowait.
fn which_bucket(duration_ns: u64) -> usize {
    match duration_ns {
        d if d < 10_000 => 0,
        d if d < 100_000 => 1,
        d if d < 1_000_000 => 2,
        d if d < 10_000_000 => 3,
        d if d < 100_000_000 => 4,
        _ => 5,
    }
}

impl IdleGov {
    /// The governor's choice when the CPU goes idle (`cpuidle_select()`) with the next timer
    /// `sleep_length` away: the state and the time it holds until, at most a tick (see the
    /// module docs).
    pub fn select(
        &mut self,
        profile: &MachineProfile,
        now: Time,
        sleep_length: u64,
        tick_ns: u64,
    ) -> (u8, Time) {
        let states = &profile.wakeup.idle_states;
        if states.is_empty() {
            return (0, now);
        }
        self.sleep_length = sleep_length;
        let idx = match profile.wakeup.governor {
            Governor::Elapsed => return (reached(states, 0, 0) as u8, now),
            Governor::Menu => self.menu_select(states, sleep_length),
            Governor::Teo => self.teo_select(states, sleep_length),
            Governor::Haltpoll => {
                // haltpoll_select(): poll while there is a window, else halt.
                if self.poll_limit == 0 {
                    return (1, now);
                }
                return (0, now.saturating_add(self.poll_limit));
            }
        };
        let hold = if states[idx].polling {
            // cpuidle_poll_time(): the next state's target residency, or a tick.
            states
                .get(idx + 1)
                .map_or(tick_ns, |s| s.target_residency_ns.min(tick_ns))
        } else {
            tick_ns
        };
        (idx as u8, now.saturating_add(hold))
    }

    /// menu.c `get_typical_interval()`: the mean of the recent intervals if they are
    /// regular enough, dropping the largest ones as outliers; `u64::MAX` if not.
    fn typical_interval_us(&self) -> u64 {
        let mut thresh = u64::MAX;
        loop {
            let (mut max, mut sum, mut divisor) = (0u64, 0u64, 0u64);
            for &v in &self.intervals {
                let v = u64::from(v);
                if v <= thresh {
                    sum += v;
                    divisor += 1;
                    max = max.max(v);
                }
            }
            if divisor == 0 {
                return u64::MAX;
            }
            let avg = sum / divisor;
            let variance = self
                .intervals
                .iter()
                .map(|&v| u64::from(v))
                .filter(|&v| v <= thresh)
                .map(|v| (v as i64 - avg as i64).unsigned_abs().pow(2))
                .sum::<u64>()
                / divisor;
            if (u128::from(avg) * u128::from(avg) > u128::from(variance) * 36
                && divisor * 4 >= INTERVALS as u64 * 3)
                || variance <= 400
            {
                return avg;
            }
            // Outliers are dropped down to the bottom three quarters of the samples.
            if divisor * 4 <= INTERVALS as u64 * 3 {
                return u64::MAX;
            }
            thresh = max.saturating_sub(1);
        }
    }

    /// menu.c `menu_select()`: predicted = next timer × correction, capped by the typical
    /// interval; the deepest state whose residency and exit latency fit the prediction.
    fn menu_select(&mut self, states: &[IdleState], next_timer: u64) -> usize {
        self.bucket = which_bucket(next_timer);
        let corrected = u128::from(next_timer) * u128::from(self.correction[self.bucket])
            / u128::from(RESOLUTION * DECAY);
        let typical = self.typical_interval_us().saturating_mul(1000);
        let predicted = (corrected as u64).min(typical);
        let mut idx = 0;
        for (i, s) in states.iter().enumerate() {
            if s.target_residency_ns > predicted || s.exit_ns > predicted {
                break;
            }
            idx = i;
        }
        idx
    }

    /// teo.c `teo_select()`: the deepest state the next timer allows, unless the wakeups
    /// that came before shallower states' residencies ("intercepts") are the majority; then
    /// the deepest shallower state that covers more than half of them.
    fn teo_select(&self, states: &[IdleState], sleep_length: u64) -> usize {
        let n = states.len().min(MAX_STATES);
        let cand = reached(&states[..n], sleep_length, 0);
        let total: u64 = (0..n)
            .map(|i| u64::from(self.hits[i]) + u64::from(self.intercepts[i]))
            .sum();
        let shallow_intercepts: u64 = (0..cand).map(|i| u64::from(self.intercepts[i])).sum();
        let shallow_hits: u64 = (0..cand).map(|i| u64::from(self.hits[i])).sum();
        if 2 * shallow_intercepts <= total - shallow_hits {
            return cand;
        }
        let mut sum = 0;
        for i in (0..cand).rev() {
            sum += u64::from(self.intercepts[i]);
            if 2 * sum > shallow_intercepts {
                return i;
            }
        }
        0
    }

    /// The CPU left idle after `idle_ns` (`cpuidle_reflect()`): the
    /// governor learns from the period just ended.
    pub fn reflect(&mut self, profile: &MachineProfile, idle_ns: u64) {
        let states = &profile.wakeup.idle_states;
        match profile.wakeup.governor {
            Governor::Elapsed => {}
            Governor::Menu => {
                // menu_update(): the measured interval, capped at the next timer.
                let next = self.sleep_length;
                let measured = idle_ns.min(next);
                let old = self.correction[self.bucket];
                let mut f = old - old / DECAY;
                f += if next > 0 && measured < MAX_INTERESTING_NS {
                    RESOLUTION * measured / next
                } else {
                    RESOLUTION
                };
                self.correction[self.bucket] = f.max(1);
                self.intervals[self.interval_ptr] =
                    (measured / 1000).min(u64::from(u32::MAX)) as u32;
                self.interval_ptr = (self.interval_ptr + 1) % INTERVALS;
            }
            Governor::Teo => {
                // teo_update(): a hit when the timer's bin is the duration's, else an
                // intercept in the duration's bin.
                let n = states.len().min(MAX_STATES);
                for i in 0..n {
                    self.hits[i] -= self.hits[i] >> DECAY_SHIFT;
                    self.intercepts[i] -= self.intercepts[i] >> DECAY_SHIFT;
                }
                let timer = reached(&states[..n], self.sleep_length, 0);
                let duration = reached(&states[..n], idle_ns, 0);
                if timer == duration {
                    self.hits[timer] += PULSE;
                } else {
                    self.intercepts[duration] += PULSE;
                }
            }
            Governor::Haltpoll => {
                // adjust_poll_limit(): a halt that a longer poll would have caught grows the
                // window; an idle longer than the maximum shrinks it.
                if idle_ns > self.poll_limit && idle_ns <= HALTPOLL_MAX_NS {
                    self.poll_limit = (self.poll_limit * HALTPOLL_GROW)
                        .clamp(HALTPOLL_GROW_START_NS, HALTPOLL_MAX_NS);
                } else if idle_ns > HALTPOLL_MAX_NS {
                    self.poll_limit /= HALTPOLL_SHRINK;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(governor: Governor, poll: bool) -> MachineProfile {
        let mut p = MachineProfile::default();
        p.wakeup.governor = governor;
        if poll {
            p.wakeup.idle_states.insert(0, IdleState::poll());
        }
        p
    }

    const TICK: u64 = 4_000_000;

    /// Runs `n` idle periods of `idle_ns` each and returns the states entered.
    fn periods(p: &MachineProfile, g: &mut IdleGov, idle_ns: u64, n: usize) -> Vec<String> {
        let mut out = Vec::new();
        let mut now = 0;
        for _ in 0..n {
            let (chosen, hold) = g.select(p, now, TICK, TICK);
            let s = state_at(p, chosen, now, hold, now + idle_ns).unwrap();
            out.push(s.name.clone());
            g.reflect(p, idle_ns);
            now += idle_ns + 1000;
        }
        out
    }

    #[test]
    fn elapsed_picks_by_idle_length() {
        let p = profile(Governor::Elapsed, false);
        let mut g = IdleGov::default();
        assert_eq!(periods(&p, &mut g, 10_000, 3), ["C1", "C1", "C1"]);
        assert_eq!(periods(&p, &mut g, 700_000, 1), ["C6"]);
    }

    #[test]
    fn menu_learns_a_short_regular_interval_and_a_long_one() {
        let p = profile(Governor::Menu, false);
        let mut g = IdleGov::default();
        // Boot: zero intervals are "typical", so the first periods are shallow.
        let short = periods(&p, &mut g, 20_000, 50);
        assert!(short.iter().all(|s| s == "C1"), "{short:?}");
        // Regular 1 ms idles (past C6's 600 µs residency, under the 4 ms tick): after 8
        // intervals the typical interval is 1 ms and menu picks C6 from the start of idle.
        let long = periods(&p, &mut g, 1_000_000, 20);
        assert_eq!(long[..4], ["C1"; 4], "{long:?}");
        assert!(long[12..].iter().all(|s| s == "C6"), "{long:?}");
    }

    #[test]
    fn menu_mispredicts_an_occasional_short_idle_as_deep() {
        // Idles of 1.9-2.1 ms with every fourth one 5 µs have no typical interval (the
        // short ones are a quarter of the samples): the prediction is the corrected next
        // timer, about 1.5 ms, and the short idles are entered in C6 too.
        let p = profile(Governor::Menu, false);
        let mut g = IdleGov::default();
        let (mut deep_short, mut short) = (0, 0);
        let mut now = 0;
        for i in 0..200u64 {
            let d = if i % 4 == 0 {
                5_000
            } else {
                1_900_000 + (i * 37 % 200) * 1000
            };
            let (c, hold) = g.select(&p, now, TICK, TICK);
            let s = state_at(&p, c, now, hold, now + d).unwrap();
            if i >= 100 && d == 5_000 {
                short += 1;
                deep_short += usize::from(s.name == "C6");
            }
            g.reflect(&p, d);
            now += d + 1000;
        }
        assert!(
            deep_short * 10 >= short * 9,
            "{deep_short} of {short} short idles in C6"
        );
    }

    #[test]
    fn teo_follows_the_intercepts() {
        let p = profile(Governor::Teo, false);
        let mut g = IdleGov::default();
        // With no history the timer (a tick) decides: C6.
        assert_eq!(periods(&p, &mut g, 30_000, 1), ["C6"]);
        // Wakeups well before the tick are intercepts in C1's bin: teo turns shallow.
        let s = periods(&p, &mut g, 30_000, 10);
        assert!(s[2..].iter().all(|s| s == "C1"), "{s:?}");
    }

    #[test]
    fn a_predicted_shallow_state_gives_way_after_a_tick() {
        let p = profile(Governor::Menu, false);
        let mut g = IdleGov::default();
        let (c, hold) = g.select(&p, 0, TICK, TICK);
        assert_eq!(p.wakeup.idle_states[c as usize].name, "C1");
        assert_eq!(state_at(&p, c, 0, hold, TICK - 1).unwrap().name, "C1");
        assert_eq!(state_at(&p, c, 0, hold, TICK).unwrap().name, "C6");
    }

    #[test]
    fn haltpoll_grows_its_window_and_polls() {
        let p = profile(Governor::Haltpoll, true);
        let mut g = IdleGov::default();
        // First idle halts (no window), then 30 µs idles are polled (window 50 µs).
        assert_eq!(periods(&p, &mut g, 30_000, 3), ["C1", "POLL", "POLL"]);
        // 120 µs idles outlast the window: halt, grow to 100 µs, halt, grow to 200 µs, poll.
        assert_eq!(periods(&p, &mut g, 120_000, 3), ["C1", "C1", "POLL"]);
        // A 1 ms idle halts and shrinks the window to 100 µs.
        assert_eq!(periods(&p, &mut g, 1_000_000, 1), ["C6"]);
        assert_eq!(g.poll_limit, 100_000);
    }

    #[test]
    fn a_polling_state_gives_way_at_the_poll_limit() {
        let mut p = profile(Governor::Menu, true);
        p.wakeup.idle_states[1].target_residency_ns = 20_000;
        let mut g = IdleGov::default();
        let (c, hold) = g.select(&p, 0, TICK, TICK);
        assert_eq!(c, 0, "menu polls with no history (typical interval 0)");
        assert_eq!(hold, 20_000);
        assert!(state_at(&p, c, 0, hold, 19_999).unwrap().polling);
        assert_eq!(state_at(&p, c, 0, hold, 20_000).unwrap().name, "C1");
    }
}
