//! A person never contradicts what it said (docs/validity.md): over every
//! spec of the blind corpus, the `careful` calibration agent's
//! conversations are read for a person who says it does not know what it
//! already said (`It's 07700 900123. … I don't know my phone number.`), or
//! who gives two values for one thing of its own.
//!
//! The reading here is the test's own, not the person's code: sentences of
//! the person's messages, `my X is V` as a statement, `I don't know my X`
//! as a denial, and a phone number recognised by how it is written.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sparring::world::looks_like_phone;
use sparring::{OptionsPatch, Output, Row, Simulation};
use sparring_types::values::Situations;
use sparring_types::{Message, Role};
use std::collections::BTreeMap;

/// Situations per spec: enough for every goal kind of a spec to be met.
const SITUATIONS: u64 = 60;

/// Words of a thing's name that say nothing about which thing it is.
const GENERIC: &[&str] = &["number", "id", "code", "no"];

/// What a phrase names, as a key two phrasings share: its words, singular,
/// without [`GENERIC`] ones (`phone number` → `phone`, `account number` →
/// `account`, `number` → `number`).
fn key(phrase: &str) -> String {
    let words: Vec<String> = phrase
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let w = w.to_ascii_lowercase();
            if w.len() > 3 {
                w.trim_end_matches('s').to_owned()
            } else {
                w
            }
        })
        .filter(|w| !GENERIC.contains(&w.as_str()))
        .collect();
    if words.is_empty() {
        "number".to_owned()
    } else {
        words.join(" ")
    }
}

/// Letters and digits only, lowercase: a value as two writings of it share.
fn plain(text: &str) -> String {
    text.chars()
        .filter(char::is_ascii_alphanumeric)
        .flat_map(char::to_lowercase)
        .collect()
}

/// The sentences of a message, each trimmed.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        current.push(c);
        let ends =
            matches!(c, '.' | '?' | '!') && chars.get(i + 1).is_none_or(|n| n.is_whitespace());
        if ends {
            out.push(current.trim().to_owned());
            current.clear();
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_owned());
    }
    out
}

/// Whether `text` holds a phone number as people write one (one to five
/// groups of digits).
fn says_a_phone(text: &str) -> bool {
    let words: Vec<&str> = text
        .split_whitespace()
        .map(|w| w.trim_end_matches(['.', ',', '?', '!', ':', ';']))
        .collect();
    (0..words.len()).any(|i| {
        (1..=5).any(|n| i + n <= words.len() && looks_like_phone(&words[i..i + n].join(" ")))
    })
}

/// The thing `I don't know my X` denies, if the sentence is one.
fn denial(sentence: &str) -> Option<String> {
    let lower = sentence.to_lowercase();
    let rest = ["i don't know my ", "i do not know my ", "i don't have my "]
        .iter()
        .find_map(|p| lower.strip_prefix(p))?;
    let thing = rest.split([',', '.', '?', '!']).next().unwrap_or_default();
    Some(key(thing))
}

/// The thing and value `My X is V` states, if the sentence is one.
fn statement(sentence: &str) -> Option<(String, String)> {
    let lower = sentence.to_lowercase();
    let rest = lower.strip_prefix("my ")?;
    let (thing, value) = rest.split_once(" is ")?;
    let value = value.trim_end_matches(['.', '!', '?']).trim();
    (!value.is_empty() && thing.split_whitespace().count() <= 4)
        .then(|| (key(thing), value.to_owned()))
}

/// Every place the person of `row` contradicts what it said before.
fn contradictions(row: &Row) -> Vec<String> {
    let knows = &row.persona.knows;
    let mut stated: BTreeMap<String, String> = BTreeMap::new();
    let mut said = String::new();
    let mut out = Vec::new();
    for (i, m) in row.messages.iter().enumerate() {
        if m.role != Role::User {
            continue;
        }
        for s in sentences(m.content.as_deref().unwrap_or_default()) {
            if let Some(thing) = denial(&s) {
                let value_said = knows.iter().find(|(field, value)| {
                    key(&field.replace('_', " ")) == thing
                        && plain(value).len() >= 4
                        && plain(&said).contains(&plain(value))
                });
                if let Some(earlier) = stated.get(&thing) {
                    out.push(format!(
                        "message {i}: \"{s}\" after stating it as `{earlier}`"
                    ));
                } else if (thing.contains("phone") || thing.contains("mobile"))
                    && says_a_phone(&said)
                {
                    out.push(format!("message {i}: \"{s}\" after giving a phone number"));
                } else if let Some((field, value)) = value_said {
                    out.push(format!(
                        "message {i}: \"{s}\" after saying its {field} `{value}`"
                    ));
                }
            }
            if let Some((thing, value)) = statement(&s) {
                match stated.get(&thing) {
                    Some(earlier) if plain(earlier) != plain(&value) => out.push(format!(
                        "message {i}: its {thing} is `{value}`, earlier `{earlier}`"
                    )),
                    Some(_) => {}
                    None => {
                        stated.insert(thing, value);
                    }
                }
            }
            said.push(' ');
            said.push_str(&s);
        }
    }
    out
}

/// A row of the person's `lines`, each answered by the agent's `Go on.`.
fn said(lines: &[&str]) -> Row {
    let mut messages = vec![Message::text(Role::System, "You help.")];
    for line in lines {
        messages.push(Message::text(Role::User, *line));
        messages.push(Message::text(Role::Assistant, "Go on."));
    }
    sparring_testkit::row("t", "r", None, "", messages)
}

#[test]
fn the_scan_finds_a_person_who_denies_what_it_said() {
    // A phone given, then denied.
    let row = said(&[
        "Can you put the EU day pack on 07700 900123?",
        "It's 07700 900123. I don't know my phone number, sorry.",
    ]);
    assert_eq!(contradictions(&row).len(), 1, "{:?}", contradictions(&row));
    // Two emails of one person.
    let row = said(&["My email is ana@mail.test.", "My email is ben@mail.test."]);
    assert_eq!(contradictions(&row).len(), 1, "{:?}", contradictions(&row));
    // A value it knows, said, then denied.
    let mut row = said(&[
        "The employee is E104522.",
        "I don't know my employee id, sorry.",
    ]);
    row.persona
        .knows
        .insert("employee_id".to_owned(), "E104522".to_owned());
    assert_eq!(contradictions(&row).len(), 1, "{:?}", contradictions(&row));
    // Not knowing something else, and saying one thing twice, is no
    // contradiction.
    let row = said(&[
        "My email is ana@mail.test.",
        "I don't know my badge number, sorry. My email is ana@mail.test.",
    ]);
    assert!(
        contradictions(&row).is_empty(),
        "{:?}",
        contradictions(&row)
    );
}

#[test]
fn a_person_never_contradicts_what_it_said() {
    let root = sparring_testkit::workspace();
    let scratch = tempfile::tempdir().unwrap();
    let mut dirs: Vec<_> = std::fs::read_dir(root.join("tests/domains"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    let careful = root.join("examples/agents/careful.py");
    let mut scanned = 0;
    let mut found: Vec<String> = Vec::new();
    for dir in dirs {
        let domain = dir.file_name().unwrap().to_string_lossy().into_owned();
        let spec_path = dir.join("spec.yaml");
        let reading =
            sparring::calibrate::write_policy_reading(&spec_path, scratch.path()).unwrap();
        let result = Simulation::from_file(&spec_path)
            .unwrap()
            .agent(format!(
                "env {}='{}' python3 '{}'",
                sparring::calibrate::POLICY_READING_ENV,
                reading.display(),
                careful.display()
            ))
            .options(OptionsPatch {
                situations: Situations::new(SITUATIONS).ok(),
                unique_situations: Some(true),
                ..OptionsPatch::default()
            })
            .output(Output::Memory)
            .run_blocking()
            .unwrap();
        for row in &result.rows {
            scanned += 1;
            for c in contradictions(row) {
                found.push(format!("{domain} {}: {c}", row.row_id));
            }
        }
    }
    assert!(
        scanned >= 12 * SITUATIONS as usize / 2,
        "only {scanned} conversations"
    );
    assert!(
        found.is_empty(),
        "{} contradictions in {scanned} conversations:\n{}",
        found.len(),
        found
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
