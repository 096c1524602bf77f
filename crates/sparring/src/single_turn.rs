//! [`SingleTurnAgent`]: an agent that is a plain function, played single
//! turn: one message in, one trajectory out.
//!
//! People who own an agent often have it as a function: it takes the
//! customer's message, calls some tools, and returns its reply. Such a
//! function does not speak the engine's request/reply loop, so this module
//! turns it inside out. The function runs on tokio's blocking pool with a
//! [`Tools`] handle; each [`Tools::call`] becomes a tool call the engine
//! plays against the world (the sandbox, or the caller's `execute`, faults
//! first), and the answer comes back as the call's return value. What the
//! function returns is the agent's final reply. The engine records every
//! call and answer in the row's `messages`, exactly as for a model agent.
//!
//! Play it at `max_turns: 1`: the conversation ends with the function's
//! reply. (Should the person answer anyway, the answer starts the function
//! again, as a new message.)
//!
//! ```
//! use sparring::single_turn::{Ask, SingleTurn, SingleTurnAgent, Limits, Tools};
//!
//! struct Desk;
//! impl SingleTurn for Desk {
//!     fn play(&self, ask: Ask, tools: &Tools) -> Result<String, String> {
//!         let answer = tools
//!             .call("get_order", serde_json::json!({"order_id": "A1"}))
//!             .map_err(|e| e.to_string())?;
//!         Ok(format!("About `{}`: {answer}", ask.message))
//!     }
//!     fn describe(&self) -> String {
//!         "fn:desk".to_owned()
//!     }
//! }
//! let agent = SingleTurnAgent::new(Desk, Limits::default());
//! # let _ = agent;
//! ```

use serde_json::Value;
use sparring_types::values::{AvgTurns, Turns};
use sparring_types::{
    Agent, AgentError, AgentReply, AgentRequest, BoxFuture, FunctionCall, Message, OptionsPatch,
    Role, RolloutContext, ToolCall, defaults,
};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;
use tokio::sync::mpsc as async_mpsc;

/// What the function is given: the message and the rollout it belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ask {
    /// The person's message (the opening ask of the rollout).
    pub message: String,
    /// The rollout being played, when called from a run.
    pub rollout: Option<RolloutContext>,
}

/// A function played as an agent. `play` blocks (it runs on the blocking
/// pool) and may call tools any number of times, one at a time.
pub trait SingleTurn: Send + Sync + 'static {
    /// Answers one message: the reply text, or why it could not (the row
    /// then ends `agent_error` with that text).
    fn play(&self, ask: Ask, tools: &Tools) -> Result<String, String>;

    /// A short description for rows and logs (`fn:NAME`), without secrets.
    fn describe(&self) -> String;
}

/// Why a tool call got no answer: the rollout no longer listens.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolsError {
    /// The turn was cut off after `max_tool_steps` requests; the call was
    /// made (it is in the row) but its answer never comes back.
    #[error(
        "tool limit: the turn was cut off after {0} requests (`max_tool_steps`); return a reply sooner"
    )]
    ToolLimit(u32),
    /// The agent took longer than `agent_timeout` and its rollout ended.
    #[error("the rollout ended: the agent did not answer within `agent_timeout`")]
    Ended,
}

/// One call the function made, with the answer it got.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedCall {
    /// The tool's name.
    pub tool: String,
    /// The arguments as given.
    pub arguments: Value,
    /// The world's answer: `{"ok": true, "result": …}` or `{"ok": false,
    /// "error": {"kind", "message", "hint"}}`.
    pub answer: Value,
}

enum Event {
    Call { tool: String, arguments: Value },
    Done(Result<String, AgentError>),
}

/// The function's way to the world: every call goes through the engine and
/// is recorded. Clones share one rollout.
#[derive(Clone)]
pub struct Tools {
    inner: Arc<ToolsInner>,
}

struct ToolsInner {
    events: async_mpsc::UnboundedSender<Event>,
    /// One call at a time: the lock is held until the answer arrives.
    answers: Mutex<mpsc::Receiver<Answer>>,
    calls: Mutex<Vec<RecordedCall>>,
}

/// A tool result for the function, or why none will come.
enum Answer {
    Content(String),
    Closed(ToolsError),
}

impl std::fmt::Debug for Tools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tools")
            .field("calls", &self.calls().len())
            .finish()
    }
}

impl Tools {
    /// Calls `tool` with `arguments` (a JSON object) and blocks until the
    /// world answers. The answer is the JSON a model agent would see.
    ///
    /// # Errors
    ///
    /// [`ToolsError`] when the rollout no longer listens (tool limit,
    /// timeout).
    pub fn call(&self, tool: &str, arguments: Value) -> Result<Value, ToolsError> {
        let answers = self.inner.answers.lock().map_err(|_| ToolsError::Ended)?;
        self.inner
            .events
            .send(Event::Call {
                tool: tool.to_owned(),
                arguments: arguments.clone(),
            })
            .map_err(|_| ToolsError::Ended)?;
        let text = match answers.recv() {
            Ok(Answer::Content(text)) => text,
            Ok(Answer::Closed(e)) => return Err(e),
            Err(_) => return Err(ToolsError::Ended),
        };
        let answer = serde_json::from_str(&text).unwrap_or(Value::String(text));
        if let Ok(mut calls) = self.inner.calls.lock() {
            calls.push(RecordedCall {
                tool: tool.to_owned(),
                arguments,
                answer: answer.clone(),
            });
        }
        Ok(answer)
    }

    /// The calls made so far, in order, with their answers.
    pub fn calls(&self) -> Vec<RecordedCall> {
        self.inner
            .calls
            .lock()
            .map(|c| c.clone())
            .unwrap_or_default()
    }
}

/// How long the function may take and how many requests a turn has:
/// `agent_timeout` and `max_tool_steps` as the run resolves them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Longest wait for the function's next call or its reply.
    pub timeout: Duration,
    /// Requests per turn before the engine cuts the turn off.
    pub max_tool_steps: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs_f64(defaults::AGENT_TIMEOUT_SECS),
            max_tool_steps: defaults::MAX_TOOL_STEPS,
        }
    }
}

impl Limits {
    /// The limits of resolved options.
    pub fn of(options: &sparring_types::SimulateOptions) -> Self {
        Self {
            timeout: Duration::from_secs_f64(options.agent_timeout),
            max_tool_steps: options.max_tool_steps,
        }
    }
}

/// The options a run of a single-turn agent plays at: `given` with
/// `max_turns` 1 (the conversation ends with the function's reply), and a
/// warning when `given` or the spec's own `spec_options` set the turn
/// options it overrides.
pub fn run_options(
    given: OptionsPatch,
    spec_options: &OptionsPatch,
) -> (OptionsPatch, Vec<String>) {
    let mut warnings = Vec::new();
    let set: Vec<&str> = [
        (
            "max_turns",
            given.max_turns.or(spec_options.max_turns).is_some(),
        ),
        (
            "avg_turns",
            given.avg_turns.or(spec_options.avg_turns).is_some(),
        ),
    ]
    .into_iter()
    .filter_map(|(name, set)| set.then_some(name))
    .collect();
    if !set.is_empty() {
        warnings.push(format!(
            "{} only apply to agents played turn by turn; a callable agent is played single turn (one message in, one trajectory out)",
            set.iter()
                .map(|o| format!("`{o}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let one = Turns::new(1).ok();
    let avg_turns = given
        .avg_turns
        .or(spec_options.avg_turns)
        .and_then(|_| AvgTurns::new(1.0).ok());
    (
        OptionsPatch {
            max_turns: one,
            avg_turns,
            ..given
        },
        warnings,
    )
}

/// A rollout whose function waits for a tool's answer.
struct Session {
    events: async_mpsc::UnboundedReceiver<Event>,
    answers: mpsc::Sender<Answer>,
    /// Requests of this rollout answered so far.
    requests: u32,
    /// Tool calls made so far (the next call's id is `call_{calls + 1}`).
    calls: u32,
}

/// A [`SingleTurn`] function as an [`Agent`].
pub struct SingleTurnAgent<F> {
    f: Arc<F>,
    limits: Limits,
    sampling: Option<Value>,
    /// Sessions waiting for a tool answer, by rollout and call id.
    sessions: Mutex<BTreeMap<String, Session>>,
    /// Distinguishes sessions played outside a run (no rollout context).
    loose: AtomicU64,
}

impl<F: SingleTurn> SingleTurnAgent<F> {
    /// Wraps `f` with the run's limits.
    pub fn new(f: F, limits: Limits) -> Self {
        Self {
            f: Arc::new(f),
            limits,
            sampling: None,
            sessions: Mutex::new(BTreeMap::new()),
            loose: AtomicU64::new(0),
        }
    }

    /// Records `sampling` on every row as given: a function samples however
    /// it samples, so rows carry none unless the caller says.
    #[must_use]
    pub fn with_sampling(mut self, sampling: Option<Value>) -> Self {
        self.sampling = sampling;
        self
    }

    /// Where a session's calls are filed: by the rollout (seed and index
    /// tell concurrent rollouts apart; replays of one run never overlap), so
    /// the call ids on the row stay `call_1`, `call_2`, … whatever the
    /// concurrency.
    fn key(rollout: Option<&RolloutContext>, loose: u64, call_id: &str) -> String {
        match rollout {
            Some(r) => format!("{}/{}/{call_id}", r.seed, r.rollout_index),
            None => format!("loose{loose}/{call_id}"),
        }
    }

    fn start(&self, message: String, rollout: Option<RolloutContext>) -> Session {
        let (events_tx, events_rx) = async_mpsc::unbounded_channel();
        let (answers_tx, answers_rx) = mpsc::channel();
        let tools = Tools {
            inner: Arc::new(ToolsInner {
                events: events_tx.clone(),
                answers: Mutex::new(answers_rx),
                calls: Mutex::new(Vec::new()),
            }),
        };
        let f = Arc::clone(&self.f);
        tokio::task::spawn_blocking(move || {
            let result = f
                .play(ask_of(message, rollout), &tools)
                .map_err(AgentError::agent);
            // The rollout may have ended already; nobody listens then.
            let _ = events_tx.send(Event::Done(result));
        });
        Session {
            events: events_rx,
            answers: answers_tx,
            requests: 0,
            calls: 0,
        }
    }

    async fn respond_inner(&self, request: AgentRequest) -> Result<AgentReply, AgentError> {
        let rollout = crate::engine::context::current_rollout();
        let last = request.messages.last();
        let (mut session, loose) = match last {
            Some(m) if m.role == Role::Tool => {
                let call_id = m.tool_call_id.clone().unwrap_or_default();
                let loose = loose_of(&call_id);
                let key = Self::key(rollout.as_ref(), loose, &call_id);
                let session = self
                    .sessions
                    .lock()
                    .ok()
                    .and_then(|mut s| s.remove(&key))
                    .ok_or_else(|| {
                        AgentError::agent(format!(
                            "a tool result for `{call_id}`, a call this agent is not waiting on"
                        ))
                    })?;
                // The function may have given up (timed out); then it
                // reads nothing, and the next event says how it ended.
                let _ = session
                    .answers
                    .send(Answer::Content(m.content_str().to_owned()));
                (session, loose)
            }
            _ => {
                let message = last
                    .filter(|m| m.role == Role::User)
                    .map(|m| m.content_str().to_owned())
                    .unwrap_or_default();
                let loose = self.loose.fetch_add(1, Ordering::Relaxed);
                (self.start(message, rollout.clone()), loose)
            }
        };
        session.requests += 1;
        let event = tokio::time::timeout(self.limits.timeout, session.events.recv()).await;
        match event {
            Err(_) => {
                let _ = session.answers.send(Answer::Closed(ToolsError::Ended));
                Err(AgentError::agent(format!(
                    "the agent did not answer within {} s (`agent_timeout`)",
                    self.limits.timeout.as_secs_f64()
                )))
            }
            Ok(None) => Err(AgentError::agent("the agent stopped without a reply")),
            Ok(Some(Event::Done(Ok(text)))) => Ok(self.reply(Message::text(Role::Assistant, text))),
            Ok(Some(Event::Done(Err(e)))) => Err(e),
            Ok(Some(Event::Call { tool, arguments })) => {
                session.calls += 1;
                let call_id = if rollout.is_some() {
                    format!("call_{}", session.calls)
                } else {
                    format!("call_{}_{loose}", session.calls)
                };
                let arguments = match arguments {
                    Value::Null => "{}".to_owned(),
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                if session.requests >= self.limits.max_tool_steps {
                    // The engine plays this call and then cuts the turn
                    // off: the function hears so instead of waiting.
                    let _ = session
                        .answers
                        .send(Answer::Closed(ToolsError::ToolLimit(session.requests)));
                } else if let Ok(mut sessions) = self.sessions.lock() {
                    sessions.insert(Self::key(rollout.as_ref(), loose, &call_id), session);
                }
                let message = Message {
                    role: Role::Assistant,
                    content: None,
                    tool_calls: vec![ToolCall {
                        id: call_id,
                        kind: "function".to_owned(),
                        function: FunctionCall {
                            name: tool,
                            arguments,
                        },
                    }],
                    tool_call_id: None,
                    name: None,
                };
                Ok(self.reply(message))
            }
        }
    }

    fn reply(&self, message: Message) -> AgentReply {
        AgentReply {
            message,
            sampling: self.sampling.clone(),
            logprobs: None,
            usage: None,
            finish: None,
        }
    }
}

fn ask_of(message: String, rollout: Option<RolloutContext>) -> Ask {
    Ask { message, rollout }
}

/// The session number a call id made outside a run carries (`call_K_N`).
fn loose_of(call_id: &str) -> u64 {
    call_id
        .rsplit('_')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

impl<F: SingleTurn> Agent for SingleTurnAgent<F> {
    fn respond(&self, request: AgentRequest) -> BoxFuture<'_, Result<AgentReply, AgentError>> {
        Box::pin(self.respond_inner(request))
    }

    fn describe(&self) -> String {
        self.f.describe()
    }
}
