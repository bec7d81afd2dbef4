//! How the running kernel was built and booted, for a simulation of this machine: its release,
//! `CONFIG_HZ` and the preemption model, each with where it was read (or what was assumed).
//!
//! Sources, in order: the kernel configuration from `/proc/config.gz` (CONFIG_IKCONFIG_PROC)
//! or `/boot/config-RELEASE`; the preemption model from `/sys/kernel/debug/sched/preempt`
//! (PREEMPT_DYNAMIC's run-time switch, 5.12+; the current model is the one in parentheses),
//! else `preempt=` on `/proc/cmdline` (PREEMPT_DYNAMIC's boot choice), else the configured
//! default (`CONFIG_PREEMPT_NONE`, `_VOLUNTARY`, `CONFIG_PREEMPT`, `_LAZY`; PREEMPT_RT counts
//! as full). The names are the kernel's (`none`, `voluntary`, `full`, `lazy`); the caller maps
//! them to its own vocabulary.

use std::io::Read;

/// A value read from the host, with where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sourced<T> {
    /// The value, when it could be read.
    pub value: Option<T>,
    /// Where it was read, or why it could not be.
    pub source: String,
}

/// The running kernel as the simulator needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostKernel {
    /// `/proc/sys/kernel/osrelease`, e.g. `6.18.44-fc-v1045`.
    pub release: String,
    /// `CONFIG_HZ`.
    pub hz: Sourced<u64>,
    /// The preemption model in effect: `none`, `voluntary`, `full` or `lazy`.
    pub preempt: Sourced<String>,
}

/// Reads the running kernel's release, HZ and preemption model.
pub fn host_kernel() -> HostKernel {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let config = read_config(&release);
    let debugfs = std::fs::read_to_string("/sys/kernel/debug/sched/preempt");
    let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    resolve(
        release,
        config,
        debugfs.map_err(|e| e.to_string()),
        &cmdline,
    )
}

/// The configuration text and its file, or why none could be read.
fn read_config(release: &str) -> Result<(String, String), String> {
    let gz = "/proc/config.gz";
    if let Ok(f) = std::fs::File::open(gz) {
        let mut text = String::new();
        return flate2::read::GzDecoder::new(f)
            .read_to_string(&mut text)
            .map(|_| (text, gz.to_string()))
            .map_err(|e| format!("{gz}: {e}"));
    }
    let boot = format!("/boot/config-{release}");
    std::fs::read_to_string(&boot)
        .map(|t| (t, boot.clone()))
        .map_err(|_| format!("no kernel configuration ({gz} and {boot} are absent)"))
}

/// Combines what was read (the parts [`host_kernel`] reads, given here so tests can too).
pub fn resolve(
    release: String,
    config: Result<(String, String), String>,
    debugfs_preempt: Result<String, String>,
    cmdline: &str,
) -> HostKernel {
    let (hz, preempt_default, dynamic) = match &config {
        Ok((text, file)) => {
            let c = parse_config(text);
            (
                Sourced {
                    value: c.hz,
                    source: match c.hz {
                        Some(_) => format!("CONFIG_HZ in {file}"),
                        None => format!("no CONFIG_HZ in {file}"),
                    },
                },
                c.preempt.map(|m| (m, file.clone())),
                c.dynamic,
            )
        }
        Err(why) => (
            Sourced {
                value: None,
                source: why.clone(),
            },
            None,
            false,
        ),
    };
    let preempt = if let Some(m) = debugfs_preempt.as_deref().ok().and_then(parse_debugfs) {
        Sourced {
            value: Some(m),
            source: "/sys/kernel/debug/sched/preempt".into(),
        }
    } else if let Some(m) = dynamic.then(|| parse_cmdline(cmdline)).flatten() {
        Sourced {
            value: Some(m),
            source: "preempt= on /proc/cmdline (PREEMPT_DYNAMIC)".into(),
        }
    } else if let Some((m, file)) = preempt_default {
        let how = if dynamic {
            "the configured default of PREEMPT_DYNAMIC, no preempt= on /proc/cmdline"
        } else {
            "the configured model"
        };
        let debugfs = match &debugfs_preempt {
            Ok(_) => "",
            Err(_) => "; /sys/kernel/debug/sched/preempt not readable",
        };
        Sourced {
            value: Some(m),
            source: format!("{how}, in {file}{debugfs}"),
        }
    } else {
        Sourced {
            value: None,
            source: "no preemption model found (no readable configuration or debugfs file)".into(),
        }
    };
    HostKernel {
        release,
        hz,
        preempt,
    }
}

/// What a kernel configuration says.
#[derive(Debug, PartialEq, Eq)]
struct Config {
    hz: Option<u64>,
    preempt: Option<String>,
    dynamic: bool,
}

fn parse_config(text: &str) -> Config {
    let mut c = Config {
        hz: None,
        preempt: None,
        dynamic: false,
    };
    for line in text.lines().map(str::trim) {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let yes = value == "y";
        match key {
            "CONFIG_HZ" => c.hz = value.parse().ok(),
            "CONFIG_PREEMPT_DYNAMIC" => c.dynamic = yes,
            "CONFIG_PREEMPT_NONE" if yes => c.preempt = Some("none".into()),
            "CONFIG_PREEMPT_VOLUNTARY" if yes => c.preempt = Some("voluntary".into()),
            "CONFIG_PREEMPT" | "CONFIG_PREEMPT_RT" if yes => c.preempt = Some("full".into()),
            "CONFIG_PREEMPT_LAZY" if yes => c.preempt = Some("lazy".into()),
            _ => {}
        }
    }
    c
}

/// `none voluntary (full) lazy` → `full`.
fn parse_debugfs(text: &str) -> Option<String> {
    let open = text.find('(')?;
    let close = text[open..].find(')')? + open;
    let m = text[open + 1..close].trim();
    is_model(m).then(|| m.to_string())
}

/// The last `preempt=` on the command line, when it names a model.
fn parse_cmdline(text: &str) -> Option<String> {
    text.split_whitespace()
        .filter_map(|w| w.strip_prefix("preempt="))
        .next_back()
        .filter(|m| is_model(m))
        .map(str::to_string)
}

fn is_model(m: &str) -> bool {
    matches!(m, "none" | "voluntary" | "full" | "lazy")
}

#[cfg(test)]
mod tests {
    use super::*;

    const DYNAMIC_NONE: &str = "CONFIG_HZ_250=y\nCONFIG_HZ=250\nCONFIG_PREEMPT_BUILD=y\n\
        CONFIG_PREEMPT_NONE=y\n# CONFIG_PREEMPT_VOLUNTARY is not set\nCONFIG_PREEMPTION=y\n\
        CONFIG_PREEMPT_DYNAMIC=y\n";

    fn cfg(text: &str) -> Result<(String, String), String> {
        Ok((text.to_string(), "/proc/config.gz".into()))
    }

    #[test]
    fn this_machines_build_reads_as_hz_250_and_none() {
        let k = resolve(
            "6.18.44".into(),
            cfg(DYNAMIC_NONE),
            Err("denied".into()),
            "console=ttyS0 quiet",
        );
        assert_eq!(k.hz.value, Some(250));
        assert_eq!(k.preempt.value.as_deref(), Some("none"));
        assert!(
            k.preempt.source.contains("no preempt="),
            "{}",
            k.preempt.source
        );
        assert!(
            k.preempt.source.contains("not readable"),
            "{}",
            k.preempt.source
        );
    }

    #[test]
    fn debugfs_then_cmdline_override_the_configured_default() {
        let k = resolve(
            "6.18".into(),
            cfg(DYNAMIC_NONE),
            Ok("none voluntary (full) lazy\n".into()),
            "preempt=lazy",
        );
        assert_eq!(k.preempt.value.as_deref(), Some("full"));
        let k = resolve(
            "6.18".into(),
            cfg(DYNAMIC_NONE),
            Err("x".into()),
            "a preempt=lazy b",
        );
        assert_eq!(k.preempt.value.as_deref(), Some("lazy"));
        // Without PREEMPT_DYNAMIC the command line cannot change the model.
        let fixed = "CONFIG_HZ=1000\nCONFIG_PREEMPT=y\n";
        let k = resolve("5.4".into(), cfg(fixed), Err("x".into()), "preempt=none");
        assert_eq!(k.preempt.value.as_deref(), Some("full"));
        assert_eq!(k.hz.value, Some(1000));
    }

    #[test]
    fn nothing_readable_says_so() {
        let k = resolve(
            "".into(),
            Err("no kernel configuration".into()),
            Err("x".into()),
            "",
        );
        assert_eq!(k.hz.value, None);
        assert_eq!(k.preempt.value, None);
        assert!(k.hz.source.contains("no kernel configuration"));
        assert_eq!(parse_debugfs("none voluntary full"), None);
        assert_eq!(parse_cmdline("preempt=bogus"), None);
    }
}
