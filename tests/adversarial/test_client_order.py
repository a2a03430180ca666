"""A client that answers the server's requests wrongly, speaks out of LSP's order, or goes
away: every request is still answered, every wait ends, and nothing reaches stderr as a
traceback (editors show the server's stderr as errors).

Each test drives `python -m lsp_verify` over raw stdio (tests/support/stdio.py) and fails on a
server without the defence it names.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.support.stdio import StdioClient
from tests.support.wire import did_save, frame, initialize, show_last_run

Start = Callable[[], StdioClient]
ASKS = {"window": {"showMessage": {}}}
CONFIGURES = {"workspace": {"configuration": True}}


@pytest.fixture
def raw(state: Path, tmp_path: Path) -> Iterator[Start]:
    servers: list[StdioClient] = []

    def start() -> StdioClient:
        server = StdioClient(state, stderr=tmp_path / f"stderr-{len(servers)}.log")
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.kill()


@pytest.fixture
def makefile(project: Path) -> Path:
    """A detected plan that needs approval before it runs."""
    (project / "Makefile").write_text("test:\n\t@touch ran.txt; exit 1\n")
    return project


def no_traceback(server: StdioClient) -> None:
    text = server.stderr_text()
    assert "Traceback" not in text, text


def command(rid: int, name: str, *arguments: Any) -> bytes:
    params = {"command": name, "arguments": list(arguments)}
    return frame({"id": rid, "method": "workspace/executeCommand", "params": params})


def answer(rid: Any, result: Any) -> bytes:
    return frame({"id": rid, "result": result})


# ----- answers of the wrong shape are refusals, never a lost waiter -----


@pytest.mark.parametrize("wrong", [{}, "", 5, [], {"title": 3}], ids=repr)
def test_a_question_answered_with_the_wrong_shape_is_dismissed(
    raw: Start, makefile: Path, wrong: Any
) -> None:
    server = raw()
    server.send(
        initialize(makefile, options={"confirm": "onChange"}, capabilities=ASKS)
        + frame({"method": "initialized", "params": {}})
    )
    server.response(1)
    server.send(did_save((makefile / "a.c").as_uri()))
    question = server.notification("window/showMessageRequest")
    server.send(answer(question["id"], wrong))
    # The run ends as declined (the question counts as dismissed), and the folder goes on.
    status = server.notification("verify/status")
    while status["params"]["state"] != "idle":
        status = server.notification("verify/status")
    assert status["params"]["lastOutcome"] == "declined"
    server.send(show_last_run(2))
    record = server.response(2)["result"]
    assert record["outcome"] == "declined"
    assert "the question was dismissed" in record["reason"]
    assert not (makefile / "ran.txt").exists()
    assert server.finish() == 0
    no_traceback(server)


@pytest.mark.parametrize("wrong", [None, "make test", {"command": "x"}, 7], ids=repr)
def test_settings_answered_with_the_wrong_shape_leave_the_folder_ready(
    raw: Start, project: Path, wrong: Any
) -> None:
    """workspace/configuration must be answered with a list: anything else means the
    initialization options apply, and never a folder whose saves are held for good (null)
    or a command made of the characters of a string ("m")."""
    server = raw()
    options = {"command": "touch ran.txt; exit 1", "confirm": "never"}
    server.send(
        initialize(project, options=options, capabilities=CONFIGURES)
        + frame({"method": "initialized", "params": {}})
    )
    server.response(1)
    asked = server.notification("workspace/configuration")
    server.send(answer(asked["id"], wrong))
    server.send(command(2, "verify.runNow"))
    record = server.response(2, timeout=20)["result"]
    assert record["command"] == "touch ran.txt; exit 1"
    assert record["outcome"] == "failed"
    assert server.finish() == 0
    no_traceback(server)


def test_a_client_that_never_answers_the_settings_request_costs_a_bounded_wait(
    raw: Start, project: Path
) -> None:
    server = raw()
    options = {"command": "touch ran.txt; exit 1", "confirm": "never"}
    server.send(
        initialize(project, options=options, capabilities=CONFIGURES)
        + frame({"method": "initialized", "params": {}})
    )
    server.response(1)
    asked = server.notification("workspace/configuration")
    server.send(command(2, "verify.runNow"))
    # The request is withdrawn when the server stops waiting, and the folder goes on with
    # the initialization options.
    withdrawn = server.notification("$/cancelRequest", timeout=30)
    assert withdrawn["params"]["id"] == asked["id"]
    assert server.response(2, timeout=20)["result"]["outcome"] == "failed"
    assert server.finish() == 0
    no_traceback(server)


def test_an_error_answer_to_the_question_declines_and_a_late_answer_is_ignored(
    raw: Start, makefile: Path
) -> None:
    server = raw()
    server.send(
        initialize(makefile, options={"confirm": "onChange"}, capabilities=ASKS)
        + frame({"method": "initialized", "params": {}})
    )
    server.response(1)
    server.send(did_save((makefile / "a.c").as_uri()))
    question = server.notification("window/showMessageRequest")
    server.send(frame({"id": question["id"], "error": {"code": -32603, "message": "no UI"}}))
    server.send(command(2, "verify.showLastRun"))
    deadline = time.monotonic() + 20
    while True:
        record = server.response(2)["result"]
        if record is not None or time.monotonic() > deadline:
            break
        time.sleep(0.05)
        server.send(command(2, "verify.showLastRun"))
    assert record is not None and record["outcome"] == "declined"
    # The same answer again answers nothing now: one line, no traceback, still serving.
    server.send(answer(question["id"], {"title": "Run once"}) + show_last_run(3))
    assert server.response(3)["result"]["outcome"] == "declined"
    assert not (makefile / "ran.txt").exists()
    assert server.finish() == 0
    no_traceback(server)


# ----- commands and cancels while the question is open, and shutdown with requests pending -----


def test_cancel_while_the_question_is_open_is_answered_and_withdraws_it(
    raw: Start, makefile: Path
) -> None:
    server = raw()
    server.send(
        initialize(makefile, options={"confirm": "onChange"}, capabilities=ASKS)
        + frame({"method": "initialized", "params": {}})
    )
    server.response(1)
    server.send(did_save((makefile / "a.c").as_uri()))
    question = server.notification("window/showMessageRequest")
    server.send(command(2, "verify.cancel"))
    seen: list[dict[str, Any]] = []
    while not any(m.get("id") == 2 and "method" not in m for m in seen):
        seen.append(server.read(timeout=5))
    (cancelled,) = [m["result"] for m in seen if m.get("id") == 2]
    assert [r["outcome"] for r in cancelled] == ["cancelled"]
    # The client is told the question no longer needs an answer.
    withdrawn = [m["params"]["id"] for m in seen if m.get("method") == "$/cancelRequest"]
    assert withdrawn == [question["id"]]
    assert server.finish() == 0
    no_traceback(server)


def test_shutdown_with_requests_pending_answers_each_of_them_then_shutdown(
    raw: Start, makefile: Path
) -> None:
    """A runNow waiting for the question, a pull waiting for that run: shutdown answers both
    (the run is cancelled), then itself, with no internal error."""
    server = raw()
    capabilities = {**ASKS, "textDocument": {"diagnostic": {}}}
    server.send(
        initialize(makefile, options={"confirm": "onChange"}, capabilities=capabilities)
        + frame({"method": "initialized", "params": {}})
    )
    server.response(1)
    document = (makefile / "a.c").as_uri()
    server.send(command(2, "verify.runNow", document))
    server.notification("window/showMessageRequest")
    pull = {"textDocument": {"uri": document}}
    server.send(frame({"id": 3, "method": "textDocument/diagnostic", "params": pull}))
    time.sleep(0.2)
    server.send(frame({"id": 4, "method": "shutdown"}))
    answers = {rid: server.response(rid, timeout=5) for rid in (2, 3, 4)}
    assert answers[2]["result"]["outcome"] == "cancelled"
    assert "result" in answers[3] or answers[3]["error"]["code"] == -32800, answers[3]
    assert answers[4] == {"jsonrpc": "2.0", "id": 4, "result": None}
    server.send(frame({"method": "exit"}))
    assert server.proc.wait(timeout=5) == 0
    no_traceback(server)


# ----- LSP's order: nothing before initialize, initialize and initialized once -----


def test_requests_before_initialize_are_refused_as_not_initialized(
    raw: Start, project: Path
) -> None:
    server = raw()
    server.send(
        show_last_run(1)
        + frame({"id": 2, "method": "textDocument/codeAction", "params": {}})
        + frame({"id": 3, "method": "shutdown"})
        + frame({"method": "initialized", "params": {}})
        + did_save((project / "a.c").as_uri())
    )
    for rid in (1, 2, 3):
        assert server.response(rid, timeout=5)["error"]["code"] == -32002
    server.send(initialize(project, rid=4) + frame({"method": "initialized", "params": {}}))
    assert "capabilities" in server.response(4)["result"]
    time.sleep(0.3)
    assert not (project / "ran.txt").exists()  # the save before initialize ran nothing
    server.send(frame({"id": 5, "method": "initialize", "params": {"capabilities": {}}}))
    assert server.response(5)["error"]["code"] == -32600
    assert server.finish() == 0
    no_traceback(server)


def test_pipelined_change_and_initialize_in_one_write_are_both_read(
    raw: Start, project: Path
) -> None:
    server = raw()
    change = {
        "textDocument": {"uri": (project / "a.py").as_uri(), "version": 2},
        "contentChanges": [{"text": "x = 1\n"}],
    }
    server.send(frame({"method": "textDocument/didChange", "params": change}) + initialize(project))
    assert "capabilities" in server.response(1, timeout=10)["result"]
    assert server.finish() == 0
    no_traceback(server)


def test_a_second_initialize_with_pull_declared_is_refused_cleanly(
    raw: Start, project: Path
) -> None:
    server = raw()
    pulls = {"textDocument": {"diagnostic": {}}}
    server.send(initialize(project, capabilities=pulls))
    server.response(1)
    server.send(initialize(project, rid=2, capabilities=pulls))
    assert server.response(2)["error"]["code"] == -32600
    server.send(show_last_run(3))
    assert "result" in server.response(3)
    assert server.finish() == 0
    no_traceback(server)


# ----- one bad message never stalls the next one in the same write -----

STALLERS = [("a watched URI with %00", "/x%00y"), ("a watched URI, lone surrogate", "/\ud800")]


@pytest.mark.parametrize(("what", "name"), STALLERS, ids=[s[0] for s in STALLERS])
def test_a_bad_notification_does_not_stall_the_request_behind_it(
    raw: Start, project: Path, what: str, name: str
) -> None:
    server = raw().started(project)
    params = {"changes": [{"uri": project.as_uri() + name, "type": 2}]}
    body = json.dumps(
        {"jsonrpc": "2.0", "method": "workspace/didChangeWatchedFiles", "params": params}
    ).encode("utf-8", "surrogatepass")
    server.send(b"Content-Length: %d\r\n\r\n%b" % (len(body), body) + show_last_run(2))
    assert "result" in server.response(2, timeout=5)
    assert server.finish() == 0
    no_traceback(server)


def test_a_folder_uri_with_a_nul_or_a_bad_host_is_survived(raw: Start, project: Path) -> None:
    server = raw()
    folders = [
        {"uri": "file:///tmp/a%00b", "name": "nul"},
        {"uri": "file://[::1/x", "name": "bad host"},
        {"uri": project.as_uri(), "name": "good"},
    ]
    message = json.loads(initialize(project).split(b"\r\n\r\n", 1)[1])
    message["params"]["workspaceFolders"] = folders
    message["params"]["rootUri"] = "file://[::1/x"
    server.send(frame(message) + frame({"method": "initialized", "params": {}}))
    assert "capabilities" in server.response(1, timeout=10)["result"]
    server.send(show_last_run(2))
    assert "result" in server.response(2)
    assert server.finish() == 0
    no_traceback(server)


# ----- client mistakes are one line in the log, and errors carry no server paths -----

# (what, the message, how its id 2 is answered: "result", "error", or None: not a request)
MISTAKES: list[tuple[str, bytes, str | None]] = [
    ("an unknown command", command(2, "verify.nothingLikeThis"), "error"),
    ("a command name that is not a string", command(2, 42), "error"),  # type: ignore[arg-type]
    (
        "a location at line 1e20",
        command(2, "verify.showLocation", "file:///x", 10**20, 0),
        "result",
    ),
    ("a cancel with a list id", frame({"method": "$/cancelRequest", "params": {"id": [1]}}), None),
    ("a cancel with no params", frame({"method": "$/cancelRequest"}), None),
    ("initialized again", frame({"method": "initialized", "params": {}}), None),
    ("the run view of a command with a lone surrogate", command(2, "verify.showRun"), "result"),
]


@pytest.mark.parametrize(("what", "data", "kind"), MISTAKES, ids=[m[0] for m in MISTAKES])
def test_a_client_mistake_is_no_traceback(
    raw: Start, project: Path, what: str, data: bytes, kind: str | None
) -> None:
    server = raw()
    capabilities = {"window": {"showDocument": {"support": True}}}
    options = {"command": "echo \ud800; exit 1", "confirm": "never"}
    server.send(
        initialize(project, options=options, capabilities=capabilities)
        + frame({"method": "initialized", "params": {}})
    )
    server.response(1)
    server.send(command(9, "verify.runNow"))
    assert server.response(9, timeout=20)["result"]["outcome"] == "failed"
    server.send(data + show_last_run(3))
    if kind is not None:
        reply = server.response(2, timeout=5)
        assert kind in reply, reply
        assert "traceback" not in json.dumps(reply.get("error", {})), reply
    assert "result" in server.response(3, timeout=5)
    assert server.finish() == 0
    no_traceback(server)


# ----- the client goes away -----


def test_a_client_that_closes_its_end_ends_the_server(raw: Start, project: Path) -> None:
    """Publishes to a closed stdout: the server stops once (its run killed), rather than
    logging a broken pipe for every message it would still send."""
    server = raw()
    marker = f"300.{os.getpid()}{int(time.monotonic() * 1000) % 100000}"
    options = {"command": f"echo x; sleep {marker}", "confirm": "never"}
    server.started(project, options=options)
    assert server.proc.stdout is not None
    server.proc.stdout.close()
    server.send(did_save((project / "a.c").as_uri()))
    assert server.proc.wait(timeout=10) == 1
    text = server.stderr_text()
    assert "Traceback" not in text and text.count("roken pipe") <= 1, text
    from tests.support.procs import alive

    assert not alive(marker)


def test_sigterm_while_a_command_is_answered_stops_cleanly(raw: Start, makefile: Path) -> None:
    server = raw()
    server.send(
        initialize(makefile, options={"confirm": "onChange"}, capabilities=ASKS)
        + frame({"method": "initialized", "params": {}})
    )
    server.response(1)
    server.send(command(2, "verify.runNow"))
    server.notification("window/showMessageRequest")
    os.kill(server.proc.pid, signal.SIGTERM)
    assert server.proc.wait(timeout=5) == 0
    no_traceback(server)


def test_a_client_that_never_sends_initialized_still_gets_its_commands_answered(
    raw: Start, project: Path
) -> None:
    """LSP says `initialized` follows the answer to initialize; a client that never sends it
    gets its commands answered on the initialization options after a bounded wait, not never."""
    server = raw()
    server.send(initialize(project))
    server.response(1)
    server.send(command(2, "verify.runNow"))
    assert server.response(2, timeout=30)["result"]["outcome"] == "failed"
    assert server.finish() == 0
    no_traceback(server)
