//! Rules read from the spec's own words: tool descriptions and policy
//! sentences.
//!
//! One sentence at a time, [`RuleReader::read`] finds what a real backend
//! would enforce: a **precondition** ("Cancel a pending order", "Only orders
//! that are pending can be cancelled", "Never move money out of an account
//! that is frozen", "Checks: Line status must be Active"), the **status** a
//! write leaves ("the order status will be changed to 'return requested'",
//! "Sets bill status to AWAITING_PAYMENT"), a field it **clears**, a tool
//! that may act on a record only **once**, and an **enum** stated in words
//! ("either 'no longer needed' or 'ordered by mistake'").
//!
//! A precondition is kept only when one of its values is a value the
//! entity has: a fixture's status, a status word of a tool's name, a status
//! a tool sets (by its verb or its words), or a status enum of a schema. So
//! "Cancel a big order" states nothing, and "Cancel a pending order" does.
//! [`preconditions`] is the small pure entry point for a caller with one
//! sentence and the tools.
//!
//! ```
//! use sparring_types::ToolSpec;
//! let tool = |name: &str| ToolSpec {
//!     name: name.into(),
//!     description: String::new(),
//!     parameters: serde_json::json!({"type": "object", "properties": {"order_id": {"type": "string"}}}),
//!     output_schema: None,
//! };
//! // `pending` is a status the tools' words name (`update_pending_order`).
//! let tools = vec![tool("cancel_order"), tool("update_pending_order")];
//! let rules = sparring_reading::preconditions("Shipped orders can be refunded, not cancelled.", &tools);
//! assert!(rules.is_empty(), "`shipped` is no status the tools name");
//! let rules = sparring_reading::preconditions("Only orders that are pending can be cancelled.", &tools);
//! assert_eq!(rules[0].tool, "cancel_order");
//! assert_eq!((rules[0].field.as_str(), rules[0].values.as_slice()), ("status", &["pending".to_owned()][..]));
//! assert!(rules[0].allowed);
//! ```

use crate::tool::{Operation, ToolModel, infer_tool, name_words, status_after};
use serde::Serialize;
use serde_json::Value;
use sparring_types::world_spec::{ROLE_PREFIXES, without_role};
use sparring_types::{ToolSpec, singular};
use std::collections::{BTreeMap, BTreeSet};

/// Where a rule was read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A status word in the tool's name (`cancel_pending_order`).
    Name,
    /// The tool's description.
    Description,
    /// A parameter's description.
    Parameter,
    /// The system prompt.
    Policy,
}

impl Source {
    /// Where, in words, for messages.
    pub fn describe(&self, tool: &str) -> String {
        match self {
            Self::Name => format!("the name of `{tool}`"),
            Self::Description => format!("the description of `{tool}`"),
            Self::Parameter => format!("a parameter description of `{tool}`"),
            Self::Policy => "the policy".to_owned(),
        }
    }
}

/// A state a record must (or must not) be in for a tool to act on it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Precondition {
    /// The tool.
    pub tool: String,
    /// The id parameter naming the record, when it is not the tool's
    /// target (`from_account_id` for "money out of an account").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// The record's entity, singular (`order`).
    pub entity: String,
    /// The field (`status`).
    pub field: String,
    /// The values, lowercase, `_` and `-` read as spaces.
    pub values: Vec<String>,
    /// `true`: the field must be one of `values`; `false`: none of them.
    pub allowed: bool,
    /// The sentence it was read from.
    pub sentence: String,
    /// Where the sentence is.
    pub source: Source,
}

/// One thing a sentence says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Reading {
    /// A state the record must or must not be in.
    Precondition(Precondition),
    /// The status a successful call leaves.
    SetsStatus {
        /// The tool.
        tool: String,
        /// The entity whose status it sets, singular, when the words name
        /// one (`bill` in "Sets bill status to …").
        entity: Option<String>,
        /// The status as written (`return requested`, `AWAITING_PAYMENT`).
        value: String,
        /// The sentence.
        sentence: String,
        /// Where.
        source: Source,
    },
    /// A field a successful call empties ("clears suspension_start_date").
    Clears {
        /// The tool.
        tool: String,
        /// The field.
        field: String,
        /// The sentence.
        sentence: String,
        /// Where.
        source: Source,
    },
    /// The tool acts on a record at most once.
    Once {
        /// The tool.
        tool: String,
        /// The sentence.
        sentence: String,
        /// Where.
        source: Source,
    },
    /// An argument's allowed values, stated in words.
    Enum {
        /// The tool.
        tool: String,
        /// The parameter.
        param: String,
        /// The values, exactly as quoted.
        values: Vec<String>,
        /// The sentence.
        sentence: String,
        /// Where.
        source: Source,
    },
}

impl Reading {
    /// The tool the reading is about.
    pub fn tool(&self) -> &str {
        match self {
            Self::Precondition(p) => &p.tool,
            Self::SetsStatus { tool, .. }
            | Self::Clears { tool, .. }
            | Self::Once { tool, .. }
            | Self::Enum { tool, .. } => tool,
        }
    }
}

/// Which part a record plays in a call, read from an id's role prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// `from_`, `source_`, `origin_`: what money leaves.
    Source,
    /// `to_`, `destination_`, `recipient_`, `target_`: where it goes.
    Destination,
    /// No role word.
    Plain,
}

/// The role a parameter's prefix gives.
fn role_of(param: &str) -> Role {
    match param.split('_').next() {
        Some("from" | "source" | "origin" | "old" | "original") => Role::Source,
        Some("to" | "destination" | "recipient" | "target" | "new") => Role::Destination,
        _ => Role::Plain,
    }
}

/// A tool as the reader sees it.
#[derive(Clone, Debug)]
struct ToolView {
    name: String,
    verb: String,
    acts: bool,
    money: bool,
    /// The target's entity, singular.
    entity: Option<String>,
    params: Vec<String>,
    /// Id parameters: (param, entity singular, role).
    ids: Vec<(String, String, Role)>,
    /// Words of the name beyond the verb and entity (`shipping`, `address`).
    extra: Vec<String>,
    description: String,
    param_descriptions: Vec<(String, String)>,
}

/// Words that start a clause of their own: a negation after one is about
/// that clause ("a booking whose car has not been picked up", "an active
/// account so no money can leave it").
const CLAUSE_WORDS: &[&str] = &[
    "whose", "which", "that", "who", "where", "when", "once", "after", "before", "until", "if",
    "unless", "but", "while", "so", "because", "since",
];

/// Whether a negator stands in the clause that names the first of
/// `values` (the sentence's words; values as normalised by the reader).
fn clause_negated(words: &[&str], values: &[String]) -> bool {
    let at = words.iter().position(|w| {
        values
            .iter()
            .any(|v| v.split_whitespace().next() == Some(normalise(w).as_str()))
    });
    let Some(at) = at else {
        return words.iter().any(|w| NEGATORS.contains(w));
    };
    let start = words[..at]
        .iter()
        .rposition(|w| CLAUSE_WORDS.contains(w))
        .unwrap_or(0);
    let end = words[at + 1..]
        .iter()
        .position(|w| CLAUSE_WORDS.contains(w))
        .map_or(words.len(), |i| at + 1 + i);
    words[start..end].iter().any(|w| NEGATORS.contains(w))
}

/// Verbs that mean the same action in a sentence.
const UPDATE_GROUP: &[&str] = &["update", "modify", "change", "edit", "amend", "alter"];
/// Verbs that move money out of a record.
const MONEY_GROUP: &[&str] = &["transfer", "move", "send", "wire", "pay", "withdraw"];
/// Words that negate the action after them.
const NEGATORS: &[&str] = &["not", "never", "cannot", "no"];

/// Modal words after which a participle is the action, not a state.
const MODALS: &[&str] = &[
    "can", "cannot", "could", "may", "might", "must", "should", "will", "would", "shall", "to",
    "never", "not", "only",
];
/// Words between `status` and its value in "status must be X".
const LINKS: &[&str] = &[
    "must",
    "should",
    "is",
    "are",
    "be",
    "has",
    "have",
    "equal",
    "equals",
    "of",
    "always",
    "still",
    "currently",
    "already",
    "only",
    "either",
    "set",
    "remain",
    "remains",
];
/// Status-like field names.
fn is_status_field(field: &str) -> bool {
    field == "status" || field == "state" || field.ends_with("_status") || field.ends_with("_state")
}

/// Irregular inflections of verbs tools use.
const IRREGULAR: &[(&str, &[&str])] = &[
    ("pay", &["paid"]),
    ("send", &["sent"]),
    ("freeze", &["frozen", "froze"]),
    ("withdraw", &["withdrawn", "withdrew"]),
    ("make", &["made"]),
    ("cancel", &["cancellation", "canceled", "canceling"]),
    ("modify", &["modification"]),
    ("book", &["booking"]),
];

/// Whether `word` is a form of `verb` (`cancelled`, `modified`,
/// `transferring`, `paid` …).
fn inflects(word: &str, verb: &str) -> bool {
    if word == verb || verb.is_empty() {
        return word == verb && !verb.is_empty();
    }
    if IRREGULAR
        .iter()
        .any(|(v, forms)| *v == verb && forms.contains(&word))
    {
        return true;
    }
    let Some(rest) = word.strip_prefix(verb).or_else(|| {
        // `change` → `chang-ing`, `modify` → `modif-ied`.
        verb.strip_suffix('e')
            .and_then(|stem| word.strip_prefix(stem))
            .or_else(|| {
                verb.strip_suffix('y')
                    .and_then(|stem| word.strip_prefix(stem))
            })
    }) else {
        return false;
    };
    let last = verb.chars().last().map(String::from).unwrap_or_default();
    let doubled_ed = format!("{last}ed");
    let doubled_ing = format!("{last}ing");
    matches!(rest, "s" | "es" | "ed" | "d" | "ing" | "ies" | "ied")
        || rest == doubled_ed
        || rest == doubled_ing
}

/// A word of a sentence, lowercase, with its byte span.
#[derive(Clone, Debug)]
struct Token {
    word: String,
    start: usize,
}

fn tokens(sentence: &str) -> Vec<Token> {
    let mut raw: Vec<Token> = Vec::new();
    let mut start = None;
    for (i, c) in sentence.char_indices() {
        if c.is_alphanumeric() {
            if start.is_none() {
                start = Some(i);
            }
        } else if let Some(s) = start.take() {
            raw.push(Token {
                word: sentence[s..i].to_lowercase(),
                start: s,
            });
        }
    }
    if let Some(s) = start {
        raw.push(Token {
            word: sentence[s..].to_lowercase(),
            start: s,
        });
    }
    // Contractions and possessives: `can't` → cannot, `isn't` → is not,
    // `customer's` → customer.
    let mut out: Vec<Token> = Vec::with_capacity(raw.len());
    for t in raw {
        let after_apostrophe = t.start > 0
            && sentence[..t.start]
                .chars()
                .last()
                .is_some_and(|c| c == '\'' || c == '’');
        if after_apostrophe && (t.word == "t" || t.word == "s") {
            if t.word == "t"
                && let Some(prev) = out.last_mut()
            {
                match prev.word.as_str() {
                    "can" => "cannot".clone_into(&mut prev.word),
                    "won" => {
                        "will".clone_into(&mut prev.word);
                        out.push(Token {
                            word: "not".to_owned(),
                            ..t
                        });
                    }
                    w => {
                        if let Some(stem) = w.strip_suffix('n') {
                            prev.word = stem.to_owned();
                        }
                        out.push(Token {
                            word: "not".to_owned(),
                            ..t
                        });
                    }
                }
            }
            continue;
        }
        out.push(t);
    }
    out
}

/// A value's words, for matching: lowercase, anything but letters and
/// digits a space.
fn value_words(value: &str) -> Vec<String> {
    value
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// A value as rules compare it: lowercase, `_` and `-` as spaces, spaces
/// collapsed (`AWAITING_PAYMENT` and `Awaiting Payment` are the same).
pub fn normalise(value: &str) -> String {
    value
        .to_lowercase()
        .replace(['_', '-'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether two values are the same words ([`normalise`] of both equal),
/// without building either.
pub fn same_words(a: &str, b: &str) -> bool {
    normal_chars(a).eq(normal_chars(b))
}

/// The letters of [`normalise`] one at a time (lowercased letter by
/// letter: the same as `normalise` but for a final sigma).
fn normal_chars(s: &str) -> impl Iterator<Item = char> + '_ {
    s.split(|c: char| c.is_whitespace() || c == '_' || c == '-')
        .filter(|w| !w.is_empty())
        .enumerate()
        .flat_map(|(i, w)| {
            (i > 0)
                .then_some(' ')
                .into_iter()
                .chain(w.chars().flat_map(char::to_lowercase))
        })
}

/// Whether a record's value satisfies a rule's value: the same words, or
/// the value qualified in parentheses (`pending (item modified)` is still
/// pending).
pub fn value_matches(record_value: &str, rule_value: &str) -> bool {
    if record_value.is_ascii() && rule_value.is_ascii() {
        // Every precondition checks this on every write: compared as the
        // words go, without building either normal form.
        let mut v = normal_chars(record_value);
        let mut r = normal_chars(rule_value);
        loop {
            match r.next() {
                Some(c) if v.next() == Some(c) => {}
                Some(_) => return false,
                None => {
                    return match v.next() {
                        None => true,
                        Some(' ') => v.next() == Some('('),
                        Some(_) => false,
                    };
                }
            }
        }
    }
    // Beyond ASCII, lowercasing a whole string is not lowercasing each
    // letter (a final sigma): the normal forms are built.
    let v = normalise(record_value);
    let r = normalise(rule_value);
    v == r
        || v.strip_prefix(&r)
            .is_some_and(|rest| rest.starts_with(" ("))
}

/// Splits text into sentences, each with the heading it sits under
/// (markdown `#` lines). List markers are dropped; a sentence ends at `.`,
/// `!`, `?` or `:` followed by a space, outside parentheses and quotes,
/// and not after an abbreviation (`e.g.`).
pub fn sentences(text: &str) -> Vec<(Option<String>, String)> {
    let mut out = Vec::new();
    let mut heading: Option<String> = None;
    // Markdown blocks: a paragraph or a list item, its wrapped lines joined.
    let mut block = String::new();
    let flush =
        |block: &mut String, heading: &Option<String>, out: &mut Vec<(Option<String>, String)>| {
            if !block.is_empty() {
                split_line(block, &mut |s| out.push((heading.clone(), s)));
                block.clear();
            }
        };
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            // A blank line inside a sentence (after a comma, tau2's
            // "processed or delivered,\n\nit cannot be cancelled") does
            // not end it.
            if !block.ends_with([',', ';', ':']) {
                flush(&mut block, &heading, &mut out);
            }
            continue;
        }
        if let Some(h) = line.strip_prefix('#') {
            flush(&mut block, &heading, &mut out);
            heading = Some(h.trim_start_matches('#').trim().to_owned());
            continue;
        }
        let item = line.starts_with(['-', '*', '•']) || strip_number(line).len() != line.len();
        if item {
            flush(&mut block, &heading, &mut out);
        }
        let content = strip_number(line.trim_start_matches(['-', '*', '•']).trim_start());
        if !block.is_empty() {
            block.push(' ');
        }
        block.push_str(content);
    }
    flush(&mut block, &heading, &mut out);
    out
}

/// `1. text` → `text`.
fn strip_number(line: &str) -> &str {
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && line[digits..].starts_with(". ") {
        line[digits + 2..].trim_start()
    } else {
        line
    }
}

const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "etc", "vs", "approx", "no", "mr", "ms", "dr", "st",
];

fn split_line(line: &str, emit: &mut dyn FnMut(String)) {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut start = 0;
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    for (k, &(i, c)) in chars.iter().enumerate() {
        match c {
            '(' | '[' if quote.is_none() => depth += 1,
            ')' | ']' if quote.is_none() => depth = (depth - 1).max(0),
            '\'' | '"' => {
                // An apostrophe inside a word (`customer's`) is no quote.
                let prev_alnum = k > 0 && chars[k - 1].1.is_alphanumeric();
                if quote == Some(c) {
                    quote = None;
                } else if quote.is_none() && !prev_alnum {
                    quote = Some(c);
                }
            }
            '.' | '!' | '?' | ':' if depth == 0 && quote.is_none() => {
                let next_space = chars.get(k + 1).is_none_or(|(_, n)| n.is_whitespace());
                let before = line[start..i].trim();
                let word = before
                    .rsplit(|ch: char| ch.is_whitespace())
                    .next()
                    .unwrap_or("")
                    .to_lowercase();
                let abbreviation = c == '.'
                    && (ABBREVIATIONS.contains(&word.as_str()) || word.chars().count() == 1);
                if next_space && !abbreviation {
                    let s = line[start..=i].trim();
                    if !s.is_empty() {
                        emit(s.to_owned());
                    }
                    start = i + c.len_utf8();
                }
            }
            _ => {}
        }
    }
    let rest = line[start..].trim();
    if !rest.is_empty() {
        emit(rest.to_owned());
    }
}

/// Reads rules from a spec's tools, fixtures and policy.
#[derive(Clone, Debug)]
pub struct RuleReader {
    tools: Vec<ToolView>,
    /// entity (singular) → status-like field → values the entity has
    /// (normalised).
    values: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
    /// Every entity's singular.
    entities: BTreeSet<String>,
    /// The tools grouped by what [`names_action`] reads of them (verb,
    /// moves money), so a sentence's words are matched once per verb, not
    /// once per tool: a spec of 1,000 tools has a few dozen verbs.
    by_verb: Vec<((String, bool), Vec<usize>)>,
}

impl RuleReader {
    /// A reader for `tools` as the world read them (`models`, in the same
    /// order), the spec's fixtures and its policy. The values each entity
    /// has come from the fixtures, the tools' names, schemas and verbs, and
    /// the statuses the descriptions and the policy say writes leave.
    pub fn new(
        tools: &[ToolSpec],
        models: &[ToolModel],
        fixtures: &BTreeMap<String, Vec<Value>>,
        policy: &str,
    ) -> Self {
        let views: Vec<ToolView> = tools.iter().zip(models).map(|(t, m)| view(t, m)).collect();
        let mut groups: BTreeMap<(String, bool), Vec<usize>> = BTreeMap::new();
        for (k, v) in views.iter().enumerate() {
            groups.entry((v.verb.clone(), v.money)).or_default().push(k);
        }
        let mut reader = Self {
            tools: views,
            values: BTreeMap::new(),
            entities: BTreeSet::new(),
            by_verb: groups.into_iter().collect(),
        };
        for (entity, records) in fixtures {
            let one = singular(entity);
            reader.entities.insert(one.clone());
            for r in records {
                let Some(fields) = r.as_object() else {
                    continue;
                };
                for (k, v) in fields {
                    if is_status_field(k)
                        && let Some(s) = v.as_str()
                    {
                        reader.learn(&one, k, s);
                    }
                }
            }
        }
        for (tool, model) in tools.iter().zip(models) {
            let Some(entity) = model.entity.as_deref().map(singular) else {
                continue;
            };
            reader.entities.insert(entity.clone());
            if let Some(s) = &model.requires_status {
                reader.learn(&entity, "status", s);
            }
            if let Operation::StateChange(verb) = &model.operation {
                reader.learn(&entity, "status", &status_after(verb));
            }
            for p in tool.parameter_names() {
                if is_status_field(p)
                    && let Some(options) = tool
                        .parameter(p)
                        .and_then(|s| s.get("enum"))
                        .and_then(Value::as_array)
                {
                    for o in options.iter().filter_map(Value::as_str) {
                        reader.learn(&entity, p, o);
                    }
                }
            }
            if let Some(out) = &tool.output_schema {
                let mut stack = vec![out];
                while let Some(s) = stack.pop() {
                    if let Some(props) = s.get("properties").and_then(Value::as_object) {
                        for (k, v) in props {
                            if is_status_field(k)
                                && let Some(options) = v.get("enum").and_then(Value::as_array)
                            {
                                for o in options.iter().filter_map(Value::as_str) {
                                    reader.learn(&entity, k, o);
                                }
                            }
                        }
                    }
                    if let Some(items) = s.get("items") {
                        stack.push(items);
                    }
                }
            }
        }
        for v in &reader.tools {
            for (_, e, _) in &v.ids {
                reader.entities.insert(e.clone());
            }
        }
        // What writes leave is a value the entity has.
        let effects: Vec<Reading> = reader
            .read_all(policy)
            .into_iter()
            .filter(|r| matches!(r, Reading::SetsStatus { .. }))
            .collect();
        for r in effects {
            if let Reading::SetsStatus {
                tool,
                entity,
                value,
                ..
            } = r
            {
                let owner = entity.or_else(|| {
                    reader
                        .tools
                        .iter()
                        .find(|t| t.name == tool)
                        .and_then(|t| t.entity.clone())
                });
                if let Some(e) = owner {
                    reader.learn(&e, "status", &value);
                }
            }
        }
        reader
    }

    fn learn(&mut self, entity: &str, field: &str, value: &str) {
        let v = normalise(value);
        if v.is_empty() || v.split(' ').count() > 5 {
            return;
        }
        self.values
            .entry(entity.to_owned())
            .or_default()
            .entry(field.to_owned())
            .or_default()
            .insert(v);
    }

    /// The values an entity's status-like field has, as learned.
    pub fn known_values(&self, entity: &str, field: &str) -> Vec<String> {
        self.values
            .get(entity)
            .and_then(|f| f.get(field))
            .map(|v| v.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Every rule in the tools' descriptions, their parameters'
    /// descriptions and `policy`, in that order.
    pub fn read_all(&self, policy: &str) -> Vec<Reading> {
        let mut out = Vec::new();
        for (i, t) in self.tools.iter().enumerate() {
            for (_, s) in sentences(&t.description) {
                out.extend(self.read_sentence(&s, Some(i), None, &Source::Description));
            }
            for (param, text) in &t.param_descriptions {
                for (_, s) in sentences(text) {
                    if let Some(values) = enum_values(&s) {
                        out.push(Reading::Enum {
                            tool: t.name.clone(),
                            param: param.clone(),
                            values,
                            sentence: s.clone(),
                            source: Source::Parameter,
                        });
                    }
                }
            }
        }
        for (heading, s) in sentences(policy) {
            out.extend(self.read_sentence(&s, None, heading.as_deref(), &Source::Policy));
        }
        out
    }

    /// What one sentence says. `described` names the tool whose
    /// description it is (else it is a policy sentence, read under
    /// `heading`).
    pub fn read(
        &self,
        sentence: &str,
        described: Option<&str>,
        heading: Option<&str>,
    ) -> Vec<Reading> {
        let index = described.and_then(|d| self.tools.iter().position(|t| t.name == d));
        let source = if index.is_some() {
            Source::Description
        } else {
            Source::Policy
        };
        self.read_sentence(sentence, index, heading, &source)
    }

    /// The preconditions one sentence states.
    pub fn preconditions(&self, sentence: &str, described: Option<&str>) -> Vec<Precondition> {
        self.read(sentence, described, None)
            .into_iter()
            .filter_map(|r| match r {
                Reading::Precondition(p) => Some(p),
                _ => None,
            })
            .collect()
    }

    #[allow(clippy::too_many_lines)]
    fn read_sentence(
        &self,
        sentence: &str,
        described: Option<usize>,
        heading: Option<&str>,
        source: &Source,
    ) -> Vec<Reading> {
        let toks = tokens(sentence);
        if toks.is_empty() {
            return Vec::new();
        }
        let mut masked = vec![false; toks.len()];
        let mut out = Vec::new();
        let effect = find_effect(&toks, sentence, &mut masked);
        let cleared = find_clear(&toks, sentence, &mut masked);
        let words: Vec<&str> = toks.iter().map(|t| t.word.as_str()).collect();
        // Action mentions: (token index, tool index).
        let mut mentions: Vec<(usize, usize)> = Vec::new();
        for i in 0..words.len() {
            // A known state in a state's place ("a cancelled order") is no
            // action.
            if masked[i] || (self.is_known_anywhere(words[i]) && !action_position(&words, i)) {
                continue;
            }
            for (_, group) in &self.by_verb {
                // Every tool of a group reads alike here.
                if names_action(&words, i, &self.tools[group[0]]) {
                    mentions.extend(group.iter().map(|&k| (i, k)));
                }
            }
        }
        mentions.sort_unstable_by_key(|&(i, k)| (i, k));
        let heading_tools = || -> Vec<usize> {
            heading.map_or_else(Vec::new, |h| {
                let ht = tokens(h);
                let hw: Vec<&str> = ht.iter().map(|t| t.word.as_str()).collect();
                let found: Vec<usize> = (0..self.tools.len())
                    .filter(|&k| (0..hw.len()).any(|i| names_action(&hw, i, &self.tools[k])))
                    .collect();
                self.best_named(&found, &hw)
            })
        };
        let mentioned: Vec<usize> = {
            let mut m: Vec<usize> = mentions.iter().map(|(_, k)| *k).collect();
            m.sort_unstable();
            m.dedup();
            let m = self.best_named(&m, &words);
            m.into_iter()
                .filter(|&k| Self::entity_named(&self.tools[k], &words))
                .collect()
        };
        // Who the sentence is about, for effects, `once` and enums: the
        // described tool; in the policy the action its section is about
        // ("## Exchange delivered order"), else the actions it names.
        let about: Vec<usize> = if let Some(d) = described {
            vec![d]
        } else {
            let under = heading_tools();
            if under.is_empty() {
                mentioned.clone()
            } else {
                under
            }
        };
        if let Some((entity_word, value)) = &effect {
            for &k in &about {
                let t = &self.tools[k];
                let entity = entity_word
                    .as_ref()
                    .and_then(|w| self.entity_for_word(t, w))
                    .filter(|e| Some(e) != t.entity.as_ref());
                out.push(Reading::SetsStatus {
                    tool: t.name.clone(),
                    entity,
                    value: value.clone(),
                    sentence: sentence.to_owned(),
                    source: source.clone(),
                });
            }
        }
        if let Some(field) = &cleared {
            for &k in &about {
                out.push(Reading::Clears {
                    tool: self.tools[k].name.clone(),
                    field: field.clone(),
                    sentence: sentence.to_owned(),
                    source: source.clone(),
                });
            }
        }
        let once = words.contains(&"once")
            && (words.contains(&"only") || words.windows(2).any(|w| w == ["at", "most"]));
        if once {
            for &k in &about {
                if self.tools[k].acts {
                    out.push(Reading::Once {
                        tool: self.tools[k].name.clone(),
                        sentence: sentence.to_owned(),
                        source: source.clone(),
                    });
                }
            }
        }
        if described.is_none()
            && let Some(values) = enum_values(sentence)
        {
            // The parameter named nearest before the list.
            let first_quote = opening_quote(sentence).unwrap_or(sentence.len());
            for &k in &about {
                let t = &self.tools[k];
                let named = t
                    .params
                    .iter()
                    .filter_map(|p| {
                        let pw = name_words(p);
                        let at = words
                            .windows(pw.len())
                            .position(|w| w.iter().zip(&pw).all(|(a, b)| *a == b.as_str()))?;
                        (toks[at].start < first_quote).then_some((at, p))
                    })
                    .max_by_key(|(at, _)| *at);
                if let Some((_, p)) = named {
                    out.push(Reading::Enum {
                        tool: t.name.clone(),
                        param: p.clone(),
                        values: values.clone(),
                        sentence: sentence.to_owned(),
                        source: source.clone(),
                    });
                }
            }
        }
        // Preconditions: never from sentences about what a tool does not
        // check ("This method does not check if the bill is already PAID").
        let no_check = words.windows(2).any(|w| {
            matches!(w[0], "not" | "no" | "never")
                && (w[1].starts_with("check") || w[1] == "verify")
        });
        // Nor from sentences about what to say: the actions they name come
        // after a verb of saying.
        let first_action = mentions.first().map_or(words.len(), |(i, _)| *i);
        let about_speech = words[..first_action]
            .iter()
            .any(|w| sparring_types::words::SPEECH_VERBS.contains(w));
        if no_check || (described.is_none() && about_speech) {
            return out;
        }
        let restrictive = words.iter().any(|w| matches!(*w, "only" | "unless"));
        let verb_at: Vec<usize> = mentions.iter().map(|(i, _)| *i).collect();
        let mut candidates: Vec<(usize, bool)> = Vec::new();
        if let Some(d) = described {
            let negative = words.iter().any(|w| NEGATORS.contains(w));
            candidates.push((d, !negative));
        } else {
            for &(i, k) in &mentions {
                if !mentioned.contains(&k) || candidates.iter().any(|(c, _)| *c == k) {
                    continue;
                }
                let negative = (i.saturating_sub(3)..i).any(|j| NEGATORS.contains(&words[j]))
                    || words.first().is_some_and(|w| *w == "never");
                candidates.push((k, !negative));
            }
        }
        for (k, positive) in candidates {
            let t = &self.tools[k];
            if !t.acts {
                continue;
            }
            let unless = words.contains(&"unless");
            let allowed = if positive {
                if described.is_none() && !restrictive {
                    continue;
                }
                true
            } else {
                unless
            };
            for (param, entity) in Self::records_named(t, &words) {
                let Some((field, values)) = self.state_values(
                    &toks,
                    sentence,
                    &masked,
                    &entity,
                    described.is_some(),
                    &verb_at,
                ) else {
                    continue;
                };
                // The state the sentence says the action leaves ("The claim
                // starts as open") is no state it needs.
                if effect
                    .as_ref()
                    .is_some_and(|(_, v)| values.iter().all(|x| same_words(x, v)))
                {
                    continue;
                }
                // A description's negation counts in the clause of the state
                // only: "Cancel a confirmed booking whose car has not been
                // picked up" needs a confirmed booking.
                let allowed = match described {
                    Some(_) => !clause_negated(&words, &values) || unless,
                    None => allowed,
                };
                out.push(Reading::Precondition(Precondition {
                    tool: t.name.clone(),
                    param,
                    entity,
                    field,
                    values,
                    allowed,
                    sentence: sentence.to_owned(),
                    source: source.clone(),
                }));
            }
        }
        out
    }

    /// Whether a word is a status some entity has.
    fn is_known_anywhere(&self, word: &str) -> bool {
        self.values
            .values()
            .flat_map(BTreeMap::values)
            .any(|set| set.contains(word))
    }

    /// Of `found` tools, those whose extra name words the words mention
    /// most (`update_shipping_address` over `update_order_notes` for "the
    /// shipping address can only be changed …"); all when none is
    /// mentioned.
    fn best_named(&self, found: &[usize], words: &[&str]) -> Vec<usize> {
        let hits = |k: usize| {
            self.tools[k]
                .extra
                .iter()
                .filter(|x| words.iter().any(|w| w == x || singular(w) == **x))
                .count()
        };
        let best = found.iter().map(|&k| hits(k)).max().unwrap_or(0);
        found.iter().copied().filter(|&k| hits(k) == best).collect()
    }

    /// Whether the words mention the tool's entity (or what it acts on).
    fn entity_named(t: &ToolView, words: &[&str]) -> bool {
        let mentions = |e: &str| words.iter().any(|w| *w == e || singular(w) == e);
        t.entity.as_deref().is_some_and(mentions)
            || t.ids.iter().any(|(_, e, _)| mentions(e))
            || t.extra.iter().any(|x| mentions(x))
    }

    /// The entity a word names for `tool`: its target or one of its ids.
    fn entity_for_word(&self, t: &ToolView, word: &str) -> Option<String> {
        let w = singular(word);
        if t.entity.as_deref() == Some(w.as_str()) || t.ids.iter().any(|(_, e, _)| *e == w) {
            return Some(w);
        }
        self.entities.contains(&w).then_some(w)
    }

    /// The records a sentence's state is about: the target, or the id
    /// parameters of the entity it names (by role: "out of" an account is
    /// the `from_` one).
    fn records_named(t: &ToolView, words: &[&str]) -> Vec<(Option<String>, String)> {
        let mentions = |e: &str| words.iter().any(|w| *w == e || singular(w) == e);
        // A tool that makes its record (`file_claim(policy_id)`) has none to
        // check yet: a state it names is of a record it refers to ("on an
        // active policy").
        let makes_own = |e: &str| {
            !t.ids.iter().any(|(_, pe, _)| pe == e)
                && t.ids.iter().any(|(_, pe, _)| pe != e && mentions(pe))
        };
        if let Some(e) = &t.entity
            && mentions(e)
            && !makes_own(e)
            && !t
                .ids
                .iter()
                .any(|(p, pe, r)| pe == e && *r != Role::Plain && !p.is_empty())
        {
            return vec![(None, e.clone())];
        }
        let role = if words.windows(2).any(|w| w == ["out", "of"]) || words.contains(&"from") {
            Some(Role::Source)
        } else if words.iter().any(|w| matches!(*w, "into" | "to")) && t.money {
            Some(Role::Destination)
        } else {
            None
        };
        let named: Vec<&(String, String, Role)> =
            t.ids.iter().filter(|(_, e, _)| mentions(e)).collect();
        if named.is_empty() {
            // A description speaks of the tool's own record.
            return t
                .entity
                .clone()
                .map(|e| vec![(None, e)])
                .unwrap_or_default();
        }
        let by_role: Vec<&&(String, String, Role)> = named
            .iter()
            .filter(|(_, _, r)| role.is_none_or(|want| *r == want))
            .collect();
        let chosen: Vec<&&(String, String, Role)> = if by_role.is_empty() {
            named.iter().collect()
        } else {
            by_role
        };
        chosen
            .into_iter()
            .map(|(p, e, r)| {
                let target = *r == Role::Plain
                    && t.entity.as_ref() == Some(e)
                    && t.ids.first().is_some_and(|(f, _, _)| f == p);
                ((!target).then(|| p.clone()), e.clone())
            })
            .collect()
    }

    /// The state a sentence names for `entity`: the field and its values,
    /// when one of them is a value the entity has.
    fn state_values(
        &self,
        toks: &[Token],
        sentence: &str,
        masked: &[bool],
        entity: &str,
        trust_words: bool,
        verbs: &[usize],
    ) -> Option<(String, Vec<String>)> {
        let words: Vec<&str> = toks.iter().map(|t| t.word.as_str()).collect();
        let known = self.values.get(entity);
        let mut values: Vec<String> = Vec::new();
        let mut field: Option<String> = None;
        let mut explicit = false;
        // "status must be X or Y", "if its status is 'pending'".
        for (i, w) in words.iter().enumerate() {
            if masked[i] || !(*w == "status" || *w == "state") {
                continue;
            }
            let mut j = i + 1;
            while j < words.len() && LINKS.contains(&words[j]) {
                j += 1;
            }
            if j == i + 1 || j >= toks.len() {
                continue;
            }
            let raw = &sentence[toks[j].start..];
            // A quoted value starts at its quote.
            let raw = match sentence[..toks[j].start].chars().last() {
                Some(q @ ('\'' | '"')) => &sentence[toks[j].start - q.len_utf8()..],
                _ => raw,
            };
            values.extend(value_list(raw));
            field = Some((*w).to_owned());
            explicit = true;
            break;
        }
        // Known values in place: "a pending order", "while the order is
        // pending", "an account that is frozen".
        if let Some(fields) = known {
            let mut found: Vec<(usize, &String, &String)> = Vec::new();
            for (f, set) in fields {
                for v in set {
                    let vw: Vec<String> = value_words(v);
                    if vw.is_empty() {
                        continue;
                    }
                    let at = (0..toks.len().saturating_sub(vw.len() - 1)).find(|&i| {
                        !masked[i]
                            && vw.iter().enumerate().all(|(k, x)| words[i + k] == x)
                            && !(verbs.contains(&i) && action_position(&words, i))
                    });
                    if let Some(at) = at {
                        found.push((at, f, v));
                    }
                }
            }
            // In the sentence's order; a longer value over one inside it.
            found.sort_by_key(|(at, _, v)| (*at, std::cmp::Reverse(v.len())));
            let mut covered = 0;
            for (at, f, v) in found {
                if at < covered || values.contains(v) {
                    continue;
                }
                covered = at + value_words(v).len();
                values.push(v.clone());
                field.get_or_insert_with(|| f.clone());
            }
        }
        let field = field?;
        let field = known
            .and_then(|k| {
                k.keys()
                    .find(|f| **f == field || f.ends_with(&format!("_{field}")))
            })
            .cloned()
            .unwrap_or(field);
        let set = known.and_then(|k| k.get(&field));
        let values: Vec<String> = values.into_iter().map(|v| normalise(&v)).collect();
        let any_known = values.iter().any(|v| {
            set.is_some_and(|s| s.iter().any(|k| value_matches(k, v) || value_matches(v, k)))
        });
        // A tool's own description that names the field ("Line status
        // must be Active") is taken at its word.
        let trusted = explicit && trust_words;
        ((any_known || trusted) && !values.is_empty()).then_some((field, values))
    }
}

/// Whether `words[i]` names `tool`'s action.
fn names_action(words: &[&str], i: usize, tool: &ToolView) -> bool {
    let word = words[i];
    if tool.verb.is_empty() || word.len() < 3 {
        return false;
    }
    if inflects(word, &tool.verb) {
        return true;
    }
    if UPDATE_GROUP.contains(&tool.verb.as_str()) && UPDATE_GROUP.iter().any(|v| inflects(word, v))
    {
        return true;
    }
    if tool.money {
        // "move money", "money can only be moved".
        let near = words[i.saturating_sub(4)..(i + 3).min(words.len())]
            .iter()
            .any(|w| matches!(*w, "money" | "funds" | "cash"));
        return MONEY_GROUP
            .iter()
            .any(|v| inflects(word, v) && (near || !matches!(*v, "move" | "send")));
    }
    false
}

/// Whether the word at `i` is an action (a participle after a modal: "can
/// be cancelled", "not cancelled"), not a state ("is cancelled", "a
/// cancelled order").
fn action_position(words: &[&str], i: usize) -> bool {
    let prev = |k: usize| i.checked_sub(k).map(|j| words[j]);
    match prev(1) {
        None => true,
        Some(p) if MODALS.contains(&p) => true,
        Some("be") => prev(2).is_some_and(|p| MODALS.contains(&p)),
        Some("or" | "and") => i >= 2 && action_position(words, i - 2),
        _ => false,
    }
}

/// Values in "X", "X or Y", "X, Y, or Z", "'X'": a list joined by `or`
/// (commas too when there is an `or`), else the first phrase up to a
/// comma, `and` or the end of the clause.
fn value_list(raw: &str) -> Vec<String> {
    let raw = raw.trim_start();
    if let Some(q) = raw.chars().next().filter(|c| *c == '\'' || *c == '"') {
        let mut out = Vec::new();
        let mut rest = raw;
        while let Some(body) = rest.strip_prefix(q) {
            let Some(end) = body.find(q) else { break };
            out.push(body[..end].to_owned());
            rest = body[end + 1..].trim_start();
            let next = rest.strip_prefix(',').unwrap_or(rest).trim_start();
            rest = next.strip_prefix("or ").unwrap_or(next).trim_start();
        }
        return out;
    }
    let end = raw
        .find(['.', ';', '(', ')', ':', '!', '?'])
        .unwrap_or(raw.len());
    let clause = raw[..end].replace("**", "");
    let has_or = clause.contains(" or ");
    let parts: Vec<String> = if has_or {
        clause
            .split([','])
            .flat_map(|p| p.split(" or "))
            .map(|p| p.trim().trim_start_matches("or ").trim().to_owned())
            .collect()
    } else {
        let first = clause.split([',']).next().unwrap_or("");
        let first = first.split(" and ").next().unwrap_or(first);
        vec![first.trim().to_owned()]
    };
    parts
        .into_iter()
        .filter(|p| !p.is_empty() && p.split_whitespace().count() <= 4)
        .collect()
}

/// "the order status will be changed to 'X'", "Sets bill status to X",
/// "change the status of the bill to X", "marks the order as X": the
/// entity word (if any) and the value. The words are masked, so the verb in
/// them is not read as an action.
fn find_effect(
    toks: &[Token],
    sentence: &str,
    masked: &mut [bool],
) -> Option<(Option<String>, String)> {
    let words: Vec<&str> = toks.iter().map(|t| t.word.as_str()).collect();
    let changers = |w: &str| {
        ["change", "set", "update", "move", "mark"]
            .iter()
            .any(|v| inflects(w, v))
    };
    for (i, w) in words.iter().enumerate() {
        // "The claim starts as open", "is created as draft": what a new
        // record is made as.
        if matches!(*w, "starts" | "begins" | "created")
            && let Some(as_at) = (i + 1..(i + 3).min(words.len())).find(|&j| words[j] == "as")
            && words[i + 1..as_at].iter().all(|x| *x == "out")
        {
            let entity = words[..i]
                .iter()
                .rfind(|x| !matches!(**x, "the" | "a" | "an" | "it" | "is" | "new"))
                .map(|x| (*x).to_owned());
            if let Some(value) = raw_from(toks, sentence, as_at + 1)
                .and_then(|raw| value_list(&raw).into_iter().next())
            {
                masked[i..=as_at].iter_mut().for_each(|m| *m = true);
                return Some((entity, value));
            }
        }
        if *w != "status" && !w.starts_with("mark") {
            continue;
        }
        // "marks the order as X".
        if w.starts_with("mark") && inflects(w, "mark") {
            let as_at = (i + 1..(i + 5).min(words.len())).find(|&j| words[j] == "as")?;
            let entity = (i + 1..as_at)
                .map(|j| words[j])
                .rfind(|x| !matches!(*x, "the" | "a" | "an" | "it"))
                .map(str::to_owned);
            let value = value_list(&raw_from(toks, sentence, as_at + 1)?)
                .into_iter()
                .next()?;
            masked[i..=as_at].iter_mut().for_each(|m| *m = true);
            return Some((entity, value));
        }
        // The entity word before `status` ("bill status") or after it
        // ("status of the bill").
        let to_at = (i + 1..(i + 8).min(words.len())).find(|&j| words[j] == "to")?;
        let between = &words[i + 1..to_at];
        let passive = between.iter().any(|x| changers(x));
        let active = (i.saturating_sub(4)..i).any(|j| changers(words[j]));
        if !(passive || active) || between.iter().any(|x| *x == "kept" || *x == "make") {
            continue;
        }
        let entity = if let Some(of) = between.iter().position(|x| *x == "of") {
            between[of + 1..]
                .iter()
                .rfind(|x| !matches!(**x, "the" | "a" | "an"))
                .map(|x| (*x).to_owned())
        } else {
            i.checked_sub(1)
                .map(|j| words[j])
                .filter(|x| !matches!(*x, "the" | "its" | "a" | "an" | "their") && !changers(x))
                .map(str::to_owned)
        };
        let value = value_list(&raw_from(toks, sentence, to_at + 1)?)
            .into_iter()
            .next()?;
        let from = (i.saturating_sub(4)..i)
            .find(|&j| changers(words[j]))
            .unwrap_or(i);
        masked[from..=to_at].iter_mut().for_each(|m| *m = true);
        // The value's own words are no action either.
        let vw = value_words(&value);
        for m in masked.iter_mut().skip(to_at + 1).take(vw.len()) {
            *m = true;
        }
        return Some((entity, value));
    }
    None
}

/// The raw text from token `at` on, with its opening quote.
fn raw_from(toks: &[Token], sentence: &str, at: usize) -> Option<String> {
    let t = toks.get(at)?;
    let before = &sentence[..t.start];
    let start = match before.chars().last() {
        Some(q @ ('\'' | '"')) => t.start - q.len_utf8(),
        _ => t.start,
    };
    Some(sentence[start..].to_owned())
}

/// "clears suspension_start_date": the field.
fn find_clear(toks: &[Token], sentence: &str, masked: &mut [bool]) -> Option<String> {
    let at = toks.iter().position(|t| inflects(&t.word, "clear"))?;
    let next = toks.get(at + 1)?;
    let raw = &sentence[next.start..];
    let field: String = raw
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if !field.contains('_') {
        return None;
    }
    masked[at] = true;
    Some(field.to_lowercase())
}

/// Values a sentence states as the only ones allowed: "either 'a' or 'b'",
/// "one of 'a', 'b'", "must be 'a' or 'b'". Examples ("such as 'a' or
/// 'b'") are not.
pub fn enum_values(sentence: &str) -> Option<Vec<String>> {
    let lower = sentence.to_lowercase();
    let first = opening_quote(&lower)?;
    let before = &lower[..first];
    let trigger = ["either", "one of", "must be", "should be", "only"]
        .iter()
        .filter_map(|t| before.rfind(t).map(|at| at + t.len()))
        .max()?;
    let gap = &before[trigger..];
    if gap.split_whitespace().count() > 2 || gap.contains('.') {
        return None;
    }
    let examples = ["such as", "e.g", "for example", "for instance", "like"];
    if examples.iter().any(|e| before[trigger..].contains(e)) {
        return None;
    }
    let values = value_list(&sentence[first..]);
    let one_is_enough =
        before[..trigger].ends_with("must be") || before[..trigger].ends_with("only");
    (values.len() >= 2 || (one_is_enough && values.len() == 1)).then_some(values)
}

/// The first quote that opens a quotation (not an apostrophe inside a
/// word, as in `customer's`).
fn opening_quote(text: &str) -> Option<usize> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    chars.iter().enumerate().find_map(|(k, &(i, c))| {
        let quote = c == '\'' || c == '"';
        let prev_alnum = k > 0 && chars[k - 1].1.is_alphanumeric();
        (quote && !prev_alnum).then_some(i)
    })
}

fn view(tool: &ToolSpec, model: &ToolModel) -> ToolView {
    let words = name_words(&tool.name);
    let verb = model.verb.clone();
    let entity = model.entity.as_deref().map(singular);
    let mut ids: Vec<(String, String, Role)> = Vec::new();
    if let (Some(p), Some(e)) = (&model.id_param, &entity) {
        ids.push((p.clone(), e.clone(), role_of(p)));
    }
    for (p, e) in &model.references {
        ids.push((p.clone(), singular(e), role_of(p)));
    }
    let entity_words: Vec<String> = entity
        .iter()
        .flat_map(|e| e.split('_').map(str::to_owned).collect::<Vec<_>>())
        .collect();
    let extra: Vec<String> = words
        .iter()
        .filter(|w| **w != verb)
        .filter(|w| {
            !entity_words.contains(w)
                && !entity_words.contains(&singular(w))
                && !matches!(
                    w.as_str(),
                    "pending"
                        | "delivered"
                        | "active"
                        | "by"
                        | "for"
                        | "of"
                        | "the"
                        | "a"
                        | "an"
                        | "all"
                        | "details"
                        | "info"
                        | "id"
                        | "ids"
                        | "to"
                        | "from"
                        | "with"
                )
                && !ROLE_PREFIXES.contains(&w.as_str())
        })
        .map(|w| singular(w))
        .collect();
    let param_descriptions = tool
        .parameter_names()
        .into_iter()
        .filter_map(|p| {
            let d = tool.parameter(p)?.get("description")?.as_str()?;
            Some((p.to_owned(), d.to_owned()))
        })
        .collect();
    ToolView {
        name: tool.name.clone(),
        verb,
        acts: model.acts() || model.money.is_some(),
        money: model.money.is_some(),
        entity,
        params: tool
            .parameter_names()
            .into_iter()
            .map(str::to_owned)
            .collect(),
        ids,
        extra,
        description: tool.description.clone(),
        param_descriptions,
    }
}

/// The preconditions `sentence` states for `tools`, with what the tools
/// themselves say (their names, verbs, schemas and descriptions) as the
/// values entities have. A policy reader calls this per rule; the world
/// reads with its fixtures too ([`RuleReader::new`]).
pub fn preconditions(sentence: &str, tools: &[ToolSpec]) -> Vec<Precondition> {
    let models: Vec<ToolModel> = tools.iter().map(|t| infer_tool(t, &[])).collect();
    let reader = RuleReader::new(tools, &models, &BTreeMap::new(), "");
    let described = tools
        .iter()
        .find(|t| t.description.contains(sentence.trim()) && !sentence.trim().is_empty())
        .map(|t| t.name.as_str());
    reader.preconditions(sentence, described)
}

/// Role words of an id parameter, for the world (`from_account_id` moves
/// money out).
pub fn is_source(param: &str) -> bool {
    role_of(param) == Role::Source
}

/// Whether an id parameter names where something goes (`to_account_id`).
pub fn is_destination(param: &str) -> bool {
    role_of(param) == Role::Destination
}

/// The stem of an id parameter without its role (`account` for
/// `from_account_id`).
pub fn bare_stem(stem: &str) -> &str {
    without_role(stem)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str, params: &[&str]) -> ToolSpec {
        let typed: Vec<(&str, &str)> = params.iter().map(|p| (*p, "string")).collect();
        ToolSpec::with_parameters(name, &typed).described(description)
    }

    fn desk() -> (Vec<ToolSpec>, BTreeMap<String, Vec<Value>>) {
        let tools = vec![
            tool(
                "get_order",
                "Look up one order by its order id, such as '#W1001'.",
                &["order_id"],
            ),
            tool(
                "refund_order",
                "Refund a shipped or delivered order in full.",
                &["order_id", "reason"],
            ),
            tool("cancel_order", "Cancel a pending order.", &["order_id"]),
            tool(
                "update_shipping_address",
                "Change the shipping address of a pending order.",
                &["order_id", "address"],
            ),
        ];
        let fixtures: BTreeMap<String, Vec<Value>> = [(
            "orders".to_owned(),
            ["pending", "shipped", "delivered", "cancelled"]
                .iter()
                .enumerate()
                .map(|(i, s)| json!({"order_id": format!("#W{i}"), "status": s}))
                .collect(),
        )]
        .into_iter()
        .collect();
        (tools, fixtures)
    }

    fn reader(
        tools: &[ToolSpec],
        fixtures: &BTreeMap<String, Vec<Value>>,
        policy: &str,
    ) -> RuleReader {
        let keys: Vec<String> = fixtures.keys().cloned().collect();
        let models: Vec<ToolModel> = tools.iter().map(|t| infer_tool(t, &keys)).collect();
        RuleReader::new(tools, &models, fixtures, policy)
    }

    fn one(
        r: &RuleReader,
        s: &str,
        described: Option<&str>,
    ) -> Vec<(String, String, Vec<String>, bool)> {
        r.preconditions(s, described)
            .into_iter()
            .map(|p| (p.tool, p.field, p.values, p.allowed))
            .collect()
    }

    fn v(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    /// A sentence, the tool whose description it is (`None`: the policy's),
    /// and the status rule it states: the tool, the values, whether they
    /// are allowed (`None`: no rule).
    type Case<'a> = (
        &'a str,
        Option<&'a str>,
        Option<(&'a str, &'a [&'a str], bool)>,
    );

    #[test]
    fn descriptions_and_policy_sentences_state_required_statuses() {
        let (tools, fixtures) = desk();
        let r = reader(&tools, &fixtures, "");
        let cases: &[Case] = &[
            // Descriptions state what their own tool requires.
            (
                "Cancel a pending order.",
                Some("cancel_order"),
                Some(("cancel_order", &["pending"], true)),
            ),
            (
                "Refund a shipped or delivered order in full.",
                Some("refund_order"),
                Some(("refund_order", &["shipped", "delivered"], true)),
            ),
            (
                "Change the shipping address of a pending order.",
                Some("update_shipping_address"),
                Some(("update_shipping_address", &["pending"], true)),
            ),
            // A negation in another clause is not the state's; in its own, it is.
            (
                "Cancel a pending order whose parcel has not been packed yet.",
                Some("cancel_order"),
                Some(("cancel_order", &["pending"], true)),
            ),
            (
                "Cancel an order that is not shipped.",
                Some("cancel_order"),
                Some(("cancel_order", &["shipped"], false)),
            ),
            // Nor is a negation in what the action is for.
            (
                "Cancel a pending order so no parcel can leave the warehouse.",
                Some("cancel_order"),
                Some(("cancel_order", &["pending"], true)),
            ),
            // A read is never held back by a state; a word no record has is no state.
            ("Look up a pending order.", Some("get_order"), None),
            ("Cancel a big order.", Some("cancel_order"), None),
            // Policy sentences name their tools.
            (
                "Only orders that are pending can be cancelled.",
                None,
                Some(("cancel_order", &["pending"], true)),
            ),
            (
                "Shipped or delivered orders can be refunded, not cancelled.",
                None,
                Some(("cancel_order", &["shipped", "delivered"], false)),
            ),
            (
                "The shipping address can only be changed while the order is pending.",
                None,
                Some(("update_shipping_address", &["pending"], true)),
            ),
            (
                "An order can only be cancelled if its status is 'pending'.",
                None,
                Some(("cancel_order", &["pending"], true)),
            ),
            // Permission without restriction, obligations of the agent, and
            // what a tool does not check state nothing.
            ("Pending orders can be cancelled.", None, None),
            (
                "You must confirm with the customer before issuing a refund.",
                None,
                None,
            ),
            (
                "The cancel tool does not check if the order is pending.",
                None,
                None,
            ),
            // What to say about an action is no condition on it.
            (
                "Never tell the customer that an order was refunded or cancelled unless the tool succeeded.",
                None,
                None,
            ),
            (
                "Never promise that a pending order will be cancelled.",
                None,
                None,
            ),
        ];
        for &(sentence, described, want) in cases {
            let want: Vec<_> = want
                .into_iter()
                .map(|(tool, values, allowed)| {
                    (tool.to_owned(), "status".to_owned(), v(values), allowed)
                })
                .collect();
            assert_eq!(one(&r, sentence, described), want, "{sentence}");
        }
    }

    #[test]
    fn money_out_of_a_frozen_account() {
        let tools = vec![
            tool(
                "transfer_money",
                "Move money between two accounts.",
                &["from_account_id", "to_account_id", "amount"],
            ),
            tool("get_account", "", &["account_id"]),
        ];
        let mut tools = tools;
        tools[0].parameters["properties"]["amount"] = json!({"type": "number"});
        let fixtures: BTreeMap<String, Vec<Value>> = [(
            "accounts".to_owned(),
            vec![
                json!({"account_id": "A1", "status": "active"}),
                json!({"account_id": "A2", "status": "frozen"}),
            ],
        )]
        .into_iter()
        .collect();
        let r = reader(&tools, &fixtures, "");
        let rules = r.preconditions("Never move money out of an account that is frozen.", None);
        assert_eq!(rules.len(), 1, "{rules:?}");
        assert_eq!(rules[0].param.as_deref(), Some("from_account_id"));
        assert_eq!(rules[0].values, v(&["frozen"]));
        assert!(!rules[0].allowed);
        let into = r.preconditions(
            "Money can only be moved into an account that is active.",
            None,
        );
        assert_eq!(into[0].param.as_deref(), Some("to_account_id"), "{into:?}");
        assert!(into[0].allowed);
    }

    #[test]
    fn statuses_writes_leave_clears_once_and_enums() {
        let mut tools = vec![
            tool(
                "return_delivered_order_items",
                "Return some items of a delivered order. The order status will be changed to 'return requested'.",
                &["order_id", "item_ids"],
            ),
            tool(
                "exchange_delivered_order_items",
                "Exchange items in a delivered order. For a delivered order, return or exchange can be only done once by the agent.",
                &["order_id", "item_ids"],
            ),
            tool(
                "send_payment_request",
                "Sends a payment request. Logic: Sets bill status to AWAITING_PAYMENT and notifies customer. Warning: This method does not check if the bill is already PAID.",
                &["customer_id", "bill_id"],
            ),
            tool(
                "resume_line",
                "Resumes a suspended line. Checks: Line status must be Suspended or Pending Activation. Logic: Sets line status to Active, clears suspension_start_date.",
                &["customer_id", "line_id"],
            ),
            tool(
                "cancel_pending_order",
                "Cancel a pending order.",
                &["order_id", "reason"],
            ),
        ];
        tools[4].parameters["properties"]["reason"] = json!({"type": "string",
            "description": "The reason for cancellation, which should be either 'no longer needed' or 'ordered by mistake'."});
        let policy = "# Exchange delivered order\n\nAfter user confirmation, the order status will be changed to 'exchange requested', and the user will receive an email.\n";
        let r = reader(&tools, &BTreeMap::new(), policy);
        let all = r.read_all(policy);
        let sets: Vec<(String, Option<String>, String)> = all
            .iter()
            .filter_map(|x| match x {
                Reading::SetsStatus {
                    tool,
                    entity,
                    value,
                    ..
                } => Some((tool.clone(), entity.clone(), value.clone())),
                _ => None,
            })
            .collect();
        for want in [
            ("return_delivered_order_items", None, "return requested"),
            ("send_payment_request", Some("bill"), "AWAITING_PAYMENT"),
            ("resume_line", None, "Active"),
            ("exchange_delivered_order_items", None, "exchange requested"),
        ] {
            let want = (
                want.0.to_owned(),
                want.1.map(str::to_owned),
                want.2.to_owned(),
            );
            assert!(sets.contains(&want), "{want:?} not in {sets:?}");
        }
        assert!(all.iter().any(|x| matches!(x, Reading::Clears { tool, field, .. } if tool == "resume_line" && field == "suspension_start_date")));
        assert!(all.iter().any(
            |x| matches!(x, Reading::Once { tool, .. } if tool == "exchange_delivered_order_items")
        ));
        assert!(all.iter().any(|x| matches!(x, Reading::Enum { tool, param, values, .. }
            if tool == "cancel_pending_order" && param == "reason" && *values == v(&["no longer needed", "ordered by mistake"]))));
        let resume: Vec<_> = all
            .iter()
            .filter_map(|x| match x {
                Reading::Precondition(p) if p.tool == "resume_line" => Some(p.values.clone()),
                _ => None,
            })
            .collect();
        assert!(
            resume.contains(&v(&["suspended", "pending activation"])),
            "{resume:?}"
        );
        // "does not check if the bill is already PAID" forbids nothing.
        assert!(
            !all.iter()
                .any(|x| matches!(x, Reading::Precondition(p) if p.tool == "send_payment_request"))
        );
    }

    #[test]
    fn words_sentences_and_enums() {
        assert!(inflects("cancelled", "cancel") && inflects("modified", "modify"));
        assert!(inflects("changing", "change") && inflects("transferred", "transfer"));
        assert!(inflects("paid", "pay") && !inflects("payment", "pay") && !inflects("cancel", ""));
        let heading = "# Cancel\n- Only pending orders, e.g. new ones, can be cancelled. Checks: it must be 'a. b'.\n1. Third one";
        for (text, want) in [
            (
                heading,
                &[
                    "Only pending orders, e.g. new ones, can be cancelled.",
                    "Checks:",
                    "it must be 'a. b'.",
                    "Third one",
                ][..],
            ),
            (
                "- Only pending orders can be\n  cancelled. Or not\nat all.\n- Next item.",
                &[
                    "Only pending orders can be cancelled.",
                    "Or not at all.",
                    "Next item.",
                ],
            ),
            // A blank line after a comma continues the sentence; after a full
            // stop it ends the paragraph.
            (
                "Cancel it. If it shipped,\n\nit cannot be cancelled.\n\nNext.",
                &[
                    "Cancel it.",
                    "If it shipped, it cannot be cancelled.",
                    "Next.",
                ],
            ),
        ] {
            let texts: Vec<String> = sentences(text).into_iter().map(|(_, t)| t).collect();
            assert_eq!(texts, want, "{text:?}");
        }
        assert_eq!(sentences(heading)[0].0.as_deref(), Some("Cancel"));
        assert_eq!(
            enum_values("The cabin, such as 'economy' or 'business'."),
            None
        );
        assert_eq!(
            enum_values("Must be one of 'low', 'high'."),
            Some(v(&["low", "high"]))
        );
        assert_eq!(
            value_list("Suspended or Pending Activation."),
            v(&["Suspended", "Pending Activation"])
        );
        assert_eq!(
            value_list("Active, Customer owns the line."),
            v(&["Active"])
        );
        assert!(value_matches("pending (item modified)", "pending"));
        // The same answers as comparing the normal forms.
        let values = [
            "pending",
            "Pending",
            "pending (item modified)",
            "pending(x)",
            "pending x",
            "pend",
            "",
            " ",
            "a_b",
            "A-B",
            "a  b",
            "a\u{b}b",
            "a b (c)",
            "ΣΑΣ",
            "σας",
            "pending\t(item)",
            "(x)",
            "_pending_",
        ];
        for v in values {
            for r in values {
                let (nv, nr) = (normalise(v), normalise(r));
                let slow = nv == nr || nv.strip_prefix(&nr).is_some_and(|x| x.starts_with(" ("));
                assert_eq!(value_matches(v, r), slow, "{v:?} {r:?}");
            }
        }
        assert!(value_matches("Awaiting Payment", "AWAITING_PAYMENT"));
        assert!(
            same_words("Awaiting  Payment", "AWAITING_PAYMENT")
                && !same_words("pending", "pending (x)")
        );
        assert!(!value_matches("pending", "pending (item modified)"));
    }

    #[test]
    fn the_free_function_reads_with_the_tools_words_only() {
        let tools = vec![tool(
            "cancel_pending_order",
            "Cancel an order.",
            &["order_id"],
        )];
        // `pending` is a status the tools name; `delivered` none has.
        let rules = preconditions(
            "Never cancel an order that is delivered or pending.",
            &tools,
        );
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].values, v(&["pending"]));
        assert!(!rules[0].allowed);
    }
}
