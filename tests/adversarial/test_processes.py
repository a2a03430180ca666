"""A command that misbehaves, or a server that dies: nothing a run starts outlives either.

Each test drives the real server (`python -m lsp_verify`, as an editor starts it) or the real
`lsp-verify check`, and looks at the processes the run left, by a marker no other process
on the machine carries.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.procs import alive_with, unique_sleep
from tests.support.stdio import StdioClient, server_env
from tests.support.wire import did_save, frame

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the reaper is Linux's")


def children_of(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found.extend(int(p) for p in handle.read().split())
        except OSError:
            continue
    return found


def zombies_under(pid: int) -> list[int]:
    found = []
    for child in children_of(pid):
        try:
            with open(f"/proc/{child}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state == b"Z":
            found.append(child)
    return found


def wait_until(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {what}")
        time.sleep(0.02)


def start(raw: StdioClient, root: Path, command: str) -> None:
    raw.send(
        frame(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "processId": None,
                    "rootUri": root.as_uri(),
                    "capabilities": {},
                    "initializationOptions": {"command": command, "confirm": "never"},
                },
            }
        )
    )
    raw.response(1)
    raw.send(frame({"method": "initialized", "params": {}}))


def run_now(raw: StdioClient, rid: int) -> dict[str, Any]:
    raw.send(
        frame(
            {
                "id": rid,
                "method": "workspace/executeCommand",
                "params": {"command": "verify.runNow", "arguments": []},
            }
        )
    )
    result: dict[str, Any] = raw.response(rid)["result"]
    return result


def the_server(raw: StdioClient) -> int:
    """The pid of the server itself: the child of the process the editor started."""
    wait_until(lambda: children_of(raw.proc.pid), 10, "the server process")
    return children_of(raw.proc.pid)[0]


def escapes(token: str) -> str:
    """Every way to leave a run: a background job, nohup, setsid, a setsid double fork,
    and a double fork whose process then wipes its environment (execve with {})."""
    return (
        f"sleep {token} &\n"
        f"nohup sleep {token} >/dev/null 2>&1 &\n"
        f"setsid sleep {token} &\n"
        f"setsid sh -c 'sleep {token} & exit 0' &\n"
        f"setsid sh -c 'env -i sleep {token} & exit 0' &\n"
    )


ESCAPES = 5


@pytest.fixture
def token() -> Any:
    """A `sleep` argument no other process carries; whatever still has it is killed after,
    so that a failing test leaves nothing behind either."""
    value = unique_sleep()
    yield value
    for pid in alive_with(value):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("victim", ["started pid", "server pid"])
def test_sigkill_of_the_server_mid_run_leaves_no_process(
    raw: Any, project: Path, victim: str, token: str
) -> None:
    server = raw()
    (project / "a.py").write_text("")
    start(server, project, escapes(token) + f"echo ready; sleep {token}")
    server.send(did_save((project / "a.py").as_uri()))
    wait_until(lambda: len(alive_with(token)) >= ESCAPES + 1, 10, "the run's processes")
    pid = server.proc.pid if victim == "started pid" else the_server(server)

    os.kill(pid, signal.SIGKILL)
    wait_until(
        lambda: alive_with(token) == [], 2, f"no process of the run after SIGKILL of the {victim}"
    )
    server.proc.wait(timeout=5)


def test_an_escapee_without_environment_dies_at_the_end_of_its_run(raw: Any, project: Path) -> None:
    token = unique_sleep()
    server = raw()
    start(server, project, f"setsid sh -c 'env -i sleep {token} & exit 0'; sleep 0.2; exit 1")
    record = run_now(server, 2)
    assert record["outcome"] == "failed"
    assert record["exitCode"] == 1
    # The server is alive and idle: the run's leftovers are gone all the same.
    wait_until(lambda: alive_with(token) == [], 2, "the escapee killed at the end of its run")
    assert server.proc.poll() is None
    assert server.finish() == 0


def check_argv(project: Path, command: str) -> list[str]:
    return [sys.executable, "-m", "lsp_verify", "check", str(project), "--command", command]


def test_check_leaves_no_escapee_without_environment(
    project: Path, state: Path, token: str
) -> None:
    done = subprocess.run(
        check_argv(project, f"setsid sh -c 'env -i sleep {token} & exit 0'; sleep 0.2"),
        capture_output=True,
        text=True,
        timeout=30,
        env=server_env(state),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    wait_until(lambda: alive_with(token) == [], 2, "the escapee killed when check ends")


def test_sigkill_of_check_mid_run_leaves_no_process(project: Path, state: Path, token: str) -> None:
    proc = subprocess.Popen(
        check_argv(project, escapes(token) + f"sleep {token}"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=server_env(state),
    )
    try:
        wait_until(lambda: len(alive_with(token)) >= ESCAPES + 1, 10, "the run's processes")
        proc.kill()
        wait_until(lambda: alive_with(token) == [], 2, "no process of the run after SIGKILL")
    finally:
        proc.kill()
        proc.wait()


def test_no_zombie_piles_up_under_a_live_server(raw: Any, project: Path) -> None:
    server = raw()
    # Each run leaves a process that left its session, was orphaned (so the server, the
    # subreaper, adopted it) and then exited by itself while the run went on.
    start(server, project, "setsid sh -c '(sleep 0.01 &); exit 0'; sleep 0.05")
    pid = the_server(server)
    for rid in range(2, 102):
        assert run_now(server, rid)["outcome"] == "passed"
    wait_until(lambda: zombies_under(pid) == [], 2, "no zombie under the server")
    assert server.finish() == 0
