"""What must never be located (acceptance 2): lines that merely hold a path and numbers (a URL, a
timestamp, a path outside the folder, installed code) and gcc-style lookalikes, for the
Python, Go, C, make and shellcheck families (the Node families': test_node.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.problems import (
    make_files,
    run,
)


@pytest.mark.parametrize(
    "line",
    [
        "    indented.py:3: error: only Go lines may be indented",
        "Makefile:3: recipe for target 'test' failed",
        "12:30:45: a timestamp, not a path",
        "http://host:8080: not a path either",
        "indented.py:3:",
    ],
)
def test_gcc_style_lookalikes_are_not_problems(tmp_path: Path, line: str) -> None:
    make_files(tmp_path, "indented.py", "Makefile", "12")
    assert run(tmp_path, line)[0] == []


RULE = "=" * 70


DASHES = "-" * 70


STARS = "*" * 70


# Per family: output that names files and numbers without naming a failure inside the folder.
LOOKALIKES = {
    "unittest": [
        RULE,
        "FAIL: test_x (tests.test_x.T.test_x)",
        DASHES,
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3/site-packages/lib/x.py", line 3, in test_x',
        '  File "{root}/.venv/lib/python3.11/site-packages/dep/core.py", line 9, in f',
        "AssertionError: see http://host:8080/a.py:3:4 at 12:30:45",
        DASHES,
        "Ran 1 test in 0.001s",
    ],
    "doctest": [
        STARS,
        'File "/elsewhere/pkg/temps.py", line 6, in temps.to_kelvin',
        "Failed example:",
        "    to_kelvin(-300)",
        STARS,
        'File "http://host:8080/a.py", line 3, in x',
        "2 items had failures:",
        'File "{root}/pkg/temps.py", line 6, in temps.to_kelvin',  # not after the stars
    ],
    "pyright": [
        "  /elsewhere/pkg/typed.py:10:11 - error: outside the folder",
        "  http://host:8080/a.py:3:4 - error: a URL",
        "  12:30:45 - error: a timestamp",
        "0 errors, 0 warnings, 0 informations",
    ],
    "mypy notes": [
        "https://mypy.readthedocs.io/en/stable/common_issues.html:80: note: a URL",
        "12:30:45: note: a timestamp",
    ],
    "go test": [
        "--- FAIL: TestX (0.00s)",
        "    http_test.go:8080: no such file in the folder",
        "    12:30:45: a timestamp",
        "panic: boom",
        "",
        "goroutine 1 [running]:",
        "main.main()",
        "\t/usr/lib/go-1.19/src/runtime/proc.go:250 +0x1d",
        "\t/elsewhere/main.go:5 +0x1d",
        "exit status 2",
        "FAIL\texample.com/demo\t0.001s",
    ],
    "shellcheck": [
        "https://www.shellcheck.net/wiki/SC2086 -- Double quote to prevent globbing ...",
        "/elsewhere/deploy.sh:3:8: note: outside the folder [SC2086]",
        "In scripts/deploy.sh line 3:",
    ],
    "C assert": [
        "tests: /elsewhere/tests.c:9: main: Assertion `x == 1' failed.",
        "tests: http://host:8080/t.c:9: main: Assertion `x' failed.",
        "tests: missing.c:9: main: Assertion `x == 1' failed.",
        "tests: tests.c:9: main: Assertion `x == 1' failed, said the log at 12:30:45",
    ],
    "make": [
        "make: *** [test] Error 1",
        "make: *** [/elsewhere/Makefile:7: test] Error 1",
        "make: *** No rule to make target 'x'.  Stop.",
        "make[1]: Entering directory '/elsewhere/sub'",
        "make[1]: *** [Makefile:3: all] Error 1",
        "wget: http://host:8080/Makefile:7: test",
    ],
}


@pytest.mark.parametrize("family", sorted(LOOKALIKES))
def test_lines_that_merely_hold_a_path_and_numbers_locate_nothing(
    family: str, tmp_path: Path
) -> None:
    make_files(
        tmp_path,
        "pkg/a.py",
        "pkg/temps.py",
        "tests/test_x.py",
        "tests.c",
        "Makefile",
        "main.go",
        "scripts/deploy.sh",
        ".venv/lib/python3.11/site-packages/dep/core.py",
        ".venv/lib/site-packages/dep.py",
    )
    text = "\n".join(LOOKALIKES[family]).replace("{root}", str(tmp_path))
    assert run(tmp_path, text)[0] == []
