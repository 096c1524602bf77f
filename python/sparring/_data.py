"""What the functions return: rows with the run's summary around them."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Optional, Union

if TYPE_CHECKING:  # pragma: no cover
    from ._api import Selection


class Rows(list):  # type: ignore[type-arg]
    """A list of rows (plain dicts of the row format in docs/rows.md).

    Callable too, so ``data.rows`` and ``data.rows()`` both work.
    """

    def __call__(self) -> "Rows":
        return self


class _Data:
    """Rows and the summary of the run (or grading pass) that made them."""

    def __init__(self, rows: list[dict[str, Any]], summary: dict[str, Any], out: Optional[str]):
        self._rows = Rows(rows)
        #: The summary, as ``run.json`` holds it.
        self.summary: dict[str, Any] = summary
        #: The run directory, when the rows were written to one.
        self.out: Optional[str] = out

    @property
    def rows(self) -> Rows:
        """The rows; ``data.rows()`` works too."""
        return self._rows

    @property
    def warnings(self) -> list[str]:
        """Things to read before any number."""
        return list(self.summary.get("warnings", []))

    @property
    def degraded(self) -> list[str]:
        """What was weaker than asked (``same_model``, ``generator_fallback``, …)."""
        return list(self.summary.get("degraded", []))

    @property
    def search(self) -> dict[str, Any]:
        """The search record: ``seeds_dropped``, ``tier_mix``, ``eval_runs``, …"""
        return dict(self.summary.get("search", {}))

    @property
    def coverage(self) -> dict[str, Any]:
        """Pairwise coverage over the rows run, and the axes."""
        return dict(self.summary.get("coverage", {}))

    @property
    def stopped_because(self) -> Optional[str]:
        """Why the run stopped (``situations_exhausted``, ``budget_spent``, …)."""
        return self.summary.get("stopped_because")

    def report(self, **kwargs: Any) -> dict[str, Any]:
        """``sparring.report`` of these rows (``k=``, ``seed=``)."""
        from ._api import report

        return report(self, **kwargs)

    def grade(self, **kwargs: Any) -> "ScoredData":
        """``sparring.grade`` of these rows."""
        from ._api import grade

        return grade(self, **kwargs)

    def select(self, cut: str = "sft", **kwargs: Any) -> "Selection":
        """One training cut of these rows (``sft``, ``dpo``, ``grpo``,
        ``reward-pairs``, ``graded``), ready to ``.export(path)``."""
        from ._api import _cut

        return _cut(self, cut, **kwargs)

    def export(self, path: Union[str, "os.PathLike[str]"], **kwargs: Any) -> list[dict[str, Any]]:
        """``sparring.export`` of these rows."""
        from ._api import export

        return export(self, path, **kwargs)

    def to_jsonl(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the rows as a rows file."""
        with open(path, "w", encoding="utf-8") as f:
            for row in self._rows:
                f.write(json.dumps(row) + "\n")

    def __len__(self) -> int:
        return len(self._rows)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {len(self._rows)} rows, stopped because {self.stopped_because}>"


class SimulationData(_Data):
    """What ``simulate`` returns: the rows and ``run.json``'s summary."""


class ScoredData(_Data):
    """What ``evaluate`` and ``grade`` return: graded rows.

    From ``evaluate``, ``per_ask`` says how each ask of the eval set scored
    (one dict per ask, in order: ``index``, ``ask``, ``task_id``, ``rows``,
    ``graded``, ``passed``, ``pass_rate``, ``mean_reward``, ``ended_by``,
    ``failures``); from ``grade``, ``grading`` is the pass's summary.
    """

    def __init__(
        self,
        rows: list[dict[str, Any]],
        summary: dict[str, Any],
        out: Optional[str],
        per_ask: Optional[list[dict[str, Any]]] = None,
        grading: Optional[dict[str, Any]] = None,
    ):
        super().__init__(rows, summary, out)
        #: How each ask of an eval set scored (``evaluate`` only).
        self.per_ask: list[dict[str, Any]] = list(per_ask or [])
        #: The grading pass's summary (``grade`` only).
        self.grading: dict[str, Any] = dict(grading or {})

    def passes(self) -> Rows:
        """The rows that passed (reward >= 0.5)."""
        return Rows(r for r in self.rows if (r.get("reward") or 0) >= 0.5 and r.get("reward") is not None)
