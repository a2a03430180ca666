"""A client that speaks to `python -m lsp_verify` in raw bytes: framing, nonsense, floods.

For tests of what a well-behaved client library never sends. The server's stderr can be kept
in a file (`stderr=`) to check what it logged.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.support.lsp_session import server_env
from tests.support.procs import cpu_seconds


def frame(message: dict[str, Any], header: str = "Content-Length") -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return f"{header}: {len(body)}\r\n\r\n".encode() + body


def initialize(
    root: Path, rid: int = 1, options: dict[str, Any] | None = None, capabilities: Any = None
) -> bytes:
    return frame(
        {
            "id": rid,
            "method": "initialize",
            "params": {
                "processId": None,
                "rootUri": root.as_uri(),
                "capabilities": capabilities or {},
                "initializationOptions": options
                or {"command": "touch ran.txt; exit 1", "confirm": "never"},
            },
        }
    )


def did_save(uri: str) -> bytes:
    return frame({"method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}})


def show_last_run(rid: int) -> bytes:
    """A cheap request every server state answers."""
    return frame(
        {
            "id": rid,
            "method": "workspace/executeCommand",
            "params": {"command": "verify.showLastRun", "arguments": []},
        }
    )


class RawServer:
    """`python -m lsp_verify` over pipes, read with a deadline."""

    def __init__(
        self,
        state: Path,
        *args: str,
        stderr: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.stderr_path = stderr
        self._stderr = open(stderr, "wb") if stderr is not None else None  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lsp_verify", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr or subprocess.DEVNULL,
            env=env if env is not None else server_env(state),
        )
        self.buffer = b""

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def read(self, timeout: float = 20) -> dict[str, Any]:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end >= 0:
                headers = dict(line.split(b":", 1) for line in self.buffer[:end].split(b"\r\n"))
                length = int(headers[b"Content-Length"])
                if len(self.buffer) >= end + 4 + length:
                    body = self.buffer[end + 4 : end + 4 + length]
                    self.buffer = self.buffer[end + 4 + length :]
                    message: dict[str, Any] = json.loads(body)
                    return message
            left = deadline - time.monotonic()
            fd = self.proc.stdout.fileno()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError("the server said nothing")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise EOFError("the server closed its output")
            self.buffer += chunk

    def response(self, rid: int, timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = self.read(max(0.0, deadline - time.monotonic()))
            if message.get("id") == rid and "method" not in message:
                return message

    def notification(self, method: str, timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = self.read(max(0.0, deadline - time.monotonic()))
            if message.get("method") == method:
                return message

    def started(self, root: Path, **init: Any) -> RawServer:
        """initialize (answered) and initialized."""
        self.send(initialize(root, **init) + frame({"method": "initialized", "params": {}}))
        assert "capabilities" in self.response(1)["result"]
        return self

    def peak_rss_mb(self) -> float:
        """The server's peak resident memory so far (VmHWM), in MB: of the process started,
        or of its lsp_verify child where the started one stays behind as a keeper."""
        peaks = [_peak_rss_mb(p) for p in self._pids()]
        assert peaks[0] > 0, "the server is gone: no peak to read"
        return max(peaks)

    def cpu_seconds(self) -> float:
        """The CPU time the server has used so far, its keeper's included (see procs)."""
        return cpu_seconds(self._pids())

    def _pids(self) -> list[int]:
        """The process started, then its lsp_verify children (the server, where the started
        one stays behind as a keeper)."""
        pid = self.proc.pid
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

    def stderr_text(self) -> str:
        assert self.stderr_path is not None
        return self.stderr_path.read_text(errors="replace")

    def finish(self, shutdown: bool = True) -> int:
        if shutdown:
            self.send(frame({"id": 99, "method": "shutdown"}))
            assert self.response(99)["result"] is None
        self.send(frame({"method": "exit"}))
        return self.proc.wait(timeout=20)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self._stderr is not None:
            self._stderr.close()


def _peak_rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024 / 1e6
    except OSError:
        pass
    return 0.0
