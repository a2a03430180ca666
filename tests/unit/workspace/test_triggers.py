"""What a save, an open and an edit trigger: the innermost folder's verifier, once its
settings are known, as runOn and the globs say; "sync" counts an open whose text is the file
on disk as a save; an edit withdraws the located diagnostics of the lines it changed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from lsp_verify.record import Trigger
from lsp_verify.results.diagnostics import VERIFY, Entry
from lsp_verify.workspace import configure, triggers
from lsp_verify.workspace.folder import Folder
from lsp_verify.workspace.state import State
from tests.support.fake_ui import FakeUI


def watched(folder: Folder) -> list[tuple[Trigger, str | None]]:
    """The folder's triggers, recorded instead of run."""
    seen: list[tuple[Trigger, str | None]] = []

    def trigger(trigger: Trigger, document: str | None = None) -> Any:
        seen.append((trigger, document))

    folder.verifier.trigger = trigger  # type: ignore[method-assign]
    return seen


async def ready_folder(state: State, path: Path) -> tuple[Folder, list[tuple[Trigger, str | None]]]:
    folder = state.add_folder(path.as_uri())
    assert folder is not None
    await configure.load_settings(state, [folder])
    return folder, watched(folder)


async def test_a_save_triggers_the_innermost_folder(tmp_path: Path) -> None:
    state = State(FakeUI(settings=[{"command": "true"}, {"command": "true"}]))
    _, outer = await ready_folder(state, tmp_path)
    _, inner = await ready_folder(state, tmp_path / "sub")
    saved = (tmp_path / "sub" / "b.py").as_uri()
    triggers.on_save(state, saved)
    assert (outer, inner) == ([], [("save", saved)])


async def test_a_save_outside_every_folder_is_said_and_runs_nothing(tmp_path: Path) -> None:
    ui = FakeUI()
    state = State(ui)
    _, seen = await ready_folder(state, tmp_path / "w")
    outside = (tmp_path / "elsewhere.py").as_uri()
    triggers.on_save(state, outside)
    assert seen == []
    assert f"{outside}: outside every workspace folder; not verified" in ui.log_text()


async def test_a_save_before_the_settings_waits_for_them(tmp_path: Path) -> None:
    state = State(FakeUI(settings=[{"runOn": "manual"}]))
    folder = state.add_folder(tmp_path.as_uri())
    assert folder is not None
    seen = watched(folder)
    triggers.on_save(state, (tmp_path / "a.py").as_uri())
    assert seen == [] and folder.holds.count == 1  # held: a pull meanwhile waits for it
    await configure.load_settings(state, [folder])
    for _ in range(5):
        await _turn()
    assert seen == [] and folder.holds.count == 0


async def test_a_held_save_runs_once_the_settings_allow_it(tmp_path: Path) -> None:
    state = State(FakeUI(settings=[{"command": "true"}]))
    folder = state.add_folder(tmp_path.as_uri())
    assert folder is not None
    seen = watched(folder)
    saved = (tmp_path / "a.py").as_uri()
    triggers.on_save(state, saved)
    await configure.load_settings(state, [folder])
    for _ in range(5):
        await _turn()
    assert seen == [("save", saved)] and folder.holds.count == 0


@pytest.mark.parametrize(
    ("settings", "name", "runs"),
    [
        ({"runOn": "manual"}, "a.py", False),
        ({"globs": ["*.py"]}, "a.py", True),
        ({"globs": ["*.py"]}, "notes.md", False),
        ({"globs": ["src"]}, "src/deep/a.rs", True),
        ({"globs": ["src"]}, "lib/a.rs", False),
    ],
)
async def test_run_on_and_the_globs_decide(
    tmp_path: Path, settings: dict[str, Any], name: str, runs: bool
) -> None:
    state = State(FakeUI(settings=[settings]))
    _, seen = await ready_folder(state, tmp_path)
    triggers.on_save(state, (tmp_path / name).as_uri())
    assert bool(seen) == runs


@pytest.mark.parametrize(
    ("in_editor", "runs"),
    [("print(1)\n", True), ("print(2)\n", False), ("print(1)\nmore\n", False)],
    ids=["same as on disk", "edited", "longer"],
)
async def test_sync_counts_an_open_equal_to_the_disk_as_a_save(
    tmp_path: Path, in_editor: str, runs: bool
) -> None:
    path = tmp_path / "a.py"
    path.write_text("print(1)\n")
    ui = FakeUI(settings=[{"runOn": "sync"}], documents={path.as_uri(): in_editor})
    state = State(ui)
    _, seen = await ready_folder(state, tmp_path)
    triggers.on_open(state, path.as_uri())
    assert seen == ([("save", path.as_uri())] if runs else [])


async def test_an_open_under_run_on_save_runs_nothing(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("x\n")
    state = State(FakeUI(settings=[{}], documents={path.as_uri(): "x\n"}))
    _, seen = await ready_folder(state, tmp_path)
    triggers.on_open(state, path.as_uri())
    assert seen == []


async def test_a_file_dropped_as_an_echo_triggers_when_the_client_opens_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.py"
    state = State(FakeUI(settings=[{}]))
    folder, seen = await ready_folder(state, tmp_path)
    folder.guard.dropped(path.as_uri())  # the loop guard took its change for an echo
    triggers.on_open(state, path.as_uri())
    assert seen == [("save", path.as_uri())]
    triggers.on_open(state, path.as_uri())
    assert seen == [("save", path.as_uri())]  # reclaimed once


async def test_an_edit_withdraws_the_diagnostics_of_the_lines_it_changed(tmp_path: Path) -> None:
    uri = (tmp_path / "a.py").as_uri()
    ui = FakeUI(settings=[{}], documents={uri: "line 0\nline 1\n"})
    state = State(ui)
    await ready_folder(state, tmp_path)

    def located(line: int, anchor: str) -> Entry:
        at = types.Position(line=line, character=0)
        found = types.Diagnostic(range=types.Range(start=at, end=at), message=f"on {line}")
        return Entry(found, anchor=anchor)

    state.diagnostics.replace_verify(
        {uri: [located(0, "line 0"), located(1, "line 1")]}, lambda _: True
    )
    ui.documents[uri] = "line 0\nline one, edited\n"
    triggers.on_change(state, uri)
    assert [d["message"] for d in ui.last_published(uri) or []] == ["on 0"]
    assert len(state.diagnostics.entries(uri, VERIFY)) == 1
    published = len(ui.published)
    triggers.on_change(state, uri)  # nothing more to withdraw: nothing is sent
    assert len(ui.published) == published


async def _turn() -> None:
    await asyncio.sleep(0)
