//! What every test binary of this crate needs: the `sparring` binary, run
//! to its end, and the files a run leaves behind.

// Each test binary uses its own share of these.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub(crate) use sparring_testkit::workspace;

/// The `sparring` binary, run from the workspace root with no progress bar.
pub(crate) fn sparring() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sparring"));
    c.current_dir(workspace());
    c.env("NO_PROGRESS", "1");
    c
}

/// The shipped example's spec.
pub(crate) fn example_spec() -> PathBuf {
    workspace().join("examples/support-desk/spec.yaml")
}

/// The shipped example's agent, as a command line.
pub(crate) fn example_agent() -> String {
    format!(
        "python3 {}",
        workspace().join("examples/support-desk/agent.py").display()
    )
}

/// A misbehaving agent (or world, or grader) of `tests/agents/`.
pub(crate) fn agent_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/agents")
        .join(name)
}

/// `sparring simulate SPEC --agent AGENT --out OUT`, for the caller to add
/// arguments to and run.
pub(crate) fn simulate_cmd(spec: impl AsRef<Path>, agent: &str, out: impl AsRef<Path>) -> Command {
    let mut c = sparring();
    c.arg("simulate")
        .arg(spec.as_ref())
        .args(["--agent", agent, "--out"])
        .arg(out.as_ref());
    c
}

/// Running a command to its end.
pub(crate) trait Run {
    /// Its output, whatever its exit code.
    fn run(&mut self) -> Output;
    /// Its output, once it has exited 0 (else the test fails with its
    /// stderr).
    fn run_ok(&mut self) -> Output;
    /// Its output, whatever its exit code, with `input` written to its
    /// stdin.
    fn run_with_stdin(&mut self, input: &str) -> Output;
}

impl Run for Command {
    fn run(&mut self) -> Output {
        self.output().unwrap()
    }

    fn run_ok(&mut self) -> Output {
        let o = self.run();
        assert!(o.status.success(), "{}", stderr(&o));
        o
    }

    fn run_with_stdin(&mut self, input: &str) -> Output {
        use std::io::Write as _;
        use std::process::Stdio;
        let mut child = self
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    }
}

/// A command's stderr as text.
pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A command's stdout, parsed as one JSON document.
pub(crate) fn stdout_json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}); stderr: {}", stderr(o)))
}

/// The command exited with `code` (else the test fails with its stderr).
pub(crate) fn assert_exit(o: &Output, code: i32) {
    assert_eq!(o.status.code(), Some(code), "{}", stderr(o));
}

/// The command's stderr holds `needle` (else the test fails with it).
pub(crate) fn assert_stderr_has(o: &Output, needle: &str) {
    let err = stderr(o);
    assert!(err.contains(needle), "`{needle}` not in: {err}");
}

/// Each line of a JSON Lines file, parsed.
pub(crate) fn read_rows(path: &Path) -> Vec<Value> {
    json_lines(&std::fs::read_to_string(path).unwrap())
}

/// Each line of JSON Lines text (a file, a command's stdout), parsed.
pub(crate) fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("line is not JSON ({e}): {l}")))
        .collect()
}

/// The texts of a JSON array.
pub(crate) fn strs(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

/// The text field `key` of each of `items` (rows, or a JSON array's
/// entries).
pub(crate) fn texts<'a>(items: impl IntoIterator<Item = &'a Value>, key: &str) -> Vec<&'a str> {
    items
        .into_iter()
        .map(|v| {
            v[key]
                .as_str()
                .unwrap_or_else(|| panic!("no text `{key}` in {v}"))
        })
        .collect()
}

/// Whether a JSON list of warnings holds one containing `needle`.
pub(crate) fn warns(warnings: &Value, needle: &str) -> bool {
    strs(warnings).iter().any(|w| w.contains(needle))
}

/// The first of a JSON list of warnings that contains `needle`.
pub(crate) fn warning<'a>(warnings: &'a Value, needle: &str) -> &'a str {
    strs(warnings)
        .into_iter()
        .find(|w| w.contains(needle))
        .unwrap_or_else(|| panic!("no warning with `{needle}` in {warnings}"))
}

/// The first object of a JSON array whose `key` is `value`.
pub(crate) fn entry<'a>(list: &'a Value, key: &str, value: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|e| e[key] == value)
        .unwrap_or_else(|| panic!("no `{key}` `{value}` in {list}"))
}

/// The `run.json` of a run directory.
pub(crate) fn run_json(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap()
}
