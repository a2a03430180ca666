"""The language server end to end, over stdio, as real clients drive it."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import warnings
from pathlib import Path

import attrs
from lsprotocol import types
from pytest_lsp import LspSpecificationWarning, client_capabilities

from tests.support.lsp_session import Session, session
from tests.support.procs import alive_with, unique_sleep

NEVER_ASK = {"confirm": "never"}

FAILING_TEST = "def test_math():\n    assert 1 + 1 == 3\n"
PASSING_TEST = "def test_math():\n    assert 1 + 1 == 2\n"


def pytest_project(root: Path, test: str = FAILING_TEST) -> None:
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "test_math.py").write_text(test)


def python_path_env() -> dict[str, str]:
    # The detected command is a bare `pytest`: make it the one of this interpreter.
    return {"PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}


async def last_run(s: Session) -> dict[str, object]:
    record = await s.command("verify.showLastRun")
    assert isinstance(record, dict)
    return record


def summary_of(record: dict[str, object]) -> str:
    tail = record["tail"]
    assert isinstance(tail, list)
    code = "null" if record["exitCode"] is None else str(record["exitCode"])
    return f"verify failed (exit {code}):\n" + "\n".join(tail)


async def test_failing_pytest_project_then_fixed(project: Path, state: Path) -> None:
    pytest_project(project)
    async with session(project, state=state, init_options=NEVER_ASK, env=python_path_env()) as s:
        uri = s.save("test_math.py")
        await s.wait_for(lambda: s.finished(), what="a finished run")
        record = await last_run(s)
        assert record["outcome"] == "failed"
        assert record["exitCode"] == 1
        assert record["runner"] == "pytest"
        summaries = [d for d in s.diagnostics(uri) if d.message.startswith("verify failed")]
        assert len(summaries) == 1
        assert summaries[0].message == summary_of(record)
        assert summaries[0].source == "verify"

        s.save("test_math.py", PASSING_TEST)
        await s.wait_for(lambda: s.finished("passed"), what="a passing run")
        await s.wait_for(lambda: not s.verify_diagnostics(), what="cleared diagnostics")
        assert (await last_run(s))["outcome"] == "passed"


async def test_makefile_project(project: Path, state: Path) -> None:
    (project / "Makefile").write_text("test:\n\t@echo checking; exit 2\n")
    (project / "main.c").write_text("int main(void) { return 0; }\n")
    async with session(project, state=state, init_options=NEVER_ASK) as s:
        uri = s.save("main.c")
        await s.wait_for(lambda: s.finished(), what="a finished run")
        record = await last_run(s)
        assert record["runner"] == "make"
        assert record["outcome"] == "failed"
        [summary] = s.diagnostics(uri)
        assert summary.message == summary_of(record)
        assert "checking" in summary.message

        (project / "Makefile").write_text("test:\n\t@echo fine\n")
        s.save("main.c")
        await s.wait_for(lambda: s.finished("passed"), what="a passing run")
        await s.wait_for(lambda: not s.verify_diagnostics(), what="cleared diagnostics")


async def test_explicit_command_setting(project: Path, state: Path) -> None:
    marker = project / "fail"
    marker.write_text("")
    command = "test ! -e fail || { echo 'still failing'; exit 3; }"
    async with session(project, state=state, init_options={"verify": command}) as s:
        uri = s.save("a.txt", "x")
        await s.wait_for(lambda: s.finished(), what="a finished run")
        record = await last_run(s)
        assert record["source"] == "settings"
        [summary] = s.diagnostics(uri)
        assert summary.message == "verify failed (exit 3):\nstill failing"
        marker.unlink()
        s.save("a.txt")
        await s.wait_for(lambda: s.finished("passed"), what="a passing run")
        await s.wait_for(lambda: not s.verify_diagnostics(), what="cleared diagnostics")


async def test_run_on_manual_and_globs(project: Path, state: Path) -> None:
    settings = {"command": "echo ran >> runs.log; exit 1", "runOn": "manual"}
    async with session(project, state=state, init_options=settings) as s:
        s.save("a.py", "x = 1\n")
        await asyncio.sleep(0.5)
        assert not (project / "runs.log").exists()
        record = await s.command("verify.runNow")
        assert record["outcome"] == "failed"
        assert record["trigger"] == "runNow"
        assert (project / "runs.log").read_text() == "ran\n"

    settings = {"command": "echo ran >> runs2.log", "globs": ["*.ts", "src"]}
    async with session(project, state=state, init_options=settings) as s:
        s.save("a.py", "x = 1\n")
        s.save("docs/readme.md", "hi\n")
        await asyncio.sleep(0.5)
        assert not (project / "runs2.log").exists()
        s.save("src/deep/b.py", "y = 2\n")
        await s.wait_for(lambda: s.finished("passed"), what="a run for src/")
        s.save("web/app.ts", "let a = 1\n")
        await s.wait_for(lambda: len(s.finished("passed")) >= 2, what="a run for *.ts")
        assert (project / "runs2.log").read_text() == "ran\nran\n"


async def test_settings_sources_and_precedence(project: Path, state: Path) -> None:
    (project / ".lsp-verify.toml").write_text('command = "echo from-file; exit 4"\n')
    # The project file beats detection; editor settings beat the project file.
    async with session(project, state=state, init_options=NEVER_ASK) as s:
        record = await s.command("verify.runNow")
        assert record["source"] == "project-file"
        assert record["tail"] == ["from-file"]
    async with session(
        project, state=state, init_options={"command": "echo from-init; exit 5"}
    ) as s:
        record = await s.command("verify.runNow")
        assert record["source"] == "settings"
        assert record["tail"] == ["from-init"]
    # workspace/configuration beats initializationOptions.
    async with session(
        project,
        state=state,
        init_options={"command": "echo from-init"},
        configuration={"command": "echo from-config; exit 6"},
    ) as s:
        record = await s.command("verify.runNow")
        assert record["tail"] == ["from-config"]
        # didChangeConfiguration takes effect on the next run.
        s.client.set_configuration({"command": "echo changed; exit 7"}, section="verify")
        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"verify": None})
        )
        await asyncio.sleep(0.3)
        s.save("a.txt", "x")
        await s.wait_for(
            lambda: any(r == ["changed"] for r in _tails(s)), what="the changed command"
        )


def _tails(s: Session) -> list[object]:
    return [d.message.splitlines()[1:] for ds in s.verify_diagnostics().values() for d in ds]


async def test_wrong_setting_type_warns_once_and_uses_default(project: Path, state: Path) -> None:
    settings = {"command": "echo ok", "timeoutMs": "soon", "runOn": 7, "bogus": True}
    async with session(project, state=state, init_options=settings) as s:
        first = await s.command("verify.runNow")
        second = await s.command("verify.runNow")
        assert first["outcome"] == second["outcome"] == "passed"
        warnings = [m.message for m in s.client.messages]
        assert sum("timeoutMs" in m for m in warnings) == 1
        assert sum("runOn" in m for m in warnings) == 1
        assert sum("bogus" in m for m in warnings) == 1
        explained = await s.command("verify.explain")
        assert explained["settings"]["timeoutMs"] == 60000
        assert explained["settings"]["runOn"] == "save"


async def test_two_folders_run_concurrently_and_a_folder_added_later(
    tmp_path: Path, state: Path
) -> None:
    a, b, c = (tmp_path / n for n in ("a", "b", "c"))
    for folder, other, code in ((a, b, 11), (b, a, 12), (c, c, 13)):
        folder.mkdir()
        # Each says it started, then waits (30 s at most) for the other folder's run to start:
        # run one after the other, the first would give up and exit 99.
        wait = (
            f"touch started; i=0; while [ ! -f {other}/started ] && [ $i -lt 300 ]; "
            f"do sleep 0.1; i=$((i+1)); done; [ -f {other}/started ] || exit 99; exit {code}"
        )
        (folder / ".lsp-verify.toml").write_text(f"command = {json.dumps(wait)}\n")
    async with session(a, state=state, folders=[a, b], init_options=NEVER_ASK) as s:
        ua = s.save("x.txt", "1", root=a)
        ub = s.save("x.txt", "1", root=b)
        await s.wait_for(
            lambda: s.diagnostics(ua) and s.diagnostics(ub), what="both folders", timeout=60
        )
        assert s.diagnostics(ua)[0].message.startswith("verify failed (exit 11)")
        assert s.diagnostics(ub)[0].message.startswith("verify failed (exit 12)")

        s.client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(
                    added=[types.WorkspaceFolder(uri=c.as_uri(), name="c")], removed=[]
                )
            )
        )
        uc = s.save("x.txt", "1", root=c)
        await s.wait_for(lambda: s.diagnostics(uc), what="the added folder")
        assert s.diagnostics(uc)[0].message.startswith("verify failed (exit 13)")

        # A folder that leaves the workspace takes its diagnostics with it.
        s.client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(
                    added=[], removed=[types.WorkspaceFolder(uri=a.as_uri(), name="a")]
                )
            )
        )
        await s.wait_for(lambda: not s.diagnostics(ua), what="the removed folder's diagnostics")
        assert s.diagnostics(ub) and s.diagnostics(uc)


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


async def test_cheap_request_answers_during_a_long_run(project: Path, state: Path) -> None:
    marker = unique_sleep()
    async with session(
        project, state=state, init_options={"command": f"sleep {marker}", "timeoutMs": 5000}
    ) as s:
        s.save("a.txt", "x")
        await s.wait_for(lambda: alive_with(marker), what="the command to start")
        timings = []
        for _ in range(5):
            started = time.perf_counter()
            await s.command("verify.showLastRun")
            timings.append(time.perf_counter() - started)
        assert max(timings) < 0.1, timings
        await s.command("verify.cancel")


async def test_shutdown_during_a_run_kills_the_group_first(project: Path, state: Path) -> None:
    marker = unique_sleep()
    command = f"sleep {marker} & sleep {marker}"
    async with session(project, state=state, init_options={"command": command}) as s:
        s.save("a.txt", "x")
        # The shell itself carries the marker too: at least the two sleeps.
        await s.wait_for(lambda: len(alive_with(marker)) >= 3, what="the command to start")
        await asyncio.wait_for(s.client.shutdown_async(None), 10)
        assert alive_with(marker) == []
        s.client.exit(None)
        server = s.client._server
        assert server is not None
        assert await asyncio.wait_for(server.wait(), 10) == 0
        s.client.capabilities = None  # shut down already: nothing more to send


async def test_closing_stdin_leaves_no_process(project: Path, state: Path) -> None:
    marker = unique_sleep()
    command = f"sleep {marker} & setsid sleep {marker} & sleep {marker}"
    async with session(project, state=state, init_options={"command": command}) as s:
        s.save("a.txt", "x")
        await s.wait_for(lambda: len(alive_with(marker)) >= 4, what="the command to start")
        server = s.client._server
        assert server is not None and server.stdin is not None
        server.stdin.close()
        await asyncio.wait_for(server.wait(), 10)
        await s.wait_for(lambda: alive_with(marker) == [], timeout=5, what="no process left")
        s.client.capabilities = None  # the server is gone: no shutdown to send


async def test_fifty_saves_during_a_run_give_two_runs(project: Path, state: Path) -> None:
    command = "echo run >> runs.log; sleep 0.5; cat state.txt; exit 1"
    (project / "state.txt").write_text("state 0\n")
    async with session(project, state=state, init_options={"command": command}) as s:
        uri = s.save("state.txt")
        await s.wait_for(lambda: (project / "runs.log").exists(), what="the first run")
        for i in range(1, 51):
            s.save("state.txt", f"state {i}\n")
        await s.wait_for(lambda: len(s.run_logs()) >= 2, what="two runs")
        await asyncio.sleep(0.8)
        assert (project / "runs.log").read_text() == "run\nrun\n"
        mine = [d for u, d in s.publishes if u == uri]
        assert len(mine) == 2
        assert all(d for d in mine), "an empty publish while the failure persisted"
        assert mine[-1][0].message == "verify failed (exit 1):\nstate 50"


async def test_outside_documents_are_ignored(project: Path, state: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    async with session(project, state=state, init_options={"command": "exit 1"}) as s:
        s.save("x.txt", "1", root=outside)
        await asyncio.sleep(0.5)
        assert s.finished() == []
        assert any("outside every workspace folder" in m.message for m in s.client.log_messages)


async def test_stale_after_edit_withdraws_a_located_diagnostic(project: Path, state: Path) -> None:
    # A command whose output a gcc-style matcher locates: path:line:col: message.
    (project / "a.py").write_text("one\ntwo\nthree\n")
    command = "echo 'a.py:2:1: error: two is wrong'; exit 1"
    async with session(project, state=state, init_options={"command": command}) as s:
        uri = s.open("a.py")
        s.save("a.py")
        await s.wait_for(lambda: len(s.diagnostics(uri)) == 2, what="located + summary")
        located = [d for d in s.diagnostics(uri) if d.range.start.line == 1]
        assert located and "two is wrong" in located[0].message
        # An edit on another line keeps it; an edit of line 2 withdraws it.
        edit(s, uri, 2, 0, 0, "x", version=2)
        await asyncio.sleep(0.3)
        assert len(s.diagnostics(uri)) == 2
        edit(s, uri, 1, 0, 0, "changed ", version=3)
        await s.wait_for(lambda: len(s.diagnostics(uri)) == 1, what="the stale one withdrawn")
        assert s.diagnostics(uri)[0].message.startswith("verify failed")


def edit(s: Session, uri: str, line: int, start: int, end: int, text: str, version: int) -> None:
    s.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=line, character=start),
                        end=types.Position(line=line, character=end),
                    ),
                    text=text,
                )
            ],
        )
    )


async def test_status_notifications_follow_the_state(project: Path, state: Path) -> None:
    async with session(project, state=state, init_options={"command": "sleep 0.3; exit 1"}) as s:
        await s.command("verify.runNow")
        await s.wait_for(lambda: s.finished("failed"), what="a failed status")
        states = [x["state"] for x in s.statuses]
        assert "running" in states
        assert states[-1] == "idle"
        assert s.statuses[-1]["lastOutcome"] == "failed"
        assert s.statuses[-1]["command"] == "sleep 0.3; exit 1"
        assert s.statuses[-1]["folder"] == project.as_uri()


async def test_commands_accept_every_argument_shape(project: Path, state: Path) -> None:
    async with session(project, state=state, init_options={"command": "echo hi"}) as s:
        for args in ([], [project.as_uri()], [{"uri": project.as_uri()}]):
            record = await s.command("verify.runNow", *args)
            assert record["outcome"] == "passed", args
        explained = await s.command("verify.explain", {"uri": project.as_uri()})
        assert explained["command"] == "echo hi"
        assert (await s.command("verify.cancel")) == []
        garbage = await s.command("verify.runNow", 42)
        assert garbage["outcome"] == "passed"


def test_capability_profiles_exist() -> None:
    # What the tests rely on: VS Code declares progress and configuration; Neovim 0.7 no
    # workspace/configuration, so its settings come from initializationOptions.
    assert client_capabilities("visual_studio_code").window.work_done_progress
    assert not client_capabilities("neovim@v0.7.0").workspace.configuration


async def test_neovim_profile_takes_init_options(project: Path, state: Path) -> None:
    async with session(
        project, state=state, profile="neovim@v0.7.0", init_options={"command": "exit 9"}
    ) as s:
        s.save("a.txt", "x")
        await s.wait_for(lambda: s.finished(), what="a finished run")
        assert (await last_run(s))["exitCode"] == 9


async def test_pytest_failure_lands_on_the_assertion_line(project: Path, state: Path) -> None:
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "tests").mkdir()
    body = (
        "def helper():\n    return 1\n\n\ndef test_sum():\n    total = helper() + 1\n"
        "    assert total == {}\n"
    )
    (project / "tests" / "test_a.py").write_text(body.format(3))
    (project / "app.py").write_text("X = 1\n")
    async with session(project, state=state, init_options=NEVER_ASK, env=python_path_env()) as s:
        saved = s.save("app.py")
        test_uri = s.uri("tests/test_a.py")
        # The located failure streams in while pytest runs; the summary comes at its end.
        await s.wait_for(lambda: s.diagnostics(saved), what="the run's summary")
        [located] = s.diagnostics(test_uri)
        assert located.range.start.line == 6
        assert "tests/test_a.py::test_sum" in located.message
        assert "assert 2 == 3" in located.message
        assert located.source == "verify"
        # The located one streams while the run goes; the summary comes with its end.
        await s.wait_for(lambda: s.diagnostics(saved), what="the summary")
        [summary] = s.diagnostics(saved)
        assert summary.message.startswith("verify failed (exit 1):\n")

        s.save("tests/test_a.py", body.format(2))
        await s.wait_for(lambda: not s.verify_diagnostics(), what="both cleared")
        assert s.diagnostics(test_uri) == [] and s.diagnostics(saved) == []
