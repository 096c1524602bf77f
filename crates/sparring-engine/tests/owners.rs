//! Who owns what, across a run: an owner-less record has one owner in
//! every situation of a run, and `several` is several records of one owner
//! or no situation at all.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value, json};
use sparring_engine::plan::{Task, draw_unique, plan};
use sparring_types::{SimulateOptions, Spec};
use std::collections::{BTreeMap, BTreeSet};

fn tasks(spec: &Spec, options: &SimulateOptions) -> Vec<Task> {
    let plan = plan(spec, options).unwrap();
    let (more, _) =
        draw_unique(spec, options, &plan, 0, plan.unique_left, plan.tasks.len()).unwrap();
    let mut tasks = plan.tasks;
    tasks.extend(more);
    tasks
}

/// The input of a tool that takes one `{entity}_id`, such as `example`.
fn id_input(entity: &str, example: &str) -> Value {
    let param = format!("{entity}_id");
    json!({"type": "object", "properties": {&param: {"type": "string",
        "description": format!("The {entity} id, such as '{example}'.")}}, "required": [param]})
}

/// Tickets name no owner; the customers are fixtures, so every situation's
/// world holds the same tickets and the same customers.
fn helpdesk() -> Spec {
    let ticket = id_input("ticket", "T-501");
    Spec::from_value(&json!({
        "name": "helpdesk",
        "system_prompt": "You help customers with their tickets.",
        "tools": [
            {"name": "get_ticket", "description": "Look up a ticket.", "inputSchema": ticket},
            {"name": "close_ticket", "description": "Close an open ticket.", "inputSchema": ticket},
        ],
        "fixtures": {
            "tickets": [
                {"ticket_id": "T-501", "status": "open", "subject": "login"},
                {"ticket_id": "T-502", "status": "open", "subject": "billing"},
                {"ticket_id": "T-503", "status": "open", "subject": "refund"},
            ],
            "customers": [
                {"customer_id": "C-1", "name": "Ana Lima", "email": "ana.lima@mail.test"},
                {"customer_id": "C-2", "name": "Ben Okafor", "email": "ben.okafor@mail.test"},
                {"customer_id": "C-3", "name": "Chloe Martin", "email": "chloe.martin@mail.test"},
                {"customer_id": "C-4", "name": "Grace Kim", "email": "grace.kim@mail.test"},
            ],
        },
    }))
    .unwrap()
}

#[test]
fn an_owner_less_record_has_one_owner_in_every_situation_of_a_run() {
    let spec = helpdesk();
    for seed in [0, 7] {
        let options = SimulateOptions {
            seed,
            situations: Some(120),
            unique_situations: true,
            ..SimulateOptions::default()
        };
        let mut owners: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for task in tasks(&spec, &options) {
            let state = task.situation.axes["world_state"].as_str();
            if !matches!(state, "exists" | "terminal" | "several") {
                continue;
            }
            if let (Some((_, id)), Some(owner)) = (&task.facts.id, &task.persona.owner) {
                owners.entry(id.clone()).or_default().insert(owner.clone());
            }
        }
        assert!(owners.len() >= 2, "seed {seed}: {owners:?}");
        for (id, who) in &owners {
            assert_eq!(who.len(), 1, "seed {seed}: ticket {id} is owned by {who:?}");
            assert!(
                who.iter().all(|o| o.starts_with("customers/")),
                "seed {seed}: {who:?}"
            );
        }
    }
}

/// With every buyer owning one order (the support desk without its second
/// order of Ana Lima), `several` cannot be played, and the plan says so once
/// instead of drawing it.
#[test]
fn several_where_no_owner_has_two_records_is_left_out_with_one_warning() {
    let path = sparring_testkit::support_desk_dir().join("spec.yaml");
    let mut value: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    value["system_prompt"] = serde_json::Value::String(String::new());
    let orders = value["fixtures"]["orders"].as_array_mut().unwrap();
    orders.retain(|o| o["order_id"] != "#W1009");
    assert_eq!(orders.len(), 8);
    let spec = Spec::from_value(&value).unwrap();
    let options = SimulateOptions::default();
    let p = plan(&spec, &options).unwrap();
    let states: BTreeSet<&str> = p
        .tasks
        .iter()
        .map(|t| t.situation.axes["world_state"].as_str())
        .collect();
    assert!(!states.contains("several"), "{states:?}");
    assert!(states.contains("someone_else"), "{states:?}");
    let about: Vec<&String> = p
        .warnings
        .iter()
        .filter(|w| w.contains("several"))
        .collect();
    assert_eq!(about.len(), 1, "{:?}", p.warnings);
    assert!(
        about[0].contains("`orders`") && about[0].contains("`get_order`"),
        "{}",
        about[0]
    );
    // The same desk with one buyer owning two orders plays `several`, on
    // that buyer's orders, without the warning.
    let orders = value["fixtures"]["orders"].as_array_mut().unwrap();
    let mut second = orders[0].clone();
    second["order_id"] = json!("#W1009");
    second["status"] = json!("pending");
    orders.push(second);
    let spec = Spec::from_value(&value).unwrap();
    let p = plan(&spec, &options).unwrap();
    assert!(
        p.warnings.iter().all(|w| !w.contains("several")),
        "{:?}",
        p.warnings
    );
    let several: Vec<&Task> = p
        .tasks
        .iter()
        .filter(|t| t.situation.axes["world_state"] == "several" && t.facts.id.is_some())
        .collect();
    assert!(!several.is_empty());
    for t in several {
        assert_eq!(t.persona.owner.as_deref(), Some("email/ana.lima@mail.test"));
        let mut ids: Vec<&str> = t.persona.knows["other_ids"].split(", ").collect();
        ids.sort_unstable();
        assert_eq!(ids, ["#W1001", "#W1009"]);
        // The person names the records in its ask.
        assert!(
            t.ask.contains("#W1001") && t.ask.contains("#W1009"),
            "{}",
            t.ask
        );
    }
}

/// A run puts the plan's warning in its summary (run.json), once.
#[tokio::test]
async fn the_run_carries_the_several_warning_once() {
    use sparring_engine::run::{RunConfig, run};
    use sparring_testkit::ScriptedAgent;
    use sparring_types::{Message, Role};
    let agent = ScriptedAgent::new("done", |_| Message::text(Role::Assistant, "All done."));
    // The testkit shop's four orders have four buyers.
    let config = RunConfig::new(
        std::sync::Arc::new(sparring_testkit::shop_spec()),
        SimulateOptions::default(),
        std::sync::Arc::new(agent),
    );
    let mut rows = Vec::new();
    let summary = run(config, &mut rows, &mut |_| {}).await.unwrap();
    let about = summary
        .warnings
        .iter()
        .filter(|w| w.contains("`world_state: several` cannot be played"))
        .count();
    assert_eq!(about, 1, "{:?}", summary.warnings);
    assert!(
        rows.iter()
            .all(|r| r.situation.axes.get("world_state").map(String::as_str) != Some("several"))
    );
}

/// A thing's own name ("Desk Lamp") is not a person's: whoever asks about
/// a product is someone the world has, with their own name and email.
#[test]
fn a_products_name_is_not_its_owner() {
    let product = id_input("product", "P-1");
    let spec = Spec::from_value(&json!({
        "name": "shop",
        "system_prompt": "You help customers of a shop.",
        "tools": [
            {"name": "get_product", "description": "Look up a product.", "inputSchema": product},
        ],
        "fixtures": {
            "products": [
                {"product_id": "P-1", "name": "Desk Lamp"},
                {"product_id": "P-2", "name": "Water Bottle"},
            ],
            "customers": [
                {"customer_id": "C-1", "name": "Ana Lima", "email": "ana.lima@mail.test"},
                {"customer_id": "C-2", "name": "Ben Okafor", "email": "ben.okafor@mail.test"},
            ],
        },
    }))
    .unwrap();
    let world = sparring_world::World::new(&spec, 0);
    for id in ["P-1", "P-2"] {
        let owner = sparring_engine::identity::owner_of(&world, 0, "products", id).unwrap();
        let name = owner.name().to_owned();
        assert!(
            ["Ana Lima", "Ben Okafor"].contains(&name.as_str()),
            "{id}: {name}"
        );
    }
}

/// A record that names its owner only through another record (a claim's
/// policy's holder) belongs to that owner, in every situation of a run.
#[test]
fn a_claim_belongs_to_its_policys_holder() {
    let claim = id_input("claim", "CL-1");
    let spec = Spec::from_value(&json!({
        "name": "claims",
        "system_prompt": "You help policyholders with their claims.",
        "tools": [
            {"name": "get_claim", "description": "Look up a claim.", "inputSchema": claim},
        ],
        "fixtures": {
            "policyholders": [
                {"policyholder_id": "PH-1", "name": "Rosa Delgado", "email": "rosa@mail.test"},
                {"policyholder_id": "PH-2", "name": "Tom Becker", "email": "tom@mail.test"},
            ],
            "policies": [
                {"policy_id": "POL-1", "policyholder_id": "PH-1", "status": "active"},
                {"policy_id": "POL-2", "policyholder_id": "PH-2", "status": "active"},
            ],
            "claims": [
                {"claim_id": "CL-1", "policy_id": "POL-1", "status": "open"},
                {"claim_id": "CL-2", "policy_id": "POL-2", "status": "open"},
                {"claim_id": "CL-3", "policy_id": "POL-1", "status": "denied"},
            ],
        },
    }))
    .unwrap();
    let world = sparring_world::World::new(&spec, 0);
    for (claim, holder) in [
        ("CL-1", "Rosa Delgado"),
        ("CL-2", "Tom Becker"),
        ("CL-3", "Rosa Delgado"),
    ] {
        let owner = sparring_engine::identity::owner_of(&world, 0, "claims", claim).unwrap();
        assert_eq!(owner.name(), holder, "{claim}");
    }
    for t in tasks(&spec, &SimulateOptions::default()) {
        let (Some(id), Some("exists")) = (
            t.persona.knows.get("claim_id"),
            t.situation.axes.get("world_state").map(String::as_str),
        ) else {
            continue;
        };
        let holder = if id == "CL-2" {
            "Tom Becker"
        } else {
            "Rosa Delgado"
        };
        assert_eq!(t.persona.name, holder, "{id}");
    }
}

/// Records point at their owner by whatever field the desk keeps: a line
/// by its account's `account_number` (an account that holds its holder),
/// a claim by its policy's `policy_number`, a booking by the first
/// passenger who names its `record_locator` (a booking holds several, so
/// the locator keys no passenger); and the person knows their own number.
#[test]
fn owners_are_found_through_any_reference() {
    let tool = |name: &str, param: &str| {
        json!({"name": name, "description": "Look it up.", "inputSchema": {"type": "object",
            "properties": {param: {"type": "string"}}, "required": [param]}})
    };
    let spec = Spec::from_value(&json!({
        "name": "desk",
        "system_prompt": "You help callers.",
        "tools": [
            tool("get_line", "msisdn"), tool("get_account", "account_number"),
            tool("get_claim", "claim_number"), tool("get_policy", "policy_number"),
            tool("get_booking", "record_locator"),
        ],
        "fixtures": {
            "accounts": [
                {"account_number": "BW-1", "holder_name": "Priya Shah", "date_of_birth": "1986-04-12", "email": "priya.shah@mail.test"},
                {"account_number": "BW-2", "holder_name": "Tom Reed", "date_of_birth": "1970-01-02", "email": "tom.reed@mail.test"},
                {"account_number": "BW-3", "holder_name": "Ana Lima", "date_of_birth": "1990-05-05", "email": "ana.lima@mail.test"}],
            "lines": [
                {"msisdn": "07700 900123", "account_number": "BW-2"},
                {"msisdn": "07700 900456", "account_number": "BW-3"}],
            "policyholders": [
                {"policyholder_id": "PH-1", "name": "Rosa Delgado", "email": "rosa@mail.test"},
                {"policyholder_id": "PH-2", "name": "Ken Ito", "email": "ken@mail.test"}],
            "policies": [
                {"policy_number": "HO-1", "policyholder_id": "PH-2"},
                {"policy_number": "HO-2", "policyholder_id": "PH-1"}],
            "claims": [{"claim_number": "CLM-1", "policy_number": "HO-1"}],
            "bookings": [{"record_locator": "KDZRTA", "status": "ticketed"}, {"record_locator": "PLNVUC", "status": "ticketed"}],
            "passengers": [
                {"passenger_id": "P-1", "record_locator": "PLNVUC", "first_name": "Aiko", "last_name": "Tanaka", "date_of_birth": "1990-01-01"},
                {"passenger_id": "P-2", "record_locator": "KDZRTA", "first_name": "Elena", "last_name": "Petrov", "date_of_birth": "1986-03-09"},
                {"passenger_id": "P-3", "record_locator": "KDZRTA", "first_name": "Marco", "last_name": "Petrov", "date_of_birth": "1984-07-21"}],
        },
    }))
    .unwrap();
    let world = sparring_world::World::new(&spec, 0);
    let owner = |entity: &str, id: &str| {
        sparring_engine::identity::owner_of(&world, 0, entity, id).unwrap()
    };
    let line = owner("lines", "07700 900123");
    assert_eq!(line.key, "accounts/BW-2");
    assert_eq!(line.identity["account_number"], "BW-2");
    assert_eq!(line.identity["email"], "tom.reed@mail.test");
    assert_eq!(owner("lines", "07700 900456").key, "accounts/BW-3");
    assert_eq!(owner("claims", "CLM-1").name(), "Ken Ito");
    assert_eq!(owner("bookings", "KDZRTA").name(), "Elena Petrov");
    assert_eq!(owner("bookings", "PLNVUC").name(), "Aiko Tanaka");
}

/// A tool whose rules refuse every record the world has can play no
/// success: the plan says so once, naming the tool and the refusal.
#[test]
fn a_tool_that_can_act_on_no_record_is_warned_about() {
    let booking = id_input("booking", "BK-1");
    let spec = |description: &str| {
        Spec::from_value(&json!({
            "name": "rental",
            "system_prompt": "Only bookings that are confirmed can be cancelled.",
            "tools": [
                {"name": "cancel_booking", "description": description, "inputSchema": booking},
            ],
            "fixtures": {"bookings": [
                {"booking_id": "BK-1", "status": "active"},
                {"booking_id": "BK-2", "status": "completed"},
                {"booking_id": "BK-3", "status": "confirmed"},
            ]},
        }))
        .unwrap()
    };
    let warned = |s: &Spec| {
        plan(s, &SimulateOptions::default())
            .unwrap()
            .warnings
            .iter()
            .filter(|w| w.contains("`cancel_booking` can act on no record"))
            .count()
    };
    // The description and the policy contradict each other: no record is left.
    assert_eq!(warned(&spec("Cancel a booking that is not confirmed.")), 1);
    assert_eq!(warned(&spec("Cancel a booking.")), 0);
}

/// A desk that identifies callers with a tool taking a badge number, which
/// only the employees' records hold.
fn badge_desk() -> Spec {
    let employee = id_input("employee", "E-1001");
    Spec::from_value(&json!({
        "name": "badge-desk",
        "system_prompt": "Always verify the caller with `verify_employee` before you reset or unlock anything.",
        "tools": [
            {"name": "verify_employee", "description": "Verify a caller by employee id and badge number.",
             "inputSchema": {"type": "object", "properties": {
                 "employee_id": {"type": "string", "description": "Employee id, such as 'E-1001'."},
                 "badge_number": {"type": "string", "description": "The 6-digit badge number."}},
                 "required": ["employee_id", "badge_number"]}},
            {"name": "reset_password", "description": "Reset an employee's password.", "inputSchema": employee},
            {"name": "unlock_account", "description": "Unlock an employee's account.", "inputSchema": employee},
        ],
        "fixtures": {
            "employees": [
                {"employee_id": "E-1001", "name": "Ana Lima", "email": "ana.lima@mail.test", "badge_number": "381204"},
                {"employee_id": "E-1002", "name": "Ben Okafor", "email": "ben.okafor@mail.test", "badge_number": "229871"},
                // A list of them: the first is the one they give.
                {"employee_id": "E-1003", "name": "Chloe Martin", "email": "chloe.martin@mail.test", "badge_numbers": ["570316", "570317"]},
            ],
        },
    }))
    .unwrap()
}

#[test]
fn a_person_knows_what_identifies_them_on_their_own_record() {
    let spec = badge_desk();
    let badges: BTreeMap<&str, &str> = [
        ("E-1001", "381204"),
        ("E-1002", "229871"),
        ("E-1003", "570316"),
    ]
    .into_iter()
    .collect();
    let (mut checked, mut from_list) = (0, 0);
    for task in tasks(&spec, &SimulateOptions::default()) {
        let Some(badge) = task
            .facts
            .identity_record
            .as_ref()
            .and_then(|(_, id)| badges.get(id.as_str()))
        else {
            continue;
        };
        // A situation about the identifying tool itself gives its badge as
        // the goal's argument.
        if task.situation.axes.get("tool").map(String::as_str) == Some("verify_employee") {
            continue;
        }
        // Their own badge, also when they ask about someone else's record.
        assert_eq!(
            task.facts.known.get("badge_number").map(String::as_str),
            Some(*badge),
            "{:?}",
            task.facts
        );
        checked += 1;
        if *badge == "570316" {
            from_list += 1;
        }
    }
    assert!(checked >= 5, "only {checked} people are employees");
    assert!(from_list >= 1, "no person held a list of badges");
}

#[test]
fn a_hand_off_is_never_played_on_someone_elses_record() {
    let employee = id_input("employee", "E-1001");
    let spec = Spec::from_value(&json!({
        "name": "security-desk",
        "system_prompt": "You help employees with their accounts.",
        "tools": [
            {"name": "reset_password", "description": "Reset an employee's password.", "inputSchema": employee},
            {"name": "escalate_to_security", "description": "Hand the case to the Security Operations team, who will contact the employee.", "inputSchema": employee},
        ],
        "fixtures": {
            "employees": [
                {"employee_id": "E-1001", "name": "Ana Lima", "email": "ana.lima@mail.test"},
                {"employee_id": "E-1002", "name": "Ben Okafor", "email": "ben.okafor@mail.test"},
                {"employee_id": "E-1003", "name": "Chloe Martin", "email": "chloe.martin@mail.test"},
            ],
        },
    }))
    .unwrap();
    let tasks = tasks(&spec, &SimulateOptions::default());
    let states = |tool: &str| -> BTreeSet<String> {
        tasks
            .iter()
            .filter(|t| t.situation.axes.get("tool").map(String::as_str) == Some(tool))
            .filter_map(|t| t.situation.axes.get("world_state").cloned())
            .collect()
    };
    let handed = states("escalate_to_security");
    assert!(handed.contains("exists"), "{handed:?}");
    assert!(
        !handed.contains("someone_else") && !handed.contains("several"),
        "{handed:?}"
    );
    // The same world, a tool that acts on the record: played on both.
    assert!(states("reset_password").contains("someone_else"));
}

/// A record nobody owns that other records point at (a course section on
/// an enrolment) is shared: no situation plays it as someone else's or as
/// one of several; a record nothing points at (a ticket) still has a drawn
/// owner and is played as someone else's.
#[test]
fn a_shared_record_is_nobodys() {
    let section = id_input("section", "S-101");
    let spec = Spec::from_value(&json!({
        "name": "registrar",
        "system_prompt": "You help students with their courses.",
        "tools": [
            {"name": "get_section", "description": "Look up a course section.", "inputSchema": section},
            {"name": "get_student", "description": "Look up a student.", "inputSchema": id_input("student", "ST-1")},
        ],
        "fixtures": {
            "sections": [
                {"section_id": "S-101", "title": "Algebra", "status": "open"},
                {"section_id": "S-102", "title": "Biology", "status": "open"},
                {"section_id": "S-103", "title": "Chemistry", "status": "full"},
            ],
            "students": [
                {"student_id": "ST-1", "name": "Ana Lima", "email": "ana.lima@mail.test"},
                {"student_id": "ST-2", "name": "Ben Okafor", "email": "ben.okafor@mail.test"},
            ],
            "enrollments": [
                {"enrollment_id": "EN-1", "student_id": "ST-1", "section_id": "S-101"},
                {"enrollment_id": "EN-2", "student_id": "ST-2", "section_id": "S-101"},
                {"enrollment_id": "EN-3", "student_id": "ST-2", "section_id": "S-102"},
            ],
        },
    }))
    .unwrap();
    let states: BTreeSet<String> = tasks(&spec, &SimulateOptions::default())
        .iter()
        .filter(|t| t.situation.axes.get("tool").map(String::as_str) == Some("get_section"))
        .filter_map(|t| t.situation.axes.get("world_state").cloned())
        .collect();
    assert!(states.contains("exists"), "{states:?}");
    assert!(
        !states.contains("someone_else") && !states.contains("several"),
        "{states:?}"
    );
    let tickets: BTreeSet<String> = tasks(&helpdesk(), &SimulateOptions::default())
        .iter()
        .filter_map(|t| t.situation.axes.get("world_state").cloned())
        .collect();
    assert!(tickets.contains("someone_else"), "{tickets:?}");
}
