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
fn a_missing_policy_or_tools_file_is_named_at_its_key() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text, at, file) in [
        (
            "p.yaml",
            "name: x\nsystem_prompt: {file: nopolicy.md}\ntools: []\n",
            "`/system_prompt/file`",
            "nopolicy.md",
        ),
        (
            "t.yaml",
            "name: x\nsystem_prompt: p\ntools: {file: tools.yaml}\n",
            "`/tools/file`",
            "tools.yaml",
        ),
    ] {
        assert_spec_refused(
            dir.path(),
            name,
            text,
            &[name, at, file, "no such file", "the spec's folder"],
        );
    }
}

#[test]
fn invalid_yaml_names_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    assert_spec_refused(
        dir.path(),
        "s.yaml",
        "name: x\nsystem_prompt: [unclosed\ntools: []\n",
        &["s.yaml", "line ", "column ", "invalid YAML"],
    );
}

#[test]
fn invalid_json_and_toml_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    assert_spec_refused(
        dir.path(),
        "s.json",
        "{\n  \"name\": \"x\",\n  oops\n}",
        &["s.json", "line 3"],
    );
    assert_spec_refused(
        dir.path(),
        "s.toml",
        "name = \"x\"\nsystem_prompt = \n",
        &["s.toml", "line 2"],
    );
}

#[test]
fn tool_without_a_name() {
    let dir = tempfile::tempdir().unwrap();
    let tools = format!(
        r#"[{TOOL}, {{"type": "function", "function": {{"parameters": {{"type": "object"}}}}}}]"#
    );
    assert_tools_refused(
        dir.path(),
        &tools,
        &["s.json", "`/tools/1/function/name`", "needs a `name`"],
    );
    assert_spec_refused(
        dir.path(),
        "m.yaml",
        "name: t\nsystem_prompt: p\ntools:\n  - description: no name\n    inputSchema: {type: object}\n",
        &["m.yaml", "`/tools/0/name`"],
    );
}

#[test]
fn parameters_must_be_an_object_schema() {
    let dir = tempfile::tempdir().unwrap();
    for (parameters, needles) in [
        (
            r#"{"type": "string"}"#,
            &["`/tools/0/function/parameters/type`", "object schema"][..],
        ),
        (
            "[1]",
            &["`/tools/0/function/parameters`", "must be an object"],
        ),
    ] {
        let tools = format!(
            r#"[{{"type": "function", "function": {{"name": "a", "parameters": {parameters}}}}}]"#
        );
        assert_tools_refused(dir.path(), &tools, needles);
    }
}

#[test]
fn two_tools_with_one_name() {
    let dir = tempfile::tempdir().unwrap();
    let tools =
        format!(r#"[{TOOL}, {{"name": "get_order", "inputSchema": {{"type": "object"}}}}]"#);
    assert_tools_refused(
        dir.path(),
        &tools,
        &["`/tools/1`", "two tools are named `get_order`"],
    );
}

#[test]
fn unknown_keys_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    assert_spec_refused(
        dir.path(),
        "s.yaml",
        &one_tool_spec("seed: [hi]\n"),
        &["`/seed`", "unknown key `seed`", "did you mean `seeds`"],
    );
    assert_spec_refused(
        dir.path(),
        "s.yaml",
        &one_tool_spec("options: {budgte: 3}\n"),
        &["`/options/budgte`", "did you mean `budget`"],
    );
    let tools =
        r#"[{"type": "function", "function": {"name": "a", "paramters": {"type": "object"}}}]"#;
    assert_tools_refused(
        dir.path(),
        tools,
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
    assert_spec_refused(
        dir.path(),
        "s.yaml",
        "name: t\nsystem_prompt: {file: policy.md}\ntools: {file: tools.json}\n",
        &["tools.json", "`/1/name`"],
    );
    assert_spec_refused(
        dir.path(),
        "s2.yaml",
        "name: t\nsystem_prompt: {file: nope.md}\ntools: {file: tools.json}\n",
        &["nope.md", "no such file"],
    );
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
        let mut c = simulate_cmd(example_spec(), "true", &out);
        assert_refused_before_writing(c.args(*args), &out, needles);
    }
    // In a spec: not a number is named where it stands; out of range
    // names both values.
    assert_spec_refused(
        dir.path(),
        "s.yaml",
        &one_tool_spec("options: {avg_turns: lots}\n"),
        &["`/options/avg_turns`", "number"],
    );
    assert_spec_refused(
        dir.path(),
        "s.yaml",
        &one_tool_spec("options: {avg_turns: 3, max_turns: 2}\n"),
        &["`avg_turns` 3 ", "`max_turns` 2"],
    );
}

/// A seed's expectation is checked with the spec: a wrong argument type is
/// a usage error on one line, naming its pointer.
#[test]
fn a_seed_expectation_that_breaks_the_tool_schema_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    assert_spec_refused(
        dir.path(),
        "s.yaml",
        &one_tool_spec(
            "seeds:\n  - ask: where is 5?\n    expect:\n      calls: [{tool: get_order, arguments: {order_id: 5}}]\n",
        ),
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
        assert_spec_refused(
            dir.path(),
            "s.yaml",
            &one_tool_spec(&format!("options: {{max_turns: {value}}}\n")),
            &["/options/max_turns", "from 1 to 1000"],
        );
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
