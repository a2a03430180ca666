"""A client that drives `python -m lsp_verify` over stdio and records every frame both ways.

What it records is what `tests/support/conformance.py` checks: the raw header and body of each frame
the server wrote (so framing is checked too), each message the client sent, and the files
the client wrote (the text a position refers to). The server's requests are answered by
policy: a function per method returning `Reply(result=...)`, `Reply(error=...)` or `HOLD`
(left unanswered until the test calls `answer`, or never).
"""

from __future__ import annotations

import json
import os
import select
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

from tests.support.raw_client import RawServer

Direction = Literal["sent", "received", "wrote"]


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
Policy = Callable[[dict[str, Any]], Any]


def default_answers(settings: Any = None) -> dict[str, Policy]:
    """What a well-behaved client answers to each request of the server."""

    def configuration(message: dict[str, Any]) -> Reply:
        return Reply([settings] * len(message["params"]["items"]))

    return {
        "window/workDoneProgress/create": lambda m: Reply(None),
        "workspace/configuration": configuration,
        "client/registerCapability": lambda m: Reply(None),
        "window/showDocument": lambda m: Reply({"success": True}),
        "workspace/diagnostic/refresh": lambda m: Reply(None),
        "window/showMessageRequest": lambda m: Reply(None),
    }


@dataclass
class Recorder:
    """A session with the server: `start`, drive it, `finish`; `frames` is the transcript."""

    root: Path
    state: Path
    capabilities: dict[str, Any]
    init_options: Any = None
    settings: Any = None
    answers: dict[str, Policy] = field(default_factory=dict)
    frames: list[Frame] = field(default_factory=list)
    held: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.policy = {**default_answers(self.settings), **self.answers}
        self.stderr = self.state / "server-stderr.txt"
        self.server = RawServer(self.state, stderr=self.stderr)
        self._next_id = 0

    # ----- the session -----

    def start(self) -> dict[str, Any]:
        """initialize (answered) and initialized; the server's InitializeResult."""
        rid = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": self.root.as_uri(),
                "workspaceFolders": [{"uri": self.root.as_uri(), "name": self.root.name}],
                "capabilities": self.capabilities,
                "initializationOptions": self.init_options,
            },
        )
        result: dict[str, Any] = self.response(rid, timeout=30)["result"]
        self.notify("initialized", {})
        return result

    def finish(self) -> int:
        """shutdown, exit; the server's exit code."""
        rid = self.request("shutdown", None)
        self.response(rid, timeout=30)
        self.notify("exit", None)
        code = self.server.proc.wait(timeout=30)
        self._drain()
        return code

    def close(self) -> None:
        self.server.kill()

    # ----- what the client sends -----

    def send(self, message: dict[str, Any]) -> None:
        message = {"jsonrpc": "2.0", **message}
        self._record("sent", message=message)
        body = json.dumps(message).encode()
        self.server.send(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, **({} if params is None else {"params": params})})

    def request(self, method: str, params: Any) -> int:
        self._next_id += 1
        self.send({"id": self._next_id, "method": method, "params": params})
        return self._next_id

    def answer(self, message: dict[str, Any], reply: Reply) -> None:
        """Answer a request of the server's (one a policy held)."""
        if message in self.held:
            self.held.remove(message)
        if reply.error is not None:
            code, text = reply.error
            self.send({"id": message["id"], "error": {"code": code, "message": text}})
        else:
            self.send({"id": message["id"], "result": reply.result})

    def write(self, rel: str, text: str) -> str:
        """Write a file of the workspace as an editor or agent would; its URI."""
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        uri = path.as_uri()
        self._record("wrote", uri=uri, text=text)
        return uri

    def save(self, rel: str, text: str | None = None) -> str:
        uri = self.write(rel, text) if text is not None else (self.root / rel).as_uri()
        self.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        return uri

    def open(self, rel: str, version: int, language: str = "python") -> str:
        path = self.root / rel
        uri = path.as_uri()
        item = {"uri": uri, "languageId": language, "version": version, "text": path.read_text()}
        self.notify("textDocument/didOpen", {"textDocument": item})
        return uri

    def change(self, uri: str, version: int, text: str) -> None:
        """A whole-text change (any client may send one under incremental sync)."""
        self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
        )

    # ----- what the server sends -----

    def received(self, method: str | None = None) -> list[dict[str, Any]]:
        return [
            f.message
            for f in self.frames
            if f.direction == "received"
            and isinstance(f.message, dict)
            and (method is None or f.message.get("method") == method)
        ]

    def response(self, rid: int, timeout: float = 30) -> dict[str, Any]:
        def answered() -> dict[str, Any] | None:
            for message in self.received():
                if message.get("id") == rid and "method" not in message:
                    return message
            return None

        self.pump(lambda: answered() is not None, timeout, f"the response to request {rid}")
        found = answered()
        assert found is not None
        return found

    def pump(self, until: Callable[[], object], timeout: float = 30, what: str = "it") -> None:
        """Read what the server sends, answering its requests, until `until()` holds."""
        deadline = time.monotonic() + timeout
        while not until():
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out after {timeout}s waiting for {what}")
            self._read_one(min(left, 0.2))

    def pump_for(self, seconds: float) -> None:
        """Read (and answer) whatever the server sends for `seconds`."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            self._read_one(left)

    def stderr_text(self) -> str:
        return self.stderr.read_text(errors="replace") if self.stderr.exists() else ""

    def _drain(self) -> None:
        """What the server wrote before it exited."""
        try:
            while self._read_one(0.05):
                pass
        except EOFError:
            pass

    def _read_one(self, timeout: float) -> bool:
        """One frame, if one comes within `timeout`; answers it when it is a request."""
        frame = self._frame(timeout)
        if frame is None:
            return False
        header, body = frame
        try:
            message = json.loads(body.decode("utf-8"))
        except ValueError:
            message = None
        self._record("received", message=message, header=header, body=body)
        if isinstance(message, dict) and "method" in message and "id" in message:
            policy = self.policy.get(message["method"])
            reply = policy(message) if policy is not None else Reply(error=(-32601, "no"))
            if reply is HOLD:
                self.held.append(message)
            else:
                self.answer(message, reply)
        return True

    def _frame(self, timeout: float) -> tuple[bytes, bytes] | None:
        server = self.server
        assert server.proc.stdout is not None
        fd = server.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while True:
            end = server.buffer.find(b"\r\n\r\n")
            if end >= 0:
                header = server.buffer[:end]
                length = _content_length(header)
                if len(server.buffer) >= end + 4 + length:
                    body = server.buffer[end + 4 : end + 4 + length]
                    server.buffer = server.buffer[end + 4 + length :]
                    return header, body
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                raise EOFError("the server closed its output")
            server.buffer += chunk

    def _record(self, direction: Direction, **what: Any) -> None:
        self.frames.append(Frame(len(self.frames), direction, **what))


def _content_length(header: bytes) -> int:
    for line in header.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    raise AssertionError(f"a frame without Content-Length: {header!r}")
