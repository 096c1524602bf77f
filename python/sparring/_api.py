"""The package's functions, with the seeds' keyword names.

Every keyword is ``None`` unless you set it, and then goes to the engine
under the name ``docs/options.md`` documents (the spec file's ``options``
and the CLI's flags take the same names). A misspelled keyword is a
``TypeError`` naming the closest valid one; a keyword whose feature is not
built yet (``traces``, ``scaffold``) is a ``NotImplementedError``.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from . import _native
from ._data import Rows, ScoredData, SimulationData, _Data

PathLike = Union[str, "os.PathLike[str]"]
RowsLike = Union[_Data, Iterable[Mapping[str, Any]], PathLike]
#: A seed: an ask, or ``{"ask": ..., "expect": {"calls", "state", "says"}}``
#: (docs/spec.md, "Seeds with expectations"); passed to the spec as given.
SeedLike = Union[str, Mapping[str, Any]]

#: Keywords whose feature is not built yet, with what to use meanwhile.
NOT_BUILT = {
    "traces": "production traces are not read yet; pass the asks they show as seeds=",
    "scaffold": "generation-only guidance for model-backed teachers is not built yet",
}

#: The seeds' silent aliases: alias -> keyword.
ALIASES = {
    "n": "phrasings",
    "requests_per_situation": "phrasings",
    "rollouts_per_prompt": "repeats",
    "rollouts_per_request": "repeats",
    "unique": "unique_situations",
    "policy": "system_prompt",
}

#: Keywords that are run options, under the name the options take.
OPTION_KEYWORDS = {
    "repeats": "repeats",
    "phrasings": "phrasings",
    "repeat_policy": "repeat_policy",
    "concurrency": "concurrency",
    "simulator": "simulator",
    "user_model": "user_model",
    "seed": "seed",
    "max_turns": "max_turns",
    "avg_turns": "avg_turns",
    "fault_rate": "fault_rate",
    "temperature": "temperature",
    "timeout": "timeout",
    "logprobs": "logprobs",
    "situations": "situations",
    "unique_situations": "unique_situations",
    "mode": "mode",
    "budget": "budget",
    "time_budget": "time_budget",
    "runs": "runs",
    "reproducible": "reproducible",
    "hard_share": "hard_share",
    "patience": "patience",
    "grade": "grade",
}

#: What ``sampling=`` may set for a model-backed agent.
MODEL_SAMPLING = ("temperature", "top_p", "max_tokens", "logprobs", "top_logprobs")


def _strict(function: str, given: Mapping[str, Any], keywords: Iterable[str]) -> dict[str, Any]:
    """``given`` by keyword, its silent aliases resolved; a TypeError for a
    keyword that is neither one of ``keywords`` nor an alias of one, naming
    the closest."""
    keywords = list(keywords)
    out: dict[str, Any] = {}
    for key, value in given.items():
        name = key if key in keywords else ALIASES.get(key)
        if name is None or name not in keywords:
            candidates = keywords + [a for a, k in ALIASES.items() if k in keywords]
            hint = _native.closest(key, candidates)
            did = f"; did you mean '{hint}'?" if hint else ""
            raise TypeError(f"{function}() got an unexpected keyword argument '{key}'{did}")
        if name in out:
            raise TypeError(f"{function}() got '{key}' and another name of '{name}': give one")
        out[name] = value
    return out


def _merge(function: str, local: dict[str, Any], aliases: Mapping[str, Any]) -> dict[str, Any]:
    """A call's keywords with the silent aliases it was given merged in."""
    keywords = [k for k in local if k != "aliases"]
    merged = {k: v for k, v in local.items() if k != "aliases"}
    for name, value in _strict(function, aliases, keywords).items():
        if merged.get(name) is not None and value is not None:
            raise TypeError(f"{function}() got '{name}' twice (once by an alias): give it once")
        if value is not None:
            merged[name] = value
    return merged


def _not_built(**given: Any) -> None:
    for key, value in given.items():
        if value is not None:
            raise NotImplementedError(f"{key}= is not built yet: {NOT_BUILT[key]}")


def _name(obj: Any, default: str) -> str:
    return str(getattr(obj, "__name__", None) or getattr(type(obj), "__name__", default) or default)


def _spec_request(
    spec: Any, tools: Any, system_prompt: Optional[str], seeds: Optional[Sequence[SeedLike]], name: Optional[str]
) -> dict[str, Any]:
    request: dict[str, Any] = {}
    if spec is not None:
        if isinstance(spec, Mapping):
            request["spec"] = dict(spec)
        elif isinstance(spec, (str, os.PathLike)):
            request["spec_path"] = os.fspath(spec)
        else:
            raise TypeError("spec= must be a spec file path or a spec dict")
    elif system_prompt is None or tools is None:
        raise ValueError(
            "no spec: pass spec= (a spec file or dict), or tools= and system_prompt=\n"
            "hint: drafting tools from an intent alone needs a writer model"
        )
    if tools is not None:
        request["tools"] = list(tools)
    if system_prompt is not None:
        request["system_prompt"] = system_prompt
    if seeds is not None:
        if isinstance(seeds, str):
            raise TypeError("seeds= must be a list of asks, not one string")
        request["seeds"] = [dict(s) if isinstance(s, Mapping) else s for s in seeds]
    if name is not None:
        request["name"] = name
    return request


def _rows_list(rows: RowsLike) -> list[dict[str, Any]]:
    if isinstance(rows, _Data):
        return list(rows.rows)
    if isinstance(rows, (str, os.PathLike)):
        path = os.fspath(rows)
        if os.path.isdir(path):
            path = os.path.join(path, "rows.jsonl")
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    return [dict(r) for r in rows]


def _jsonl(rows: RowsLike) -> str:
    if isinstance(rows, (str, os.PathLike)) and not isinstance(rows, _Data):
        path = os.fspath(rows)
        if os.path.isdir(path):
            path = os.path.join(path, "rows.jsonl")
        with open(path, encoding="utf-8") as f:
            return f.read()
    return "\n".join(json.dumps(r) for r in _rows_list(rows)) + "\n"


class _RowsFile:
    """Rows as a file the library's readers take: the caller's file, or a
    temporary one (with the run's ``run.json`` beside it when known)."""

    def __init__(self, rows: RowsLike):
        self._dir: Optional[tempfile.TemporaryDirectory[str]] = None
        if isinstance(rows, (str, os.PathLike)) and not isinstance(rows, _Data):
            self.path = os.fspath(rows)
            return
        if isinstance(rows, _Data) and rows.out is not None and not isinstance(rows, ScoredData):
            self.path = rows.out
            return
        self._dir = tempfile.TemporaryDirectory(prefix="sparring-")
        self.path = os.path.join(self._dir.name, "rows.jsonl")
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(_jsonl(rows))
        if isinstance(rows, _Data) and rows.summary.get("run_id"):
            with open(os.path.join(self._dir.name, "run.json"), "w", encoding="utf-8") as f:
                json.dump(rows.summary, f)

    def __enter__(self) -> "_RowsFile":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._dir is not None:
            self._dir.cleanup()


def _run(function: str, k: Mapping[str, Any], eval_set: Optional[Sequence[str]] = None) -> dict[str, Any]:
    """Runs ``simulate`` or ``evaluate`` from a call's merged keywords ``k``
    (an ``evaluate`` call has no ``seeds``, ``simulator`` or ``tasks``)."""
    agent, backend, sampling, simulator = k["agent"], k["backend"], k["sampling"], k.get("simulator")
    execute, grader, tasks, output = k["execute"], k["grader"], k.get("tasks"), k["output"]
    options = _options(k)
    request = _spec_request(k["spec"], k["tools"], k["system_prompt"], k.get("seeds"), k["name"])
    agent_callable = None
    if agent is not None and backend is not None:
        raise TypeError(f"{function}() got agent= and backend=: backend= is the agent's model when agent= is not given")
    if callable(agent):
        agent_callable = agent
        request.setdefault("name", _name(agent, "agent"))
        request["agent_name"] = _name(agent, "agent")
    elif isinstance(agent, str):
        request["agent"] = agent
    elif agent is not None:
        raise TypeError("agent= must be a callable (message, tools) -> reply, or a backend spec / command string")
    if backend is not None:
        request["agent"] = backend
    if sampling is not None:
        if agent_callable is not None:
            request["sampling"] = dict(sampling)
        else:
            for key, value in sampling.items():
                if key not in MODEL_SAMPLING:
                    raise ValueError(f"sampling key '{key}' is not one a model backend takes: {', '.join(MODEL_SAMPLING)}")
                options.setdefault(key, value)
    if simulator is False or simulator == "template":
        options["simulator"] = "template"
    elif simulator is True:
        raise ValueError("simulator=True is not a writer: pass False (the templates) or a backend spec")
    elif simulator not in (None, "hosted"):
        options["simulator"] = simulator
    execute_callable = None
    if callable(execute):
        execute_callable = execute
        request["execute_name"] = _name(execute, "world")
    elif isinstance(execute, str):
        request["execute"] = execute
    elif execute is not None:
        raise TypeError("execute= must be a callable (tool, arguments) -> result, or a command / http(s) URL")
    grader_callable = None
    if grader is not None:
        if not callable(grader):
            raise TypeError(
                f"grader= in {function}() takes a callable (row) -> reward; "
                "grade with a command or URL grader through sparring.grade()"
            )
        grader_callable = grader
        request["grader_name"] = _name(grader, "grader")
    if tasks is not None:
        request["tasks_file"] = _RowsFile(tasks)
        request["tasks"] = request["tasks_file"].path
    if k["dimensions"] is not None:
        request["dimensions"] = dict(k["dimensions"])
    if output is not None:
        request["output"] = os.fspath(output)
    if k["resume"]:
        request["resume"] = True
    if eval_set is not None:
        if isinstance(eval_set, str):
            raise TypeError("eval_set= must be a list of asks, not one string")
        request["eval_set"] = list(eval_set)
    request["options"] = {key: v for key, v in options.items() if v is not None}
    tasks_file = request.pop("tasks_file", None)
    try:
        text = _native.simulate(json.dumps(request), agent_callable, grader_callable, execute_callable)
    finally:
        if tasks_file is not None:
            tasks_file.__exit__()
    result: dict[str, Any] = json.loads(text)
    if result.get("interrupted"):
        where = f"; resume it with output={result['out']!r}, resume=True" if result.get("out") else ""
        raise KeyboardInterrupt(
            f"run interrupted after {len(result['rows'])} rows{where}"
        )
    return result


def simulate(
    agent: Any = None,
    *,
    tools: Optional[Sequence[Mapping[str, Any]]] = None,
    system_prompt: Optional[str] = None,
    spec: Any = None,
    seeds: Optional[Sequence[SeedLike]] = None,
    repeats: Optional[int] = None,
    phrasings: Optional[int] = None,
    repeat_policy: Optional[str] = None,
    concurrency: Optional[int] = None,
    simulator: Any = None,
    user_model: Optional[str] = None,
    backend: Optional[str] = None,
    seed: Optional[int] = None,
    sampling: Optional[Mapping[str, Any]] = None,
    max_turns: Optional[int] = None,
    avg_turns: Optional[float] = None,
    fault_rate: Optional[float] = None,
    temperature: Optional[float] = None,
    timeout: Optional[float] = None,
    logprobs: Optional[bool] = None,
    situations: Optional[int] = None,
    unique_situations: Optional[bool] = None,
    mode: Optional[str] = None,
    budget: Optional[int] = None,
    time_budget: Optional[float] = None,
    tasks: Any = None,
    runs: Optional[int] = None,
    reproducible: Optional[bool] = None,
    hard_share: Optional[float] = None,
    dimensions: Optional[Mapping[str, Any]] = None,
    patience: Optional[str] = None,
    execute: Any = None,
    grader: Optional[Callable[..., Any]] = None,
    grade: Optional[bool] = None,
    output: Optional[PathLike] = None,
    resume: Optional[bool] = None,
    name: Optional[str] = None,
    traces: Any = None,
    scaffold: Optional[str] = None,
    **aliases: Any,
) -> SimulationData:
    """Plays an agent against simulated people in the sandbox world.

    ``agent`` is a callable ``(message, tools) -> reply`` (or ``async
    def``), played single turn, or a backend spec / command string. The
    rows stay in memory unless ``output=`` names a run directory (which
    Ctrl-C leaves resumable with ``resume=True``). See docs/python.md.
    """
    k = _merge("simulate", dict(locals()), aliases)
    _not_built(traces=k["traces"], scaffold=k["scaffold"])
    result = _run("simulate", k)
    return SimulationData(result["rows"], result["summary"], result["out"])


def _options(keywords: Mapping[str, Any]) -> dict[str, Any]:
    """The run options among a call's keywords, by option name."""
    return {
        option: keywords[keyword]
        for keyword, option in OPTION_KEYWORDS.items()
        if keyword != "simulator" and keywords.get(keyword) is not None
    }


def evaluate(
    agent: Any = None,
    *,
    eval_set: Sequence[str],
    tools: Optional[Sequence[Mapping[str, Any]]] = None,
    system_prompt: Optional[str] = None,
    spec: Any = None,
    repeats: Optional[int] = None,
    concurrency: Optional[int] = None,
    user_model: Optional[str] = None,
    backend: Optional[str] = None,
    seed: Optional[int] = None,
    sampling: Optional[Mapping[str, Any]] = None,
    max_turns: Optional[int] = None,
    avg_turns: Optional[float] = None,
    fault_rate: Optional[float] = None,
    temperature: Optional[float] = None,
    timeout: Optional[float] = None,
    logprobs: Optional[bool] = None,
    mode: Optional[str] = None,
    budget: Optional[int] = None,
    time_budget: Optional[float] = None,
    runs: Optional[int] = None,
    reproducible: Optional[bool] = None,
    repeat_policy: Optional[str] = None,
    dimensions: Optional[Mapping[str, Any]] = None,
    patience: Optional[str] = None,
    execute: Any = None,
    grader: Optional[Callable[..., Any]] = None,
    grade: Optional[bool] = None,
    output: Optional[PathLike] = None,
    resume: Optional[bool] = None,
    name: Optional[str] = None,
    **aliases: Any,
) -> ScoredData:
    """Runs every ask of ``eval_set`` once per repeat, graded (the conduct
    checks unless ``grade=False``; ``grader=`` adds yours), and says in
    ``per_ask`` how each scored. Nothing else is generated."""
    k = _merge("evaluate", dict(locals()), aliases)
    result = _run("evaluate", k, eval_set=eval_set)
    table = result.get("table") or {}
    return ScoredData(result["rows"], result["summary"], result["out"], per_ask=table.get("asks"))


def grade(
    rows: RowsLike,
    *,
    grader: Any = None,
    judge: Optional[str] = None,
    rubric: Optional[PathLike] = None,
    judge_kind: Optional[str] = None,
    conduct: Optional[bool] = None,
    concurrency: Optional[int] = None,
    timeout: Optional[float] = None,
) -> ScoredData:
    """Grades rows: the conduct checks (``conduct=False`` skips them), then
    ``grader=`` (a callable ``(row) -> reward``, a command or an http(s)
    URL), then an LLM judge (``judge=`` a backend spec, ``rubric=`` a file).
    Each stage's verdict stays on the row in ``grades``."""
    settings: dict[str, Any] = {
        "conduct": True if conduct is None else bool(conduct),
        "judge": judge,
        "rubric": None if rubric is None else os.fspath(rubric),
        "judge_kind": judge_kind,
        "concurrency": concurrency,
        "timeout": timeout,
    }
    grader_callable = None
    if callable(grader):
        grader_callable = grader
        settings["grader_name"] = _name(grader, "grader")
    elif isinstance(grader, str):
        settings["grader"] = grader
    elif grader is not None:
        raise TypeError("grader= must be a callable (row) -> reward, a command or an http(s) URL")
    summary = rows.summary if isinstance(rows, _Data) else {}
    out = rows.out if isinstance(rows, _Data) else None
    result = json.loads(_native.grade(_jsonl(rows), json.dumps(settings), grader_callable))
    return ScoredData(result["rows"], summary, out, grading=result["summary"])


def report(rows: RowsLike, *, k: Optional[Sequence[int]] = None, seed: Optional[int] = None) -> dict[str, Any]:
    """pass@1 with its 95 % interval over tasks, pass@k, pass^k and per
    category, as ``sparring report --json`` prints it (``text`` holds the
    table)."""
    result = json.loads(_native.report(_jsonl(rows), json.dumps({"k": k, "seed": seed})))
    out: dict[str, Any] = result["report"]
    out["text"] = result["text"]
    return out


def delta_report(
    before: RowsLike,
    after: RowsLike,
    *,
    must_not_regress: Optional[Sequence[str]] = None,
    seed: Optional[int] = None,
) -> dict[str, Any]:
    """Paired before/after per task: mean delta of pass@1 with a bootstrap
    interval, a sign-flip permutation p and a verdict, per category and per
    marker; ``failed_markers`` names the ``must_not_regress`` markers whose
    interval lies below zero."""
    options = {"must_not_regress": list(must_not_regress or []), "seed": seed}
    result = json.loads(_native.delta(_jsonl(before), _jsonl(after), json.dumps(options)))
    out: dict[str, Any] = result["delta"]
    out["failed_markers"] = result["failed_markers"]
    out["text"] = result["text"]
    return out


def compare_runs(before: RowsLike, after: RowsLike, *, seed: Optional[int] = None) -> dict[str, Any]:
    """The headline of :func:`delta_report`: tasks paired (tasks only one
    run has are dropped and counted), pass@1 before and after, the paired
    delta with its interval, p and verdict."""
    d = delta_report(before, after, seed=seed)
    keys = ("n_paired", "n_unpaired", "n_only_before", "n_only_after", "before", "after", "delta", "ci95", "p_value", "verdict")
    return {k: d[k] for k in keys if k in d}


def eval_variance(rows: RowsLike) -> dict[str, Any]:
    """pass@1 per ``lineage.eval_run`` with mean and standard deviation."""
    return json.loads(_native.eval_variance(_jsonl(rows)))  # type: ignore[no-any-return]


def _labels(labels: Any) -> list[dict[str, Any]]:
    if isinstance(labels, Mapping):
        items = [{"row_id": k, "label": v} for k, v in labels.items()]
    elif isinstance(labels, (str, os.PathLike)):
        with open(labels, encoding="utf-8") as f:
            items = [json.loads(line) for line in f if line.strip()]
    else:
        items = [dict(x) for x in labels]
    return items


def _reward_of(label: Mapping[str, Any]) -> Any:
    for key in ("reward", "label", "pass"):
        if key in label:
            v = label[key]
            if isinstance(v, bool):
                return 1.0 if v else 0.0
            if v in ("pass", "fail"):
                return 1.0 if v == "pass" else 0.0
            return v
    return None


def judge_agreement(rows: RowsLike, labels: Any = None) -> dict[str, Any]:
    """The rows' rewards against gold labels (``{"row_id", "label",
    "author"}`` dicts, a ``{row_id: label}`` dict or a labels file):
    agreement with a Wilson interval, Cohen's kappa, passes on gold fails.
    Without labels, the rows' own ``gold_reward`` (from ``attach_labels``)."""
    if labels is None:
        return json.loads(_native.judge_agreement(_jsonl(rows)))  # type: ignore[no-any-return]
    items = _labels(labels)
    text = "\n".join(json.dumps(x) for x in items) + "\n"
    return json.loads(_native.judge_agreement(_jsonl(rows), text))  # type: ignore[no-any-return]


def attach_labels(rows: RowsLike, labels: Any, *, kind: str = "human", author: str) -> Rows:
    """Gold labels on rows (``gold_reward``, ``gold_author``, ``gold_kind``);
    labels as for :func:`judge_agreement`. Returns the labelled rows."""
    items = [{"row_id": x.get("row_id"), "reward": _reward_of(x)} for x in _labels(labels)]
    text = "\n".join(json.dumps(x) for x in items) + "\n"
    result = json.loads(_native.attach_labels(_jsonl(rows), text, kind, author))
    return Rows(result["rows"])


def judge_trust(
    rows: RowsLike,
    *,
    judge: str,
    rubric: PathLike,
    judge_kind: Optional[str] = None,
    seed: Optional[int] = None,
    probe_rows: Optional[int] = None,
    timeout: Optional[float] = None,
) -> dict[str, Any]:
    """A judge measured: agreement with gold labels on two random halves,
    hack probes (known hacks, length padding), same-model warnings."""
    settings = {
        "judge": judge,
        "rubric": os.fspath(rubric),
        "judge_kind": judge_kind,
        "seed": seed,
        "probe_rows": probe_rows,
        "timeout": timeout,
    }
    return json.loads(_native.judge_trust(_jsonl(rows), json.dumps(settings)))  # type: ignore[no-any-return]


def hack_scan(rows: RowsLike, *, seed: int = 0) -> dict[str, Any]:
    """Reward variance within and between tasks, and row features that
    track reward within tasks, against a floor from shuffled rewards."""
    return json.loads(_native.hack_scan(_jsonl(rows), seed))  # type: ignore[no-any-return]


class Selection:
    """What a cut kept: ``rows``, the cut's ``report`` (rows in, items out,
    every exclusion class), the ``pairs`` of a pair cut, and what
    decontamination dropped. ``.export(path)`` writes it."""

    def __init__(self, result: Mapping[str, Any], cut: Optional[str], source: RowsLike, settings: Mapping[str, Any]):
        self.rows = Rows(result.get("rows", []))
        self.report: dict[str, Any] = dict(result.get("report") or {})
        self.pairs: list[dict[str, Any]] = list(result.get("pairs") or [])
        self.decontam: Optional[dict[str, Any]] = result.get("decontam")
        self.cut = cut
        self._settings = dict(settings)

    def export(self, path: PathLike, *, format: Optional[str] = None, **kwargs: Any) -> list[dict[str, Any]]:
        """Writes the kept rows in a trainer's format (the cut's own by
        default: ``sft`` as ``trl-sft``, ``dpo`` as ``trl-dpo``, ``grpo`` as
        ``trl-grpo``, ``reward-pairs`` as ``trl-reward``)."""
        default = {"sft": "trl-sft", "dpo": "trl-dpo", "grpo": "trl-grpo", "reward-pairs": "trl-reward"}
        settings = dict(self._settings)
        settings.update(kwargs)
        fmt = format or default.get(self.cut or "", "all")
        return export(self.rows, path, format=fmt, **settings)

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return f"<Selection {self.cut}: {len(self.rows)} rows>"


#: Keywords of the cuts, as ``sparring select`` names them.
CUT_KEYWORDS = (
    "seed",
    "mask",
    "per_task",
    "margin",
    "max_length_ratio",
    "max_pairs_per_task",
    "min_pass_rate",
    "max_pass_rate",
    "holdout",
    "traces",
    "threshold",
    "system_prompt",
    "tools",
    "holdout_fraction",
    "inline_trace",
    "keep_user_left",
)


def _cut_settings(function: str, kwargs: Mapping[str, Any], tmp: list[Any]) -> dict[str, Any]:
    given = _strict(function, kwargs, CUT_KEYWORDS)
    settings: dict[str, Any] = {k: v for k, v in given.items() if v is not None and k not in ("holdout", "traces", "tools")}
    if given.get("holdout") is not None:
        f = _RowsFile(given["holdout"])
        tmp.append(f)
        settings["holdout"] = f.path
    if given.get("traces") is not None:
        traces = given["traces"]
        # One source (a path, a run, a list of rows) or a list of sources.
        if isinstance(traces, (str, os.PathLike, _Data)):
            traces = [traces]
        else:
            traces = list(traces)
            if traces and all(isinstance(t, Mapping) for t in traces):
                traces = [traces]
        paths = []
        for t in traces:
            rows_file = _RowsFile(t)
            tmp.append(rows_file)
            paths.append(rows_file.path)
        settings["traces"] = paths
    if given.get("tools") is not None:
        d = tempfile.TemporaryDirectory(prefix="sparring-")
        tmp.append(d)
        path = os.path.join(d.name, "tools.json")
        with open(path, "w", encoding="utf-8") as out:
            json.dump(list(given["tools"]), out)
        settings["tools_file"] = path
    return settings


def _close(tmp: list[Any]) -> None:
    for t in tmp:
        if isinstance(t, _RowsFile):
            t.__exit__()
        else:
            t.cleanup()


def _cut(rows: RowsLike, cut: Optional[str], function: str = "select", **kwargs: Any) -> Selection:
    tmp: list[Any] = []
    try:
        settings = _cut_settings(function, kwargs, tmp)
        with _RowsFile(rows) as source:
            result = json.loads(_native.cut(source.path, cut, json.dumps(settings)))
    finally:
        _close(tmp)
    return Selection(result, cut, rows, {k: v for k, v in kwargs.items() if k in ("system_prompt", "tools", "seed")})


def select_for_sft(rows: RowsLike, **kwargs: Any) -> Selection:
    """Each task's best reward-1 row, spread across behaviour signatures
    (``mask=``, ``per_task=``, ``seed=``, ``holdout=``, ``traces=``); rows
    that missed their goal are left out, and rows the person left
    (``user_left``) too unless ``keep_user_left=True``."""
    return _cut(rows, "sft", "select_for_sft", **kwargs)


def build_preference_pairs(rows: RowsLike, **kwargs: Any) -> Selection:
    """Same-prompt DPO pairs with a reward margin and matched lengths
    (``margin=``, ``max_length_ratio=``, ``max_pairs_per_task=``); the
    pairs are in ``.pairs`` by row id."""
    return _cut(rows, "dpo", "build_preference_pairs", **kwargs)


def select_for_rl(rows: RowsLike, **kwargs: Any) -> Selection:
    """Whole GRPO groups whose pass rate lies in the band
    (``min_pass_rate=``, ``max_pass_rate=``)."""
    return _cut(rows, "grpo", "select_for_rl", **kwargs)


def decontaminate(rows: RowsLike, **kwargs: Any) -> Selection:
    """Drops rows that near-copy held-out rows (``holdout=``) or traces
    (``traces=``): 8-gram overlap above ``threshold=``. ``.decontam`` says
    what went."""
    return _cut(rows, None, "decontaminate", **kwargs)


def export(rows: RowsLike, path: PathLike, *, format: Optional[str] = None, **kwargs: Any) -> list[dict[str, Any]]:
    """Writes rows as training data: ``format=`` one of ``openai-sft``,
    ``openai-dpo``, ``trl-sft``, ``trl-dpo``, ``trl-reward``, ``trl-kto``,
    ``trl-grpo``, ``parquet``, or ``all`` / ``None`` (a dataset folder).
    ``system_prompt=`` and ``tools=`` fill rows that have none."""
    tmp: list[Any] = []
    fmt = None if format in (None, "all") else format
    try:
        settings = _cut_settings("export", kwargs, tmp)
        with _RowsFile(rows) as source:
            result = json.loads(_native.export(source.path, fmt, os.fspath(path), json.dumps(settings)))
    finally:
        _close(tmp)
    return result  # type: ignore[no-any-return]


def coverage_gap(
    asks: Sequence[str],
    *,
    tools: Optional[Sequence[Mapping[str, Any]]] = None,
    system_prompt: Optional[str] = None,
    spec: Any = None,
) -> dict[str, Any]:
    """The tools and policy rules none of ``asks`` touches."""
    if isinstance(asks, str):
        raise TypeError("asks must be a list of asks, not one string")
    request = _spec_request(spec, tools, system_prompt, None, None)
    return json.loads(_native.coverage_gap(json.dumps(request), list(asks)))  # type: ignore[no-any-return]
