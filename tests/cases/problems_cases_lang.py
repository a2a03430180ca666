"""Cases for the matchers of the detector's rules 6 to 11: deno test, ExUnit (mix test),
minitest (rake test), test-unit, RSpec and zig build test, each recorded from the real tool
(tests/support/lang_tools.py says where they are). Each project has a failing test, a test
whose failure was raised in project code (located at the test, the raising line related), a
passing test, and what must never be a location: Deno's own and remote frames, Elixir's own
and a dependency's files under a relative path the project also has (`lib/enum.ex`,
`lib/helper.ex`), the gems' and Zig's own library files."""

from __future__ import annotations

from tests.cases.problems_cases import Case, Expect

DENO = {
    "deno.json": '{\n  // no tasks: `deno test`\n  "imports": {"@/": "./src/"},\n}\n',
    "src/calc.ts": """\
export function add(a: number, b: number): number {
  return a + b;
}

export function boom(n: number): number {
  if (n > 1) {
    throw new Error(`bad value ${n}`);
  }
  return n;
}
""",
    "tests/calc_test.ts": """\
import assert from "node:assert/strict";
import { add, boom } from "@/calc.ts";

Deno.test("adds", () => {
  assert.equal(add(1, 2), 4);
});

Deno.test("passes", () => {
  assert.equal(add(2, 2), 4);
});

Deno.test("calls project code", () => {
  boom(5);
});

Deno.test("names a remote module", () => {
  throw new Error("see https://deno.land/x/mod.ts:10:5 and ext:core/01_core.js:1:1");
});
""",
}

MIX = {
    "mix.exs": "defmodule Calc.MixProject do\n  use Mix.Project\n\n"
    '  def project, do: [app: :calc, version: "0.1.0", deps: []]\nend\n',
    "lib/calc.ex": """\
defmodule Calc do
  def add(a, b), do: a + b

  def boom(n) do
    if n > 1, do: raise(ArgumentError, "bad value #{n}")
    n
  end
end
""",
    # Elixir's frames name `lib/enum.ex` relative to Elixir's own folder: not this file.
    "lib/enum.ex": "defmodule Calc.Enum do\n  def id(x), do: x\nend\n",
    "test/test_helper.exs": "ExUnit.start(seed: 0)\n",
    "test/calc_test.exs": """\
defmodule CalcTest do
  use ExUnit.Case

  test "adds" do
    assert Calc.add(1, 2) == 4
  end

  test "passes" do
    assert Calc.add(2, 2) == 4
  end

  test "calls project code" do
    Calc.boom(5)
  end

  test "through Enum" do
    Enum.map([1, 2], fn x -> Calc.boom(x) end)
  end
end
""",
}

# A path dependency in deps/: its frames, `(helper 0.1.0) lib/helper.ex:3`, are relative to
# deps/helper, not to the project, which has a lib/helper.ex of its own.
MIX_DEPS = {
    "mix.exs": "defmodule Calc.MixProject do\n  use Mix.Project\n\n"
    '  def project, do: [app: :calc, version: "0.1.0", deps: [{:helper, path: "deps/helper"}]]\n'
    "end\n",
    "deps/helper/mix.exs": "defmodule Helper.MixProject do\n  use Mix.Project\n\n"
    '  def project, do: [app: :helper, version: "0.1.0", deps: []]\nend\n',
    "deps/helper/lib/helper.ex": """\
defmodule Helper do
  def check!(n) do
    if n > 1, do: raise(ArgumentError, "helper refused #{n}")
    n
  end
end
""",
    "lib/calc.ex": "defmodule Calc do\n  def run(n), do: Helper.check!(n)\nend\n",
    "lib/helper.ex": "defmodule Calc.Helper do\n  def id(n), do: n\nend\n",
    "test/test_helper.exs": "ExUnit.start(seed: 0)\n",
    "test/calc_test.exs": """\
defmodule CalcTest do
  use ExUnit.Case

  test "through a dependency" do
    Calc.run(5)
  end
end
""",
}

RUBY_LIB = """\
module Calc
  def self.add(a, b)
    a + b
  end

  def self.boom(n)
    raise ArgumentError, "bad value #{n}" if n > 1
    n
  end
end
"""

MINITEST = {
    "Rakefile": 'require "rake/testtask"\n\nRake::TestTask.new do |t|\n'
    '  t.libs << "test"\n  t.test_files = FileList["test/test_*.rb"]\n'
    '  t.options = "--seed=1"\nend\n',
    "lib/calc.rb": RUBY_LIB,
    "test/test_calc.rb": """\
require "minitest/autorun"
require "calc"

class CalcTest < Minitest::Test
  def test_adds
    assert_equal 4, Calc.add(1, 2)
  end

  def test_passes
    assert_equal 4, Calc.add(2, 2)
  end

  def test_calls_project_code
    Calc.boom(5)
  end
end
""",
}

TEST_UNIT = {
    "lib/calc.rb": RUBY_LIB,
    "test/test_calc.rb": """\
require "test/unit"
require "calc"

class CalcTest < Test::Unit::TestCase
  def test_adds
    assert_equal(4, Calc.add(1, 2))
  end

  def test_passes
    assert_equal(4, Calc.add(2, 2))
  end

  def test_calls_project_code
    Calc.boom(5)
  end
end
""",
}

RSPEC = {
    ".rspec": "--require spec_helper\n",
    "spec/spec_helper.rb": '$LOAD_PATH.unshift(File.expand_path("../lib", __dir__))\n',
    "lib/calc.rb": RUBY_LIB,
    "spec/calc_spec.rb": """\
require "calc"

RSpec.describe Calc do
  it "adds" do
    expect(Calc.add(1, 2)).to eq(4)
  end

  it "passes" do
    expect(Calc.add(2, 2)).to eq(4)
  end

  it "calls project code" do
    Calc.boom(5)
  end
end
""",
}

ZIG = {
    "build.zig": """\
const std = @import("std");

pub fn build(b: *std.Build) void {
    const tests = b.addTest(.{ .root_module = b.createModule(.{
        .root_source_file = b.path("src/calc.zig"),
        .target = b.standardTargetOptions(.{}),
    }) });
    const test_step = b.step("test", "Run the tests");
    test_step.dependOn(&b.addRunArtifact(tests).step);
}
""",
    "src/calc.zig": """\
const std = @import("std");

pub fn add(a: i32, b: i32) i32 {
    return a + b;
}

fn check(n: i32) !void {
    if (n > 1) return error.BadValue;
}

test "adds" {
    try std.testing.expectEqual(@as(i32, 4), add(1, 2));
}

test "passes" {
    try std.testing.expect(add(2, 2) == 4);
}

test "calls project code" {
    try check(5);
}
""",
}

PROJECTS: dict[str, dict[str, str]] = {
    "deno": DENO,
    "mix": MIX,
    "mix-deps": MIX_DEPS,
    "minitest": MINITEST,
    "test-unit": TEST_UNIT,
    "rspec": RSPEC,
    "zig": ZIG,
}

DT = "tests/calc_test.ts"
DENO_TEST = (
    Expect(
        DT, 5, 1, "adds: AssertionError: Expected values to be strictly equal:\n3 !== 4", "adds"
    ),
    Expect(
        DT,
        13,
        1,
        "calls project code: Error: bad value 5",
        "calls project code",
        related=(("src/calc.ts", 7),),
    ),
    # The URL and Deno's own file in the message are no place of the project's.
    Expect(DT, 17, 1, "names a remote module: Error: see https://", "names a remote module"),
)

ET = "test/calc_test.exs"
EXUNIT = (
    Expect(ET, 5, 1, "CalcTest: test adds: Assertion with == failed\ncode:", "CalcTest: test adds"),
    Expect(
        ET,
        13,
        1,
        "CalcTest: test calls project code: ** (ArgumentError) bad value 5",
        "CalcTest: test calls project code",
        related=(("lib/calc.ex", 5),),
    ),
    # Elixir's `(elixir 1.14.0) lib/enum.ex:1658` frames are not the project's lib/enum.ex.
    Expect(
        ET,
        17,
        1,
        "CalcTest: test through Enum: ** (ArgumentError) bad value 2",
        "CalcTest: test through Enum",
        related=(("lib/calc.ex", 5),),
    ),
)

RT = "test/test_calc.rb"


def _ruby(adds: str, prefix: str = "CalcTest#", test: str = RT) -> tuple[Expect, ...]:
    adds_name = f"{prefix}test_adds" if prefix else "Calc adds"
    raised = f"{prefix}test_calls_project_code" if prefix else "Calc calls project code"
    return (
        Expect(test, 5 if test != RT else 6, 1, f"{adds_name}: {adds}", adds_name),
        Expect(
            test,
            13 if test != RT else 14,
            1,
            f"{raised}: ArgumentError",
            raised,
            related=(("lib/calc.rb", 7),),
        ),
    )


ZIG_TEST = (
    # Zig's own std/testing.zig frames come first: never a place.
    Expect("src/calc.zig", 12, 1, "calc.test.adds: expected 4, found 3", "calc.test.adds"),
    Expect(
        "src/calc.zig",
        20,
        1,
        "calc.test.calls project code: failed",
        "calc.test.calls project code",
        related=(("src/calc.zig", 8),),
    ),
)

CASES: tuple[Case, ...] = (
    Case("deno", "deno_test", "deno", "deno test", "deno", DENO_TEST),
    Case("exunit", "mix_test", "mix", "mix test", "mix", EXUNIT),
    Case(
        "exunit",
        "mix_test_deps",
        "mix-deps",
        "mix test",
        "mix",
        (
            Expect(
                ET,
                5,
                1,
                "CalcTest: test through a dependency: ** (ArgumentError) helper refused 5",
                "CalcTest: test through a dependency",
            ),
        ),
    ),
    Case("ruby", "minitest", "minitest", "rake test", "rake", _ruby("Expected: 4\n  Actual: 3")),
    Case(
        "ruby",
        "test_unit",
        "test-unit",
        "ruby -Ilib -Itest test/test_calc.rb",
        "ruby",
        _ruby("<4> expected but was\n<3>"),
    ),
    Case(
        "ruby",
        "rspec",
        "rspec",
        "rspec",
        "rspec",
        _ruby("expected: 4\ngot: 3", "", "spec/calc_spec.rb"),
    ),
    Case("zig", "zig_build_test", "zig", "zig build test", "zig", ZIG_TEST),
)
