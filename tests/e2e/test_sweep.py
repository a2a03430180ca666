"""The sweep of a run's leftovers (children of a process that claims its children, found by
parentage): a run that cannot set itself up (no file descriptor left, a reader that fails)
is a failed result that leaks nothing and leaves the count of runs in flight as it was, so
later sweeps still kill; and a sweep on the event loop never blocks it, while the blocking
sweep of the keeper and of shutdown still waits until nothing is left."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Iterator
from pathlib import Path

import pytest

from lsp_verify.planning.steps import Step
from lsp_verify.running import reaper, runner
from lsp_verify.running.reaper import escapees
from lsp_verify.running.runner import RunResult, run_steps
from tests.support.procs import alive, unique_sleep

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


async def run_true(folder: Path) -> RunResult:
    step = Step("/bin/true", dict(os.environ), str(folder))  # not a builtin: sh forks
    return await run_steps([step], timeout_ms=10_000, tail_lines=40)


def no_fd_left(*args: object, **kwargs: object) -> object:
    raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))


@pytest.fixture
def leftover(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A child of this process that is no step: to a process that claims its children (the
    server, `check`), a run's leftover. The sweep is shown only this child, never the test
    runner's own."""
    token = unique_sleep()
    child = subprocess.Popen(["sleep", token])
    real_children = reaper.children
    monkeypatch.setattr(reaper, "children", lambda: [p for p in real_children() if p == child.pid])
    monkeypatch.setattr(reaper, "_claimed", True)
    monkeypatch.setattr(reaper, "_in_flight", [0])  # whatever an earlier test left
    yield token
    monkeypatch.undo()  # the real reap below
    for pid in alive(token):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        child.wait()


@pytest.mark.parametrize("where", ["pipe", "reader"])
async def test_a_run_that_cannot_set_up_is_failed_and_leaves_nothing_counted(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    leftover: str,
    where: str,
) -> None:
    assert reaper._in_flight[0] == 0
    before = open_fds()
    with monkeypatch.context() as patch:
        if where == "pipe":
            patch.setattr(os, "pipe", no_fd_left)
        else:
            patch.setattr(runner, "OutputReader", no_fd_left)
        result = await run_true(tmp_path)
    assert (result.outcome, result.exit_code) == ("failed", None)
    assert result.reason == "could not start the command: [Errno 24] Too many open files"
    assert result.tail == (result.reason,)
    assert reaper._in_flight[0] == 0
    assert open_fds() == before

    # The next run's end sweeps with kill: the leftover dies.
    assert alive(leftover)
    result = await run_true(tmp_path)
    assert result.outcome == "passed"
    # SIGKILLed at the run's end; on a loaded machine it may take a moment to be gone.
    for _ in range(100):
        if not alive(leftover):
            break
        await asyncio.sleep(0.02)
    assert not alive(leftover)
    assert reaper._in_flight[0] == 0
    assert open_fds() == before


async def largest_gap(work: Awaitable[object], after: float) -> float:
    """The longest the event loop went without running a callback while `work` ran and for
    `after` seconds more: how long something blocked it."""
    loop = asyncio.get_running_loop()
    last = [time.monotonic()]
    gaps = [0.0]
    done = [False]

    def tick() -> None:
        now = time.monotonic()
        gaps.append(now - last[0])
        last[0] = now
        if not done[0]:
            loop.call_later(0.002, tick)

    loop.call_soon(tick)
    await work
    await asyncio.sleep(after)
    done[0] = True
    return max(gaps)


@pytest.fixture
def unreapable(monkeypatch: pytest.MonkeyPatch, leftover: str) -> list[int]:
    """The leftover will not die: every look finds it alive and not reaped (a process
    stuck in the kernel). Yields the list of pids each round tried to reap."""
    tries: list[int] = []

    def never(pid: int) -> bool:
        tries.append(pid)
        return False

    monkeypatch.setattr(escapees, "dead", lambda pid: False)
    monkeypatch.setattr(escapees, "reap", never)
    return tries


@pytest.mark.parametrize("cause", ["the end of a run", "SIGCHLD"])
async def test_a_leftover_that_will_not_die_does_not_block_the_event_loop(
    tmp_path: Path, leftover: str, unreapable: list[int], cause: str
) -> None:
    loop = asyncio.get_running_loop()
    if cause == "SIGCHLD":
        reaper.watch_children(loop)
        work: Awaitable[object] = asyncio.sleep(0)
        os.kill(os.getpid(), signal.SIGCHLD)
    else:
        work = run_true(tmp_path)
    try:
        gap = await largest_gap(work, after=reaper.SWEEP_DELAY + 0.7)
    finally:
        if cause == "SIGCHLD":
            loop.remove_signal_handler(signal.SIGCHLD)
    assert gap < 0.1  # a blocking sweep held the loop for 0.5 s
    # The sweep went on for its half second, in rounds, and then gave up.
    assert len(unreapable) > 5
    assert reaper._rounds == []
    count = len(unreapable)
    await asyncio.sleep(0.1)
    assert len(unreapable) == count
    assert not alive(leftover)  # killed all the same: a zombie now


async def test_the_blocking_sweep_waits_until_nothing_is_left(leftover: str) -> None:
    # The keeper's and shutdown's sweep: a leftover killed and reaped before it returns.
    assert reaper.sweep(kill=True) == 1
    assert not alive(leftover)
    assert reaper.children() == []


async def test_a_sweep_that_must_not_kill_spares_a_live_leftover(leftover: str) -> None:
    reaper._in_flight[0] = 1  # another run goes: nothing tells whose the leftover is
    reaper.sweep_soon(asyncio.get_running_loop())
    await asyncio.sleep(0.05)
    assert alive(leftover)
    assert reaper._rounds == []
