"""The Node families beyond their recorded outputs (test_recorded_outputs.py): tsc, jest and
vitest, mocha, node --test, ava, tap and bare stacks; what must never be located (acceptance
2), and the fallbacks when a stack has no project frame. Samples follow the recorded outputs'
shapes in tests/cases/outputs/node and eslint."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_verify.problems import (
    ProblemCollector,
    TscMatcher,
)
from lsp_verify.problems.base import Problem
from tests.support.problems import (
    make_files,
    problems_of,
    where,
)


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


URL = "http://host:8080/a.js:3:4"


# Files that a URL, a timestamp or node's internal modules would name if read as paths.
LOOKALIKES = ("http:/host:8080/a.js", "12", "12:30:45", "node:internal/timers", "http")


def project(root: Path) -> Path:
    """A folder with the files the samples name, so that only the shape decides."""
    files = ("a.js", "test/t.test.js", "node_modules/dep/index.js", "src/lint.js", *LOOKALIKES)
    for rel in files:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text('it("waits", () => {});\n' * 5, encoding="utf-8")
    return root


def collect(root: Path, text: str) -> list[Problem]:
    collector = ProblemCollector(str(root))
    for line in text.splitlines():
        collector.feed(line)
    problems = collector.finish()
    assert collector.errors == 0
    return problems


def frames(outside: Path) -> list[str]:
    """Frames that name no file of the folder's own code."""
    return [
        f"at fetch ({URL})",
        f"at {URL}",
        "at check (node_modules/dep/index.js:3:11)",
        "at process.processImmediate (node:internal/timers:483:21)",
        "at new Promise (<anonymous>)",
        f"at run ({outside}/a.js:2:5)",
        f"at file://{outside}/a.js:2:5",
        "at Object.<anonymous> (a.js)",
        "at Foo.bar(Foo.java:12)",
        "at 12:30:45 the job started",
    ]


def samples(outside: Path) -> dict[str, str]:
    """Each family's failure block, with frames that must not locate it."""
    at = "\n".join("      " + frame for frame in frames(outside))
    bare = "\n".join("        " + frame[3:] for frame in frames(outside))
    return {
        "mocha": f"  1 failing\n\n  1) suite\n       test:\n     Error: boom\n{at}\n",
        "node --test": f"\u2716 test (1.5ms)\n  Error: boom\n{at}\n",
        "tap (mocha)": f"not ok 1 test\n  boom\n  Error: boom\n{at}\n# tests 1\n",
        "tap (yaml)": (
            "not ok 1 - test\n  ---\n"
            f"  location: '{outside}/a.js:1:1'\n  error: 'boom'\n  stack: |-\n{bare}\n"
            "  at:\n    fileName: node_modules/dep/index.js\n    lineNumber: 3\n  ...\n"
        ),
        "ava": (
            f"  \u2500\n\n  test\n\n  {outside}/a.js:6\n\n  Error: boom\n"
            f"  \u203a {URL}\n  \u203a node_modules/dep/index.js:3:4\n{at}\n\n  \u2500\n"
        ),
        "node stack": f"{URL.rsplit(':', 1)[0]}\n\nTypeError: boom\n{at}\n\nNode.js v20\n",
        "eslint stylish": (
            "no/such/file.js\n  12:30  error  Timestamps are not problems  rule\n\n"
            f"{outside}/a.js\n  1:7  error  Outside the folder  no-unused-vars\n\n"
            "[12:30:45] started\n  12:30  error  after a timestamp  rule\n"
        ),
        "eslint compact": (
            f"{outside}/a.js: line 1, col 7, Error - outside (rule)\n"
            "12:30:45: line 3, col 4, Error - a timestamp (rule)\n"
            f"{URL}: line 3, col 4, Error - a URL (rule)\n"
        ),
        "biome": (
            f"{URL} lint/x ━━━━\n\n  \u00d7 a URL\n\n"
            f"{outside}/a.js:1:7 lint/x ━━━━\n\n  \u00d7 outside\n\n"
            "12:30:45 lint/x ━━━━\n\n  \u00d7 a timestamp\n"
        ),
    }


@pytest.mark.parametrize("family", sorted(samples(Path("/x"))))
def test_paths_and_numbers_that_are_not_the_folders_code_locate_nothing(
    family: str, tmp_path: Path
) -> None:
    root = project(tmp_path / "project")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.js").write_text("x\n", encoding="utf-8")
    assert collect(root, samples(outside)[family]) == []


def test_the_same_blocks_with_one_project_frame_are_located(tmp_path: Path) -> None:
    # The control for the test above: the blocks are read, only their paths were refused.
    root = project(tmp_path / "project")
    outside = tmp_path / "outside"
    for family, text in samples(outside).items():
        if family.startswith(("eslint", "biome", "tap (yaml)", "ava")):
            continue
        located = text.replace(f"at {URL}", f"at {root}/test/t.test.js:2:3")
        assert where(collect(root, located)) == [("test/t.test.js", 2, 3)], family


def test_a_runner_failure_lands_on_the_test_and_the_raising_line_is_related(
    tmp_path: Path,
) -> None:
    root = project(tmp_path)
    text = (
        "  1 failing\n\n  1) t:\n     RangeError: no\n"
        "      at divide (a.js:7:11)\n"
        "      at helper (test/t.test.js:2:1)\n"
        "      at Context.<anonymous> (test/t.test.js:4:5)\n"
        "      at Runner.run (node_modules/dep/index.js:1:1)\n"
    )
    (problem,) = collect(root, text)
    assert where([problem]) == [("test/t.test.js", 2, 1)]
    assert [(item.path, item.line, item.message) for item in problem.related] == [
        ("a.js", 7, "raised here")
    ]


def test_a_mocha_timeout_lands_on_the_tests_it_line(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "test/t.test.js").write_text('\n\nit("waits", function () {});\n', encoding="utf-8")
    text = (
        "  1 failing\n\n  1) slow\n       waits:\n"
        "     Error: Timeout of 2000ms exceeded. For async tests and hooks, ensure"
        f' "done()" is called. ({root}/test/t.test.js)\n'
        "      at listOnTimeout (node:internal/timers:581:17)\n"
    )
    (problem,) = collect(root, text)
    assert where([problem]) == [("test/t.test.js", 3, 1)]
    assert problem.code == "slow waits"


def test_a_mocha_error_with_a_cause_keeps_the_failures_after_it(tmp_path: Path) -> None:
    root = project(tmp_path)
    text = (
        "  2 failing\n\n  1) esm\n       divides:\n     RangeError: division by zero\n"
        f"      at divide (file://{root}/a.js:3:11)\n"
        f"      at Context.<anonymous> (file://{root}/test/t.test.js:7:5)\n"
        "     Caused by: Error: inner cause\n"
        f"      at divide (file://{root}/a.js:3:55)\n"
        f"      at Context.<anonymous> (file://{root}/test/t.test.js:7:5)\n\n"
        "  2) esm\n       adds:\n     Error: no\n"
        f"      at Context.<anonymous> (test/t.test.js:2:3)\n"
    )
    problems = collect(root, text)
    assert where(problems) == [("test/t.test.js", 7, 5), ("test/t.test.js", 2, 3)]
    assert [(item.path, item.line, item.column) for item in problems[0].related] == [
        ("a.js", 3, 11)
    ]


def test_node_test_without_a_project_frame_lands_on_test_at(tmp_path: Path) -> None:
    root = project(tmp_path)
    text = "test at test/t.test.js:4:3\n\u2716 throws a string (0.2ms)\n  'just a string'\n"
    (problem,) = collect(root, text)
    assert where([problem]) == [("test/t.test.js", 4, 3)]
    assert problem.message == "throws a string: 'just a string'"


def test_tap_failures_of_subtests_are_not_repeated_by_their_parents(tmp_path: Path) -> None:
    root = project(tmp_path)
    text = (
        "# Subtest: outer\n    # Subtest: inner\n        not ok 1 - should be equal\n"
        "          ---\n          at:\n            fileName: test/t.test.js\n"
        "            lineNumber: 2\n            columnNumber: 5\n          ...\n"
        "    not ok 1 - inner\n      ---\n      at:\n        fileName: test/t.test.js\n"
        "        lineNumber: 1\n      ...\n"
        "not ok 1 - outer\n  ---\n  location: 'test/t.test.js:1:1'\n  ...\n"
        "not ok 2 - todo # TODO later\n  ---\n  location: 'test/t.test.js:5:1'\n  ...\n"
    )
    (problem,) = collect(root, text)
    assert where([problem]) == [("test/t.test.js", 2, 5)]
    assert problem.message == "outer > inner: should be equal"


def test_a_node_stack_with_file_urls_and_no_project_frame(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "my lib.mjs").write_text("x\n", encoding="utf-8")
    url = f"file://{root}/my%20lib.mjs"
    text = f"Error: thrown\n    at run ({url}:4:3)\n    at {url}:7:1\n"
    assert where(collect(root, text)) == [("my lib.mjs", 4, 3)]
    # A SyntaxError while loading: all frames internal, Node's `path:line` header above.
    text = (
        f"{root}/a.js:3\n\n\nSyntaxError: Unexpected end of input\n"
        "    at wrapSafe (node:internal/x:1:2)\n"
    )
    assert where(collect(root, text)) == [("a.js", 3, 1)]


def test_an_uncaught_errors_cause_is_not_a_second_problem(tmp_path: Path) -> None:
    root = project(tmp_path)
    text = (
        f"file://{root}/a.js:3\n    throw new RangeError();\n          ^\n\n"
        "RangeError: division by zero\n"
        f"    at divide (file://{root}/a.js:3:11)\n"
        "    ... 2 lines matching cause stack trace ...\n"
        "    at async run (node:internal/modules/run_main:117:5) {\n"
        "  [cause]: Error: inner cause\n"
        f"      at divide (file://{root}/a.js:3:55)\n}}\n"
    )
    (problem,) = collect(root, text)
    assert (where([problem]), problem.code) == ([("a.js", 3, 11)], "RangeError")


def test_a_tap_message_line_that_starts_with_ok_is_not_a_test_point(tmp_path: Path) -> None:
    root = project(tmp_path)
    text = (
        "not ok 1 - t\n  ---\n  error: |-\n    ok was expected\n"
        "  location: 'test/t.test.js:3:1'\n  ...\n"
    )
    (problem,) = collect(root, text)
    assert (where([problem]), problem.message) == ([("test/t.test.js", 3, 1)], "t: ok was expected")


def test_another_runtimes_at_lines_below_a_path_line_locate_nothing(tmp_path: Path) -> None:
    root = project(tmp_path)
    text = (
        "a.js:3\nUnhandled exception. System.Exception: boom\n"
        "   at Foo.Bar() in /src/File.cs:line 12\n   at Foo.Main() in /src/File.cs:line 3\n"
    )
    assert collect(root, text) == []
