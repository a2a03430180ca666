"""Coding agents as clients: no didSave, files written to disk, diagnostics pulled."""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
import time
import warnings
from datetime import datetime
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LspSpecificationWarning

from tests.support.agents import (
    FAILING,
    PASSING,
    PYTEST,
    agent_capabilities,
    agent_session,
    agent_writes,
    pull,
    reported,
    verify_items,
)
from tests.support.lsp_session import session


@pytest.fixture
def project(project: Path) -> Path:
    root = project
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "test_answer.py").write_text(PASSING)
    return root


async def test_write_sync_and_pull_gets_the_verdict_of_a_run_that_saw_the_write(
    project: Path, state: Path
) -> None:
    async with agent_session(project, state, PYTEST) as s:
        await s.wait_for(lambda: s.registrations, what="the file watcher registration")
        assert s.registrations[0].method == "workspace/didChangeWatchedFiles"
        assert s.server_capabilities is not None
        assert s.server_capabilities.diagnostic_provider is not None
        uri = s.open("test_answer.py")
        written_at = time.time()
        agent_writes(s, "test_answer.py", FAILING, version=2)
        report = await pull(s, uri)
        items = verify_items(report)
        located = [d for d in items if d.range.start.line == 1]
        assert located and "== 43" in located[0].message
        record = await s.command("verify.showLastRun")
        started = datetime.fromisoformat(record["startedAt"].replace("Z", "+00:00"))
        assert started.timestamp() >= written_at - 0.01
        assert record["trigger"] == "save"
        # A pulling client gets no pushes, and a refresh request after each run.
        assert not [d for _, ds in s.publishes for d in ds if d.source == "verify"]
        await s.wait_for(lambda: s.client.diagnostic_refresh_count >= 1, what="a refresh")

        agent_writes(s, "test_answer.py", PASSING, version=3)
        report = await pull(s, uri)
        assert verify_items(report) == []


async def test_twenty_files_in_one_burst_give_at_most_two_runs(project: Path, state: Path) -> None:
    command = "echo run >> ../runs.log; sleep 0.3"
    async with agent_session(project, state, command) as s:
        await s.wait_for(lambda: s.registrations, what="the file watcher registration")
        changes = []
        for i in range(20):
            path = project / "src" / f"m{i}.py"
            path.parent.mkdir(exist_ok=True)
            path.write_text(f"X = {i}\n")
            changes.append(types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Created))
        for change in changes:  # as twenty notifications, the way watchers often send them
            s.client.workspace_did_change_watched_files(
                types.DidChangeWatchedFilesParams(changes=[change])
            )
        await s.wait_for(lambda: s.run_logs(), what="a run")
        await asyncio.sleep(1.5)
        runs = (project.parent / "runs.log").read_text().splitlines()
        assert 1 <= len(runs) <= 2


@pytest.mark.parametrize("where", [".git/index", "node_modules/x/index.js", ".venv/lib/a.py"])
async def test_changes_in_vcs_and_dependency_folders_trigger_nothing(
    project: Path, state: Path, where: str
) -> None:
    async with agent_session(project, state, "true") as s:
        path = project / where
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
        reported(s, path)
        await asyncio.sleep(0.5)
        assert s.run_logs() == []
        # The same notification for a source file does run: the test is not vacuous.
        src = project / "app.py"
        src.write_text("x = 1\n")
        reported(s, src)
        await s.wait_for(lambda: s.run_logs(), what="a run for app.py")


async def test_files_a_run_writes_cause_at_most_one_more_run(project: Path, state: Path) -> None:
    # A test run that writes a report into the folder: reporting it must not loop. The
    # report is not ignored, so it may be an agent's file: it runs once more, and the
    # report that run writes is the loop guard's to drop.
    command = "echo run >> ../runs.log; sleep 0.2; date +%N > report.txt"
    async with agent_session(project, state, command) as s:
        src = project / "app.py"
        src.write_text("x = 1\n")
        report = project / "report.txt"
        reported(s, src)
        await s.wait_for(lambda: report.exists() and len(s.run_logs()) == 1, what="the first run")
        reported(s, report)
        await s.wait_for(lambda: len(s.run_logs()) == 2, what="the run the report asked for")
        reported(s, report)
        await asyncio.sleep(1.0)
        assert (project.parent / "runs.log").read_text().splitlines() == ["run", "run"]
        # A real edit still runs: the guard held back only the echo.
        src.write_text("x = 2\n")
        reported(s, src)
        await s.wait_for(lambda: len(s.run_logs()) == 3, what="the run the edit asked for")


async def test_run_on_sync(project: Path, state: Path) -> None:
    settings = {"command": "echo run >> ../runs.log", "runOn": "sync"}
    async with session(project, state=state, init_options=settings) as s:
        uri = s.open("test_answer.py")  # equal to disk: counts as a save
        await s.wait_for(lambda: s.run_logs(), what="a run on open")
        # A change that differs from disk does not run.
        s.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text="unsaved\n")],
            )
        )
        await asyncio.sleep(0.5)
        assert len(s.run_logs()) == 1
        # The agent writes the same text to disk and syncs it: that runs.
        (project / "test_answer.py").write_text("written\n")
        s.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text="written\n")],
            )
        )
        await s.wait_for(lambda: len(s.run_logs()) == 2, what="a run on sync")
    assert (project.parent / "runs.log").read_text() == "run\nrun\n"


async def test_a_pull_with_nothing_pending_answers_at_once(project: Path, state: Path) -> None:
    # "At once" is shown without a clock: the command would block until released, so a pull
    # that started a run, or waited for one, would not answer before the hang guard (10 s,
    # well inside the 65 s a pull may wait for a pending run with the default timeoutMs).
    started, release = project.parent / "started", project.parent / "release"
    command = (
        f"touch {shlex.quote(str(started))}; "
        f"while [ ! -e {shlex.quote(str(release))} ]; do sleep 0.05; done; "
        "echo broken; exit 1"
    )
    async with agent_session(project, state, command) as s:
        uri = s.uri("test_answer.py")
        first = await pull(s, uri, timeout=10)
        assert verify_items(first) == []
        assert not started.exists(), "the pull started a run"
        release.touch()
        await s.command("verify.runNow", uri)
        assert started.exists()
        second = await pull(s, uri, previous=first.result_id)
        assert [d.message for d in verify_items(second)] == ["verify failed (exit 1):\nbroken"]
        third = await pull(s, uri, previous=second.result_id)
        assert isinstance(third, types.RelatedUnchangedDocumentDiagnosticReport)
        assert third.result_id == second.result_id
        workspace = await asyncio.wait_for(
            s.client.workspace_diagnostic_async(
                types.WorkspaceDiagnosticParams(previous_result_ids=[])
            ),
            30,
        )
        assert [item.uri for item in workspace.items] == [uri]


async def test_push_clients_see_no_change(project: Path, state: Path) -> None:
    (project / "test_answer.py").write_text(FAILING)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LspSpecificationWarning)
        async with session(
            project,
            state=state,
            profile="neovim@v0.7.0",
            init_options={"command": PYTEST},
            env={"PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]},
        ) as s:
            uri = s.save("test_answer.py")
            await s.wait_for(lambda: s.diagnostics(uri), what="pushed diagnostics")
            assert s.registrations == []
            assert s.client.diagnostic_refresh_count == 0
            assert s.server_capabilities is not None
            assert s.server_capabilities.diagnostic_provider is None


async def test_a_pulling_client_can_ask_for_pushes(project: Path, state: Path) -> None:
    # VS Code's extension does: pulled diagnostics would only cover open files there.
    options = {"verify": {"command": "echo broken; exit 1"}, "diagnosticMode": "push"}
    async with session(
        project, state=state, capabilities=agent_capabilities(), init_options=options
    ) as s:
        # Not told that the server answers pulls: a pulled copy would never be cleared.
        assert s.server_capabilities is not None
        assert s.server_capabilities.diagnostic_provider is None
        record = await s.command("verify.runNow", s.uri("test_answer.py"))
        assert record["outcome"] == "failed"
        await s.wait_for(lambda: s.verify_diagnostics(), what="pushed diagnostics")
        assert s.client.diagnostic_refresh_count == 0
