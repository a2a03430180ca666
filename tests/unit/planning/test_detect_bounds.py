"""The detector on hostile manifests near the 1 MiB read limit: each plan costs a bounded
time and gives a reason (SPEC section 7); and a bug of ours in reading a manifest is said to
be ours, not the file's."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest

from lsp_verify.planning import detect
from lsp_verify.planning.plan import make_plan
from tests.support.cost import cpu_clock

MIB = 1024 * 1024


def fill(line: str, size: int = MIB - 4096) -> str:
    return (line * (size // len(line) + 1))[:size]


def distinct(line: str, size: int = MIB - 4096) -> str:
    """Lines from a template with a counter: no key, table or section twice."""
    lines: list[str] = []
    length = 0
    while length < size - 64:
        lines.append(line.format(len(lines)))
        length += len(lines[-1])
    return "".join(lines)


def nested(opening: str, closing: str, size: int = MIB - 4096) -> str:
    half = size // (len(opening) + len(closing))
    return opening * half + closing * half


# (file, content): each near 1 MiB, each made to be expensive in its own way.
HOSTILE = [
    ("pyproject.toml", distinct("k{} = 1\n")),  # many keys: tomllib, pure Python, 0.3 s
    ("pyproject.toml", distinct("[t{}]\n")),  # many tables: about a second
    ("pyproject.toml", "a = " + nested("[", "]") + "\n"),  # deep nesting
    ("pyproject.toml", "a = " + nested("{b=", "}") + "\n"),
    ("pyproject.toml", "a" + fill(".a", 40_000) + " = 1\n"),  # a dotted key: quadratic
    ("pyproject.toml", "[" + fill("a.", 40_000) + "a]\n"),
    ("pyproject.toml", 'a = "' + fill("x") + '"\n'),  # one long string
    ("Cargo.toml", fill("[[bin]]\n")),
    ("Cargo.toml", "[package]\n" + distinct("k{} = 1\n")),
    ("tox.toml", distinct("k{} = [1, 2, 3]\n")),
    ("package.json", nested("[", "]")),
    ("package.json", nested('{"a":', "}")),
    ("package.json", json.dumps({"scripts": {f"test{i}": "x" for i in range(40_000)}})),
    ("package.json", '{"scripts": {"test": "' + fill("x") + '"}}'),
    ("Makefile", fill("a:\n")),  # short rules: 0.75 s line by line
    ("Makefile", fill("test1: x\n")),
    ("Makefile", fill("x = test\n")),
    ("Makefile", fill("define a\n")),
    ("Makefile", fill("a \\\n")),
    ("GNUmakefile", "test:" + " " * (MIB - 8192) + "=\n"),
    ("makefile", fill("\\#test")),
    ("setup.cfg", "[x]\n" + fill("bad line\n")),
    ("setup.cfg", "[x]\na" + " " * (MIB - 8192) + "b\n"),  # configparser backtracks
    ("tox.ini", distinct("[s{}]\n")),
    ("pytest.ini", "[pytest]\n" + distinct("k{} = v\n")),
    ("setup.cfg", "[x]\n" + distinct("k{} = v\n", 400_000)),
    ("Rakefile", fill("task :a\n")),
    ("Rakefile", "task" + " " * (MIB - 8192) + "x\n"),
    ("Rakefile", fill("namespace :a do\n")),
    ("Rakefile", "namespace :a do\n" + fill(" end\n")),
    ("Rakefile", fill("  namespace :a do\n end\n")),
    ("Rakefile", fill("=begin\n")),
    ("justfile", fill("test a b c d e f g h:\n")),
    ("justfile", "test x=" + "(" * (MIB - 8192) + "\n"),
    ("justfile", fill("test x=(\n")),
    (".justfile", fill("alias test\n")),
    ("build.zig", fill('b.step("x", "y");\n')),
    ("build.zig", fill('// b.step("test", "x");\n')),
    ("deno.json", fill("/*")),
    ("deno.json", fill('"a')),
    ("deno.json", "[" + fill("1,  ") + "]"),
    ("deno.jsonc", "{" + distinct('"k{}": 1, // c\n') + "}"),
    ("deno.json", nested("[", "]")),
    ("deno.jsonc", "{" + distinct('"k{}": 1, // c\n', 250_000) + '"z": 0}'),  # just readable
]


@pytest.mark.parametrize(("name", "content"), HOSTILE, ids=[f"{n}-{c[:10]!r}" for n, c in HOSTILE])
def test_a_hostile_manifest_costs_a_bounded_plan(tmp_path: Path, name: str, content: str) -> None:
    (tmp_path / name).write_text(content)
    start = cpu_clock()
    plan = make_plan(str(tmp_path))
    spent = time.process_time() - start
    assert spent < 0.2, f"{spent:.2f} s of CPU"
    assert any(name in rule.why for rule in plan.rules)
    assert all(len(rule.why) < 2000 for rule in plan.rules)


def test_many_test_scripts_are_named_a_few(tmp_path: Path) -> None:
    scripts = {f"test{i}": "x" for i in range(40_000)}
    (tmp_path / "package.json").write_text(json.dumps({"scripts": scripts}))
    why = next(r.why for r in make_plan(str(tmp_path)).rules if r.runner == "npm")
    assert why == (
        "package.json has no scripts.test (test0, test1, test10, test100, test1000 and "
        "39995 more alone does not count)"
    )


def test_a_bug_of_ours_is_not_the_users_bad_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """It was reported as "pytest.ini is not valid INI: ..."."""

    def broken(text: str) -> object:
        raise KeyError("a bug")

    monkeypatch.setattr(detect, "_ini_sections", broken)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    with caplog.at_level(logging.ERROR, logger="lsp_verify"):
        first = make_plan(str(tmp_path))
        make_plan(str(tmp_path))
    why = next(r.why for r in first.rules if r.runner == "pytest")
    assert "pytest.ini could not be read: an internal error of lsp-verify (KeyError)" in why
    assert "not valid" not in why
    logged = [r for r in caplog.records if "a bug in lsp-verify" in r.getMessage()]
    assert len(logged) == 1  # once, however often the folder is planned
    assert logged[0].exc_info is not None and logged[0].exc_info[0] is KeyError


def test_what_a_parser_says_of_a_bad_file_stays_the_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refusing(text: str) -> object:
        raise ValueError("no good")

    monkeypatch.setattr(detect, "parse_toml", refusing)
    (tmp_path / "pyproject.toml").write_text("[tool.pytest]\n")
    why = next(r.why for r in make_plan(str(tmp_path)).rules if r.runner == "pytest")
    assert "pyproject.toml is not valid TOML: no good" in why
