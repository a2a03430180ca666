"""The one raw LSP client of the tests and the benchmarks: a server process over pipes.

`StdioClient` frames and sends messages or any bytes (never blocked past a deadline), reads
what the server writes with a deadline, and keeps it: `inbox` in order (`read`, `wait`,
`response`, `notification` take from it, dropping what they pass over), every response by id
with the time it came (`answer_to`), and, when `record` is on, every frame both ways with its
raw header (`frames`, what tests/support/conformance.py checks). The server's requests are
answered by `answers`, a policy: a function of the request returning `Reply(...)`, or `HOLD`
to leave it unanswered (in `held`) until the caller answers. Its `Pipe` keeps the server's
stderr in a file and measures the CPU time and memory of the process started and of the
server it forks (on Linux the started one stays behind as the server's keeper).

`read_while_writing` reads (and answers) while a long write waits for the server: a server
that writes while nobody reads would otherwise block, and the writer with it. Off, a write
touches nothing but the input: another thread may read (`read_in_thread`, the fuzzer's).

Standard library only (and tests.support): `benchmarks/` imports it as well.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal

from tests.support.pipe import Pipe
from tests.support.wire import BadFrame, Frames, frame, initialize, sketch

Message = dict[str, Any]
Direction = Literal["sent", "received", "wrote"]
_CHUNK = 1024 * 1024


class NoAnswer(Exception):
    """The server did not say what was awaited."""


class Silent(NoAnswer, TimeoutError):
    """Not within the deadline."""


class Closed(NoAnswer, EOFError):
    """The server closed its output."""


@dataclass
class Frame:
    """One event of a session, in the order the client saw it: a message it `sent`, one it
    `received` (with its raw header and body), or a file it `wrote` (`uri`, `text`)."""

    seq: int
    direction: Direction
    message: Any = None
    header: bytes = b""
    body: bytes = b""
    uri: str = ""
    text: str = ""


@dataclass
class Reply:
    result: Any = None
    error: tuple[int, str] | None = None


HOLD = object()  # a policy's answer: do not answer now
Policy = Callable[[Message], Any]


def server_env(tmp: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment with the XDG state, config and cache folders under `tmp`."""
    env = dict(os.environ)
    for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        folder = tmp / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        env[name] = str(folder)
    env.update(extra or {})
    return env


class StdioClient:
    """`python -m lsp_verify *args` (or `argv`) over pipes, with `server_env(state)` unless
    `env` is given. `strict`: a body that is not JSON raises BadFrame (else it is recorded
    as None); `sketch_over`: bodies larger than this are only sketched (id, method, size);
    `track_peak`: `peak_kib` follows the server's peak memory at every wait."""

    def __init__(
        self,
        state: Path | None = None,
        *args: str,
        argv: list[str] | None = None,
        env: dict[str, str] | None = None,
        cwd: Path | str | None = None,
        stderr: Path | None = None,
        new_session: bool = False,
        answers: Policy | None = None,
        record: bool = False,
        strict: bool = True,
        read_while_writing: bool = False,
        quiet_broken_pipe: bool = False,
        sketch_over: int | None = None,
        track_peak: bool = False,
    ) -> None:
        if env is None:
            assert state is not None, "a state folder, or an environment"
            env = server_env(state)
        argv = argv or [sys.executable, "-m", "lsp_verify", *args]
        self.pipe = Pipe(argv, env, cwd, stderr, new_session)
        self.proc = self.pipe.proc
        self.answers = answers
        self.recording = record
        self.strict = strict
        self.read_while_writing = read_while_writing
        self.quiet_broken_pipe = quiet_broken_pipe
        self.sketch_over = sketch_over
        self.track_peak = track_peak
        self.inbox: deque[Message] = deque()
        self.responses: dict[Any, Message] = {}  # request id -> its response
        self.answered_at: dict[Any, float] = {}  # request id -> when its response came
        self.frames: list[Frame] = []
        self.held: list[Message] = []
        self.peak_kib = 0  # with track_peak: the largest VmHWM seen
        self.decoder = Frames()
        self._outgoing: deque[memoryview] = deque()  # with read_while_writing
        self._next_id = 0
        self._count = 0  # frames received

    @property
    def closed(self) -> bool:
        """The server closed its output."""
        return self.pipe.closed

    @property
    def broken(self) -> bool:
        """The server closed its input."""
        return self.pipe.broken

    # ----- writing -----

    def send(self, data: bytes, timeout: float | None = None) -> None:
        """Write `data` whole (reading meanwhile with `read_while_writing`). BrokenPipeError
        when the server closed its input, unless `quiet_broken_pipe`; Silent past `timeout`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if self.read_while_writing:
            self._outgoing.append(memoryview(data))
            while self._outgoing and not self.broken:
                self._step(deadline, writing=True)
        else:  # only this call's bytes: another thread may be writing or reading
            view = memoryview(data)
            while view and not self.broken:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise Silent("the server read nothing in time")
                if select.select([], [self.pipe.input], [], left)[1]:
                    view = view[self.pipe.write_some(view) :]
        if self.broken and not self.quiet_broken_pipe:
            raise BrokenPipeError("the server closed its input")

    def send_message(self, message: Message, timeout: float | None = None) -> None:
        message = {"jsonrpc": "2.0", **message}
        self.note("sent", message=message)
        body = json.dumps(message).encode()
        self.send(b"Content-Length: %d\r\n\r\n" % len(body) + body, timeout)

    def request(self, method: str, params: Any, timeout: float | None = None) -> int:
        self._next_id += 1
        self.send_message({"id": self._next_id, "method": method, "params": params}, timeout)
        return self._next_id

    def notify(self, method: str, params: Any = None, timeout: float | None = None) -> None:
        message = {"method": method, **({} if params is None else {"params": params})}
        self.send_message(message, timeout)

    def answer(self, message: Message, reply: Reply) -> None:
        """Answer a request of the server's (one a policy held, or any)."""
        if message in self.held:
            self.held.remove(message)
        self.send_message(_response(message, reply))

    # ----- reading -----

    def read(self, timeout: float = 20) -> Message:
        """The next message, in order."""
        self.pump(lambda: self.inbox, timeout, "a message")
        return self.inbox.popleft()

    def wait(self, match: Callable[[Message], bool], timeout: float = 20) -> Message:
        """The next message `match` accepts; those before it are dropped."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.read(max(0.0, deadline - time.monotonic()))
            if match(message):
                return message

    def response(self, rid: Any, timeout: float = 20) -> Message:
        """The response to request `rid`, read in order (the messages before it dropped)."""
        return self.wait(lambda m: m.get("id") == rid and "method" not in m, timeout)

    def notification(self, method: str, timeout: float = 20) -> Message:
        return self.wait(lambda m: m.get("method") == method, timeout)

    def answer_to(self, rid: Any, timeout: float = 30) -> Message:
        """The response to request `rid`, whenever it came; the inbox is left as it is."""
        self.pump(lambda: rid in self.responses, timeout, f"the response to request {rid}")
        return self.responses[rid]

    def pump(self, until: Callable[[], object], timeout: float = 30, what: str = "it") -> None:
        """Read (and answer) what the server sends until `until()` holds."""
        deadline = time.monotonic() + timeout
        while not until():
            if self.closed:
                raise Closed(f"the server closed its output before {what}")
            if time.monotonic() >= deadline:
                raise Silent(f"timed out after {timeout}s waiting for {what}")
            self._step(deadline, writing=self.read_while_writing)

    def pump_for(self, seconds: float) -> None:
        """Read (and answer) whatever the server sends for `seconds`."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self.closed:
            with contextlib.suppress(Silent):
                self._step(deadline, writing=self.read_while_writing)

    def drain(self) -> None:
        """Read what the server wrote, until it closed its output or sent nothing for 50 ms."""
        while True:
            try:
                self.pump(lambda before=self._count: self._count > before, 0.05, "more")
            except NoAnswer:
                return

    @property
    def buffer(self) -> bytes:
        """What was read and is not a whole message yet."""
        return self.decoder.pending

    def _step(self, deadline: float | None, writing: bool) -> None:
        """Wait (until `deadline`) for the output to be readable or (`writing`) the input
        writable, and read or write what can be."""
        if self.track_peak:
            self.sample_peak()
        writing = writing and bool(self._outgoing) and not self.broken
        readers = [] if self.closed else [self.pipe.output]
        writers = [self.pipe.input] if writing else []
        if not readers and not writers:
            raise Closed("the server closed its output")
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            raise Silent("the server said nothing in time")
        readable, writable, _ = select.select(readers, writers, [], left)
        while writable and self._outgoing and not self.broken:
            view = self._outgoing[0]
            written = self.pipe.write_some(view)
            if written == 0:
                break
            if written == len(view):
                self._outgoing.popleft()
            else:
                self._outgoing[0] = view[written:]
        if self.broken:
            self._outgoing.clear()
        if readable:
            for header, body in self.decoder.feed(self.pipe.read_some()):
                self._received(header, body)

    def _received(self, header: bytes, body: bytes) -> None:
        message: Any
        if self.sketch_over is not None and len(body) > self.sketch_over:
            message = sketch(body)
        else:
            try:
                message = json.loads(body.decode("utf-8"))
            except ValueError:
                if self.strict:
                    raise BadFrame("a body that is not JSON in UTF-8", body) from None
                message = None
        self._count += 1
        self.note("received", message=message, header=header, body=body)
        if not isinstance(message, dict):
            return
        if "id" in message and "method" not in message:
            self.responses.setdefault(message["id"], message)
            self.answered_at.setdefault(message["id"], time.monotonic())
        elif "id" in message and self.answers is not None:
            reply = self.answers(message)
            if reply is HOLD:
                self.held.append(message)
            elif self.read_while_writing:  # behind the write under way, if one is
                response = {"jsonrpc": "2.0", **_response(message, reply)}
                self.note("sent", message=response)
                self._outgoing.append(memoryview(frame(response)))
            else:
                self.answer(message, reply)
        self.inbox.append(message)

    def note(self, direction: Direction, **what: Any) -> None:
        """Record an event of the session (`record` on)."""
        if self.recording:
            self.frames.append(Frame(len(self.frames), direction, **what))

    # ----- the session -----

    def started(self, root: Path, **init: Any) -> StdioClient:
        """initialize (id 1, answered) and initialized, as raw frames (see wire.initialize)."""
        self.send(initialize(root, **init) + frame({"method": "initialized", "params": {}}))
        assert "capabilities" in self.response(1)["result"]
        return self

    def finish(self, shutdown: bool = True) -> int:
        """shutdown (id 99, answered null) unless told not to, exit; the exit code."""
        if shutdown:
            self.send(frame({"id": 99, "method": "shutdown"}))
            assert self.response(99)["result"] is None
        self.send(frame({"method": "exit"}))
        return self.proc.wait(timeout=20)

    def kill(self) -> None:
        self.pipe.kill()

    def close_input(self) -> None:
        """The end of the server's input (its stdin closed)."""
        self.pipe.close_input()

    def stderr_text(self) -> str:
        return self.pipe.stderr_text()

    def pids(self) -> list[int]:
        return self.pipe.pids()

    def sample_peak(self) -> None:
        """`peak_kib`: the largest VmHWM of the server (and its keeper) seen so far."""
        self.peak_kib = max(self.peak_kib, self.pipe.peak_kib())

    def cpu_seconds(self) -> float:
        return self.pipe.cpu_seconds()

    def peak_rss_mb(self) -> float:
        return self.pipe.peak_rss_mb()


def _response(request: Message, reply: Reply) -> Message:
    if reply.error is not None:
        code, text = reply.error
        return {"id": request["id"], "error": {"code": code, "message": text}}
    return {"id": request["id"], "result": reply.result}


def read_in_thread(
    client: StdioClient,
    on_frame: Callable[[bytes, bytes], None],
    on_bad: Callable[[BadFrame], None],
    on_end: Callable[[bytes], None],
) -> threading.Thread:
    """Read the client's output in a thread of its own, handing over each frame (header,
    body); a bad header block drops what is pending; at the end, `on_end` gets what was left.
    Nothing else may read then (`read_while_writing` off, no read, wait or pump)."""
    assert not client.read_while_writing

    def loop() -> None:
        while True:
            chunk = client.pipe.read_some()
            if not chunk:
                on_end(client.decoder.pending)
                return
            try:
                frames = client.decoder.feed(chunk)
            except BadFrame as bad:
                client.decoder.reset()
                on_bad(bad)
                continue
            for header, body in frames:
                on_frame(header, body)

    thread = threading.Thread(target=loop, name="stdio-reader", daemon=True)
    thread.start()
    return thread


def initialize_session(
    client: StdioClient, folders: list[Path], options: Any = None, capabilities: Any = None,
    timeout: float = 30,
) -> Message:  # fmt: skip
    """initialize (answered within `timeout`) then initialized; the InitializeResult.
    The session benchmarks/ and the recorder open."""
    params = {
        "processId": os.getpid(),
        "rootUri": folders[0].as_uri(),
        "workspaceFolders": [{"uri": f.as_uri(), "name": f.name} for f in folders],
        "capabilities": capabilities,
        "initializationOptions": options,
    }
    result: Message = client.answer_to(client.request("initialize", params, timeout), timeout)
    client.notify("initialized", {}, timeout)
    return result["result"]


def stop(client: StdioClient, shutdown: bool = True, timeout: float = 3.0) -> None:
    """shutdown and exit within `timeout`, else SIGKILL (to its group, when the server
    leads one); the pipes closed."""
    deadline = time.monotonic() + timeout
    try:
        if shutdown and not client.closed and not client.broken:
            rid = client.request("shutdown", None, timeout)
            client.answer_to(rid, max(0.0, deadline - time.monotonic()))
        if not client.closed and not client.broken:
            client.notify("exit", None, max(0.0, deadline - time.monotonic()))
        client.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
    except (NoAnswer, OSError, subprocess.TimeoutExpired):
        pass
    if client.track_peak:
        client.sample_peak()
    client.pipe.kill(group=True)
