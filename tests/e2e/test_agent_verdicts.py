"""True verdicts for a coding agent that speaks LSP the way opencode 1.18 does: it declares
pull diagnostics without refreshSupport, has no window/showMessageRequest, never saves,
reports its writes as watched-file changes (a new file's `Created` before its didOpen),
pulls right after, and stops the server with SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.support.agents import (
    FAILING,
    PASSING,
    PYTEST,
    agent_session,
    pull,
    reported,
    verify_items,
)
from tests.support.lsp_session import Session, server_env, session
from tests.support.stdio import StdioClient
from tests.support.wire import frame


def opencode_capabilities() -> types.ClientCapabilities:
    """What opencode 1.18.33 declares in its initialize request, no more."""
    return types.ClientCapabilities(
        window=types.WindowClientCapabilities(work_done_progress=True),
        workspace=types.WorkspaceClientCapabilities(
            configuration=True,
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                dynamic_registration=True
            ),
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=False),
        ),
        text_document=types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(),
            diagnostic=types.DiagnosticClientCapabilities(
                dynamic_registration=True, related_document_support=True
            ),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=False),
        ),
    )


def opencode(
    project: Path, state: Path, command: str | None = None, **options: Any
) -> AbstractAsyncContextManager[Session]:
    """A session of a client that declares what opencode does (see agent_session)."""
    return agent_session(project, state, command, opencode_capabilities(), **options)


OPENCODE_CAPS = {
    "window": {"workDoneProgress": True},
    "workspace": {
        "configuration": True,
        "didChangeWatchedFiles": {"dynamicRegistration": True},
        "diagnostics": {"refreshSupport": False},
    },
    "textDocument": {"diagnostic": {"dynamicRegistration": True}},
}


@pytest.fixture
def project(project: Path) -> Path:
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "test_answer.py").write_text(PASSING)
    return project


def agent_creates(s: Session, rel: str, text: str) -> str:
    """opencode's write tool on a new file: write, `Created`, then didOpen."""
    path = s.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    reported(s, path, types.FileChangeType.Created)
    s.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=path.as_uri(), language_id="python", version=0, text=text
            )
        )
    )
    return path.as_uri()


async def test_a_pull_waits_for_a_trigger_held_while_the_settings_load(
    project: Path, state: Path
) -> None:
    async with opencode(project, state, PYTEST, env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}) as s:
        await s.wait_for(lambda: s.statuses, what="the settings")
        # opencode sends didChangeConfiguration right after initialized: the settings load
        # again, and the edit that follows is held until they are known.
        s.configuration_delay = 1.0
        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"command": PYTEST})
        )
        (project / "test_answer.py").unlink()
        uri = agent_creates(s, "test_answer.py", FAILING)
        started = time.monotonic()
        report = await pull(s, uri)
        located = [d for d in verify_items(report) if d.range.start.line == 1]
        assert located and "== 43" in located[0].message
        assert time.monotonic() - started >= 0.9  # it waited for the settings, then the run


async def test_a_pass_publishes_the_triggering_document_and_nothing_else(
    project: Path, state: Path
) -> None:
    (project / "other.py").write_text("X = 1\n")
    async with session(
        project,
        state=state,
        profile="neovim@v0.7.0",
        init_options={"command": "grep -q 42 test_answer.py || { echo wrong; exit 1; }"},
    ) as s:
        doc = s.uri("test_answer.py")
        s.save("test_answer.py", FAILING)
        await s.wait_for(lambda: s.verify_diagnostics(), what="the failure")
        s.save("test_answer.py", FAILING)
        await s.wait_for(lambda: len(s.run_logs()) == 2, what="the second failing run")
        await asyncio.sleep(0.2)
        # While failing: every publish says the failure, never an empty set.
        assert all(diags for _, diags in s.publishes)
        count = len(s.publishes)
        s.save("test_answer.py", PASSING)
        await s.wait_for(lambda: len(s.publishes) > count, what="the pass")
        await s.wait_for(lambda: len(s.run_logs()) == 3, what="the passing run's log")
        assert s.publishes[count:] == [(doc, [])]
        # Passing again, nothing to clear: the document that asked still gets its answer.
        s.save("other.py")
        await s.wait_for(lambda: len(s.run_logs()) == 4, what="the second passing run")
        assert s.publishes[count + 1 :] == [(s.uri("other.py"), [])]


async def test_a_client_that_pulls_without_refresh_support_also_gets_pushes(
    project: Path, state: Path
) -> None:
    async with opencode(project, state, "sleep 0.5; echo broken; exit 1") as s:
        assert s.server_capabilities is not None
        assert s.server_capabilities.diagnostic_provider is not None
        uri = s.uri("test_answer.py")
        reported(s, project / "test_answer.py")
        # A client whose pull gave up before the run ended (opencode waits 3 s) is told by
        # a push; the pull, answered at the run's end, says the same.
        pulled = asyncio.ensure_future(pull(s, uri))
        await s.wait_for(lambda: s.verify_diagnostics().get(uri), what="a push")
        assert "broken" in s.verify_diagnostics()[uri][0].message
        assert [d.message for d in verify_items(await pulled)] == [
            "verify failed (exit 1):\nbroken"
        ]
        assert s.client.diagnostic_refresh_count == 0


async def test_nested_gitignore_files_decide_what_triggers(project: Path, state: Path) -> None:
    (project / ".gitignore").write_text("*.log\n/out/\n")
    sub = project / "pkg"
    sub.mkdir()
    (sub / ".gitignore").write_text("generated_*.py\n!keep.log\n")
    async with opencode(project, state, "echo run >> ../runs.log") as s:
        ignored = ["run.log", "pkg/trace.log", "pkg/generated_api.py", "out/x.py", "out/a/b.py"]
        for rel in ignored:
            path = project / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x")
            reported(s, path, types.FileChangeType.Created)
        await asyncio.sleep(0.6)
        assert s.run_logs() == []
        # Re-included in the nested file, beside one that only a deeper level would ignore.
        for rel in ("pkg/keep.log", "generated_api.py"):
            (project / rel).write_text("x")
            reported(s, project / rel, types.FileChangeType.Created)
            await s.wait_for(lambda: s.run_logs(), what=f"a run for {rel}")
            await asyncio.sleep(0.3)
            s.client.log_messages.clear()


async def test_a_change_during_or_right_after_a_run_is_never_dropped(
    project: Path, state: Path
) -> None:
    async with opencode(project, state, "echo run >> ../runs.log; sleep 0.6") as s:
        reported(s, project / "test_answer.py")
        await s.wait_for(lambda: (project.parent / "runs.log").exists(), what="the first run")
        new = project / "test_during.py"
        new.write_text(PASSING)  # written while the run goes, not open in the client
        reported(s, new, types.FileChangeType.Created)
        await s.wait_for(lambda: len(s.run_logs()) == 2, what="the run the change asked for")
        after = project / "test_after.py"
        after.write_text(PASSING)  # right after the run ended
        reported(s, after, types.FileChangeType.Created)
        await s.wait_for(lambda: len(s.run_logs()) == 3, what="a run for the file written after")


async def test_a_run_declined_for_want_of_a_question_says_how_to_approve(
    project: Path, state: Path, tmp_path: Path
) -> None:
    (project / ".lsp-verify.toml").write_text('command = "echo checked"\n')
    async with opencode(project, state) as s:
        doc = agent_creates(s, "test_new.py", PASSING)
        report = await pull(s, doc)
        [warning] = verify_items(report)
        assert warning.severity == types.DiagnosticSeverity.Warning
        assert f"lsp-verify approve {project}" in warning.message
        assert "echo checked" in warning.message
        assert s.verify_diagnostics() == {doc: [warning]}  # pushed too, and only there
        record = await s.command("verify.showLastRun")
        assert record["outcome"] == "declined"
        # The command the warning names, from a terminal, with the server's state dir.
        env = server_env(state)
        subprocess.run(
            [sys.executable, "-m", "lsp_verify", "approve", str(project)],
            env={**env, "LSP_VERIFY_NO_KEEPER": "1"},
            check=True,
            capture_output=True,
        )
        (project / "test_new.py").write_text(FAILING)
        reported(s, project / "test_new.py")
        report = await pull(s, doc, previous=report.result_id)
        assert verify_items(report) == []
        await s.wait_for(lambda: not s.verify_diagnostics(), what="the warning withdrawn")
        assert (await s.command("verify.showLastRun"))["outcome"] == "passed"


async def test_approving_from_the_editor_withdraws_the_warning_at_once(
    project: Path, state: Path
) -> None:
    (project / ".lsp-verify.toml").write_text('command = "echo checked"\n')
    async with opencode(project, state) as s:
        doc = agent_creates(s, "test_new.py", PASSING)
        await s.wait_for(lambda: s.verify_diagnostics().get(doc), what="the warning")
        result = await s.command("verify.approve", project.as_uri())
        assert result["approved"] is True
        await s.wait_for(lambda: not s.verify_diagnostics(), what="the warning withdrawn")
        assert len(s.run_logs()) == 1  # approving runs nothing by itself


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_mid_run_kills_the_run_and_exits_0_quietly(
    project: Path, state: Path, tmp_path: Path, signum: int
) -> None:
    pids = tmp_path / "pids"
    command = f"echo $$ > {pids}; sleep 60 & echo $! >> {pids}; wait"
    stderr = tmp_path / "stderr.txt"
    server = StdioClient(state, stderr=stderr)
    try:
        server.started(project, options={"command": command}, capabilities=OPENCODE_CAPS)
        while True:  # the settings; the watcher registration stays unanswered
            message = server.read()
            if message.get("method") == "workspace/configuration":
                items = message["params"]["items"]
                server.send(frame({"id": message["id"], "result": [None] * len(items)}))
            if message.get("method") == "verify/status":
                break
        server.send(
            frame(
                {
                    "method": "textDocument/didSave",
                    "params": {"textDocument": {"uri": (project / "test_answer.py").as_uri()}},
                }
            )
        )
        deadline = time.monotonic() + 20
        while not (pids.exists() and len(pids.read_text().split()) == 2):
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.02)
        run = [int(p) for p in pids.read_text().split()]
        server.proc.send_signal(signum)
        assert server.proc.wait(20) == 0
        assert all(_gone(pid) for pid in run)
        assert server.proc.stdout is not None
        rest = server.buffer + server.proc.stdout.read()
        # Whatever was written is whole messages, and no verdict of the killed run.
        while rest:
            header, _, body = rest.partition(b"\r\n\r\n")
            fields = dict(line.split(b":", 1) for line in header.split(b"\r\n"))
            length = int(fields[b"Content-Length"])
            assert len(body) >= length
            assert b"publishDiagnostics" not in body[:length]
            rest = body[length:]
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
    text = stderr.read_text()
    assert "Traceback" not in text and "CancelledError" not in text, text
    assert os.path.exists(project)  # nothing removed on the way out


async def test_a_run_now_joining_a_run_asked_for_by_echoes_is_the_user_s(
    project: Path, state: Path
) -> None:
    # A report written by a run asks for one more run (an echo). verify.runNow joins that
    # queued run: the user asked for it, so what it writes counts once more, as a save's would.
    command = "echo run >> ../runs.log; date +%N > report.txt; sleep 0.5"
    async with opencode(project, state, command) as s:
        report_path = project / "report.txt"
        first = asyncio.ensure_future(s.command("verify.runNow", s.uri("test_answer.py")))
        await s.wait_for(report_path.exists, what="the first run's report")
        reported(s, report_path)  # an echo: queues run 2
        await s.wait_for(lambda: s.statuses and s.statuses[-1]["state"] == "queued", what="queued")
        await s.command("verify.runNow")  # joins run 2
        await first
        reported(s, report_path)  # run 2's report
        await s.wait_for(lambda: len(s.run_logs()) == 3, what="the run run 2's report asked for")
        reported(s, report_path)  # run 3's: an echo of an echo
        await asyncio.sleep(1.0)
        assert len(s.run_logs()) == 3
