//! Who owns a record: the one owner rule of sparring.
//!
//! The world refuses a call on someone else's record, gives its generated
//! people several records, and the situations' person is the owner of the
//! record asked about (`sparring_engine::identity`). All of them read who
//! owns what here ([`Owners`]), from the spec's structure rather than from
//! a list of field names:
//!
//! - An entity is **a person** (its records are people who own other
//!   records) when its name is a person noun (`customers`, `patients`,
//!   `policyholders`: [`sparring_types::words::PERSON_NOUNS`], or
//!   `profiles`), or when its fixtures show it: most records hold at least
//!   two of a person's name, email, phone and date of birth, no two share
//!   an email, another entity's records point at them, and they point at no
//!   other person (`employees` that tickets name; `accounts` that hold a
//!   holder's date of birth and email, and that lines name by
//!   `account_number`).
//! - A field of an entity's records **links** to another entity when its
//!   values are the ids of that entity's records (by the other entity's id
//!   field, whatever either field is called: `account_number`,
//!   `policy_number`, `member_id`), or a person's emails (`contact_email`);
//!   for an entity the spec gives no records of, a field named
//!   `<stem>_id` (or `_number`, `_code`, `_no`, `_ref`) links to the entity
//!   its stem names.
//! - A record's **owner** is the person one of its links names (a field
//!   named like the person's own id field first, `employee_id` before
//!   `approver_id`), else the owner of a record it links to, up to a few
//!   records away (a claim's policy's holder).

use serde_json::{Map, Value};
use sparring_types::keys::ID_SUFFIXES;
use sparring_types::words::{PersonField, contact_field, names_person, person_field};
use sparring_types::world_spec::without_role;
use sparring_types::{IdField, Spec, singular};
use std::collections::{BTreeMap, BTreeSet};

/// How a field points at another entity's record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LinkBy {
    /// By the record's id (`account_number: BW-4001`).
    Id,
    /// By the person's email (`contact_email: ana@mail.test`).
    Email,
}

/// A field of an entity's records that points at another entity's record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// The field (`account_number`).
    pub field: String,
    /// The entity it points into (`accounts`).
    pub entity: String,
    /// By id or by email.
    pub by: LinkBy,
}

/// Who owns what in a spec's world: its people and its links.
#[derive(Clone, Debug, Default)]
pub struct Owners {
    /// The id field of every fixtures entity.
    id_fields: BTreeMap<String, IdField>,
    /// Entities the fixtures show to be people (besides person nouns).
    people: BTreeSet<String>,
    /// Each fixtures entity's links, people's first.
    links: BTreeMap<String, Vec<Link>>,
}

/// Whether an entity's name, or an id field's stem, is a person noun
/// (`customers`, `patient`, `policyholder_id`, `profile`).
pub fn is_person_noun(name: &str) -> bool {
    let stem = id_stem(name).unwrap_or(name);
    let one = singular(stem);
    let last = one.rsplit('_').next().unwrap_or(&one);
    last == "profile" || names_person(last)
}

/// The stem of an id-like name (`account` for `account_number`), its role
/// prefix aside (`to_account_id` → `account`).
fn id_stem(name: &str) -> Option<&str> {
    let (stem, last) = name.rsplit_once('_')?;
    (!stem.is_empty() && (ID_SUFFIXES.contains(&last) || last == "ids")).then(|| without_role(stem))
}

impl Owners {
    /// Reads who owns what from a spec's fixtures and tools.
    pub fn read(spec: &Spec) -> Self {
        let id_fields = spec.id_fields();
        let ids: BTreeMap<&str, BTreeSet<String>> = spec
            .fixtures
            .iter()
            .map(|(e, records)| {
                let field = &id_fields[e];
                let ids = records
                    .iter()
                    .filter_map(Value::as_object)
                    .filter_map(|r| field.id_of(r))
                    .collect();
                (e.as_str(), ids)
            })
            .collect();
        // Entities whose records hold a person's details.
        let personal: BTreeSet<&str> = spec
            .fixtures
            .iter()
            .filter(|(_, records)| holds_people(records))
            .map(|(e, _)| e.as_str())
            .collect();
        let emails: BTreeMap<&str, BTreeSet<String>> = personal
            .iter()
            .map(|e| {
                let set = spec.fixtures[*e]
                    .iter()
                    .filter_map(|r| email_of(r.as_object()?))
                    .collect();
                (*e, set)
            })
            .collect();
        let mut links: BTreeMap<String, Vec<Link>> = BTreeMap::new();
        for (entity, records) in &spec.fixtures {
            let own = id_fields[entity].field_in(records).to_owned();
            let fields: BTreeSet<&str> = records
                .iter()
                .filter_map(Value::as_object)
                .flat_map(|r| r.keys().map(String::as_str))
                .filter(|f| *f != own)
                .collect();
            let mut found = Vec::new();
            for field in fields {
                let values: Vec<String> = records
                    .iter()
                    .filter_map(|r| r.get(field))
                    .filter_map(text)
                    .collect();
                if values.is_empty() {
                    continue;
                }
                let most = |set: &BTreeSet<String>| {
                    let hits = values.iter().filter(|v| set.contains(*v)).count();
                    hits > 0 && hits * 2 >= values.len()
                };
                let by_id = ids
                    .iter()
                    .filter(|(e, _)| **e != entity.as_str())
                    .find(|(_, set)| most(set))
                    .map(|(e, _)| ((*e).to_owned(), LinkBy::Id));
                let by_email = || {
                    emails
                        .iter()
                        .filter(|(e, _)| **e != entity.as_str())
                        .find(|(_, set)| {
                            let lower: BTreeSet<String> =
                                values.iter().map(|v| v.to_lowercase()).collect();
                            !set.is_disjoint(&lower)
                                && lower.iter().filter(|v| set.contains(*v)).count() * 2
                                    >= lower.len()
                        })
                        .map(|(e, _)| ((*e).to_owned(), LinkBy::Email))
                };
                if let Some((e, by)) = by_id.or_else(by_email) {
                    found.push(Link {
                        field: field.to_owned(),
                        entity: e,
                        by,
                    });
                }
            }
            links.insert(entity.clone(), found);
        }
        // People: personal records others point at, pointing at no other
        // personal entity (a dependent names its employee).
        let pointed: BTreeSet<&str> = links
            .values()
            .flatten()
            .map(|l| l.entity.as_str())
            .collect();
        let people: BTreeSet<String> = personal
            .iter()
            .filter(|e| pointed.contains(**e))
            .filter(|e| {
                links[**e]
                    .iter()
                    .all(|l| !personal.contains(l.entity.as_str()) && !is_person_noun(&l.entity))
            })
            .map(|e| (*e).to_owned())
            .collect();
        let mut owners = Self {
            id_fields,
            people,
            links,
        };
        // A person's link first, and among those the field named like the
        // person's id field (`employee_id` before `approver_id`).
        let mut links = std::mem::take(&mut owners.links);
        for list in links.values_mut() {
            list.sort_by_key(|l| (!owners.is_person(&l.entity), !owners.named_for(l)));
        }
        owners.links = links;
        owners
    }

    /// Whether `entity`'s records are people who own records: a person
    /// noun, or what its fixtures show (see the module's rule).
    pub fn is_person(&self, entity: &str) -> bool {
        self.people.contains(entity) || is_person_noun(entity)
    }

    /// The id field of a fixtures entity (`account_number`).
    pub fn id_field_name(&self, entity: &str) -> Option<&str> {
        self.id_fields
            .get(entity)
            .and_then(|f| f.keys.first())
            .map(String::as_str)
    }

    /// The links of `record` of `entity`, people's first and among them
    /// the field named like the person's id field: the fixtures' links of
    /// its entity, then each field named `<stem>_id` (or `_number` …) whose
    /// stem names one of `entities` (the world's).
    pub fn links_of(
        &self,
        entity: &str,
        record: &Map<String, Value>,
        entities: &[String],
    ) -> Vec<Link> {
        let mut out: Vec<Link> = self
            .links
            .get(entity)
            .into_iter()
            .flatten()
            .filter(|l| record.get(&l.field).and_then(text).is_some())
            .cloned()
            .collect();
        let one = singular(entity);
        for (field, value) in record {
            if text(value).is_none() || out.iter().any(|l| &l.field == field) {
                continue;
            }
            let Some(stem) = id_stem(field).map(singular) else {
                continue;
            };
            if stem == one {
                continue;
            }
            if let Some(other) = entities.iter().find(|e| singular(e) == stem) {
                out.push(Link {
                    field: field.clone(),
                    entity: other.clone(),
                    by: LinkBy::Id,
                });
            }
        }
        out.sort_by_key(|l| (!self.is_person(&l.entity), !self.named_for(l)));
        out
    }

    /// Whether a link's field is named like the id field of the entity it
    /// points into (`employee_id` → `employees`, not `approver_id`).
    fn named_for(&self, link: &Link) -> bool {
        self.id_field_name(&link.entity) == Some(link.field.as_str())
            || link.field == format!("{}_id", singular(&link.entity))
    }

    /// The fields of `record` of `entity` that name the person who owns it
    /// (its links to people).
    pub fn owner_fields(
        &self,
        entity: &str,
        record: &Map<String, Value>,
        entities: &[String],
    ) -> Vec<String> {
        self.links_of(entity, record, entities)
            .into_iter()
            .filter(|l| self.is_person(&l.entity))
            .map(|l| l.field)
            .collect()
    }
}

/// Whether most records hold at least two of a person's name, email, phone
/// and date of birth (by their plain names), and no two share an email.
fn holds_people(records: &[Value]) -> bool {
    let objects: Vec<&Map<String, Value>> = records.iter().filter_map(Value::as_object).collect();
    if objects.is_empty() {
        return false;
    }
    let personal = objects
        .iter()
        .filter(|r| {
            let kinds: BTreeSet<u8> = r
                .iter()
                .filter(|(_, v)| text(v).is_some() || v.is_object())
                .filter_map(|(k, _)| person_field(k))
                .filter_map(|f| match f {
                    f if f.is_name() => Some(0),
                    PersonField::Email => Some(1),
                    PersonField::Phone => Some(2),
                    PersonField::BirthDate => Some(3),
                    _ => None,
                })
                .collect();
            kinds.len() >= 2
        })
        .count();
    let emails: Vec<String> = objects.iter().filter_map(|r| email_of(r)).collect();
    let unique: BTreeSet<&String> = emails.iter().collect();
    personal * 2 > objects.len() && unique.len() == emails.len()
}

/// A record's email, lowercase: its `email` (or `email_address`), else a
/// role's (`contact_email`, `work_email`).
pub fn email_of(record: &Map<String, Value>) -> Option<String> {
    let plain = record
        .iter()
        .find(|(k, _)| person_field(k) == Some(PersonField::Email));
    let role = || {
        record
            .iter()
            .find(|(k, _)| contact_field(k) == Some(PersonField::Email))
    };
    plain
        .or_else(role)
        .and_then(|(_, v)| v.as_str())
        .filter(|e| e.contains('@'))
        .map(|e| e.trim().to_lowercase())
}

fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(fixtures: &Value, tools: &Value) -> Spec {
        Spec::from_value(&json!({"name": "t", "system_prompt": "Help.",
            "tools": tools, "fixtures": fixtures}))
        .unwrap()
    }

    fn tool(name: &str, param: &str) -> Value {
        json!({"name": name, "inputSchema": {"type": "object",
            "properties": {param: {"type": "string"}}}})
    }

    #[test]
    fn a_line_belongs_to_the_account_it_names_by_number() {
        let s = spec(
            &json!({
                "accounts": [
                    {"account_number": "BW-1", "holder_name": "Priya Shah", "date_of_birth": "1986-04-12", "email": "priya@mail.test"},
                    {"account_number": "BW-2", "holder_name": "Tom Reed", "date_of_birth": "1970-01-02", "email": "tom@mail.test"}],
                "lines": [
                    {"msisdn": "07700 900123", "account_number": "BW-1", "status": "active"},
                    {"msisdn": "07700 900456", "account_number": "BW-2", "status": "active"}],
            }),
            &json!([
                tool("get_account", "account_number"),
                tool("get_line", "msisdn")
            ]),
        );
        let owners = Owners::read(&s);
        assert!(owners.is_person("accounts"));
        assert!(!owners.is_person("lines"));
        let line = s.fixtures["lines"][0].as_object().unwrap();
        let entities = vec!["accounts".to_owned(), "lines".to_owned()];
        assert_eq!(
            owners.owner_fields("lines", line, &entities),
            ["account_number"]
        );
    }

    #[test]
    fn records_that_share_an_email_or_name_another_person_are_not_people() {
        let s = spec(
            &json!({
                "employees": [
                    {"employee_id": "E1", "first_name": "Maria", "last_name": "Gonzalez", "date_of_birth": "1988-07-22", "manager_id": "E2"},
                    {"employee_id": "E2", "first_name": "Sam", "last_name": "Okafor", "date_of_birth": "1975-01-02"}],
                "dependents": [
                    {"dependent_id": "D1", "employee_id": "E1", "first_name": "Luis", "last_name": "Gonzalez", "date_of_birth": "1986-02-11"}],
                "tickets": [
                    {"ticket_number": "T1", "employee_id": "E1", "approver_id": "E2"}],
                "orders": [
                    {"order_id": "O1", "name": "Ana Lima", "email": "ana@mail.test"},
                    {"order_id": "O2", "name": "Ana Lima", "email": "ana@mail.test"}],
                "returns": [{"return_id": "R1", "order_id": "O1"}],
            }),
            &json!([tool("get_ticket", "ticket_number")]),
        );
        let owners = Owners::read(&s);
        assert!(owners.is_person("employees"));
        assert!(!owners.is_person("dependents"));
        assert!(!owners.is_person("orders"));
        let entities: Vec<String> = s.fixtures.keys().cloned().collect();
        let ticket = s.fixtures["tickets"][0].as_object().unwrap();
        // The field named like the person's id field comes first.
        assert_eq!(
            owners.owner_fields("tickets", ticket, &entities),
            ["employee_id", "approver_id"]
        );
    }

    #[test]
    fn person_nouns_name_people_in_any_form() {
        for n in [
            "customers",
            "patient",
            "policyholder_id",
            "profiles",
            "to_customer_id",
        ] {
            assert!(is_person_noun(n), "{n}");
        }
        for n in ["orders", "accounts", "account_number", "lines"] {
            assert!(!is_person_noun(n), "{n}");
        }
    }
}
