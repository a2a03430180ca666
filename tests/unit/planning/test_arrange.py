"""Failed first and the saved test file first: which runs are arranged, how, and why not."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from lsp_verify.planning.arrange import ADDED, arrange, arrangement_json
from lsp_verify.planning.plan import Plan, command_plan, make_plan
from lsp_verify.planning.pytest_args import parse_call, read_options
from tests.support.cost import cpu_clock
from tests.support.files import write
from tests.support.properties import examples

NO_ENV: dict[str, str] = {}


def plan_of(folder: Path, command: str) -> Plan:
    return command_plan(str(folder), command, "test")


@pytest.mark.parametrize(
    "command",
    [
        "pytest -x -q",
        "pytest",
        "py.test -q",
        ".venv/bin/pytest -x -q",
        "uv run pytest -x -q",
        "python -m pytest -x",
        "python3.11 -m pytest -x",
        "/usr/bin/python3 -m pytest",
        "PYTHONPATH=src pytest -x",
        "pytest -k 'not slow' -q",
    ],
)
def test_pytest_runs_get_ff(tmp_path: Path, command: str) -> None:
    arranged = arrange(plan_of(tmp_path, command), True, environ=NO_ENV)
    assert arranged.command == command + " --ff"
    assert arranged.failed_first == ADDED


@pytest.mark.parametrize(
    "command",
    [
        "make test",
        "cargo test",
        "tox",
        "pytest -x; echo done",
        "pytest -x && mypy .",
        "pytest | tee log",
        "pytest $ARGS",
        "pytest `cat args`",
        "pytest -x # comment",
        "python -c 'import pytest'",
        "python -m pytest_other",
        "uv run --with x pytest",
        "pytest 'unclosed",
        "",
    ],
)
def test_other_commands_run_as_they_are(tmp_path: Path, command: str) -> None:
    arranged = arrange(plan_of(tmp_path, command or "true"), True, environ=NO_ENV)
    assert arranged.command == (command or "true")
    assert arranged.failed_first.startswith("failed first: not added:")


@pytest.mark.parametrize(
    ("files", "command", "env", "why"),
    [
        (
            {"pytest.ini": "[pytest]\naddopts = -p no:cacheprovider\n"},
            "pytest -x",
            "",
            "addopts has -p no:cacheprovider (pytest.ini)",
        ),
        (
            {"pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-q -pno:cacheprovider"\n'},
            "pytest -x",
            "",
            "addopts has -p no:cacheprovider (pyproject.toml)",
        ),
        (
            {"pyproject.toml": '[tool.pytest]\naddopts = ["-p", "no:cacheprovider"]\n'},
            "pytest -x",
            "",
            "addopts has -p no:cacheprovider (pyproject.toml)",
        ),
        (
            {"tox.ini": "[pytest]\naddopts = --lf\n"},
            "pytest -x",
            "",
            "addopts already says --lf (tox.ini)",
        ),
        (
            {"setup.cfg": "[tool:pytest]\naddopts = --new-first\n"},
            "pytest",
            "",
            "addopts already says --new-first (setup.cfg)",
        ),
        ({}, "pytest -x -p no:cacheprovider", "", "the command has -p no:cacheprovider"),
        ({}, "pytest --ff -x", "", "the command already says --ff"),
        ({}, "pytest --sw", "", "the command already says --sw"),
        ({}, "pytest -c other.ini", "", "the command names its own configuration (-c)"),
        ({}, "pytest -- tests", "", "the command passes `--`"),
        ({}, "pytest -x", "-p no:cacheprovider", "PYTEST_ADDOPTS has -p no:cacheprovider"),
        ({}, "pytest -x", "--lf", "PYTEST_ADDOPTS already says --lf"),
        ({"pytest.ini": "[pytest\n"}, "pytest -x", "", "cannot read pytest's configuration"),
    ],
)
def test_a_project_that_orders_or_has_no_cache_is_left_as_it_is(
    tmp_path: Path, files: dict[str, str], command: str, env: str, why: str
) -> None:
    write(tmp_path, files)
    arranged = arrange(plan_of(tmp_path, command), True, environ={"PYTEST_ADDOPTS": env})
    assert arranged.command == command
    assert arranged.failed_first.startswith("failed first: not added: " + why)


def test_the_configuration_above_the_folder_counts(tmp_path: Path) -> None:
    """pytest looks for its configuration in the folders above, and so does this."""
    write(tmp_path, {"pytest.ini": "[pytest]\naddopts = -p no:cacheprovider\n"})
    sub = tmp_path / "pkg"
    sub.mkdir()
    assert arrange(plan_of(sub, "pytest"), True, environ=NO_ENV).command == "pytest"


def test_off_runs_the_command_as_planned(tmp_path: Path) -> None:
    arranged = arrange(plan_of(tmp_path, "pytest -x -q"), False, saved=None, environ=NO_ENV)
    assert arranged.command == "pytest -x -q"
    assert arranged.failed_first == "failed first: off (failedFirst is false)"
    assert arranged.quick is None


def test_the_plan_and_its_fingerprint_do_not_change(tmp_path: Path) -> None:
    """The approval is of the plan as the repository wrote it: --ff is lsp-verify's own."""
    write(tmp_path, {"pytest.ini": "[pytest]\n"})
    plan = make_plan(str(tmp_path))
    assert plan.command == "pytest -x -q" and plan.steps == ("pytest -x -q",)
    document = arrangement_json(plan, True)
    assert document["runs"] == "pytest -x -q --ff"
    assert document["failedFirst"] == ADDED


@pytest.mark.parametrize(
    ("args", "maxfail"),
    [
        (["-x"], 1),
        (["-qx"], 1),
        (["--exitfirst"], 1),
        (["--maxfail=1"], 1),
        (["--maxfail", "1"], 1),
        (["-x", "--maxfail=3"], 3),
        (["--maxfail=99999999999999"], None),
        (["-kx"], None),  # -k takes "x" as its expression
        (["-q"], None),
    ],
)
def test_stops_at_the_first_failure(args: list[str], maxfail: int | None) -> None:
    assert read_options(args).maxfail == maxfail


@pytest.mark.parametrize(
    ("args", "positional", "unsure"),
    [
        (["-x", "-q"], None, None),
        (["-k", "not slow", "-m", "fast"], None, None),
        (["--tb", "short", "tests"], "tests", None),
        (["tests/unit"], "tests/unit", None),
        (["--cov", "src"], "src", "--cov"),  # unsure: src may be a path
        (["-Z"], None, "-Z"),
    ],
)
def test_paths_in_the_options(args: list[str], positional: str | None, unsure: str | None) -> None:
    options = read_options(args)
    assert (options.positional, options.unsure) == (positional, unsure)


def test_the_program_ends_where_the_text_says(tmp_path: Path) -> None:
    call = parse_call("A=1  python  -m pytest  -x -q")
    assert call is not None
    assert call.args == ("-x", "-q")
    assert call.command[: call.program_end].rstrip().endswith("pytest")


@pytest.mark.parametrize("kind", ["make check", "pytest -x -q"])
def test_every_save_of_a_plan_reads_its_command_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Every save arranges the same command again; reading it with shlex costs 20 us of the
    latency the save -> diagnostics guard measures (benchmarks/lsp.py), so it is read once."""
    import lsp_verify.planning.pytest_args as pytest_args

    made: list[str] = []
    real = pytest_args.shlex.shlex

    def counting(stream: Any, *args: Any, **kwargs: Any) -> Any:
        made.append(stream if isinstance(stream, str) else stream.getvalue())
        return real(stream, *args, **kwargs)

    monkeypatch.setattr(pytest_args.shlex, "shlex", counting)
    command = f"{kind} {tmp_path.name}"  # a command no other test has read
    saved = str(tmp_path / "test_a.py")
    arrangements = [arrange(plan_of(tmp_path, command), True, saved, NO_ENV) for _ in range(3)]
    assert made.count(command) == 1
    assert arrangements[0] == arrangements[1] == arrangements[2]


# ----- the saved test file first -----


def quick_project(folder: Path, ini: str = "[pytest]\ntestpaths = tests\n") -> None:
    write(
        folder,
        {
            "pytest.ini": ini,
            "tests/test_calc.py": "def test_add():\n    assert 1 + 1 == 2\n",
            "tests/helpers.py": "X = 1\n",
            "src/test_not_collected.py": "def test_x():\n    pass\n",
        },
    )


def test_a_saved_test_file_runs_alone_first(tmp_path: Path) -> None:
    quick_project(tmp_path)
    saved = str(tmp_path / "tests" / "test_calc.py")
    arranged = arrange(plan_of(tmp_path, "pytest -x -q"), True, saved, environ=NO_ENV)
    assert arranged.quick is not None
    assert arranged.quick.command == "pytest tests/test_calc.py -x -q --ff"
    assert arranged.quick.ends_run  # -x: the full command stops at its first failure too
    without_x = arrange(plan_of(tmp_path, "pytest -q"), True, saved, environ=NO_ENV)
    assert without_x.quick is not None and not without_x.quick.ends_run


@pytest.mark.parametrize(
    ("saved", "ini", "command"),
    [
        ("tests/helpers.py", None, "pytest -x"),  # not a test file by python_files
        ("src/test_not_collected.py", None, "pytest -x"),  # outside testpaths
        ("tests/test_calc.py", None, "pytest -x tests"),  # the command names paths
        ("tests/test_calc.py", None, "pytest -x --lf"),  # --lf picks the tests
        ("tests/test_calc.py", None, "pytest -x --cov src"),  # an option not known here
        ("tests/test_calc.py", None, "make test"),
        ("tests/test_calc.py", "[pytest]\npython_files = check_*.py\n", "pytest -x"),
        ("tests/test_calc.py", "[pytest]\nnorecursedirs = tests\n", "pytest -x"),
        ("tests/test_calc.py", "[pytest]\naddopts = tests\n", "pytest -x"),
    ],
)
def test_no_quick_phase_where_it_could_differ(
    tmp_path: Path, saved: str, ini: str | None, command: str
) -> None:
    quick_project(tmp_path, *([ini] if ini else []))
    arranged = arrange(plan_of(tmp_path, command), True, str(tmp_path / saved), environ=NO_ENV)
    assert arranged.quick is None


def test_no_quick_phase_when_a_conftest_picks_the_files(tmp_path: Path) -> None:
    quick_project(tmp_path)
    write(tmp_path, {"tests/conftest.py": 'collect_ignore = ["test_calc.py"]\n'})
    saved = str(tmp_path / "tests" / "test_calc.py")
    assert arrange(plan_of(tmp_path, "pytest -x"), True, saved, environ=NO_ENV).quick is None


def test_no_quick_phase_when_the_file_has_a_configuration_of_its_own(tmp_path: Path) -> None:
    quick_project(tmp_path)
    write(tmp_path, {"tests/pytest.ini": "[pytest]\n"})
    saved = str(tmp_path / "tests" / "test_calc.py")
    assert arrange(plan_of(tmp_path, "pytest -x"), True, saved, environ=NO_ENV).quick is None


def test_a_path_with_spaces_is_quoted(tmp_path: Path) -> None:
    write(
        tmp_path, {"pytest.ini": "[pytest]\n", "my tests/test_a b.py": "def test_a():\n    pass\n"}
    )
    saved = os.path.join(tmp_path, "my tests", "test_a b.py")
    arranged = arrange(plan_of(tmp_path, "pytest -x"), True, saved, environ=NO_ENV)
    assert arranged.quick is not None
    assert arranged.quick.command == "pytest 'my tests/test_a b.py' -x --ff"


def test_no_quick_phase_for_a_file_whose_failures_ff_runs_first(tmp_path: Path) -> None:
    """They run first anyway: a quick phase would only delay the cleared state."""
    quick_project(tmp_path)
    saved = str(tmp_path / "tests" / "test_calc.py")
    cache = tmp_path / ".pytest_cache" / "v" / "cache"
    cache.mkdir(parents=True)
    (cache / "lastfailed").write_text('{"tests/test_other.py::test_x": true}')
    assert arrange(plan_of(tmp_path, "pytest -x"), True, saved, environ=NO_ENV).quick is not None
    (cache / "lastfailed").write_text('{"tests/test_calc.py::test_add": true}')
    assert arrange(plan_of(tmp_path, "pytest -x"), True, saved, environ=NO_ENV).quick is None
    # Without --ff (no cache provider) the quick phase is the only way to see it early.
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\ntestpaths = tests\naddopts = -p no:cacheprovider\n"
    )
    assert arrange(plan_of(tmp_path, "pytest -x"), True, saved, environ=NO_ENV).quick is not None


def test_a_fifo_or_garbage_never_hangs_or_raises(tmp_path: Path) -> None:
    quick_project(tmp_path)
    os.mkfifo(tmp_path / "tests" / "conftest.py")
    cache = tmp_path / ".pytest_cache" / "v" / "cache"
    cache.mkdir(parents=True)
    (cache / "lastfailed").write_bytes(b"\xff[not json")
    saved = str(tmp_path / "tests" / "test_calc.py")
    arranged = arrange(plan_of(tmp_path, "pytest -x"), True, saved, environ=NO_ENV)
    assert arranged.command == "pytest -x --ff"
    assert arranged.quick is None  # the conftest.py cannot be read: it may pick files


@given(st.text(max_size=80), st.text(max_size=80))
@hsettings(max_examples=examples(200), deadline=None)
def test_any_command_and_addopts_are_read_without_raising(command: str, addopts: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "pytest.ini").write_text("[pytest]\naddopts = " + addopts.replace("\n", " "))
        arranged = arrange(plan_of(Path(tmp), command or "x"), True, environ=NO_ENV)
        assert arranged.command.startswith(command or "x")


def test_a_huge_failure_cache_is_searched_not_parsed(tmp_path: Path) -> None:
    """A 16 MB lastfailed (a repository may ship one) costs milliseconds of CPU on a save,
    and still tells whether the saved file failed last time."""
    import time

    from lsp_verify.planning.pytest_config import failed_last_time, locate

    quick_project(tmp_path)
    cache = tmp_path / ".pytest_cache" / "v" / "cache"
    cache.mkdir(parents=True)
    many = {f"tests/test_other_{n}.py::test_x[{'y' * 20}]": True for n in range(240_000)}
    (cache / "lastfailed").write_text(json.dumps(many))
    assert (cache / "lastfailed").stat().st_size > 14_000_000
    config = locate(str(tmp_path))
    started = cpu_clock()
    assert failed_last_time(config, str(tmp_path), "tests/test_calc.py") is False
    assert time.process_time() - started < 0.1
    many["tests/test_calc.py::test_add"] = True
    (cache / "lastfailed").write_text(json.dumps(many, indent=2, sort_keys=True))
    assert failed_last_time(config, str(tmp_path), "tests/test_calc.py") is True
    assert failed_last_time(config, str(tmp_path), "tests/test_calc") is False
