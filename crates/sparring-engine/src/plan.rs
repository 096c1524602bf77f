//! The situations of a run and their opening asks.
//!
//! This is the walking skeleton's plan: every tool against three stances of
//! the person and, for tools that take an id of an entity with fixtures, two
//! world states (the record exists; it does not). Seeds come first, each its
//! own situation with the ask kept word for word. The rest are ordered
//! round-robin over tools so that a small budget still touches every tool.
//! The covering-array grid replaces this list when it lands.

use crate::person::{self, Facts};
use sparring_types::seed::{self, Stream};
use sparring_types::{Persona, SimulateOptions, Situation, Spec};
use sparring_world::{FaultKind, Operation, ToolModel, World};
use std::collections::BTreeMap;

/// The stances the skeleton plays.
pub const STANCES: &[&str] = &["cooperative", "hurried", "frustrated"];

/// Share of situations whose ask leaves the id out (the `ambiguous` tier).
pub const HARD_SHARE: f64 = 0.40;

/// One situation with its ask, ready to roll out.
#[derive(Clone, Debug)]
pub struct Task {
    /// Position in the plan.
    pub index: usize,
    /// Where on the grid it lies.
    pub situation: Situation,
    /// Who asks.
    pub persona: Persona,
    /// The opening message.
    pub ask: String,
    /// `seed` for a seed ask, else `structured`.
    pub arm: String,
    /// What the person wants, for the person's own replies.
    pub facts: Facts,
}

/// Lays out the run's tasks, seeds first.
pub fn plan(spec: &Spec, options: &SimulateOptions) -> Vec<Task> {
    let world = World::with_options(spec, 0, options.world.clone());
    let mut tasks = Vec::new();
    for (i, ask) in spec.seeds.iter().enumerate() {
        let index = tasks.len();
        let mut stream = Stream::derive(options.seed, "plan/seed", &[i as u64]);
        let name = person::pick_name(&mut stream);
        let facts = Facts::for_seed(ask, &name);
        let mut axes = BTreeMap::new();
        axes.insert("tool".to_owned(), "none".to_owned());
        axes.insert("stance".to_owned(), "cooperative".to_owned());
        axes.insert("world_state".to_owned(), "as_asked".to_owned());
        tasks.push(Task {
            index,
            situation: Situation {
                axes,
                tier: "seed".to_owned(),
                world_seed: seed::derive_u64(options.seed, "world", &[index as u64]),
                faults: Vec::new(),
                seed_index: Some(i),
            },
            persona: persona(&name, "cooperative", &options.patience, &facts),
            ask: ask.clone(),
            arm: "seed".to_owned(),
            facts,
        });
    }
    // Per tool, its situations; then interleave.
    let mut per_tool: Vec<Vec<(String, String)>> = Vec::new();
    for model in world.models() {
        let has_records = model
            .entity
            .as_ref()
            .is_some_and(|e| !world.ids(e).is_empty());
        let states: &[&str] = if model.id_param.is_some() && has_records {
            &["exists", "missing"]
        } else {
            &["none"]
        };
        let mut list = Vec::new();
        for state in states {
            for stance in STANCES {
                list.push(((*stance).to_owned(), (*state).to_owned()));
            }
        }
        per_tool.push(list);
    }
    let longest = per_tool.iter().map(Vec::len).max().unwrap_or(0);
    for slot in 0..longest {
        for (t, list) in per_tool.iter().enumerate() {
            let Some((stance, state)) = list.get(slot) else {
                continue;
            };
            let model = &world.models()[t];
            let index = tasks.len();
            let world_seed = seed::derive_u64(options.seed, "world", &[index as u64]);
            // The ids the person knows come from the world the rollout plays in.
            let task_world = world.clone().with_seed(world_seed);
            let mut stream =
                Stream::derive(options.seed, "plan/situation", &[t as u64, slot as u64]);
            let ambiguous =
                model.id_param.is_some() && state == "exists" && stream.chance(HARD_SHARE);
            let tier = if ambiguous { "ambiguous" } else { "ordinary" };
            let name = person::pick_name(&mut stream);
            let facts = facts_for(spec, &task_world, model, state, &name, &mut stream);
            let ask = person::opening_ask(model, &facts, stance, ambiguous, &mut stream);
            let mut axes = BTreeMap::new();
            axes.insert("tool".to_owned(), model.name.clone());
            axes.insert("stance".to_owned(), stance.clone());
            axes.insert("world_state".to_owned(), state.clone());
            // The tool condition: a scheduled fault on the tool's first call
            // for a share `fault_rate` of situations, drawn from its own
            // stream so the other draws do not move.
            let mut condition = Stream::derive(
                options.seed,
                "plan/tool_condition",
                &[t as u64, slot as u64],
            );
            let fault = if condition.chance(options.world.fault_rate) {
                FaultKind::draw(&options.world, &mut condition)
            } else {
                None
            };
            axes.insert(
                "tool_condition".to_owned(),
                fault.map_or("ok", FaultKind::as_str).to_owned(),
            );
            tasks.push(Task {
                index,
                situation: Situation {
                    axes,
                    tier: tier.to_owned(),
                    world_seed,
                    faults: fault
                        .map(|k| vec![serde_json::json!({"tool": model.name, "kind": k.as_str()})])
                        .unwrap_or_default(),
                    seed_index: None,
                },
                persona: persona(&name, stance, &options.patience, &facts),
                ask,
                arm: "structured".to_owned(),
                facts,
            });
        }
    }
    tasks
}

fn persona(name: &str, stance: &str, patience: &str, facts: &Facts) -> Persona {
    Persona {
        name: name.to_owned(),
        stance: stance.to_owned(),
        style: person::style_for(stance).to_owned(),
        patience: patience.to_owned(),
        knows: facts.known.clone(),
    }
}

/// What the person knows in a situation: the id of their record (or an id
/// that does not exist, when the situation says so), their name and email,
/// and the new values an update asks for.
fn facts_for(
    spec: &Spec,
    world: &World,
    model: &ToolModel,
    state: &str,
    name: &str,
    stream: &mut Stream,
) -> Facts {
    let mut facts = Facts::new(name, &model.operation, model.entity.as_deref(), &model.name);
    if let (Some(entity), Some(param)) = (&model.entity, &model.id_param) {
        let ids = world.ids(entity);
        let id = if state == "missing" {
            person::unknown_id(&ids, stream)
        } else {
            stream.pick(&ids).cloned().unwrap_or_default()
        };
        if !id.is_empty() {
            facts.known.insert(param.clone(), id.clone());
            facts.id = Some((param.clone(), id.clone()));
            if let Some(record) = world.record(entity, &id) {
                if let Some(email) = record.get("email").and_then(|v| v.as_str()) {
                    facts.known.insert("email".to_owned(), email.to_owned());
                }
                if let Some(n) = record.get("name").and_then(|v| v.as_str()) {
                    facts.known.insert("name".to_owned(), n.to_owned());
                }
            }
        }
    }
    if facts.id.is_none()
        && let Some(entity) = &model.entity
    {
        // A search by the person's details: the person is a known customer.
        let ids = world.ids(entity);
        if let Some(record) = stream.pick(&ids).and_then(|id| world.record(entity, id)) {
            for field in ["email", "name"] {
                if let Some(v) = record.get(field).and_then(|v| v.as_str()) {
                    facts.known.insert(field.to_owned(), v.to_owned());
                }
            }
        }
    }
    if matches!(
        model.operation,
        Operation::Update | Operation::Create | Operation::Read
    ) && let Some(tool) = spec.tool(&model.name)
    {
        for param in tool.parameter_names() {
            if Some(param) == model.id_param.as_deref() || facts.known.contains_key(param) {
                continue;
            }
            if let Some(value) = person::value_for(param, name, stream) {
                facts.known.insert(param.to_owned(), value.clone());
                facts.wants.push((param.to_owned(), value));
            }
        }
    }
    facts
}
