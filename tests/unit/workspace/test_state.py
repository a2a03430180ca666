"""The state: the innermost folder holds a document, a folder that leaves takes its
diagnostics with it and no one else's, a document's line comes from the editor before the
disk, a problem is said once, and a closing state says nothing more."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from lsp_verify.results.diagnostics import VERIFY, Entry
from lsp_verify.workspace.state import MAX_REMEMBERED, State
from tests.support.fake_ui import FakeUI


def entry(message: str) -> Entry:
    zero = types.Position(line=0, character=0)
    return Entry(types.Diagnostic(range=types.Range(start=zero, end=zero), message=message))


def test_the_innermost_folder_holds_a_document(tmp_path: Path, ui: FakeUI) -> None:
    state = State(ui)
    outer = state.add_folder(tmp_path.as_uri())
    inner = state.add_folder((tmp_path / "sub").as_uri())
    assert outer is not None and inner is not None
    assert state.folder_of(str(tmp_path / "a.py")) is outer
    assert state.folder_of(str(tmp_path / "sub" / "b.py")) is inner
    assert state.folder_of(str(tmp_path / "subway.py")) is outer  # a prefix is not a parent
    assert state.folder_of(str(tmp_path.parent / "elsewhere.py")) is None
    assert state.holds(outer)((tmp_path / "a.py").as_uri())
    assert not state.holds(outer)((tmp_path / "sub" / "b.py").as_uri())
    assert state.add_folder(tmp_path.as_uri()) is outer  # added twice: one folder


def test_a_folder_that_is_not_a_file_uri_is_ignored_and_said(ui: FakeUI) -> None:
    state = State(ui)
    assert state.add_folder("untitled:Untitled-1") is None
    assert state.folders == {}
    assert "ignoring workspace folder untitled:Untitled-1" in ui.log_text()


async def test_a_folder_that_leaves_withdraws_only_its_own_diagnostics(
    tmp_path: Path, ui: FakeUI
) -> None:
    state = State(ui)
    state.add_folder(tmp_path.as_uri())
    state.add_folder((tmp_path / "sub").as_uri())
    mine, theirs = (tmp_path / "a.py").as_uri(), (tmp_path / "sub" / "b.py").as_uri()
    state.diagnostics.replace_verify({mine: [entry("a")], theirs: [entry("b")]}, lambda _: True)
    assert ui.last_published(mine) and ui.last_published(theirs)
    state.remove_folder(tmp_path.as_uri())
    for _ in range(20):
        if ui.last_published(mine) == []:
            break
        await asyncio.sleep(0.01)
    assert ui.last_published(mine) == []
    assert [d["message"] for d in ui.last_published(theirs) or []] == ["b"]
    assert list(state.diagnostics.entries(theirs, VERIFY)) == [entry("b")]


def test_a_line_comes_from_the_open_document_before_the_disk(tmp_path: Path) -> None:
    on_disk = tmp_path / "a.py"
    on_disk.write_text("disk 0\ndisk 1\n")
    unsaved = tmp_path / "b.py"
    unsaved.write_text("disk\n")
    ui = FakeUI(documents={unsaved.as_uri(): "editor 0\neditor 1\n"})
    state = State(ui)
    assert state.line_text(on_disk.as_uri(), 1) == "disk 1"
    assert state.line_text(unsaved.as_uri(), 1) == "editor 1"
    assert state.line_text(unsaved.as_uri(), 2) is None
    assert state.line_text(unsaved.as_uri(), -1) is None
    assert state.line_text("untitled:x", 0) is None


def test_a_problem_is_shown_once_and_logged_once(ui: FakeUI) -> None:
    state = State(ui)
    state.warn_once("verify: bad setting")
    state.warn_once("verify: bad setting")
    assert ui.warnings == ["verify: bad setting"]
    assert ui.logged == [("warning", "verify: bad setting")]


def test_what_is_remembered_as_said_is_bounded(ui: FakeUI) -> None:
    state = State(ui)
    for n in range(MAX_REMEMBERED + 5):
        assert state.first_time(f"key {n}")
    assert not state.first_time("key 0")
    assert state.first_time(f"key {MAX_REMEMBERED + 1}")  # past the bound: said again


def test_a_closing_state_says_nothing_more(tmp_path: Path, ui: FakeUI) -> None:
    state = State(ui)
    folder = state.add_folder(tmp_path.as_uri())
    assert folder is not None
    state.closing = True
    state.log("late")
    state.warn_once("late warning")
    state.send_status(folder)
    state.diagnostics.replace_verify({(tmp_path / "a.py").as_uri(): [entry("x")]}, lambda _: True)
    assert (ui.logged, ui.warnings, ui.statuses, ui.published) == ([], [], [], [])


async def test_close_all_ends_every_folders_runs(tmp_path: Path, ui: FakeUI) -> None:
    state = State(ui)
    closed: list[str] = []
    for name in ("a", "b"):
        folder = state.add_folder((tmp_path / name).as_uri())
        assert folder is not None

        async def close(name: str = name) -> None:
            closed.append(name)
            if name == "a":
                raise OSError("a bug while closing")  # logged; the other folder still closes

        folder.verifier.close = close  # type: ignore[method-assign]
    await state.close_all()
    assert sorted(closed) == ["a", "b"]
