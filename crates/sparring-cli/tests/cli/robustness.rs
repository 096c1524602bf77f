//! Issue 39's trial, end to end: what a demanding user feeds every verb.
//! A category value longer than any format width, a byte that is not
//! UTF-8, a byte-order mark, megabyte values quoted in errors, an unknown
//! tier, an output folder that does not exist yet, YAML nested past the
//! parser's own limit.

use super::*;

/// A small run of the example, for its rows.
fn example_rows(dir: &Path) -> PathBuf {
    let out = dir.join("run");
    simulate_example(&out, &["--budget", "4", "--quiet", "--grade"]).run_ok();
    out.join("rows.jsonl")
}

/// The example rows with `edit` applied to the row on line `line`
/// (1-based), written as `name`.
fn edited_rows(dir: &Path, name: &str, line: usize, edit: impl Fn(&mut Value)) -> PathBuf {
    let mut rows = read_rows(&example_rows(dir));
    edit(&mut rows[line - 1]);
    let text: String = rows.iter().map(|r| r.to_string() + "\n").collect();
    write(dir, name, &text)
}

/// Every line of a failed command's stderr is shorter than 4 KB.
fn assert_short_lines(what: &str, o: &Output) {
    for line in stderr(o).lines() {
        assert!(
            line.len() < 4096,
            "{what}: a stderr line of {} bytes: {}…",
            line.len(),
            &line[..300]
        );
    }
    assert!(!stderr(o).contains("panicked"), "{what}: {}", stderr(o));
}

#[test]
fn report_shows_a_category_value_longer_than_any_format_width() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(70_000);
    let rows = edited_rows(dir.path(), "long.jsonl", 1, |r| {
        r["situation"]["axes"]["stance"] = Value::from(long.as_str());
        r["situation"]["goal"]["kind"] = Value::from(long.as_str());
    });
    let o = sparring().arg("report").arg(&rows).run_ok();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains(&long), "the value is shown whole");
    let o = sparring().arg("report").arg(&rows).arg("--json").run_ok();
    assert!(stdout_json(&o)["by_category"][format!("stance={long}")].is_object());
}

#[test]
fn a_byte_that_is_not_utf8_is_named_by_line_and_column_by_every_verb() {
    let dir = tempfile::tempdir().unwrap();
    let rows = example_rows(dir.path());
    let mut lines: Vec<Vec<u8>> = std::fs::read(&rows)
        .unwrap()
        .split(|b| *b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    let column = lines[2].windows(7).position(|w| w == b"task_id").unwrap() + 1;
    lines[2][column - 1] = 0xFF;
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, lines.join(&b'\n')).unwrap();
    let at = format!("at line 3, column {column}: not UTF-8 (byte 0xFF)");
    let out = dir.path().join("out");
    for args in [
        vec!["report"],
        vec!["report", "--json"],
        vec!["grade", "-o", out.join("g.jsonl").to_str().unwrap()],
        vec![
            "export",
            "--format",
            "trl-sft",
            "--out",
            out.join("e.jsonl").to_str().unwrap(),
        ],
    ] {
        let o = sparring().arg(args[0]).arg(&bad).args(&args[1..]).run();
        assert_usage_error(&o, &["bad.jsonl", &at]);
    }
    // A byte-order mark, named.
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend(std::fs::read(&rows).unwrap());
    let bom_file = dir.path().join("bom.jsonl");
    std::fs::write(&bom_file, bom).unwrap();
    for o in [
        sparring().arg("report").arg(&bom_file).run(),
        grade_cmd(&bom_file, &out.join("b.jsonl")).run(),
    ] {
        assert_usage_error(&o, &["at line 1", "byte-order mark"]);
    }
}

/// A 1 MB value in each place issue 39 found quoted whole, through every
/// verb that reads it: every error line stays under 4 KB.
#[test]
fn no_error_line_quotes_a_megabyte_value_whole() {
    let dir = tempfile::tempdir().unwrap();
    let big = "x".repeat(1 << 20);
    let tool = |name: &str, kind: &str, required: &str| {
        serde_json::json!({
            "name": "t",
            "system_prompt": "p",
            "tools": [{"name": name, "inputSchema": {
                "type": kind,
                "properties": {"order_id": {"type": "string"}},
                "required": [required],
            }}],
        })
        .to_string()
    };
    let specs = [
        ("tool name", tool(&big, "object", "order_id")),
        ("schema type", tool("get_order", &big, "order_id")),
        ("required entry", tool("get_order", "object", &big)),
    ];
    for (what, text) in specs {
        let spec = write(dir.path(), "spec.json", &text);
        for args in [
            vec!["policy"],
            vec!["world", "--explain"],
            vec!["simulate", "--agent", "true"],
        ] {
            let o = sparring().arg(args[0]).arg(&spec).args(&args[1..]).run();
            assert_eq!(o.status.code(), Some(2), "{what} {args:?}");
            assert_short_lines(&format!("{what} {args:?}"), &o);
        }
    }
    let rows = edited_rows(dir.path(), "big.jsonl", 1, |r| {
        r["reward"] = Value::from(big.as_str());
    });
    let out = dir.path().join("out");
    for args in [
        vec!["report"],
        vec!["grade", "-o", out.join("g.jsonl").to_str().unwrap()],
        vec![
            "export",
            "--format",
            "trl-sft",
            "--out",
            out.join("e.jsonl").to_str().unwrap(),
        ],
    ] {
        let o = sparring().arg(args[0]).arg(&rows).args(&args[1..]).run();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", &stderr(&o)[..200]);
        assert_short_lines(&format!("a 1 MB reward {args:?}"), &o);
    }
}

#[test]
fn report_refuses_an_unknown_tier_as_grade_does() {
    let dir = tempfile::tempdir().unwrap();
    let rows = edited_rows(dir.path(), "tier.jsonl", 2, |r| {
        r["situation"]["tier"] = Value::from("legendary");
    });
    let out = dir.path().join("g.jsonl");
    for o in [
        sparring().arg("report").arg(&rows).run(),
        grade_cmd(&rows, &out).run(),
    ] {
        assert_usage_error(&o, &["at line 2", "unknown tier `legendary`"]);
    }
}

#[test]
fn grade_and_labels_create_the_folder_of_their_output_as_export_does() {
    let dir = tempfile::tempdir().unwrap();
    let rows = example_rows(dir.path());
    let graded = dir.path().join("new/deeper/graded.jsonl");
    grade_cmd(&rows, &graded).run_ok();
    assert_eq!(read_rows(&graded).len(), 4);
    let first = read_rows(&rows)[0]["row_id"].as_str().unwrap().to_owned();
    let labels = write(
        dir.path(),
        "labels.jsonl",
        &format!("{{\"row_id\": \"{first}\", \"label\": 1}}\n"),
    );
    let labelled = dir.path().join("other/labelled.jsonl");
    sparring()
        .args(["labels", "attach"])
        .arg(&rows)
        .arg(&labels)
        .args(["--kind", "human", "--author", "ann", "-o"])
        .arg(&labelled)
        .run_ok();
    assert_eq!(read_rows(&labelled).len(), 4);
}

#[test]
fn yaml_nested_past_the_parsers_limit_says_how_deep() {
    let dir = tempfile::tempdir().unwrap();
    for depth in [65, 1_000] {
        let spec = write(
            dir.path(),
            "deep.yaml",
            &format!(
                "name: x\nsystem_prompt: y\ntools: {}{}\n",
                "[".repeat(depth),
                "]".repeat(depth)
            ),
        );
        assert_usage_error(
            &sparring_on("policy", &spec),
            &["deep.yaml", "lists and maps are nested more than 64 deep"],
        );
    }
}
