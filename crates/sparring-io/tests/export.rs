//! Exports on hand-built rows: what the writers leave out and refuse.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sparring_io::export::{ExportOptions, Format, export};
use sparring_testkit::{conversation, row};

#[test]
fn trl_reward_rows_out_counts_only_written_pairs() {
    use sparring_types::{Message, Role};
    // t_empty: the better row ends with the person's message where the
    // worse goes on, so its side would be empty and the pair is left out.
    let mut short = row(
        "t_empty",
        "e_good",
        Some(1.0),
        "sig",
        conversation("Where is W1001?", "W1001", "Shipped."),
    );
    short.messages.push(Message::text(Role::User, "Thanks."));
    let mut long = short.clone();
    long.row_id = "e_bad".to_owned();
    long.reward = Some(0.0);
    long.messages
        .push(Message::text(Role::Assistant, "Anything else?"));
    let rows = vec![
        short,
        long,
        row(
            "t_ok",
            "o_good",
            Some(1.0),
            "sig",
            conversation("Where is W1002?", "W1002", "Shipped."),
        ),
        row(
            "t_ok",
            "o_bad",
            Some(0.0),
            "sig",
            conversation("Where is W1002?", "W1002", "Lost."),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("reward.jsonl");
    let report = export_default(&rows, Format::TrlReward, &file);
    assert_eq!(report.written, 1);
    assert_eq!(report.cut.excluded["export_empty_side"].count, 1);
    assert_eq!(report.cut.items_out, 1);
    assert_eq!(report.cut.rows_out, 2, "{:?}", report.cut);
}

#[test]
fn parquet_with_no_rows_is_an_error_not_a_broken_card() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ds");
    let err = export(&[], None, Format::Parquet, &ExportOptions::default(), &out)
        .unwrap_err()
        .to_string();
    assert!(err.contains("nothing to write"), "{err}");
    assert!(!out.join("README.md").exists());
}

/// `rows` written as `format` to `file` with the default options.
fn export_default(
    rows: &[sparring_types::Row],
    format: Format,
    file: &std::path::Path,
) -> sparring_io::export::ExportReport {
    export(rows, None, format, &ExportOptions::default(), file).unwrap()
}

fn read(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// One task, a pass and a fail that first differ at the agent's final
/// reply (`good`, `bad`), or at its first call when `at_call`.
fn pair_rows(good: &str, bad: &str, at_call: bool) -> Vec<sparring_types::Row> {
    let mut pass = conversation("Where is W1?", "W1", good);
    let mut fail = conversation("Where is W1?", if at_call { "W2" } else { "W1" }, bad);
    if at_call {
        pass.truncate(4);
        fail.truncate(4);
        pass.push(sparring_types::Message::text(
            sparring_types::Role::Assistant,
            good,
        ));
        fail.push(sparring_types::Message::text(
            sparring_types::Role::Assistant,
            bad,
        ));
    }
    vec![
        row("t", "a_pass", Some(1.0), "s1", pass),
        row("t", "b_fail", Some(0.0), "s2", fail),
    ]
}

#[test]
fn dpo_sides_are_one_agent_message_and_openai_takes_text_only() {
    let dir = tempfile::tempdir().unwrap();
    // Diverging at the final reply: both formats write the pair, each side
    // the one assistant message.
    let rows = pair_rows("It shipped on Monday.", "It was lost in transit.", false);
    for format in [Format::OpenaiDpo, Format::TrlDpo] {
        let file = dir.path().join(format!("{}.jsonl", format.as_str()));
        let report = export_default(&rows, format, &file);
        assert_eq!(report.written, 1, "{format:?}: {:?}", report.cut);
        let line = &read(&file)[0];
        let (chosen, rejected) = if format == Format::OpenaiDpo {
            (&line["preferred_output"], &line["non_preferred_output"])
        } else {
            (&line["chosen"], &line["rejected"])
        };
        for side in [chosen, rejected] {
            let side = side.as_array().unwrap();
            assert_eq!(side.len(), 1, "{line}");
            assert_eq!(side[0]["role"], "assistant", "{line}");
        }
    }
    // Diverging at a tool call: OpenAI's DPO takes text outputs only, so
    // openai-dpo counts the pair out; trl-dpo keeps the call.
    let rows = pair_rows("It shipped on Monday.", "It was lost in transit.", true);
    let file = dir.path().join("call.jsonl");
    let report = export_default(&rows, Format::OpenaiDpo, &file);
    assert_eq!(report.written, 0);
    assert_eq!(report.cut.excluded["export_tool_call_output"].count, 1);
    let report = export_default(&rows, Format::TrlDpo, &file);
    assert_eq!(report.written, 1);
    assert!(read(&file)[0]["chosen"][0]["tool_calls"].is_array());
}

/// Whether a JSON value holds an assistant message with no text and no
/// tool call.
fn has_empty_agent(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Object(o) => {
            let empty = o.get("role").is_some_and(|r| r == "assistant")
                && o.get("content")
                    .and_then(serde_json::Value::as_str)
                    .is_none_or(|c| c.trim().is_empty())
                && o.get("tool_calls")
                    .and_then(serde_json::Value::as_array)
                    .is_none_or(Vec::is_empty);
            empty || o.values().any(has_empty_agent)
        }
        serde_json::Value::Array(a) => a.iter().any(has_empty_agent),
        _ => false,
    }
}

#[test]
fn an_empty_agent_turn_is_never_trained() {
    let dir = tempfile::tempdir().unwrap();
    // A passing row whose final reply is empty (as a refusal used to be).
    let mut rows = pair_rows("", "It is lost.", false);
    rows.push(row(
        "u",
        "c_pass",
        Some(1.0),
        "s1",
        conversation("Where is W3?", "W3", "   "),
    ));
    for format in [
        Format::OpenaiSft,
        Format::TrlSft,
        Format::OpenaiDpo,
        Format::TrlDpo,
        Format::TrlKto,
    ] {
        let file = dir.path().join(format!("{}.jsonl", format.as_str()));
        let report = export_default(&rows, format, &file);
        // A DPO side with no text has no length: the length ratio leaves
        // the pair out first.
        let class = if matches!(format, Format::OpenaiDpo | Format::TrlDpo) {
            "length_ratio_above"
        } else {
            "export_empty_agent_turn"
        };
        assert!(
            report.cut.excluded[class].count >= 1,
            "{format:?}: {:?}",
            report.cut
        );
        for line in read(&file) {
            assert!(!has_empty_agent(&line), "{format:?}: {line}");
        }
    }
}

#[test]
fn kto_completions_are_the_last_agent_message() {
    let dir = tempfile::tempdir().unwrap();
    let rows = pair_rows("It shipped Monday.", "It is lost.", false);
    let file = dir.path().join("kto.jsonl");
    let report = export_default(&rows, Format::TrlKto, &file);
    assert_eq!(report.written, 2);
    for line in read(&file) {
        let completion = line["completion"].as_array().unwrap();
        assert_eq!(completion.len(), 1, "{line}");
        assert_eq!(completion[0]["role"], "assistant");
        // The prompt holds the tool call and its result.
        let prompt = line["prompt"].as_array().unwrap();
        assert_eq!(prompt.last().unwrap()["role"], "tool", "{line}");
        let want = if line["label"] == true {
            "It shipped Monday."
        } else {
            "It is lost."
        };
        assert_eq!(completion[0]["content"], want);
    }
}

#[test]
fn openai_files_keep_their_trace_in_a_sidecar_unless_inlined() {
    let dir = tempfile::tempdir().unwrap();
    let rows = pair_rows("It shipped Monday.", "It is lost.", false);
    let file = dir.path().join("sft.jsonl");
    let report = export_default(&rows, Format::OpenaiSft, &file);
    let index = sparring_io::export::index_path(&file);
    assert_eq!(index.file_name().unwrap(), "sft.jsonl.index.jsonl");
    assert_eq!(report.files, vec![file.clone(), index.clone()]);
    let lines = read(&file);
    let entries = read(&index);
    assert_eq!(lines.len(), 1);
    assert_eq!(
        lines[0].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["messages", "tools"]
    );
    assert_eq!(
        entries[0],
        serde_json::json!({"line": 1, "row_id": "a_pass", "task_id": "t", "reward": 1.0})
    );
    let opts = ExportOptions {
        inline_trace: true,
        ..ExportOptions::default()
    };
    let report = export(&rows, None, Format::OpenaiSft, &opts, &file).unwrap();
    assert_eq!(report.files, vec![file.clone()]);
    assert_eq!(read(&file)[0]["row_id"], "a_pass");
}

#[test]
fn grpo_world_seeds_are_strings_that_keep_every_digit() {
    let dir = tempfile::tempdir().unwrap();
    let mut rows = pair_rows("It shipped Monday.", "It is lost.", false);
    for r in &mut rows {
        r.situation.world_seed = 1_421_204_402_630_784_427;
    }
    let file = dir.path().join("grpo.jsonl");
    let report = export_default(&rows, Format::TrlGrpo, &file);
    assert_eq!(report.written, 1);
    assert_eq!(read(&file)[0]["world_seed"], "1421204402630784427");
}
