"""Nothing a run starts outlives it, nor the process that started it.

Everywhere (macOS and other Unix systems) each step runs in a process group of its own,
SIGKILLed (`kill_group`) on timeout and cancel, and its leftovers when the step exits by
itself. A process that left the group with `setsid` can outlive the run there; the README
says so. `GROUP_KILL_ONLY` takes that path on Linux too.

On Linux, for what the group kill cannot reach:
- the run's marker in the environment of every process it starts, found by a scan of /proc
  after each step (`RunReach`, with `lsp_verify.running.reaper.escapees`);
- parentage: the process that runs commands (the server, `check`) is a child subreaper
  (`prctl(PR_SET_CHILD_SUBREAPER)`), so a run's descendant whose parent dies, a `setsid`
  daemon included, is re-parented to it rather than to init. Once it "claims its
  children", every child process it has that is not a step it is running is a run's
  leftover, found by parentage alone: a double-forked process that wiped its environment
  is found too. `sweep` kills those (when no run is in flight) and reaps them, zombies
  included: blocking, for the keeper, `check` and shutdown; `sweep_soon` on the event
  loop, where the rounds after the first are scheduled rather than slept through;
- a keeper (`keeper.py`): `keep_behind` forks before the server starts. The parent (the
  pid the editor started, and the one it may SIGKILL) waits for the server, the child. The
  server dies with its keeper (a parent-death signal, SIGTERM, which the server handles by
  killing its runs); the keeper is the subreaper above the server, so whatever a server
  killed with SIGKILL leaves behind is re-parented to the keeper, which kills it and exits
  with the server's status.

Imported before the keeper forks: light standard modules only. `escapees` is imported where
it is first needed (a run, a sweep), so that the keeper does not carry it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the keeper forks before asyncio is loaded: only a type here
    import asyncio

__all__ = [
    "GROUP_KILL_ONLY",
    "MARKER_VAR",
    "RunReach",
    "claim_children",
    "exit_fd",
    "fd_readable",
    "keep_behind",
    "kill_group",
    "kill_steps",
    "set_subreaper",
    "sweep",
    "sweep_soon",
    "wait_until",
]

MARKER_VAR = "LSP_VERIFY_RUN"

# True: on Linux too, only the process group is killed, as on macOS and other Unix systems.
# For the tests of that path; nothing in the package sets it.
GROUP_KILL_ONLY = False

_PR_SET_CHILD_SUBREAPER = 36

_claimed = False


def _chases_escapees() -> bool:
    return sys.platform == "linux" and not GROUP_KILL_ONLY


# ------------------------------------------------------------------------ everywhere


def kill_group(pgid: int) -> bool:
    """SIGKILL the process group `pgid`; False when that failed (it is gone already)."""
    if sys.platform == "win32":
        return False
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        return False
    return True


async def wait_until(done: Callable[[], bool], timeout: float, blocking: bool) -> bool:
    """Poll `done` with a short backoff. blocking=True never suspends: it is the path for a
    task that is being cancelled, where another await could be interrupted half-way."""
    import asyncio  # loaded by the caller already; not before the keeper forks

    deadline = time.monotonic() + timeout
    delay = 0.0002
    while not done():
        if time.monotonic() >= deadline:
            return False
        if blocking:
            time.sleep(delay)
        else:
            await asyncio.sleep(delay)
        delay = min(delay * 2, 0.01)
    return True


def fd_readable(fd: int) -> bool:
    """True when a poll of `fd` (a pidfd) finds it readable now."""
    if sys.platform == "win32":
        return False
    import select  # here: a module the keeper never needs

    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


def exit_fd(pid: int) -> int | None:
    """A file descriptor that becomes readable when the child `pid` exits (a pidfd), or
    None where there is none: off Linux, on the group-kill-only path, on old kernels."""
    from lsp_verify.running.reaper import escapees

    return None if GROUP_KILL_ONLY else escapees.pidfd_open(pid)


class RunReach:
    """One run's reach over what it started: its marker, and the kills after each step.

    The runner marks each step's environment (`environment`), says what it spawned
    (`spawned`), and after each step calls `step_ended` (the step's leader exited or was
    killed, and is not reaped yet) and then `step_reaped`.
    """

    def __init__(self) -> None:
        from lsp_verify.running.reaper import escapees

        self._run_id = os.urandom(16).hex()
        self._token = self._run_id.encode()
        self._window = escapees.PidWindow() if _chases_escapees() else None
        self._alone = False
        self.forked = False  # a step's end saw forks beyond the steps themselves
        self._kept: list[int] = []  # groups of ended steps whose jobs live until the run ends
        self._closed = False
        # Counted last, once nothing here can raise: `close` is what uncounts it.
        _in_flight[0] += 1

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        """`env` with the run's marker. Appended to an outer run's when lsp-verify runs
        inside a verify run (its own test suite): the outer run can still find and kill
        what the inner one started."""
        marked = dict(env)
        outer = marked.get(MARKER_VAR)
        marked[MARKER_VAR] = f"{outer}:{self._run_id}" if outer else self._run_id
        return marked

    def spawned(self, pid: int) -> None:
        _steps.add(pid)
        if self._window is not None:
            self._window.note(pid)

    async def step_ended(self, group: int, leader_reaped: bool, blocking: bool) -> None:
        """Kill what is left of the step's group and, on Linux, whatever escaped it."""
        from lsp_verify.running.reaper import escapees

        window = self._window
        # A step that started no process of its own (a shell builtin, an exec) leaves
        # nothing to find: the group is its zombie alone, and the scans of /proc are skipped.
        self._alone = window is not None and escapees.nothing_else_forked(window)
        if self._alone:
            return
        self.forked = True
        if not leader_reaped:
            # Until the leader is reaped its pid still names the group, so this cannot
            # reach a stranger that was given the same number.
            kill_group(group)
        if window is not None:
            await escapees.kill_escaped(self._token, window, blocking)

    def keep(self, group: int) -> None:
        """A step ended by itself and more steps follow: what it left running (npm's
        `pretest` starting a server the tests talk to) lives on, as under npm, until the
        run ends (`release`)."""
        self._kept.append(group)
        self.forked = True

    async def release(self, blocking: bool) -> None:
        """The run is over: kill what the kept steps left running. On Linux every process
        of the run carries the marker (one that wiped it is swept by parentage in `close`);
        elsewhere each kept group is killed."""
        kept, self._kept = self._kept, []
        if not kept:
            return
        if self._window is not None:
            from lsp_verify.running.reaper import escapees

            await escapees.kill_escaped(self._token, self._window, blocking)
        else:
            for group in kept:
                kill_group(group)

    def step_reaped(self, group: int) -> None:
        """The step's leader is reaped: reap the zombies its session left to us."""
        from lsp_verify.running.reaper import escapees

        _steps.discard(group)
        if self._window is not None and not self._alone:
            escapees.reap_session_zombies(self._window, group)

    def close(self, leader: int | None) -> None:
        """The run is over (`leader`: a step's leader left unreaped by an exception).

        What left the run's group and hid from the marker scan (a double fork with an
        empty environment) is our child by now: found by parentage, and killed only when
        no other run is going, since nothing tells which run it came from."""
        if self._closed:
            return
        self._closed = True
        _in_flight[0] -= 1
        if leader is not None:
            _steps.discard(leader)
        if self.forked or leader is not None:
            import asyncio  # loaded already: a run goes on the event loop

            sweep_soon(asyncio.get_running_loop())


# The leaders of the steps running now (their exit status is still to be read), and how
# many runs are in flight in this process: what a sweep must spare, and when it may kill.
_steps: set[int] = set()
_in_flight = [0]
SWEEP_DELAY = 0.1  # seconds from a SIGCHLD to the reaping of adopted leftovers


def kill_steps() -> None:
    """SIGKILL the groups of the steps running now: the last act of a process that could not
    stop in time. Safe from any thread (system calls only)."""
    for pid in list(_steps):
        kill_group(pid)


def watch_children(loop: asyncio.AbstractEventLoop) -> None:
    """Reap, on SIGCHLD, a leftover this process adopted (it is their subreaper) that died
    by itself, so that a long session piles up no zombies. Later and coalesced: the exit of
    a step is on the path to its diagnostics. While a run goes, its own end sweeps."""
    pending = [False]

    def later() -> None:
        pending[0] = False
        sweep_soon(loop)

    def on_sigchld() -> None:
        if not pending[0]:
            pending[0] = True
            loop.call_later(SWEEP_DELAY, later)

    if sys.platform != "win32":
        loop.add_signal_handler(signal.SIGCHLD, on_sigchld)


# ------------------------------------------------------------------ Linux: subreaper


def _prctl(option: int, value: int) -> bool:
    if sys.platform != "linux":
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        result = libc.prctl(
            option, ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)
        )
    except (OSError, AttributeError):
        return False
    return bool(result == 0)


def set_subreaper(on: bool) -> bool:
    """Make this process a child subreaper (or stop being one). False where unavailable."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1 if on else 0)


def claim_children() -> bool:
    """Say that every child process of this one that is not a running step is a run's
    leftover, and become their subreaper. For the server, `check` and the keeper, which
    start no process but runs; never for a process that has children of its own (a test
    suite)."""
    global _claimed
    _claimed = set_subreaper(True)
    return _claimed


def children() -> list[int]:
    """This process's child pids, zombies included."""
    if sys.platform != "linux":
        return []
    found: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        tasks = []
    ok = bool(tasks)
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children", "rb") as handle:
                found.extend(int(p) for p in handle.read().split())
        except FileNotFoundError:
            continue  # the thread ended meanwhile
        except OSError:
            ok = False  # a kernel without CONFIG_PROC_CHILDREN: scan every process
            break
    if ok:
        return found
    from lsp_verify.running.reaper import escapees

    me = os.getpid()
    found = []
    for pid in escapees.all_pids():
        stat = escapees.proc_stat(pid)
        if stat is not None and stat[1] == me:
            found.append(pid)
    return found


def _kill(pid: int) -> None:
    """SIGKILL a child and, when it leads a process group, the whole group: a leftover
    `sh` and the job it runs go together, without waiting for a re-parenting round."""
    if sys.platform == "win32":
        return
    with contextlib.suppress(OSError):
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def sweep(spare: Collection[int] = (), kill: bool = True, wait_s: float = 0.5) -> int:
    """Reap this process's leftover children, and with `kill` SIGKILL the live ones first.

    `spare`: the pids of steps still running (their exit status is still to be read).
    Killing a leftover hands its own children to us, the subreaper: they are taken in the
    next round, until none is left or `wait_s` has passed. Returns how many were killed.

    Blocks until then: for the keeper (no event loop), `check` and the server's shutdown,
    which must know that nothing is left. On the event loop, `sweep_soon`."""
    if not _claimed or not _chases_escapees():
        return 0
    killed = 0
    deadline = time.monotonic() + wait_s
    while True:
        count, more, pending = _sweep_round(spare, kill)
        killed += count
        if not more or time.monotonic() >= deadline:
            return killed
        if pending:
            time.sleep(0.002)


class _Rounds:
    """The rounds `sweep_soon` has scheduled on one loop, until `deadline`."""

    def __init__(self, loop: asyncio.AbstractEventLoop, deadline: float) -> None:
        self.loop = loop
        self.deadline = deadline


_rounds: list[_Rounds] = []  # the one going, if any
_SOON_FIRST_DELAY = 0.002
_SOON_MAX_DELAY = 0.05


def sweep_soon(loop: asyncio.AbstractEventLoop, wait_s: float = 0.5) -> None:
    """`sweep` for the event loop: one round now, and the rounds after it (a killed
    leftover's children, a leftover not reaped yet) scheduled on the loop, never slept
    through. Each round spares the running steps and kills only while no run is in flight.

    Rounds already scheduled take a new request over: one round now, the rest within their
    own rounds, until the later of the two deadlines."""
    if not _claimed or not _chases_escapees():
        return
    deadline = time.monotonic() + wait_s
    going = _rounds[0] if _rounds else None
    if going is not None and going.loop is loop and not loop.is_closed():
        going.deadline = max(going.deadline, deadline)
    else:
        going = None
        _rounds.clear()  # a loop that closed with rounds still scheduled
    _, more, pending = _sweep_round(_steps, _in_flight[0] == 0)
    if going is not None or not more:
        return
    rounds = _Rounds(loop, deadline)
    _rounds.append(rounds)

    def again(delay: float) -> None:
        if not _rounds or _rounds[0] is not rounds:
            return
        _, more, pending = _sweep_round(_steps, _in_flight[0] == 0)
        if not more or time.monotonic() >= rounds.deadline:
            _rounds.clear()
            return
        # A leftover slow to die is looked at less and less often; the children of one
        # just killed are looked for at once.
        if pending:
            loop.call_later(delay, again, min(delay * 2, _SOON_MAX_DELAY))
        else:
            loop.call_soon(again, delay)

    if pending:
        loop.call_later(_SOON_FIRST_DELAY, again, _SOON_FIRST_DELAY * 2)
    else:
        loop.call_soon(again, _SOON_FIRST_DELAY)


def _sweep_round(spare: Collection[int], kill: bool) -> tuple[int, bool, bool]:
    """One look at the leftovers: kill the live ones (with `kill`), reap the dead.
    (killed, more, pending): how many were killed, whether another round is due (one found
    a leftover), and whether a leftover is not reaped yet."""
    from lsp_verify.running.reaper import escapees

    leftovers = [pid for pid in children() if pid not in spare]
    if not leftovers:
        return 0, False, False
    live = [pid for pid in leftovers if not escapees.dead(pid)]
    if live and not kill:
        for pid in leftovers:
            if pid not in live:
                escapees.reap(pid)
        return 0, False, False
    for pid in live:
        _kill(pid)
    pending = [pid for pid in leftovers if not escapees.reap(pid)]
    return len(live), True, bool(pending)


# The keeper lives in its own module; `keep_behind` is the package's.
from lsp_verify.running.reaper.keeper import keep_behind  # noqa: E402
