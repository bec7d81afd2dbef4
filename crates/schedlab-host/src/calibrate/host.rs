//! The host being calibrated: which CPUs this process may use and how the kernel places them
//! (read by `schedlab_topo`'s sysfs reader, the one the simulator's `--topology host` uses),
//! which CPU pairs stand for each distance class, and what machine and kernel this is.

use schedlab_profile::Governor;
use schedlab_topo::CpuId;
use schedlab_topo::{CpuPlacement, DEFAULT_CAPACITY, Topology};
use schedlab_vocab::DistanceClass;
use std::collections::BTreeMap;
use std::path::Path;

/// The CPUs calibration may use, placed in the host's topology.
#[derive(Clone, Debug)]
pub struct HostCpus {
    /// The machine as sysfs describes it (a flat one, every CPU its own core in one LLC and
    /// one node, when sysfs cannot be read).
    pub topology: Topology,
    /// CPUs this process may use (its affinity mask), ascending.
    pub cpus: Vec<CpuId>,
    /// Cache line size, bytes (sysfs `coherency_line_size`).
    pub line_bytes: Option<u64>,
    /// Why the flat fallback was used, if it was.
    pub fallback: Option<String>,
}

impl HostCpus {
    /// Reads the sysfs tree at `root` (normally `/sys`) and keeps the `allowed` CPUs it knows.
    pub fn read(root: &Path, allowed: Vec<CpuId>) -> HostCpus {
        match schedlab_topo::sysfs::from_sysfs(root) {
            Ok(topology) => {
                let cpus = allowed
                    .into_iter()
                    .filter(|&c| c.index() < topology.nr_cpus())
                    .collect();
                HostCpus {
                    topology,
                    cpus,
                    line_bytes: schedlab_topo::sysfs::cache_line_bytes(root),
                    fallback: None,
                }
            }
            Err(e) => HostCpus::flat(allowed, e.to_string()),
        }
    }

    /// Every allowed CPU its own core, all in one LLC and one node: what can be assumed when
    /// sysfs says nothing.
    pub(super) fn flat(allowed: Vec<CpuId>, why: String) -> HostCpus {
        let n = allowed.iter().max().map_or(1, |&m| m.index() + 1);
        let placements = CpuId::range(n)
            .map(|cpu| CpuPlacement {
                cpu,
                core: cpu.index(),
                cluster: None,
                llc: 0,
                package: 0,
                node: 0,
                capacity: DEFAULT_CAPACITY,
            })
            .collect();
        let topology = Topology::from_cpus(
            "host",
            "flat (sysfs unreadable)",
            placements,
            vec![vec![10]],
        )
        .expect("a flat machine of at most MAX_CPUS CPUs is valid");
        HostCpus {
            topology,
            cpus: allowed,
            line_bytes: None,
            fallback: Some(why),
        }
    }

    /// The distance class of two CPUs.
    pub fn class(&self, a: CpuId, b: CpuId) -> DistanceClass {
        self.topology.distance_class(a, b)
    }

    /// One CPU pair per class present, the first CPU being the lowest allowed one when it can.
    pub fn representative_pairs(&self) -> BTreeMap<DistanceClass, (CpuId, CpuId)> {
        let mut m = BTreeMap::new();
        for (i, &a) in self.cpus.iter().enumerate() {
            for &b in &self.cpus[i + 1..] {
                m.entry(self.class(a, b)).or_insert((a, b));
            }
        }
        m
    }
}

/// Why no pair of class `c` could be measured on a machine with two or more CPUs.
pub(super) fn absent_reason(c: DistanceClass) -> &'static str {
    match c {
        DistanceClass::Same => "the same CPU",
        DistanceClass::Smt => "no SMT",
        DistanceClass::Llc => "one CPU per LLC",
        DistanceClass::CrossLlc => "one LLC",
        DistanceClass::CrossNode => "one node",
    }
}

pub(super) fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// Whether the haltpoll governor's poll window can never open: `adjust_poll_limit()`
/// (drivers/cpuidle/governors/haltpoll.c, 5.4+) grows it only for a halt no longer than
/// `guest_halt_poll_ns`, so at 0 it stays 0 and `haltpoll_select()` always halts.
fn never_polls(sys: &Path) -> bool {
    std::fs::read_to_string(sys.join("module/haltpoll/parameters/guest_halt_poll_ns"))
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        == Some(0)
}

/// The cpuidle governor the simulator should model for this machine, read from
/// `/sys/devices/system/cpu/cpuidle/{current_driver,current_governor}`, and why.
pub(super) fn cpuidle(sys: &Path) -> (Governor, String) {
    let read = |f: &str| {
        std::fs::read_to_string(sys.join("devices/system/cpu/cpuidle").join(f))
            .ok()
            .map(|s| s.trim().to_string())
    };
    let driver = read("current_driver");
    let governor = read("current_governor").or_else(|| read("current_governor_ro"));
    match (driver.as_deref(), governor.as_deref()) {
        (None | Some("none"), _) => (
            Governor::Elapsed,
            format!(
                "cpuidle driver {}: the CPU halts and what a wakeup pays depends on how long it \
                 has been halted (in a VM, the host's halt polling)",
                driver.as_deref().unwrap_or("absent")
            ),
        ),
        (Some(d), Some("haltpoll")) | (Some(d @ "haltpoll"), _) if never_polls(sys) => (
            Governor::Elapsed,
            format!(
                "cpuidle driver {d}, governor haltpoll with guest_halt_poll_ns = 0: its poll \
                 window never opens, so every idle halts and what a wakeup pays depends on \
                 how long the vCPU has been halted (the host's halt polling)"
            ),
        ),
        (Some(d), Some("haltpoll")) | (Some(d @ "haltpoll"), _) => (
            Governor::Haltpoll,
            format!("cpuidle driver {d}, governor haltpoll: polls before halting"),
        ),
        (Some(d), Some("teo")) => (Governor::Teo, format!("cpuidle driver {d}, governor teo")),
        (Some(d), Some("ladder")) => (
            Governor::Elapsed,
            format!(
                "cpuidle driver {d}, governor ladder: steps down by residency, modelled as elapsed"
            ),
        ),
        (Some(d), g) => (
            Governor::Menu,
            format!(
                "cpuidle driver {d}, governor {}{}",
                g.unwrap_or("unknown"),
                if g == Some("menu") {
                    ""
                } else {
                    ", modelled as menu"
                }
            ),
        ),
    }
}

pub(super) fn kernel_release() -> String {
    // SAFETY: an all-zero utsname is valid; uname fills it with NUL-terminated strings.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: u is valid.
    if unsafe { libc::uname(&mut u) } != 0 {
        return "unknown".into();
    }
    // SAFETY: release is NUL-terminated by uname.
    unsafe { std::ffi::CStr::from_ptr(u.release.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// Today's UTC date as `YYYY-MM-DD` (days-from-civil inverse, proleptic Gregorian).
pub(super) fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    civil_date(secs / 86_400)
}

fn civil_date(days: u64) -> String {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_cpuidle_governor_is_read_from_sysfs() {
        use schedlab_profile::Governor;
        let cases = [
            (None, None, Governor::Elapsed),
            (Some("none"), Some("menu"), Governor::Elapsed),
            (Some("intel_idle"), Some("menu"), Governor::Menu),
            (Some("intel_idle"), Some("teo"), Governor::Teo),
            (Some("acpi_idle"), Some("ladder"), Governor::Elapsed),
            (Some("haltpoll"), Some("haltpoll"), Governor::Haltpoll),
            (Some("intel_idle"), Some("something-new"), Governor::Menu),
        ];
        for (driver, governor, want) in cases {
            let root = tempfile::tempdir().unwrap();
            let dir = root.path().join("devices/system/cpu/cpuidle");
            std::fs::create_dir_all(&dir).unwrap();
            if let Some(d) = driver {
                std::fs::write(dir.join("current_driver"), format!("{d}\n")).unwrap();
            }
            if let Some(g) = governor {
                std::fs::write(dir.join("current_governor_ro"), format!("{g}\n")).unwrap();
            }
            let (got, how) = super::cpuidle(root.path());
            assert_eq!(got, want, "{driver:?} {governor:?}: {how}");
            if want == Governor::Menu && governor != Some("menu") {
                assert!(how.contains("modelled as menu"), "{how}");
            }
        }
    }

    #[test]
    fn haltpoll_with_no_poll_window_halts_every_idle() {
        use schedlab_profile::Governor;
        for (poll_ns, want) in [
            (None, Governor::Haltpoll),
            (Some("200000"), Governor::Haltpoll),
            (Some("0"), Governor::Elapsed),
        ] {
            let root = tempfile::tempdir().unwrap();
            let dir = root.path().join("devices/system/cpu/cpuidle");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("current_driver"), "haltpoll\n").unwrap();
            std::fs::write(dir.join("current_governor"), "haltpoll\n").unwrap();
            if let Some(v) = poll_ns {
                let params = root.path().join("module/haltpoll/parameters");
                std::fs::create_dir_all(&params).unwrap();
                std::fs::write(params.join("guest_halt_poll_ns"), format!("{v}\n")).unwrap();
            }
            let (got, how) = super::cpuidle(root.path());
            assert_eq!(got, want, "{poll_ns:?}: {how}");
        }
    }

    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(19_723), "2024-01-01");
        assert_eq!(civil_date(19_782), "2024-02-29");
    }

    #[test]
    fn classifies_pairs_from_a_fake_sysfs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // 4 CPUs: 0,1 SMT siblings; 2 in the same LLC; 3 in another LLC on node 1.
        let w = |p: &str, s: &str| {
            let p = root.join("devices/system").join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, s).unwrap();
        };
        w("cpu/online", "0-3");
        for c in 0..4 {
            let sib = match c {
                0 | 1 => "0-1",
                2 => "2",
                _ => "3",
            };
            w(&format!("cpu/cpu{c}/topology/thread_siblings_list"), sib);
            w(
                &format!("cpu/cpu{c}/topology/physical_package_id"),
                if c < 3 { "0" } else { "1" },
            );
            w(&format!("cpu/cpu{c}/cache/index3/level"), "3");
            w(&format!("cpu/cpu{c}/cache/index3/type"), "Unified");
            w(
                &format!("cpu/cpu{c}/cache/index3/shared_cpu_list"),
                if c < 3 { "0-2" } else { "3" },
            );
            w(
                &format!("cpu/cpu{c}/cache/index3/coherency_line_size"),
                "64",
            );
        }
        w("node/node0/cpulist", "0-2");
        w("node/node0/distance", "10 20");
        w("node/node1/cpulist", "3");
        w("node/node1/distance", "20 10");
        let t = HostCpus::read(root, CpuId::range(4).collect());
        assert_eq!(t.fallback, None);
        assert_eq!(t.class(CpuId::new(0), CpuId::new(1)), DistanceClass::Smt);
        assert_eq!(t.class(CpuId::new(0), CpuId::new(2)), DistanceClass::Llc);
        assert_eq!(
            t.class(CpuId::new(2), CpuId::new(3)),
            DistanceClass::CrossNode
        );
        assert_eq!(t.line_bytes, Some(64));
        let pairs = t.representative_pairs();
        assert_eq!(
            pairs.get(&DistanceClass::Smt),
            Some(&(CpuId::new(0), CpuId::new(1)))
        );
        assert_eq!(
            pairs.get(&DistanceClass::Llc),
            Some(&(CpuId::new(0), CpuId::new(2)))
        );
        assert_eq!(pairs.get(&DistanceClass::CrossLlc), None);
        assert_eq!(
            pairs.get(&DistanceClass::CrossNode),
            Some(&(CpuId::new(0), CpuId::new(3)))
        );
    }

    #[test]
    fn unreadable_sysfs_gives_a_flat_machine() {
        let dir = tempfile::tempdir().unwrap();
        let t = HostCpus::read(dir.path(), vec![CpuId::new(0), CpuId::new(2)]);
        assert!(t.fallback.is_some());
        assert_eq!(t.class(CpuId::new(0), CpuId::new(2)), DistanceClass::Llc);
        assert_eq!(t.representative_pairs().len(), 1);
    }
}
