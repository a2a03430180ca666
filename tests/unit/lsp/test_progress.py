"""A run's work-done progress against a real VerifyServer and its transport, no process: what
goes out on the token before, after and without the client's answer to its create (SPEC
section 5), and what the server keeps of the token once the run has ended."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from lsp_verify.lsp.progress import RunProgress
from lsp_verify.lsp.server import VerifyServer


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
    held = {
        "cancels": progress.token in ls.cancels,
        "request": len(ls.transport.outgoing) > 0,
        "pygls request": bool(ls.protocol._request_futures),
        "pygls result type": bool(ls.protocol._result_types),
    }
    return [name for name, there in held.items() if there]


async def turns() -> None:
    """The loop turns in which an answer reaches the progress that waits for it."""
    for _ in range(5):
        await asyncio.sleep(0)


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
    await turns()
    begin, report = on_token(writer, progress.token)
    assert begin == {
        "kind": "begin",
        "title": "verify",
        "message": "make test",
        "cancellable": True,
    }
    assert report == {"kind": "report", "message": "testing", "cancellable": True}
    # The client's cancel of the token cancels the run.
    ls.transport.lifecycle.initialize_seen = True
    cancel = {"token": progress.token}
    assert ls.transport.dispatch(
        json.dumps(
            {"jsonrpc": "2.0", "method": "window/workDoneProgress/cancel", "params": cancel}
        ).encode()
    )
    assert ls.cancels[progress.token].is_set()
    progress.end("failed")
    assert on_token(writer, progress.token)[-1] == {"kind": "end", "message": "failed"}
    assert kept(ls, progress) == []


async def test_an_error_answer_silences_the_token(server: tuple[VerifyServer, Writer]) -> None:
    ls, writer = server
    progress = RunProgress(ls, "make test", asyncio.Event())
    progress.line("compiling")
    answer(ls, writer.messages[0]["id"], error=True)
    await turns()
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
    create = writer.messages[0]
    progress.line("compiling")
    progress.end("failed")
    await turns()
    assert kept(ls, progress) == []
    # The client is told the create needs no answer any more.
    withdrawn = [m for m in writer.messages if m.get("method") == "$/cancelRequest"]
    assert [m["params"]["id"] for m in withdrawn] == [create["id"]]
    answer(ls, create["id"])
    await turns()
    assert on_token(writer, progress.token) == []
    assert kept(ls, progress) == []


async def test_shutdown_cancelling_the_open_create_is_quiet(
    server: tuple[VerifyServer, Writer], caplog: pytest.LogCaptureFixture
) -> None:
    # Shutdown gives up every request of the server's; the run is killed after.
    ls, writer = server
    progress = RunProgress(ls, "make test", asyncio.Event())
    with caplog.at_level(logging.DEBUG):
        ls.transport.outgoing.stop()
        ls.state.closing = True
        await turns()
        progress.line("compiling")
        progress.end("cancelled")
        await turns()
    assert on_token(writer, progress.token) == []
    assert kept(ls, progress) == []
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
