//! What the world reads out of a tool's name and parameters.
//!
//! The rules are documented in `docs/world.md` and shown by
//! `sparring world SPEC --explain`; keep the three in step.

use serde::Serialize;
use serde_json::Value;
use sparring_types::world_spec::{ROLE_PREFIXES, without_role};
use sparring_types::{ToolSpec, singular};
use std::collections::BTreeMap;

/// What a tool does to the world, read from its verb.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "verb")]
pub enum Operation {
    /// get, find, search, list, lookup, check, show, fetch, …
    Read,
    /// create, book, add, place, open, submit, register, send, …
    Create,
    /// update, modify, change, exchange, edit, set, enable, disable, …
    Update,
    /// cancel, delete, remove, refund, return, suspend, resume, …: the
    /// record moves to a new status ([`status_after`]).
    StateChange(String),
    /// No known verb: the call is acknowledged (and `calculate` computes).
    Other,
}

/// Money a tool moves: `amount` out of the `from` record's balance and
/// into the `to` record's, where those records have a balance field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Money {
    /// The money verb (`transfer`, `pay`, `withdraw`, `deposit`, `refund`,
    /// `charge`).
    pub verb: String,
    /// The parameter holding the amount.
    pub amount: String,
    /// The id parameter of the record money leaves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The id parameter of the record money reaches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

/// A tool as the world understands it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolModel {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub operation: Operation,
    /// The verb of its name (`cancel`), empty when it has none.
    pub verb: String,
    /// The entity it is about (a fixtures key such as `orders`), if any.
    pub entity: Option<String>,
    /// The parameter that carries the entity's id, if any.
    pub id_param: Option<String>,
    /// Other parameters that name a record of another entity
    /// (`customer_id` → `customers`): they must exist, and must own the
    /// target record when it says who owns it.
    pub references: Vec<(String, String)>,
    /// A status the record must have first (`pending` in
    /// `cancel_pending_order`).
    pub requires_status: Option<String>,
    /// A switch the tool turns on or off (`enable_roaming` sets
    /// `roaming_enabled` to `true`).
    pub switch: Option<(String, bool)>,
    /// Whether a read answers with a list (a search, a plural noun).
    pub list: bool,
    /// A bare `id` with no entity in the tool's name: the id is looked up
    /// among every entity's records.
    pub any_entity: bool,
    /// Money the tool moves, for a money verb with a numeric amount.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub money: Option<Money>,
    /// For a read whose noun is a field of its target (`get_balance`),
    /// the fields it answers with the record's id.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<String>,
    /// The object phrase of the name (`balance`, `data_usage`,
    /// `order_details`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    /// Which rule decided what, in words, for `--explain`.
    pub why: Vec<String>,
}

impl ToolModel {
    /// Whether a call acts on a record, so the record's state rules apply:
    /// every operation but a read, and a tool whose verb is unknown
    /// (`refill_prescription`) but that names the record it acts on.
    pub fn acts(&self) -> bool {
        match self.operation {
            Operation::Read => false,
            Operation::Other => !self.verb.is_empty() && self.id_param.is_some(),
            _ => true,
        }
    }

    /// The entity whose record a parameter names: the tool's own entity
    /// for its id parameter, another's for a reference, `None` for a
    /// parameter that names no record.
    pub fn entity_of(&self, param: &str) -> Option<&str> {
        if self.id_param.as_deref() == Some(param) {
            self.entity.as_deref()
        } else {
            self.references
                .iter()
                .find(|(p, _)| p == param)
                .map(|(_, e)| e.as_str())
        }
    }
}

const READ: &[&str] = &[
    "get", "find", "search", "list", "lookup", "check", "show", "fetch", "read", "view", "track",
    "query", "retrieve", "describe", "count", "lookup",
];
/// Verbs that read a list whatever the noun (`find_orders_by_email` is a
/// list by its plural; `find_user_id_by_email` finds one user).
const LIST_VERBS: &[&str] = &["search", "list", "query"];
const CREATE: &[&str] = &[
    "create", "book", "add", "place", "open", "submit", "register", "schedule", "new", "make",
    "send", "issue", "post", "insert", "request", "file", "lodge", "raise",
];
const UPDATE: &[&str] = &[
    "update",
    "modify",
    "change",
    "exchange",
    "edit",
    "set",
    "rename",
    "reschedule",
    "move",
    "replace",
    "upgrade",
    "downgrade",
    "assign",
    "refuel",
    "renew",
    "extend",
    "enable",
    "disable",
];
/// State-changing verbs and the status each leaves the record in.
const STATE: &[(&str, &str)] = &[
    ("cancel", "cancelled"),
    ("delete", "deleted"),
    ("remove", "removed"),
    ("refund", "refunded"),
    ("return", "returned"),
    ("close", "closed"),
    ("void", "voided"),
    ("suspend", "suspended"),
    ("block", "blocked"),
    ("freeze", "frozen"),
    ("archive", "archived"),
    ("resume", "active"),
    ("reactivate", "active"),
    ("activate", "active"),
    ("unblock", "active"),
    ("unfreeze", "active"),
    ("deactivate", "inactive"),
    ("reopen", "open"),
    ("approve", "approved"),
    ("reject", "rejected"),
    ("confirm", "confirmed"),
    ("complete", "completed"),
    ("pause", "paused"),
];
/// Words in a tool name that say nothing about the entity.
const GENERIC: &[&str] = &[
    "details",
    "detail",
    "info",
    "information",
    "status",
    "all",
    "by",
    "for",
    "of",
    "with",
    "from",
    "to",
    "the",
    "a",
    "an",
    "my",
    "id",
    "ids",
    "data",
    "record",
    "records",
];
/// Nouns too weak to name an entity alone; they join the word before
/// (`product_types`, `data_usage`, `payment_request`).
const WEAK_HEADS: &[&str] = &[
    "types", "type", "kinds", "usage", "history", "settings", "options", "request", "requests",
    "summary", "balance",
];
/// Statuses a tool name may require (`cancel_pending_order`).
const STATUS_WORDS: &[&str] = &[
    "pending",
    "active",
    "open",
    "inactive",
    "draft",
    "delivered",
    "shipped",
    "processed",
    "suspended",
    "confirmed",
    "completed",
    "paused",
    "blocked",
];
/// Parameter-name endings that mark an id.
const ID_SUFFIXES: &[&str] = &["id", "number", "code", "no", "ref"];
/// Verbs that move money when the tool takes an amount.
const MONEY_VERBS: &[&str] = &["transfer", "pay", "withdraw", "deposit", "refund", "charge"];
/// Money verbs that put the amount into the record they name.
const MONEY_IN: &[&str] = &["deposit", "refund"];

/// Splits a tool or parameter name into lowercase words (`getOrder`,
/// `get_order`, `get-order` → `get`, `order`).
pub fn name_words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c == '_' || c == '-' || c == '.' || c == ' ' {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
        } else if c.is_uppercase() && prev_lower {
            out.push(std::mem::take(&mut cur));
            cur.extend(c.to_lowercase());
            prev_lower = false;
        } else {
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            cur.extend(c.to_lowercase());
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The status a state-changing verb leaves a record in (`cancel` →
/// `cancelled`, `resume` → `active`).
pub fn status_after(verb: &str) -> String {
    if let Some((_, status)) = STATE.iter().find(|(v, _)| *v == verb) {
        return (*status).to_owned();
    }
    if verb.ends_with('e') {
        format!("{verb}d")
    } else {
        format!("{verb}ed")
    }
}

/// The plural of a noun, the way fixture keys are named.
pub fn plural(noun: &str) -> String {
    if noun.ends_with('s') || noun.ends_with("sh") || noun.ends_with("ch") || noun.ends_with('x') {
        if noun.ends_with("ss") || noun.ends_with("sh") || noun.ends_with("ch") {
            format!("{noun}es")
        } else {
            noun.to_owned()
        }
    } else if let Some(stem) = noun.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        format!("{stem}ies")
    } else if noun.ends_with("usage") || noun.ends_with("data") {
        noun.to_owned()
    } else {
        format!("{noun}s")
    }
}

fn is_plural(noun: &str) -> bool {
    singular(noun) != noun
}

fn verb_of(words: &[String], money: bool) -> Option<(usize, Operation, String)> {
    for (i, w) in words.iter().enumerate() {
        let w = w.as_str();
        if money && MONEY_VERBS.contains(&w) && w != "refund" {
            return Some((i, Operation::Update, w.to_owned()));
        }
        if READ.contains(&w) {
            return Some((i, Operation::Read, w.to_owned()));
        }
        if STATE.iter().any(|(v, _)| *v == w) {
            return Some((i, Operation::StateChange(w.to_owned()), w.to_owned()));
        }
        if UPDATE.contains(&w) {
            return Some((i, Operation::Update, w.to_owned()));
        }
        if CREATE.contains(&w) {
            return Some((i, Operation::Create, w.to_owned()));
        }
    }
    None
}

/// The first word of a name whose verb is none the world knows, when the
/// rest of the name names the record an id parameter carries
/// (`refill_prescription(prescription_id)` → `refill`): the tool acts on
/// that record, so the record's state rules apply to it.
fn unknown_verb(tool: &ToolSpec, words: &[String], keyed: &KeyFields) -> Option<String> {
    let (first, rest) = words.split_first()?;
    if rest.is_empty() || GENERIC.contains(&first.as_str()) || first.len() < 3 {
        return None;
    }
    let rest_nouns: Vec<String> = rest.iter().map(|w| singular(w)).collect();
    tool.parameter_names().into_iter().find_map(|p| {
        if let Some(entity) = keyed.get(without_role(p)) {
            return rest_nouns
                .contains(&singular(entity))
                .then(|| first.clone());
        }
        let pw = name_words(p);
        let (last, stem) = pw.split_last()?;
        (last == "id" && !stem.is_empty() && *first != stem[0])
            .then(|| without_role(&stem.join("_")).to_owned())
            .filter(|stem| rest_nouns.contains(stem))
            .map(|_| first.clone())
    })
}

/// The entity a stem names: a known entity (fixture key) whose singular is
/// the stem, else the stem's plural.
fn entity_for(stem: &str, entities: &[String]) -> String {
    entities
        .iter()
        .find(|e| singular(e) == stem || e.as_str() == stem)
        .cloned()
        .unwrap_or_else(|| plural(stem))
}

/// An id parameter: its stem (`order` for `order_id`), or `None` for a bare
/// `id`. A parameter named like the id field of an entity's fixtures
/// (`rx_number` for prescriptions keyed by it, `msisdn` for lines) names
/// that entity, whatever its words.
#[allow(clippy::option_option)] // None: not an id; Some(None): a bare `id`.
fn id_stem(
    param: &str,
    schema: Option<&Value>,
    nouns: &[String],
    keyed: &KeyFields,
) -> Option<Option<String>> {
    if let Some(entity) = keyed.get(without_role(param)).or_else(|| keyed.get(param)) {
        return Some(Some(singular(entity)));
    }
    let pw = name_words(param);
    let last = pw.last()?;
    if pw.len() == 1 {
        return (last == "id").then_some(None);
    }
    let stem = pw[..pw.len() - 1].join("_");
    let is_string_or_int = schema
        .and_then(|s| s.get("type"))
        .and_then(Value::as_str)
        .is_none_or(|t| t == "string" || t == "integer");
    if !is_string_or_int {
        return None;
    }
    // A role word names the entity of its stem: `from_account_id` is an
    // account (the one money leaves).
    let stem = without_role(&stem).to_owned();
    if last == "id" {
        return Some(Some(stem));
    }
    // `flight_number` is an id when the tool is about flights; a
    // `phone_number` in `get_customer_by_phone` is a field to search by.
    if ID_SUFFIXES.contains(&last.as_str()) && nouns.iter().any(|n| singular(n) == stem) {
        return Some(Some(stem));
    }
    None
}

/// The id fields of the fixtures' entities, each with its entity
/// (`policy_number` → `policies`, `msisdn` → `lines`): a parameter of that
/// name names a record of that entity. A bare `id` is never one.
pub type KeyFields = BTreeMap<String, String>;

/// The [`KeyFields`] of a spec: each entity's id field (`Spec::id_fields`)
/// other than a bare `id`.
pub fn key_fields(spec: &sparring_types::Spec) -> KeyFields {
    spec.id_fields()
        .into_iter()
        .filter_map(|(entity, field)| {
            let key = field.keys.first()?.clone();
            (key != "id").then_some((key, entity))
        })
        .collect()
}

/// Reads a tool's operation, entity, id parameter and more; `entities` are
/// the spec's fixture keys.
pub fn infer_tool(tool: &ToolSpec, entities: &[String]) -> ToolModel {
    infer_tool_keyed(tool, entities, &KeyFields::new())
}

/// [`infer_tool`], with the fields that key the fixtures' entities.
#[allow(clippy::too_many_lines)]
pub fn infer_tool_keyed(tool: &ToolSpec, entities: &[String], keyed: &KeyFields) -> ToolModel {
    let name_words = name_words(&tool.name);
    let mut why = Vec::new();
    let amount = amount_param(tool);
    let (verb_at, operation, verb) = match verb_of(&name_words, amount.is_some()) {
        Some(found) => found,
        None => match unknown_verb(tool, &name_words, keyed) {
            Some(v) => (0, Operation::Other, v),
            None => (usize::MAX, Operation::Other, String::new()),
        },
    };
    match &operation {
        Operation::Other if !verb.is_empty() => why.push(format!(
            "unknown verb `{verb}` on a record the call names: an action whose \
             preconditions apply; the record is answered unchanged unless its words say \
             what status it leaves"
        )),
        Operation::Other => why.push("no known verb in the name: other".to_owned()),
        Operation::StateChange(v) => {
            why.push(format!("verb `{v}`: state change to `{}`", status_after(v)));
        }
        op => why.push(format!("verb `{verb}`: {}", op_name(op))),
    }
    // The words after the verb, up to `by`/`for`/`of`: the object phrase.
    // Words after `by` name fields to search by.
    let after: Vec<&String> = if verb_at == usize::MAX {
        name_words.iter().collect()
    } else {
        name_words.iter().skip(verb_at + 1).collect()
    };
    let mut object: Vec<String> = Vec::new();
    let mut owner: Vec<String> = Vec::new();
    let mut in_owner = false;
    for w in after {
        match w.as_str() {
            "by" | "with" | "using" => break,
            "for" | "of" | "from" | "on" | "in" => in_owner = true,
            _ if in_owner => owner.push(w.clone()),
            _ => object.push(w.clone()),
        }
    }
    let requires_status = object
        .iter()
        .find(|w| STATUS_WORDS.contains(&w.as_str()))
        .cloned();
    if let Some(s) = &requires_status {
        why.push(format!("`{s}` in the name: the record must be {s} first"));
    }
    let nouns: Vec<String> = object
        .iter()
        .filter(|w| !GENERIC.contains(&w.as_str()) && !STATUS_WORDS.contains(&w.as_str()))
        .filter(|w| !matches!(w.as_str(), "direct" | "onestop" | "one" | "stop" | "new"))
        .cloned()
        .collect();
    let mut all_nouns = nouns.clone();
    all_nouns.extend(
        owner
            .iter()
            .filter(|w| !GENERIC.contains(&w.as_str()))
            .cloned(),
    );
    // The head noun of the object phrase names the entity when no id does.
    let head = nouns.last().map(|last| {
        if WEAK_HEADS.contains(&last.as_str()) && nouns.len() > 1 {
            format!("{}_{last}", nouns[nouns.len() - 2])
        } else {
            last.clone()
        }
    });

    // Id parameters and the entity each names.
    let mut ids: Vec<(String, Option<String>)> = Vec::new();
    for p in tool.parameter_names() {
        if let Some(stem) = id_stem(p, tool.parameter(p), &all_nouns, keyed) {
            ids.push((p.to_owned(), stem));
        }
    }
    // Only the object phrase names the target: in `get_bills_for_customer`
    // the customer is the owner, the bills are what is read. A stem of
    // several words is in the name when its words are
    // (`get_access_request(request_number)`, requests keyed by it).
    let joined: Vec<String> = nouns.iter().map(|n| singular(n)).collect();
    let joined = joined.join("_");
    let stem_in_name = |stem: &str| {
        nouns.iter().any(|n| singular(n) == stem || n == stem)
            || (stem.contains('_')
                && (joined == stem
                    || joined.ends_with(&format!("_{stem}"))
                    || joined.starts_with(&format!("{stem}_"))
                    || joined.contains(&format!("_{stem}_"))))
    };
    let mut id_param = None;
    let mut entity = None;
    let mut any_entity = false;
    // A bare `id` belongs to the noun of the name.
    if let Some((p, _)) = ids.iter().find(|(_, s)| s.is_none()) {
        if let Some(noun) = nouns
            .iter()
            .find(|n| entities.iter().any(|e| singular(e) == singular(n)))
            .or(head.as_ref())
        {
            let e = entity_for(&singular(noun), entities);
            why.push(format!(
                "bare `{p}` with `{noun}` in the name: entity `{e}`"
            ));
            id_param = Some(p.clone());
            entity = Some(e);
        } else {
            why.push(format!(
                "bare `{p}` and no noun in the name: looked up among every entity"
            ));
            id_param = Some(p.clone());
            any_entity = true;
        }
    }
    let stems: Vec<(String, String)> = ids
        .iter()
        .filter_map(|(p, s)| s.clone().map(|s| (p.clone(), s)))
        .collect();
    if id_param.is_none() && !any_entity && operation != Operation::Create {
        // The id whose entity the name mentions; else, for a tool that acts
        // on a record (not a read), the last id (`customer_id, line_id`
        // acts on the line). An id of the value a call sets (`new_`,
        // `old_`) is not what it acts on while another id is:
        // `change_plan(msisdn, new_plan_code)` changes the line.
        let plain: Vec<&(String, String)> = stems.iter().filter(|(p, _)| !value_role(p)).collect();
        let named_value = stems
            .iter()
            .find(|(p, s)| value_role(p) && stem_in_name(s))
            .is_some();
        let named = plain
            .iter()
            .copied()
            .find(|(_, s)| stem_in_name(s))
            .or_else(|| {
                (named_value && !plain.is_empty())
                    .then(|| plain.last().copied())
                    .flatten()
            });
        let named = named
            .or_else(|| stems.iter().find(|(_, s)| stem_in_name(s)))
            .or_else(|| {
                let head_is_entity = head
                    .as_ref()
                    .is_some_and(|h| stems.iter().any(|(_, s)| singular(h) == *s));
                if operation == Operation::Read || head_is_entity {
                    None
                } else {
                    stems.last()
                }
            });
        if let Some((p, s)) = named {
            let e = entity_for(s, entities);
            if stem_in_name(s) {
                why.push(format!(
                    "`{p}` names `{s}`, which the name mentions: entity `{e}`"
                ));
            } else {
                why.push(format!("`{p}` is the last id: the tool acts on `{e}`"));
            }
            id_param = Some(p.clone());
            entity = Some(e);
        }
    }
    if entity.is_none()
        && !any_entity
        && operation != Operation::Other
        && let Some(h) = &head
    {
        let e = entity_for(&singular(h), entities);
        why.push(format!("head noun `{h}` of the name: entity `{e}`"));
        entity = Some(e);
    }
    // Money moves between the records its ids name; its target is the
    // record money leaves (else the one it reaches).
    let money = amount
        .filter(|_| MONEY_VERBS.contains(&verb.as_str()))
        .map(|amount| money_of(&verb, amount, &stems));
    if let Some(m) = &money
        && let Some(p) = m.from.as_ref().or(m.to.as_ref())
        && let Some((_, s)) = stems.iter().find(|(q, _)| q == p)
    {
        let e = entity_for(s, entities);
        why.push(format!(
            "money verb `{verb}` with `{}`: moves the amount {}{} (balance fields)",
            m.amount,
            m.from
                .as_ref()
                .map_or(String::new(), |f| format!("out of `{f}`")),
            m.to.as_ref().map_or(String::new(), |t| format!(
                "{}into `{t}`",
                if m.from.is_some() { " and " } else { "" }
            )),
        ));
        id_param = Some(p.clone());
        entity = Some(e);
    }
    // Two ids of one entity are both checked (`from_account_id`,
    // `to_account_id`); only the target's own id is not a reference.
    let references: Vec<(String, String)> = stems
        .iter()
        .filter(|(p, _)| Some(p) != id_param.as_ref())
        .map(|(p, s)| (p.clone(), entity_for(s, entities)))
        .filter(|(p, e)| Some(e) != entity.as_ref() || role_word(p))
        .collect();
    for (p, e) in &references {
        why.push(format!("`{p}` refers to a record of `{e}`"));
    }
    let switch = match verb.as_str() {
        "enable" | "disable" => nouns.first().filter(|_| id_param.is_some()).map(|n| {
            let on = verb == "enable";
            why.push(format!(
                "`{verb}_{n}`: sets `{n}_enabled` to {on} on the record"
            ));
            (format!("{n}_enabled"), on)
        }),
        _ => None,
    };
    let list = operation == Operation::Read
        && id_param.is_none()
        && !any_entity
        && (LIST_VERBS.contains(&verb.as_str())
            || head.as_deref().is_some_and(is_plural)
            || tool.parameter_names().is_empty());
    if operation == Operation::Read && id_param.is_none() && !any_entity {
        if list {
            why.push("no id of its own: answers with a list of matching records".to_owned());
        } else {
            why.push("no id of its own: answers with the one matching record".to_owned());
        }
    }
    if tool.name == "calculate" || verb.is_empty() && name_words.iter().any(|w| w == "calculate") {
        why.push("`calculate`: evaluates the arithmetic expression".to_owned());
    }
    // The object phrase, status words aside, for reads of a field
    // (`get_data_usage` → `data_usage`).
    let phrase: Vec<&str> = object
        .iter()
        .filter(|w| !STATUS_WORDS.contains(&w.as_str()))
        .map(String::as_str)
        .collect();
    let head = (!phrase.is_empty()).then(|| phrase.join("_")).or(head);
    ToolModel {
        name: tool.name.clone(),
        operation,
        verb,
        entity,
        id_param,
        references,
        requires_status,
        switch,
        list,
        any_entity,
        money,
        fields: Vec::new(),
        head,
        why,
    }
}

/// Whether a parameter is the value a call sets or replaces rather than
/// the record it acts on (`new_plan_code`, `old_flight_number`).
fn value_role(param: &str) -> bool {
    param
        .split('_')
        .next()
        .is_some_and(|w| matches!(w, "new" | "old" | "original" | "current"))
}

/// Whether a parameter starts with a role word (`to_account_id`).
fn role_word(param: &str) -> bool {
    param
        .split('_')
        .next()
        .is_some_and(|w| ROLE_PREFIXES.contains(&w))
}

/// The parameter that holds an amount of money: `amount`, or a numeric
/// `*_amount` / `amount_*`.
fn amount_param(tool: &ToolSpec) -> Option<String> {
    tool.parameter_names()
        .into_iter()
        .find(|p| {
            let words = name_words(p);
            let numeric = tool
                .parameter(p)
                .and_then(|s| s.get("type"))
                .and_then(Value::as_str)
                .is_none_or(|t| t == "number" || t == "integer");
            numeric && words.iter().any(|w| w == "amount")
        })
        .map(str::to_owned)
}

/// Which ids money leaves and reaches: role words first (`from_`, `to_`),
/// else the verb (a deposit or refund goes into its one record, the other
/// verbs take out of the first and give to the second).
fn money_of(verb: &str, amount: String, stems: &[(String, String)]) -> Money {
    let source = stems
        .iter()
        .find(|(p, _)| crate::precondition::is_source(p))
        .map(|(p, _)| p.clone());
    let destination = stems
        .iter()
        .find(|(p, _)| crate::precondition::is_destination(p))
        .map(|(p, _)| p.clone());
    let (from, to) = if source.is_some() || destination.is_some() {
        (source, destination)
    } else {
        // Who owns what is not where money goes.
        let plain: Vec<&String> = stems
            .iter()
            .filter(|(p, _)| {
                !crate::precondition::bare_stem(p).starts_with("customer") && !p.starts_with("user")
            })
            .map(|(p, _)| p)
            .collect();
        let plain = if plain.is_empty() {
            stems.iter().map(|(p, _)| p).collect()
        } else {
            plain
        };
        if MONEY_IN.contains(&verb) {
            (None, plain.first().map(|p| (*p).clone()))
        } else {
            (
                plain.first().map(|p| (*p).clone()),
                plain.get(1).map(|p| (*p).clone()),
            )
        }
    };
    Money {
        verb: verb.to_owned(),
        amount,
        from,
        to,
    }
}

fn op_name(op: &Operation) -> &'static str {
    match op {
        Operation::Read => "read",
        Operation::Create => "create",
        Operation::Update => "update",
        Operation::StateChange(_) => "state change",
        Operation::Other => "other",
    }
}

/// Verbs of tools that change the world although the world's verb table
/// does not know them (`send_certificate`, `enable_roaming`).
const EXTRA_WRITE_VERBS: &[&str] = &[
    "send", "enable", "disable", "resume", "refuel", "issue", "apply", "charge", "pay", "suspend",
    "exchange", "return", "book", "modify",
];

/// Whether a tool, judged by its name, changes the world (cancel, refund,
/// update, book, send …) rather than reads it.
pub fn is_write_tool(name: &str) -> bool {
    let spec = sparring_types::ToolSpec {
        name: name.to_owned(),
        description: String::new(),
        parameters: serde_json::json!({"type": "object"}),
        output_schema: None,
    };
    match infer_tool(&spec, &[]).operation {
        Operation::StateChange(_) | Operation::Update | Operation::Create => true,
        Operation::Read => false,
        Operation::Other => name_words(name)
            .iter()
            .any(|w| EXTRA_WRITE_VERBS.contains(&w.as_str())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, params: &[&str]) -> ToolSpec {
        let typed: Vec<(&str, &str)> = params.iter().map(|p| (*p, "string")).collect();
        ToolSpec::with_parameters(name, &typed)
    }

    #[test]
    fn verbs_and_entities() {
        let entities = vec!["orders".to_owned(), "users".to_owned()];
        let m = infer_tool(
            &tool("cancel_pending_order", &["order_id", "reason"]),
            &entities,
        );
        assert_eq!(m.operation, Operation::StateChange("cancel".into()));
        assert_eq!(m.entity.as_deref(), Some("orders"));
        assert_eq!(m.id_param.as_deref(), Some("order_id"));
        assert_eq!(m.requires_status.as_deref(), Some("pending"));
        let m = infer_tool(&tool("getOrder", &["id"]), &entities);
        assert_eq!(m.operation, Operation::Read);
        assert_eq!(m.entity.as_deref(), Some("orders"));
        assert_eq!(m.id_param.as_deref(), Some("id"));
        let m = infer_tool(
            &tool("update_user_address", &["user_id", "address1"]),
            &entities,
        );
        assert_eq!(m.operation, Operation::Update);
        assert_eq!(m.entity.as_deref(), Some("users"));
        let m = infer_tool(&tool("calculate", &["expression"]), &entities);
        assert_eq!(m.operation, Operation::Other);
        assert_eq!(m.entity, None);
        let m = infer_tool(
            &tool("book_reservation", &["user_id", "flight_id"]),
            &entities,
        );
        assert_eq!(m.operation, Operation::Create);
        assert_eq!(m.entity.as_deref(), Some("reservations"));
        assert_eq!(m.id_param, None);
        assert_eq!(
            m.references,
            vec![
                ("flight_id".to_owned(), "flights".to_owned()),
                ("user_id".to_owned(), "users".to_owned())
            ]
        );
        // A claim is filed: a new record on the policy it names.
        let entities = vec!["claims".to_owned(), "policies".to_owned()];
        let m = infer_tool(
            &tool("file_claim", &["policy_id", "amount", "description"]),
            &entities,
        );
        assert_eq!(m.operation, Operation::Create);
        assert_eq!(m.entity.as_deref(), Some("claims"));
    }

    #[test]
    fn lookups_sub_resources_and_switches() {
        let none: Vec<String> = Vec::new();
        let m = infer_tool(&tool("find_user_id_by_email", &["email"]), &none);
        assert_eq!(m.entity.as_deref(), Some("users"));
        assert!(!m.list && m.id_param.is_none());
        let m = infer_tool(&tool("find_orders_by_email", &["email"]), &none);
        assert!(m.list);
        let m = infer_tool(&tool("get_customer_by_phone", &["phone_number"]), &none);
        assert_eq!(m.entity.as_deref(), Some("customers"));
        assert_eq!(m.id_param, None);
        let m = infer_tool(&tool("get_details_by_id", &["id"]), &none);
        assert!(m.any_entity);
        let m = infer_tool(
            &tool("get_bills_for_customer", &["customer_id", "limit"]),
            &none,
        );
        assert_eq!(m.entity.as_deref(), Some("bills"));
        assert!(m.list);
        assert_eq!(m.references[0].1, "customers");
        let m = infer_tool(&tool("enable_roaming", &["customer_id", "line_id"]), &none);
        assert_eq!(m.operation, Operation::Update);
        assert_eq!(m.entity.as_deref(), Some("lines"));
        assert_eq!(m.switch, Some(("roaming_enabled".to_owned(), true)));
        let m = infer_tool(
            &tool("get_flight_status", &["flight_number", "date"]),
            &none,
        );
        assert_eq!(m.entity.as_deref(), Some("flights"));
        assert_eq!(m.id_param.as_deref(), Some("flight_number"));
        let m = infer_tool(&tool("search_direct_flight", &["origin", "date"]), &none);
        assert_eq!(m.entity.as_deref(), Some("flights"));
        assert!(m.list);
        let m = infer_tool(&tool("list_all_product_types", &[]), &none);
        assert_eq!(m.entity.as_deref(), Some("product_types"));
        let m = infer_tool(&tool("resume_line", &["customer_id", "line_id"]), &none);
        assert_eq!(m.operation, Operation::StateChange("resume".into()));
        assert_eq!(m.entity.as_deref(), Some("lines"));
    }

    #[test]
    fn a_parameter_named_like_a_fixtures_id_field_names_its_entity() {
        let entities: Vec<String> = [
            "lines",
            "plans",
            "prescriptions",
            "access_requests",
            "bookings",
            "flights",
            "policies",
            "claims",
        ]
        .map(str::to_owned)
        .to_vec();
        let keyed: KeyFields = [
            ("rx_number", "prescriptions"),
            ("msisdn", "lines"),
            ("plan_code", "plans"),
            ("request_number", "access_requests"),
            ("record_locator", "bookings"),
            ("flight_number", "flights"),
            ("policy_number", "policies"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .into_iter()
        .collect();
        let m = infer_tool(&tool("get_prescription", &["rx_number"]), &entities);
        assert_eq!(m.id_param, None, "`rx` is no noun of the name");
        let m = infer_tool_keyed(&tool("get_prescription", &["rx_number"]), &entities, &keyed);
        assert_eq!(m.id_param.as_deref(), Some("rx_number"));
        assert_eq!(m.entity.as_deref(), Some("prescriptions"));
        let m = infer_tool_keyed(
            &tool("refill_prescription", &["rx_number"]),
            &entities,
            &keyed,
        );
        assert_eq!(m.verb, "refill");
        assert_eq!(m.entity.as_deref(), Some("prescriptions"));
        let m = infer_tool_keyed(&tool("get_line", &["msisdn"]), &entities, &keyed);
        assert_eq!(m.id_param.as_deref(), Some("msisdn"));
        let m = infer_tool_keyed(
            &tool("get_access_request", &["request_number"]),
            &entities,
            &keyed,
        );
        assert_eq!(m.entity.as_deref(), Some("access_requests"));
        assert_eq!(m.id_param.as_deref(), Some("request_number"));
        // A claim is filed on the policy its number names.
        let m = infer_tool_keyed(
            &tool("submit_claim", &["policy_number", "description"]),
            &entities,
            &keyed,
        );
        assert_eq!(m.operation, Operation::Create);
        assert_eq!(m.entity.as_deref(), Some("claims"));
        assert_eq!(
            m.references,
            [("policy_number".to_owned(), "policies".to_owned())]
        );
    }

    #[test]
    fn the_value_a_call_sets_is_not_the_record_it_acts_on() {
        let entities: Vec<String> = ["lines", "plans", "bookings", "flights"]
            .map(str::to_owned)
            .to_vec();
        let keyed: KeyFields = [
            ("msisdn", "lines"),
            ("record_locator", "bookings"),
            ("flight_number", "flights"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .into_iter()
        .collect();
        let m = infer_tool_keyed(
            &tool("change_plan", &["msisdn", "new_plan_code"]),
            &entities,
            &keyed,
        );
        assert_eq!(m.operation, Operation::Update);
        assert_eq!(m.entity.as_deref(), Some("lines"));
        assert_eq!(m.id_param.as_deref(), Some("msisdn"));
        assert_eq!(
            m.references,
            [("new_plan_code".to_owned(), "plans".to_owned())]
        );
        let m = infer_tool_keyed(
            &tool(
                "change_flight",
                &["record_locator", "old_flight_number", "new_flight_number"],
            ),
            &entities,
            &keyed,
        );
        assert_eq!(m.entity.as_deref(), Some("bookings"));
        assert_eq!(m.id_param.as_deref(), Some("record_locator"));
        // With no other id, the new one is still the record's.
        let m = infer_tool(&tool("get_plan", &["new_plan_code"]), &entities);
        assert_eq!(m.entity.as_deref(), Some("plans"));
    }

    #[test]
    fn statuses() {
        assert_eq!(status_after("cancel"), "cancelled");
        assert_eq!(status_after("refund"), "refunded");
        assert_eq!(status_after("remove"), "removed");
        assert_eq!(status_after("resume"), "active");
        assert_eq!(plural("category"), "categories");
        assert_eq!(plural("address"), "addresses");
    }
}
