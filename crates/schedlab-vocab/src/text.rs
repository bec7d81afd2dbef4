//! Input files as text: what editors and tools write besides plain UTF-8, read right or
//! refused with the reason. A UTF-8 byte-order mark (Windows editors write one) is dropped;
//! gzip data (a `.gz` file renamed, or a compressed file under any name), UTF-16 text and
//! other bytes that are not UTF-8 are refused, naming what the file holds. The callers read
//! the bytes; this module only looks at them (the vocabulary names no file API);
//! [`decode_io`] is [`decode`] with the reason as an I/O error, for a reader's one error path.

use std::fmt;

/// Why a file's bytes are not text this program reads.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TextError {
    /// gzip-compressed data (magic bytes `1f 8b`).
    Gzip,
    /// UTF-16 text (a UTF-16 byte-order mark).
    Utf16,
    /// Bytes that are not UTF-8, at this byte offset.
    NotUtf8 {
        /// Offset of the first invalid byte.
        offset: usize,
    },
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TextError::Gzip => write!(
                f,
                "is gzip-compressed data, not text; decompress it first (gunzip -k)"
            ),
            TextError::Utf16 => write!(
                f,
                "is UTF-16 text; save it as UTF-8 (iconv -f UTF-16 -t UTF-8)"
            ),
            TextError::NotUtf8 { offset } => write!(
                f,
                "is not UTF-8 text (an invalid byte at offset {offset}); save it as UTF-8"
            ),
        }
    }
}

impl std::error::Error for TextError {}

/// Whether `bytes` begin with gzip's magic number.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// The text of a file's bytes: UTF-8 without a leading byte-order mark.
pub fn decode(bytes: Vec<u8>) -> Result<String, TextError> {
    if is_gzip(&bytes) {
        return Err(TextError::Gzip);
    }
    if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
        return Err(TextError::Utf16);
    }
    let mut text = String::from_utf8(bytes).map_err(|e| TextError::NotUtf8 {
        offset: e.utf8_error().valid_up_to(),
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// [`decode`] for a reader's `std::fs::read(path).and_then(text::decode_io)`: why the bytes
/// are not text becomes an `InvalidData` I/O error carrying the reason, so the reader keeps
/// one error path for "cannot read" (the reading itself stays with the caller).
pub fn decode_io(bytes: Vec<u8>) -> std::io::Result<String> {
    decode(bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// `text` without a leading byte-order mark (for text already decoded elsewhere).
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_order_mark_is_dropped() {
        assert_eq!(
            decode(b"\xef\xbb\xbfname = 1".to_vec()).unwrap(),
            "name = 1"
        );
        assert_eq!(strip_bom("\u{feff}x"), "x");
        assert_eq!(decode(b"plain".to_vec()).unwrap(), "plain");
    }

    #[test]
    fn gzip_utf16_and_binary_are_named() {
        assert_eq!(decode(vec![0x1f, 0x8b, 8, 0]), Err(TextError::Gzip));
        assert_eq!(decode(vec![0xff, 0xfe, b'a', 0]), Err(TextError::Utf16));
        assert_eq!(
            decode(b"ab\xffc".to_vec()),
            Err(TextError::NotUtf8 { offset: 2 })
        );
        assert!(TextError::Gzip.to_string().contains("gzip"));
    }
}
