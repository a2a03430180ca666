"""`lsp-verify` as a person starts it: in a terminal (a pty) that is its controlling one, in a
session of its own, as a shell gives it; Ctrl-C typed into it."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path


def children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return [int(p) for p in handle.read().split()]
    except OSError:
        return []


def catches(pid: int, signum: int) -> bool:
    """Whether the process has a handler of its own for `signum` (SigCgt in /proc)."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    except OSError:
        pass
    return False


class Terminal:
    """`python -m lsp_verify ARGS` with the pty on stdin and stdout (and stderr, unless a file
    is given for it). `output()` is what the terminal showed."""

    def __init__(self, args: list[str], env: dict[str, str], stderr: Path | None = None) -> None:
        self.leader, follower = pty.openpty()
        tty = os.ttyname(follower)
        os.close(follower)
        fds = "(0, 1)" if stderr is not None else "(0, 1, 2)"
        start = (
            "import os, sys; os.setsid(); fd = os.open(sys.argv[1], os.O_RDWR); "
            f"[os.dup2(fd, n) for n in {fds}]; "
            "os.execv(sys.executable, [sys.executable, '-m', 'lsp_verify', *sys.argv[2:]])"
        )
        with contextlib.ExitStack() as stack:
            err = stack.enter_context(open(stderr, "wb")) if stderr is not None else None
            self.proc = subprocess.Popen(
                [sys.executable, "-c", start, tty, *args], stderr=err, env=env
            )
        self._shown = b""

    def server(self, timeout: float = 20) -> int | None:
        """The server under the keeper, once it serves (its stop handlers set)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            kids = children(self.proc.pid)
            if kids and catches(kids[0], signal.SIGTERM):
                return kids[0]
            time.sleep(0.02)
        return None

    def ctrl_c(self) -> None:
        """SIGINT to the terminal's foreground group, as the terminal sends it."""
        os.write(self.leader, b"\x03")

    def output(self, wait: float = 0.1) -> str:
        while select.select([self.leader], [], [], wait)[0]:
            try:
                data = os.read(self.leader, 65536)
            except OSError:  # the other side is closed
                break
            if not data:
                break
            self._shown += data
        return self._shown.decode(errors="replace")

    def close(self) -> None:
        for pid in [self.proc.pid, *children(self.proc.pid)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait()
        os.close(self.leader)
