//! The world's state and how it answers calls.

use crate::calc;
use crate::fault::{fault_error, fault_garble};
use crate::generate::{self, Ctx};
use crate::refuse::ParamEcho;
use crate::result::{ErrorKind, Records, ToolResult};
use crate::rulebook::{self, ToolRules};
use crate::shape::{IdShape, description_example};
use serde_json::{Map, Value, json};
use sparring_reading::SpecReading;
use sparring_reading::owners::Owners;
use sparring_reading::tool::{Operation, ToolModel, status_after};
use sparring_types::defaults::world::SHARED_OWNER_SHARE;
use sparring_types::seed::Stream;
use sparring_types::{
    FaultKind, FaultRecord, FaultSource, IdField, Spec, ToolSpec, WorldOptions, singular,
};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};

type Record = Map<String, Value>;

/// Statuses after which a record takes no further action: the world refuses
/// to act on such a record, and the planner's world-state axis reads them the
/// same way.
pub const TERMINAL_STATUSES: &[&str] = &[
    "cancelled",
    "canceled",
    "refunded",
    "deleted",
    "closed",
    "returned",
    "removed",
    "voided",
    "archived",
    "rejected",
];

/// Arguments that page a list rather than filter it.
const PAGING: &[&str] = &[
    "limit",
    "page",
    "offset",
    "page_size",
    "max_results",
    "cursor",
];

/// Arguments that identify a person: a search by them finds existing
/// records or nothing, never made-up ones.
const IDENTIFYING: &[&str] = &[
    "email",
    "first_name",
    "last_name",
    "full_name",
    "name",
    "zip",
    "dob",
    "phone",
    "phone_number",
    "ssn",
    "password",
    "username",
    "date_of_birth",
    "postal_code",
];

/// Field names that mean the same thing in a search and a record.
const ALIASES: &[(&str, &str)] = &[
    ("full_name", "name"),
    ("phone_number", "phone"),
    ("email_address", "email"),
    ("zip", "zip_code"),
    ("zip", "postal_code"),
    ("dob", "date_of_birth"),
];

/// One entity: where its records come from and what they look like.
#[derive(Clone, Debug)]
pub(crate) struct Entity {
    /// The field holding a record's id.
    pub id_key: String,
    /// What ids look like.
    pub shape: IdShape,
    /// Where the shape came from (`fixtures`, `description of get_order.order_id`, `default`).
    pub shape_from: String,
    /// Whether the spec gave its records (else the world generates them).
    pub fixtures: bool,
    /// The output schema records are shaped like: (tool index, JSON pointer).
    pub schema: Option<(usize, String)>,
    /// Fields of generated records: (name, tool index whose parameter
    /// schema shapes it).
    pub fields: Vec<(String, usize)>,
    /// Fields that hold another entity's id (`customer_id` → `customers`).
    pub owners: Vec<(String, String)>,
    /// Statuses a live record may have (from tool names).
    pub statuses: Vec<String>,
    /// The entity's place in the sorted list of entities: its cell of a
    /// rollout's generated ids.
    pub slot: usize,
}

/// What every copy of a world shares: built once per spec.
#[derive(Debug)]
struct Shared {
    tools: Vec<ToolSpec>,
    models: Vec<ToolModel>,
    by_name: HashMap<String, usize>,
    validators: Vec<Option<jsonschema::Validator>>,
    echoes: Vec<Vec<ParamEcho>>,
    entities: BTreeMap<String, Entity>,
    /// Shared with every rollout's memory and answers: a fixture is
    /// copied only when a rollout changes it.
    fixtures: BTreeMap<String, BTreeMap<String, Arc<Record>>>,
    known_values: HashSet<String>,
    options: WorldOptions,
    /// What each tool obeys, in the order of `tools`.
    rules: Vec<ToolRules>,
    /// Status values each entity (singular) has, as the rules learned them.
    statuses: BTreeMap<String, Vec<String>>,
    /// Who owns what: which entities are people, which fields point at
    /// whose records.
    owners: Owners,
}

/// Worlds built from a spec since the process started ([`World::built`]).
static WORLDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A sandbox world for one rollout.
///
/// Cloning is cheap (the spec's tools, validators and fixtures are shared);
/// each clone has its own memory.
#[derive(Clone, Debug)]
pub struct World {
    shared: Arc<Shared>,
    seed: u64,
    /// entity → ids the world generated for it (entities without fixtures),
    /// each set made on first use: a rollout pays only for the entities it
    /// touches. The sets depend on (seed, entity) only.
    /// Indexed by [`Entity::slot`]: one allocation per rollout, not a
    /// map of names.
    generated: Arc<Vec<OnceLock<Generated>>>,
    /// entity → id → the record as it stands, for every record created,
    /// changed or generated in this rollout. Shared with the answers that
    /// show it (and with the fixtures until changed): a write copies a
    /// record only while an answer still holds it.
    overlay: BTreeMap<String, BTreeMap<String, Arc<Record>>>,
    created: u64,
    calls: u64,
    faults: Vec<FaultRecord>,
    /// (tool index, record id) of every call a once-only tool made.
    once: BTreeSet<(usize, String)>,
    /// The share of calls that fault at random: `options.fault_rate`, or 0
    /// in a copy made [`World::without_random_faults`].
    fault_rate: f64,
}

/// The records a rollout generates for one entity: their ids, and the
/// records a later one takes its person from (see [`World::share_owner`]),
/// kept so that person is not generated twice. Both depend on (seed,
/// entity) only, so clones of a world share them.
#[derive(Debug)]
struct Generated {
    ids: BTreeSet<String>,
    /// By position among `ids`: the record as generated, for the even
    /// positions whose next record shares their person.
    people: Vec<OnceLock<Record>>,
}

/// The tool name a scheduled fault carries when the situation has no tool:
/// it fires on the rollout's first call of any tool.
pub const ANY_TOOL: &str = "none";

fn describe_entity_source(tool: &ToolSpec, param: &str) -> Option<(IdShape, String)> {
    let schema = tool.parameter(param)?;
    let description = schema.get("description").and_then(Value::as_str)?;
    let example = description_example(description)?;
    Some((
        IdShape::from_example(&example),
        format!("the example in `{}.{param}`", tool.name),
    ))
}

impl World {
    /// A world holding the spec's fixtures, with its own seed and the
    /// spec's `options.world`.
    pub fn new(spec: &Spec, seed: u64) -> Self {
        Self::with_options(spec, seed, Self::spec_options(spec))
    }

    /// The world options a spec sets (`options.world`), the rest defaults.
    pub fn spec_options(spec: &Spec) -> WorldOptions {
        spec.options
            .world
            .as_ref()
            .map(sparring_types::WorldPatch::resolve)
            .unwrap_or_default()
    }

    /// A world with explicit options (the run's resolved `options.world`),
    /// reading the spec itself.
    pub fn with_options(spec: &Spec, seed: u64, options: WorldOptions) -> Self {
        Self::with_reading(spec, &SpecReading::lenient(spec), seed, options)
    }

    /// A world on a spec read already: what a run builds once, from the
    /// reading it shares with its plan, person and checks.
    pub fn with_reading(
        spec: &Spec,
        reading: &SpecReading,
        seed: u64,
        options: WorldOptions,
    ) -> Self {
        WORLDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let models = reading.models().to_vec();
        let readings = reading.preconditions().to_vec();
        let rules = rulebook::compile(&spec.tools, &models, readings, &spec.world);
        // Statuses as the records write them (`Suspended`), so a status the
        // words set is written the same way (`Active`, not `active`).
        let mut statuses: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (entity, records) in &spec.fixtures {
            let list = statuses.entry(singular(entity)).or_default();
            for s in records
                .iter()
                .filter_map(|r| r.get("status"))
                .filter_map(Value::as_str)
            {
                if !list.iter().any(|x| x == s) {
                    list.push(s.to_owned());
                }
            }
        }
        let mut fixtures: BTreeMap<String, BTreeMap<String, Arc<Record>>> = BTreeMap::new();
        let mut known_values = HashSet::new();
        let mut entities: BTreeMap<String, Entity> = BTreeMap::new();
        let id_fields = spec.id_fields();
        for (entity, items) in &spec.fixtures {
            let field = id_fields
                .get(entity)
                .cloned()
                .unwrap_or_else(|| IdField::default_for(entity));
            let store = fixtures.entry(entity.clone()).or_default();
            let id_key = field.field_in(items).to_owned();
            let mut first_id = None;
            for item in items {
                if let Some(fields) = item.as_object()
                    && let Some(id) = field.id_of(fields)
                {
                    if first_id.is_none() {
                        first_id = Some(id.clone());
                    }
                    collect_values(item, &mut known_values);
                    store.insert(id, Arc::new(fields.clone()));
                }
            }
            let example = first_id.unwrap_or_else(|| "ID-00000000".to_owned());
            entities.insert(
                entity.clone(),
                Entity {
                    id_key,
                    shape: IdShape::from_example(&example),
                    shape_from: "the spec's fixtures".to_owned(),
                    fixtures: true,
                    schema: None,
                    fields: Vec::new(),
                    owners: Vec::new(),
                    statuses: Vec::new(),
                    slot: 0,
                },
            );
        }
        // Entities the tools name, with what the tools say about them.
        for (i, (model, tool)) in models.iter().zip(&spec.tools).enumerate() {
            let mut named: Vec<(String, Option<String>)> = Vec::new();
            if let Some(e) = &model.entity {
                named.push((e.clone(), model.id_param.clone()));
            }
            for (p, e) in &model.references {
                named.push((e.clone(), Some(p.clone())));
            }
            for (entity, param) in named {
                let from_description = param
                    .as_deref()
                    .and_then(|p| describe_entity_source(tool, p));
                let e = entities.entry(entity.clone()).or_insert_with(|| Entity {
                    id_key: format!("{}_id", singular(&entity)),
                    shape: IdShape::default_for(&singular(&entity), options.id_digits),
                    shape_from: "the default".to_owned(),
                    fixtures: false,
                    schema: None,
                    fields: Vec::new(),
                    owners: Vec::new(),
                    statuses: Vec::new(),
                    slot: 0,
                });
                if !e.fixtures
                    && e.shape_from == "the default"
                    && let Some((shape, from)) = from_description
                {
                    e.shape = shape;
                    e.shape_from = from;
                }
            }
            let Some(entity) = &model.entity else {
                continue;
            };
            let Some(e) = entities.get_mut(entity) else {
                continue;
            };
            if let Some(s) = &model.requires_status
                && !e.statuses.contains(s)
            {
                e.statuses.push(s.clone());
            }
            // Fields: what reads search by, updates set and creates give.
            let takes_fields = matches!(
                model.operation,
                Operation::Read | Operation::Update | Operation::Create
            );
            if takes_fields {
                for p in tool.parameter_names() {
                    if Some(p) == model.id_param.as_deref()
                        || PAGING.contains(&p)
                        || e.fields.iter().any(|(f, _)| f == p)
                    {
                        continue;
                    }
                    e.fields.push((p.to_owned(), i));
                }
            }
            for (p, other) in &model.references {
                if !e.owners.iter().any(|(f, _)| f == p) {
                    e.owners.push((p.clone(), other.clone()));
                }
            }
            // An output schema shapes the entity's records.
            if e.schema.is_none()
                && let Some(out) = &tool.output_schema
            {
                e.schema = sparring_reading::models::record_pointer(out).map(|ptr| (i, ptr));
            }
        }
        for (entity, e) in &mut entities {
            if let Some((tool, ptr)) = &e.schema
                && let Some(schema) = spec.tools[*tool]
                    .output_schema
                    .as_ref()
                    .and_then(|s| s.pointer(ptr))
                && let Some(props) = schema.get("properties").and_then(Value::as_object)
                && !props.contains_key(&e.id_key)
                && props.contains_key("id")
                && !e.fixtures
            {
                "id".clone_into(&mut e.id_key);
            }
            if e.statuses.is_empty()
                && models.iter().any(|m| {
                    m.entity.as_deref() == Some(entity.as_str())
                        && matches!(m.operation, Operation::StateChange(_))
                })
            {
                e.statuses.push("active".to_owned());
            }
        }
        for (slot, e) in entities.values_mut().enumerate() {
            e.slot = slot;
        }
        let validators = spec
            .tools
            .iter()
            .map(|t| sparring_types::arguments_validator(&t.parameters).ok())
            .collect();
        let echoes = spec
            .tools
            .iter()
            .zip(&models)
            .zip(&rules)
            .map(|((t, m), r)| {
                t.parameter_names()
                    .into_iter()
                    .map(|p| {
                        let mut echo = ParamEcho::new(p, t.parameter(p));
                        // Values named in words are checked as an enum.
                        echo.enumerated |= r.enums.iter().any(|e| e.param == p);
                        echo.looks_like = m
                            .entity_of(p)
                            .and_then(|e| {
                                fixtures
                                    .get(e)
                                    .and_then(|f| f.keys().next().cloned())
                                    .or_else(|| {
                                        entities.get(e).map(|x| x.shape.example().to_owned())
                                    })
                            })
                            .or_else(|| format_example(t.parameter(p)));
                        echo
                    })
                    .collect()
            })
            .collect();
        let by_name = spec
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), i))
            .collect();
        let owners = Owners::read(spec);
        let shared = Arc::new(Shared {
            owners,
            tools: spec.tools.clone(),
            models,
            by_name,
            validators,
            echoes,
            entities,
            fixtures,
            known_values,
            options,
            rules,
            statuses,
        });
        let generated = Arc::new(lazy_ids(&shared));
        let fault_rate = shared.options.fault_rate;
        Self {
            shared,
            seed,
            generated,
            overlay: BTreeMap::new(),
            created: 0,
            calls: 0,
            faults: Vec::new(),
            once: BTreeSet::new(),
            fault_rate,
        }
    }

    /// The same world with no random faults (scheduled ones still fire):
    /// what a plan reads records from and tries goals on. A copy, not a
    /// new reading of the spec.
    #[must_use]
    pub fn without_random_faults(mut self) -> Self {
        self.fault_rate = 0.0;
        self
    }

    /// The share of calls that fault at random in this world.
    pub fn fault_rate(&self) -> f64 {
        self.fault_rate
    }

    /// How many worlds this process has built from a spec (copies and
    /// reseeded worlds not counted): a diagnostic, so a test can hold a run
    /// to building its world once.
    pub fn built() -> u64 {
        WORLDS.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The same spec's world, fresh, with another seed: generated ids and
    /// records change, fixtures stay as given, memory and faults are
    /// cleared. Cheaper than building the world again for every rollout.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self.generated = Arc::new(lazy_ids(&self.shared));
        self.overlay.clear();
        self.created = 0;
        self.calls = 0;
        self.faults.clear();
        self.once.clear();
        self
    }

    /// The world's seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The ids generated for `entity` (made on first use), if the world
    /// generates its records.
    fn generated_ids(&self, entity: &str) -> Option<&BTreeSet<String>> {
        self.generated_cell(entity).map(|g| &g.ids)
    }

    /// The entity's generated ids and kept records (made on first use).
    fn generated_cell(&self, entity: &str) -> Option<&Generated> {
        let e = self.shared.entities.get(entity)?;
        if e.fixtures {
            return None;
        }
        let cell = self.generated.get(e.slot)?;
        Some(cell.get_or_init(|| {
            let ids = generate_ids(&self.shared, self.seed, entity, e);
            let people = ids.iter().map(|_| OnceLock::new()).collect();
            Generated { ids, people }
        }))
    }

    /// The options the world runs with.
    pub fn options(&self) -> &WorldOptions {
        &self.shared.options
    }

    /// What the world read out of each tool.
    pub fn models(&self) -> &[ToolModel] {
        &self.shared.models
    }

    /// Who owns what in this world (`sparring_reading::owners`).
    pub fn owners(&self) -> &Owners {
        &self.shared.owners
    }

    /// The field an entity's records hold their id in (`policy_number`).
    pub fn id_field(&self, entity: &str) -> Option<&str> {
        self.shared.entities.get(entity).map(|e| e.id_key.as_str())
    }

    /// The names of every entity the world knows, sorted.
    pub fn entities(&self) -> Vec<String> {
        self.shared.entities.keys().cloned().collect()
    }

    /// The ids of an entity's records, sorted: fixtures, generated ones, and
    /// those created in this rollout.
    pub fn ids(&self, entity: &str) -> Vec<String> {
        // Sorted and deduplicated by reference, then copied once: a search
        // lists them on every call.
        // Each source is sorted already: merged, not sorted again.
        let fixtures = self.shared.fixtures.get(entity).map(BTreeMap::keys);
        let generated = self.generated_ids(entity).map(BTreeSet::iter);
        let overlay = self.overlay.get(entity).map(BTreeMap::keys);
        let first = union_sorted(
            fixtures.into_iter().flatten(),
            generated.into_iter().flatten(),
        );
        union_sorted(first.into_iter(), overlay.into_iter().flatten())
            .into_iter()
            .cloned()
            .collect()
    }

    /// One record, as it stands now (fixture, generated or changed).
    pub fn record(&self, entity: &str, id: &str) -> Option<Record> {
        self.record_ref(entity, id).map(Cow::into_owned)
    }

    /// [`World::record`] without a copy of a record the world holds.
    fn record_ref(&self, entity: &str, id: &str) -> Option<Cow<'_, Record>> {
        if let Some(r) = self.overlay.get(entity).and_then(|o| o.get(id)) {
            return Some(Cow::Borrowed(&**r));
        }
        if let Some(r) = self.shared.fixtures.get(entity).and_then(|f| f.get(id)) {
            return Some(Cow::Borrowed(&**r));
        }
        if self.generated_ids(entity).is_some_and(|g| g.contains(id)) {
            return Some(Cow::Owned(self.generate_record(entity, id, None)));
        }
        None
    }

    /// Why `tool` may not act on record `id` as the record stands (a state
    /// rule, a repeat of a transition, a terminal status), or `None` when its
    /// state allows the call. Only the record's own state is weighed, not
    /// the call's other arguments; a read, or a tool that names no record,
    /// is never refused here. The plan uses it to play the happy path where
    /// a situation's record exists, and the world's refusals where it is in
    /// a state the tool cannot act on.
    pub fn state_refuses(&self, tool: &str, id: &str) -> Option<String> {
        let &index = self.shared.by_name.get(tool)?;
        let model = &self.shared.models[index];
        let (Some(entity), Some(param)) = (&model.entity, &model.id_param) else {
            return None;
        };
        if !model.acts() {
            return None;
        }
        let current = self.record(entity, id)?;
        let mut args = Record::new();
        args.insert(param.clone(), Value::String(id.to_owned()));
        // A throwaway copy: the check may materialise records.
        let mut scratch = self.clone();
        scratch
            .state_refusal(index, model, &args, Some((entity, id, &current)))?
            .into_error_message()
    }

    /// Why the rules refuse `tool`, a tool that makes a record, on the
    /// record `id` its `param` refers to (a refill of an expired
    /// prescription), if they do; `None` for any other tool.
    pub fn create_refuses(&self, tool: &str, param: &str, id: &str) -> Option<String> {
        let mut args = Record::new();
        args.insert(param.to_owned(), Value::String(id.to_owned()));
        self.create_refuses_with(tool, &args)
    }

    /// As [`World::create_refuses`], with the call's arguments as given
    /// (the rules that compare two of them, an order's buyer against the
    /// buyer named, see both); the schema is not checked.
    pub fn create_refuses_with(&self, tool: &str, args: &Record) -> Option<String> {
        let &index = self.shared.by_name.get(tool)?;
        let model = &self.shared.models[index];
        if model.operation != Operation::Create {
            return None;
        }
        // A throwaway copy: the check may materialise records.
        let mut scratch = self.clone();
        scratch
            .unnamed_refusal(index, model, args)?
            .into_error_message()
    }

    /// The id of `entity`'s record that `given` names as people write ids
    /// (`07700900123` or `+44 7700 900123` for `07700 900123`, `bw-4001`
    /// for `BW-4001`; [`crate::same_identifier`]): `given` itself when a
    /// record has it.
    pub fn resolve(&self, entity: &str, given: &str) -> Option<String> {
        if self.exists(entity, given) {
            return Some(given.to_owned());
        }
        self.ids(entity)
            .into_iter()
            .find(|id| crate::matching::same_identifier(given, id))
    }

    fn exists(&self, entity: &str, id: &str) -> bool {
        self.overlay.get(entity).is_some_and(|o| o.contains_key(id))
            || self
                .shared
                .fixtures
                .get(entity)
                .is_some_and(|f| f.contains_key(id))
            || self.generated_ids(entity).is_some_and(|g| g.contains(id))
    }

    /// Schedules a fault on the first call to `tool`; with [`ANY_TOOL`]
    /// (`none`, a situation without a tool), on the first call of any tool.
    pub fn schedule(&mut self, tool: &str, kind: FaultKind) {
        self.faults.push(FaultRecord::scheduled(tool, kind));
    }

    /// Schedules a situation's faults (its scheduled ones; a row's random
    /// and `execute` faults are not the situation's and are left out).
    pub fn schedule_all(&mut self, faults: &[FaultRecord]) {
        for f in faults.iter().filter(|f| f.is_scheduled()) {
            self.schedule(&f.tool, f.kind);
        }
    }

    /// Every fault of this rollout as the row records it: the scheduled
    /// ones (fired or not) and the random ones that fired.
    pub fn faults(&self) -> &[FaultRecord] {
        &self.faults
    }

    /// Counts one call to `tool` and decides whether it breaks: a
    /// scheduled fault on the tool's first call, else a random one at
    /// `fault_rate`. The fault is recorded. Used by [`World::call`] and by
    /// the engine before it hands a call to the caller's world.
    pub fn draw_fault(&mut self, tool: &str) -> Option<FaultKind> {
        self.calls += 1;
        let call = self.calls;
        if let Some(f) = self
            .faults
            .iter_mut()
            .find(|f| f.is_scheduled() && (f.tool == tool || f.tool == ANY_TOOL) && !f.has_fired())
        {
            f.fired = Some(true);
            f.call = Some(call);
            if f.tool == ANY_TOOL {
                f.fired_on = Some(tool.to_owned());
            }
            return Some(f.kind);
        }
        let rate = self.fault_rate;
        if rate <= 0.0 {
            return None;
        }
        let mut stream = Stream::derive(self.seed, "world/fault", &[call]);
        if !stream.chance(rate) {
            return None;
        }
        let kind = FaultKind::draw(&self.shared.options, &mut stream)?;
        self.faults
            .push(FaultRecord::fired(tool, kind, FaultSource::Random, call));
        Some(kind)
    }

    /// Records a fault that did not come from the world (the caller's world
    /// failed to answer): counted as a `server_error` with `source`.
    pub fn record_fault(&mut self, tool: &str, source: FaultSource) {
        self.faults.push(FaultRecord::fired(
            tool,
            FaultKind::ServerError,
            source,
            self.calls,
        ));
    }

    /// Answers one call and remembers its effect. Faults come first.
    pub fn call(&mut self, tool: &str, arguments: &Value) -> ToolResult {
        let Some(&index) = self.shared.by_name.get(tool) else {
            let names: Vec<&str> = self.shared.tools.iter().map(|t| t.name.as_str()).collect();
            let hint = match sparring_types::closest(tool, &names) {
                Some(c) => format!("did you mean `{c}`? available tools: {}", names.join(", ")),
                None => format!("available tools: {}", names.join(", ")),
            };
            return ToolResult::err_hint(
                ErrorKind::UnknownTool,
                format!("no tool is named `{tool}`"),
                hint,
            );
        };
        let fault = self.draw_fault(tool);
        if let Some(kind) = fault
            && kind.blocks()
        {
            return fault_error(kind, tool, &self.shared.options);
        }
        let answer = self.answer(index, arguments);
        match fault {
            Some(kind) => fault_garble(kind, &answer, &self.shared.options),
            None => answer,
        }
    }

    fn answer(&mut self, index: usize, arguments: &Value) -> ToolResult {
        let shared = Arc::clone(&self.shared);
        let spec = &shared.tools[index];
        let Some(args) = arguments.as_object() else {
            return ToolResult::err_hint(
                ErrorKind::InvalidArguments,
                format!(
                    "arguments to `{}` must be a JSON object, got {arguments}",
                    spec.name
                ),
                signature(spec),
            );
        };
        // `is_valid` first: it stops at the first failure without building
        // errors, and most calls are valid.
        if let Some(validator) = &shared.validators[index]
            && !validator.is_valid(arguments)
            && let Some(error) = validator.iter_errors(arguments).next()
        {
            let at = error.instance_path().to_string();
            let place = if at.is_empty() {
                String::new()
            } else {
                format!(" at `{at}`")
            };
            return ToolResult::err_hint(
                ErrorKind::InvalidArguments,
                format!("invalid arguments for `{}`{place}: {error}", spec.name),
                signature(spec),
            );
        }
        let model = &shared.models[index];
        for e in &shared.rules[index].enums {
            if let Some(Value::String(given)) = args.get(&e.param)
                && !e.values.contains(given)
            {
                let values: Vec<String> = e.values.iter().map(|v| format!("'{v}'")).collect();
                return ToolResult::err_hint(
                    ErrorKind::InvalidArguments,
                    format!(
                        "invalid arguments for `{}` at `/{}`: `{given}` is not one of {}; the rule is \"{}\" ({})",
                        spec.name,
                        e.param,
                        values.join(", "),
                        e.sentence,
                        e.source.describe(&spec.name)
                    ),
                    format!("`{}` must be one of {}", e.param, values.join(", ")),
                );
            }
        }
        // Ids as the person wrote them, read as the records hold them.
        let args = self.canonical_ids(model, args);
        if let Some(refusal) = self.echo_refusal(index, model, &args) {
            return refusal;
        }
        self.perform(index, model, &args)
    }

    /// The arguments with each id that names a record only as people write
    /// it (`07700900123` for the line `07700 900123`) replaced by the
    /// record's own id; unchanged, and not copied, when every id is exact.
    fn canonical_ids<'a>(&self, model: &ToolModel, args: &'a Record) -> Cow<'a, Record> {
        let mut out = Cow::Borrowed(args);
        for (param, value) in args {
            let Some(entity) = model.entity_of(param) else {
                continue;
            };
            let Value::String(given) = value else {
                continue;
            };
            if self.exists(entity, given) {
                continue;
            }
            if let Some(id) = self.resolve(entity, given) {
                out.to_mut().insert(param.clone(), Value::String(id));
            }
        }
        out
    }

    fn echo_refusal(&self, index: usize, model: &ToolModel, args: &Record) -> Option<ToolResult> {
        let min_words = self.shared.options.echo_min_words as usize;
        for echo in &self.shared.echoes[index] {
            let Some(value) = args.get(&echo.name) else {
                continue;
            };
            let texts: Vec<&str> = match value {
                Value::String(s) => vec![s.as_str()],
                Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
                _ => continue,
            };
            for text in texts {
                // The echo test first: most values are not echoes, and the
                // lookup of known values (lowercasing, record ids) is then
                // skipped.
                let Some(why) = echo.echo(text, min_words) else {
                    continue;
                };
                if !self.is_known(model, &echo.name, text) {
                    return Some(ToolResult::err_hint(
                        ErrorKind::Refused,
                        format!(
                            "`{}` is `{text}`, which repeats the schema rather than giving a real value ({why})",
                            echo.name
                        ),
                        echo.hint(),
                    ));
                }
            }
        }
        None
    }

    /// Whether a value is real data the world holds (a fixture value, or the
    /// id of a record that exists).
    fn is_known(&self, model: &ToolModel, param: &str, text: &str) -> bool {
        if self
            .shared
            .known_values
            .contains(&text.trim().to_lowercase())
        {
            return true;
        }
        model.entity_of(param).is_some_and(|e| self.exists(e, text))
    }

    /// Why a verification of record `id` fails, if it does: an argument
    /// besides the id that the record, or a record one of its fields names
    /// (a line's account), holds under the same name, given otherwise
    /// (`verify_account_holder(msisdn, date_of_birth)` with another date of
    /// birth than the line's account's). `None` also when the record is
    /// missing (the read answers not found).
    fn verification_refusal(
        &mut self,
        args: &Record,
        entity: &str,
        id: &str,
        param: &str,
    ) -> Option<ToolResult> {
        let record = Arc::clone(self.peek(entity, id)?);
        // The records its fields name, one step away, in field order.
        let entities = self.entities();
        let mut linked: Vec<Arc<Record>> = Vec::new();
        for value in record.values() {
            let Some(text) = id_text(value) else { continue };
            for other in &entities {
                if other != entity
                    && let Some(r) = self.peek(other, &text)
                {
                    linked.push(Arc::clone(r));
                }
            }
        }
        for (arg, given) in args {
            if arg == param {
                continue;
            }
            let Some(given) = id_text(given) else {
                continue;
            };
            let held = std::iter::once(&record)
                .chain(linked.iter())
                .find_map(|r| r.get(arg).and_then(id_text));
            if let Some(held) = held
                && !crate::matching::same_identifier(&given, &held)
            {
                let one = singular(entity).replace('_', " ");
                return Some(ToolResult::err_hint(
                    ErrorKind::Refused,
                    format!(
                        "the {} given does not match {one} `{id}`",
                        arg.replace('_', " ")
                    ),
                    format!(
                        "tell the customer the details do not match; do not act on {one} `{id}` for them"
                    ),
                ));
            }
        }
        None
    }

    fn not_found(&self, entity: &str, param: &str, id: &str) -> ToolResult {
        let one = singular(entity).replace('_', " ");
        let mut message = format!("no {one} has {param} `{id}`");
        let hint = match self.shared.entities.get(entity) {
            Some(e) => {
                let example = self
                    .shared
                    .fixtures
                    .get(entity)
                    .and_then(|f| f.keys().next().cloned())
                    .or_else(|| {
                        self.generated_ids(entity)
                            .and_then(|g| g.iter().next().cloned())
                    })
                    .unwrap_or_else(|| e.shape.example().to_owned());
                if !e.shape.fits(id) {
                    let _ = write!(
                        message,
                        "; `{id}` does not look like {} id (they look like `{example}`)",
                        sparring_types::words::with_article(&one)
                    );
                }
                format!("check the {param} with the customer; {one} ids look like `{example}`")
            }
            None => format!("check the {param} with the customer"),
        };
        ToolResult::err_hint(ErrorKind::NotFound, message, hint)
    }

    /// The record `id` of `entity`, materialised in this rollout's memory,
    /// to change: copied first if a fixture or an answer still shares it.
    fn record_mut(&mut self, entity: &str, id: &str) -> Option<&mut Record> {
        self.materialise(entity, id)?;
        self.overlay.get_mut(entity)?.get_mut(id).map(Arc::make_mut)
    }

    /// The record `id` of `entity` in this rollout's memory (a fixture
    /// shared, a generated one made), to read.
    fn materialise(&mut self, entity: &str, id: &str) -> Option<&Arc<Record>> {
        let present = self.overlay.get(entity).is_some_and(|o| o.contains_key(id));
        if !present {
            let record = if let Some(r) = self.shared.fixtures.get(entity).and_then(|f| f.get(id)) {
                Arc::clone(r)
            } else if self.generated_ids(entity).is_some_and(|g| g.contains(id)) {
                Arc::new(self.generate_record(entity, id, None))
            } else {
                return None;
            };
            self.overlay
                .entry(entity.to_owned())
                .or_default()
                .insert(id.to_owned(), record);
        }
        self.overlay.get(entity)?.get(id)
    }

    /// A record by reference: a fixture in place, anything else
    /// materialised in this rollout's memory first (a generated record is
    /// made once, not on every look).
    fn peek(&mut self, entity: &str, id: &str) -> Option<&Arc<Record>> {
        let in_overlay = self.overlay.get(entity).is_some_and(|o| o.contains_key(id));
        let in_fixtures = !in_overlay
            && self
                .shared
                .fixtures
                .get(entity)
                .is_some_and(|f| f.contains_key(id));
        if in_fixtures {
            return self.shared.fixtures.get(entity).and_then(|f| f.get(id));
        }
        self.materialise(entity, id)
    }

    /// Checks the ids an argument list names besides the target: each must
    /// exist; a record that says who owns it must be owned by them; and a
    /// record that names an owner must have the target's owner (a payment
    /// method of the order's own customer), unless money is sent to it.
    fn check_references(
        &mut self,
        model: &ToolModel,
        args: &Record,
        target: Option<&Record>,
    ) -> Option<ToolResult> {
        let one = model
            .entity
            .as_deref()
            .map_or("record".to_owned(), |e| singular(e).replace('_', " "));
        let own_id = model
            .id_param
            .as_ref()
            .and_then(|p| args.get(p))
            .and_then(id_text)
            .unwrap_or_default();
        for (param, entity) in &model.references {
            let Some(id) = args.get(param).and_then(id_text) else {
                continue;
            };
            if !self.exists(entity, &id) {
                return Some(self.not_found(entity, param, &id));
            }
            let owner_param = self.shared.owners.is_person(entity);
            // An update may change what a record points at (its payment
            // method); who owns the record it never changes.
            let ownership = model.operation != Operation::Update || owner_param;
            if ownership
                && let Some(target) = target
                && let Some(owner) = target.get(param).and_then(id_text)
                && owner != id
            {
                return Some(ToolResult::err_hint(
                    ErrorKind::Refused,
                    format!("{one} `{own_id}` belongs to {param} `{owner}`, not `{id}`"),
                    format!("check the {param} with the customer"),
                ));
            }
            // The owner lists what it owns (`customer.line_ids`): a target
            // not on the list is someone else's.
            if owner_param
                && let (Some(target), Some(target_entity)) = (target, model.entity.as_deref())
            {
                let key = self.shared.entities.get(target_entity).map_or_else(
                    || format!("{}_id", singular(target_entity)),
                    |e| e.id_key.clone(),
                );
                let target_id = target
                    .get(&key)
                    .and_then(id_text)
                    .unwrap_or_else(|| own_id.clone());
                let lists = [
                    format!("{}_ids", singular(target_entity)),
                    target_entity.to_owned(),
                ];
                let missing = self.peek(entity, &id).and_then(|owner| {
                    lists.iter().find_map(|list| {
                        let Some(Value::Array(items)) = owner.get(list) else {
                            return None;
                        };
                        let listed = items.iter().all(|v| id_text(v).is_some());
                        let has = items
                            .iter()
                            .any(|v| id_text(v).as_deref() == Some(target_id.as_str()));
                        (listed && !has).then(|| list.clone())
                    })
                });
                if let Some(list) = missing {
                    return Some(ToolResult::err_hint(
                        ErrorKind::Refused,
                        format!(
                            "{one} `{target_id}` is not among the {list} of {param} `{id}`: it belongs to someone else"
                        ),
                        format!("check the {param} and the {one} with the customer"),
                    ));
                }
            }
            if sparring_reading::precondition::is_destination(param) || owner_param {
                continue;
            }
            let entities = self.entities();
            let shared = Arc::clone(&self.shared);
            let Some(referenced) = self.peek(entity, &id) else {
                continue;
            };
            // Who the referenced record says owns it (`user_id` of a
            // payment method), against who owns the target.
            let owners: Vec<(String, Option<String>)> = shared
                .owners
                .owner_fields(entity, referenced, &entities)
                .into_iter()
                .map(|f| {
                    let theirs = referenced.get(&f).and_then(id_text);
                    (f, theirs)
                })
                .collect();
            for (field, theirs) in owners {
                let field = field.as_str();
                let ours = target
                    .and_then(|t| t.get(field))
                    .and_then(id_text)
                    .or_else(|| args.get(field).and_then(id_text));
                if let (Some(theirs), Some(ours)) = (theirs, ours)
                    && theirs != ours
                {
                    let what = singular(entity).replace('_', " ");
                    let whose = if target.is_some() {
                        format!("{one} `{own_id}` is {field} `{ours}`'s")
                    } else {
                        format!("this call is for {field} `{ours}`")
                    };
                    return Some(ToolResult::err_hint(
                        ErrorKind::Refused,
                        format!("{what} `{id}` belongs to {field} `{theirs}`, and {whose}"),
                        format!(
                            "use a {what} of {field} `{ours}`; check the {param} with the customer"
                        ),
                    ));
                }
            }
        }
        None
    }

    /// Ids inside object and list arguments (`flights[0].flight_number`)
    /// of an entity the spec gives records of: a write naming one that
    /// does not exist is not found.
    fn check_nested(&self, args: &Record) -> Option<ToolResult> {
        fn walk(world: &World, value: &Value, at: &str, depth: u32) -> Option<ToolResult> {
            if depth > 3 {
                return None;
            }
            match value {
                Value::Array(items) => items
                    .iter()
                    .enumerate()
                    .find_map(|(i, v)| walk(world, v, &format!("{at}/{i}"), depth + 1)),
                Value::Object(map) => map.iter().find_map(|(k, v)| {
                    if let (Some(stem), Some(id)) =
                        (sparring_reading::models::stem_of(k), id_text(v))
                    {
                        let e = sparring_reading::models::entity_named(
                            sparring_reading::precondition::bare_stem(&stem),
                            &world.fixture_keys(),
                        );
                        if world.shared.fixtures.contains_key(&e)
                            && world.resolve(&e, &id).is_none()
                        {
                            let found = world.not_found(&e, k, &id);
                            return Some(match found {
                                ToolResult::Err {
                                    kind,
                                    message,
                                    hint,
                                } => ToolResult::Err {
                                    kind,
                                    message: format!("{message} (at `{at}/{k}`)"),
                                    hint,
                                },
                                other => other,
                            });
                        }
                    }
                    walk(world, v, &format!("{at}/{k}"), depth + 1)
                }),
                _ => None,
            }
        }
        args.iter()
            .filter(|(_, v)| v.is_array() || v.is_object())
            .find_map(|(k, v)| walk(self, v, k, 0))
    }

    fn fixture_keys(&self) -> Vec<String> {
        self.shared.fixtures.keys().cloned().collect()
    }

    /// The record a rule's name points at in this call (`from_account`,
    /// `account`, `order`): an id parameter's stem, the target (or the
    /// record being created), or the first id of that entity.
    fn named_record(
        model: &ToolModel,
        args: &Record,
        name: &str,
        created: Option<(&str, &str)>,
    ) -> Option<(String, String)> {
        let ids: Vec<(&String, &String)> = model
            .id_param
            .iter()
            .zip(model.entity.iter())
            .chain(model.references.iter().map(|(p, e)| (p, e)))
            .collect();
        let arg = |p: &str| args.get(p).and_then(id_text);
        for (p, e) in &ids {
            if sparring_reading::models::stem_of(p).is_some_and(|s| s == name) {
                return arg(p).map(|id| ((*e).clone(), id));
            }
        }
        if let Some((e, id)) = created
            && singular(e) == singular(name)
        {
            return Some((e.to_owned(), id.to_owned()));
        }
        if let (Some(p), Some(e)) = (&model.id_param, &model.entity)
            && singular(e) == singular(name)
        {
            return arg(p).map(|id| (e.clone(), id));
        }
        ids.iter()
            .filter(|(p, e)| {
                singular(e) == singular(name)
                    || sparring_reading::models::stem_of(p)
                        .is_some_and(|s| sparring_reading::precondition::bare_stem(&s) == name)
            })
            .find_map(|(p, e)| arg(p).map(|id| ((*e).clone(), id)))
    }

    /// A rule's field, read from the records as they stand.
    fn field_value(
        &self,
        model: &ToolModel,
        args: &Record,
        path: &sparring_types::world_spec::FieldPath,
        created: Option<(&str, &str)>,
    ) -> Option<Value> {
        let (entity, id) = Self::named_record(model, args, &path.record, created)?;
        let record = self.record_ref(&entity, &id)?;
        match &path.field {
            Some(f) => rulebook::get_path(&record, f).cloned(),
            None => Some(Value::Object(record.into_owned())),
        }
    }

    /// Why a call that acts on no existing record (a create, an action
    /// without an id) is refused, if it is: first by the records it names,
    /// then by the rules.
    fn unnamed_refusal(
        &mut self,
        index: usize,
        model: &ToolModel,
        args: &Record,
    ) -> Option<ToolResult> {
        self.check_references(model, args, None)
            .or_else(|| self.state_refusal(index, model, args, None))
    }

    /// Why the rules forbid this call, if they do. `target` is the record
    /// acted on (none for a create).
    #[allow(clippy::too_many_lines)]
    fn state_refusal(
        &mut self,
        index: usize,
        model: &ToolModel,
        args: &Record,
        target: Option<(&str, &str, &Record)>,
    ) -> Option<ToolResult> {
        let shared = Arc::clone(&self.shared);
        let rules = &shared.rules[index];
        if let Some((entity, id, current)) = target {
            let one = || singular(entity).replace('_', " ");
            let status = current.get("status").and_then(Value::as_str);
            // A repeat of a transition: the record already has the status
            // the call would leave.
            let done: Option<std::borrow::Cow<'_, str>> = match &model.operation {
                Operation::StateChange(verb) => Some(match &rules.sets_status {
                    Some((v, _)) => v.as_str().into(),
                    None => status_after(verb).into(),
                }),
                Operation::Update => rules.sets_status.as_ref().map(|(v, _)| v.as_str().into()),
                _ => None,
            };
            if let (Some(done), Some(status)) = (&done, status)
                && sparring_reading::precondition::same_words(status, done)
            {
                let one = one();
                return Some(ToolResult::err_hint(
                    ErrorKind::Refused,
                    format!("{one} `{id}` is already {status}"),
                    format!("tell the customer the {one} is already {status}"),
                ));
            }
            // A closed record can no longer be changed, but it can be read:
            // a read is refused only by what its rules declare.
            if let Some(status) = status
                && !matches!(model.operation, Operation::Read)
                && TERMINAL_STATUSES
                    .iter()
                    .any(|t| t.eq_ignore_ascii_case(status))
                && done
                    .as_deref()
                    .is_none_or(|d| !sparring_reading::precondition::same_words(d, status))
            {
                let one = one();
                return Some(ToolResult::err_hint(
                    ErrorKind::Refused,
                    format!("{one} `{id}` is {status} and can no longer be changed"),
                    format!("tell the customer the {one} is {status}"),
                ));
            }
        }
        let target_one = target.map(|(e, _, _)| singular(e));
        for p in &rules.preconditions {
            // The record's value of the field: the target's in place, a
            // named record's looked up.
            let found: Option<(String, String, String)> = match &p.param {
                Some(param) => {
                    let entity = model.entity_of(param).map(str::to_owned);
                    let id = args.get(param).and_then(id_text);
                    match (entity, id) {
                        (Some(e), Some(id)) => {
                            let value = self
                                .peek(&e, &id)
                                .and_then(|r| r.get(&p.field))
                                .and_then(Value::as_str)
                                .map(str::to_owned);
                            value.map(|v| (e, id, v))
                        }
                        _ => None,
                    }
                }
                None => target.and_then(|(e, id, r)| {
                    let value = r.get(&p.field).and_then(Value::as_str)?;
                    // Most calls pass: nothing is copied for them.
                    let applies = target_one.as_deref() == Some(p.entity.as_str());
                    (applies && !rulebook::satisfies(p, value))
                        .then(|| (e.to_owned(), id.to_owned(), value.to_owned()))
                }),
            };
            let Some((entity, id, value)) = found else {
                continue;
            };
            let value = value.as_str();
            if rulebook::satisfies(p, value) {
                continue;
            }
            let one = singular(&entity).replace('_', " ");
            let why = if p.allowed {
                format!(
                    "`{}` needs {} that is {}",
                    model.name,
                    article(&one),
                    p.values.join(" or ")
                )
            } else {
                format!(
                    "`{}` may not act on {} that is {value}",
                    model.name,
                    article(&one)
                )
            };
            return Some(ToolResult::err_hint(
                ErrorKind::Refused,
                format!(
                    "{one} `{id}` is {value}: {why}; the rule is \"{}\" ({})",
                    p.sentence,
                    p.source.describe(&model.name)
                ),
                format!("tell the customer the {one} is {value}, so this cannot be done"),
            ));
        }
        if let (Some(sentence), Some((entity, id, _))) = (&rules.once, target)
            && self.once.iter().any(|(t, i)| *t == index && i == id)
        {
            let one = singular(entity).replace('_', " ");
            return Some(ToolResult::err_hint(
                ErrorKind::Refused,
                format!(
                    "`{}` was already used on {one} `{id}` and acts on {} only once: \"{sentence}\"",
                    model.name,
                    article(&one)
                ),
                format!("tell the customer the {one} was already changed this way"),
            ));
        }
        // An amount an action takes is more than nothing (a refuel of -1 GB,
        // a transfer of 0).
        if let Some((param, a)) =
            args.iter()
                .filter(|(k, _)| k.contains("amount"))
                .find_map(|(k, v)| {
                    rulebook::number(v)
                        .filter(|_| v.is_number())
                        .map(|a| (k, a))
                })
            && a <= 0.0
        {
            return Some(ToolResult::err_hint(
                ErrorKind::Refused,
                format!("`{param}` is {a}: the amount must be more than 0"),
                format!("ask the customer for the amount to {}", model.verb),
            ));
        }
        if let Some(m) = &model.money {
            let amount = args.get(&m.amount).and_then(rulebook::number);
            if let (Some(a), Some(from)) = (amount, &m.from)
                && let Some((entity, id)) = Self::id_of(model, args, from)
                && let Some((field, balance)) = self.peek(&entity, &id).and_then(|r| balance_of(r))
                && balance + 1e-9 < a
            {
                let one = singular(&entity).replace('_', " ");
                return Some(ToolResult::err_hint(
                    ErrorKind::Refused,
                    format!(
                        "insufficient funds: {one} `{id}` has {field} {balance}, and the {} needs {a}",
                        m.verb
                    ),
                    format!("tell the customer the {one} does not cover {a}"),
                ));
            }
        }
        let created = target.map(|(e, id, _)| (e, id));
        for c in &rules.declared.requires {
            let left = self.field_value(model, args, &c.left, created);
            let right = rulebook::operand_value(&c.right, args, &|p| {
                self.field_value(model, args, p, created)
            });
            // A condition about a record the call does not name cannot be
            // checked, and holds.
            if Self::named_record(model, args, &c.left.record, created).is_none() {
                continue;
            }
            if rulebook::holds(c, left.as_ref(), right.as_ref()) {
                continue;
            }
            let shown = left
                .as_ref()
                .map_or_else(|| "nothing".to_owned(), rulebook::plain);
            let (_, id) =
                Self::named_record(model, args, &c.left.record, created).unwrap_or_default();
            let field = c.left.field.as_deref().unwrap_or("");
            let against = right
                .as_ref()
                .map(|r| format!(" (against {})", rulebook::plain(r)))
                .unwrap_or_default();
            return Some(ToolResult::err_hint(
                ErrorKind::Refused,
                format!(
                    "`{}` needs `{}`: {} `{id}` has {field} {shown}{against} (the spec's `world` section)",
                    model.name, c.text, c.left.record
                ),
                format!(
                    "tell the customer why: the {} does not allow it",
                    c.left.record.replace('_', " ")
                ),
            ));
        }
        None
    }

    /// The (entity, id) an id parameter names in this call.
    fn id_of(model: &ToolModel, args: &Record, param: &str) -> Option<(String, String)> {
        let entity = model.entity_of(param)?.to_owned();
        Some((entity, args.get(param).and_then(id_text)?))
    }

    /// What a successful call changes beyond its own record's fields: the
    /// status its words name, fields they clear, money moved, amounts
    /// added, declared effects, the once-only mark.
    fn after_effects(
        &mut self,
        index: usize,
        model: &ToolModel,
        args: &Record,
        target: Option<(&str, &str)>,
    ) {
        let shared = Arc::clone(&self.shared);
        let rules = &shared.rules[index];
        if let Some((entity, id)) = target {
            let known: &[String] = match &rules.sets_status {
                Some(_) => shared
                    .statuses
                    .get(&singular(entity))
                    .map_or(&[], Vec::as_slice),
                None => &[],
            };
            if let Some(record) = self.record_mut(entity, id) {
                if matches!(model.operation, Operation::Update | Operation::Create)
                    && let Some((value, _)) = &rules.sets_status
                {
                    record.insert(
                        "status".to_owned(),
                        Value::String(rulebook::in_house_case(value, known)),
                    );
                }
                for (field, _) in &rules.clears {
                    if record.contains_key(field) {
                        record.insert(field.clone(), Value::Null);
                    }
                }
                // An amount adds to the field its verb names
                // (`refuel_data(gb_amount)` → `data_refueling_gb`).
                if model.money.is_none()
                    && model.operation == Operation::Update
                    && model.verb.len() >= 4
                    && let Some((_, amount)) = args
                        .iter()
                        .find(|(k, v)| k.contains("amount") && rulebook::number(v).is_some())
                {
                    let stem = model.verb.trim_end_matches('e');
                    let field = record
                        .iter()
                        .find(|(k, v)| k.contains(stem) && v.is_number())
                        .map(|(k, _)| k.clone());
                    if let Some(f) = field
                        && let (Some(cur), Some(a)) = (record.get(&f), rulebook::number(amount))
                        && let Some(sum) = rulebook::add(cur, a)
                    {
                        record.insert(f, sum);
                    }
                }
            }
            if rules.once.is_some() {
                self.once.insert((index, id.to_owned()));
            }
        }
        // Fields the declared effects change: an inferred money move leaves
        // them to the declaration.
        let declared: Vec<(String, String, String)> = rules
            .declared
            .effects
            .iter()
            .filter_map(|e| {
                let (entity, id) = Self::named_record(model, args, &e.target.record, target)?;
                Some((entity, id, e.target.field.clone()?))
            })
            .collect();
        if let Some(m) = &model.money
            && let Some(a) = args.get(&m.amount).and_then(rulebook::number)
        {
            for (param, sign) in [(&m.from, -1.0), (&m.to, 1.0)] {
                let Some(param) = param else { continue };
                let Some((entity, id)) = Self::id_of(model, args, param) else {
                    continue;
                };
                let field = self
                    .peek(&entity, &id)
                    .and_then(|r| balance_of(r))
                    .map(|(f, _)| f);
                if declared
                    .iter()
                    .any(|(e, i, f)| *e == entity && *i == id && Some(f) == field.as_ref())
                {
                    continue;
                }
                if let Some(record) = self.record_mut(&entity, &id)
                    && let Some((field, _)) = balance_of(record)
                    && let Some(cur) = record.get(&field)
                    && let Some(new) = rulebook::add(cur, sign * a)
                {
                    record.insert(field, new);
                }
            }
        }
        for e in &rules.declared.effects {
            let Some((entity, id)) = Self::named_record(model, args, &e.target.record, target)
            else {
                continue;
            };
            let value = rulebook::operand_value(&e.value, args, &|p| {
                self.field_value(model, args, p, target)
            });
            let Some(value) = value else { continue };
            let Some(field) = e.target.field.clone() else {
                continue;
            };
            if let Some(record) = self.record_mut(&entity, &id) {
                let current = rulebook::get_path(record, &field).cloned();
                if let Some(new) = rulebook::apply(e, current.as_ref(), &value) {
                    rulebook::set_path(record, &field, new);
                }
            }
        }
    }

    #[allow(clippy::too_many_lines)]
    fn perform(&mut self, index: usize, model: &ToolModel, args: &Record) -> ToolResult {
        if model.operation == Operation::Other && model.entity.is_none() && !model.any_entity {
            return Self::other(model, args);
        }
        if model.any_entity {
            let Some(id) = model
                .id_param
                .as_ref()
                .and_then(|p| args.get(p))
                .and_then(id_text)
            else {
                return ToolResult::Ok(json!({"status": "done"}));
            };
            for entity in self.entities() {
                if let Some(id) = self.resolve(&entity, &id) {
                    return match self.materialise(&entity, &id) {
                        Some(r) => ToolResult::Records(Records::one(Arc::clone(r))),
                        None => {
                            ToolResult::err(ErrorKind::NotFound, format!("no record has id `{id}`"))
                        }
                    };
                }
            }
            return ToolResult::err_hint(
                ErrorKind::NotFound,
                format!("no record has id `{id}`"),
                "check the id with the customer",
            );
        }
        let Some(entity) = model.entity.clone() else {
            return ToolResult::Ok(json!({"status": "done"}));
        };
        let acts = model.acts();
        if acts && let Some(missing) = self.check_nested(args) {
            return missing;
        }
        if model.operation == Operation::Create {
            return self.create(index, &entity, model, args);
        }
        let id = model
            .id_param
            .as_ref()
            .and_then(|p| args.get(p))
            .and_then(id_text);
        let Some(id) = id else {
            if model.operation == Operation::Read {
                return self.search(index, &entity, model, args);
            }
            if let Some(refusal) = self.unnamed_refusal(index, model, args) {
                return refusal;
            }
            self.after_effects(index, model, args, None);
            return ToolResult::Ok(json!({"status": "done"}));
        };
        let param = model.id_param.clone().unwrap_or_default();
        let shared = Arc::clone(&self.shared);
        let rules = &shared.rules[index];
        // A verification checks what it is given against the record.
        if is_verification(model)
            && let Some(refusal) = self.verification_refusal(args, &entity, &id, &param)
        {
            return refusal;
        }
        // A read that checks nothing besides the record's existence: the
        // record is answered from where it stands (a fixture in place, a
        // generated one made once), shared, not copied.
        if !acts && model.references.is_empty() && rules.declared.requires.is_empty() {
            let id_key = shared.entities.get(&entity).map(|e| e.id_key.as_str());
            return match self.peek(&entity, &id) {
                Some(record) => answer_record(id_key, model, record),
                None => self.not_found(&entity, &param, &id),
            };
        }
        // Materialised in this rollout's memory: a generated record is made
        // once per rollout, not on every read (the same record either way).
        // Shared, not copied: a write below drops it before it changes the
        // record, so the record is not copied for that either.
        let current = self.peek(&entity, &id).cloned();
        let Some(current) = current else {
            return self.not_found(&entity, &param, &id);
        };
        if let Some(refusal) = self.check_references(model, args, Some(&current)) {
            return refusal;
        }
        let one = singular(&entity).replace('_', " ");
        if acts
            && let Some(refusal) =
                self.state_refusal(index, model, args, Some((&entity, &id, &current)))
        {
            return refusal;
        }
        match &model.operation {
            // An action of an unknown verb whose words say what it leaves
            // ("The claim status will be changed to 'under appeal'").
            Operation::Other if acts && rules.sets_status.is_some() => {
                drop(current);
                self.leave_status(index, model, args, &entity, &id, &param)
            }
            Operation::Read | Operation::Other | Operation::Create => {
                if !rules.declared.requires.is_empty()
                    && let Some(refusal) =
                        self.state_refusal(index, model, args, Some((&entity, &id, &current)))
                {
                    return refusal;
                }
                let id_key = shared.entities.get(&entity).map(|e| e.id_key.as_str());
                match self.materialise(&entity, &id) {
                    Some(record) => answer_record(id_key, model, record),
                    None => self.not_found(&entity, &param, &id),
                }
            }
            Operation::StateChange(_) => {
                drop(current);
                self.leave_status(index, model, args, &entity, &id, &param)
            }
            Operation::Update => {
                if let Some((field, on)) = &model.switch
                    && current.get(field) == Some(&Value::Bool(*on))
                {
                    let state = if *on { "enabled" } else { "disabled" };
                    let what = field.trim_end_matches("_enabled").replace('_', " ");
                    return ToolResult::err_hint(
                        ErrorKind::Refused,
                        format!("{what} is already {state} on {one} `{id}`"),
                        format!("tell the customer {what} is already {state}"),
                    );
                }
                drop(current);
                let Some(record) = self.record_mut(&entity, &id) else {
                    return self.not_found(&entity, &param, &id);
                };
                if let Some((field, on)) = &model.switch {
                    record.insert(field.clone(), Value::Bool(*on));
                }
                // A request (an exchange, a return) records what is asked;
                // a change replaces the old items with the new ones.
                let replaces = !matches!(model.verb.as_str(), "exchange" | "return" | "request");
                if model.money.is_none() {
                    set_fields(record, args, model, &shared.owners, replaces);
                }
                self.after_effects(index, model, args, Some((&entity, &id)));
                self.record_answer(&entity, &id, &param)
            }
        }
    }

    /// A write that leaves its record in a status: the one its words name
    /// (in the house's own case), else a state change's verb's
    /// (`cancel` → `cancelled`); a state change also keeps its arguments
    /// (a reason) on the record.
    fn leave_status(
        &mut self,
        index: usize,
        model: &ToolModel,
        args: &Record,
        entity: &str,
        id: &str,
        param: &str,
    ) -> ToolResult {
        let shared = Arc::clone(&self.shared);
        let known = shared.statuses.get(&singular(entity));
        let done = shared.rules[index]
            .sets_status
            .as_ref()
            .map(|(v, _)| rulebook::in_house_case(v, known.map_or(&[], Vec::as_slice)))
            .or_else(|| match &model.operation {
                Operation::StateChange(verb) => Some(status_after(verb)),
                _ => None,
            });
        let Some(record) = self.record_mut(entity, id) else {
            return self.not_found(entity, param, id);
        };
        if let Some(done) = done {
            record.insert("status".to_owned(), Value::String(done));
        }
        if matches!(model.operation, Operation::StateChange(_)) {
            set_fields(record, args, model, &shared.owners, false);
        }
        self.after_effects(index, model, args, Some((entity, id)));
        self.record_answer(entity, id, param)
    }

    /// The record as it stands after a write.
    fn record_answer(&mut self, entity: &str, id: &str, param: &str) -> ToolResult {
        match self.materialise(entity, id) {
            Some(r) => ToolResult::Records(Records::one(Arc::clone(r))),
            None => self.not_found(entity, param, id),
        }
    }

    fn other(model: &ToolModel, args: &Record) -> ToolResult {
        let is_calc = model.name.contains("calculat") || model.name.contains("compute");
        if is_calc && let Some(expr) = args.values().find_map(Value::as_str) {
            return match calc::evaluate(expr) {
                Ok(v) => {
                    let rounded = (v * 100.0).round() / 100.0;
                    serde_json::Number::from_f64(rounded).map_or_else(
                        || {
                            ToolResult::err(
                                ErrorKind::InvalidArguments,
                                "the result is not a number",
                            )
                        },
                        |n| ToolResult::Ok(Value::Number(n)),
                    )
                }
                Err(why) => ToolResult::err_hint(
                    ErrorKind::InvalidArguments,
                    format!("cannot calculate `{expr}`: {why}"),
                    "use numbers, + - * / and parentheses",
                ),
            };
        }
        ToolResult::Ok(json!({"status": "done", "tool": model.name}))
    }

    fn create(
        &mut self,
        index: usize,
        entity: &str,
        model: &ToolModel,
        args: &Record,
    ) -> ToolResult {
        if let Some(refusal) = self.unnamed_refusal(index, model, args) {
            return refusal;
        }
        let Some(e) = self.shared.entities.get(entity).cloned() else {
            return ToolResult::Ok(json!({"status": "done"}));
        };
        let mut stream = Stream::derive(
            self.seed,
            &format!("world/create/{entity}"),
            &[self.created],
        );
        self.created += 1;
        let mut id = e.shape.generate(&mut stream);
        let mut tries = 0;
        while self.exists(entity, &id) && tries < 64 {
            id = e.shape.generate(&mut stream);
            tries += 1;
        }
        let mut record = Record::new();
        record.insert(e.id_key.clone(), Value::String(id.clone()));
        for (k, v) in args {
            record.insert(k.clone(), v.clone());
        }
        if let Some(s) = e.statuses.first() {
            record
                .entry("status".to_owned())
                .or_insert_with(|| Value::String(s.clone()));
        }
        self.overlay
            .entry(entity.to_owned())
            .or_default()
            .insert(id.clone(), Arc::new(record));
        // The new record is in the lists of the records it names (a new
        // booking is in the user's reservations).
        let list_names = [entity.to_owned(), format!("{}_ids", singular(entity))];
        for (param, other) in &model.references {
            let Some(owner) = args.get(param).and_then(id_text) else {
                continue;
            };
            if let Some(r) = self.record_mut(other, &owner) {
                for name in &list_names {
                    if let Some(Value::Array(items)) = r.get_mut(name) {
                        let ids_only = items.iter().all(|v| v.is_string() || v.is_number());
                        if ids_only
                            && !items
                                .iter()
                                .any(|v| id_text(v).as_deref() == Some(id.as_str()))
                        {
                            items.push(Value::String(id.clone()));
                        }
                    }
                }
            }
        }
        self.after_effects(index, model, args, Some((entity, &id)));
        self.record_answer(entity, &id, &e.id_key)
    }

    fn search(
        &mut self,
        index: usize,
        entity: &str,
        model: &ToolModel,
        args: &Record,
    ) -> ToolResult {
        if let Some(refusal) = self.check_references(model, args, None) {
            return refusal;
        }
        let page = self.shared.options.page_size as usize;
        let limit = args
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(page, |l| (l as usize).min(page));
        let shared = Arc::clone(&self.shared);
        // A filter on a field no fixture record of the entity has (a car
        // search's `pickup_date`) is one the fixtures cannot answer: beside
        // filters they can answer (`location`), it narrows nothing rather
        // than matching nothing.
        let fixtures = shared.fixtures.get(entity).filter(|f| !f.is_empty());
        let filters: Vec<(&String, &Value)> = args
            .iter()
            .filter(|(k, v)| !PAGING.contains(&k.as_str()) && !v.is_null())
            .collect();
        let answerable: Vec<(&String, &Value)> = filters
            .iter()
            .copied()
            .filter(|(k, _)| fixtures.is_none_or(|f| f.values().any(|r| has_field(r, k))))
            .collect();
        let filters = if answerable.is_empty() {
            filters
        } else {
            answerable
        };
        // Shared with the memory, not copied into the answer.
        let mut matches: Vec<Arc<Record>> = Vec::new();
        for id in self.ids(entity) {
            if matches.len() >= limit {
                break;
            }
            // Records of this rollout and fixtures are read in place;
            // generated ones are made once per rollout and kept, so a second
            // search does not redo them.
            let record = if let Some(r) = self.overlay.get(entity).and_then(|o| o.get(&id)) {
                r
            } else if let Some(r) = shared.fixtures.get(entity).and_then(|f| f.get(&id)) {
                r
            } else {
                match self.materialise(entity, &id) {
                    Some(r) => r,
                    None => continue,
                }
            };
            if filters.iter().all(|(k, v)| field_matches(record, k, v)) {
                matches.push(Arc::clone(record));
            }
        }
        let generated = self
            .shared
            .entities
            .get(entity)
            .is_some_and(|e| !e.fixtures);
        let identifying = filters
            .iter()
            .any(|(k, _)| IDENTIFYING.contains(&k.as_str()));
        if matches.is_empty() && generated && !identifying && !filters.is_empty() {
            // Made-up records for a search about things (flights on a date,
            // a customer's bills): the world answers the way a full
            // database would, and remembers what it said.
            let key = serde_json::to_string(&filters).unwrap_or_default();
            let mut stream = Stream::derive(
                self.seed,
                &format!("world/search/{}/{key}", self.shared.tools[index].name),
                &[],
            );
            let count = if model.list {
                self.shared.options.records_per_list as usize
            } else {
                1
            };
            let shape = self.shared.entities.get(entity).map(|e| e.shape.clone());
            for _ in 0..count.min(limit.max(1)) {
                let Some(shape) = &shape else { break };
                let mut id = shape.generate(&mut stream);
                let mut tries = 0;
                while self.exists(entity, &id) && tries < 64 {
                    id = shape.generate(&mut stream);
                    tries += 1;
                }
                let mut overrides = Record::new();
                for (k, v) in &filters {
                    overrides.insert((*k).clone(), (*v).clone());
                }
                let record = Arc::new(self.generate_record(entity, &id, Some(&overrides)));
                self.overlay
                    .entry(entity.to_owned())
                    .or_default()
                    .insert(id, Arc::clone(&record));
                matches.push(record);
            }
        }
        // A list with no match is an empty list; a lookup of one record
        // that matches nothing is not found.
        if matches.is_empty() && !filters.is_empty() && !model.list {
            let given: Vec<String> = filters
                .iter()
                .map(|(k, v)| format!("{k} `{}`", plain(v)))
                .collect();
            return ToolResult::err_hint(
                ErrorKind::NotFound,
                format!(
                    "no {} matches {}",
                    singular(entity).replace('_', " "),
                    given.join(", ")
                ),
                "check the details with the customer",
            );
        }
        if model.list {
            ToolResult::Records(Records::list(matches))
        } else {
            match matches.into_iter().next() {
                Some(one) => ToolResult::Records(Records::one(one)),
                None => ToolResult::Ok(Value::Null),
            }
        }
    }

    /// The record the world generates for `id` of `entity`, from (seed,
    /// entity, id): shaped like the entity's output schema when there is
    /// one, else from the fields the tools name.
    fn generate_record(&self, entity: &str, id: &str, overrides: Option<&Record>) -> Record {
        let mut stream = Stream::derive(self.seed, &format!("world/record/{entity}/{id}"), &[]);
        let options = &self.shared.options;
        let Some(e) = self.shared.entities.get(entity) else {
            return Record::new();
        };
        let mut record = Record::new();
        if let Some((tool, ptr)) = &e.schema
            && let Some(root) = self.shared.tools[*tool].output_schema.as_ref()
            && let Some(schema) = root.pointer(ptr)
        {
            let ctx = Ctx::new(root, u64::from(options.array_items), options.max_depth);
            if let Value::Object(map) = generate::from_schema(schema, entity, &ctx, &mut stream, 0)
            {
                record = map;
            }
            let integer_id = schema
                .pointer(&format!("/properties/{}/type", e.id_key))
                .and_then(Value::as_str)
                == Some("integer");
            let id_value = match id.parse::<i64>() {
                Ok(n) if integer_id => Value::Number(n.into()),
                _ => Value::String(id.to_owned()),
            };
            record.insert(e.id_key.clone(), id_value);
        } else {
            record.insert(e.id_key.clone(), Value::String(id.to_owned()));
            for (field, tool) in &e.fields {
                let owner = e.owners.iter().find(|(f, _)| f == field);
                let value = if let Some((_, other)) = owner {
                    self.pick_owner(other, &mut stream)
                } else {
                    let root = &self.shared.tools[*tool].parameters;
                    let ctx = Ctx::new(root, u64::from(options.array_items), options.max_depth);
                    match self.shared.tools[*tool].parameter(field) {
                        Some(schema) => generate::from_schema(schema, field, &ctx, &mut stream, 1),
                        None => generate::from_name(field, &mut stream),
                    }
                };
                record.insert(field.clone(), value);
            }
            // Names follow from first and last names when both exist.
            if let (Some(Value::String(f)), Some(Value::String(l))) =
                (record.get("first_name"), record.get("last_name"))
            {
                let full = format!("{f} {l}");
                if record.contains_key("full_name") {
                    record.insert("full_name".to_owned(), Value::String(full));
                }
            }
            if !e.statuses.is_empty() {
                let s = &e.statuses[stream.index(e.statuses.len())];
                record.insert("status".to_owned(), Value::String(s.clone()));
            }
        }
        // A generated person's name, id and email agree.
        generate::agree_person(&mut record, id);
        if overrides.is_none() {
            self.share_owner(entity, e, id, &mut record);
        }
        if let Some(overrides) = overrides {
            for (k, v) in overrides {
                record.insert(k.clone(), v.clone());
            }
        }
        record
    }

    /// One id of `entity`'s fixtures or generated records (not those of
    /// this rollout), drawn from `stream` as `Stream::pick` over the sorted
    /// ids would draw it, without copying the ids into a list first.
    fn pick_owner(&self, entity: &str, stream: &mut Stream) -> Value {
        let picked = match self.shared.fixtures.get(entity) {
            Some(f) => (!f.is_empty())
                .then(|| stream.index(f.len()))
                .and_then(|i| f.keys().nth(i)),
            None => self.generated_ids(entity).and_then(|g| {
                (!g.is_empty())
                    .then(|| stream.index(g.len()))
                    .and_then(|i| g.iter().nth(i))
            }),
        };
        picked.map_or(Value::Null, |i| Value::String(i.clone()))
    }

    /// Gives some owners several records: a generated record in an odd
    /// place among its entity's ids takes the person of the record before
    /// it (its identity fields and its owner-id fields), always for the
    /// second record and at [`SHARED_OWNER_SHARE`] for later ones, drawn
    /// from its own stream so no other value moves. Records of an entity
    /// that is itself a person (`users`) or names no person keep their own.
    fn share_owner(&self, entity: &str, e: &Entity, id: &str, record: &mut Record) {
        if self.shared.owners.is_person(entity) {
            return;
        }
        let owner_fields: Vec<&str> = e
            .owners
            .iter()
            .filter(|(_, other)| self.shared.owners.is_person(other))
            .map(|(field, _)| field.as_str())
            .collect();
        let shared: Vec<String> = record
            .keys()
            .filter(|k| IDENTIFYING.contains(&k.as_str()) || owner_fields.contains(&k.as_str()))
            .cloned()
            .collect();
        if shared.is_empty() {
            return;
        }
        let Some(cell) = self.generated_cell(entity) else {
            return;
        };
        let ids = &cell.ids;
        let Some(at) = ids.iter().position(|x| x == id) else {
            return;
        };
        if at % 2 == 0 {
            // The record after this one may take its person: kept, so
            // it is not generated again for that.
            if at + 1 < ids.len()
                && let Some(kept) = cell.people.get(at)
            {
                let _ = kept.set(record.clone());
            }
            return;
        }
        let mut stream = Stream::derive(self.seed, &format!("world/owner/{entity}/{id}"), &[]);
        if at > 1 && !stream.chance(SHARED_OWNER_SHARE) {
            return;
        }
        let Some(before) = ids.iter().nth(at - 1) else {
            return;
        };
        // The record before is in an even place: it keeps its own person
        // (generated here unless kept already, and kept then).
        let fresh;
        let theirs = if let Some(kept) = cell.people.get(at - 1).and_then(OnceLock::get) {
            kept
        } else {
            fresh = self.generate_record(entity, before, None);
            &fresh
        };
        for key in shared {
            if let Some(v) = theirs.get(&key) {
                record.insert(key, v.clone());
            }
        }
    }

    /// What the world inferred, for `sparring world --explain`: every entity
    /// (id field, id shape and where it came from, records, fields,
    /// statuses) and every tool (operation, entity, ids, and why).
    pub fn explain(&self) -> Value {
        let entities: Map<String, Value> = self
            .shared
            .entities
            .iter()
            .map(|(name, e)| {
                let records = if e.fixtures {
                    json!({"from": "fixtures", "count": self.shared.fixtures.get(name).map_or(0, BTreeMap::len)})
                } else {
                    json!({"from": "generated", "count": self.generated_ids(name).map_or(0, BTreeSet::len)})
                };
                let shape_source = match &e.schema {
                    Some((tool, ptr)) => format!(
                        "output schema of `{}` (`{}`)",
                        self.shared.tools[*tool].name,
                        if ptr.is_empty() { "/" } else { ptr }
                    ),
                    None => "fields the tools name".to_owned(),
                };
                (
                    name.clone(),
                    json!({
                        "id_field": e.id_key,
                        "id_example": self.ids(name).first().cloned().unwrap_or_else(|| e.shape.example().to_owned()),
                        "id_shape_from": e.shape_from,
                        "records": records,
                        "record_shape_from": shape_source,
                        "fields": e.fields.iter().map(|(f, _)| f).collect::<Vec<_>>(),
                        "owners": e.owners.iter().map(|(f, o)| json!({"field": f, "entity": o})).collect::<Vec<_>>(),
                        "statuses": e.statuses,
                    }),
                )
            })
            .collect();
        let tools: Vec<Value> = self
            .shared
            .models
            .iter()
            .zip(&self.shared.rules)
            .map(|(m, r)| {
                let mut v = serde_json::to_value(m).unwrap_or(Value::Null);
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("rules".to_owned(), Value::Array(r.explain()));
                }
                v
            })
            .collect();
        json!({"entities": entities, "tools": tools, "options": self.shared.options})
    }
}

/// One empty cell per entity (used for those whose records the world
/// generates), in the order of [`Entity::slot`].
fn lazy_ids(shared: &Shared) -> Vec<OnceLock<Generated>> {
    shared.entities.iter().map(|_| OnceLock::new()).collect()
}

/// The union of two sorted, duplicate-free sequences, sorted.
fn union_sorted<'a>(
    a: impl Iterator<Item = &'a String>,
    b: impl Iterator<Item = &'a String>,
) -> Vec<&'a String> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    let mut out = Vec::with_capacity(a.size_hint().0.max(b.size_hint().0));
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => match x.cmp(y) {
                std::cmp::Ordering::Less => a.next(),
                std::cmp::Ordering::Greater => b.next(),
                std::cmp::Ordering::Equal => {
                    b.next();
                    a.next()
                }
            },
            (Some(_), None) => a.next(),
            (None, _) => b.next(),
        };
        match next {
            Some(id) => out.push(id),
            None => return out,
        }
    }
}

/// The ids the world generates for entity `name`, from (seed, entity).
fn generate_ids(shared: &Shared, seed: u64, name: &str, e: &Entity) -> BTreeSet<String> {
    let n = shared.options.records_per_entity as usize;
    let mut stream = Stream::derive(seed, &format!("world/ids/{name}"), &[]);
    let mut ids = BTreeSet::new();
    let mut tries = 0;
    while ids.len() < n && tries < n * 16 {
        ids.insert(e.shape.generate(&mut stream));
        tries += 1;
    }
    ids
}

fn collect_values(value: &Value, out: &mut HashSet<String>) {
    match value {
        Value::String(s) => {
            out.insert(s.trim().to_lowercase());
        }
        Value::Number(n) => {
            out.insert(n.to_string());
        }
        Value::Array(items) => items.iter().for_each(|v| collect_values(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_values(v, out)),
        _ => {}
    }
}

/// A record's answer: the whole record (shared), or for a read of fields
/// (`get_balance`) the id and those fields.
fn answer_record(id_key: Option<&str>, model: &ToolModel, record: &Arc<Record>) -> ToolResult {
    if !model.fields.is_empty() {
        let mut out = Record::new();
        if let Some(key) = id_key
            && let Some(id) = record.get(key)
        {
            out.insert(key.to_owned(), id.clone());
        }
        for f in &model.fields {
            if let Some(v) = rulebook::get_path(record, f) {
                out.insert(f.clone(), v.clone());
            }
        }
        if out.len() > 1 {
            return ToolResult::Ok(Value::Object(out));
        }
    }
    ToolResult::Records(Records::one(Arc::clone(record)))
}

/// `a order` → `an order`.
fn article(noun: &str) -> String {
    let vowel = noun.chars().next().is_some_and(|c| "aeiou".contains(c));
    format!("{} {noun}", if vowel { "an" } else { "a" })
}

/// A record's balance: the field `balance` or `*_balance` holding a number.
fn balance_of(record: &Record) -> Option<(String, f64)> {
    let field = record
        .iter()
        .filter(|(k, v)| (k.as_str() == "balance" || k.ends_with("_balance")) && v.is_number())
        .map(|(k, _)| k.clone())
        .min_by_key(|k| (k != "balance", k.len()))?;
    let value = record.get(&field).and_then(Value::as_f64)?;
    Some((field, value))
}

/// Stores a write's arguments in the record's own structure: a field it
/// has is replaced; a field only a nested object has (`address.zip`) is
/// replaced there; `new_item_ids` beside `item_ids` replaces those items
/// in the record's list of items (when `replaces`); anything else is added.
fn set_fields(
    record: &mut Record,
    args: &Record,
    model: &ToolModel,
    owners: &Owners,
    replaces: bool,
) {
    let mut done: Vec<&String> = Vec::new();
    if replaces {
        for (k, new) in args {
            let Some(old_key) = k.strip_prefix("new_") else {
                continue;
            };
            let Some(old) = args.get(old_key) else {
                continue;
            };
            if replace_items(record, old_key, old, new) {
                done.push(k);
                if let Some((key, _)) = args.get_key_value(old_key) {
                    done.push(key);
                }
            }
        }
    }
    for (k, v) in args {
        let owner_ref = model
            .references
            .iter()
            .any(|(p, e)| p == k && owners.is_person(e));
        if Some(k) == model.id_param.as_ref() || owner_ref || done.contains(&k) {
            continue;
        }
        // `new_time` is the record's `time` when the record has a `time`
        // and no `new_time` of its own.
        let k = k
            .strip_prefix("new_")
            .filter(|base| !holds(record, k) && holds(record, base))
            .unwrap_or(k);
        if record.contains_key(k) {
            record.insert(k.to_owned(), v.clone());
            continue;
        }
        let nested = record
            .iter()
            .find(|(_, inner)| inner.as_object().is_some_and(|o| o.contains_key(k)))
            .map(|(name, _)| name.clone());
        match nested
            .and_then(|n| record.get_mut(&n))
            .and_then(Value::as_object_mut)
        {
            Some(inner) => {
                inner.insert(k.to_owned(), v.clone());
            }
            None => {
                record.insert(k.to_owned(), v.clone());
            }
        }
    }
}

/// Whether the record holds `key`, at its top or one object down.
fn holds(record: &Record, key: &str) -> bool {
    record.contains_key(key)
        || record
            .values()
            .any(|inner| inner.as_object().is_some_and(|o| o.contains_key(key)))
}

/// Replaces `old` ids (`item_ids`) with `new` ones in the record's list of
/// objects keyed by that id (`items[].item_id`), position by position.
fn replace_items(record: &mut Record, old_key: &str, old: &Value, new: &Value) -> bool {
    let key = match old_key.strip_suffix('s') {
        Some(one) if old.is_array() => one.to_owned(),
        _ => old_key.to_owned(),
    };
    let pairs: Vec<(String, Value)> = match (old, new) {
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .filter_map(|(x, y)| Some((id_text(x)?, y.clone())))
            .collect(),
        (a, b) if !a.is_array() && !b.is_array() => {
            id_text(a).map(|x| vec![(x, b.clone())]).unwrap_or_default()
        }
        _ => return false,
    };
    if pairs.is_empty() {
        return false;
    }
    let Some(list) = record.values_mut().find_map(|v| {
        v.as_array_mut()
            .filter(|items| items.iter().any(|i| i.get(&key).is_some()))
    }) else {
        return false;
    };
    let mut used = vec![false; list.len()];
    let mut any = false;
    for (from, to) in pairs {
        if let Some(at) = (0..list.len()).find(|&i| {
            !used[i] && list[i].get(&key).and_then(id_text).as_deref() == Some(from.as_str())
        }) && let Some(item) = list[at].as_object_mut()
        {
            item.insert(key.clone(), to);
            used[at] = true;
            any = true;
        }
    }
    any
}

/// Whether a record has the field a filter names (itself, an alias, or
/// one level down), whatever its value.
fn has_field(record: &Record, key: &str) -> bool {
    record.contains_key(key)
        || ALIASES.iter().any(|(a, b)| {
            (*a == key && record.contains_key(*b)) || (*b == key && record.contains_key(*a))
        })
        || record
            .values()
            .filter_map(Value::as_object)
            .any(|inner| inner.contains_key(key))
}

fn field_matches(record: &Record, key: &str, given: &Value) -> bool {
    if let Some(field) = record.get(key) {
        return loosely_equal(field, given);
    }
    for (a, b) in ALIASES {
        let other = if *a == key {
            b
        } else if *b == key {
            a
        } else {
            continue;
        };
        if let Some(field) = record.get(*other) {
            return loosely_equal(field, given);
        }
    }
    // One level down (`address.zip`).
    record
        .values()
        .filter_map(Value::as_object)
        .find_map(|inner| inner.get(key))
        .is_some_and(|field| loosely_equal(field, given))
}

/// Whether a tool verifies who someone is (`verify_account_holder`,
/// `authenticate_member`, `validate_customer`): its name's first word.
fn is_verification(model: &ToolModel) -> bool {
    crate::name_words(&model.name)
        .first()
        .is_some_and(|w| matches!(w.as_str(), "verify" | "authenticate" | "validate"))
}

fn id_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether a search's value matches a record's: equal but for case and
/// spaces, and an identifier (a phone number, a reference) in any way
/// people write it ([`crate::same_identifier`]).
fn loosely_equal(field: &Value, given: &Value) -> bool {
    match (field, given) {
        (Value::String(a), Value::String(b)) => {
            a.trim().eq_ignore_ascii_case(b.trim())
                || (crate::matching::looks_like_identifier(a)
                    && crate::matching::same_identifier(b, a))
        }
        (a, b) => plain(a) == plain(b),
    }
}

/// What a tool takes, for hints: `get_order takes: order_id (string, required)`.
fn signature(spec: &ToolSpec) -> String {
    let required = spec.required();
    let params: Vec<String> = spec
        .parameter_names()
        .into_iter()
        .map(|p| {
            let ty = spec
                .parameter(p)
                .and_then(|s| s.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("any");
            if required.contains(&p) {
                format!("{p} ({ty}, required)")
            } else {
                format!("{p} ({ty})")
            }
        })
        .collect();
    if params.is_empty() {
        format!("`{}` takes no arguments", spec.name)
    } else {
        format!("`{}` takes: {}", spec.name, params.join(", "))
    }
}

/// An example value for a parameter with a `format`.
fn format_example(schema: Option<&Value>) -> Option<String> {
    let format = schema?.get("format")?.as_str()?;
    Some(
        match format {
            "email" => "name@domain.com",
            "date" => "2024-05-01",
            "date-time" => "2024-05-01T09:30:00Z",
            "uuid" => "3f2b8c1e-9d4a-4e6f-8a7b-1c2d3e4f5a6b",
            _ => return None,
        }
        .to_owned(),
    )
}
