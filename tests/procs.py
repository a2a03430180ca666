"""Finding live (non-zombie) processes by a marker in their command line."""

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
