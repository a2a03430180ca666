"""A run's escaped descendants (Linux): found by the marker in their environment, killed.

Every step of a run carries `LSP_VERIFY_RUN` in its environment, and so does whatever it
starts, `setsid` daemons and double forks included, unless it wipes its environment. The scan
reads /proc/<pid>/environ, only within the pids the run can have used (`PidWindow`), kills
the marked processes through pidfds (a reused pid never gets the signal), waits for them to
die and reaps those that are this process's children (a subreaper inherits what it kills).
`nothing_else_forked` is the one shortcut: it skips the scan when the kernel's fork counter
says that nothing was created but the steps themselves.

Also the small /proc and pidfd readers the rest of the reaper uses. Off Linux every
function here finds nothing and kills nothing. Imported when first needed, not before the
keeper forks: the keeper stays as small as it was.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
from collections.abc import Iterable

from lsp_verify.running.reaper import MARKER_VAR, fd_readable, wait_until

# How long to wait for marked processes to die once SIGKILLed, and how often to scan again.
_VICTIM_WAIT_S = 0.1
_SCAN_ROUNDS = 3  # a marked process may fork between our scan and our kill: look again


# ----------------------------------------------------------------------------- /proc


def _proc_read(path: str) -> bytes | None:
    # os.open/os.read: a /proc file is small, and a buffered file object costs more than
    # the read itself on the path every run takes.
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        chunks: list[bytes] = []
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)


def _has_marker(environ: bytes, token: bytes) -> bool:
    if token not in environ:  # the common case, decided by one C-level search
        return False
    key = MARKER_VAR.encode() + b"="
    for entry in environ.split(b"\0"):
        if entry.startswith(key):
            return token in entry[len(key) :].split(b":")
    return False


def proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, session) from /proc/<pid>/stat, or None when it is gone."""
    data = _proc_read(f"/proc/{pid}/stat")
    if not data:
        return None
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        return fields[0].decode(), int(fields[1]), int(fields[3])
    except (IndexError, ValueError):
        return None


def dead(pid: int) -> bool:
    stat = proc_stat(pid)
    return stat is None or stat[0] in ("Z", "X")


def _int_from(path: str) -> int | None:
    data = _proc_read(path)
    try:
        return int(data) if data else None
    except ValueError:
        return None


def _forks_since_boot() -> int | None:
    data = _proc_read("/proc/stat") or b""
    start = data.find(b"\nprocesses ")
    if start < 0:
        return None
    try:
        return int(data[start + 11 : data.find(b"\n", start + 1)])
    except ValueError:
        return None


def all_pids() -> list[int]:
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    return [int(n) for n in names if n.isdigit()]


_pid_max: int | None = None


class PidWindow:
    """The pids a run's descendants can have, so the scan does not read every process.

    Pids are handed out in increasing order until they wrap at pid_max, so everything the
    run started has a pid from its first child's up to the last one allocated, unless the
    counter wrapped meanwhile. The kernel's fork counter bounds how far it can have moved;
    when a wrap is possible the whole of /proc is scanned.
    """

    def __init__(self) -> None:
        self.first: int | None = None
        self.forks = _forks_since_boot()
        self.spawned = 0

    def note(self, pid: int) -> None:
        if self.first is None:
            self.first = pid
        self.spawned += 1

    def candidates(self) -> Iterable[int]:
        global _pid_max
        if self.first is None or self.forks is None:
            return all_pids()
        if _pid_max is None:
            _pid_max = _int_from("/proc/sys/kernel/pid_max") or 0
        last = _int_from("/proc/sys/kernel/ns_last_pid")
        forks = _forks_since_boot()
        if last is None or forks is None or last < self.first:
            return all_pids()
        # Pids in use are skipped when allocating, so a full cycle needs fewer forks than
        # pid_max; half of it leaves room for a machine with very many live processes.
        if forks - self.forks >= _pid_max // 2:
            return all_pids()
        if last - self.first < 256:
            return range(self.first, last + 1)
        return [p for p in all_pids() if self.first <= p <= last]


def nothing_else_forked(window: PidWindow) -> bool:
    """The one shortcut: True when the machine has created no process (or thread) since the
    window opened but the steps the run spawned, so none of them has a descendant to look
    for. The kernel counts every fork and clone, system-wide, in /proc/stat."""
    if window.forks is None or window.spawned == 0:
        return False
    forks = _forks_since_boot()
    return forks is not None and forks - window.forks == window.spawned


# ---------------------------------------------------------------------------- pidfds

_pidfd_works = hasattr(os, "pidfd_open")


def pidfd_open(pid: int) -> int | None:
    """A pidfd for pid; None when pidfds are unavailable or pid is gone or a thread."""
    global _pidfd_works
    if sys.platform != "linux" or not _pidfd_works:
        return None
    try:
        return os.pidfd_open(pid)
    except OSError as e:
        if e.errno in (errno.ENOSYS, errno.EPERM):  # old kernel, or a seccomp filter
            _pidfd_works = False
        return None


# ------------------------------------------------------------------------ the scan


class _Victim:
    __slots__ = ("pid", "pidfd")

    def __init__(self, pid: int, pidfd: int | None) -> None:
        self.pid = pid
        self.pidfd = pidfd

    def exited(self) -> bool:
        if self.pidfd is not None:
            return fd_readable(self.pidfd)
        return dead(self.pid)


def _kill_marked(token: bytes, candidates: Iterable[int]) -> list[_Victim]:
    if sys.platform != "linux":
        return []
    me = os.getpid()
    victims = []
    for pid in candidates:
        if pid == me:
            continue
        environ = _proc_read(f"/proc/{pid}/environ")
        if not environ or not _has_marker(environ, token):
            continue
        pidfd = pidfd_open(pid)
        if pidfd is None and _pidfd_works:
            continue  # gone already, or a thread id (its process is a candidate itself)
        if pidfd is not None:
            # Read again now that the pidfd pins one process: if the pid was reused since
            # the first read, this no longer matches and nobody else gets our signal.
            environ = _proc_read(f"/proc/{pid}/environ")
            if not environ or not _has_marker(environ, token):
                os.close(pidfd)
                continue
            try:
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            except OSError:
                os.close(pidfd)
                continue
            victims.append(_Victim(pid, pidfd))
            continue
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue
        victims.append(_Victim(pid, None))
    return victims


def _reap_victims(victims: Iterable[_Victim]) -> None:
    """Reap those that are our children now: a subreaper inherits what it kills."""
    for victim in victims:
        reap(victim.pid)
        if victim.pidfd is not None:
            with contextlib.suppress(OSError):
                os.close(victim.pidfd)


async def kill_escaped(token: bytes, window: PidWindow | None, blocking: bool) -> int:
    """Kill every process carrying the run's token, wait for them to die, reap our own."""
    if sys.platform != "linux":
        return 0
    total = 0
    for _ in range(_SCAN_ROUNDS):
        victims = _kill_marked(token, window.candidates() if window else all_pids())
        if not victims:
            break
        total += len(victims)

        def all_dead(victims: list[_Victim] = victims) -> bool:
            return all(v.exited() for v in victims)

        # Reap only once all are dead: a victim's zombie children are handed to us (the
        # subreaper) when their parent dies, so waiting first catches them as well.
        await wait_until(all_dead, _VICTIM_WAIT_S, blocking)
        _reap_victims(victims)
    return total


def reap_session_zombies(window: PidWindow, session: int) -> None:
    """Reap zombies re-parented to us from the run's session: a group member that exited by
    itself after its parent died. Only the session proves they are the run's; a zombie that
    had left it with setsid cannot be told from someone else's child and is left alone."""
    me = os.getpid()
    for pid in window.candidates():
        if pid == session:
            continue
        stat = proc_stat(pid)
        if stat is not None and stat[0] == "Z" and stat[1] == me and stat[2] == session:
            reap(pid)


def reap_escaped(run_id: str) -> int:
    """Kill (and reap, where they are our children) the processes whose environment carries
    run_id in LSP_VERIFY_RUN. Returns how many were killed. Quietly 0 off Linux."""
    coro = kill_escaped(run_id.encode(), None, blocking=True)
    # blocking=True never suspends, so the coroutine completes on its first step.
    try:
        coro.send(None)
    except StopIteration as stop:
        return int(stop.value)
    coro.close()
    raise RuntimeError("reap_escaped suspended")


def reap(pid: int) -> bool:
    """Reap pid if it is our child and has exited; True when it is no child of ours now."""
    if sys.platform == "win32":
        return True
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    except OSError:
        return False
    return done == pid
