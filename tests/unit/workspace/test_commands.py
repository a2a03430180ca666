"""What the `verify.*` commands name and do on the state: the folder a URI names (or the one
last triggered), the last records of one folder or all, approve and revoke through the trust
store, and a cancel that reaches every folder."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_verify.trust import plan_fingerprint
from lsp_verify.workspace import commands, configure
from lsp_verify.workspace.folder import Folder
from lsp_verify.workspace.state import State
from tests.support.fake_ui import FakeUI
from tests.support.jobs import FakeJob


async def two_folders(tmp_path: Path, ui: FakeUI) -> tuple[State, Folder, Folder]:
    state = State(ui)
    a = state.add_folder((tmp_path / "a").as_uri())
    b = state.add_folder((tmp_path / "b").as_uri())
    assert a is not None and b is not None
    for folder in (a, b):
        Path(folder.path).mkdir(exist_ok=True)
    await configure.load_settings(state, [a, b])
    return state, a, b


async def test_a_command_names_a_folder_a_document_or_the_last_triggered(
    tmp_path: Path, ui: FakeUI
) -> None:
    state, a, b = await two_folders(tmp_path, ui)
    document = (tmp_path / "b" / "x.py").as_uri()
    assert commands.target(state, None) == (a, None)  # nothing triggered yet: the first
    assert commands.target(state, b.uri) == (b, None)
    assert commands.target(state, document) == (b, document)
    assert commands.target(state, (tmp_path / "elsewhere.py").as_uri()) == (None, None)
    assert commands.target(state, "untitled:1") == (None, None)
    b.verifier.last_document = document
    assert commands.target(state, None) == (b, None)


async def test_show_last_run_lists_every_folder_when_none_is_named(
    tmp_path: Path, ui: FakeUI
) -> None:
    state, a, _ = await two_folders(tmp_path, ui)
    assert commands.last_records(state, None) == []
    assert commands.last_records(state, a.uri) is None
    job = FakeJob(duration=0)
    a.verifier._job = job  # a run that ends at once, without a process
    await a.verifier.trigger("save")
    listed = commands.last_records(state, None)
    assert [r["folder"] for r in listed] == [a.path]
    assert commands.last_records(state, a.uri)["outcome"] == "failed"
    assert commands.last_run_folder(state, None) is a


async def test_a_cancel_without_a_folder_reaches_every_folder(tmp_path: Path, ui: FakeUI) -> None:
    state, a, b = await two_folders(tmp_path, ui)
    jobs = [FakeJob(), FakeJob()]
    for folder, job in zip((a, b), jobs):
        folder.verifier._job = job
        folder.verifier.trigger("save")
    while not all(j.requests for j in jobs):
        await asyncio.sleep(0.01)
    cancelled = await asyncio.wait_for(commands.cancel(state, None), 2)
    assert sorted(r.folder for r in cancelled) == sorted([a.path, b.path])
    assert all(r.outcome == "cancelled" for r in cancelled)


async def test_approve_stores_the_plan_and_takes_back_its_warning(
    tmp_path: Path, ui: FakeUI
) -> None:
    state, a, _ = await two_folders(tmp_path, ui)
    nothing = await commands.approve(state, a)
    assert nothing["approved"] is False and nothing["reason"].startswith("nothing to approve")
    (tmp_path / "a" / "Makefile").write_text("test:\n\t@true\n")
    a.forget_plan()
    approved = await commands.approve(state, a)
    assert approved["approved"] is True and approved["command"] == "make test"
    fingerprint = plan_fingerprint(a.plan())
    assert approved["fingerprint"] == fingerprint
    assert state.trust.lookup(a.path, fingerprint) == "approved"
    assert await commands.revoke(state, a) == {"revoked": 1}
    assert state.trust.lookup(a.path, fingerprint) is None
    assert await commands.revoke(state, a) == {"revoked": 0}
