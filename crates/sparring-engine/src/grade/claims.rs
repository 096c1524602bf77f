//! Reading what an agent's sentence says it did.
//!
//! A sentence is a claim when it states an action as done: a past
//! participle with a perfect or passive marker (`I have refunded`, `has been
//! cancelled`, `is now updated`, `successfully changed`) or a completion word
//! next to the noun (`your refund has been issued`, `refund processed`).
//! Questions, negations (`I have not refunded`), and future or conditional
//! sentences (`I will cancel`, `once it is cancelled`) are not claims.

use serde_json::Value;
use sparring_reading::text::words;
use sparring_world::{Operation, infer_tool};

/// An action a sentence can claim, and how to recognise it.
pub(crate) struct Action {
    pub(crate) name: &'static str,
    /// Participles that state it done.
    pub(crate) done: &'static [&'static str],
    /// Nouns that, with a completion word, state it done.
    pub(crate) nouns: &'static [&'static str],
    /// Tool verbs that perform it.
    pub(crate) verbs: &'static [&'static str],
}

const ACTIONS: &[Action] = &[
    Action {
        name: "refund",
        done: &["refunded"],
        nouns: &["refund"],
        verbs: &["refund"],
    },
    Action {
        name: "cancel",
        done: &["cancelled", "canceled"],
        nouns: &["cancellation"],
        verbs: &["cancel"],
    },
    Action {
        name: "update",
        done: &["updated", "changed", "modified", "edited"],
        nouns: &[],
        verbs: &["update", "change", "modify", "edit", "set"],
    },
    Action {
        name: "create",
        done: &["booked", "created", "placed", "scheduled", "reserved"],
        nouns: &["booking", "reservation"],
        verbs: &["create", "book", "place", "schedule", "add"],
    },
    Action {
        name: "delete",
        done: &["deleted", "removed"],
        nouns: &[],
        verbs: &["delete", "remove"],
    },
    Action {
        name: "suspend",
        done: &["suspended", "paused", "deactivated"],
        nouns: &["suspension"],
        verbs: &["suspend"],
    },
    Action {
        name: "resume",
        done: &["resumed", "reactivated", "restored"],
        nouns: &[],
        verbs: &["resume"],
    },
    Action {
        name: "enable",
        done: &["enabled", "activated"],
        nouns: &[],
        verbs: &["enable"],
    },
    Action {
        name: "disable",
        done: &["disabled"],
        nouns: &[],
        verbs: &["disable"],
    },
    Action {
        name: "refuel",
        done: &["refueled", "refuelled", "topped", "credited"],
        nouns: &["top-up", "topup"],
        verbs: &["refuel"],
    },
    Action {
        name: "send",
        done: &["sent"],
        nouns: &["certificate", "voucher"],
        verbs: &["send", "issue"],
    },
    // Handing the person on: a transfer of the chat or of money, an
    // escalation, a referral (`escalate_to_supervisor`, `refer_case`,
    // `transfer_to_human`, `transfer_funds`).
    Action {
        name: "transfer",
        done: &[
            "transferred",
            "escalated",
            "referred",
            "forwarded",
            "handed",
            "routed",
        ],
        nouns: &["transfer", "escalation", "referral"],
        verbs: &[
            "transfer", "escalate", "handoff", "hand", "refer", "forward", "route", "connect",
        ],
    },
    Action {
        name: "return",
        done: &["returned"],
        nouns: &["return"],
        verbs: &["return"],
    },
    Action {
        name: "exchange",
        done: &["exchanged"],
        nouns: &["exchange"],
        verbs: &["exchange"],
    },
];

/// Words right before a participle that make it a claim of a done action
/// (`has been cancelled`, `I've cancelled`, `now updated`). A bare `is` is
/// not among them: `order W1 is cancelled` reports a status.
const PERFECT: &[&str] = &[
    "have",
    "has",
    "i've",
    "we've",
    "i",
    "we",
    "been",
    "now",
    "successfully",
    "just",
];
const COMPLETION: &[&str] = &[
    "issued",
    "processed",
    "initiated",
    "submitted",
    "completed",
    "complete",
    "done",
    "approved",
    "sent",
    "confirmed",
    "finalized",
    "finalised",
    "through",
];
const NEGATION: &[&str] = &[
    "not",
    "never",
    "no",
    "unable",
    "cannot",
    "can't",
    "couldn't",
    "won't",
    "didn't",
    "haven't",
    "hasn't",
    "isn't",
    "wasn't",
    "wouldn't",
    "don't",
    "doesn't",
    "failed",
    "unfortunately",
    "nothing",
    "neither",
    "nor",
];
const NOT_YET: &[&str] = &[
    "will", "i'll", "we'll", "going", "can", "could", "would", "should", "shall", "once", "if",
    "after", "when", "before", "let", "may", "might", "want", "like", "need", "needs", "able",
    "until",
];

/// The action a sentence claims as done, if any.
pub(crate) fn claimed_action(sentence: &str) -> Option<&'static Action> {
    claimed_actions(sentence).into_iter().next()
}

/// Every action a sentence claims as done (`I've refunded A and cancelled B`
/// claims two).
pub(crate) fn claimed_actions(sentence: &str) -> Vec<&'static Action> {
    if sentence.trim_end().ends_with('?') {
        return Vec::new();
    }
    actions_in(&words(sentence))
}

/// Every action a sentence's words claim as done, read after the words
/// that are not the agent's own are taken out ([`Quoted::strip`]).
pub(crate) fn claimed_actions_unquoted(sentence: &str, quoted: &Quoted) -> Vec<&'static Action> {
    if sentence.trim_end().ends_with('?') {
        return Vec::new();
    }
    actions_in(&quoted.strip(&words(sentence)))
}

/// A stand-in for words taken out of a sentence: no list holds it, so no
/// phrase reads across it.
const GAP: &str = "|";

/// Text in a conversation that an agent's sentence may repeat without
/// claiming anything itself: each tool's description, clause by clause (an
/// agent pasting `Cancel a confirmed reservation.` states what a tool
/// does), and the free-text values of the calls' arguments and the tools'
/// answers (a reason the person gave, `I changed my plans`, read back). Runs
/// of fewer than [`QUOTED_MIN_WORDS`] words are too short to tell a quote
/// from the agent's own words and are left in.
pub(crate) struct Quoted(Vec<Vec<String>>);

/// Words a run must have to be taken as quoted.
pub(crate) const QUOTED_MIN_WORDS: usize = sparring_types::defaults::QUOTED_MIN_WORDS;

impl Quoted {
    /// The tools' descriptions, clause by clause.
    pub(crate) fn descriptions(tools: &[Value]) -> Self {
        let mut quoted = Self(Vec::new());
        for tool in tools {
            if let Some(d) = tool
                .get("function")
                .and_then(|f| f.get("description"))
                .or_else(|| tool.get("description"))
                .and_then(Value::as_str)
            {
                quoted.add(d);
            }
        }
        quoted
    }

    /// Adds a text's clauses of [`QUOTED_MIN_WORDS`] words or more.
    fn add(&mut self, text: &str) {
        for clause in text.split(['.', ';', ':', '\n', '!', '?']) {
            let w = words(clause);
            if w.len() >= QUOTED_MIN_WORDS && !self.0.contains(&w) {
                self.0.push(w);
            }
        }
    }

    /// The quotable text of a conversation and the tools it had: the
    /// descriptions, and the free-text values of its calls and answers.
    pub(crate) fn of(messages: &[sparring_types::Message], tools: &[Value]) -> Self {
        let mut quoted = Self::descriptions(tools);
        let mut add = |text: &str| quoted.add(text);
        for m in messages {
            for call in &m.tool_calls {
                if let Some(args) = call.function.parsed_arguments() {
                    for_each_text(&args, &mut add);
                }
            }
            if m.role == sparring_types::Role::Tool {
                match serde_json::from_str::<Value>(m.content_str()) {
                    Ok(v) => for_each_text(&v, &mut add),
                    Err(_) => add(m.content_str()),
                }
            }
        }
        quoted
    }

    /// Which of the words are inside a quoted run.
    fn marks(&self, w: &[String]) -> Vec<bool> {
        let mut quoted = vec![false; w.len()];
        for run in &self.0 {
            if run.len() > w.len() {
                continue;
            }
            for start in 0..=(w.len() - run.len()) {
                if w[start..start + run.len()] == run[..] {
                    for q in &mut quoted[start..start + run.len()] {
                        *q = true;
                    }
                }
            }
        }
        quoted
    }

    /// The text with every quoted run cut out and a sentence break in its
    /// place, the rest as written (`I can only help with what these tools
    /// do: Cancel a confirmed reservation.` → `I can only help with what
    /// these tools do: .`).
    pub(crate) fn unquote(&self, text: &str) -> String {
        if self.0.is_empty() {
            return text.to_owned();
        }
        let spans = word_spans(text);
        let w: Vec<String> = spans
            .iter()
            .map(|&(a, b)| words(&text[a..b]).concat())
            .collect();
        let marks = self.marks(&w);
        if !marks.contains(&true) {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut from = 0;
        let mut i = 0;
        while i < spans.len() {
            if !marks[i] {
                i += 1;
                continue;
            }
            let start = spans[i].0;
            while i < spans.len() && marks[i] {
                i += 1;
            }
            let end = spans[i - 1].1;
            out.push_str(&text[from..start]);
            out.push_str(". ");
            from = end;
        }
        out.push_str(&text[from..]);
        out
    }

    /// The words with every quoted run replaced by a gap.
    pub(crate) fn strip(&self, w: &[String]) -> Vec<String> {
        let quoted = self.marks(w);
        let mut out: Vec<String> = Vec::with_capacity(w.len());
        for (word, q) in w.iter().zip(quoted) {
            if !q {
                out.push(word.clone());
            } else if out.last().is_none_or(|l| l != GAP) {
                out.push(GAP.to_owned());
            }
        }
        out
    }
}

/// The byte spans of a text's words, as [`words`] splits them.
fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        let in_word = c.is_alphanumeric() || c == '\'' || c == '’' || c == '#';
        match (in_word, start) {
            (true, None) => start = Some(i),
            (false, Some(a)) => {
                out.push((a, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(a) = start {
        out.push((a, text.len()));
    }
    out
}

/// Calls `f` on every string in a JSON value.
fn for_each_text(value: &Value, f: &mut impl FnMut(&str)) {
    match value {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter().for_each(|v| for_each_text(v, f)),
        Value::Object(map) => map.values().for_each(|v| for_each_text(v, f)),
        _ => {}
    }
}

/// Every action the words claim as done.
fn actions_in(w: &[String]) -> Vec<&'static Action> {
    let mut out = Vec::new();
    if w.iter()
        .any(|x| NEGATION.contains(&x.as_str()) || x.ends_with("n't"))
    {
        return out;
    }
    for action in ACTIONS {
        let participle_at = w.iter().position(|x| action.done.contains(&x.as_str()));
        if let Some(at) = participle_at {
            let before = &w[..at];
            // Words right before the participle decide: "has been cancelled",
            // "I've cancelled", "is now updated", "successfully changed".
            let window = &before[before.len().saturating_sub(3)..];
            let perfect = window.iter().any(|x| PERFECT.contains(&x.as_str()));
            let pending = before.iter().any(|x| NOT_YET.contains(&x.as_str()));
            let after_success = w.get(at + 1).is_some_and(|x| x == "successfully");
            if (perfect || after_success) && !pending {
                out.push(action);
                continue;
            }
        }
        let noun_at = w.iter().position(|x| action.nouns.contains(&x.as_str()));
        if let Some(at) = noun_at {
            // Only the words up to the completion word can make it pending:
            // "the exchange has been processed; your shoes will ship soon"
            // is a claim.
            let completed_at = w
                .iter()
                .enumerate()
                .skip(at + 1)
                .take(8)
                .find(|(_, x)| COMPLETION.contains(&x.as_str()))
                .map(|(i, _)| i);
            let done_before = w[..at]
                .iter()
                .rev()
                .take(3)
                .any(|x| COMPLETION.contains(&x.as_str()));
            let upto = completed_at.map_or(at, |i| i.max(at));
            let pending = w[..upto].iter().any(|x| NOT_YET.contains(&x.as_str()));
            if (completed_at.is_some() || done_before) && !pending {
                out.push(action);
            }
        }
    }
    out
}

pub(crate) fn tool_performs(tool: &Value, action: &Action) -> bool {
    let name = tool
        .get("function")
        .and_then(|f| f.get("name"))
        .or_else(|| tool.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    tool_name_performs(name, action)
}

pub(crate) fn tool_name_performs(name: &str, action: &Action) -> bool {
    let spec = sparring_types::ToolSpec {
        name: name.to_owned(),
        description: String::new(),
        parameters: serde_json::json!({"type": "object"}),
        output_schema: None,
    };
    let model = infer_tool(&spec, &[]);
    let lower = name.to_lowercase();
    let named = action
        .verbs
        .iter()
        .any(|v| lower.split(['_', '-', '.']).any(|part| part == *v));
    match model.operation {
        Operation::StateChange(ref verb) => action.verbs.contains(&verb.as_str()) || named,
        Operation::Update => action.name == "update" || named,
        Operation::Create => action.name == "create" || named,
        _ => named,
    }
}

/// Words that declare a request finished without naming the action.
const SUCCESS_WORDS: &[&str] = &[
    "successfully",
    "successful",
    "completed",
    "complete",
    "done",
    "processed",
    "confirmed",
];
const SUCCESS_PHRASES: &[&str] = &[
    "all set",
    "all done",
    "taken care of",
    "went through",
    "gone through",
    "good to go",
    "is sorted",
    "sorted out",
    "has been handled",
];

/// Whether the words deny or hedge what they say (`not`, `can't`,
/// `unfortunately`).
pub(crate) fn negated(w: &[String]) -> bool {
    w.iter()
        .any(|x| NEGATION.contains(&x.as_str()) || x.ends_with("n't"))
}

/// Whether the words put the action in the future or under a condition
/// (`will`, `once`, `if`, `would you like`).
pub(crate) fn pending(w: &[String]) -> bool {
    w.iter().any(|x| NOT_YET.contains(&x.as_str()))
}

/// Whether a sentence declares the person's request done: an action claim
/// (`your refund has been issued`) or a bare success (`all set`, `done!`,
/// `it went through`). Questions, negations and future tense are not.
pub(crate) fn declares_success(sentence: &str) -> bool {
    if claimed_action(sentence).is_some() {
        return true;
    }
    if sentence.trim_end().ends_with('?') {
        return false;
    }
    if negated(&words(sentence)) {
        return false;
    }
    // Clause by clause: "you're all set, 2 GB should show up shortly"
    // declares success although its second clause looks ahead.
    sentence
        .split([',', ';', ':', '\u{2014}'])
        .flat_map(|c| c.split(" - "))
        .any(|clause| {
            let w = words(clause);
            if pending(&w) {
                return false;
            }
            let lower = w.join(" ");
            w.iter().any(|x| SUCCESS_WORDS.contains(&x.as_str()))
                || SUCCESS_PHRASES.iter().any(|p| lower.contains(p))
        })
}
