//! The spec's `world:` section: what the sandbox world cannot read from the
//! tools' own words, declared per tool.
//!
//! ```yaml
//! world:
//!   transfer_money:
//!     ids: {account_id: account, payee_id: payee}      # the entity each id argument names
//!     requires: ["account.status == active", "account.balance >= amount"]
//!     effects: ["account.balance -= amount"]
//!   get_account: {returns: account}                    # the record, or one field: account.balance
//!   add_payee: {creates: payee, effects: ["payee.customer_id = customer_id"]}
//! ```
//!
//! A **record name** (`account`, `from_account`) names a record the call
//! points at: the stem of one of the tool's id arguments (`from_account` for
//! `from_account_id`), an entity named in `ids`, `creates` or the fixtures,
//! or a word of the tool's name. A **condition** compares a field of such a
//! record with a constant, an argument or another record's field (`== != in
//! >= <= > <`); an **effect** sets a field (`=`), adds or subtracts a number
//! (`+=`, `-=`) or appends to a list field (`append`). Everything is checked
//! here against the spec's tools: unknown keys, tools, parameters and record
//! names are errors with the JSON pointer and a did-you-mean. What each rule
//! means at call time is the world's (`sparring-world`, `docs/world.md`).

use crate::spec::{SpecError, as_map, as_text, check_keys, did_you_mean, err, escape, wrong_kind};
use crate::tool::ToolSpec;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// Words before an id's stem that say which part a record plays in a call
/// (`from_account_id` names an account, the one money leaves).
pub const ROLE_PREFIXES: &[&str] = &[
    "from",
    "to",
    "source",
    "destination",
    "origin",
    "recipient",
    "new",
    "old",
    "original",
    "target",
];

/// Parameter-name endings that mark an id (`order_id`, `flight_number`).
const ID_ENDINGS: &[&str] = &["id", "ids", "number", "code", "no", "ref"];

/// The keys one tool's entry may have.
const TOOL_KEYS: &[&str] = &["ids", "requires", "effects", "returns", "creates"];

/// The `world:` section, tool by tool.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WorldSpec {
    /// Tool name → what is declared for it.
    pub tools: BTreeMap<String, ToolWorld>,
}

impl WorldSpec {
    /// What is declared for `tool`, if anything.
    pub fn tool(&self, tool: &str) -> Option<&ToolWorld> {
        self.tools.get(tool)
    }
}

/// What the spec declares for one tool.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ToolWorld {
    /// Id argument → the entity it names, singular as written (`account`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub ids: BTreeMap<String, String>,
    /// Conditions the call needs; a call that breaks one is refused.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<Condition>,
    /// What the call changes, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<Effect>,
    /// What a read answers: a record, or one field of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub returns: Option<FieldPath>,
    /// The entity a call creates a record of (singular as written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub creates: Option<String>,
}

/// `record.field` (the field may go deeper: `order.address.zip`), or a
/// record alone (`returns: account`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldPath {
    /// The record name.
    pub record: String,
    /// The field within it, dotted for nested fields; `None` for the record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl std::fmt::Display for FieldPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{}.{field}", self.record),
            None => f.write_str(&self.record),
        }
    }
}

/// The right-hand side of a condition or an effect.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum Operand {
    /// A constant: text, a number, a boolean, null, or (for `in`) a list.
    Const(Value),
    /// The value of one of the call's arguments.
    Arg(String),
    /// A field of a record the call names.
    Field(FieldPath),
}

/// How a condition compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Comparison {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `in`: one of a list.
    In,
    /// `>=`
    Ge,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `<`
    Lt,
}

impl Comparison {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            Self::Eq => "==",
            Self::Ne => "!=",
            Self::In => "in",
            Self::Ge => ">=",
            Self::Le => "<=",
            Self::Gt => ">",
            Self::Lt => "<",
        }
    }

    fn numeric(self) -> bool {
        matches!(self, Self::Ge | Self::Le | Self::Gt | Self::Lt)
    }
}

/// A condition a call needs: `account.balance >= amount`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Condition {
    /// The field compared.
    pub left: FieldPath,
    /// How.
    pub op: Comparison,
    /// With what.
    pub right: Operand,
    /// The condition as the spec wrote it.
    pub text: String,
}

/// How an effect changes its field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EffectOp {
    /// `=`
    Set,
    /// `+=`
    Add,
    /// `-=`
    Subtract,
    /// `append`: to a list field.
    Append,
}

impl EffectOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            Self::Set => "=",
            Self::Add => "+=",
            Self::Subtract => "-=",
            Self::Append => "append",
        }
    }
}

/// One change a call makes: `account.balance -= amount`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Effect {
    /// The field changed.
    pub target: FieldPath,
    /// How.
    pub op: EffectOp,
    /// By or to what.
    pub value: Operand,
    /// The effect as the spec wrote it.
    pub text: String,
}

/// The stem of an id parameter (`order` for `order_id`, `from_account` for
/// `from_account_id`), if the name ends like an id.
fn id_stem(param: &str) -> Option<String> {
    let words: Vec<&str> = param.split('_').filter(|w| !w.is_empty()).collect();
    let (last, stem) = words.split_last()?;
    (!stem.is_empty() && ID_ENDINGS.contains(&last.to_lowercase().as_str()))
        .then(|| stem.join("_").to_lowercase())
}

/// A stem without its role prefix (`account` for `from_account`).
pub fn without_role(stem: &str) -> &str {
    match stem.split_once('_') {
        Some((role, rest)) if ROLE_PREFIXES.contains(&role) && !rest.is_empty() => rest,
        _ => stem,
    }
}

/// Parses `world:` strictly against the spec's tools and fixture keys.
pub(crate) fn parse(
    value: &Value,
    tools: &[ToolSpec],
    fixtures: &BTreeMap<String, Vec<Value>>,
) -> Result<WorldSpec, SpecError> {
    let fixture_keys: Vec<String> = fixtures.keys().cloned().collect();
    let fixture_keys = fixture_keys.as_slice();
    let map = as_map(
        value,
        "/world",
        "`world` must map tool names to what they do",
    )?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let mut out = BTreeMap::new();
    for (tool_name, entry) in map {
        let pointer = format!("/world/{}", escape(tool_name));
        let Some(tool) = tools.iter().find(|t| &t.name == tool_name) else {
            return Err(err(
                pointer,
                format!(
                    "no tool is named `{tool_name}`{}",
                    did_you_mean(tool_name, &names)
                ),
            ));
        };
        out.insert(
            tool_name.clone(),
            parse_tool(entry, tool, fixture_keys, fixtures, &pointer)?,
        );
    }
    Ok(WorldSpec { tools: out })
}

/// What a condition or effect of one tool may name.
struct Names<'a> {
    tool: &'a ToolSpec,
    params: Vec<&'a str>,
    records: Vec<String>,
    /// The fixtures, to check that a condition's field is one their
    /// records have.
    fixtures: &'a BTreeMap<String, Vec<Value>>,
}

impl Names<'_> {
    fn record_list(&self) -> Vec<&str> {
        self.records.iter().map(String::as_str).collect()
    }
}

fn parse_tool(
    entry: &Value,
    tool: &ToolSpec,
    fixture_keys: &[String],
    fixtures: &BTreeMap<String, Vec<Value>>,
    pointer: &str,
) -> Result<ToolWorld, SpecError> {
    let map = as_map(
        entry,
        pointer,
        &format!(
            "a tool's world entry must be an object with {}",
            TOOL_KEYS.join(", ")
        ),
    )?;
    check_keys(map, pointer, TOOL_KEYS)?;
    let params = tool.parameter_names();
    let mut world = ToolWorld::default();
    if let Some(ids) = map.get("ids") {
        let at = format!("{pointer}/ids");
        let ids = as_map(ids, &at, "`ids` must map id arguments to entities")?;
        for (param, entity) in ids {
            let at = format!("{at}/{}", escape(param));
            if !params.contains(&param.as_str()) {
                return Err(err(
                    at,
                    format!(
                        "`{}` has no parameter `{param}`{}",
                        tool.name,
                        did_you_mean(param, &params)
                    ),
                ));
            }
            world
                .ids
                .insert(param.clone(), identifier(entity, &at, "an entity name")?);
        }
    }
    if let Some(creates) = map.get("creates") {
        world.creates = Some(identifier(
            creates,
            &format!("{pointer}/creates"),
            "an entity name",
        )?);
    }
    let names = Names {
        tool,
        params: params.clone(),
        records: record_names(tool, &world, fixture_keys),
        fixtures,
    };
    if let Some(returns) = map.get("returns") {
        let at = format!("{pointer}/returns");
        let text = as_text(
            returns,
            &at,
            "`returns` must be a record name or RECORD.FIELD",
        )?;
        let path = path(text.trim(), &at)?;
        check_record(&path, &names, &at, text)?;
        world.returns = Some(path);
    }
    if let Some(requires) = map.get("requires") {
        for (i, text) in strings(requires, &format!("{pointer}/requires"), "conditions")? {
            let at = format!("{pointer}/requires/{i}");
            world.requires.push(condition(text, &names, &at)?);
        }
    }
    if let Some(effects) = map.get("effects") {
        for (i, text) in strings(effects, &format!("{pointer}/effects"), "effects")? {
            let at = format!("{pointer}/effects/{i}");
            world.effects.push(effect(text, &names, &at)?);
        }
    }
    Ok(world)
}

/// Every record name a rule of `tool` may use.
fn record_names(tool: &ToolSpec, world: &ToolWorld, fixture_keys: &[String]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut add = |n: &str| {
        let n = n.to_lowercase();
        if !n.is_empty() && !names.contains(&n) {
            names.push(n);
        }
    };
    for p in tool.parameter_names() {
        if let Some(stem) = id_stem(p) {
            add(&stem);
            add(without_role(&stem));
            add(&crate::singular(without_role(&stem)));
        }
    }
    for (p, e) in &world.ids {
        add(e);
        if let Some(stem) = id_stem(p) {
            add(&stem);
        }
    }
    if let Some(c) = &world.creates {
        add(c);
    }
    for k in fixture_keys {
        add(&crate::singular(k));
    }
    let words: Vec<&str> = tool
        .name
        .split(['_', '-', '.'])
        .filter(|w| !w.is_empty())
        .collect();
    for (i, w) in words.iter().enumerate() {
        add(&crate::singular(w));
        if let Some(next) = words.get(i + 1) {
            add(&format!("{w}_{next}"));
        }
    }
    names
}

fn identifier(value: &Value, at: &str, what: &str) -> Result<String, SpecError> {
    match value {
        Value::String(s) if crate::words::is_identifier(s.trim()) => Ok(s.trim().to_owned()),
        Value::String(s) => Err(err(
            at,
            format!("`{s}` is not {what} (letters, digits and `_`)"),
        )),
        other => Err(wrong_kind(at, &format!("must be {what}"), other)),
    }
}

fn strings<'a>(value: &'a Value, at: &str, what: &str) -> Result<Vec<(usize, &'a str)>, SpecError> {
    match value {
        Value::String(s) => Ok(vec![(0, s.as_str())]),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) if !s.trim().is_empty() => Ok((i, s.as_str())),
                other => Err(wrong_kind(format!("{at}/{i}"), "must be text", other)),
            })
            .collect(),
        other => Err(wrong_kind(
            at,
            &format!("`{what}` must be a list of texts"),
            other,
        )),
    }
}

/// `record` or `record.field.sub`.
fn path(text: &str, at: &str) -> Result<FieldPath, SpecError> {
    let parts: Vec<&str> = text.split('.').collect();
    if parts.iter().any(|p| !crate::words::is_identifier(p)) {
        return Err(err(
            at,
            format!("`{text}` must be RECORD or RECORD.FIELD (letters, digits and `_`)"),
        ));
    }
    let (record, rest) = parts
        .split_first()
        .ok_or_else(|| err(at, "empty: give RECORD or RECORD.FIELD"))?;
    Ok(FieldPath {
        record: (*record).to_lowercase(),
        field: (!rest.is_empty()).then(|| rest.join(".")),
    })
}

fn check_record(
    path: &FieldPath,
    names: &Names<'_>,
    at: &str,
    text: &str,
) -> Result<(), SpecError> {
    if names.records.contains(&path.record) {
        return Ok(());
    }
    Err(err(
        at,
        format!(
            "`{text}`: `{}` names no record of a `{}` call (the stem of an id argument, an entity of `ids` or `creates`, a fixtures entity, or a word of the tool's name){}",
            path.record,
            names.tool.name,
            did_you_mean(&path.record, &names.record_list())
        ),
    ))
}

/// A condition's field is one the record's fixtures have, when it has
/// fixtures: `policy.statuss == active` would refuse every call.
fn check_field(path: &FieldPath, names: &Names<'_>, at: &str, text: &str) -> Result<(), SpecError> {
    let Some(field) = path.field.as_deref() else {
        return Ok(());
    };
    let first = field.split('.').next().unwrap_or(field);
    let Some((entity, records)) = names.fixtures.iter().find(|(e, _)| {
        let stem = without_role(&path.record);
        **e == path.record || crate::singular(e) == path.record || crate::singular(e) == stem
    }) else {
        return Ok(());
    };
    let mut known: Vec<&str> = records
        .iter()
        .filter_map(Value::as_object)
        .flat_map(|r| r.keys().map(String::as_str))
        .collect();
    known.sort_unstable();
    known.dedup();
    if known.is_empty() || known.contains(&first) {
        return Ok(());
    }
    Err(err(
        at,
        format!(
            "`{text}`: no record of the `{entity}` fixtures has a field `{first}`{}",
            did_you_mean(first, &known)
        ),
    ))
}

/// The leading `record.field` of `text` and the rest.
fn split_path(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(text.len());
    (&text[..end], text[end..].trim_start())
}

fn condition(text: &str, names: &Names<'_>, at: &str) -> Result<Condition, SpecError> {
    let shape = "a condition reads RECORD.FIELD OP VALUE, OP one of == != in >= <= > <";
    let trimmed = text.trim();
    let (left, rest) = split_path(trimmed);
    if left.is_empty() {
        return Err(err(at, format!("`{trimmed}`: {shape}")));
    }
    let left = field_path(left, names, at, trimmed)?;
    check_field(&left, names, at, trimmed)?;
    let ops = [
        ("==", Comparison::Eq),
        ("!=", Comparison::Ne),
        (">=", Comparison::Ge),
        ("<=", Comparison::Le),
        (">", Comparison::Gt),
        ("<", Comparison::Lt),
    ];
    let (op, right) = if let Some((sym, op)) = ops.iter().find(|(s, _)| rest.starts_with(*s)) {
        (*op, rest[sym.len()..].trim())
    } else if let Some(r) = rest.strip_prefix("in")
        && (r.starts_with(' ') || r.starts_with('[') || r.starts_with('('))
    {
        (Comparison::In, r.trim())
    } else {
        return Err(err(at, format!("`{trimmed}`: {shape}")));
    };
    let right = operand(
        right,
        names,
        at,
        trimmed,
        op.numeric(),
        op == Comparison::In,
    )?;
    Ok(Condition {
        left,
        op,
        right,
        text: trimmed.to_owned(),
    })
}

fn effect(text: &str, names: &Names<'_>, at: &str) -> Result<Effect, SpecError> {
    let shape = "an effect reads RECORD.FIELD = VALUE, += VALUE, -= VALUE or append VALUE";
    let trimmed = text.trim();
    let (target, rest) = split_path(trimmed);
    if target.is_empty() {
        return Err(err(at, format!("`{trimmed}`: {shape}")));
    }
    let target = field_path(target, names, at, trimmed)?;
    let (op, value) = if let Some(v) = rest.strip_prefix("+=") {
        (EffectOp::Add, v)
    } else if let Some(v) = rest.strip_prefix("-=") {
        (EffectOp::Subtract, v)
    } else if let Some(v) = rest.strip_prefix("append ") {
        (EffectOp::Append, v)
    } else if let Some(v) = rest.strip_prefix('=')
        && !v.starts_with('=')
    {
        (EffectOp::Set, v)
    } else {
        return Err(err(at, format!("`{trimmed}`: {shape}")));
    };
    let numeric = matches!(op, EffectOp::Add | EffectOp::Subtract);
    let value = operand(value.trim(), names, at, trimmed, numeric, false)?;
    Ok(Effect {
        target,
        op,
        value,
        text: trimmed.to_owned(),
    })
}

fn field_path(
    text: &str,
    names: &Names<'_>,
    at: &str,
    whole: &str,
) -> Result<FieldPath, SpecError> {
    let p = path(text, at)?;
    if p.field.is_none() {
        return Err(err(
            at,
            format!("`{whole}`: `{text}` needs a field (RECORD.FIELD, such as `{text}.status`)"),
        ));
    }
    check_record(&p, names, at, whole)?;
    Ok(p)
}

fn operand(
    text: &str,
    names: &Names<'_>,
    at: &str,
    whole: &str,
    numeric: bool,
    list: bool,
) -> Result<Operand, SpecError> {
    if text.is_empty() {
        return Err(err(at, format!("`{whole}`: the value is missing")));
    }
    if list {
        let inner = text
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .or_else(|| text.strip_prefix('(').and_then(|t| t.strip_suffix(')')));
        let Some(inner) = inner else {
            return Err(err(
                at,
                format!("`{whole}`: `in` takes a list, such as `[active, dormant]`"),
            ));
        };
        let items: Vec<Value> = split_list(inner)
            .into_iter()
            .map(|item| constant(item).unwrap_or_else(|| Value::String(unquote(item).to_owned())))
            .collect();
        if items.is_empty() {
            return Err(err(at, format!("`{whole}`: the list is empty")));
        }
        return Ok(Operand::Const(Value::Array(items)));
    }
    if let Some(v) = constant(text) {
        if numeric && !v.is_number() {
            return Err(err(at, format!("`{whole}`: `{text}` is not a number")));
        }
        return Ok(Operand::Const(v));
    }
    if names.params.contains(&text) {
        return Ok(Operand::Arg(text.to_owned()));
    }
    if text.contains('.') && split_path(text).1.is_empty() {
        let p = path(text, at)?;
        if names.records.contains(&p.record) {
            return Ok(Operand::Field(p));
        }
    }
    if numeric {
        return Err(err(
            at,
            format!(
                "`{whole}`: `{text}` is neither a number, an argument of `{}` nor RECORD.FIELD{}",
                names.tool.name,
                did_you_mean(text, &names.params)
            ),
        ));
    }
    Ok(Operand::Const(Value::String(text.to_owned())))
}

/// A quoted text, a number, `true`, `false` or `null`.
fn constant(text: &str) -> Option<Value> {
    let t = text.trim();
    if t.len() >= 2
        && ((t.starts_with('\'') && t.ends_with('\'')) || (t.starts_with('"') && t.ends_with('"')))
    {
        return Some(Value::String(t[1..t.len() - 1].to_owned()));
    }
    match t {
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        "null" => return Some(Value::Null),
        _ => {}
    }
    if let Ok(i) = t.parse::<i64>() {
        return Some(Value::Number(i.into()));
    }
    t.parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .and_then(serde_json::Number::from_f64)
        .map(Value::Number)
}

fn unquote(text: &str) -> &str {
    let t = text.trim();
    t.strip_prefix(['\'', '"'])
        .and_then(|r| r.strip_suffix(['\'', '"']))
        .unwrap_or(t)
}

/// Items of `a, 'b, c', d`, commas inside quotes kept.
fn split_list(inner: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut quote: Option<char> = None;
    let mut start = 0;
    for (i, c) in inner.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, ',') => {
                out.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(inner[start..].trim());
    out.into_iter().filter(|s| !s.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> Vec<ToolSpec> {
        let tool = |name: &str, params: &[&str]| {
            let typed: Vec<(&str, &str)> = params.iter().map(|p| (*p, "string")).collect();
            ToolSpec::with_parameters(name, &typed)
        };
        vec![
            tool(
                "transfer_money",
                &["from_account_id", "to_account_id", "amount"],
            ),
            tool("get_account", &["account_id"]),
            tool("add_payee", &["customer_id", "name"]),
        ]
    }

    fn parse_json(v: &Value) -> Result<WorldSpec, SpecError> {
        let fixtures: BTreeMap<String, Vec<Value>> = [
            (
                "accounts".to_owned(),
                vec![json!({"account_id": "A-1", "status": "active", "balance": 10})],
            ),
            ("payees".to_owned(), Vec::new()),
        ]
        .into_iter()
        .collect();
        parse(v, &tools(), &fixtures)
    }

    #[test]
    fn the_documented_section_parses() {
        let w = parse_json(&json!({
            "transfer_money": {
                "ids": {"from_account_id": "account"},
                "requires": ["from_account.status in [active, 'on hold']", "from_account.balance >= amount"],
                "effects": ["from_account.balance -= amount", "to_account.balance += amount"],
            },
            "get_account": {"returns": "account.balance"},
            "add_payee": {"creates": "payee", "effects": ["payee.customer_id = customer_id", "payee.state = new"]},
        }))
        .unwrap();
        let t = w.tool("transfer_money").unwrap();
        assert_eq!(t.ids["from_account_id"], "account");
        assert_eq!(t.requires[0].op, Comparison::In);
        assert_eq!(
            t.requires[0].right,
            Operand::Const(json!(["active", "on hold"]))
        );
        assert_eq!(t.requires[1].right, Operand::Arg("amount".into()));
        assert_eq!(t.effects[0].op, EffectOp::Subtract);
        assert_eq!(t.effects[1].target.to_string(), "to_account.balance");
        let r = w.tool("get_account").unwrap().returns.clone().unwrap();
        assert_eq!(
            (r.record.as_str(), r.field.as_deref()),
            ("account", Some("balance"))
        );
        let p = w.tool("add_payee").unwrap();
        assert_eq!(p.creates.as_deref(), Some("payee"));
        assert_eq!(p.effects[1].value, Operand::Const(json!("new")));
    }

    #[test]
    fn mistakes_name_the_pointer_and_the_fix() {
        let cases = [
            (
                json!({"transfer_mony": {}}),
                "/world/transfer_mony",
                "did you mean `transfer_money`",
            ),
            (
                json!({"get_account": {"return": "account"}}),
                "/world/get_account/return",
                "did you mean `returns`",
            ),
            (
                json!({"get_account": {"ids": {"acount_id": "account"}}}),
                "/world/get_account/ids/acount_id",
                "did you mean `account_id`",
            ),
            (
                json!({"transfer_money": {"requires": ["from_acount.balance >= amount"]}}),
                "/world/transfer_money/requires/0",
                "did you mean `from_account`",
            ),
            (
                json!({"transfer_money": {"requires": ["from_account.statuss == active"]}}),
                "/world/transfer_money/requires/0",
                "no record of the `accounts` fixtures has a field `statuss`; did you mean `status`",
            ),
            (
                json!({"transfer_money": {"requires": ["from_account.balance ~ 3"]}}),
                "/world/transfer_money/requires/0",
                "OP one of",
            ),
            (
                json!({"transfer_money": {"requires": ["from_account.balance >= amout"]}}),
                "/world/transfer_money/requires/0",
                "did you mean `amount`",
            ),
            (
                json!({"transfer_money": {"effects": ["from_account.balance -= lots"]}}),
                "/world/transfer_money/effects/0",
                "neither a number",
            ),
            (
                json!({"transfer_money": {"effects": ["from_account.balance"]}}),
                "/world/transfer_money/effects/0",
                "an effect reads",
            ),
            (
                json!({"transfer_money": {"requires": ["from_account == 1"]}}),
                "/world/transfer_money/requires/0",
                "needs a field",
            ),
            (
                json!({"transfer_money": {"requires": ["from_account.status in active"]}}),
                "/world/transfer_money/requires/0",
                "takes a list",
            ),
            (
                json!({"get_account": {"returns": 3}}),
                "/world/get_account/returns",
                "found a number",
            ),
            (
                json!({"get_account": "account"}),
                "/world/get_account",
                "must be an object",
            ),
            (json!([]), "/world", "must map tool names"),
        ];
        for (value, pointer, needle) in cases {
            let e = parse_json(&value).unwrap_err();
            assert_eq!(e.pointer, pointer, "{value}: {e}");
            assert!(e.message.contains(needle), "{value}: {}", e.message);
        }
    }

    #[test]
    fn stems_lose_their_role() {
        assert_eq!(without_role("from_account"), "account");
        assert_eq!(without_role("account"), "account");
        assert_eq!(without_role("to"), "to");
        assert_eq!(id_stem("new_item_ids").as_deref(), Some("new_item"));
        assert_eq!(id_stem("amount"), None);
    }
}
