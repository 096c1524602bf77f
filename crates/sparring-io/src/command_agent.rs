//! Command agents: a long-lived subprocess speaking agent protocol v1.
//!
//! The protocol (`docs/agent-protocol.md`): each request is one JSON line on
//! the agent's stdin, `{"id", "messages", "tools"}`; each reply is one line on
//! its stdout, `{"id", "message"}` or `{"id", "error"}`. Many requests may be
//! in flight; replies may come in any order and are matched by id. The
//! agent's stderr goes to the run's log, line by line.
//!
//! When the agent breaks the protocol (a line that is not JSON, a reply with
//! an id nobody asked for) or its process exits, every request in flight
//! fails with that reason, the process is killed, and the next request starts
//! a fresh one. A request that gets no reply within the timeout fails alone;
//! a late reply to it is ignored.

use crate::Error;
use crate::log::RunLog;
use crate::subprocess::{CommandLine, Spawned, Stderr, forward_stderr};
use serde_json::{Value, json};
use sparring_types::{Agent, AgentError, AgentReply, AgentRequest, BoxFuture, Message};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::oneshot;

type Reply = Result<AgentReply, AgentError>;

/// One running agent process.
struct Process {
    stdin: tokio::sync::Mutex<ChildStdin>,
    pending: Mutex<HashMap<String, oneshot::Sender<Reply>>>,
    timed_out: Mutex<HashSet<String>>,
    alive: AtomicBool,
    dead_reason: Mutex<Option<String>>,
    child: Mutex<Option<Child>>,
}

impl Process {
    /// Marks the process dead, fails everything in flight with `reason`, and
    /// kills it.
    fn fail_all(&self, reason: &str) {
        self.alive.store(false, Ordering::SeqCst);
        if let Ok(mut r) = self.dead_reason.lock()
            && r.is_none()
        {
            *r = Some(reason.to_owned());
        }
        let drained: Vec<oneshot::Sender<Reply>> = match self.pending.lock() {
            Ok(mut p) => p.drain().map(|(_, tx)| tx).collect(),
            Err(_) => Vec::new(),
        };
        for tx in drained {
            let _ = tx.send(Err(AgentError::agent(reason.to_owned())));
        }
        if let Ok(mut child) = self.child.lock()
            && let Some(child) = child.as_mut()
        {
            let _ = child.start_kill();
        }
    }

    fn reason(&self) -> String {
        self.dead_reason
            .lock()
            .ok()
            .and_then(|r| r.clone())
            .unwrap_or_else(|| "the agent process went away".to_owned())
    }
}

/// An agent run as a subprocess.
pub struct CommandAgent {
    line: CommandLine,
    timeout: Duration,
    log: Option<RunLog>,
    current: tokio::sync::Mutex<Option<Arc<Process>>>,
    starts: AtomicU64,
}

impl std::fmt::Debug for CommandAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandAgent")
            .field("command", &self.line.display)
            .finish_non_exhaustive()
    }
}

/// Words of a command line that look like secrets, replaced by `***`.
pub fn redact_command(argv: &[String]) -> String {
    let mut out = Vec::with_capacity(argv.len());
    let mut hide_next = false;
    for word in argv {
        let lower = word.to_lowercase();
        let secret_flag = ["key", "token", "secret", "password"]
            .iter()
            .any(|s| lower.contains(s));
        if hide_next {
            out.push("***".to_owned());
            hide_next = false;
        } else if lower.starts_with("sk-") || lower.starts_with("hf_") || lower.starts_with("ghp_")
        {
            out.push("***".to_owned());
        } else if secret_flag && lower.starts_with('-') {
            if let Some((flag, _)) = word.split_once('=') {
                out.push(format!("{flag}=***"));
            } else {
                out.push(word.clone());
                hide_next = true;
            }
        } else if secret_flag && word.contains('=') {
            let (name, _) = word.split_once('=').unwrap_or((word, ""));
            out.push(format!("{name}=***"));
        } else {
            out.push(word.clone());
        }
    }
    out.join(" ")
}

impl CommandAgent {
    /// Parses `command` like a shell would (quotes, no expansion), starts the
    /// process once to prove it runs, and returns the agent. A command that
    /// cannot start is an error before any rollout.
    pub async fn start(
        command: &str,
        timeout: Duration,
        log: Option<RunLog>,
    ) -> Result<Self, Error> {
        let agent = Self {
            line: CommandLine::parse(command, "agent")?,
            timeout,
            log,
            current: tokio::sync::Mutex::new(None),
            starts: AtomicU64::new(0),
        };
        let process = agent.spawn()?;
        *agent.current.lock().await = Some(process);
        Ok(agent)
    }

    /// How many processes have been started (1 + restarts).
    pub fn starts(&self) -> u64 {
        self.starts.load(Ordering::SeqCst)
    }

    fn spawn(&self) -> Result<Arc<Process>, Error> {
        let Spawned {
            child,
            stdin,
            stdout,
            stderr,
            pid,
        } = self.line.spawn(&Stderr::Log)?;
        let n = self.starts.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some(log) = &self.log {
            log.line(&format!(
                "agent: started `{}` (pid {pid}, start {n})",
                self.line.display
            ));
        }
        if let Some(stderr) = stderr {
            forward_stderr(stderr, self.log.clone(), "agent", pid);
        }
        let process = Arc::new(Process {
            stdin: tokio::sync::Mutex::new(stdin),
            pending: Mutex::new(HashMap::new()),
            timed_out: Mutex::new(HashSet::new()),
            alive: AtomicBool::new(true),
            dead_reason: Mutex::new(None),
            child: Mutex::new(Some(child)),
        });
        let reader = Arc::clone(&process);
        let log = self.log.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            loop {
                if let Ok(Some(line)) = lines.next_line().await {
                    if line.trim().is_empty() {
                        continue;
                    }
                    if let Err(reason) = dispatch(&reader, &line) {
                        if let Some(log) = &log {
                            log.line(&format!("agent[{pid}]: {reason}; restarting it"));
                        }
                        reader.fail_all(&reason);
                        break;
                    }
                } else {
                    let status = match reader
                        .child
                        .lock()
                        .ok()
                        .and_then(|mut c| c.as_mut().and_then(|c| c.try_wait().ok().flatten()))
                    {
                        Some(s) => format!(" ({s})"),
                        None => String::new(),
                    };
                    let reason = format!("the agent process exited{status}");
                    if let Some(log) = &log
                        && reader.alive.load(Ordering::SeqCst)
                    {
                        log.line(&format!("agent[{pid}]: {reason}"));
                    }
                    reader.fail_all(&reason);
                    break;
                }
            }
        });
        Ok(process)
    }

    async fn live(&self) -> Result<Arc<Process>, AgentError> {
        let mut current = self.current.lock().await;
        if let Some(p) = current.as_ref()
            && p.alive.load(Ordering::SeqCst)
        {
            return Ok(Arc::clone(p));
        }
        let process = self.spawn().map_err(|e| AgentError::agent(e.to_string()))?;
        *current = Some(Arc::clone(&process));
        Ok(process)
    }

    async fn ask(&self, request: AgentRequest) -> Reply {
        let process = self.live().await?;
        let (tx, rx) = oneshot::channel();
        let id = request.id.clone();
        if let Ok(mut pending) = process.pending.lock() {
            pending.insert(id.clone(), tx);
        }
        if !process.alive.load(Ordering::SeqCst) {
            return Err(AgentError::agent(process.reason()));
        }
        let mut line =
            json!({"id": request.id, "messages": request.messages, "tools": *request.tools})
                .to_string();
        line.push('\n');
        let written = {
            let mut stdin = process.stdin.lock().await;
            match stdin.write_all(line.as_bytes()).await {
                Ok(()) => stdin.flush().await,
                Err(e) => Err(e),
            }
        };
        if let Err(e) = written {
            let reason = format!(
                "cannot write to the agent: {}",
                e.to_string().to_lowercase()
            );
            process.fail_all(&reason);
            return Err(AgentError::agent(process.reason()));
        }
        match tokio::time::timeout(self.timeout, rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => Err(AgentError::agent(process.reason())),
            Err(_) => {
                if let Ok(mut pending) = process.pending.lock() {
                    pending.remove(&id);
                }
                if let Ok(mut t) = process.timed_out.lock() {
                    t.insert(id);
                }
                Err(AgentError::agent(format!(
                    "the agent did not answer within {} s",
                    self.timeout.as_secs_f64()
                )))
            }
        }
    }
}

/// Routes one stdout line to the request it answers. `Err` is a protocol
/// violation that ends the process.
fn dispatch(process: &Process, line: &str) -> Result<(), String> {
    let shown: String = line.chars().take(120).collect();
    let value: Value = serde_json::from_str(line)
        .map_err(|_| format!("the agent printed a line that is not JSON: `{shown}`"))?;
    let Some(id) = value.get("id").and_then(Value::as_str) else {
        return Err(format!(
            "the agent replied without a string `id`: `{shown}`"
        ));
    };
    let sender = process.pending.lock().ok().and_then(|mut p| p.remove(id));
    let Some(sender) = sender else {
        let late = process.timed_out.lock().is_ok_and(|mut t| t.remove(id));
        if late {
            return Ok(());
        }
        return Err(format!("the agent replied with unknown id `{id}`"));
    };
    let reply = if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
        let text = error
            .as_str()
            .map_or_else(|| error.to_string(), str::to_owned);
        Err(AgentError::agent(format!(
            "the agent reported an error: {text}"
        )))
    } else {
        match value.get("message") {
            Some(m) => serde_json::from_value::<Message>(m.clone())
                .map(AgentReply::from)
                .map_err(|e| {
                    AgentError::agent(format!("the agent's `message` is not a chat message: {e}"))
                }),
            None => Err(AgentError::agent(
                "the agent's reply has neither `message` nor `error`".to_owned(),
            )),
        }
    };
    let _ = sender.send(reply);
    Ok(())
}

impl Agent for CommandAgent {
    fn respond(&self, request: AgentRequest) -> BoxFuture<'_, Result<AgentReply, AgentError>> {
        Box::pin(self.ask(request))
    }

    fn describe(&self) -> String {
        format!("command:{}", self.line.display)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_secrets() {
        let argv: Vec<String> = [
            "agent",
            "--api-key",
            "sk-abc",
            "--token=xyz",
            "API_KEY=1",
            "sk-zzz",
            "--model",
            "m",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let shown = redact_command(&argv);
        assert!(
            !shown.contains("abc") && !shown.contains("xyz") && !shown.contains("zzz"),
            "{shown}"
        );
        assert!(shown.contains("--model m"), "{shown}");
    }
}
