"""The server's stdio transport, byte by byte: framing, nonsense from a client, exit codes.

These drive `python -m lsp_verify` with raw bytes rather than through pytest-lsp, because
what they check is exactly what a well-behaved client library never sends.
"""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lsp_verify.lsp.framing import Framing
from lsp_verify.lsp.transport import _CancelRaceAtDebug
from tests.support.lsp_session import server_env
from tests.support.raw_client import RawServer, did_save, frame, initialize, show_last_run


@pytest.fixture
def raw(state: Path) -> Any:
    servers: list[RawServer] = []

    def start(*args: str) -> RawServer:
        server = RawServer(state, *args)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.kill()


def test_messages_split_anywhere_and_sent_together_are_all_read(raw: Any, project: Path) -> None:
    server = raw()
    data = initialize(project) + frame({"method": "initialized", "params": {}})
    for i in range(0, len(data), 7):  # a few bytes at a time, headers and bodies cut anywhere
        server.send(data[i : i + 7])
    assert "capabilities" in server.response(1)["result"]
    # Two requests in one write, one with its header in another case and a Content-Type.
    both = frame({"id": 2, "method": "workspace/executeCommand", "params": {"command": "x"}})
    typed = json.dumps(
        {"jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand", "params": {}}
    ).encode()
    both += (
        f"content-length: {len(typed)}\r\n"
        "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
    ).encode() + typed
    server.send(both)
    assert "error" in server.response(2)
    assert "error" in server.response(3)
    assert server.finish() == 0


def test_nonsense_from_the_client_is_survived(raw: Any, project: Path) -> None:
    server = raw()
    server.send(initialize(project) + frame({"method": "initialized", "params": {}}))
    server.response(1)
    nonsense = [
        b"Content-Length: 9\r\n\r\nnot json!",
        b"Content-Length: abc\r\n\r\n",
        b"X-Nothing: 1\r\n\r\n",
        b"Content-Length: 5\r\n\r\n[1,2]",
        frame({"method": "textDocument/didSave", "params": {}}),
        frame({"method": "textDocument/didSave", "params": {"textDocument": {"uri": 42}}}),
        frame({"method": "textDocument/didSave"}),
        frame({"method": "textDocument/didSave", "params": {"textDocument": {"uri": "http://x/"}}}),
        frame({"method": "textDocument/didSave", "params": {"x": "y"}}),
        b"Content-Length: 2\r\n\r\n{}",
    ]
    for data in nonsense:
        server.send(data)
    # Still there, and still running saves.
    server.send(did_save((project / "a.txt").as_uri()))
    published = server.notification("textDocument/publishDiagnostics")
    assert published["params"]["uri"] == (project / "a.txt").as_uri()
    assert published["params"]["diagnostics"][0]["message"].startswith("verify failed (exit 1)")
    assert (project / "ran.txt").exists()
    assert server.finish() == 0


def test_a_save_after_shutdown_runs_nothing(raw: Any, project: Path) -> None:
    server = raw()
    server.send(initialize(project) + frame({"method": "initialized", "params": {}}))
    server.response(1)
    server.send(frame({"id": 2, "method": "shutdown"}) + did_save((project / "a.txt").as_uri()))
    assert server.response(2)["result"] is None
    time.sleep(0.5)
    assert not (project / "ran.txt").exists()
    assert server.finish(shutdown=False) == 0


def test_exit_without_shutdown_exits_1(raw: Any, project: Path) -> None:
    server = raw()
    server.send(initialize(project))
    server.response(1)
    assert server.finish(shutdown=False) == 1


@pytest.mark.parametrize("args", [("--stdio",), ("serve", "--stdio"), ("serve",)])
def test_editors_may_pass_stdio(raw: Any, project: Path, args: tuple[str, ...]) -> None:
    server = raw(*args)
    server.send(initialize(project))
    assert "capabilities" in server.response(1)["result"]
    assert server.finish() == 0


def test_a_cancel_for_an_answered_request_is_no_warning(
    state: Path, project: Path, tmp_path: Path
) -> None:
    """Cancelling a request already answered is a race LSP expects: nothing on stderr, which
    editors show as errors."""
    server = RawServer(state, stderr=tmp_path / "stderr.log")
    try:
        server.started(project)
        server.send(show_last_run(2))
        server.response(2)
        server.send(frame({"method": "$/cancelRequest", "params": {"id": 2}}) + show_last_run(3))
        server.response(3)
        assert server.finish() == 0
    finally:
        server.kill()
    assert "Cancel notification" not in server.stderr_text(), server.stderr_text()


def test_only_that_warning_of_pygls_is_lowered() -> None:
    def record(message: str, *args: object) -> logging.LogRecord:
        made = logging.LogRecord("pygls", logging.WARNING, __file__, 1, message, args, None)
        assert _CancelRaceAtDebug().filter(made)
        return made

    assert record('Cancel notification for unknown message id "%s"', "10").levelno == logging.DEBUG
    assert record("Unknown message: %s", "x").levelno == logging.WARNING
    assert record('Cancelled request with id "%s"', "10").levelno == logging.WARNING


def test_stdin_from_a_regular_file(state: Path, project: Path, tmp_path: Path) -> None:
    """A stdin the event loop cannot watch is read through a thread."""
    messages = tmp_path / "messages.bin"
    messages.write_bytes(
        initialize(project)
        + frame({"method": "initialized", "params": {}})
        + frame({"id": 2, "method": "shutdown"})
        + frame({"method": "exit"})
    )
    with open(messages, "rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "lsp_verify"],
            stdin=stdin,
            capture_output=True,
            env=server_env(state),
            timeout=30,
        )
    assert done.returncode == 0
    assert b'"capabilities"' in done.stdout
    assert b'"id": 2' in done.stdout or b'"id":2' in done.stdout


def test_stdin_from_dev_null_is_the_end_of_input_at_once(state: Path) -> None:
    """/dev/null as stdin (a launcher or a health check that gives no input): the server sees
    the end of its input and exits, rather than hanging after a traceback."""
    done = subprocess.run(
        [sys.executable, "-m", "lsp_verify"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=server_env(state),
        timeout=30,
    )
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
    assert done.returncode == 0, done  # as when a pipe ends


class _Recorder:
    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    def dispatch(self, body: bytes) -> None:
        self.bodies.append(body)


async def test_framing_hands_over_whole_bodies_in_order() -> None:
    recorder = _Recorder()
    closed: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
    framing = Framing(recorder, closed)  # type: ignore[arg-type]
    stream = b"".join(
        f"Content-Length: {len(b)}\r\n\r\n".encode() + b for b in (b"{}", b"", b"x" * 70000)
    )
    stream += b"Content-Length: -3\r\n\r\nContent-Length: 1\r\n\r\n1"
    for i in range(0, len(stream), 4096):
        framing.data_received(stream[i : i + 4096])
    assert recorder.bodies == [b"{}", b"", b"x" * 70000, b"1"]
    framing.data_received(b"y" * (Framing.MAX_HEADER + 1))  # headers that never end
    framing.data_received(b"Content-Length: 2\r\n\r\nok")
    assert recorder.bodies[-1] == b"ok"
    framing.eof_received()
    assert closed.done() and closed.result() is None


def test_stdin_and_stdout_one_socket(state: Path, project: Path) -> None:
    """A socket that is both stdin and stdout (an editor connecting one end of a socketpair)
    stays blocking; the process still exits on `exit` while the client keeps it open."""
    import socket

    ours, theirs = socket.socketpair()
    with ours, theirs:
        proc = subprocess.Popen(
            [sys.executable, "-m", "lsp_verify"],
            stdin=theirs.fileno(),
            stdout=theirs.fileno(),
            stderr=subprocess.DEVNULL,
            env=server_env(state),
        )
        try:
            ours.sendall(initialize(project))
            ours.settimeout(20)
            received = b""
            while b'"capabilities"' not in received:
                chunk = ours.recv(65536)
                assert chunk, "the server closed the socket"
                received += chunk
            ours.sendall(frame({"id": 2, "method": "shutdown"}) + frame({"method": "exit"}))
            assert proc.wait(timeout=20) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


class _JsonRecorder(_Recorder):
    """Says, as the server does, whether a body was JSON."""

    def dispatch(self, body: bytes) -> bool:  # type: ignore[override]
        self.bodies.append(bytes(body))
        try:
            json.loads(body)
        except ValueError:
            return False
        return True


@pytest.mark.parametrize("step", [1, 7, 4096])
async def test_framing_survives_lies_cut_anywhere(step: int) -> None:
    """Bad lengths, junk and an oversize body, handed over `step` bytes at a time: every
    good message after them comes through whole, and the oversize body is never held."""
    recorder = _JsonRecorder()
    closed: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
    framing = Framing(recorder, closed)  # type: ignore[arg-type]
    good = [json.dumps({"n": i}).encode() for i in range(7)]

    def ok(i: int) -> bytes:
        return b"Content-Length: %d\r\n\r\n" % len(good[i]) + good[i]

    lies = (
        b"Content-Length: 3\r\n\r\n"
        + good[0]  # shorter than the body
        + ok(1)
        + b"Content-Length: %d\r\n\r\n" % (len(good[2]) + 10)
        + good[2]  # longer: eats
        + ok(3)  # the start of this header
        + b"Content-Length: -4\r\n\r\n{}junk"
        + ok(4)
        + b"Content-Length: 9\r\n\r\nnot json!"
        + ok(5)
        + b"Content-Length: %d\r\n\r\n" % (Framing.MAX_BODY + 1)
    )
    oversize = b"x" * (Framing.MAX_BODY + 1) + ok(6)
    held = 0
    for i in range(0, len(lies), step):
        framing.data_received(lies[i : i + step])
        held = max(held, len(framing._buffer))
    for i in range(0, len(oversize), 65536):
        framing.data_received(oversize[i : i + 65536])
        held = max(held, len(framing._buffer))
    assert [b for b in recorder.bodies if b in good] == [good[i] for i in (1, 3, 4, 5, 6)]
    assert held < 1024


def _nested_frames(size: int) -> bytes:
    """A frame whose body is a frame whose body is a frame ..., `size` bytes in all: none of
    the bodies is JSON, each holds the next header."""
    inner = b'{"inner": true}'
    headers: list[bytes] = []
    length = len(inner)
    while length < size:
        headers.append(b"Content-Length: %d\r\n\r\n" % length)
        length += len(headers[-1])
    headers.append(b"Content-Length: %d\r\n\r\n" % length)
    return b"".join(reversed(headers)) + inner


@pytest.mark.parametrize("size", [800_000, 1_600_000])
async def test_framing_resyncs_in_linear_time(size: int, caplog: pytest.LogCaptureFixture) -> None:
    """Each level of nested bad frames was parsed and copied again, and logged: 0.8 MB cost
    3.5 s and 1.6 MB 43 s in the server. Each byte is now looked through once."""
    recorder = _JsonRecorder()
    closed: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
    framing = Framing(recorder, closed)  # type: ignore[arg-type]
    after = b'{"after": 1}'
    stream = _nested_frames(size) + b"Content-Length: %d\r\n\r\n" % len(after) + after
    start = time.process_time()
    for i in range(0, len(stream), 65536):
        framing.data_received(stream[i : i + 65536])
    spent = time.process_time() - start
    assert recorder.bodies[-1] == after
    assert len(recorder.bodies) <= 3  # the outer body, one inside it, and the good message
    assert spent < 0.25, f"{spent:.2f} s of CPU"
    assert len(caplog.records) <= 2  # one when it starts, one with the counts when it ends
