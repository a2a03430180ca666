"""A hostile repository: what its own files can make lsp-verify do.

A repository speaks through `.lsp-verify.toml` (and, in VS Code, `.vscode/settings.json`, which
the client passes on as `workspaceCommand`). Whatever it writes there, its command runs only
with a stored approval or an answered question: the keys that decide that (`confirm`,
`autoDetect`) are the user's alone. Every test drives the real server over stdio or the real
CLI, in temporary folders, with the XDG folders pointed away from the real home.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from tests.support.lsp_session import Session, server_env, session, window_changed

RUN_ONCE, ALWAYS, DONT_RUN = "Run once", "Always for this plan", "Don't run"
HOSTILE = 'command = "touch PWNED"\n'


def no_questions() -> types.ClientCapabilities:
    """A client that never declared window.showMessage (it is asked all the same, and this
    test client answers null: no choice)."""
    return window_changed(show_message=None)


# Every kind of key a project file may hold, each beside a hostile command:
# (id, the rest of the file, the key that must be ignored with a diagnostic, or None).
CASES = [
    ("command", "", None),
    ("globs", 'globs = ["*.c"]\n', None),
    ("timeoutMs", "timeoutMs = 5000\n", None),
    ("runOn-save", 'runOn = "save"\n', None),
    ("runOn-edit", 'runOn = "edit"\n', None),
    ("runOn-sync", 'runOn = "sync"\n', None),
    ("runOn-manual", 'runOn = "manual"\n', None),
    ("tailLines", "tailLines = 5\n", None),
    ("confirm-never", 'confirm = "never"\n', "confirm"),
    ("confirm-always", 'confirm = "always"\n', "confirm"),
    ("confirm-onChange", 'confirm = "onChange"\n', "confirm"),
    ("confirm-wrong-type", "confirm = false\n", "confirm"),
    ("autoDetect-true", "autoDetect = true\n", "autoDetect"),
    ("autoDetect-false", "autoDetect = false\n", "autoDetect"),
    ("workspaceCommand", 'workspaceCommand = "touch PWNED"\n', "workspaceCommand"),
    ("unknown-keys", 'trusted = true\napproved = "always"\nfailedFirst = false\n', None),
    ("verify-table", '[verify]\nconfirm = "never"\nautoDetect = false\n', None),
    (
        "everything",
        'confirm = "never"\nautoDetect = false\nrunOn = "save"\nglobs = []\n',
        "confirm",
    ),
]
IDS = [case[0] for case in CASES]


def hostile_project(root: Path, rest: str) -> Path:
    (root / ".lsp-verify.toml").write_text(HOSTILE + rest, encoding="utf-8")
    (root / "a.c").write_text("int x;\n", encoding="utf-8")
    return root


def pwned(root: Path) -> bool:
    return (root / "PWNED").exists()


async def trigger(s: Session, case: str) -> dict[str, object]:
    """Save a.c (or, where the file says runOn = "manual", ask for a run) and return the
    record of the run it started."""
    if case == "runOn-manual":
        record: dict[str, object] = await s.command("verify.runNow")
        return record
    before = len(s.finished())
    s.save("a.c", "int y;\n")
    await s.wait_for(lambda: len(s.finished()) > before, timeout=15, what="the save's run")
    record = await s.command("verify.showLastRun")
    return record


async def ignored_key_diagnostic(s: Session, root: Path, key: str) -> types.Diagnostic:
    text = (root / ".lsp-verify.toml").read_text(encoding="utf-8")
    line = next(n for n, t in enumerate(text.splitlines()) if t.startswith(key))
    uri = s.uri(".lsp-verify.toml")

    def found() -> list[types.Diagnostic]:
        return [d for d in s.diagnostics(uri) if d.message.startswith(f"{key}:")]

    await s.wait_for(found, timeout=10, what=f"a diagnostic on {key} in .lsp-verify.toml")
    (diagnostic,) = found()
    assert diagnostic.range.start.line == line
    assert "ignored" in diagnostic.message
    assert "editor" in diagnostic.message
    assert diagnostic.source == "verify"
    return diagnostic


@pytest.mark.parametrize(("case", "rest", "ignored"), CASES, ids=IDS)
async def test_a_project_file_cannot_run_its_command_unasked(
    project: Path, state: Path, case: str, rest: str, ignored: str | None
) -> None:
    root = hostile_project(project, rest)
    async with session(root, state=state) as s:
        if ignored is not None:
            await ignored_key_diagnostic(s, root, ignored)
        s.answer = lambda params: DONT_RUN
        record = await trigger(s, case)
        assert len(s.questions) == 1, case
        assert "touch PWNED" in s.questions[0].message
        assert "project-file" in s.questions[0].message
        assert record["outcome"] == "declined"
        assert not pwned(root)
        # A refusal is stored; runNow asks again, and a dismissed question runs nothing either.
        s.answer = lambda params: None
        record = await s.command("verify.runNow")
        assert len(s.questions) == 2, case
        assert record["outcome"] == "declined"
        await asyncio.sleep(0.2)
        assert not pwned(root)


@pytest.mark.parametrize(("case", "rest", "ignored"), CASES, ids=IDS)
async def test_a_project_file_is_declined_where_the_editor_cannot_ask(
    project: Path, state: Path, case: str, rest: str, ignored: str | None
) -> None:
    root = hostile_project(project, rest)
    async with session(root, state=state, capabilities=no_questions()) as s:
        record = await trigger(s, case)
        # Asked all the same (eglot answers without declaring window.showMessage); this
        # client gives no choice: declined, nothing runs.
        assert len(s.questions) == 1, case
        assert record["reason"].startswith("the question got no answer"), record
        assert record["outcome"] == "declined", case
        assert record["exitCode"] is None
        await asyncio.sleep(0.2)
        assert not pwned(root)


async def test_the_users_own_confirm_never_still_runs_a_project_plan(
    project: Path, state: Path
) -> None:
    # The user's choice, in the editor's settings: no question, for any repository command.
    root = hostile_project(project, 'confirm = "always"\n')
    async with session(root, state=state, init_options={"confirm": "never"}) as s:
        record = await trigger(s, "command")
        assert s.questions == []
        assert record["outcome"] == "passed"
        assert record["source"] == "project-file"
        assert pwned(root)


async def test_the_users_own_confirm_never_still_runs_a_detected_plan(
    project: Path, state: Path
) -> None:
    (project / "Makefile").write_text("test:\n\ttouch PWNED\n", encoding="utf-8")
    (project / "a.c").write_text("int x;\n", encoding="utf-8")
    async with session(project, state=state, init_options={"verify": {"confirm": "never"}}) as s:
        record = await trigger(s, "command")
        assert s.questions == []
        assert record["outcome"] == "passed"
        assert record["source"] == "detected"
        assert pwned(project)


# --- VS Code's workspace settings: the client sends the workspace's command as workspaceCommand


async def test_a_workspace_command_needs_approval(project: Path, state: Path) -> None:
    (project / "a.c").write_text("int x;\n", encoding="utf-8")
    options = {"verify": {"workspaceCommand": "touch PWNED"}, "workspaceTrusted": True}
    async with session(project, state=state, init_options=options) as s:
        explained = await s.command("verify.explain")
        assert explained["source"] == "workspace-settings"
        assert explained["command"] == "touch PWNED"
        s.answer = lambda params: DONT_RUN
        record = await trigger(s, "command")
        assert len(s.questions) == 1
        assert "workspace-settings" in s.questions[0].message
        assert record["outcome"] == "declined"
        assert not pwned(project)
        # Approved, it runs; a different workspace command is a different plan: asked again.
        s.answer = lambda params: ALWAYS
        record = await s.command("verify.runNow")
        assert record["outcome"] == "passed"
        assert pwned(project)
        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(
                settings={"verify": {"workspaceCommand": "touch PWNED2"}}
            )
        )
        await asyncio.sleep(0.3)
        s.answer = lambda params: None
        record = await trigger(s, "command")
        assert len(s.questions) == 3
        assert "touch PWNED2" in s.questions[2].message
        assert record["outcome"] == "declined"
        assert not (project / "PWNED2").exists()


async def test_a_workspace_command_is_declined_where_the_editor_cannot_ask(
    project: Path, state: Path
) -> None:
    (project / "a.c").write_text("int x;\n", encoding="utf-8")
    options = {"verify": {"workspaceCommand": "touch PWNED"}}
    cannot_ask = no_questions()
    async with session(project, state=state, init_options=options, capabilities=cannot_ask) as s:
        record = await trigger(s, "command")
        assert record["outcome"] == "declined"
        assert record["source"] == "workspace-settings"
        assert not pwned(project)


async def test_the_users_command_runs_unasked(project: Path, state: Path) -> None:
    # `command` stays the user's: the client sends a workspace value only as workspaceCommand.
    (project / "a.c").write_text("int x;\n", encoding="utf-8")
    async with session(project, state=state, init_options={"verify": {"command": "touch OK"}}) as s:
        record = await trigger(s, "command")
        assert s.questions == []
        assert record["outcome"] == "passed"
        assert (project / "OK").exists()


# --- the command line shows the same message


def cli(state: Path, *argv: str, timeout: float = 10) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_verify", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=server_env(state),
        stdin=subprocess.DEVNULL,
    )


def test_explain_shows_the_ignored_keys(project: Path, state: Path) -> None:
    hostile_project(project, 'confirm = "never"\nautoDetect = false\n')
    done = cli(state, "explain", str(project))
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    messages = document["messages"]
    assert [m.split(":", 2)[1].strip() for m in messages] == ["confirm", "autoDetect"]
    assert messages[0].startswith("line 2: confirm:")
    assert messages[1].startswith("line 3: autoDetect:")
    assert all("ignored" in m for m in messages)


def test_check_shows_the_ignored_keys(project: Path, state: Path) -> None:
    (project / ".lsp-verify.toml").write_text('command = "true"\nconfirm = "never"\n')
    done = cli(state, "check", str(project))
    assert done.returncode == 0, done.stderr
    assert f"{project / '.lsp-verify.toml'}:2: confirm:" in done.stderr
    assert "ignored" in done.stderr


# --- the approval store is a FIFO (item 6): nothing hangs


def fifo_store(state: Path, name: str = "approvals.json") -> Path:
    folder = state / "xdg_state_home" / "lsp-verify"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    os.mkfifo(path)
    return path


def test_approve_with_a_fifo_store_returns(project: Path, state: Path) -> None:
    store = fifo_store(state)
    (project / ".lsp-verify.toml").write_text('command = "true"\n')
    done = cli(state, "approve", str(project))
    assert "not a regular file" in done.stderr, done.stderr
    assert str(store) in done.stderr
    # The store is replaced whole by the write: now a regular file holding the approval.
    assert done.returncode == 0, done.stderr
    assert store.is_file()
    listed = cli(state, "approvals")
    assert listed.returncode == 0
    assert json.loads(listed.stdout)["command"] == "true"


def test_approvals_with_a_fifo_store_returns(state: Path) -> None:
    fifo_store(state)
    done = cli(state, "approvals")
    assert done.returncode == 0
    assert done.stdout == ""
    assert "not a regular file" in done.stderr


def test_approve_with_a_fifo_lock_returns(project: Path, state: Path) -> None:
    fifo_store(state, "approvals.json.lock")
    (project / ".lsp-verify.toml").write_text('command = "true"\n')
    done = cli(state, "approve", str(project))
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "lock" in done.stderr and "not a regular file" in done.stderr


def defuse(fifo: Path) -> None:
    """Put an empty regular file in the FIFO's place, then give any reader blocked on the FIFO
    its end of file: a server without the defence then fails this test instead of hanging it
    (and its teardown) for good."""
    if not stat.S_ISFIFO(os.lstat(fifo).st_mode):
        return  # already replaced by an approval the server stored
    held = fifo.with_name(fifo.name + ".held")
    os.link(fifo, held)
    spare = fifo.with_name(fifo.name + ".spare")
    spare.write_bytes(b"")
    os.replace(spare, fifo)
    with contextlib.suppress(OSError):  # ENXIO: nobody was reading
        os.close(os.open(held, os.O_WRONLY | os.O_NONBLOCK))
    held.unlink()


async def test_the_server_answers_a_save_with_a_fifo_store(project: Path, state: Path) -> None:
    store = fifo_store(state)
    hostile_project(project, "")
    async with session(project, state=state) as s:
        try:
            s.answer = lambda params: DONT_RUN
            s.save("a.c", "int y;\n")
            await s.wait_for(lambda: s.questions, timeout=5, what="the approval question")
            await s.wait_for(lambda: s.finished(), timeout=5, what="the declined record")
            assert (await s.command("verify.showLastRun", timeout=5))["outcome"] == "declined"
            assert not pwned(project)
            warnings = [m.message for m in s.client.messages if str(store) in m.message]
            assert warnings and "not a regular file" in warnings[0]
        finally:
            defuse(store)
