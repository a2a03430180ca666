"""The ProblemCollector every family feeds: paths resolved inside the folder, problems deduplicated,
ordered and capped, every family a LineSink, and robustness (a matcher that raises, odd and
arbitrary input). Samples written inline follow the documented formats of tools this machine
does not have; the recorded outputs of real tools are tested by test_recorded_outputs.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_verify.problems import (
    AssertMatcher,
    DoctestMatcher,
    GccMatcher,
    GoTestMatcher,
    JestMatcher,
    LineSink,
    MakeMatcher,
    ProblemCollector,
    PyrightMatcher,
    PytestMatcher,
    RustMatcher,
    TracebackMatcher,
    TscMatcher,
    UnittestMatcher,
    make_sink,
)
from lsp_verify.problems.node import (
    AvaMatcher,
    BiomeMatcher,
    EslintMatcher,
    MochaMatcher,
    NodeStackMatcher,
    NodeTestMatcher,
    TapMatcher,
)
from tests.cases.problems_cases import FIXTURES
from tests.support.problems import (
    make_files,
    problems_of,
    run,
    where,
)
from tests.support.properties import examples


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


MATCHERS = (
    MochaMatcher,
    NodeTestMatcher,
    TapMatcher,
    AvaMatcher,
    NodeStackMatcher,
    EslintMatcher,
    BiomeMatcher,
)


def test_each_node_family_is_a_line_sink() -> None:
    for family in MATCHERS:
        sink: LineSink = family()
        sink.feed("nothing to see")
        assert sink.finish() == []


def test_a_matcher_that_raises_loses_nothing_of_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_files(tmp_path, "a.py", "b.ts")

    def explode(self: object, line: str) -> bool:
        raise RuntimeError("matcher bug")

    monkeypatch.setattr(PytestMatcher, "take", explode)
    monkeypatch.setattr(RustMatcher, "flush", lambda self: 1 / 0)
    text = "a.py:1: error: from gcc\nb.ts(2,3): error TS2322: from tsc"
    problems, collector = run(tmp_path, text)
    assert where(problems) == [("a.py", 1, 1), ("b.ts", 2, 3)]
    assert collector.errors == 2


def test_the_collector_never_raises_on_odd_input(tmp_path: Path) -> None:
    collector = ProblemCollector(str(tmp_path / "does-not-exist"))
    for line in ["\x00:1: error: nul", "a" * 10_000_000, "\udcff:1:1: x", "9" * 5000 + ":1: e"]:
        collector.feed(line)
    collector.feed(123)  # type: ignore[arg-type]
    assert collector.finish() == []
    assert collector.errors == 0


FIXTURE_LINES = sorted(
    {line for path in FIXTURES.rglob("*.txt") for line in path.read_text("utf-8").splitlines()}
)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            st.text(max_size=300),
            st.sampled_from(FIXTURE_LINES),
            st.builds(
                lambda a, b: a + b,
                st.sampled_from(FIXTURE_LINES),
                st.text(alphabet=":()[]'\" 0123456789_=-E>|", max_size=40),
            ),
        ),
        max_size=60,
    )
)
def test_arbitrary_lines_never_raise_and_give_sane_problems(lines: list[str]) -> None:
    root = FIXTURES  # an existing folder with files in it, read only
    collector = ProblemCollector(str(root))
    for line in lines:
        collector.feed(line)
    problems = collector.finish()
    assert collector.errors == 0
    assert len(problems) <= 200
    for problem in problems:
        assert problem.line >= 1 and problem.column >= 1
        assert not os.path.isabs(problem.path) and ".." not in problem.path.split("/")
        assert (root / problem.path).is_file()
