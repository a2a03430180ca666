"""The server's stdio transport, byte by byte: framing, nonsense from a client, exit codes.

These drive `python -m lsp_verify` with raw bytes rather than through pytest-lsp, because
what they check is exactly what a well-behaved client library never sends.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.stdio import StdioClient, server_env
from tests.support.wire import did_save, frame, initialize, show_last_run


@pytest.fixture
def raw(state: Path) -> Any:
    servers: list[StdioClient] = []

    def start(*args: str) -> StdioClient:
        server = StdioClient(state, *args)
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
    server = StdioClient(state, stderr=tmp_path / "stderr.log")
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
