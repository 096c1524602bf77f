//! Text files read as UTF-8, a line at a time or whole: a byte that is not
//! UTF-8 is an error naming its line and column (in bytes, as JSON parsers
//! count them), never "stream did not contain valid utf-8".

use crate::Error;
use std::io::BufRead as _;
use std::path::Path;

/// Reads a whole file as UTF-8 text.
///
/// # Errors
///
/// [`Error::Read`] when it cannot be read; [`Error::Invalid`] at the line
/// and column of the first byte that is not UTF-8.
pub(crate) fn read_utf8(path: &Path) -> Result<String, Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::read(path, &e))?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        not_utf8(path, e.as_bytes(), at, 1)
    })
}

/// Hands each line of a file to `each` as it is read, with its 1-based
/// number and whether it is a torn last line (no newline after it); the
/// newline and a carriage return before it are cut, as `str::lines` does.
/// Only the line being read is held.
///
/// # Errors
///
/// As [`read_utf8`], for the first line that is not UTF-8; and whatever
/// `each` returns.
pub(crate) fn for_each_line(
    path: &Path,
    mut each: impl FnMut(usize, &str, bool) -> Result<(), Error>,
) -> Result<(), Error> {
    let file = std::fs::File::open(path).map_err(|e| Error::read(path, &e))?;
    let mut reader = std::io::BufReader::new(file);
    let mut buf = Vec::new();
    let mut number = 0;
    loop {
        buf.clear();
        if reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::read(path, &e))?
            == 0
        {
            return Ok(());
        }
        number += 1;
        let torn = !buf.ends_with(b"\n");
        let line = match buf.strip_suffix(b"\n") {
            Some(l) => l.strip_suffix(b"\r").unwrap_or(l),
            None => &buf,
        };
        let line =
            std::str::from_utf8(line).map_err(|e| not_utf8(path, line, e.valid_up_to(), number))?;
        each(number, line, torn)?;
    }
}

/// The error for the byte at `offset` of `bytes` (text whose first line is
/// line `first_line` of the file), which is not UTF-8.
fn not_utf8(path: &Path, bytes: &[u8], offset: usize, first_line: usize) -> Error {
    let before = &bytes[..offset.min(bytes.len())];
    // The lines before the byte's own: one fewer than the pieces.
    let line = first_line + before.split(|b| *b == b'\n').count() - 1;
    let start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    let byte = bytes
        .get(offset)
        .map_or_else(String::new, |b| format!(" (byte 0x{b:02X})"));
    Error::invalid(
        path,
        format!("line {line}, column {}", offset - start + 1),
        format!("not UTF-8{byte}; the file must be UTF-8 text (hint: re-save it as UTF-8)"),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_bad_byte_is_found_by_line_and_column() {
        let e = not_utf8(Path::new("f"), b"ab\ncd\xFFe", 5, 1).to_string();
        assert_eq!(
            e,
            "`f`: at line 2, column 3: not UTF-8 (byte 0xFF); the file must be UTF-8 text (hint: re-save it as UTF-8)"
        );
        let e = not_utf8(Path::new("f"), b"\xC3", 0, 7).to_string();
        assert!(e.contains("line 7, column 1"), "{e}");
    }
}
