//! One conversation: person, agent and world take turns.

use crate::person::{Move, Person};
use crate::plan::Task;
use crate::text::asks_question;
use serde_json::{Value, json};
use sparring_types::seed::Stream;
use sparring_types::{
    Agent, AgentErrorKind, AgentRequest, EndedBy, ExecuteRequest, Message, Role, RolloutContext,
    SimulateOptions, Timings, ToolExecutor,
};
use sparring_world::{ToolResult, World};
use std::sync::Arc;

/// A source of milliseconds, for timing metadata only.
pub trait Clock: Send + Sync {
    /// Milliseconds since an arbitrary fixed point.
    fn millis(&self) -> f64;
}

/// A clock that always reads zero, for tests and reproducible output.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoClock;

impl Clock for NoClock {
    fn millis(&self) -> f64 {
        0.0
    }
}

/// What a rollout produced, before grading.
#[derive(Clone, Debug)]
pub struct Transcript {
    /// The conversation, system message first.
    pub messages: Vec<Message>,
    /// How it ended.
    pub ended_by: EndedBy,
    /// The agent's error, when it failed.
    pub error: Option<String>,
    /// Timing metadata.
    pub timings: Timings,
    /// Sampling settings of the agent's first turn, when its backend said.
    pub sampling: Option<Value>,
    /// Log-probabilities per agent turn, when its backend gave them.
    pub logprobs: Vec<Value>,
    /// The rollout's faults as the world recorded them (`situation.faults`).
    pub faults: Vec<Value>,
}

/// Everything a rollout needs besides the agent.
#[derive(Clone, Copy)]
pub struct Setup<'a> {
    /// The task to play.
    pub task: &'a Task,
    /// The system prompt.
    pub system_prompt: &'a str,
    /// Resolved options (caps, patience).
    pub options: &'a SimulateOptions,
    /// Seed of this rollout's streams.
    pub rollout_seed: u64,
    /// Index of the rollout within the run, for the caller's world.
    pub rollout_index: u64,
    /// Prefix of agent request ids, unique per rollout.
    pub request_prefix: &'a str,
    /// The caller's world, when it answers tool calls instead of the sandbox.
    pub executor: Option<&'a dyn ToolExecutor>,
}

/// Plays one conversation. Never fails: an agent failure ends the transcript
/// with `ended_by: agent_error`.
pub async fn play(
    setup: Setup<'_>,
    world: World,
    tools: Arc<Vec<Value>>,
    agent: &dyn Agent,
    clock: &dyn Clock,
) -> Transcript {
    let mut world = world;
    let task = setup.task;
    let started = clock.millis();
    let mut timings = Timings::default();
    let mut messages = vec![
        Message::text(Role::System, setup.system_prompt),
        Message::text(Role::User, task.ask.clone()),
    ];
    let mut person = Person::new(
        task.facts.clone(),
        &task.persona.stance,
        &setup.options.patience,
        Stream::derive(setup.rollout_seed, "person", &[]),
    )
    .with_style(&task.persona.style);
    let mut turns = 0u32;
    let mut request = 0u32;
    let mut sampling: Option<Value> = None;
    let mut logprobs: Vec<Value> = Vec::new();
    let mut tool_call = 0u32;
    let finish =
        |messages, ended_by, error, mut timings: Timings, sampling, logprobs, world: &World| {
            timings.rollout_ms = clock.millis() - started;
            Transcript {
                messages,
                ended_by,
                error,
                timings,
                sampling,
                logprobs,
                faults: world.faults(),
            }
        };
    loop {
        // The agent's turn: requests until it answers the person.
        let mut steps = 0u32;
        let reply_text = loop {
            if steps >= setup.options.max_tool_steps {
                return finish(
                    messages,
                    EndedBy::ToolLimit,
                    None,
                    timings,
                    sampling,
                    logprobs,
                    &world,
                );
            }
            steps += 1;
            request += 1;
            let asked = clock.millis();
            let reply = agent
                .respond(AgentRequest {
                    id: format!("{}-{request}", setup.request_prefix),
                    messages: messages.clone(),
                    tools: Arc::clone(&tools),
                })
                .await;
            timings.agent_ms += clock.millis() - asked;
            timings.agent_requests += 1;
            let reply = match reply {
                Ok(r) => r,
                Err(e) => {
                    let ended_by = match e.kind {
                        AgentErrorKind::Backend => EndedBy::BackendError,
                        _ => EndedBy::AgentError,
                    };
                    return finish(
                        messages,
                        ended_by,
                        Some(e.message),
                        timings,
                        sampling,
                        logprobs,
                        &world,
                    );
                }
            };
            if sampling.is_none() {
                sampling = reply.sampling;
            }
            if let Some(lp) = reply.logprobs {
                logprobs.push(lp);
            }
            let mut reply = reply.message;
            if reply.role != Role::Assistant {
                let error = format!(
                    "the agent replied with role `{:?}`, not `assistant`",
                    reply.role
                )
                .to_lowercase();
                return finish(
                    messages,
                    EndedBy::AgentError,
                    Some(error),
                    timings,
                    sampling,
                    logprobs,
                    &world,
                );
            }
            // Every call needs an id the tool message can answer.
            for (i, call) in reply.tool_calls.iter_mut().enumerate() {
                if call.id.is_empty() {
                    call.id = format!("call_{request}_{i}");
                }
            }
            let calls = reply.tool_calls.clone();
            let text = reply.content_str().to_owned();
            messages.push(reply);
            if calls.is_empty() {
                break text;
            }
            for call in &calls {
                let content = match call.function.parsed_arguments() {
                    Some(args) => match setup.executor {
                        None => world.call(&call.function.name, &args).to_content(),
                        Some(executor) => {
                            tool_call += 1;
                            let request = ExecuteRequest {
                                id: format!("{}-w{tool_call}", setup.request_prefix),
                                tool: call.function.name.clone(),
                                arguments: args,
                                rollout: RolloutContext {
                                    prompt: task.ask.clone(),
                                    rollout_index: setup.rollout_index,
                                    seed: setup.rollout_seed,
                                },
                            };
                            execute(&mut world, executor, request).await
                        }
                    },
                    None => json!({"ok": false, "error": {
                        "kind": "invalid_arguments",
                        "message": format!("arguments are not valid JSON: `{}`", call.function.arguments),
                        "hint": "send the arguments as a JSON object"}})
                    .to_string(),
                };
                messages.push(Message::tool_result(call, content));
            }
        };
        turns += 1;
        if !asks_question(&reply_text) {
            return finish(
                messages,
                EndedBy::AgentDone,
                None,
                timings,
                sampling,
                logprobs,
                &world,
            );
        }
        if turns >= setup.options.max_turns {
            return finish(
                messages,
                EndedBy::MaxTurns,
                None,
                timings,
                sampling,
                logprobs,
                &world,
            );
        }
        match person.answer(&reply_text) {
            Move::Say(text) => messages.push(Message::text(Role::User, text)),
            Move::Leave => {
                return finish(
                    messages,
                    EndedBy::UserLeft,
                    None,
                    timings,
                    sampling,
                    logprobs,
                    &world,
                );
            }
        }
    }
}

/// One call answered by the caller's world, after the sandbox's faults: a
/// blocking fault never reaches it; a garbling one garbles its answer. A
/// failure of the caller's world is a `fault` for the agent.
async fn execute(
    world: &mut World,
    executor: &dyn ToolExecutor,
    request: ExecuteRequest,
) -> String {
    let tool = request.tool.clone();
    let fault = world.draw_fault(&tool);
    if let Some(kind) = fault
        && kind.blocks()
    {
        return kind.error(&tool, world.options()).to_content();
    }
    let answer = match executor.execute(request).await {
        Ok(value) => ToolResult::from_json(&value),
        Err(e) => {
            world.record_fault(&tool, "execute");
            ToolResult::failure(
                sparring_world::ErrorKind::Fault,
                format!("the world failed to answer `{tool}`: {e}"),
                Some("the call may be retried".to_owned()),
            )
        }
    };
    match fault {
        Some(kind) => kind.garble(&answer, world.options()).to_content(),
        None => answer.to_content(),
    }
}
