//! Model-backed writer and person, over the [`Agent`] trait.
//!
//! The offline [`writer`](crate::writer) and [`person`](crate::person) need no
//! model and are the default. A run may hand either role to a model (any
//! [`Agent`]: an OpenAI-compatible or Anthropic endpoint, or a command); the
//! engine reaches it only through the trait, never through `sparring-llm`.
//!
//! - **Writer.** [`write_asks`] asks the model, once per situation, for the
//!   situation's phrasings. The situation reaches the model as prose about
//!   the person (their mood, how they write, what went before, what they
//!   want, what they know), taken from the `prose_*` sections of
//!   `data/asks.toml`, never as labels. The facts (ids, emails, values) are
//!   still chosen from the world by the plan, so a model writes the words but
//!   never the ids. A reply is checked: JSON `{"phrasings": [...]}` with
//!   enough distinct texts, each naming the person's id when the situation
//!   gives one (except the `ambiguous` tier, which may leave it out), and no
//!   id, email or number the person was not given. A reply that fails is
//!   asked again once with what was wrong; a situation whose model failed
//!   keeps the template writer's phrasings, and the run records
//!   `generator_fallback` with the last errors. After
//!   [`WRITER_GIVE_UP`] failures and no success, the rest of the run stops
//!   asking (checked at batch boundaries, so the outcome is the same at any
//!   concurrency).
//! - **Person.** [`ModelPerson`] writes the person's answers. Whether the
//!   person leaves is still drawn by the template [`Person`](crate::person::Person)
//!   from its seeded stream (patience is the engine's, not the model's); when
//!   it stays, the model writes the words, prompted with the persona as prose
//!   and the facts it knows. An answer that fails (a backend error, an empty
//!   reply, an id or number the person could not know) is replaced by the
//!   template person's answer for that turn, and the run records
//!   `person_fallback`.

use crate::axes::Axes;
use crate::plan::{Plan, Task};
use crate::writer::Templates;
use serde_json::Value;
use sparring_types::{Agent, AgentError, AgentRequest, Message, Role, Spec};
use sparring_world::Operation;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Errors kept per role in the run's `search` record (the last ones).
pub const ERRORS_KEPT: usize = sparring_types::defaults::MODEL_ROLE_ERRORS_KEPT;
/// Failures with no success after which the writer is no longer asked.
pub const WRITER_GIVE_UP: u64 = sparring_types::defaults::WRITER_GIVE_UP;
/// Times a writer reply that fails the checks is asked again.
pub const WRITER_RETRIES: u32 = 1;
/// Longest phrasing or person answer accepted, in characters.
pub const MAX_TEXT_CHARS: usize = 2000;

/// What the model writer did in a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriterReport {
    /// The writer's backend (`openai:…`).
    pub model: String,
    /// Situations the model was asked for.
    pub asked: u64,
    /// Situations written by the model.
    pub written: u64,
    /// Situations that kept the template phrasings because the model failed
    /// (or was no longer asked).
    pub fallbacks: u64,
    /// The last errors, oldest first, at most [`ERRORS_KEPT`].
    pub errors: Vec<String>,
}

/// Keeps the last [`ERRORS_KEPT`] errors.
pub fn keep_error(errors: &mut Vec<String>, error: String) {
    errors.push(error);
    if errors.len() > ERRORS_KEPT {
        let drop = errors.len() - ERRORS_KEPT;
        errors.drain(..drop);
    }
}

fn prose(templates: &Templates, section: &str, key: &str) -> String {
    templates
        .list(section, key)
        .first()
        .cloned()
        .unwrap_or_default()
}

/// Whether a word is id-like: an email, a `#`-number, letters mixed with
/// digits (`W1001`), or five or more digits. Amounts, times and small
/// numbers are not.
fn id_like(token: &str) -> bool {
    // Digits with a short unit or ordinal after them (`3rd`, `2GB`, `10am`).
    let lead = token.chars().take_while(char::is_ascii_digit).count();
    let rest = &token[lead..];
    if lead > 0
        && rest.len() <= 3
        && rest.chars().all(|c| c.is_ascii_alphabetic())
        && !rest.is_empty()
    {
        return false;
    }
    let digits = token.chars().filter(char::is_ascii_digit).count();
    let letters = token.chars().filter(|c| c.is_alphabetic()).count();
    token.contains('@')
        || (token.starts_with('#') && digits > 0)
        || (digits > 0 && letters > 0 && token.chars().count() >= 3)
        || (digits >= 5 && letters == 0 && !token.contains(['.', ',']))
}

fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split_whitespace().map(|w| {
        w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '#' || c == '@'))
            .trim_start_matches('#')
            .to_lowercase()
    })
}

/// The id-like words of `text` that appear in none of `allowed`.
pub fn unknown_ids(text: &str, allowed: &[&str]) -> Vec<String> {
    let known: BTreeSet<String> = allowed.iter().flat_map(|a| tokens(a)).collect();
    let mut out = Vec::new();
    for w in text.split_whitespace() {
        let raw = w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '#' || c == '@'));
        let raw = raw.trim_end_matches('.');
        if raw.is_empty() || !id_like(raw) {
            continue;
        }
        let norm = raw.trim_start_matches('#').to_lowercase();
        // An email's parts (a name, a domain) are fine when the email is known.
        if !known.contains(&norm) && !out.contains(&raw.to_owned()) {
            out.push(raw.to_owned());
        }
    }
    out
}

fn contains_id(text: &str, id: &str) -> bool {
    let id = id.trim_start_matches('#').to_lowercase();
    tokens(text).any(|t| t == id)
}

/// One situation's prompt inputs, read from a task and the plan's axes.
struct Situation {
    rule: Option<String>,
    operation: Operation,
    thing: String,
}

fn situation(axes: &Axes, task: &Task) -> Situation {
    let get = |k: &str| task.situation.axes.get(k).cloned().unwrap_or_default();
    let model = axes.models.iter().find(|m| m.name == get("tool"));
    Situation {
        rule: axes.rule(&get("policy_rule")).map(|r| r.text.clone()),
        operation: model.map_or(Operation::Other, |m| m.operation.clone()),
        thing: model
            .and_then(|m| m.entity.as_deref())
            .map_or_else(|| "account".to_owned(), sparring_types::singular),
    }
}

/// The facts a person knows, as sentences: fields in words, values as the
/// template writer says them (schema words spoken, `one_way` → `one way`;
/// ids, emails and numbers exactly).
fn facts_prose(task: &Task) -> Vec<String> {
    let facts = &task.facts;
    let mut lines = Vec::new();
    for (field, value) in &facts.known {
        let value = &crate::writer::spoken(value);
        if field == "other_ids" {
            lines.push(format!(
                "They have several records that could match: {value}."
            ));
            continue;
        }
        if facts.wants.iter().any(|(p, _)| p == field) {
            continue;
        }
        lines.push(format!("Their {}: {value}.", field.replace('_', " ")));
    }
    for (param, value) in &facts.wants {
        lines.push(format!(
            "They want the {} to be: {}.",
            param.replace('_', " "),
            crate::writer::spoken(value)
        ));
    }
    lines
}

fn persona_prose(templates: &Templates, task: &Task) -> String {
    let p = &task.persona;
    let history = task.situation.history().unwrap_or_default().as_str();
    let first = p.name.split_whitespace().next().unwrap_or("They");
    format!(
        "The person is {}. {first} {}. {first} {}. {}",
        p.name,
        prose(templates, "prose_stance", p.stance.as_str()),
        prose(templates, "prose_style", &p.style),
        prose(templates, "prose_history", history),
    )
}

/// A goal as the person says it (`cancel my order`), told about them
/// (`cancel their order`).
fn their(goal: &str) -> String {
    goal.split(' ')
        .map(|w| match w {
            "my" => "their",
            "I" => "they",
            "me" => "them",
            other => other,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The writer's prompt for one situation: the system message and the
/// situation as prose. `n` is the phrasings asked for.
pub fn writer_prompt(
    templates: &Templates,
    axes: &Axes,
    spec: &Spec,
    task: &Task,
    n: usize,
) -> Vec<Message> {
    let s = situation(axes, task);
    let tier = task.situation.tier.as_str();
    let tier_text = prose(templates, "prose_tier", tier)
        .replace("{goal}", &their(&task.facts.goal))
        .replace("{thing}", &s.thing)
        .replace(
            "{rule}",
            s.rule
                .as_deref()
                .unwrap_or("the business's policy")
                .trim_end_matches(['.', '!']),
        );
    let system = format!(
        "You write the first message a customer sends to the support chat of this business. The business's policy, for context:\n<policy>\n{}\n</policy>\n\nWrite {n} different opening messages this one person could send about this one situation: each a different wording of the same request, in the person's own voice. Use the ids, emails, names and values given exactly as written, and never make up an order number, id, email, phone number or amount that is not given. Do not mention being an AI, a test or a simulation.\n\nAnswer with one JSON object and nothing else: {{\"phrasings\": [\"...\", ...]}}",
        spec.system_prompt.trim()
    );
    let mut user = vec![persona_prose(templates, task)];
    let want = match &s.operation {
        Operation::Other if task.arm == sparring_types::Arm::Seed => String::new(),
        _ => format!("They want to {}.", their(&task.facts.goal)),
    };
    if !want.is_empty() {
        user.push(want);
    }
    user.extend(facts_prose(task));
    user.push(tier_text);
    if task.arm == sparring_types::Arm::Seed {
        user.push(format!(
            "Their own words: \"{}\"\nWrite other wordings of this message.",
            task.ask
        ));
    }
    vec![
        Message::text(Role::System, system),
        Message::text(Role::User, user.join("\n")),
    ]
}

/// Why a writer's reply gives no phrasings ([`parse_phrasings`]); the
/// writer is asked again with the message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PhrasingsError {
    /// The reply holds no JSON object, as the reply reader words it.
    #[error("{0}")]
    NotJson(String),
    /// No `phrasings` list.
    #[error("`phrasings` is missing or not a list")]
    NoList,
    /// An item of the list is not text.
    #[error("a phrasing is not a string")]
    NotText,
    /// A phrasing longer than `max` characters.
    #[error("a phrasing is longer than {max} characters")]
    TooLong {
        /// The most characters accepted ([`MAX_TEXT_CHARS`]).
        max: usize,
    },
    /// Fewer distinct phrasings than asked for.
    #[error("{got} distinct phrasing(s), {wanted} asked for")]
    TooFew {
        /// Distinct phrasings in the reply.
        got: usize,
        /// Phrasings asked for.
        wanted: usize,
    },
    /// A phrasing names ids the person was not given.
    #[error("a phrasing names `{}`, which the person was not given", .0.join("`, `"))]
    Invented(Vec<String>),
    /// A phrasing leaves out the id the person must give.
    #[error("a phrasing leaves out the id `{0}`")]
    LeavesOutId(String),
}

/// Checks a writer's reply and returns `n` phrasings.
pub fn parse_phrasings(text: &str, task: &Task, n: usize) -> Result<Vec<String>, PhrasingsError> {
    let value = sparring_reading::text::json_object(text).map_err(PhrasingsError::NotJson)?;
    let list = value
        .get("phrasings")
        .and_then(Value::as_array)
        .ok_or(PhrasingsError::NoList)?;
    let mut out: Vec<String> = Vec::new();
    for item in list {
        let Some(t) = item.as_str().map(str::trim) else {
            return Err(PhrasingsError::NotText);
        };
        if t.is_empty() || out.iter().any(|o| o == t) {
            continue;
        }
        if t.chars().count() > MAX_TEXT_CHARS {
            return Err(PhrasingsError::TooLong {
                max: MAX_TEXT_CHARS,
            });
        }
        out.push(t.to_owned());
    }
    if out.len() < n {
        return Err(PhrasingsError::TooFew {
            got: out.len(),
            wanted: n,
        });
    }
    out.truncate(n);
    let known: Vec<&str> = task
        .facts
        .known
        .values()
        .map(String::as_str)
        .chain(task.facts.wants.iter().map(|(_, v)| v.as_str()))
        .chain(std::iter::once(task.ask.as_str()).filter(|_| task.arm == sparring_types::Arm::Seed))
        .collect();
    for p in &out {
        let invented = unknown_ids(p, &known);
        if !invented.is_empty() {
            return Err(PhrasingsError::Invented(invented));
        }
        if task.situation.tier != sparring_types::Tier::Ambiguous
            && let Some((_, id)) = &task.facts.id
            && !contains_id(p, id)
        {
            return Err(PhrasingsError::LeavesOutId(id.clone()));
        }
    }
    Ok(out)
}

/// Why the writer gave no phrasings for a situation (it keeps the template
/// phrasings; the message goes to the writer's report).
#[derive(Debug, thiserror::Error)]
enum WriterError {
    /// The request failed.
    #[error("the writer failed: {0}")]
    Failed(AgentError),
    /// No reply parsed, the retries spent.
    #[error("the writer's reply was unusable after {attempts} attempts: {reason}")]
    Unusable {
        /// Replies asked for.
        attempts: u32,
        /// Why the last could not be used.
        reason: PhrasingsError,
    },
}

/// Asks the writer for one situation's phrasings, with one retry.
async fn write_one(
    writer: &dyn Agent,
    mut prompt: Vec<Message>,
    task: &Task,
    n: usize,
    id: &str,
) -> Result<Vec<String>, WriterError> {
    let no_tools = Arc::new(Vec::new());
    let mut attempt = 0;
    loop {
        let reply = writer
            .respond(AgentRequest {
                id: format!("{id}#{attempt}"),
                messages: prompt.clone(),
                tools: Arc::clone(&no_tools),
            })
            .await
            .map_err(WriterError::Failed)?;
        match parse_phrasings(reply.message.content_str(), task, n) {
            Ok(p) => return Ok(p),
            Err(why) if attempt < WRITER_RETRIES => {
                attempt += 1;
                prompt.push(reply.message);
                prompt.push(Message::text(
                    Role::User,
                    format!("That answer cannot be used: {why}. Answer with the JSON object only."),
                ));
            }
            Err(reason) => {
                return Err(WriterError::Unusable {
                    attempts: attempt + 1,
                    reason,
                });
            }
        }
    }
}

/// Rewrites the asks of the situations whose tasks are in `needed` (task
/// indices) with a model writer, `batch` situations at a time. Situations
/// the model fails keep the template phrasings.
///
/// `known` maps a scenario id to asks the model wrote for it in an earlier
/// attempt of the same run (`--resume`): they are kept word for word in the
/// first phrasings, so the tasks already on disk keep their ids, and the
/// model is asked only for the phrasings still missing.
pub async fn write_asks(
    plan: &mut Plan,
    spec: &Spec,
    writer: &dyn Agent,
    needed: &BTreeSet<usize>,
    known: &BTreeMap<String, Vec<String>>,
    batch: usize,
    request_prefix: &str,
) -> WriterReport {
    let mut report = WriterReport {
        model: writer.describe(),
        ..WriterReport::default()
    };
    let Ok(templates) = Templates::builtin() else {
        report
            .errors
            .push("the built-in prose is malformed".to_owned());
        return report;
    };
    // Situations in plan order, each with the positions of its tasks.
    let mut groups: BTreeMap<Vec<usize>, Vec<usize>> = BTreeMap::new();
    let mut order: Vec<Vec<usize>> = Vec::new();
    for (i, t) in plan.tasks.iter().enumerate() {
        if !groups.contains_key(&t.grid_row) {
            order.push(t.grid_row.clone());
        }
        groups.entry(t.grid_row.clone()).or_default().push(i);
    }
    let mut wanted: Vec<Vec<usize>> = order
        .into_iter()
        .filter(|g| groups[g].iter().any(|i| needed.contains(i)))
        .collect();
    // Asks written before keep their slots; a situation fully written
    // before is not asked again.
    let mut reused: BTreeMap<Vec<usize>, Vec<String>> = BTreeMap::new();
    for g in &wanted {
        let first = &plan.tasks[groups[g][0]];
        let (scenario, _) = crate::run::task_ids(first);
        if let Some(asks) = known.get(&scenario) {
            let mut asks = asks.clone();
            asks.sort();
            asks.dedup();
            reused.insert(g.clone(), asks);
        }
    }
    let slots: BTreeMap<Vec<usize>, usize> = reused
        .keys()
        .map(|g| {
            let seed = plan.tasks[groups[g][0]].arm == sparring_types::Arm::Seed;
            (g.clone(), groups[g].len() - usize::from(seed))
        })
        .collect();
    for (g, asks) in &reused {
        let seed = plan.tasks[groups[g][0]].arm == sparring_types::Arm::Seed;
        for (pos, text) in groups[g].iter().skip(usize::from(seed)).zip(asks) {
            let task = &mut plan.tasks[*pos];
            task.ask.clone_from(text);
            task.writer.clone_from(&report.model);
        }
    }
    wanted.retain(|g| {
        reused
            .get(g)
            .is_none_or(|a| a.len() < slots.get(g).copied().unwrap_or(0))
    });
    let mut failures = 0u64;
    let mut gave_up = false;
    for chunk in wanted.chunks(batch.max(1)) {
        if gave_up {
            report.fallbacks += chunk.len() as u64;
            continue;
        }
        let jobs = chunk.iter().map(|g| {
            let positions = &groups[g];
            let first = &plan.tasks[positions[0]];
            // A seed keeps its words as the first phrasing.
            let seed = first.arm == sparring_types::Arm::Seed;
            let n = positions.len() - usize::from(seed);
            let prompt = writer_prompt(&templates, &plan.axes, spec, first, n);
            let id = format!("{request_prefix}-w{}", first.index);
            async move {
                if n == 0 {
                    return Ok(Vec::new());
                }
                write_one(writer, prompt, first, n, &id).await
            }
        });
        let results = futures_join(jobs).await;
        for (g, result) in chunk.iter().zip(results) {
            let positions = &groups[g];
            let seed = plan.tasks[positions[0]].arm == sparring_types::Arm::Seed;
            if seed && positions.len() == 1 {
                continue;
            }
            report.asked += 1;
            match result {
                Ok(phrasings) => {
                    report.written += 1;
                    // Asks kept from before come first; new ones fill the rest.
                    let before = reused.get(g).cloned().unwrap_or_default();
                    let fresh = phrasings.into_iter().filter(|p| !before.contains(p));
                    let texts = before.iter().cloned().chain(fresh);
                    for (pos, text) in positions.iter().skip(usize::from(seed)).zip(texts) {
                        let task = &mut plan.tasks[*pos];
                        task.ask = text;
                        task.writer.clone_from(&report.model);
                    }
                }
                Err(e) => {
                    failures += 1;
                    report.fallbacks += 1;
                    keep_error(&mut report.errors, e.to_string());
                }
            }
        }
        if report.written == 0 && failures >= WRITER_GIVE_UP {
            gave_up = true;
            keep_error(
                &mut report.errors,
                format!(
                    "stopped asking the writer after {failures} failures and no success; the remaining situations use the template writer"
                ),
            );
        }
    }
    report
}

/// Runs futures concurrently and returns their outputs in order.
async fn futures_join<F: std::future::Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut set: Vec<std::pin::Pin<Box<F>>> = futures.map(Box::pin).collect();
    let mut out: Vec<Option<F::Output>> = (0..set.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in set.iter_mut().enumerate() {
            if out[i].is_some() {
                continue;
            }
            match f.as_mut().poll(cx) {
                std::task::Poll::Ready(v) => out[i] = Some(v),
                std::task::Poll::Pending => pending = true,
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.into_iter().flatten().collect()
}

/// Why the person model's answer cannot be used (the template person's
/// words stand; the message goes to the row's `person_errors`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PersonError {
    /// The request failed.
    #[error("the person model failed: {0}")]
    Failed(AgentError),
    /// Nothing but quotes and whitespace.
    #[error("the person model gave an empty answer")]
    Empty,
    /// An answer longer than `max` characters.
    #[error("the person model's answer is longer than {max} characters")]
    TooLong {
        /// The most characters accepted ([`MAX_TEXT_CHARS`]).
        max: usize,
    },
    /// The answer names ids the person could not know.
    #[error("the person model named `{}`, which the person could not know", .0.join("`, `"))]
    Invented(Vec<String>),
}

/// A person played by a model.
pub struct ModelPerson {
    backend: Arc<dyn Agent>,
    templates: Templates,
}

impl std::fmt::Debug for ModelPerson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelPerson")
            .field("model", &self.backend.describe())
            .finish_non_exhaustive()
    }
}

impl ModelPerson {
    /// A person played by `backend`.
    pub fn new(backend: Arc<dyn Agent>) -> Result<Self, crate::writer::TemplateError> {
        Ok(Self {
            backend,
            templates: Templates::builtin()?,
        })
    }

    /// The backend's description.
    pub fn model(&self) -> String {
        self.backend.describe()
    }

    /// The messages the model is asked with: the persona as prose in the
    /// system message, then the conversation from the person's side (its
    /// own messages as `assistant`, the agent's text as `user`; tool traffic
    /// left out, which the person never sees).
    pub fn prompt(&self, task: &Task, conversation: &[Message]) -> Vec<Message> {
        let mut about = vec![persona_prose(&self.templates, task)];
        about.push(format!("What they want: to {}.", their(&task.facts.goal)));
        about.extend(facts_prose(task));
        let system = format!(
            "You play a customer in a chat with a support agent. Stay in character on every turn.\n\n{}\n\nRules: answer the agent's questions only with the facts above; when asked for something not listed, say you don't know it. Never make up an id, number, email, address or amount. When the agent asks to confirm, agree only if it matches what you want (your record, your amount, your values); if it does not, say what is wrong and give the right value. Write only the customer's next message, short, in their voice, without quotes or a name label.",
            about.join("\n")
        );
        let mut messages = vec![Message::text(Role::System, system)];
        // Some APIs need the user first: the chat opening stands in.
        messages.push(Message::text(Role::User, "(The support chat opens.)"));
        let mut agent_text: Vec<String> = Vec::new();
        for m in conversation.iter().skip(1) {
            match m.role {
                Role::User => {
                    if !agent_text.is_empty() {
                        messages.push(Message::text(Role::User, agent_text.join("\n")));
                        agent_text.clear();
                    }
                    messages.push(Message::text(Role::Assistant, m.content_str()));
                }
                Role::Assistant if !m.content_str().trim().is_empty() => {
                    agent_text.push(m.content_str().trim().to_owned());
                }
                _ => {}
            }
        }
        if !agent_text.is_empty() {
            messages.push(Message::text(Role::User, agent_text.join("\n")));
        }
        messages
    }

    /// The person's next message, or why the model's answer cannot be used.
    pub async fn answer(
        &self,
        task: &Task,
        conversation: &[Message],
        id: &str,
    ) -> Result<String, PersonError> {
        let reply = self
            .backend
            .respond(AgentRequest {
                id: id.to_owned(),
                messages: self.prompt(task, conversation),
                tools: Arc::new(Vec::new()),
            })
            .await
            .map_err(PersonError::Failed)?;
        let text = reply
            .message
            .content_str()
            .trim()
            .trim_matches('"')
            .trim()
            .to_owned();
        if text.is_empty() {
            return Err(PersonError::Empty);
        }
        if text.chars().count() > MAX_TEXT_CHARS {
            return Err(PersonError::TooLong {
                max: MAX_TEXT_CHARS,
            });
        }
        let mut allowed: Vec<&str> = task.facts.known.values().map(String::as_str).collect();
        allowed.extend(task.facts.wants.iter().map(|(_, v)| v.as_str()));
        allowed.extend(conversation.iter().map(Message::content_str));
        let invented = unknown_ids(&text, &allowed);
        if !invented.is_empty() {
            return Err(PersonError::Invented(invented));
        }
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_like_words() {
        for w in ["W1001", "#1234", "ana@mail.test", "123456", "HAT170"] {
            assert!(id_like(w), "{w}");
        }
        for w in ["2", "24", "2024", "18.50", "hello", "3rd", "1,000", "2GB"] {
            assert!(!id_like(w), "{w}");
        }
        assert_eq!(
            unknown_ids(
                "It's #W1001, not W9999. Mail ana@mail.test.",
                &["W1001 ana@mail.test"]
            ),
            vec!["W9999".to_owned()]
        );
    }

    #[test]
    fn errors_keep_the_last() {
        let mut e = Vec::new();
        for i in 0..(ERRORS_KEPT + 3) {
            keep_error(&mut e, format!("e{i}"));
        }
        assert_eq!(e.len(), ERRORS_KEPT);
        assert_eq!(
            e.last().map(String::as_str),
            Some(&*format!("e{}", ERRORS_KEPT + 2))
        );
    }
}
