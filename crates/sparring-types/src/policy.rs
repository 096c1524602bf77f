//! Policy rules as data: the classes a rule can have, a rule as rows,
//! `run.json` and `sparring policy` show it, and the spec's corrections to
//! the reading (`policy_rules`).
//!
//! The engine reads the rules out of the system prompt
//! (`sparring_engine::policy`); this module holds what crosses crates: the
//! [`RuleClass`] vocabulary, the plain [`PolicyRule`], the shape of a rule
//! id ([`is_rule_id`]) and [`PolicyRulesSpec`], the `policy_rules` section
//! of a spec, checked here as far as the spec alone can tell (keys,
//! classes, tool names, id shapes). Whether a dropped or reclassified id is
//! one the policy has is checked by the engine once it has read the policy.
//!
//! ```yaml
//! policy_rules:
//!   drop: [be-kind-patient]                   # ids `sparring policy SPEC` lists
//!   reclassify:
//!     never-guess-order-number: judge         # a class,
//!     refunds-over-500-need-manager:          # or a class and the tools it covers
//!       class: escalate
//!       tools: [transfer_to_human]
//!   add:
//!     - text: Never read a card number back to the customer.
//!       class: never_reveal
//!       tools: [get_customer]                 # optional: else read from the text
//! ```

use crate::spec::{
    SpecError, as_list, as_text, check_keys, did_you_mean, err, escape, listed_once, object,
    wrong_kind,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What kind of rule a policy sentence is, and so which check (if any)
/// looks after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleClass {
    /// Ask the person for a yes before an action (`acted_without_confirmation`).
    ConfirmBefore,
    /// Check who the person is, with a named tool or fields, before touching
    /// their records (`acted_before_authentication`).
    AuthenticateFirst,
    /// A state a record must be in for an action (`only pending orders can
    /// be cancelled`); the sandbox world refuses the call.
    Precondition,
    /// A bound on an argument or a count (`at most five passengers`,
    /// `one tool call at a time`) (`broke_limit`).
    Limit,
    /// One tool before another (`look the order up before you act on it`)
    /// (`wrong_order`).
    Order,
    /// Fields or patterns the agent must not show (`revealed`).
    NeverReveal,
    /// When to hand off, and to which tool (`missed_escalation`).
    Escalate,
    /// Everything else: graded by the judge, whose rubric these rules become.
    Judge,
}

impl RuleClass {
    /// Every class, in the order `sparring policy` and the docs list them.
    pub const ALL: &'static [Self] = &[
        Self::ConfirmBefore,
        Self::AuthenticateFirst,
        Self::Precondition,
        Self::Limit,
        Self::Order,
        Self::NeverReveal,
        Self::Escalate,
        Self::Judge,
    ];

    /// The wire name (`confirm_before` …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ConfirmBefore => "confirm_before",
            Self::AuthenticateFirst => "authenticate_first",
            Self::Precondition => "precondition",
            Self::Limit => "limit",
            Self::Order => "order",
            Self::NeverReveal => "never_reveal",
            Self::Escalate => "escalate",
            Self::Judge => "judge",
        }
    }

    /// The class with this wire name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.as_str() == name)
    }

    /// The conduct check that looks after rules of this class, if any
    /// (`precondition` rules are the world's to refuse; `judge` rules the
    /// judge's).
    pub fn check(self) -> Option<&'static str> {
        match self {
            Self::ConfirmBefore => Some("acted_without_confirmation"),
            Self::AuthenticateFirst => Some("acted_before_authentication"),
            Self::Limit => Some("broke_limit"),
            Self::Order => Some("wrong_order"),
            Self::NeverReveal => Some("revealed"),
            Self::Escalate => Some("missed_escalation"),
            Self::Precondition | Self::Judge => None,
        }
    }

    fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|c| c.as_str()).collect()
    }
}

impl std::fmt::Display for RuleClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One rule of a policy, as shown to people and written to `run.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyRule {
    /// A stable id made from the rule's own words (`never-guess-order-number`).
    pub id: String,
    /// Its class.
    pub class: RuleClass,
    /// The sentence, as written (markdown emphasis removed).
    pub text: String,
    /// The tools the rule covers, in the spec's order.
    pub tools: Vec<String>,
}

/// The longest a rule's text is shown beside its id (in `report`, `delta`,
/// rows and the grid); longer texts are cut at a word and end in `…`.
pub const RULE_TEXT_CHARS: usize = crate::defaults::POLICY_RULE_TEXT_CHARS;

/// A rule's text cut to [`RULE_TEXT_CHARS`] characters at a word boundary.
pub fn short_text(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= RULE_TEXT_CHARS {
        return one_line;
    }
    let cut: String = one_line.chars().take(RULE_TEXT_CHARS).collect();
    let at_word = match cut.rfind(' ') {
        Some(i) if i > RULE_TEXT_CHARS / 2 => &cut[..i],
        _ => cut.as_str(),
    };
    format!(
        "{}…",
        at_word.trim_end_matches([',', ';', ':', ' ', '.', '('])
    )
}

/// Whether `id` has the shape of a rule id: lowercase letters and digits in
/// words joined by `-` (or `_`), such as `never-guess-order-number`.
pub fn is_rule_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 120
        && id.split(['-', '_']).all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

/// A rule the spec adds (`policy_rules.add`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddedRule {
    /// The rule's sentence.
    pub text: String,
    /// Its class.
    pub class: RuleClass,
    /// The tools it covers; `None` to read them from the text.
    pub tools: Option<Vec<String>>,
    /// Where it was given (`/policy_rules/add/0`).
    pub pointer: String,
}

/// A rule the spec drops or reclassifies, by id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleChange {
    /// The rule's id.
    pub id: String,
    /// The new class (`None` when dropped, or when only `tools` change).
    pub class: Option<RuleClass>,
    /// The tools it covers from now on, when given.
    pub tools: Option<Vec<String>>,
    /// Where it was given (`/policy_rules/drop/1`,
    /// `/policy_rules/reclassify/<id>`).
    pub pointer: String,
}

/// The spec's corrections to the reading of its policy (`policy_rules`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyRulesSpec {
    /// Rules to add, in order; they come after the rules read.
    pub add: Vec<AddedRule>,
    /// Rules to leave out.
    pub drop: Vec<RuleChange>,
    /// Rules whose class (and maybe tools) change.
    pub reclassify: Vec<RuleChange>,
}

impl PolicyRulesSpec {
    /// Whether the spec corrects nothing.
    pub fn is_empty(&self) -> bool {
        self.add.is_empty() && self.drop.is_empty() && self.reclassify.is_empty()
    }
}

const KEYS: &[&str] = &["add", "drop", "reclassify"];
const ADD_KEYS: &[&str] = &["text", "class", "tools"];
const CHANGE_KEYS: &[&str] = &["class", "tools"];

fn class(value: &Value, pointer: &str) -> Result<RuleClass, SpecError> {
    let name = as_text(value, pointer, "a rule class must be text")?;
    RuleClass::parse(name).ok_or_else(|| {
        err(
            pointer,
            format!(
                "`{name}` is not a rule class{}",
                did_you_mean(name, &RuleClass::names())
            ),
        )
    })
}

fn tools(value: &Value, pointer: &str, names: &[String]) -> Result<Vec<String>, SpecError> {
    let items = as_list(value, pointer, "must be a list of tool names")?;
    let known: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut out: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("{pointer}/{i}");
        let name = as_text(item, &at, "a tool name must be text")?;
        if !known.contains(&name.as_str()) {
            return Err(err(
                at,
                format!("no tool is named `{name}`{}", did_you_mean(name, &known)),
            ));
        }
        listed_once(out.iter().position(|o| o == name), name, &at, pointer)?;
        out.push(name.clone());
    }
    Ok(out)
}

fn id(value: &str, pointer: &str) -> Result<String, SpecError> {
    if is_rule_id(value) {
        Ok(value.to_owned())
    } else {
        Err(err(
            pointer,
            format!(
                "`{value}` is not a rule id: ids are lowercase words joined by `-` (`sparring policy SPEC` lists them)"
            ),
        ))
    }
}

/// The `tools` of a rule object at `pointer`, if it gives them.
fn tools_at(
    rule: &serde_json::Map<String, Value>,
    pointer: &str,
    names: &[String],
) -> Result<Option<Vec<String>>, SpecError> {
    rule.get("tools")
        .map(|t| tools(t, &format!("{pointer}/tools"), names))
        .transpose()
}

/// Parses and checks a spec's `policy_rules` against its tool names.
pub(crate) fn parse(value: &Value, tool_names: &[String]) -> Result<PolicyRulesSpec, SpecError> {
    let map = object(
        value,
        "/policy_rules",
        "`policy_rules` (`add`, `drop`, `reclassify`)",
    )?;
    check_keys(map, "/policy_rules", KEYS)?;
    let mut out = PolicyRulesSpec::default();
    if let Some(v) = map.get("add") {
        let items = as_list(
            v,
            "/policy_rules/add",
            "must be a list of rules such as `{text: …, class: judge}`",
        )?;
        for (i, item) in items.iter().enumerate() {
            let pointer = format!("/policy_rules/add/{i}");
            let rule = object(item, &pointer, "an added rule")?;
            check_keys(rule, &pointer, ADD_KEYS)?;
            let text = match rule.get("text") {
                Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_owned(),
                Some(other) => {
                    return Err(wrong_kind(
                        format!("{pointer}/text"),
                        "must be the rule's sentence",
                        other,
                    ));
                }
                None => {
                    return Err(err(
                        format!("{pointer}/text"),
                        "missing: an added rule needs its sentence",
                    ));
                }
            };
            let class = match rule.get("class") {
                Some(c) => class(c, &format!("{pointer}/class"))?,
                None => {
                    return Err(err(
                        format!("{pointer}/class"),
                        format!(
                            "missing: an added rule needs a class{}",
                            did_you_mean("", &RuleClass::names())
                        ),
                    ));
                }
            };
            let tools = tools_at(rule, &pointer, tool_names)?;
            out.add.push(AddedRule {
                text,
                class,
                tools,
                pointer,
            });
        }
    }
    if let Some(v) = map.get("drop") {
        let items = as_list(v, "/policy_rules/drop", "must be a list of rule ids")?;
        for (i, item) in items.iter().enumerate() {
            let pointer = format!("/policy_rules/drop/{i}");
            let s = as_text(item, &pointer, "a rule id must be text")?;
            let id = id(s, &pointer)?;
            let first = out.drop.iter().position(|d| d.id == id);
            listed_once(first, &id, &pointer, "/policy_rules/drop")?;
            out.drop.push(RuleChange {
                id,
                class: None,
                tools: None,
                pointer,
            });
        }
    }
    if let Some(v) = map.get("reclassify") {
        let changes = object(
            v,
            "/policy_rules/reclassify",
            "`reclassify` (rule id → class, or → `{class, tools}`)",
        )?;
        for (key, change) in changes {
            let pointer = format!("/policy_rules/reclassify/{}", escape(key));
            let id = id(key, &pointer)?;
            if let Some(d) = out.drop.iter().find(|d| d.id == id) {
                return Err(err(
                    pointer,
                    format!("`{id}` is also dropped (`{}`)", d.pointer),
                ));
            }
            let (class, tools) = match change {
                Value::String(_) => (Some(class(change, &pointer)?), None),
                Value::Object(m) => {
                    check_keys(m, &pointer, CHANGE_KEYS)?;
                    if m.is_empty() {
                        return Err(err(pointer, "is empty: give a `class`, `tools` or both"));
                    }
                    let c = m
                        .get("class")
                        .map(|c| class(c, &format!("{pointer}/class")))
                        .transpose()?;
                    (c, tools_at(m, &pointer, tool_names)?)
                }
                other => {
                    return Err(wrong_kind(
                        pointer,
                        "must be a class or `{class, tools}`",
                        other,
                    ));
                }
            };
            out.reclassify.push(RuleChange {
                id,
                class,
                tools,
                pointer,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names() -> Vec<String> {
        vec!["refund_order".to_owned(), "cancel_order".to_owned()]
    }

    fn fails(value: &Value, pointer: &str, words: &str) {
        let e = parse(value, &names()).unwrap_err();
        assert_eq!(e.pointer, pointer, "{e}");
        assert!(e.message.contains(words), "{e}");
    }

    #[test]
    fn parses_add_drop_and_reclassify() {
        let p = parse(
            &json!({
                "add": [{"text": "Never refund twice.", "class": "precondition", "tools": ["refund_order"]},
                        {"text": "Be kind.", "class": "judge"}],
                "drop": ["be-kind"],
                "reclassify": {"never-guess-order-number": "judge",
                               "only-pending-orders-cancelled": {"tools": ["cancel_order"]}},
            }),
            &names(),
        )
        .unwrap();
        assert_eq!(p.add.len(), 2);
        assert_eq!(p.add[0].class, RuleClass::Precondition);
        assert_eq!(
            p.add[0].tools.as_deref(),
            Some(&["refund_order".to_owned()][..])
        );
        assert_eq!(p.add[1].tools, None);
        assert_eq!(p.drop[0].id, "be-kind");
        assert_eq!(p.drop[0].pointer, "/policy_rules/drop/0");
        assert_eq!(p.reclassify[0].class, Some(RuleClass::Judge));
        assert_eq!(p.reclassify[1].class, None);
        assert_eq!(
            p.reclassify[1].pointer,
            "/policy_rules/reclassify/only-pending-orders-cancelled"
        );
    }

    #[test]
    fn bad_overrides_name_where_and_what() {
        fails(
            &json!({"ad": []}),
            "/policy_rules/ad",
            "did you mean `add`?",
        );
        fails(&json!([]), "/policy_rules", "must be an object");
        fails(
            &json!({"add": [{"text": "x", "class": "limitt"}]}),
            "/policy_rules/add/0/class",
            "did you mean `limit`?",
        );
        fails(
            &json!({"add": [{"text": "x"}]}),
            "/policy_rules/add/0/class",
            "needs a class",
        );
        fails(
            &json!({"add": [{"class": "judge"}]}),
            "/policy_rules/add/0/text",
            "needs its sentence",
        );
        fails(
            &json!({"add": [{"text": "x", "class": "judge", "tools": ["refund_ordr"]}]}),
            "/policy_rules/add/0/tools/0",
            "did you mean `refund_order`?",
        );
        fails(
            &json!({"add": [{"text": "x", "class": "judge", "tool": []}]}),
            "/policy_rules/add/0/tool",
            "did you mean `tools`?",
        );
        fails(
            &json!({"drop": ["Rule 1"]}),
            "/policy_rules/drop/0",
            "not a rule id",
        );
        fails(
            &json!({"drop": ["a", "a"]}),
            "/policy_rules/drop/1",
            "listed twice",
        );
        fails(
            &json!({"reclassify": {"a-b": "confirm"}}),
            "/policy_rules/reclassify/a-b",
            "not a rule class",
        );
        fails(
            &json!({"reclassify": {"a-b": {}}}),
            "/policy_rules/reclassify/a-b",
            "is empty",
        );
        fails(
            &json!({"drop": ["a-b"], "reclassify": {"a-b": "judge"}}),
            "/policy_rules/reclassify/a-b",
            "also dropped",
        );
    }

    #[test]
    fn classes_round_trip_and_short_text_cuts_at_a_word() {
        for c in RuleClass::ALL {
            assert_eq!(RuleClass::parse(c.as_str()), Some(*c));
            assert_eq!(serde_json::to_value(c).unwrap(), json!(c.as_str()));
        }
        assert_eq!(short_text("Never guess.\n  An id."), "Never guess. An id.");
        let long = "word ".repeat(40);
        let s = short_text(&long);
        assert!(
            s.ends_with('…') && s.chars().count() <= RULE_TEXT_CHARS + 1,
            "{s}"
        );
        assert!(is_rule_id("never-guess-order-number") && is_rule_id("rule_3"));
        assert!(!is_rule_id("Never") && !is_rule_id("a--b") && !is_rule_id(""));
    }
}
