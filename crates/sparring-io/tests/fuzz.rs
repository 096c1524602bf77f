//! Fuzzing by proptest (a nightly `cargo fuzz` cannot be had here): the
//! spec parser, the rows readers and the agent-protocol reader fed their
//! corpus (`tests/fuzz/<target>/`, in the repository) and then random
//! mutations of it and arbitrary bytes. Each target must answer every input
//! without a panic, with an error that is one line naming where, and never
//! with a library's internals.
//!
//! Each target runs [`cases`] random inputs (a few seconds in all in a
//! normal `cargo test`); `SPARRING_FUZZ_CASES=N` runs N per target for a
//! longer hunt. A failing input is saved by proptest under
//! `proptest-regressions/` and replayed first on the next run; add it to
//! the target's corpus once fixed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sparring_io::command_agent::{ReplyLine, read_reply_line};
use sparring_io::rows::{for_each_score_row, parse_rows};
use sparring_io::spec_file::load_spec;
use sparring_score::input::parse_score_rows;
use sparring_testkit::fuzz_cases;
use std::path::{Path, PathBuf};

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz")
        .join(target);
    let mut out: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no corpus in {}", dir.display());
    out
}

/// One edit of a byte string.
#[derive(Clone, Debug)]
enum Edit {
    Flip(usize, u8),
    Insert(usize, u8),
    Delete(usize, usize),
    /// Copies a slice to another place (grows nesting and repeats keys).
    Splice(usize, usize, usize),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    // Bytes that matter to the formats more often than the rest.
    let byte = prop_oneof![
        any::<u8>(),
        prop::sample::select(b"{}[]:,\"'\n -#&*!|>\\0123456789eE.".to_vec()),
    ];
    prop_oneof![
        (any::<usize>(), byte.clone()).prop_map(|(i, b)| Edit::Flip(i, b)),
        (any::<usize>(), byte).prop_map(|(i, b)| Edit::Insert(i, b)),
        (any::<usize>(), 1usize..16).prop_map(|(i, n)| Edit::Delete(i, n)),
        (any::<usize>(), 1usize..64, any::<usize>()).prop_map(|(i, n, to)| Edit::Splice(i, n, to)),
        any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn apply(base: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut b = base.to_vec();
    for e in edits {
        let len = b.len().max(1);
        match *e {
            Edit::Flip(i, x) if !b.is_empty() => b[i % len] = x,
            Edit::Insert(i, x) => b.insert(i % (b.len() + 1), x),
            Edit::Delete(i, n) if !b.is_empty() => {
                let at = i % len;
                let end = (at + n).min(b.len());
                b.drain(at..end);
            }
            Edit::Splice(i, n, to) if !b.is_empty() => {
                let at = i % len;
                let end = (at + n).min(b.len());
                let piece = b[at..end].to_vec();
                let to = to % (b.len() + 1);
                b.splice(to..to, piece);
            }
            Edit::Truncate(i) => b.truncate(i % (b.len() + 1)),
            _ => {}
        }
    }
    b
}

/// Corpus entries with random edits, or arbitrary bytes.
fn inputs(corpus: Vec<(PathBuf, Vec<u8>)>) -> impl Strategy<Value = (usize, Vec<u8>)> {
    let n = corpus.len();
    let bases: Vec<Vec<u8>> = corpus.into_iter().map(|(_, b)| b).collect();
    prop_oneof![
        4 => (0..n, prop::collection::vec(edit(), 1..12))
            .prop_map(move |(i, edits)| (i, apply(&bases[i], &edits))),
        1 => (0..n, prop::collection::vec(any::<u8>(), 0..512)),
    ]
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        // Failures are saved beside this file, in `proptest-regressions/`.
        source_file: Some(file!()),
        ..Config::default()
    })
}

/// What every error must look like: one line, naming the file, no library
/// internals.
fn check_error(message: &str, file: &str) {
    let first = message.lines().next().unwrap_or("");
    assert!(!first.trim().is_empty(), "empty error");
    assert!(
        first.contains(file),
        "the error does not name `{file}`: {message}"
    );
    for internal in [
        "DuplicateKeyPolicy",
        "Options",
        "budget breached",
        "BudgetBreach",
        "Nodes {",
        "panicked",
    ] {
        assert!(!message.contains(internal), "library internals: {message}");
    }
    // A hint may follow on its own line; nothing else may.
    for line in message.lines().skip(1) {
        assert!(
            line.starts_with("hint:"),
            "a second line that is no hint: {message}"
        );
    }
}

fn spec_case(dir: &Path, ext: &str, bytes: &[u8]) {
    let path = dir.join(format!("spec.{ext}"));
    std::fs::write(&path, bytes).unwrap();
    match load_spec(&path) {
        Ok(_) => {}
        Err(e) => check_error(&e.to_string(), "spec."),
    }
}

#[test]
fn spec_parser() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus("spec");
    let exts: Vec<String> = corpus
        .iter()
        .map(|(p, _)| p.extension().unwrap().to_string_lossy().into_owned())
        .collect();
    for ((path, bytes), ext) in corpus.iter().zip(&exts) {
        spec_case(dir.path(), ext, bytes);
        // The corpus's real specs load.
        if !path.to_string_lossy().contains("duplicate")
            && !path.to_string_lossy().contains("aliases")
            && !path.to_string_lossy().contains("deep")
        {
            load_spec(&{
                let p = dir.path().join(format!("ok.{ext}"));
                std::fs::write(&p, bytes).unwrap();
                p
            })
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
    runner(fuzz_cases(1000))
        .run(&inputs(corpus), |(i, bytes)| {
            spec_case(dir.path(), &exts[i], &bytes);
            Ok(())
        })
        .unwrap();
}

fn rows_case(dir: &Path, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let path = Path::new("rows.jsonl");
    let score = parse_score_rows(path, &text).map_err(sparring_io::Error::from);
    let errors = [
        parse_rows(path, &text).err().map(|e| e.to_string()),
        score.as_ref().err().map(ToString::to_string),
    ];
    for message in errors.into_iter().flatten() {
        check_error(&message, "rows.jsonl");
        assert!(message.contains("at line "), "no line named: {message}");
    }
    // Read a line at a time from a file, the same rows or the same error.
    let file = dir.join("rows.jsonl");
    std::fs::write(&file, text.as_bytes()).unwrap();
    let mut streamed = Vec::new();
    let read = for_each_score_row(&file, |row| streamed.push(row));
    match (&score, read) {
        (Ok(rows), Ok(n)) => {
            assert_eq!(&streamed, rows);
            assert_eq!(n, rows.len() as u64);
        }
        (Err(a), Err(b)) => assert_eq!(
            a.to_string(),
            b.to_string()
                .replace(&file.display().to_string(), "rows.jsonl")
        ),
        (a, b) => panic!("text: {a:?}\nstreamed: {b:?}"),
    }
}

#[test]
fn rows_readers() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus("rows");
    for (_, bytes) in &corpus {
        rows_case(dir.path(), bytes);
    }
    // Two rows with one id are refused, naming both lines.
    let dup = corpus
        .iter()
        .find(|(p, _)| p.to_string_lossy().contains("duplicate-ids"))
        .unwrap();
    let e = parse_score_rows(Path::new("rows.jsonl"), &String::from_utf8_lossy(&dup.1))
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 2") && e.contains("also on line 1"), "{e}");
    runner(fuzz_cases(5000))
        .run(&inputs(corpus), |(_, bytes)| {
            rows_case(dir.path(), &bytes);
            Ok(())
        })
        .unwrap();
}

/// The reader hands `read_reply_line` one line at a time, newline kept.
fn protocol_case(bytes: &[u8]) {
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        protocol_line(line);
    }
}

fn protocol_line(bytes: &[u8]) {
    match read_reply_line(bytes) {
        ReplyLine::Reply { id, .. } => {
            let value: serde_json::Value = serde_json::from_slice(bytes).unwrap();
            assert_eq!(value["id"].as_str(), Some(id.as_str()));
        }
        ReplyLine::Violation(reason) => {
            assert!(!reason.contains('\n'), "{reason}");
            assert!(reason.starts_with("the agent "), "{reason}");
        }
        ReplyLine::NotUtf8 { shown, .. } => {
            assert!(std::str::from_utf8(bytes).is_err());
            assert!(shown.chars().count() <= 120);
        }
        ReplyLine::Blank => {
            assert!(String::from_utf8_lossy(bytes).trim().is_empty());
        }
    }
}

#[test]
fn agent_protocol_reader() {
    let corpus = corpus("protocol");
    for (path, bytes) in &corpus {
        protocol_case(bytes);
        let name = path.file_name().unwrap().to_string_lossy();
        let line = read_reply_line(bytes);
        match name.as_ref() {
            "not-utf8.txt" => assert!(
                matches!(&line, ReplyLine::NotUtf8 { id: Some(id), .. } if id == "r-5"),
                "{line:?}"
            ),
            "not-json.txt" | "no-id.txt" | "number-id.txt" => {
                assert!(matches!(line, ReplyLine::Violation(_)), "{name}: {line:?}");
            }
            "blank.txt" => assert!(matches!(line, ReplyLine::Blank)),
            "text-reply.txt" | "tool-calls.txt" | "parts.txt" => assert!(
                matches!(line, ReplyLine::Reply { reply: Ok(_), .. }),
                "{name}: {line:?}"
            ),
            _ => assert!(
                matches!(line, ReplyLine::Reply { reply: Err(_), .. }),
                "{name}: {line:?}"
            ),
        }
    }
    runner(fuzz_cases(20000))
        .run(&inputs(corpus), |(_, bytes)| {
            protocol_case(&bytes);
            Ok(())
        })
        .unwrap();
}
