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
    Action {
        name: "transfer",
        done: &["transferred", "escalated"],
        nouns: &["transfer"],
        verbs: &["transfer"],
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
    let mut out = Vec::new();
    if sentence.trim_end().ends_with('?') {
        return out;
    }
    let w = words(sentence);
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
