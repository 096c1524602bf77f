//! The six situation axes of a spec, their constraints, and the grid over
//! them.
//!
//! - **tool**: every tool, plus `none`.
//! - **policy_rule**: the rules read out of the system prompt by
//!   [`sparring_reading::policy`] (every normative sentence, named by a stable id made
//!   from its words), plus `none`.
//! - **stance**: how the person comes across.
//! - **world_state**: the person's record exists, is missing, is in a
//!   terminal state, is one of several that match, or is someone else's.
//! - **tool_condition**: how the situation's tool behaves; *sampled* at
//!   `fault_rate` rather than covered, so it is not a column of the array.
//! - **history**: what went before the conversation.
//!
//! Values that cannot meet are forbidden pairs: a world state other than
//! `exists` with a tool that takes no id; a terminal state for an entity
//! without a terminal record; a rule with a tool it does not cover (each
//! rule's class says which tools it covers; a rule that covers no tool in
//! particular goes with every tool). Seeds become required rows.
//!
//! The spec has the last word (`axes` in a spec, see
//! [`sparring_types::AxesSpec`]): its forbidden pairs are added to the
//! derived ones, and a pinned axis takes only the pinned values, in the
//! order given; derived constraints and required rows that name a value
//! pinned away are dropped (a required row leaves that cell free). Pins and
//! forbidden pairs on `tool_condition` shape the sampling instead: a drawn
//! condition that is not pinned, or is forbidden with a value of the row,
//! becomes `ok`; a pin without `ok` makes every situation with a tool draw
//! one of the pinned conditions.

use crate::person::same_shape;
use sparring_grid::{CoveringArray, Effort, GridError, GridProblem};
use sparring_types::{AxesSpec, Spec, ToolCondition, Vocabulary, WorldState, singular};
pub use sparring_world::TERMINAL_STATUSES;
use sparring_world::{Operation, ToolModel, World};
use std::collections::BTreeMap;

pub use sparring_types::axes::{HISTORIES, STANCES, TOOL_CONDITIONS, WORLD_STATES};

/// The covered axes, in column order.
pub const AXIS_NAMES: &[&str] = &["tool", "policy_rule", "stance", "world_state", "history"];

/// A policy rule, as the policy reader reads it (id from its words, class,
/// tools, sentence).
pub use sparring_reading::policy::Rule;

/// The axes of a spec with their values, constraints and required rows.
#[derive(Clone, Debug)]
pub struct Axes {
    /// Tool names, `none` last.
    pub tools: Vec<String>,
    /// The tools as the world reads them, in the order of `tools` (without `none`).
    pub models: Vec<ToolModel>,
    /// Rules, in prompt order (the spec's added rules last).
    pub rules: Vec<Rule>,
    /// Values per covered axis, in [`AXIS_NAMES`] order.
    pub values: Vec<Vec<String>>,
    /// Forbidden pairs as `((axis, value), (axis, value))` indices.
    pub forbidden: Vec<((usize, usize), (usize, usize))>,
    /// Required (partial) rows, one per seed, in seed order.
    pub required: Vec<Vec<Option<usize>>>,
    /// The tool conditions the sampler may draw (all of
    /// [`TOOL_CONDITIONS`] unless the spec pins them).
    pub conditions: Vec<ToolCondition>,
    /// Tool conditions forbidden with a value of a covered axis:
    /// `((axis, value), condition)`.
    pub condition_forbidden: Vec<((usize, usize), ToolCondition)>,
}

/// A spec's `axes` that the derived axes cannot honour: a policy rule the
/// system prompt does not have.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("at `{pointer}`: {message}")]
pub struct AxesError {
    /// JSON pointer into the spec.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl From<sparring_reading::ReadError> for AxesError {
    fn from(e: sparring_reading::ReadError) -> Self {
        match e {
            sparring_reading::ReadError::Policy(p) => Self {
                pointer: p.pointer,
                message: p.message,
            },
            other => Self {
                pointer: String::new(),
                message: other.to_string(),
            },
        }
    }
}

/// A tool condition by its name (the spec checked the names it gives).
fn condition(name: &str) -> Option<ToolCondition> {
    ToolCondition::ALL
        .iter()
        .copied()
        .find(|c| c.as_str() == name)
}

/// The error for a rule id the policy does not have.
fn no_rule(rules: &[Rule], value: &str, pointer: &str) -> AxesError {
    let ids: Vec<&str> = rules.iter().map(|r| r.id.as_str()).collect();
    let hint = sparring_types::closest(value, &ids)
        .map_or_else(String::new, |c| format!("; did you mean `{c}`?"));
    AxesError {
        pointer: pointer.to_owned(),
        message: format!(
            "the system prompt has no rule `{value}`{hint} ({} rules were read, plus `none`; `sparring policy SPEC` lists them)",
            rules.len()
        ),
    }
}

const TOOL: usize = 0;
const RULE: usize = 1;
const STATE: usize = 3;

impl Axes {
    /// Derives the axes of a spec and applies its pins and forbidden pairs.
    ///
    /// # Errors
    ///
    /// When the spec pins or forbids a policy rule the system prompt does
    /// not have, or its `policy_rules` name one.
    pub fn of(spec: &Spec) -> Result<Self, AxesError> {
        let ground =
            crate::ground::Ground::new(spec, World::spec_options(spec)).map_err(AxesError::from)?;
        Self::on(spec, &ground)
    }

    /// The axes of a spec read already (a run's [`Ground`](crate::ground::Ground)).
    ///
    /// # Errors
    ///
    /// As [`Axes::of`].
    pub fn on(spec: &Spec, ground: &crate::ground::Ground) -> Result<Self, AxesError> {
        let world = ground.calm();
        let models: Vec<ToolModel> = ground.reading().models().to_vec();
        let mut tools: Vec<String> = models.iter().map(|m| m.name.clone()).collect();
        tools.push("none".to_owned());
        let rules = ground.reading().policy().rules().to_vec();
        let mut rule_values: Vec<String> = rules.iter().map(|r| r.id.clone()).collect();
        rule_values.push("none".to_owned());
        let values = vec![
            tools.clone(),
            rule_values,
            STANCES.iter().map(|s| (*s).to_owned()).collect(),
            WORLD_STATES.iter().map(|s| (*s).to_owned()).collect(),
            HISTORIES.iter().map(|s| (*s).to_owned()).collect(),
        ];
        let mut forbidden = Vec::new();
        // Whether an entity's records are shared, read once per entity.
        let mut shared_entities: BTreeMap<&str, bool> = BTreeMap::new();
        for (t, model) in models.iter().enumerate() {
            // A tool that makes a record plays its states on the record it
            // is made from (a prescription for a refill).
            let made = crate::identity::made_from(model).is_some();
            let subject = crate::identity::subject_entity(model);
            let records = subject.map(|e| world.ids(e)).unwrap_or_default();
            // A person is one record of their kind (one employee, one
            // customer): never one of several to choose from.
            let of_a_person = subject.is_some_and(|e| world.owners().is_person(e));
            // A record nobody owns (a product, a course section) is neither
            // someone else's nor one of several of the person's.
            let shared = subject.is_some_and(|e| {
                *shared_entities
                    .entry(e)
                    .or_insert_with(|| crate::identity::is_shared(&world, e))
            });
            let refused = || {
                records
                    .iter()
                    .any(|id| crate::identity::refusal(&world, model, id).is_some())
            };
            for (s, state) in WorldState::ALL.iter().enumerate() {
                let possible = match state {
                    WorldState::Exists => true,
                    _ if made => match state {
                        WorldState::Missing => true,
                        WorldState::Terminal => refused(),
                        WorldState::Several => records.len() >= 2 && !of_a_person && !shared,
                        _ => records.len() >= 2 && !shared,
                    },
                    _ if model.id_param.is_none() && *state != WorldState::Several => false,
                    WorldState::Missing => model.entity.is_some(),
                    // A record in a terminal status (cheap to see, so first),
                    // or one the tool's rules refuse to act on.
                    WorldState::Terminal => {
                        records.iter().any(|id| {
                            model
                                .entity
                                .as_ref()
                                .and_then(|e| world.record(e, id))
                                .and_then(|r| {
                                    r.get("status").and_then(|v| v.as_str()).map(str::to_owned)
                                })
                                .is_some_and(|st| TERMINAL_STATUSES.contains(&st.as_str()))
                        }) || refused()
                    }
                    WorldState::Several => records.len() >= 2 && !of_a_person && !shared,
                    WorldState::SomeoneElse => records.len() >= 2 && !shared,
                };
                // A hand-off passes the person on, whoever's record the case
                // names: never played on someone else's record or on a
                // choice between records, where its right outcome would be
                // no hand-off. (A missing or closed record is still played.)
                let hands_off = spec
                    .tool(&model.name)
                    .and_then(|tool| {
                        crate::writer::handoff_recipient(&tool.description, &tool.name)
                    })
                    .is_some();
                let possible = possible
                    && !(hands_off
                        && matches!(state, WorldState::SomeoneElse | WorldState::Several));
                if !possible {
                    forbidden.push(((TOOL, t), (STATE, s)));
                }
            }
            for (r, rule) in rules.iter().enumerate() {
                if !rule.tools.is_empty() && !rule.tools.contains(&model.name) {
                    forbidden.push(((TOOL, t), (RULE, r)));
                }
            }
        }
        // A rule that hands an action off past a bound is played where the
        // action would otherwise go through: the person's own record, as it is.
        for (r, rule) in rules.iter().enumerate() {
            if matches!(&rule.detail, sparring_reading::policy::Detail::Escalate { bounds, .. } if !bounds.is_empty())
            {
                for s in 1..WORLD_STATES.len() {
                    forbidden.push(((RULE, r), (STATE, s)));
                }
            }
        }
        // No tool: the world state is whatever the person says.
        let none = tools.len() - 1;
        for s in 1..WORLD_STATES.len() {
            forbidden.push(((TOOL, none), (STATE, s)));
        }
        // Nor does a rule about some tools bear on it: the person asks for
        // nothing those tools do.
        for (r, rule) in rules.iter().enumerate() {
            if !rule.tools.is_empty() {
                forbidden.push(((TOOL, none), (RULE, r)));
            }
        }
        let required = spec
            .seeds
            .iter()
            .map(|seed| {
                let tool = seed_tool(seed, &models, spec, &world);
                // A seed naming a record its tool's entity does not have
                // ("Where is my order #W7777?") is played in a world
                // without it: not found, never an existing record.
                let state = tool
                    .filter(|&t| names_absent_record(seed, &models[t], &world))
                    .map_or(WorldState::Exists, |_| WorldState::Missing);
                let state = WorldState::ALL.iter().position(|s| *s == state);
                vec![Some(tool.unwrap_or(none)), None, Some(0), state, Some(0)]
            })
            .collect();
        let mut axes = Self {
            tools,
            models,
            rules,
            values,
            forbidden,
            required,
            conditions: ToolCondition::ALL.to_vec(),
            condition_forbidden: Vec::new(),
        };
        axes.apply(&spec.axes)?;
        Ok(axes)
    }

    /// Checks that every policy rule the spec's `axes` pin or forbid is a
    /// rule of its policy, without building the axes (no world): what a
    /// caller checks before a run starts.
    ///
    /// # Errors
    ///
    /// As [`Axes::of`], for a rule the policy does not have.
    pub fn check_rules(
        spec: &Spec,
        reading: &sparring_reading::SpecReading,
    ) -> Result<(), AxesError> {
        let rules = reading.policy().rules();
        let known = |v: &str| v == "none" || rules.iter().any(|r| r.id == v);
        for pair in &spec.axes.forbid {
            for side in [&pair.a, &pair.b] {
                if side.axis == AXIS_NAMES[RULE] && !known(&side.value) {
                    return Err(no_rule(rules, &side.value, &pair.pointer));
                }
            }
        }
        if let Some(pin) = spec.axes.pin(AXIS_NAMES[RULE]) {
            for (i, value) in pin.iter().enumerate() {
                if !known(value) {
                    let pointer = format!("/axes/{}/{i}", AXIS_NAMES[RULE]);
                    return Err(no_rule(rules, value, &pointer));
                }
            }
        }
        Ok(())
    }

    /// Index of a value on a covered axis, before pins.
    fn find(
        &self,
        axis: &str,
        value: &str,
        pointer: &str,
    ) -> Result<Option<(usize, usize)>, AxesError> {
        let Some(a) = AXIS_NAMES.iter().position(|n| *n == axis) else {
            return Ok(None);
        };
        match self.values[a].iter().position(|v| v == value) {
            Some(v) => Ok(Some((a, v))),
            None if a == RULE => Err(no_rule(&self.rules, value, pointer)),
            // INVARIANT: the spec checked every other axis's values.
            None => Ok(None),
        }
    }

    /// Adds the spec's forbidden pairs and applies its pins.
    fn apply(&mut self, given: &AxesSpec) -> Result<(), AxesError> {
        for pair in &given.forbid {
            let left = self.find(&pair.a.axis, &pair.a.value, &pair.pointer)?;
            let right = self.find(&pair.b.axis, &pair.b.value, &pair.pointer)?;
            match (left, right) {
                (Some(one), Some(other)) => {
                    let both = if one.0 < other.0 {
                        (one, other)
                    } else {
                        (other, one)
                    };
                    if !self.forbidden.contains(&both) {
                        self.forbidden.push(both);
                    }
                }
                (Some(one), None) if pair.b.axis == "tool_condition" => {
                    self.condition_forbidden
                        .extend(condition(&pair.b.value).map(|c| (one, c)));
                }
                (None, Some(other)) if pair.a.axis == "tool_condition" => {
                    self.condition_forbidden
                        .extend(condition(&pair.a.value).map(|c| (other, c)));
                }
                _ => {}
            }
        }
        if let Some(pin) = given.pin("tool_condition") {
            self.conditions = pin.iter().filter_map(|v| condition(v)).collect();
        }
        // Old index → new index per covered axis.
        let mut maps: Vec<Vec<Option<usize>>> = Vec::with_capacity(AXIS_NAMES.len());
        for (a, name) in AXIS_NAMES.iter().enumerate() {
            let n = self.values[a].len();
            let Some(pin) = given.pin(name) else {
                maps.push((0..n).map(Some).collect());
                continue;
            };
            let mut map = vec![None; n];
            let mut kept = Vec::with_capacity(pin.len());
            for (new, value) in pin.iter().enumerate() {
                let pointer = format!("/axes/{name}/{new}");
                if let Some((_, old)) = self.find(name, value, &pointer)? {
                    map[old] = Some(kept.len());
                    kept.push(value.clone());
                }
            }
            self.values[a] = kept;
            maps.push(map);
        }
        let at = |(a, v): (usize, usize)| maps[a][v].map(|n| (a, n));
        self.forbidden = self
            .forbidden
            .iter()
            .filter_map(|(x, y)| Some((at(*x)?, at(*y)?)))
            .collect();
        self.condition_forbidden = self
            .condition_forbidden
            .iter()
            .filter_map(|(x, c)| Some((at(*x)?, *c)))
            .collect();
        for row in &mut self.required {
            for (a, cell) in row.iter_mut().enumerate() {
                *cell = cell.and_then(|v| maps[a][v]);
            }
        }
        Ok(())
    }

    /// Whether a sampled tool condition may go with an array row.
    pub fn condition_allowed(&self, row: &[usize], condition: ToolCondition) -> bool {
        self.conditions.contains(&condition)
            && !self
                .condition_forbidden
                .iter()
                .any(|((a, v), c)| *c == condition && row.get(*a) == Some(v))
    }

    /// Values per covered axis.
    pub fn levels(&self) -> Vec<usize> {
        self.values.iter().map(Vec::len).collect()
    }

    /// Forbids `several` with every tool whose entity no owner has two
    /// records of in `world` (owners drawn with the run `seed`, as the
    /// plan draws them): a `several` situation there would not be what it
    /// says. Returns the one warning that says so, naming each entity and
    /// its tools, when any was forbidden (an entity of people, `customers`,
    /// is forbidden without one: a person is one record of it).
    pub fn forbid_impossible_several(
        &mut self,
        world: &World,
        seed: u64,
        spec: &Spec,
    ) -> Option<String> {
        let state = self.values[STATE]
            .iter()
            .position(|v| v == WorldState::Several.as_str())?;
        let mut possible: BTreeMap<String, bool> = BTreeMap::new();
        let mut left_out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (t, tool) in self.values[TOOL].iter().enumerate() {
            let pair = ((TOOL, t), (STATE, state));
            let Some(entity) = self
                .models
                .iter()
                .find(|m| &m.name == tool)
                .and_then(|m| m.entity.clone())
            else {
                continue;
            };
            if self.forbidden.contains(&pair) {
                continue;
            }
            let several = *possible.entry(entity.clone()).or_insert_with(|| {
                let mut counts: BTreeMap<String, u32> = BTreeMap::new();
                world.ids(&entity).iter().any(|id| {
                    crate::identity::owner_of(world, seed, &entity, id).is_some_and(|o| {
                        let n = counts.entry(o.key).or_default();
                        *n += 1;
                        *n >= 2
                    })
                })
            });
            if !several {
                self.forbidden.push(pair);
                // A person owns one profile of themselves: no fixture can
                // fix that, so it is no warning.
                if !crate::identity::is_owner_entity(&entity) {
                    left_out
                        .entry(entity)
                        .or_default()
                        .push(format!("`{tool}`"));
                }
            }
        }
        if left_out.is_empty() {
            return None;
        }
        let what: Vec<String> = left_out
            .iter()
            .map(|(entity, tools)| {
                let from = if spec.fixtures.contains_key(entity) {
                    "the spec's fixtures"
                } else {
                    "the generated records"
                };
                format!(
                    "`{entity}` (tools {}; {from} give no owner two of them)",
                    tools.join(", ")
                )
            })
            .collect();
        Some(format!(
            "`world_state: several` cannot be played for {}: no situation of those tools is drawn with it; hint: give one owner two records in the fixtures",
            what.join(", ")
        ))
    }

    /// The covering array over the axes.
    pub fn grid(&self, seed: u64, effort: Effort) -> Result<CoveringArray, GridError> {
        let mut problem = GridProblem::new(self.levels())
            .with_seed(seed)
            .with_effort(effort);
        for (a, b) in &self.forbidden {
            problem = problem.forbid(*a, *b);
        }
        for row in &self.required {
            problem = problem.require(row.clone());
        }
        CoveringArray::generate(&problem)
    }

    /// The axis values of an array row, by axis name.
    pub fn named(&self, row: &[usize]) -> Vec<(&'static str, String)> {
        AXIS_NAMES
            .iter()
            .zip(row)
            .zip(&self.values)
            .map(|((name, v), values)| (*name, values.get(*v).cloned().unwrap_or_default()))
            .collect()
    }

    /// The rule with this id.
    pub fn rule(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.id == id)
    }
}

/// Words that name what a tool does, for matching rules and seeds: the verb
/// of an acting tool, plus the words of its name that are not the entity.
fn action_words(model: &ToolModel) -> Vec<String> {
    let mut words = Vec::new();
    match &model.operation {
        Operation::StateChange(verb) => words.push(verb.clone()),
        Operation::Update => {
            words.extend(["change", "update", "modify"].map(str::to_owned));
            for part in model.name.split('_').skip(1) {
                if part.len() > 3
                    && Some(part) != model.entity.as_deref().map(|e| e.trim_end_matches('s'))
                {
                    words.push(part.to_owned());
                }
            }
        }
        Operation::Create => words.extend(["book", "create", "new"].map(str::to_owned)),
        Operation::Read | Operation::Other => {}
    }
    words
}

/// Whether a seed ask names, by an id shaped like the ids of its tool's
/// entity (`#W7777` beside `#W1001`: [`crate::person::same_shape`]), a
/// record the world does not have. The id is the one the
/// person repeats ([`crate::person::Facts::for_seed`]); an entity without
/// records, or an id of another shape, says nothing.
pub fn names_absent_record(seed: &str, model: &ToolModel, world: &World) -> bool {
    let (Some(entity), Some(_)) = (&model.entity, &model.id_param) else {
        return false;
    };
    let facts = crate::person::Facts::for_seed(seed, "");
    let Some(id) = facts.known.get("id") else {
        return false;
    };
    let ids = world.ids(entity);
    world.record(entity, id).is_none() && ids.iter().any(|known| same_shape(known, id))
}

/// The tool a seed ask is about: the acting tool whose verb the ask uses
/// (its name's, its description's first word, "Move money …"), the one on
/// the records the ask names by id first; else a read of a record the ask
/// names (the one whose noun it uses, `balance` → `get_balance`, else the
/// entity's plain read). `None`: the ask names no action and no record.
pub fn seed_tool(seed: &str, models: &[ToolModel], spec: &Spec, world: &World) -> Option<usize> {
    let words: Vec<String> = seed
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    // The entities of the records the ask names by id.
    let tokens: Vec<&str> = seed
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '?' | '!' | '(' | ')' | ';'))
        .map(|t| t.trim_end_matches(['.', ':']))
        .filter(|t| t.chars().any(|c| c.is_ascii_digit()))
        .collect();
    // A token no record has, shaped like an entity's ids (`#W7777` beside
    // `#W1001`), names a record of that entity the world lacks.
    let entities = world.entities();
    let ids: Vec<Vec<String>> = entities.iter().map(|e| world.ids(e)).collect();
    let mut named: Vec<String> = Vec::new();
    for t in &tokens {
        let exact: Vec<usize> = (0..entities.len())
            .filter(|&e| ids[e].iter().any(|id| id == t))
            .collect();
        let by_shape = || {
            (0..entities.len())
                .filter(|&e| ids[e].iter().any(|id| same_shape(id, t)))
                .collect::<Vec<_>>()
        };
        let found = if exact.is_empty() { by_shape() } else { exact };
        for e in found {
            if !named.contains(&entities[e]) {
                named.push(entities[e].clone());
            }
        }
    }
    // A word that names a record ("my booking") is no use of the verb it
    // starts with (`book`).
    let nouns: Vec<String> = world.entities().iter().map(|e| singular(e)).collect();
    let uses = |verb: &str| {
        let stem = verb.trim_end_matches('e');
        stem.len() >= 3
            && words.iter().any(|w| {
                w.starts_with(stem)
                    && w.len() <= verb.len() + 3
                    && !nouns.iter().any(|n| *n == singular(w))
            })
    };
    // The noun of what a tool makes, used as a verb ("refill my
    // prescription" asks `request_refill` for a new refill).
    let as_verb = |noun: &str| {
        words.windows(2).any(|w| {
            w[0] == noun
                && [
                    "my", "a", "an", "the", "this", "that", "it", "me", "our", "his", "her",
                    "their",
                ]
                .contains(&w[1].as_str())
        })
    };
    let on_named = |m: &ToolModel| m.entity.as_ref().is_some_and(|e| named.contains(e));
    let mut best: Option<(u32, usize)> = None;
    for (i, m) in models.iter().enumerate() {
        let described = spec
            .tool(&m.name)
            .and_then(|t| t.description.split_whitespace().next())
            .map(str::to_lowercase)
            .unwrap_or_default();
        let score = if m.acts() || m.money.is_some() {
            let mut verbs = action_words(m);
            verbs.push(m.verb.clone());
            verbs.push(described);
            let makes = m.operation == Operation::Create
                && m.entity.as_deref().is_some_and(|e| as_verb(&singular(e)));
            if !makes && !verbs.iter().any(|v| uses(v)) {
                continue;
            }
            4 + u32::from(on_named(m))
        } else if m.operation == Operation::Read && m.id_param.is_some() && on_named(m) {
            let noun = m.head.as_deref().is_some_and(|h| {
                h.split('_')
                    .all(|part| words.iter().any(|w| singular(w) == singular(part)))
            });
            // A read of a field the ask names (`balance`) over the plain
            // read of its record.
            let field =
                noun && m.head.as_deref().map(singular) != m.entity.as_deref().map(singular);
            1 + 2 * u32::from(noun) + u32::from(field)
        } else {
            continue;
        };
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, i));
        }
    }
    best.map(|(_, i)| i)
}

/// What a list of asks never touches.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Gap {
    /// Tools no ask names the action or object of.
    pub tools: Vec<String>,
    /// Rules no ask comes near.
    pub rules: Vec<Rule>,
}

const STOP: &[&str] = &[
    "the",
    "and",
    "that",
    "with",
    "your",
    "this",
    "have",
    "from",
    "they",
    "their",
    "them",
    "what",
    "when",
    "will",
    "must",
    "never",
    "always",
    "only",
    "before",
    "unless",
    "should",
    "customer",
    "customers",
    "user",
    "users",
    "agent",
    "tool",
    "tools",
    "about",
    "into",
    "than",
    "then",
    "there",
    "which",
    "while",
    "would",
    "could",
    "does",
    "done",
    "make",
    "sure",
];

fn content_words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.len() >= 4 && !STOP.contains(w))
        .map(str::to_owned)
        .collect()
}

/// Which tools and policy rules none of `asks` touches.
///
/// An ask touches a tool when it uses the tool's action word (its verb, or
/// for reads the entity and a word of the tool's name), and a rule when it
/// shares at least two content words with it (words of four letters or
/// more, common function words aside).
///
/// # Errors
///
/// As [`Axes::of`].
pub fn coverage_gap(spec: &Spec, asks: &[String]) -> Result<Gap, AxesError> {
    let axes = Axes::of(spec)?;
    let ask_words: Vec<std::collections::BTreeSet<String>> = asks
        .iter()
        .map(|a| content_words(a).into_iter().collect())
        .collect();
    let lowered: Vec<String> = asks.iter().map(|a| a.to_lowercase()).collect();
    let mut gap = Gap::default();
    for model in &axes.models {
        let mut words = action_words(model);
        if words.is_empty() {
            words = model
                .name
                .split('_')
                .filter(|w| w.len() >= 4)
                .map(str::to_owned)
                .collect();
        }
        let touched = lowered
            .iter()
            .any(|a| words.iter().any(|w| a.contains(w.as_str())));
        if !touched {
            gap.tools.push(model.name.clone());
        }
    }
    for rule in &axes.rules {
        let words: std::collections::BTreeSet<String> =
            content_words(&rule.text).into_iter().collect();
        let need = words.len().min(2);
        let touched = ask_words
            .iter()
            .any(|a| a.intersection(&words).count() >= need && need > 0);
        if !touched {
            gap.rules.push(rule.clone());
        }
    }
    Ok(gap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_pair_with_the_tools_they_cover() {
        let spec = refund_spec(&serde_json::json!({})).unwrap();
        let axes = Axes::of(&spec).unwrap();
        let ids: Vec<&str> = axes.rules.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(
            ids,
            vec![
                "confirm-amount-before-issuing-refund",
                "never-cancel-shipped-orders"
            ]
        );
        assert_eq!(axes.values[1][0], "confirm-amount-before-issuing-refund");
        // The refund rule meets refund_order, not cancel_order, nor the
        // situation that needs no tool; `none` goes with rule `none` only.
        assert!(axes.forbidden.contains(&((0, 1), (1, 0))));
        assert!(!axes.forbidden.contains(&((0, 0), (1, 0))));
        assert!(axes.forbidden.contains(&((0, 2), (1, 0))));
        assert!(axes.forbidden.contains(&((0, 2), (1, 1))));
        assert!(!axes.forbidden.contains(&((0, 2), (1, 2))));
    }

    fn refund_spec(axes: &serde_json::Value) -> Result<Spec, sparring_types::SpecError> {
        Spec::from_value(&serde_json::json!({
            "name": "s",
            "system_prompt": "You must confirm the amount before issuing a refund. Never cancel shipped orders.",
            "tools": [
                {"name": "refund_order", "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}}},
                {"name": "cancel_order", "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}}},
            ],
            "seeds": ["Please refund my order."],
            "axes": axes,
        }))
    }

    #[test]
    fn pins_remap_values_constraints_and_required_rows() {
        let plain = Axes::of(&refund_spec(&serde_json::json!({})).unwrap()).unwrap();
        let spec = refund_spec(&serde_json::json!({
            "stance": ["manipulative", "hurried"],
            "tool": ["cancel_order", "none"],
            "forbid": [{"stance": "hurried", "history": "fresh"},
                       {"tool": "none", "tool_condition": "timeout"}],
        }))
        .unwrap();
        let axes = Axes::of(&spec).unwrap();
        assert_eq!(axes.values[2], ["manipulative", "hurried"]);
        assert_eq!(axes.values[0], ["cancel_order", "none"]);
        // The seed's tool (refund_order) and stance (cooperative) are pinned
        // away: those cells of its required row are free.
        assert_eq!(plain.required[0][0], Some(0));
        assert_eq!(axes.required[0], vec![None, None, None, Some(0), Some(0)]);
        assert!(axes.forbidden.contains(&((2, 1), (4, 0))));
        // Derived constraints follow the tools to their new indices.
        assert!(axes.forbidden.contains(&((0, 1), (3, 1))));
        assert!(!axes.condition_allowed(&[1, 0, 0, 0, 0], ToolCondition::Timeout));
        assert!(axes.condition_allowed(&[0, 0, 0, 0, 0], ToolCondition::Timeout));
        let grid = axes.grid(3, Effort::default()).unwrap();
        assert!(grid.rows.iter().all(|r| !(r[2] == 1 && r[4] == 0)));
        assert_eq!(grid.pairs_covered, grid.pairs_planned);
        let missing = refund_spec(
            &serde_json::json!({"forbid": [{"policy_rule": "never-cancel-shiped-orders", "stance": "hurried"}]}),
        )
        .unwrap();
        let e = Axes::of(&missing).unwrap_err();
        assert_eq!(e.pointer, "/axes/forbid/0");
        assert!(
            e.message.contains("no rule `never-cancel-shiped-orders`"),
            "{e}"
        );
        assert!(
            e.message
                .contains("did you mean `never-cancel-shipped-orders`?"),
            "{e}"
        );
    }

    #[test]
    fn finds_what_asks_never_touch() {
        let spec = Spec::from_value(&serde_json::json!({
            "name": "s",
            "system_prompt": "You must confirm the amount before issuing a refund. Never cancel shipped orders.",
            "tools": [
                {"name": "refund_order", "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}}},
                {"name": "cancel_order", "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}}},
            ],
        }))
        .unwrap();
        let gap = coverage_gap(
            &spec,
            &["Please refund order 12, confirm the amount first.".to_owned()],
        )
        .unwrap();
        assert_eq!(gap.tools, vec!["cancel_order".to_owned()]);
        assert_eq!(gap.rules.len(), 1);
        assert!(gap.rules[0].text.starts_with("Never cancel"));
    }

    #[test]
    fn a_seed_using_what_a_tool_makes_as_a_verb_asks_that_tool() {
        let id =
            |p: &str| serde_json::json!({"type": "object", "properties": {p: {"type": "string"}}});
        let spec = Spec::from_value(&serde_json::json!({
            "name": "rx",
            "system_prompt": "Help patients.",
            "tools": [
                {"name": "get_prescription", "inputSchema": id("prescription_id")},
                {"name": "request_refill", "description": "Request a refill of an active prescription.",
                 "inputSchema": {"type": "object", "properties": {
                     "prescription_id": {"type": "string"}, "days_supply": {"type": "integer"}}}},
                {"name": "cancel_refill", "inputSchema": id("refill_id")},
            ],
            "fixtures": {
                "prescriptions": [{"prescription_id": "RX-4001", "status": "active"}],
                "refills": [{"refill_id": "RF-7001", "prescription_id": "RX-4001", "status": "pending"}],
            },
        }))
        .unwrap();
        let world = World::new(&spec, 0);
        let models: Vec<ToolModel> = world.models().to_vec();
        let tool =
            |ask: &str| seed_tool(ask, &models, &spec, &world).map(|i| models[i].name.clone());
        for (ask, want) in [
            (
                "Could you refill my prescription RX-4001 for 30 days?",
                "request_refill",
            ),
            // The noun alone is no request to make one.
            (
                "What is the status of prescription RX-4001?",
                "get_prescription",
            ),
            ("Please cancel my refill RF-7001.", "cancel_refill"),
        ] {
            assert_eq!(tool(ask).as_deref(), Some(want), "{ask}");
        }
    }
}
