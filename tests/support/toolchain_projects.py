"""Small real projects of the detector's rules 6 to 11, each in a passing or a failing state,
in layouts a copied manifest or a narrow PATH would break (an import map, packages below the
root, a Gemfile.lock, a test helper, a build module, a recipe with a default argument). Each
function writes the project into `folder` and returns the bare command a user would type."""

from __future__ import annotations

from pathlib import Path

from tests.support.files import write

GEMFILE_LOCK = """\
GEM
  remote: https://rubygems.org/
  specs:
    minitest (5.17.0)
    rake (13.0.6)

PLATFORMS
  x86_64-linux

DEPENDENCIES
  minitest
  rake

BUNDLED WITH
   2.3.15
"""


def go_packages(folder: Path, failing: bool) -> str:
    """A module whose test is in a package below the root: `./...` must reach it."""
    write(
        folder,
        {
            "go.mod": "module example.com/calc\n\ngo 1.19\n",
            "calc/calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
            "calc/calc_test.go": 'package calc\n\nimport "testing"\n\n'
            "func TestAdd(t *testing.T) {\n"
            f"\tif got := Add(1, 2); got != {4 if failing else 3} {{\n"
            '\t\tt.Errorf("Add(1, 2) = %d", got)\n\t}\n}\n',
        },
    )
    return "go test ./..."


def deno_import_map(folder: Path, failing: bool) -> str:
    """deno.json (with a comment) maps `@/`: the tests import through it."""
    write(
        folder,
        {
            "deno.json": '{\n  // tests import "@/calc.ts"\n  "imports": {"@/": "./src/"},\n}\n',
            "src/calc.ts": "export function add(a: number, b: number): number {\n"
            "  return a + b;\n}\n",
            "tests/calc_test.ts": 'import assert from "node:assert/strict";\n'
            'import { add } from "@/calc.ts";\n\n'
            'Deno.test("adds", () => {\n'
            f"  assert.equal(add(1, 2), {4 if failing else 3});\n}});\n",
        },
    )
    return "deno test"


def mix_project(folder: Path, failing: bool) -> str:
    """A Mix project with a test helper and a module under lib/."""
    write(
        folder,
        {
            "mix.exs": "defmodule Calc.MixProject do\n  use Mix.Project\n\n"
            '  def project, do: [app: :calc, version: "0.1.0", deps: []]\nend\n',
            "lib/calc.ex": "defmodule Calc do\n  def add(a, b), do: a + b\nend\n",
            "test/test_helper.exs": "ExUnit.start()\n",
            "test/calc_test.exs": "defmodule CalcTest do\n  use ExUnit.Case\n\n"
            '  test "adds" do\n'
            f"    assert Calc.add(1, 2) == {4 if failing else 3}\n  end\nend\n",
        },
    )
    return "mix test"


def rake_bundle(folder: Path, failing: bool) -> str:
    """A gem's layout: Rake::TestTask over test/, lib/ on the load path, a Gemfile.lock."""
    write(
        folder,
        {
            "Gemfile": 'source "https://rubygems.org"\ngem "rake"\ngem "minitest"\n',
            "Gemfile.lock": GEMFILE_LOCK,
            "Rakefile": 'require "rake/testtask"\n\nRake::TestTask.new do |t|\n'
            '  t.libs << "test"\n  t.test_files = FileList["test/test_*.rb"]\nend\n\n'
            "task default: :test\n",
            "lib/calc.rb": "module Calc\n  def self.add(a, b)\n    a + b\n  end\nend\n",
            "test/test_calc.rb": 'require "minitest/autorun"\nrequire "calc"\n\n'
            "class CalcTest < Minitest::Test\n  def test_adds\n"
            f"    assert_equal {4 if failing else 3}, Calc.add(1, 2)\n  end\nend\n",
        },
    )
    return "bundle exec rake test"


ZIG_BUILD = """\
const std = @import("std");

pub fn build(b: *std.Build) void {
    const tests = b.addTest(.{ .root_module = b.createModule(.{
        .root_source_file = b.path("src/root.zig"),
        .target = b.standardTargetOptions(.{}),
    }) });
    const test_step = b.step("test", "Run the tests");
    test_step.dependOn(&b.addRunArtifact(tests).step);
}
"""


def zig_module(folder: Path, failing: bool) -> str:
    """A build.zig test step over a root module that imports a second file."""
    write(
        folder,
        {
            "build.zig": ZIG_BUILD,
            "src/calc.zig": "pub fn add(a: i32, b: i32) i32 {\n    return a + b;\n}\n",
            "src/root.zig": 'const std = @import("std");\nconst calc = @import("calc.zig");\n\n'
            'test "adds" {\n'
            f"    try std.testing.expectEqual(@as(i32, {4 if failing else 3}), calc.add(1, 2));\n"
            "}\n",
        },
    )
    return "zig build test"


def just_default_argument(folder: Path, failing: bool) -> str:
    """A recipe with a default argument that runs a script in a folder below."""
    write(
        folder,
        {
            "justfile": 'suite := "tests"\n\ntest dir=suite:\n    sh {{dir}}/run.sh\n',
            "tests/run.sh": f"echo running\nexit {1 if failing else 0}\n",
        },
    )
    return "just test"
