"""One whole run of a plan: plan -> ready steps -> runner -> RunResult, and as a Record.

The piece the CLI and the server share.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from typing import Callable, Literal

from lsp_verify.config.settings import Settings
from lsp_verify.planning.arrange import arrange
from lsp_verify.planning.plan import Plan, record_for_plan
from lsp_verify.planning.steps import prepared
from lsp_verify.problems import make_sink
from lsp_verify.problems.base import LineSink, Problem
from lsp_verify.record import Phase, Record, Trigger
from lsp_verify.running.runner import Hooks, RunResult, run_steps

ENDED_BY_QUICK = (
    "the quick phase (the saved test file, the test files the changes affect) failed, and the "
    "full command stops at its first failure: it would fail too, so it did not run"
)


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
    saved: str | None = None,
    changed: tuple[str, ...] = (),
    cancel: asyncio.Event | None = None,
    on_line: Callable[[str], None] | None = None,
    on_spawn: Callable[[int], None] | None = None,
    on_problem: Callable[[Problem], None] | None = None,
    on_phase: Callable[[str, str], None] | None = None,
) -> Record:
    """Run `plan` with `settings` and return its record; never raises for user errors.
    `on_problem` hears of each located problem as soon as the output completes it;
    `on_phase` of each phase (its name and the command as it runs) as it starts.

    saved: the absolute path of the file whose save triggered the run. When it is a test
    file the run collects, it runs first, with the test files that import what changed
    (`changed`: absolute paths, beside what changed on disk since the last run), as a quick
    phase (`arrange.Quick`): its failures reach `on_problem` before the full command starts.
    The record is the plan's (its fingerprint is the approved one) with the command as it
    ran, each phase, and what affected-first found."""
    if plan.command is None:
        return record_for_plan(plan, trigger=trigger, outcome="no-plan", document=document)
    # Reading the folder's Python files for the import graph takes up to a second for a big
    # project seen for the first time: not on the event loop.
    arranged = await asyncio.to_thread(
        arrange,
        plan,
        settings.failed_first,
        saved,
        affected=settings.failed_first and settings.affected_first,
        changed=changed,
    )
    if cancel is not None and cancel.is_set():
        return record_for_plan(plan, trigger=trigger, outcome="cancelled", document=document)
    phases: tuple[Phase, ...] = ()
    started: list[str] = []  # when the first phase started: the run's start
    matcher_errors = 0  # of every phase: a quick phase's problems were shown too

    async def phase(name: Literal["quick", "full"], command: str) -> Record:
        nonlocal phases, matcher_errors
        if on_phase is not None:
            on_phase(name, command)
        sink = make_sink(plan.folder, on_problem)
        result = await run_plan(
            _running(plan, command),
            timeout_ms=settings.timeout_ms,
            tail_lines=settings.tail_lines,
            sink=sink,
            on_line=on_line,
            cancel=cancel,
            on_spawn=on_spawn,
        )
        phases += (Phase(name, command, result.outcome, result.exit_code, result.duration_ms),)
        started.append(result.started_at)
        matcher_errors += sink.errors
        return record_for_plan(
            plan,
            command=command,
            trigger=trigger,
            outcome=result.outcome,
            reason=result.reason,
            document=document,
            started_at=started[0],
            duration_ms=sum(p.duration_ms for p in phases),
            exit_code=result.exit_code,
            tail=result.tail,
            problems=result.problems,
            failed_first=arranged.failed_first,
            phases=phases,
            affected=arranged.affected,
            matcher_errors=matcher_errors,
        )

    quick = arranged.quick
    if quick is not None:
        record = await phase("quick", quick.command)
        if record.outcome in ("cancelled", "skipped"):
            return record
        # Exit 1 is pytest's "tests failed"; anything else (no tests, a usage error, a
        # timeout of this phase) is left for the full command to say.
        if record.outcome == "failed" and record.exit_code == 1 and quick.ends_run:
            return dataclasses.replace(record, reason=ENDED_BY_QUICK)
    return await phase("full", arranged.command)


def _running(plan: Plan, command: str) -> Plan:
    """The plan as it runs `command` (the same plan when nothing was arranged)."""
    if command == plan.command:
        return plan
    return dataclasses.replace(plan, command=command, steps=(command,))
