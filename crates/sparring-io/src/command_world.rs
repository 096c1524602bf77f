//! The caller's world as a command: tool calls answered by a long-lived
//! subprocess speaking JSON lines (`docs/world.md`, "The caller's world").
//!
//! Each call is one line on the command's stdin, `{"id", "tool",
//! "arguments", "rollout": {"prompt", "rollout_index", "seed"}}`; the answer
//! is one line on its stdout, `{"id", "result"}` or `{"id", "error": {"kind",
//! "message", "hint"}}`. Calls go to the process one at a time (a world's
//! state is usually not safe to touch concurrently). A command that exits,
//! prints a line that is not JSON, or misses the timeout fails that call and
//! is restarted for the next one; its stderr goes to the run's log.

use crate::Error;
use crate::log::RunLog;
use crate::subprocess::{CommandLine, ExchangeError, Group, StderrTo, write_within};
use serde_json::{Value, json};
use sparring_types::{BoxFuture, ExecuteError, ExecuteRequest, ToolExecutor};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt as _, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

struct Running {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    // Dropped with the process: kills its group.
    _group: Group,
}

/// A world run as a subprocess.
pub struct CommandWorld {
    line: CommandLine,
    timeout: Duration,
    log: Option<RunLog>,
    current: tokio::sync::Mutex<Option<Running>>,
}

impl std::fmt::Debug for CommandWorld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandWorld")
            .field("command", &self.line.display)
            .finish_non_exhaustive()
    }
}

impl CommandWorld {
    /// Parses `command` like a shell would and starts it once to prove it
    /// runs.
    pub async fn start(
        command: &str,
        timeout: Duration,
        log: Option<RunLog>,
    ) -> Result<Self, Error> {
        let world = Self {
            line: CommandLine::parse(command, "world")?,
            timeout,
            log,
            current: tokio::sync::Mutex::new(None),
        };
        let running = world.spawn()?;
        *world.current.lock().await = Some(running);
        Ok(world)
    }

    fn spawn(&self) -> Result<Running, Error> {
        let started = self
            .line
            .start(StderrTo::from_log(self.log.clone()), None)?;
        Ok(Running {
            child: started.child,
            stdin: started.stdin,
            stdout: BufReader::new(started.stdout).lines(),
            _group: started.group,
        })
    }

    async fn ask(&self, request: ExecuteRequest) -> Result<Value, ExecuteError> {
        let mut current = self.current.lock().await;
        if current.is_none() {
            *current = Some(self.spawn().map_err(|e| ExecuteError(e.to_string()))?);
        }
        let result = match current.as_mut() {
            Some(running) => self.exchange(running, &request).await,
            None => Err(ExchangeError::NotRunning { role: "world" }),
        };
        if let Err(reason) = &result {
            // Whatever went wrong, the next call gets a fresh process.
            if let Some(mut running) = current.take() {
                let _ = running.child.start_kill();
            }
            if let Some(log) = &self.log {
                log.line(&format!("world: {reason}; restarting it"));
            }
        }
        result.map_err(|e| ExecuteError(e.to_string()))
    }

    async fn exchange(
        &self,
        running: &mut Running,
        request: &ExecuteRequest,
    ) -> Result<Value, ExchangeError> {
        let mut line = json!({
            "id": request.id,
            "tool": request.tool,
            "arguments": request.arguments,
            "rollout": request.rollout,
        })
        .to_string();
        line.push('\n');
        write_within(&mut running.stdin, line.as_bytes(), self.timeout)
            .await
            .map_err(|e| ExchangeError::unwritten("world", e, self.timeout))?;
        let read_error = |error| ExchangeError::Read {
            role: "world",
            error,
        };
        let read = async {
            loop {
                let next = running.stdout.next_line().await;
                let Some(line) = next.map_err(read_error)? else {
                    return Err(ExchangeError::Exited {
                        role: "world",
                        status: None,
                    });
                };
                if line.trim().is_empty() {
                    continue;
                }
                let value: Value = serde_json::from_str(&line)
                    .map_err(|_| ExchangeError::not_json("world", &line))?;
                if value.get("id").and_then(Value::as_str) != Some(request.id.as_str()) {
                    // A late answer to an earlier call that timed out.
                    continue;
                }
                return Ok(sparring_types::executor::world_answer(&value));
            }
        };
        match tokio::time::timeout(self.timeout, read).await {
            Ok(result) => result,
            Err(_) => Err(ExchangeError::Timeout {
                role: "world",
                limit: self.timeout,
            }),
        }
    }
}

impl ToolExecutor for CommandWorld {
    fn execute(&self, request: ExecuteRequest) -> BoxFuture<'_, Result<Value, ExecuteError>> {
        Box::pin(self.ask(request))
    }

    fn describe(&self) -> String {
        format!("command:{}", self.line.display)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sparring_types::RolloutContext;

    fn request(id: &str, tool: &str) -> ExecuteRequest {
        ExecuteRequest {
            id: id.to_owned(),
            tool: tool.to_owned(),
            arguments: json!({"order_id": "A1"}),
            rollout: RolloutContext {
                prompt: "where is A1?".to_owned(),
                rollout_index: 4,
                seed: 9,
            },
        }
    }

    const ECHO: &str = r#"python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if r["tool"] == "crash":
        sys.exit(3)
    if r["tool"] == "nope":
        print(json.dumps({"id": r["id"], "error": {"message": "no such order"}}), flush=True)
        continue
    print(json.dumps({"id": r["id"], "result": {"tool": r["tool"], "args": r["arguments"], "rollout": r["rollout"]}}), flush=True)
'"#;

    #[tokio::test]
    async fn answers_fails_and_restarts() {
        let world = CommandWorld::start(ECHO, Duration::from_secs(10), None)
            .await
            .unwrap();
        let ok = world.execute(request("1", "get_order")).await.unwrap();
        assert_eq!(ok["ok"], true);
        assert_eq!(ok["result"]["args"]["order_id"], "A1");
        assert_eq!(ok["result"]["rollout"]["rollout_index"], 4);
        assert_eq!(ok["result"]["rollout"]["prompt"], "where is A1?");
        let no = world.execute(request("2", "nope")).await.unwrap();
        assert_eq!(no["ok"], false);
        assert_eq!(no["error"]["kind"], "refused");
        assert_eq!(no["error"]["message"], "no such order");
        let crash = world.execute(request("3", "crash")).await.unwrap_err();
        assert!(crash.0.contains("exited"), "{crash}");
        let again = world.execute(request("4", "get_order")).await.unwrap();
        assert_eq!(again["ok"], true);
    }

    #[tokio::test]
    async fn a_missing_command_is_an_error() {
        let e = CommandWorld::start("no-such-world-binary-xyz", Duration::from_secs(1), None)
            .await
            .unwrap_err();
        assert!(e.to_string().contains("not found"), "{e}");
    }
}
