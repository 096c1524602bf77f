//! The proptest driver of the fuzz targets (`sparring_fuzz`): each target
//! replays its corpus and every crash input kept (`fuzz/corpus/<target>/`,
//! `fuzz/artifacts/<target>/`), then runs a bounded number of random inputs: corpus
//! entries with random edits, or arbitrary bytes. A few seconds in all in a
//! normal `cargo test`; `SPARRING_FUZZ_CASES=N` runs N per target for a
//! longer hunt (`SPARRING_FUZZ_SEED=N` for other inputs than the fixed
//! ones). A failing input is saved by proptest beside this file
//! (`fuzz.proptest-regressions`) and replayed first on the next run; add it
//! to the target's corpus once fixed. The libFuzzer driver of the same
//! targets is `fuzz/` (`.ci/run`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sparring_fuzz::{Scratch, corpus};
use sparring_io::command_agent::{ReplyLine, read_reply_line};
use std::path::{Path, PathBuf};

/// One edit of a byte string.
#[derive(Clone, Debug)]
enum Edit {
    Flip(usize, u8),
    Insert(usize, u8),
    Delete(usize, usize),
    /// Copies a slice to another place (grows nesting and repeats keys).
    Splice(usize, usize, usize),
    /// Repeats a slice in place, up to tens of thousands of bytes: a value
    /// far longer than any the corpus holds (issue 39's megabyte names).
    Grow(usize, usize, usize),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    // Bytes that matter to the formats more often than the rest, and bytes
    // that are never UTF-8 (a byte-order mark's start among them).
    let byte = prop_oneof![
        any::<u8>(),
        prop::sample::select(b"{}[]:,\"'\n -#&*!|>\\0123456789eE.\xEF\xFF\xC3".to_vec()),
    ];
    prop_oneof![
        4 => (any::<usize>(), byte.clone()).prop_map(|(i, b)| Edit::Flip(i, b)),
        4 => (any::<usize>(), byte).prop_map(|(i, b)| Edit::Insert(i, b)),
        4 => (any::<usize>(), 1usize..16).prop_map(|(i, n)| Edit::Delete(i, n)),
        4 => (any::<usize>(), 1usize..64, any::<usize>()).prop_map(|(i, n, to)| Edit::Splice(i, n, to)),
        1 => (any::<usize>(), 1usize..8, 1usize..10_000).prop_map(|(i, n, times)| Edit::Grow(i, n, times)),
        4 => any::<usize>().prop_map(Edit::Truncate),
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
            Edit::Grow(i, n, times) if !b.is_empty() => {
                let at = i % len;
                let end = (at + n).min(b.len());
                let piece = b[at..end].repeat(times);
                b.splice(end..end, piece);
            }
            Edit::Truncate(i) => b.truncate(i % (b.len() + 1)),
            _ => {}
        }
    }
    b
}

/// Corpus entries with random edits, or arbitrary bytes.
fn inputs(corpus: &[(PathBuf, Vec<u8>)]) -> impl Strategy<Value = Vec<u8>> + use<> {
    let n = corpus.len();
    let bases: Vec<Vec<u8>> = corpus.iter().map(|(_, b)| b.clone()).collect();
    prop_oneof![
        4 => (0..n, prop::collection::vec(edit(), 1..12))
            .prop_map(move |(i, edits)| apply(&bases[i], &edits)),
        1 => prop::collection::vec(any::<u8>(), 0..512),
    ]
}

/// The random inputs of a `cargo test` are the same on every run (seed
/// [`DEFAULT_SEED`]), so a test run passes or fails by the code, not by the
/// draw; `SPARRING_FUZZ_SEED=N` draws others for a hunt.
const DEFAULT_SEED: u64 = 39;

fn runner(cases: u32) -> TestRunner {
    let seed = std::env::var("SPARRING_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SEED);
    TestRunner::new(Config {
        cases,
        // Failures are saved beside this file.
        source_file: Some(file!()),
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed),
        ..Config::default()
    })
}

/// Replays `target`'s kept inputs, then `default` random ones (or
/// `SPARRING_FUZZ_CASES`).
fn fuzz(target: &str, default: u32, scratch: &Scratch) -> Vec<(PathBuf, Vec<u8>)> {
    let kept = corpus(target);
    assert!(!kept.is_empty(), "no corpus for `{target}`");
    for (path, bytes) in &kept {
        let replay = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            sparring_fuzz::run(target, scratch, bytes);
        }));
        assert!(replay.is_ok(), "{target}: {} fails", path.display());
    }
    runner(sparring_testkit::fuzz_cases(default))
        .run(&inputs(&kept), |bytes| {
            sparring_fuzz::run(target, scratch, &bytes);
            Ok(())
        })
        .unwrap();
    kept
}

fn scratch() -> (tempfile::TempDir, Scratch) {
    let dir = tempfile::tempdir().unwrap();
    let scratch = Scratch::new(dir.path().to_owned());
    (dir, scratch)
}

fn named<'a>(kept: &'a [(PathBuf, Vec<u8>)], name: &str) -> &'a [u8] {
    &kept
        .iter()
        .find(|(p, _)| p.file_name().is_some_and(|f| f == name))
        .unwrap_or_else(|| panic!("no corpus entry `{name}`"))
        .1
}

#[test]
fn spec_parser() {
    let (_dir, scratch) = scratch();
    let kept = fuzz("spec", 300, &scratch);
    // The corpus's real specs load, each in its own format.
    for (path, bytes) in &kept {
        let name = path.file_name().unwrap().to_string_lossy();
        if [
            "support-desk.yaml",
            "minimal.json",
            "minimal.toml",
            "unicode.yaml",
        ]
        .contains(&name.as_ref())
        {
            let file = scratch.file(&name, bytes);
            sparring_io::spec_file::load_spec(&file)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
}

#[test]
fn rows_readers() {
    let (_dir, scratch) = scratch();
    let kept = fuzz("rows", 2000, &scratch);
    // Two rows with one id are refused, naming both lines.
    let dup = named(&kept, "duplicate-ids.jsonl");
    let e = sparring_score::input::parse_score_rows(
        Path::new("rows.jsonl"),
        &String::from_utf8_lossy(dup),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("line 2") && e.contains("also on line 1"), "{e}");
}

#[test]
fn agent_protocol_reader() {
    let (_dir, scratch) = scratch();
    let kept = fuzz("protocol", 20_000, &scratch);
    for (path, bytes) in &kept {
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
}

#[test]
fn reports() {
    let (_dir, scratch) = scratch();
    fuzz("report", 300, &scratch);
}
