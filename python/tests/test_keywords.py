"""The seeds' keywords: strict, with their silent aliases, one vocabulary
with the spec file and the CLI."""

import pytest
import shop

import sparring


def run(**kwargs):
    kwargs.setdefault("budget", 2)
    return sparring.simulate(shop.lookup, spec=shop.SPEC, **kwargs)


def evaluate(**kwargs):
    return sparring.evaluate(shop.lookup, spec=shop.SPEC, eval_set=["x"], **kwargs)


@pytest.mark.parametrize(
    "call, kwargs, message",
    [
        (run, {"repeets": 2}, r"unexpected keyword argument 'repeets'; did you mean 'repeats'\?"),
        (run, {"concurency": 4}, r"'concurency'; did you mean 'concurrency'"),
        (run, {"toolz": []}, r"'toolz'; did you mean 'tools'"),
        (run, {"zzzzzzzz": 1}, r"'zzzzzzzz'$"),
        (evaluate, {"repeat": 2}, r"evaluate\(\) got an unexpected keyword argument 'repeat'; did you mean 'repeats'"),
        # evaluate plays only its asks: situations are not one of its keywords.
        (evaluate, {"situations": 2}, r"evaluate\(\) got an unexpected keyword argument 'situations'"),
    ],
)
def test_a_misspelled_keyword_is_a_type_error_naming_the_closest(call, kwargs, message):
    with pytest.raises(TypeError, match=message):
        call(**kwargs)


def test_features_not_built_are_not_implemented_errors():
    with pytest.raises(NotImplementedError, match=r"^traces= is not built yet"):
        run(traces=["rows.jsonl"])
    with pytest.raises(NotImplementedError, match=r"^scaffold= is not built yet"):
        run(scaffold="think first")


def test_the_silent_aliases():
    data = run(n=2, rollouts_per_prompt=2, budget=8, unique=False)
    options = data.summary["options"]
    assert options["phrasings"] == 2 and options["repeats"] == 2
    data = run(requests_per_situation=3, rollouts_per_request=1)
    assert data.summary["options"]["phrasings"] == 3
    data = sparring.simulate(shop.lookup, tools=shop.TOOLS, policy=shop.POLICY, budget=1)
    assert data.rows[0]["messages"][0]["content"] == shop.POLICY
    with pytest.raises(TypeError, match="twice"):
        run(repeats=2, rollouts_per_prompt=3)


def test_keywords_reach_the_options_as_the_spec_names_them():
    data = run(
        repeats=2,
        repeat_policy="fixed",
        concurrency=3,
        simulator=False,
        user_model="template",
        seed=11,
        timeout=7.5,
        fault_rate=0.3,
        situations=2,
        hard_share=0.5,
        patience="endless",
        mode="eval",
        reproducible=True,
        time_budget=300,
        budget=4,
    )
    o = data.summary["options"]
    assert o["repeats"] == 2 and o["concurrency"] == 3 and o["seed"] == 11
    assert o["agent_timeout"] == 7.5
    assert o["world"]["fault_rate"] == 0.3
    assert o["writer"] == "template" and o["person"] == "template"
    assert o["situations"] == 2 and o["hard_share"] == 0.5 and o["patience"] == "endless"
    assert o["mode"] == "eval" and o["reproducible"] is True and o["time_budget"] == 300
    # "hosted" is the default written out: the same as leaving it unset.
    assert run(simulator="hosted").summary["options"]["writer"] == "template"


def test_unset_keywords_are_none_and_leave_the_defaults():
    o = run().summary["options"]
    assert o["concurrency"] == 32 and o["repeats"] == 1 and o["phrasings"] == 1


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"repeats": 0}, ValueError, r"`repeats`: must be an integer from 1"),
        ({"fault_rate": 3}, ValueError, r"`fault_rate`: must be a number from 0 to 1"),
        (
            {"patience": "long"},
            ValueError,
            r"`patience`: unknown patience `long` \(expected `normal`, `short` or `endless`\)",
        ),
        ({"spec": None}, ValueError, "no spec"),
        ({"backend": "openai:gpt-4o"}, TypeError, "backend"),
        ({"grader": "python3 grader.py"}, TypeError, "grader= in simulate"),
        ({"spec": None, "tools": [], "system_prompt": "x"}, ValueError, "spec at `/tools`"),
    ],
)
def test_bad_values_name_the_option(kwargs, error, message):
    kwargs = {"spec": shop.SPEC, "budget": 2, **kwargs}
    with pytest.raises(error, match=message):
        sparring.simulate(shop.lookup, **kwargs)


def test_dimensions_pin_an_axis_and_keep_the_others():
    data = run(dimensions={"stance": ["hurried"]}, budget=6)
    assert {r["situation"]["axes"]["stance"] for r in data.rows} == {"hurried"}
    assert len({r["situation"]["axes"]["tool"] for r in data.rows}) > 1
    with pytest.raises(ValueError, match=r"dimensions at `/stance/0`: `rushed` is not a value"):
        run(dimensions={"stance": ["rushed"]})


def test_the_spec_file_takes_the_same_names(tmp_path):
    import json

    spec = dict(shop.SPEC)
    spec["options"] = {"simulator": "template", "user_model": "template", "timeout": 9, "fault_rate": 0.2}
    spec["dimensions"] = {"stance": "confused"}
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    data = sparring.simulate(shop.lookup, spec=str(path), budget=3)
    o = data.summary["options"]
    assert o["agent_timeout"] == 9 and o["world"]["fault_rate"] == 0.2
    assert {r["situation"]["axes"]["stance"] for r in data.rows} == {"confused"}
