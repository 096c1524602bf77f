//! What the world reads out of a tool's name and parameters.

use serde::Serialize;
use sparring_types::{Spec, ToolSpec, singular};

/// What a tool does to the world, read from its verb.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "verb")]
pub enum Operation {
    /// get, find, search, list, lookup, check, show, fetch, read, view, track.
    Read,
    /// create, book, add, place, open, submit, register, schedule.
    Create,
    /// update, modify, change, exchange, edit, set, rename, reschedule.
    Update,
    /// cancel, delete, remove, refund, return, close, void: the record moves
    /// to a new status (the verb's past participle).
    StateChange(String),
    /// No known verb: the call is acknowledged and changes nothing.
    Other,
}

/// A tool as the world understands it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolModel {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub operation: Operation,
    /// The entity it is about (a fixtures key such as `orders`), if any.
    pub entity: Option<String>,
    /// The parameter that carries the entity's id, if any.
    pub id_param: Option<String>,
}

const READ: &[&str] = &[
    "get", "find", "search", "list", "lookup", "check", "show", "fetch", "read", "view", "track",
    "query", "retrieve", "describe",
];
const CREATE: &[&str] = &[
    "create", "book", "add", "place", "open", "submit", "register", "schedule", "new", "make",
];
const UPDATE: &[&str] = &[
    "update",
    "modify",
    "change",
    "exchange",
    "edit",
    "set",
    "rename",
    "reschedule",
    "move",
];
const STATE: &[&str] = &[
    "cancel", "delete", "remove", "refund", "return", "close", "void", "suspend", "block",
];

/// Splits a name into lowercase words (`getOrder`, `get_order`, `get-order`).
pub(crate) fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c == '_' || c == '-' || c == '.' || c == ' ' {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
        } else if c.is_uppercase() && prev_lower {
            out.push(std::mem::take(&mut cur));
            cur.extend(c.to_lowercase());
            prev_lower = false;
        } else {
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            cur.extend(c.to_lowercase());
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The past participle of a state-changing verb (`cancel` → `cancelled`).
pub(crate) fn participle(verb: &str) -> String {
    match verb {
        "cancel" => "cancelled".to_owned(),
        "close" => "closed".to_owned(),
        "remove" => "removed".to_owned(),
        "delete" => "deleted".to_owned(),
        v if v.ends_with('e') => format!("{v}d"),
        v => format!("{v}ed"),
    }
}

fn operation(words: &[String]) -> Operation {
    for w in words {
        let w = w.as_str();
        if READ.contains(&w) {
            return Operation::Read;
        }
        if STATE.contains(&w) {
            return Operation::StateChange(w.to_owned());
        }
        if UPDATE.contains(&w) {
            return Operation::Update;
        }
        if CREATE.contains(&w) {
            return Operation::Create;
        }
    }
    Operation::Other
}

/// Reads a tool's operation, entity and id parameter; `entities` are the
/// spec's fixture keys.
pub fn infer_tool(tool: &ToolSpec, entities: &[String]) -> ToolModel {
    let name_words = words(&tool.name);
    let op = operation(&name_words);
    let params = tool.parameter_names();
    let matching = |stem: &str| -> Option<String> {
        entities
            .iter()
            .find(|e| singular(e) == stem || e.as_str() == stem)
            .cloned()
    };
    // Id parameters, with the entity each points at. A parameter named after
    // an entity in the tool's name comes first.
    let mut candidates: Vec<(String, String, bool)> = Vec::new();
    for p in &params {
        let pw = words(p);
        let is_id = pw.last().is_some_and(|w| w == "id");
        if !is_id {
            continue;
        }
        let stem = if pw.len() > 1 {
            pw[..pw.len() - 1].join("_")
        } else {
            // A bare `id`: the entity is the noun in the tool's name.
            match name_words.iter().find_map(|w| matching(w)) {
                Some(entity) => {
                    candidates.push(((*p).to_owned(), entity, true));
                    continue;
                }
                None => match name_words.last() {
                    Some(w) => singular(w),
                    None => continue,
                },
            }
        };
        let entity = matching(&stem).unwrap_or_else(|| format!("{stem}s"));
        let in_name = name_words
            .iter()
            .any(|w| singular(w) == singular(&entity) || *w == stem);
        candidates.push(((*p).to_owned(), entity, in_name));
    }
    let chosen = candidates
        .iter()
        .find(|c| c.2)
        .or_else(|| candidates.first())
        .cloned();
    if op == Operation::Create {
        // What a create call makes is named in the tool, not in its ids.
        let entity = name_words.iter().find_map(|w| matching(w)).or_else(|| {
            name_words
                .last()
                .filter(|_| name_words.len() > 1)
                .map(|w| format!("{}s", singular(w)))
        });
        return ToolModel {
            name: tool.name.clone(),
            operation: op,
            entity,
            id_param: None,
        };
    }
    let (id_param, entity) = match chosen {
        Some((p, e, _)) => (Some(p), Some(e)),
        None => (None, name_words.iter().find_map(|w| matching(w))),
    };
    ToolModel {
        name: tool.name.clone(),
        operation: op,
        entity,
        id_param,
    }
}

/// Every tool of a spec, inferred.
pub(crate) fn infer_all(spec: &Spec) -> Vec<ToolModel> {
    let entities: Vec<String> = spec.fixtures.keys().cloned().collect();
    spec.tools
        .iter()
        .map(|t| infer_tool(t, &entities))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, params: &[&str]) -> ToolSpec {
        let props: serde_json::Map<String, serde_json::Value> = params
            .iter()
            .map(|p| ((*p).to_owned(), json!({"type": "string"})))
            .collect();
        ToolSpec {
            name: name.to_owned(),
            description: String::new(),
            parameters: json!({"type": "object", "properties": props}),
            output_schema: None,
        }
    }

    #[test]
    fn verbs_and_entities() {
        let entities = vec!["orders".to_owned(), "users".to_owned()];
        let m = infer_tool(
            &tool("cancel_pending_order", &["order_id", "reason"]),
            &entities,
        );
        assert_eq!(m.operation, Operation::StateChange("cancel".into()));
        assert_eq!(m.entity.as_deref(), Some("orders"));
        assert_eq!(m.id_param.as_deref(), Some("order_id"));
        let m = infer_tool(&tool("getOrder", &["id"]), &entities);
        assert_eq!(m.operation, Operation::Read);
        assert_eq!(m.entity.as_deref(), Some("orders"));
        assert_eq!(m.id_param.as_deref(), Some("id"));
        let m = infer_tool(
            &tool("update_user_address", &["user_id", "address1"]),
            &entities,
        );
        assert_eq!(m.operation, Operation::Update);
        assert_eq!(m.entity.as_deref(), Some("users"));
        let m = infer_tool(&tool("calculate", &["expression"]), &entities);
        assert_eq!(m.operation, Operation::Other);
        assert_eq!(m.entity, None);
        let m = infer_tool(
            &tool("book_reservation", &["user_id", "flight_id"]),
            &entities,
        );
        assert_eq!(m.operation, Operation::Create);
        assert_eq!(m.entity.as_deref(), Some("reservations"));
        assert_eq!(m.id_param, None);
    }

    #[test]
    fn participles() {
        assert_eq!(participle("cancel"), "cancelled");
        assert_eq!(participle("refund"), "refunded");
        assert_eq!(participle("remove"), "removed");
        assert_eq!(participle("return"), "returned");
    }
}
