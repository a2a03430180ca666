"""A run that cannot set itself up (no file descriptor left, a reader that fails): a failed
result with its reason, nothing leaked, and the reaper's count of runs in flight back where
it was, so that later sweeps still kill what runs leave behind."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_verify import reaper, runner
from lsp_verify.runner import RunResult, Step, run_steps
from tests.procs import alive, unique_sleep

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
    assert not alive(leftover)
    assert reaper._in_flight[0] == 0
    assert open_fds() == before
