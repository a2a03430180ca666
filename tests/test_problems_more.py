"""The unittest, doctest, pyright, mypy-notes, go test, shellcheck, C assert and make matchers
beyond their recorded fixtures: lines that merely hold a path and numbers locate nothing (a
URL, a timestamp, a path outside the folder, installed code), an indented traceback gets its
own exception as message, and hostile input stays linear."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_verify.problems import (
    AssertMatcher,
    DoctestMatcher,
    GoTestMatcher,
    LineSink,
    MakeMatcher,
    PyrightMatcher,
    TracebackMatcher,
    UnittestMatcher,
)
from lsp_verify.problems.matcher import MAX_LINE
from tests.test_problems import make_files, problems_of, run, where
from tests.test_problems_bounds import linear_problems

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


def test_an_indented_traceback_gets_its_exception_as_message(tmp_path: Path) -> None:
    # doctest prints a traceback under "Exception raised:"; alone, the traceback matcher once
    # took doctest's line of stars for the message.
    make_files(tmp_path, "pkg/temps.py")
    lines = [
        "Exception raised:",
        "    Traceback (most recent call last):",
        '      File "/usr/lib/python3.11/doctest.py", line 1353, in __run',
        '        exec(compile(example.source, filename, "single",',
        f'      File "{tmp_path}/pkg/temps.py", line 10, in to_kelvin',
        '        raise ValueError("below absolute zero")',
        "    ValueError: below absolute zero",
        STARS,
        "1 items had failures:",
    ]
    matcher = TracebackMatcher()
    for line in lines:
        matcher.feed(line)
    [problem] = matcher.finish()
    assert (problem.line, problem.message) == (10, "ValueError: below absolute zero")
    assert problem.code == "ValueError"


def test_a_line_indented_less_than_the_traceback_ends_it_without_a_message() -> None:
    matcher = TracebackMatcher()
    for line in [
        "    Traceback (most recent call last):",
        '      File "a.py", line 3, in f',
        "not the exception: indented less than the traceback",
    ]:
        matcher.feed(line)
    assert matcher.finish() == []


def test_unittest_on_python_before_3_11_names_the_test_too(tmp_path: Path) -> None:
    [problem] = problems_of(
        tmp_path,
        ["tests/test_x.py"],
        [
            RULE,
            "FAIL: test_eq (tests.test_x.TestX)",
            DASHES,
            "Traceback (most recent call last):",
            f'  File "{tmp_path}/tests/test_x.py", line 8, in test_eq',
            "    self.assertEqual(1, 2)",
            "AssertionError: 1 != 2",
            "",
            DASHES,
            "Ran 1 test in 0.001s",
        ],
    )
    assert (problem.path, problem.line, problem.code) == (
        "tests/test_x.py",
        8,
        "tests.test_x.TestX.test_eq",
    )
    assert problem.message == "tests.test_x.TestX.test_eq: AssertionError: 1 != 2"


def test_a_unittest_module_that_fails_to_import_lands_on_its_import(tmp_path: Path) -> None:
    [problem] = problems_of(
        tmp_path,
        ["tests/test_x.py"],
        [
            RULE,
            "ERROR: tests.test_x (unittest.loader._FailedTest.tests.test_x)",
            DASHES,
            "ImportError: Failed to import test module: tests.test_x",
            "Traceback (most recent call last):",
            '  File "/usr/lib/python3.11/unittest/loader.py", line 407, in _find_test_path',
            "    module = self._get_module_from_name(name)",
            f'  File "{tmp_path}/tests/test_x.py", line 1, in <module>',
            "    import nope",
            "ModuleNotFoundError: No module named 'nope'",
            "",
            DASHES,
        ],
    )
    assert where([problem]) == [("tests/test_x.py", 1, 1)]
    assert problem.message.endswith("ModuleNotFoundError: No module named 'nope'")


def test_mypy_notes_on_another_line_stay_problems_of_their_own(tmp_path: Path) -> None:
    problems = problems_of(
        tmp_path,
        ["pkg/a.py"],
        [
            "pkg/a.py:3: error: Incompatible types  [assignment]",
            "pkg/a.py:3: note: attached to the error",
            'pkg/a.py:4: note: Revealed type is "int"',
            "Found 1 error in 1 file (checked 1 source file)",
        ],
    )
    assert [(p.line, p.severity, p.message) for p in problems] == [
        (3, "error", "Incompatible types\nnote: attached to the error"),
        (4, "information", 'Revealed type is "int"'),
    ]


def test_go_test_messages_find_their_file_by_name_without_a_go_mod(tmp_path: Path) -> None:
    make_files(tmp_path, "svc/scale/scale_test.go")
    text = "--- FAIL: TestScale (0.00s)\n    scale_test.go:7: got 4\n        and more\nFAIL"
    [problem], _ = run(tmp_path, text)
    assert where([problem]) == [("svc/scale/scale_test.go", 7, 1)]
    assert problem.message == "TestScale: got 4\nand more"


PATHOLOGICAL_PREFIXES = [
    "  ",
    "    ",
    "\t/",
    "panic: ",
    "make: *** [",
    "make[1]: Entering directory '",
    "x: y.c:1: ",
    "FAIL: t (",
    'File "',
    "  /a.py:1:1 - ",
]
UNITS = ["a:", ":1", "(", "` ", "' failed.", " - error: ", "*", "="]


@pytest.mark.parametrize("prefix", PATHOLOGICAL_PREFIXES)
def test_near_matches_stay_linear(prefix: str, tmp_path: Path) -> None:
    for unit in UNITS:
        assert linear_problems(tmp_path, (prefix + unit * MAX_LINE)[:MAX_LINE]) == []


def test_each_new_family_exposes_feed_and_finish() -> None:
    for family in (
        UnittestMatcher,
        DoctestMatcher,
        PyrightMatcher,
        GoTestMatcher,
        AssertMatcher,
        MakeMatcher,
    ):
        sink: LineSink = family()
        sink.feed("nothing to see")
        assert sink.finish() == []


def test_a_go_program_panic_lands_where_it_panicked(tmp_path: Path) -> None:
    # No test: the deepest project frame is the problem, nothing related.
    [problem] = problems_of(
        tmp_path,
        ["main.go", "lib/lib.go"],
        [
            "panic: assignment to entry in nil map",
            "",
            "goroutine 1 [running]:",
            "example.com/demo/lib.Put(...)",
            f"\t{tmp_path}/lib/lib.go:4",
            "main.main()",
            f"\t{tmp_path}/main.go:6 +0x2e",
            "exit status 2",
        ],
    )
    assert where([problem]) == [("lib/lib.go", 4, 1)]
    assert (problem.message, problem.related) == ("panic: assignment to entry in nil map", ())


def test_make_with_dash_c_resolves_against_the_directory_it_entered(tmp_path: Path) -> None:
    [problem] = problems_of(
        tmp_path,
        ["sub/Makefile"],
        [
            f"make: Entering directory '{tmp_path}/sub'",
            "false",
            "make: *** [Makefile:3: all] Error 1",
            f"make: Leaving directory '{tmp_path}/sub'",
        ],
    )
    assert where([problem]) == [("sub/Makefile", 3, 1)]
    assert problem.message == "make target 'all' failed: Error 1"
