//! The rules each tool obeys, compiled once per spec: what the words say
//! ([`sparring_reading::precondition`]) and what the spec's `world:` section declares.

use serde_json::{Map, Value, json};
use sparring_reading::precondition::{Precondition, Reading, Source, normalise, value_matches};
use sparring_reading::tool::ToolModel;
use sparring_types::world_spec::{
    Comparison, Condition, Effect, EffectOp, FieldPath, Operand, ToolWorld,
};
use sparring_types::{ToolSpec, singular};

type Record = Map<String, Value>;

/// An argument's allowed values stated in words.
#[derive(Clone, Debug)]
pub(crate) struct WordEnum {
    pub param: String,
    pub values: Vec<String>,
    pub sentence: String,
    pub source: Source,
}

/// Everything one tool obeys.
#[derive(Clone, Debug, Default)]
pub(crate) struct ToolRules {
    /// States its records must (or must not) be in.
    pub preconditions: Vec<Precondition>,
    /// Arguments restricted to values named in words.
    pub enums: Vec<WordEnum>,
    /// The status a successful call leaves on its target, with the
    /// sentence that says so.
    pub sets_status: Option<(String, String)>,
    /// Fields a successful call empties, with the sentence.
    pub clears: Vec<(String, String)>,
    /// The sentence that limits the tool to once per record.
    pub once: Option<String>,
    /// What the spec's `world:` section declares.
    pub declared: ToolWorld,
}

impl ToolRules {
    /// Every rule in words, for `--explain`.
    pub(crate) fn explain(&self) -> Vec<Value> {
        let mut out = Vec::new();
        for p in &self.preconditions {
            let record = p
                .param
                .as_ref()
                .map_or_else(|| p.entity.clone(), |x| format!("{} (`{x}`)", p.entity));
            let how = if p.allowed { "must be" } else { "must not be" };
            out.push(json!({
                "rule": format!("{record} {} {how} {}", p.field, p.values.join(" or ")),
                "kind": if p.allowed { "requires" } else { "forbids" },
                "from": p.source.describe(&p.tool),
                "sentence": p.sentence,
            }));
        }
        for e in &self.enums {
            out.push(json!({
                "rule": format!("`{}` is one of {}", e.param, quoted(&e.values)),
                "kind": "enum",
                "from": e.source.describe(""),
                "sentence": e.sentence,
            }));
        }
        if let Some((value, sentence)) = &self.sets_status {
            out.push(json!({"rule": format!("sets status to `{value}`"), "kind": "sets", "from": "words", "sentence": sentence}));
        }
        for (field, sentence) in &self.clears {
            out.push(json!({"rule": format!("clears `{field}`"), "kind": "clears", "from": "words", "sentence": sentence}));
        }
        if let Some(sentence) = &self.once {
            out.push(json!({"rule": "acts on a record at most once", "kind": "once", "from": "words", "sentence": sentence}));
        }
        let declared = "the spec's `world` section";
        for c in &self.declared.requires {
            out.push(json!({"rule": c.text, "kind": "requires", "from": declared}));
        }
        for e in &self.declared.effects {
            out.push(json!({"rule": e.text, "kind": "effect", "from": declared}));
        }
        if let Some(r) = &self.declared.returns {
            out.push(json!({"rule": format!("returns {r}"), "kind": "returns", "from": declared}));
        }
        if let Some(c) = &self.declared.creates {
            out.push(
                json!({"rule": format!("creates a {c}"), "kind": "creates", "from": declared}),
            );
        }
        out
    }
}

fn quoted(values: &[String]) -> String {
    values
        .iter()
        .map(|v| format!("'{v}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Sorts what the words say into each tool's rules (`models` and `tools`
/// in the same order).
pub(crate) fn compile(
    tools: &[ToolSpec],
    models: &[ToolModel],
    readings: Vec<Reading>,
    world: &sparring_types::WorldSpec,
) -> Vec<ToolRules> {
    let mut out: Vec<ToolRules> = tools
        .iter()
        .map(|t| ToolRules {
            declared: world.tool(&t.name).cloned().unwrap_or_default(),
            ..ToolRules::default()
        })
        .collect();
    let index = |name: &str| tools.iter().position(|t| t.name == name);
    for (i, m) in models.iter().enumerate() {
        if let (Some(s), Some(e)) = (&m.requires_status, &m.entity) {
            out[i].preconditions.push(Precondition {
                tool: m.name.clone(),
                param: None,
                entity: singular(e),
                field: "status".to_owned(),
                values: vec![s.clone()],
                allowed: true,
                sentence: m.name.clone(),
                source: Source::Name,
            });
        }
    }
    // A description says what its tool does; the policy may add to it.
    // Of two sentences that set a status, the description wins.
    let mut status_from_description = vec![false; tools.len()];
    for r in readings {
        let Some(i) = index(r.tool()) else { continue };
        let rules = &mut out[i];
        match r {
            Reading::Precondition(p) => {
                // One text that lists its checks in parts ("Resumes a
                // suspended line. Checks: … Suspended or Pending
                // Activation") allows what any part allows.
                if p.allowed
                    && p.source == Source::Description
                    && let Some(same) = rules.preconditions.iter_mut().find(|q| {
                        q.allowed
                            && q.source == Source::Description
                            && q.field == p.field
                            && q.param == p.param
                    })
                {
                    for v in p.values {
                        if !same.values.contains(&v) {
                            same.values.push(v);
                        }
                    }
                    if !same.sentence.contains(&p.sentence) {
                        same.sentence = format!("{} {}", same.sentence, p.sentence);
                    }
                    continue;
                }
                if !rules.preconditions.contains(&p) {
                    rules.preconditions.push(p);
                }
            }
            Reading::SetsStatus {
                entity,
                value,
                sentence,
                source,
                ..
            } => {
                let own = entity.is_none()
                    || entity.as_deref() == models[i].entity.as_deref().map(singular).as_deref();
                if !own {
                    continue;
                }
                let from_description = source == Source::Description;
                if rules.sets_status.is_none() || (from_description && !status_from_description[i])
                {
                    rules.sets_status = Some((value, sentence));
                    status_from_description[i] = from_description;
                }
            }
            Reading::Clears {
                field, sentence, ..
            } => rules.clears.push((field, sentence)),
            Reading::Once { sentence, .. } => {
                rules.once.get_or_insert(sentence);
            }
            Reading::Enum {
                param,
                values,
                sentence,
                source,
                ..
            } => {
                if !rules.enums.iter().any(|e| e.param == param) {
                    rules.enums.push(WordEnum {
                        param,
                        values,
                        sentence,
                        source,
                    });
                }
            }
        }
    }
    out
}

/// A field of a record by dotted path.
pub(crate) fn get_path<'a>(record: &'a Record, path: &str) -> Option<&'a Value> {
    let mut parts = path.split('.');
    let mut cur = record.get(parts.next()?)?;
    for p in parts {
        cur = cur.as_object()?.get(p)?;
    }
    Some(cur)
}

/// Sets a field by dotted path, making the objects on the way.
pub(crate) fn set_path(record: &mut Record, path: &str, value: Value) {
    let parts: Vec<&str> = path.split('.').collect();
    let Some((last, inner)) = parts.split_last() else {
        return;
    };
    let mut cur = record;
    for p in inner {
        let slot = cur
            .entry((*p).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if !slot.is_object() {
            *slot = Value::Object(Map::new());
        }
        let Some(next) = slot.as_object_mut() else {
            return;
        };
        cur = next;
    }
    cur.insert((*last).to_owned(), value);
}

/// A value as a number, numbers in text included.
pub(crate) fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `a + b` as JSON: an integer when both are, else a float without
/// binary noise.
pub(crate) fn add(a: &Value, b: f64) -> Option<Value> {
    if let (Some(x), true) = (a.as_i64(), b.fract() == 0.0 && b.abs() < 9e15) {
        #[allow(clippy::cast_possible_truncation)]
        let sum = x.checked_add(b as i64)?;
        return Some(Value::Number(sum.into()));
    }
    let x = number(a).unwrap_or(0.0) + b;
    let x = (x * 1e9).round() / 1e9;
    serde_json::Number::from_f64(x).map(Value::Number)
}

/// Text of a value for messages.
pub(crate) fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether two values are the same for a rule: numbers by value, text by
/// its words (case, `_` and `-` aside).
pub(crate) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => normalise(x) == normalise(y),
        _ => match (number(a), number(b)) {
            (Some(x), Some(y)) => (x - y).abs() < 1e-9,
            _ => a == b,
        },
    }
}

/// Whether a condition holds for the values at hand (`None`: the field is
/// missing).
pub(crate) fn holds(condition: &Condition, left: Option<&Value>, right: Option<&Value>) -> bool {
    let Some(left) = left.filter(|v| !v.is_null()) else {
        return condition.op == Comparison::Ne;
    };
    let Some(right) = right else {
        return false;
    };
    match condition.op {
        Comparison::Eq => same(left, right),
        Comparison::Ne => !same(left, right),
        Comparison::In => right
            .as_array()
            .is_some_and(|items| items.iter().any(|r| same(left, r))),
        op => match (number(left), number(right)) {
            (Some(x), Some(y)) => match op {
                Comparison::Ge => x >= y - 1e-9,
                Comparison::Le => x <= y + 1e-9,
                Comparison::Gt => x > y + 1e-9,
                Comparison::Lt => x < y - 1e-9,
                _ => false,
            },
            _ => false,
        },
    }
}

/// Whether a record's value satisfies a precondition.
pub(crate) fn satisfies(p: &Precondition, value: &str) -> bool {
    let hit = p.values.iter().any(|v| value_matches(value, v));
    hit == p.allowed
}

/// A value in the same case as the values the entity's records show
/// (`Active` when records say `Suspended`; the words otherwise).
pub(crate) fn in_house_case(value: &str, known: &[String]) -> String {
    if let Some(same) = known.iter().find(|k| normalise(k) == normalise(value)) {
        return same.clone();
    }
    let titled = !known.is_empty()
        && known.iter().all(|k| {
            k.split_whitespace()
                .all(|w| w.chars().next().is_some_and(char::is_uppercase))
        });
    let words = normalise(value);
    if titled {
        words
            .split(' ')
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                    .unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join(" ")
    } else if known.iter().all(|k| k == &k.to_lowercase())
        && value.chars().any(char::is_uppercase)
        && value.contains('_')
    {
        words
    } else {
        value.to_owned()
    }
}

/// The effect's new value for a field.
pub(crate) fn apply(effect: &Effect, current: Option<&Value>, value: &Value) -> Option<Value> {
    match effect.op {
        EffectOp::Set => Some(value.clone()),
        EffectOp::Add => add(current.unwrap_or(&json!(0)), number(value)?),
        EffectOp::Subtract => add(current.unwrap_or(&json!(0)), -number(value)?),
        EffectOp::Append => {
            let mut list = current
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            list.push(value.clone());
            Some(Value::Array(list))
        }
    }
}

/// The record names an operand reads, with the call's arguments resolved.
pub(crate) fn operand_value(
    operand: &Operand,
    args: &Record,
    field: &dyn Fn(&FieldPath) -> Option<Value>,
) -> Option<Value> {
    match operand {
        Operand::Const(v) => Some(v.clone()),
        Operand::Arg(a) => args.get(a).cloned(),
        Operand::Field(p) => field(p),
    }
}
