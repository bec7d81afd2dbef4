//! The built-in profiles: `profiles/*.toml` at the repository root, compiled in. Each file is
//! a complete profile in the format `schedlab host calibrate` writes; the simulator uses the
//! one named like the topology preset (`MachineProfile::for_preset`).

use crate::MachineProfile;

/// The built-in profiles as `(name, TOML text)`; the name is the file's stem.
pub const BUILTIN: &[(&str, &str)] = &[
    ("default", include_str!("../../../profiles/default.toml")),
    (
        "westmere-2s20c",
        include_str!("../../../profiles/westmere-2s20c.toml"),
    ),
    (
        "westmere-4s40c",
        include_str!("../../../profiles/westmere-4s40c.toml"),
    ),
    (
        "xeon-2s12c",
        include_str!("../../../profiles/xeon-2s12c.toml"),
    ),
    ("tx7-4n2c", include_str!("../../../profiles/tx7-4n2c.toml")),
    (
        "zen3-2s64c",
        include_str!("../../../profiles/zen3-2s64c.toml"),
    ),
    (
        "spr-2s56c",
        include_str!("../../../profiles/spr-2s56c.toml"),
    ),
];

/// The built-in profile `name`, parsed.
pub(crate) fn get(name: &str) -> Option<MachineProfile> {
    let (n, text) = BUILTIN.iter().find(|(n, _)| *n == name)?;
    // Every file is parsed by the tests below, so this cannot fail in a built binary.
    Some(
        MachineProfile::from_toml(text, &format!("profiles/{n}.toml"))
            .unwrap_or_else(|e| panic!("built-in profile: {e}")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_and_is_named_after_its_file() {
        for (name, text) in BUILTIN {
            let p = MachineProfile::from_toml(text, name).unwrap();
            assert_eq!(p.name, *name);
            // Written as the code writes it: numbers round-trip exactly.
            assert_eq!(MachineProfile::from_toml(&p.to_toml(), name).unwrap(), p);
        }
    }

    #[test]
    fn the_default_file_is_the_schema_default() {
        assert_eq!(get("default").unwrap(), MachineProfile::default());
        assert_eq!(
            MachineProfile::for_preset("no-such-preset"),
            MachineProfile::default()
        );
    }
}
