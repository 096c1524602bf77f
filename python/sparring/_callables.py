"""How sparring calls your Python functions: the agent, the grader, the world.

The native module calls the ``run_*`` helpers here from tokio's blocking
pool, one thread per call in flight, with the GIL held only while Python
runs. A coroutine function (``async def``) runs on one asyncio loop of the
package's own, on a thread of its own. Every helper returns
``(ok, value, traceback)``: an exception never crosses into the engine; its
one-line message becomes the row's error and its traceback goes to
``run.log``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import inspect
import json
import threading
import traceback
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Optional, Tuple

from . import _native

#: Threads the asyncio loop hands blocking tool calls to (each waits for
#: the engine's answer without the GIL).
_LOOP_TOOL_THREADS = 256

Outcome = Tuple[bool, str, Optional[str]]


@dataclass(frozen=True)
class Rollout:
    """The rollout an agent, grader or world is answering."""

    #: The opening ask of the rollout.
    prompt: str
    #: Its index in the run (task index x repeats + repeat); ``None`` for a
    #: row graded after its run.
    rollout_index: Optional[int]
    #: The rollout's seed (the row's ``seed``).
    seed: int


_current: contextvars.ContextVar[Optional[Rollout]] = contextvars.ContextVar(
    "sparring_current_rollout", default=None
)


class CurrentRollout:
    """``sparring.current_rollout``: the rollout being answered, if any.

    Set before each call of your agent, grader or world (per thread, and per
    task for coroutines). Read its fields (``current_rollout.prompt``,
    ``.rollout_index``, ``.seed``; ``None`` outside a call) or call it for a
    :class:`Rollout` (``None`` outside a call).
    """

    def __call__(self) -> Optional[Rollout]:
        return _current.get()

    @property
    def prompt(self) -> Optional[str]:
        r = _current.get()
        return None if r is None else r.prompt

    @property
    def rollout_index(self) -> Optional[int]:
        r = _current.get()
        return None if r is None else r.rollout_index

    @property
    def seed(self) -> Optional[int]:
        r = _current.get()
        return None if r is None else r.seed

    def __bool__(self) -> bool:
        return _current.get() is not None

    def __repr__(self) -> str:
        return f"current_rollout({_current.get()!r})"


current_rollout = CurrentRollout()


class ToolError(Exception):
    """Raise it from ``execute=`` to refuse a call the way a backend would.

    The agent sees ``{"ok": false, "error": {"kind", "message", "hint"}}``;
    nothing goes to the log. Any other exception is the world failing: the
    agent sees a fault and the traceback goes to ``run.log``.
    """

    def __init__(self, message: str, kind: str = "refused", hint: Optional[str] = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.hint = hint


class Tools:
    """The tools handle a callable agent gets: every call goes to the world.

    ``tools.get_order(order_id="A1")``, ``tools.call("get_order", {...})``
    and ``tools("get_order", order_id="A1")`` all call the tool and return
    the world's answer, ``{"ok": True, "result": ...}`` or ``{"ok": False,
    "error": {"kind", "message", "hint"}}``; a ``malformed`` fault (an
    answer that is not JSON) is ``{"ok": False, "error": {"kind":
    "malformed", ...}, "raw": text}``. Inside a coroutine agent the
    call is awaitable (``await tools.get_order(...)``). ``tools.calls``
    records every call with its answer. The row's ``messages`` hold them
    too, as tool calls and tool results.
    """

    def __init__(self, native: Any):
        self._native = native
        self.calls: list[dict[str, Any]] = []

    def _blocking(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        answer = json.loads(self._native.call(name, json.dumps(arguments, default=str)))
        if isinstance(answer, str):
            # A `malformed` fault: the world's answer is text that is not
            # JSON. It keeps the documented shape of a failed call, with the
            # text the agent would have read as `raw`; the call may have been
            # performed, as a malformed answer's is.
            answer = {
                "ok": False,
                "error": {
                    "kind": "malformed",
                    "message": "the tool's answer is not JSON",
                    "hint": "the call may have been performed; look before repeating it",
                },
                "raw": answer,
            }
        self.calls.append({"tool": name, "arguments": arguments, "answer": answer})
        return answer  # type: ignore[no-any-return]

    def call(self, name: str, arguments: Optional[dict[str, Any]] = None, /, **kwargs: Any) -> Any:
        """Calls tool ``name`` with ``arguments`` and/or keyword arguments."""
        args = dict(arguments or {})
        args.update(kwargs)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return self._blocking(name, args)
        return loop.run_in_executor(None, self._blocking, name, args)

    __call__ = call

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        return functools.partial(self.call, name)

    def __repr__(self) -> str:
        return f"<sparring tools, {len(self.calls)} call(s)>"


_loop_lock = threading.Lock()
_loop: Optional[asyncio.AbstractEventLoop] = None


def _event_loop() -> asyncio.AbstractEventLoop:
    """The one loop coroutine callables run on, started on first use."""
    global _loop
    with _loop_lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            loop.set_default_executor(
                concurrent.futures.ThreadPoolExecutor(
                    max_workers=_LOOP_TOOL_THREADS, thread_name_prefix="sparring-tools"
                )
            )
            threading.Thread(target=loop.run_forever, name="sparring-asyncio", daemon=True).start()
            _loop = loop
        return _loop


async def _in_rollout(awaitable: Awaitable[Any], rollout: Optional[Rollout]) -> Any:
    _current.set(rollout)
    return await awaitable


def _settle(value: Any, rollout: Optional[Rollout]) -> Any:
    """The value, awaited on the package's loop when it is awaitable."""
    if inspect.isawaitable(value):
        future = asyncio.run_coroutine_threadsafe(_in_rollout(value, rollout), _event_loop())
        return future.result()
    return value


def _rollout(t: Optional[Tuple[str, Optional[int], int]]) -> Optional[Rollout]:
    return None if t is None else Rollout(*t)


def _failure(e: BaseException) -> Outcome:
    text = str(e).strip().splitlines()
    message = f"{type(e).__name__}: {text[0]}" if text else type(e).__name__
    return False, message, traceback.format_exc().rstrip()


#: ``_wants_tools`` per callable (a run calls the same agent on every row).
_WANTS: dict[Any, str] = {}


def _wants_tools(func: Callable[..., Any]) -> str:
    """How to pass the tools handle: ``positional``, ``keyword`` or ``none``."""
    try:
        return _WANTS[func]
    except (KeyError, TypeError):
        pass
    how = _inspect_tools(func)
    try:
        if len(_WANTS) < 256:
            _WANTS[func] = how
    except TypeError:  # an unhashable callable
        pass
    return how


def _inspect_tools(func: Callable[..., Any]) -> str:
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return "positional"
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind == p.VAR_POSITIONAL for p in params) or len(positional) >= 2:
        return "positional"
    if any(p.name == "tools" and p.kind == p.KEYWORD_ONLY for p in params):
        return "keyword"
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return "keyword"
    return "none"


def _reply_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content", None), (str, type(None))):
        return value.get("content") or ""
    raise TypeError(
        f"the agent returned {type(value).__name__}; return its reply text "
        "(a str, or a message dict with `content`)"
    )


def _as_rollout(
    rollout: Optional[Tuple[str, Optional[int], int]], body: Callable[[Optional[Rollout]], Outcome]
) -> Outcome:
    """Runs ``body`` with ``rollout`` as the current one; an exception it
    raises is the row's error, never a crash."""
    current = _rollout(rollout)
    token = _current.set(current)
    try:
        return body(current)
    except Exception as e:
        return _failure(e)
    finally:
        _current.reset(token)


def run_agent(
    func: Callable[..., Any],
    message: str,
    native_tools: Any,
    rollout: Optional[Tuple[str, Optional[int], int]],
) -> Outcome:
    """Plays one rollout of a callable agent: ``func(message, tools)``."""

    def body(current: Optional[Rollout]) -> Outcome:
        tools = Tools(native_tools)
        how = _wants_tools(func)
        if how == "positional":
            value = func(message, tools)
        elif how == "keyword":
            value = func(message, tools=tools)
        else:
            value = func(message)
        return True, _reply_text(_settle(value, current)), None

    return _as_rollout(rollout, body)


def _verdict(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"reward": 1.0 if value else 0.0}
    if isinstance(value, (int, float)):
        return {"reward": float(value)}
    if isinstance(value, tuple) and len(value) == 2:
        return {"reward": float(value[0]), "reason": str(value[1])}
    if isinstance(value, dict):
        return value
    raise TypeError(
        f"the grader returned {type(value).__name__}; return a reward (0..1 or a bool), "
        "(reward, reason) or a dict with `reward`, `reason`, `markers`, `failure_class`"
    )


def run_grader(
    func: Callable[..., Any], row_json: str, rollout: Optional[Tuple[str, Optional[int], int]]
) -> Outcome:
    """Grades one row: ``func(row)`` with the row as a dict."""

    def body(current: Optional[Rollout]) -> Outcome:
        value = _settle(func(json.loads(row_json)), current)
        return True, json.dumps(_verdict(value), default=str), None

    return _as_rollout(rollout, body)


def run_execute(
    func: Callable[..., Any],
    tool: str,
    arguments_json: str,
    rollout: Optional[Tuple[str, Optional[int], int]],
) -> Outcome:
    """Answers one tool call in the caller's world: ``func(tool, arguments)``."""

    def body(current: Optional[Rollout]) -> Outcome:
        try:
            value = _settle(func(tool, json.loads(arguments_json)), current)
        except ToolError as e:
            error = {"kind": e.kind, "message": e.message, "hint": e.hint}
            return True, json.dumps({"error": error}), None
        return True, json.dumps({"result": value}, default=str), None

    return _as_rollout(rollout, body)


__all__ = ["CurrentRollout", "Rollout", "ToolError", "Tools", "current_rollout", "_native"]
