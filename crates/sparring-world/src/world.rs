//! The world's state and how it answers calls.

use crate::calc;
use crate::fault::{FaultKind, FaultRecord, parse_scheduled};
use crate::generate::{self, Ctx};
use crate::infer::{Operation, ToolModel, infer_tool, status_after};
use crate::refuse::ParamEcho;
use crate::result::{ErrorKind, ToolResult};
use crate::shape::{IdShape, description_example};
use serde_json::{Map, Value, json};
use sparring_types::seed::Stream;
use sparring_types::{Spec, ToolSpec, WorldOptions, id_keys, record_id, singular};
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
    fixtures: BTreeMap<String, BTreeMap<String, Record>>,
    known_values: HashSet<String>,
    options: WorldOptions,
}

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
    generated: Arc<BTreeMap<String, OnceLock<BTreeSet<String>>>>,
    /// entity → id → the record as it stands, for every record created,
    /// changed or generated in this rollout.
    overlay: BTreeMap<String, BTreeMap<String, Record>>,
    created: u64,
    calls: u64,
    faults: Vec<FaultRecord>,
}

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
        let options = spec
            .options
            .world
            .as_ref()
            .map(sparring_types::WorldPatch::resolve)
            .unwrap_or_default();
        Self::with_options(spec, seed, options)
    }

    /// A world with explicit options (the run's resolved `options.world`).
    pub fn with_options(spec: &Spec, seed: u64, options: WorldOptions) -> Self {
        let fixture_keys: Vec<String> = spec.fixtures.keys().cloned().collect();
        let models: Vec<ToolModel> = spec
            .tools
            .iter()
            .map(|t| infer_tool(t, &fixture_keys))
            .collect();
        let mut fixtures: BTreeMap<String, BTreeMap<String, Record>> = BTreeMap::new();
        let mut known_values = HashSet::new();
        let mut entities: BTreeMap<String, Entity> = BTreeMap::new();
        for (entity, items) in &spec.fixtures {
            let keys = id_keys(entity);
            let store = fixtures.entry(entity.clone()).or_default();
            let mut id_key = keys[0].clone();
            let mut first_id = None;
            for item in items {
                if let Some(fields) = item.as_object()
                    && let Some(id) = record_id(fields, &keys)
                {
                    if first_id.is_none() {
                        first_id = Some(id.clone());
                        id_key = keys
                            .iter()
                            .find(|k| fields.contains_key(*k))
                            .cloned()
                            .unwrap_or(id_key);
                    }
                    collect_values(item, &mut known_values);
                    store.insert(id, fields.clone());
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
                e.schema = record_pointer(out).map(|ptr| (i, ptr));
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
        let validators = spec
            .tools
            .iter()
            .map(|t| {
                jsonschema::options()
                    .should_validate_formats(true)
                    .build(&t.parameters)
                    .ok()
            })
            .collect();
        let echoes = spec
            .tools
            .iter()
            .zip(&models)
            .map(|(t, m)| {
                t.parameter_names()
                    .into_iter()
                    .map(|p| {
                        let mut echo = ParamEcho::new(p, t.parameter(p));
                        let entity = if Some(p) == m.id_param.as_deref() {
                            m.entity.clone()
                        } else {
                            m.references
                                .iter()
                                .find(|(rp, _)| rp == p)
                                .map(|(_, e)| e.clone())
                        };
                        echo.looks_like = entity
                            .and_then(|e| {
                                fixtures
                                    .get(&e)
                                    .and_then(|f| f.keys().next().cloned())
                                    .or_else(|| {
                                        entities.get(&e).map(|x| x.shape.example().to_owned())
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
        let shared = Arc::new(Shared {
            tools: spec.tools.clone(),
            models,
            by_name,
            validators,
            echoes,
            entities,
            fixtures,
            known_values,
            options,
        });
        let generated = Arc::new(lazy_ids(&shared));
        Self {
            shared,
            seed,
            generated,
            overlay: BTreeMap::new(),
            created: 0,
            calls: 0,
            faults: Vec::new(),
        }
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
        self
    }

    /// The world's seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The ids generated for `entity` (made on first use), if the world
    /// generates its records.
    fn generated_ids(&self, entity: &str) -> Option<&BTreeSet<String>> {
        let cell = self.generated.get(entity)?;
        let e = self.shared.entities.get(entity)?;
        Some(cell.get_or_init(|| generate_ids(&self.shared, self.seed, entity, e)))
    }

    /// The options the world runs with.
    pub fn options(&self) -> &WorldOptions {
        &self.shared.options
    }

    /// What the world read out of each tool.
    pub fn models(&self) -> &[ToolModel] {
        &self.shared.models
    }

    /// The names of every entity the world knows, sorted.
    pub fn entities(&self) -> Vec<String> {
        self.shared.entities.keys().cloned().collect()
    }

    /// The ids of an entity's records, sorted: fixtures, generated ones, and
    /// those created in this rollout.
    pub fn ids(&self, entity: &str) -> Vec<String> {
        let mut ids: BTreeSet<String> = BTreeSet::new();
        if let Some(f) = self.shared.fixtures.get(entity) {
            ids.extend(f.keys().cloned());
        }
        if let Some(g) = self.generated_ids(entity) {
            ids.extend(g.iter().cloned());
        }
        if let Some(o) = self.overlay.get(entity) {
            ids.extend(o.keys().cloned());
        }
        ids.into_iter().collect()
    }

    /// One record, as it stands now (fixture, generated or changed).
    pub fn record(&self, entity: &str, id: &str) -> Option<Record> {
        if let Some(r) = self.overlay.get(entity).and_then(|o| o.get(id)) {
            return Some(r.clone());
        }
        if let Some(r) = self.shared.fixtures.get(entity).and_then(|f| f.get(id)) {
            return Some(r.clone());
        }
        if self.generated_ids(entity).is_some_and(|g| g.contains(id)) {
            return Some(self.generate_record(entity, id, None));
        }
        None
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

    /// Schedules a fault on the first call to `tool`.
    pub fn schedule(&mut self, tool: &str, kind: FaultKind) {
        self.faults.push(FaultRecord {
            tool: tool.to_owned(),
            kind,
            source: "scheduled".to_owned(),
            fired: false,
            call: None,
        });
    }

    /// Schedules the faults a situation carries (`{"tool", "kind"}` each);
    /// entries of another shape are ignored.
    pub fn schedule_all(&mut self, faults: &[Value]) {
        for f in faults {
            if let Some((tool, kind)) = parse_scheduled(f) {
                self.schedule(&tool, kind);
            }
        }
    }

    /// Every fault of this rollout as the row records it: the scheduled
    /// ones (fired or not) and the random ones that fired.
    pub fn faults(&self) -> Vec<Value> {
        self.faults.iter().map(FaultRecord::to_json).collect()
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
            .find(|f| f.source == "scheduled" && f.tool == tool && !f.fired)
        {
            f.fired = true;
            f.call = Some(call);
            return Some(f.kind);
        }
        let rate = self.shared.options.fault_rate;
        if rate <= 0.0 {
            return None;
        }
        let mut stream = Stream::derive(self.seed, "world/fault", &[call]);
        if !stream.chance(rate) {
            return None;
        }
        let kind = FaultKind::draw(&self.shared.options, &mut stream)?;
        self.faults.push(FaultRecord {
            tool: tool.to_owned(),
            kind,
            source: "random".to_owned(),
            fired: true,
            call: Some(call),
        });
        Some(kind)
    }

    /// Records a fault that did not come from the world (the caller's world
    /// failed to answer): counted as a `server_error` with `source`.
    pub fn record_fault(&mut self, tool: &str, source: &str) {
        self.faults.push(FaultRecord {
            tool: tool.to_owned(),
            kind: FaultKind::ServerError,
            source: source.to_owned(),
            fired: true,
            call: Some(self.calls),
        });
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
            return kind.error(tool, &self.shared.options);
        }
        let answer = self.answer(index, arguments);
        match fault {
            Some(kind) => kind.garble(&answer, &self.shared.options),
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
        if let Some(validator) = &shared.validators[index]
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
        if let Some(refusal) = self.echo_refusal(index, model, args) {
            return refusal;
        }
        self.perform(index, model, args)
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
                if self.is_known(model, &echo.name, text) {
                    continue;
                }
                if let Some(why) = echo.echo(text, min_words) {
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
        let entity = if Some(param) == model.id_param.as_deref() {
            model.entity.as_deref()
        } else {
            model
                .references
                .iter()
                .find(|(p, _)| p == param)
                .map(|(_, e)| e.as_str())
        };
        entity.is_some_and(|e| self.exists(e, text))
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

    /// The record `id` of `entity`, materialised in this rollout's memory.
    fn record_mut(&mut self, entity: &str, id: &str) -> Option<&mut Record> {
        let present = self.overlay.get(entity).is_some_and(|o| o.contains_key(id));
        if !present {
            let record = if let Some(r) = self.shared.fixtures.get(entity).and_then(|f| f.get(id)) {
                r.clone()
            } else if self.generated_ids(entity).is_some_and(|g| g.contains(id)) {
                self.generate_record(entity, id, None)
            } else {
                return None;
            };
            self.overlay
                .entry(entity.to_owned())
                .or_default()
                .insert(id.to_owned(), record);
        }
        self.overlay.get_mut(entity)?.get_mut(id)
    }

    /// Checks the ids an argument list names besides the target: each must
    /// exist, and a record that says who owns it must be owned by them.
    fn check_references(
        &mut self,
        model: &ToolModel,
        args: &Record,
        target: Option<&Record>,
    ) -> Option<ToolResult> {
        for (param, entity) in &model.references {
            let Some(id) = args.get(param).and_then(id_text) else {
                continue;
            };
            if !self.exists(entity, &id) {
                return Some(self.not_found(entity, param, &id));
            }
            // An update may change what a record points at (its payment
            // method); who owns the record it never changes.
            let ownership = model.operation != Operation::Update || is_owner(param);
            if ownership
                && let Some(target) = target
                && let Some(owner) = target.get(param).and_then(id_text)
                && owner != id
            {
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
                return Some(ToolResult::err_hint(
                    ErrorKind::Refused,
                    format!("{one} `{own_id}` belongs to {param} `{owner}`, not `{id}`"),
                    format!("check the {param} with the customer"),
                ));
            }
        }
        None
    }

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
                if self.exists(&entity, &id) {
                    return match self.record_mut(&entity, &id) {
                        Some(r) => ToolResult::Ok(Value::Object(r.clone())),
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
        if model.operation == Operation::Create {
            return self.create(&entity, model, args);
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
            if let Some(refusal) = self.check_references(model, args, None) {
                return refusal;
            }
            return ToolResult::Ok(json!({"status": "done"}));
        };
        let param = model.id_param.clone().unwrap_or_default();
        // Materialised in this rollout's memory: a generated record is made
        // once per rollout, not on every read (the same record either way).
        let at_hand = self
            .overlay
            .get(&entity)
            .is_some_and(|o| o.contains_key(&id))
            || self
                .shared
                .fixtures
                .get(&entity)
                .is_some_and(|f| f.contains_key(&id));
        let current = if at_hand {
            self.record(&entity, &id)
        } else {
            self.record_mut(&entity, &id).map(|r| r.clone())
        };
        let Some(current) = current else {
            return self.not_found(&entity, &param, &id);
        };
        if let Some(refusal) = self.check_references(model, args, Some(&current)) {
            return refusal;
        }
        let one = singular(&entity).replace('_', " ");
        let status = current
            .get("status")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let acts = !matches!(model.operation, Operation::Read | Operation::Other);
        if let Operation::StateChange(verb) = &model.operation {
            let done = status_after(verb);
            if status
                .as_deref()
                .is_some_and(|s| s.eq_ignore_ascii_case(&done))
            {
                return ToolResult::err_hint(
                    ErrorKind::Refused,
                    format!("{one} `{id}` is already {done}"),
                    format!("tell the customer the {one} is already {done}"),
                );
            }
        }
        if acts {
            if let (Some(required), Some(status)) = (&model.requires_status, &status)
                && !status.eq_ignore_ascii_case(required)
            {
                return ToolResult::err_hint(
                    ErrorKind::Refused,
                    format!(
                        "{one} `{id}` is {status}, not {required}: `{}` needs {} {one}",
                        model.name,
                        sparring_types::words::with_article(required)
                    ),
                    format!("tell the customer the {one} is {status}"),
                );
            }
            if let Some(status) = &status
                && TERMINAL_STATUSES.contains(&status.to_lowercase().as_str())
                && !matches!(&model.operation, Operation::StateChange(v) if status_after(v) == *status)
            {
                return ToolResult::err_hint(
                    ErrorKind::Refused,
                    format!("{one} `{id}` is {status} and can no longer be changed"),
                    format!("tell the customer the {one} is {status}"),
                );
            }
        }
        match &model.operation {
            Operation::Read | Operation::Other | Operation::Create => {
                let Some(record) = self.record_mut(&entity, &id) else {
                    return self.not_found(&entity, &param, &id);
                };
                ToolResult::Ok(Value::Object(record.clone()))
            }
            Operation::StateChange(verb) => {
                let done = status_after(verb);
                let Some(record) = self.record_mut(&entity, &id) else {
                    return self.not_found(&entity, &param, &id);
                };
                record.insert("status".to_owned(), Value::String(done));
                set_fields(record, args, model);
                ToolResult::Ok(Value::Object(record.clone()))
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
                let Some(record) = self.record_mut(&entity, &id) else {
                    return self.not_found(&entity, &param, &id);
                };
                if let Some((field, on)) = &model.switch {
                    record.insert(field.clone(), Value::Bool(*on));
                }
                set_fields(record, args, model);
                ToolResult::Ok(Value::Object(record.clone()))
            }
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

    fn create(&mut self, entity: &str, model: &ToolModel, args: &Record) -> ToolResult {
        if let Some(refusal) = self.check_references(model, args, None) {
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
            .insert(id, record.clone());
        ToolResult::Ok(Value::Object(record))
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
        let filters: Vec<(&String, &Value)> = args
            .iter()
            .filter(|(k, v)| !PAGING.contains(&k.as_str()) && !v.is_null())
            .collect();
        let mut matches: Vec<Value> = Vec::new();
        let shared = Arc::clone(&self.shared);
        for id in self.ids(entity) {
            if matches.len() >= limit {
                break;
            }
            // Fixture records are read in place; generated ones are made once
            // per rollout and kept, so a second search does not redo them.
            let in_overlay = self
                .overlay
                .get(entity)
                .is_some_and(|o| o.contains_key(&id));
            let record = match shared.fixtures.get(entity).and_then(|f| f.get(&id)) {
                Some(r) if !in_overlay => r,
                _ => match self.record_mut(entity, &id) {
                    Some(r) => &*r,
                    None => continue,
                },
            };
            if filters.iter().all(|(k, v)| field_matches(record, k, v)) {
                matches.push(Value::Object(record.clone()));
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
                let record = self.generate_record(entity, &id, Some(&overrides));
                self.overlay
                    .entry(entity.to_owned())
                    .or_default()
                    .insert(id, record.clone());
                matches.push(Value::Object(record));
            }
        }
        if matches.is_empty() && !filters.is_empty() {
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
            ToolResult::Ok(Value::Array(matches))
        } else {
            ToolResult::Ok(matches.into_iter().next().unwrap_or(Value::Null))
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
            let ctx = Ctx {
                root,
                array_items: u64::from(options.array_items),
                max_depth: options.max_depth,
            };
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
                    let ids = self.ids_without_overlay(other);
                    stream
                        .pick(&ids)
                        .map_or(Value::Null, |i| Value::String(i.clone()))
                } else {
                    let root = &self.shared.tools[*tool].parameters;
                    let ctx = Ctx {
                        root,
                        array_items: u64::from(options.array_items),
                        max_depth: options.max_depth,
                    };
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
        if let Some(overrides) = overrides {
            for (k, v) in overrides {
                record.insert(k.clone(), v.clone());
            }
        }
        record
    }

    fn ids_without_overlay(&self, entity: &str) -> Vec<String> {
        if let Some(f) = self.shared.fixtures.get(entity) {
            return f.keys().cloned().collect();
        }
        self.generated_ids(entity)
            .map(|g| g.iter().cloned().collect())
            .unwrap_or_default()
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
            .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
            .collect();
        json!({"entities": entities, "tools": tools, "options": self.shared.options})
    }
}

/// The JSON pointer, within an output schema, of the schema one record has:
/// the schema itself for an object, its `items` for an array, or the items
/// of an object's only array property.
fn record_pointer(schema: &Value) -> Option<String> {
    match schema.get("type").and_then(Value::as_str) {
        Some("object") | None if schema.get("properties").is_some() => {
            let props = schema.get("properties")?.as_object()?;
            let arrays: Vec<&String> = props
                .iter()
                .filter(|(_, s)| s.get("type").and_then(Value::as_str) == Some("array"))
                .map(|(k, _)| k)
                .collect();
            if props.len() == 1 && arrays.len() == 1 {
                Some(format!("/properties/{}/items", arrays[0]))
            } else {
                Some(String::new())
            }
        }
        Some("array") => schema.get("items").map(|_| "/items".to_owned()),
        _ => None,
    }
}

/// One empty cell per entity whose records the world generates.
fn lazy_ids(shared: &Shared) -> BTreeMap<String, OnceLock<BTreeSet<String>>> {
    shared
        .entities
        .iter()
        .filter(|(_, e)| !e.fixtures)
        .map(|(name, _)| (name.clone(), OnceLock::new()))
        .collect()
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

/// Whether a parameter names who owns a record (`customer_id`, `user_id`).
fn is_owner(param: &str) -> bool {
    let first = param.split('_').next().unwrap_or(param);
    OWNERS.contains(&first)
}

/// Stems of parameters that name a record's owner.
const OWNERS: &[&str] = &[
    "customer", "user", "account", "owner", "client", "member", "patient", "person", "tenant",
];

fn set_fields(record: &mut Record, args: &Record, model: &ToolModel) {
    for (k, v) in args {
        let owner_ref = model.references.iter().any(|(p, _)| p == k) && is_owner(k);
        if Some(k) != model.id_param.as_ref() && !owner_ref {
            record.insert(k.clone(), v.clone());
        }
    }
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

fn loosely_equal(field: &Value, given: &Value) -> bool {
    match (field, given) {
        (Value::String(a), Value::String(b)) => a.trim().eq_ignore_ascii_case(b.trim()),
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
