//! Workload names that no longer run, each with the name to use instead.
//!
//! A benchmark has one model under the benchmark's name (`sysbench`, `pgbench`, `tbench`).
//! The names the faithful server models had while simpler models held the benchmark's name,
//! and the simpler sysbench model itself, are refused with an error that names the new form,
//! rather than with "unknown workload": a user with an old spec or experiment file learns
//! what to write. The simulator's spec parser and the host harness both read this list, so
//! the two refuse the same names with the same words.

/// A retired workload name and what replaces it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retired {
    /// The name that is refused.
    pub name: &'static str,
    /// The workload to use instead.
    pub now: &'static str,
    /// How an old spec maps onto the new one.
    pub how: &'static str,
}

/// Every retired name.
pub const RETIRED: &[Retired] = &[
    Retired {
        name: "sysbench-mysql",
        now: "sysbench",
        how: "the same InnoDB model under the benchmark's name; the parameters are unchanged",
    },
    Retired {
        name: "sysbench-oltp",
        now: "sysbench",
        how: "the 1:1-pair model is gone; sysbench is built like MySQL with InnoDB: \
              pool=P is thread_handling=pool,thread_pool_size=P and query_work is stmt_work",
    },
    Retired {
        name: "pgbench-postgres",
        now: "pgbench",
        how: "the same PostgreSQL model under the benchmark's name; the parameters are unchanged",
    },
    Retired {
        name: "tbench-loadfile",
        now: "tbench",
        how: "the same load-file model under the benchmark's name; the parameters are unchanged",
    },
];

/// The entry of `name`, if it is a retired workload name.
pub fn retired(name: &str) -> Option<&'static Retired> {
    RETIRED.iter().find(|r| r.name == name)
}

impl Retired {
    /// The refusal, as both the simulator and the host print it.
    pub fn message(&self) -> String {
        format!(
            "workload '{}' was retired: use '{}' ({})",
            self.name, self.now, self.how
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_old_name_points_at_the_benchmarks_name() {
        let r = retired("tbench-loadfile").unwrap();
        assert_eq!(r.now, "tbench");
        assert!(
            r.message()
                .starts_with("workload 'tbench-loadfile' was retired: use 'tbench'")
        );
        assert!(
            retired("sysbench-oltp")
                .unwrap()
                .how
                .contains("thread_handling=pool")
        );
        assert_eq!(retired("tbench"), None);
        // A retired name never names another retired name as its replacement.
        for r in RETIRED {
            assert!(retired(r.now).is_none(), "{}", r.name);
        }
    }
}
