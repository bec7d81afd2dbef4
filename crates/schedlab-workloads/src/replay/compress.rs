//! Folding a derived program into loops, so the file stays short and readable: a run of
//! repetitions of the same op sequence (the same channels in the same order; the burst and
//! sleep lengths may differ) becomes one `loop` whose compute and sleep ops carry every
//! length they took in the repetitions.
//!
//! The op sequence itself is kept exactly (only lengths are pooled), so the folded program
//! sends and receives in the traced order.

/// An op with its duration left out: what must repeat for a loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sym {
    /// A burst.
    Compute,
    /// A timed sleep.
    Sleep,
    /// A wakeup on this channel.
    Send(usize),
    /// A block on this channel.
    Recv(usize),
    /// A fork of this task (by index).
    Fork(usize),
}

/// One item of a folded program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Node {
    /// A single op with its traced length (0 for ops without one).
    One(Sym, u64),
    /// `count` repetitions of `body`; each body op has one length per repetition.
    Loop {
        count: u64,
        body: Vec<(Sym, Vec<u64>)>,
    },
}

/// Longest loop body looked for.
pub(crate) const MAX_PERIOD: usize = 24;

/// Folds `ops` greedily from the left: at each position the period (1..=[`MAX_PERIOD`])
/// whose repetitions cover the most ops wins, if it repeats at least twice.
pub(crate) fn fold(ops: &[(Sym, u64)]) -> Vec<Node> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < ops.len() {
        let mut best: Option<(usize, usize)> = None; // (period, reps)
        for p in 1..=MAX_PERIOD.min((ops.len() - i) / 2) {
            let mut reps = 1;
            while i + (reps + 1) * p <= ops.len()
                && (0..p).all(|k| ops[i + reps * p + k].0 == ops[i + k].0)
            {
                reps += 1;
            }
            if reps >= 2 && best.is_none_or(|(bp, br)| p * reps > bp * br) {
                best = Some((p, reps));
            }
        }
        match best {
            // A loop of one-op bodies of one op type repeated twice is no shorter; fold only
            // what saves lines.
            Some((p, reps)) if p * reps > p + 1 => {
                let body = (0..p)
                    .map(|k| {
                        let lens = (0..reps).map(|r| ops[i + r * p + k].1).collect();
                        (ops[i + k].0, lens)
                    })
                    .collect();
                out.push(Node::Loop {
                    count: reps as u64,
                    body,
                });
                i += p * reps;
            }
            _ => {
                out.push(Node::One(ops[i].0, ops[i].1));
                i += 1;
            }
        }
    }
    out
}

/// Merges neighbouring bursts (what dropping ops between them leaves).
pub(crate) fn merge_computes(ops: Vec<(Sym, u64)>) -> Vec<(Sym, u64)> {
    let mut out: Vec<(Sym, u64)> = Vec::with_capacity(ops.len());
    for (s, d) in ops {
        if s == Sym::Compute
            && let Some(last) = out.last_mut()
            && last.0 == Sym::Compute
        {
            last.1 += d;
            continue;
        }
        if matches!(s, Sym::Compute | Sym::Sleep) && d == 0 {
            continue;
        }
        out.push((s, d));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ping_pong_folds_into_one_loop_with_every_length() {
        let mut ops = Vec::new();
        for k in 0..5 {
            ops.push((Sym::Compute, 100 + k));
            ops.push((Sym::Send(0), 0));
            ops.push((Sym::Recv(1), 0));
        }
        let f = fold(&ops);
        assert_eq!(
            f,
            vec![Node::Loop {
                count: 5,
                body: vec![
                    (Sym::Compute, vec![100, 101, 102, 103, 104]),
                    (Sym::Send(0), vec![0; 5]),
                    (Sym::Recv(1), vec![0; 5]),
                ]
            }]
        );
    }

    #[test]
    fn irregular_ops_stay_in_order() {
        let ops = vec![
            (Sym::Compute, 5),
            (Sym::Send(0), 0),
            (Sym::Send(1), 0),
            (Sym::Recv(2), 0),
            (Sym::Send(1), 0),
        ];
        let f = fold(&ops);
        let flat: Vec<Sym> = f
            .iter()
            .map(|n| match n {
                Node::One(s, _) => *s,
                Node::Loop { .. } => panic!("nothing repeats"),
            })
            .collect();
        assert_eq!(flat, ops.iter().map(|o| o.0).collect::<Vec<_>>());
    }

    #[test]
    fn bursts_merge_and_empty_ones_go() {
        let m = merge_computes(vec![
            (Sym::Compute, 5),
            (Sym::Compute, 7),
            (Sym::Sleep, 0),
            (Sym::Send(0), 0),
        ]);
        assert_eq!(m, vec![(Sym::Compute, 12), (Sym::Send(0), 0)]);
    }
}
