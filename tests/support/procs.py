"""Finding live (non-zombie) processes by a marker in their command line, or by one of
their arguments."""

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
