//! Which field of an entity's records holds its id.
//!
//! The id field of an entity is the field the tools name for it, so a spec
//! keeps its own keys (`policy_number`, `msisdn`, `record_locator`) and
//! needs no `id:` copy of them. A field **keys** an entity when every record
//! holds it as non-empty text or a number and no two records share its value.
//! The id field is the first field that keys the entity, in this order
//! ([`IdSource`]):
//!
//! 1. a tool parameter `<stem>_id`, `_number`, `_code`, `_no` or `_ref`
//!    (a role prefix such as `new_` aside) whose stem is the entity's name
//!    or its last words (`claim_number` for `claims`, `request_number` for
//!    `access_requests`);
//! 2. a tool parameter whose name is a field of the records, whatever its
//!    name (`msisdn`, `record_locator`, `rx_number` for `prescriptions`),
//!    unless it is a person's detail (`email`, `phone`, `last_name` …, which
//!    people share), names another entity by its stem (`customer_id`), or
//!    is a reference: another entity's records are keyed by it too and hold
//!    every value this entity's do and more (a voucher's `record_locator`
//!    names its booking);
//! 3. `<singular>_id`, else `id`, record by record (the rule before tools
//!    were read);
//! 4. a field `<stem>_id`, `_number`, `_code`, `_no` or `_ref` no tool names,
//!    its stem named as in 1 (`request_id` for `transcript_requests`).
//!
//! [`id_fields`] reads every entity at once and reports every entity no
//! field keys, with the names it tried.

use crate::spec::singular;
use crate::tool::ToolSpec;
use crate::world_spec::without_role;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Parameter-name endings that mark an id (`order_id`, `claim_number`).
pub const ID_SUFFIXES: &[&str] = &["id", "number", "code", "no", "ref"];

/// Why a field is an entity's id field: the rule of [`id_fields`] that
/// chose it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum IdSource {
    /// A tool parameter named for the entity (`claim_number`).
    NamedForIt,
    /// A tool parameter whose values key the records (`msisdn`).
    NamedByTools,
    /// `<singular>_id` or `id`.
    Default,
    /// `<stem>_number` (or `_id`, `_code`, `_no`, `_ref`) of the entity's
    /// name that no tool names.
    KeyLike,
}

impl IdSource {
    /// The rule in words, for `sparring world --explain`.
    pub fn describe(self) -> &'static str {
        match self {
            Self::NamedForIt => "a tool parameter named for the entity",
            Self::NamedByTools => "a tool parameter whose values key the records",
            Self::Default => "`<singular>_id` or `id`",
            Self::KeyLike => "a key-like field no tool names",
        }
    }
}

/// The id field of one entity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdField {
    /// The field (`policy_number`); for the default rule the two a record
    /// may use, in order (`claim_id`, then `id`).
    pub keys: Vec<String>,
    /// Which rule chose it.
    pub source: IdSource,
}

impl IdField {
    /// The default id field of an entity: `<singular>_id`, else `id`.
    pub fn default_for(entity: &str) -> Self {
        Self {
            keys: crate::spec::id_keys(entity),
            source: IdSource::Default,
        }
    }

    /// A record's id, from the first of [`IdField::keys`] it holds.
    pub fn id_of(&self, record: &Map<String, Value>) -> Option<String> {
        crate::spec::record_id(record, &self.keys)
    }

    /// The field an entity's records hold their id in: the first key the
    /// first record holds, else the first key.
    pub fn field_in(&self, records: &[Value]) -> &str {
        records
            .first()
            .and_then(Value::as_object)
            .and_then(|r| self.keys.iter().find(|k| r.contains_key(*k)))
            .or(self.keys.first())
            .map_or("id", String::as_str)
    }
}

/// An entity no field keys: which names were tried and why each fails.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoIdField {
    /// The entity (`claims`).
    pub entity: String,
    /// Each name tried and why it does not key the records.
    pub tried: Vec<(String, String)>,
}

impl NoIdField {
    /// `claims` has no id field (tried `claim_number`: missing in record 2; …).
    pub fn describe(&self) -> String {
        let tried: Vec<String> = self
            .tried
            .iter()
            .map(|(name, why)| format!("`{name}`: {why}"))
            .collect();
        format!(
            "`{}` has no id field (tried {})",
            self.entity,
            tried.join("; ")
        )
    }
}

/// The id field of every entity of `fixtures`, by the rules of this module,
/// and the entities no field keys (the default rule stands in for them in
/// the map).
pub fn id_fields(
    tools: &[ToolSpec],
    fixtures: &BTreeMap<String, Vec<Value>>,
) -> (BTreeMap<String, IdField>, Vec<NoIdField>) {
    let named = tool_parameters(tools);
    let mut fields = BTreeMap::new();
    let mut missing = Vec::new();
    for (entity, records) in fixtures {
        match id_field(entity, records, &named, fixtures) {
            Ok(field) => {
                fields.insert(entity.clone(), field);
            }
            Err(tried) => {
                fields.insert(entity.clone(), IdField::default_for(entity));
                missing.push(NoIdField {
                    entity: entity.clone(),
                    tried,
                });
            }
        }
    }
    (fields, missing)
}

/// Every top-level parameter name of the tools, in the tools' order, each
/// followed by its name without a role prefix (`plan_code` after
/// `new_plan_code`), once, with its schema.
fn tool_parameters(tools: &[ToolSpec]) -> Vec<(String, Option<&Value>)> {
    let mut out: Vec<(String, Option<&Value>)> = Vec::new();
    for tool in tools {
        for p in tool.parameter_names() {
            for name in [p, without_role(p)] {
                if !out.iter().any(|(x, _)| x == name) {
                    out.push((name.to_owned(), tool.parameter(p)));
                }
            }
        }
    }
    out
}

/// Whether a parameter's schema allows an identifier: text or a whole
/// number, not an enum, a date or an email.
fn identifier_schema(schema: Option<&Value>) -> bool {
    let Some(schema) = schema else { return true };
    let kind = schema.get("type").and_then(Value::as_str);
    let format = schema.get("format").and_then(Value::as_str);
    kind.is_none_or(|t| t == "string" || t == "integer")
        && schema.get("enum").is_none()
        && !matches!(format, Some("date" | "date-time" | "email" | "time"))
}

/// Whether every value of `field` reads as an identifier ([`is_identifier`]),
/// or is a whole number in a field named like an id (`student_number`; a
/// unique `amount` keys nothing).
fn identifier_values(field: &str, records: &[Value]) -> bool {
    records
        .iter()
        .filter_map(|r| r.get(field))
        .all(|v| match v {
            Value::Number(n) => id_stem(field).is_some() && (n.is_i64() || n.is_u64()),
            Value::String(s) => is_identifier(s),
            _ => false,
        })
}

/// The longest text read as an identifier.
const MAX_IDENTIFIER_LEN: usize = 40;

/// Whether text reads as an identifier (`KDZRTA`, `RX-6120448`,
/// `07700 900123`): letters and digits with separators (`-`, `.`, `/`,
/// `_`, `+`, brackets), spaces only between digits mostly, and not a date,
/// an email or words (`123 Main St`, `hr@employer.test`, `2026-12-01`
/// key nothing).
fn is_identifier(text: &str) -> bool {
    let t = text.trim();
    if t.is_empty() || t.len() > MAX_IDENTIFIER_LEN {
        return false;
    }
    if crate::tool::is_date_time(t) || crate::tool::is_date(t) {
        return false;
    }
    let allowed = |c: char| c.is_alphanumeric() || "-./_+() ".contains(c);
    if !t.chars().all(allowed) {
        return false;
    }
    let digits = t.chars().filter(char::is_ascii_digit).count();
    let letters = t.chars().filter(|c| c.is_alphabetic()).count();
    !t.contains(' ') || digits > letters
}

/// Why a field does not key an entity's records, or `None` when it does.
fn keys(field: &str, records: &[Value]) -> Option<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut holders = 0;
    let mut first_missing = None;
    for (i, record) in records.iter().enumerate() {
        let value = record
            .as_object()
            .and_then(|r| crate::spec::record_id(r, std::slice::from_ref(&field.to_owned())));
        let Some(value) = value else {
            first_missing.get_or_insert(i);
            continue;
        };
        holders += 1;
        if let Some(first) = seen.insert(value.clone(), i) {
            return Some(format!("`{value}` in records {first} and {i}"));
        }
    }
    match first_missing {
        None => None,
        Some(_) if holders == 0 => Some("in no record".to_owned()),
        Some(i) => Some(format!("missing in record {i}")),
    }
}

/// The stem of an id-like name (`claim` for `claim_number`), if it ends
/// like an id.
fn id_stem(name: &str) -> Option<&str> {
    let (stem, last) = name.rsplit_once('_')?;
    (!stem.is_empty() && ID_SUFFIXES.contains(&last)).then_some(stem)
}

/// Whether an id stem names the entity whose singular is `one`: the same
/// words, or its last words (`request` for `access_request`).
fn stem_names(stem: &str, one: &str) -> bool {
    stem == one || one.ends_with(&format!("_{stem}"))
}

fn id_field(
    entity: &str,
    records: &[Value],
    named: &[(String, Option<&Value>)],
    fixtures: &BTreeMap<String, Vec<Value>>,
) -> Result<IdField, Vec<(String, String)>> {
    let one = singular(entity);
    let single = |f: &str, source| IdField {
        keys: vec![f.to_owned()],
        source,
    };
    let mut tried: Vec<(String, String)> = Vec::new();
    // 1. A parameter named for the entity.
    for (f, _) in named {
        if id_stem(f).is_some_and(|s| stem_names(s, &one)) {
            match keys(f, records) {
                None => return Ok(single(f, IdSource::NamedForIt)),
                Some(why) => tried.push((f.clone(), why)),
            }
        }
    }
    // 2. A parameter the records are keyed by, whatever its name.
    let held: BTreeSet<&str> = records
        .iter()
        .filter_map(Value::as_object)
        .flat_map(|r| r.keys().map(String::as_str))
        .collect();
    for (f, schema) in named {
        if f == "id"
            || !held.contains(f.as_str())
            || tried.iter().any(|(t, _)| t == f)
            || !identifier_schema(*schema)
            || !identifier_values(f, records)
        {
            continue;
        }
        if crate::words::person_field(f).is_some() || crate::words::contact_field(f).is_some() {
            continue;
        }
        // `<stem>_id` of another stem names that record (a voucher's
        // `passenger_id`), nested or not; so does any id-like name whose
        // stem is another entity (`customer_number`). A number of a stem no
        // entity has may be this one's own (`rx_number`).
        let foreign = id_stem(f).is_some_and(|s| {
            let s = without_role(s);
            (f.ends_with("_id") && !stem_names(s, &one))
                || fixtures
                    .keys()
                    .any(|e| e != entity && stem_names(s, &singular(e)))
        });
        if foreign {
            continue;
        }
        match keys(f, records) {
            None if !is_reference(f, entity, records, fixtures) => {
                return Ok(single(f, IdSource::NamedByTools));
            }
            None => tried.push((f.clone(), "names another entity's records".to_owned())),
            Some(why) => tried.push((f.clone(), why)),
        }
    }
    // 3. `<singular>_id`, else `id`, record by record.
    let default = IdField::default_for(entity);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut why_not = None;
    for (i, record) in records.iter().enumerate() {
        let id = record.as_object().and_then(|r| default.id_of(r));
        let Some(id) = id else {
            why_not = Some(if default.keys.iter().any(|k| held.contains(k.as_str())) {
                format!("missing in record {i}")
            } else {
                "in no record".to_owned()
            });
            break;
        };
        if let Some(first) = seen.insert(id.clone(), i) {
            why_not = Some(format!("`{id}` in records {first} and {i}"));
            break;
        }
    }
    match why_not {
        None => return Ok(default),
        Some(why) => tried.push((default.keys.join("`, `"), why)),
    }
    // 4. A key-like field of the entity's name that no tool names
    // (`claim_number`; `request_id` for `transcript_requests`).
    for f in &held {
        if id_stem(f).is_some_and(|s| stem_names(s, &one)) && !tried.iter().any(|(t, _)| t == f) {
            match keys(f, records) {
                None => return Ok(single(f, IdSource::KeyLike)),
                Some(why) => tried.push(((*f).to_owned(), why)),
            }
        }
    }
    Err(tried)
}

/// Whether `field` of `entity`'s records names records of another entity
/// keyed by it: that entity's records hold `field` too, each once, and
/// every value of this entity's and more.
fn is_reference(
    field: &str,
    entity: &str,
    records: &[Value],
    fixtures: &BTreeMap<String, Vec<Value>>,
) -> bool {
    let values = |rs: &[Value]| -> BTreeSet<String> {
        rs.iter()
            .filter_map(Value::as_object)
            .filter_map(|r| crate::spec::record_id(r, std::slice::from_ref(&field.to_owned())))
            .collect()
    };
    let own = values(records);
    fixtures
        .iter()
        .filter(|(e, rs)| *e != entity && keys(field, rs).is_none())
        .any(|(_, rs)| {
            let theirs = values(rs);
            theirs.len() > own.len() && own.is_subset(&theirs)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, params: &[&str]) -> ToolSpec {
        let typed: Vec<(&str, &str)> = params.iter().map(|p| (*p, "string")).collect();
        ToolSpec::with_parameters(name, &typed)
    }

    fn fixtures(v: &Value) -> BTreeMap<String, Vec<Value>> {
        serde_json::from_value(v.clone()).unwrap()
    }

    fn keys_of(tools: &[ToolSpec], v: &Value) -> BTreeMap<String, Vec<String>> {
        let (fields, missing) = id_fields(tools, &fixtures(v));
        assert!(missing.is_empty(), "{missing:?}");
        fields.into_iter().map(|(e, f)| (e, f.keys)).collect()
    }

    #[test]
    fn the_tools_name_the_id_field() {
        let tools = [
            tool("get_policy", &["policy_number"]),
            tool("get_claim", &["claim_number"]),
            tool("get_line", &["msisdn"]),
            tool("change_plan", &["msisdn", "new_plan_code"]),
            tool("get_prescription", &["rx_number"]),
            tool("get_request", &["request_number"]),
        ];
        let f = json!({
            "policies": [{"policy_number": "HO-1", "holder_id": "H1"}, {"policy_number": "HO-2", "holder_id": "H1"}],
            "claims": [{"claim_number": "C-1", "policy_number": "HO-1"}, {"claim_number": "C-2", "policy_number": "HO-2"}],
            "lines": [{"msisdn": "07700 900123", "account_number": "A1"}, {"msisdn": "07700 900456", "account_number": "A1"}],
            "plans": [{"plan_code": "SIM-5", "name": "SIM 5"}],
            "prescriptions": [{"rx_number": "RX-1", "drug": "x"}, {"rx_number": "RX-2", "drug": "x"}],
            "access_requests": [{"request_number": "R-1"}],
        });
        let k = keys_of(&tools, &f);
        assert_eq!(k["policies"], ["policy_number"]);
        // A claim holds its policy's number, which keys the claims too, but
        // the claim's own number is named for it.
        assert_eq!(k["claims"], ["claim_number"]);
        assert_eq!(k["lines"], ["msisdn"]);
        assert_eq!(k["plans"], ["plan_code"]);
        assert_eq!(k["prescriptions"], ["rx_number"]);
        assert_eq!(k["access_requests"], ["request_number"]);
    }

    #[test]
    fn a_reference_a_persons_detail_and_another_entitys_id_are_not_ids() {
        let tools = [
            tool("get_booking", &["record_locator"]),
            tool(
                "issue_voucher",
                &["record_locator", "passenger_id", "amount", "reason"],
            ),
            tool("send_copy", &["recipient", "address"]),
            tool("find_customer", &["email"]),
            tool("list_orders", &["customer_id"]),
        ];
        let f = json!({
            "bookings": [{"record_locator": "ABC"}, {"record_locator": "DEF"}, {"record_locator": "GHI"}],
            "vouchers": [{"voucher_id": "V1", "record_locator": "ABC", "passenger_id": "P-1", "amount": 50, "reason": "a delay"},
                {"voucher_id": "V2", "record_locator": "DEF", "passenger_id": "P-2", "amount": 70, "reason": "a cancellation"}],
            "copy_requests": [{"request_id": "R1", "recipient": "hr@employer.test", "address": "12 Main St"},
                {"request_id": "R2", "recipient": "admissions@uni.test", "address": "9 Elm Rd"}],
            "customers": [{"customer_id": "C1", "email": "a@x.test"}, {"customer_id": "C2", "email": "b@x.test"}],
            "orders": [{"id": "O1", "customer_id": "C1"}, {"id": "O2", "customer_id": "C2"}],
        });
        let k = keys_of(&tools, &f);
        assert_eq!(k["bookings"], ["record_locator"]);
        assert_eq!(k["vouchers"], ["voucher_id", "id"]);
        assert_eq!(k["copy_requests"], ["request_id"]);
        assert_eq!(k["customers"], ["customer_id"]);
        assert_eq!(k["orders"], ["order_id", "id"]);
    }

    #[test]
    fn every_entity_without_an_id_field_is_reported_with_the_names_tried() {
        let tools = [tool("get_claim", &["claim_number"])];
        let f = json!({
            "claims": [{"claim_number": "C-1"}, {"status": "open"}],
            "notes": [{"text": "a"}],
            "orders": [{"order_id": "O1"}, {"order_id": "O1"}],
        });
        let (_, missing) = id_fields(&tools, &fixtures(&f));
        let text: Vec<String> = missing.iter().map(NoIdField::describe).collect();
        assert_eq!(text.len(), 3, "{text:?}");
        assert!(
            text[0].contains("`claim_number`: missing in record 1"),
            "{text:?}"
        );
        assert!(
            text[0].contains("`claim_id`, `id`: in no record"),
            "{text:?}"
        );
        assert!(text[1].contains("`notes` has no id field"), "{text:?}");
        assert!(text[2].contains("`O1` in records 0 and 1"), "{text:?}");
    }

    #[test]
    fn a_key_like_field_stands_when_nothing_else_does() {
        let f = json!({"claims": [{"claim_number": "C-1"}, {"claim_number": "C-2"}]});
        let (fields, missing) = id_fields(&[], &fixtures(&f));
        assert!(missing.is_empty());
        assert_eq!(fields["claims"].keys, ["claim_number"]);
        assert_eq!(fields["claims"].source, IdSource::KeyLike);
    }
}
