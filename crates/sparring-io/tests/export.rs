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
    let report = export(
        &rows,
        None,
        Format::TrlReward,
        &ExportOptions::default(),
        &file,
    )
    .unwrap();
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
