"""Affected first for pytest: what changed since the last run, the test files that import it,
the chain that says why, and when the quick phase is left out."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from lsp_verify.planning import affected
from lsp_verify.planning.arrange import arrange, arrangement_json
from lsp_verify.planning.plan import command_plan
from lsp_verify.planning.pytest_config import locate
from tests.support.files import write

SUITE = {
    "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
    "app/__init__.py": "",
    "app/target.py": "def value():\n    return 1\n",
    "app/service.py": "from app.target import value\n",
    "app/other.py": "",
    "tests/conftest.py": "",
    "tests/test_service.py": "from app import service\n",
    "tests/test_target.py": "from app.target import value\n",
    **{f"tests/test_other{i}.py": "import app.other\n" for i in range(4)},
}


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own, and no graph kept in memory from another test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(affected, "_memory", {})
    return tmp_path / "cache"


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    folder = write(tmp_path / "suite", SUITE)
    affected.select(str(folder), locate(str(folder)))  # the last run: nothing to compare with
    return folder


def touch(folder: Path, name: str, text: str) -> None:
    path = folder / name
    path.write_text(text)
    later = time.time() + 5  # past any file system's time resolution
    os.utime(path, (later, later))


def select(folder: Path, *named: str, remember: bool = True) -> affected.Affected:
    paths = [str(folder / n) for n in named]
    return affected.select(str(folder), locate(str(folder)), paths, remember=remember)


def test_a_change_selects_its_importers_with_a_chain(suite: Path) -> None:
    touch(suite, "app/target.py", "def value():\n    return 2\n")
    found = select(suite)
    assert found.changed == ("app/target.py",)
    assert found.selected == ("tests/test_service.py", "tests/test_target.py")
    assert found.chain == ("tests/test_service.py", "app/service.py", "app/target.py")
    assert found.note == "affected first: 2 of 6 test files import what changed"
    again = select(suite)  # the change was counted by the run before
    assert again.note == "affected first: nothing changed since the last run"


def test_a_named_file_counts_as_changed(suite: Path) -> None:
    found = select(suite, "app/service.py", "app")  # a folder named is no file
    assert found.changed == ("app/service.py",)
    assert found.selected == ("tests/test_service.py",)
    assert found.chain == ("tests/test_service.py", "app/service.py")


def test_a_changed_test_file_selects_itself(suite: Path) -> None:
    touch(suite, "tests/test_target.py", "from app.target import value\n# more\n")
    assert select(suite).selected == ("tests/test_target.py",)


def test_explain_does_not_count_as_a_run(suite: Path) -> None:
    touch(suite, "app/target.py", "X = 1\n")
    assert select(suite, remember=False).changed == ("app/target.py",)
    assert select(suite).changed == ("app/target.py",)


def test_the_last_run_is_kept_for_another_process(suite: Path, cache: Path) -> None:
    """`check` after `check`: the graph of the last run is read back from the cache."""
    files = list((cache / "lsp-verify" / "imports").iterdir())
    assert len(files) == 1 and json.loads(files[0].read_text())["folder"] == str(suite)
    affected._memory.clear()
    touch(suite, "app/service.py", "from app.target import value\n\n")
    assert select(suite).selected == ("tests/test_service.py",)


def test_a_broken_cache_is_a_first_run(suite: Path, cache: Path) -> None:
    for path in (cache / "lsp-verify" / "imports").iterdir():
        path.write_text('{"version": 1, "folder": "x", "files": [')
    affected._memory.clear()
    touch(suite, "app/target.py", "X = 1\n")
    assert select(suite).note == "affected first: nothing changed since the last run"
    assert select(suite, "app/target.py").selected  # the named file still counts


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        ("tests/conftest.py", "import pytest\n", "tests/conftest.py changed"),
        ("pyproject.toml", "[tool.pytest.ini_options]\n", "pyproject.toml changed"),
        (
            "app/target.py",
            "def value(:\n",
            "app/target.py does not parse (its imports are unknown)",
        ),
    ],
)
def test_what_affects_everything(suite: Path, name: str, text: str, why: str) -> None:
    touch(suite, name, text)
    found = select(suite)
    assert found.note == f"affected first: left out: {why}: every test is affected"
    assert found.selected == ()


def test_a_removed_module_affects_everything(suite: Path) -> None:
    (suite / "app/service.py").unlink()
    assert select(suite).note.startswith("affected first: left out: app/service.py was removed")


def test_more_than_half_the_suite_is_left_out(suite: Path) -> None:
    touch(suite, "app/other.py", "Y = 2\n")
    found = select(suite)
    assert found.note == (
        "affected first: left out: 4 of 6 test files are affected, more than half the suite"
    )
    assert found.selected == ()


def test_a_module_a_conftest_imports_affects_the_tests_below_it(tmp_path: Path) -> None:
    folder = write(
        tmp_path / "p",
        {
            "app/__init__.py": "",
            "app/db.py": "",
            "app/api.py": "",
            "tests/db/conftest.py": "from app import db\n",
            "tests/db/test_rows.py": "def test_rows(conn): pass\n",
            "tests/db/test_keys.py": "",
            **{f"tests/test_api{i}.py": "import app.api\n" for i in range(4)},
        },
    )
    affected.select(str(folder), locate(str(folder)))
    touch(folder, "app/db.py", "CONNECTED = True\n")
    found = select(folder)
    assert found.selected == ("tests/db/test_keys.py", "tests/db/test_rows.py")
    assert found.chain == ("tests/db/test_keys.py", "tests/db/conftest.py", "app/db.py")


def test_nothing_imports_it(suite: Path) -> None:
    touch(suite, "app/unused.py", "")
    assert select(suite).note == "affected first: no test file imports what changed"


def test_the_quick_phase_runs_the_saved_test_file_then_the_affected(suite: Path) -> None:
    touch(suite, "app/target.py", "def value():\n    return 2\n")
    plan = command_plan(str(suite), "pytest -q", "test")
    saved = str(suite / "tests/test_other1.py")
    arranged = arrange(plan, True, saved, {}, affected=True)
    assert arranged.quick is not None
    assert arranged.quick.paths == (
        "tests/test_other1.py",
        "tests/test_service.py",
        "tests/test_target.py",
    )
    assert arranged.quick.command == (
        "pytest tests/test_other1.py tests/test_service.py tests/test_target.py -q --ff"
    )
    assert arranged.affected is not None and arranged.affected.selected


def test_files_that_failed_last_time_are_left_to_ff(suite: Path) -> None:
    """When every affected file failed last time, --ff runs them first in the full command:
    no quick phase, so the cleared state after a fix costs what the bare command costs."""
    lastfailed = suite / ".pytest_cache/v/cache/lastfailed"
    lastfailed.parent.mkdir(parents=True)
    lastfailed.write_text(json.dumps({"tests/test_service.py::test_x": True}))
    touch(suite, "app/service.py", "from app.target import value\n\n")
    plan = command_plan(str(suite), "pytest -q", "test")
    found = arrange(plan, True, None, {}, affected=True)
    assert found.affected is not None and found.affected.selected == ("tests/test_service.py",)
    assert found.quick is None
    # With another affected file, the known failure runs first, then it.
    touch(suite, "app/target.py", "def value():\n    return 2\n")
    arranged = arrange(plan, True, None, {}, affected=True)
    assert arranged.quick is not None
    assert arranged.quick.paths == ("tests/test_service.py", "tests/test_target.py")


def test_off_and_where_there_is_no_quick_phase(suite: Path) -> None:
    touch(suite, "app/target.py", "def value():\n    return 2\n")
    plan = command_plan(str(suite), "pytest -q", "test")
    assert arrange(plan, True, None, {}).quick is None  # affected off: the saved file only
    document = arrangement_json(plan, True, False)
    assert document["affectedFirst"] == "affected first: off (affectedFirst is false)"
    assert arrangement_json(plan, False, True)["affectedFirst"] == (
        "affected first: off (failedFirst is false)"
    )
    named = command_plan(str(suite), "pytest -q tests", "test")
    assert arrangement_json(named, True, True)["affectedFirst"] == (
        "affected first: no quick phase: the command names what to collect (tests)"
    )
    document = arrangement_json(plan, True, True)
    assert document["affectedFirst"] == "affected first: 2 of 6 test files import what changed"
    assert document["affected"]["chain"] == [
        "tests/test_service.py",
        "app/service.py",
        "app/target.py",
    ]


def test_with_affected_files_the_full_command_always_follows(suite: Path) -> None:
    """-x: a failure of the saved test file alone ends the run (the full command would stop
    at it too); one of a test file the change reaches never does."""
    plan = command_plan(str(suite), "pytest -x -q", "test")
    saved = str(suite / "tests/test_other1.py")
    alone = arrange(plan, True, saved, {}, affected=True)
    assert alone.quick is not None and alone.quick.ends_run
    touch(suite, "app/target.py", "def value():\n    return 2\n")
    arranged = arrange(plan, True, saved, {}, affected=True)
    assert arranged.quick is not None and len(arranged.quick.paths) == 3
    assert not arranged.quick.ends_run


def test_known_failures_run_before_the_affected_files(suite: Path) -> None:
    """--ff's order: what failed last time first (still red?), then what the edit reaches."""
    lastfailed = suite / ".pytest_cache/v/cache/lastfailed"
    lastfailed.parent.mkdir(parents=True)
    failed = {"tests/test_other2.py::test_a": True, "tests/test_other2.py::test_b": True}
    lastfailed.write_text(json.dumps({**failed, "tests/gone.py::test_c": True}))
    touch(suite, "app/target.py", "def value():\n    return 2\n")
    plan = command_plan(str(suite), "pytest -q", "test")
    arranged = arrange(plan, True, None, {}, affected=True)
    assert arranged.quick is not None
    assert arranged.quick.paths == (
        "tests/test_other2.py",
        "tests/test_service.py",
        "tests/test_target.py",
    )
    # Without affected files, the saved test file alone: --ff runs the failures in the full
    # command, right after it, as before.
    saved = str(suite / "tests/test_other1.py")
    alone = arrange(plan, True, saved, {}, affected=False)
    assert alone.quick is not None and alone.quick.paths == ("tests/test_other1.py",)


def test_a_checkout_of_many_files_names_some(suite: Path) -> None:
    for i in range(80):
        touch(suite, f"app/new{i:02d}.py", "")
    found = select(suite)
    assert len(found.changed) == affected.MAX_LISTED and found.changed[0] == "app/new00.py"
    assert found.note == "affected first: no test file imports what changed"
