//! Rows and labels files that are not clean UTF-8 text: every reader names
//! the line and column of a byte that is not UTF-8, and a byte-order mark
//! is named as one (issue 39: "stream did not contain valid utf-8" and
//! "not JSON … line 1 column 1" named neither).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sparring_io::rows::{
    count_file, for_each_score_row, parse_rows, read_gold_labels, read_rows, read_score_rows,
};
use sparring_score::input::parse_score_rows;
use std::path::Path;

fn row_line(id: &str) -> String {
    let row = sparring_types::Row::new(
        id,
        "task_a",
        "scn_a",
        Vec::new(),
        sparring_types::EndedBy::AgentDone,
    );
    serde_json::to_string(&row).unwrap()
}

/// Three rows; the third has a byte that is not UTF-8 at `column` of its
/// line (1-based, in bytes).
fn bad_third_line() -> (Vec<u8>, usize) {
    let third = row_line("r3");
    let at = third.find("task_a").unwrap();
    let mut bytes = format!("{}\n{}\n", row_line("r1"), row_line("r2")).into_bytes();
    let mut line = third.into_bytes();
    line[at] = 0xFF;
    bytes.extend(line);
    bytes.push(b'\n');
    (bytes, at + 1)
}

#[test]
fn a_byte_that_is_not_utf8_is_named_by_line_and_column_by_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.jsonl");
    let (bytes, column) = bad_third_line();
    std::fs::write(&path, &bytes).unwrap();
    let labels = dir.path().join("labels.jsonl");
    std::fs::write(
        &labels,
        b"{\"row_id\": \"r1\", \"label\": 1}\n{\"row_id\": \"r\xE9\"}\n",
    )
    .unwrap();
    let errors = [
        ("read_rows", read_rows(&path).err().map(|e| e.to_string())),
        (
            "read_score_rows",
            read_score_rows(&path).err().map(|e| e.to_string()),
        ),
        (
            "for_each_score_row",
            for_each_score_row(&path, |_| {})
                .err()
                .map(|e| e.to_string()),
        ),
        ("count_file", count_file(&path).err().map(|e| e.to_string())),
    ];
    for (reader, error) in errors {
        let error = error.unwrap_or_else(|| panic!("{reader} read the file"));
        assert!(
            error.contains(&format!("at line 3, column {column}: not UTF-8")),
            "{reader}: {error}"
        );
        assert!(error.contains("0xFF"), "{reader}: {error}");
        assert!(error.contains("rows.jsonl"), "{reader}: {error}");
    }
    let error = read_gold_labels(&labels).unwrap_err().to_string();
    assert!(
        error.contains("at line 2, column 14: not UTF-8") && error.contains("0xE9"),
        "{error}"
    );
}

#[test]
fn a_byte_order_mark_is_named() {
    let text = format!("\u{feff}{}\n{}\n", row_line("r1"), row_line("r2"));
    let path = Path::new("rows.jsonl");
    let strict = parse_rows(path, &text).unwrap_err().to_string();
    let lenient = parse_score_rows(path, &text).unwrap_err().to_string();
    for error in [strict, lenient] {
        assert!(
            error.contains("at line 1") && error.contains("byte-order mark"),
            "{error}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rows.jsonl");
    std::fs::write(&file, &text).unwrap();
    let streamed = for_each_score_row(&file, |_| {}).unwrap_err().to_string();
    assert!(streamed.contains("byte-order mark"), "{streamed}");
}
