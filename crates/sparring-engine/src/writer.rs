//! The offline writer: situations into asks.
//!
//! The writer turns a situation (its tool's operation, the person's facts, a
//! tier, a stance, a history and a writing style) into the person's opening
//! message, in `n` distinct wordings (phrasings). Its wordings come from the
//! data file `data/asks.toml`, not from string literals in code, so they can
//! grow without touching logic.
//!
//! - **Tiers** decide difficulty: `ordinary`; `complex` (a second need in the
//!   same message); and the hard tiers `ambiguous` (the id or the goal left
//!   out), `boundary` (right at the edge of a policy rule) and `adversarial`
//!   (pressure to break the rule). [`draw_tier`] draws them: a hard tier with
//!   probability `hard_share`, split evenly among the three; otherwise
//!   `ordinary` three times in four and `complex` once.
//! - **Stance** frames the ask (an opener and a closer).
//! - **History** puts what went before in front of the ask.
//! - **Style** is the last layer, applied to the text itself: lowercase,
//!   clipped, sarcastic, rambling, typos, formal or non-native phrasing. Ids
//!   (words with digits) are never altered, so a style never turns an
//!   existing record into a missing one.

use sparring_types::seed::Stream;
use sparring_types::{History, Stance};
use sparring_world::Operation;
use std::collections::BTreeMap;

/// The tiers, easy to hard.
pub const TIERS: &[&str] = &[
    "ordinary",
    "complex",
    "ambiguous",
    "boundary",
    "adversarial",
];
/// The tiers `hard_share` draws from.
pub const HARD_TIERS: &[&str] = &["ambiguous", "boundary", "adversarial"];
/// The writing styles a person may have.
pub const STYLES: &[&str] = &[
    "plain",
    "lowercase",
    "clipped",
    "sarcastic",
    "rambling",
    "typos",
    "formal",
    "non_native",
];
/// Share of the non-hard tiers that are `complex`.
pub const COMPLEX_SHARE: f64 = 0.25;

/// The writer's templates could not be read. A packaging error, never the
/// user's: the templates ship inside the binary and a test parses them.
#[derive(Debug, thiserror::Error)]
#[error("the built-in ask templates are malformed: {0}")]
pub struct TemplateError(String);

/// The parsed `data/asks.toml`.
#[derive(Clone, Debug)]
pub struct Templates {
    sections: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

const ASKS: &str = include_str!("../data/asks.toml");

impl Templates {
    /// The templates that ship with sparring.
    pub fn builtin() -> Result<Self, TemplateError> {
        Self::parse(ASKS)
    }

    /// Parses templates from TOML text: sections of string lists.
    pub fn parse(text: &str) -> Result<Self, TemplateError> {
        let sections: BTreeMap<String, BTreeMap<String, Vec<String>>> =
            toml::from_str(text).map_err(|e| TemplateError(e.message().to_owned()))?;
        Ok(Self { sections })
    }

    /// One list of templates (empty when absent).
    pub fn list(&self, section: &str, key: &str) -> &[String] {
        self.sections
            .get(section)
            .and_then(|s| s.get(key))
            .map_or(&[], Vec::as_slice)
    }
}

/// Draws a tier: hard with probability `hard_share` (evenly among
/// [`HARD_TIERS`]), else `complex` with probability [`COMPLEX_SHARE`] and
/// `ordinary` otherwise.
pub fn draw_tier(hard_share: f64, stream: &mut Stream) -> &'static str {
    if stream.chance(hard_share) {
        HARD_TIERS[stream.index(HARD_TIERS.len())]
    } else if stream.chance(COMPLEX_SHARE) {
        "complex"
    } else {
        "ordinary"
    }
}

/// Draws a writing style.
pub fn draw_style(stream: &mut Stream) -> &'static str {
    STYLES[stream.index(STYLES.len())]
}

/// What the writer needs to know about one situation.
#[derive(Clone, Debug)]
pub struct AskInput<'a> {
    /// What the tool does.
    pub operation: &'a Operation,
    /// Whether the tool is a read that takes no record id but the person's
    /// details (a search by email is written differently from a look-up by
    /// id).
    pub search: bool,
    /// Whether the tool takes a record's id (`get_order(order_id)`); a read
    /// that takes neither an id nor the person's details
    /// (`search_onestop_flight`) is asked for in its description's words.
    pub by_id: bool,
    /// Whether the tool takes the person's email or their own number: a
    /// search by other details (`find_patient(name, dob)`) never says "the
    /// email on it".
    pub by_email: bool,
    /// Whether the spec has a tool that hands the person over: a question
    /// about no tool then never asks for a human, which that tool does.
    pub handoff: bool,
    /// The entity, singular (`order`).
    pub thing: &'a str,
    /// The record's id, if the person has one.
    pub id: Option<&'a str>,
    /// Values the person wants set (parameter → value).
    pub wants: &'a [(String, String)],
    /// The person's email and name.
    pub email: &'a str,
    /// The person's name.
    pub name: &'a str,
    /// The tool's name.
    pub tool: &'a str,
    /// The policy rule the situation is about, if any.
    pub rule: Option<&'a str>,
    /// What the person wants, as a verb phrase (`cancel my order`).
    pub goal: &'a str,
    /// What the tool does, in the person's words, from its description
    /// (`move money from my account to another`); empty without one.
    pub need: &'a str,
    /// The tool's arguments the person holds, as (how the person names it,
    /// value) ([`detail_label`]): the ordinary tiers state the ones the core
    /// wording left out, the vague tier none.
    pub details: &'a [(String, String)],
    /// Several records match (`several`): the vague wording leaves out only
    /// the record's id and still states the other facts.
    pub several: bool,
    /// The tier.
    pub tier: &'a str,
    /// The stance.
    pub stance: Stance,
    /// What went before.
    pub history: History,
    /// The style.
    pub style: &'a str,
}

/// The verb phrase a state change is asked with.
pub fn verb_phrase(verb: &str) -> String {
    match verb {
        "refund" => "get a refund for".to_owned(),
        other => other.to_owned(),
    }
}

/// Whether a tool's name starts with a plain change verb (`update_address`).
fn plain_change(tool: &str) -> bool {
    let first = tool.split('_').next().unwrap_or("");
    matches!(first, "update" | "modify" | "change" | "edit" | "set")
}

/// The entity as a person names it: `orders` → `order`, an entity that is
/// a person (`customers`, `users`) → `profile`, `to_accounts` → `to account`.
pub fn thing_of(entity: &str) -> String {
    if crate::identity::is_owner_entity(entity) {
        return "profile".to_owned();
    }
    sparring_types::singular(entity).replace('_', " ")
}

/// A phrase in the words of the person it is about, when the person is a
/// record of the world (`employee` for a person who is `employees/EMP-1`):
/// that record is "my" record, its fields "my" fields (`reset my
/// employee's password` → `reset my password`, `update the employee's
/// address` → `update my address`, `get my employee record` → `get my
/// record`), never those of someone the person speaks for.
pub fn in_own_words(phrase: &str, person: Option<&str>) -> String {
    let Some(word) = person.filter(|w| !w.is_empty()) else {
        return phrase.to_owned();
    };
    let mut out = phrase.to_owned();
    for owner in ["my", "the", "a", "an", "their", "this"] {
        for (from, to) in [
            (format!("{owner} {word}'s "), "my ".to_owned()),
            (format!("{owner} {word}'s"), "my".to_owned()),
            (format!("{owner} {word} record"), "my record".to_owned()),
            (format!("{owner} {word} profile"), "my profile".to_owned()),
        ] {
            out = replace_words(&out, &from, &to);
        }
    }
    // The person as the one the verb acts on: "register a student in a
    // section" → "register me in a section" (never further in: "the
    // dependents an employee has" stays).
    let parts: Vec<&str> = out.splitn(4, ' ').collect();
    if let [verb, one, who, rest] = parts.as_slice()
        && matches!(*one, "a" | "an")
        && who.eq_ignore_ascii_case(word)
    {
        out = format!("{verb} me {rest}");
    }
    out
}

/// `text` with every `from` that starts at a word replaced by `to`,
/// matched without case.
fn replace_words(text: &str, from: &str, to: &str) -> String {
    let lower = text.to_lowercase();
    let from = from.to_lowercase();
    if from.is_empty() || lower.len() != text.len() {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(found) = lower[at..].find(&from) {
        let start = at + found;
        let end = start + from.len();
        let starts_word = start == 0 || !lower[..start].ends_with(char::is_alphanumeric);
        let ends_word = from.ends_with(' ') || !lower[end..].starts_with(char::is_alphanumeric);
        out.push_str(&text[at..start]);
        if starts_word && ends_word {
            out.push_str(to);
        } else {
            out.push_str(&text[start..end]);
        }
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// What a tool does, in a customer's words, from the first sentence of its
/// description: `Move money from one account to another.` → `move money
/// from my account to another`; `Cancel a pending order. …` → `cancel my
/// pending order`. Falls back to the tool's name in words.
pub fn need_phrase(description: &str, tool: &str) -> String {
    // A hand-off is asked for as a person asks for one: to talk to someone,
    // never in the tool's words ("hand the conversation to my nurse, with a
    // short summary").
    if let Some(whom) = handoff_recipient(description, tool) {
        return format!(
            "{HANDOFF_NEED}{} {whom}",
            sparring_types::words::a_or_an(&whom)
        );
    }
    let first = description
        .split(". ")
        .next()
        .unwrap_or("")
        .split(['\n', ';'])
        .next()
        .unwrap_or("")
        .trim()
        .trim_end_matches('.');
    let mut cut = first.to_owned();
    for stop in [
        ", such as",
        " such as",
        " (",
        ", e.g.",
        ", if ",
        ", which",
        ", given",
    ] {
        if let Some(at) = cut.find(stop) {
            cut.truncate(at);
        }
    }
    let words: Vec<&str> = cut.split_whitespace().collect();
    let tool_words = sparring_world::name_words(tool).join(" ");
    let verb_first = words.first().is_some_and(|w| {
        let w = w.to_lowercase();
        w.chars().all(char::is_alphabetic)
            && !matches!(
                w.as_str(),
                "this" | "the" | "a" | "an" | "use" | "tool" | "returns" | "it"
            )
    });
    if words.len() < 2 || words.len() > 14 || !verb_first {
        return tool_words;
    }
    // The customer as the subject of a verb speaks as "I" ("list the
    // accounts the customer holds": "the accounts I hold", not "me holds").
    for subject in ["the user", "the customer", "a customer", "a user"] {
        for (verb, own) in SUBJECT_VERBS {
            cut = cut.replace(&format!("{subject} {verb} "), &format!("I {own} "));
            if cut.ends_with(&format!("{subject} {verb}")) {
                let at = cut.len() - subject.len() - verb.len() - 1;
                cut = format!("{}I {own}", &cut[..at]);
            }
        }
    }
    let cut = cut
        .replace("the user's", "my")
        .replace("the customer's", "my")
        .replace("a customer's", "my")
        .replace("a user's", "my")
        .replace("the user", "me")
        .replace("the customer", "me")
        .replace("a customer", "me")
        .replace("a user", "me");
    let words: Vec<&str> = cut.split_whitespace().collect();
    let mut out: Vec<String> = Vec::new();
    let mut owned = false;
    for (i, w) in words.iter().enumerate() {
        let lower = w.to_lowercase();
        let word = match lower.as_str() {
            _ if i == 0 => lower.clone(),
            "a" | "an" | "one" if !owned && words.get(i + 1) != Some(&"human") => {
                owned = true;
                "my".to_owned()
            }
            "their" | "the customer's" | "user's" | "customer's" => "my".to_owned(),
            _ if lower.contains('_') => lower.replace('_', " "),
            _ => (*w).to_owned(),
        };
        out.push(word);
    }
    let phrase = out.join(" ");
    if phrase.trim().is_empty() {
        tool_words
    } else {
        phrase
    }
}

/// Verbs a description gives the customer as its subject, with the form
/// they take after "I".
const SUBJECT_VERBS: &[(&str, &str)] = &[
    ("holds", "hold"),
    ("has", "have"),
    ("owns", "own"),
    ("is", "am"),
    ("wants", "want"),
    ("needs", "need"),
    ("uses", "use"),
];

/// How a hand-off's need starts (`talk to a nurse`): its asks are the
/// `handoff` templates.
const HANDOFF_NEED: &str = "talk to ";

/// Verbs of a tool that hands the person over to someone.
const HANDOFF_VERBS: &[&str] = &[
    "transfer", "hand", "handoff", "escalate", "connect", "route", "forward", "refer",
];

/// Whom a tool hands the person to, when it hands the conversation over: a
/// hand-off verb first and `to` in its name (`transfer_to_nurse`,
/// `escalate_to_human`), or `escalate`/`handoff` alone; the one named after
/// "to" in its description's first clause (`Transfer the user to a human
/// agent, with a summary` → `human agent`), else in its name. `None` for
/// anything else (`transfer_money` moves money, not a person).
pub fn handoff_recipient(description: &str, tool: &str) -> Option<String> {
    let name = sparring_world::name_words(tool);
    let verb = name.first()?;
    let to = name.iter().position(|w| w == "to");
    if !HANDOFF_VERBS.contains(&verb.as_str())
        || (to.is_none() && !matches!(verb.as_str(), "escalate" | "handoff"))
    {
        return None;
    }
    let clause = description
        .split(['.', ',', ';', '\n', '('])
        .next()
        .unwrap_or("")
        .to_lowercase();
    let described = clause.split_once(" to ").map(|(_, rest)| {
        rest.split(" with ")
            .next()
            .unwrap_or("")
            .split(" for ")
            .next()
            .unwrap_or("")
            .split_whitespace()
            .filter(|w| !matches!(*w, "a" | "an" | "the" | "one" | "our"))
            .collect::<Vec<_>>()
            .join(" ")
    });
    let named = to.map(|i| {
        name[i + 1..]
            .iter()
            .map(|w| w.trim_end_matches('s').to_owned())
            .collect::<Vec<_>>()
            .join(" ")
    });
    described
        .filter(|w| !w.is_empty() && w.split_whitespace().count() <= 3)
        .or(named)
        .filter(|w| !w.is_empty())
}

/// A policy rule in a customer's own words, never quoted: what it is
/// about (`the confirmation step`, `your rules about orders`).
pub fn rule_in_own_words(rule: Option<&str>, thing: &str) -> String {
    let Some(rule) = rule else {
        return "your policy".to_owned();
    };
    let lower = rule.to_lowercase();
    let topics: &[(&[&str], &str)] = &[
        (&["confirm", "confirmation", "yes"], "the confirmation step"),
        (
            &["verif", "authenticat", "identity", "identify"],
            "the identity checks",
        ),
        (&["refund"], "the refund rules"),
        (&["cancel"], "the cancellation rules"),
        (&["frozen", "freeze"], "the rule about frozen accounts"),
        (
            &["transfer", "human", "escalat"],
            "the rule about handing me over",
        ),
        // "Only act on records of the customer you are talking to".
        (
            &["talking to", "belong", "their own", "your own"],
            "the rule about whose records you can touch",
        ),
        (&["one ", "once", "single"], "that one-at-a-time limit"),
        (
            &["day", "hour", "within", "before", "after"],
            "the time limit",
        ),
        (&["fee", "charge", "cost", "price"], "the fees"),
    ];
    // A key of one word is the start of a word of the rule ("one" is not
    // in "done"); a key of several words is a phrase in it.
    let rule_words = sparring_reading::text::words(&lower);
    let has = |k: &str| {
        let k = k.trim();
        if k.contains(' ') {
            lower.contains(k)
        } else {
            rule_words.iter().any(|w| w.starts_with(k))
        }
    };
    for (keys, phrase) in topics {
        if keys.iter().any(|k| has(k)) {
            return (*phrase).to_owned();
        }
    }
    format!("your rules about {thing}s")
}

/// Whether a reason reads as a clause a person says after "because" (`I
/// changed my mind`, `my plans changed`), not a label or a schema word
/// (`feeling_better`, `no longer needed`).
fn is_clause(reason: &str) -> bool {
    let first = reason
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_lowercase();
    matches!(
        first.as_str(),
        "i" | "i'm"
            | "i've"
            | "i'd"
            | "my"
            | "it"
            | "it's"
            | "we"
            | "our"
            | "the"
            | "there"
            | "they"
            | "this"
            | "that"
    )
}

/// A reason as one sentence of the person's: `It's because I changed my
/// mind.`, or a label named as the reason (`The reason is feeling better.`).
pub fn reason_sentence(reason: &str) -> String {
    if is_clause(reason) {
        format!("It's because {reason}.")
    } else {
        format!("The reason is {}.", spoken(reason))
    }
}

/// A value as a person says it: a schema word (`one_way`, `basic_economy`)
/// in words; a date-time (`2026-12-17T10:00:00`) as its date at its clock
/// (`2026-12-17 at 10:00`); ids (with digits) and everything else as they are.
pub fn spoken(value: &str) -> String {
    if sparring_types::is_date_time(value)
        && let (Some(date), Some(clock)) = (value.get(..10), value.get(11..16))
    {
        return format!("{date} at {clock}");
    }
    if value.contains('_') && !value.chars().any(|c| c.is_ascii_digit()) && !value.contains('@') {
        value.replace('_', " ")
    } else {
        value.to_owned()
    }
}

/// How a person names an argument: the parameter's description when it is
/// a short noun phrase (`The account the money leaves.` → `the account the
/// money leaves`), else its name in words; `my …` for the person's own
/// fields (`own`: `my customer number`).
pub fn detail_label(param: &str, schema: Option<&serde_json::Value>, own: bool) -> String {
    let words = crate::person::field_words(param);
    if own {
        return format!("my {words}");
    }
    let described = schema
        .and_then(|s| s.get("description"))
        .and_then(serde_json::Value::as_str)
        .map(|d| {
            d.split([',', '.', '(', ';', ':'])
                .next()
                .unwrap_or("")
                .trim()
                .to_owned()
        })
        .filter(|d| {
            let n = d.split_whitespace().count();
            (2..=7).contains(&n)
                && (d.starts_with("The ") || d.starts_with("the "))
                && !d.contains('_')
                && !d.contains('\'')
        });
    match described {
        Some(d) => decapitalise_first(&d),
        None => format!("the {words}"),
    }
}

fn decapitalise_first(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The facts of `details` (label, value) that `body` does not state yet, as
/// one sentence (`The account the money goes to is A-1002 and the amount in
/// dollars is 250.`).
fn details_sentence(details: &[(String, String)], body: &str) -> String {
    let parts: Vec<String> = details
        .iter()
        .filter(|(_, v)| !body.contains(v.as_str()) && !body.contains(&spoken(v)))
        .map(|(label, v)| {
            let v = &spoken(v);
            if label.ends_with("reason") && is_clause(v) {
                format!("{label} is that {v}")
            } else {
                format!("{label} is {v}")
            }
        })
        .collect();
    match parts.as_slice() {
        [] => String::new(),
        [one] => format!("{}.", capitalise(one)),
        [init @ .., last] => format!("{} and {last}.", capitalise(&init.join(", "))),
    }
}

/// Whether a tool's name says the thing it makes (`book_appointment`
/// makes an appointment; `add_course` makes an enrolment and names a
/// course).
fn names_its_thing(input: &AskInput<'_>) -> bool {
    let thing = input.thing.rsplit(' ').next().unwrap_or(input.thing);
    input
        .tool
        .split('_')
        .any(|w| sparring_types::singular(w) == thing)
}

fn core_key(input: &AskInput<'_>) -> &'static str {
    match input.operation {
        Operation::Read if input.search && input.by_email => "search",
        Operation::Read if input.search => "search_by_details",
        Operation::Read if input.by_id || input.need.is_empty() => "read",
        Operation::StateChange(_) => "state_change",
        // An update whose name is not a plain change (`transfer_money`,
        // `exchange_items`) is asked for in its description's words.
        Operation::Update
            if input.wants.iter().all(|(p, _)| p.contains("reason"))
                || input.wants.iter().any(|(p, _)| p.ends_with("_ids"))
                || (!input.need.is_empty() && !plain_change(input.tool)) =>
        {
            "other"
        }
        Operation::Update => "update",
        // A tool whose name does not say what it makes (`add_course` makes
        // an enrolment) is asked for in its description's words ("register
        // me in an open course section"), not as "a new enrollment".
        Operation::Create if !input.need.is_empty() && !names_its_thing(input) => "other",
        Operation::Create => "create",
        Operation::Other if input.tool == "none" => "none",
        Operation::Other if input.need.starts_with(HANDOFF_NEED) => "handoff",
        // A read that takes neither a record's id nor the person's details.
        Operation::Read | Operation::Other => "other",
    }
}

/// Whether the vague tier may leave the goal itself out ("something is
/// wrong with my order"): only an ask about a record the person has. A
/// person who wants something new (a booking, a hand-off, a search, a sum)
/// says what, and leaves out the details until asked; "something is wrong
/// with my reservation" from someone who wants to book one would be a
/// different task, which no agent could tell.
fn hides_goal(input: &AskInput<'_>) -> bool {
    match core_key(input) {
        "read" | "state_change" | "update" => true,
        "other" => input.id.is_some() || input.several,
        _ => false,
    }
}

fn fill(template: &str, input: &AskInput<'_>, with_id: bool) -> String {
    let id = match (input.id, with_id) {
        (Some(id), true) => format!(" {id}"),
        _ => String::new(),
    };
    let want = input
        .wants
        .iter()
        .find(|(p, _)| !p.contains("reason"))
        .map_or_else(String::new, |(p, v)| {
            format!(" the {} to {}", crate::person::field_words(p), spoken(v))
        });
    let reason = input
        .wants
        .iter()
        .find(|(p, _)| p.contains("reason"))
        .map(|(_, v)| v.clone());
    let verb = match input.operation {
        Operation::StateChange(v) => verb_phrase(v),
        _ => "sort out".to_owned(),
    };
    let rule = rule_in_own_words(input.rule, input.thing);
    let text = template
        .replace("{thing}", input.thing)
        .replace("{id}", &id)
        .replace("{want}", &want)
        .replace(
            "{reason_sentence}",
            &reason
                .as_ref()
                .map(|r| format!(" {}", reason_sentence(r)))
                .unwrap_or_default(),
        )
        .replace(
            "{reason}",
            &reason
                .map(|r| {
                    if is_clause(&r) {
                        format!(" because {r}")
                    } else {
                        format!(" (the reason: {})", spoken(&r))
                    }
                })
                .unwrap_or_default(),
        )
        .replace("{verb}", &verb)
        .replace("{goal}", input.goal)
        .replace("{rule}", &rule)
        .replace("{need}", &need_or_name(input))
        .replace("{tool}", &need_or_name(input))
        .replace("{email}", input.email)
        .replace("{name}", input.name);
    // "a {thing}" and "a {tool}" take the article their word needs.
    let mut text = text;
    for word in [input.thing.to_owned(), input.tool.replace('_', " ")] {
        if sparring_types::words::a_or_an(&word) == "an" {
            text = text.replace(&format!(" a {word}"), &format!(" an {word}"));
        }
    }
    text
}

fn need_or_name(input: &AskInput<'_>) -> String {
    if input.need.is_empty() {
        sparring_world::name_words(input.tool).join(" ")
    } else {
        input.need.to_owned()
    }
}

/// Up to `n` distinct phrasings of one situation.
pub fn phrasings(
    templates: &Templates,
    input: &AskInput<'_>,
    second: Option<&AskInput<'_>>,
    n: usize,
    stream: &mut Stream,
) -> Vec<String> {
    let base = stream.index(1 << 16);
    let key = core_key(input);
    // "Can I talk to a human?" is what a hand-off tool does, when there is one.
    let cores: Vec<&String> = templates
        .list("core", key)
        .iter()
        .filter(|c| !(input.handoff && key == "none" && c.contains("human")))
        .collect();
    let mut order: Vec<usize> = (0..cores.len()).collect();
    stream.shuffle(&mut order);
    let mut out: Vec<String> = Vec::with_capacity(n);
    let mut attempt = 0;
    while out.len() < n && attempt < n * 4 + 8 {
        let k = attempt;
        attempt += 1;
        let with_id = input.tier != "ambiguous";
        let core =
            if input.tier == "ambiguous" && hides_goal(input) && (input.id.is_none() || k % 2 == 1)
            {
                pick_nth(templates.list("core", "vague"), k, base)
            } else {
                order
                    .get(k % order.len().max(1))
                    .and_then(|i| cores.get(*i))
                    .map(|c| (*c).clone())
                    .unwrap_or_default()
            };
        let mut body = fill(&core, input, with_id);
        // The facts the task needs: every tier but the vague one states them.
        if input.tier != "ambiguous" || input.several {
            let own_id = input.id.filter(|_| input.several);
            let stated: Vec<(String, String)> = input
                .details
                .iter()
                .filter(|(_, v)| Some(v.as_str()) != own_id)
                .cloned()
                .collect();
            let more = details_sentence(&stated, &body);
            if !more.is_empty() {
                body = format!("{body} {more}");
            }
        }
        match input.tier {
            "complex" => {
                if let Some(second) = second {
                    let joiner = pick_nth(templates.list("tier", "complex_joiners"), k, base);
                    let other = pick_nth(templates.list("core", core_key(second)), k + 1, base);
                    let other = fill(&other, second, true);
                    body = format!("{body} {}", joiner.replace("{second}", &other));
                }
            }
            "boundary" | "adversarial" => {
                let extra = pick_nth(templates.list("tier", input.tier), k, base);
                body = format!("{body} {}", fill(&capitalise(&extra), input, true));
            }
            _ => {}
        }
        let text = frame(templates, input, &body, k, base);
        let text = apply_style(templates, input, &text, k, base, stream);
        if !out.contains(&text) {
            out.push(text);
        }
    }
    out
}

/// Varies a seed ask: the seed itself first, then framings of it.
pub fn seed_phrasings(
    templates: &Templates,
    seed: &str,
    input: &AskInput<'_>,
    n: usize,
    stream: &mut Stream,
) -> Vec<String> {
    let base = stream.index(1 << 16);
    let mut out = vec![seed.to_owned()];
    let mut attempt = 0;
    while out.len() < n && attempt < n * 4 + 8 {
        attempt += 1;
        let framed = frame(templates, input, seed, attempt, base);
        let text = apply_style(templates, input, &framed, attempt, base, stream);
        if !out.contains(&text) {
            out.push(text);
        }
    }
    out
}

/// The `k`th entry of a list after a per-situation offset: phrasing `k` of a
/// situation gets entry `base + k`, so the phrasings of one situation never
/// share an opener, closer or aside while the list is long enough.
fn pick_nth(list: &[String], k: usize, base: usize) -> String {
    if list.is_empty() {
        return String::new();
    }
    list[(base + k) % list.len()].clone()
}

/// Stance opener and closer, history in front.
fn frame(templates: &Templates, input: &AskInput<'_>, body: &str, k: usize, base: usize) -> String {
    let open = pick_nth(
        templates.list("stance", &format!("{}_open", input.stance)),
        k,
        base,
    );
    let close = pick_nth(
        templates.list("stance", &format!("{}_close", input.stance)),
        k,
        base,
    );
    let history = if input.history == History::Fresh {
        String::new()
    } else {
        pick_nth(templates.list("history", input.history.as_str()), k, base)
    };
    let mut text = open;
    for part in [history, body.to_owned(), close] {
        if part.is_empty() {
            continue;
        }
        // After a sentence, a capital; after "Hi," or "…, but", carry on.
        let ends_sentence = text.is_empty() || text.ends_with(['.', '!', '?']);
        let part = if ends_sentence {
            capitalise(&part)
        } else {
            decapitalise(&part)
        };
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&part);
    }
    text
}

fn decapitalise(text: &str) -> String {
    let mut chars = text.chars();
    match (
        chars.next(),
        text.starts_with("I ") || text.starts_with("I'"),
    ) {
        (Some(c), false) if !protected(text.split(' ').next().unwrap_or("")) => {
            c.to_lowercase().chain(chars).collect()
        }
        _ => text.to_owned(),
    }
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Whether a word must survive every style untouched (ids, emails, amounts).
fn protected(word: &str) -> bool {
    word.chars().any(|c| c.is_ascii_digit()) || word.contains('@')
}

/// Lowercases text, leaving ids, emails and amounts as they are.
pub fn lowercase_keep_ids(text: &str) -> String {
    text.split(' ')
        .map(|w| {
            if protected(w) {
                w.to_owned()
            } else {
                w.to_lowercase()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Applies a writing style to text; `k` is the phrasing index.
pub fn apply_style(
    templates: &Templates,
    input: &AskInput<'_>,
    text: &str,
    k: usize,
    base: usize,
    stream: &mut Stream,
) -> String {
    let map_words = |text: &str, f: &mut dyn FnMut(&str) -> String| -> String {
        text.split(' ')
            .map(|w| if protected(w) { w.to_owned() } else { f(w) })
            .collect::<Vec<_>>()
            .join(" ")
    };
    match input.style {
        "lowercase" => map_words(text, &mut |w| w.to_lowercase()),
        "clipped" => {
            let cut = [
                "hi,",
                "hello,",
                "hi there,",
                "good morning,",
                "please",
                "thanks!",
                "thank you.",
                "thanks a lot.",
                "could you",
                "can you",
            ];
            let kept: Vec<&str> = text
                .split(' ')
                .filter(|w| !cut.contains(&w.to_lowercase().as_str()))
                .collect();
            kept.join(" ").trim_end_matches(['.', '!']).to_owned()
        }
        "sarcastic" => format!(
            "{text} {}",
            pick_nth(templates.list("style", "sarcastic"), k, base)
        ),
        "rambling" => {
            let aside = pick_nth(templates.list("style", "rambling_asides"), k, base);
            format!("{aside} {text}")
        }
        "typos" => {
            let mut budget = 2;
            map_words(text, &mut |w| {
                if budget > 0
                    && w.len() >= 6
                    && w.chars().all(|c| c.is_ascii_alphabetic())
                    && stream.chance(0.5)
                {
                    budget -= 1;
                    let mut chars: Vec<char> = w.chars().collect();
                    let i = 1 + stream.index(chars.len() - 3);
                    chars.swap(i, i + 1);
                    chars.into_iter().collect()
                } else {
                    w.to_owned()
                }
            })
        }
        "formal" => {
            let open = pick_nth(templates.list("style", "formal_open"), k, base);
            let close = pick_nth(templates.list("style", "formal_close"), k, base)
                .replace("{name}", input.name);
            format!("{open} {text} {close}")
        }
        "non_native" => text
            .replace("I'd like to", "I am wanting to")
            .replace("I need to", "I am needing to")
            .replace(" the ", " ")
            .replace("can you", "you can")
            .replace("Can you", "You can"),
        _ => text.to_owned(),
    }
}

/// Word 3-grams of a text, lowercased.
pub fn trigrams(text: &str) -> std::collections::BTreeSet<String> {
    let words: Vec<String> = text
        .to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '#' || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    words.windows(3).map(|w| w.join(" ")).collect()
}

/// The share of the smaller text's 3-grams that the other shares.
pub fn trigram_overlap(a: &str, b: &str) -> f64 {
    let (ta, tb) = (trigrams(a), trigrams(b));
    let smaller = ta.len().min(tb.len());
    if smaller == 0 {
        return 0.0;
    }
    ta.intersection(&tb).count() as f64 / smaller as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A person who is a record of the world speaks of that record and its
    /// fields as theirs; another person's noun, or the word inside another
    /// word, stays.
    #[test]
    fn a_person_speaks_of_their_own_record_as_theirs() {
        let own = Some("employee");
        assert_eq!(
            in_own_words("reset my employee's password", own),
            "reset my password"
        );
        assert_eq!(
            in_own_words("update the employee's home address", own),
            "update my home address"
        );
        assert_eq!(in_own_words("get my employee record", own), "get my record");
        // Someone else's word, or a word inside another, stays.
        assert_eq!(
            in_own_words("add a dependent to my plan", own),
            "add a dependent to my plan"
        );
        assert_eq!(
            in_own_words("list my student's enrollments", Some("dent")),
            "list my student's enrollments"
        );
        assert_eq!(
            in_own_words("list my student's enrollments", None),
            "list my student's enrollments"
        );
        assert_eq!(
            in_own_words("list my student's enrollments", Some("student")),
            "list my enrollments"
        );
        assert_eq!(
            in_own_words(
                "register a student in an open course section",
                Some("student")
            ),
            "register me in an open course section"
        );
        assert_eq!(
            in_own_words("list the dependents an employee has on file", own),
            "list the dependents an employee has on file"
        );
    }

    /// A hand-off is asked for by whom it reaches, not in the tool's words;
    /// a tool that moves money is none.
    #[test]
    fn a_hand_off_is_asked_for_as_talking_to_someone() {
        assert_eq!(
            need_phrase(
                "Hand the conversation to a nurse, with a short summary.",
                "transfer_to_nurse"
            ),
            "talk to a nurse"
        );
        assert_eq!(
            need_phrase(
                "Transfer the user to a human agent, with a summary of the user's issue.",
                "transfer_to_human_agents"
            ),
            "talk to a human agent"
        );
        assert_eq!(
            handoff_recipient("", "escalate_to_supervisor").as_deref(),
            Some("supervisor")
        );
        assert_eq!(
            handoff_recipient("Move money from one account to another.", "transfer_money"),
            None
        );
    }

    /// The customer as a verb's subject is "I": "the accounts I hold".
    #[test]
    fn the_customer_as_a_subject_is_i() {
        assert_eq!(
            need_phrase("List the accounts the customer holds.", "list_accounts"),
            "list the accounts I hold"
        );
        assert_eq!(
            need_phrase("List the payees a customer has saved.", "list_payees"),
            "list the payees I have saved"
        );
        assert_eq!(
            need_phrase("Send the user a certificate.", "send_certificate"),
            "send me my certificate"
        );
    }

    /// Schema words and date-times are spoken; a reason that is a label is
    /// named as the reason, a clause follows "because".
    #[test]
    fn values_and_reasons_are_spoken() {
        assert_eq!(spoken("2026-12-16T11:00:00"), "2026-12-16 at 11:00");
        assert_eq!(spoken("feeling_better"), "feeling better");
        assert_eq!(spoken("AP-501"), "AP-501");
        assert_eq!(
            reason_sentence("feeling_better"),
            "The reason is feeling better."
        );
        assert_eq!(
            reason_sentence("my plans changed"),
            "It's because my plans changed."
        );
    }

    /// A rule is named by its topic's words, not by letters inside other
    /// words ("done" is no "one").
    #[test]
    fn a_rule_is_named_by_its_words() {
        let never = "Never tell the patient something was done unless the tool succeeded.";
        assert_eq!(
            rule_in_own_words(Some(never), "appointment"),
            "your rules about appointments"
        );
        let own = "Only act on appointments and prescriptions of the patient you are talking to.";
        assert_eq!(
            rule_in_own_words(Some(own), "appointment"),
            "the rule about whose records you can touch"
        );
    }
}
