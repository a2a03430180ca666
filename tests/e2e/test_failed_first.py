"""Red in seconds, end to end through the server: failed first and the saved test file first."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.support.lsp_session import Session, session

NEVER_ASK = {"confirm": "never"}
# Each slow test sleeps this long; the suite holds SLOW of them before the failing one.
PAUSE, SLOW = 1.0, 8
SUITE_SECONDS = PAUSE * SLOW


def env() -> dict[str, str]:
    # The detected command is a bare `pytest`: this interpreter's, without this venv's plugins.
    return {
        "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"],
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTEST_ADDOPTS": "",
    }


def slow_suite(root: Path, ini: str = "[pytest]\ntestpaths = tests\n") -> None:
    """SLOW slow tests, then the failing test, collected last."""
    (root / "tests").mkdir()
    (root / "pytest.ini").write_text(ini)
    (root / "src.py").write_text("VALUE = 1\n")
    slow = "".join(f"def test_slow_{n}():\n    time.sleep({PAUSE})\n\n\n" for n in range(SLOW))
    (root / "tests" / "test_a_slow.py").write_text("import time\n\n\n" + slow)
    (root / "tests" / "test_z_last.py").write_text("def test_last():\n    assert 1 == 2\n")


def remember_failure(root: Path, nodeid: str = "tests/test_z_last.py::test_last") -> None:
    """What pytest's cache holds after a run in which `nodeid` failed."""
    cache = root / ".pytest_cache" / "v" / "cache"
    cache.mkdir(parents=True)
    (cache / "lastfailed").write_text(json.dumps({nodeid: True}))


def verify_errors(s: Session) -> list[tuple[str, types.Diagnostic]]:
    return [
        (uri, d)
        for uri, diagnostics in s.publishes
        for d in diagnostics
        if d.source == "verify" and d.severity == types.DiagnosticSeverity.Error
    ]


async def last_run(s: Session) -> dict[str, Any]:
    record = await s.command("verify.showLastRun")
    assert isinstance(record, dict)
    return record


async def test_a_still_failing_last_test_is_red_before_the_suite_could_finish(
    project: Path, state: Path
) -> None:
    slow_suite(project)
    remember_failure(project)
    async with session(project, state=state, init_options=NEVER_ASK, env=env()) as s:
        start = time.monotonic()
        s.save("src.py")
        await s.wait_for(lambda: verify_errors(s), timeout=30, what="a verify error")
        elapsed = time.monotonic() - start
        assert elapsed < SUITE_SECONDS, f"{elapsed:.1f}s: the whole suite ran first"
        await s.wait_for(lambda: s.finished(), what="the run's end")
        record = await last_run(s)
        assert record["outcome"] == "failed" and record["exitCode"] == 1
        assert record["command"] == "pytest -x -q --ff"
        assert record["failedFirst"] == "--ff added: failed first"
        assert [p["phase"] for p in record["phases"]] == ["full"]
        assert any("test_last" in d.message for _, d in verify_errors(s))


async def test_failed_first_off_runs_the_bare_command(project: Path, state: Path) -> None:
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "test_one.py").write_text("def test_one():\n    assert 1 == 2\n")
    remember_failure(project, "test_one.py::test_one")
    options = {**NEVER_ASK, "failedFirst": False}
    async with session(project, state=state, init_options=options, env=env()) as s:
        s.save("test_one.py")
        await s.wait_for(lambda: s.finished(), what="the run's end")
        record = await last_run(s)
        assert record["command"] == "pytest -x -q"
        assert record["steps"] == ["pytest -x -q"]
        assert record["failedFirst"] == "failed first: off (failedFirst is false)"
        assert [p["phase"] for p in record["phases"]] == ["full"]  # no quick phase either
        explained = await s.command("verify.explain")
        assert explained["runs"] == "pytest -x -q"
        assert explained["settings"]["failedFirst"] is False


async def test_a_project_without_the_cache_or_with_its_own_order_is_left_as_it_is(
    tmp_path: Path, state: Path
) -> None:
    cases = {
        "nocache": ("-p no:cacheprovider", "addopts has -p no:cacheprovider (pytest.ini)"),
        "lf": ("--lf", "addopts already says --lf (pytest.ini)"),
    }
    folders = []
    for name, (addopts, _) in cases.items():
        folder = tmp_path / name
        folder.mkdir()
        (folder / "pytest.ini").write_text(f"[pytest]\naddopts = {addopts}\n")
        (folder / "test_one.py").write_text("def test_one():\n    assert 1 == 2\n")
        folders.append(folder)
    async with session(
        folders[0], state=state, init_options=NEVER_ASK, env=env(), folders=folders
    ) as s:
        for folder, (_, why) in zip(folders, cases.values()):
            explained = await s.command("verify.explain", folder.as_uri())
            assert explained["command"] == "pytest -x -q"
            assert explained["runs"] == "pytest -x -q"
            assert explained["failedFirst"] == f"failed first: not added: {why}"
            record = await s.command("verify.runNow", folder.as_uri(), timeout=60)
            assert record["command"] == "pytest -x -q", record
            assert record["outcome"] == "failed" and record["exitCode"] == 1
            assert record["failedFirst"] == f"failed first: not added: {why}"


async def test_a_failure_in_the_saved_test_file_shows_from_the_quick_phase(
    project: Path, state: Path
) -> None:
    """-x: the saved file's failure ends the run; the slow tests never run."""
    slow_suite(project)
    async with session(project, state=state, init_options=NEVER_ASK, env=env()) as s:
        start = time.monotonic()
        uri = s.save("tests/test_z_last.py")
        await s.wait_for(lambda: verify_errors(s), timeout=30, what="a verify error")
        assert time.monotonic() - start < SUITE_SECONDS
        await s.wait_for(lambda: s.finished(), what="the run's end")
        record = await last_run(s)
        assert [(p["phase"], p["command"]) for p in record["phases"]] == [
            ("quick", "pytest tests/test_z_last.py -x -q --ff")
        ]
        assert record["outcome"] == "failed" and record["exitCode"] == 1
        assert "would fail too" in record["reason"]
        located = [d for d in s.diagnostics(uri) if d.range.start.line == 1]
        assert located and "test_last" in located[0].message


async def test_without_x_the_full_command_still_decides(project: Path, state: Path) -> None:
    """The quick phase's failure shows first; the full run's record replaces it."""
    (project / "tests").mkdir()
    (project / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    (project / "tests" / "test_a.py").write_text(
        "import time\n\n\ndef test_slow():\n    time.sleep(2)\n    assert False, 'slow one'\n"
    )
    (project / "tests" / "test_b.py").write_text("def test_b():\n    assert 1 == 2\n")
    options = {**NEVER_ASK, "command": "pytest -q"}
    async with session(project, state=state, init_options=options, env=env()) as s:
        uri = s.save("tests/test_b.py")
        await s.wait_for(lambda: verify_errors(s), timeout=30, what="a verify error")
        first_uri, first = verify_errors(s)[0]
        assert first_uri == uri and "test_b" in first.message  # from the quick phase
        await s.wait_for(lambda: s.finished(), what="the run's end")
        record = await last_run(s)
        assert [p["phase"] for p in record["phases"]] == ["quick", "full"]
        assert record["phases"][1]["command"] == "pytest -q --ff"
        assert record["command"] == "pytest -q --ff"
        messages = [d.message for d in s.diagnostics(uri)]
        assert any("test_b" in m for m in messages)
        slow = s.diagnostics((project / "tests" / "test_a.py").as_uri())
        assert any("slow one" in d.message for d in slow)  # the full run's verdict


async def test_an_approved_plan_is_not_asked_about_again_for_ff(project: Path, state: Path) -> None:
    """The approval covers the command as the repository wrote it: --ff, on or off, is
    lsp-verify's own arrangement and never asks again."""
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "test_one.py").write_text("def test_one():\n    assert 1 == 2\n")
    (project / "src.py").write_text("VALUE = 1\n")
    async with session(project, state=state, env=env(), configuration={}) as s:
        s.answer = lambda params: "Always for this plan"
        s.save("src.py")
        await s.wait_for(lambda: len(s.finished()) >= 1, what="the first run")
        assert len(s.questions) == 1
        assert "--ff" not in s.questions[0].message  # the plan as the repository wrote it
        first = await last_run(s)
        assert first["command"] == "pytest -x -q --ff"
        explained = await s.command("verify.explain")
        assert first["fingerprint"] == explained["fingerprint"]  # the approved plan's
        s.client.set_configuration({"failedFirst": False}, section="verify")
        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"verify": {"failedFirst": False}})
        )
        await asyncio.sleep(0.5)
        s.save("src.py")
        await s.wait_for(lambda: len(s.finished()) >= 2, what="the second run")
        assert (await last_run(s))["command"] == "pytest -x -q"
        assert len(s.questions) == 1
