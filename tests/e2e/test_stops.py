"""Every way an editor stops the server, each 20 times: the status LSP asks for, nothing on
stderr, and nothing left running after 2 s, when idle, while a run is in flight, and while the
approval question is open (nobody will ever answer it).

The orders are the ones editors use: shutdown then exit (VS Code, Neovim), shutdown, SIGTERM,
exit (Claude Code), SIGTERM alone (opencode), stdin closed (a crashed editor), exit without
shutdown, and SIGKILL of the process the editor started (the keeper), after which the server
must follow it. Servers start a few at a time, so the 20 tries of each order cost seconds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.procs import alive, unique_sleep
from tests.support.stdio import StdioClient, server_env
from tests.support.terminal import Terminal
from tests.support.wire import did_save, frame, initialize

TRIES = 20
AT_ONCE = 4
GONE_WITHIN_S = 2.0


@dataclass(frozen=True)
class Outcome:
    status: int | None  # None: still running GONE_WITHIN_S after the stop
    stderr: str
    left: list[int]  # server, keeper or command processes alive after GONE_WITHIN_S


def stop(server: StdioClient, order: tuple[str, ...]) -> None:
    for step in order:
        if step == "shutdown":
            server.send(frame({"id": 90, "method": "shutdown"}))
        elif step == "shutdown-answered":
            server.send(frame({"id": 90, "method": "shutdown"}))
            assert server.response(90, timeout=10)["result"] is None
        elif step == "exit":
            with contextlib.suppress(BrokenPipeError):  # gone already, after a SIGTERM
                server.send(frame({"method": "exit"}))
        elif step == "sigterm":
            with contextlib.suppress(ProcessLookupError):
                os.kill(server.proc.pid, signal.SIGTERM)
        elif step == "stdin-closed":
            assert server.proc.stdin is not None
            server.proc.stdin.close()
        elif step == "sigkill-keeper":
            os.kill(server.proc.pid, signal.SIGKILL)
        time.sleep(0.02)


def try_once(tmp: Path, n: int, order: tuple[str, ...], question: bool) -> Outcome:
    root = tmp / f"project-{n}"
    root.mkdir()
    marker = unique_sleep()
    if question:
        # A detected plan that needs approval, and a client that can be asked but never answers.
        (root / "Makefile").write_text(f"test:\n\tsleep {marker}\n")
        options: dict[str, object] = {"confirm": "onChange"}
        capabilities: dict[str, object] = {"window": {"showMessage": {}}}
    else:
        # Every other try stops the server while its command runs, the others when it is idle.
        busy = n % 2 == 1
        options = {"command": f"sleep {marker}" if busy else "exit 1", "confirm": "never"}
        capabilities = {}
    server = StdioClient(tmp / f"state-{n}", stderr=tmp / f"stderr-{n}.log")
    try:
        server.send(
            initialize(root, options=options, capabilities=capabilities)
            + frame({"method": "initialized", "params": {}})
        )
        server.response(1)
        server.send(did_save((root / "a.c").as_uri()))
        if question:
            server.notification("window/showMessageRequest")
        elif not busy:
            server.notification("textDocument/publishDiagnostics")
        else:
            deadline = time.monotonic() + 20
            while not alive(marker) and time.monotonic() < deadline:
                time.sleep(0.02)
            assert alive(marker), "the command never started"
        pids = server.pids()
        stop(server, order)
        status: int | None
        try:
            status = server.proc.wait(timeout=GONE_WITHIN_S)
        except Exception:
            status = None
        deadline = time.monotonic() + GONE_WITHIN_S
        left = [p for p in pids if _alive(p)] + alive(marker)
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = [p for p in pids if _alive(p)] + alive(marker)
        return Outcome(status, server.stderr_text(), left)
    finally:
        for pid in alive(marker):
            os.kill(pid, signal.SIGKILL)
        for pid in server.pids():
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        server.kill()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


def tries(tmp: Path, order: tuple[str, ...], question: bool) -> list[Outcome]:
    with ThreadPoolExecutor(AT_ONCE) as pool:
        return list(pool.map(lambda n: try_once(tmp, n, order, question), range(TRIES)))


def summary(outcomes: list[Outcome]) -> str:
    bad = [o for o in outcomes if o.left or "Traceback" in o.stderr or o.stderr.strip()]
    return f"{len(bad)} of {len(outcomes)} bad; first: {bad[0] if bad else None}"


ORDERS = [
    (("shutdown-answered", "exit"), 0),
    (("shutdown", "sigterm", "exit"), 0),
    (("shutdown", "sigterm", "exit", "sigterm"), 0),
    (("sigterm",), 0),
    (("sigterm", "sigterm"), 0),
    (("stdin-closed",), 0),
    (("exit",), 1),
]


@pytest.mark.parametrize(("order", "status"), ORDERS, ids=["+".join(o) for o, _ in ORDERS])
def test_a_stop_idle_or_during_a_run_is_clean_every_time(
    tmp_path: Path, order: tuple[str, ...], status: int
) -> None:
    outcomes = tries(tmp_path, order, question=False)
    assert [o.status for o in outcomes] == [status] * TRIES, summary(outcomes)
    assert all(not o.stderr.strip() for o in outcomes), summary(outcomes)
    assert all(not o.left for o in outcomes), summary(outcomes)


QUESTION_ORDERS = [
    ("shutdown-answered", "exit"),
    ("exit",),
    ("sigterm",),
    ("stdin-closed",),
    ("sigkill-keeper",),
]


@pytest.mark.parametrize("order", QUESTION_ORDERS, ids=["+".join(o) for o in QUESTION_ORDERS])
def test_a_stop_while_the_question_is_open_leaves_nothing(
    tmp_path: Path, order: tuple[str, ...]
) -> None:
    outcomes = tries(tmp_path, order, question=True)
    assert all(not o.left for o in outcomes), summary(outcomes)
    assert all("Traceback" not in o.stderr for o in outcomes), summary(outcomes)
    if order != ("sigkill-keeper",):
        expected = 1 if order == ("exit",) else 0
        assert [o.status for o in outcomes] == [expected] * TRIES, summary(outcomes)


def ctrl_c_then_kill_the_keeper(tmp: Path, n: int) -> Outcome:
    """`lsp-verify` typed in a terminal: Ctrl-C, then the process it started killed."""
    stderr = tmp / f"stderr-{n}.log"
    terminal = Terminal([], server_env(tmp / f"state-{n}"), stderr=stderr)
    try:
        server = terminal.server()
        assert server is not None, "the server never started serving"
        terminal.ctrl_c()
        time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            os.kill(terminal.proc.pid, signal.SIGKILL)
        deadline = time.monotonic() + GONE_WITHIN_S
        while _alive(server) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [p for p in (server,) if _alive(p)]
        return Outcome(None, stderr.read_text(errors="replace"), left)
    finally:
        terminal.close()


def test_ctrl_c_in_a_terminal_then_the_keeper_killed_leaves_nothing(tmp_path: Path) -> None:
    with ThreadPoolExecutor(AT_ONCE) as pool:
        outcomes = list(pool.map(lambda n: ctrl_c_then_kill_the_keeper(tmp_path, n), range(TRIES)))
    assert all(not o.left for o in outcomes), summary(outcomes)
    assert all("Traceback" not in o.stderr for o in outcomes), summary(outcomes)
