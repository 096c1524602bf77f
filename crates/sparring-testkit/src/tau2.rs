//! tau2-bench's tasks as test material: their gold actions and a
//! database per task built from them (tau2 ships no database here).
//!
//! The tools, policies and tasks are read from `../shared/data/tau2` beside
//! the workspace (see its SOURCE.md); nothing of them is copied into the
//! repository. [`data_dir`] says where (`$SPARRING_TAU2_DATA` where the
//! folder is elsewhere, as from a git worktree), or `None` when the folder
//! is absent, so tests can skip with a note. [`write_spec`] writes a
//! domain's spec with every task's records as fixtures, for
//! `sparring simulate` (the `tau2_spec` example). The retail database of a task
//! ([`retail_db`]) is shaped the way tau2's records are (an order with a
//! nested `address`, `items`, `payment_history` and `user_id`; a user with
//! `orders`), with the states its gold actions need (an order that is
//! cancelled or modified is pending, one returned or exchanged delivered);
//! the airline database ([`airline_db`]) holds reservations with `flights`
//! and `passengers`, flights, payments and a user with `reservations`.
//! The world's replay (`sparring-world`'s `tau2_replay` example) and the
//! goal check's test over every retail task both build on it.

// Test material: a missing or malformed data file is a broken test setup,
// and the builders take `json!` literals by value.
#![allow(
    clippy::missing_panics_doc,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value
)]

use serde_json::{Map, Value, json};
use sparring_types::Spec;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A record's fields.
pub type Record = Map<String, Value>;
/// Entity → id → record.
pub type Db = BTreeMap<String, BTreeMap<String, Record>>;
/// A tool's name and its arguments.
pub type Call = (String, Record);

/// The environment variable naming the tau2 data folder where it is not
/// `../shared/data/tau2` beside the workspace (a git worktree's checkout).
pub const DATA_ENV: &str = "SPARRING_TAU2_DATA";

/// The tau2 data folder (`$SPARRING_TAU2_DATA`, else `../shared/data/tau2`
/// beside the workspace), or `None` with a note on stderr when it is absent.
pub fn data_dir() -> Option<PathBuf> {
    let dir = std::env::var_os(DATA_ENV).map_or_else(
        || crate::workspace().join("../shared/data/tau2"),
        PathBuf::from,
    );
    if dir.join("retail/tools.json").exists() {
        Some(dir)
    } else {
        eprintln!("skipped: tau2 data not found at {}", dir.display());
        None
    }
}

/// A domain's spec from its policy and tools, with no fixtures.
pub fn domain_spec(domain: &str) -> Option<Spec> {
    let dir = data_dir()?.join(domain);
    let policy = std::fs::read_to_string(dir.join("policy.md"))
        .expect("a tau2 domain directory holds policy.md");
    let tools: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("tools.json"))
            .expect("a tau2 domain directory holds tools.json"),
    )
    .expect("tau2's tools.json is JSON");
    Some(
        Spec::from_value(
            &json!({"name": format!("tau2-{domain}"), "system_prompt": policy, "tools": tools}),
        )
        .expect("tau2's policy and tools make a valid spec"),
    )
}

/// A domain's tasks, as tau2 wrote them.
pub fn tasks(domain: &str) -> Option<Vec<Value>> {
    let path = data_dir()?.join(domain).join("tasks.json");
    Some(
        serde_json::from_str(
            &std::fs::read_to_string(path).expect("a tau2 domain directory holds tasks.json"),
        )
        .expect("tau2's tasks.json is JSON"),
    )
}

/// `base` with the database as its fixtures.
pub fn with_fixtures(base: &Spec, db: &Db) -> Spec {
    let mut spec = base.clone();
    spec.fixtures = db
        .iter()
        .map(|(e, records)| {
            (
                e.clone(),
                records.values().cloned().map(Value::Object).collect(),
            )
        })
        .collect();
    spec
}

/// The agent's gold calls of a task, in order, for tools the spec has.
pub fn gold_calls(task: &Value, spec: &Spec) -> Vec<Call> {
    task.pointer("/evaluation_criteria/actions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|a| a.get("requestor").and_then(Value::as_str) != Some("user"))
        .filter_map(|a| {
            let name = a["name"].as_str()?.to_owned();
            spec.tool(&name)?;
            Some((
                name,
                a["arguments"].as_object().cloned().unwrap_or_default(),
            ))
        })
        .collect()
}

/// A value as text (strings without their quotes).
pub fn s(v: &Value) -> String {
    match v {
        Value::String(x) => x.clone(),
        other => other.to_string(),
    }
}

/// An object's fields.
pub fn rec(pairs: Value) -> Record {
    pairs.as_object().cloned().unwrap_or_default()
}

/// The record `entity` `id` of `db`, made with its id field when new;
/// `fields` fill what it lacks.
pub fn put<'a>(db: &'a mut Db, entity: &str, id: &str, fields: Value) -> &'a mut Record {
    let key = format!("{}_id", sparring_types::singular(entity));
    let r = db
        .entry(entity.to_owned())
        .or_default()
        .entry(id.to_owned())
        .or_insert_with(|| rec(json!({key: id})));
    for (k, v) in rec(fields) {
        r.entry(k).or_insert(v);
    }
    r
}

/// A postal address in tau2's shape.
pub fn address(zip: &str) -> Value {
    json!({"address1": "101 Cedar Lane", "address2": "Suite 4", "city": "Columbus", "country": "USA", "state": "OH", "zip": zip})
}

/// What a task's user knows, as tau2 wrote it (`known_info`), or nothing.
fn known_info(task: &Value) -> &str {
    task.pointer("/user_scenario/instructions/known_info")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The first and last name a tau2 user id spells (`mia_garcia_4516`: Mia,
/// Garcia), and its digits.
fn names_in_id(user: &str) -> (String, String, &str) {
    let mut parts = user.split('_');
    let first = capitalised(parts.next().unwrap_or("yara"));
    let last = capitalised(parts.next().unwrap_or("smith"));
    (first, last, parts.next().unwrap_or(""))
}

/// tau2's retail order ids: `#W` and seven digits.
pub fn retail_order_exists(id: &str) -> bool {
    id.len() == 9 && id.starts_with("#W") && id[2..].chars().all(|c| c.is_ascii_digit())
}

/// The retail database one task's gold calls need.
pub fn retail_db(calls: &[Call], task: &Value) -> Db {
    let mut db = Db::new();
    let known = known_info(task);
    // The task's user: named by get_user_details, else by its known info.
    let user = calls
        .iter()
        .find(|(n, _)| n == "get_user_details" || n == "modify_user_address")
        .and_then(|(_, a)| a.get("user_id").map(s))
        .or_else(|| {
            known
                .split(|c: char| c.is_whitespace() || c == ',' || c == '.')
                .find(|w| {
                    w.matches('_').count() == 2
                        && w.chars().last().is_some_and(|c| c.is_ascii_digit())
                })
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "yara_smith_1001".to_owned());
    // Details searched by: the last search is the one that finds them; the
    // name is the user id's otherwise (`mia_garcia_4516` is Mia Garcia).
    let (mut first, mut last, _) = names_in_id(&user);
    let mut zip = "43215".to_owned();
    let mut email = format!("{}@example.com", user.replace('_', "."));
    for (n, a) in calls {
        match n.as_str() {
            "find_user_id_by_name_zip" => {
                first = s(&a["first_name"]);
                last = s(&a["last_name"]);
                zip = s(&a["zip"]);
            }
            "find_user_id_by_email" => email = s(&a["email"]),
            _ => {}
        }
    }
    let mut payment = None;
    let mut orders: Vec<String> = Vec::new();
    for (n, a) in calls {
        if let Some(pm) = a.get("payment_method_id") {
            let pm = s(pm);
            payment.get_or_insert(pm.clone());
            put(
                &mut db,
                "payment_methods",
                &pm,
                json!({"user_id": user, "source": pm.split('_').next().unwrap_or("card")}),
            );
        }
        if let Some(o) = a.get("order_id").map(s)
            && retail_order_exists(&o)
        {
            let status = if n.starts_with("cancel_pending") || n.starts_with("modify_pending") {
                Some("pending")
            } else if n.contains("delivered") {
                Some("delivered")
            } else {
                None
            };
            let r = put(
                &mut db,
                "orders",
                &o,
                json!({"user_id": user, "address": address(&zip), "items": [], "payment_history": []}),
            );
            if let Some(st) = status {
                r.entry("status").or_insert(json!(st));
            }
            if !orders.contains(&o) {
                orders.push(o);
            }
        }
        if let Some(p) = a.get("product_id") {
            put(
                &mut db,
                "products",
                &s(p),
                json!({"name": "Water Bottle", "variants": {}}),
            );
        }
    }
    // A user's own card where the gold calls name none (one id per user, so
    // the merged database gives no card two owners).
    let pm = payment.clone().unwrap_or_else(|| {
        let digits: u32 = user
            .bytes()
            .fold(7, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
        format!("credit_card_{:07}", digits % 10_000_000)
    });
    put(
        &mut db,
        "payment_methods",
        &pm,
        json!({"user_id": user, "source": "credit_card"}),
    );
    // Items: what the writes name, each in its order. An exchange or a
    // change of items pairs each old item with its new one: both are
    // variants of one product (another colour), so the person can want the
    // new one and an agent can find it by the product.
    let mut sibling: BTreeMap<String, String> = BTreeMap::new();
    for (_, a) in calls {
        let (Some(old), Some(new)) = (
            a.get("item_ids").and_then(Value::as_array),
            a.get("new_item_ids").and_then(Value::as_array),
        ) else {
            continue;
        };
        for (o, n) in old.iter().zip(new) {
            sibling.entry(s(o)).or_insert_with(|| s(n));
        }
    }
    for (_, a) in calls {
        let Some(o) = a
            .get("order_id")
            .map(s)
            .filter(|o| db.get("orders").is_some_and(|x| x.contains_key(o)))
        else {
            continue;
        };
        for key in ["item_ids"] {
            for item in a.get(key).and_then(Value::as_array).into_iter().flatten() {
                let item = s(item);
                let count_needed = a[key]
                    .as_array()
                    .expect("iterated as an array above")
                    .iter()
                    .filter(|x| s(x) == item)
                    .count();
                let line = item_line(&mut db, &item, sibling.get(&item).cloned());
                let order = db
                    .get_mut("orders")
                    .and_then(|orders| orders.get_mut(&o))
                    .expect("the order was checked to exist above");
                let items = order
                    .get_mut("items")
                    .and_then(Value::as_array_mut)
                    .expect("every built order has an items list");
                let have = items
                    .iter()
                    .filter(|x| x["item_id"] == item.as_str())
                    .count();
                for _ in have..count_needed {
                    items.push(line.clone());
                }
            }
        }
    }
    let default_line = item_line(&mut db, "9000000001", None);
    for (_, order) in db.get_mut("orders").into_iter().flatten() {
        order.entry("status").or_insert(json!("processed"));
        if order["items"].as_array().is_some_and(Vec::is_empty) {
            order.insert("items".into(), json!([default_line]));
        }
        order.insert(
            "payment_history".into(),
            json!([{"transaction_type": "payment", "amount": 50.0, "payment_method_id": pm}]),
        );
    }
    let methods = payment_methods_of(&db, "payment_methods", &user);
    put(
        &mut db,
        "users",
        &user,
        json!({"name": {"first_name": first, "last_name": last}, "email": email,
               "address": address(&zip), "orders": orders, "payment_methods": methods}),
    );
    db
}

/// An order's line for `item`: a variant of a product (named, with a
/// colour and a size) whose other variant is `other` (the item an exchange
/// names as its new one), else one made up; both are put in `products`,
/// available, so an agent finds the new one by the product's details.
fn item_line(db: &mut Db, item: &str, other: Option<String>) -> Value {
    const NAMES: [&str; 5] = [
        "T-Shirt",
        "Water Bottle",
        "Desk Lamp",
        "Backpack",
        "Sneakers",
    ];
    const COLOURS: [&str; 5] = ["black", "blue", "red", "white", "green"];
    const SIZES: [&str; 4] = ["S", "M", "L", "XL"];
    let hash = item
        .bytes()
        .fold(17u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    let pick = |n: usize, salt: u64| (hash / salt) as usize % n;
    let name = NAMES[pick(NAMES.len(), 1)];
    let colour = pick(COLOURS.len(), 7);
    let size = SIZES[pick(SIZES.len(), 11)];
    let product_id = format!("{:010}", 1_000_000_000 + hash % 9_000_000_000);
    let other =
        other.unwrap_or_else(|| format!("{:010}", 1_000_000_000 + (hash / 3) % 9_000_000_000));
    let variant = |id: &str, colour: &str| {
        json!({"item_id": id, "options": {"color": colour, "size": size},
               "available": true, "price": 50.0})
    };
    let mine = variant(item, COLOURS[colour]);
    let theirs = variant(&other, COLOURS[(colour + 1) % COLOURS.len()]);
    let product = put(
        db,
        "products",
        &product_id,
        json!({"name": name, "variants": {}}),
    );
    if let Some(Value::Object(variants)) = product.get_mut("variants") {
        variants.entry(item.to_owned()).or_insert(mine.clone());
        variants.entry(other).or_insert(theirs);
    }
    json!({"item_id": item, "product_id": product_id, "name": name,
           "options": mine["options"], "price": 50.0})
}

/// The airline database one task's gold calls need: its user, the
/// reservations and flights the calls name, flights on the searched
/// routes, and the payment methods used.
pub fn airline_db(calls: &[Call], task: &Value) -> Db {
    let mut db = Db::new();
    let known = known_info(task);
    let user = calls
        .iter()
        .find_map(|(_, a)| a.get("user_id").map(s))
        .or_else(|| {
            known
                .split_whitespace()
                .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_'))
                .find(|w| w.matches('_').count() == 2)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "mia_li_3668".to_owned());
    let mut reservations: Vec<String> = Vec::new();
    let mut payments: Vec<String> = Vec::new();
    // Searches say where flights go on which day.
    let mut legs: Vec<(String, String, String)> = Vec::new();
    for (n, a) in calls {
        if n == "search_direct_flight" {
            legs.push((s(&a["origin"]), s(&a["destination"]), s(&a["date"])));
        }
    }
    let flight = |db: &mut Db, number: &str, date: &str, route: Option<(String, String)>| {
        let (o, d) = route
            .or_else(|| {
                legs.iter()
                    .find(|(_, _, day)| day == date)
                    .map(|(o, d, _)| (o.clone(), d.clone()))
            })
            .unwrap_or_else(|| ("JFK".to_owned(), "LAX".to_owned()));
        put(
            db,
            "flights",
            number,
            json!({"flight_number": number, "origin": o, "destination": d, "date": date, "status": "available"}),
        );
    };
    for (n, a) in calls {
        if let Some(p) = a.get("payment_id").map(s) {
            payments.push(p);
        }
        for pm in a
            .get("payment_methods")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            payments.push(s(&pm["payment_id"]));
        }
        for f in a
            .get("flights")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            flight(&mut db, &s(&f["flight_number"]), &s(&f["date"]), None);
        }
        if n == "get_flight_status" {
            flight(&mut db, &s(&a["flight_number"]), &s(&a["date"]), None);
        }
        if let Some(r) = a.get("reservation_id").map(s) {
            let passengers = calls
                .iter()
                .find(|(m, b)| {
                    m == "update_reservation_passengers" && b["reservation_id"] == r.as_str()
                })
                .map_or(1, |(_, b)| b["passengers"].as_array().map_or(1, Vec::len));
            let people: Vec<Value> = (0..passengers)
                .map(|i| json!({"first_name": format!("Lena{i}"), "last_name": "Moreau", "dob": "1980-01-01"}))
                .collect();
            put(
                &mut db,
                "reservations",
                &r,
                json!({"user_id": user, "origin": "JFK", "destination": "LAX", "flight_type": "one_way",
                       "cabin": "economy", "flights": [{"flight_number": "HAT001", "date": "2024-05-20", "price": 100,
                       "origin": "JFK", "destination": "LAX"}], "passengers": people,
                       "payment_history": [], "created_at": "2024-05-01T10:00:00",
                       "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"}),
            );
            if !reservations.contains(&r) {
                reservations.push(r);
            }
        }
    }
    // Flights on the searched routes, so a search finds what is booked.
    for (o, d, day) in &legs {
        let number = format!("HAT9{:02}", db.get("flights").map_or(0, BTreeMap::len));
        put(
            &mut db,
            "flights",
            &number,
            json!({"flight_number": number, "origin": o, "destination": d, "date": day, "status": "available"}),
        );
    }
    if payments.is_empty() {
        payments.push("credit_card_1000001".to_owned());
    }
    for p in &payments {
        put(
            &mut db,
            "payments",
            p,
            json!({"user_id": user, "source": p.split('_').next().unwrap_or("card")}),
        );
    }
    // The user's name and email as tau2 spells them (`mia_li_3668` is Mia
    // Li, mia.li3668@example.com).
    let (first, last, digits) = names_in_id(&user);
    let email = format!(
        "{}.{}{digits}@example.com",
        first.to_lowercase(),
        last.to_lowercase()
    );
    let methods = payment_methods_of(&db, "payments", &user);
    put(
        &mut db,
        "users",
        &user,
        json!({"name": {"first_name": first, "last_name": last}, "email": email,
               "dob": "1985-04-12", "reservations": reservations, "membership": "gold",
               "payment_methods": methods}),
    );
    db
}

/// Every task's database of a domain (`retail` or `airline`; `None` for
/// another, or without the data) in one: the
/// records of all tasks, a record two tasks share keeping the fields the
/// first gave and the union of the lists and maps both gave (a user's
/// `orders` and `payment_methods`).
pub fn domain_db(domain: &str) -> Option<Db> {
    let base = domain_spec(domain)?;
    let mut db = Db::new();
    for task in tasks(domain)? {
        let calls = gold_calls(&task, &base);
        let one = match domain {
            "retail" => retail_db(&calls, &task),
            "airline" => airline_db(&calls, &task),
            _ => return None,
        };
        for (entity, records) in one {
            let into = db.entry(entity).or_default();
            for (id, record) in records {
                let Some(have) = into.get_mut(&id) else {
                    into.insert(id, record);
                    continue;
                };
                for (field, value) in record {
                    match (have.get_mut(&field), value) {
                        (Some(Value::Array(old)), Value::Array(new)) => {
                            for v in new {
                                if !old.contains(&v) {
                                    old.push(v);
                                }
                            }
                        }
                        (Some(Value::Object(old)), Value::Object(new)) => {
                            for (k, v) in new {
                                old.entry(k).or_insert(v);
                            }
                        }
                        (Some(_), _) => {}
                        (None, value) => {
                            have.insert(field, value);
                        }
                    }
                }
            }
        }
    }
    Some(db)
}

/// A domain's spec document, without fixtures: its name, and its policy
/// and tools in the data folder `data` referenced by `{file: PATH}`, so
/// nothing of tau2's text is copied.
pub fn spec_doc(data: &Path, domain: &str) -> Value {
    let d = data
        .join(domain)
        .canonicalize()
        .expect("the tau2 data folder resolves");
    json!({
        "name": format!("tau2-{domain}"),
        "system_prompt": {"file": d.join("policy.md")},
        "tools": {"file": d.join("tools.json")},
    })
}

/// The database as a spec's `fixtures`: each entity's records in id order.
pub fn fixtures(db: Db) -> Value {
    Value::Object(
        db.into_iter()
            .map(|(e, records)| {
                (
                    e,
                    Value::Array(records.into_values().map(Value::Object).collect()),
                )
            })
            .collect(),
    )
}

/// Writes a domain's spec with every task's database as its fixtures to
/// `dir/tau2-<domain>.json` and returns its path; the policy and tools stay
/// in `../shared/data/tau2`, referenced by `{file: PATH}`, so nothing of
/// tau2's text is copied. `None` (with a note) when the data is absent.
pub fn write_spec(domain: &str, dir: &Path) -> Option<PathBuf> {
    let mut doc = spec_doc(&data_dir()?, domain);
    doc["fixtures"] = fixtures(domain_db(domain)?);
    let path = dir.join(format!("tau2-{domain}.json"));
    std::fs::create_dir_all(dir).expect("the spec's folder can be made");
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&doc).expect("a JSON value prints"),
    )
    .expect("the spec's folder is writable");
    Some(path)
}

/// `mia` → `Mia`.
fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

/// A user's payment methods as tau2's user record lists them: id →
/// `{"id", "source"}`.
fn payment_methods_of(db: &Db, entity: &str, user: &str) -> Value {
    let methods: Map<String, Value> = db
        .get(entity)
        .into_iter()
        .flatten()
        .filter(|(_, r)| r.get("user_id").and_then(Value::as_str) == Some(user))
        .map(|(id, r)| {
            (
                id.clone(),
                json!({"id": id, "source": r.get("source").cloned().unwrap_or(Value::Null)}),
            )
        })
        .collect();
    Value::Object(methods)
}
