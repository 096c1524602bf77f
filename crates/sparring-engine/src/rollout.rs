//! One conversation: person, agent and world take turns.

use crate::model_people::{ModelPerson, keep_error};
use crate::person::{Move, Person};
use crate::plan::Task;
use serde_json::{Value, json};
use sparring_reading::text::asks_question;
use sparring_types::seed::Stream;
use sparring_types::{
    Agent, AgentErrorKind, AgentReply, AgentRequest, EndedBy, ExecuteRequest, Message, Role,
    RolloutContext, SimulateOptions, Timings, ToolCall, ToolExecutor, Usage,
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
    /// What the agent's backend said about its requests.
    pub agent_log: AgentLog,
    /// The rollout's faults as the world recorded them (`situation.faults`).
    pub faults: Vec<sparring_types::FaultRecord>,
    /// Who played the person: `template`, or the model person's backend.
    pub user_model: String,
    /// Turns on which the model person's answer was replaced by the
    /// template person's, and the last errors that caused it.
    pub person_fallbacks: u32,
    /// The model person's last errors in this rollout.
    pub person_errors: Vec<String>,
    /// The turn cap drawn for this rollout when `avg_turns` is set.
    pub turn_cap: Option<u32>,
    /// How the person answered each request to confirm, in order (decided
    /// by the template person, also when a model person wrote the words).
    pub confirmations: Vec<sparring_types::Confirmation>,
}

/// What a model backend said about each request of a rollout: how it was
/// sampled, its log-probabilities and the tokens it used. Empty for agents
/// that say nothing (command agents).
#[derive(Clone, Debug, Default)]
pub struct AgentLog {
    /// Sampling settings of the first request, when its backend said.
    pub sampling: Option<Value>,
    /// Log-probabilities per request, when its backend gave them.
    pub logprobs: Vec<Value>,
    /// One entry per answered request whose backend said anything:
    /// `message` (index of the assistant message it produced), `sampling`,
    /// `usage`.
    pub requests: Vec<Value>,
    /// Tokens summed over the requests that reported usage, and how many did.
    pub usage: Option<(Usage, u32)>,
}

impl AgentLog {
    fn record(&mut self, reply: &AgentReply, message_index: usize) {
        if self.sampling.is_none() {
            self.sampling.clone_from(&reply.sampling);
        }
        if let Some(lp) = &reply.logprobs {
            self.logprobs.push(lp.clone());
        }
        if let Some(u) = reply.usage {
            let (sum, n) = self.usage.get_or_insert((Usage::default(), 0));
            sum.input_tokens += u.input_tokens;
            sum.output_tokens += u.output_tokens;
            *n += 1;
        }
        if reply.sampling.is_some() || reply.usage.is_some() || reply.finish.is_some() {
            let mut entry = json!({
                "message": message_index,
                "sampling": reply.sampling,
                "usage": reply.usage,
            });
            // How the reply ended, as the provider said (docs/rows.md).
            if let Some(f) = &reply.finish {
                entry["finish_reason"] = json!(f.reason);
                entry["stop"] = json!(f.stop.as_str());
                entry["refusal"] = json!(f.refusal);
            }
            self.requests.push(entry);
        }
    }
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
    /// A model playing the person; the template person otherwise (and for
    /// every turn the model fails).
    pub person_model: Option<&'a ModelPerson>,
}

/// Why a conversation ended, and the error when it was one.
type Ending = (EndedBy, Option<String>);

/// One conversation in progress: what it has said and what it has counted.
/// Its steps are named: [`Rollout::agent_turn`] (requests until the agent
/// answers the person), [`Rollout::call_tools`], [`Rollout::person_turn`],
/// and [`Rollout::finish`].
struct Rollout<'a> {
    setup: Setup<'a>,
    world: World,
    tools: Arc<Vec<Value>>,
    agent: &'a dyn Agent,
    clock: &'a dyn Clock,
    started: f64,
    messages: Vec<Message>,
    timings: Timings,
    agent_log: AgentLog,
    person: Person,
    turn_cap: Option<u32>,
    /// Agent requests so far (ids and default tool-call ids count them).
    requests: u32,
    /// Calls sent to the caller's world so far.
    world_calls: u32,
    /// Turns the model person played so far.
    person_turns: u32,
    person_fallbacks: u32,
    person_errors: Vec<String>,
}

impl<'a> Rollout<'a> {
    fn new(
        setup: Setup<'a>,
        world: World,
        tools: Arc<Vec<Value>>,
        agent: &'a dyn Agent,
        clock: &'a dyn Clock,
    ) -> Self {
        let task = setup.task;
        let person = Person::new(
            task.facts.clone(),
            task.persona.stance.as_str(),
            setup.options.patience,
            Stream::derive(setup.rollout_seed, "person", &[]),
        )
        .with_style(&task.persona.style);
        // With `avg_turns` every rollout draws its own cap from its own
        // stream, so no other draw of the rollout moves.
        let turn_cap = setup
            .options
            .avg_turns
            .map(|avg| turn_cap(setup.rollout_seed, setup.options.max_turns, avg));
        Self {
            started: clock.millis(),
            messages: vec![
                Message::text(Role::System, setup.system_prompt),
                Message::text(Role::User, task.ask.clone()),
            ],
            setup,
            world,
            tools,
            agent,
            clock,
            timings: Timings::default(),
            agent_log: AgentLog::default(),
            person,
            turn_cap,
            requests: 0,
            world_calls: 0,
            person_turns: 0,
            person_fallbacks: 0,
            person_errors: Vec::new(),
        }
    }

    /// The agent's turn: requests until it answers the person in text (that
    /// text), or the way the conversation ended.
    async fn agent_turn(&mut self) -> Result<String, Ending> {
        for _ in 0..self.setup.options.max_tool_steps {
            self.requests += 1;
            let asked = self.clock.millis();
            let reply = self
                .agent
                .respond(AgentRequest {
                    id: format!("{}-{}", self.setup.request_prefix, self.requests),
                    messages: self.messages.clone(),
                    tools: Arc::clone(&self.tools),
                })
                .await;
            self.timings.agent_ms += self.clock.millis() - asked;
            self.timings.agent_requests += 1;
            let reply = reply.map_err(|e| {
                let ended_by = match e.kind {
                    AgentErrorKind::Backend => EndedBy::BackendError,
                    _ => EndedBy::AgentError,
                };
                (ended_by, Some(e.message))
            })?;
            self.agent_log.record(&reply, self.messages.len());
            // A refusal, the content filter or the token limit ends the row
            // with its own `ended_by`; a cut-short reply is never executed.
            if let Some(cut) = reply.cut_short() {
                self.messages.push(cut.message);
                return Err((cut.ended_by, Some(cut.why)));
            }
            let mut reply = reply.message;
            if reply.role != Role::Assistant {
                let error = format!(
                    "the agent replied with role `{:?}`, not `assistant`",
                    reply.role
                )
                .to_lowercase();
                return Err((EndedBy::AgentError, Some(error)));
            }
            // Every call needs an id the tool message can answer.
            for (i, call) in reply.tool_calls.iter_mut().enumerate() {
                if call.id.is_empty() {
                    call.id = format!("call_{}_{i}", self.requests);
                }
            }
            let calls = reply.tool_calls.clone();
            let text = reply.content_str().to_owned();
            self.messages.push(reply);
            if calls.is_empty() {
                return Ok(text);
            }
            self.call_tools(&calls).await;
        }
        Err((EndedBy::ToolLimit, None))
    }

    /// Answers the agent's tool calls: the sandbox world, or the caller's
    /// after the sandbox's faults.
    async fn call_tools(&mut self, calls: &[ToolCall]) {
        for call in calls {
            let content = match call.function.parsed_arguments() {
                Some(args) => match self.setup.executor {
                    None => self.world.call(&call.function.name, &args).to_content(),
                    Some(executor) => {
                        self.world_calls += 1;
                        let request = ExecuteRequest {
                            id: format!("{}-w{}", self.setup.request_prefix, self.world_calls),
                            tool: call.function.name.clone(),
                            arguments: args,
                            rollout: RolloutContext {
                                prompt: self.setup.task.ask.clone(),
                                rollout_index: self.setup.rollout_index,
                                seed: self.setup.rollout_seed,
                            },
                        };
                        execute(&mut self.world, executor, request).await
                    }
                },
                None => json!({"ok": false, "error": {
                    "kind": "invalid_arguments",
                    "message": format!("arguments are not valid JSON: `{}`", call.function.arguments),
                    "hint": "send the arguments as a JSON object"}})
                .to_string(),
            };
            self.messages.push(Message::tool_result(call, content));
        }
    }

    /// The person's turn after the agent asked something: an answer, or
    /// `Some(UserLeft)` when the person walks away.
    async fn person_turn(&mut self, agent_text: &str) -> Option<EndedBy> {
        match self.person.answer(agent_text) {
            Move::Leave => Some(EndedBy::UserLeft),
            Move::Say(text) => {
                // The template person decided to stay (patience is drawn
                // there); a model person writes the words.
                let text = match self.setup.person_model {
                    None => text,
                    Some(model) => {
                        self.person_turns += 1;
                        let id = format!("{}-p{}", self.setup.request_prefix, self.person_turns);
                        match model.answer(self.setup.task, &self.messages, &id).await {
                            Ok(said) => said,
                            Err(e) => {
                                self.person_fallbacks += 1;
                                keep_error(&mut self.person_errors, e.to_string());
                                text
                            }
                        }
                    }
                };
                self.messages.push(Message::text(Role::User, text));
                None
            }
        }
    }

    /// The transcript of the conversation, ended as `ended_by`.
    fn finish(self, (ended_by, error): Ending) -> Transcript {
        let mut timings = self.timings;
        timings.rollout_ms = self.clock.millis() - self.started;
        Transcript {
            messages: self.messages,
            ended_by,
            error,
            timings,
            agent_log: self.agent_log,
            faults: self.world.faults().to_vec(),
            user_model: self.setup.person_model.map_or_else(
                || sparring_types::defaults::TEMPLATE.to_owned(),
                ModelPerson::model,
            ),
            person_fallbacks: self.person_fallbacks,
            person_errors: self.person_errors,
            turn_cap: self.turn_cap,
            confirmations: self.person.confirmations().to_vec(),
        }
    }
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
    let mut rollout = Rollout::new(setup, world, tools, agent, clock);
    let cap = rollout.turn_cap.unwrap_or(setup.options.max_turns);
    let mut turns = 0u32;
    loop {
        let text = match rollout.agent_turn().await {
            Ok(text) => text,
            Err(ending) => return rollout.finish(ending),
        };
        turns += 1;
        if !asks_question(&text) {
            return rollout.finish((EndedBy::AgentDone, None));
        }
        if turns >= cap {
            return rollout.finish((EndedBy::MaxTurns, None));
        }
        if let Some(ended_by) = rollout.person_turn(&text).await {
            return rollout.finish((ended_by, None));
        }
    }
}

/// The name of the stream a rollout's turn cap is drawn from.
pub const TURN_CAP_STREAM: &str = "turn_cap";

/// The turn cap of the rollout seeded `rollout_seed` under `avg_turns`:
/// `1 + Binomial(max_turns - 1, p)` with `p = (avg_turns - 1) / (max_turns -
/// 1)` (`p = 1` when `max_turns` is 1), drawn as that many Bernoulli draws
/// from the rollout's own [`TURN_CAP_STREAM`]. The caps average exactly
/// `avg_turns` and lie from 1 to `max_turns`. An `avg_turns` outside 1 to
/// `max_turns` (refused before any run) is clamped into it.
pub fn turn_cap(rollout_seed: u64, max_turns: u32, avg_turns: f64) -> u32 {
    let max_turns = max_turns.max(1);
    let p = if max_turns == 1 {
        1.0
    } else {
        let p = (avg_turns - 1.0) / f64::from(max_turns - 1);
        if p.is_nan() { 1.0 } else { p.clamp(0.0, 1.0) }
    };
    let mut stream = Stream::derive(rollout_seed, TURN_CAP_STREAM, &[]);
    1 + (1..max_turns)
        .map(|_| u32::from(stream.chance(p)))
        .sum::<u32>()
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
        return sparring_world::fault_error(kind, &tool, world.options()).to_content();
    }
    let answer = match executor.execute(request).await {
        Ok(value) => ToolResult::from_json(&value),
        Err(e) => {
            world.record_fault(&tool, sparring_types::FaultSource::Execute);
            ToolResult::failure(
                sparring_world::ErrorKind::Fault,
                format!("the world failed to answer `{tool}`: {e}"),
                Some("the call may be retried".to_owned()),
            )
        }
    };
    match fault {
        Some(kind) => sparring_world::fault_garble(kind, &answer, world.options()).to_content(),
        None => answer.to_content(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_average_avg_turns_within_bounds_and_repeat_per_seed() {
        let caps: Vec<u32> = (0..10_000u64).map(|s| turn_cap(s, 10, 3.5)).collect();
        assert!(
            caps.iter().all(|c| (1..=10).contains(c)),
            "a cap out of 1..=10"
        );
        let mean = f64::from(caps.iter().sum::<u32>()) / caps.len() as f64;
        assert!((mean - 3.5).abs() < 0.05, "mean cap {mean}");
        // The caps spread: a binomial, not a constant.
        assert!(
            caps.contains(&1) && caps.iter().any(|c| *c >= 7),
            "{caps:?}"
        );
        let again: Vec<u32> = (0..10_000u64).map(|s| turn_cap(s, 10, 3.5)).collect();
        assert_eq!(caps, again, "same seed, same caps");
        let other: Vec<u32> = (0..100u64).map(|s| turn_cap(s + 1, 10, 3.5)).collect();
        assert_ne!(&caps[..100], &other[..], "the seed moves the caps");
    }

    #[test]
    fn the_bounds_give_constant_caps() {
        for seed in 0..200u64 {
            assert_eq!(turn_cap(seed, 10, 1.0), 1, "avg 1: every cap is 1");
            assert_eq!(turn_cap(seed, 10, 10.0), 10, "avg = max: every cap is max");
            assert_eq!(turn_cap(seed, 1, 1.0), 1, "max_turns 1");
        }
    }

    #[test]
    fn fractional_averages_hold_for_other_caps() {
        for (max, avg) in [(4u32, 1.25), (20, 17.9), (2, 1.5)] {
            let n = 20_000u64;
            let sum: u64 = (0..n).map(|s| u64::from(turn_cap(s, max, avg))).sum();
            let mean = sum as f64 / n as f64;
            assert!(
                (mean - avg).abs() < 0.05,
                "max {max} avg {avg}: mean {mean}"
            );
        }
    }
}
