"""`lsp-verify hook post-edit|stop`, in this process, on run files written as the server
writes them (workspace/run_file.py): the verdict of the run that saw the edit, waited for;
quiet on green and when no server heard of the edit; told once about approval; Stop refused
while the latest edit's run fails, never twice in a row."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from lsp_verify.cli import hook
from lsp_verify.record import Record
from lsp_verify.workspace.run_file import RunFile, path_for
from tests.support.trust import isolate_home

TAIL = ["F", "E       assert (6 * 7) == 43", "1 failed in 0.05s"]


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_home(tmp_path, monkeypatch)
    monkeypatch.setattr(hook, "HEARD_WITHIN", 0.3)
    monkeypatch.setattr(hook, "WAIT_AT_MOST", 2.0)
    monkeypatch.setattr(hook, "POLL", 0.01)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    (path / "test_answer.py").write_text("x\n")
    return path


def record(folder: Path, outcome: str, reason: str = "") -> Record:
    return Record(
        folder=str(folder),
        command="pytest -x -q",
        source="detected",
        reason=reason,
        manifest="pytest.ini",
        fingerprint="f",
        steps=["pytest -x -q"],
        trigger="save",
        started_at="2026-01-01T00:00:00.000Z",
        duration_ms=10,
        exit_code=1 if outcome == "failed" else 0,
        outcome=outcome,  # type: ignore[arg-type]
        tail=TAIL if outcome == "failed" else [],
    )


def ran(folder: Path, outcome: str, *, began: float | None = None, approval: bool = False) -> None:
    """The server heard an edit, then a run that began after it ended with `outcome`."""
    run_file = RunFile(str(folder))
    now = time.time()
    run_file.saved(now)
    run_file.finished(record(folder, outcome), now + 0.001 if began is None else began, approval)


def edit_event(folder: Path, session: str = "s1") -> dict[str, Any]:
    return {
        "session_id": session,
        "cwd": str(folder),
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": "test_answer.py"},
    }


def stop_event(folder: Path, active: bool = False) -> dict[str, Any]:
    return {"session_id": "s1", "cwd": str(folder), "stop_hook_active": active}


def test_a_failing_run_that_saw_the_edit_is_given_to_the_model(folder: Path) -> None:
    ran(folder, "failed")
    answer = hook.post_edit(edit_event(folder))
    assert answer is not None and answer["decision"] == "block"
    assert "`pytest -x -q` fails after this edit" in answer["reason"]
    assert "verify failed (exit 1):" in answer["reason"] and TAIL[1] in answer["reason"]


def test_a_passing_run_says_nothing(folder: Path) -> None:
    ran(folder, "passed")
    assert hook.post_edit(edit_event(folder)) is None


def test_the_hook_waits_for_the_run_that_saw_the_edit(folder: Path) -> None:
    # A run that began before the edit failed; the run that saw it passes, later.
    run_file = RunFile(str(folder))
    run_file.finished(record(folder, "failed"), time.time() - 5, False)
    os.utime(folder / "test_answer.py")

    def server() -> None:
        time.sleep(0.3)
        run_file.saved(time.time())
        time.sleep(0.3)
        run_file.finished(record(folder, "passed"), time.time(), False)

    thread = threading.Thread(target=server)
    thread.start()
    started = time.monotonic()
    answer = hook.post_edit(edit_event(folder))
    thread.join()
    assert answer is None  # the old failure is not the verdict of this edit
    assert time.monotonic() - started >= 0.55


def test_an_edit_no_server_heard_of_is_left_alone_soon(folder: Path) -> None:
    started = time.monotonic()
    assert hook.post_edit(edit_event(folder)) is None  # no run file at all
    run_file = RunFile(str(folder))
    run_file.saved(time.time() - 10)  # a server that heard of earlier edits only
    assert hook.post_edit(edit_event(folder)) is None
    assert time.monotonic() - started < 1.5


def test_a_server_that_is_gone_is_not_waited_for(folder: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    )
    run_file = RunFile(str(folder))
    run_file.value["pid"] = int(dead.stdout)
    run_file.saved(time.time() + 1)
    started = time.monotonic()
    assert hook.post_edit(edit_event(folder)) is None
    assert time.monotonic() - started < 0.25


def test_an_unapproved_plan_is_told_once_a_session(folder: Path) -> None:
    reason = "this client cannot answer a question; approve it with ..."
    run_file = RunFile(str(folder))
    run_file.saved(time.time())
    run_file.finished(record(folder, "declined", reason), time.time(), True)
    answer = hook.post_edit(edit_event(folder))
    assert answer is not None
    assert f"`lsp-verify approve {folder}`" in answer["reason"]
    assert "Only the user can approve it" in answer["reason"]
    assert hook.post_edit(edit_event(folder)) is None  # told already
    assert hook.post_edit(edit_event(folder, session="s2")) is not None  # a new session
    assert hook.stop(stop_event(folder)) is None  # never kept from ending


def test_stop_is_refused_while_the_latest_edit_s_run_fails(folder: Path) -> None:
    ran(folder, "failed")
    answer = hook.stop(stop_event(folder))
    assert answer is not None and answer["decision"] == "block"
    assert "fails after your last edit" in answer["reason"] and TAIL[1] in answer["reason"]
    assert hook.stop(stop_event(folder, active=True)) is None  # once refused: it may end


@pytest.mark.parametrize("outcome", ["passed", "no-plan", "cancelled"])
def test_stop_is_let_through_when_nothing_failed(folder: Path, outcome: str) -> None:
    ran(folder, outcome)
    assert hook.stop(stop_event(folder)) is None


def test_stop_does_not_take_a_failure_from_before_the_latest_edit(folder: Path) -> None:
    run_file = RunFile(str(folder))
    began = time.time()
    run_file.finished(record(folder, "failed"), began, False)
    run_file.saved(began + 1)  # an edit after it, whose run never ends here
    assert hook.stop(stop_event(folder)) is None


def test_stop_without_any_edit_says_nothing(folder: Path) -> None:
    assert hook.stop(stop_event(folder)) is None


@pytest.mark.parametrize("text", ["not json", "[1, 2]", "", '{"tool_input": 3}'])
def test_bad_input_is_no_answer_and_exit_0(folder: Path, text: str) -> None:
    out = io.StringIO()
    assert hook.hook_main("post-edit", io.StringIO(text), out) == 0
    assert out.getvalue() == ""


def test_the_answer_is_one_json_line(folder: Path) -> None:
    ran(folder, "failed")
    out = io.StringIO()
    assert hook.hook_main("stop", io.StringIO(json.dumps(stop_event(folder))), out) == 0
    assert json.loads(out.getvalue())["decision"] == "block"


def test_a_run_file_that_is_not_one_is_ignored(folder: Path) -> None:
    path = Path(path_for(str(folder)))
    path.parent.mkdir(parents=True)
    for text in ("{", "[]", json.dumps({"version": 99}), "x" * 300_000):
        path.write_text(text)
        assert hook.stop(stop_event(folder)) is None


def test_a_file_the_plugin_does_not_map_is_not_waited_for(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin = Path(__file__).resolve().parents[3] / "claude-plugin"
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(plugin))
    monkeypatch.setattr(hook, "HEARD_WITHIN", 5.0)
    RunFile(str(folder)).saved(time.time() - 10)  # a server is up, and will not hear of it
    (folder / "notes.md").write_text("x\n")
    event = {**edit_event(folder), "tool_input": {"file_path": "notes.md"}}
    started = time.monotonic()
    assert hook.post_edit(event) is None
    assert time.monotonic() - started < 0.5
    ran(folder, "failed")  # a mapped file is waited for and answered
    assert hook.post_edit(edit_event(folder)) is not None


def test_a_save_the_settings_do_not_run_for_is_not_waited_for(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hook, "HEARD_WITHIN", 5.0)
    run_file = RunFile(str(folder))
    run_file.saved(time.time() - 10)
    os.utime(folder / "test_answer.py")
    run_file.ignored(time.time())
    started = time.monotonic()
    assert hook.post_edit(edit_event(folder)) is None
    assert time.monotonic() - started < 0.5


def dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    )
    return int(done.stdout)


def test_a_run_file_an_earlier_session_left_is_waited_past(folder: Path) -> None:
    old = RunFile(str(folder))
    old.value["pid"] = dead_pid()
    old.saved(time.time() - 60)
    old.finished(record(folder, "passed"), time.time() - 60, False)
    os.utime(folder / "test_answer.py")

    def new_server() -> None:  # Claude Code starts it on the session's first edit
        time.sleep(0.15)
        ran(folder, "failed")

    thread = threading.Thread(target=new_server)
    thread.start()
    answer = hook.post_edit(edit_event(folder))
    thread.join()
    assert answer is not None and answer["decision"] == "block"


def test_stop_takes_no_verdict_from_a_server_that_is_gone(folder: Path) -> None:
    old = RunFile(str(folder))
    old.value["pid"] = dead_pid()
    now = time.time()
    old.saved(now)
    old.finished(record(folder, "failed"), now + 0.001, False)
    assert hook.stop(stop_event(folder)) is None  # a red state of an earlier session


def test_the_run_file_and_the_marks_are_written_under_a_strict_umask(folder: Path) -> None:
    old = os.umask(0o277)
    try:
        ran(folder, "declined", approval=True)
        answer = hook.post_edit(edit_event(folder))
    finally:
        os.umask(old)
    assert answer is not None and "Only the user can approve it" in answer["reason"]
    assert hook.post_edit(edit_event(folder)) is None  # the mark was written
    runs = Path(path_for(str(folder))).parent
    for made in (runs.parent, runs, runs / "told"):  # writable by their owner, not root alone
        assert made.stat().st_mode & 0o777 == 0o700, made
