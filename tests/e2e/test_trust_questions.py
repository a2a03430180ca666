"""Trust end to end: a repository's command runs only once its plan is approved."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from lsprotocol import types

from tests.support.lsp_session import Session, session, window_changed

RUN_ONCE, ALWAYS, DONT_RUN = "Run once", "Always for this plan", "Don't run"


@pytest.fixture
def project(project: Path, tmp_path: Path) -> Path:
    root = project
    # A detected plan: make test. It counts its runs in a file outside the repository.
    (root / "Makefile").write_text(f"test:\n\t@echo run >> {tmp_path / 'runs.log'}; exit 1\n")
    return root


def runs(project: Path) -> int:
    log = project.parent / "runs.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


async def save_and_settle(s: Session, count: int) -> None:
    s.save("a.c", "int x;\n")
    await s.wait_for(lambda: len(s.finished()) >= count, what=f"{count} finished runs")


async def test_run_once_asks_every_time(project: Path, state: Path) -> None:
    async with session(project, state=state) as s:
        s.answer = lambda params: RUN_ONCE
        await save_and_settle(s, 1)
        assert len(s.questions) == 1
        question = s.questions[0]
        assert question.type == types.MessageType.Warning
        for part in ("make test", "detected", "Makefile", "reason:"):
            assert part in question.message
        assert [a.title for a in question.actions or []] == [RUN_ONCE, ALWAYS, DONT_RUN]
        assert runs(project) == 1
        await save_and_settle(s, 2)
        assert len(s.questions) == 2
        assert runs(project) == 2


async def test_always_never_asks_again_until_the_manifest_changes(
    project: Path, state: Path
) -> None:
    async with session(project, state=state) as s:
        s.answer = lambda params: ALWAYS
        await save_and_settle(s, 1)
        await save_and_settle(s, 2)
        assert len(s.questions) == 1
        assert runs(project) == 2
        # An unrelated file changes nothing.
        (project / "notes.txt").write_text("hello\n")
        await save_and_settle(s, 3)
        assert len(s.questions) == 1
        # A Makefile line changes: the plan's fingerprint changes, so it asks again.
        with open(project / "Makefile", "a") as handle:
            handle.write("other:\n\t@true\n")
        await save_and_settle(s, 4)
        assert len(s.questions) == 2
    # The approval is stored outside the workspace, in the state dir, mode 0600.
    stored = list((state / "xdg_state_home").rglob("*.json"))
    assert stored and all(oct(p.stat().st_mode & 0o777) == "0o600" for p in stored)
    assert sorted(p.name for p in project.iterdir()) == ["Makefile", "a.c", "notes.txt"]


async def test_dont_run_declines_and_stays_quiet(project: Path, state: Path) -> None:
    async with session(project, state=state) as s:
        s.answer = lambda params: DONT_RUN
        await save_and_settle(s, 1)
        record = await s.command("verify.showLastRun")
        assert record["outcome"] == "declined"
        assert "verify.approve" in record["reason"]
        assert runs(project) == 0
        await save_and_settle(s, 2)
        assert len(s.questions) == 1  # a refusal is remembered for this plan
        assert runs(project) == 0
        # runNow asks again.
        s.answer = lambda params: RUN_ONCE
        record = await s.command("verify.runNow")
        assert len(s.questions) == 2
        assert record["outcome"] == "failed"
        assert runs(project) == 1


async def test_status_says_waiting_while_asked_and_never_running_when_declined(
    project: Path, state: Path
) -> None:
    async with session(project, state=state) as s:
        seen_while_asked: list[list[str]] = []

        def answer(params: types.ShowMessageRequestParams) -> str:
            seen_while_asked.append([x["state"] for x in s.statuses])
            return DONT_RUN

        s.answer = answer
        await save_and_settle(s, 1)
        # While the question was open the folder said it waits for an answer; no process ran.
        assert seen_while_asked == [["idle", "waiting"]]
        assert [x["state"] for x in s.statuses] == ["idle", "waiting", "idle"]
        assert s.statuses[-1]["lastOutcome"] == "declined"
        assert s.statuses[-1]["needsApproval"] is True
        # A stored "Don't run": later saves are declined at once, never reported as running.
        before = len(s.statuses)
        await save_and_settle(s, 2)
        await save_and_settle(s, 3)
        later = s.statuses[before:]
        assert [x["state"] for x in later] == ["idle", "idle"]
        assert all(x["lastOutcome"] == "declined" and x["needsApproval"] for x in later)
        assert runs(project) == 0
        # Once answered "Run once" the same folder reports waiting, then running, then idle.
        s.answer = lambda params: RUN_ONCE
        before = len(s.statuses)
        record = await s.command("verify.runNow")
        assert record["outcome"] == "failed" and runs(project) == 1
        await s.wait_for(lambda: len(s.statuses) >= before + 3, what="three statuses")
        assert [x["state"] for x in s.statuses[before:]] == ["waiting", "running", "idle"]


@pytest.mark.parametrize("how", ["null answer", "no showMessageRequest support"])
async def test_a_client_that_cannot_answer_gets_declined(
    project: Path, state: Path, how: str
) -> None:
    capabilities = None
    if how == "no showMessageRequest support":
        capabilities = window_changed(show_message=None)
    async with session(project, state=state, capabilities=capabilities) as s:
        s.answer = lambda params: None
        await save_and_settle(s, 1)
        record = await s.command("verify.showLastRun")
        assert record["outcome"] == "declined"
        assert record["exitCode"] is None
        assert runs(project) == 0
        assert s.statuses[-1]["needsApproval"] is True
        assert s.statuses[-1]["lastOutcome"] == "declined"
        # Asked all the same: window/showMessageRequest predates window.showMessage, and
        # eglot answers it without declaring it. Its null answer is no choice: declined, with
        # the warning it can act on.
        assert len(s.questions) == 1
        if how == "no showMessageRequest support":
            assert record["reason"].startswith("the question got no answer; approve it with")
        else:
            assert record["reason"].startswith("the question was dismissed")
        # verify.approve is the way in for such a client.
        approved = await s.command("verify.approve")
        assert approved["approved"] is True
        await save_and_settle(s, 2)
        assert runs(project) == 1
        revoked = await s.command("verify.revoke")
        assert revoked["revoked"] == 1


async def test_ten_saves_while_the_question_is_open(project: Path, state: Path) -> None:
    release = asyncio.Event()
    async with session(project, state=state) as s:

        async def answer(params: types.ShowMessageRequestParams) -> str:
            await release.wait()
            return RUN_ONCE

        s.answer = answer
        s.save("a.c", "int x;\n")
        await s.wait_for(lambda: s.questions, what="the question")
        for _ in range(10):
            s.save("a.c", "int y;\n")
        await asyncio.sleep(0.3)
        assert len(s.questions) == 1
        release.set()
        await s.wait_for(lambda: s.finished(), what="a finished run")
        await asyncio.sleep(1.0)
        assert len(s.questions) == 1
        assert runs(project) == 1


async def test_project_file_and_script_commands_are_asked_about(
    tmp_path: Path, state: Path
) -> None:
    toml = tmp_path / "toml"
    toml.mkdir()
    (toml / ".lsp-verify.toml").write_text('command = "exit 1"\n')
    script = tmp_path / "script"
    (script / ".gptme").mkdir(parents=True)
    hook = script / ".gptme" / "verify-completion.sh"
    hook.write_text("#!/bin/sh\nexit 1\n")
    os.chmod(hook, 0o755)
    for root, source in ((toml, "project-file"), (script, "script")):
        async with session(root, state=state) as s:
            s.answer = lambda params: None
            record = await s.command("verify.runNow")
            assert len(s.questions) == 1, source
            assert record["source"] == source
            assert record["outcome"] == "declined"


async def test_an_editor_command_runs_without_a_question(project: Path, state: Path) -> None:
    async with session(project, state=state, init_options={"command": "exit 1"}) as s:
        record = await s.command("verify.runNow")
        assert record["outcome"] == "failed"
        assert s.questions == []


async def test_untrusted_workspace_runs_nothing_on_save(project: Path, state: Path) -> None:
    async with session(project, state=state, init_options={"workspaceTrusted": False}) as s:
        s.answer = lambda params: ALWAYS
        await save_and_settle(s, 1)
        assert s.questions == []
        assert runs(project) == 0
        assert (await s.command("verify.showLastRun"))["outcome"] == "declined"
        # runNow asks, and without "Always".
        s.answer = lambda params: RUN_ONCE
        record = await s.command("verify.runNow")
        assert record["outcome"] == "failed"
        assert [a.title for a in s.questions[0].actions or []] == [RUN_ONCE, DONT_RUN]
        # Trust granted later through didChangeConfiguration.
        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"workspaceTrusted": True})
        )
        await asyncio.sleep(0.3)
        await save_and_settle(s, 3)
        assert len(s.questions) == 2


async def test_a_manifest_edited_after_the_answer_is_never_run_unapproved(
    project: Path, state: Path, tmp_path: Path
) -> None:
    """The Makefile changes after the question was answered and before the spawn: the run
    is skipped, `manifest changed: Makefile`, and the next save asks again; the edited
    recipe never runs without its own answer."""
    edited = f"test:\n\t@echo edited >> {tmp_path / 'edited.log'}; exit 1\n"

    async with session(project, state=state) as s:

        def edit_then_run_once(params: types.ShowMessageRequestParams) -> str:
            if len(s.questions) == 1:
                (project / "Makefile").write_text(edited)
            return RUN_ONCE

        s.answer = edit_then_run_once
        await save_and_settle(s, 1)
        record = await s.command("verify.showLastRun")
        assert (record["outcome"], record["reason"]) == ("skipped", "manifest changed: Makefile")
        assert runs(project) == 0 and not (tmp_path / "edited.log").exists()

        s.answer = lambda params: DONT_RUN
        await save_and_settle(s, 2)
        assert len(s.questions) == 2  # asked again, about the edited plan
        assert "Makefile" in s.questions[1].message
        assert not (tmp_path / "edited.log").exists()
