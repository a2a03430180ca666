"""Affected first, end to end through the server: an edit of a module runs the test files
that import it first, and their failures show before the full command ends."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.e2e.test_failed_first import env, last_run, verify_errors
from tests.support.files import write
from tests.support.lsp_session import session
from tests.support.stdio import server_env

PAUSE, SLOW = 1.0, 6
OPTIONS = {"confirm": "never", "command": "pytest -q"}


def project_files(root: Path) -> None:
    """A suite whose only test of app/target.py goes through app/service.py and is collected
    last, after SLOW seconds of slow tests."""
    slow = "".join(f"def test_slow_{n}():\n    time.sleep({PAUSE})\n\n\n" for n in range(SLOW))
    write(
        root,
        {
            "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = .\n",
            "app/__init__.py": "",
            "app/target.py": "def value():\n    return 1\n",
            "app/service.py": "from app.target import value\n\n\ndef doubled():\n"
            "    return value() * 2\n",
            "tests/test_a_slow.py": "import time\n\n\n" + slow,
            "tests/test_b_other.py": "def test_other():\n    assert True\n",
            "tests/test_c_other.py": "def test_other():\n    assert True\n",
            "tests/test_z_service.py": "from app import service\n\n\ndef test_doubled():\n"
            "    assert service.doubled() == 2\n",
        },
    )


def break_target(root: Path) -> None:
    path = root / "app" / "target.py"
    path.write_text("def value():\n    return 5\n")
    later = time.time() + 2  # a modification time past the last run's, whatever the clock
    os.utime(path, (later, later))


async def test_an_edit_runs_the_test_file_that_imports_it_first(project: Path, state: Path) -> None:
    project_files(project)
    async with session(project, state=state, init_options=OPTIONS, env=env()) as s:
        passing = await s.command("verify.runNow")
        assert isinstance(passing, dict) and passing["outcome"] == "passed", passing
        assert [p["phase"] for p in passing["phases"]] == ["full"]
        break_target(project)
        start = time.monotonic()
        s.save("app/target.py")
        await s.wait_for(lambda: verify_errors(s), timeout=60, what="a verify error")
        elapsed = time.monotonic() - start
        uri, first = verify_errors(s)[0]
        assert uri.endswith("tests/test_z_service.py") and "doubled" in first.message
        assert elapsed < PAUSE * SLOW, f"{elapsed:.1f}s: the slow tests ran first"
        await s.wait_for(lambda: len(s.finished()) >= 2, timeout=60, what="the run's end")
        record: dict[str, Any] = await last_run(s)
        assert [(p["phase"], p["command"]) for p in record["phases"]] == [
            ("quick", "pytest tests/test_z_service.py -q --ff"),
            ("full", "pytest -q --ff"),
        ]
        assert record["outcome"] == "failed" and record["exitCode"] == 1  # the full command's
        assert record["affected"] == {
            "note": "affected first: 1 of 4 test files import what changed",
            "changed": ["app/target.py"],
            "selected": ["tests/test_z_service.py"],
            "chain": ["tests/test_z_service.py", "app/service.py", "app/target.py"],
        }


async def test_affected_first_off_runs_no_quick_phase(project: Path, state: Path) -> None:
    project_files(project)
    options = {**OPTIONS, "affectedFirst": False}
    async with session(project, state=state, init_options=options, env=env()) as s:
        await s.command("verify.runNow")
        break_target(project)
        explained = await s.command("verify.explain")
        assert explained["affectedFirst"] == "affected first: off (affectedFirst is false)"
        assert explained["settings"]["affectedFirst"] is False
        s.save("app/target.py")
        await s.wait_for(lambda: len(s.finished()) >= 2, timeout=60, what="the run's end")
        record = await last_run(s)
        assert [p["phase"] for p in record["phases"]] == ["full"]
        assert record["outcome"] == "failed" and record["affected"] is None


async def test_explain_shows_what_a_run_would_select(project: Path, state: Path) -> None:
    project_files(project)
    async with session(project, state=state, init_options=OPTIONS, env=env()) as s:
        await s.command("verify.runNow")
        break_target(project)
        explained = await s.command("verify.explain")
        assert explained["affectedFirst"] == (
            "affected first: 1 of 4 test files import what changed"
        )
        assert explained["affected"]["chain"] == [
            "tests/test_z_service.py",
            "app/service.py",
            "app/target.py",
        ]
        again = await s.command("verify.explain")  # explain is not a run: still changed
        assert again["affected"] == explained["affected"]


def test_check_takes_changed_files_and_the_switch(project: Path, state: Path) -> None:
    """`check --changed PATH` runs the test files that import PATH first; the project file's
    `affectedFirst = false` and `--no-affected-first` leave them out."""
    write(
        project,
        {
            "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = .\n",
            "app/__init__.py": "",
            "app/target.py": "def value():\n    return 5\n",
            "tests/test_a.py": "def test_a():\n    pass\n",
            "tests/test_b.py": "def test_b():\n    pass\n",
            "tests/test_target.py": "from app.target import value\n\n\ndef test_value():\n"
            "    assert value() == 1\n",
        },
    )

    def check(*args: str) -> dict[str, Any]:
        command = [sys.executable, "-m", "lsp_verify", "check", str(project), "--json", *args]
        done = subprocess.run(
            command, capture_output=True, text=True, env=server_env(state, env()), timeout=120
        )
        assert done.returncode == 1, done.stderr  # pytest's: a test failed
        record: dict[str, Any] = json.loads(done.stdout)
        return record

    changed = ("--command", "pytest -q", "--changed", str(project / "app" / "target.py"))
    record = check(*changed)
    assert [(p["phase"], p["command"]) for p in record["phases"]] == [
        ("quick", "pytest tests/test_target.py -q --ff"),
        ("full", "pytest -q --ff"),
    ]
    assert record["affected"]["chain"] == ["tests/test_target.py", "app/target.py"]
    shutil.rmtree(project / ".pytest_cache")  # no known failure to leave to --ff
    off = check(*changed, "--no-affected-first")
    assert [p["phase"] for p in off["phases"]] == ["full"] and off["affected"] is None
    shutil.rmtree(project / ".pytest_cache")
    (project / ".lsp-verify.toml").write_text("affectedFirst = false\n")
    by_file = check(*changed)
    assert [p["phase"] for p in by_file["phases"]] == ["full"] and by_file["affected"] is None
