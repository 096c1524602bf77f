//! The fuzz targets of sparring's readers: what each is fed and what it
//! must answer, shared by two drivers.
//!
//! - The **proptest driver** (`tests/fuzz.rs`) runs in every `cargo test`:
//!   each target's corpus and every crash input kept, then a bounded number
//!   of random mutations of them and of arbitrary bytes.
//! - The **libFuzzer driver** (`fuzz/`, `cargo fuzz`, built with the stable
//!   toolchain's `RUSTC_BOOTSTRAP=1`) runs each target for a bounded time in
//!   `.ci/run`, coverage-guided, from the same corpus; a crash it finds is
//!   saved under `fuzz/artifacts/<target>/`, kept in the repository, and
//!   replayed by the proptest driver from then on.
//!
//! The targets ([`TARGETS`]):
//! - [`spec`]: bytes as a spec file, read as YAML, JSON and TOML
//!   ([`sparring_io::spec_file::load_spec`]).
//! - [`rows`]: bytes as a rows file, through the strict reader
//!   ([`sparring_io::rows::read_rows`]), the lenient one for scoring, the
//!   streaming one, and the text parsers.
//! - [`protocol`]: bytes as lines an agent prints
//!   ([`sparring_io::command_agent::read_reply_line`]).
//! - [`report`]: bytes as rows scored and rendered: `report` (text and
//!   JSON), `delta` and `eval-variance`.
//!
//! Every target must answer every input without a panic; an error must be
//! one line (a `hint:` line may follow) naming the file, a rows error its
//! line, no line of it 4 KB or longer ([`ERROR_LINE_MAX`]), and never with a
//! library's internals. A property that does not hold panics: both drivers
//! report a panic as a finding, with the input.
//!
//! ```
//! let scratch = sparring_fuzz::Scratch::new(std::env::temp_dir().join("fuzz-doc"));
//! sparring_fuzz::rows(&scratch, b"{\"task_id\": \"t\", \"reward\": 1}\n");
//! sparring_fuzz::protocol(b"{\"id\": \"r-1\", \"message\": {\"role\": \"assistant\", \"content\": \"hi\"}}\n");
//! ```

// A property that does not hold is a panic, by design: the drivers catch it
// as a finding.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use sparring_io::command_agent::{ReplyLine, read_reply_line};
use sparring_io::rows::{for_each_score_row, parse_rows, read_rows, read_score_rows};
use sparring_io::spec_file::load_spec;
use sparring_score::input::parse_score_rows;
use std::path::{Path, PathBuf};

/// The targets, by the name of their corpus folder and libFuzzer binary.
pub const TARGETS: [&str; 4] = ["spec", "rows", "protocol", "report"];

/// The longest line an error may have, in bytes (issue 39: "no error line
/// is longer than 4 KB").
pub const ERROR_LINE_MAX: usize = 4096;

/// Bootstrap resamples of the fuzzed reports: their figures are not under
/// test, only that every input is answered.
const REPORT_RESAMPLES: usize = 50;

/// `fuzz/` at the top of the repository: the corpus and the crash inputs.
pub fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// A target's inputs kept in the repository: its corpus
/// (`fuzz/corpus/<target>/`) and the crash inputs libFuzzer found
/// (`fuzz/artifacts/<target>/`), by path, sorted.
pub fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for kind in ["corpus", "artifacts"] {
        let dir = fuzz_dir().join(kind).join(target);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_file() {
                let bytes =
                    std::fs::read(&path).expect("a corpus file the listing just found is readable");
                out.push((path, bytes));
            }
        }
    }
    out.sort();
    out
}

/// A folder the file targets write their input into.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// Files go in `dir`, created if needed.
    pub fn new(dir: PathBuf) -> Self {
        std::fs::create_dir_all(&dir)
            .expect("the scratch directory can be made (a test harness: failing is the signal)");
        Self(dir)
    }

    /// Writes `bytes` as the file `name` in it.
    pub fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, bytes)
            .expect("a scratch file can be written (a test harness: failing is the signal)");
        path
    }
}

/// What every error must look like: one line naming `file` (a `hint:` line
/// may follow), no line [`ERROR_LINE_MAX`] bytes or longer, no library
/// internals.
pub fn check_error(message: &str, file: &str) {
    let first = message.lines().next().unwrap_or("");
    assert!(!first.trim().is_empty(), "empty error");
    assert!(
        first.contains(file),
        "the error does not name `{file}`: {}",
        head(message)
    );
    for internal in [
        "DuplicateKeyPolicy",
        "Options",
        "budget breached",
        "BudgetBreach",
        "Nodes {",
        "panicked",
        "recursion limit",
    ] {
        assert!(
            !message.contains(internal),
            "library internals: {}",
            head(message)
        );
    }
    for (i, line) in message.lines().enumerate() {
        assert!(
            i == 0 || line.starts_with("hint:"),
            "a second line that is no hint: {}",
            head(message)
        );
        assert!(
            line.len() < ERROR_LINE_MAX,
            "an error line of {} bytes: {}",
            line.len(),
            head(line)
        );
    }
}

/// The start of a long text, for a failure's message.
fn head(text: &str) -> &str {
    let mut end = text.len().min(500);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The spec target: `bytes` as a spec in each format.
pub fn spec(scratch: &Scratch, bytes: &[u8]) {
    for ext in ["yaml", "json", "toml"] {
        let path = scratch.file(&format!("spec.{ext}"), bytes);
        if let Err(e) = load_spec(&path) {
            check_error(&e.to_string(), "spec.");
        }
    }
}

/// The rows target: `bytes` as a rows file through every reader. The
/// streaming reader gives the text parser's rows or error; a byte that is
/// not UTF-8 is an error at its line (or an earlier line's error).
pub fn rows(scratch: &Scratch, bytes: &[u8]) {
    let file = scratch.file("rows.jsonl", bytes);
    let shown = file.display().to_string();
    let mut streamed = Vec::new();
    let read = for_each_score_row(&file, |row| streamed.push(row));
    let errors = [
        read_rows(&file).err().map(|e| e.to_string()),
        read_score_rows(&file).err().map(|e| e.to_string()),
        read.as_ref().err().map(ToString::to_string),
    ];
    for message in errors.iter().flatten() {
        check_error(message, "rows.jsonl");
        assert!(
            message.contains("at line "),
            "no line named: {}",
            head(message)
        );
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => {
            let path = Path::new("rows.jsonl");
            if let Err(e) = parse_rows(path, text) {
                check_error(&e.to_string(), "rows.jsonl");
            }
            match (parse_score_rows(path, text), read) {
                (Ok(rows), Ok(n)) => {
                    assert_eq!(streamed, rows);
                    assert_eq!(n, rows.len() as u64);
                }
                (Err(a), Err(b)) => {
                    assert_eq!(a.to_string(), b.to_string().replace(&shown, "rows.jsonl"));
                }
                (a, b) => panic!("text: {a:?}\nstreamed: {b:?}"),
            }
        }
        Err(bad) => {
            let line = bytes[..bad.valid_up_to()].split(|b| *b == b'\n').count();
            let strict = errors[0]
                .as_deref()
                .expect("the strict reader read bad UTF-8");
            assert!(
                strict.contains(&format!("at line {line}, column "))
                    && strict.contains("not UTF-8"),
                "{}",
                head(strict)
            );
            let streamed = errors[2]
                .as_deref()
                .expect("the streaming reader read bad UTF-8");
            assert!(
                line_named(streamed).is_some_and(|n| n <= line),
                "the bad byte is on line {line}: {}",
                head(streamed)
            );
        }
    }
}

/// The line an error names (`at line N`).
fn line_named(message: &str) -> Option<usize> {
    let rest = &message[message.find("at line ")? + "at line ".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The agent-protocol target: each line of `bytes` as an agent's stdout
/// line (newline kept, as the reader hands it over).
pub fn protocol(bytes: &[u8]) {
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        match read_reply_line(line) {
            ReplyLine::Reply { id, .. } => {
                let value: serde_json::Value = serde_json::from_slice(line)
                    .expect("a line read as a reply is JSON (the property under test)");
                assert_eq!(value["id"].as_str(), Some(id.as_str()));
            }
            ReplyLine::Violation(reason) => {
                assert!(!reason.contains('\n'), "{reason}");
                assert!(reason.starts_with("the agent "), "{reason}");
                assert!(reason.len() < ERROR_LINE_MAX, "{}", head(&reason));
            }
            ReplyLine::NotUtf8 { shown, .. } => {
                assert!(std::str::from_utf8(line).is_err());
                assert!(shown.chars().count() <= 120);
            }
            ReplyLine::Blank => {
                assert!(String::from_utf8_lossy(line).trim().is_empty());
            }
        }
    }
}

/// The report target: `bytes` as rows scored, every report rendered as
/// text and JSON. Rows that are refused are refused with a good error.
pub fn report(bytes: &[u8]) {
    use sparring_score::{delta, eval_variance, report};
    let text = String::from_utf8_lossy(bytes);
    let rows = match parse_score_rows(Path::new("rows.jsonl"), &text) {
        Ok(rows) => rows,
        Err(e) => {
            check_error(&e.to_string(), "rows.jsonl");
            return;
        }
    };
    let options = report::ReportOptions {
        resamples: REPORT_RESAMPLES,
        ..report::ReportOptions::default()
    };
    // A report that cannot be made says why in a message of its own.
    let unscorable = |e: sparring_score::Error| {
        let message = e.to_string();
        assert!(!message.trim().is_empty() && !message.contains("panicked"));
    };
    match report::report(&rows, &options) {
        Ok(r) => {
            let _ = report::render(&r);
            serde_json::to_string(&r).expect("a report serialises (the property under test)");
        }
        Err(e) => unscorable(e),
    }
    match delta::delta(&rows, &rows, ("a", "b"), &delta::DeltaOptions::default()) {
        Ok(d) => {
            let _ = delta::render(&d);
            serde_json::to_string(&d).expect("a delta serialises (the property under test)");
        }
        Err(e) => unscorable(e),
    }
    match eval_variance::eval_variance(&rows, "rows.jsonl") {
        Ok(v) => {
            let _ = eval_variance::render(&v);
            serde_json::to_string(&v)
                .expect("an eval-variance report serialises (the property under test)");
        }
        Err(e) => unscorable(e),
    }
}

/// A scratch folder of this process's own (`sparring-fuzz-<pid>` in the
/// temporary folder), for the libFuzzer driver, which has no test harness
/// to make one.
pub fn process_scratch() -> &'static Scratch {
    static SCRATCH: std::sync::OnceLock<Scratch> = std::sync::OnceLock::new();
    SCRATCH.get_or_init(|| {
        Scratch::new(std::env::temp_dir().join(format!("sparring-fuzz-{}", std::process::id())))
    })
}

/// Runs `target` on `bytes` (the libFuzzer driver's one entry).
pub fn run(target: &str, scratch: &Scratch, bytes: &[u8]) {
    match target {
        "spec" => spec(scratch, bytes),
        "rows" => rows(scratch, bytes),
        "protocol" => protocol(bytes),
        "report" => report(bytes),
        other => panic!("no fuzz target `{other}`"),
    }
}
