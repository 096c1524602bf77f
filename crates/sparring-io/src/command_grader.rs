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
use crate::command_agent::redact_command;
use serde_json::{Value, json};
use sparring_types::{BoxFuture, Grader, GraderError, GraderVerdict, Row};
use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::Mutex;

struct Process {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

/// A grader run as a subprocess.
pub struct CommandGrader {
    argv: Vec<String>,
    display: String,
    timeout: Duration,
    process: Mutex<Option<Process>>,
}

impl std::fmt::Debug for CommandGrader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandGrader")
            .field("command", &self.display)
            .finish_non_exhaustive()
    }
}

impl CommandGrader {
    /// Parses `command` like a shell would and starts it once to prove it
    /// runs.
    pub fn start(command: &str, timeout: Duration) -> Result<Self, Error> {
        let argv = shlex::split(command)
            .filter(|a| !a.is_empty())
            .ok_or_else(|| Error::Spawn {
                command: command.to_owned(),
                message: "cannot split it into words (an unclosed quote?)".to_owned(),
            })?;
        let mut grader = Self {
            display: redact_command(&argv),
            argv,
            timeout,
            process: Mutex::new(None),
        };
        let process = grader.spawn()?;
        *grader.process.get_mut() = Some(process);
        Ok(grader)
    }

    fn spawn(&self) -> Result<Process, Error> {
        let spawn_error = |message: String| Error::Spawn {
            command: self.display.clone(),
            message,
        };
        let program = self
            .argv
            .first()
            .ok_or_else(|| spawn_error("the command is empty".to_owned()))?;
        let mut child = Command::new(program)
            .args(&self.argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    spawn_error(format!("`{program}` not found"))
                } else {
                    spawn_error(e.to_string().to_lowercase())
                }
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(spawn_error(
                "its standard streams could not be opened".to_owned(),
            ));
        };
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
    if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
        let text = error
            .as_str()
            .map_or_else(|| error.to_string(), str::to_owned);
        return Err(ReplyError::Reported(format!(
            "the grader reported an error: {text}"
        )));
    }
    let reward = value.get("reward").and_then(Value::as_f64).ok_or_else(|| {
        ReplyError::Reported(format!(
            "the grader's reply has no numeric `reward`: `{shown}`"
        ))
    })?;
    if !(0.0..=1.0).contains(&reward) {
        return Err(ReplyError::Reported(format!(
            "the grader's reward {reward} is outside 0..=1"
        )));
    }
    let mut markers = BTreeMap::new();
    if let Some(m) = value.get("markers").filter(|m| !m.is_null()) {
        let Some(map) = m.as_object() else {
            return Err(ReplyError::Reported(
                "the grader's `markers` is not an object".to_owned(),
            ));
        };
        for (k, v) in map {
            let n = v.as_f64().ok_or_else(|| {
                ReplyError::Reported(format!("the grader's marker `{k}` is not a number"))
            })?;
            markers.insert(k.clone(), n);
        }
    }
    Ok(GraderVerdict {
        reward,
        reason: value
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
        failure_class: value
            .get("failure_class")
            .and_then(Value::as_str)
            .map(str::to_owned),
        markers,
    })
}

impl Grader for CommandGrader {
    fn grade<'a>(&'a self, row: &'a Row) -> BoxFuture<'a, Result<GraderVerdict, GraderError>> {
        Box::pin(self.ask(row))
    }

    fn describe(&self) -> String {
        format!("command:{}", self.display)
    }
}
