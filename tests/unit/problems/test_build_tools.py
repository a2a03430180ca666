"""Compilers, linters in gcc's format, make, and the Go and Rust test runners beyond their
recorded outputs: the gcc-style formats, go test names and panics, rust's old panic format,
and make -C."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.problems import (
    make_files,
    problems_of,
    run,
    where,
)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # clang
        (
            "src/a.c:3:5: error: use of undeclared identifier 'x' [-Wfoo]",
            ("src/a.c", 3, 5, "error", "-Wfoo", "use of undeclared identifier 'x'"),
        ),
        (
            "src/a.c:1:10: fatal error: 'nope.h' file not found",
            ("src/a.c", 1, 10, "error", None, "'nope.h' file not found"),
        ),
        # flake8
        (
            "pkg/a.py:1:1: F401 'os' imported but unused",
            ("pkg/a.py", 1, 1, "error", "F401", "'os' imported but unused"),
        ),
        (
            "pkg/a.py:2:80: E501 line too long (88 > 79 characters)",
            ("pkg/a.py", 2, 80, "error", "E501", "line too long (88 > 79 characters)"),
        ),
        # pylint text (0-based columns) and parseable
        (
            "pkg/a.py:1:0: W0611: Unused import os (unused-import)",
            ("pkg/a.py", 1, 1, "warning", "W0611", "Unused import os (unused-import)"),
        ),
        (
            "pkg/a.py:7: [C0116(missing-function-docstring), f] Missing function docstring",
            ("pkg/a.py", 7, 1, "information", "C0116", "Missing function docstring"),
        ),
        (
            "pkg/a.py:9:4: E1101: Instance of 'A' has no 'b' member (no-member)",
            ("pkg/a.py", 9, 5, "error", "E1101", "Instance of 'A' has no 'b' member"),
        ),
        # go build, go vet, go test
        ("./main.go:5:2: undefined: x", ("main.go", 5, 2, "error", None, "undefined: x")),
        (
            "vet: ./main.go:6:2: fmt.Printf format %d has arg s of wrong type string",
            ("main.go", 6, 2, "error", None, "fmt.Printf format %d"),
        ),
        # ruff concise syntax error, make, Python warnings
        (
            "pkg/a.py:1:7: invalid-syntax: Expected a parameter",
            ("pkg/a.py", 1, 7, "error", "invalid-syntax", "Expected a parameter"),
        ),
        (
            "Makefile:3: *** missing separator.  Stop.",
            ("Makefile", 3, 1, "error", None, "*** missing separator.  Stop."),
        ),
        (
            "pkg/a.py:4: UserWarning: careful",
            ("pkg/a.py", 4, 1, "warning", "UserWarning", "UserWarning: careful"),
        ),
        # mypy notes and plain mypy codes
        ("pkg/a.py:3: error: Bad  [misc]", ("pkg/a.py", 3, 1, "error", "misc", "Bad")),
        ("pkg/a.py:3: note: See here", ("pkg/a.py", 3, 1, "information", None, "See here")),
    ],
)
def test_gcc_style_formats(
    tmp_path: Path, line: str, expected: tuple[str, int, int, str, object, str]
) -> None:
    make_files(tmp_path, "src/a.c", "pkg/a.py", "main.go", "Makefile")
    (problem,) = run(tmp_path, line)[0]
    path, number, column, severity, code, message = expected
    assert (problem.path, problem.line, problem.column) == (path, number, column)
    assert (problem.severity, problem.code) == (severity, code)
    assert problem.message.startswith(message)


def test_go_test_lines_are_named_after_their_test(tmp_path: Path) -> None:
    problems = problems_of(
        tmp_path,
        ["calc/calc_test.go"],
        [
            "=== RUN   TestAdd",
            "    calc/calc_test.go:12: got 3, want 4",
            "--- FAIL: TestAdd (0.00s)",
            "--- FAIL: TestSub (0.00s)",
            "    calc/calc_test.go:20: got 1, want 0",
            "FAIL",
        ],
    )
    assert [(p.line, p.code, p.message) for p in problems] == [
        (12, "TestAdd", "TestAdd: got 3, want 4"),
        (20, "TestSub", "TestSub: got 1, want 0"),
    ]


def test_rust_panic_in_the_old_format(tmp_path: Path) -> None:
    make_files(tmp_path, "src/main.rs")
    text = "thread 'main' panicked at 'index out of bounds', src/main.rs:2:5\nnote: run with"
    problems, _ = run(tmp_path, text)
    assert where(problems) == [("src/main.rs", 2, 5)]
    assert (problems[0].message, problems[0].code) == ("index out of bounds", None)


def test_go_test_messages_find_their_file_by_name_without_a_go_mod(tmp_path: Path) -> None:
    make_files(tmp_path, "svc/scale/scale_test.go")
    text = "--- FAIL: TestScale (0.00s)\n    scale_test.go:7: got 4\n        and more\nFAIL"
    [problem], _ = run(tmp_path, text)
    assert where([problem]) == [("svc/scale/scale_test.go", 7, 1)]
    assert problem.message == "TestScale: got 4\nand more"


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
