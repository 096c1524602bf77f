//! Replays tau2-bench's gold actions against the sandbox world and counts
//! where the world answers as tau2 does.
//!
//! `cargo run --release -p sparring-world --example tau2_replay -- [--data DIR] [--declared FILE] [--verbose]`
//! (or `benches/world/run.sh`). The tools, policies and tasks are read from
//! `DIR` (default `../shared/data/tau2` beside the workspace); nothing of
//! them is copied into the repository.
//!
//! tau2 ships no database here, so each task gets fixtures built from its
//! own gold actions, shaped the way tau2's records are (an order with a
//! nested `address`, `items` and `user_id`; a user with `orders`; a
//! reservation with `flights` and `passengers`; a customer with `line_ids`
//! and `bill_ids`), with the states the gold actions need (an order that is
//! cancelled is pending, one that is returned is delivered) and the
//! telecom tasks' initialization actions applied.
//!
//! Three counts per domain, each against tau2's own semantics as its
//! `src/tau2/domains/*/tools.py` implements them:
//! - **gold calls**: each gold call, in task order, gets the answer tau2
//!   gives (success or error; a read shows the record asked for; a find
//!   answers the user; `calculate` the same number);
//! - **read after write**: after each gold call that changes tau2's
//!   database, a read of what it changed shows the change as tau2's record
//!   would (status, nested address, items, flights, passengers, baggage,
//!   roaming, refuelled data, a new booking in the user's list);
//! - **refusals**: calls tau2 refuses (a `ValueError` in its tools) that
//!   the world must refuse too.
//!
//! A false refusal is a gold call tau2 answers that the world refused.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    clippy::cast_precision_loss,
    clippy::needless_pass_by_value
)]

use serde_json::{Value, json};
use sparring_io::spec_file::load_spec;
use sparring_testkit::tau2::{
    Call, Db, Record, airline_db, gold_calls, put, rec, retail_db, s, spec_doc, with_fixtures,
};
use sparring_types::Spec;
use sparring_world::World;
use std::path::{Path, PathBuf};

/// A read that must show a write's change.
struct Check {
    tool: String,
    args: Value,
    what: String,
    test: Box<dyn Fn(&Value) -> bool>,
}

/// A call tau2 refuses, after `setup` calls.
struct Refusal {
    what: &'static str,
    setup: Vec<Call>,
    call: Call,
}

#[derive(Default)]
struct Tally {
    gold: (usize, usize),
    raw: (usize, usize),
    refusals: (usize, usize),
    false_refusals: usize,
    misses: Vec<String>,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let verbose = args.iter().any(|a| a == "--verbose");
    let data = args
        .iter()
        .position(|a| a == "--data")
        .and_then(|i| args.get(i + 1))
        .map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/tau2"),
            PathBuf::from,
        );
    if !data.join("retail/tools.json").exists() {
        eprintln!("error: no tau2 data at `{}`", data.display());
        eprintln!("hint: pass --data DIR (the folder with retail/, airline/, telecom/)");
        std::process::exit(2);
    }
    // `--declared FILE`: a JSON object, domain → `world:` section, added to
    // the domain's spec (what the words cannot say).
    let declared: Option<Value> = args
        .iter()
        .position(|a| a == "--declared")
        .and_then(|i| args.get(i + 1))
        .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap());
    let tmp = tempfile::tempdir().unwrap();
    let mut total = Tally::default();
    println!(
        "| domain | gold calls answered as tau2 | read after write as tau2 | tau2 refusals refused | false refusals |"
    );
    println!("|---|---|---|---|---|");
    for domain in ["retail", "airline", "telecom"] {
        let base = base_spec(&data, domain, tmp.path(), declared.as_ref());
        let tasks: Vec<Value> = serde_json::from_str(
            &std::fs::read_to_string(data.join(domain).join("tasks.json")).unwrap(),
        )
        .unwrap();
        let meta: Value = serde_json::from_str(
            &std::fs::read_to_string(data.join(domain).join("tools_meta.json")).unwrap(),
        )
        .unwrap();
        let mut t = Tally::default();
        for task in &tasks {
            let calls = gold_calls(task, &base);
            let db = match domain {
                "retail" => retail_db(&calls, task),
                "airline" => airline_db(&calls, task),
                _ => telecom_db(&calls, task),
            };
            let mut world = World::new(&with_fixtures(&base, &db), 0);
            let id = task["id"].as_str().unwrap_or("?");
            for (name, args) in &calls {
                let answer = world.call(name, &Value::Object(args.clone())).to_json();
                let tau2_ok = tau2_answers(domain, &db, name, args);
                t.gold.1 += 1;
                if agrees(&db, name, args, &answer, tau2_ok) {
                    t.gold.0 += 1;
                } else {
                    if tau2_ok && answer["error"]["kind"] == "refused" {
                        t.false_refusals += 1;
                    }
                    t.misses.push(format!(
                        "{domain} {id} gold {name} {} -> {answer}",
                        Value::Object(args.clone())
                    ));
                }
                if meta[name.as_str()]["mutates_state"] != true || !tau2_ok {
                    continue;
                }
                t.raw.1 += 1;
                let checks = checks(domain, &db, name, args, &answer);
                let mut ok = !checks.is_empty() && answer["ok"] == true;
                for c in &checks {
                    let read = world.call(&c.tool, &c.args).to_json();
                    if !(c.test)(&read) {
                        ok = false;
                        t.misses
                            .push(format!("{domain} {id} after {name}: {} -> {read}", c.what));
                    }
                }
                if ok {
                    t.raw.0 += 1;
                }
            }
        }
        for r in refusals(domain, &tasks, &base) {
            let mut world = World::new(&with_fixtures(&base, &r.0), 0);
            let r = r.1;
            for (name, args) in &r.setup {
                let _ = world.call(name, &Value::Object(args.clone()));
            }
            let answer = world
                .call(&r.call.0, &Value::Object(r.call.1.clone()))
                .to_json();
            t.refusals.1 += 1;
            let refused = answer["ok"] == false
                && ["refused", "not_found", "invalid_arguments"]
                    .contains(&answer["error"]["kind"].as_str().unwrap_or(""));
            if refused {
                t.refusals.0 += 1;
                if verbose {
                    println!(
                        "    refused as tau2: {}: {}",
                        r.what, answer["error"]["message"]
                    );
                }
            } else {
                t.misses
                    .push(format!("{domain} refusal not kept: {}: {answer}", r.what));
            }
        }
        println!(
            "| {domain} | {} / {} | {} / {} | {} / {} | {} |",
            t.gold.0, t.gold.1, t.raw.0, t.raw.1, t.refusals.0, t.refusals.1, t.false_refusals
        );
        total.gold.0 += t.gold.0;
        total.gold.1 += t.gold.1;
        total.raw.0 += t.raw.0;
        total.raw.1 += t.raw.1;
        total.refusals.0 += t.refusals.0;
        total.refusals.1 += t.refusals.1;
        total.false_refusals += t.false_refusals;
        total.misses.extend(t.misses);
    }
    println!(
        "| **all** | **{} / {}** | **{} / {} ({:.0} %)** | **{} / {}** | **{}** |",
        total.gold.0,
        total.gold.1,
        total.raw.0,
        total.raw.1,
        100.0 * total.raw.0 as f64 / total.raw.1.max(1) as f64,
        total.refusals.0,
        total.refusals.1,
        total.false_refusals
    );
    if verbose {
        for m in &total.misses {
            println!("  miss: {m}");
        }
    } else if !total.misses.is_empty() {
        println!(
            "({} disagreements; --verbose lists them)",
            total.misses.len()
        );
    }
}

fn base_spec(data: &Path, domain: &str, tmp: &Path, declared: Option<&Value>) -> Spec {
    let mut doc = spec_doc(data, domain);
    if let Some(world) = declared.and_then(|v| v.get(domain)) {
        doc["world"] = world.clone();
    }
    let path = tmp.join(format!("{domain}.json"));
    std::fs::write(&path, doc.to_string()).unwrap();
    load_spec(&path).unwrap()
}

// ---------------------------------------------------------------- telecom

/// The record of line `line`.
fn line_of<'a>(db: &'a mut Db, line: &str) -> &'a mut Record {
    db.get_mut("lines").unwrap().get_mut(line).unwrap()
}

/// Adds an overdue bill of `customer` owing `due`.
fn overdue_bill(db: &mut Db, customer: &str, bill: &str, due: f64) {
    put(
        db,
        "bills",
        bill,
        json!({"customer_id": customer, "status": "Overdue", "total_due": due}),
    );
}

/// Lists `bill` among the bills of `customer`.
fn list_bill(db: &mut Db, customer: &str, bill: &str) {
    db.get_mut("customers").unwrap().get_mut(customer).unwrap()["bill_ids"]
        .as_array_mut()
        .unwrap()
        .push(json!(bill));
}

fn telecom_db(calls: &[Call], task: &Value) -> Db {
    let mut db = Db::new();
    let customer = "C1001";
    let line = "L1002";
    put(
        &mut db,
        "customers",
        customer,
        json!({"full_name": "John Smith", "date_of_birth": "1985-06-15", "phone_number": "555-123-2002",
               "account_status": "Active", "line_ids": ["L1001", line], "bill_ids": ["B1001"]}),
    );
    put(
        &mut db,
        "customers",
        "C1002",
        json!({"full_name": "Jane Okafor", "line_ids": ["L2001"], "bill_ids": ["B2001"]}),
    );
    for (l, phone) in [("L1001", "555-123-2001"), (line, "555-123-2002")] {
        put(
            &mut db,
            "lines",
            l,
            json!({"phone_number": phone, "status": "Active", "plan_id": "P1001", "roaming_enabled": false,
                   "data_used_gb": 1.2, "data_refueling_gb": 0.0, "suspension_start_date": null}),
        );
    }
    put(
        &mut db,
        "lines",
        "L2001",
        json!({"phone_number": "555-222-0001", "status": "Active", "plan_id": "P1001", "roaming_enabled": false, "data_used_gb": 0.5, "data_refueling_gb": 0.0}),
    );
    put(
        &mut db,
        "bills",
        "B1001",
        json!({"customer_id": customer, "status": "Paid", "total_due": 0.0}),
    );
    overdue_bill(&mut db, "C1002", "B2001", 60.0);
    // The task's initialization, as tau2 applies it before the talk.
    for a in task
        .pointer("/initial_state/initialization_actions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|a| a["env_type"] == "assistant")
    {
        let args = &a["arguments"];
        let l = s(&args["line_id"]);
        match a["func_name"].as_str().unwrap_or("") {
            "set_data_usage" => {
                line_of(&mut db, &l).insert("data_used_gb".into(), args["data_used_gb"].clone());
            }
            "disable_roaming" => {
                line_of(&mut db, &l).insert("roaming_enabled".into(), json!(false));
            }
            "enable_roaming" => {
                line_of(&mut db, &l).insert("roaming_enabled".into(), json!(true));
            }
            "suspend_line_for_overdue_bill" => {
                let bill = s(&args["new_bill_id"]);
                overdue_bill(&mut db, customer, &bill, 65.0);
                list_bill(&mut db, customer, &bill);
                let r = line_of(&mut db, &l);
                r.insert("status".into(), json!("Suspended"));
                r.insert("suspension_start_date".into(), json!("2025-02-01"));
            }
            _ => {}
        }
    }
    for (n, a) in calls {
        // A payment request is for an overdue bill of the customer.
        if n == "send_payment_request" {
            overdue_bill(&mut db, customer, &s(&a["bill_id"]), 65.0);
        }
    }
    db
}

// ------------------------------------------------------------ tau2 answers

/// Whether tau2 answers the call without an error, on the task's records.
fn tau2_answers(domain: &str, db: &Db, name: &str, args: &Record) -> bool {
    let has = |e: &str, id: &Value| db.get(e).is_some_and(|x| x.contains_key(&s(id)));
    match (domain, name) {
        ("retail", "find_user_id_by_name_zip") => db["users"].values().any(|u| {
            u["name"]["first_name"]
                .as_str()
                .unwrap_or("")
                .eq_ignore_ascii_case(&s(&args["first_name"]))
                && u["name"]["last_name"]
                    .as_str()
                    .unwrap_or("")
                    .eq_ignore_ascii_case(&s(&args["last_name"]))
                && u["address"]["zip"] == args["zip"]
        }),
        ("retail", "find_user_id_by_email") => db["users"].values().any(|u| {
            u["email"]
                .as_str()
                .unwrap_or("")
                .eq_ignore_ascii_case(&s(&args["email"]))
        }),
        ("retail", _) if args.contains_key("order_id") => has("orders", &args["order_id"]),
        _ => true,
    }
}

/// Whether the world's answer is tau2's: the same success or failure, and
/// for a success the record or value tau2 returns.
fn agrees(db: &Db, name: &str, args: &Record, answer: &Value, tau2_ok: bool) -> bool {
    let ok = answer["ok"] == true;
    if ok != tau2_ok {
        return false;
    }
    if !ok {
        return answer["error"]["kind"] == "not_found";
    }
    let text = answer["result"].to_string();
    match name {
        "find_user_id_by_name_zip" | "find_user_id_by_email" => {
            let user = db["users"].keys().next().cloned().unwrap_or_default();
            text.contains(&user)
        }
        "calculate" => {
            let expr = s(&args["expression"]);
            let want = eval(&expr);
            answer["result"]
                .as_f64()
                .is_some_and(|x| (x - want).abs() < 0.006)
        }
        "search_direct_flight" => {
            // tau2 lists the flights of that route and day; the task's own
            // legs are among them.
            let legs: Vec<&String> = db["flights"]
                .iter()
                .filter(|(_, f)| {
                    f["origin"] == args["origin"]
                        && f["destination"] == args["destination"]
                        && f["date"] == args["date"]
                })
                .map(|(k, _)| k)
                .collect();
            answer["result"].as_array().is_some_and(|r| !r.is_empty())
                && legs.iter().all(|l| text.contains(l.as_str()))
        }
        _ => {
            let id = args
                .iter()
                .find(|(k, _)| {
                    k.ends_with("_id")
                        && k.as_str() != "payment_method_id"
                        && k.as_str() != "payment_id"
                })
                .map(|(_, v)| s(v));
            !name.starts_with("get_") || id.is_none_or(|id| text.contains(&id))
        }
    }
}

/// A tiny evaluator for the gold `calculate` expressions (+ - * / and
/// parentheses), to know tau2's number.
fn eval(expr: &str) -> f64 {
    fn parse(t: &[char], i: &mut usize) -> f64 {
        let mut v = term(t, i);
        while *i < t.len() && (t[*i] == '+' || t[*i] == '-') {
            let op = t[*i];
            *i += 1;
            let r = term(t, i);
            v = if op == '+' { v + r } else { v - r };
        }
        v
    }
    fn term(t: &[char], i: &mut usize) -> f64 {
        let mut v = atom(t, i);
        while *i < t.len() && (t[*i] == '*' || t[*i] == '/') {
            let op = t[*i];
            *i += 1;
            let r = atom(t, i);
            v = if op == '*' { v * r } else { v / r };
        }
        v
    }
    fn atom(t: &[char], i: &mut usize) -> f64 {
        if t.get(*i) == Some(&'(') {
            *i += 1;
            let v = parse(t, i);
            *i += 1;
            return v;
        }
        if t.get(*i) == Some(&'-') {
            *i += 1;
            return -atom(t, i);
        }
        let start = *i;
        while *i < t.len() && (t[*i].is_ascii_digit() || t[*i] == '.') {
            *i += 1;
        }
        t[start..*i]
            .iter()
            .collect::<String>()
            .parse()
            .unwrap_or(f64::NAN)
    }
    let t: Vec<char> = expr.chars().filter(|c| !c.is_whitespace()).collect();
    let v = parse(&t, &mut 0);
    (v * 100.0).round() / 100.0
}

fn norm(v: &Value) -> String {
    s(v).to_lowercase().replace(['_', '-'], " ")
}

fn check(tool: &str, args: Value, what: String, test: impl Fn(&Value) -> bool + 'static) -> Check {
    Check {
        tool: tool.to_owned(),
        args,
        what,
        test: Box::new(test),
    }
}

fn legs_of(flights: &Value) -> Vec<(String, String)> {
    flights
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| (s(&f["flight_number"]), s(&f["date"])))
        .collect()
}

fn people(passengers: &Value) -> Vec<(String, String, String)> {
    passengers
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| (s(&p["first_name"]), s(&p["last_name"]), s(&p["dob"])))
        .collect()
}

/// The read that shows a record a domain's writes change, and the name
/// of its id parameter.
fn record_read(domain: &str) -> (&'static str, &'static str) {
    match domain {
        "retail" => ("get_order_details", "order_id"),
        "airline" => ("get_reservation_details", "reservation_id"),
        _ => ("get_details_by_id", "id"),
    }
}

/// For a write whose change the domain's [`record_read`] shows as a
/// status: the write's argument holding the record's id, and the status
/// tau2's record then has.
fn status_after(domain: &str, name: &str) -> Option<(&'static str, &'static str)> {
    Some(match (domain, name) {
        ("retail", "cancel_pending_order") => ("order_id", "cancelled"),
        ("retail", "exchange_delivered_order_items") => ("order_id", "exchange requested"),
        ("retail", "return_delivered_order_items") => ("order_id", "return requested"),
        ("retail", "modify_pending_order_items") => ("order_id", "pending (item modified)"),
        ("airline", "cancel_reservation") => ("reservation_id", "cancelled"),
        ("telecom", "send_payment_request") => ("bill_id", "awaiting payment"),
        _ => return None,
    })
}

/// What a read must show after a write, as tau2's record would.
fn checks(domain: &str, db: &Db, name: &str, args: &Record, answer: &Value) -> Vec<Check> {
    let order = |id: &Value| json!({"order_id": id});
    let reservation = || json!({"reservation_id": args["reservation_id"]});
    let mut out: Vec<Check> = status_after(domain, name)
        .map(|(arg, want)| {
            let (read, id) = record_read(domain);
            check(
                read,
                json!({id: args[arg]}),
                format!("status is `{want}`"),
                move |r| norm(&r["result"]["status"]) == want,
            )
        })
        .into_iter()
        .collect();
    match (domain, name) {
        ("retail", "modify_pending_order_address" | "modify_user_address") => {
            let want = json!({"address1": args["address1"], "address2": args["address2"], "city": args["city"],
                              "country": args["country"], "state": args["state"], "zip": args["zip"]});
            let (tool, a) = if name == "modify_user_address" {
                ("get_user_details", json!({"user_id": args["user_id"]}))
            } else {
                ("get_order_details", order(&args["order_id"]))
            };
            out.push(check(
                tool,
                a,
                "the nested address is the new one, nothing pasted beside it".into(),
                move |r| r["result"]["address"] == want && r["result"].get("address1").is_none(),
            ));
        }
        ("retail", "modify_pending_order_items") => {
            let before: Vec<String> = db["orders"][&s(&args["order_id"])]["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| s(&i["item_id"]))
                .collect();
            let mut after = before.clone();
            for (old, new) in args["item_ids"]
                .as_array()
                .unwrap()
                .iter()
                .zip(args["new_item_ids"].as_array().unwrap())
            {
                if let Some(at) = after.iter().position(|x| *x == s(old)) {
                    after[at] = s(new);
                }
            }
            out.push(check(
                "get_order_details",
                order(&args["order_id"]),
                "the items are the new ones".into(),
                move |r| {
                    let got: Vec<String> = r["result"]["items"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|i| s(&i["item_id"]))
                        .collect();
                    got == after
                },
            ));
        }
        ("retail", "modify_pending_order_payment") => {
            let pm = s(&args["payment_method_id"]);
            out.push(check(
                "get_order_details",
                order(&args["order_id"]),
                "the order names the new payment method, still pending".into(),
                move |r| {
                    r["result"].to_string().contains(&pm)
                        && norm(&r["result"]["status"]) == "pending"
                },
            ));
        }
        ("airline", "book_reservation") => {
            let new = s(&answer["result"]["reservation_id"]);
            let legs = legs_of(&args["flights"]);
            let who = people(&args["passengers"]);
            let cabin = args["cabin"].clone();
            out.push(check(
                "get_reservation_details",
                json!({"reservation_id": new}),
                "the booking has its flights, passengers and cabin".into(),
                move |r| {
                    legs_of(&r["result"]["flights"]) == legs
                        && people(&r["result"]["passengers"]) == who
                        && r["result"]["cabin"] == cabin
                },
            ));
            let id = new.clone();
            out.push(check(
                "get_user_details",
                json!({"user_id": args["user_id"]}),
                "the booking is in the user's reservations".into(),
                move |r| {
                    r["result"]["reservations"]
                        .as_array()
                        .is_some_and(|l| l.iter().any(|x| s(x) == id))
                },
            ));
        }
        ("airline", "update_reservation_baggages") => {
            let (t, n) = (
                args["total_baggages"].clone(),
                args["nonfree_baggages"].clone(),
            );
            out.push(check(
                "get_reservation_details",
                reservation(),
                "the baggage counts".into(),
                move |r| r["result"]["total_baggages"] == t && r["result"]["nonfree_baggages"] == n,
            ));
        }
        ("airline", "update_reservation_flights") => {
            let legs = legs_of(&args["flights"]);
            let cabin = args["cabin"].clone();
            out.push(check(
                "get_reservation_details",
                reservation(),
                "the new flights and cabin".into(),
                move |r| legs_of(&r["result"]["flights"]) == legs && r["result"]["cabin"] == cabin,
            ));
        }
        ("airline", "update_reservation_passengers") => {
            let who = people(&args["passengers"]);
            out.push(check(
                "get_reservation_details",
                reservation(),
                "the new passengers".into(),
                move |r| people(&r["result"]["passengers"]) == who,
            ));
        }
        ("telecom", "refuel_data") => {
            let line = s(&args["line_id"]);
            let before = db["lines"][&line]["data_refueling_gb"]
                .as_f64()
                .unwrap_or(0.0);
            let want = before + args["gb_amount"].as_f64().unwrap_or(0.0);
            out.push(check(
                "get_data_usage",
                json!({"customer_id": args["customer_id"], "line_id": line}),
                format!("data_refueling_gb is {want}"),
                move |r| {
                    r["result"]["data_refueling_gb"]
                        .as_f64()
                        .is_some_and(|x| (x - want).abs() < 1e-9)
                },
            ));
        }
        ("telecom", "enable_roaming") => {
            out.push(check(
                "get_details_by_id",
                json!({"id": args["line_id"]}),
                "roaming_enabled is true".into(),
                |r| r["result"]["roaming_enabled"] == true,
            ));
        }
        ("telecom", "resume_line") => {
            out.push(check(
                "get_details_by_id",
                json!({"id": args["line_id"]}),
                "Active, suspension_start_date cleared".into(),
                |r| {
                    norm(&r["result"]["status"]) == "active"
                        && r["result"]["suspension_start_date"].is_null()
                },
            ));
        }
        _ => {}
    }
    out
}

// ---------------------------------------------------------------- refusals

fn call(name: &str, args: Value) -> Call {
    (name.to_owned(), rec(args))
}

/// `db` with another user, `zoe_park_2000` (`fields`), who owns the gift
/// card `gift_card_2000001` in `methods`.
fn with_another_user(db: &Db, fields: Value, methods: &str) -> Db {
    let mut other = db.clone();
    put(&mut other, "users", "zoe_park_2000", fields);
    put(
        &mut other,
        methods,
        "gift_card_2000001",
        json!({"user_id": "zoe_park_2000", "source": "gift_card"}),
    );
    other
}

/// Calls tau2 refuses, each with the fixtures of a task it fits.
fn refusals(domain: &str, tasks: &[Value], base: &Spec) -> Vec<(Db, Refusal)> {
    let dbs: Vec<(Vec<Call>, Db)> = tasks
        .iter()
        .map(|t| {
            let calls = gold_calls(t, base);
            let db = match domain {
                "retail" => retail_db(&calls, t),
                "airline" => airline_db(&calls, t),
                _ => telecom_db(&calls, t),
            };
            (calls, db)
        })
        .collect();
    let cases: Vec<(Db, &'static str, Vec<Call>, Call)> = match domain {
        "retail" => {
            let status_of = |db: &Db, st: &str| {
                db.get("orders").and_then(|o| {
                    o.iter()
                        .find(|(_, r)| r["status"] == st)
                        .map(|(k, r)| (k.clone(), r.clone()))
                })
            };
            let Some((_, db)) = dbs.iter().find(|(_, db)| {
                status_of(db, "pending").is_some() && status_of(db, "delivered").is_some()
            }) else {
                return Vec::new();
            };
            let (p, pending) = status_of(db, "pending").unwrap();
            let (d, delivered) = status_of(db, "delivered").unwrap();
            let user = s(&pending["user_id"]);
            let pm = db["payment_methods"].keys().next().unwrap().clone();
            let item_p = s(&pending["items"][0]["item_id"]);
            let item_d = s(&delivered["items"][0]["item_id"]);
            let other = with_another_user(
                db,
                json!({"name": {"first_name": "Zoe", "last_name": "Park"}, "email": "zoe.park@example.com", "orders": []}),
                "payment_methods",
            );
            let exchange = |o: &str, i: &str| {
                call(
                    "exchange_delivered_order_items",
                    json!({"order_id": o, "item_ids": [i], "new_item_ids": ["7000000007"], "payment_method_id": pm}),
                )
            };
            let modify = |i: &str, n: &str| {
                call(
                    "modify_pending_order_items",
                    json!({"order_id": p, "item_ids": [i], "new_item_ids": [n], "payment_method_id": pm}),
                )
            };
            let cases = vec![
                (
                    db.clone(),
                    "cancel a delivered order (\"Non-pending order cannot be cancelled\")",
                    vec![],
                    call(
                        "cancel_pending_order",
                        json!({"order_id": d, "reason": "no longer needed"}),
                    ),
                ),
                (
                    db.clone(),
                    "cancel for a reason outside the two (\"Invalid reason\")",
                    vec![],
                    call(
                        "cancel_pending_order",
                        json!({"order_id": p, "reason": "found it cheaper"}),
                    ),
                ),
                (
                    db.clone(),
                    "exchange a pending order (\"Non-delivered order cannot be exchanged\")",
                    vec![],
                    exchange(&p, &item_p),
                ),
                (
                    db.clone(),
                    "a second exchange of the same order",
                    vec![exchange(&d, &item_d)],
                    exchange(&d, &item_d),
                ),
                (
                    db.clone(),
                    "return a pending order (\"Non-delivered order cannot be returned\")",
                    vec![],
                    call(
                        "return_delivered_order_items",
                        json!({"order_id": p, "item_ids": [item_p], "payment_method_id": pm}),
                    ),
                ),
                (
                    db.clone(),
                    "change the address of a delivered order (\"Non-pending order cannot be modified\")",
                    vec![],
                    call(
                        "modify_pending_order_address",
                        json!({"order_id": d, "address1": "9 Elm Road", "address2": "", "city": "Denver", "state": "CO", "country": "USA", "zip": "80202"}),
                    ),
                ),
                (
                    db.clone(),
                    "modify items twice (status is no longer 'pending')",
                    vec![modify(&item_p, "7000000001")],
                    modify("7000000001", "7000000002"),
                ),
                (
                    other,
                    "pay with another user's payment method (\"Payment method not found\")",
                    vec![],
                    call(
                        "modify_pending_order_payment",
                        json!({"order_id": p, "payment_method_id": "gift_card_2000001"}),
                    ),
                ),
                (
                    db.clone(),
                    "an order that does not exist (\"Order not found\")",
                    vec![],
                    call("get_order_details", json!({"order_id": "#W9999999"})),
                ),
                (
                    db.clone(),
                    "a user that does not exist (\"User not found\")",
                    vec![],
                    call(
                        "find_user_id_by_email",
                        json!({"email": "nobody.here@example.com"}),
                    ),
                ),
            ];
            let _ = user;
            cases
        }
        "airline" => {
            let Some((calls, db)) = dbs.iter().find(|(c, db)| {
                c.iter().any(|(n, _)| n == "book_reservation") && db.contains_key("reservations")
            }) else {
                return Vec::new();
            };
            let (_, book) = calls.iter().find(|(n, _)| n == "book_reservation").unwrap();
            let res = db["reservations"].keys().next().unwrap().clone();
            let mut bad = book.clone();
            bad.insert(
                "flights".into(),
                json!([{"flight_number": "HAT999", "date": "2024-05-26"}]),
            );
            let other = with_another_user(db, json!({"reservations": []}), "payments");
            let count = db["reservations"][&res]["passengers"]
                .as_array()
                .map_or(1, Vec::len);
            let more: Vec<Value> = (0..=count).map(|i| json!({"first_name": format!("Ana{i}"), "last_name": "Lima", "dob": "1990-01-01"})).collect();
            let cases = vec![
                (
                    db.clone(),
                    "book a flight that does not exist (\"Flight HAT999 not found\")",
                    vec![],
                    ("book_reservation".to_owned(), bad),
                ),
                (
                    other,
                    "pay baggage with another user's payment method (\"Payment method not found\")",
                    vec![],
                    call(
                        "update_reservation_baggages",
                        json!({"reservation_id": res, "total_baggages": 1, "nonfree_baggages": 1, "payment_id": "gift_card_2000001"}),
                    ),
                ),
                (
                    db.clone(),
                    "change the number of passengers (\"Number of passengers does not match\")",
                    vec![],
                    call(
                        "update_reservation_passengers",
                        json!({"reservation_id": res, "passengers": more}),
                    ),
                ),
                (
                    db.clone(),
                    "a reservation that does not exist (\"Reservation not found\")",
                    vec![],
                    call(
                        "get_reservation_details",
                        json!({"reservation_id": "ZZZZZZ"}),
                    ),
                ),
                (
                    db.clone(),
                    "a cabin that does not exist (pydantic `CabinClass`)",
                    vec![],
                    call(
                        "update_reservation_flights",
                        json!({"reservation_id": res, "cabin": "first", "flights": [], "payment_id": db["payments"].keys().next().unwrap()}),
                    ),
                ),
            ];
            cases
        }
        _ => {
            let Some((_, db)) = dbs.first() else {
                return Vec::new();
            };
            let mut suspended = db.clone();
            line_of(&mut suspended, "L1002").insert("status".into(), json!("Suspended"));
            let mut two = db.clone();
            for (bill, due) in [("B1003", 20.0), ("B1004", 30.0)] {
                overdue_bill(&mut two, "C1001", bill, due);
                list_bill(&mut two, "C1001", bill);
            }
            let cases = vec![
                (
                    db.clone(),
                    "a payment request for another customer's bill (\"Bill not found for customer\")",
                    vec![],
                    call(
                        "send_payment_request",
                        json!({"customer_id": "C1001", "bill_id": "B2001"}),
                    ),
                ),
                (
                    db.clone(),
                    "suspend a line twice (\"Line must be active to suspend\")",
                    vec![call(
                        "suspend_line",
                        json!({"customer_id": "C1001", "line_id": "L1002", "reason": "travel"}),
                    )],
                    call(
                        "suspend_line",
                        json!({"customer_id": "C1001", "line_id": "L1002", "reason": "travel"}),
                    ),
                ),
                (
                    db.clone(),
                    "resume an active line (\"Line must be suspended to resume\")",
                    vec![],
                    call(
                        "resume_line",
                        json!({"customer_id": "C1001", "line_id": "L1001"}),
                    ),
                ),
                (
                    db.clone(),
                    "roaming on another customer's line (\"Line not found for customer\")",
                    vec![],
                    call(
                        "enable_roaming",
                        json!({"customer_id": "C1001", "line_id": "L2001"}),
                    ),
                ),
                (
                    db.clone(),
                    "refuel a negative amount (\"Refuel amount must be positive\")",
                    vec![],
                    call(
                        "refuel_data",
                        json!({"customer_id": "C1001", "line_id": "L1002", "gb_amount": -1.0}),
                    ),
                ),
                (
                    two,
                    "a second bill awaiting payment (\"A bill is already awaiting payment\")",
                    vec![call(
                        "send_payment_request",
                        json!({"customer_id": "C1001", "bill_id": "B1003"}),
                    )],
                    call(
                        "send_payment_request",
                        json!({"customer_id": "C1001", "bill_id": "B1004"}),
                    ),
                ),
                (
                    suspended,
                    "data usage of a line that does not exist (\"Line not found\")",
                    vec![],
                    call(
                        "get_data_usage",
                        json!({"customer_id": "C1001", "line_id": "L9999"}),
                    ),
                ),
            ];
            cases
        }
    };
    cases
        .into_iter()
        .map(|(db, what, setup, call)| (db, Refusal { what, setup, call }))
        .collect()
}
