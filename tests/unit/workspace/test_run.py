"""One run up to its process: a removed folder, a folder without a plan, and the trust gate
(the question, its answers, a client that cannot be asked, a cancel while it is open); then a
finished run's record to the diagnostics. No process is started here."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

from lsp_verify.record import Record
from lsp_verify.workspace import configure, run
from lsp_verify.workspace.folder import Folder
from lsp_verify.workspace.state import State
from lsp_verify.workspace.verifier import RunRequest
from tests.support.fake_ui import FakeUI

MAKEFILE = "test:\n\t@echo ok\n"


async def folder_with(state: State, path: Path, makefile: str | None = MAKEFILE) -> Folder:
    if makefile is not None:
        (path / "Makefile").write_text(makefile)
    folder = state.add_folder(path.as_uri())
    assert folder is not None
    await configure.load_settings(state, [folder])
    return folder


def request(folder: Folder, document: str | None = None) -> RunRequest:
    return RunRequest(folder.path, "save", document, asyncio.Event())


async def test_a_run_for_a_folder_removed_meanwhile_is_cancelled(tmp_path: Path) -> None:
    state = State(FakeUI())
    folder = await folder_with(state, tmp_path)
    state.folders.clear()
    record = await run.job(state, request(folder))
    assert (record.outcome, record.reason) == ("cancelled", "workspace folder was removed")


async def test_a_folder_without_a_plan_runs_nothing(tmp_path: Path) -> None:
    ui = FakeUI()
    state = State(ui)
    folder = await folder_with(state, tmp_path, makefile=None)
    record = await run.job(state, request(folder))
    assert record.outcome == "no-plan" and record.command is None
    assert ui.questions == [] and ui.progresses == []


async def test_the_question_names_the_command_and_dont_run_is_stored(tmp_path: Path) -> None:
    ui = FakeUI(answer=run.DONT_RUN)
    state = State(ui)
    folder = await folder_with(state, tmp_path)
    record = await folder.verifier.trigger("save")  # through the verifier: statuses are sent
    (question,) = ui.questions
    assert "make test" in question.text and str(tmp_path) in question.text
    assert question.actions == [run.RUN_ONCE, run.ALWAYS, run.DONT_RUN]
    assert record.outcome == "declined" and record.reason.startswith("you chose not to run it")
    states = [s["state"] for s in ui.statuses]
    assert states == ["waiting", "idle"]  # not "running": no process was started
    assert ui.statuses[-1]["needsApproval"] is True
    assert folder.stage == "gate" and ui.progresses == []
    # Stored: the next run is declined without asking again.
    again = await run.job(state, request(folder))
    assert again.outcome == "declined" and len(ui.questions) == 1


async def test_a_dismissed_question_declines_this_run_only(tmp_path: Path) -> None:
    ui = FakeUI(answer=None)
    state = State(ui)
    folder = await folder_with(state, tmp_path)
    record = await run.job(state, request(folder))
    assert record.outcome == "declined" and "the question was dismissed" in record.reason
    await run.job(state, request(folder))
    assert len(ui.questions) == 2  # asked again


async def test_a_client_that_cannot_be_asked_gets_a_warning_it_can_act_on(tmp_path: Path) -> None:
    ui = FakeUI(can_ask=False)
    state = State(ui)
    folder = await folder_with(state, tmp_path)
    saved = (tmp_path / "a.c").as_uri()
    record = await run.job(state, request(folder, saved))
    assert ui.questions == [] and record.outcome == "declined"
    assert "lsp-verify approve" in record.reason
    run.on_record(state, folder, record)
    (warning,) = ui.last_published(saved) or []
    assert warning["severity"] == 2 and "needs approval" in warning["message"]
    assert "make test" in warning["message"]


async def test_a_cancel_while_the_question_is_open_ends_the_run_at_once(tmp_path: Path) -> None:
    ui = FakeUI(answer=run.RUN_ONCE)
    ui.answer_after = asyncio.Event()  # the user has not answered yet
    state = State(ui)
    folder = await folder_with(state, tmp_path)
    asked = request(folder)
    pending = asyncio.ensure_future(run.job(state, asked))
    while not ui.questions:
        await asyncio.sleep(0.01)
    asked.cancel.set()
    record = await asyncio.wait_for(pending, 2)
    assert record.outcome == "cancelled" and ui.progresses == []  # nothing started
    assert folder.stage == "gate"


async def test_a_passed_run_clears_its_document_and_says_so(tmp_path: Path) -> None:
    ui = FakeUI()
    state = State(ui)
    folder = await folder_with(state, tmp_path)
    saved = (tmp_path / "a.py").as_uri()
    started = Record.not_started(folder.path, "save", "failed", "boom")
    failed = dataclasses.replace(started, document=saved, command="make test", exit_code=2)
    run.on_record(state, folder, failed)
    (summary,) = ui.last_published(saved) or []
    assert summary["message"].startswith("verify failed (exit 2)") and summary["severity"] == 1
    passed = dataclasses.replace(started, outcome="passed", document=saved, exit_code=0)
    run.on_record(state, folder, passed)
    assert ui.last_published(saved) == []
    levels = [level for level, _ in ui.logged[-2:]]
    assert levels == ["warning", "info"]  # the failure's log line warns, the pass informs


async def test_with_agent_hooks_a_declined_run_is_in_the_run_file_not_on_the_document(
    tmp_path: Path,
) -> None:
    from lsp_verify.config.settings import InitOptions
    from lsp_verify.workspace import run_file

    ui = FakeUI(can_ask=False)
    state = State(ui, InitOptions(agent_hooks=True))
    folder = await folder_with(state, tmp_path)
    saved = (tmp_path / "a.c").as_uri()
    state.edit_saved(folder, saved)
    assert run_file.read(str(tmp_path))["saved"] > 0  # type: ignore[index]
    record = await run.job(state, request(folder, saved))
    run.on_record(state, folder, record)
    assert ui.last_published(saved) is None  # the hook tells the model, once
    last = run_file.read(str(tmp_path))["last"]  # type: ignore[index]
    assert last["outcome"] == "declined" and last["needsApproval"] is True
    assert last["command"] == "make test" and last["began"] >= folder.began > 0


async def test_without_agent_hooks_no_run_file_is_written(tmp_path: Path) -> None:
    from lsp_verify.workspace import run_file

    state = State(FakeUI(can_ask=False))
    folder = await folder_with(state, tmp_path)
    state.edit_saved(folder, (tmp_path / "a.c").as_uri())
    run.on_record(state, folder, await run.job(state, request(folder)))
    assert run_file.read(str(tmp_path)) is None


async def test_with_agent_hooks_a_save_the_globs_pass_over_is_in_the_run_file(
    tmp_path: Path,
) -> None:
    from lsp_verify.config.settings import InitOptions
    from lsp_verify.workspace import run_file, triggers

    state = State(FakeUI(settings=[{"globs": ["*.c"]}]), InitOptions(agent_hooks=True))
    folder = await folder_with(state, tmp_path)
    (tmp_path / "notes.txt").write_text("x\n")
    triggers.on_save(state, (tmp_path / "notes.txt").as_uri())
    value = run_file.read(str(tmp_path))
    assert value is not None and value["ignored"] > 0 and value["saved"] == 0
    assert folder.verifier.state == "idle"


async def test_the_document_of_a_save_or_of_run_now_is_what_changed(tmp_path: Path) -> None:
    """Affected first hears of the file a save, a change on disk or runNow named."""
    document = (tmp_path / "app.py").as_uri()
    for trigger in ("save", "runNow"):
        named = RunRequest(str(tmp_path), trigger, document, asyncio.Event())
        assert run._changed(named) == (str(tmp_path / "app.py"),)
    assert run._changed(RunRequest(str(tmp_path), "runNow", None, asyncio.Event())) == ()
    untitled = RunRequest(str(tmp_path), "save", "untitled:Untitled-1", asyncio.Event())
    assert run._changed(untitled) == ()
