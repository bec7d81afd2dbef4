//! The one variant syntax used everywhere: `POLICY[,SWITCH]...`.
//!
//! [`parse_variant`] checks the syntax only; [`resolve`] checks every switch against the
//! preset's era and applies them to the era's [`Settings`]. Balancer variants (`orig`,
//! `ingo`, ...) are applied first, so tick tunables given anywhere in the list override the
//! variant's defaults; everything else applies left to right (the last word wins).

use crate::era::{Era, REFERENCE_BASE, REFERENCES, presets};
use crate::error::PolicyError;
use crate::settings::Settings;
use crate::switches::{Kind, Scope, SwitchDef, find, valid_for};
use schedlab_engine::balance_o1::O1Params;
use schedlab_vocab::suggest::closest;

/// A parsed `POLICY[,SWITCH]...` string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    /// The preset name as given.
    pub policy: String,
    /// The switches as given (trimmed), in order.
    pub switches: Vec<String>,
}

/// Splits a variant string and checks its syntax (not whether the names exist).
pub fn parse_variant(s: &str) -> Result<Variant, PolicyError> {
    let err = |reason: String| PolicyError::Syntax {
        input: s.to_string(),
        reason,
    };
    let mut parts = s.split(',').map(str::trim);
    let policy = parts.next().unwrap_or("").to_string();
    if policy.is_empty() {
        return Err(err("the policy name is empty".into()));
    }
    if let Some(bad) = policy
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(err(format!("policy name '{policy}' contains '{bad}'")));
    }
    let mut switches = Vec::new();
    for (i, sw) in parts.enumerate() {
        if sw.is_empty() {
            return Err(err(format!("switch {} is empty", i + 1)));
        }
        let (name, value) = match sw.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v.trim())),
            None => (sw, None),
        };
        if name.is_empty()
            || name
                .chars()
                .any(|c| !(c.is_ascii_alphanumeric() || c == '_'))
        {
            return Err(err(format!(
                "switch '{sw}' is not NAME, NO_NAME or name=value"
            )));
        }
        if value.is_some_and(|v| v.is_empty() || v.contains('=')) {
            return Err(err(format!("switch '{sw}' has no usable value after '='")));
        }
        switches.push(match value {
            Some(v) => format!("{name}={v}"),
            None => name.to_string(),
        });
    }
    Ok(Variant { policy, switches })
}

/// What a resolved variant is: an era preset or a reference policy.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Target {
    /// A kernel era.
    Era(Era),
    /// A reference policy (name) on the base era's kernel configuration.
    Reference(&'static str),
}

/// A variant checked and applied.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Resolved {
    pub target: Target,
    pub settings: Settings,
    /// Canonical variant string.
    pub name: String,
}

fn valid_list(era: Era, reference: bool) -> String {
    valid_for(era)
        .filter(|d| !reference || is_engine_level(d))
        .map(SwitchDef::display)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Switches that make sense under a reference policy: those the engine or the balancer
/// reads (their table row's scope).
pub(crate) fn is_engine_level(d: &SwitchDef) -> bool {
    d.scope == Scope::Engine
}

fn eras_of(def: &SwitchDef) -> String {
    Era::ALL
        .iter()
        .filter(|e| def.applies(**e))
        .map(|e| e.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The closest switch name of any era and, when it is not valid here, where it is (the
/// `suggestion` and `suggestion_eras` of [`PolicyError::UnknownSwitch`]).
fn suggest(given: &str, era: Era, reference: bool) -> (Option<String>, Option<String>) {
    let Some(best) = closest(given, crate::switches::all().map(|d| d.name)) else {
        return (None, None);
    };
    let Some(def) = find(&best) else {
        return (None, None);
    };
    if def.applies(era) && (!reference || is_engine_level(def)) {
        (Some(best), None)
    } else {
        let eras = format!("which exists only in {}", eras_of(def));
        (Some(best), Some(eras))
    }
}

/// Parses, validates and applies a variant string.
pub(crate) fn resolve(s: &str) -> Result<Resolved, PolicyError> {
    let v = parse_variant(s)?;
    let (target, era, canon_policy) = if let Some(e) = Era::from_name(&v.policy) {
        (Target::Era(e), e, e.name())
    } else if let Some((name, _)) = REFERENCES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(&v.policy))
    {
        (Target::Reference(name), REFERENCE_BASE, *name)
    } else {
        let names: Vec<&str> = presets().iter().map(|p| p.name).collect();
        return Err(PolicyError::UnknownPolicy {
            name: v.policy.clone(),
            suggestion: closest(&v.policy, names.iter().copied()),
            valid: names.join(", "),
        });
    };
    let reference = matches!(target, Target::Reference(_));
    let policy_label = canon_policy.to_string();
    let mut settings = Settings::defaults(era);
    // (switch as given, definition, on/off or value)
    let mut plan: Vec<(&'static SwitchDef, Option<bool>, Option<u64>)> = Vec::new();
    let mut canon: Vec<String> = Vec::new();
    for sw in &v.switches {
        let (name, value) = match sw.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (sw.as_str(), None),
        };
        let negated = value.is_none() && name.len() > 3 && name[..3].eq_ignore_ascii_case("NO_");
        let lookup = if negated { &name[3..] } else { name };
        let def = find(lookup).filter(|d| !negated || matches!(d.kind, Kind::Feature(_)));
        let Some(def) = def else {
            let (suggestion, suggestion_eras) = suggest(lookup, era, reference);
            return Err(PolicyError::UnknownSwitch {
                policy: policy_label,
                switch: sw.clone(),
                suggestion,
                suggestion_eras,
                valid: valid_list(era, reference),
            });
        };
        if !def.applies(era) || (reference && !is_engine_level(def)) {
            let valid: Vec<String> = valid_for(era)
                .filter(|d| !reference || is_engine_level(d))
                .map(|d| d.display())
                .collect();
            return Err(PolicyError::NotApplicable {
                policy: policy_label,
                switch: sw.clone(),
                applies_to: eras_of(def),
                suggestion: closest(lookup, valid.iter().map(|s| s.trim_end_matches('='))),
                valid: valid_list(era, reference),
            });
        }
        match def.kind {
            Kind::Feature(_) => {
                if let Some(val) = value {
                    return Err(PolicyError::BadValue {
                        policy: policy_label,
                        key: def.name.to_string(),
                        value: val.to_string(),
                        reason: format!("{0} is a feature switch: write {0} or NO_{0}", def.name),
                    });
                }
                plan.push((def, Some(!negated), None));
                canon.push(if negated {
                    format!("NO_{}", def.name)
                } else {
                    def.name.to_string()
                });
            }
            Kind::Tunable(_, range) => {
                let Some(val) = value else {
                    return Err(PolicyError::BadValue {
                        policy: policy_label,
                        key: def.name.to_string(),
                        value: String::new(),
                        reason: format!("{0} is a tunable: write {0}=N", def.name),
                    });
                };
                let digits = val.replace('_', "");
                let bad = |reason: String| PolicyError::BadValue {
                    policy: policy_label.clone(),
                    key: def.name.to_string(),
                    value: val.to_string(),
                    reason,
                };
                let n: u64 = match digits.parse() {
                    Ok(n) => n,
                    // All digits but past u64: as out of range as any other too-large value.
                    Err(_) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
                        return Err(bad(format!("out of range: must be {}", range.describe())));
                    }
                    Err(_) => return Err(bad("not a non-negative integer".into())),
                };
                range.check(n).map_err(bad)?;
                plan.push((def, None, Some(n)));
                canon.push(format!("{}={n}", def.name));
            }
            Kind::Balancer(_) => {
                plan.push((def, Some(true), None));
                canon.push(def.name.to_string());
            }
        }
    }
    // Balancer variants first: they reset the tick constants to their own defaults.
    for (def, _, _) in &plan {
        if let Kind::Balancer(var) = def.kind {
            settings.o1 = O1Params::for_variant(var);
        }
    }
    for (def, on, val) in &plan {
        match def.kind {
            Kind::Feature(_) => settings.write(def, u64::from(on.unwrap_or(true))),
            Kind::Tunable(..) => settings.write(def, val.unwrap_or(0)),
            Kind::Balancer(_) => {}
        }
    }
    let mut name = canon_policy.to_string();
    for c in canon {
        name.push(',');
        name.push_str(&c);
    }
    Ok(Resolved {
        target,
        settings,
        name,
    })
}
