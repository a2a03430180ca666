"""The conformance checker itself, on transcripts made by hand: it passes a conformant one and
names each kind of violation (a checker that cannot fail would prove nothing)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.conformance import check
from tests.support.stdio import Frame

URI = "file:///p/a.py"
LINE = "total = add(1, nope)  # summed 🎉"  # 32 code points, 33 UTF-16 units


class Session:
    """A transcript under construction, in the order the client saw it."""

    def __init__(self, capabilities: dict[str, Any], server: dict[str, Any] | None = None) -> None:
        self.frames: list[Frame] = []
        self.sent(id=1, method="initialize", params={"capabilities": capabilities})
        self.received(id=1, result={"capabilities": server or {"positionEncoding": "utf-16"}})
        self.frames.append(Frame(len(self.frames), "wrote", uri=URI, text=LINE + "\n"))

    def sent(self, **message: Any) -> None:
        self.frames.append(Frame(len(self.frames), "sent", {"jsonrpc": "2.0", **message}))

    def received(self, header: bytes | None = None, **message: Any) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        header = header if header is not None else b"Content-Length: %d" % len(body)
        frame = Frame(len(self.frames), "received", json.loads(body), header, body)
        self.frames.append(frame)

    def publish(self, start: int, end: int, **extra: Any) -> None:
        at = {"start": {"line": 0, "character": start}, "end": {"line": 0, "character": end}}
        diagnostic = {"range": at, "message": "m", "source": "verify", **extra}
        self.received(
            method="textDocument/publishDiagnostics",
            params={"uri": URI, "diagnostics": [diagnostic]},
        )

    def progress(self, kind: str, token: str = "t") -> None:
        value = {"kind": kind, **({"title": "verify"} if kind == "begin" else {})}
        self.received(method="$/progress", params={"token": token, "value": value})


PROGRESS = {"window": {"workDoneProgress": True}}


def test_a_conformant_session_passes() -> None:
    s = Session(PROGRESS)
    s.received(id="c", method="window/workDoneProgress/create", params={"token": "t"})
    s.sent(id="c", result=None)
    s.progress("begin")
    s.progress("report")
    s.progress("end")
    s.publish(0, 33)
    assert check(s.frames) == []


@pytest.mark.parametrize(
    ("header", "why"),
    [(b"Content-Length: 3", "header line"), (b"Content-Length: 99\r\nX-Other: 1", "header")],
)
def test_framing(header: bytes, why: str) -> None:
    s = Session({})
    s.received(header=header, method="window/logMessage", params={"type": 4, "message": "x"})
    assert any(why in v for v in check(s.frames))


def test_a_message_that_does_not_fit_its_type() -> None:
    s = Session({})
    s.received(method="textDocument/publishDiagnostics", params={"uri": URI, "diagnostics": [{}]})
    assert any("is not a PublishDiagnosticsNotification" in v for v in check(s.frames))


def test_progress_before_the_answer_or_after_an_error() -> None:
    s = Session(PROGRESS)
    s.received(id="c", method="window/workDoneProgress/create", params={"token": "t"})
    s.progress("begin")
    s.sent(id="c", result=None)
    s.received(id="d", method="window/workDoneProgress/create", params={"token": "u"})
    s.sent(id="d", error={"code": -1, "message": "no"})
    s.progress("begin", token="u")
    assert check(s.frames) == [
        "#4: $/progress begin before the client answered the create",
        "#8: $/progress begin after the client refused the token",
    ]


def test_progress_to_a_client_without_it() -> None:
    s = Session({})
    s.received(id="c", method="window/workDoneProgress/create", params={"token": "t"})
    s.sent(id="c", result=None)
    s.progress("begin")
    violations = check(s.frames)
    assert any("window/workDoneProgress/create to a client without" in v for v in violations)
    assert any("$/progress to a client without" in v for v in violations)


@pytest.mark.parametrize(
    ("encoding", "end", "why"),
    [
        ("utf-16", 32, "inside a character"),  # code points counted: inside the surrogates
        ("utf-16", 34, "past the end"),
        ("utf-8", 33, "inside a character"),
    ],
)
def test_a_position_off_a_character_boundary(encoding: str, end: int, why: str) -> None:
    offered = {"general": {"positionEncodings": [encoding]}}
    s = Session(offered, {"positionEncoding": encoding})
    s.publish(0, end)
    assert [why in v for v in check(s.frames)] == [True]


def test_related_information_to_a_client_that_does_not_declare_it() -> None:
    s = Session({})
    zero = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    related = [{"location": {"uri": URI, "range": zero}, "message": "r"}]
    s.publish(0, 33, relatedInformation=related)
    assert [("relatedInformation in a push" in v) for v in check(s.frames)] == [True]


def test_code_action_literals_to_a_client_without_literal_support() -> None:
    s = Session({}, {"codeActionProvider": {"codeActionKinds": ["quickfix"]}})
    zero = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    s.sent(
        id=2,
        method="textDocument/codeAction",
        params={"textDocument": {"uri": URI}, "range": zero, "context": {"diagnostics": []}},
    )
    command = {"title": "Run", "command": "verify.runNow"}
    s.received(id=2, result=[command, {"title": "Run", "kind": "quickfix", "command": command}])
    assert check(s.frames) == [
        "codeActionProvider {'codeActionKinds': ['quickfix']} to a client without "
        "codeActionLiteralSupport",
        "#4: CodeAction literal 'Run' without codeActionLiteralSupport",
    ]


def test_a_workspace_pull_without_the_open_documents_version() -> None:
    s = Session({"textDocument": {"diagnostic": {}}})
    item = {"uri": URI, "languageId": "python", "version": 4, "text": LINE}
    s.sent(method="textDocument/didOpen", params={"textDocument": item})
    s.sent(id=2, method="workspace/diagnostic", params={"previousResultIds": []})
    report = {"kind": "full", "uri": URI, "items": [], "version": None}
    s.received(id=2, result={"items": [report]})
    assert check(s.frames) == [f"#5: {URI} at version None; the client has 4"]


def test_requests_the_client_did_not_declare() -> None:
    s = Session({})
    s.received(id="a", method="workspace/configuration", params={"items": []})
    s.received(id="b", method="window/showDocument", params={"uri": URI})
    s.received(id="c", method="workspace/diagnostic/refresh")
    assert len(check(s.frames)) == 3
