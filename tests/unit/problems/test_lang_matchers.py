"""The deno test, ExUnit, Ruby (minitest, test-unit, RSpec) and zig test matchers on what the
recorded outputs (tests/cases/problems_cases_lang.py) do not show: what must never be a
location (a dependency's or the toolchain's file under a relative path the project also has, a
remote module, Deno's own frames, Zig's library), the fallbacks, and compile errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.problems import problems_of, where

MIX_EXS = 'defmodule C.MixProject do\n  def project, do: [app: :calc, version: "0.1.0"]\nend\n'


def test_exunit_never_locates_a_dependency_frame(tmp_path: Path) -> None:
    """`(helper 0.1.0) lib/helper.ex` is relative to the dependency's folder (deps/helper),
    not the project's: even with a lib/helper.ex of its own, the test's line is the place."""
    (tmp_path / "mix.exs").write_text(MIX_EXS)
    lines = [
        "  1) test uses a dependency (CalcTest)",
        "     test/calc_test.exs:4",
        "     ** (RuntimeError) from the dependency",
        "     stacktrace:",
        "       (helper 0.1.0) lib/helper.ex:3: Helper.fail/0",
        "       test/calc_test.exs:5: (test)",
        "",
    ]
    files = ["test/calc_test.exs", "lib/helper.ex", "deps/helper/lib/helper.ex"]
    problems = problems_of(tmp_path, files, lines)
    assert where(problems) == [("test/calc_test.exs", 5, 1)]
    assert problems[0].related == ()
    assert problems[0].message.startswith("CalcTest: test uses a dependency: ** (RuntimeError)")


def test_exunit_without_frames_lands_on_the_test(tmp_path: Path) -> None:
    lines = [
        "  1) test times out (CalcTest)",
        "     test/calc_test.exs:9",
        "     ** (ExUnit.TimeoutError) test timed out after 60000ms",
        "",
        "Finished in 60.1 seconds",
    ]
    problems = problems_of(tmp_path, ["test/calc_test.exs"], lines)
    assert where(problems) == [("test/calc_test.exs", 9, 1)]
    assert problems[0].message.endswith("test timed out after 60000ms")


def test_exunit_compile_error(tmp_path: Path) -> None:
    lines = [
        "== Compilation error in file lib/calc.ex ==",
        "** (CompileError) lib/calc.ex:3: undefined function foo/0",
    ]
    problems = problems_of(tmp_path, ["lib/calc.ex"], lines)
    assert where(problems) == [("lib/calc.ex", 3, 1)]
    assert problems[0].code == "CompileError"


def test_deno_remote_and_internal_frames_are_no_place(tmp_path: Path) -> None:
    """Frames in a jsr/https module and in Deno itself: the test's definition is the place."""
    lines = [
        " ERRORS ",
        "",
        "equals => ./tests/a_test.ts:3:6",
        "error: AssertionError: Values are not equal.",
        "    at assertEquals (https://jsr.io/@std/assert/1.0.0/equals.ts:51:9)",
        "    at ext:cli/40_test.js:180:11",
        "    at node:internal/assert:12:3",
        "",
        " FAILURES ",
        "",
        "equals => ./tests/a_test.ts:3:6",
        "",
        "FAILED | 0 passed | 1 failed (3ms)",
    ]
    problems = problems_of(tmp_path, ["tests/a_test.ts", "equals.ts", "ext"], lines)
    assert where(problems) == [("tests/a_test.ts", 3, 6)]
    assert problems[0].message == "equals: AssertionError: Values are not equal."


def test_deno_summary_alone_gives_nothing(tmp_path: Path) -> None:
    lines = [" FAILURES ", "", "adds => ./tests/a_test.ts:3:6", "", "FAILED | 0 passed | 1 failed"]
    assert problems_of(tmp_path, ["tests/a_test.ts"], lines) == []


def test_zig_frames_only_in_the_library_give_nothing(tmp_path: Path) -> None:
    lines = [
        "error: 'calc.test.adds' failed:",
        "       expected 4, found 3",
        "       /opt/zig/lib/std/testing.zig:93:17: 0x124eaf4 in expectEqualInner (std.zig)",
        "                       return error.TestExpectedEqual;",
        "                       ^",
        "Build Summary: 1/3 steps succeeded (1 failed)",
    ]
    assert problems_of(tmp_path, ["src/calc.zig"], lines) == []


def test_zig_test_frame_and_helper(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    lines = [
        "error: 'calc.test.calls project code' failed:",
        f"       {root}/src/calc.zig:8:16: 0x1 in check (calc.zig)",
        "           if (n > 1) return error.BadValue;",
        "                      ^",
        f"       {root}/src/calc.zig:20:5: 0x2 in test.calls project code (calc.zig)",
        "           try check(5);",
        "           ^",
        "failed command: ./.zig-cache/o/x/test --cache-dir=./.zig-cache --listen=-",
    ]
    problems = problems_of(tmp_path, ["src/calc.zig"], lines)
    assert where(problems) == [("src/calc.zig", 20, 1)]
    assert [(r.path, r.line) for r in problems[0].related] == [("src/calc.zig", 8)]
    assert problems[0].message == "calc.test.calls project code: failed"


def test_minitest_error_in_installed_code_only_gives_nothing(tmp_path: Path) -> None:
    lines = [
        "  1) Error:",
        "CalcTest#test_x:",
        "NoMethodError: undefined method `x'",
        "    /usr/lib/ruby/vendor_ruby/minitest/assertions.rb:3:in `x'",
        "",
    ]
    assert problems_of(tmp_path, ["lib/calc.rb"], lines) == []


def test_minitest_relative_failure_location(tmp_path: Path) -> None:
    lines = ["  1) Failure:", "CalcTest#test_adds [test/test_calc.rb:6]:", "Expected: 4", ""]
    problems = problems_of(tmp_path, ["test/test_calc.rb"], lines)
    assert where(problems) == [("test/test_calc.rb", 6, 1)]
    assert problems[0].code == "CalcTest#test_adds"


# What `zig build test` 0.17 printed with two builds at once: the first test's output cut in
# two, the second test's header between the pieces (once after `return expectE`, once in the
# middle of a frame line).
ZIG_PIECES = [
    """\
error: 'calc.test.adds' failed:
       expected 4, found 3
       /opt/zig/lib/std/testing.zig:93:17: 0x124eba4 in expectEqualInner__func_958 (std.zig)
                       return error.TestExpectedEqual;
                       ^
       /opt/zig/lib/std/testing.zig:57:5: 0x124ec2b in expectEqual (calc.zig)
           return expectE
error: 'calc.test.calls project code' failed:
       qualInner(T, expected, actual);
           ^
""",
    """\
error: 'calc.test.adds' failed:
       expected 4, found 3
       /opt/zig/lib/std/testing.zig:93:17: 0x12
error: 'calc.test.calls project code' failed:
       4eba4 in expectEqualInner__func_958 (std.zig)
                       return error.TestExpectedEqual;
                       ^
""",
]
ZIG_REST = """\
       {root}/src/calc.zig:12:5: 0x124ec72 in test.adds (calc.zig)
           try std.testing.expectEqual(@as(i32, 4), add(1, 2));
           ^
       {root}/src/calc.zig:8:16: 0x124e968 in check (calc.zig)
           if (n > 1) return error.BadValue;
                      ^
       {root}/src/calc.zig:20:5: 0x124e9dc in test.calls project code (calc.zig)
           try check(5);
           ^
failed command: ./.zig-cache/o/d69e/test --cache-dir=./.zig-cache --seed=0x18a12e56 --listen=-
"""


@pytest.mark.parametrize("pieces", ZIG_PIECES, ids=["after a source line", "inside a frame"])
def test_zig_output_printed_in_pieces(tmp_path: Path, pieces: str) -> None:
    """Each frame goes to the test its chain ends at, whatever header was printed last."""
    text = pieces + ZIG_REST.format(root=tmp_path.resolve())
    problems = problems_of(tmp_path, ["src/calc.zig"], text.splitlines())
    assert [(p.path, p.line, p.message) for p in problems] == [
        ("src/calc.zig", 12, "calc.test.adds: expected 4, found 3"),
        ("src/calc.zig", 20, "calc.test.calls project code: failed"),
    ]
    assert problems[0].related == ()
    assert [(r.path, r.line) for r in problems[1].related] == [("src/calc.zig", 8)]


def test_zig_stack_end_printed_before_its_header(tmp_path: Path) -> None:
    """Seen under load: the end of the test's own stack trace at column 0, unindented, before
    the build runner's report of it."""
    root = tmp_path.resolve()
    lines = [
        "test",
        "+- run test 1 pass, 1 fail (2 total)",
        "^",
        f"{root}/src/calc.zig:17:5: 0x124e9dc in test.calls project code (calc.zig)",
        "    try check(5);",
        "    ^",
        "error: 'calc.test.calls project code' failed:",
        f"       {root}/src/calc.zig:8:16: 0x124e968 in check (calc.zig)",
        "           if (n > 1) return error.BadValue;",
        "                      ",
        "failed command: ./.zig-cache/o/6ddade9bd9/test --listen=-",
    ]
    problems = problems_of(tmp_path, ["src/calc.zig"], lines)
    assert [(p.path, p.line, p.message) for p in problems] == [
        ("src/calc.zig", 17, "calc.test.calls project code: failed")
    ]
    assert [(r.path, r.line) for r in problems[0].related] == [("src/calc.zig", 8)]
