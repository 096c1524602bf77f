//! The blind corpus (docs/validity.md): specs written by new users from the
//! docs alone, in `tests/domains/<domain>/`. The doc's table says which the
//! project serves; every served spec is held to the bar here, and every spec
//! not served must say why. A spec is never deleted to make this pass.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sparring::calibrate::{AgentScore, calibrate, render};
use sparring_types::OptionsPatch;
use std::collections::BTreeMap;

/// The status column of docs/validity.md's figures: domain → status text.
fn statuses() -> BTreeMap<String, String> {
    let doc =
        std::fs::read_to_string(sparring_testkit::workspace().join("docs/validity.md")).unwrap();
    let mut out = BTreeMap::new();
    let section = doc.split("## Figures").nth(1).expect("a Figures section");
    // Up to the next section: later tables hold other figures.
    let table = section.split("\n## ").next().unwrap_or_default();
    for line in table.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        if cells.len() == 4 && cells[0] != "domain" && !cells[0].starts_with("---") {
            out.insert(cells[0].to_owned(), cells[3].to_owned());
        }
    }
    out
}

fn domains() -> Vec<String> {
    let dir = sparring_testkit::workspace().join("tests/domains");
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

fn pass(a: &AgentScore) -> f64 {
    a.pass_at_1.value.unwrap()
}

#[test]
fn every_domain_is_served_or_says_why() {
    let statuses = statuses();
    let domains = domains();
    assert!(
        domains.len() >= 12,
        "the corpus has {} specs",
        domains.len()
    );
    for d in &domains {
        let status = statuses
            .get(d)
            .unwrap_or_else(|| panic!("tests/domains/{d} has no row in docs/validity.md"));
        if status != "served" {
            let reason = status.strip_prefix("not served:").map(str::trim);
            assert!(
                reason.is_some_and(|r| r.len() > 10),
                "{d}: a spec not served names its reason, found `{status}`"
            );
        }
    }
    for d in statuses.keys() {
        assert!(
            domains.contains(d),
            "docs/validity.md names `{d}`, which tests/domains lacks"
        );
    }
}

#[test]
fn served_domains_meet_the_bar() {
    let root = sparring_testkit::workspace();
    // The CLI's own size (150 fresh situations per agent), so the doc's
    // figures are the ones held here.
    let options = OptionsPatch::default();
    for (d, status) in statuses() {
        if status != "served" {
            continue;
        }
        let spec = root.join("tests/domains").join(&d).join("spec.yaml");
        let c = calibrate(&spec, None, &options).unwrap();
        let text = render(&c);
        assert!(c.ranked, "{d} is not ranked:\n{text}");
        let [idle, reckless, careful] = c.agents.as_slice() else {
            panic!("{text}")
        };
        assert!(pass(careful) >= 0.85, "{d}:\n{text}");
        assert!(pass(reckless) <= 0.50, "{d}:\n{text}");
        assert!(pass(idle) <= 0.15, "{d}:\n{text}");
        for (goal, &(rows, passed)) in &careful.by_goal {
            assert!(
                rows < 5 || passed as f64 >= 0.7 * rows as f64,
                "{d}: careful passes goal `{goal}` {passed} of {rows}:\n{text}"
            );
        }
    }
}
