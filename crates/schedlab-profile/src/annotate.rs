//! Writing a profile with a comment on every value line, and setting a value by its key
//! path: what `schedlab host calibrate` needs to write what it measured through the schema
//! instead of a second, hand-written copy of it.
//!
//! Key paths name a value as the TOML file does: `cpu.ctx_switch_ns`, `cpu.smt_speed[1]`,
//! `wakeup.idle_states[0].exit_ns`.

use crate::{MachineProfile, ProfileError};

/// The value at `path` in a profile's TOML tree.
fn value_at<'a>(root: &'a mut toml::Value, path: &str) -> Option<&'a mut toml::Value> {
    let mut at = root;
    for part in path.split('.') {
        let (name, index) = match part.split_once('[') {
            Some((n, i)) => (n, Some(i.strip_suffix(']')?.parse::<usize>().ok()?)),
            None => (part, None),
        };
        at = at.get_mut(name)?;
        if let Some(i) = index {
            at = at.get_mut(i)?;
        }
    }
    Some(at)
}

impl MachineProfile {
    /// The number at `path`, if it names one.
    pub fn get_number(&self, path: &str) -> Option<f64> {
        let mut root = toml::Value::try_from(self).ok()?;
        match value_at(&mut root, path)? {
            toml::Value::Integer(i) => Some(*i as f64),
            toml::Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// Sets the number at `path` to `v`, keeping the key's type (an integer key takes `v`
    /// rounded, never below 0), and validates the result.
    pub fn set_number(&mut self, path: &str, v: f64) -> Result<(), ProfileError> {
        let bad = |why: &str| ProfileError::Value {
            path: "(set)".into(),
            key: path.into(),
            value: v.to_string(),
            why: why.into(),
        };
        let mut root = toml::Value::try_from(&*self).map_err(|e| bad(&e.to_string()))?;
        let at = value_at(&mut root, path).ok_or_else(|| bad("no such key"))?;
        *at = match at {
            toml::Value::Integer(_) => toml::Value::Integer(v.round().max(0.0) as i64),
            toml::Value::Float(_) => toml::Value::Float(v),
            _ => return Err(bad("not a number")),
        };
        let p: MachineProfile = root.try_into().map_err(|e| bad(&e.to_string()))?;
        p.validate("(set)")?;
        *self = p;
        Ok(())
    }

    /// The profile as TOML (as [`MachineProfile::to_toml`] writes it), with `preamble`
    /// (comment lines) first and `  # NOTE` after each value line for which `note(path)`
    /// gives one.
    pub fn to_toml_annotated(
        &self,
        preamble: &[String],
        mut note: impl FnMut(&str) -> Option<String>,
    ) -> String {
        let mut out = String::new();
        for l in preamble {
            out.push_str("# ");
            out.push_str(l);
            out.push('\n');
        }
        let mut section = String::new();
        let mut index: std::collections::BTreeMap<String, usize> = Default::default();
        for line in self.to_toml().lines() {
            let t = line.trim();
            if let Some(name) = t.strip_prefix("[[").and_then(|s| s.strip_suffix("]]")) {
                let i = index.entry(name.to_string()).or_insert(0);
                section = format!("{name}[{i}]");
                *i += 1;
            } else if let Some(name) = t.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
                section = name.to_string();
            }
            out.push_str(line);
            if let Some((key, _)) = t.split_once(" = ")
                && !t.starts_with('#')
            {
                let path = if section.is_empty() {
                    key.to_string()
                } else {
                    format!("{section}.{key}")
                };
                if let Some(n) = note(&path) {
                    out.push_str("  # ");
                    out.push_str(&n);
                }
            }
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::MachineProfile;

    #[test]
    fn sets_numbers_by_path_keeping_their_type() {
        let mut p = MachineProfile::default();
        p.set_number("cpu.ctx_switch_ns", 2345.6).unwrap();
        p.set_number("cpu.smt_speed[1]", 0.7).unwrap();
        p.set_number("wakeup.idle_states[0].exit_ns", 1234.0)
            .unwrap();
        p.set_number("transfer.llc_ns_per_byte", 0.123).unwrap();
        assert_eq!(p.cpu.ctx_switch_ns, 2346);
        assert_eq!(p.cpu.smt_speed, vec![1.0, 0.7]);
        assert_eq!(p.wakeup.idle_states[0].exit_ns, 1234);
        assert_eq!(p.transfer.llc_ns_per_byte, 0.123);
        assert_eq!(p.get_number("cpu.smt_speed[1]"), Some(0.7));
        assert_eq!(p.get_number("cpu.ctx_switch_ns"), Some(2346.0));
        assert_eq!(p.get_number("name"), None);
        assert!(p.set_number("cpu.no_such_key", 1.0).is_err());
        assert!(p.set_number("cpu.smt_speed[1]", 1.5).is_err());
    }

    #[test]
    fn every_value_line_gets_its_path() {
        let p = MachineProfile::default();
        let mut paths = Vec::new();
        let text = p.to_toml_annotated(&["hello".into()], |k| {
            paths.push(k.to_string());
            Some(format!("note {k}"))
        });
        assert!(text.starts_with("# hello\n"), "{text}");
        assert!(
            text.contains("ctx_switch_ns = 1200  # note cpu.ctx_switch_ns"),
            "{text}"
        );
        assert!(
            paths.contains(&"wakeup.idle_states[1].exit_ns".to_string()),
            "{paths:?}"
        );
        assert_eq!(MachineProfile::from_toml(&text, "t").unwrap(), p);
    }
}
