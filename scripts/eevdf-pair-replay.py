#!/usr/bin/env python3
"""Replay the EEVDF rules of linux 6.12-7.1 (as the engine models them) for the two tasks
of a one-CPU pipe pair on a trace's own timings, and predict at each wakeup whether the
wakee preempts the waker; compare with the trace's need_resched flag (`N` in a captured
ftrace text; the simulator's traces carry no flags, so there every wakeup reads as not
flagged). Equal weights (nice 0), slice SLICE ns (1.4 ms: 0.70 ms x (1 + ilog2(2 CPUs))).

Rules: update_curr at every switch; a task that sleeps while ineligible is delayed
(DELAY_DEQUEUE), otherwise dequeued with vlag = V - v; a woken delayed task is requeued in
place (ttwu_runnable -> requeue_delayed_entity) against V with the running waker at its
stale vruntime (no update_curr first), and re-placed at that V with lag 0 if its lag turned
positive (DELAY_ZERO; ZREQ=0 turns only this off, ZERO=0 all of DELAY_ZERO); a woken dequeued
task takes the full enqueue (update_curr, then placed at V - vlag x (n + 1) / n, PLACE_LAG);
then the preemption check charges the waker (update_curr) and the wakee preempts when
pick_eevdf with slice protection (PROTECT) picks it. ORDER=engine charges the waker before
the requeue, as the engine did before 2026-12-06 (every overtaken delayed wakee then lands
level with the waker). Environment switches: SLICE, DELAY, ZERO, ZREQ, LAGX, PROTECT, ORDER.

Usage: schedlab host capture -o pair.txt -- schedlab host run pipe:loops=5000,cpu_a=0,cpu_b=0
       scripts/eevdf-pair-replay.py pair.txt
   or, at cycle resolution (the mono clock prints whole microseconds):
       scripts/host/pair-capture-tsc.sh pair.txt
       TSC_MHZ=$(scripts/host/pair-capture-tsc.sh --mhz) scripts/eevdf-pair-replay.py pair.txt
See docs/fidelity.md ("2026-12-02, later: ...")."""
import sys, re, collections
import os
SLICE = int(os.environ.get("SLICE", 1_400_000))
DELAY = os.environ.get("DELAY", "1") == "1"
ZERO = os.environ.get("ZERO", "1") == "1"
ZREQ = os.environ.get("ZREQ", "1") == "1" and ZERO
LAGX = float(os.environ.get("LAGX", "1"))
PROTECT = os.environ.get("PROTECT", "1") == "1"
ENGINE_ORDER = os.environ.get("ORDER", "kernel") == "engine"
TS = r"(\d+(?:\.\d+)?)"  # seconds (µs resolution), or raw cycles with the x86-tsc clock
TSC_MHZ = float(os.environ.get("TSC_MHZ", "0"))  # set for an x86-tsc capture: ns = cycles / MHz x 1000
def ns(text):
    if "." not in text and TSC_MHZ <= 0:
        sys.exit("raw-cycle timestamps (x86-tsc clock): set TSC_MHZ to the TSC frequency in MHz")
    return round(int(text) * 1000 / TSC_MHZ) if "." not in text else round(float(text) * 1e9)
sw = re.compile(r"\s" + TS + r": sched_switch: prev_comm=\S+ prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=\S+ next_pid=(\d+)")
wk = re.compile(r"-(\d+)\s.*?\[(\d+)\] (\S+)\s+" + TS + r": sched_wakeup: comm=\S+ pid=(\d+)")
ev = []
for line in open(sys.argv[1]):
    m = sw.search(line)
    if m: ev.append(("sw", ns(m.group(1)), m.group(2), m.group(3)[0], m.group(4))); continue
    m = wk.search(line)
    if m: ev.append(("wk", ns(m.group(4)), m.group(1), "N" in m.group(3), m.group(5)))
cnt = collections.Counter(e[4] for e in ev if e[0] == "wk")
pair = [p for p, _ in cnt.most_common(2)]
class T:
    def __init__(s): s.v = 0; s.d = SLICE; s.vlag = 0; s.on_rq = False; s.delayed = False; s.vprot = 0
tasks = {p: T() for p in pair}
curr = None; exec_start = 0; started = False
def V():
    on = [t for t in tasks.values() if t.on_rq]
    return sum(t.v for t in on) / len(on) if on else None
def update_curr(now):
    global exec_start
    if curr is None: return
    t = tasks[curr]; t.v += now - exec_start; exec_start = now
    if t.v >= t.d: t.d = t.v + SLICE
def eligible(t): return t.v <= V() + 1e-9
def pick(protect, cur):
    c = tasks[cur] if cur is not None and tasks[cur].on_rq else None
    if c is not None and not eligible(c): c = None
    if c is not None and protect and c.v < c.vprot: return cur
    best = None
    for p, t in tasks.items():
        if p == cur or not t.on_rq: continue
        if eligible(t) and (best is None or t.d < tasks[best].d): best = p
    if c is not None and (best is None or c.d <= tasks[best].d): best = cur
    return best
agree = collections.Counter(); detail = collections.Counter()
for e in ev:
    kind, ts = e[0], e[1]
    if kind == "sw":
        _, ts, prev, st, nxt = e
        if prev in tasks and prev == curr:
            update_curr(ts)
            t = tasks[prev]
            if st in "SD":
                if DELAY and not eligible(t): t.delayed = True
                else: t.vlag = V() - t.v; t.on_rq = False
            curr = None
        if nxt in tasks:
            # delayed entities the pick meets first are dequeued (DELAY_ZERO: no positive lag)
            while True:
                p = pick(False, None)
                if p is not None and tasks[p].delayed:
                    t = tasks[p]; t.vlag = min(V() - t.v, 0) if ZERO else V() - t.v; t.on_rq = False; t.delayed = False
                    continue
                break
            t = tasks[nxt]
            if not t.on_rq:  # first appearance, or the pick dequeued it: place at V
                vv = V(); t.v = vv if vv is not None else t.v; t.d = t.v + SLICE; t.on_rq = True
            t.delayed = False
            curr = nxt; exec_start = ts; t.vprot = t.d; started = True
    else:
        _, ts, waker, flagN, wakee = e
        if wakee not in tasks or waker not in tasks or curr != waker: continue
        t = tasks[wakee]
        was_delayed = t.on_rq and t.delayed
        # requeue_delayed_entity() charges nobody; the full enqueue does (enqueue_entity).
        if ENGINE_ORDER or not was_delayed: update_curr(ts)
        if t.on_rq and t.delayed:
            lag = V() - t.v
            if lag > 0 and ZREQ:
                t.on_rq = False; vv = V(); t.v = vv; t.d = vv + SLICE; t.on_rq = True
            t.delayed = False
        elif not t.on_rq:
            n = sum(1 for x in tasks.values() if x.on_rq)
            lag = LAGX * t.vlag * (n + 1) / n if n else 0
            t.v = V() - lag; t.d = t.v + SLICE; t.on_rq = True
        update_curr(ts)  # check_preempt_wakeup_fair()
        pred = pick(PROTECT, curr) == wakee
        agree[(pred, flagN)] += 1
        kind = "delayed" if was_delayed else "dequeued"
        detail[(kind, flagN)] += 1
n = sum(agree.values())
pred_share = sum(v for (p, _), v in agree.items() if p) / n if n else 0
real_share = sum(v for (_, f), v in agree.items() if f) / n if n else 0
print(sys.argv[1], "(predicted preempt, trace N):", dict(agree)); print("  (wakee state in the replay, trace N):", dict(detail))
print(f"  wakeups {n}: need_resched set in the trace {real_share:.1%}, predicted {pred_share:.1%}")
