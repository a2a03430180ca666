"""Runs end to end: folders run concurrently, saves during a run coalesce, requests are answered
while a run goes, the status follows, and shutdown or a closed stdin leaves no process."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from lsprotocol import types

from tests.support.lsp_session import session
from tests.support.procs import alive_with, unique_sleep

NEVER_ASK = {"confirm": "never"}


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
        # The first run began before the 50 saves: it does not speak for the file (its
        # verdict is stale); the second, which saw the last save, does.
        assert len(mine) == 1
        assert all(d for d in mine), "an empty publish while the failure persisted"
        assert mine[-1][0].message == "verify failed (exit 1):\nstate 50"


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
