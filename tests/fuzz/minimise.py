"""Shrink a session to what still shows one class of finding: delta debugging (ddmin) over
the steps, then over the parts of each write, then the policy's odd answers, then the fields
of each message, then the size of each repository file. Each try is a whole session against a
fresh server, so the work is bounded by a time budget; what is left when it runs out is the
smallest session that still showed the finding."""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from typing import Any, Callable

from tests.fuzz.campaign import judge
from tests.fuzz.runner import FAST, MEDIUM
from tests.fuzz.session import Session

ENVELOPE = ("jsonrpc", "id", "method")
# Classes of finding that depend on the bounds (shrunk with MEDIUM ones; the others, FAST).
TIMED = ("no-response", "late", "stalled", "stop-failed", "left-behind", "cpu", "unanswered")


def minimise(
    session: Session, key: str, budget_s: float, say: Callable[[str], None] = print
) -> Session:
    deadline = time.monotonic() + budget_s
    tries = [0]
    bounds = MEDIUM if key.startswith(TIMED) else FAST

    def keeps(candidate: Session) -> bool:
        if time.monotonic() >= deadline:
            return False
        tries[0] += 1
        found, _ = judge(candidate, bounds)
        return any(f.key == key for f in found)

    best = copy.deepcopy(session)
    best["steps"] = ddmin(best["steps"], lambda steps: keeps({**best, "steps": steps}))
    say(f"  {key}: {len(best['steps'])} steps after {tries[0]} tries")
    for name in list(best.get("policy", {})):
        policy = {k: v for k, v in best["policy"].items() if k != name}
        if keeps({**best, "policy": policy}):
            best["policy"] = policy
    for index in range(len(best["steps"])):
        best = _shrink_parts(best, index, keeps)
    best = _shrink_messages(best, keeps)
    best = _shrink_files(best, keeps)
    say(f"  {key}: {len(best['steps'])} steps, {tries[0]} tries in all")
    return best


def ddmin(items: list[Any], test: Callable[[list[Any]], bool]) -> list[Any]:
    """The ddmin loop over complements: a smaller list for which `test` still holds."""
    if items and test([]):
        return []
    n = 2
    while len(items) >= 2:
        size = -(-len(items) // n)
        chunks = [items[i : i + size] for i in range(0, len(items), size)]
        for i in range(len(chunks)):
            complement = [x for j, chunk in enumerate(chunks) if j != i for x in chunk]
            if test(complement):
                items = complement
                n = max(n - 1, 2)
                break
        else:
            if n >= len(items):
                break
            n = min(len(items), 2 * n)
    if len(items) == 1 and test([]):
        return []
    return items


def _with_step(session: Session, index: int, step: dict[str, Any]) -> Session:
    steps = list(session["steps"])
    steps[index] = step
    return {**session, "steps": steps}


def _shrink_parts(best: Session, index: int, keeps: Callable[[Session], bool]) -> Session:
    """ddmin over the parts of one write."""
    step = best["steps"][index]
    if "send" not in step or len(step["send"]) < 2:
        return best

    def test(parts: list[Any]) -> bool:
        return keeps(_with_step(best, index, {**step, "send": parts}))

    return _with_step(best, index, {**step, "send": ddmin(step["send"], test)})


def _removable(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Places in a message that could go, outermost first (never the envelope)."""
    if isinstance(value, dict):
        for name in value:
            if path or name not in ENVELOPE:
                yield (*path, name)
        for name, item in value.items():
            yield from _removable(item, (*path, name))
    elif isinstance(value, list):
        for index in range(len(value)):
            yield (*path, index)
        for index, item in enumerate(value):
            yield from _removable(item, (*path, index))


def _without(value: Any, path: tuple[Any, ...]) -> Any:
    value = copy.deepcopy(value)
    parent = value
    for name in path[:-1]:
        parent = parent[name]
    del parent[path[-1]]
    return value


def _shrink_messages(best: Session, keeps: Callable[[Session], bool]) -> Session:
    for index in range(len(best["steps"])):
        step = best["steps"][index]
        for p in range(len(step.get("send", []))):
            changed = True
            while changed:
                changed = False
                part = best["steps"][index]["send"][p]
                if not isinstance(part.get("json"), (dict, list)):
                    break
                for path in list(_removable(part["json"]))[:40]:
                    smaller = {**part, "json": _without(part["json"], path)}
                    parts = list(best["steps"][index]["send"])
                    parts[p] = smaller
                    candidate = _with_step(best, index, {**best["steps"][index], "send": parts})
                    if keeps(candidate):
                        best, changed = candidate, True
                        break
    return best


def _shrink_files(best: Session, keeps: Callable[[Session], bool]) -> Session:
    for index, step in enumerate(best["steps"]):
        text = step.get("text")
        while isinstance(text, dict) and int(text.get("times", 1)) > 1:
            smaller = {**text, "times": int(text["times"]) // 4 or 1}
            candidate = _with_step(best, index, {**step, "text": smaller})
            if not keeps(candidate):
                break
            best, text = candidate, smaller
    return best
