//! The tracefs settings a capture changed, recorded on disk before each change, so that a
//! capture killed with SIGKILL (whose `Drop` never ran) is undone by the next one: it finds
//! the record, writes the original values back, unmounts tracefs if the killed capture had
//! mounted it, and only then saves "the original" settings of its own. Without the record the
//! next capture saved the leaked settings (tracing on, 4 sched events, `mono` clock, 8 MB
//! buffers) as the originals and restored those.
//!
//! Format (one file, replaced atomically): `root PATH`, `mounted 0|1`, then one
//! `set REL<TAB>VALUE` line per saved setting, in the order they were changed.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Where the record lives: beside the capture lock, which every capture holds while it
/// reads or writes the record. A reboot empties /tmp, and resets tracefs too.
pub(crate) const STATE_FILE: &str = "/tmp/schedlab-tracefs.state";

/// What a capture changed.
#[derive(Clone, Debug, PartialEq, Default)]
pub(crate) struct State {
    pub root: PathBuf,
    pub mounted_by_us: bool,
    /// (file relative to `root`, value to write back), in the order changed.
    pub saved: Vec<(String, String)>,
}

/// Writes `st` to `path` through a synced temporary file and a rename.
pub(crate) fn record(path: &Path, st: &State) -> std::io::Result<()> {
    let mut text = format!(
        "root {}\nmounted {}\n",
        st.root.display(),
        u8::from(st.mounted_by_us)
    );
    for (rel, value) in &st.saved {
        text.push_str(&format!("set {rel}\t{}\n", value.replace('\n', " ")));
    }
    let tmp = path.with_extension("state.tmp");
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// Reads a record; `None` if there is none or it is unreadable (a torn temporary is never
/// the record itself, since it is renamed into place whole).
pub(crate) fn read(path: &Path) -> Option<State> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut st = State::default();
    for line in text.lines() {
        if let Some(r) = line.strip_prefix("root ") {
            st.root = PathBuf::from(r);
        } else if let Some(m) = line.strip_prefix("mounted ") {
            st.mounted_by_us = m.trim() == "1";
        } else if let Some(kv) = line.strip_prefix("set ") {
            let (rel, value) = kv.split_once('\t')?;
            st.saved.push((rel.to_string(), value.to_string()));
        }
    }
    (!st.root.as_os_str().is_empty()).then_some(st)
}

/// Writes the saved values back (last changed first, so `tracing_on`, saved first, is
/// restored last) and unmounts if the recorded capture mounted tracefs.
pub(crate) fn restore(st: &State) {
    for (rel, value) in st.saved.iter().rev() {
        // Only files under the recorded root: the record names relative paths.
        if rel.split('/').any(|c| c == ".." || c.is_empty()) {
            continue;
        }
        let _ = std::fs::write(st.root.join(rel), value);
    }
    if st.mounted_by_us
        && let Ok(p) = std::ffi::CString::new(st.root.as_os_str().as_encoded_bytes())
    {
        // SAFETY: a valid C string.
        unsafe { libc::umount2(p.as_ptr(), libc::MNT_DETACH) };
    }
}

/// Undoes what a killed capture left, if its record is at `path`; returns a note for the
/// user when it did.
pub(crate) fn undo_leftover(path: &Path) -> Option<String> {
    let st = read(path)?;
    restore(&st);
    let _ = std::fs::remove_file(path);
    Some(format!(
        "restored {} tracefs settings under {} left by a capture that did not finish{}",
        st.saved.len(),
        st.root.display(),
        if st.mounted_by_us {
            " (and unmounted it)"
        } else {
            ""
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_and_is_undone_in_reverse_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tracing");
        std::fs::create_dir_all(root.join("events/sched/sched_switch")).unwrap();
        // What a killed capture left: its own values in place.
        std::fs::write(root.join("tracing_on"), "1").unwrap();
        std::fs::write(root.join("trace_clock"), "mono").unwrap();
        std::fs::write(root.join("events/sched/sched_switch/enable"), "1").unwrap();
        let st = State {
            root: root.clone(),
            mounted_by_us: false,
            saved: vec![
                ("tracing_on".into(), "0".into()),
                ("trace_clock".into(), "local".into()),
                ("events/sched/sched_switch/enable".into(), "0".into()),
                ("../escape".into(), "x".into()),
            ],
        };
        let path = dir.path().join("state");
        record(&path, &st).unwrap();
        assert_eq!(read(&path).as_ref(), Some(&st));
        let note = undo_leftover(&path).unwrap();
        assert!(note.contains("restored 4 tracefs settings"), "{note}");
        let get = |rel: &str| std::fs::read_to_string(root.join(rel)).unwrap();
        assert_eq!(get("tracing_on"), "0");
        assert_eq!(get("trace_clock"), "local");
        assert_eq!(get("events/sched/sched_switch/enable"), "0");
        assert!(!dir.path().join("escape").exists());
        assert!(!path.exists(), "the record goes once undone");
        assert_eq!(undo_leftover(&path), None);
    }
}
