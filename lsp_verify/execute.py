"""One whole run of a plan: plan -> ready steps -> runner -> RunResult, and as a Record.

The piece the CLI and the server share.
"""

from __future__ import annotations

import asyncio
import os
from typing import Callable

from lsp_verify.plan import Plan
from lsp_verify.problems import make_sink
from lsp_verify.problems.base import LineSink, Problem
from lsp_verify.record import Record, Trigger, record_for_plan
from lsp_verify.runner import Hooks, RunResult, run_steps
from lsp_verify.settings import Settings
from lsp_verify.steps import prepared


async def run_plan(
    plan: Plan,
    *,
    timeout_ms: int,
    tail_lines: int,
    sink: LineSink | None = None,
    on_line: Callable[[str], None] | None = None,
    cancel: asyncio.Event | None = None,
    on_spawn: Callable[[int], None] | None = None,
) -> RunResult:
    """Run the plan's command(s) in its folder and say what happened.

    Never raises for what a user can cause (missing folder or command, changed manifest):
    those are results. If the awaiting task is cancelled, everything the run started is
    killed before CancelledError propagates.
    """
    if plan.command is None:
        return RunResult.unstarted("skipped", f"no plan: {plan.reason}")
    if cancel is not None and cancel.is_set():
        return RunResult.unstarted("cancelled", None)
    if not os.path.isdir(plan.folder):
        return RunResult.unstarted("failed", f"folder not found: {plan.folder}", shown=True)
    ready = prepared(plan)
    if ready.skip is not None:
        return RunResult.unstarted("skipped", ready.skip)
    hooks = Hooks(sink, on_line, on_spawn, cancel)
    return await run_steps(ready.steps, timeout_ms=timeout_ms, tail_lines=tail_lines, hooks=hooks)


async def execute_plan(
    plan: Plan,
    settings: Settings,
    *,
    trigger: Trigger,
    document: str | None = None,
    cancel: asyncio.Event | None = None,
    on_line: Callable[[str], None] | None = None,
    on_spawn: Callable[[int], None] | None = None,
    on_problem: Callable[[Problem], None] | None = None,
) -> Record:
    """Run `plan` with `settings` and return its record; never raises for user errors.
    `on_problem` hears of each located problem as soon as the output completes it."""
    if plan.command is None:
        return record_for_plan(plan, trigger=trigger, outcome="no-plan", document=document)
    result = await run_plan(
        plan,
        timeout_ms=settings.timeout_ms,
        tail_lines=settings.tail_lines,
        sink=make_sink(plan.folder, on_problem),
        on_line=on_line,
        cancel=cancel,
        on_spawn=on_spawn,
    )
    return record_for_plan(
        plan,
        trigger=trigger,
        outcome=result.outcome,
        reason=result.reason,
        document=document,
        started_at=result.started_at,
        duration_ms=result.duration_ms,
        exit_code=result.exit_code,
        tail=result.tail,
        problems=result.problems,
    )
