//! The simulated person, played from templates.
//!
//! The person knows only its [`Facts`]: its name, its email, the id of its
//! record and the values it wants set. It answers the agent's questions from
//! those facts, says it does not know anything else, agrees when the agent
//! asks to confirm, and may walk away when asked one question too many
//! ([`patience`](leave_probability)). Its stance sets how it writes.

use crate::text::{sentences, words};
use sparring_types::Patience;
use sparring_types::seed::Stream;
use sparring_world::Operation;
use std::collections::BTreeMap;

const NAMES: &[&str] = &[
    "Ana Lima",
    "Ben Okafor",
    "Chloe Martin",
    "Dmitri Volkov",
    "Emma Schulz",
    "Farid Haddad",
    "Grace Kim",
    "Hiro Tanaka",
    "Isabel Rossi",
    "Jonas Berg",
    "Kwame Mensah",
    "Lucia Fernandez",
    "Maya Patel",
    "Nils Johansson",
    "Olivia Brown",
    "Priya Nair",
];

const ADDRESSES: &[&str] = &[
    "42 Elm Street, Springfield, IL 62704",
    "7 Harbour Road, Portland, ME 04101",
    "1180 Pine Avenue, Apt 3B, Austin, TX 78701",
    "15 Willow Lane, Madison, WI 53703",
];

const REASONS: &[&str] = &[
    "it arrived damaged",
    "I ordered the wrong size",
    "it never arrived",
    "I changed my mind",
];

/// What the person knows and wants.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    /// Field → value the person can give when asked.
    pub known: BTreeMap<String, String>,
    /// The id parameter and the id of the person's record, if any.
    pub id: Option<(String, String)>,
    /// Values the person wants set (parameter → value).
    pub wants: Vec<(String, String)>,
    /// What the person wants, as a verb phrase (`cancel my order`).
    pub goal: String,
}

impl Facts {
    /// Facts for a person with a name who wants what a tool does.
    pub fn new(name: &str, op: &Operation, entity: Option<&str>, tool: &str) -> Self {
        let mut known = BTreeMap::new();
        known.insert("name".to_owned(), name.to_owned());
        known.insert("email".to_owned(), email_for(name));
        let thing = entity.map_or_else(|| "request".to_owned(), sparring_types::singular);
        let goal = match op {
            Operation::Read => format!("know about my {thing}"),
            Operation::StateChange(verb) => {
                format!("{} my {thing}", crate::writer::verb_phrase(verb))
            }
            Operation::Update => format!("change my {thing}"),
            Operation::Create => format!("get a new {thing}"),
            Operation::Other => format!("sort out my request ({})", tool.replace('_', " ")),
        };
        Self {
            known,
            id: None,
            wants: Vec::new(),
            goal,
        }
    }

    /// Facts for a seed ask: the person knows its name and email and wants
    /// what the ask says.
    pub fn for_seed(ask: &str, name: &str) -> Self {
        let mut facts = Self::new(name, &Operation::Other, None, "request");
        "get what I asked for".clone_into(&mut facts.goal);
        // Ids the seed names are facts the person can repeat.
        for w in ask.split_whitespace() {
            let w = w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '#'));
            if w.len() >= 4 && w.chars().any(|c| c.is_ascii_digit()) {
                facts
                    .known
                    .entry("id".to_owned())
                    .or_insert_with(|| w.to_owned());
            }
        }
        facts
    }
}

fn email_for(name: &str) -> String {
    let mut parts = name.split_whitespace();
    let first = parts.next().unwrap_or("customer").to_lowercase();
    let last = parts.next().unwrap_or("").to_lowercase();
    format!("{first}.{last}@mail.test")
}

/// A person's name.
pub fn pick_name(stream: &mut Stream) -> String {
    stream.pick(NAMES).copied().unwrap_or("Sam Doe").to_owned()
}

/// An id shaped like `ids` but not among them.
pub fn unknown_id(ids: &[String], stream: &mut Stream) -> String {
    let template = stream
        .pick(ids)
        .cloned()
        .unwrap_or_else(|| "100000".to_owned());
    for attempt in 0..64u64 {
        let candidate: String = template
            .chars()
            .map(|c| {
                if c.is_ascii_digit() {
                    char::from(b'0' + (stream.below(10) as u8))
                } else {
                    c
                }
            })
            .collect();
        let candidate = if candidate == template || ids.contains(&candidate) {
            format!("{template}{attempt}")
        } else {
            candidate
        };
        if !ids.contains(&candidate) {
            return candidate;
        }
    }
    format!("{template}-x")
}

/// A plausible value the person would give for a parameter, if the name
/// says what it is.
pub fn value_for(param: &str, name: &str, stream: &mut Stream) -> Option<String> {
    let w = words(&param.replace('_', " "));
    let has = |k: &str| w.iter().any(|x| x == k);
    if has("address") {
        return stream.pick(ADDRESSES).map(|s| (*s).to_owned());
    }
    if has("reason") {
        return stream.pick(REASONS).map(|s| (*s).to_owned());
    }
    if has("email") {
        return Some(email_for(name));
    }
    if has("name") {
        return Some(name.to_owned());
    }
    None
}

/// The chance the person walks away instead of answering its `n`th
/// question (1-based), by patience.
pub fn leave_probability(patience: Patience, n: u32) -> f64 {
    use sparring_types::defaults::patience as odds;
    match (patience, n) {
        (_, 0 | 1) | (Patience::Endless, _) => 0.0,
        (Patience::Short, 2) => odds::SHORT_SECOND,
        (Patience::Short, _) => odds::SHORT_LATER,
        (Patience::Normal, 2) => odds::NORMAL_SECOND,
        (Patience::Normal, _) => odds::NORMAL_LATER,
    }
}

/// What the person does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Move {
    /// Says this.
    Say(String),
    /// Walks away without a word.
    Leave,
}

/// A person in one conversation.
#[derive(Debug)]
pub struct Person {
    facts: Facts,
    stance: String,
    patience: Patience,
    questions: u32,
    stream: Stream,
    style: String,
}

impl Person {
    /// A person with its facts, stance, patience and own random stream.
    pub fn new(facts: Facts, stance: &str, patience: Patience, stream: Stream) -> Self {
        Self {
            facts,
            stance: stance.to_owned(),
            patience,
            questions: 0,
            stream,
            style: "plain".to_owned(),
        }
    }

    /// The same person writing in `style` (see [`crate::writer::STYLES`]) on
    /// every turn.
    #[must_use]
    pub fn with_style(mut self, style: &str) -> Self {
        style.clone_into(&mut self.style);
        self
    }

    /// Answers an agent message that asks something.
    pub fn answer(&mut self, agent_text: &str) -> Move {
        self.questions += 1;
        if self
            .stream
            .chance(leave_probability(self.patience, self.questions))
        {
            return Move::Leave;
        }
        let lower = agent_text.to_lowercase();
        let questions: Vec<String> = sentences(agent_text)
            .into_iter()
            .filter(|s| s.ends_with('?'))
            .map(|s| s.to_lowercase())
            .collect();
        let mut parts: Vec<String> = Vec::new();
        let confirm = [
            "confirm",
            "shall i",
            "should i",
            "would you like me to",
            "do you want me to",
            "proceed",
            "go ahead",
            "is that correct",
            "is that right",
            "okay to",
            "ok to",
            "want me to",
        ];
        if confirm.iter().any(|c| lower.contains(c)) {
            parts.push(match self.stance.as_str() {
                "hurried" => "yes, do it".to_owned(),
                "frustrated" => "Yes. Go ahead, finally.".to_owned(),
                _ => "Yes, please go ahead.".to_owned(),
            });
        }
        let mut unknown = false;
        for q in &questions {
            let w = words(q);
            let has = |k: &str| w.iter().any(|x| x == k || x.trim_end_matches('s') == k);
            let asks_id = has("id") || has("number") || q.contains('#') || has("reference");
            if asks_id {
                match self
                    .facts
                    .id
                    .as_ref()
                    .map(|(_, id)| id.clone())
                    .or_else(|| self.facts.known.get("id").cloned())
                {
                    Some(id) => parts.push(format!("It's {id}.")),
                    None => unknown = true,
                }
            } else if has("email") {
                if let Some(e) = self.facts.known.get("email") {
                    parts.push(format!("My email is {e}."));
                }
            } else if has("name") {
                if let Some(n) = self.facts.known.get("name") {
                    parts.push(format!("I'm {n}."));
                }
            } else if has("address") {
                match self.facts.wants.iter().find(|(p, _)| p.contains("address")) {
                    Some((_, a)) => parts.push(format!("The new address is {a}.")),
                    None => unknown = true,
                }
            } else if has("why") || has("reason") {
                match self.facts.wants.iter().find(|(p, _)| p.contains("reason")) {
                    Some((_, r)) => parts.push(format!("Because {r}.")),
                    None => parts.push("I'd rather not go into it.".to_owned()),
                }
            } else if !confirm.iter().any(|c| q.contains(c)) {
                unknown = true;
            }
        }
        if parts.is_empty() || unknown {
            parts.push(format!(
                "I don't know anything more than that, I just want to {}.",
                self.facts.goal
            ));
        }
        parts.dedup();
        let text = parts.join(" ");
        let lower =
            self.stance == "hurried" || matches!(self.style.as_str(), "lowercase" | "clipped");
        let text = if lower {
            crate::writer::lowercase_keep_ids(&text)
        } else {
            text
        };
        let text = match self.style.as_str() {
            "clipped" => text
                .trim_end_matches('.')
                .replace("i don't know anything more than that, ", ""),
            "non_native" => text.replace("I'm", "I am").replace("It's", "It is"),
            "formal" => format!("{text} Thank you."),
            _ => text,
        };
        Move::Say(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn person(patience: Patience, seed: u64) -> Person {
        let mut facts = Facts::new(
            "Ana Lima",
            &Operation::StateChange("refund".into()),
            Some("orders"),
            "refund_order",
        );
        facts.id = Some(("order_id".into(), "W123".into()));
        Person::new(
            facts,
            "cooperative",
            patience,
            Stream::derive(seed, "person", &[]),
        )
    }

    #[test]
    fn answers_from_facts_only() {
        let mut p = person(Patience::Endless, 1);
        assert_eq!(
            p.answer("What is your order number?"),
            Move::Say("It's W123.".into())
        );
        let Move::Say(reply) = p.answer("What is your phone number?") else {
            panic!()
        };
        // A phone number is not among the facts: no digits are invented.
        assert!(
            reply.contains("It's W123") || reply.contains("don't know"),
            "{reply}"
        );
        let Move::Say(reply) = p.answer("Shall I issue the refund now?") else {
            panic!()
        };
        assert!(reply.starts_with("Yes"), "{reply}");
    }

    #[test]
    fn patience_levels() {
        assert!((leave_probability(Patience::Normal, 1)).abs() < f64::EPSILON);
        assert!((leave_probability(Patience::Normal, 2) - 0.35).abs() < 1e-12);
        assert!((leave_probability(Patience::Normal, 5) - 0.60).abs() < 1e-12);
        assert!((leave_probability(Patience::Short, 2) - 0.60).abs() < 1e-12);
        assert!((leave_probability(Patience::Short, 3) - 0.90).abs() < 1e-12);
        assert!((leave_probability(Patience::Endless, 9)).abs() < f64::EPSILON);
        // Over many people, the second question loses about 35 %.
        let left = (0..4000)
            .filter(|s| {
                let mut p = person(Patience::Normal, *s);
                p.answer("Order number?");
                p.answer("Email?") == Move::Leave
            })
            .count();
        assert!((1240..1560).contains(&left), "{left}");
    }

    #[test]
    fn unknown_ids_are_fresh() {
        let ids = vec!["W100".to_owned(), "W101".to_owned()];
        let mut s = Stream::derive(0, "x", &[]);
        for _ in 0..50 {
            let id = unknown_id(&ids, &mut s);
            assert!(!ids.contains(&id));
        }
    }
}
