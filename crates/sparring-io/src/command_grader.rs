//! Command graders: long-lived subprocesses that grade rows over JSON lines,
//! and [`FailFast`], the guard that ends a grading pass whose hooks are dead.
//!
//! Protocol (`docs/grading.md`): for each row sparring writes one line
//! `{"id", "row"}` on the grader's stdin and reads one line back on its
//! stdout: `{"id", "reward", "reason", "markers", "failure_class"}` (`reason`,
//! `markers` and `failure_class` optional) or `{"id", "error"}`. Each process
//! grades one row at a time; [`CommandGrader::start_pool`] keeps up to N
//! processes, so N rows are graded at once (started as they are needed). A
//! grader that crashes, breaks the protocol, stops reading its input or does
//! not answer within the timeout costs the row it was grading (the error is
//! recorded on that row); its process (with its whole group) is killed and
//! the next row starts a fresh one. The grader's stderr goes to sparring's
//! stderr, one prefixed line per line.

use crate::Error;
use crate::defaults::{GRADE_CONCURRENCY, GRADE_FAIL_FAST_ROWS};
use crate::subprocess::{CommandLine, ExchangeError, Group, StderrTo, write_within};
use serde_json::{Value, json};
use sparring_types::{BoxFuture, Grader, GraderError, GraderReplyError, GraderVerdict, Row};
use std::sync::Mutex;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::Semaphore;

struct Process {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    // Dropped with the process: kills its group.
    _group: Group,
}

/// A grader run as one or more subprocesses.
pub struct CommandGrader {
    line: CommandLine,
    timeout: Duration,
    /// Processes not grading a row right now.
    idle: Mutex<Vec<Process>>,
    /// One permit per process that may run.
    slots: Semaphore,
    processes: usize,
}

impl std::fmt::Debug for CommandGrader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandGrader")
            .field("command", &self.line.display)
            .field("processes", &self.processes)
            .finish_non_exhaustive()
    }
}

impl CommandGrader {
    /// Parses `command` like a shell would and starts it once to prove it
    /// runs; rows are graded one at a time.
    pub fn start(command: &str, timeout: Duration) -> Result<Self, Error> {
        Self::start_pool(command, timeout, 1)
    }

    /// Like [`CommandGrader::start`], grading up to `processes` rows at once,
    /// one process per row in flight; 0 takes one per CPU, at most
    /// [`GRADE_CONCURRENCY`] (more processes than CPUs only slow each one's
    /// start-up, which counts against the first row's timeout).
    pub fn start_pool(command: &str, timeout: Duration, processes: usize) -> Result<Self, Error> {
        let processes = if processes == 0 {
            std::thread::available_parallelism()
                .map_or(1, std::num::NonZero::get)
                .min(GRADE_CONCURRENCY)
        } else {
            processes.min(Semaphore::MAX_PERMITS)
        };
        let grader = Self {
            line: CommandLine::parse(command, "grader")?,
            timeout,
            idle: Mutex::new(Vec::new()),
            slots: Semaphore::new(processes),
            processes,
        };
        let first = grader.spawn()?;
        if let Ok(mut idle) = grader.idle.lock() {
            idle.push(first);
        }
        Ok(grader)
    }

    /// Rows graded at once, at most.
    pub fn processes(&self) -> usize {
        self.processes
    }

    fn spawn(&self) -> Result<Process, Error> {
        let started = self.line.start(StderrTo::Terminal, None)?;
        Ok(Process {
            child: started.child,
            stdin: started.stdin,
            stdout: BufReader::new(started.stdout),
            _group: started.group,
        })
    }

    async fn ask(&self, row: &Row) -> Result<GraderVerdict, GraderError> {
        let _slot = self
            .slots
            .acquire()
            .await
            .map_err(|_| GraderError("the grader was shut down".to_owned()))?;
        let idle = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        let mut process = match idle {
            Some(p) => p,
            None => self.spawn().map_err(|e| GraderError(e.to_string()))?,
        };
        let mut line = json!({"id": row.row_id, "row": row}).to_string();
        line.push('\n');
        let reply =
            match tokio::time::timeout(self.timeout, exchange(&mut process, &line, self.timeout))
                .await
            {
                Ok(Ok(reply)) => reply,
                // The process is dropped here: it and its group are killed.
                Ok(Err(e)) => return Err(GraderError(e.to_string())),
                Err(_) => {
                    let e = ExchangeError::Timeout {
                        role: "grader",
                        limit: self.timeout,
                    };
                    return Err(GraderError(e.to_string()));
                }
            };
        let verdict = match parse_reply(&reply, &row.row_id) {
            Ok(v) => Ok(v),
            Err(e @ (ReplyError::Protocol(_) | ReplyError::OtherId { .. })) => {
                return Err(GraderError(e.to_string()));
            }
            Err(e @ ReplyError::Reported(_)) => Err(GraderError(e.to_string())),
        };
        if let Ok(mut idle) = self.idle.lock() {
            idle.push(process);
        }
        verdict
    }
}

/// Writes one row and reads one reply line.
async fn exchange(
    process: &mut Process,
    line: &str,
    limit: Duration,
) -> Result<String, ExchangeError> {
    write_within(&mut process.stdin, line.as_bytes(), limit)
        .await
        .map_err(|e| ExchangeError::unwritten("grader", e, limit))?;
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        match process.stdout.read_until(b'\n', &mut bytes).await {
            Ok(0) => {
                return Err(ExchangeError::Exited {
                    role: "grader",
                    status: process.child.try_wait().ok().flatten(),
                });
            }
            Ok(_) => {}
            Err(error) => {
                return Err(ExchangeError::Read {
                    role: "grader",
                    error,
                });
            }
        }
        let Ok(text) = std::str::from_utf8(&bytes) else {
            return Err(ExchangeError::NotUtf8 {
                role: "grader",
                shown: String::from_utf8_lossy(&bytes)
                    .trim()
                    .chars()
                    .take(120)
                    .collect(),
            });
        };
        if !text.trim().is_empty() {
            return Ok(text.trim_end_matches(['\n', '\r']).to_owned());
        }
    }
}

#[derive(Debug, thiserror::Error)]
enum ReplyError {
    /// The grader broke the protocol; its process is replaced.
    #[error(transparent)]
    Protocol(#[from] ExchangeError),
    /// The grader answered another row's id.
    #[error("the grader answered id `{got}` while grading `{id}`")]
    OtherId { got: String, id: String },
    /// The grader's reply is not a verdict, or says it could not grade
    /// this row.
    #[error(transparent)]
    Reported(#[from] GraderReplyError),
}

fn parse_reply(line: &str, id: &str) -> Result<GraderVerdict, ReplyError> {
    let value: Value =
        serde_json::from_str(line).map_err(|_| ExchangeError::not_json("grader", line))?;
    if let Some(got) = value.get("id").and_then(Value::as_str)
        && got != id
    {
        return Err(ReplyError::OtherId {
            got: got.to_owned(),
            id: id.to_owned(),
        });
    }
    Ok(GraderVerdict::from_reply(&value)?)
}

impl Grader for CommandGrader {
    fn grade<'a>(&'a self, row: &'a Row) -> BoxFuture<'a, Result<GraderVerdict, GraderError>> {
        Box::pin(self.ask(row))
    }

    fn describe(&self) -> String {
        format!("command:{}", self.line.display)
    }
}

/// Ends a grading pass once its hooks are plainly dead: after `limit` rows
/// in a row (in the order the rows are written) on which every hook that
/// ran (grader, judge) could not be reached ([`unreachable`]: a refused or
/// broken connection, no reply in time, a command that cannot start or
/// exits), the pass should stop rather than spend a timeout and its retries
/// on every row left. A hook that answers, even with an error or a verdict
/// that does not parse, is not dead: that row is ungraded and the pass goes
/// on. A row graded again resets the count.
///
/// ```
/// use sparring_io::command_grader::FailFast;
/// let mut guard = FailFast::new(2);
/// assert!(!guard.record(Some("cannot connect")));
/// assert!(!guard.record(None));
/// assert!(!guard.record(Some("cannot connect")));
/// assert!(guard.record(Some("cannot connect")));
/// assert!(guard.message().unwrap().contains("2 rows in a row"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailFast {
    limit: u64,
    run: u64,
    last: Option<String>,
    tripped: bool,
}

impl Default for FailFast {
    /// Stops after [`GRADE_FAIL_FAST_ROWS`] rows.
    fn default() -> Self {
        Self::new(GRADE_FAIL_FAST_ROWS)
    }
}

impl FailFast {
    /// Stops after `limit` failed rows in a row (at least 1).
    pub fn new(limit: u64) -> Self {
        Self {
            limit: limit.max(1),
            run: 0,
            last: None,
            tripped: false,
        }
    }

    /// Records one row: `Some(error)` when every hook failed on it, `None`
    /// when one graded it. Returns whether the pass should stop now.
    pub fn record(&mut self, failure: Option<&str>) -> bool {
        if self.tripped {
            return true;
        }
        match failure {
            None => self.run = 0,
            Some(e) => {
                self.run += 1;
                self.last = Some(e.to_owned());
                if self.run >= self.limit {
                    self.tripped = true;
                }
            }
        }
        self.tripped
    }

    /// [`FailFast::record`] for a graded row: it counts when at least one
    /// hook stage (any stage but `conduct`) ran and every one of them
    /// recorded an error that says the hook could not be reached.
    pub fn record_row(&mut self, row: &Row) -> bool {
        let hooks: Vec<_> = row
            .grades
            .iter()
            .flatten()
            .filter(|g| g.stage != sparring_types::Stage::Conduct)
            .collect();
        let dead = !hooks.is_empty()
            && hooks
                .iter()
                .all(|g| g.error.as_deref().is_some_and(unreachable));
        let failure = if dead {
            hooks.last().and_then(|g| g.error.clone())
        } else {
            None
        };
        self.record(failure.as_deref())
    }

    /// Whether the pass should stop.
    pub fn tripped(&self) -> bool {
        self.tripped
    }

    /// Why the pass stopped, on one line, once it has.
    pub fn message(&self) -> Option<String> {
        self.tripped.then(|| {
            format!(
                "stopped: no grading hook (grader, judge) could be reached on {} rows in a row (last error: {})",
                self.run,
                self.last.as_deref().unwrap_or("unknown")
            )
        })
    }
}

/// How sparring's own errors say a hook could not be reached: the HTTP
/// transport's (`cannot connect`, `the connection broke`, `no reply within`,
/// out of file descriptors) and the processes' (`cannot start`, `process
/// exited`, `did not answer within`, `did not read its input`).
pub const UNREACHABLE_PHRASES: &[&str] = &[
    "cannot connect",
    "the connection broke",
    "no reply within",
    "ran out of file descriptors",
    "cannot start",
    "process exited",
    "did not answer within",
    "did not read its input",
];

/// Whether a hook's error says it could not be reached at all (see
/// [`UNREACHABLE_PHRASES`]), rather than that it answered with an error.
pub fn unreachable(error: &str) -> bool {
    UNREACHABLE_PHRASES.iter().any(|p| error.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_counts_as_unreachable() {
        for dead in [
            "the judge failed: openai `j` at http://h/v1: cannot connect; gave up after 6 attempts",
            "grader at http://h/g: the connection broke; gave up after 3 attempts",
            "the grader did not answer within 2 s",
            "the grader process exited (exit status: 3)",
            "cannot start grader command `x`: `x` not found",
        ] {
            assert!(unreachable(dead), "{dead}");
        }
        for answered in [
            "the judge's verdict did not parse after 2 attempts: no JSON object in the reply",
            "the grader reported an error: cannot grade this row",
            "grader at http://h/g: HTTP 401: invalid key",
        ] {
            assert!(!unreachable(answered), "{answered}");
        }
    }

    #[test]
    fn fail_fast_counts_failures_in_a_row() {
        let mut g = FailFast::default();
        for _ in 0..GRADE_FAIL_FAST_ROWS - 1 {
            assert!(!g.record(Some("cannot connect")));
        }
        assert!(!g.record(None), "a graded row resets the count");
        for _ in 0..GRADE_FAIL_FAST_ROWS - 1 {
            assert!(!g.record(Some("x")));
        }
        assert!(g.record(Some("cannot connect")));
        assert!(g.tripped());
        assert!(g.record(None), "once tripped it stays tripped");
        let m = g.message().unwrap();
        assert!(m.contains("cannot connect"), "{m}");
        assert_eq!(FailFast::new(0), FailFast::new(1));
    }
}
