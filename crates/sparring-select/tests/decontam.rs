//! Decontamination: hits, misses, thresholds, held-out tasks, traces.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::json;
use sparring_select::decontam::{DecontamOptions, Reference, decontaminate, words};
use sparring_testkit::{conversation, row};
use sparring_types::Row;

const HELD_ASK: &str = "My parcel for order W1001 never arrived and the tracking page has said out for delivery since last Tuesday";

fn r(task: &str, id: &str, ask: &str) -> Row {
    row(
        task,
        id,
        Some(1.0),
        "sig",
        conversation(ask, "W1001", "I checked order W1001 for you."),
    )
}

#[test]
fn words_are_lowercased_alphanumeric_runs() {
    assert_eq!(
        words("Hello, WORLD! it's W1001."),
        vec!["hello", "world", "it", "s", "w1001"]
    );
}

#[test]
fn near_copies_of_held_out_rows_are_dropped_and_others_kept() {
    let held = vec![r("held_task", "h1", HELD_ASK)];
    let reference = Reference::from_rows("holdout.jsonl", &held, 8);
    let rows = vec![
        // The same words, other case and punctuation: a copy.
        r("t1", "copy", &HELD_ASK.to_uppercase().replace(' ', ", ")),
        // Shares a few words but no 8 in a row: kept.
        r(
            "t2",
            "miss",
            "Order W1001 never arrived, can you check the tracking for me please today",
        ),
        // Fewer than eight words: no 8-grams, kept.
        r("t3", "short", "where is W1001"),
        // Same task as a held-out row: dropped whatever the text.
        r(
            "held_task",
            "same_task",
            "Totally different words about a refund for an umbrella I bought in May",
        ),
    ];
    let (kept, report) = decontaminate(rows, &[reference], &DecontamOptions::default());
    let kept_ids: Vec<&str> = kept.iter().map(|r| r.row_id.as_str()).collect();
    assert_eq!(kept_ids, vec!["miss", "short"]);
    assert_eq!(report.by_reason["ngram_overlap"], 1);
    assert_eq!(report.by_reason["holdout_task"], 1);
    let copy = report.dropped.iter().find(|d| d.row_id == "copy").unwrap();
    assert!(copy.overlap >= 0.5, "{copy:?}");
    assert_eq!(copy.source, "holdout.jsonl");
    assert_eq!(report.rows_in, 4);
    assert_eq!(report.rows_out, 2);
}

#[test]
fn the_threshold_is_a_share_of_the_rows_own_8_grams() {
    let held = vec![r("held", "h", HELD_ASK)];
    let reference = Reference::from_rows("h", &held, 8);
    // The held ask has 19 words (12 8-grams); the row adds 22 new words, so
    // 12 of its 34 8-grams are shared (~35 %); the
    // agent's answer (too short for an 8-gram).
    let padded = format!(
        "{HELD_ASK} and also alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango"
    );
    let rows = vec![r("t", "half", &padded)];
    let strict = DecontamOptions {
        threshold: 0.3,
        ..DecontamOptions::default()
    };
    let (kept, report) = decontaminate(rows.clone(), std::slice::from_ref(&reference), &strict);
    assert!(kept.is_empty());
    let overlap = report.dropped[0].overlap;
    assert!(overlap > 0.3 && overlap < 0.5, "overlap {overlap}");
    let (kept, _) = decontaminate(rows, &[reference], &DecontamOptions::default());
    assert_eq!(kept.len(), 1, "below the default 50 % it stays");
}

#[test]
fn traces_are_searched_through_json_encoded_strings() {
    // An OTLP span whose attribute holds the messages as JSON text.
    let messages = json!([{"role": "user", "parts": [{"type": "text", "content": HELD_ASK}]}]);
    let span = json!({"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": [
        {"key": "gen_ai.input.messages", "value": {"stringValue": messages.to_string()}}
    ]}]}]}]});
    let text = format!("{span}\n{}\n", json!({"note": "unrelated"}));
    let reference = Reference::from_json_text("traces.jsonl", &text, 8);
    assert_eq!(reference.len(), 12, "the 19-word ask gives 12 8-grams");
    let rows = vec![
        r("t1", "copy", HELD_ASK),
        r(
            "t2",
            "new",
            "Please cancel my order W1002 before it ships out to my old address",
        ),
    ];
    let (kept, report) = decontaminate(rows, &[reference], &DecontamOptions::default());
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].row_id, "new");
    assert_eq!(report.dropped[0].source, "traces.jsonl");
    assert!(report.dropped[0].overlap > 0.9);
}

#[test]
fn overlap_spread_across_references_adds_up() {
    // Three messages of 10, 10 and 11 words: 3 + 3 + 4 = 10 distinct
    // 8-grams. The first is in one reference, the second in another: 30 %
    // each, 60 % together.
    let a = "amber basil cedar dune ember fjord grove heath inlet juniper";
    let b = "kelp lagoon marsh nectar orchid prairie quartz reef sage tundra";
    let c = "umber valley willow xenon yarrow zephyr acorn birch clover daisy elm";
    let mut messages = conversation(a, "W1001", b);
    messages.push(sparring_types::Message::text(sparring_types::Role::User, c));
    let rows = vec![row("t", "spread", Some(1.0), "sig", messages)];
    let ra = Reference::from_json_text("a.jsonl", &json!({"text": a}).to_string(), 8);
    let rb = Reference::from_json_text("b.jsonl", &json!({"text": b}).to_string(), 8);
    assert_eq!((ra.len(), rb.len()), (3, 3));
    // Each alone is below the default 50 %.
    for one in [&ra, &rb] {
        let (kept, _) = decontaminate(
            rows.clone(),
            std::slice::from_ref(one),
            &DecontamOptions::default(),
        );
        assert_eq!(kept.len(), 1);
    }
    let (kept, report) = decontaminate(rows, &[ra, rb], &DecontamOptions::default());
    assert!(kept.is_empty(), "{report:?}");
    let d = &report.dropped[0];
    assert!((d.overlap - 0.6).abs() < 1e-12, "{d:?}");
    assert_eq!(d.source, "a.jsonl, b.jsonl");
}

#[test]
fn tool_call_arguments_are_checked() {
    // The held-out text reaches the row only as a tool call's argument.
    let mut messages = conversation("where is W1001", "W1001", "Done.");
    messages[2].tool_calls[0].function.arguments =
        json!({"order_id": "W1001", "note": HELD_ASK}).to_string();
    let rows = vec![row("t", "args", Some(1.0), "sig", messages)];
    let reference = Reference::from_rows("h", &[r("held", "h", HELD_ASK)], 8);
    let (kept, report) = decontaminate(rows, &[reference], &DecontamOptions::default());
    assert!(kept.is_empty(), "{report:?}");
    assert_eq!(report.by_reason["ngram_overlap"], 1);
}
