"""sparring: evals and training data for tool-calling agents, by simulation.

The seeds' API over the ``sparring`` Rust library::

    import sparring

    def agent(message, tools):
        order = tools.get_order(order_id="A1")
        return f"Order A1 is {order['result']['status']}."

    data = sparring.simulate(agent, tools=TOOLS, system_prompt=POLICY, grade=True)
    for w in data.warnings:
        print("warning:", w)
    print(data.report()["pass_at_1"])

Every function takes the seeds' keyword names; see docs/python.md.
"""

from . import _native
from ._api import (
    Selection,
    attach_labels,
    build_preference_pairs,
    compare_runs,
    coverage_gap,
    decontaminate,
    delta_report,
    eval_variance,
    evaluate,
    export,
    grade,
    hack_scan,
    judge_agreement,
    judge_trust,
    report,
    select_for_rl,
    select_for_sft,
    simulate,
)
from ._callables import CurrentRollout, Rollout, ToolError, Tools, current_rollout
from ._data import Rows, ScoredData, SimulationData

#: A tool call of a callable agent got no answer: the turn hit
#: ``max_tool_steps``, or the agent took longer than ``timeout``.
RolloutEnded = _native.RolloutEnded

__version__: str = _native.version()

__all__ = [
    "CurrentRollout",
    "Rollout",
    "RolloutEnded",
    "Rows",
    "ScoredData",
    "Selection",
    "SimulationData",
    "ToolError",
    "Tools",
    "attach_labels",
    "build_preference_pairs",
    "compare_runs",
    "coverage_gap",
    "current_rollout",
    "decontaminate",
    "delta_report",
    "eval_variance",
    "evaluate",
    "export",
    "grade",
    "hack_scan",
    "judge_agreement",
    "judge_trust",
    "report",
    "select_for_rl",
    "select_for_sft",
    "simulate",
]
