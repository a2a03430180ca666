"""ProblemCollector and the family matchers: resolution and precedence (bounds and robustness:
test_problems_bounds.py).

Samples written inline here follow the documented formats of tools this machine does not
have (clang, flake8, pylint, go); the recorded outputs of real tools are in
tests/cases/outputs and tested by test_problems_fixtures.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from lsp_verify.problems import (
    GccMatcher,
    JestMatcher,
    LineSink,
    ProblemCollector,
    PytestMatcher,
    RustMatcher,
    TracebackMatcher,
    TscMatcher,
    make_sink,
)
from lsp_verify.problems.base import Problem


def make_files(root: Path, *paths: str, content: str = "x\n") -> None:
    for rel in paths:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")


def run(root: Path, text: str, limit: int = 200) -> tuple[list[Problem], ProblemCollector]:
    collector = ProblemCollector(str(root), limit=limit)
    for line in text.splitlines():
        collector.feed(line)
    return collector.finish(), collector


def problems_of(root: Path, files: Sequence[str], lines: Sequence[str]) -> list[Problem]:
    """The problems found in the output `lines`, with `files` made in the folder `root`."""
    make_files(root, *files)
    return run(root, "\n".join(lines))[0]


def where(problems: list[Problem]) -> list[tuple[str, int, int]]:
    return [(p.path, p.line, p.column) for p in problems]


# -- the collector: paths ------------------------------------------------------------------


def test_paths_relative_dot_and_absolute_resolve_to_the_same_relative_path(tmp_path: Path) -> None:
    make_files(tmp_path, "src/a.c")
    text = "\n".join(
        [
            "src/a.c:1:2: error: one",
            "./src/a.c:3:4: error: two",
            f"{tmp_path}/src/a.c:5:6: error: three",
            f"{tmp_path}/src/../src/a.c:7:8: error: four",
        ]
    )
    problems, collector = run(tmp_path, text)
    assert where(problems) == [
        ("src/a.c", 1, 2),
        ("src/a.c", 3, 4),
        ("src/a.c", 5, 6),
        ("src/a.c", 7, 8),
    ]
    assert collector.dropped == 0


def test_paths_outside_the_folder_or_missing_are_dropped_and_counted(tmp_path: Path) -> None:
    root = tmp_path / "project"
    make_files(root, "a.c")
    make_files(tmp_path, "outside.c")
    text = "\n".join(
        [
            f"{tmp_path}/outside.c:1:1: error: outside, absolute",
            "../outside.c:1:1: error: outside, relative",
            "missing.c:1:1: error: no such file",
            "src:1:1: error: a folder, not a file",
            "a.c:2:1: error: kept",
        ]
    )
    (root / "src").mkdir()
    problems, collector = run(root, text)
    assert where(problems) == [("a.c", 2, 1)]
    assert collector.dropped == 4


def test_a_folder_reached_through_a_symlink_accepts_both_spellings(tmp_path: Path) -> None:
    real = tmp_path / "real"
    make_files(real, "a.py")
    link = tmp_path / "link"
    link.symlink_to(real)
    text = f"{real}/a.py:1: error: by real path\n{link}/a.py:2: error: by link"
    problems, _ = run(link, text)
    assert where(problems) == [("a.py", 1, 1), ("a.py", 2, 1)]


def test_related_locations_outside_are_removed_and_the_problem_kept(tmp_path: Path) -> None:
    problems = problems_of(
        tmp_path,
        ["src/lib.rs"],
        [
            "error[E0061]: this function takes 2 arguments",
            " --> src/lib.rs:7:5",
            "  |",
            "note: function defined here",
            " --> /elsewhere/lib.rs:1:8",
            "  |",
            "  ::: src/lib.rs:1:1",
            "",
        ],
    )
    assert len(problems) == 1
    assert [(r.path, r.line, r.column) for r in problems[0].related] == [("src/lib.rs", 1, 1)]


def test_the_same_problem_twice_is_kept_once(tmp_path: Path) -> None:
    make_files(tmp_path, "a.py")
    line = "a.py:3: error: Name 'x' is not defined  [name-defined]"
    problems, collector = run(tmp_path, f"{line}\n{line}\n./{line}")
    assert len(problems) == 1
    assert collector.duplicates == 2


def test_problems_come_in_order_of_first_appearance_across_matchers(tmp_path: Path) -> None:
    # The pytest matcher reports when the run ends (it waits for the summary's test ids),
    # yet its failure came first in the output.
    problems = problems_of(
        tmp_path,
        ["tests/test_a.py", "b.py"],
        [
            "=================================== FAILURES ===================================",
            "___________________________________ test_eq ____________________________________",
            "tests/test_a.py:2: in test_eq",
            "    assert 1 == 2",
            "E   assert 1 == 2",
            "=========================== short test summary info ============================",
            "FAILED tests/test_a.py::test_eq - assert 1 == 2",
            "1 failed in 0.01s",
            "b.py:1: error: after pytest",
        ],
    )
    assert where(problems) == [("tests/test_a.py", 2, 1), ("b.py", 1, 1)]


def test_at_most_limit_problems_and_the_earliest_are_kept(tmp_path: Path) -> None:
    make_files(tmp_path, "tests/test_a.py", "b.py")
    early = "\n".join(
        [
            "=================================== FAILURES ===================================",
            "___________________________________ test_eq ____________________________________",
            "tests/test_a.py:2: in test_eq",
            "E   assert 1 == 2",
            "1 failed in 0.01s",
        ]
    )
    late = "\n".join(f"b.py:{n}: error: number {n}" for n in range(1, 301))
    problems, collector = run(tmp_path, early + "\n" + late, limit=200)
    assert len(problems) == 200
    assert problems[0].path == "tests/test_a.py"
    assert [p.line for p in problems[1:]] == list(range(1, 200))
    assert collector.over_limit == 101


def test_make_sink_is_a_line_sink_with_the_default_limit(tmp_path: Path) -> None:
    sink: LineSink = make_sink(str(tmp_path))
    assert isinstance(sink, ProblemCollector)
    assert sink.limit == 200


def test_finish_twice_gives_the_same_and_later_lines_are_ignored(tmp_path: Path) -> None:
    make_files(tmp_path, "a.py")
    collector = ProblemCollector(str(tmp_path))
    collector.feed("a.py:1: error: one")
    first = collector.finish()
    collector.feed("a.py:2: error: two")
    assert collector.finish() == first
    assert len(first) == 1


# -- precedence ----------------------------------------------------------------------------


def test_pytest_output_gives_only_pytest_problems(tmp_path: Path) -> None:
    problems = problems_of(
        tmp_path,
        ["tests/test_a.py", "pkg/calc.py"],
        [
            "=================================== FAILURES ===================================",
            "______________________________ test_calls_project ______________________________",
            "Traceback (most recent call last):",
            f'  File "{tmp_path}/tests/test_a.py", line 12, in test_calls_project',
            "    helper(5)",
            f'  File "{tmp_path}/pkg/calc.py", line 7, in inner',
            '    raise ValueError("bad value")',
            "ValueError: bad value",
            "___________________________________ test_eq ____________________________________",
            "",
            "    def test_eq():",
            ">       assert 1 == 2",
            "E       assert 1 == 2",
            "",
            "tests/test_a.py:8: AssertionError",
            "----------------------------- Captured stdout call -----------------------------",
            "pkg/calc.py:1:1: error: printed by the test, not a failure",
            "=== a banner printed by the test ===",
            "=========================== short test summary info ============================",
            "FAILED tests/test_a.py::test_calls_project - ValueError: bad value",
            "FAILED tests/test_a.py::test_eq - assert 1 == 2",
            "============================== 2 failed in 0.05s ===============================",
        ],
    )
    # The failing test is the diagnostic; the raising line in calc.py is related.
    assert where(problems) == [("tests/test_a.py", 12, 1), ("tests/test_a.py", 8, 1)]
    assert [(r.path, r.line) for r in problems[0].related] == [("pkg/calc.py", 7)]
    assert [p.code for p in problems] == [
        "tests/test_a.py::test_calls_project",
        "tests/test_a.py::test_eq",
    ]


def test_lines_nobody_claims_reach_every_family(tmp_path: Path) -> None:
    problems = problems_of(
        tmp_path,
        ["a.py", "b.ts", "c.rs"],
        [
            "a.py:1: error: mypy says",
            "b.ts(2,3): error TS2322: tsc says",
            "error[E0308]: rustc says",
            " --> c.rs:4:5",
            "",
            "Traceback (most recent call last):",
            '  File "a.py", line 9, in <module>',
            "KeyError: 'k'",
        ],
    )
    assert where(problems) == [("a.py", 1, 1), ("b.ts", 2, 3), ("c.rs", 4, 5), ("a.py", 9, 1)]


# -- pytest --------------------------------------------------------------------------------


def test_pytest_alone_reports_paths_as_printed() -> None:
    matcher = PytestMatcher()
    for line in [
        "=================================== FAILURES ===================================",
        "__________________________ TestGroup.test_method[a.b] __________________________",
        "tests/test_a.py:17: in test_method",
        "E   AssertionError: strings differ",
        "E     more",
    ]:
        matcher.feed(line)
    (problem,) = matcher.finish()
    assert (problem.path, problem.line) == ("tests/test_a.py", 17)
    assert problem.code == "tests/test_a.py::TestGroup::test_method[a.b]"
    assert problem.message.endswith("AssertionError: strings differ\n  more")


def test_pytest_same_test_name_in_two_files_gets_the_right_ids(tmp_path: Path) -> None:
    problems = problems_of(
        tmp_path,
        ["a/test_x.py", "b/test_x.py"],
        [
            "=================================== FAILURES ===================================",
            "___________________________________ test_one ___________________________________",
            "b/test_x.py:3: in test_one",
            "E   assert 0",
            "___________________________________ test_one ___________________________________",
            "a/test_x.py:5: in test_one",
            "E   assert 1",
            "=========================== short test summary info ============================",
            "FAILED a/test_x.py::test_one - assert 1",
            "FAILED b/test_x.py::test_one - assert 0",
        ],
    )
    assert [(p.path, p.line, p.code) for p in problems] == [
        ("b/test_x.py", 3, "b/test_x.py::test_one"),
        ("a/test_x.py", 5, "a/test_x.py::test_one"),
    ]


def test_pytest_summary_only_lands_on_the_def_line(tmp_path: Path) -> None:
    make_files(
        tmp_path, "t/test_a.py", content="import x\n\nclass TestA:\n    async def test_b(self):\n"
    )
    problems, _ = run(tmp_path, "FAILED t/test_a.py::TestA::test_b[1] - boom\n1 failed in 0.1s")
    assert problems == []  # no banner: this is not pytest's summary section
    text = "=== short test summary info ===\nFAILED t/test_a.py::TestA::test_b[1] - boom\n1 failed"
    problems, _ = run(tmp_path, text)
    assert where(problems) == [("t/test_a.py", 4, 1)]
    assert problems[0].message == "t/test_a.py::TestA::test_b[1]: boom"


def test_pytest_without_summary_builds_the_id_from_the_test_frame(tmp_path: Path) -> None:
    problems = problems_of(
        tmp_path,
        ["tests/test_a.py"],
        [
            "=================================== FAILURES ===================================",
            "____________________________ TestGroup.test_method _____________________________",
            "tests/test_a.py:17: in test_method",
            "E   assert 0",
            "1 failed in 0.01s",
            "tests/test_a.py:99: error: after pytest, a mypy line",
        ],
    )
    assert [(p.line, p.code) for p in problems] == [
        (17, "tests/test_a.py::TestGroup::test_method"),
        (99, None),
    ]


def test_pytest_chained_exceptions_keep_the_last_traceback(tmp_path: Path) -> None:
    problems = problems_of(
        tmp_path,
        ["tests/test_a.py", "pkg/m.py"],
        [
            "=================================== FAILURES ===================================",
            "___________________________________ test_c ____________________________________",
            "pkg/m.py:3: in f",
            "E   KeyError: 'k'",
            "",
            "During handling of the above exception, another exception occurred:",
            "",
            "tests/test_a.py:4: in test_c",
            "E   RuntimeError: wrapped",
            "=========================== short test summary info ============================",
            "FAILED tests/test_a.py::test_c - RuntimeError: wrapped",
        ],
    )
    assert where(problems) == [("tests/test_a.py", 4, 1)]
    assert problems[0].message == "tests/test_a.py::test_c: RuntimeError: wrapped"


def test_pytest_frames_in_a_virtualenv_inside_the_folder_are_not_project_code(
    tmp_path: Path,
) -> None:
    problems = problems_of(
        tmp_path,
        ["tests/test_a.py", ".venv/lib/python3.11/site-packages/lib/x.py"],
        [
            "=================================== FAILURES ===================================",
            "___________________________________ test_l ____________________________________",
            "tests/test_a.py:6: in test_l",
            ".venv/lib/python3.11/site-packages/lib/x.py:10: in call",
            "E   ValueError: from a library",
        ],
    )
    assert where(problems) == [("tests/test_a.py", 6, 1)]


# -- Python tracebacks ---------------------------------------------------------------------


def test_traceback_with_no_frame_in_the_folder_is_dropped_and_counted(tmp_path: Path) -> None:
    text = "\n".join(
        [
            "Traceback (most recent call last):",
            '  File "/usr/lib/python3/x.py", line 3, in f',
            "ValueError: nothing of ours",
        ]
    )
    problems, collector = run(tmp_path, text)
    assert problems == []
    assert collector.dropped == 1


def test_indented_file_lines_of_other_output_are_not_a_syntax_error(tmp_path: Path) -> None:
    make_files(tmp_path, "a.py")
    text = '  File "a.py", line 3\nsomething else entirely'
    problems, _ = run(tmp_path, text)
    assert problems == []


# -- the generic path:line[:col] family ----------------------------------------------------


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


# -- rust, tsc, jest -----------------------------------------------------------------------


def test_rust_panic_in_the_old_format(tmp_path: Path) -> None:
    make_files(tmp_path, "src/main.rs")
    text = "thread 'main' panicked at 'index out of bounds', src/main.rs:2:5\nnote: run with"
    problems, _ = run(tmp_path, text)
    assert where(problems) == [("src/main.rs", 2, 5)]
    assert (problems[0].message, problems[0].code) == ("index out of bounds", None)


def test_tsc_continuation_lines_join_the_message() -> None:
    matcher = TscMatcher()
    for line in [
        "a.ts(3,7): error TS2322: Type 'X' is not assignable to type 'Y'.",
        "  Types of property 'a' are incompatible.",
        "a.ts(9,1): warning TS6133: 'z' is declared but never used.",
    ]:
        matcher.feed(line)
    first, second = matcher.finish()
    assert first.message.splitlines()[1] == "Types of property 'a' are incompatible."
    assert (second.line, second.severity, second.code) == (9, "warning", "TS6133")


def test_jest_skips_node_modules_frames_and_finds_the_test_line(tmp_path: Path) -> None:
    make_files(tmp_path, "src/a.test.js", content="describe(\"g\", () => {\n  test('t', () => {\n")
    problems = problems_of(
        tmp_path,
        ["node_modules/lib/index.js"],
        [
            "FAIL src/a.test.js",
            "  \u25cf g \u203a t",
            "",
            "    TypeError: boom",
            "",
            "      at boom (node_modules/lib/index.js:1:1)",
            "",
            "Test Suites: 1 failed, 1 total",
        ],
    )
    assert where(problems) == [("src/a.test.js", 2, 1)]
    assert problems[0].message == "g \u203a t: TypeError: boom"


def test_vitest_unhandled_errors_land_on_their_first_project_frame(tmp_path: Path) -> None:
    problems = problems_of(
        tmp_path,
        ["src/x.ts"],
        [
            "\u23af\u23af\u23af Unhandled Errors \u23af\u23af\u23af",
            "Vitest caught 1 unhandled error during the test run.",
            "\u23af\u23af\u23af Unhandled Rejection \u23af\u23af\u23af",
            "Error: late boom",
            " \u276f src/x.ts:3:9",
            "\u23af\u23af\u23af\u23af\u23af\u23af",
        ],
    )
    assert where(problems) == [("src/x.ts", 3, 9)]
    assert problems[0].message == "Unhandled Rejection: Error: late boom"


def test_each_family_exposes_feed_and_finish() -> None:
    for family in (
        PytestMatcher,
        TracebackMatcher,
        GccMatcher,
        TscMatcher,
        RustMatcher,
        JestMatcher,
    ):
        sink: LineSink = family()
        sink.feed("nothing to see")
        assert sink.finish() == []
