//! Values quoted in error messages, cut to a length one line can carry.
//!
//! An error quotes what it refuses: a tool name, a key, a JSON pointer, a
//! string where a number belongs, a parser's own rendering of the value.
//! That is the user's data and may be megabytes long, where an error is one
//! line. [`quote`] shows a value in backticks, cut to
//! [`QUOTED_CHARS`](crate::defaults::QUOTED_CHARS) characters with its
//! length said; [`message`] does the same to every quoted span (in
//! backticks or double quotes) of a message already made, ours or a
//! parser's, and then cuts the middle out of any line still longer than
//! [`ERROR_LINE_BYTES`](crate::defaults::ERROR_LINE_BYTES). The error types
//! at the edges (`sparring_io::Error`, `sparring_score::Error`,
//! `sparring::Error`) pass their messages through [`message`], so no error
//! line reaches 4 KB whatever the input.
//!
//! ```
//! use sparring_types::clip;
//! let long = "x".repeat(1_000_000);
//! let error = format!("tool name `{long}` is too long");
//! let shown = clip::message(&error);
//! assert!(shown.len() < 400);
//! assert!(shown.ends_with("…` (1000000 characters) is too long"));
//! assert_eq!(clip::message("tool name `a b` is invalid"), "tool name `a b` is invalid");
//! ```

use crate::defaults::{ERROR_LINE_BYTES, QUOTED_CHARS};
use std::borrow::Cow;
use std::fmt::Write as _;

/// `value` in backticks, cut to [`QUOTED_CHARS`] characters with its length
/// said when longer: `` `abc…` (1000000 characters) ``.
pub fn quote(value: &str) -> String {
    let mut out = String::new();
    push_span(&mut out, '`', value);
    out
}

/// `text` with every quoted span longer than [`QUOTED_CHARS`] characters cut
/// as [`quote`] cuts a value, and every line still longer than
/// [`ERROR_LINE_BYTES`] cut in the middle (its start and end kept, the
/// bytes cut counted). A short message comes back as it is.
pub fn message(text: &str) -> Cow<'_, str> {
    let flat = flat_spans(text);
    if flat.len() <= QUOTED_CHARS {
        return flat;
    }
    let mut out = String::with_capacity(flat.len().min(2 * ERROR_LINE_BYTES));
    for (i, line) in flat.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let quoted = spans(line);
        out.push_str(&cut_middle(&quoted));
    }
    if out == *flat { flat } else { Cow::Owned(out) }
}

/// `text` with the line breaks inside its backtick spans written `\n` and
/// `\r`: a quoted value (a parser quoting a string of the input) never
/// breaks an error into lines that are not its own.
fn flat_spans(text: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let mut copied = 0;
    let mut at = 0;
    while let Some(open) = text[at..].find('`').map(|i| at + i) {
        let Some(close) = text[open + 1..].find('`').map(|i| open + 1 + i) else {
            break;
        };
        let body = &text[open + 1..close];
        if body.contains(['\n', '\r']) {
            out.push_str(&text[copied..=open]);
            out.push_str(&body.replace('\n', "\\n").replace('\r', "\\r"));
            copied = close;
        }
        at = close + 1;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// One line with its long quoted spans cut. A span opens with `` ` `` or
/// `"` and closes with the same character (a backslash escapes the next
/// character inside double quotes, as JSON and Rust write strings); a quote
/// that never closes leaves the rest of the line as it is.
fn spans(line: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let mut copied = 0;
    let mut rest = line.char_indices();
    while let Some((open_at, open)) = rest.next() {
        if open != '`' && open != '"' {
            continue;
        }
        let body_at = open_at + open.len_utf8();
        let mut escaped = false;
        let mut close_at = None;
        for (at, c) in rest.by_ref() {
            if escaped {
                escaped = false;
            } else if c == '\\' && open == '"' {
                escaped = true;
            } else if c == open {
                close_at = Some(at);
                break;
            }
        }
        let Some(close_at) = close_at else { break };
        let body = &line[body_at..close_at];
        if body.len() > QUOTED_CHARS && body.chars().count() > QUOTED_CHARS {
            out.push_str(&line[copied..open_at]);
            push_span(&mut out, open, body);
            copied = close_at + open.len_utf8();
        }
    }
    if copied == 0 {
        return Cow::Borrowed(line);
    }
    out.push_str(&line[copied..]);
    Cow::Owned(out)
}

/// `body` between `quote` characters, cut to [`QUOTED_CHARS`] with its
/// length after the closing quote when longer.
fn push_span(out: &mut String, quote: char, body: &str) {
    out.push(quote);
    match body.char_indices().nth(QUOTED_CHARS) {
        None => {
            out.push_str(body);
            out.push(quote);
        }
        Some((end, _)) => {
            out.push_str(&body[..end]);
            out.push('…');
            out.push(quote);
            let _ = write!(out, " ({} characters)", body.chars().count());
        }
    }
}

/// A line longer than [`ERROR_LINE_BYTES`] with its middle cut out: two
/// thirds of the room for its start (what is wrong and where), a quarter
/// for its end (a parser's "expected …", a hint).
fn cut_middle(line: &str) -> Cow<'_, str> {
    if line.len() <= ERROR_LINE_BYTES {
        return Cow::Borrowed(line);
    }
    let head = floor_char_boundary(line, ERROR_LINE_BYTES * 2 / 3);
    let tail = ceil_char_boundary(line, line.len() - ERROR_LINE_BYTES / 4);
    Cow::Owned(format!(
        "{} … ({} bytes cut) … {}",
        &line[..head],
        tail - head,
        &line[tail..]
    ))
}

fn floor_char_boundary(s: &str, mut at: usize) -> usize {
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_char_boundary(s: &str, mut at: usize) -> usize {
    while !s.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_values_and_messages_are_kept() {
        assert_eq!(quote("get_order"), "`get_order`");
        let m = format!("unknown key `{}`, did you mean `name`?", "k".repeat(150));
        assert!(matches!(message(&m), Cow::Borrowed(_)));
    }

    #[test]
    fn a_long_value_is_cut_with_its_length() {
        let q = quote(&"é".repeat(1000));
        assert_eq!(
            q.chars().count(),
            QUOTED_CHARS + 3 + " (1000 characters)".len()
        );
        assert!(q.ends_with("é…` (1000 characters)"), "{q}");
    }

    #[test]
    fn every_long_span_is_cut_backticks_and_json_strings_alike() {
        let long = "y".repeat(5000);
        let m = format!(
            "at `/tools/0/{long}`: invalid type: string \"{long}\\\"q\", expected f64 at line 1 column 9000"
        );
        let shown = message(&m);
        assert!(shown.len() < 1000, "{}", shown.len());
        assert!(shown.starts_with("at `/tools/0/yyy"), "{shown}");
        assert!(
            shown.contains("…` (5009 characters): invalid type"),
            "{shown}"
        );
        assert!(
            shown.ends_with("…\" (5003 characters), expected f64 at line 1 column 9000"),
            "{shown}"
        );
    }

    #[test]
    fn a_long_line_without_quotes_is_cut_in_the_middle_and_hints_stay() {
        let m = format!("found [{}]\nhint: do this", "1, ".repeat(10_000));
        let shown = message(&m);
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(
            lines[0].len() <= ERROR_LINE_BYTES + 40,
            "{}",
            lines[0].len()
        );
        assert!(lines[0].contains(" bytes cut) … "), "{}", lines[0]);
        assert_eq!(lines[1], "hint: do this");
        // Cut at character boundaries.
        let wide = "ü".repeat(10_000);
        assert!(message(&wide).len() < 4096);
    }

    #[test]
    fn an_unclosed_quote_leaves_the_line_to_the_line_cut() {
        let m = format!("oops `{}", "z".repeat(10_000));
        assert!(message(&m).len() <= ERROR_LINE_BYTES + 40);
    }
}

/// serde_json's nesting limit, which it states as "recursion limit
/// exceeded" (`serde_json::de`'s `remaining_depth`).
pub const JSON_MAX_DEPTH: usize = 128;

/// A JSON parser's error in the words every reader uses: serde_json's
/// "recursion limit exceeded" (its own internals) is said as how deep the
/// input is nested, with the place; any other error as serde_json words it.
pub fn json_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    if text.starts_with("recursion limit exceeded") {
        format!(
            "lists and maps are nested more than {JSON_MAX_DEPTH} deep at line {} column {}",
            e.line(),
            e.column()
        )
    } else {
        text
    }
}

#[cfg(test)]
mod json_tests {
    #![allow(clippy::unwrap_used)]

    #[test]
    fn a_quoted_value_never_breaks_the_error_into_lines() {
        let said = super::message("unknown variant `sys\ntem\r\nx`, expected `user`\nhint: fix it");
        assert_eq!(
            said,
            "unknown variant `sys\\ntem\\r\\nx`, expected `user`\nhint: fix it"
        );
        let plain = "line `a`\nhint: `b`";
        assert!(matches!(
            super::message(plain),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_json_error_never_says_recursion_limit() {
        let deep = "[".repeat(200);
        let e = serde_json::from_str::<serde_json::Value>(&deep).unwrap_err();
        assert!(e.to_string().contains("recursion limit"));
        let said = super::json_error(&e);
        assert!(
            said.starts_with("lists and maps are nested more than 128 deep at line 1"),
            "{said}"
        );
        let e = serde_json::from_str::<serde_json::Value>("{").unwrap_err();
        assert_eq!(super::json_error(&e), e.to_string());
    }
}
