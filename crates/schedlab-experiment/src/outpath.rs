//! What an output path may be written as. A file is written whole to a temporary file and
//! renamed into place, so a reader never sees half of it; but a rename replaces whatever the
//! path names, and run as root `--out /dev/null` once replaced the device node with a file.
//! So the path is looked at first:
//!
//! * a regular file, or nothing: written atomically (temporary file, rename);
//! * a symlink: followed, and its target written as above (the link stays a link);
//! * a character device or a FIFO (`/dev/null`, `/dev/stdout` on a pipe, `mkfifo`): opened and
//!   written through, never renamed over;
//! * anything else (a folder, a block device, a socket): refused.
//!
//! `--out` files are appended to and rewritten on `--resume`: only a regular file (or a
//! symlink to one) can be that, see [`results_file`].

use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// How an output path is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sink {
    /// A regular file or none (symlinks followed): written atomically at this path.
    File(PathBuf),
    /// A character device or a FIFO: opened and written through.
    Through {
        /// A FIFO rather than a character device.
        fifo: bool,
    },
}

/// Most symlinks followed in a chain of dangling links (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// How `path` would be written, or why it cannot be (a folder, a block device, a socket, a
/// symlink loop). Looks only; creates nothing.
pub fn sink(path: &Path) -> Result<Sink, String> {
    match std::fs::metadata(path) {
        Ok(m) => {
            let ft = m.file_type();
            if ft.is_file() {
                // `canonicalize` follows every link, /proc/self/fd ones included.
                return std::fs::canonicalize(path)
                    .map(Sink::File)
                    .map_err(|e| format!("cannot resolve it: {e}"));
            }
            if ft.is_char_device() || ft.is_fifo() {
                return Ok(Sink::Through { fifo: ft.is_fifo() });
            }
            if ft.is_dir() {
                return Err("it is a folder".into());
            }
            Err(format!(
                "it is a {}: only a file, a character device or a FIFO is written",
                if ft.is_block_device() {
                    "block device"
                } else if ft.is_socket() {
                    "socket"
                } else {
                    "special file"
                }
            ))
        }
        // Nothing there, or a dangling symlink: the file is created where the links lead.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut p = path.to_path_buf();
            for _ in 0..MAX_LINKS {
                match std::fs::read_link(&p) {
                    Ok(t) if t.is_absolute() => p = t,
                    Ok(t) => p = p.parent().unwrap_or(Path::new(".")).join(t),
                    Err(_) => return Ok(Sink::File(p)),
                }
            }
            Err(format!("more than {MAX_LINKS} symlinks in a chain"))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// The path an `--out` results file is read, appended and rewritten at: the file itself, or
/// the target of a symlink (so a rewrite replaces the target, not the link). A device or FIFO
/// is refused: its runs could not be read back by `--resume` or `merge`.
pub fn results_file(path: &Path, flag: &str) -> Result<PathBuf, String> {
    match sink(path) {
        Ok(Sink::File(p)) => Ok(p),
        Ok(Sink::Through { fifo }) => Err(format!(
            "{flag} {}: it is a {}; the results file is appended run by run and read back by \
             --resume and merge, so it must be a regular file (give a file name)",
            path.display(),
            if fifo { "FIFO" } else { "character device" }
        )),
        Err(e) => Err(format!("{flag} {}: cannot write: {e}", path.display())),
    }
}

/// Writes `bytes` to `path` as [`sink`] says: atomically for a file (a symlink's target),
/// through for a character device or FIFO.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    match sink(path)? {
        Sink::Through { .. } => std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|mut f| f.write_all(bytes))
            .map_err(|e| e.to_string()),
        Sink::File(p) => {
            let dir = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
            let written = std::fs::File::create(&tmp)
                .and_then(|mut f| f.write_all(bytes))
                .and_then(|()| std::fs::rename(&tmp, &p));
            if written.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            written.map_err(|e| e.to_string())
        }
    }
}

/// What two outputs on one path share: the resolved file (its folder canonicalized where it
/// exists). `None` for a character device, which any number of outputs may write
/// (`--plot /dev/null --report /dev/null`).
pub fn identity(path: &Path) -> Option<PathBuf> {
    match sink(path) {
        Ok(Sink::File(p)) => {
            let canon = std::fs::canonicalize(&p).ok().or_else(|| {
                let dir = match p.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d,
                    _ => Path::new("."),
                };
                Some(std::fs::canonicalize(dir).ok()?.join(p.file_name()?))
            });
            Some(canon.unwrap_or(p))
        }
        Ok(Sink::Through { fifo: true }) => std::fs::canonicalize(path).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlink_is_followed_and_kept() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("t.txt");
        std::fs::write(&target, "old").unwrap();
        let link = d.path().join("l.txt");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        // A dangling link: the file is created where it points.
        let gone = d.path().join("gone.txt");
        let dangling = d.path().join("d.txt");
        std::os::unix::fs::symlink("gone.txt", &dangling).unwrap();
        write(&dangling, b"x").unwrap();
        assert_eq!(std::fs::read_to_string(&gone).unwrap(), "x");
        assert_eq!(identity(&dangling), identity(&gone));
    }

    #[test]
    fn devices_are_written_through_and_folders_refused() {
        assert_eq!(
            sink(Path::new("/dev/null")),
            Ok(Sink::Through { fifo: false })
        );
        write(Path::new("/dev/null"), b"x").unwrap();
        assert!(write(Path::new("/dev/full"), b"x").is_err());
        assert!(
            std::fs::symlink_metadata("/dev/null")
                .unwrap()
                .file_type()
                .is_char_device()
        );
        assert!(sink(Path::new("/tmp")).unwrap_err().contains("folder"));
        assert!(results_file(Path::new("/dev/null"), "--out").is_err());
        assert_eq!(identity(Path::new("/dev/null")), None);
    }
}
