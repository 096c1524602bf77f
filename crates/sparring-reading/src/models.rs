//! The tool models of a spec: what each tool does, read from its name and
//! parameters ([`crate::tool`]), corrected by what the spec's `world:` section
//! declares and by what the descriptions, the policy and the fixtures show.

use crate::precondition::{Reading, RuleReader};
use crate::tool::{Operation, ToolModel, infer_tool_keyed, name_words, plural};
use serde_json::Value;
use sparring_types::world_spec::{ToolWorld, without_role};
use sparring_types::{Spec, ToolSpec, singular};
use std::collections::{BTreeMap, BTreeSet};

/// The model of every tool of a spec, in the order of `spec.tools`: read
/// from names and parameters, then what the `world:` section declares, then
/// [`refine`]d by the words and fixtures.
pub fn tool_models(spec: &Spec) -> Vec<ToolModel> {
    let fixture_keys: Vec<String> = spec.fixtures.keys().cloned().collect();
    let keyed = crate::tool::key_fields(spec);
    let mut models: Vec<ToolModel> = spec
        .tools
        .iter()
        .map(|t| infer_tool_keyed(t, &fixture_keys, &keyed))
        .collect();
    for (model, tool) in models.iter_mut().zip(&spec.tools) {
        if let Some(declared) = spec.world.tool(&tool.name) {
            declare(model, tool, declared, &fixture_keys);
        }
    }
    refine(&mut models, spec, &fixture_keys);
    models
}

/// Applies what the `world:` section declares about a tool's ids, target
/// and result to its model.
fn declare(model: &mut ToolModel, tool: &ToolSpec, declared: &ToolWorld, entities: &[String]) {
    // The first declared id is the target when names gave none: one that
    // reads like a source (`src`, `from_…`, `payer`) before the others.
    let source_like = |p: &str| {
        ["from", "src", "source", "origin", "sender", "payer"]
            .iter()
            .any(|w| p.starts_with(w))
    };
    let mut ids: Vec<(&String, &String)> = declared.ids.iter().collect();
    ids.sort_by_key(|(p, _)| !source_like(p));
    for (param, entity) in ids {
        let e = entity_named(entity, entities);
        if model.id_param.as_deref() == Some(param.as_str()) {
            model.entity = Some(e.clone());
        } else if let Some(r) = model.references.iter_mut().find(|(p, _)| p == param) {
            r.1.clone_from(&e);
        } else if model.id_param.is_none() && model.operation != Operation::Create {
            model.id_param = Some(param.clone());
            model.entity = Some(e.clone());
            model.any_entity = false;
            model.list = false;
        } else {
            model.references.push((param.clone(), e.clone()));
        }
        model.why.push(format!(
            "`{param}` names `{e}`: declared in the spec's `world` section"
        ));
    }
    if let Some(c) = &declared.creates {
        let e = entity_named(c, entities);
        if let Some(p) = model.id_param.take() {
            let old = model.entity.clone().unwrap_or_else(|| e.clone());
            model.references.push((p, old));
        }
        model.operation = Operation::Create;
        model.entity = Some(e.clone());
        model.references.retain(|(_, re)| *re != e);
        model.list = false;
        model.money = None;
        model.why.push(format!(
            "creates a record of `{e}`: declared in the spec's `world` section"
        ));
    }
    if let Some(r) = &declared.returns {
        // The record named: an id parameter's stem, else the entity.
        let target = model
            .id_param
            .iter()
            .chain(model.references.iter().map(|(p, _)| p))
            .find(|p| stem_of(p).is_some_and(|s| s == r.record || without_role(&s) == r.record))
            .cloned();
        let param = target.or_else(|| {
            tool.parameter_names()
                .into_iter()
                .find(|p| stem_of(p).is_some_and(|s| singular(&s) == singular(&r.record)))
                .map(str::to_owned)
        });
        if let Some(p) = param {
            let e = model
                .references
                .iter()
                .find(|(q, _)| *q == p)
                .map(|(_, e)| e.clone())
                .or_else(|| {
                    (model.id_param.as_ref() == Some(&p))
                        .then(|| model.entity.clone())
                        .flatten()
                })
                .unwrap_or_else(|| entity_named(&r.record, entities));
            if let Some(old) = model.id_param.replace(p.clone())
                && old != p
                && let Some(oe) = model.entity.clone()
            {
                model.references.push((old, oe));
            }
            model.references.retain(|(q, _)| *q != p);
            model.entity = Some(e);
        }
        model.operation = Operation::Read;
        model.list = false;
        model.any_entity = false;
        model.fields = r.field.iter().cloned().collect();
        model.why.push(format!(
            "returns `{r}`: declared in the spec's `world` section"
        ));
    }
}

/// The fixtures key an entity name means (`account` → `accounts`).
pub fn entity_named(name: &str, entities: &[String]) -> String {
    let one = singular(name);
    entities
        .iter()
        .find(|e| singular(e) == one || e.as_str() == name)
        .cloned()
        .unwrap_or_else(|| plural(&one))
}

/// The stem of an id parameter (`from_account` for `from_account_id`).
pub fn stem_of(param: &str) -> Option<String> {
    let words = name_words(param);
    let (last, stem) = words.split_last()?;
    (!stem.is_empty()
        && matches!(
            last.as_str(),
            "id" | "ids" | "number" | "code" | "no" | "ref"
        ))
    .then(|| stem.join("_"))
}

/// Corrects what names alone gave with what the words and fixtures show:
/// a tool whose words set another record's status acts on that record
/// (`send_payment_request` "Sets bill status to …" acts on the bill), and a
/// read whose noun is a field of an id's record answers that field
/// (`get_balance(account_id)` answers the account's `balance`).
fn refine(models: &mut [ToolModel], spec: &Spec, fixture_keys: &[String]) {
    let reader = RuleReader::new(&spec.tools, models, &spec.fixtures, &spec.system_prompt);
    for r in reader.read_all(&spec.system_prompt) {
        let Reading::SetsStatus {
            tool,
            entity: Some(e),
            ..
        } = r
        else {
            continue;
        };
        if spec
            .world
            .tool(&tool)
            .is_some_and(|d| d.creates.is_some() || !d.ids.is_empty() || d.returns.is_some())
        {
            continue;
        }
        let Some(m) = models.iter_mut().find(|m| m.name == tool) else {
            continue;
        };
        if m.entity.as_deref().map(singular).as_deref() == Some(e.as_str()) {
            continue;
        }
        let Some(at) = m.references.iter().position(|(_, re)| singular(re) == e) else {
            continue;
        };
        let (p, re) = m.references.remove(at);
        if let (Some(old), Some(oe)) = (m.id_param.take(), m.entity.take()) {
            m.references.push((old, oe));
        }
        m.why.push(format!(
            "its words set the status of a `{e}`: it acts on `{re}` named by `{p}`"
        ));
        m.id_param = Some(p);
        m.entity = Some(re);
        if m.operation == Operation::Create {
            m.operation = Operation::Update;
        }
        m.list = false;
    }
    let fields = entity_fields(spec, models);
    for m in models.iter_mut() {
        if m.operation != Operation::Read || !m.fields.is_empty() || m.any_entity {
            continue;
        }
        let Some(head) = m.head.clone() else { continue };
        let matching = |e: &str| -> Vec<String> {
            fields
                .get(e)
                .map(|fs| {
                    fs.iter()
                        .filter(|f| names_field(&head, f))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default()
        };
        if let (Some(e), Some(_)) = (m.entity.clone(), &m.id_param) {
            // `get_account_balance(account_id)`: the target's own field.
            let last = head.rsplit('_').next().unwrap_or(&head).to_owned();
            if last != singular(&e) && !head.ends_with(&singular(&e)) {
                let own: Vec<String> = fields
                    .get(&e)
                    .map(|fs| {
                        fs.iter()
                            .filter(|f| names_field(&last, f))
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                if !own.is_empty() {
                    m.why.push(format!(
                        "`{last}` is a field of `{e}`: answers {}",
                        own.join(", ")
                    ));
                    m.fields = own;
                }
            }
            continue;
        }
        // The noun names no entity of its own: it is a field of the record
        // one of the ids names (the last such id).
        let phantom = m
            .entity
            .as_ref()
            .is_none_or(|e| !fixture_keys.contains(e) && !fields.contains_key(e));
        if !phantom {
            continue;
        }
        let found = m
            .references
            .iter()
            .rev()
            .map(|(p, e)| (p.clone(), e.clone(), matching(e)))
            .find(|(_, _, f)| !f.is_empty());
        if let Some((p, e, f)) = found {
            m.why.push(format!(
                "`{head}` is a field of `{e}`: reads the record `{p}` names and answers {}",
                f.join(", ")
            ));
            m.references.retain(|(q, _)| *q != p);
            m.id_param = Some(p);
            m.entity = Some(e);
            m.list = false;
            m.fields = f;
        }
    }
}

/// Whether a field is what a noun names: itself (`balance`), a form of it
/// (`available_balance`, `balance_usd`), or for a two-word noun its first
/// word's fields (`data_usage` → `data_used_gb`, `data_refueling_gb`).
fn names_field(noun: &str, field: &str) -> bool {
    if field == noun
        || field.starts_with(&format!("{noun}_"))
        || field.ends_with(&format!("_{noun}"))
    {
        return true;
    }
    match noun.split_once('_') {
        Some((first, _)) if first.len() >= 3 => field.starts_with(&format!("{first}_")),
        _ => false,
    }
}

/// The fields each entity's records are known to have: the fixtures'
/// keys and the properties of output schemas of the entity's tools.
fn entity_fields(spec: &Spec, models: &[ToolModel]) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (entity, records) in &spec.fixtures {
        let set = out.entry(entity.clone()).or_default();
        for r in records {
            if let Some(fields) = r.as_object() {
                set.extend(fields.keys().cloned());
            }
        }
    }
    for (m, t) in models.iter().zip(&spec.tools) {
        let (Some(e), Some(out_schema), Some(_)) = (&m.entity, &t.output_schema, &m.id_param)
        else {
            continue;
        };
        let schema = record_pointer(out_schema).and_then(|p| out_schema.pointer(&p).cloned());
        if let Some(props) = schema
            .as_ref()
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
        {
            out.entry(e.clone())
                .or_default()
                .extend(props.keys().cloned());
        }
    }
    out
}
/// The JSON pointer, within an output schema, of the schema one record has:
/// the schema itself for an object, its `items` for an array, or the items
/// of an object's only array property.
pub fn record_pointer(schema: &Value) -> Option<String> {
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
