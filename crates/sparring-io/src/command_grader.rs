//! Command graders: a long-lived subprocess that grades rows over JSON lines.
//!
//! Protocol (`docs/grading.md`): for each row sparring writes one line
//! `{"id", "row"}` on the grader's stdin and reads one line back on its
//! stdout: `{"id", "reward", "reason", "markers", "failure_class"}` (`reason`,
//! `markers` and `failure_class` optional) or `{"id", "error"}`. Rows are
//! graded one at a time. A grader that crashes, breaks the protocol or does
//! not answer within the timeout costs the row it was grading (the error is
//! recorded on that row); the next row starts a fresh process. The grader's
//! stderr passes through to sparring's stderr.

use crate::Error;
use crate::subprocess::{CommandLine, Spawned, Stderr};
use serde_json::{Value, json};
use sparring_types::{BoxFuture, Grader, GraderError, GraderVerdict, Row};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::Mutex;

struct Process {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

/// A grader run as a subprocess.
pub struct CommandGrader {
    line: CommandLine,
    timeout: Duration,
    process: Mutex<Option<Process>>,
}

impl std::fmt::Debug for CommandGrader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandGrader")
            .field("command", &self.line.display)
            .finish_non_exhaustive()
    }
}

impl CommandGrader {
    /// Parses `command` like a shell would and starts it once to prove it
    /// runs.
    pub fn start(command: &str, timeout: Duration) -> Result<Self, Error> {
        let mut grader = Self {
            line: CommandLine::parse(command, "grader")?,
            timeout,
            process: Mutex::new(None),
        };
        let process = grader.spawn()?;
        *grader.process.get_mut() = Some(process);
        Ok(grader)
    }

    fn spawn(&self) -> Result<Process, Error> {
        let Spawned {
            child,
            stdin,
            stdout,
            ..
        } = self.line.spawn(&Stderr::Inherit)?;
        Ok(Process {
            child,
            stdin,
            stdout: BufReader::new(stdout).lines(),
        })
    }

    async fn ask(&self, row: &Row) -> Result<GraderVerdict, GraderError> {
        let mut slot = self.process.lock().await;
        if slot.is_none() {
            *slot = Some(self.spawn().map_err(|e| GraderError(e.to_string()))?);
        }
        let Some(process) = slot.as_mut() else {
            return Err(GraderError("the grader process is gone".to_owned()));
        };
        let mut line = json!({"id": row.row_id, "row": row}).to_string();
        line.push('\n');
        let exchange = async {
            process
                .stdin
                .write_all(line.as_bytes())
                .await
                .map_err(|e| {
                    format!(
                        "cannot write to the grader: {}",
                        e.to_string().to_lowercase()
                    )
                })?;
            process.stdin.flush().await.map_err(|e| {
                format!(
                    "cannot write to the grader: {}",
                    e.to_string().to_lowercase()
                )
            })?;
            loop {
                match process.stdout.next_line().await {
                    Ok(Some(l)) if l.trim().is_empty() => {}
                    Ok(Some(l)) => return Ok(l),
                    Ok(None) => {
                        let status = process
                            .child
                            .try_wait()
                            .ok()
                            .flatten()
                            .map(|s| format!(" ({s})"))
                            .unwrap_or_default();
                        return Err(format!("the grader process exited{status}"));
                    }
                    Err(e) => return Err(format!("cannot read the grader: {e}")),
                }
            }
        };
        let reply = match tokio::time::timeout(self.timeout, exchange).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(e)) => {
                kill(slot.take()).await;
                return Err(GraderError(e));
            }
            Err(_) => {
                kill(slot.take()).await;
                return Err(GraderError(format!(
                    "the grader did not answer within {} s",
                    self.timeout.as_secs_f64()
                )));
            }
        };
        match parse_reply(&reply, &row.row_id) {
            Ok(v) => Ok(v),
            Err(ReplyError::Protocol(e)) => {
                kill(slot.take()).await;
                Err(GraderError(e))
            }
            Err(ReplyError::Reported(e)) => Err(GraderError(e)),
        }
    }
}

async fn kill(process: Option<Process>) {
    if let Some(mut p) = process {
        let _ = p.child.start_kill();
        let _ = p.child.wait().await;
    }
}

enum ReplyError {
    /// The grader broke the protocol; its process is replaced.
    Protocol(String),
    /// The grader said it could not grade this row.
    Reported(String),
}

fn parse_reply(line: &str, id: &str) -> Result<GraderVerdict, ReplyError> {
    let shown: String = line.chars().take(120).collect();
    let value: Value = serde_json::from_str(line).map_err(|_| {
        ReplyError::Protocol(format!(
            "the grader printed a line that is not JSON: `{shown}`"
        ))
    })?;
    if let Some(got) = value.get("id").and_then(Value::as_str)
        && got != id
    {
        return Err(ReplyError::Protocol(format!(
            "the grader answered id `{got}` while grading `{id}`"
        )));
    }
    GraderVerdict::from_reply(&value).map_err(ReplyError::Reported)
}

impl Grader for CommandGrader {
    fn grade<'a>(&'a self, row: &'a Row) -> BoxFuture<'a, Result<GraderVerdict, GraderError>> {
        Box::pin(self.ask(row))
    }

    fn describe(&self) -> String {
        format!("command:{}", self.line.display)
    }
}
