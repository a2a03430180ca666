"""One whole run of a plan, as a Record: the piece the CLI and the server share."""

from __future__ import annotations

import asyncio
from typing import Callable

from lsp_verify.detect import Plan
from lsp_verify.problems import make_sink
from lsp_verify.record import Record, Trigger, record_for_plan
from lsp_verify.runner import run_plan
from lsp_verify.settings import Settings


async def execute_plan(
    plan: Plan,
    settings: Settings,
    *,
    trigger: Trigger,
    document: str | None = None,
    cancel: asyncio.Event | None = None,
    on_line: Callable[[str], None] | None = None,
    on_spawn: Callable[[int], None] | None = None,
) -> Record:
    """Run `plan` with `settings` and return its record; never raises for user errors."""
    if plan.command is None:
        return record_for_plan(plan, trigger=trigger, outcome="no-plan", document=document)
    result = await run_plan(
        plan,
        timeout_ms=settings.timeout_ms,
        tail_lines=settings.tail_lines,
        sink=make_sink(plan.folder),
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
