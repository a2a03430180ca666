"""The per-folder scheduler over seconds of steady saves (with a fake job, then with the real
runner against a slow command: never starved), and a cancel with a real process."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import Callable

from lsp_verify.config.settings import Settings
from lsp_verify.planning.plan import command_plan
from lsp_verify.record import Record
from lsp_verify.running.execute import execute_plan
from lsp_verify.workspace.verifier import FolderVerifier, RunRequest
from tests.support.jobs import FakeJob
from tests.support.procs import alive_with, unique_sleep


async def test_steady_saves_never_starve_delivery() -> None:
    job = FakeJob(duration=0.2)
    loop = asyncio.get_running_loop()
    delivered: list[float] = []
    v = FolderVerifier("/f", job, on_record=lambda r: delivered.append(loop.time()))
    start = loop.time()
    while loop.time() - start < 1.0:
        v.trigger("save")
        await asyncio.sleep(0.02)
    pending = v.pending()
    assert pending is not None
    await pending
    gaps = [b - a for a, b in zip([start, *delivered], delivered)]
    assert len(delivered) >= 4
    assert max(gaps) < 0.45
    assert job.max_active == 1


def real_job(folder: str, command: str) -> Callable[[RunRequest], Awaitable[Record]]:
    """A job that really runs `command` through the runner, as the server's job does."""
    plan = command_plan(folder, command, "test")

    async def job(request: RunRequest) -> Record:
        return await execute_plan(plan, Settings(), trigger=request.trigger, cancel=request.cancel)

    return job


async def test_saves_every_100ms_against_a_1s_command_are_never_starved(tmp_path: Path) -> None:
    loop = asyncio.get_running_loop()
    delivered: list[float] = []
    v = FolderVerifier(
        str(tmp_path),
        real_job(str(tmp_path), "sleep 1; exit 1"),
        on_record=lambda r: delivered.append(loop.time()),
    )
    start = loop.time()
    while loop.time() - start < 3.0:
        v.trigger("save")
        await asyncio.sleep(0.1)
    pending = v.pending()
    assert pending is not None
    await pending
    gaps = [b - a for a, b in zip([start, *delivered], delivered)]
    assert len(delivered) >= 3
    assert max(gaps) < 2.0, gaps


async def test_cancel_with_a_real_process_leaves_nothing(tmp_path: Path) -> None:
    marker = unique_sleep()
    v = FolderVerifier(str(tmp_path), real_job(str(tmp_path), f"sleep {marker} & sleep {marker}"))
    running = v.trigger("save")
    for _ in range(200):
        if alive_with(marker):
            break
        await asyncio.sleep(0.01)
    v.trigger("save")
    cancelled = await v.cancel()
    assert [r.outcome for r in cancelled] == ["cancelled", "cancelled"]
    assert (await running).exit_code is None
    assert alive_with(marker) == []
    assert v.state == "idle"
