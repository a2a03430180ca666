"""A recorded session with the server: the conformance tests drive it like an editor.

`Recorder` is tests/support/stdio.py's client with recording on, the server's requests
answered by policy (`default_answers`, what a well-behaved client answers, with the test's
own on top: `Reply(result=...)`, `Reply(error=...)` or `HOLD`, left unanswered until the test
calls `answer`, or never; a method without a policy gets -32601), and the files of the
workspace written as an editor or agent would (recorded too: the text a position refers to).
Its `frames` are what `tests/support/conformance.py` checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from tests.support.stdio import (
    HOLD,
    Frame,
    Message,
    Policy,
    Reply,
    StdioClient,
    initialize_session,
)

__all__ = ["HOLD", "Frame", "Recorder", "Reply", "default_answers"]


def default_answers(settings: Any = None) -> dict[str, Policy]:
    """What a well-behaved client answers to each request of the server."""

    def configuration(message: Message) -> Reply:
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

    def __post_init__(self) -> None:
        self.policy = {**default_answers(self.settings), **self.answers}
        self.stderr = self.state / "server-stderr.txt"
        self.server = StdioClient(
            self.state, stderr=self.stderr, answers=self._answer, record=True, strict=False
        )

    def _answer(self, message: Message) -> Any:
        policy = self.policy.get(message["method"])
        return policy(message) if policy is not None else Reply(error=(-32601, "no"))

    @property
    def frames(self) -> list[Frame]:
        return self.server.frames

    @property
    def held(self) -> list[Message]:
        return self.server.held

    # ----- the session -----

    def start(self) -> Message:
        """initialize (answered) and initialized; the server's InitializeResult."""
        return initialize_session(
            self.server, [self.root], self.init_options, self.capabilities, timeout=30
        )

    def finish(self) -> int:
        """shutdown, exit; the server's exit code."""
        self.response(self.request("shutdown", None), timeout=30)
        self.notify("exit", None)
        code = self.server.proc.wait(timeout=30)
        self._drain()
        return code

    def close(self) -> None:
        self.server.kill()

    # ----- what the client sends -----

    def send(self, message: Message) -> None:
        self.server.send_message(message)

    def notify(self, method: str, params: Any) -> None:
        self.server.notify(method, params)

    def request(self, method: str, params: Any) -> int:
        return self.server.request(method, params)

    def answer(self, message: Message, reply: Reply) -> None:
        """Answer a request of the server's (one a policy held)."""
        self.server.answer(message, reply)

    def write(self, rel: str, text: str) -> str:
        """Write a file of the workspace as an editor or agent would; its URI."""
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        uri = path.as_uri()
        self.server.note("wrote", uri=uri, text=text)
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

    def received(self, method: str | None = None) -> list[Message]:
        return [
            f.message
            for f in self.frames
            if f.direction == "received"
            and isinstance(f.message, dict)
            and (method is None or f.message.get("method") == method)
        ]

    def response(self, rid: int, timeout: float = 30) -> Message:
        return self.server.answer_to(rid, timeout)

    def pump(self, until: Callable[[], object], timeout: float = 30, what: str = "it") -> None:
        """Read what the server sends, answering its requests, until `until()` holds."""
        self.server.pump(until, timeout, what)

    def pump_for(self, seconds: float) -> None:
        """Read (and answer) whatever the server sends for `seconds`."""
        self.server.pump_for(seconds)

    def stderr_text(self) -> str:
        return self.server.stderr_text()

    def _drain(self) -> None:
        """What the server wrote before it exited."""
        self.server.drain()
