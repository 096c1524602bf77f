//! The situations of a run and their opening asks.
//!
//! [`plan`] derives the spec's [`Axes`], builds the pairwise covering array
//! over them (seeds are its required first rows), and turns each array row
//! into a situation: the person's facts chosen to match the world state (an
//! existing record, an unknown id, a record in a terminal state, several
//! records, someone else's record), a tier drawn at `hard_share`, a writing
//! style, and `phrasings` wordings of the ask from the [`writer`](crate::writer).
//! Each wording is one [`Task`]. Tasks are ordered seeds first, then phrasing
//! by phrasing over the array's rows, so a small budget still spreads over
//! situations.

use crate::axes::{Axes, TERMINAL_STATUSES};
use crate::ground::Ground;
use crate::identity::{self, Owner};
use crate::person::{self, Facts};
use crate::writer::{self, AskInput, Templates};
use sparring_grid::{CoveringArray, Effort};
use sparring_types::seed::{self, Stream};
use sparring_types::{FaultKind, FaultRecord};
use sparring_types::{
    History, Persona, SimulateOptions, Situation, Spec, Stance, ToolCondition, Vocabulary,
    WorldState,
};
use sparring_world::{Operation, ToolModel, World};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One wording of one situation, ready to roll out.
#[derive(Clone, Debug)]
pub struct Task {
    /// Position in the plan.
    pub index: usize,
    /// The covering-array row the situation came from.
    pub grid_row: Vec<usize>,
    /// Which wording of the situation this is (0-based).
    pub phrasing: usize,
    /// Where on the grid it lies.
    pub situation: Situation,
    /// Who asks.
    pub persona: Persona,
    /// The opening message.
    pub ask: String,
    /// `seed` for a seed ask, else `structured`.
    pub arm: sparring_types::Arm,
    /// What the person knows and wants.
    pub facts: Facts,
    /// Who wrote the ask: `template`, or the model writer's backend.
    pub writer: String,
    /// The situation's id, stable across runs (`scenario_id`).
    pub scenario_id: String,
    /// The task's id, stable across runs (`task_id`).
    pub task_id: String,
}

/// A run's plan: the axes, the array and the tasks.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The axes the array covers.
    pub axes: Axes,
    /// The covering array.
    pub array: CoveringArray,
    /// The tasks, seeds first.
    pub tasks: Vec<Task>,
    /// Tier name → situations drawn with it.
    pub tier_mix: BTreeMap<String, u64>,
    /// Unique situations (`unique_situations`) still to draw past the
    /// array; [`draw_unique`] draws them a few at a time, so memory does not
    /// grow with the budget.
    pub unique_left: usize,
    /// The array rows unique situations are laid on, in turn.
    pub again: Vec<usize>,
    /// Situations of the array past what the budget can reach (its seeds
    /// plus `budget` more): counted and their tiers drawn, but their asks
    /// not written, so a small budget does not pay for the whole array.
    pub beyond_budget: usize,
    /// What the plan could not do as the axes say (a `several` no owner
    /// makes possible), for `run.json` and stderr.
    pub warnings: Vec<String>,
    /// The spec's reading and world the plan was made on, which
    /// [`draw_unique`] draws more situations on.
    pub ground: Ground,
}

/// Why a plan could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// The axes admit no covering array (a constraint rules out everything).
    #[error("cannot build the situation grid: {0}")]
    Grid(#[from] sparring_grid::GridError),
    /// The spec's `axes` name a policy rule the system prompt lacks.
    #[error(transparent)]
    Axes(#[from] crate::axes::AxesError),
    /// The built-in templates are broken (a packaging error).
    #[error(transparent)]
    Templates(#[from] writer::TemplateError),
}

impl From<sparring_reading::ReadError> for PlanError {
    fn from(e: sparring_reading::ReadError) -> Self {
        Self::Axes(e.into())
    }
}

/// Lays out the run's tasks, reading the spec.
pub fn plan(spec: &Spec, options: &SimulateOptions) -> Result<Plan, PlanError> {
    let ground = Ground::new(spec, options.world.clone())?;
    plan_on(spec, &ground, options)
}

/// Lays out the run's tasks on a spec read already.
pub fn plan_on(spec: &Spec, ground: &Ground, options: &SimulateOptions) -> Result<Plan, PlanError> {
    let templates = Templates::builtin()?;
    let world = ground.calm();
    let mut axes = Axes::on(spec, ground)?;
    let several = axes.forbid_impossible_several(&world, options.seed, spec);
    let effort = Effort::new(options.grid_effort)?;
    let array = axes.grid(options.seed, effort)?;
    let mut order = coverage_order(&array.rows, spec.seeds.len());
    let grid_rows = order.len();
    // `situations` caps the count (never below the seeds); with
    // `unique_situations` new situations follow the array, each a fresh
    // world (its own stream and world seed) on an array row taken again in
    // coverage order.
    let wanted = situation_count(options, spec.seeds.len(), grid_rows);
    let again: Vec<usize> = order[spec.seeds.len().min(grid_rows)..].to_vec();
    let again = if again.is_empty() {
        order.clone()
    } else {
        again
    };
    order.truncate(wanted);
    // Every task is run once before any twice, and each situation has at
    // least one task, so a run of `budget` rows never reaches past its
    // seeds and `budget` more situations; one more is written, so a run
    // the budget stops knows there was more to run (`budget_spent`).
    let reach = budget_reach(options, spec.seeds.len()).min(order.len());
    let (written, beyond) = order.split_at(reach);
    let mut plan = finish_plan(
        spec, options, &templates, ground, axes, array, written, &again,
    );
    for &r in beyond {
        let tier = situation_tier(spec, options, r).0;
        *plan.tier_mix.entry(tier.to_owned()).or_default() += 1;
    }
    plan.beyond_budget = beyond.len();
    if grid_rows > 0 {
        plan.unique_left = wanted.saturating_sub(grid_rows);
    }
    plan.again = again;
    plan.warnings.extend(several);
    plan.warnings.extend(no_happy_path(&world));
    Ok(plan)
}

/// A warning for each tool that acts on a record but whose rules refuse
/// every record the world has: no situation can play its success, so a pass
/// rate for it measures only refusals (a rule read wrong, or fixtures with
/// no record in the state the tool needs).
fn no_happy_path(world: &World) -> Vec<String> {
    let mut out = Vec::new();
    for m in world.models() {
        let (Some(entity), true) = (&m.entity, m.acts() && m.id_param.is_some()) else {
            continue;
        };
        let ids = world.ids(entity);
        let Some(first) = ids.first() else { continue };
        let Some(why) = world.state_refuses(&m.name, first) else {
            continue;
        };
        if ids[1..]
            .iter()
            .all(|id| world.state_refuses(&m.name, id).is_some())
        {
            out.push(format!(
                "`{}` can act on no record: the world refuses every one of the {} `{entity}` records (the first: {why}), so its situations test only refusals; hint: check the rule with `sparring world SPEC --explain`, or give a fixture in the state it needs",
                m.name,
                ids.len()
            ));
        }
    }
    out
}

/// How many situations of the array a run can reach: all of them without a
/// budget or with `unique_situations` (whose count follows the budget
/// already), else the seeds and `budget` + 1 more.
fn budget_reach(options: &SimulateOptions, seeds: usize) -> usize {
    match options.budget {
        Some(b) if !options.unique_situations => seeds
            .saturating_add(usize::try_from(b).unwrap_or(usize::MAX))
            .saturating_add(1),
        _ => usize::MAX,
    }
}

/// The tier of the situation on order index `r` (`seed` for a seed), and
/// its stream after the draw, which the rest of the situation draws from.
fn situation_tier(spec: &Spec, options: &SimulateOptions, r: usize) -> (&'static str, Stream) {
    let mut stream = Stream::derive(options.seed, "plan/situation", &[r as u64]);
    let tier = if r < spec.seeds.len() {
        "seed"
    } else {
        writer::draw_tier(options.hard_share, &mut stream)
    };
    (tier, stream)
}

/// Draws `count` unique situations past the array, starting `from` unique
/// situations in (`from = 0` is the first past the array); their tasks are
/// numbered from `first_index`. Returns the tasks and their tier counts.
/// Each draw depends only on its index, so drawing in pieces gives the same
/// situations as drawing at once.
pub fn draw_unique(
    spec: &Spec,
    options: &SimulateOptions,
    plan: &Plan,
    from: usize,
    count: usize,
    first_index: usize,
) -> Result<(Vec<Task>, BTreeMap<String, u64>), PlanError> {
    let templates = Templates::builtin()?;
    let grid_rows = plan.array.rows.len();
    if grid_rows == 0 || plan.again.is_empty() {
        return Ok((Vec::new(), BTreeMap::new()));
    }
    let order: Vec<usize> = (grid_rows + from..grid_rows + from + count).collect();
    let drawn = finish_plan(
        spec,
        options,
        &templates,
        &plan.ground,
        plan.axes.clone(),
        plan.array.clone(),
        &order,
        &plan.again,
    );
    let mut tasks = drawn.tasks;
    for (i, task) in tasks.iter_mut().enumerate() {
        task.index = first_index + i;
    }
    Ok((tasks, drawn.tier_mix))
}

/// How many situations a run draws: the grid's rows, or `situations` of them
/// (at least the seeds), or with `unique_situations` as many as `situations`
/// or the budget can use.
fn situation_count(options: &SimulateOptions, seeds: usize, grid_rows: usize) -> usize {
    let cap = |n: u64| usize::try_from(n).unwrap_or(usize::MAX).max(seeds);
    if options.unique_situations {
        match (options.situations, options.budget) {
            (Some(n), _) => cap(n),
            // A situation gives at most `phrasings` tasks and may give one:
            // as many as the budget could run and one more (drawn lazily),
            // so the budget, not the count, ends the run (`budget_spent`).
            (None, Some(budget)) => cap(budget.saturating_add(1)),
            (None, None) => grid_rows,
        }
    } else {
        options
            .situations
            .map_or(grid_rows, |n| cap(n).min(grid_rows))
    }
}

#[allow(clippy::too_many_arguments, clippy::too_many_lines)]
fn finish_plan(
    spec: &Spec,
    options: &SimulateOptions,
    templates: &Templates,
    ground: &Ground,
    axes: Axes,
    array: CoveringArray,
    order: &[usize],
    again: &[usize],
) -> Plan {
    let calm = ground.calm();
    let world = &calm;
    let mut situations: Vec<Vec<Task>> = Vec::new();
    let mut tier_mix: BTreeMap<String, u64> = BTreeMap::new();
    let grid_rows = array.rows.len();
    // What the policy identifies people by: the same for every situation.
    let identifying = identifying_params(spec, &axes.rules);
    // Whether a tool hands the person over: the same for every situation.
    let handoff = spec
        .tools
        .iter()
        .any(|t| writer::handoff_recipient(&t.description, &t.name).is_some());
    for &r in order {
        // An index past the array is a unique situation on a row taken again.
        let at = if r < grid_rows {
            r
        } else {
            again[(r - grid_rows) % again.len()]
        };
        let row = &array.rows[at];
        let named = axes.named(row);
        let get = |name: &str| {
            named
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        let (tier, mut stream) = situation_tier(spec, options, r);
        let seed_ask = (r < spec.seeds.len()).then(|| spec.seeds[r].clone());
        *tier_mix.entry(tier.to_owned()).or_default() += 1;
        let style = if seed_ask.is_some() {
            "plain"
        } else {
            writer::draw_style(&mut stream)
        };
        let tool_name = get("tool");
        let model = axes.models.iter().find(|m| m.name == tool_name);
        let state: WorldState = vocabulary(&get("world_state"));
        let stance: Stance = vocabulary(&get("stance"));
        let history: History = vocabulary(&get("history"));
        let world_seed = seed::derive_u64(options.seed, "world", &[r as u64]);
        // The person and the ids it knows come from the world the rollout
        // plays in: the person is the owner of the situation's records.
        let task_world = world.clone().with_seed(world_seed);
        // A rule that hands an action off past a bound, on that action: the
        // person asks past it (not for a seed, which says what it asks).
        let pinned_bound = seed_ask
            .is_none()
            .then(|| axes.rule(&get("policy_rule")))
            .flatten()
            .zip(model)
            .and_then(|(rule, m)| crate::goal::past_bound(rule, &m.name));
        let mut facts = match (&seed_ask, model) {
            (Some(ask), _) => {
                let owner = identity::owner_named_in(&task_world, options.seed, ask)
                    .unwrap_or_else(|| identity::draw_generated(&mut stream));
                let mut facts = Facts::for_seed(ask, owner.name());
                facts.set_owner(&owner);
                // The record the seed names, when it is one of its tool's:
                // the goal is about that record.
                // A record the world lacks (world state `missing`, read by
                // the axes) is the goal's record too: not found.
                if let Some(m) = model
                    && let (Some(param), Some(entity)) = (&m.id_param, &m.entity)
                    && let Some(id) = facts.known.get("id").cloned()
                    && (state == WorldState::Missing || task_world.record(entity, &id).is_some())
                {
                    // Known under the tool's own name for it, the field the
                    // row's `persona.id_field` names.
                    facts.known.remove("id");
                    facts.known.insert(param.clone(), id.clone());
                    facts.id = Some((param.clone(), id));
                }
                facts
            }
            (None, Some(model)) => {
                facts_for(spec, &task_world, options.seed, model, state, &mut stream)
            }
            (None, None) => {
                let owner = identity::draw_generated(&mut stream);
                let mut facts = Facts::new(owner.name(), &Operation::Other, None, "none");
                facts.set_owner(&owner);
                facts
            }
        };
        // The person can prove who it is: it knows the values its own
        // records hold for what the policy's identifying tools take.
        {
            let record = (state != WorldState::SomeoneElse)
                .then(|| {
                    model
                        .and_then(|m| m.entity.as_ref())
                        .zip(facts.id.as_ref())
                        .and_then(|(e, (_, id))| task_world.record(e, id))
                })
                .flatten();
            let params: Vec<String> = identifying
                .iter()
                .filter(|p| !facts.known.contains_key(*p))
                .cloned()
                .collect();
            for (param, value) in identity::credentials(
                &task_world,
                facts.identity_record.as_ref(),
                record.as_ref(),
                &params,
            ) {
                facts.known.insert(param, value);
            }
        }
        // Some people say them up front (never in a seed, which says what
        // it says): from a stream of its own, so no other draw moves.
        let forthcoming = seed_ask.is_none()
            && Stream::derive(options.seed, "plan/forthcoming", &[r as u64])
                .chance(crate::defaults::FORTHCOMING_SHARE);
        if let Some(bound) = &pinned_bound {
            facts.hold(&bound.param, &bound.value());
        }
        // Whatever the rule coordinate, a person asking past a bound is for
        // the hand-off (an amount the world drew past it).
        let past_bound = model.and_then(|m| {
            axes.rules
                .iter()
                .filter_map(|rule| crate::goal::past_bound(rule, &m.name))
                .find(|bound| bound.crossed_by(&facts))
        });
        let name = facts.name().to_owned();
        let rule = axes.rule(&get("policy_rule")).map(|r| r.text.clone());
        let op = model.map_or(Operation::Other, |m| m.operation.clone());
        let thing = model
            .and_then(|m| m.entity.as_deref())
            .map_or_else(|| "account".to_owned(), writer::thing_of);
        // A person who is a record of the world speaks of it as theirs
        // ("reset my password", not "my employee's password").
        let own = identity::own_word(&task_world, facts.owner.as_deref());
        let need = model
            .and_then(|m| spec.tool(&m.name))
            .map(|t| writer::need_phrase(&t.description, &t.name))
            .map(|n| writer::in_own_words(&n, own.as_deref()))
            .unwrap_or_default();
        facts.goal = writer::in_own_words(&facts.goal, own.as_deref());
        let schema = |p: &str| {
            model
                .and_then(|m| spec.tool(&m.name))
                .and_then(|t| t.parameter(p))
        };
        let details: Vec<(String, String)> = facts
            .args
            .iter()
            .map(|(p, v)| {
                let own = identity_key(p, schema(p)).is_some()
                    || (identity::is_owner_entity(p)
                        && model.is_some_and(|m| m.references.iter().any(|(r, _)| r == p)));
                // Things in a list (`item_ids`) are said in words, the one
                // to change and what the person wants instead.
                match (p.ends_with("_ids"), facts.known.get(p)) {
                    (true, Some(words)) if words != v => {
                        let label = if p.starts_with("new_") {
                            "what I want instead"
                        } else {
                            "the one to change"
                        };
                        (label.to_owned(), words.clone())
                    }
                    _ => (writer::detail_label(p, schema(p), own), v.clone()),
                }
            })
            .chain(
                identifying
                    .iter()
                    .filter(|_| forthcoming)
                    .filter(|p| !facts.args.iter().any(|(a, _)| a == *p))
                    .filter_map(|p| {
                        // Known under its own name, or as the identity field
                        // it asks for (`phone_number` is the person's phone).
                        let v = facts.known.get(p).or_else(|| {
                            let schema = spec.tools.iter().find_map(|t| t.parameter(p));
                            facts.known.get(identity_key(p, schema)?)
                        })?;
                        Some((writer::detail_label(p, None, true), v.clone()))
                    }),
            )
            .collect();
        let email = facts.known.get("email").cloned().unwrap_or_default();
        // A tool that makes a record (a hold on a prescription) is about the
        // record it is made from: one of several is that record.
        let made_record = model
            .and_then(identity::made_from)
            .filter(|_| state == WorldState::Several)
            .and_then(|(p, _)| crate::goal::made_record(&facts, p));
        let id = facts.id.as_ref().map(|(_, id)| id.clone()).or(made_record);
        let tier_for_writer = if state == WorldState::Several && id.is_some() {
            "ambiguous"
        } else {
            tier
        };
        // What the tool takes of who the person is: their own number (a
        // reference to an owner, `customer_id`) and identity fields.
        let own_number = model.is_some_and(|m| {
            m.references
                .iter()
                .any(|(_, e)| identity::is_owner_entity(e))
        });
        let identity_args: Vec<&str> = model
            .and_then(|m| spec.tool(&m.name))
            .map(|t| {
                t.parameter_names()
                    .into_iter()
                    .filter_map(|p| identity_key(p, t.parameter(p)))
                    .collect()
            })
            .unwrap_or_default();
        let input = AskInput {
            operation: &op,
            // A search by the person's details or number ("which orders do
            // you have under my email?", `list_accounts(customer_id)`); a
            // read that takes neither an id nor them (`search_onestop_flight`,
            // `list_all_airports`) is asked for in its description's words.
            search: model
                .is_some_and(|m| m.id_param.is_none() && matches!(m.operation, Operation::Read))
                && (own_number || !identity_args.is_empty()),
            by_id: model.is_some_and(|m| m.id_param.is_some()),
            // The person's email or number ("which accounts do you have
            // under my email?").
            by_email: own_number || identity_args.contains(&"email"),
            handoff,
            thing: &thing,
            id: id.as_deref(),
            wants: &facts.wants,
            email: &email,
            name: &name,
            tool: &tool_name,
            rule: rule.as_deref(),
            goal: &facts.goal,
            need: &need,
            details: &details,
            several: state == WorldState::Several && id.is_some(),
            tier: tier_for_writer,
            stance,
            history,
            style,
        };
        // A complex ask adds a read of the same record; an ask that is
        // already a read would only say the same need twice.
        let read = Operation::Read;
        let second = AskInput {
            operation: &read,
            by_id: true,
            tier: "ordinary",
            ..input.clone()
        };
        let second = (op != Operation::Read).then_some(&second);
        let n = options.phrasings.max(1) as usize;
        let mut asks = match &seed_ask {
            Some(ask) => writer::seed_phrasings(templates, ask, &input, n, &mut stream),
            None => writer::phrasings(templates, &input, second, n, &mut stream),
        };
        // Several records matter to a tool that takes one: a booking or a
        // search names none of them, so the ask does not list them.
        if state == WorldState::Several
            && id.is_some()
            && let Some(others) = facts.known.get("other_ids")
        {
            // Each phrasing lists them in its own words (the first as
            // always), so phrasings of one situation do not share the list.
            for (i, ask) in asks.iter_mut().enumerate() {
                let _ = match i % 3 {
                    0 => write!(ask, " (I have a few: {others}.)"),
                    1 => write!(ask, " I've got more than one, {others}."),
                    _ => write!(ask, " There are several under my name: {others}."),
                };
            }
        }
        let mut axes_map: BTreeMap<String, String> = named
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect();
        // The tool condition is sampled, not covered: a scheduled fault on the
        // tool's first call for a share `fault_rate` of situations, drawn from
        // its own stream so the other draws do not move. A spec's pins and
        // forbidden pairs on `tool_condition` narrow the draw. A situation
        // with tool `none` gets one too: the world fires it on the rollout's
        // first call of any tool (`sparring_world::ANY_TOOL`).
        let mut condition = Stream::derive(options.seed, "plan/tool_condition", &[r as u64]);
        let fault = draw_condition(&axes, row, options, &mut condition);
        axes_map.insert(
            "tool_condition".to_owned(),
            fault.map_or("ok", FaultKind::as_str).to_owned(),
        );
        let fault_kind = fault.map(FaultKind::as_str);
        let goal = if let Some(expect) = seed_ask.as_ref().and_then(|_| spec.seed_expects.get(&r)) {
            crate::goal::expected(expect, model, fault_kind)
        } else {
            let mut goal = crate::goal::derive(spec, &task_world, model, state, &facts, fault_kind);
            if let Some(past) = past_bound {
                past.hand_off(&mut goal);
            }
            goal
        };
        let situation = Situation {
            axes: axes_map,
            tier: vocabulary(tier),
            world_seed,
            faults: fault
                .map(|k| vec![FaultRecord::scheduled(&tool_name, k)])
                .unwrap_or_default(),
            seed_index: seed_ask.as_ref().map(|_| r),
            rule_text: rule.as_deref().map(sparring_types::policy::short_text),
            goal: Some(goal),
        };
        let persona = Persona {
            name: name.clone(),
            stance,
            style: style.to_owned(),
            patience: options.patience,
            knows: facts.known.clone(),
            goal: Some(facts.goal.clone()),
            wants: facts.wants.iter().map(|(k, _)| k.clone()).collect(),
            id_field: facts.id.as_ref().map(|(k, _)| k.clone()),
            args: facts.args.iter().map(|(k, _)| k.clone()).collect(),
            lacks: facts.lacks.clone(),
            owner: facts.owner.clone(),
        };
        let arm = if seed_ask.is_some() {
            sparring_types::Arm::Seed
        } else {
            sparring_types::Arm::Structured
        };
        situations.push(
            asks.into_iter()
                .enumerate()
                .map(|(p, ask)| {
                    let mut task = Task {
                        index: 0,
                        grid_row: row.clone(),
                        phrasing: p,
                        situation: situation.clone(),
                        persona: persona.clone(),
                        ask,
                        arm,
                        facts: facts.clone(),
                        scenario_id: String::new(),
                        task_id: String::new(),
                        writer: sparring_types::defaults::TEMPLATE.to_owned(),
                    };
                    // A unique situation on a repeated row differs in its
                    // world seed and facts; its ids say so.
                    let (scenario_id, task_id) = ids_of(spec, &task, r >= grid_rows);
                    task.scenario_id = scenario_id;
                    task.task_id = task_id;
                    task
                })
                .collect(),
        );
    }
    // Seeds (the first rows) first; then phrasing by phrasing.
    let seeds = spec.seeds.len().min(situations.len());
    let mut tasks: Vec<Task> = situations[..seeds].iter().flatten().cloned().collect();
    let longest = situations.iter().map(Vec::len).max().unwrap_or(0);
    for p in 0..longest {
        for list in &situations[seeds..] {
            if let Some(task) = list.get(p) {
                tasks.push(task.clone());
            }
        }
    }
    for (i, task) in tasks.iter_mut().enumerate() {
        task.index = i;
    }
    Plan {
        axes,
        array,
        tasks,
        tier_mix,
        unique_left: 0,
        again: Vec::new(),
        beyond_budget: 0,
        warnings: Vec::new(),
        ground: ground.clone(),
    }
}

/// The scenario id and task id of a planned task. A situation past the
/// array (`unique_situations`) adds its world seed to its identity.
fn ids_of(spec: &Spec, task: &Task, unique: bool) -> (String, String) {
    use sparring_types::hash::short_id;
    let mut identity = serde_json::json!({
        "axes": task.situation.axes, "tier": task.situation.tier, "knows": task.persona.knows,
    });
    if unique {
        identity["world_seed"] = serde_json::json!(task.situation.world_seed);
    }
    let scenario_id = short_id("scn", &identity);
    let task_id = task_id_of(spec, &scenario_id, &task.ask);
    (scenario_id, task_id)
}

/// The id of a task: its situation and the words of its ask, so a rewritten
/// ask (a model writer's) is a new task.
pub fn task_id_of(spec: &Spec, scenario_id: &str, ask: &str) -> String {
    sparring_types::hash::short_id(
        "task",
        &serde_json::json!({"spec": spec.name, "scenario": scenario_id, "ask": ask}),
    )
}

/// The tasks of a previous run, for a pinned re-run (`--tasks`): one per
/// distinct `task_id`, ordered by it (so the order does not depend on the
/// order the rows finished in), each on its own situation, person, faults
/// and world seed. Returns the tasks and the most rollouts any task has in
/// one eval run (the pinned k).
pub fn pinned_tasks(rows: &[sparring_types::Row]) -> (Vec<Task>, u32) {
    let mut by_id: BTreeMap<&str, &sparring_types::Row> = BTreeMap::new();
    let mut counts: BTreeMap<(u32, &str), u32> = BTreeMap::new();
    for row in rows {
        by_id.entry(row.task_id.as_str()).or_insert(row);
        *counts
            .entry((row.lineage.eval_run, row.task_id.as_str()))
            .or_default() += 1;
    }
    let k = counts.values().copied().max().unwrap_or(0);
    let tasks = by_id
        .values()
        .enumerate()
        .map(|(index, row)| pinned_task(index, row))
        .collect();
    (tasks, k)
}

fn pinned_task(index: usize, row: &sparring_types::Row) -> Task {
    let persona = row.persona.clone();
    let known = persona.knows.clone();
    let value = |field: &String| (field.clone(), known.get(field).cloned().unwrap_or_default());
    let facts = Facts {
        id: persona.id_field.as_ref().map(value),
        wants: persona.wants.iter().map(value).collect(),
        goal: persona
            .goal
            .clone()
            .unwrap_or_else(|| "get some help".to_owned()),
        // An argument kept in `knows` under another name (a new address's
        // `zip` beside the person's own) is the goal's argument.
        args: persona
            .args
            .iter()
            .map(|p| {
                let meant = row
                    .situation
                    .goal
                    .as_ref()
                    .and_then(|g| g.arguments.get(p))
                    .and_then(serde_json::Value::as_str);
                meant.map_or_else(|| value(p), |v| (p.clone(), v.to_owned()))
            })
            .collect(),
        lacks: persona.lacks.clone(),
        owner: persona.owner.clone(),
        // A replayed person knows what its row says it knows.
        identity_record: None,
        known,
    };
    // Only the scheduled faults are the situation's; random ones are drawn
    // again by the world at `fault_rate`.
    let faults = row
        .situation
        .faults
        .iter()
        .filter(|f| f.is_scheduled())
        .map(|f| FaultRecord::scheduled(&f.tool, f.kind))
        .collect();
    let ask = row
        .messages
        .iter()
        .find(|m| m.role == sparring_types::Role::User)
        .map(|m| m.content_str().to_owned())
        .unwrap_or_default();
    Task {
        index,
        grid_row: Vec::new(),
        phrasing: 0,
        situation: Situation {
            faults,
            ..row.situation.clone()
        },
        persona,
        ask,
        arm: row.lineage.arm,
        facts,
        scenario_id: row.scenario_id.clone(),
        task_id: row.task_id.clone(),
        writer: row.writer_model.clone(),
    }
}

/// The sampled tool condition of a situation with a tool: a fault at
/// `fault_rate` (every time when the spec pins the axis without `ok`),
/// drawn by the world's fault weights, or uniformly among the pinned
/// faults; a condition the spec forbids with a value of the row is `ok`.
fn draw_condition(
    axes: &Axes,
    row: &[usize],
    options: &SimulateOptions,
    stream: &mut Stream,
) -> Option<FaultKind> {
    let pinned = axes.conditions.len() != ToolCondition::ALL.len();
    let always = !axes.conditions.contains(&ToolCondition::Ok);
    if !always && !stream.chance(options.world.fault_rate) {
        return None;
    }
    let kind = if pinned {
        let faults: Vec<FaultKind> = axes.conditions.iter().filter_map(|c| c.fault()).collect();
        stream.pick(&faults).copied()
    } else {
        FaultKind::draw(&options.world, stream)
    };
    kind.filter(|k| axes.condition_allowed(row, ToolCondition::of_fault(*k)))
}

/// The order to run array rows in: the required (seed) rows first, then
/// greedily the row that covers the most pairs not yet covered, so that a
/// budget smaller than the array still covers as many pairs as it can.
/// Ties go to the earlier row, so the order is deterministic.
///
/// The greedy choice is made lazily: a row's count of new pairs only falls
/// as rows are chosen, so a row whose recounted figure still beats every
/// other row's last count is the best, and most rows are never recounted.
/// The order is the plain greedy one's, at about the cost of counting each
/// row once rather than once per row chosen.
fn coverage_order(rows: &[Vec<usize>], required: usize) -> Vec<usize> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let required = required.min(rows.len());
    let mut order: Vec<usize> = (0..required).collect();
    let mut covered: std::collections::BTreeSet<(usize, usize, usize, usize)> =
        std::collections::BTreeSet::new();
    let pairs = |row: &[usize]| -> Vec<(usize, usize, usize, usize)> {
        let mut out = Vec::new();
        for a in 0..row.len() {
            for b in a + 1..row.len() {
                out.push((a, row[a], b, row[b]));
            }
        }
        out
    };
    for row in &rows[..required] {
        covered.extend(pairs(row));
    }
    let new_pairs = |covered: &std::collections::BTreeSet<_>, r: usize| {
        pairs(&rows[r])
            .iter()
            .filter(|p| !covered.contains(*p))
            .count()
    };
    // (last count, earlier row first): the heap's top is the best candidate.
    let mut heap: BinaryHeap<(usize, Reverse<usize>)> = (required..rows.len())
        .map(|r| (new_pairs(&covered, r), Reverse(r)))
        .collect();
    while let Some((_, Reverse(r))) = heap.pop() {
        let now = (new_pairs(&covered, r), Reverse(r));
        if heap.peek().is_some_and(|top| now < *top) {
            heap.push(now);
            continue;
        }
        covered.extend(pairs(&rows[r]));
        order.push(r);
    }
    order
}

/// What the person knows in a situation, chosen to match the world state:
/// the person is the owner of the record (`someone_else`: a different owner
/// claiming it; `several`: several records of the one owner), and holds a
/// value for every argument of the tool a customer would know.
fn facts_for(
    spec: &Spec,
    world: &World,
    seed: u64,
    model: &ToolModel,
    state: WorldState,
    stream: &mut Stream,
) -> Facts {
    let mut facts = Facts::new("", &model.operation, model.entity.as_deref(), &model.name);
    let tool = spec.tool(&model.name);
    if model.operation == Operation::Other
        && let Some(t) = tool
    {
        facts.goal = writer::need_phrase(&t.description, &t.name);
    }
    let mut chosen: Option<String> = None;
    let mut owner: Option<Owner> = None;
    // The records of the owner a `several` person names.
    let mut several: Option<String> = None;
    // A tool that makes a record is played on the record it is made from.
    let made = identity::made_from(model);
    if let Some(entity) = identity::subject_entity(model) {
        let ids = world.ids(entity);
        let status = |id: &String| {
            world
                .record(entity, id)
                .and_then(|r| r.get("status").and_then(|v| v.as_str()).map(str::to_owned))
                .unwrap_or_default()
        };
        let live: Vec<String> = ids
            .iter()
            .filter(|id| !TERMINAL_STATUSES.contains(&status(id).as_str()))
            .cloned()
            .collect();
        let terminal: Vec<String> = ids
            .iter()
            .filter(|id| TERMINAL_STATUSES.contains(&status(id).as_str()))
            .cloned()
            .collect();
        let pool = if live.is_empty() { &ids } else { &live };
        // A tool that acts plays its happy path where the record exists (a
        // record its rules let it act on, when there is one) and the world's
        // refusal where the record is in a state it cannot act on.
        let (allowed, refused): (Vec<String>, Vec<String>) = if model.acts() {
            pool.iter()
                .cloned()
                .partition(|id| identity::refusal(world, model, id).is_none())
        } else {
            (Vec::new(), Vec::new())
        };
        let happy = if allowed.is_empty() { pool } else { &allowed };
        let terminal = if model.acts() {
            let mut blocked = terminal;
            blocked.extend(refused);
            blocked.sort_unstable();
            blocked
        } else {
            terminal
        };
        chosen = match state {
            WorldState::Missing => Some(person::unknown_id(&ids, stream)),
            WorldState::Terminal => stream.pick(&terminal).cloned(),
            WorldState::Several => {
                // A record whose owner has another one, when any has.
                let mut order = pool.clone();
                stream.shuffle(&mut order);
                order
                    .iter()
                    .find(|id| {
                        identity::owner_of(world, seed, entity, id)
                            .is_some_and(|o| identity::owned_by(world, seed, entity, &o).len() >= 2)
                    })
                    .or_else(|| order.first())
                    .cloned()
            }
            WorldState::Exists => stream.pick(happy).cloned(),
            WorldState::SomeoneElse => stream.pick(pool).cloned(),
        };
        let theirs = chosen
            .as_ref()
            .and_then(|id| identity::owner_of(world, seed, entity, id));
        owner = match state {
            // Someone else claims the record as theirs; a missing record's
            // person is still someone the world knows.
            WorldState::SomeoneElse | WorldState::Missing => {
                let mut order = ids.clone();
                stream.shuffle(&mut order);
                order.iter().find_map(|id| {
                    identity::owner_of(world, seed, entity, id)
                        .filter(|o| theirs.as_ref().is_none_or(|t| t.key != o.key))
                })
            }
            _ => theirs,
        };
        if state == WorldState::Several
            && let (Some(id), Some(o)) = (&chosen, &owner)
        {
            let others: Vec<String> = identity::owned_by(world, seed, entity, o)
                .into_iter()
                .filter(|x| x != id)
                .take(2)
                .collect();
            if !others.is_empty() {
                let mut all = vec![id.clone()];
                all.extend(others);
                several = Some(all.join(", "));
            }
        }
    }
    let owner = owner.unwrap_or_else(|| {
        if model.entity.is_none() {
            identity::draw_owner(world, seed, stream)
        } else {
            identity::draw_generated(stream)
        }
    });
    facts.known.clear();
    facts.set_owner(&owner);
    if let Some(ids) = several {
        facts.known.insert("other_ids".to_owned(), ids);
    }
    if let (Some(param), Some(id)) = (&model.id_param, &chosen) {
        facts.known.insert(param.clone(), id.clone());
        facts.id = Some((param.clone(), id.clone()));
    }
    let Some(tool) = tool else {
        return facts;
    };
    // A person found by what a finder takes (`find_user_id_by_name_zip`)
    // where another finder takes a contact detail (email, phone) is one who
    // cannot give that: else any careful agent would use the other, as
    // tau2's "only call this function if the user … cannot remember email"
    // says.
    if is_person_finder(tool) {
        let own: Vec<&str> = tool
            .parameter_names()
            .into_iter()
            .filter_map(|p| identity_key(p, tool.parameter(p)))
            .collect();
        let others: Vec<&str> = spec
            .tools
            .iter()
            .filter(|t| t.name != tool.name && is_person_finder(t))
            .flat_map(|t| {
                t.parameter_names()
                    .into_iter()
                    .filter_map(|p| identity_key(p, t.parameter(p)))
                    .collect::<Vec<_>>()
            })
            // Contact details one may not have at hand; never the name.
            .filter(|k| matches!(*k, "email" | "phone") && !own.contains(k))
            .collect();
        for key in others {
            facts.known.remove(key);
        }
    }
    let record = model
        .entity
        .as_ref()
        .zip(chosen.as_ref())
        .and_then(|(e, id)| world.record(e, id));
    let balance = record
        .as_ref()
        .and_then(|r| r.get("balance").and_then(serde_json::Value::as_f64));
    let required = tool.required();
    // A tool that takes an address field by field gets one new address,
    // drawn once (only such tools draw, so other specs' streams are as before).
    let address = person::is_address_form(tool.parameter_names())
        .then(|| stream.below(person::address_forms() as u64));
    let (from_record, companions) =
        record_values(world, tool, model, balance, address.is_some(), stream);
    // An exchange (`item_ids` for `new_item_ids`): one of the record's
    // things and the other option of it the person wants.
    let swap = record.as_ref().and_then(|r| {
        let new = tool
            .parameter_names()
            .into_iter()
            .find(|p| p.starts_with("new_") && p.ends_with("_ids"))?;
        let old = new.trim_start_matches("new_");
        let entity = model.entity.as_deref()?;
        let (was, becomes, words) = replacement(world, r, entity, old, stream)?;
        let had = record_line_words(r, old, &was);
        Some([(old.to_owned(), was, had), (new.to_owned(), becomes, words)])
    });
    let swapped = |param: &str| {
        swap.as_ref()
            .and_then(|s| s.iter().find(|(p, _, _)| p == param))
            .map(|(_, v, _)| v.clone())
    };
    for param in tool.parameter_names() {
        let value = if Some(param) == model.id_param.as_deref() {
            chosen.clone()
        } else if let Some(v) = swapped(param) {
            Some(v)
        } else if let Some(v) = from_record.get(param) {
            Some(v.clone())
        } else if let Some(v) = address
            .and_then(|pick| person::address_form_value(param, usize::try_from(pick).unwrap_or(0)))
        {
            Some(v)
        } else if made.is_some_and(|(p, _)| p == param) {
            chosen.clone()
        } else if let Some((_, other)) = model.references.iter().find(|(p, _)| p == param) {
            linked_value(world, model, chosen.as_deref(), other)
                .or_else(|| reference_value(world, seed, other, &owner, chosen.as_deref(), stream))
        } else if let Some(key) = identity_key(param, tool.parameter(param)) {
            owner.identity.get(key).cloned()
        } else if let Some(v) = record_time(param, tool.parameter(param), record.as_ref())
            .and_then(|t| person::moved_time(&t, stream))
        {
            Some(v)
        } else {
            person::value_for(param, tool.parameter(param), balance, stream)
        };
        let Some(value) = value else {
            if required.contains(&param) {
                facts.lacks.push(param.to_owned());
            }
            continue;
        };
        facts.args.push((param.to_owned(), value.clone()));
        // A new address's zip is a value the person wants set, not who they are.
        let from_form = address.is_some() && person::address_form_value(param, 0).is_some();
        let identity_like = !from_form && identity_key(param, tool.parameter(param)).is_some();
        let reference = model.references.iter().any(|(p, _)| p == param);
        if Some(param) != model.id_param.as_deref() && !identity_like && !reference {
            facts.wants.push((param.to_owned(), value.clone()));
        }
        // A value named like an identity field but about someone else (a
        // payee's name) is kept under its own name.
        let key = match facts.known.get(param) {
            Some(v) if *v != value => format!(
                "{}_{param}",
                writer::thing_of(model.entity.as_deref().unwrap_or("request")).replace(' ', "_")
            ),
            _ => param.to_owned(),
        };
        facts.known.insert(key, value);
    }
    for (field, value) in companions {
        facts.known.entry(field).or_insert(value);
    }
    // The person names the things in words ("the Backpack in white, size
    // S"), not by their ids; the goal's arguments keep the ids.
    for (param, _, words) in swap.iter().flatten() {
        facts.known.insert(param.clone(), words.clone());
    }
    facts
}

/// Words for the line of `record` whose `…_id` (of `list_param`'s kind) is
/// `id`: its name and options ("the Water Bottle in red, size XL").
fn record_line_words(
    record: &serde_json::Map<String, serde_json::Value>,
    list_param: &str,
    id: &str,
) -> String {
    let key = format!("{}_id", list_param.trim_end_matches("_ids"));
    record
        .values()
        .filter_map(serde_json::Value::as_array)
        .flatten()
        .find(|line| line.get(&key).and_then(serde_json::Value::as_str) == Some(id))
        .map_or_else(
            || id.to_owned(),
            |line| {
                let name = line
                    .get("name")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("");
                option_words(name, line)
            },
        )
}

/// For an exchange of `old_param`'s things (`item_ids`) in `record` (of
/// `entity`): one of them (`was`), another option of the same thing the
/// world lists beside it (`becomes`: a key of the same map in a record of
/// another entity, such as a product's `variants`, not marked unavailable),
/// and words for it from that record's name and the option's own fields.
/// `None` when the world lists no other option.
fn replacement(
    world: &World,
    record: &serde_json::Map<String, serde_json::Value>,
    entity: &str,
    old_param: &str,
    stream: &mut Stream,
) -> Option<(String, String, String)> {
    use serde_json::Value;
    let key = format!("{}_id", old_param.strip_suffix("_ids")?);
    let olds: Vec<String> = record
        .values()
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|thing| thing.get(&key).and_then(Value::as_str).map(str::to_owned))
        .collect();
    let mut found: Vec<(String, String, String)> = Vec::new();
    for other in world.entities().iter().filter(|e| e.as_str() != entity) {
        for id in world.ids(other) {
            let Some(holder) = world.record(other, &id) else {
                continue;
            };
            for options in holder.values().filter_map(Value::as_object) {
                for was in olds.iter().filter(|o| options.contains_key(o.as_str())) {
                    let name = holder.get("name").and_then(Value::as_str).unwrap_or("");
                    for (becomes, option) in options {
                        if becomes == was
                            || option.get("available").and_then(Value::as_bool) == Some(false)
                        {
                            continue;
                        }
                        found.push((was.clone(), becomes.clone(), option_words(name, option)));
                    }
                }
            }
        }
    }
    stream.pick(&found).cloned()
}

/// "the Backpack in white, size S": a named thing and an option's own
/// plain fields (its `options`, else its other text fields).
fn option_words(name: &str, option: &serde_json::Value) -> String {
    let fields = option
        .get("options")
        .and_then(serde_json::Value::as_object)
        .or_else(|| option.as_object());
    let parts: Vec<String> = fields
        .into_iter()
        .flatten()
        .filter(|(k, _)| !k.ends_with("_id") && *k != "available")
        .filter_map(|(k, v)| {
            let v = v.as_str()?;
            Some(match k.as_str() {
                "color" | "colour" => v.to_owned(),
                _ => format!("{} {v}", k.replace('_', " ")),
            })
        })
        .collect();
    let thing = if name.is_empty() {
        "the same thing".to_owned()
    } else {
        format!("the {name}")
    };
    if parts.is_empty() {
        thing
    } else {
        format!("{thing} in {}", parts.join(", "))
    }
}

/// The time a date-time argument (`new_time`) moves: the record's field of
/// that format whose name shares a word with the argument's (`time`), else
/// its first date-time field. `None` for other arguments.
fn record_time(
    param: &str,
    schema: Option<&serde_json::Value>,
    record: Option<&serde_json::Map<String, serde_json::Value>>,
) -> Option<String> {
    let format = schema
        .and_then(|s| s.get("format"))
        .and_then(serde_json::Value::as_str);
    if format != Some("date-time") {
        return None;
    }
    let times: Vec<(&String, &str)> = record?
        .iter()
        .filter_map(|(k, v)| v.as_str().map(|v| (k, v)))
        .filter(|(_, v)| sparring_types::is_date_time(v))
        .collect();
    let named = times.iter().find(|(k, _)| {
        k.split('_')
            .any(|w| param.split('_').any(|p| p == w && p != "new"))
    });
    named
        .or_else(|| times.first())
        .map(|(_, v)| (*v).to_owned())
}

/// Values one world record holds for arguments a person could not otherwise
/// give (`book_reservation`'s `origin` and `destination`, which no stock
/// value fits): the record of the entity whose records have most of those
/// fields, drawn from `stream`, gives every plain argument it has a field
/// for (so a search's origin, destination and date are one flight's), and
/// its date, when the tool takes none, as a fact the person can answer
/// with ("what date?"). Nothing, and no draw, when the person lacks none.
/// An address form's fields (`address_form`) are left to the address drawn.
fn record_values(
    world: &World,
    tool: &sparring_types::ToolSpec,
    model: &ToolModel,
    balance: Option<f64>,
    address_form: bool,
    stream: &mut Stream,
) -> (BTreeMap<String, String>, Vec<(String, String)>) {
    let plain = |p: &str| {
        // An address form's fields come from the one address drawn.
        !(address_form && person::address_form_value(p, 0).is_some())
            && Some(p) != model.id_param.as_deref()
            && !model.references.iter().any(|(r, _)| r == p)
            && identity_key(p, tool.parameter(p)).is_none()
            && tool
                .parameter(p)
                .and_then(|s| s.get("type"))
                .and_then(serde_json::Value::as_str)
                .is_none_or(|t| matches!(t, "string" | "number" | "integer"))
    };
    let lacking: Vec<&str> = tool
        .required()
        .into_iter()
        .filter(|p| {
            // Whether a stock value fits does not depend on the draw: a
            // throwaway stream asks without taking from `stream`.
            plain(p)
                && person::value_for(
                    p,
                    tool.parameter(p),
                    balance,
                    &mut Stream::derive(0, "person/peek", &[]),
                )
                .is_none()
        })
        .collect();
    if lacking.is_empty() {
        return (BTreeMap::new(), Vec::new());
    }
    let scalar = |r: &serde_json::Map<String, serde_json::Value>, f: &str| {
        r.get(f).and_then(|v| match v {
            serde_json::Value::String(s) if !s.is_empty() => Some(s.clone()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
    };
    // The entity whose records hold most of the lacking fields, and those records.
    let mut best: (usize, Vec<serde_json::Map<String, serde_json::Value>>) = (0, Vec::new());
    for entity in world.entities() {
        let records: Vec<_> = world
            .ids(&entity)
            .iter()
            .filter_map(|id| world.record(&entity, id))
            .collect();
        let Some(first) = records.first() else {
            continue;
        };
        let covered = lacking
            .iter()
            .filter(|p| scalar(first, p).is_some())
            .count();
        if covered > best.0 {
            best = (covered, records);
        }
    }
    let Some(record) = stream.pick(&best.1) else {
        return (BTreeMap::new(), Vec::new());
    };
    let params = tool.parameter_names();
    let values = params
        .iter()
        .filter(|p| plain(p))
        .filter_map(|p| scalar(record, p).map(|v| ((*p).to_owned(), v)))
        .collect();
    let companions = ["date"]
        .iter()
        .filter(|f| !params.contains(f))
        .filter_map(|f| scalar(record, f).map(|v| ((*f).to_owned(), v)))
        .collect();
    (values, companions)
}

/// The parameters of the tools the policy identifies a person with (an
/// authentication rule's `via`), in rule and schema order, each once.
fn identifying_params(spec: &Spec, rules: &[sparring_reading::policy::Rule]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for rule in rules {
        let sparring_reading::policy::Detail::Auth { via } = &rule.detail else {
            continue;
        };
        for tool in via.iter().filter_map(|t| spec.tool(t)) {
            for p in tool.parameter_names() {
                if !out.iter().any(|o| o == p) {
                    out.push(p.to_owned());
                }
            }
        }
    }
    out
}

/// Whether a tool finds a person by who they are: it takes no id, only
/// identity fields, and its name says whom (`find_user_id_by_email`).
fn is_person_finder(tool: &sparring_types::ToolSpec) -> bool {
    let params = tool.parameter_names();
    !params.is_empty()
        && params
            .iter()
            .all(|p| identity_key(p, tool.parameter(p)).is_some())
        && tool.name.split('_').any(identity::is_owner_entity)
}

/// The identity field an argument asks for (`phone_number` → `phone`), when
/// it is about the person and not someone else (`The payee's name`).
fn identity_key(param: &str, schema: Option<&serde_json::Value>) -> Option<&'static str> {
    let key = match param {
        "name" | "full_name" | "customer_name" | "user_name" => "name",
        "email" | "email_address" | "user_email" | "customer_email" => "email",
        "phone" | "phone_number" => "phone",
        "first_name" => "first_name",
        "last_name" => "last_name",
        "zip" | "zip_code" | "postal_code" | "postcode" => "zip",
        "dob" | "date_of_birth" => "dob",
        _ => return None,
    };
    let description = schema
        .and_then(|s| s.get("description"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or("")
        .to_lowercase();
    // "The payee's name" is not the person's.
    let someone_else = description.split_whitespace().any(|w| {
        w.strip_suffix("'s").is_some_and(|who| {
            !identity::is_owner_entity(who) && !matches!(who, "customer" | "user" | "person")
        })
    });
    (!someone_else).then_some(key)
}

/// The record of `other` the situation's record points at (a line item's
/// order, for `open_return(line_item_id, order_number)`): the person names
/// the order their line item is on, not another of their orders. Never a
/// person's record: who the person is comes from the owner.
fn linked_value(
    world: &World,
    model: &ToolModel,
    chosen: Option<&str>,
    other: &str,
) -> Option<String> {
    if world.owners().is_person(other) {
        return None;
    }
    let subject = identity::subject_entity(model)?;
    let record = world.record(subject, chosen?)?;
    world
        .owners()
        .links_of(subject, &record, &world.entities())
        .into_iter()
        .find(|l| l.entity == other)
        .and_then(|l| {
            record
                .get(&l.field)
                .and_then(|v| v.as_str().map(str::to_owned))
        })
}

/// The id an argument naming a record of `entity` gets: the owner's own id,
/// else a record the owner owns other than the situation's, else any other.
fn reference_value(
    world: &World,
    seed: u64,
    entity: &str,
    owner: &Owner,
    chosen: Option<&str>,
    stream: &mut Stream,
) -> Option<String> {
    if let Some((e, id)) = &owner.record
        && e == entity
    {
        return Some(id.clone());
    }
    let theirs: Vec<String> = identity::owned_by(world, seed, entity, owner)
        .into_iter()
        .filter(|id| Some(id.as_str()) != chosen)
        .collect();
    if !theirs.is_empty() {
        return stream.pick(&theirs).cloned();
    }
    let any: Vec<String> = world
        .ids(entity)
        .into_iter()
        .filter(|id| Some(id.as_str()) != chosen)
        .collect();
    stream.pick(&any).cloned()
}

/// A value of a closed vocabulary from the name the plan drew it by. The
/// plan draws only the vocabulary's own names (the writer's tiers, the
/// stance axis, which a spec's pins are checked against), so the fallback to
/// the zero value is never taken.
fn vocabulary<T: sparring_types::Vocabulary + Default>(name: &str) -> T {
    T::parse(name).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::coverage_order;

    /// The plain greedy order: every left row recounted for every choice.
    fn greedy(rows: &[Vec<usize>], required: usize) -> Vec<usize> {
        let pairs = |row: &[usize]| {
            let mut out = Vec::new();
            for a in 0..row.len() {
                for b in a + 1..row.len() {
                    out.push((a, row[a], b, row[b]));
                }
            }
            out
        };
        let mut order: Vec<usize> = (0..required).collect();
        let mut covered = std::collections::BTreeSet::new();
        for row in &rows[..required] {
            covered.extend(pairs(row));
        }
        let mut left: Vec<usize> = (required..rows.len()).collect();
        while !left.is_empty() {
            let (best, _) = left.iter().enumerate().fold((0, 0), |(bi, bn), (i, &r)| {
                let new = pairs(&rows[r])
                    .iter()
                    .filter(|p| !covered.contains(*p))
                    .count();
                if new > bn { (i, new) } else { (bi, bn) }
            });
            let r = left.remove(best);
            covered.extend(pairs(&rows[r]));
            order.push(r);
        }
        order
    }

    #[test]
    fn the_lazy_order_is_the_greedy_one() {
        let mut stream = sparring_types::seed::Stream::derive(7, "test/order", &[]);
        for case in 0..40_u64 {
            let width = 2 + (case % 4) as usize;
            let n = 5 + (case * 7 % 60) as usize;
            let rows: Vec<Vec<usize>> = (0..n)
                .map(|_| {
                    (0..width)
                        .map(|_| (stream.next_u64() % 4) as usize)
                        .collect()
                })
                .collect();
            let required = (case % 3) as usize;
            assert_eq!(
                coverage_order(&rows, required),
                greedy(&rows, required),
                "case {case}"
            );
        }
    }
}
