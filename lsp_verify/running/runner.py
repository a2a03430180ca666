"""Run ready steps and say what happened: a RunResult.

Each step is `sh -c COMMAND` in its folder, in a new session, stdin from /dev/null, stdout
and stderr merged into one pipe shared by the steps and read on the event loop as it
arrives (`lsp_verify.running.output`). The steps run in order until one fails; one timeout covers
them all. On timeout and cancel the step's group is killed, and whatever it left behind
when it exits by itself; on Linux also what escaped the group (`lsp_verify.running.reaper`).

The runner knows nothing of plans: `lsp_verify.planning.steps` makes a plan into steps, and
`lsp_verify.running.execute` runs them here. On Windows nothing runs: the result says to use WSL.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lsp_verify.planning.steps import Step
from lsp_verify.problems.base import LineSink, NullSink, Problem
from lsp_verify.record import Outcome, utc_iso
from lsp_verify.running import reaper
from lsp_verify.running.output import OutputReader

__all__ = [
    "NEEDS_UNIX",
    "Hooks",
    "RunResult",
    "run_steps",
    "timeout_marker",
]

# What a run on Windows says, and all it does.
NEEDS_UNIX = (
    "running commands needs Linux, macOS or another Unix system; on Windows, run lsp-verify in WSL"
)

# How long to wait for a SIGKILLed step to die, and for EOF once every writer we know of is
# gone. Together they keep a timed-out run within timeout + 500 ms, even when a process we
# cannot kill still holds the pipe.
_KILL_WAIT_S = 0.2
_EOF_GRACE_S = 0.1


@dataclass(frozen=True)
class Hooks:
    """What a caller plugs into a run: a sink and a callback that get each output line, a
    callback told the pid of each step it starts, and an event that cancels it."""

    sink: LineSink | None = None
    on_line: Callable[[str], None] | None = None
    on_spawn: Callable[[int], None] | None = None
    cancel: asyncio.Event | None = None


_NO_HOOKS = Hooks()


@dataclass(frozen=True)
class RunResult:
    """What one run did. `exit_code` is None when the run was killed or never started."""

    outcome: Outcome  # passed, failed, timed-out, cancelled or skipped
    exit_code: int | None
    reason: str | None
    tail: tuple[str, ...]
    problems: tuple[Problem, ...]
    started_at: str
    duration_ms: int

    @classmethod
    def unstarted(cls, outcome: Outcome, reason: str | None, *, shown: bool = False) -> RunResult:
        """A run that started nothing. shown=True: the reason is its output, too."""
        tail = (reason,) if shown and reason else ()
        return cls(outcome, None, reason, tail, (), utc_iso(time.time()), 0)


def timeout_marker(timeout_ms: int) -> str:
    """The exact last tail line of a timed-out run."""
    return f"[verify command timed out after {timeout_ms}ms and was killed]"


class _Child:
    """One spawned step and a way to learn that it exited without reaping it: its pid must
    keep naming the process group until the group has been killed."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.pidfd = reaper.exit_fd(proc.pid)
        self.ended = False

    def exited(self) -> bool:
        if self.proc.returncode is not None:
            return True
        if self.pidfd is not None:
            return reaper.fd_readable(self.pidfd)
        if sys.platform != "win32" and hasattr(os, "waitid"):
            try:
                flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
                return os.waitid(os.P_PID, self.proc.pid, flags) is not None
            except ChildProcessError:
                return True
        return self.proc.poll() is not None

    async def wait(
        self, loop: asyncio.AbstractEventLoop, deadline: float, cancel: asyncio.Event | None
    ) -> str:
        """Until the child exits ("exit"), the deadline passes ("timeout") or cancel is set."""
        if cancel is not None and cancel.is_set():
            return "cancel"
        done: asyncio.Future[str] = loop.create_future()

        def finish(why: str) -> None:
            if not done.done():
                done.set_result(why)

        poller: asyncio.Task[None] | None = None
        if self.pidfd is not None:
            loop.add_reader(self.pidfd, finish, "exit")
        else:

            async def watch() -> None:
                await reaper.wait_until(self.exited, float("inf"), blocking=False)
                finish("exit")

            poller = loop.create_task(watch())
        timer = loop.call_at(deadline, finish, "timeout")
        waiter: asyncio.Task[bool] | None = None
        if cancel is not None:
            waiter = loop.create_task(cancel.wait())
            waiter.add_done_callback(lambda t: None if t.cancelled() else finish("cancel"))
        try:
            return await done
        finally:
            timer.cancel()
            if self.pidfd is not None:
                loop.remove_reader(self.pidfd)
            if poller is not None:
                poller.cancel()
            if waiter is not None:
                waiter.cancel()

    async def end(self, reach: reaper.RunReach, blocking: bool, keep_jobs: bool = False) -> bool:
        """Kill what is left of the step (all of it, when it has not exited) and reap it.
        keep_jobs: a step that exited by itself leaves its background jobs to the run's end.
        True when the child itself had to be killed."""
        proc = self.proc
        killed = False
        exited = proc.returncode is not None or self.exited()
        if not exited:
            killed = True
            if not reaper.kill_group(proc.pid):
                with contextlib.suppress(OSError):
                    proc.kill()
            exited = await reaper.wait_until(self.exited, _KILL_WAIT_S, blocking)
        if keep_jobs and not killed:
            reach.keep(proc.pid)
        else:
            await reach.step_ended(proc.pid, proc.returncode is not None, blocking)
        if proc.returncode is None and exited:
            proc.wait()
        reach.step_reaped(proc.pid)
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        # A child that did not die within _KILL_WAIT_S (stuck in the kernel) is left to
        # subprocess' own bookkeeping, which reaps it on a later spawn.
        self.ended = True
        return killed


def _exit_code(returncode: int | None) -> int | None:
    if returncode is None:
        return None
    # Killed by a signal from elsewhere: report it the way a shell would (128 + signal).
    return 128 - returncode if returncode < 0 else returncode


async def run_steps(
    steps: Sequence[Step],
    *,
    timeout_ms: int,
    tail_lines: int,
    hooks: Hooks = _NO_HOOKS,
) -> RunResult:
    """Run `steps` in order until one fails, within one timeout, and say what happened.

    Never raises for what a user can cause (a missing folder or command): those are
    results. If the awaiting task is cancelled, the process group and every escaped
    descendant are killed before CancelledError propagates.
    """
    if sys.platform == "win32":
        return RunResult.unstarted("failed", NEEDS_UNIX, shown=True)
    cancel, on_spawn = hooks.cancel, hooks.on_spawn
    if cancel is not None and cancel.is_set():
        return RunResult.unstarted("cancelled", None)
    loop = asyncio.get_running_loop()
    started = time.time()  # formatted when the run is over: the spawn comes first
    t0 = time.monotonic()
    sink = hooks.sink if hooks.sink is not None else NullSink()
    deadline = loop.time() + timeout_ms / 1000
    # One pipe for every step, its write end held here until the last step is done: a step's
    # output cannot end early, and EOF means every process that could write is gone.
    try:
        read_fd, write_fd = os.pipe()
    except OSError as e:  # EMFILE, ENFILE: nothing to undo
        return RunResult.unstarted("failed", f"could not start the command: {e}", shown=True)
    try:
        os.set_blocking(read_fd, False)
        out = OutputReader(loop, read_fd, max(1, tail_lines), sink, hooks.on_line)
        # Last: from here on the run counts as in flight, and only `close` below ends that.
        # A count left behind would keep every later sweep from killing a leftover.
        reach = reaper.RunReach()
    except Exception as e:
        os.close(read_fd)
        os.close(write_fd)
        return RunResult.unstarted("failed", f"could not start the command: {e}", shown=True)
    child: _Child | None = None
    outcome: Outcome = "passed"
    exit_code: int | None = 0
    reason: str | None = None
    try:
        for index, step in enumerate(steps):
            if cancel is not None and cancel.is_set():
                outcome, exit_code = "cancelled", None
                break
            if loop.time() >= deadline:
                outcome, exit_code = "timed-out", None
                break
            try:
                proc = subprocess.Popen(
                    ["/bin/sh", "-c", step.command],
                    cwd=step.cwd,
                    env=reach.environment(step.env),
                    stdin=subprocess.DEVNULL,
                    stdout=write_fd,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    close_fds=True,
                )
            except (OSError, ValueError) as e:  # ValueError: a NUL byte in the command
                outcome, exit_code = "failed", None
                reason = f"could not start the command: {e}"
                out.tail.append(reason)
                break
            reach.spawned(proc.pid)
            out.watch()
            child = _Child(proc)
            if on_spawn is not None:
                on_spawn(proc.pid)
            why = await child.wait(loop, deadline, cancel)
            more = index < len(steps) - 1  # npm: what pretest started lives on into test
            killed = await child.end(reach, blocking=False, keep_jobs=more)
            child = None
            out.drain()
            out.end_lines()
            # A child that had exited by itself when the timer or the cancel arrived has
            # a real exit status: that is the verdict.
            if killed and why == "timeout":
                outcome, exit_code = "timed-out", None
                break
            if killed and why == "cancel":
                outcome, exit_code = "cancelled", None
                break
            exit_code = _exit_code(proc.returncode)
            if exit_code != 0:
                outcome = "failed"
                break
        await reach.release(blocking=False)
        os.close(write_fd)
        write_fd = -1
        out.drain()  # usually EOF is already there: no need to go round the event loop
        if not out.eof.done():
            # Whatever still holds the pipe is something the kill could not reach: give it
            # a moment to go, then stop listening rather than hang the run.
            await asyncio.wait({out.eof}, timeout=_EOF_GRACE_S)
            out.drain()
        out.end_lines()
    except BaseException:
        if child is not None and not child.ended:
            await child.end(reach, blocking=True)
        await reach.release(blocking=True)
        raise
    finally:
        try:
            reach.close(child.proc.pid if child is not None else None)
        finally:
            out.close()
            if write_fd >= 0:
                os.close(write_fd)

    if outcome == "timed-out":
        out.tail.append(timeout_marker(timeout_ms))
    tail, problems = out.tail.lines(), out.finish_sink()
    duration_ms = int((time.monotonic() - t0) * 1000)
    return RunResult(outcome, exit_code, reason, tail, problems, utc_iso(started), duration_ms)
