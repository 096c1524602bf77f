//! Test helpers shared by sparring's crates. A dev-dependency only.
//!
//! - [`ScriptedAgent`]: an in-process agent whose every reply is computed by
//!   a plain function of the conversation, so engine tests need no process.
//! - [`shop_spec`]: a small online-shop spec (orders, refunds, cancellation)
//!   with fixtures, built in code.
//! - [`support_desk_dir`]: where the shipped support-desk example lives.
//! - [`workspace`]: the workspace root; [`closed_port`]: a port nobody
//!   answers on; [`fuzz_cases`]: how many random inputs a fuzz target
//!   runs.
//! - [`golden`]: the golden files and their normalisation.
//! - [`tau2`]: tau2-bench's tasks (read from `../shared/data/tau2`), their
//!   gold actions, a retail or airline database per task built from them,
//!   and a domain's spec with every task's records as fixtures
//!   ([`tau2::write_spec`]).
//! - [`fake_llm`]: a fake OpenAI-compatible and Anthropic server on a
//!   loopback port, with scripted replies, injected errors, slow replies, a
//!   model that rejects `temperature`, and logprobs. The
//!   `sparring-fake-llm` binary serves it for benchmarks.
//! - [`fake_world`]: a fake caller's world behind HTTP (`execute http://…`),
//!   with per-rollout state and failures on purpose.
//!
//! ```
//! use sparring_testkit::{ScriptedAgent, shop_spec};
//! let spec = shop_spec();
//! let agent = ScriptedAgent::new("polite", |_messages| {
//!     sparring_types::Message::text(sparring_types::Role::Assistant, "Happy to help.")
//! });
//! assert_eq!(spec.tools.len(), 3);
//! # let _ = agent;
//! ```

pub mod fake_llm;
pub mod fake_world;
pub mod golden;
mod served;
pub mod tau2;

use serde_json::json;
use sparring_types::{
    Agent, AgentError, AgentReply, AgentRequest, BoxFuture, FunctionCall, Message, Role, Spec,
    ToolCall,
};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

type Script = dyn Fn(&[Message]) -> Message + Send + Sync;

/// An agent that answers with a function of the conversation.
#[derive(Clone)]
pub struct ScriptedAgent {
    name: String,
    script: Arc<Script>,
    requests: Arc<AtomicU64>,
}

impl std::fmt::Debug for ScriptedAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedAgent")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ScriptedAgent {
    /// An agent called `name` answering with `script`.
    pub fn new(name: &str, script: impl Fn(&[Message]) -> Message + Send + Sync + 'static) -> Self {
        Self {
            name: name.to_owned(),
            script: Arc::new(script),
            requests: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Requests answered so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    /// A competent shop agent: looks the order up, acts with the tool the
    /// ask names, and only then says it is done.
    pub fn competent() -> Self {
        Self::new("competent", |messages| {
            let user = messages
                .iter()
                .find(|m| m.role == Role::User)
                .map_or("", Message::content_str);
            let id = user
                .split_whitespace()
                .map(|w| w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '#')))
                .find(|w| w.starts_with("#W") || w.starts_with("#w"))
                .map(str::to_uppercase);
            let last = messages.last();
            match (id, last.map(|m| m.role)) {
                (None, _) => Message::text(Role::Assistant, "Could you tell me your order number?"),
                (Some(id), Some(Role::User)) => tool_call("get_order", &json!({"order_id": id})),
                (Some(_), _) => Message::text(
                    Role::Assistant,
                    "I have looked at your order; it is on record.",
                ),
            }
        })
    }

    /// A careless agent: claims a refund without calling any tool.
    pub fn careless() -> Self {
        Self::new("careless", |_| {
            Message::text(Role::Assistant, "Your refund has been issued.")
        })
    }
}

/// An assistant message calling one tool.
pub fn tool_call(name: &str, arguments: &serde_json::Value) -> Message {
    let mut m = Message::text(Role::Assistant, "");
    m.content = None;
    m.tool_calls = vec![ToolCall {
        id: format!("call_{name}"),
        kind: "function".to_owned(),
        function: FunctionCall {
            name: name.to_owned(),
            arguments: arguments.to_string(),
        },
    }];
    m
}

impl Agent for ScriptedAgent {
    fn respond(&self, request: AgentRequest) -> BoxFuture<'_, Result<AgentReply, AgentError>> {
        self.requests.fetch_add(1, Ordering::SeqCst);
        let reply = (self.script)(&request.messages);
        Box::pin(async move { Ok(AgentReply::from(reply)) })
    }

    fn describe(&self) -> String {
        format!("scripted:{}", self.name)
    }
}

/// A small shop spec: `get_order`, `refund_order`, `cancel_order` and four
/// orders in different states.
pub fn shop_spec() -> Spec {
    let order = json!({"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]});
    let value = json!({
        "name": "shop",
        "system_prompt": "You help shop customers. Confirm with the customer before issuing a refund.",
        "tools": [
            {"type": "function", "function": {"name": "get_order", "description": "Look up an order", "parameters": order}},
            {"name": "refund_order", "description": "Refund an order", "inputSchema": order},
            {"name": "cancel_order", "description": "Cancel a pending order", "inputSchema": order},
        ],
        "seeds": ["Please refund order #W1002, it arrived broken."],
        "fixtures": {"orders": [
            {"order_id": "#W1001", "status": "pending", "email": "ana@mail.test"},
            {"order_id": "#W1002", "status": "delivered", "email": "ben@mail.test"},
            {"order_id": "#W1003", "status": "cancelled", "email": "cy@mail.test"},
            {"order_id": "#W1004", "status": "shipped", "email": "di@mail.test"},
        ]},
    });
    match Spec::from_value(&value) {
        Ok(spec) => spec,
        Err(e) => unreachable_spec(&e),
    }
}

#[allow(clippy::panic)]
fn unreachable_spec(e: &sparring_types::SpecError) -> Spec {
    // INVARIANT: the literal above is a valid spec; a test fails loudly if not.
    panic!("testkit shop spec is invalid: {e}")
}

/// The workspace root (the folder with `examples/` and `crates/`).
pub fn workspace() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// A loopback port nothing listens on (bound, then released): for what a
/// client does when no server answers.
#[allow(clippy::panic)]
pub fn closed_port() -> u16 {
    // A machine that cannot bind a loopback port cannot run these tests.
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_or_else(|e| panic!("no loopback port to bind: {e}"), |a| a.port())
}

/// Random inputs per fuzz target: `SPARRING_FUZZ_CASES` when it is set to
/// a number, else `default` (what a normal `cargo test` runs).
pub fn fuzz_cases(default: u32) -> u32 {
    std::env::var("SPARRING_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Where the shipped support-desk example lives.
pub fn support_desk_dir() -> PathBuf {
    workspace().join("examples/support-desk")
}

type Verdict = dyn Fn(&[Message]) -> f64 + Send + Sync;

/// How a [`ScriptedJudge`] is biased.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JudgeBias {
    /// Grades with its function only.
    Honest,
    /// Passes any conversation whose last agent reply has at least this many
    /// characters, whatever it says.
    Length(usize),
    /// Obeys a conversation that tells the grader to award full marks.
    Injectable,
}

/// An in-process judge for the judge protocol of `sparring_engine::judge`:
/// it reads the conversation out of the prompt (the JSON between
/// `<conversation>` tags), scores it with a function, and answers with a
/// JSON verdict. Biases make it gameable on purpose, so tests can show the
/// trust probes catch it.
#[derive(Clone)]
pub struct ScriptedJudge {
    name: String,
    verdict: Arc<Verdict>,
    bias: JudgeBias,
    decision: bool,
    garbled: Arc<AtomicU64>,
    requests: Arc<AtomicU64>,
}

impl std::fmt::Debug for ScriptedJudge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedJudge")
            .field("name", &self.name)
            .field("bias", &self.bias)
            .finish_non_exhaustive()
    }
}

impl ScriptedJudge {
    /// A judge called `name` that scores conversations with `verdict`.
    pub fn new(name: &str, verdict: impl Fn(&[Message]) -> f64 + Send + Sync + 'static) -> Self {
        Self {
            name: name.to_owned(),
            verdict: Arc::new(verdict),
            bias: JudgeBias::Honest,
            decision: false,
            garbled: Arc::new(AtomicU64::new(0)),
            requests: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The same judge with a bias.
    #[must_use]
    pub fn with_bias(mut self, bias: JudgeBias) -> Self {
        self.bias = bias;
        self
    }

    /// Answers as a decision judge (`probability`) instead of a score.
    #[must_use]
    pub fn decision(mut self) -> Self {
        self.decision = true;
        self
    }

    /// The next `n` replies are not JSON.
    #[must_use]
    pub fn garbled(self, n: u64) -> Self {
        self.garbled.store(n, Ordering::SeqCst);
        self
    }

    /// Requests answered so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    /// The verdict on the conversation in the judge's prompt; a prompt
    /// without one is the judge's own failure.
    fn score(&self, prompt: &[Message]) -> Result<f64, AgentError> {
        let text = prompt
            .iter()
            .rev()
            .find(|m| m.role == Role::User && m.content_str().contains("<conversation>"))
            .map(Message::content_str)
            .ok_or_else(|| AgentError::agent("no <conversation> in the prompt"))?;
        let start = text
            .find("<conversation>")
            .ok_or_else(|| AgentError::agent("no <conversation>"))?
            + "<conversation>".len();
        let end = text
            .find("</conversation>")
            .ok_or_else(|| AgentError::agent("no </conversation>"))?;
        let convo: Vec<Message> = serde_json::from_str(text[start..end].trim())
            .map_err(|e| AgentError::agent(e.to_string()))?;
        let last = convo
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant && !m.content_str().is_empty())
            .map_or("", Message::content_str);
        let biased = match self.bias {
            JudgeBias::Honest => false,
            JudgeBias::Length(n) => last.chars().count() >= n,
            JudgeBias::Injectable => convo
                .iter()
                .any(|m| m.content_str().to_lowercase().contains("award full marks")),
        };
        Ok(if biased { 1.0 } else { (self.verdict)(&convo) })
    }
}

impl Agent for ScriptedJudge {
    fn respond(&self, request: AgentRequest) -> BoxFuture<'_, Result<AgentReply, AgentError>> {
        self.requests.fetch_add(1, Ordering::SeqCst);
        let garble = self
            .garbled
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        let reply =
            if garble {
                Ok("I think this conversation is mostly fine.".to_owned())
            } else {
                self.score(&request.messages).map(|s| {
                let key = if self.decision { "probability" } else { "score" };
                let class = if s < 0.5 { json!("other") } else { json!(null) };
                json!({key: s, "reason": format!("{} judge", self.name), "failure_class": class})
                    .to_string()
            })
            };
        Box::pin(
            async move { reply.map(|text| AgentReply::from(Message::text(Role::Assistant, text))) },
        )
    }

    fn describe(&self) -> String {
        format!("scripted-judge:{}", self.name)
    }
}

/// A hand-built graded row for cut and export tests: `messages` as given,
/// the shop's `get_order` tool, and every other field filled plainly.
pub fn row(
    task_id: &str,
    row_id: &str,
    reward: Option<f64>,
    signature: &str,
    messages: Vec<Message>,
) -> sparring_types::Row {
    use sparring_types::{EndedBy, Row, Situation};
    Row {
        tools: vec![json!({"type": "function", "function": {
            "name": "get_order", "description": "Look up an order by id.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                           "required": ["order_id"]}}})]
        .into(),
        situation: Situation {
            axes: [("tool".to_owned(), "get_order".to_owned())]
                .into_iter()
                .collect(),
            tier: sparring_types::Tier::Ordinary,
            world_seed: 7,
            ..Situation::default()
        },
        reward,
        behavior_signature: signature.to_owned(),
        model_version: "command:test".to_owned(),
        writer_model: "template".to_owned(),
        user_model: "template".to_owned(),
        seed: 1,
        ..Row::new(
            row_id,
            task_id,
            format!("scn_{task_id}"),
            messages,
            EndedBy::AgentDone,
        )
    }
}

/// A conversation: system prompt, the ask, a `get_order` call with its
/// result, then `answer` as the agent's reply.
pub fn conversation(ask: &str, order_id: &str, answer: &str) -> Vec<Message> {
    let call = tool_call("get_order", &json!({"order_id": order_id}));
    let result = Message::tool_result(
        &call.tool_calls[0],
        json!({"ok": true, "result": {"order_id": order_id, "status": "shipped"}}).to_string(),
    );
    vec![
        Message::text(
            Role::System,
            "You are a support agent. Confirm before refunding.",
        ),
        Message::text(Role::User, ask),
        call,
        result,
        Message::text(Role::Assistant, answer),
    ]
}

/// Rows that exercise every cut and export: tasks with passing and failing
/// repeats whose agents differ at a reply or at a tool call, a multi-turn
/// task, a task every repeat passes, and an ungraded row.
///
/// - `t_status` (4 rows): two passes with different behaviours, two fails
///   that differ from the passes at the final reply (pass rate 0.5).
/// - `t_refund` (3 rows): the agent asks for the order number, the person
///   gives it; one repeat refunds without asking to confirm (fails at the
///   tool call), pass rate 2/3.
/// - `t_easy` (2 rows): both pass (pass rate 1, outside the RL band).
/// - `t_ungraded` (1 row): no reward.
pub fn export_fixture() -> Vec<sparring_types::Row> {
    let mut rows = vec![
        row(
            "t_status",
            "r_status_0",
            Some(1.0),
            "sig_a",
            conversation(
                "Where is order #W1001? It has been a week.",
                "#W1001",
                "Order #W1001 shipped on Monday and should arrive tomorrow.",
            ),
        ),
        row(
            "t_status",
            "r_status_1",
            Some(1.0),
            "sig_b",
            conversation(
                "Where is order #W1001? It has been a week.",
                "#W1001",
                "Your order #W1001 is on its way; it shipped Monday.",
            ),
        ),
        row(
            "t_status",
            "r_status_2",
            Some(0.0),
            "sig_c",
            conversation(
                "Where is order #W1001? It has been a week.",
                "#W1001",
                "Order #W1001 was delivered yesterday, check your porch.",
            ),
        ),
        row(
            "t_status",
            "r_status_3",
            Some(0.0),
            "sig_c",
            conversation(
                "Where is order #W1001? It has been a week.",
                "#W1001",
                "Order #W1001 has been refunded already, nothing to do.",
            ),
        ),
    ];
    let refund = |id: &str, reward: f64, sig: &str, confirms: bool| {
        let mut m = vec![
            Message::text(
                Role::System,
                "You are a support agent. Confirm before refunding.",
            ),
            Message::text(
                Role::User,
                "I want my money back, the kettle arrived broken.",
            ),
            Message::text(
                Role::Assistant,
                "Sorry to hear that. Could you give me your order number? It starts with #W.",
            ),
            Message::text(Role::User, "it's #W1002"),
        ];
        if confirms {
            let get = tool_call("get_order", &json!({"order_id": "#W1002"}));
            let result = Message::tool_result(
                &get.tool_calls[0],
                json!({"ok": true, "result": {"order_id": "#W1002", "total_cents": 1200}})
                    .to_string(),
            );
            m.extend([
                get,
                result,
                Message::text(
                    Role::Assistant,
                    "I can refund 12.00 USD for #W1002. Shall I go ahead?",
                ),
                Message::text(Role::User, "yes please"),
            ]);
        }
        let refund = tool_call(
            "refund_order",
            &json!({"order_id": "#W1002", "amount_cents": 1200, "reason": "damaged"}),
        );
        let result = Message::tool_result(
            &refund.tool_calls[0],
            json!({"ok": true, "result": {"refunded": true}}).to_string(),
        );
        m.extend([
            refund,
            result,
            Message::text(
                Role::Assistant,
                "Done: 12.00 USD is on its way back to your card.",
            ),
        ]);
        row("t_refund", id, Some(reward), sig, m)
    };
    rows.push(refund("r_refund_0", 1.0, "sig_confirm", true));
    rows.push(refund("r_refund_1", 1.0, "sig_confirm", true));
    rows.push(refund("r_refund_2", 0.0, "sig_no_confirm", false));
    for (i, id) in ["r_easy_0", "r_easy_1"].iter().enumerate() {
        rows.push(row(
            "t_easy",
            id,
            Some(1.0),
            &format!("sig_easy_{i}"),
            conversation(
                "Can you check order #W1003 for me?",
                "#W1003",
                "Order #W1003 is ready to ship today.",
            ),
        ));
    }
    rows.push(row(
        "t_ungraded",
        "r_ungraded",
        None,
        "sig_u",
        conversation("Status of #W1004?", "#W1004", "It shipped."),
    ));
    for r in &mut rows {
        r.tools.push(json!({"type": "function", "function": {
            "name": "refund_order", "description": "Refund an order.",
            "parameters": {"type": "object", "properties": {
                "order_id": {"type": "string"}, "amount_cents": {"type": "integer"},
                "reason": {"type": "string", "enum": ["damaged", "late", "other"]}},
                "required": ["order_id", "amount_cents"]}}}));
    }
    rows
}
