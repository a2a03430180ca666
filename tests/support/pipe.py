"""A process with its stdin and stdout as pipes (tests/support/stdio.py speaks LSP over them),
its stderr in a file or nowhere, and its CPU time and memory."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path

from tests.support.procs import cpu_seconds, lsp_verify_pids, status_kib

_CHUNK = 1024 * 1024


class Pipe:
    """A process with its stdin (non-blocking, so that no write waits past a deadline) and
    stdout as pipes, its stderr in a file or nowhere; its CPU time and memory."""

    def __init__(
        self, argv: list[str], env: dict[str, str], cwd: Path | str | None,
        stderr: Path | None, new_session: bool,
    ) -> None:  # fmt: skip
        self.new_session = new_session
        self.stderr_path = stderr
        self._stderr = open(stderr, "wb") if stderr is not None else None  # noqa: SIM115
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr or subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            start_new_session=new_session,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.input = self.proc.stdin.fileno()
        self.output = self.proc.stdout.fileno()
        os.set_blocking(self.input, False)
        self.closed = False  # the process closed its output
        self.broken = False  # the process closed its input (or we did)

    def write_some(self, view: memoryview) -> int:
        """The bytes of `view` the pipe takes now (0 when it is full, or broken)."""
        try:
            return os.write(self.input, view[:_CHUNK])
        except BlockingIOError:
            return 0
        except OSError:  # EPIPE, or the input closed already
            self.broken = True
            return 0

    def read_some(self) -> bytes:
        """What the output holds (call once it is readable); b"" at its end."""
        try:
            chunk = os.read(self.output, _CHUNK)
        except OSError:
            chunk = b""
        if not chunk:
            self.closed = True
        return chunk

    def close_input(self) -> None:
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        self.broken = True

    def kill(self, group: bool = False) -> None:
        """SIGKILL unless it is gone (with `group`, to the group it leads: the group id is its
        own until it is reaped); reaped; the pipes and the stderr file closed."""
        if self.proc.poll() is None:
            if group and self.new_session:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except OSError:
                    self.proc.kill()
            else:
                self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self._stderr):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()

    def stderr_text(self) -> str:
        assert self.stderr_path is not None, "started without stderr="
        if not self.stderr_path.exists():
            return ""
        return self.stderr_path.read_text(errors="replace")

    def pids(self) -> list[int]:
        """The process started, then its lsp_verify children (the server, where the started
        one stays behind as a keeper)."""
        return lsp_verify_pids(self.proc.pid)

    def cpu_seconds(self) -> float:
        """The CPU time the server has used so far, its keeper's included (see procs)."""
        return cpu_seconds(self.pids())

    def peak_rss_mb(self) -> float:
        """The server's peak resident memory so far (VmHWM), in MB (10^6 bytes): of the
        process started, or of its lsp_verify child where the started one is a keeper."""
        peaks = [status_kib(p, "VmHWM:") for p in self.pids()]
        assert peaks[0] > 0, "the server is gone: no peak to read"
        return max(peaks) * 1024 / 1e6

    def peak_kib(self) -> int:
        """The largest VmHWM of the process started and of its server, now; 0 once gone."""
        return max(status_kib(pid, "VmHWM:") for pid in self.pids())
