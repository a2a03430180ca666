"""Failures inside the workspace are seen, and never wedge a folder: a settings load that
raises still leaves the folder ready, a background task that fails says so in the log, and a
pull's wait that fails for a reason other than its bound is logged rather than dropped.

The workspace is driven without a client, through a small UI (no pygls, no process)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest

from lsp_verify.workspace import commands, configure
from lsp_verify.workspace.state import State
from tests.support.fake_ui import FakeUI


class UI(FakeUI):
    """A client whose answer to workspace/configuration raises, where a test says so."""

    def __init__(self, configuration: Exception | None = None) -> None:
        super().__init__(settings=[{"command": "true"}] * 8)
        self.raises = configuration

    async def configuration(self, uris: list[str]) -> list[Any] | None:
        if self.raises is not None:
            raise self.raises
        return await super().configuration(uris)


async def test_a_settings_load_that_raises_leaves_the_folder_ready(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    workspace = State(UI(configuration=RuntimeError("boom")))
    folder = workspace.add_folder(tmp_path.as_uri())
    assert folder is not None
    with caplog.at_level(logging.ERROR, "lsp_verify"):
        await configure.load_settings(workspace, [folder])
    assert folder.ready.is_set()
    assert any("RuntimeError: boom" in r.getMessage() for r in caplog.records)


async def test_settings_that_fail_to_parse_leave_the_folder_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    workspace = State(UI())
    folder = workspace.add_folder(tmp_path.as_uri())
    assert folder is not None

    def broken(value: object, origin: str) -> Any:
        raise ValueError("a bug in the parser")

    monkeypatch.setattr(configure, "parse", lambda state, value, origin: broken(value, origin))
    with caplog.at_level(logging.ERROR, "lsp_verify"):
        await configure.load_settings(workspace, [folder])
    assert folder.ready.is_set()
    assert folder.editor is None  # the defaults apply
    assert any("a bug in the parser" in r.getMessage() for r in caplog.records)


async def test_a_background_task_that_fails_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    workspace = State(UI())

    async def fails() -> None:
        raise KeyError("lost")

    with caplog.at_level(logging.ERROR, "lsp_verify"):
        workspace.spawn(fails())
        for _ in range(3):
            await asyncio.sleep(0)
    (line,) = [r.getMessage() for r in caplog.records]
    assert line.startswith("a background task failed: KeyError: 'lost'")
    assert "test_workspace_failures.py" in line  # where it was raised, in one line


@pytest.mark.parametrize(
    ("error", "logged"),
    [(OSError("a bug while waiting"), True), (asyncio.TimeoutError(), False)],
    ids=["a bug", "the bound"],
)
async def test_a_pull_wait_that_fails_is_logged_and_its_bound_is_not(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    error: Exception,
    logged: bool,
) -> None:
    workspace = State(UI())
    folder = workspace.add_folder(tmp_path.as_uri())
    assert folder is not None
    await configure.load_settings(workspace, [folder])
    release = folder.holds.hold()  # a held trigger: the pull waits for it

    async def broken(*args: Any) -> None:
        raise error

    monkeypatch.setattr(commands, "settle", broken)
    with caplog.at_level(logging.ERROR, "lsp_verify"):
        await commands.wait_for_pending(workspace, None)
    lines = [r.getMessage() for r in caplog.records]
    if logged:
        (line,) = lines
        assert line.startswith("waiting for a run failed: OSError: a bug while waiting")
    else:
        assert lines == []
    release()


def test_a_flood_of_settings_problems_pops_up_a_few_and_logs_every_one(tmp_path: Path) -> None:
    from lsp_verify.workspace.state import MAX_SHOWN

    ui = UI()
    workspace = State(ui)
    configure.parse(workspace, {f"unknown{n}": 1 for n in range(50)}, "settings")
    shown = ui.warnings
    assert len(shown) == MAX_SHOWN + 1
    assert shown[-1] == "verify: more problems with the settings; the log has them all"
    assert sum("unknown" in text for _, text in ui.logged) == 50
