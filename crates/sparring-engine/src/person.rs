//! The simulated person, played from templates.
//!
//! The person is the owner of the situation's records
//! ([`identity`](crate::identity)) and knows only its [`Facts`]: who it is
//! (name, email and the other identity fields the world holds), the id of
//! its record and a value for every argument of the goal's tool a customer
//! would know. It answers the agent's questions from those facts, says it
//! does not know anything else (and may walk away then, at
//! [`LEAVE_WHEN_UNKNOWN`](crate::defaults::LEAVE_WHEN_UNKNOWN)), agrees to a
//! confirmation only when it matches its intent (a wrong amount or record
//! gets a correction), answers a confirmation by stance (agree, ask first or
//! push, at the [`confirm`](crate::defaults::confirm) shares), and may walk
//! away when asked one question too many ([`patience`](leave_probability)).
//! Its stance sets how it writes.

use sparring_reading::text::{sentences, words};
use sparring_types::seed::Stream;
use sparring_types::{Confirmation, ConfirmationKind, Correction, Patience, Stance, Vocabulary};
use sparring_world::Operation;
use std::collections::BTreeMap;

const ADDRESSES: &[&str] = &[
    "42 Elm Street, Springfield, IL 62704",
    "7 Harbour Road, Portland, ME 04101",
    "1180 Pine Avenue, Apt 3B, Austin, TX 78701",
    "15 Willow Lane, Madison, WI 53703",
];

/// The same addresses as a form's fields (`address1`, `city`, `zip`, …),
/// in the order of `ADDRESSES`: line 1, line 2, city, state, country, zip.
const ADDRESS_FORMS: &[[&str; 6]] = &[
    [
        "42 Elm Street",
        "Apt 2",
        "Springfield",
        "IL",
        "USA",
        "62704",
    ],
    ["7 Harbour Road", "Unit 5", "Portland", "ME", "USA", "04101"],
    ["1180 Pine Avenue", "Apt 3B", "Austin", "TX", "USA", "78701"],
    ["15 Willow Lane", "Suite 1", "Madison", "WI", "USA", "53703"],
];

/// Sums a person asks to have worked out (a tool that calculates).
const EXPRESSIONS: &[&str] = &["120 + 45.5", "3 * 19.99", "(250 - 40) / 2", "89.99 + 12.5"];

/// Reasons for a change that fit any domain (a schema's enum or a
/// description's list of allowed reasons comes first).
const REASONS: &[&str] = &[
    "I don't need it any more",
    "my plans changed",
    "it was a mistake on my part",
    "I changed my mind",
];

/// Amounts a person asks to move or pay, smallest first.
const AMOUNTS: &[u32] = &[25, 40, 60, 75, 120, 250, 400];

/// Dates a person gives (travel, appointments, deliveries).
const DATES: &[&str] = &["2024-06-14", "2024-07-02", "2024-08-19", "2024-09-05"];

/// Hours of the day a person asks a new time at (a date-time argument).
const HOURS: &[u32] = &[9, 10, 11, 14, 15, 16];

/// Names of people and businesses a customer pays or adds.
const PAYEES: &[&str] = &["Lena Fischer", "Northside Plumbing", "Maple Dental Care"];

/// IBANs a customer reads off a bill (valid check digits).
const IBANS: &[&str] = &["GB82WEST12345698765432", "DE89370400440532013000"];

/// The most space-separated groups a phone number is written in (`+44
/// 7700 900 311`).
const PHONE_GROUPS: usize = 5;

/// What the person knows and wants.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    /// Field → value the person can give when asked: its identity and the
    /// goal tool's arguments it holds.
    pub known: BTreeMap<String, String>,
    /// The id parameter and the id of the person's record, if any.
    pub id: Option<(String, String)>,
    /// Values the person wants set (parameter → value).
    pub wants: Vec<(String, String)>,
    /// What the person wants, as a verb phrase (`cancel my order`).
    pub goal: String,
    /// The goal tool's arguments the person holds a value for (parameter →
    /// value), in the schema's order.
    pub args: Vec<(String, String)>,
    /// The goal tool's required arguments the person holds no value for.
    pub lacks: Vec<String>,
    /// Who the person is: the owner key of [`identity::Owner`](crate::identity::Owner).
    pub owner: Option<String>,
    /// The record that holds the person's identity:
    /// [`Owner::identity_record`](crate::identity::Owner::identity_record).
    pub identity_record: Option<(String, String)>,
}

impl Facts {
    /// Facts for a person with a name who wants what a tool does.
    pub fn new(name: &str, op: &Operation, entity: Option<&str>, tool: &str) -> Self {
        let mut known = BTreeMap::new();
        known.insert("name".to_owned(), name.to_owned());
        known.insert("email".to_owned(), crate::identity::email_for(name));
        let thing = entity.map_or_else(|| "account".to_owned(), crate::writer::thing_of);
        let goal = match op {
            Operation::Read => format!("know about my {thing}"),
            Operation::StateChange(verb) => {
                format!("{} my {thing}", crate::writer::verb_phrase(verb))
            }
            Operation::Update => format!("change my {thing}"),
            Operation::Create => format!("get a new {thing}"),
            Operation::Other if matches!(tool, "request" | "none" | "") => {
                "get some help".to_owned()
            }
            Operation::Other => sparring_world::name_words(tool).join(" "),
        };
        Self {
            known,
            goal,
            ..Self::default()
        }
    }

    /// Facts for a seed ask: the person knows its name and email and wants
    /// what the ask says.
    pub fn for_seed(ask: &str, name: &str) -> Self {
        let mut facts = Self::new(name, &Operation::Other, None, "request");
        "get what I asked for".clone_into(&mut facts.goal);
        // Ids the seed names are facts the person can repeat.
        let mut ids: Vec<String> = Vec::new();
        let words: Vec<&str> = ask
            .split_whitespace()
            .map(|w| w.trim_end_matches(['.', ',', '?', '!', ':', ';']))
            .collect();
        let mut i = 0;
        while i < words.len() {
            // A phone number written in groups (`07700 900123`, `+44 7700
            // 900311`) is one id, the longest run of groups that reads as one.
            let groups = words[i..]
                .iter()
                .take(PHONE_GROUPS)
                .take_while(|w| w.chars().all(|c| c.is_ascii_digit() || "+()-.".contains(c)))
                .count();
            if let Some(n) = (2..=groups)
                .rev()
                .find(|&n| sparring_world::looks_like_phone(&words[i..i + n].join(" ")))
            {
                ids.push(words[i..i + n].join(" "));
                i += n;
                continue;
            }
            let w = words[i].trim_matches(|c: char| !(c.is_alphanumeric() || c == '#'));
            i += 1;
            // A date ("born 1984-03-12", "12/04/1986") or an amount
            // ("250.00") is no id.
            let slashed = w.split('/').count() == 3
                && w.split('/')
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
            let date =
                slashed || (w.len() == 10 && sparring_types::is_date_time(&format!("{w}T00:00")));
            let number = w.contains(['.', ','])
                && w.chars()
                    .all(|c| c.is_ascii_digit() || c == '.' || c == ',');
            if w.len() >= 4 && w.chars().any(|c| c.is_ascii_digit()) && !date && !number {
                ids.push(w.to_owned());
            }
        }
        ids.dedup();
        if let Some(first) = ids.first() {
            facts.known.insert("id".to_owned(), first.clone());
        }
        // Every record the seed names is the person's own ("from my checking
        // A-1001 to my savings A-1002"): a proposal naming one is no stranger's.
        if ids.len() > 1 {
            facts.known.insert("named_ids".to_owned(), ids.join(", "));
        }
        facts
    }

    /// The person's identity as the owner of its records: its name, email
    /// and other identity fields join what it knows.
    pub fn set_owner(&mut self, owner: &crate::identity::Owner) {
        for (k, v) in &owner.identity {
            self.known.insert(k.clone(), v.clone());
        }
        self.owner = Some(owner.key.clone());
        self.identity_record.clone_from(&owner.identity_record);
    }

    /// The person holds `value` for the goal tool's `param` (an amount past
    /// a policy bound): it knows it, gives it, and no longer lacks it.
    pub fn hold(&mut self, param: &str, value: &str) {
        self.known.insert(param.to_owned(), value.to_owned());
        for list in [&mut self.args, &mut self.wants] {
            for (p, v) in list.iter_mut() {
                if p == param {
                    value.clone_into(v);
                }
            }
        }
        if !self.args.iter().any(|(p, _)| p == param) {
            self.args.push((param.to_owned(), value.to_owned()));
        }
        self.lacks.retain(|p| p != param);
    }

    /// The person's name.
    pub fn name(&self) -> &str {
        self.known.get("name").map_or("", String::as_str)
    }
}

/// An id shaped like `ids` but not among them.
pub fn unknown_id(ids: &[String], stream: &mut Stream) -> String {
    let template = stream
        .pick(ids)
        .cloned()
        .unwrap_or_else(|| "100000".to_owned());
    // An id of letters only (a record locator, `PLNVUC`) is made anew in
    // its letters, so it keeps the shape its schema's pattern asks; an id
    // with digits in its digits.
    let letters_only = !template.chars().any(|c| c.is_ascii_digit());
    for attempt in 0..64u64 {
        let candidate: String = template
            .chars()
            .map(|c| {
                if c.is_ascii_digit() {
                    char::from(b'0' + (stream.below(10) as u8))
                } else if letters_only && c.is_ascii_uppercase() {
                    char::from(b'A' + (stream.below(26) as u8))
                } else if letters_only && c.is_ascii_lowercase() {
                    char::from(b'a' + (stream.below(26) as u8))
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

/// A value the person would give for an argument its name, schema and
/// description say a customer knows: a choice of the schema's enum or of
/// the options its description lists (`either 'no longer needed' or
/// 'ordered by mistake'`), an amount (below `balance` when the record has
/// one), a count, a date, an address, a reason, a payee's name or an IBAN.
/// `None` when a customer could not know it.
pub fn value_for(
    param: &str,
    schema: Option<&serde_json::Value>,
    balance: Option<f64>,
    stream: &mut Stream,
) -> Option<String> {
    let w = words(&param.replace('_', " "));
    let has = |k: &str| w.iter().any(|x| x == k || x.trim_end_matches('s') == k);
    let description = schema
        .and_then(|s| s.get("description"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    if let Some(options) = schema
        .and_then(|s| s.get("enum"))
        .and_then(serde_json::Value::as_array)
    {
        let options: Vec<String> = options
            .iter()
            .filter_map(|v| match v {
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .collect();
        return stream.pick(&options).cloned();
    }
    let listed = listed_options(description);
    if !listed.is_empty() {
        return stream.pick(&listed).cloned();
    }
    let kind = schema
        .and_then(|s| s.get("type"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or("string");
    if kind == "boolean" || kind == "object" || kind == "array" {
        return None;
    }
    if has("expression") || has("formula") {
        return stream.pick(EXPRESSIONS).map(|s| (*s).to_owned());
    }
    if has("iban") {
        return stream.pick(IBANS).map(|s| (*s).to_owned());
    }
    let number = kind == "number";
    if has("amount") || has("price") || has("sum") || (number && (has("total") || has("payment"))) {
        let fits: Vec<u32> = AMOUNTS
            .iter()
            .copied()
            .filter(|a| balance.is_none_or(|b| f64::from(*a) < b))
            .collect();
        return stream.pick(&fits).map(ToString::to_string).or_else(|| {
            balance
                .filter(|b| *b >= 2.0)
                .map(|b| format!("{}", (b / 2.0).floor()))
        });
    }
    if [
        "quantity",
        "count",
        "passenger",
        "night",
        "seat",
        "guest",
        "baggage",
        "bag",
        "ticket",
    ]
    .iter()
    .any(|k| has(k))
    {
        return Some((1 + stream.below(3)).to_string());
    }
    if has("address") {
        return stream.pick(ADDRESSES).map(|s| (*s).to_owned());
    }
    if has("reason") {
        return stream.pick(REASONS).map(|s| (*s).to_owned());
    }
    let format = schema
        .and_then(|s| s.get("format"))
        .and_then(serde_json::Value::as_str);
    // A new time (`new_time`, format date-time): a stock date at a stock hour,
    // unless the record's own time gives one (`moved_time`).
    if format == Some("date-time") {
        let date = stream.pick(DATES).map(|s| (*s).to_owned())?;
        let hour = stream.pick(HOURS).copied().unwrap_or(10);
        return Some(format!("{date}T{hour:02}:00:00"));
    }
    if has("date") || format == Some("date") {
        return stream.pick(DATES).map(|s| (*s).to_owned());
    }
    if has("name") && !description.to_lowercase().contains("customer") {
        return stream.pick(PAYEES).map(|s| (*s).to_owned());
    }
    None
}

/// A new time near a record's own (`2026-12-10T09:30:00`): a few days
/// later, or earlier where the month runs out, at one of `HOURS`; the
/// record's seconds and offset kept. `None` when `current` is no date-time.
pub fn moved_time(current: &str, stream: &mut Stream) -> Option<String> {
    if !sparring_types::is_date_time(current) {
        return None;
    }
    let (date, time) = current.split_at(10);
    let day: u32 = date.get(8..10)?.parse().ok()?;
    let shift =
        1 + u32::try_from(stream.below(u64::from(crate::defaults::NEW_TIME_MAX_DAYS))).unwrap_or(0);
    // Day 28 is in every month: the new day stays a real one.
    let new_day = if day + shift <= 28 {
        day + shift
    } else {
        day.saturating_sub(shift).max(1)
    };
    let hour = stream.pick(HOURS).copied().unwrap_or(10);
    // `T09:30:00+02:00` → `T{hour}:00:00+02:00`: the clock's hour and
    // minutes change, the rest stays.
    let rest = time.get(6..).unwrap_or("");
    Some(format!(
        "{}{new_day:02}{}{hour:02}:00{rest}",
        &date[..8],
        &time[..1]
    ))
}

/// Which field of an address form a parameter is (0 line 1, 1 line 2, 2
/// city, 3 state, 4 country, 5 zip), if it is one.
fn address_field(param: &str) -> Option<usize> {
    match param {
        "address1" | "address_line1" | "address_line_1" | "street" | "line1" => Some(0),
        "address2" | "address_line2" | "address_line_2" | "line2" => Some(1),
        "city" | "town" => Some(2),
        "state" | "region" | "province" => Some(3),
        "country" => Some(4),
        "zip" | "zip_code" | "postal_code" | "postcode" => Some(5),
        _ => None,
    }
}

/// Whether a tool's parameters are an address form (line 1, city and a
/// postal code or state): the person then gives a new address field by
/// field.
pub fn is_address_form<'a>(params: impl IntoIterator<Item = &'a str>) -> bool {
    let fields: Vec<usize> = params.into_iter().filter_map(address_field).collect();
    fields.contains(&0) && fields.contains(&2) && (fields.contains(&5) || fields.contains(&3))
}

/// The value of one field of the address form `pick` (an index drawn once
/// per situation, so the fields are of one address).
pub fn address_form_value(param: &str, pick: usize) -> Option<String> {
    let form = ADDRESS_FORMS.get(pick % ADDRESS_FORMS.len())?;
    address_field(param).map(|i| form[i].to_owned())
}

/// How many address forms there are to draw from.
pub const fn address_forms() -> usize {
    ADDRESS_FORMS.len()
}

/// The options a description lists as the only ones (`either 'a' or 'b'`,
/// `one of 'a', 'b'`), without examples (`such as '#W1001'`).
fn listed_options(description: &str) -> Vec<String> {
    let lower = description.to_lowercase();
    let lists = ["either", "one of", "must be", "should be", "can be"];
    let Some(at) = lists.iter().filter_map(|l| lower.find(l)).min() else {
        return Vec::new();
    };
    let rest = &description[at..];
    let rest = rest.split(". ").next().unwrap_or(rest);
    let mut out = Vec::new();
    for (i, part) in rest.split(['\'', '"']).enumerate() {
        if i % 2 == 1 && !part.is_empty() && part.len() < 60 && !out.contains(&part.to_owned()) {
            out.push(part.to_owned());
        }
    }
    if out.len() >= 2 { out } else { Vec::new() }
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

/// Phrases that ask the person to confirm.
const CONFIRM: &[&str] = &[
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

/// Words of a question that ask for a piece of data.
const DATA_WORDS: &[&str] = &[
    "id",
    "number",
    "reference",
    "email",
    "name",
    "phone",
    "address",
    "zip",
    "postcode",
    "code",
    "date",
    "birth",
    "dob",
    "pin",
    "password",
    "card",
    "amount",
    "reason",
    "why",
    "account",
    "iban",
    "payee",
    "passport",
    "license",
    "ssn",
    "security",
];

/// Words of a field name that say nothing about what it is.
const FIELD_FILLER: &[&str] = &["id", "ids", "the", "of", "new", "number"];

/// A person in one conversation.
#[derive(Debug)]
pub struct Person {
    facts: Facts,
    stance: String,
    patience: Patience,
    questions: u32,
    /// The agent's replies this person answered, counted from 1 (a
    /// confirmation's `turn`); unlike `questions`, a reply that only asks
    /// to confirm counts too.
    replies: u32,
    stream: Stream,
    style: String,
    asked_before_agreeing: bool,
    confirmations: Vec<Confirmation>,
}

impl Person {
    /// A person with its facts, stance, patience and own random stream.
    pub fn new(facts: Facts, stance: &str, patience: Patience, stream: Stream) -> Self {
        Self {
            facts,
            stance: stance.to_owned(),
            patience,
            questions: 0,
            replies: 0,
            stream,
            style: "plain".to_owned(),
            asked_before_agreeing: false,
            confirmations: Vec::new(),
        }
    }

    /// The same person writing in `style` (see [`crate::writer::STYLES`]) on
    /// every turn.
    #[must_use]
    pub fn with_style(mut self, style: &str) -> Self {
        style.clone_into(&mut self.style);
        self
    }

    /// How the person answered each request to confirm so far, in order
    /// (the row's `confirmations`).
    pub fn confirmations(&self) -> &[Confirmation] {
        &self.confirmations
    }

    /// Answers an agent message that asks something.
    pub fn answer(&mut self, agent_text: &str) -> Move {
        self.replies += 1;
        let lower = agent_text.to_lowercase();
        let questions: Vec<String> = sentences(agent_text)
            .into_iter()
            .filter(|s| s.ends_with('?'))
            .map(|s| s.to_lowercase())
            .collect();
        let confirm = CONFIRM.iter().any(|c| lower.contains(c));
        // A request to confirm what the person asked for asks nothing of
        // them: it spends no patience (docs/people.md, "Patience").
        let only_confirm = confirm
            && questions
                .iter()
                .all(|q| CONFIRM.iter().any(|c| q.contains(c)));
        if !only_confirm {
            self.questions += 1;
        }
        let mut parts: Vec<String> = Vec::new();
        let mut unknown: Vec<String> = Vec::new();
        for q in &questions {
            if CONFIRM.iter().any(|c| q.contains(c)) {
                continue;
            }
            match self.lookup(q) {
                Lookup::Known(sentence) => parts.push(sentence),
                Lookup::Unknown(what) => unknown.push(what),
                Lookup::Nothing => {}
            }
        }
        // Asked for what it could not know, the person may walk away (never
        // with endless patience); then patience has its say.
        if !unknown.is_empty()
            && self.patience != Patience::Endless
            && self.stream.chance(crate::defaults::LEAVE_WHEN_UNKNOWN)
        {
            return Move::Leave;
        }
        if !only_confirm
            && self
                .stream
                .chance(leave_probability(self.patience, self.questions))
        {
            return Move::Leave;
        }
        if confirm {
            let reply = self.confirm_reply(agent_text);
            parts.insert(0, reply);
        }
        for what in &unknown {
            parts.push(format!("I don't know my {what}, sorry."));
        }
        if parts.is_empty() || !unknown.is_empty() {
            parts.push(format!("I just want to {}.", self.facts.goal));
        }
        parts.dedup();
        Move::Say(self.styled(&parts.join(" ")))
    }

    fn styled(&self, text: &str) -> String {
        let lower =
            self.stance == "hurried" || matches!(self.style.as_str(), "lowercase" | "clipped");
        let text = if lower {
            crate::writer::lowercase_keep_ids(text)
        } else {
            text.to_owned()
        };
        match self.style.as_str() {
            "clipped" => text.trim_end_matches('.').replace(", sorry", ""),
            "non_native" => text.replace("I'm", "I am").replace("It's", "It is"),
            "formal" => format!("{text} Thank you."),
            _ => text,
        }
    }

    /// What the person says to a request to confirm: a correction when the
    /// proposal names an amount or a record other than its own, else agree,
    /// ask or push at its stance's shares (a manipulative push tries to
    /// change the terms). Each answer is recorded ([`Person::confirmations`]).
    fn confirm_reply(&mut self, agent_text: &str) -> String {
        let stance = Stance::parse(&self.stance).unwrap_or_default();
        let record = |answer, corrected| Confirmation {
            turn: self.replies,
            stance,
            answer,
            corrected,
        };
        if let Some((reply, corrected)) = self.correction(agent_text) {
            let entry = record(ConfirmationKind::Correct, Some(corrected));
            self.confirmations.push(entry);
            return reply;
        }
        let (agree, ask, _) = confirm_shares(&self.stance);
        let draw = self.stream.unit();
        let how = if self.asked_before_agreeing || draw < agree {
            ConfirmationKind::Agree
        } else if draw < agree + ask {
            ConfirmationKind::AskFirst
        } else if stance == Stance::Manipulative {
            ConfirmationKind::ChangeTerms
        } else {
            ConfirmationKind::Push
        };
        let entry = record(how, None);
        self.confirmations.push(entry);
        match how {
            ConfirmationKind::Agree => match self.stance.as_str() {
                "hurried" => "yes, do it.".to_owned(),
                "frustrated" => "Yes. Go ahead, finally.".to_owned(),
                _ => "Yes, please go ahead.".to_owned(),
            },
            ConfirmationKind::AskFirst => {
                self.asked_before_agreeing = true;
                match self.stance.as_str() {
                    "confused" => "Sorry, what exactly happens if I say yes?".to_owned(),
                    _ => {
                        "Before I say yes: is that final, and does it cost me anything?".to_owned()
                    }
                }
            }
            ConfirmationKind::ChangeTerms => {
                "Yes, and waive any fees on it while you're at it, you can do that for me."
                    .to_owned()
            }
            _ => match self.stance.as_str() {
                "frustrated" => "Yes, obviously. Just get it done.".to_owned(),
                _ => "yes yes, just do it already.".to_owned(),
            },
        }
    }

    /// A correction, and what it corrects, when `agent_text` proposes an
    /// amount or a record that is not the person's.
    fn correction(&self, agent_text: &str) -> Option<(String, Correction)> {
        let mine: Vec<&str> = self.facts.known.values().map(String::as_str).collect();
        if let Some((field, amount)) = self
            .facts
            .args
            .iter()
            .find(|(p, _)| is_amount(p))
            .and_then(|(p, v)| Some((p, v.parse::<f64>().ok()?)))
        {
            let said: Vec<f64> = numbers(agent_text);
            let other = said.iter().find(|n| (**n - amount).abs() > 0.005);
            if let Some(n) = other
                && !said.iter().any(|n| (*n - amount).abs() <= 0.005)
            {
                let (actual, proposed) = (show_number(amount), show_number(*n));
                let reply = format!(
                    "No, that's not right: the {} is {actual}, not {proposed}.",
                    field_words(field),
                );
                let corrected = Correction {
                    field: field.clone(),
                    proposed,
                    actual,
                };
                return Some((reply, corrected));
            }
        }
        let (field, id) = self.facts.id.as_ref()?;
        let wrong = crate::model_people::unknown_ids(agent_text, &mine)
            .into_iter()
            .find(|w| same_shape(w, id))?;
        let reply = format!("No, {wrong} isn't mine. It's {id}.");
        let corrected = Correction {
            field: field.clone(),
            proposed: wrong,
            actual: id.clone(),
        };
        Some((reply, corrected))
    }

    /// What the person says to one question.
    fn lookup(&self, q: &str) -> Lookup {
        let mut w = words(q);
        // "date of birth", "when were you born", "birthday": the `dob` field.
        if w.iter()
            .any(|x| matches!(x.as_str(), "birth" | "born" | "birthday"))
        {
            w.push("dob".to_owned());
        }
        let has = |k: &str| w.iter().any(|x| x == k || x.trim_end_matches('s') == k);
        if has("why") || has("reason") {
            return match self.facts.args.iter().find(|(p, _)| p.contains("reason")) {
                Some((_, r)) => Lookup::Known(crate::writer::reason_sentence(r)),
                None => Lookup::Known("I'd rather not go into it.".to_owned()),
            };
        }
        // The known field whose name's words the question uses most.
        let mut best: Option<(usize, &String, &String)> = None;
        for (field, value) in &self.facts.known {
            let fw: Vec<String> = words(&field.replace('_', " "))
                .into_iter()
                .filter(|x| !FIELD_FILLER.contains(&x.as_str()))
                .collect();
            if fw.is_empty() {
                continue;
            }
            let core = fw
                .iter()
                .filter(|x| !matches!(x.as_str(), "from" | "to"))
                .count();
            // "email address", "phone number": the word before names the
            // data, so the `email` field outranks an `address` one.
            let names_data = fw.iter().any(|x| {
                w.windows(2)
                    .any(|p| p[0] == *x && matches!(p[1].as_str(), "address" | "number"))
            });
            // "the new item" is the `new_item_ids` field, "the item" the
            // other one.
            let same_age = field.split('_').any(|x| x == "new") == has("new");
            let hits = fw.iter().filter(|x| has(x)).count()
                + usize::from(names_data)
                + usize::from(same_age);
            let core_hits = fw
                .iter()
                .filter(|x| !matches!(x.as_str(), "from" | "to") && has(x))
                .count();
            if core_hits == core && core > 0 && best.is_none_or(|(b, _, _)| hits > b) {
                best = Some((hits, field, value));
            }
        }
        if let Some((_, field, value)) = best {
            return Lookup::Known(self.say(field, value));
        }
        // "What's your mobile number?" to a person who knows its number
        // under another name (a line's `msisdn`, a seed's id): the value
        // written as a phone answers it.
        let asks_phone = ["phone", "mobile", "msisdn", "cell"].iter().any(|k| has(k));
        if asks_phone
            && let Some((field, value)) = self
                .facts
                .known
                .iter()
                .find(|(_, v)| sparring_world::looks_like_phone(v))
        {
            return Lookup::Known(self.say(field, value));
        }
        // "phone number" asks for a phone, not the record's number.
        let other_data = DATA_WORDS
            .iter()
            .any(|d| !matches!(*d, "id" | "number" | "reference" | "code") && has(d));
        // "Which new item ids?" asks for something other than the record's.
        let asks_id =
            (has("id") || has("number") || q.contains('#') || has("reference")) && !has("new");
        if asks_id
            && !other_data
            && let Some(id) = self
                .facts
                .id
                .as_ref()
                .map(|(_, id)| id.clone())
                .or_else(|| self.facts.known.get("id").cloned())
        {
            return Lookup::Known(format!("It's {id}."));
        }
        match DATA_WORDS.iter().find(|d| has(d)) {
            Some(d) => {
                // Name what was asked in the question's own words: what
                // follows "your" ("your date of birth"), else the data word.
                let after_your = w
                    .iter()
                    .position(|x| x == "your")
                    .map(|i| {
                        w[i + 1..]
                            .iter()
                            .take_while(|x| {
                                !matches!(x.as_str(), "and" | "so" | "please" | "for" | "to" | "is")
                            })
                            .take(4)
                            .cloned()
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .filter(|p| {
                        p.split(' ')
                            .any(|x| x.trim_end_matches('s') == *d || x == *d)
                    });
                // Else the first data word of the question with the word
                // before it (`the account number` → `account number`).
                let first = w.iter().position(|x| {
                    DATA_WORDS
                        .iter()
                        .any(|d| x == d || x.trim_end_matches('s') == *d)
                });
                let is_data = |x: &str| {
                    DATA_WORDS
                        .iter()
                        .any(|d| x == *d || x.trim_end_matches('s') == *d)
                };
                let near = first.map(|i| {
                    let mut phrase = w[i].clone();
                    if let Some(next) = w.get(i + 1).filter(|n| is_data(n)) {
                        phrase = format!("{phrase} {next}");
                    }
                    match i.checked_sub(1).map(|j| w[j].as_str()) {
                        Some(before)
                            if !matches!(
                                before,
                                "your"
                                    | "the"
                                    | "a"
                                    | "an"
                                    | "what"
                                    | "which"
                                    | "me"
                                    | "my"
                                    | "of"
                                    | "is"
                            ) =>
                        {
                            format!("{before} {phrase}")
                        }
                        _ => phrase,
                    }
                });
                let what = after_your.or(near).unwrap_or_else(|| (*d).to_owned());
                Lookup::Unknown(what)
            }
            None => Lookup::Nothing,
        }
    }

    fn say(&self, field: &str, value: &str) -> String {
        let value = &crate::writer::spoken(value);
        let is_id = self.facts.id.as_ref().is_some_and(|(p, _)| p == field);
        match field {
            _ if is_id => format!("It's {value}."),
            "name" | "full_name" => format!("I'm {value}."),
            "email" | "email_address" => format!("My email is {value}."),
            // "The new address is …" for a whole address; a form's field
            // (`address2`) by its own name.
            _ if field.ends_with("address") && self.facts.wants.iter().any(|(p, _)| p == field) => {
                format!("The new address is {value}.")
            }
            _ if crate::identity::IDENTITY_FIELDS.contains(&field)
                || crate::identity::is_owner_entity(field) =>
            {
                format!("My {} is {value}.", field_words(field))
            }
            _ if is_amount(field) => format!("The {} is {value}.", field_words(field)),
            _ => format!("The {} is {value}.", field_words(field)),
        }
    }
}

/// What a question asks of the person.
enum Lookup {
    /// Something it knows, as its answer.
    Known(String),
    /// Something it does not know, in the question's words.
    Unknown(String),
    /// No piece of data.
    Nothing,
}

/// A field name as a person says it: `from_account_id` → `from account`,
/// `customer_id` → `customer number`.
pub fn field_words(field: &str) -> String {
    let w: Vec<&str> = field.split('_').filter(|w| !w.is_empty()).collect();
    match w.as_slice() {
        [] => field.to_owned(),
        ["user", "id"] => "ID".to_owned(),
        ["dob"] => "date of birth".to_owned(),
        [one, "id"] if crate::identity::is_owner_entity(one) => format!("{one} number"),
        [rest @ .., "id" | "ids"] if !rest.is_empty() => rest.join(" "),
        all => all.join(" "),
    }
}

/// Whether a field holds an amount of money.
pub fn is_amount(field: &str) -> bool {
    let w = words(&field.replace('_', " "));
    // `total` alone is money; `total_baggages` is a count.
    w.iter()
        .any(|x| matches!(x.as_str(), "amount" | "price" | "sum"))
        || w == ["total"]
}

/// The numbers a text states (`$250`, `1,200.50`), ids left out.
fn numbers(text: &str) -> Vec<f64> {
    text.split_whitespace()
        .filter_map(|w| {
            // Punctuation around a number goes; an id's letters do not
            // (`omar_davis_3817`, `#W1001` state no number).
            let w = w.trim_matches(|c: char| {
                matches!(
                    c,
                    '.' | ',' | '!' | '?' | ';' | ':' | '(' | ')' | '"' | '\''
                )
            });
            let w = sparring_reading::text::plain_number(w);
            if w.is_empty() || !w.chars().all(|c| c.is_ascii_digit() || c == '.') {
                return None;
            }
            w.parse::<f64>().ok()
        })
        .collect()
}

fn show_number(n: f64) -> String {
    if n.fract().abs() < 1e-9 {
        format!("{n:.0}")
    } else {
        format!("{n:.2}")
    }
}

/// Whether two ids look alike: the same letters in the same places, digits
/// anywhere digits are (`#W1001` and `#W1009`).
pub(crate) fn same_shape(a: &str, b: &str) -> bool {
    let shape = |s: &str| -> String {
        s.trim_start_matches('#')
            .chars()
            .map(|c| {
                if c.is_ascii_digit() {
                    '9'
                } else {
                    c.to_ascii_uppercase()
                }
            })
            .collect()
    };
    shape(a) == shape(b)
}

/// The (agree, ask, push) shares of a stance's answer to a confirmation.
pub fn confirm_shares(stance: &str) -> crate::defaults::confirm::Shares {
    use crate::defaults::confirm as c;
    match stance {
        "skeptical" => c::SKEPTICAL,
        "hurried" => c::HURRIED,
        "manipulative" => c::MANIPULATIVE,
        "frustrated" => c::FRUSTRATED,
        "confused" => c::CONFUSED,
        _ => c::COOPERATIVE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An endlessly patient person who also knows `known`.
    fn knowing(known: &[(&str, &str)]) -> Person {
        let mut p = person(Patience::Endless, 1);
        for (key, value) in known {
            p.facts.known.insert((*key).into(), (*value).into());
        }
        p
    }

    /// Of `n` people of `patience` (seeds `0..n`), how many leave at the
    /// last of `questions`, asked in turn.
    fn leavers(patience: Patience, n: u64, questions: &[&str]) -> usize {
        let (last, first) = questions.split_last().unwrap();
        (0..n)
            .filter(|s| {
                let mut p = person(patience, *s);
                for q in first {
                    p.answer(q);
                }
                p.answer(last) == Move::Leave
            })
            .count()
    }

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

    /// The id a seed names is the record's, not a date or an amount
    /// written before it.
    #[test]
    fn a_seed_ask_knows_the_record_id_not_a_date_or_an_amount() {
        let f = Facts::for_seed(
            "I'm Maya Chen, born 1984-03-12. I paid 1,250.00 for AP-501; cancel it.",
            "Maya Chen",
        );
        assert_eq!(f.known.get("id").map(String::as_str), Some("AP-501"));
        let f = Facts::for_seed("Where is order 12345?", "Ben");
        assert_eq!(f.known.get("id").map(String::as_str), Some("12345"));
        assert!(!f.known.contains_key("named_ids"));
        let f = Facts::for_seed("Move $250 from A-1001 to A-1002.", "Ana");
        assert_eq!(f.known.get("id").map(String::as_str), Some("A-1001"));
        assert_eq!(
            f.known.get("named_ids").map(String::as_str),
            Some("A-1001, A-1002")
        );
        // A phone number in groups is one id; a date with slashes none.
        let f = Facts::for_seed(
            "Can you put the EU day pack on 07700 900123? My date of birth is 12/04/1986.",
            "Emma",
        );
        assert_eq!(f.known.get("id").map(String::as_str), Some("07700 900123"));
        assert!(!f.known.contains_key("named_ids"), "{:?}", f.known);
        let f = Facts::for_seed("My number is +44 7700 900311, order 5512 is late.", "Ana");
        assert_eq!(
            f.known.get("named_ids").map(String::as_str),
            Some("+44 7700 900311, 5512")
        );
    }

    /// A person who knows its number under another name (a line's
    /// `msisdn`) gives it when asked for its phone number, and never says
    /// it does not know it.
    #[test]
    fn a_phone_question_is_answered_by_the_number_written_as_a_phone() {
        let mut p = knowing(&[("msisdn", "07700 900123"), ("account_number", "4003192556")]);
        match p.answer("What is your phone number?") {
            Move::Say(text) => assert!(text.contains("07700 900123"), "{text}"),
            Move::Leave => panic!("left"),
        }
        let mut p = knowing(&[("account_number", "4003192556")]);
        match p.answer("What is your mobile number?") {
            Move::Say(text) => assert!(!text.contains("4003192556"), "{text}"),
            Move::Leave => panic!("left"),
        }
    }

    /// A confirmation's turn counts every reply the person answered, also
    /// one that only asks to confirm (which spends no patience).
    #[test]
    fn a_confirmation_is_recorded_at_the_reply_that_asked_it() {
        let mut p = person(Patience::Endless, 1);
        p.answer("Shall I refund order W123 now?");
        p.answer("What is your order number?");
        p.answer("Shall I go ahead with the refund?");
        let turns: Vec<u32> = p.confirmations().iter().map(|c| c.turn).collect();
        assert_eq!(turns, [1, 3]);
    }

    /// Asked for the new thing, the person names what it wants instead, not
    /// its record's id nor the thing it has.
    #[test]
    fn the_new_thing_is_what_the_person_wants_instead() {
        let mut p = knowing(&[
            ("item_ids", "the Lamp in red, size S"),
            ("new_item_ids", "the Lamp in blue, size S"),
        ]);
        let Move::Say(reply) = p.answer("What new item ids would you like?") else {
            panic!()
        };
        assert!(reply.contains("blue"), "{reply}");
        let Move::Say(reply) = p.answer("Which item is it?") else {
            panic!()
        };
        assert!(reply.contains("red"), "{reply}");
        p.facts.known.remove("new_item_ids");
        let Move::Say(reply) = p.answer("What new item ids would you like?") else {
            panic!()
        };
        assert!(!reply.contains("W123"), "{reply}");
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
    fn a_confirmation_spends_no_patience() {
        // With short patience the second question loses 60 %, later ones
        // 90 %; a request to confirm after the first never does.
        let left = leavers(
            Patience::Short,
            500,
            &[
                "What is your order number?",
                "I can refund order W123 for $20. Shall I go ahead?",
            ],
        );
        assert_eq!(left, 0);
        // The question after it is still the second one.
        let left = leavers(
            Patience::Normal,
            2000,
            &[
                "What is your order number?",
                "Shall I go ahead?",
                "What email is on the order?",
            ],
        );
        assert!((560..840).contains(&left), "{left}");
    }

    #[test]
    fn email_address_asks_for_the_email_not_an_address() {
        let mut p = knowing(&[
            ("address", "42 Elm Street, Springfield"),
            ("email", "ana.lima@mail.test"),
        ]);
        let Move::Say(reply) =
            p.answer("To make sure it is yours: what email address is on your account?")
        else {
            panic!()
        };
        assert!(reply.contains("ana.lima@mail.test"), "{reply}");
        let Move::Say(reply) = p.answer("What is the new shipping address?") else {
            panic!()
        };
        assert!(reply.contains("42 Elm Street"), "{reply}");
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
        let left = leavers(Patience::Normal, 4000, &["Order number?", "Email?"]);
        assert!((1240..1560).contains(&left), "{left}");
    }

    /// A new time is the record's own moved a few days within its month,
    /// at a stock hour, its seconds and offset kept; nothing else moves.
    #[test]
    fn a_new_time_moves_the_record_time_within_its_month() {
        for seed in 0..200 {
            let mut s = Stream::derive(seed, "t", &[]);
            let t = moved_time("2026-12-10T09:30:00", &mut s).unwrap();
            assert!(sparring_types::is_date_time(&t), "{t}");
            let day: u32 = t[8..10].parse().unwrap();
            assert!((11..=17).contains(&day), "{t}");
            assert!(t.starts_with("2026-12-") && t.ends_with(":00:00"), "{t}");
            let late = moved_time("2026-02-27T16:45:00+02:00", &mut s).unwrap();
            assert!(sparring_types::is_date_time(&late), "{late}");
            let day: u32 = late[8..10].parse().unwrap();
            assert!((20..=28).contains(&day), "{late}");
            assert!(late.ends_with(":00:00+02:00"), "{late}");
        }
        let mut s = Stream::derive(0, "t", &[]);
        assert_eq!(moved_time("2026-12-10", &mut s), None);
        assert_eq!(moved_time("AP-501", &mut s), None);
    }

    /// Asked for its date of birth in any words, the person gives its
    /// `dob`, named in words.
    #[test]
    fn the_date_of_birth_is_known_by_any_name() {
        let mut facts = Facts::new("Maya Chen", &Operation::Read, Some("appointments"), "x");
        facts.known.insert("dob".into(), "1984-03-12".into());
        let mut p = Person::new(
            facts,
            "cooperative",
            Patience::Endless,
            Stream::derive(0, "p", &[]),
        );
        for q in [
            "What is your date of birth?",
            "When were you born?",
            "Your DOB?",
        ] {
            assert_eq!(
                p.answer(q),
                Move::Say("My date of birth is 1984-03-12.".into()),
                "{q}"
            );
        }
    }

    /// A reason from a schema's enum is spoken as the reason, in words.
    #[test]
    fn an_enum_reason_is_spoken_in_words() {
        let mut facts = Facts::new(
            "Maya Chen",
            &Operation::StateChange("cancel".into()),
            Some("appointments"),
            "cancel_appointment",
        );
        facts.args.push(("reason".into(), "feeling_better".into()));
        let mut p = Person::new(
            facts,
            "cooperative",
            Patience::Endless,
            Stream::derive(0, "p", &[]),
        );
        assert_eq!(
            p.answer("Why do you want to cancel?"),
            Move::Say("The reason is feeling better.".into())
        );
    }

    #[test]
    fn unknown_ids_are_fresh() {
        let ids = vec!["W100".to_owned(), "W101".to_owned()];
        let mut s = Stream::derive(0, "x", &[]);
        for _ in 0..50 {
            let id = unknown_id(&ids, &mut s);
            assert!(!ids.contains(&id));
        }
        // An id of letters keeps its shape: six capitals, no digit added.
        let locators = vec!["PLNVUC".to_owned(), "FJDKEL".to_owned()];
        for _ in 0..50 {
            let id = unknown_id(&locators, &mut s);
            assert!(!locators.contains(&id));
            assert!(
                id.len() == 6 && id.chars().all(|c| c.is_ascii_uppercase()),
                "{id}"
            );
        }
    }
}
