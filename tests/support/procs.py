"""Processes in /proc: live (non-zombie) ones by a marker in their command line or one of their
arguments, a server and the keeper that started it, their CPU time and memory."""

from __future__ import annotations

import os
import random


def unique_sleep() -> str:
    """A `sleep` argument no other process on the machine carries: 300.<random digits>."""
    return f"300.{random.randrange(10**8, 10**9)}"


def alive_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        state = stat.rsplit(")", 1)[-1].split()[0]
        if marker in cmdline and state not in ("Z", "X") and int(entry) != os.getpid():
            found.append(int(entry))
    return found


def alive(token: str) -> list[int]:
    """Non-zombie processes with `token` as one of their arguments."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{name}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if token.encode() in argv and state not in (b"Z", b"X"):
            found.append(int(name))
    return found


def cpu_seconds(pids: list[int]) -> float:
    """The CPU time (user and system) the processes `pids` have used so far: work done, which
    other processes on a loaded machine do not lengthen as they do the wall clock."""
    ticks = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rpartition(")")[2].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def lsp_verify_pids(pid: int) -> list[int]:
    """`pid`, then its children that run lsp_verify (on Linux the server forks at start and
    the process an editor started stays behind as its keeper)."""
    pids = [pid]
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            children = [int(p) for p in handle.read().split()]
    except (OSError, ValueError):
        children = []
    for child in children:
        try:
            with open(f"/proc/{child}/cmdline", "rb") as handle:
                if b"lsp_verify" in handle.read().split(b"\0"):
                    pids.append(child)
        except OSError:
            pass
    return pids


def status_kib(pid: int, field: str) -> int:
    """A field of /proc/<pid>/status in KiB (`VmHWM:`, `VmRSS:`); 0 once the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def private_kib(pid: int) -> int:
    """The pages of `pid` no other process shares, in KiB."""
    total = 0
    with open(f"/proc/{pid}/smaps_rollup") as handle:
        for line in handle:
            if line.startswith(("Private_Clean:", "Private_Dirty:")):
                total += int(line.split()[1])
    return total


def pss_kib(pids: list[int], field: str = "Pss") -> int:
    """The proportional set size of the processes `pids` together, in KiB: each page counted
    once across them, however many share it (a server and the keeper it forked from).
    `field`: another line of smaps_rollup, such as `Pss_Anon` (the part no file backs: what
    the processes allocated, whatever other processes map the same libraries)."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith(f"{field}:"):
                    total += int(line.split()[1])
    return total
