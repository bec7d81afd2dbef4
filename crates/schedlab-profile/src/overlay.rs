//! Profiles a user can see and edit: a profile file that sets only some keys is laid over a
//! base profile (the topology preset's), never over generic defaults in silence; and a
//! profile is shown as TOML with each value's unit and where the value came from.

use crate::{BUILTIN, MachineProfile, ProfileError};

/// Lays `top` over `base`: tables merge key by key, anything else (numbers, strings,
/// arrays such as `smt_speed` or `idle_states`) replaces the base's value.
fn merge(base: &mut toml::Value, top: toml::Value) {
    match (base, top) {
        (toml::Value::Table(b), toml::Value::Table(t)) => {
            for (k, v) in t {
                match b.get_mut(&k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

impl MachineProfile {
    /// Parses `text` as a profile that may set only some keys, each replacing the value of
    /// `base`; unknown keys and out-of-range values are errors as in a complete file.
    /// `path` is only used in messages.
    pub fn overlay_toml(
        base: &MachineProfile,
        text: &str,
        path: &str,
    ) -> Result<Self, ProfileError> {
        let parse = |message: String| ProfileError::Parse {
            path: path.into(),
            message,
        };
        let top: toml::Value = toml::from_str(text).map_err(|e| parse(e.to_string()))?;
        let mut root = toml::Value::try_from(base).map_err(|e| parse(e.to_string()))?;
        merge(&mut root, top);
        let p: MachineProfile = root.try_into().map_err(|e| parse(e.to_string()))?;
        p.validate(path)?;
        Ok(p)
    }

    /// Reads a profile file laid over `base` (see [`MachineProfile::overlay_toml`]).
    pub fn load_over(base: &MachineProfile, path: &std::path::Path) -> Result<Self, ProfileError> {
        let text = std::fs::read(path)
            .and_then(schedlab_vocab::text::decode_io)
            .map_err(|source| ProfileError::Io {
                path: path.display().to_string(),
                source,
            })?;
        Self::overlay_toml(base, &text, &path.display().to_string())
    }

    /// The complete profile of `preset` as TOML, each value line annotated with its unit
    /// and its source: the preset's file under `profiles/` when it sets the key, the schema
    /// default otherwise. `None` for a name with no built-in profile file (those presets use
    /// the `default` profile: show that one).
    pub fn show_builtin(name: &str) -> Option<String> {
        let (n, text) = BUILTIN.iter().find(|(n, _)| *n == name)?;
        let file: toml::Value = toml::from_str(text).ok()?;
        let p = crate::builtin::get(n)?;
        let preamble = vec![
            format!(
                "profile `{n}` as the simulator uses it (schema {})",
                p.schema
            ),
            format!("source: {}", p.source),
            "each value: unit; `profiles/NAME.toml` = set by the preset's file, \
             `schema default` = not set there, taken from the schema's defaults"
                .to_string(),
        ];
        Some(p.to_toml_annotated(&preamble, |key| {
            let from = if key_in(&file, key) {
                format!("profiles/{n}.toml")
            } else {
                "schema default".to_string()
            };
            Some(format!("{}; {from}", unit_of(key)))
        }))
    }
}

/// Whether the TOML tree sets the value at `path` (`a.b`, `a.list[1].c`).
fn key_in(root: &toml::Value, path: &str) -> bool {
    let mut at = root;
    for part in path.split('.') {
        let (name, index) = match part.split_once('[') {
            Some((n, i)) => (n, i.strip_suffix(']').and_then(|i| i.parse::<usize>().ok())),
            None => (part, None),
        };
        let Some(next) = at.get(name) else {
            return false;
        };
        at = match index {
            Some(i) => match next.get(i) {
                Some(v) => v,
                None => return false,
            },
            None => next,
        };
    }
    true
}

/// The unit of a profile key, from the schema's naming rules.
pub fn unit_of(key: &str) -> &'static str {
    let leaf = key.rsplit('.').next().unwrap_or(key);
    let leaf = leaf.split('[').next().unwrap_or(leaf);
    if leaf.ends_with("_ns_per_byte") || leaf == "copy_ns_per_byte" {
        "ns per byte"
    } else if leaf.ends_with("_ns") && leaf.starts_with("refetch") {
        "ns per cache line"
    } else if leaf.ends_with("_ns") {
        "ns"
    } else if leaf.ends_with("_us") {
        "µs"
    } else if leaf.ends_with("_bytes") {
        "bytes"
    } else if leaf == "smt_speed" {
        "fraction of a lone thread's speed, by busy siblings"
    } else if leaf == "jitter" {
        "fraction (± uniform noise on each operation)"
    } else if leaf == "remote_memory_slowdown" {
        "fraction slower per NUMA distance step"
    } else if leaf == "message_lines" {
        "cache lines per message"
    } else if leaf.ends_with("_lines") {
        "cache lines per operation"
    } else if matches!(leaf, "schema" | "name" | "source") {
        "text"
    } else {
        "number"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_file_keeps_the_base_profile_for_the_keys_it_does_not_set() {
        let base = MachineProfile::for_preset("westmere-2s20c");
        assert_ne!(
            base,
            MachineProfile::default(),
            "the preset has its own numbers"
        );
        let p = MachineProfile::overlay_toml(&base, "[cpu]\nctx_switch_ns = 4321\n", "t").unwrap();
        assert_eq!(p.cpu.ctx_switch_ns, 4321);
        let mut want = base.clone();
        want.cpu.ctx_switch_ns = 4321;
        assert_eq!(p, want);
    }

    #[test]
    fn a_partial_file_is_checked_like_a_complete_one() {
        let base = MachineProfile::default();
        let e = MachineProfile::overlay_toml(&base, "[cpu]\nno_such = 1\n", "t").unwrap_err();
        assert!(e.to_string().contains("no_such"), "{e}");
        let e = MachineProfile::overlay_toml(&base, "[cpu]\njitter = 2.0\n", "t").unwrap_err();
        assert!(e.to_string().contains("jitter"), "{e}");
    }

    #[test]
    fn show_gives_every_value_a_unit_and_a_source() {
        let text = MachineProfile::show_builtin("westmere-2s20c").unwrap();
        assert!(
            text.contains("ctx_switch_ns = 1200  # ns; profiles/westmere-2s20c.toml"),
            "{text}"
        );
        for line in text
            .lines()
            .filter(|l| l.contains(" = ") && !l.starts_with('#'))
        {
            assert!(line.contains("  # "), "no note: {line}");
        }
        // The annotated text is still the profile.
        assert_eq!(
            MachineProfile::from_toml(&text, "shown").unwrap(),
            MachineProfile::for_preset("westmere-2s20c")
        );
        assert!(MachineProfile::show_builtin("no-such").is_none());
    }
}
