//! Specs: what sparring is told about an agent.

use crate::axes::AxesSpec;
use crate::options::OptionsPatch;
use crate::tool::ToolSpec;
use crate::world_spec::WorldSpec;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The keys a spec may have at the top level.
pub(crate) const SPEC_KEYS: &[&str] = &[
    "name",
    "system_prompt",
    "tools",
    "output_schemas",
    "seeds",
    "fixtures",
    "options",
    "axes",
    "policy",
    "world",
    "policy_rules",
    "dimensions",
];

/// Every key the spec parser accepts, section by section (`spec`, the
/// OpenAI tool and its `function`, the MCP tool, `axes`, `options`,
/// `options.world`, a `{file: PATH}` reference, a seed with `expect`), as
/// the parser reads them:
/// `docs/spec.md` documents each, and a test keeps the two equal.
pub fn spec_keys() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        ("spec", SPEC_KEYS.to_vec()),
        ("tools[] (OpenAI)", OPENAI_TOOL_KEYS.to_vec()),
        ("tools[].function (OpenAI)", OPENAI_FUNCTION_KEYS.to_vec()),
        ("tools[] (MCP)", MCP_TOOL_KEYS.to_vec()),
        ("axes", crate::axes::axes_keys()),
        ("options", crate::options::option_names()),
        (
            "options.world",
            crate::introspect::field_names::<crate::WorldOptions>(),
        ),
        ("{file: PATH}", vec!["file"]),
        ("seeds[] ({ask, expect})", crate::expect::SEED_KEYS.to_vec()),
        ("seeds[].expect", crate::expect::EXPECT_KEYS.to_vec()),
        ("seeds[].expect.calls[]", crate::expect::CALL_KEYS.to_vec()),
    ]
}

/// A validated spec.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// A short name for the agent, used in reports.
    pub name: String,
    /// The policy the agent works under.
    pub system_prompt: String,
    /// The tools, with their output schemas attached.
    pub tools: Vec<ToolSpec>,
    /// Opening asks to keep word for word.
    pub seeds: Vec<String>,
    /// What the seeds given as `{ask, expect}` must achieve, by seed index
    /// (their goal is `expected`; the other seeds' goals are derived).
    pub seed_expects: BTreeMap<usize, crate::Expect>,
    /// Known records per entity (`orders` → records), each with an id field.
    pub fixtures: BTreeMap<String, Vec<Value>>,
    /// Run options given in the spec.
    pub options: OptionsPatch,
    /// Pins and forbidden pairs of the situation axes (`axes`).
    pub axes: AxesSpec,
    /// What the world is told per tool beyond the tools' words (`world`).
    pub world: WorldSpec,
    /// Corrections to the reading of the policy (`policy_rules`).
    pub policy_rules: crate::policy::PolicyRulesSpec,
}

/// What is wrong with a spec, and where (a JSON pointer into it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("at `{pointer}`: {message}")]
pub struct SpecError {
    /// JSON pointer of the offending value (`/tools/3/function/parameters`);
    /// empty for the whole document.
    pub pointer: String,
    /// What is wrong, lowercase, no trailing period.
    pub message: String,
}

pub(crate) fn err(pointer: impl Into<String>, message: impl Into<String>) -> SpecError {
    SpecError {
        pointer: pointer.into(),
        message: message.into(),
    }
}

/// The error for a value of the wrong JSON type: what it must be, then
/// what it is (`must be a list of asks, found a string`).
pub(crate) fn wrong_kind(pointer: impl Into<String>, expected: &str, value: &Value) -> SpecError {
    err(pointer, format!("{expected}, found {}", kind(value)))
}

/// The error at `at` for `value` listed a second time, when it was listed
/// before at index `first` of the list at `list`.
pub(crate) fn listed_once(
    first: Option<usize>,
    value: &str,
    at: &str,
    list: &str,
) -> Result<(), SpecError> {
    match first {
        Some(first) => Err(err(
            at,
            format!("`{value}` is listed twice (also `{list}/{first}`)"),
        )),
        None => Ok(()),
    }
}

/// `value` as a list, or [`wrong_kind`] with `expected`.
pub(crate) fn as_list<'a>(
    value: &'a Value,
    pointer: &str,
    expected: &str,
) -> Result<&'a Vec<Value>, SpecError> {
    value
        .as_array()
        .ok_or_else(|| wrong_kind(pointer, expected, value))
}

/// `value` as text, or [`wrong_kind`] with `expected`.
pub(crate) fn as_text<'a>(
    value: &'a Value,
    pointer: &str,
    expected: &str,
) -> Result<&'a String, SpecError> {
    match value {
        Value::String(s) => Ok(s),
        other => Err(wrong_kind(pointer, expected, other)),
    }
}

/// `value` as an object, or [`wrong_kind`] with `expected` (for a message
/// other than [`object`]'s `… must be an object`).
pub(crate) fn as_map<'a>(
    value: &'a Value,
    pointer: &str,
    expected: &str,
) -> Result<&'a Map<String, Value>, SpecError> {
    value
        .as_object()
        .ok_or_else(|| wrong_kind(pointer, expected, value))
}

pub(crate) fn object<'a>(
    value: &'a Value,
    pointer: &str,
    what: &str,
) -> Result<&'a Map<String, Value>, SpecError> {
    value
        .as_object()
        .ok_or_else(|| wrong_kind(pointer, &format!("{what} must be an object"), value))
}

/// The JSON type name of a value, for messages.
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl Spec {
    /// Validates a spec document whose `{file: PATH}` references have already
    /// been replaced by the files' contents.
    pub fn from_value(value: &Value) -> Result<Self, SpecError> {
        let top = object(value, "", "a spec")?;
        check_keys(top, "", SPEC_KEYS)?;
        let name = match top.get("name") {
            None => return Err(err("/name", "missing: every spec needs a `name`")),
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(v) => {
                return Err(wrong_kind("/name", "must be a non-empty string", v));
            }
        };
        if top.contains_key("policy") && top.contains_key("system_prompt") {
            return Err(err(
                "/policy",
                "`policy` is an alias of `system_prompt`; give one of them, not both",
            ));
        }
        let prompt_key = if top.contains_key("policy") {
            "policy"
        } else {
            "system_prompt"
        };
        let system_prompt = match top.get(prompt_key) {
            None => {
                return Err(err(
                    "/system_prompt",
                    "missing: the agent's policy is required (text or `{file: PATH}`)",
                ));
            }
            Some(Value::String(s)) => s.clone(),
            Some(v) => {
                return Err(wrong_kind(
                    format!("/{prompt_key}"),
                    "must be text or `{file: PATH}`",
                    v,
                ));
            }
        };
        let mut tools = match top.get("tools") {
            None => {
                return Err(err(
                    "/tools",
                    "missing: a spec needs `tools` (drafting tools from an intent needs a writer model)",
                ));
            }
            Some(v) => parse_tools(v)?,
        };
        if let Some(v) = top.get("output_schemas") {
            let map = object(v, "/output_schemas", "`output_schemas`")?;
            for (tool_name, schema) in map {
                let pointer = format!("/output_schemas/{}", escape(tool_name));
                let Some(tool) = tools.iter_mut().find(|t| &t.name == tool_name) else {
                    return Err(err(pointer, format!("no tool is named `{tool_name}`")));
                };
                object(schema, &pointer, "an output schema")?;
                tool.output_schema = Some(schema.clone());
            }
        }
        let fixtures = match top.get("fixtures") {
            None => BTreeMap::new(),
            Some(v) => parse_fixtures(v, &tools)?,
        };
        // Seeds come after fixtures: an expected state names their records.
        let (seeds, seed_expects) = match top.get("seeds") {
            None => (Vec::new(), BTreeMap::new()),
            Some(v) => crate::expect::parse_seeds(v, &tools, &fixtures)?,
        };
        let options = match top.get("options") {
            None => OptionsPatch::default(),
            Some(v) => {
                OptionsPatch::from_value(v).map_err(|(p, m)| err(format!("/options{p}"), m))?
            }
        };
        // `dimensions` is the seeds' name for `axes`.
        if top.contains_key("dimensions") && top.contains_key("axes") {
            return Err(err(
                "/dimensions",
                "`dimensions` is an alias of `axes`; give one of them, not both",
            ));
        }
        let axes = match top.get("axes").or_else(|| top.get("dimensions")) {
            None => AxesSpec::default(),
            Some(v) => {
                let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
                crate::axes::parse(v, &names)?
            }
        };
        let world = match top.get("world") {
            None => WorldSpec::default(),
            Some(v) => crate::world_spec::parse(v, &tools, &fixtures)?,
        };
        let policy_rules = match top.get("policy_rules") {
            None => crate::policy::PolicyRulesSpec::default(),
            Some(v) => {
                let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
                crate::policy::parse(v, &names)?
            }
        };
        Ok(Self {
            name,
            system_prompt,
            tools,
            seeds,
            seed_expects,
            fixtures,
            options,
            axes,
            world,
            policy_rules,
        })
    }

    /// Pins axes over the spec's own `axes` (`dimensions` given by a caller):
    /// each axis named in `value` takes the values given there, the other
    /// pins stay, and `forbid` pairs are added. Errors point into `value`
    /// as if it were the spec's `axes`.
    pub fn pin_axes(&mut self, value: &Value) -> Result<(), SpecError> {
        let names: Vec<String> = self.tools.iter().map(|t| t.name.clone()).collect();
        let given = crate::axes::parse(value, &names)?;
        self.axes.pins.extend(given.pins);
        self.axes.forbid.extend(given.forbid);
        Ok(())
    }

    /// The id field of every entity of the fixtures (`docs/spec.md`,
    /// [`crate::keys`]); an entity no field keys (fixtures set after
    /// validation) has the default, `<singular>_id` or `id`.
    pub fn id_fields(&self) -> BTreeMap<String, crate::IdField> {
        crate::keys::id_fields(&self.tools, &self.fixtures).0
    }

    /// The tool called `name`.
    pub fn tool(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.iter().find(|t| t.name == name)
    }
}

/// Escapes a key for a JSON pointer (RFC 6901).
pub(crate) fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Names in backticks, comma-separated: `` `a`, `b` ``.
pub(crate) fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `; did you mean `x`?` for the closest known name, else the list of
/// known names (nothing when there are none).
pub(crate) fn did_you_mean(word: &str, known: &[&str]) -> String {
    match crate::closest(word, known) {
        Some(c) => format!("; did you mean `{c}`?"),
        None if known.is_empty() => String::new(),
        None => format!("; expected one of {}", quoted(known)),
    }
}

/// Fails on the first key of `map` that is not in `known`, naming it where
/// it stands (`{pointer}/{key}`) with the closest known key.
pub(crate) fn check_keys(
    map: &Map<String, Value>,
    pointer: &str,
    known: &[&str],
) -> Result<(), SpecError> {
    match map.keys().find(|k| !known.contains(&k.as_str())) {
        Some(key) => Err(err(
            format!("{pointer}/{}", escape(key)),
            format!("unknown key `{key}`{}", did_you_mean(key, known)),
        )),
        None => Ok(()),
    }
}

const OPENAI_TOOL_KEYS: &[&str] = &["type", "function"];
const OPENAI_FUNCTION_KEYS: &[&str] = &["name", "description", "parameters", "strict"];
const MCP_TOOL_KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
];

fn parse_tools(value: &Value) -> Result<Vec<ToolSpec>, SpecError> {
    let items = as_list(value, "/tools", "must be a list of tools or `{file: PATH}`")?;
    if items.is_empty() {
        return Err(err("/tools", "is empty: give at least one tool"));
    }
    let mut tools: Vec<ToolSpec> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let pointer = format!("/tools/{i}");
        let map = object(item, &pointer, "a tool")?;
        let tool = if map.contains_key("function") || map.get("type").is_some() {
            parse_openai(map, &pointer)?
        } else {
            parse_mcp(map, &pointer)?
        };
        if let Some(first) = tools.iter().position(|t| t.name == tool.name) {
            return Err(err(
                pointer.clone(),
                format!(
                    "two tools are named `{}` (also `/tools/{first}`)",
                    tool.name
                ),
            ));
        }
        tools.push(tool);
    }
    Ok(tools)
}

fn parse_openai(map: &Map<String, Value>, pointer: &str) -> Result<ToolSpec, SpecError> {
    check_keys(map, pointer, OPENAI_TOOL_KEYS)?;
    match map.get("type") {
        Some(Value::String(t)) if t == "function" => {}
        Some(other) => {
            return Err(err(
                format!("{pointer}/type"),
                format!("must be \"function\", found {other}"),
            ));
        }
        None => {
            return Err(err(
                format!("{pointer}/type"),
                "missing: must be \"function\"",
            ));
        }
    }
    let fpointer = format!("{pointer}/function");
    let function = match map.get("function") {
        Some(f) => object(f, &fpointer, "`function`")?,
        None => return Err(err(fpointer, "missing: an OpenAI tool needs `function`")),
    };
    check_keys(function, &fpointer, OPENAI_FUNCTION_KEYS)?;
    named_tool(function, &fpointer, "parameters")
}

fn parse_mcp(map: &Map<String, Value>, pointer: &str) -> Result<ToolSpec, SpecError> {
    check_keys(map, pointer, MCP_TOOL_KEYS)?;
    let tool = named_tool(map, pointer, "inputSchema")?;
    let output_schema = match map.get("outputSchema") {
        None => None,
        Some(v) => Some(Value::Object(
            object(v, &format!("{pointer}/outputSchema"), "`outputSchema`")?.clone(),
        )),
    };
    Ok(ToolSpec {
        output_schema,
        ..tool
    })
}

/// The `name`, `description` and parameter schema (under `parameters_key`)
/// of a tool in either format, checked in that order; no output schema.
fn named_tool(
    map: &Map<String, Value>,
    pointer: &str,
    parameters_key: &str,
) -> Result<ToolSpec, SpecError> {
    Ok(ToolSpec {
        name: tool_name(map.get("name"), pointer)?,
        description: description(map.get("description"), pointer)?,
        parameters: parameters(
            map.get(parameters_key),
            &format!("{pointer}/{parameters_key}"),
        )?,
        output_schema: None,
    })
}

fn tool_name(value: Option<&Value>, pointer: &str) -> Result<String, SpecError> {
    let at = format!("{pointer}/name");
    match value {
        None => Err(err(at, "missing: every tool needs a `name`")),
        Some(Value::String(s)) => {
            let valid = !s.is_empty()
                && s.len() <= 128
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
            if valid {
                Ok(s.clone())
            } else {
                Err(err(
                    at,
                    format!("tool name `{s}` must be 1-128 letters, digits, `_`, `-` or `.`"),
                ))
            }
        }
        Some(v) => Err(wrong_kind(at, "must be a string", v)),
    }
}

fn description(value: Option<&Value>, pointer: &str) -> Result<String, SpecError> {
    match value {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(v) => Err(wrong_kind(
            format!("{pointer}/description"),
            "must be a string",
            v,
        )),
    }
}

fn parameters(value: Option<&Value>, pointer: &str) -> Result<Value, SpecError> {
    let Some(value) = value else {
        // A tool without arguments: the empty object schema.
        return Ok(serde_json::json!({"type": "object", "properties": {}}));
    };
    let map = object(value, pointer, "`parameters` (a JSON Schema)")?;
    match map.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => {
            return Err(err(
                format!("{pointer}/type"),
                format!("parameters must be an object schema (`type: object`), found type {other}"),
            ));
        }
        None => {
            return Err(err(
                pointer,
                "parameters must be an object schema: `type: object` is missing",
            ));
        }
    }
    let properties = match map.get("properties") {
        None => None,
        Some(p) => Some(object(p, &format!("{pointer}/properties"), "`properties`")?),
    };
    no_stray_nulls(value, pointer)?;
    if let Some(properties) = properties {
        for (name, schema) in properties {
            if !schema.is_object() && !schema.is_boolean() {
                return Err(wrong_kind(
                    format!("{pointer}/properties/{}", escape(name)),
                    "a property's schema must be an object",
                    schema,
                ));
            }
        }
    }
    if let Some(required) = map.get("required") {
        let names = as_list(
            required,
            &format!("{pointer}/required"),
            "must be a list of property names",
        )?;
        for (i, n) in names.iter().enumerate() {
            let Some(n) = n.as_str() else {
                return Err(err(
                    format!("{pointer}/required/{i}"),
                    "must be a property name",
                ));
            };
            if !properties.is_some_and(|p| p.contains_key(n)) {
                return Err(err(
                    format!("{pointer}/required/{i}"),
                    format!("`{n}` is required but not among `properties`"),
                ));
            }
        }
    }
    Ok(value.clone())
}

/// The keywords of JSON Schema (2020-12 and draft 7) and OpenAPI that may
/// hold `null`; any other key with a `null` value is a slip, not a schema.
const NULL_KEYWORDS: &[&str] = &["default", "const", "enum", "examples", "example"];

/// Keys under which a schema holds subschemas by name.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Keys that hold one subschema or a list of them.
const SCHEMA_SLOTS: &[&str] = &[
    "items",
    "additionalProperties",
    "additionalItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "anyOf",
    "oneOf",
    "allOf",
    "prefixItems",
];

/// Refuses a schema key with a `null` value that no keyword takes: in YAML,
/// a comma inside `{…}` ends a value, so `{description: The date, YYYY-MM-DD.}`
/// becomes a description and a key `YYYY-MM-DD.` with no value.
fn no_stray_nulls(schema: &Value, pointer: &str) -> Result<(), SpecError> {
    let Some(map) = schema.as_object() else {
        return Ok(());
    };
    if let Some((key, _)) = map
        .iter()
        .find(|(k, v)| v.is_null() && !NULL_KEYWORDS.contains(&k.as_str()))
    {
        return Err(err(
            format!("{pointer}/{}", escape(key)),
            format!(
                "`{key}` has no value and is no JSON Schema keyword; in YAML a comma \
                 inside `{{…}}` ends a value, so quote the text that holds one"
            ),
        ));
    }
    for (key, sub) in map {
        let here = format!("{pointer}/{}", escape(key));
        if SCHEMA_MAPS.contains(&key.as_str())
            && let Some(subs) = sub.as_object()
        {
            for (name, s) in subs {
                no_stray_nulls(s, &format!("{here}/{}", escape(name)))?;
            }
        } else if SCHEMA_SLOTS.contains(&key.as_str()) {
            match sub {
                Value::Array(list) => {
                    for (i, s) in list.iter().enumerate() {
                        no_stray_nulls(s, &format!("{here}/{i}"))?;
                    }
                }
                s => no_stray_nulls(s, &here)?,
            }
        }
    }
    Ok(())
}

fn parse_fixtures(
    value: &Value,
    tools: &[ToolSpec],
) -> Result<BTreeMap<String, Vec<Value>>, SpecError> {
    let map = object(value, "/fixtures", "`fixtures` (entity name → records)")?;
    let mut out = BTreeMap::new();
    for (entity, records) in map {
        let pointer = format!("/fixtures/{}", escape(entity));
        let items = as_list(records, &pointer, "must be a list of records")?;
        for (i, record) in items.iter().enumerate() {
            object(record, &format!("{pointer}/{i}"), "a record")?;
        }
        out.insert(entity.clone(), items.clone());
    }
    // Every entity's id field at once, so a spec is fixed in one round.
    let (_, missing) = crate::keys::id_fields(tools, &out);
    match missing.as_slice() {
        [] => Ok(out),
        [one] => Err(err(
            format!("/fixtures/{}", escape(&one.entity)),
            format!("{}; {ID_FIELD_HINT}", one.describe()),
        )),
        many => Err(err(
            "/fixtures",
            format!(
                "{}; {ID_FIELD_HINT}",
                many.iter()
                    .map(crate::keys::NoIdField::describe)
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        )),
    }
}

/// What an entity without an id field needs, after the names tried.
const ID_FIELD_HINT: &str = "a record needs an id field, unique within its entity: the \
    field a tool takes for it (`claim_number`, `msisdn`), else `<singular>_id` or `id`";

/// The singular of an entity name (`orders` → `order`, `addresses` →
/// `address`, `companies` → `company`).
pub fn singular(entity: &str) -> String {
    if let Some(stem) = entity.strip_suffix("ies") {
        format!("{stem}y")
    } else if let Some(stem) = entity.strip_suffix("sses") {
        format!("{stem}ss")
    } else if let Some(stem) = entity.strip_suffix("ses") {
        format!("{stem}s")
    } else if let Some(stem) = entity.strip_suffix('s') {
        if stem.ends_with('s') {
            entity.to_owned()
        } else {
            stem.to_owned()
        }
    } else {
        entity.to_owned()
    }
}

/// The fields that may hold a record's id, in order of preference:
/// `<singular>_id`, then `id`.
pub fn id_keys(entity: &str) -> Vec<String> {
    vec![format!("{}_id", singular(entity)), "id".to_owned()]
}

/// A record's id as text, from the first id field it has.
pub fn record_id(fields: &Map<String, Value>, id_keys: &[String]) -> Option<String> {
    id_keys.iter().find_map(|k| match fields.get(k) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(extra: &Value) -> Value {
        let mut d = json!({
            "name": "t", "system_prompt": "Help.",
            "tools": [{"name": "get_order", "inputSchema": {"type": "object",
                "properties": {"order_id": {"type": "string"}}}}],
        });
        for (k, v) in extra.as_object().unwrap() {
            d[k] = v.clone();
        }
        d
    }

    #[test]
    fn a_schema_key_left_without_a_value_is_refused_where_it_stands() {
        // What YAML makes of `{type: string, description: The date, YYYY-MM-DD.}`.
        let tools = |dob: Value| {
            json!({"tools": [{"name": "find_patient", "inputSchema": {"type": "object",
                "properties": {"who": {"anyOf": [{"type": "object", "properties": {"dob": dob}}]}}}}]})
        };
        let slip = json!({"type": "string", "description": "The date", "YYYY-MM-DD.": null});
        let e = Spec::from_value(&doc(&tools(slip))).unwrap_err();
        assert_eq!(
            e.pointer,
            "/tools/0/inputSchema/properties/who/anyOf/0/properties/dob/YYYY-MM-DD."
        );
        assert!(e.message.contains("no JSON Schema keyword"), "{e}");
        // Keywords that may be null, and unknown keys with a value, stand.
        let fine = json!({"type": ["string", "null"], "default": null, "x-note": "kept"});
        assert!(Spec::from_value(&doc(&tools(fine))).is_ok());
    }

    #[test]
    fn fixtures_load_keyed_by_the_field_the_tools_name_and_every_keyless_entity_is_named() {
        let tools = json!([{"name": "get_policy", "inputSchema": {"type": "object",
            "properties": {"policy_number": {"type": "string"}}}}]);
        let ok = json!({"tools": tools,
            "fixtures": {"policies": [{"policy_number": "HO-1"}, {"policy_number": "HO-2"}]}});
        let spec = Spec::from_value(&doc(&ok)).unwrap();
        assert_eq!(spec.id_fields()["policies"].keys, ["policy_number"]);
        // Two entities without an id field: one error names both, and the
        // names tried.
        let bad = json!({"tools": tools, "fixtures": {
            "policies": [{"policy_number": "HO-1"}, {"status": "active"}],
            "notes": [{"text": "hello"}]}});
        let e = Spec::from_value(&doc(&bad)).unwrap_err();
        assert_eq!(e.pointer, "/fixtures");
        assert!(e.message.contains("`notes` has no id field"), "{e}");
        assert!(
            e.message
                .contains("`policies` has no id field (tried `policy_number`: missing in record 1"),
            "{e}"
        );
        assert!(e.message.contains("`policy_id`, `id`: in no record"), "{e}");
    }

    #[test]
    fn dimensions_is_axes() {
        let spec = Spec::from_value(&doc(&json!({"dimensions": {"stance": ["hurried"]}}))).unwrap();
        assert_eq!(spec.axes.pin("stance"), Some(&["hurried".to_owned()][..]));
        let e = Spec::from_value(&doc(
            &json!({"dimensions": {"stance": "hurried"}, "axes": {"stance": "confused"}}),
        ))
        .unwrap_err();
        assert_eq!(e.pointer, "/dimensions");
        let e =
            Spec::from_value(&doc(&json!({"dimensions": {"stanse": ["hurried"]}}))).unwrap_err();
        assert!(e.message.contains("did you mean `stance`"), "{e}");
    }

    #[test]
    fn pinned_axes_merge_over_the_specs() {
        let mut spec = Spec::from_value(&doc(
            &json!({"axes": {"stance": ["confused"], "history": ["fresh"]}}),
        ))
        .unwrap();
        spec.pin_axes(&json!({"stance": ["hurried", "skeptical"]}))
            .unwrap();
        assert_eq!(spec.axes.pin("stance").unwrap(), ["hurried", "skeptical"]);
        assert_eq!(spec.axes.pin("history").unwrap(), ["fresh"]);
        assert!(spec.pin_axes(&json!({"stance": ["rushed"]})).is_err());
    }

    /// `docs/spec.md` names every key the parser accepts, in backticks.
    #[test]
    fn the_spec_reference_names_every_key_the_parser_accepts() {
        let doc = include_str!("../../../docs/spec.md");
        let mut missing = Vec::new();
        for (section, keys) in super::spec_keys() {
            assert!(!keys.is_empty(), "{section}");
            for key in keys {
                if !doc.contains(&format!("`{key}`")) {
                    missing.push(format!("{section}: `{key}`"));
                }
            }
        }
        assert!(missing.is_empty(), "docs/spec.md lacks {missing:?}");
    }
}
