"""`lsp-verify check`: exit codes, text and JSON output."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO
from tests.support.procs import alive_with, unique_sleep
from tests.support.stdio import server_env


def check(
    folder: Path, *args: str, tmp: Path, timeout: float = 60, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`lsp-verify check FOLDER ARGS`, typed in `cwd` (the folder itself unless given)."""
    # The demo's detected command is a bare `pytest`: make it this interpreter's.
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]
    env = server_env(tmp, {"PATH": path})
    return subprocess.run(
        [sys.executable, "-m", "lsp_verify", "check", str(folder), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=cwd or (folder if folder.is_dir() else None),
    )


@pytest.fixture
def folder(project: Path) -> Path:
    return project


def test_passing_command_exits_0(folder: Path, tmp_path: Path) -> None:
    done = check(folder, "--command", "echo fine", tmp=tmp_path)
    assert done.returncode == 0
    assert done.stdout.startswith("verify passed in ")
    assert "echo fine" in done.stdout


def test_the_commands_own_exit_status(folder: Path, tmp_path: Path) -> None:
    done = check(folder, "--command", "echo broken; exit 7", tmp=tmp_path)
    assert done.returncode == 7
    assert "verify failed (exit 7)" in done.stdout
    assert done.stdout.rstrip().endswith("broken")


def test_timeout_exits_124_and_kills_everything(folder: Path, tmp_path: Path) -> None:
    marker = unique_sleep()
    done = check(
        folder,
        "--command",
        f"sleep {marker} & sleep {marker}",
        "--timeout-ms",
        "300",
        "--json",
        tmp=tmp_path,
    )
    assert done.returncode == 124
    record = json.loads(done.stdout)
    assert record["outcome"] == "timed-out"
    assert record["exitCode"] is None
    assert record["tail"][-1] == "[verify command timed out after 300ms and was killed]"
    assert alive_with(marker) == []


def test_no_plan_exits_3(folder: Path, tmp_path: Path) -> None:
    done = check(folder, tmp=tmp_path)
    assert done.returncode == 3
    assert "no plan" in done.stdout
    as_json = check(folder, "--json", tmp=tmp_path)
    assert as_json.returncode == 3
    assert json.loads(as_json.stdout)["outcome"] == "no-plan"


def test_usage_errors_exit_2(folder: Path, tmp_path: Path) -> None:
    """A bad option value is an error that names the option, never "using the default"; an
    unknown option is shown with check's own usage."""
    for args, said in (
        (["--timeout-ms", "0"], "argument --timeout-ms: 0 is not between 1 and 2147483647"),
        (["--tail-lines", "-1"], "argument --tail-lines: -1 is not between 1 and 100000"),
        (["--tail-lines", "x"], "argument --tail-lines: 'x' is not a whole number"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ):
        done = check(folder, *args, tmp=tmp_path)
        assert done.returncode == 2, args
        assert done.stderr.startswith("usage: lsp-verify check "), done.stderr
        assert f"lsp-verify check: error: {said}" in done.stderr
        assert "using" not in done.stderr and done.stdout == ""
    assert check(folder / "missing", tmp=tmp_path).returncode == 2


def test_check_help_lists_its_argument_and_exit_codes(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "lsp_verify", "check", "--help"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0
    assert re.search(
        r"^  DIR +the project's folder \(default: the current directory\)", done.stdout, re.M
    )
    for code in ("0", "1", "2", "3", "124", "130"):
        assert re.search(rf"^  {code} +\S", done.stdout, re.M), code


def test_a_missing_command_is_a_failed_record(folder: Path, tmp_path: Path) -> None:
    done = check(folder, "--command", "nosuch_command_xyz", "--json", tmp=tmp_path)
    assert done.returncode == 127
    record = json.loads(done.stdout)
    assert record["outcome"] == "failed"
    assert record["exitCode"] == 127
    assert any("not found" in line for line in record["tail"])
    assert "Traceback" not in done.stderr


def test_json_record_has_every_field(folder: Path, tmp_path: Path) -> None:
    done = check(
        folder, "--command", "echo one; echo two", "--tail-lines", "1", "--json", tmp=tmp_path
    )
    record = json.loads(done.stdout)
    assert set(record) >= {
        "folder",
        "command",
        "source",
        "reason",
        "manifest",
        "fingerprint",
        "steps",
        "trigger",
        "startedAt",
        "durationMs",
        "exitCode",
        "outcome",
        "tail",
        "problems",
    }
    assert record["trigger"] == "cli"
    assert record["source"] == "settings"
    assert record["tail"] == ["two"]
    assert record["startedAt"].endswith("Z")


def test_located_problems_in_text_and_json(folder: Path, tmp_path: Path) -> None:
    (folder / "pytest.ini").write_text("[pytest]\n")
    tests = folder / "tests"
    tests.mkdir()
    (tests / "test_a.py").write_text(
        "def helper():\n    return 1\n\n\ndef test_sum():\n    total = helper() + 1\n"
        "    assert total == 3\n"
    )
    done = check(folder, tmp=tmp_path)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    located = [line for line in lines if line.startswith("tests/test_a.py:7:")]
    assert located, done.stdout
    assert "test_sum" in located[0]
    record = json.loads(check(folder, "--json", tmp=tmp_path).stdout)
    [problem] = record["problems"]
    assert problem["path"] == "tests/test_a.py"
    assert problem["line"] == 7
    assert problem["column"] >= 1
    assert "assert 2 == 3" in problem["message"]
    assert set(problem) == {
        "path",
        "line",
        "column",
        "endLine",
        "endColumn",
        "severity",
        "code",
        "message",
        "related",
    }
    assert problem["related"] == []  # the assertion is in the test itself


def test_the_demo_project_fails_where_the_readme_says(tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    shutil.copytree(REPO / "examples" / "demo", demo)
    done = check(demo, "--json", tmp=tmp_path)
    assert done.returncode == 1
    record = json.loads(done.stdout)
    assert record["runner"] == "pytest"
    assert [p["path"] for p in record["problems"]] == ["tests/test_calc.py"]


WARN_AND_ERROR = (
    "echo 'src/a.c:3:5: warning: unused variable x [-Wunused-variable]';"
    " echo 'src/a.c:7:1: error: expected semicolon'; exit 1"
)


def run_on_a_terminal(argv: list[str], env: dict[str, str]) -> str:
    """What a person at a terminal sees: the command with a pty as its stdout."""
    import pty

    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(argv, stdout=follower, stderr=follower, env=env)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's other end is closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait(timeout=60)
    finally:
        os.close(leader)
    return b"".join(chunks).decode(errors="replace")


def test_text_output_marks_severity_and_is_plain_when_piped(folder: Path, tmp_path: Path) -> None:
    (folder / "src").mkdir()
    (folder / "src" / "a.c").write_text("int main() {\n\n  int x;\n\n\n\n}\n")
    done = check(folder, "--command", WARN_AND_ERROR, tmp=tmp_path)
    assert done.returncode == 1
    assert "src/a.c:3:5: warning: unused variable x" in done.stdout
    assert "src/a.c:7:1: error: expected semicolon" in done.stdout
    assert "\x1b[" not in done.stdout


@pytest.mark.parametrize("no_color", [False, True], ids=["colour", "NO_COLOR"])
def test_on_a_terminal_severity_is_coloured_unless_no_color(
    folder: Path, tmp_path: Path, no_color: bool
) -> None:
    (folder / "src").mkdir()
    (folder / "src" / "a.c").write_text("int main() {\n\n  int x;\n\n\n\n}\n")
    env = server_env(tmp_path, {"NO_COLOR": "1"} if no_color else {})
    if not no_color:
        env.pop("NO_COLOR", None)
    argv = [sys.executable, "-m", "lsp_verify", "check", str(folder), "--command", WARN_AND_ERROR]
    seen = run_on_a_terminal(argv, env)
    assert "src/a.c:3:5:" in seen and "src/a.c:7:1:" in seen, seen
    if no_color:
        assert "\x1b[3" not in seen
    else:
        assert "\x1b[33mwarning:\x1b[0m unused variable x" in seen
        assert "\x1b[31merror:\x1b[0m expected semicolon" in seen


ELAPSED = re.compile(r"\r\x1b\[K +\d+\.\ds  ")


@pytest.mark.parametrize(
    ("how", "shown"),
    [
        ("terminal", True),
        ("NO_COLOR", False),
        ("--json", False),
        ("stderr piped", False),
        ("short run", False),
    ],
)
def test_the_elapsed_line_shows_on_a_terminal_only_while_a_long_run_goes(
    folder: Path, tmp_path: Path, how: str, shown: bool
) -> None:
    command = "echo started; sleep 0.05" if how == "short run" else "echo started; sleep 1.6"
    argv = [sys.executable, "-m", "lsp_verify", "check", str(folder), "--command", command]
    env = server_env(tmp_path, {"NO_COLOR": "1"} if how == "NO_COLOR" else {})
    if how != "NO_COLOR":
        env.pop("NO_COLOR", None)
    if how == "--json":
        argv.append("--json")
    if how == "stderr piped":
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        seen = done.stdout + done.stderr
    else:
        seen = run_on_a_terminal(argv, env)
    assert "started" in seen or how == "--json"
    assert bool(ELAPSED.search(seen)) == shown, repr(seen)
    if shown:
        # The line names the latest output, and is wiped before the report.
        assert "s  started" in seen
        assert -1 < seen.rfind("\r\x1b[K") < seen.find("verify passed")


def test_a_failure_raised_in_project_code_says_where_in_text_and_json(tmp_path: Path) -> None:
    folder = tmp_path / "proj"
    (folder / "tests").mkdir(parents=True)
    (folder / "pytest.ini").write_text("[pytest]\n")
    (folder / "calc.py").write_text("def inner(x):\n    raise ValueError(f'bad {x}')\n")
    (folder / "tests" / "test_a.py").write_text(
        "import sys\nsys.path.insert(0, '.')\nfrom calc import inner\n\n\n"
        "def test_calls():\n    inner(5)\n"
    )
    done = check(folder, tmp=tmp_path)
    assert "tests/test_a.py:7:1: error: tests/test_a.py::test_calls: ValueError: bad 5" in (
        done.stdout
    )
    assert "    raised here: calc.py:2:1" in done.stdout.splitlines()
    record = json.loads(check(folder, "--json", tmp=tmp_path).stdout)
    [problem] = record["problems"]
    assert (problem["path"], problem["line"]) == ("tests/test_a.py", 7)
    assert problem["related"] == [
        {"path": "calc.py", "line": 2, "column": 1, "message": "raised here"}
    ]


def test_paths_are_relative_to_where_check_is_typed_or_absolute(tmp_path: Path) -> None:
    """A terminal opens `path:line` relative to its own directory: from the repository root,
    `lsp-verify check examples/demo` names `examples/demo/tests/...`; from outside, the whole
    path."""
    folder = tmp_path / "repo" / "proj"
    (folder / "tests").mkdir(parents=True)
    (folder / "pytest.ini").write_text("[pytest]\n")
    (folder / "tests" / "test_a.py").write_text("def test_a():\n    assert 1 == 2\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for cwd, shown in (
        (folder, "tests/test_a.py:2:1: error"),
        (tmp_path / "repo", "proj/tests/test_a.py:2:1: error"),
        (elsewhere, f"{folder}/tests/test_a.py:2:1: error"),
    ):
        done = check(folder, tmp=tmp_path, cwd=cwd)
        assert done.returncode == 1, done.stderr
        assert any(line.startswith(shown) for line in done.stdout.splitlines()), done.stdout
    # The record keeps paths relative to the folder, wherever check is typed.
    record = json.loads(check(folder, "--json", tmp=tmp_path, cwd=elsewhere).stdout)
    assert record["problems"][0]["path"] == "tests/test_a.py"


def test_no_failed_first_runs_the_command_as_planned(folder: Path, tmp_path: Path) -> None:
    (folder / "pytest.ini").write_text("[pytest]\n")
    (folder / "test_one.py").write_text("def test_one():\n    assert 1 == 2\n")
    for flags, command, why in (
        ((), "pytest -x -q --ff", "--ff added: failed first"),
        (("--no-failed-first",), "pytest -x -q", "failed first: off (failedFirst is false)"),
    ):
        done = check(folder, "--json", *flags, tmp=tmp_path)
        record = json.loads(done.stdout)
        assert done.returncode == 1, done.stderr
        assert (record["command"], record["failedFirst"]) == (command, why)
        assert record["phases"] == [
            {
                "phase": "full",
                "command": command,
                "outcome": "failed",
                "exitCode": 1,
                "durationMs": record["durationMs"],
            }
        ]
