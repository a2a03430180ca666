"""The Python families beyond their recorded outputs: pytest (ids, summaries, chained exceptions,
virtualenv frames), tracebacks, unittest, and mypy's notes."""

from __future__ import annotations

from pathlib import Path

from lsp_verify.problems import (
    PytestMatcher,
    TracebackMatcher,
)
from tests.support.problems import (
    make_files,
    problems_of,
    run,
    where,
)


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


RULE = "=" * 70


DASHES = "-" * 70


STARS = "*" * 70


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
