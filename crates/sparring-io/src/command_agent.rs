//! Command agents: a long-lived subprocess speaking agent protocol v1.
//!
//! The protocol (`docs/agent-protocol.md`): each request is one JSON line on
//! the agent's stdin, `{"id", "messages", "tools"}`; each reply is one line on
//! its stdout, `{"id", "message"}` or `{"id", "error"}`. Many requests may be
//! in flight; replies may come in any order and are matched by id. The
//! agent's stderr goes to the run's log (or sparring's stderr), line by line,
//! with the command line's secrets masked.
//!
//! A **fault** ends the process: it exits or closes stdout, prints a line that
//! is not JSON or not UTF-8, replies without an id or with an id nobody asked
//! for, does not read its input, or does not answer a request within the
//! timeout (a hang). The process (its whole group) is killed and the next
//! request starts a fresh one. A fault costs its own row only:
//! - a request the fault is known to belong to (the one that hung, the one
//!   whose reply was not UTF-8) fails with the reason;
//! - when the culprit is known, the other requests in flight were innocent
//!   and are sent again, once, to the new process;
//! - when it is not (a crash, a garbage line), every request in flight is a
//!   suspect and is sent again, once, *alone*: nothing else is in flight on
//!   the new process until it is answered, so a request that crashes the
//!   agent every time is found and fails by itself while the others pass.
//!
//! A request sent again gets the full timeout again. Its second fault is
//! final.
//!
//! A second reply to an id already answered is no fault: the first reply
//! stands, the second is dropped where it arrives (a line in the run's log)
//! and the process goes on, so nothing in flight is disturbed. A restart for
//! it would cost other conversations: an agent that answers one
//! conversation's every request twice would restart once per request, and
//! an innocent request sent again would meet the next restart and fail.
//! [`CommandAgent::warnings`] counts them for the run's warnings.

use crate::Error;
use crate::defaults::{AGENT_ANSWERED_IDS_KEPT, AGENT_EXIT_WAIT};
use crate::log::RunLog;
use crate::subprocess::{CommandLine, Group, Spawned, StderrTo, WriteError, write_within};
use serde_json::{Value, json};
use sparring_types::{Agent, AgentError, AgentReply, AgentRequest, BoxFuture, Message};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::{RwLock, oneshot};
use tokio::time::Instant;

type Reply = Result<AgentReply, AgentError>;
type Sender = oneshot::Sender<Result<Reply, Fault>>;

/// How writing a request to a process went.
enum Sent {
    /// Written; the answer comes on the channel.
    Yes,
    /// The process had died before the request was registered: it never saw
    /// it, so it goes to the next process with no retry spent.
    Dead,
    /// The write failed (the reason); the request is registered, so the
    /// fault reaches it on its channel.
    Failed(String),
}

/// Why a request got no reply from one process, and what that means for it.
#[derive(Debug)]
enum Fault {
    /// The fault is this request's own: it fails with the reason.
    Own(String),
    /// Another request's fault ended the process: send it again.
    Innocent(String),
    /// A fault whose request is unknown ended the process: send it again,
    /// alone.
    Suspect(String),
}

/// Whose fault ended a process.
#[derive(Clone, Copy)]
enum Culprit<'a> {
    /// This request's.
    Known(&'a str),
    /// Any of the requests in flight.
    Unknown,
}

/// Second replies to ids already answered, dropped: how many, and the
/// first id, for the run's warning. Shared by every process of an agent.
#[derive(Default)]
struct Dropped {
    count: AtomicU64,
    first: Mutex<Option<String>>,
}

/// Ids a process answered recently, to tell a duplicate reply from an id
/// nobody asked for (bounded: only the last [`AGENT_ANSWERED_IDS_KEPT`]).
#[derive(Default)]
struct Answered {
    order: VecDeque<String>,
    set: HashSet<String>,
}

impl Answered {
    fn insert(&mut self, id: &str) {
        if self.set.insert(id.to_owned()) {
            self.order.push_back(id.to_owned());
        }
        while self.order.len() > AGENT_ANSWERED_IDS_KEPT {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
    }
}

/// One running agent process.
struct Process {
    pid: u32,
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    /// Requests written and not answered: the order they were written in,
    /// and where their answer goes.
    pending: Mutex<HashMap<String, (u64, Sender)>>,
    next_seq: AtomicU64,
    answered: Mutex<Answered>,
    alive: AtomicBool,
    child: Mutex<Option<Child>>,
    group: Mutex<Option<Group>>,
    log: StderrTo,
    role: &'static str,
    dropped: Arc<Dropped>,
}

impl Process {
    /// Ends the process for `reason`: every request in flight gets its
    /// fault (by `culprit`), and the process and its group are killed. Only
    /// the first call does anything.
    fn fail(&self, reason: &str, culprit: Culprit<'_>) {
        if !self.alive.swap(false, Ordering::SeqCst) {
            return;
        }
        self.log.line(&format!(
            "{}[{}]: {reason}; restarting it",
            self.role, self.pid
        ));
        let drained: Vec<(String, Sender)> = match self.pending.lock() {
            Ok(mut p) => p.drain().map(|(id, (_, tx))| (id, tx)).collect(),
            Err(_) => Vec::new(),
        };
        for (id, tx) in drained {
            let fault = match culprit {
                Culprit::Known(c) if c == id => Fault::Own(reason.to_owned()),
                Culprit::Known(_) => Fault::Innocent(reason.to_owned()),
                Culprit::Unknown => Fault::Suspect(reason.to_owned()),
            };
            let _ = tx.send(Err(fault));
        }
        if let Ok(mut stdin) = self.stdin.try_lock() {
            stdin.take();
        }
        if let Ok(mut child) = self.child.lock()
            && let Some(child) = child.as_mut()
        {
            let _ = child.start_kill();
        }
        if let Ok(mut group) = self.group.lock()
            && let Some(mut group) = group.take()
        {
            group.kill();
        }
    }

    /// The request written first of those still unanswered: the one a
    /// sequential agent is working on, so the one a hang belongs to.
    fn oldest_pending(&self) -> Option<String> {
        let pending = self.pending.lock().ok()?;
        pending
            .iter()
            .min_by_key(|(_, (seq, _))| *seq)
            .map(|(id, _)| id.clone())
    }

    /// The exit status, waiting up to [`AGENT_EXIT_WAIT`] for it (stdout
    /// closes a moment before the exit is visible).
    async fn exit_status(&self) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + AGENT_EXIT_WAIT;
        loop {
            let status = self
                .child
                .lock()
                .ok()
                .and_then(|mut c| c.as_mut().and_then(|c| c.try_wait().ok().flatten()));
            if status.is_some() || Instant::now() >= deadline {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// An agent run as a subprocess.
pub struct CommandAgent {
    line: CommandLine,
    timeout: Duration,
    log: StderrTo,
    current: tokio::sync::Mutex<Option<Arc<Process>>>,
    /// Held shared by every request in flight and exclusively by a suspect
    /// sent again alone; fair, so new requests wait behind a suspect.
    gate: RwLock<()>,
    starts: AtomicU64,
    retries: AtomicU64,
    dropped: Arc<Dropped>,
}

impl std::fmt::Debug for CommandAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandAgent")
            .field("command", &self.line.display)
            .finish_non_exhaustive()
    }
}

/// Words of a command line that look like secrets, replaced by `***` (the
/// patterns are listed in [`crate::redact`]).
pub fn redact_command(argv: &[String]) -> String {
    crate::redact::redact_argv(argv).display
}

impl CommandAgent {
    /// Parses `command` like a shell would (quotes, no expansion), starts the
    /// process once to prove it runs, and returns the agent. A command that
    /// cannot start is an error before any rollout. Its stderr goes to `log`,
    /// or to sparring's stderr without one.
    pub async fn start(
        command: &str,
        timeout: Duration,
        log: Option<RunLog>,
    ) -> Result<Self, Error> {
        Self::start_as("agent", command, timeout, log).await
    }

    /// [`CommandAgent::start`] for a command that plays another role over the
    /// same protocol (`judge`, `writer`, `person`): the role names it in
    /// errors and log lines.
    pub async fn start_as(
        role: &'static str,
        command: &str,
        timeout: Duration,
        log: Option<RunLog>,
    ) -> Result<Self, Error> {
        let agent = Self {
            line: CommandLine::parse(command, role)?,
            timeout,
            log: StderrTo::from_log(log),
            current: tokio::sync::Mutex::new(None),
            gate: RwLock::new(()),
            starts: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            dropped: Arc::new(Dropped::default()),
        };
        let process = agent.spawn()?;
        *agent.current.lock().await = Some(process);
        Ok(agent)
    }

    /// How many processes have been started (1 + restarts).
    pub fn starts(&self) -> u64 {
        self.starts.load(Ordering::SeqCst)
    }

    /// How many requests were sent again after a fault of another request.
    pub fn retries(&self) -> u64 {
        self.retries.load(Ordering::SeqCst)
    }

    /// How many second replies to an id already answered were dropped.
    pub fn dropped_replies(&self) -> u64 {
        self.dropped.count.load(Ordering::SeqCst)
    }

    fn spawn(&self) -> Result<Arc<Process>, Error> {
        let n = self.starts.fetch_add(1, Ordering::SeqCst) + 1;
        let Spawned {
            child,
            stdin,
            stdout,
            pid,
            group,
        } = self.line.start(self.log.clone(), Some(n))?;
        let role = self.line.role;
        let process = Arc::new(Process {
            pid,
            stdin: tokio::sync::Mutex::new(Some(stdin)),
            pending: Mutex::new(HashMap::new()),
            next_seq: AtomicU64::new(0),
            answered: Mutex::new(Answered::default()),
            alive: AtomicBool::new(true),
            child: Mutex::new(Some(child)),
            group: Mutex::new(Some(group)),
            log: self.log.clone(),
            role,
            dropped: Arc::clone(&self.dropped),
        });
        let reader = Arc::clone(&process);
        tokio::spawn(async move {
            let mut stdout = BufReader::new(stdout);
            let mut bytes = Vec::new();
            loop {
                bytes.clear();
                match stdout.read_until(b'\n', &mut bytes).await {
                    Ok(0) => {
                        let reason = match reader.exit_status().await {
                            Some(status) => format!("the agent process exited ({status})"),
                            None => "the agent closed its standard output".to_owned(),
                        };
                        reader.fail(&reason, Culprit::Unknown);
                        break;
                    }
                    Err(e) => {
                        let reason = format!(
                            "cannot read the agent's output: {}",
                            e.to_string().to_lowercase()
                        );
                        reader.fail(&reason, Culprit::Unknown);
                        break;
                    }
                    Ok(_) => {}
                }
                let violation = match read_reply_line(&bytes) {
                    ReplyLine::Blank => continue,
                    ReplyLine::Reply { id, reply } => deliver(&reader, &id, reply),
                    ReplyLine::NotUtf8 { id, shown } => {
                        let reason =
                            format!("the agent printed a line that is not UTF-8: `{shown}`");
                        let known =
                            id.filter(|id| reader.pending.lock().is_ok_and(|p| p.contains_key(id)));
                        Err((reason, known))
                    }
                    ReplyLine::Violation(reason) => Err((reason, None)),
                };
                if let Err((reason, culprit)) = violation {
                    reader.fail(
                        &reason,
                        culprit.as_deref().map_or(Culprit::Unknown, Culprit::Known),
                    );
                    break;
                }
            }
        });
        Ok(process)
    }

    /// The running process, or a new one when it died.
    async fn live(&self) -> Result<Arc<Process>, Error> {
        let mut current = self.current.lock().await;
        if let Some(p) = current.as_ref()
            && p.alive.load(Ordering::SeqCst)
        {
            return Ok(Arc::clone(p));
        }
        let process = self.spawn()?;
        *current = Some(Arc::clone(&process));
        Ok(process)
    }

    /// One attempt: the request sent to the live process and its reply
    /// awaited, within the timeout.
    async fn attempt(&self, id: &str, line: &str) -> Result<Reply, Fault> {
        let deadline = Instant::now() + self.timeout;
        let secs = self.timeout.as_secs_f64();
        let (process, mut rx) = loop {
            let process = self.live().await.map_err(|e| Fault::Own(e.to_string()))?;
            let (tx, rx) = oneshot::channel();
            let sent =
                tokio::time::timeout_at(deadline, send(&process, id, line, tx, deadline, secs))
                    .await;
            match sent {
                Ok(Sent::Yes) => break (process, rx),
                Ok(Sent::Dead) if Instant::now() < deadline => {}
                // It waited its whole time behind a process that ended
                // without reading it: not its fault.
                Ok(Sent::Dead) => {
                    return Err(Fault::Suspect(format!(
                        "the agent did not read its input for {secs} s"
                    )));
                }
                Ok(Sent::Failed(reason)) => {
                    process.fail(&reason, Culprit::Unknown);
                    break (process, rx);
                }
                Err(_) => {
                    process.fail(
                        &format!("the agent did not read its input for {secs} s"),
                        Culprit::Unknown,
                    );
                    break (process, rx);
                }
            }
        };
        match tokio::time::timeout_at(deadline, &mut rx).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(_)) => Err(Fault::Suspect("the agent process went away".to_owned())),
            Err(_) => {
                // A hang: the process is killed and restarted. It belongs to
                // the oldest request unanswered (what a sequential agent is
                // working on); the others in flight are innocent, this one
                // too when it was only queued behind it.
                let culprit = process.oldest_pending().unwrap_or_else(|| id.to_owned());
                process.fail(
                    &format!("the agent did not answer `{culprit}` within {secs} s"),
                    Culprit::Known(&culprit),
                );
                match rx.await {
                    Ok(Err(Fault::Own(_))) | Err(_) => Err(Fault::Own(format!(
                        "the agent did not answer within {secs} s"
                    ))),
                    Ok(other) => other,
                }
            }
        }
    }

    async fn ask(&self, request: AgentRequest) -> Reply {
        let mut line =
            json!({"id": request.id, "messages": request.messages, "tools": *request.tools})
                .to_string();
        line.push('\n');
        let first = {
            let _shared = self.gate.read().await;
            self.attempt(&request.id, &line).await
        };
        let second = match first {
            Ok(reply) => return reply,
            Err(Fault::Own(reason)) => return Err(AgentError::agent(reason)),
            Err(Fault::Innocent(reason)) => {
                self.note_retry(&request.id, &reason, "");
                let _shared = self.gate.read().await;
                self.attempt(&request.id, &line).await
            }
            Err(Fault::Suspect(reason)) => {
                self.note_retry(&request.id, &reason, " alone");
                let _alone = self.gate.write().await;
                self.attempt(&request.id, &line).await
            }
        };
        match second {
            Ok(reply) => reply,
            Err(Fault::Own(reason) | Fault::Innocent(reason) | Fault::Suspect(reason)) => {
                Err(AgentError::agent(reason))
            }
        }
    }

    fn note_retry(&self, id: &str, reason: &str, how: &str) {
        self.retries.fetch_add(1, Ordering::SeqCst);
        if let StderrTo::Log(log) = &self.log {
            log.line(&format!(
                "{}: sending `{id}` again{how} after: {reason}",
                self.line.role
            ));
        }
    }
}

/// Registers the request on `process` and writes it (the stdin lock held
/// throughout, so the order requests are registered in is the order the
/// agent reads them).
async fn send(
    process: &Process,
    id: &str,
    line: &str,
    tx: Sender,
    deadline: Instant,
    secs: f64,
) -> Sent {
    let mut stdin = process.stdin.lock().await;
    let Some(pipe) = stdin.as_mut() else {
        return Sent::Dead;
    };
    {
        let Ok(mut pending) = process.pending.lock() else {
            return Sent::Dead;
        };
        // `fail` marks the process dead before it drains `pending`, so a
        // request registered here is either drained or sent.
        if !process.alive.load(Ordering::SeqCst) {
            return Sent::Dead;
        }
        let seq = process.next_seq.fetch_add(1, Ordering::SeqCst);
        pending.insert(id.to_owned(), (seq, tx));
    }
    match write_within(
        pipe,
        line.as_bytes(),
        deadline.saturating_duration_since(Instant::now()),
    )
    .await
    {
        Ok(()) => Sent::Yes,
        Err(WriteError::Io(e)) => Sent::Failed(format!("cannot write to the agent: {e}")),
        Err(WriteError::Timeout) => {
            Sent::Failed(format!("the agent did not read its input for {secs} s"))
        }
    }
}

/// One line an agent printed on stdout, read by protocol v1. Made once per
/// line and consumed at once, so the size of the reply variant costs
/// nothing worth boxing.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum ReplyLine {
    /// A blank line, which is ignored.
    Blank,
    /// A reply to request `id`: its message, or why it has none (the
    /// agent's own `error`, a `message` that is not a chat message).
    Reply {
        /// The request answered.
        id: String,
        /// The answer.
        reply: Result<AgentReply, AgentError>,
    },
    /// Bytes that are not UTF-8; the id when it can still be read.
    NotUtf8 {
        /// The request the line names, if any.
        id: Option<String>,
        /// The line's start, for the error.
        shown: String,
    },
    /// A line that breaks the protocol (not JSON, no string `id`), said as
    /// the error.
    Violation(String),
}

/// Reads one stdout line (with or without its newline). Never fails: what
/// is wrong with the line is part of the answer.
pub fn read_reply_line(bytes: &[u8]) -> ReplyLine {
    let Ok(line) = std::str::from_utf8(bytes) else {
        let lossy = String::from_utf8_lossy(bytes);
        let id = serde_json::from_str::<Value>(lossy.trim())
            .ok()
            .and_then(|v| v.get("id").and_then(Value::as_str).map(str::to_owned));
        return ReplyLine::NotUtf8 {
            id,
            shown: lossy.trim().chars().take(120).collect(),
        };
    };
    let line = line.trim_end_matches(['\n', '\r']);
    if line.trim().is_empty() {
        return ReplyLine::Blank;
    }
    let shown: String = line.chars().take(120).collect();
    let Ok(value) = serde_json::from_str::<Value>(line) else {
        return ReplyLine::Violation(format!(
            "the agent printed a line that is not JSON: `{shown}`"
        ));
    };
    let Some(id) = value.get("id").and_then(Value::as_str) else {
        return ReplyLine::Violation(format!(
            "the agent replied without a string `id`: `{shown}`"
        ));
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
    ReplyLine::Reply {
        id: id.to_owned(),
        reply,
    }
}

/// A protocol violation: the reason, and the culprit when known.
type Violation = (String, Option<String>);

/// Hands a reply to the request waiting for it. A second reply to an id
/// this process answered is dropped (logged and counted, the process goes
/// on); a reply to an id nobody asked for is a violation.
fn deliver(process: &Process, id: &str, reply: Reply) -> Result<(), Violation> {
    let sender = process
        .pending
        .lock()
        .ok()
        .and_then(|mut p| p.remove(id))
        .map(|(_, tx)| tx);
    let Some(sender) = sender else {
        if process.answered.lock().is_ok_and(|a| a.set.contains(id)) {
            process.log.line(&format!(
                "{}[{}]: replied twice to `{id}`; the second reply was dropped",
                process.role, process.pid
            ));
            if process.dropped.count.fetch_add(1, Ordering::SeqCst) == 0
                && let Ok(mut first) = process.dropped.first.lock()
            {
                *first = Some(id.to_owned());
            }
            return Ok(());
        }
        return Err((format!("the agent replied with unknown id `{id}`"), None));
    };
    if let Ok(mut answered) = process.answered.lock() {
        answered.insert(id);
    }
    let _ = sender.send(Ok(reply));
    Ok(())
}

impl Agent for CommandAgent {
    fn respond(&self, request: AgentRequest) -> BoxFuture<'_, Result<AgentReply, AgentError>> {
        Box::pin(self.ask(request))
    }

    fn describe(&self) -> String {
        format!("command:{}", self.line.display)
    }

    fn warnings(&self) -> Vec<String> {
        let n = self.dropped_replies();
        if n == 0 {
            return Vec::new();
        }
        let first = self
            .dropped
            .first
            .lock()
            .ok()
            .and_then(|f| f.clone())
            .unwrap_or_default();
        vec![format!(
            "the {} replied twice to {n} request(s) (the first `{first}`); each second reply was dropped and the first kept (run.log has each)",
            self.line.role
        )]
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

    #[test]
    fn answered_ids_are_bounded() {
        let mut a = Answered::default();
        for i in 0..(AGENT_ANSWERED_IDS_KEPT + 10) {
            a.insert(&i.to_string());
        }
        assert_eq!(a.set.len(), AGENT_ANSWERED_IDS_KEPT);
        assert!(!a.set.contains("0"));
        assert!(a.set.contains(&(AGENT_ANSWERED_IDS_KEPT + 9).to_string()));
    }
}
