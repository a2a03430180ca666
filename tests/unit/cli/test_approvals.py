"""`lsp-verify approve`, `revoke` and `approvals`, in this process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lsp_verify import cli
from lsp_verify.planning.plan import Plan
from lsp_verify.trust import (
    APPROVED,
    TrustStore,
    plan_fingerprint,
)
from tests.support.trust import isolate_home, make, project, store_path


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own state dir; HOME too (tests/support/trust.py)."""
    return isolate_home(tmp_path, monkeypatch)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return project(tmp_path)


# -- fingerprint and policy


# -- round trips


# -- where and how it is written


# -- damaged stores


# -- two processes at once


# -- command line


@pytest.fixture
def fake_planner(monkeypatch: pytest.MonkeyPatch) -> dict[str, Plan]:
    """make_plan stand-in: the CLI's own logic, independent of the detector."""
    plans: dict[str, Plan] = {}

    def make_plan(folder: str, editor: object = None) -> Plan:
        return plans[folder]

    import lsp_verify.planning.plan

    monkeypatch.setattr(lsp_verify.planning.plan, "make_plan", make_plan, raising=False)
    return plans


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_approve_approvals_revoke(
    capsys: pytest.CaptureFixture[str],
    workspace: Path,
    fake_planner: dict[str, Plan],
    _isolated_home: Path,
) -> None:
    plan = make(workspace)
    fake_planner[str(workspace)] = plan
    status, out, err = run_cli(capsys, "approve", str(workspace))
    assert (status, err) == (0, "")
    assert "make test" in out and "Makefile" in out and "detected" in out
    assert plan_fingerprint(plan) in out
    assert TrustStore().lookup(str(workspace), plan_fingerprint(plan)) == APPROVED

    status, out, err = run_cli(capsys, "approvals")
    assert status == 0
    (line,) = out.splitlines()
    entry = json.loads(line)
    assert entry["folder"] == str(workspace)
    assert entry["verdict"] == "approved"
    assert entry["fingerprint"] == plan_fingerprint(plan)
    assert entry["command"] == "make test"

    status, out, err = run_cli(capsys, "approvals", str(workspace.parent))
    assert (status, out) == (0, "")  # stdout stays JSON lines; stderr says why it is empty
    assert err.startswith(f"lsp-verify approvals: nothing stored for {workspace.parent} (")

    status, out, _ = run_cli(capsys, "revoke", str(workspace))
    assert status == 0
    assert "revoked 1 decision " in out
    assert TrustStore().decisions() == []
    status, out, _ = run_cli(capsys, "revoke", str(workspace))
    assert (status, "revoked 0 decisions" in out) == (0, True)
    status, out, err = run_cli(capsys, "approvals")
    assert (status, out) == (0, "")
    assert err == f"lsp-verify approvals: nothing stored ({store_path(_isolated_home)})\n"


def test_cli_defaults_to_the_current_folder(
    capsys: pytest.CaptureFixture[str],
    workspace: Path,
    fake_planner: dict[str, Plan],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_planner[str(workspace)] = make(workspace)
    monkeypatch.chdir(workspace)
    assert run_cli(capsys, "approve")[0] == 0
    assert [d.folder for d in TrustStore().decisions()] == [str(workspace)]
    assert run_cli(capsys, "revoke")[0] == 0
    assert TrustStore().decisions() == []


@pytest.mark.parametrize(
    "plan_change",
    [
        {"source": None, "runner": None, "command": None, "steps": (), "reason": "no rule"},
        {"source": "settings", "runner": None},
    ],
    ids=["no-plan", "settings"],
)
def test_cli_approve_with_nothing_to_approve_exits_3(
    capsys: pytest.CaptureFixture[str],
    _isolated_home: Path,
    workspace: Path,
    fake_planner: dict[str, Plan],
    plan_change: dict[str, Any],
) -> None:
    fake_planner[str(workspace)] = make(workspace, **plan_change)
    status, out, _ = run_cli(capsys, "approve", str(workspace))
    assert status == 3
    assert "nothing to approve" in out
    assert not store_path(_isolated_home).exists()


@pytest.mark.parametrize("cmd", ["approve", "revoke", "approvals"])
def test_cli_missing_dir_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cmd: str
) -> None:
    status, out, err = run_cli(capsys, cmd, str(tmp_path / "missing"))
    assert (status, out) == (2, "")
    assert "missing" in err


def test_cli_reports_a_damaged_store_on_stderr(
    capsys: pytest.CaptureFixture[str], _isolated_home: Path
) -> None:
    path = store_path(_isolated_home)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x00garbage")
    status, out, err = run_cli(capsys, "approvals")
    assert (status, out) == (0, "")
    assert err.count("lsp-verify:") == 1 and str(path) in err


def test_cli_approve_fails_with_1_when_the_store_cannot_be_written(
    capsys: pytest.CaptureFixture[str],
    _isolated_home: Path,
    workspace: Path,
    fake_planner: dict[str, Plan],
) -> None:
    store_path(_isolated_home).mkdir(parents=True)
    fake_planner[str(workspace)] = make(workspace)
    status, _, err = run_cli(capsys, "approve", str(workspace))
    assert status == 1
    assert "not written" in err


@pytest.mark.parametrize(
    ("manifest", "text", "source", "command"),
    [
        (".lsp-verify.toml", 'command = "true"\n', "project-file", "true"),
        ("Makefile", "test:\n\ttrue\n", "detected", "make test"),
    ],
)
def test_cli_approve_with_the_real_planner(
    capsys: pytest.CaptureFixture[str],
    workspace: Path,
    manifest: str,
    text: str,
    source: str,
    command: str,
) -> None:
    (workspace / manifest).write_text(text)
    status, out, err = run_cli(capsys, "approve", str(workspace))
    assert status == 0, (out, err)
    (decision,) = TrustStore().decisions()
    assert (decision.folder, decision.command, decision.source, decision.manifest) == (
        str(workspace),
        command,
        source,
        manifest,
    )
    assert decision.fingerprint in out
    # The same plan again is the same fingerprint: approving twice keeps one decision.
    assert run_cli(capsys, "approve", str(workspace))[0] == 0
    assert len(TrustStore().decisions()) == 1
    # Any edit of the manifest is a new plan, approved separately.
    (workspace / manifest).write_text(text + "# edited\n")
    assert run_cli(capsys, "approve", str(workspace))[0] == 0
    assert len({d.fingerprint for d in TrustStore().decisions()}) == 2


def test_cli_approve_with_the_real_planner_and_no_plan(
    capsys: pytest.CaptureFixture[str], _isolated_home: Path, workspace: Path
) -> None:
    (workspace / "README.md").write_text("run the tests with make test\n")
    status, out, _ = run_cli(capsys, "approve", str(workspace))
    assert status == 3
    assert "nothing to approve" in out
    assert not store_path(_isolated_home).exists()


def test_cli_approve_is_refused_inside_claude_code_s_tools(
    capsys: pytest.CaptureFixture[str],
    workspace: Path,
    fake_planner: dict[str, Plan],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # What a model's Bash tool call looks like: CLAUDECODE set, stdin not a terminal.
    fake_planner[str(workspace)] = make(workspace)
    monkeypatch.setenv("CLAUDECODE", "1")
    status, out, err = run_cli(capsys, "approve", str(workspace))
    assert (status, out) == (1, "")
    assert "refused inside Claude Code's tools" in err and "terminal of their own" in err
    assert TrustStore().decisions() == []
