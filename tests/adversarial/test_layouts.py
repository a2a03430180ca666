"""Odd workspaces a repository or an editor can present: a manifest that points outside the
folder, a folder deleted while its command runs, names that are not plain text, URIs with
escapes, a thousand folders. Each over the real server (or CLI), each survived."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.stdio import Reply, StdioClient, server_env
from tests.support.wire import did_save, frame, show_last_run

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths")


def record_after(
    server: StdioClient, rid: int, want: str, folder: Path | None = None, timeout: float = 20
) -> dict[str, Any]:
    """verify.showLastRun (of `folder`) until the last record has outcome `want`."""
    deadline = time.monotonic() + timeout
    arguments = [folder.as_uri()] if folder is not None else []
    while True:
        server.send(
            frame(
                {
                    "id": rid,
                    "method": "workspace/executeCommand",
                    "params": {"command": "verify.showLastRun", "arguments": arguments},
                }
            )
        )
        record = server.response(rid)["result"]
        if record is not None and record.get("outcome") == want:
            return dict(record)
        assert time.monotonic() < deadline, f"no {want} record; last: {record}"
        rid += 1
        time.sleep(0.05)


def explain(folder: Path, state: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "lsp_verify", "explain", str(folder)],
        capture_output=True,
        timeout=30,
        env=server_env(state),
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_a_manifest_linked_outside_the_folder_is_fingerprinted_by_what_it_points_at(
    raw: Any, tmp_path: Path, state: Path
) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    target = elsewhere / "Makefile"
    target.write_text("test:\n\ttouch ran\n")
    (project / "Makefile").symlink_to(target)
    before = explain(project, state)
    assert (before["runner"], before["manifest"]) == ("make", "Makefile")
    # The repository's link can be re-aimed: what it points at is what is approved.
    target.write_text("test:\n\ttouch ran; touch PWNED\n")
    after = explain(project, state)
    assert after["fingerprint"] != before["fingerprint"]

    # A client that cannot ask (it answers the question MethodNotFound, as vscode-jsonrpc's
    # clients do): the linked plan is the repository's, so nothing runs.
    server = raw()
    server.answers = lambda message: Reply(error=(-32601, "Unhandled method"))
    server.started(project, options={"verify": {}})
    (project / "a.py").write_text("")
    server.send(did_save((project / "a.py").as_uri()))
    record = record_after(server, 2, "declined")
    assert record["manifest"] == "Makefile"
    assert not (project / "ran").exists() and not (project / "PWNED").exists()
    assert server.finish() == 0


def test_a_folder_deleted_while_its_command_runs(raw: Any, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.py").write_text("")
    started = tmp_path / "started"
    command = f"touch {started}; sleep 0.5; exit 3"
    server = raw().started(project, options={"command": command, "confirm": "never"})
    server.send(did_save((project / "a.py").as_uri()))
    deadline = time.monotonic() + 20
    while not started.exists():  # the command runs: now its folder goes
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.01)
    shutil.rmtree(project)
    record = record_after(server, 2, "failed")
    assert record["exitCode"] == 3
    # The next save finds no folder: a record that says so, and the server still answers.
    server.send(did_save((project / "a.py").as_uri()))
    deadline = time.monotonic() + 20
    rid = 100
    while True:
        server.send(show_last_run(rid))
        record = server.response(rid)["result"]
        if "folder not found" in " ".join(record.get("tail", [])):
            break
        assert time.monotonic() < deadline, record
        rid += 1
        time.sleep(0.05)
    assert record["outcome"] == "failed" and record["exitCode"] is None
    assert server.finish() == 0


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("new\nline", id="newline"),
        pytest.param(os.fsdecode(b"caf\xe9-latin1"), id="not-utf8"),
        pytest.param("my project [v2] 100%", id="escaped-uri"),
    ],
)
def test_folder_names_that_are_not_plain_text(raw: Any, tmp_path: Path, name: str) -> None:
    project = tmp_path / name
    try:
        project.mkdir()
    except (OSError, UnicodeEncodeError) as exc:
        pytest.skip(f"this file system refuses the name: {exc}")
    (project / "a b+c.py").write_text("")
    server = raw().started(project, options={"command": "touch ran; exit 1", "confirm": "never"})
    uri = (project / "a b+c.py").as_uri()
    assert "%" in uri
    server.send(did_save(uri))
    # The summary lands on the document that was saved, by the URI the client uses.
    published = server.notification("textDocument/publishDiagnostics")
    assert published["params"]["uri"] == uri
    record = record_after(server, 2, "failed")
    assert (project / "ran").exists(), "the command ran somewhere else"
    assert record["exitCode"] == 1
    assert server.finish() == 0


def test_a_thousand_workspace_folders(raw: Any, tmp_path: Path) -> None:
    folders = []
    for n in range(1000):
        folder = tmp_path / f"f{n:04d}"
        folder.mkdir()
        folders.append(folder)
    (folders[737] / "a.py").write_text("")
    server = raw()
    started = time.monotonic()
    server.send(
        frame(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "processId": None,
                    "rootUri": None,
                    "capabilities": {},
                    "workspaceFolders": [{"uri": f.as_uri(), "name": f.name} for f in folders],
                    "initializationOptions": {"command": "touch ran; exit 1", "confirm": "never"},
                },
            }
        )
        + frame({"method": "initialized", "params": {}})
    )
    server.response(1)
    server.send(did_save((folders[737] / "a.py").as_uri()))
    record = record_after(server, 2, "failed", folders[737])
    assert record["folder"] == str(folders[737])
    assert [f.name for f in folders if (f / "ran").exists()] == ["f0737"]
    assert time.monotonic() - started < 20
    assert server.peak_rss_mb() < 150
    assert server.finish() == 0
