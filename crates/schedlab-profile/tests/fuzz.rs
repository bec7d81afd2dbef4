//! Fuzzing harness of the profile reader (profiles are hand-edited and written by calibration
//! on other machines, so no input may panic): proptest edits the built-in
//! profiles (`profiles/*.toml`) and lays the result over the default profile; every input
//! must end in a validated profile or an error, never a panic, and an accepted profile must
//! pass `validate` (so no out-of-range value slips through). A campaign:
//! `PROPTEST_CASES=1000000 cargo test --release -p schedlab-profile --test fuzz`.

use proptest::prelude::*;
use schedlab_profile::{BUILTIN, MachineProfile};

proptest! {
    #[test]
    fn edited_profiles_are_refused_or_valid(
        which in any::<usize>(),
        edits in prop::collection::vec((any::<usize>(), any::<u8>()), 0..8),
    ) {
        let mut b = BUILTIN[which % BUILTIN.len()].1.as_bytes().to_vec();
        for (pos, byte) in edits {
            let at = pos % (b.len() + 1);
            b.insert(at, b"0123456789.-e+[]=\"x \n"[byte as usize % 21]);
        }
        let text = String::from_utf8_lossy(&b);
        if let Ok(p) = MachineProfile::from_toml(&text, "fuzz") {
            prop_assert!(p.validate("fuzz").is_ok());
        }
        if let Ok(p) = MachineProfile::overlay_toml(&MachineProfile::default(), &text, "fuzz") {
            prop_assert!(p.validate("fuzz").is_ok());
        }
    }
}
