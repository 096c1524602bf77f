//! Bad input: every spec, option and flag error is one line, exit 2, naming what and where.

use super::*;

#[test]
fn missing_spec_file() {
    let o = sparring()
        .args(["simulate", "no/such/spec.yaml", "--agent", "true"])
        .run();
    assert_usage_error(&o, &["no/such/spec.yaml", "no such file"]);
}

#[test]
fn invalid_yaml_names_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "s.yaml",
        "name: x\nsystem_prompt: [unclosed\ntools: []\n",
    );
    let o = simulate_spec(&p);
    assert_usage_error(&o, &["s.yaml", "line ", "column ", "invalid YAML"]);
}

#[test]
fn invalid_json_and_toml_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "s.json", "{\n  \"name\": \"x\",\n  oops\n}");
    let o = simulate_spec(&p);
    assert_usage_error(&o, &["s.json", "line 3"]);
    let p = write(dir.path(), "s.toml", "name = \"x\"\nsystem_prompt = \n");
    let o = simulate_spec(&p);
    assert_usage_error(&o, &["s.toml", "line 2"]);
}

#[test]
fn tool_without_a_name() {
    let dir = tempfile::tempdir().unwrap();
    let tools = format!(
        r#"[{TOOL}, {{"type": "function", "function": {{"parameters": {{"type": "object"}}}}}}]"#
    );
    let p = write(dir.path(), "s.json", &spec_with_tools(&tools));
    let o = simulate_spec(&p);
    assert_usage_error(
        &o,
        &["s.json", "`/tools/1/function/name`", "needs a `name`"],
    );
    let p = write(
        dir.path(),
        "m.yaml",
        "name: t\nsystem_prompt: p\ntools:\n  - description: no name\n    inputSchema: {type: object}\n",
    );
    let o = simulate_spec(&p);
    assert_usage_error(&o, &["m.yaml", "`/tools/0/name`"]);
}

#[test]
fn parameters_must_be_an_object_schema() {
    let dir = tempfile::tempdir().unwrap();
    let tools =
        r#"[{"type": "function", "function": {"name": "a", "parameters": {"type": "string"}}}]"#;
    let p = write(dir.path(), "s.json", &spec_with_tools(tools));
    let o = simulate_spec(&p);
    assert_usage_error(
        &o,
        &["`/tools/0/function/parameters/type`", "object schema"],
    );
    let tools = r#"[{"type": "function", "function": {"name": "a", "parameters": [1]}}]"#;
    let p = write(dir.path(), "s.json", &spec_with_tools(tools));
    let o = simulate_spec(&p);
    assert_usage_error(&o, &["`/tools/0/function/parameters`", "must be an object"]);
}

#[test]
fn two_tools_with_one_name() {
    let dir = tempfile::tempdir().unwrap();
    let tools =
        format!(r#"[{TOOL}, {{"name": "get_order", "inputSchema": {{"type": "object"}}}}]"#);
    let p = write(dir.path(), "s.json", &spec_with_tools(&tools));
    let o = simulate_spec(&p);
    assert_usage_error(&o, &["`/tools/1`", "two tools are named `get_order`"]);
}

#[test]
fn unknown_keys_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "s.yaml",
        &format!("name: t\nsystem_prompt: p\ntools: [{TOOL}]\nseed: [hi]\n"),
    );
    let o = simulate_spec(&p);
    assert_usage_error(
        &o,
        &["`/seed`", "unknown key `seed`", "did you mean `seeds`"],
    );
    let p = write(
        dir.path(),
        "s.yaml",
        &format!("name: t\nsystem_prompt: p\ntools: [{TOOL}]\noptions: {{budgte: 3}}\n"),
    );
    let o = simulate_spec(&p);
    assert_usage_error(&o, &["`/options/budgte`", "did you mean `budget`"]);
    let tools =
        r#"[{"type": "function", "function": {"name": "a", "paramters": {"type": "object"}}}]"#;
    let p = write(dir.path(), "s.json", &spec_with_tools(tools));
    let o = simulate_spec(&p);
    assert_usage_error(
        &o,
        &["`/tools/0/function/paramters`", "did you mean `parameters`"],
    );
}

#[test]
fn errors_in_a_tools_file_name_that_file() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "tools.json",
        &format!("[{TOOL}, {{\"name\": 3}}]"),
    );
    write(dir.path(), "policy.md", "Be kind.");
    let p = write(
        dir.path(),
        "s.yaml",
        "name: t\nsystem_prompt: {file: policy.md}\ntools: {file: tools.json}\n",
    );
    let o = simulate_spec(&p);
    assert_usage_error(&o, &["tools.json", "`/1/name`"]);
    let p = write(
        dir.path(),
        "s2.yaml",
        "name: t\nsystem_prompt: {file: nope.md}\ntools: {file: tools.json}\n",
    );
    let o = simulate_spec(&p);
    assert_usage_error(&o, &["nope.md", "no such file"]);
}

#[test]
fn agent_command_not_found_exits_before_any_row() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = simulate_cmd(example_spec(), "definitely-not-a-command-xyz --flag", &out).run();
    assert_usage_error(&o, &["definitely-not-a-command-xyz", "not found"]);
    assert!(!out.join("rows.jsonl").exists());
}

#[test]
fn no_agent_at_all() {
    let o = sparring().arg("simulate").arg(example_spec()).run();
    assert_usage_error(&o, &["no agent", "--agent"]);
}

#[test]
fn zero_budget_is_refused() {
    let o = simulate_spec_with(&example_spec(), &["--budget", "0"]);
    assert_usage_error(&o, &["--budget", "must be an integer from 1 to"]);
}

#[test]
fn avg_turns_out_of_range_or_not_a_number_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let cases: &[(&[&str], &[&str])] = &[
        // The example spec sets `max_turns: 8`.
        // Below 1 the value itself is wrong: refused where it is parsed.
        (
            &["--avg-turns", "0.5"],
            &["--avg-turns", "must be a number from 1"],
        ),
        (
            &["--avg-turns", "8.5"],
            &["`avg_turns` 8.5 ", "`max_turns` 8"],
        ),
        (
            &["--avg-turns", "5", "--max-turns", "4"],
            &["`avg_turns` 5 ", "`max_turns` 4"],
        ),
        (&["--avg-turns", "three"], &["--avg-turns", "three"]),
    ];
    for (args, needles) in cases {
        let o = simulate_cmd(example_spec(), "true", &out).args(*args).run();
        assert_usage_error(&o, needles);
        assert!(!out.exists(), "{args:?} wrote files");
    }
    // In a spec: not a number is named where it stands; out of range
    // names both values.
    let p = write(
        dir.path(),
        "s.yaml",
        &format!("name: t\nsystem_prompt: p\ntools: [{TOOL}]\noptions: {{avg_turns: lots}}\n"),
    );
    assert_usage_error(&simulate_spec(&p), &["`/options/avg_turns`", "number"]);
    let p = write(
        dir.path(),
        "s.yaml",
        &format!(
            "name: t\nsystem_prompt: p\ntools: [{TOOL}]\noptions: {{avg_turns: 3, max_turns: 2}}\n"
        ),
    );
    assert_usage_error(&simulate_spec(&p), &["`avg_turns` 3 ", "`max_turns` 2"]);
}

/// A seed's expectation is checked with the spec: a wrong argument type is
/// a usage error on one line, naming its pointer.
#[test]
fn a_seed_expectation_that_breaks_the_tool_schema_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "s.yaml",
        &format!(
            "name: t\nsystem_prompt: p\ntools: [{TOOL}]\nseeds:\n  - ask: where is 5?\n    expect:\n      calls: [{{tool: get_order, arguments: {{order_id: 5}}}}]\n"
        ),
    );
    let o = simulate_spec(&p);
    assert_usage_error(
        &o,
        &[
            "`/seeds/0/expect/calls/0/arguments/order_id`",
            "the arguments break `get_order`'s parameter schema: 5 is not of type \"string\"",
        ],
    );
}

/// A count out of range names both bounds, on the command line and in a
/// spec file alike (issue 22: `max_turns: 1e11` once said only ">= 1").
#[test]
fn range_errors_name_the_bound_that_was_broken() {
    let o = simulate_spec_with(&example_spec(), &["--max-turns", "1e11"]);
    assert_usage_error(&o, &["--max-turns", "must be an integer from 1 to 1000"]);
    let dir = tempfile::tempdir().unwrap();
    for value in ["1e11", "0", "4294967295"] {
        let p = write(
            dir.path(),
            "s.yaml",
            &format!(
                "name: t\nsystem_prompt: p\ntools: [{TOOL}]\noptions: {{max_turns: {value}}}\n"
            ),
        );
        let o = simulate_spec(&p);
        assert_usage_error(&o, &["/options/max_turns", "from 1 to 1000"]);
    }
}

/// A time budget that ends the run before its first row is a finished run
/// with nothing to report, said as such: exit 0, no "file is empty".
#[test]
fn a_time_budget_too_short_for_a_row_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = simulate_cmd(
        example_spec(),
        "python3 -c 'import time; time.sleep(5)'",
        &out,
    )
    .args(["--time-budget", "0.001"])
    .run();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("no rows were written, so there is no report"),
        "{err}"
    );
    assert!(!err.contains("file is empty"), "{err}");
    assert!(out.join("run.json").exists(), "{err}");
}
