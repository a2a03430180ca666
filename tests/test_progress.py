"""A run's work-done progress against a real VerifyServer and its transport, no process: what
goes out on the token before, after and without the client's answer to its create (SPEC
section 5), and what the server keeps of the token once the run has ended."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from lsp_verify.progress import RunProgress
from lsp_verify.server import VerifyServer


class Writer:
    """The client's end of stdout: every message the server wrote."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        self.messages.append(json.loads(data.partition(b"\r\n\r\n")[2]))

    def close(self) -> None:
        pass


@pytest.fixture
def server() -> tuple[VerifyServer, Writer]:
    ls = VerifyServer()
    writer = Writer()
    ls.protocol.set_writer(writer)
    return ls, writer


def answer(ls: VerifyServer, rid: Any, error: bool = False) -> None:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
    body.update({"error": {"code": -32603, "message": "no"}} if error else {"result": None})
    assert ls.transport.dispatch(json.dumps(body).encode())


def on_token(writer: Writer, token: str) -> list[dict[str, Any]]:
    return [
        m["params"]["value"]
        for m in writer.messages
        if m.get("method") == "$/progress" and m["params"]["token"] == token
    ]


def kept(ls: VerifyServer, progress: RunProgress) -> list[str]:
    """What the server still holds for the token and its create request."""
    rid = f"{progress.token}-create"
    held = {
        "tokens": progress.token in ls.work_done_progress.tokens,
        "cancels": progress.token in ls.cancels,
        "request": rid in ls.protocol._request_futures,
        "result type": rid in ls.protocol._result_types,
    }
    return [name for name, there in held.items() if there]


async def test_the_token_is_used_once_the_client_answered(
    server: tuple[VerifyServer, Writer],
) -> None:
    ls, writer = server
    progress = RunProgress(ls, "make test", asyncio.Event())
    (create,) = writer.messages
    assert create["method"] == "window/workDoneProgress/create"
    progress.line("compiling")
    progress.line("testing")
    assert on_token(writer, progress.token) == []  # the command runs; its progress waits
    answer(ls, create["id"])
    begin, report = on_token(writer, progress.token)
    assert begin == {
        "kind": "begin",
        "title": "verify",
        "message": "make test",
        "cancellable": True,
    }
    assert report == {"kind": "report", "message": "testing", "cancellable": True}
    assert progress.token in ls.work_done_progress.tokens  # pygls' cancel handler finds it
    progress.end("failed")
    assert on_token(writer, progress.token)[-1] == {"kind": "end", "message": "failed"}
    assert kept(ls, progress) == []


async def test_an_error_answer_silences_the_token(server: tuple[VerifyServer, Writer]) -> None:
    ls, writer = server
    progress = RunProgress(ls, "make test", asyncio.Event())
    progress.line("compiling")
    answer(ls, writer.messages[0]["id"], error=True)
    progress.line("testing")
    progress.end("passed")
    assert on_token(writer, progress.token) == []
    assert kept(ls, progress) == []


async def test_a_run_that_ends_unanswered_forgets_its_request(
    server: tuple[VerifyServer, Writer],
) -> None:
    # A client that never answers costs nothing per run; one that answers late answers
    # no request, and nothing is sent on the token.
    ls, writer = server
    progress = RunProgress(ls, "make test", asyncio.Event())
    progress.line("compiling")
    progress.end("failed")
    assert kept(ls, progress) == []
    answer(ls, writer.messages[0]["id"])
    assert on_token(writer, progress.token) == []
    assert kept(ls, progress) == []


async def test_shutdown_cancelling_the_open_create_is_quiet(
    server: tuple[VerifyServer, Writer], caplog: pytest.LogCaptureFixture
) -> None:
    # pygls cancels every open request of the server's at shutdown; the run is killed after.
    ls, writer = server
    progress = RunProgress(ls, "make test", asyncio.Event())
    with caplog.at_level(logging.DEBUG):
        for future in list(ls.protocol._request_futures.values()):
            future.cancel()
        ls.verify.closing = True
        progress.line("compiling")
        progress.end("cancelled")
    assert on_token(writer, progress.token) == []
    assert kept(ls, progress) == []
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
