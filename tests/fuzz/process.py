"""The server under fuzzing: `python -m lsp_verify` over pipes (its keeper and the server it
forks), a thread that reads and checks everything it writes and answers its requests by the
session's policy, and the scan for what it left behind.

Every process the server starts inherits a marker in its environment, so that what is left
after the session can be found (and killed) whatever its process group or parent.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.procs import cpu_seconds
from tests.support.stdio import StdioClient, read_in_thread, server_env
from tests.support.wire import BadFrame

MARKER_VAR = "LSP_VERIFY_FUZZ_MARK"
# The server's requests whose answer a run or a command may rightly wait for: left unanswered
# by the client's policy, they excuse a command that never returns (until shutdown).
HOLDING = frozenset({"window/showMessageRequest", "workspace/configuration"})


@dataclass
class Received:
    """One message from the server, when it came, and how many writes the client had made."""

    message: dict[str, Any]
    at: float
    writes: int


@dataclass
class Output:
    """What the reader saw, shared with the runner (under `lock`)."""

    messages: list[Received] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # output that is not JSON-RPC 2.0
    unanswered: set[str] = field(default_factory=set)  # HOLDING requests the policy left open
    token: str = "no-token"  # the latest work-done progress token the server created
    closed: bool = False  # stdout reached its end
    lock: threading.Lock = field(default_factory=threading.Lock)


class Server:
    def __init__(self, workdir: Path, policy: dict[str, Any]) -> None:
        self.marker = f"{os.getpid()}-{uuid.uuid4().hex}"
        state = workdir / "state"
        bin_dir = workdir / "bin"
        extra = {
            MARKER_VAR: self.marker,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        }
        self.stderr_path = workdir / "stderr.log"
        self.raw = StdioClient(state, stderr=self.stderr_path, env=server_env(state, extra))
        self.proc = self.raw.proc
        self.policy = policy
        self.output = Output()
        self.writes = 0
        self._write_lock = threading.Lock()
        self._partial = False
        self._held: list[bytes] = []
        self._reader = read_in_thread(self.raw, self._frame, self._bad_header, self._ended)

    # ----- writing -----

    def write(self, data: bytes, partial: bool = False) -> int | None:
        """One write to the server's stdin: its number (writes are counted), or None when
        the pipe is gone. `partial`: the write ends inside a message, so answers to the
        server wait until the next write (a client never cuts into its own message)."""
        with self._write_lock:
            self._partial = partial
            ok = self._write(data)
            number = self.writes
            if not partial:
                held, self._held = self._held, []
                for message in held:
                    self._write(message)
        return number if ok else None

    def _write(self, data: bytes) -> bool:
        self.writes += 1
        try:
            self.raw.send(data)
        except (BrokenPipeError, ValueError, OSError):
            return False
        return True

    def send(self, message: dict[str, Any]) -> int | None:
        body = json.dumps(message).encode()
        return self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def reply(self, message: dict[str, Any]) -> None:
        """An answer to the server's request: written now, or after the message the client
        is in the middle of writing."""
        body = json.dumps(message).encode()
        data = b"Content-Length: %d\r\n\r\n" % len(body) + body
        with self._write_lock:
            if self._partial:
                self._held.append(data)
            else:
                self._write(data)

    def close_stdin(self) -> None:
        with self._write_lock:
            self.raw.close_input()

    # ----- reading -----

    def _frame(self, header: bytes, body: bytes) -> None:
        self._message(body)

    def _bad_header(self, bad: BadFrame) -> None:
        self._problem(f"bad header block {bad.data[:120]!r}")  # nothing after it is trusted

    def _ended(self, pending: bytes) -> None:
        with self.output.lock:
            self.output.closed = True
            if pending.strip():
                self.output.problems.append(f"output ends inside a message: {pending[:80]!r}")

    def _problem(self, text: str) -> None:
        with self.output.lock:
            self.output.problems.append(text)

    def _message(self, body: bytes) -> None:
        try:
            message = json.loads(body.decode("utf-8"))
        except ValueError as exc:
            self._problem(f"a body that is not JSON ({exc}): {body[:120]!r}")
            return
        why = jsonrpc_problem(message)
        if why is not None:
            self._problem(f"{why}: {body[:200]!r}")
            if not isinstance(message, dict):
                return
        with self.output.lock:
            self.output.messages.append(Received(message, time.monotonic(), self.writes))
        if isinstance(message.get("method"), str) and "id" in message:
            self._answer(message)

    def _answer(self, request: dict[str, Any]) -> None:
        """Answer a request of the server's as the policy says for its method."""
        method, rid, params = request["method"], request["id"], request.get("params")
        if method == "window/workDoneProgress/create" and isinstance(params, dict):
            with self.output.lock:
                self.output.token = str(params.get("token"))
        answer = self.policy.get(method) or {"kind": "result", "value": _good(method, params)}
        kind, value = answer.get("kind"), answer.get("value")
        if kind == "each":
            items = params.get("items") if isinstance(params, dict) else None
            value = [value for _ in items] if isinstance(items, list) else [value]
        if kind in ("none", "wrong-id") and method in HOLDING:
            with self.output.lock:
                self.output.unanswered.add(method)
        if kind == "none":
            return
        if kind == "error":
            reply: dict[str, Any] = {"error": {"code": value or -32603, "message": "no"}}
        else:
            reply = {"result": value}
        if kind == "wrong-id":
            rid = f"{rid}-not" if isinstance(rid, str) else rid + 100_000
        message = {"jsonrpc": "2.0", "id": rid, **reply}
        if kind == "late":
            timer = threading.Timer(float(answer.get("delay", 1.0)), self.reply, [message])
            timer.daemon = True
            timer.start()
            return
        self.reply(message)
        if kind == "twice":
            self.reply(message)

    # ----- the processes -----

    def alive(self) -> bool:
        return self.proc.poll() is None

    def server_pids(self) -> list[int]:
        """The keeper, then the server it forked (while they run)."""
        return self.raw.pids() if self.alive() else []

    def cpu(self) -> float:
        try:
            return cpu_seconds(self.server_pids())
        except OSError:
            return 0.0

    def peak_rss_mb(self) -> float:
        try:
            return self.raw.peak_rss_mb() if self.alive() else 0.0
        except AssertionError:
            return 0.0

    def signal(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signum)

    def wait(self, timeout: float) -> int | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            code = self.proc.poll()
            if code is not None:
                return code
            time.sleep(0.02)
        return self.proc.poll()

    def left_behind(self) -> list[int]:
        """Live processes (not zombies) that carry this server's marker."""
        needle = f"{MARKER_VAR}={self.marker}".encode()
        found = []
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) == os.getpid():
                continue
            try:
                with open(f"/proc/{name}/environ", "rb") as handle:
                    if needle not in handle.read().split(b"\0"):
                        continue
                with open(f"/proc/{name}/stat", "rb") as handle:
                    state = handle.read().rsplit(b")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state not in (b"Z", b"X"):
                found.append(int(name))
        return found

    def kill_everything(self) -> None:
        """SIGKILL the keeper, the server and whatever carries the marker; reap the keeper."""
        for pid in [self.proc.pid, *self.left_behind()]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait()
        self.raw.kill()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        self._reader.join(5)

    def stderr_text(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")
        except OSError:
            return ""


def jsonrpc_problem(message: Any) -> str | None:
    """Why a message from the server is not JSON-RPC 2.0 (None when it is)."""
    if not isinstance(message, dict):
        return "not an object"
    if message.get("jsonrpc") != "2.0":
        return "no jsonrpc 2.0"
    if "method" in message:
        if not isinstance(message["method"], str):
            return "a method that is not a string"
        if "id" in message and type(message["id"]) not in (int, str):
            return "a request id that is not a string or an integer"
        if "params" in message and not isinstance(message["params"], (dict, list)):
            return "params that are neither an object nor an array"
        return None
    if "id" not in message or type(message["id"]) not in (int, str, type(None)):
        return "a response id that is not a string, an integer or null"
    if ("result" in message) == ("error" in message):
        return "a response without exactly one of result and error"
    error = message.get("error")
    if error is not None and (
        not isinstance(error, dict)
        or type(error.get("code")) is not int
        or not isinstance(error.get("message"), str)
    ):
        return "an error without an integer code and a string message"
    return None


def _good(method: str, params: Any) -> Any:
    """What a well-behaved client answers."""
    if method == "window/showMessageRequest":
        return {"title": "Run once"}
    if method == "window/showDocument":
        return {"success": True}
    if method == "workspace/configuration":
        items = params.get("items") if isinstance(params, dict) else None
        return [None for _ in items] if isinstance(items, list) else []
    return None


def any_marked() -> list[int]:
    """Live processes that carry the marker of a session this process ran: none once every
    session ended (another fuzzer on the machine has markers of its own)."""
    needle = f"{MARKER_VAR}={os.getpid()}-".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                marked = any(v.startswith(needle) for v in handle.read().split(b"\0"))
            with open(f"/proc/{name}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marked and state not in (b"Z", b"X"):
            found.append(int(name))
    return found
