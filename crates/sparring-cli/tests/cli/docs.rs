//! The docs say what the code does: every row field documented, the README commands present.

use super::*;

/// Every field the row schema allows is documented in docs/rows.md.
#[test]
fn every_schema_field_is_documented() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(workspace().join("docs/row.schema.json")).unwrap(),
    )
    .unwrap();
    let doc = std::fs::read_to_string(workspace().join("docs/rows.md")).unwrap();
    let mut names = Vec::new();
    collect(&schema, &mut names);
    assert!(names.len() > 30);
    for name in names {
        assert!(
            doc.contains(&format!("`{name}`")),
            "docs/rows.md does not document `{name}`"
        );
    }
}

fn collect(v: &Value, out: &mut Vec<String>) {
    if let Some(props) = v.get("properties").and_then(Value::as_object) {
        for (k, sub) in props {
            out.push(k.clone());
            collect(sub, out);
        }
    }
    for key in ["items", "$defs"] {
        if let Some(sub) = v.get(key) {
            if let Some(map) = sub.as_object().filter(|_| key == "$defs") {
                map.values().for_each(|s| collect(s, out));
            } else {
                collect(sub, out);
            }
        }
    }
    if let Some(items) = v.pointer("/properties/tool_calls/items") {
        collect(items, out);
    }
}
