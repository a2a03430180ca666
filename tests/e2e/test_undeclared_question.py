"""A client that never declared window.showMessage is asked all the same (eglot answers in
the minibuffer without declaring it), and one that cannot answer costs at most a bounded
wait, once: MethodNotFound (what vscode-jsonrpc answers an unhandled request: opencode,
Claude Code) declines at once, silence within the bound; then the warning it can act on,
and no question again that session. Never a held trigger."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.support.stdio import HOLD, Reply, StdioClient, stop
from tests.support.wire import did_save, frame, initialize, show_last_run

QUESTION = "window/showMessageRequest"


def repository_plan(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "Makefile").write_text("test:\n\t@touch ran.txt; exit 1\n")
    return project


def serve(tmp_path: Path, answer: Any, extra: dict[str, str] | None = None) -> StdioClient:
    from tests.support.stdio import server_env

    def answers(message: dict[str, Any]) -> Any:
        return answer(message) if message.get("method") == QUESTION else Reply(None)

    env = server_env(tmp_path / "state", extra)
    return StdioClient(env=env, answers=answers)


def last_run(client: StdioClient, rid: int) -> dict[str, Any]:
    client.send(show_last_run(rid))
    record: dict[str, Any] = client.answer_to(rid, timeout=30)["result"]
    return record


def save_and_wait(client: StdioClient, project: Path, rid: int) -> dict[str, Any]:
    """A save, then the run it started (its record, once the last record changed)."""
    before = last_run(client, rid)
    client.send(did_save((project / "a.c").as_uri()))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        rid += 1
        record = last_run(client, rid)
        if record is not None and record != before:
            return record
        client.pump_for(0.1)
    raise AssertionError("no run after the save")


def questions(client: StdioClient) -> list[dict[str, Any]]:
    return [m for m in client.inbox if m.get("method") == QUESTION]


def warning_for(client: StdioClient, uri: str) -> list[dict[str, Any]]:
    published = [
        m["params"]["diagnostics"]
        for m in client.inbox
        if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
    ]
    return published[-1] if published else []


def test_method_not_found_declines_at_once_and_is_not_asked_again(tmp_path: Path) -> None:
    project = repository_plan(tmp_path)
    client = serve(tmp_path, lambda message: Reply(error=(-32601, "Unhandled method")))
    try:
        client.send(
            initialize(project, options={"verify": {}})
            + frame({"method": "initialized", "params": {}})
        )
        client.answer_to(1)
        started = time.monotonic()
        record = save_and_wait(client, project, 100)
        assert time.monotonic() - started < 10
        assert record["outcome"] == "declined", record
        assert record["reason"].startswith("this client cannot answer a question"), record
        assert len(questions(client)) == 1  # asked, as every client is
        [warning] = warning_for(client, (project / "a.c").as_uri())
        assert "`make test`" in warning["message"] and "lsp-verify approve" in warning["message"]
        again = save_and_wait(client, project, 200)
        assert again["outcome"] == "declined" and len(questions(client)) == 1  # not again
        assert not (project / "ran.txt").exists()
    finally:
        stop(client)


def test_silence_costs_the_bound_once_then_the_warning(tmp_path: Path) -> None:
    project = repository_plan(tmp_path)
    client = serve(tmp_path, lambda message: HOLD, {"LSP_VERIFY_UNDECLARED_QUESTION_S": "1.5"})
    try:
        client.send(
            initialize(project, options={"verify": {}})
            + frame({"method": "initialized", "params": {}})
        )
        client.answer_to(1)
        started = time.monotonic()
        record = save_and_wait(client, project, 100)
        waited = time.monotonic() - started
        assert 1.4 < waited < 10, waited
        assert record["outcome"] == "declined", record
        assert record["reason"].startswith("this client cannot answer a question"), record
        [question] = questions(client)
        # The question given up on is withdrawn.
        cancels = [
            m
            for m in client.frames or []
            if m.message and m.message.get("method") == "$/cancelRequest"
        ]
        assert cancels == [] or cancels[0].message["params"]["id"] == question["id"]
        assert any(
            m.get("method") == "$/cancelRequest" and m["params"]["id"] == question["id"]
            for m in client.inbox
        )
        started = time.monotonic()
        again = save_and_wait(client, project, 200)
        assert time.monotonic() - started < 5 and again["outcome"] == "declined"
        assert len(questions(client)) == 1
    finally:
        stop(client)
