"""Work-done progress end to end: reports for a client that supports it, none for one that does
not, and cancelling it kills the run."""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path

import attrs
from lsprotocol import types
from pytest_lsp import LspSpecificationWarning, client_capabilities

from tests.support.lsp_session import session
from tests.support.procs import alive_with, unique_sleep


async def test_progress_for_a_client_that_supports_it(project: Path, state: Path) -> None:
    command = "for i in 1 2 3 4 5; do echo step $i; sleep 0.1; done; exit 1"
    async with session(project, state=state, init_options={"command": command}) as s:
        await s.command("verify.runNow")
        reports = [v for vs in s.client.progress_reports.values() for v in vs]
        kinds = [r.kind for r in reports]
        assert kinds[0] == "begin" and kinds[-1] == "end"
        assert "report" in kinds
        assert reports[0].message == command
        assert reports[-1].message == "failed"


async def test_no_progress_for_a_client_without_it(project: Path, state: Path) -> None:
    # Like Emacs' eglot 1.9: a client that declares no window.workDoneProgress.
    base = client_capabilities("neovim@v0.7.0")
    capabilities = attrs.evolve(base, window=attrs.evolve(base.window, work_done_progress=False))
    with warnings.catch_warnings():
        warnings.simplefilter("error", LspSpecificationWarning)
        async with session(
            project, state=state, capabilities=capabilities, init_options={"command": "exit 1"}
        ) as s:
            record = await s.command("verify.runNow")
            assert record["outcome"] == "failed"
            assert s.client.progress_reports == {}


async def test_cancelling_the_progress_kills_the_run(project: Path, state: Path) -> None:
    marker = unique_sleep()
    async with session(project, state=state, init_options={"command": f"sleep {marker}"}) as s:
        run = asyncio.ensure_future(s.command("verify.runNow"))
        await s.wait_for(lambda: alive_with(marker), what="the command to start")
        await s.wait_for(lambda: s.client.progress_reports, what="progress")
        token = next(iter(s.client.progress_reports))
        s.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
        record = await asyncio.wait_for(run, 10)
        assert record["outcome"] == "cancelled"
        assert alive_with(marker) == []
        assert s.verify_diagnostics() == {}
