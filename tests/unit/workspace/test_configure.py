"""Each folder's settings: the client's answer per folder, the initialization options where
it gives none or cannot be asked, each problem said once, and a change of configuration
holding the saves until the new settings are known."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsp_verify.config.settings import InitOptions
from lsp_verify.workspace import configure, triggers
from lsp_verify.workspace.folder import Folder
from lsp_verify.workspace.state import State
from tests.support.fake_ui import FakeUI


def folders(state: State, root: Path, *names: str) -> list[Folder]:
    made = [state.add_folder((root / name).as_uri()) for name in names]
    assert all(f is not None for f in made)
    return [f for f in made if f is not None]


async def test_each_folder_gets_the_clients_answer_for_it(tmp_path: Path) -> None:
    ui = FakeUI(settings=[{"command": "make a"}, {"command": "make b"}])
    state = State(ui)
    a, b = folders(state, tmp_path, "a", "b")
    await configure.load_settings(state, [a, b])
    assert (a.settings().command, b.settings().command) == ("make a", "make b")
    assert ui.configuration_asked == [[a.uri, b.uri]]
    assert a.ready.is_set() and b.ready.is_set()


async def test_an_empty_answer_falls_back_to_the_initialization_options(tmp_path: Path) -> None:
    ui = FakeUI(settings=[{}, None])
    state = State(ui, InitOptions(settings={"command": "from init"}))
    a, b = folders(state, tmp_path, "a", "b")
    await configure.load_settings(state, [a, b])
    assert a.settings().command == b.settings().command == "from init"


async def test_a_client_that_cannot_answer_gets_the_initialization_options(
    tmp_path: Path,
) -> None:
    ui = FakeUI(settings=None)
    state = State(ui, InitOptions(settings={"command": "from init", "timeoutMs": "soon"}))
    (a,) = folders(state, tmp_path, "a")
    await configure.load_settings(state, [a])
    assert a.settings().command == "from init"
    (warning,) = ui.warnings
    assert warning.startswith("verify.timeoutMs: expected a positive integer")


async def test_a_problem_in_the_settings_is_said_once_for_every_folder(tmp_path: Path) -> None:
    ui = FakeUI(settings=[{"runOn": "often"}] * 3)
    state = State(ui)
    three = folders(state, tmp_path, "a", "b", "c")
    await configure.load_settings(state, three)
    await configure.load_settings(state, three)
    assert len(ui.warnings) == 1 and "runOn" in ui.warnings[0]
    assert all(f.settings().run_on == "save" for f in three)  # the default stands


async def test_a_change_of_configuration_holds_saves_until_it_is_known(tmp_path: Path) -> None:
    ui = FakeUI(settings=[{"command": "old"}])
    state = State(ui)
    (a,) = folders(state, tmp_path, "a")
    await configure.load_settings(state, [a])
    seen: list[Any] = []
    a.verifier.trigger = lambda trigger, document=None: seen.append(a.settings().command)  # type: ignore[method-assign]
    ui.settings = [{"command": "new"}]
    configure.settings_changed(state, {"verify": {}, "workspaceTrusted": False})
    assert not a.ready.is_set() and state.options.trusted is False
    triggers.on_save(state, (tmp_path / "a" / "x.py").as_uri())
    assert seen == []  # held, not run with the old settings
    for _ in range(10):
        await asyncio.sleep(0)
    assert seen == ["new"] and a.ready.is_set()
