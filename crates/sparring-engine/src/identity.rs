//! Who owns a record: the person of a situation.
//!
//! The person of a situation is the owner of its records, so its name,
//! email, phone and the other identity fields come from the world, not from
//! a list of stock names. Which entities are people and which fields point
//! at whose records is read once, from the spec's structure, by
//! [`sparring_reading::owners`] (the world holds it: [`World::owners`]);
//! [`owner_of`] walks it, in order:
//!
//! 1. a field of the record that points at a person's record, by id or by
//!    email, whatever the field is called (`customer_id`, `account_number`
//!    of a line whose accounts hold their holders, `contact_email`): that
//!    record is the owner;
//! 2. a person's record that lists the record's id (`payee_ids: [P-1]`) or
//!    points at it (a passenger's `record_locator`);
//! 3. a record that is itself a person (a person entity), or that carries
//!    its person's identity (an order with a name and an email): its own
//!    identity fields;
//! 4. the owner of a record it points at (a claim's policy's holder), up to
//!    three records away;
//! 5. otherwise a person the world has, chosen by the record's entity, its
//!    id and the run seed (not the situation's world seed, so the same
//!    record has the same owner in every situation of a run), or a
//!    generated person chosen the same way when the world has no one.
//!
//! Two records have the same owner exactly when their [`Owner::key`]s are
//! equal, which is what `several` (several records of one owner) and
//! `someone_else` (a record of a different owner) are drawn by.

use serde_json::Value;
use sparring_types::seed::Stream;
use sparring_types::singular;
use sparring_world::World;
use std::collections::BTreeMap;

/// Whether an entity or id field's stem is a person noun (`customer`,
/// `patient`, `profile`): the words part of the owner rule, for a word
/// with no records behind it (a tool's name, a possessive). An entity's
/// records are read by [`sparring_reading::owners::Owners::is_person`].
pub fn is_owner_stem(stem: &str) -> bool {
    sparring_reading::owners::is_person_noun(stem)
}

/// Fields of a record that say who a person is, as a person would give them.
pub const IDENTITY_FIELDS: &[&str] = &[
    "name",
    "full_name",
    "first_name",
    "last_name",
    "email",
    "email_address",
    "phone",
    "phone_number",
    "address",
    "zip",
    "zip_code",
    "postal_code",
    "dob",
    "date_of_birth",
];

/// Names of generated people (a world with no one to own its records).
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

/// The owner of a record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    /// Equal for two records exactly when they have the same owner
    /// (`customers/C-100`, `email/ana.lima@mail.test`).
    pub key: String,
    /// The owner's own record (entity, id), when the owner is one.
    pub record: Option<(String, String)>,
    /// The record that holds the owner's identity (entity, id): its own
    /// record, or a record that carries its name and email (an order with
    /// the buyer's details); what it knows of itself is read there.
    pub identity_record: Option<(String, String)>,
    /// The field that holds the owner's id and its value (`customer_id`,
    /// `C-100`), when the owner is a record.
    pub id_field: Option<(String, String)>,
    /// Identity field → value: always a `name` and an `email`, and the
    /// other identity fields the world holds.
    pub identity: BTreeMap<String, String>,
}

impl Owner {
    /// The owner's name.
    pub fn name(&self) -> &str {
        self.identity.get("name").map_or("", String::as_str)
    }
}

/// Whether an entity or field stem names an owner by its words
/// (`customers`, `user_id`): [`is_owner_stem`].
pub fn is_owner_entity(entity: &str) -> bool {
    let stem = entity.trim_end_matches("_ids").trim_end_matches("_id");
    is_owner_stem(stem)
}

/// The owner of record `id` of `entity`, when the record exists. `seed` is
/// the run seed: an owner-less record's owner is drawn from it, the entity
/// and the id, so it is the same in every situation of a run.
pub fn owner_of(world: &World, seed: u64, entity: &str, id: &str) -> Option<Owner> {
    world.record(entity, id)?;
    Some(
        real_owner(world, entity, id, OWNER_HOPS)
            .unwrap_or_else(|| drawn_owner(world, seed, entity, id)),
    )
}

/// Whether `entity`'s records are shared, nobody's: none names an owner,
/// and another entity's records point at them (a product on an order, a
/// section on an enrolment, a flight on a booking). Such a record is not
/// someone else's, nor one of several of the person's.
pub fn is_shared(world: &World, entity: &str) -> bool {
    let ids = world.ids(entity);
    if ids
        .iter()
        .any(|id| real_owner(world, entity, id, OWNER_HOPS).is_some())
    {
        return false;
    }
    let entities = world.entities();
    let owners = world.owners();
    entities
        .iter()
        .filter(|e| e.as_str() != entity)
        .any(|other| {
            world.ids(other).iter().take(SHARED_SAMPLE).any(|id| {
                world.record(other, id).is_some_and(|record| {
                    owners
                        .links_of(other, &record, &entities)
                        .iter()
                        .any(|l| l.entity == entity)
                })
            })
        })
}

/// How many records of another entity [`is_shared`] reads for a link.
const SHARED_SAMPLE: usize = 8;

/// How many records a record's owner is looked for through (a claim's
/// policy's holder is one hop): a longer chain, or a loop, ends in a drawn
/// owner.
const OWNER_HOPS: usize = 3;

/// The owner the world says a record has, if it says one.
fn real_owner(world: &World, entity: &str, id: &str, hops: usize) -> Option<Owner> {
    let record = world.record(entity, id)?;
    let owners = world.owners();
    let entities = world.entities();
    let links = owners.links_of(entity, &record, &entities);
    // 1. A field pointing at a person's record.
    for link in links
        .iter()
        .filter(|l| l.entity != entity && owners.is_person(&l.entity))
    {
        let Some(value) = record.get(&link.field).and_then(text) else {
            continue;
        };
        if let Some((oid, owner)) = linked(world, link, &value) {
            return Some(from_record(world, &link.entity, &oid, &owner));
        }
    }
    // 2. A person whose record lists this one, or points at it.
    let wanted = Value::String(id.to_owned());
    for other in entities
        .iter()
        .filter(|e| *e != entity && owners.is_person(e))
    {
        for oid in world.ids(other) {
            let Some(owner) = world.record(other, &oid) else {
                continue;
            };
            let lists = owner
                .iter()
                .any(|(_, v)| v.as_array().is_some_and(|items| items.contains(&wanted)));
            let points = || {
                owners.links_of(other, &owner, &entities).iter().any(|l| {
                    l.entity == entity && owner.get(&l.field).and_then(text).as_deref() == Some(id)
                })
            };
            if lists || points() {
                return Some(from_record(world, other, &oid, &owner));
            }
        }
    }
    // 3. The record is a person, or carries its person's identity.
    if owners.is_person(entity) {
        return Some(from_record(world, entity, id, &record));
    }
    let own = identity_of(&record);
    // A name alone is the record's own ("Desk Lamp" of a product), not
    // its person's: a person's record carries more of who they are.
    if own.contains_key("email") || (own.contains_key("name") && own.len() > 1) {
        let key = own
            .get("email")
            .map_or_else(|| format!("name/{}", own["name"]), |e| format!("email/{e}"));
        return Some(Owner {
            key,
            record: None,
            identity_record: Some((entity.to_owned(), id.to_owned())),
            id_field: None,
            identity: complete(own, id),
        });
    }
    // 4. The owner of the record it belongs to (a claim's policy's holder):
    // a field pointing at a record of another entity that has an owner of
    // its own, not a drawn one.
    if hops > 0 {
        for link in links.iter().filter(|l| l.entity != entity) {
            let Some(value) = record.get(&link.field).and_then(text) else {
                continue;
            };
            if let Some((oid, _)) = linked(world, link, &value)
                && let Some(owner) = real_owner(world, &link.entity, &oid, hops - 1)
            {
                return Some(owner);
            }
        }
    }
    None
}

/// The record a link's value points at: by its id (as people write ids),
/// or the person whose email it is.
fn linked(
    world: &World,
    link: &sparring_reading::owners::Link,
    value: &str,
) -> Option<(String, serde_json::Map<String, Value>)> {
    match link.by {
        sparring_reading::owners::LinkBy::Id => {
            let oid = world.resolve(&link.entity, value)?;
            let record = world.record(&link.entity, &oid)?;
            Some((oid, record))
        }
        sparring_reading::owners::LinkBy::Email => {
            let wanted = value.trim().to_lowercase();
            world.ids(&link.entity).into_iter().find_map(|oid| {
                let record = world.record(&link.entity, &oid)?;
                (sparring_reading::owners::email_of(&record).as_deref() == Some(wanted.as_str()))
                    .then_some((oid, record))
            })
        }
    }
}

/// Someone the world has, chosen by the record and the run seed; or a
/// generated person: the owner of a record the world gives none.
fn drawn_owner(world: &World, seed: u64, entity: &str, id: &str) -> Owner {
    let entities = world.entities();
    let mut stream = Stream::derive(seed, "identity/owner", &[fnv(entity), fnv(id)]);
    if let Some(other) = entities.iter().find(|e| world.owners().is_person(e)) {
        let ids = world.ids(other);
        if let Some(oid) = stream.pick(&ids)
            && let Some(owner) = world.record(other, oid)
        {
            return from_record(world, other, oid, &owner);
        }
    }
    let name = stream.pick(NAMES).copied().unwrap_or("Sam Doe");
    generated(name)
}

/// The owner of the first record of the world that `text` names by its id
/// (a seed ask's `A-1001`), or whose owner's email it names; `seed` is the
/// run seed ([`owner_of`]).
pub fn owner_named_in(world: &World, seed: u64, text: &str) -> Option<Owner> {
    let tokens: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '(' | ')' | '?' | '!' | ';'))
        .map(|w| w.trim_end_matches(['.', ':']))
        .filter(|w| w.chars().any(|c| c.is_ascii_digit() || c == '@'))
        .collect();
    if tokens.is_empty() {
        return None;
    }
    for entity in world.entities() {
        for id in world.ids(&entity) {
            if tokens.contains(&id.as_str())
                && let Some(owner) = owner_of(world, seed, &entity, &id)
            {
                return Some(owner);
            }
        }
    }
    for entity in world.entities() {
        for id in world.ids(&entity) {
            if let Some(owner) = owner_of(world, seed, &entity, &id)
                && owner
                    .identity
                    .get("email")
                    .is_some_and(|e| tokens.contains(&e.as_str()))
            {
                return Some(owner);
            }
        }
    }
    None
}

/// The word for the person's own record when the person is a record of
/// the world (`employee` for the owner `employees/EMP-1`): a phrase
/// about such a record is about the person (`writer::in_own_words`).
pub fn own_word(world: &World, owner_key: Option<&str>) -> Option<String> {
    let (entity, _) = owner_key?.split_once('/')?;
    world
        .entities()
        .iter()
        .any(|e| e == entity)
        .then(|| singular(entity).replace('_', " "))
}

/// What a person knows of how it is identified: for each parameter an
/// identifying tool takes (`badge_number`, `date_of_birth`, `zip_code`),
/// the value the record holding its identity has (`own`, the owner's
/// [`Owner::identity_record`]), else the value `also` has (the record of
/// the situation, when it is the person's), as anyone knows their own
/// badge or ZIP code; a list of them (`msisdns`) gives its first. Parameters
/// with no such field are left out.
pub fn credentials(
    world: &World,
    own: Option<&(String, String)>,
    also: Option<&serde_json::Map<String, Value>>,
    params: &[String],
) -> Vec<(String, String)> {
    let own = own.and_then(|(entity, id)| world.record(entity, id));
    params
        .iter()
        .filter_map(|p| {
            [own.as_ref(), also]
                .into_iter()
                .flatten()
                .find_map(|r| {
                    // The field itself, else the first of a list of them
                    // (an account's `msisdns` for `msisdn`).
                    r.get(p).and_then(text).or_else(|| {
                        r.get(&format!("{p}s"))
                            .and_then(Value::as_array)
                            .and_then(|items| items.iter().find_map(text))
                    })
                })
                .map(|v| (p.clone(), v))
        })
        .collect()
}

/// A generated person with a stock name (no record of the world owns them).
pub fn generated(name: &str) -> Owner {
    let identity = complete(BTreeMap::from([("name".to_owned(), name.to_owned())]), name);
    Owner {
        key: format!("generated/{name}"),
        record: None,
        identity_record: None,
        id_field: None,
        identity,
    }
}

/// A generated person drawn from `stream`.
pub fn draw_generated(stream: &mut Stream) -> Owner {
    generated(stream.pick(NAMES).copied().unwrap_or("Sam Doe"))
}

/// A person the world knows, drawn from `stream`, for a situation about no
/// record (a tool with no entity: `calculate`, `transfer_to_human_agents`):
/// the owner of a record of an owner-like entity (`users`), so the person
/// can be identified like any other; a generated person when the world has
/// no one.
pub fn draw_owner(world: &World, seed: u64, stream: &mut Stream) -> Owner {
    let people: Vec<(String, String)> = world
        .entities()
        .into_iter()
        .filter(|e| world.owners().is_person(e))
        .flat_map(|e| world.ids(&e).into_iter().map(move |id| (e.clone(), id)))
        .collect();
    stream
        .pick(&people)
        .and_then(|(e, id)| owner_of(world, seed, e, id))
        .unwrap_or_else(|| draw_generated(stream))
}

/// The ids of `entity` that `owner` owns, in the world's order: the ids its
/// record lists, else the records whose owner it is (`seed` is the run
/// seed, [`owner_of`]).
pub fn owned_by(world: &World, seed: u64, entity: &str, owner: &Owner) -> Vec<String> {
    let ids = world.ids(entity);
    if let Some((e, oid)) = &owner.record
        && let Some(record) = world.record(e, oid)
    {
        let listed: Vec<String> = ids
            .iter()
            .filter(|id| {
                let id = Value::String((*id).clone());
                record
                    .values()
                    .any(|v| v.as_array().is_some_and(|items| items.contains(&id)))
            })
            .cloned()
            .collect();
        if !listed.is_empty() {
            return listed;
        }
    }
    ids.into_iter()
        .filter(|id| owner_of(world, seed, entity, id).is_some_and(|o| o.key == owner.key))
        .collect()
}

/// The owner who is record `id` of `entity`: their identity, and their id
/// under the field the world keys them by (`customer_id`,
/// `account_number`).
fn from_record(
    world: &World,
    entity: &str,
    id: &str,
    record: &serde_json::Map<String, Value>,
) -> Owner {
    let field = world
        .id_field(entity)
        .map_or_else(|| format!("{}_id", singular(entity)), str::to_owned);
    let mut identity = complete(identity_of(record), id);
    identity.insert(field.clone(), id.to_owned());
    Owner {
        key: format!("{entity}/{id}"),
        record: Some((entity.to_owned(), id.to_owned())),
        identity_record: Some((entity.to_owned(), id.to_owned())),
        id_field: Some((field, id.to_owned())),
        identity,
    }
}

/// The identity fields of a record as text: a name object becomes one
/// `name` (and its parts), an address object one line.
pub fn identity_of(record: &serde_json::Map<String, Value>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for field in IDENTITY_FIELDS {
        let Some(value) = record.get(*field) else {
            continue;
        };
        match value {
            Value::Object(parts) => {
                let line: Vec<String> = parts.values().filter_map(text).collect();
                if *field == "name" {
                    for (k, v) in parts {
                        if let Some(v) = text(v) {
                            out.insert(k.clone(), v);
                        }
                    }
                }
                // An address object's postal code is the person's zip too
                // (tau2's `{"address1": …, "zip": "10108"}`).
                if *field == "address"
                    && let Some(zip) = ["zip", "zip_code", "postal_code", "postcode"]
                        .iter()
                        .find_map(|k| parts.get(*k).and_then(text))
                {
                    out.entry("zip".to_owned()).or_insert(zip);
                }
                if !line.is_empty() {
                    out.insert(
                        (*field).to_owned(),
                        line.join(if *field == "name" { " " } else { ", " }),
                    );
                }
            }
            other => {
                if let Some(v) = text(other) {
                    out.insert((*field).to_owned(), v);
                }
            }
        }
    }
    if let Some(full) = out.get("full_name").cloned() {
        out.entry("name".to_owned()).or_insert(full);
    }
    if !out.contains_key("name")
        && let (Some(f), Some(l)) = (out.get("first_name"), out.get("last_name"))
    {
        let full = format!("{f} {l}");
        out.insert("name".to_owned(), full);
    }
    if let Some(e) = out.get("email_address").cloned() {
        out.entry("email".to_owned()).or_insert(e);
    }
    if let Some(p) = out.get("phone_number").cloned() {
        out.entry("phone".to_owned()).or_insert(p);
    }
    // A person's email or phone under another word (`work_email`,
    // `contact_email`, `mobile`), when the record has no plain one.
    for (field, value) in record {
        let kind = sparring_types::words::person_field(field)
            .or_else(|| sparring_types::words::contact_field(field));
        let key = match kind {
            Some(sparring_types::words::PersonField::Email) => "email",
            Some(sparring_types::words::PersonField::Phone) => "phone",
            _ => continue,
        };
        if let Some(v) = text(value) {
            out.entry(key.to_owned()).or_insert(v);
        }
    }
    out
}

/// Fills in a name (from the email, else from `salt` when it is an id that
/// spells one, else a stock name chosen by `salt`) and an email (from the
/// name) when the world holds only one or neither.
fn complete(mut identity: BTreeMap<String, String>, salt: &str) -> BTreeMap<String, String> {
    if !identity.contains_key("name") {
        // The email's name, else the name the owner's id spells
        // (`yusuf_rossi_9620`), else a stock name.
        let from_email = identity.get("email").and_then(|e| name_from_email(e));
        let from_id = || sparring_world::name_in_id(salt).map(|(f, l)| format!("{f} {l}"));
        let name = from_email.or_else(from_id).unwrap_or_else(|| {
            let mut s = Stream::derive(0, "identity/name", &[fnv(salt)]);
            s.pick(NAMES).copied().unwrap_or("Sam Doe").to_owned()
        });
        identity.insert("name".to_owned(), name);
    }
    if !identity.contains_key("email") {
        let email = email_for(&identity["name"]);
        identity.insert("email".to_owned(), email);
    }
    identity
}

/// `ana.lima@mail.test` → `Ana Lima`.
fn name_from_email(email: &str) -> Option<String> {
    let local = email.split('@').next()?;
    let parts: Vec<String> = local
        .split(['.', '_'])
        .filter(|p| p.len() > 1 && p.chars().all(char::is_alphabetic))
        .map(|p| {
            let mut c = p.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect())
                .unwrap_or_default()
        })
        .collect();
    (parts.len() >= 2).then(|| parts.join(" "))
}

/// The email a generated person uses.
pub fn email_for(name: &str) -> String {
    let mut parts = name.split_whitespace();
    let first = parts.next().unwrap_or("customer").to_lowercase();
    let last = parts.next().unwrap_or("").to_lowercase();
    format!("{first}.{last}@mail.test")
}

fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A stable 64-bit hash of text (FNV-1a), for seeding per-record draws.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The record a tool that makes one is made from (`request_refill` from a
/// prescription, `file_claim` from a policy): the parameter naming it and
/// its entity. The situation's world state is about that record, since the
/// tool has none of its own yet. `None` for any other tool, and for a
/// reference to the person (`customer_id`), who is no record acted on.
pub fn made_from(model: &sparring_world::ToolModel) -> Option<(&str, &str)> {
    if model.operation != sparring_world::Operation::Create || model.id_param.is_some() {
        return None;
    }
    model
        .references
        .iter()
        .find(|(p, _)| !is_owner_entity(p))
        .map(|(p, e)| (p.as_str(), e.as_str()))
}

/// The entity of the records a situation about `model` is played on: the
/// one it makes its record from ([`made_from`]), else its own.
pub fn subject_entity(model: &sparring_world::ToolModel) -> Option<&str> {
    made_from(model).map(|(_, e)| e).or(model.entity.as_deref())
}

/// Why the world's rules refuse `model`'s action on record `id` of its
/// [`subject_entity`], if they do.
pub fn refusal(world: &World, model: &sparring_world::ToolModel, id: &str) -> Option<String> {
    match made_from(model) {
        Some((param, _)) => world.create_refuses(&model.name, param, id),
        None => world.state_refuses(&model.name, id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_address_objects_zip_is_the_persons_zip() {
        let record = json!({"name": {"first_name": "Noah", "last_name": "Patel"},
            "address": {"address1": "1 Main St", "city": "Columbus", "zip": "10108"}});
        let id = identity_of(record.as_object().unwrap());
        assert_eq!(id["zip"], "10108");
        assert_eq!(id["address"], "1 Main St, Columbus, 10108");
    }

    #[test]
    fn names_and_emails_complete_each_other() {
        let id = complete(
            BTreeMap::from([("email".to_owned(), "ana.lima@mail.test".to_owned())]),
            "x",
        );
        assert_eq!(id["name"], "Ana Lima");
        let id = complete(
            BTreeMap::from([("name".to_owned(), "Ben Okafor".to_owned())]),
            "x",
        );
        assert_eq!(id["email"], "ben.okafor@mail.test");
        // An owner known only by an id that spells a name is that person.
        let id = complete(BTreeMap::new(), "yusuf_rossi_9620");
        assert_eq!(id["name"], "Yusuf Rossi");
        assert_eq!(id["email"], "yusuf.rossi@mail.test");
        let record = json!({"name": {"first_name": "Yusuf", "last_name": "Rossi"},
            "address": {"address1": "1 Main St", "city": "Austin"}, "email": "y@x.test"});
        let id = identity_of(record.as_object().unwrap());
        assert_eq!(id["name"], "Yusuf Rossi");
        assert_eq!(id["first_name"], "Yusuf");
        assert_eq!(id["address"], "1 Main St, Austin");
    }
}
