"""The detector's rules after the seed's five: go, deno, mix, rake, zig, just. Each one's
positives, near misses and bad manifests, and the order (a Makefile `test` target still wins
over go.mod). Which files each tool reads, and in which order, was checked against the tools
(go 1.19, Deno 2.9, rake 13, Zig 0.17, just 1.59); those facts are the cases here."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from lsp_verify.planning.plan import PLAN_INPUTS, Plan, Rule, make_plan
from tests.support import files
from tests.support.files import record_joins, write
from tests.unit.planning.test_detect import check_invariants

MAKE_TEST = "test:\n\t@echo ok\n"
ZIG_BUILD = """\
const std = @import("std");

pub fn build(b: *std.Build) void {
    const tests = b.addTest(.{ .root_module = b.createModule(.{
        .root_source_file = b.path("src/calc.zig"),
        .target = b.graph.host,
    }) });
    const test_step = b.step("test", "Run the tests");
    test_step.dependOn(&b.addRunArtifact(tests).step);
}
"""
MIX_EXS = (
    "defmodule Calc.MixProject do\n  use Mix.Project\n"
    '  def project, do: [app: :calc, version: "0.1.0"]\nend\n'
)


@pytest.fixture(autouse=True)
def empty_path(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    return files.empty_path(tmp_path_factory, monkeypatch)


def rule(plan: Plan, runner: str) -> Rule:
    return next(r for r in plan.rules if r.runner == runner)


# (id, files, runner or None, manifest, command)
CASES: list[tuple[str, dict[str, str | bytes], str | None, str | None, str | None]] = [
    ("go.mod", {"go.mod": "module example.com/demo\n\ngo 1.19\n"}, "go", "go.mod", "go test ./..."),
    ("go.mod empty", {"go.mod": ""}, "go", "go.mod", "go test ./..."),
    (
        "go.mod not UTF-8: go says so",
        {"go.mod": b"\xffmodule x\n"},
        "go",
        "go.mod",
        "go test ./...",
    ),
    ("go.work alone", {"go.work": "go 1.19\n"}, None, None, None),
    ("go.mod below the root", {"sub/go.mod": "module x\n"}, None, None, None),
    ("deno.json", {"deno.json": "{}"}, "deno", "deno.json", "deno test"),
    (
        "deno.json tasks.test",
        {"deno.json": '{"tasks": {"test": "deno test -A"}}'},
        "deno",
        "deno.json",
        "deno task test",
    ),
    (
        "deno.json tasks.test object",
        {"deno.json": '{"tasks": {"test": {"command": "deno test", "description": "x"}}}'},
        "deno",
        "deno.json",
        "deno task test",
    ),
    (
        "deno.json tasks.test empty",
        {"deno.json": '{"tasks": {"test": " "}}'},
        "deno",
        "deno.json",
        "deno test",
    ),
    (
        "deno.json tasks without test",
        {"deno.json": '{"tasks": {"test:unit": "x"}}'},
        "deno",
        "deno.json",
        "deno test",
    ),
    (
        "deno.jsonc with comments and trailing commas",
        {"deno.jsonc": '// config\n{\n  /* tasks */ "tasks": {"test": "x // y",},\n}\n'},
        "deno",
        "deno.jsonc",
        "deno task test",
    ),
    (
        "deno.json with a comment (Deno reads it as JSONC)",
        {"deno.json": '{"tasks": {"test": "x"} // hi\n}'},
        "deno",
        "deno.json",
        "deno task test",
    ),
    (
        "deno.json before deno.jsonc",
        {"deno.json": "{}", "deno.jsonc": '{"tasks": {"test": "x"}}'},
        "deno",
        "deno.json",
        "deno test",
    ),
    ("deno.json an array", {"deno.json": "[]"}, None, None, None),
    ("deno.json broken", {"deno.json": '{"tasks": '}, None, None, None),
    ("mix.exs", {"mix.exs": MIX_EXS}, "mix", "mix.exs", "mix test"),
    ("Rakefile task :test", {"Rakefile": "task :test do\nend\n"}, "rake", "Rakefile", "rake test"),
    ("Rakefile task(:test)", {"Rakefile": "task(:test) { }\n"}, "rake", "Rakefile", "rake test"),
    (
        "Rakefile task 'test'",
        {"Rakefile": "task 'test' do\nend\n"},
        "rake",
        "Rakefile",
        "rake test",
    ),
    (
        "Rakefile task test: deps",
        {"Rakefile": "task test: [:build] do\nend\n"},
        "rake",
        "Rakefile",
        "rake test",
    ),
    (
        "Rakefile task :test => deps",
        {"Rakefile": "task :test => :build\n"},
        "rake",
        "Rakefile",
        "rake test",
    ),
    (
        "Rakefile TestTask without a name",
        {
            "Rakefile": 'require "rake/testtask"\nRake::TestTask.new do |t|\n'
            '  t.pattern = "x"\nend\n'
        },
        "rake",
        "Rakefile",
        "rake test",
    ),
    (
        "Rakefile TestTask(:test)",
        {"Rakefile": "Rake::TestTask.new(:test) do |t|\nend\n"},
        "rake",
        "Rakefile",
        "rake test",
    ),
    (
        "Rakefile TestTask inside begin",
        {"Rakefile": "begin\n  Rake::TestTask.new { |t| }\nrescue LoadError\nend\n"},
        "rake",
        "Rakefile",
        "rake test",
    ),
    (
        "Rakefile Minitest::TestTask.create",
        {"Rakefile": 'require "minitest/test_task"\nMinitest::TestTask.create\n'},
        "rake",
        "Rakefile",
        "rake test",
    ),
    (
        "Rakefile RSpec task named test",
        {"Rakefile": "RSpec::Core::RakeTask.new(:test)\n"},
        "rake",
        "Rakefile",
        "rake test",
    ),
    ("rakefile lower case", {"rakefile": "task :test\n"}, "rake", "rakefile", "rake test"),
    ("Rakefile.rb", {"Rakefile.rb": "task :test\n"}, "rake", "Rakefile.rb", "rake test"),
    (
        "rakefile is read before Rakefile",
        {"rakefile": "task :build\n", "Rakefile": "task :test\n"},
        None,
        None,
        None,
    ),
    ("Rakefile RSpec default spec", {"Rakefile": "RSpec::Core::RakeTask.new\n"}, None, None, None),
    ("Rakefile TestTask(:units)", {"Rakefile": "Rake::TestTask.new(:units)\n"}, None, None, None),
    ("Rakefile task :test_all", {"Rakefile": "task :test_all\n"}, None, None, None),
    ("Rakefile default => test only", {"Rakefile": "task default: :test\n"}, None, None, None),
    ("Rakefile commented", {"Rakefile": "# task :test\n"}, None, None, None),
    (
        "Rakefile inside a namespace",
        {"Rakefile": "namespace :db do\n  task :test do\n  end\nend\n"},
        None,
        None,
        None,
    ),
    (
        "Rakefile after a namespace",
        {"Rakefile": "namespace :db do\n  task :test do\n  end\nend\ntask :test\n"},
        "rake",
        "Rakefile",
        "rake test",
    ),
    (
        "Rakefile =begin block",
        {"Rakefile": "=begin\ntask :test\n=end\ntask :build\n"},
        None,
        None,
        None,
    ),
    ("Rakefile after __END__", {"Rakefile": "task :b\n__END__\ntask :test\n"}, None, None, None),
    ("build.zig test step", {"build.zig": ZIG_BUILD}, "zig", "build.zig", "zig build test"),
    (
        "build.zig step over lines",
        {"build.zig": 'const s = b.step(\n    "test",\n    "Run",\n);\n'},
        "zig",
        "build.zig",
        "zig build test",
    ),
    ("build.zig no test step", {"build.zig": 'b.step("run", "Run");\n'}, None, None, None),
    ("build.zig commented", {"build.zig": '// b.step("test", "x");\n'}, None, None, None),
    ("build.zig step tests", {"build.zig": 'b.step("tests", "x");\n'}, None, None, None),
    ("justfile test:", {"justfile": "test:\n\techo ok\n"}, "just", "justfile", "just test"),
    (
        "Justfile",
        {"Justfile": "build:\n\ttrue\ntest: build\n\ttrue\n"},
        "just",
        "Justfile",
        "just test",
    ),
    ("JUSTFILE", {"JUSTFILE": "test:\n\ttrue\n"}, "just", "JUSTFILE", "just test"),
    (".justfile", {".justfile": "test:\n\ttrue\n"}, "just", ".justfile", "just test"),
    (
        "justfile @test",
        {"justfile": "[private]\n@test:\n\ttrue\n"},
        "just",
        "justfile",
        "just test",
    ),
    (
        "justfile defaults and variadic",
        {"justfile": 'test name="a:b" flag=(x + "y") *rest:\n\ttrue\n'},
        "just",
        "justfile",
        "just test",
    ),
    (
        "justfile alias",
        {"justfile": "alias test := t\nt:\n\ttrue\n"},
        "just",
        "justfile",
        "just test",
    ),
    ("justfile test needs an argument", {"justfile": "test name:\n\ttrue\n"}, None, None, None),
    ("justfile test needs +rest", {"justfile": "test +rest:\n\ttrue\n"}, None, None, None),
    ("justfile variable test", {"justfile": "test := 'x'\n"}, None, None, None),
    ("justfile indented test", {"justfile": "  test:\n\ttrue\n"}, None, None, None),
    ("justfile tests recipe", {"justfile": "tests:\n\ttrue\n"}, None, None, None),
    (
        "two justfiles: just refuses",
        {"justfile": "test:\n\ttrue\n", ".justfile": "test:\n\ttrue\n"},
        None,
        None,
        None,
    ),
]


@pytest.mark.parametrize(
    ("files", "runner", "manifest", "command"),
    [pytest.param(f, r, m, c, id=name) for name, f, r, m, c in CASES],
)
def test_toolchain_rules(
    tmp_path: Path,
    files: dict[str, str | bytes],
    runner: str | None,
    manifest: str | None,
    command: str | None,
) -> None:
    names = {name.lower() for name in files}
    if len(names) < len(files):
        for name in files:
            (tmp_path / name).write_text("")
        if len(os.listdir(tmp_path)) < len(files):
            pytest.skip("case-insensitive file system")
    plan = make_plan(str(write(tmp_path, files)))
    check_invariants(plan)
    assert (plan.runner, plan.manifest, plan.command) == (runner, manifest, command)
    if runner is not None:
        assert plan.source == "detected"
        data = (tmp_path / str(manifest)).read_bytes()
        assert plan.manifest_sha256 == "sha256:" + hashlib.sha256(data).hexdigest()
        assert plan.steps == (command,)
        assert plan.snapshot is None


@pytest.mark.parametrize(
    ("files", "runner", "fragment"),
    [
        ({}, "go", "no go.mod"),
        ({}, "deno", "no deno.json or deno.jsonc"),
        ({"deno.json": '{"tasks": '}, "deno", "deno.json is not valid JSON at line 1"),
        ({"deno.jsonc": '/* a\n b */ {"a" 1}\n'}, "deno", "deno.jsonc is not valid JSON at line 2"),
        ({"deno.json": "[1]"}, "deno", "deno.json is not a JSON object"),
        ({}, "mix", "no mix.exs"),
        ({}, "rake", "no Rakefile (rakefile, Rakefile, rakefile.rb, Rakefile.rb)"),
        (
            {"Rakefile": "RSpec::Core::RakeTask.new\ntask :tests\n"},
            "rake",
            "Rakefile defines no top-level task test (it has spec, tests:",
        ),
        ({"Rakefile": "namespace :a do\n task :test\nend\n"}, "rake", "no top-level task test"),
        ({"build.zig": 'b.step("run", "x"); b.step("unit", "y");'}, "zig", 'it has "run", "unit"'),
        ({}, "zig", "no build.zig"),
        ({"justfile": "test name +more:\n"}, "just", "recipe test needs `name` and `+more`"),
        ({"justfile": "x:\n"}, "just", "justfile has no recipe test that runs without arguments"),
        ({"justfile": "", "Justfile": ""}, "just", "just refuses to choose between them"),
    ],
)
def test_near_misses_say_why(
    tmp_path: Path, files: dict[str, str | bytes], runner: str, fragment: str
) -> None:
    plan = make_plan(str(write(tmp_path, files)))
    if runner == "just" and len(os.listdir(tmp_path)) < len(files):
        pytest.skip("case-insensitive file system")
    assert not rule(plan, runner).matched
    assert fragment in rule(plan, runner).why, rule(plan, runner).why


def test_a_makefile_test_target_wins_over_go_mod(tmp_path: Path) -> None:
    """Rule 5 before rule 6: a Go project with a Makefile `test` target runs `make test`."""
    write(tmp_path, {"Makefile": MAKE_TEST, "go.mod": "module x\n"})
    plan = make_plan(str(tmp_path))
    check_invariants(plan)
    assert plan.runner == "make"
    assert "go also matches here; the first in the detector's order (make)" in plan.reason
    assert "(not used: make comes first)" in rule(plan, "go").why
    (tmp_path / "Makefile").write_text("all:\n\ttrue\n")
    assert make_plan(str(tmp_path)).runner == "go"


def test_the_order_after_the_seed(tmp_path: Path) -> None:
    manifests: dict[str, str | bytes] = {
        "Makefile": MAKE_TEST,
        "go.mod": "module x\n",
        "deno.json": "{}",
        "mix.exs": MIX_EXS,
        "Rakefile": "task :test\n",
        "build.zig": ZIG_BUILD,
        "justfile": "test:\n\ttrue\n",
    }
    write(tmp_path, manifests)
    seen = []
    for name in manifests:
        plan = make_plan(str(tmp_path))
        check_invariants(plan)
        seen.append(plan.runner)
        (tmp_path / name).unlink()
    assert seen == ["make", "go", "deno", "mix", "rake", "zig", "just"]
    assert make_plan(str(tmp_path)).command is None


def fake_bundle(bin_dir: Path) -> None:
    bundle = bin_dir / "bundle"
    bundle.write_text("#!/bin/sh\nexit 0\n")
    bundle.chmod(0o755)


def test_bundle_exec_with_gemfile_lock_and_bundle_on_path(tmp_path: Path, empty_path: Path) -> None:
    fake_bundle(empty_path)
    write(tmp_path, {"Rakefile": "task :test\n", "Gemfile.lock": "GEM\n"})
    plan = make_plan(str(tmp_path))
    assert plan.command == "bundle exec rake test"
    assert "Gemfile.lock is beside it and bundle is on PATH" in plan.reason
    assert plan.manifest == "Rakefile"


def test_no_bundle_exec_without_bundle(tmp_path: Path) -> None:
    write(tmp_path, {"Rakefile": "task :test\n", "Gemfile.lock": "GEM\n"})
    plan = make_plan(str(tmp_path))
    assert plan.command == "rake test"
    assert "Gemfile.lock is beside it but bundle is not on PATH" in plan.reason


def test_no_bundle_exec_without_gemfile_lock(tmp_path: Path, empty_path: Path) -> None:
    fake_bundle(empty_path)
    write(tmp_path, {"Rakefile": "task :test\n", "Gemfile": "source 'x'\n"})
    assert make_plan(str(tmp_path)).command == "rake test"


@pytest.mark.parametrize(
    ("name", "content", "runner", "words"),
    [
        ("go.mod", b"#" * (1024 * 1024 + 1), "go", "go.mod cannot be read: larger than"),
        ("mix.exs", b"#" * (1024 * 1024 + 1), "mix", "mix.exs cannot be read: larger than"),
        ("deno.json", b'{"tasks": {"test": "\xff"}}', "deno", "deno.json is not UTF-8"),
        ("deno.json", b"[" * 100_000, "deno", "deno.json is not valid JSON"),
        ("Rakefile", b"task :test\n\xff", "rake", "Rakefile is not UTF-8"),
        ("build.zig", b'b.step("test", "\xfe");', "zig", "build.zig is not UTF-8"),
        ("justfile", b"test:\n\t\xff\n", "just", "justfile is not UTF-8"),
    ],
)
def test_bad_manifest_does_not_match_and_detection_goes_on(
    tmp_path: Path, name: str, content: bytes, runner: str, words: str
) -> None:
    # The last rule's manifest beside the bad one: detection goes on to it.
    write(tmp_path, {name: content})
    if runner != "just":
        write(tmp_path, {"justfile": "test:\n\ttrue\n"})
    plan = make_plan(str(tmp_path))
    check_invariants(plan)
    assert not rule(plan, runner).matched
    assert words in rule(plan, runner).why
    assert plan.runner == (None if runner == "just" else "just")


@pytest.mark.parametrize(
    ("name", "runner"),
    [
        ("go.mod", "go"),
        ("deno.json", "deno"),
        ("mix.exs", "mix"),
        ("Rakefile", "rake"),
        ("build.zig", "zig"),
        ("justfile", "just"),
    ],
)
def test_directory_named_like_a_manifest(tmp_path: Path, name: str, runner: str) -> None:
    (tmp_path / name).mkdir()
    plan = make_plan(str(tmp_path))
    assert plan.command is None
    assert f"{name} cannot be read: is a directory" in rule(plan, runner).why


def test_every_manifest_is_a_plan_input(tmp_path: Path) -> None:
    """plan_signature stats PLAN_INPUTS: a manifest missing there would keep a stale plan."""
    for _, _files, runner, manifest, _ in CASES:
        if runner is not None:
            assert manifest in PLAN_INPUTS, manifest
    assert "Gemfile.lock" in PLAN_INPUTS


def test_planning_looks_only_at_the_declared_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, empty_path: Path
) -> None:
    import lsp_verify.planning.plan as plan_module

    fake_bundle(empty_path)
    for _, manifests, _, _, _ in CASES:
        if ("justfile" in manifests and ".justfile" in manifests) or "rakefile" in manifests:
            continue  # just refuses two justfiles; rake reads rakefile only
        write(tmp_path, manifests)
    (tmp_path / "Gemfile.lock").write_text("")
    (tmp_path / "Rakefile").write_text("task :test\n")
    touched = record_joins(monkeypatch, tmp_path, plan_module)
    plan_module.make_plan(str(tmp_path))
    assert {"go.mod", "build.zig", "justfile", "Gemfile.lock"} <= touched
    assert touched <= set(PLAN_INPUTS), touched - set(PLAN_INPUTS)
