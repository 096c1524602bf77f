//! Model roles: the agent, the writer, the person and the judge each take a
//! backend spec. When one backend plays two roles, the run is weaker than it
//! looks (a model grading or imitating its own side), so it is named in
//! `degraded` as `same_model` and a warning says which option separates them.

use crate::backend::{BackendSpec, Endpoint};
use sparring_types::Degraded;
use std::collections::BTreeMap;

/// What [`same_model`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoleCheck {
    /// `[same_model]` when two roles share a backend, else empty.
    pub degraded: Vec<Degraded>,
    /// One warning per shared backend, naming the roles and the option to
    /// change.
    pub warnings: Vec<String>,
}

/// Checks a role → backend spec map (`"agent"`, `"writer"`, `"person"`,
/// `"judge"`). Specs that are not backends (`template`, the offline writer
/// and person) never count. Two specs are the same backend when they name
/// the same provider, model and base URL (a key variable does not make a
/// model different).
pub fn same_model(roles: &BTreeMap<String, String>) -> RoleCheck {
    check(roles, None)
}

/// [`same_model`], with the warning naming `movable` as the option to change
/// whenever it is one of the roles sharing a backend (`judge` for
/// `judge-trust` and `grade`, where the judge is what the user is choosing).
pub fn same_model_moving(roles: &BTreeMap<String, String>, movable: &str) -> RoleCheck {
    check(roles, Some(movable))
}

fn check(roles: &BTreeMap<String, String>, movable: Option<&str>) -> RoleCheck {
    let mut by_backend: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (role, spec) in roles {
        if spec.trim().is_empty() || spec.trim() == "template" {
            continue;
        }
        let Ok(parsed) = BackendSpec::parse(spec) else {
            continue;
        };
        let identity = match parsed {
            BackendSpec::Model(e) => Endpoint { key_env: None, ..e }.describe(),
            BackendSpec::Command(c) => format!("command:{c}"),
        };
        by_backend.entry(identity).or_default().push(role);
    }
    let mut check = RoleCheck::default();
    for (backend, mut shared) in by_backend {
        if shared.len() < 2 {
            continue;
        }
        // The agent is what is under test; the other role is the one to move.
        shared.sort_by_key(|r| (*r != "agent", *r));
        let others: Vec<String> = match movable {
            Some(m) if shared.contains(&m) => vec![format!("`{m}`")],
            _ => shared[1..].iter().map(|r| format!("`{r}`")).collect(),
        };
        check.warnings.push(format!(
            "`{backend}` plays {}: set {} to a different backend to separate them",
            join_roles(&shared),
            others.join(" and ")
        ));
    }
    if !check.warnings.is_empty() {
        check.degraded.push(Degraded::SameModel);
    }
    check
}

fn join_roles(roles: &[&str]) -> String {
    if let [a, b] = roles {
        format!("both the {a} and the {b}")
    } else {
        let (last, rest) = roles.split_last().unwrap_or((&"", &[]));
        format!("the {} and the {last}", rest.join(", the "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(r, s)| ((*r).to_owned(), (*s).to_owned()))
            .collect()
    }

    /// The check's first warning says `says`.
    fn warns(c: &RoleCheck, says: &str) {
        assert!(
            c.warnings.first().is_some_and(|w| w.contains(says)),
            "`{says}` not in {:?}",
            c.warnings
        );
    }

    #[test]
    fn shared_backend_is_degraded_and_names_the_option() {
        let c = same_model(&roles(&[
            ("agent", "openai:gpt-4o"),
            ("person", "openai:gpt-4o#key=OTHER_KEY"),
            ("writer", "template"),
            ("judge", "anthropic:claude"),
        ]));
        assert_eq!(c.degraded, vec![Degraded::SameModel]);
        assert_eq!(c.warnings.len(), 1);
        warns(&c, "both the agent and the person");
        warns(&c, "set `person`");
    }

    #[test]
    fn three_roles_and_distinct_urls() {
        let c = same_model(&roles(&[
            ("agent", "openai:m@http://a:1/v1"),
            ("person", "openai:m@http://b:1/v1"),
            ("writer", "anthropic:c"),
            ("judge", "anthropic:c"),
        ]));
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        warns(&c, "the judge and the writer: set `writer`");
        let c = same_model(&roles(&[
            ("agent", "openai:m"),
            ("person", "openai:m"),
            ("judge", "openai:m"),
        ]));
        warns(&c, "the agent, the judge and the person");
    }

    #[test]
    fn the_judge_is_the_one_to_move_when_asked() {
        let c = same_model_moving(
            &roles(&[("agent", "openai:m"), ("judge", "openai:m#key=J")]),
            "judge",
        );
        warns(&c, "set `judge`");
        let c = same_model_moving(
            &roles(&[
                ("writer", "openai:w"),
                ("judge", "openai:w"),
                ("agent", "x"),
            ]),
            "judge",
        );
        warns(&c, "the judge and the writer: set `judge`");
    }

    #[test]
    fn templates_and_distinct_models_are_fine() {
        let c = same_model(&roles(&[
            ("agent", "openai:gpt-4o"),
            ("person", "template"),
            ("writer", "template"),
            ("judge", "openai:gpt-4o-mini"),
        ]));
        assert_eq!(c, RoleCheck::default());
    }
}
