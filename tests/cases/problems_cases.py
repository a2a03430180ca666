"""Cases for the problem matchers: small projects, the command run in each, what it must give.

Shared by tests/unit/problems/test_recorded_outputs.py (feeds the recorded output in
tests/cases/outputs/<family>/<case>.txt), tests/e2e/test_real_tool_output.py (runs the command
for real where the machine has the tool) and tests/tools/record-problem-fixtures.py (records
the fixtures). A command's words may hold {python} (this interpreter), {bin} (the folder of
this interpreter, where ruff and mypy are installed) and {node} (node_modules/.bin of the node
tools folder, $LSP_VERIFY_NODE_TOOLS).

Recorded output is cleaned the way the runner cleans it (ANSI codes removed, carriage-return
progress collapsed) and normalised: the project folder becomes {ROOT}, other machine paths
{PREFIX}, {BASE_PREFIX}, {HOME}, {TARGET}, {NODE_TOOLS}, {NODE_TOOLS_REL}.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from lsp_verify.problems import ProblemCollector
from lsp_verify.problems.base import Problem

FIXTURES = Path(__file__).parent / "outputs"

# ---------------------------------------------------------------------------------------------
# Projects

PY_CALC = """\
def helper(x):
    return inner(x)


def inner(x):
    if x > 1:
        raise ValueError(f"bad value {x}")
    return x
"""

PY_TESTS = """\
import json

import pytest

from pkg.calc import helper


def test_eq():
    a = 1
    assert a == 2


def test_calls_project():
    helper(5)


class TestGroup:
    def test_method(self):
        assert "abc" == "abd", "strings differ"


@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert n < 2


def test_ok():
    assert True


def _check(v):
    assert v == [1, 2, 3]


def test_nested_helper():
    _check([1, 2])


def test_stdlib():
    json.loads("{bad")
"""

PY_PROJECT = {
    "pyproject.toml": "[tool.pytest.ini_options]\n",
    "pkg/__init__.py": "",
    "pkg/calc.py": PY_CALC,
    "tests/test_a.py": PY_TESTS,
}

PY_COLLECT = {
    "pyproject.toml": "[tool.pytest.ini_options]\n",
    "pkg/__init__.py": "",
    "pkg/broken.py": "import nonexistent_module_xyz\n",
    "tests/test_imp.py": "from pkg import broken\n\n\ndef test_x():\n    assert broken\n",
    "tests/test_syn.py": "def test_y():\n    x = (1,\n    assert x\n",
}

PY_FIXTURES = {
    "pyproject.toml": "[tool.pytest.ini_options]\n",
    "tests/conftest.py": (
        "import pytest\n\n\n@pytest.fixture\ndef conf_broken():\n"
        '    raise OSError("conftest fixture broke")\n'
    ),
    "tests/test_fix.py": """\
import pytest


@pytest.fixture
def bad():
    raise RuntimeError("fixture broke")


def test_uses(bad):
    pass


def test_missing(nofixture):
    pass


def test_conf(conf_broken):
    pass
""",
}

PY_CONFTEST = {
    "pyproject.toml": "[tool.pytest.ini_options]\n",
    "tests/conftest.py": "import nope_not_here\n",
    "tests/test_a.py": "def test_a():\n    pass\n",
}

PY_SCRIPT = {
    "app/__init__.py": "",
    "app/core.py": """\
import json


def load(text):
    return json.loads(text)


def lookup(d, key):
    try:
        return d[key]
    except KeyError as exc:
        raise LookupError(f"no {key}") from exc
""",
    "main.py": """\
import sys

from app.core import load, lookup


def run(mode):
    if mode == "json":
        return load("{bad json")
    return lookup({}, "x")


if __name__ == "__main__":
    run(sys.argv[1])
""",
    "bad.py": "def f(:\n    pass\n",
    "warn.py": 'import warnings\n\nwarnings.warn("old api", DeprecationWarning)\n',
}

C_PROJECT = {
    "src/util.h": "int twice(int x);\nint twice(long x);\n",
    "src/main.c": """\
#include <stdio.h>
#include "util.h"

int main(void) {
    int unused = 3;
    printf("%d\\n", missing);
    return 0;
}
""",
}

LINT_PROJECT = {
    "pkg/__init__.py": "",
    "pkg/a.py": """\
import os


def f(x: int) -> str:
    return x


def g() -> None:
    y: int = "text"
    reveal_type(y)
    f("no")
""",
}

RUST_TEST = {
    "Cargo.toml": (
        '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
    ),
    "src/lib.rs": """\
pub fn add(a: i32, b: i32) -> i32 {
    let unused = 1;
    a + b
}

pub fn check(v: i32) -> i32 {
    if v > 10 {
        panic!("value too large: {}", v);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(1, 2), 4);
    }

    #[test]
    fn checks() {
        check(11);
    }

    #[test]
    fn passes() {
        assert!(add(1, 1) == 2, "math works");
    }
}
""",
}

RUST_COMPILE = {
    "Cargo.toml": RUST_TEST["Cargo.toml"],
    "src/lib.rs": """\
pub fn add(a: i32, b: i32) -> i32 {
    let s: i32 = "text";
    a + b + s
}

pub fn call() -> i32 {
    add(1)
}
""",
}

TS_PROJECT = {
    "tsconfig.json": (
        '{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2020", '
        '"module": "esnext", "moduleResolution": "bundler", "types": []}, '
        '"include": ["src/bad.ts", "src/(group)/page.ts"]}\n'
    ),
    "src/bad.ts": """\
export const n: number = "text";

export function f(x: string): number {
  return x.lenght;
}

// @ts-expect-error unused directive on purpose
export const ok = 1;

interface Point {
  x: number;
  y: { z: number };
}
export const p: Point = { x: 1, y: { z: "deep" } };

const source = { a: { b: "x" } };
export const q: { a: { b: number } } = source;
""",
    "src/(group)/page.ts": "export const page: string = 42;\n",
}

VITEST_PROJECT = {
    "package.json": '{"name": "vt", "private": true, "type": "module"}\n',
    "src/sum.ts": """\
export function sum(a: number, b: number): number {
  return a + b;
}

export function boom(): never {
  throw new Error("boom from project code");
}
""",
    "src/sum.test.ts": """\
import { describe, expect, it } from "vitest";
import { boom, sum } from "./sum";

describe("sum", () => {
  it("adds", () => {
    expect(sum(1, 2)).toBe(4);
  });

  it("objects", () => {
    expect({ a: 1, b: [1, 2] }).toEqual({ a: 1, b: [1, 3] });
  });

  it("passes", () => {
    expect(sum(1, 1)).toBe(2);
  });
});

it("throws in project code", () => {
  boom();
});
""",
    "src/broken.test.ts": """\
import { nothere } from "./nothere";
import { it } from "vitest";

it("never", () => {
  nothere();
});
""",
}

JEST_PROJECT = {
    "package.json": '{"name": "jt", "private": true}\n',
    "src/sum.js": """\
function sum(a, b) {
  return a + b;
}

function boom() {
  throw new Error("boom from project code");
}

module.exports = { sum, boom };
""",
    "src/sum.test.js": """\
const { sum, boom } = require("./sum");

describe("sum", () => {
  test("adds", () => {
    expect(sum(1, 2)).toBe(4);
  });

  test("objects", () => {
    expect({ a: 1, b: [1, 2] }).toEqual({ a: 1, b: [1, 3] });
  });

  test("passes", () => {
    expect(sum(1, 1)).toBe(2);
  });
});

test("throws in project code", () => {
  boom();
});
""",
    "src/broken.test.js": 'const x = require("./nothere");\n\ntest("never", () => {\n  x();\n});\n',
}

ESLINT_PROJECT = {
    "src/lint.js": "const unused = 1;\nvar x = 2\nconsole.log(x);\n",
    "src/parse.js": "function broken( {\n",
}

MIXED_PROJECT = {**PY_PROJECT, "pkg/lintme.py": "import os\n"}

PROJECTS: dict[str, dict[str, str]] = {
    "py": PY_PROJECT,
    "py-collect": PY_COLLECT,
    "py-fixtures": PY_FIXTURES,
    "py-conftest": PY_CONFTEST,
    "py-script": PY_SCRIPT,
    "c": C_PROJECT,
    "lint": LINT_PROJECT,
    "rust-test": RUST_TEST,
    "rust-compile": RUST_COMPILE,
    "ts": TS_PROJECT,
    "vitest": VITEST_PROJECT,
    "jest": JEST_PROJECT,
    "eslint": ESLINT_PROJECT,
    "mixed": MIXED_PROJECT,
}

# ---------------------------------------------------------------------------------------------
# Cases


@dataclass(frozen=True)
class Expect:
    """One expected problem. `message` is a substring of the problem's message."""

    file: str
    line: int
    column: int
    message: str
    code: str | None
    severity: str = "error"
    related: tuple[tuple[str, int], ...] = ()
    end: tuple[int, int] | None = None


@dataclass(frozen=True)
class Case:
    family: str
    name: str
    project: str
    command: str  # run with `sh -c`, like the runner does, in the project folder
    tool: str  # what must be installed to run it for real: python, gcc, cargo, node:<bin>
    expected: tuple[Expect, ...]
    env: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.family}/{self.name}"


PYTEST = "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {python} -m pytest -p no:cacheprovider"
T = "tests/test_a.py"


def _py_failures(line_mode: bool = False) -> tuple[Expect, ...]:
    """What every traceback style gives for the py project. --tb=line prints only the crash
    location: no call line for related information (the test's def line instead), and a
    crash outside the folder falls back to the test's def line."""
    return (
        Expect(T, 10, 1, f"{T}::test_eq: assert 1 == 2", f"{T}::test_eq"),
        # The failing test is the diagnostic; the line in calc.py that raised is related.
        Expect(
            T,
            13 if line_mode else 14,
            1,
            f"{T}::test_calls_project: ValueError: bad value 5",
            f"{T}::test_calls_project",
            related=(("pkg/calc.py", 7),),
        ),
        Expect(
            T,
            19,
            1,
            f"{T}::TestGroup::test_method: AssertionError: strings differ",
            f"{T}::TestGroup::test_method",
        ),
        Expect(T, 24, 1, f"{T}::test_param[2]: assert 2 < 2", f"{T}::test_param[2]"),
        Expect(
            T,
            32 if line_mode else 36,
            1,
            f"{T}::test_nested_helper: assert [1, 2] == [1, 2, 3]",
            f"{T}::test_nested_helper",
            related=() if line_mode else ((T, 32),),
        ),
        Expect(
            T,
            39 if line_mode else 40,
            1,
            f"{T}::test_stdlib: json.decoder.JSONDecodeError: Expecting",
            f"{T}::test_stdlib",
        ),
    )


def _py_summary_only() -> tuple[Expect, ...]:
    """--tb=no: only the short summary names the failures; they land on the def lines."""
    return (
        Expect(T, 8, 1, f"{T}::test_eq: assert 1 == 2", f"{T}::test_eq"),
        Expect(T, 13, 1, f"{T}::test_calls_project: ValueError", f"{T}::test_calls_project"),
        Expect(T, 18, 1, f"{T}::TestGroup::test_method: Assert", f"{T}::TestGroup::test_method"),
        Expect(T, 23, 1, f"{T}::test_param[2]: assert 2 < 2", f"{T}::test_param[2]"),
        Expect(T, 35, 1, f"{T}::test_nested_helper: assert", f"{T}::test_nested_helper"),
        Expect(T, 39, 1, f"{T}::test_stdlib: json.decoder.JSONDecodeError", f"{T}::test_stdlib"),
    )


IMP = "tests/test_imp.py"
SYN = "tests/test_syn.py"
FIX = "tests/test_fix.py"
COLLECT = (
    Expect(
        IMP,
        1,
        1,
        f"{IMP}: ModuleNotFoundError: No module named 'nonexistent_module_xyz'",
        IMP,
        related=(("pkg/broken.py", 1),),
    ),
    Expect(SYN, 2, 1, f"{SYN}: SyntaxError: '(' was never closed", SYN),
)


def _setup_errors(line_mode: bool = False) -> tuple[Expect, ...]:
    return (
        Expect(
            FIX,
            9,
            1,
            f"{FIX}::test_uses: RuntimeError: fixture broke",
            f"{FIX}::test_uses",
            related=() if line_mode else ((FIX, 6),),
        ),
        Expect(
            FIX,
            13,
            1,
            f"{FIX}::test_missing: fixture 'nofixture' not found",
            f"{FIX}::test_missing",
        ),
        Expect(
            FIX,
            17,
            1,
            f"{FIX}::test_conf: OSError: conftest fixture broke",
            f"{FIX}::test_conf",
            related=() if line_mode else (("tests/conftest.py", 6),),
        ),
    )


SCRIPTS = (
    Expect(
        "app/core.py",
        5,
        1,
        "json.decoder.JSONDecodeError: Expecting property name",
        "json.decoder.JSONDecodeError",
    ),
    # Chained: only the exception that escaped, not its KeyError cause at line 10.
    Expect("app/core.py", 12, 1, "LookupError: no x", "LookupError"),
    Expect("bad.py", 1, 1, "SyntaxError: invalid syntax", "SyntaxError"),
    Expect("warn.py", 3, 1, "DeprecationWarning: old api", "DeprecationWarning", "warning"),
)

GCC = (
    Expect("src/util.h", 2, 5, "conflicting types for 'twice'", None),
    Expect("src/util.h", 1, 5, "previous declaration of 'twice'", None, "information"),
    Expect("src/main.c", 6, 20, "'missing' undeclared", None),
    Expect("src/main.c", 6, 20, "each undeclared identifier", None, "information"),
    Expect("src/main.c", 5, 9, "unused variable 'unused'", "-Wunused-variable", "warning"),
)

A = "pkg/a.py"
MYPY = (
    Expect(A, 5, 1, "Incompatible return value type", "return-value"),
    Expect(A, 9, 1, "Incompatible types in assignment", "assignment"),
    Expect(A, 10, 1, 'Revealed type is "int"', None, "information"),
    Expect(A, 11, 1, 'Argument 1 to "f" has incompatible type', "arg-type"),
)
MYPY_COLUMNS = (
    Expect(A, 5, 12, "Incompatible return value type", "return-value", end=(5, 13)),
    Expect(A, 9, 14, "Incompatible types in assignment", "assignment", end=(9, 20)),
    Expect(A, 10, 17, 'Revealed type is "int"', None, "information", end=(10, 18)),
    Expect(A, 11, 7, 'Argument 1 to "f" has incompatible type', "arg-type", end=(11, 11)),
)
RUFF = (
    Expect(A, 1, 8, "`os` imported but unused", "F401"),
    Expect(A, 10, 5, "Undefined name `reveal_type`", "F821"),
)
ESLINT = (
    Expect("src/lint.js", 1, 7, "'unused' is assigned a value", "no-unused-vars"),
    Expect("src/lint.js", 2, 1, "Unexpected var", "no-var", "warning"),
    Expect("src/parse.js", 2, 1, "Parsing error: Unexpected token", None),
)

LIB = "src/lib.rs"
RUST_COMPILE_ERRORS = (
    Expect(LIB, 2, 18, "mismatched types\nexpected `i32`, found `&str`", "E0308"),
    Expect(LIB, 7, 5, "this function takes 2 arguments", "E0061", related=((LIB, 1),)),
)


def _rust_panics(backtrace: bool) -> tuple[Expect, ...]:
    return (
        Expect(LIB, 2, 9, "unused variable: `unused`", "unused_variables", "warning"),
        Expect(
            LIB,
            19,
            9,
            "tests::adds: assertion `left == right` failed\n  left: 3\n right: 4",
            "tests::adds",
        ),
        # With a backtrace the test's own frame (the call of check) is known: the failing
        # test is the diagnostic, the panic in check is related.
        Expect(
            LIB,
            24 if backtrace else 8,
            9,
            "tests::checks: value too large: 11",
            "tests::checks",
            related=((LIB, 8),) if backtrace else (),
        ),
    )


TSC = (
    Expect("src/(group)/page.ts", 1, 14, "Type 'number' is not assignable", "TS2322"),
    Expect("src/bad.ts", 1, 14, "Type 'string' is not assignable to type 'number'.", "TS2322"),
    Expect("src/bad.ts", 4, 12, "Property 'lenght' does not exist", "TS2551"),
    Expect("src/bad.ts", 7, 1, "Unused '@ts-expect-error' directive.", "TS2578"),
    Expect("src/bad.ts", 14, 38, "Type 'string' is not assignable", "TS2322"),
)
TSC_CHAIN = Expect(
    "src/bad.ts",
    17,
    14,
    "is not assignable to type '{ a: { b: number; }; }'.\n"
    "The types of 'a.b' are incompatible between these types.\n"
    "Type 'string' is not assignable to type 'number'.",
    "TS2322",
)

VITEST = (
    Expect(
        "src/broken.test.ts",
        1,
        1,
        "src/broken.test.ts: Error: Cannot find module './nothere'",
        "src/broken.test.ts",
    ),
    Expect(
        "src/sum.test.ts",
        6,
        23,
        "sum > adds: AssertionError: expected 3 to be 4 // Object.is equality\n"
        "- Expected\n+ Received\n- 4\n+ 3",
        "sum > adds",
    ),
    Expect("src/sum.test.ts", 10, 33, "sum > objects: AssertionError: expected {", "sum > objects"),
    Expect(
        "src/sum.test.ts",
        19,
        3,
        "throws in project code: Error: boom from project code",
        "throws in project code",
        related=(("src/sum.ts", 6),),
    ),
)
JEST = (
    Expect(
        "src/sum.test.js",
        5,
        23,
        "sum \u203a adds: expect(received).toBe(expected) // Object.is equality\n"
        "Expected: 4\nReceived: 3",
        "sum \u203a adds",
    ),
    Expect(
        "src/sum.test.js",
        9,
        33,
        "sum \u203a objects: expect(received).toEqual(expected) // deep equality\n"
        "- Expected  - 1\n+ Received  + 1",
        "sum \u203a objects",
    ),
    Expect(
        "src/sum.test.js",
        18,
        3,
        "throws in project code: boom from project code",
        "throws in project code",
        related=(("src/sum.js", 6),),
    ),
    Expect(
        "src/broken.test.js",
        1,
        31,
        "src/broken.test.js: Test suite failed to run: Cannot find module './nothere'",
        "src/broken.test.js",
    ),
)


CASES: tuple[Case, ...] = (
    Case("pytest", "default", "py", PYTEST, "python", _py_failures()),
    Case("pytest", "q_short", "py", PYTEST + " -q --tb=short", "python", _py_failures()),
    Case("pytest", "long", "py", PYTEST + " --tb=long", "python", _py_failures()),
    Case("pytest", "q_line", "py", PYTEST + " -q --tb=line", "python", _py_failures(True)),
    Case("pytest", "native", "py", PYTEST + " --tb=native", "python", _py_failures()),
    Case("pytest", "q_no_tb", "py", PYTEST + " -q --tb=no", "python", _py_summary_only()),
    Case("pytest", "x_q", "py", PYTEST + " -x -q", "python", _py_failures()[:1]),
    # With $CI set pytest does not cut summary messages: they run over several lines.
    Case(
        "pytest",
        "q_line_ci",
        "py",
        PYTEST + " -q --tb=line",
        "python",
        _py_failures(True),
        env={"CI": "1"},
    ),
    Case("pytest", "collect", "py-collect", PYTEST, "python", COLLECT),
    Case("pytest", "collect_q_line", "py-collect", PYTEST + " -q --tb=line", "python", COLLECT),
    Case("pytest", "setup_errors", "py-fixtures", PYTEST, "python", _setup_errors()),
    Case(
        "pytest",
        "setup_errors_q_line",
        "py-fixtures",
        PYTEST + " -q --tb=line",
        "python",
        _setup_errors(True),
    ),
    Case(
        "pytest",
        "setup_errors_native",
        "py-fixtures",
        PYTEST + " --tb=native",
        "python",
        _setup_errors(),
    ),
    Case(
        "pytest",
        "conftest_error",
        "py-conftest",
        PYTEST + " -q",
        "python",
        (
            Expect(
                "tests/conftest.py",
                1,
                1,
                "tests/conftest.py: ModuleNotFoundError: No module named 'nope_not_here'",
                "tests/conftest.py",
            ),
        ),
    ),
    Case(
        "pytraceback",
        "scripts",
        "py-script",
        "{python} main.py json; {python} main.py key; {python} bad.py; {python} -W always warn.py",
        "python",
        SCRIPTS,
    ),
    Case("gcc", "gcc", "c", "gcc -Wall -fsyntax-only src/main.c", "gcc", GCC),
    Case(
        "gcc",
        "mypy",
        "lint",
        "{bin}/mypy --no-incremental --cache-dir=/dev/null pkg",
        "bin:mypy",
        MYPY,
    ),
    Case(
        "gcc",
        "mypy_columns",
        "lint",
        "{bin}/mypy --no-incremental --cache-dir=/dev/null --show-column-numbers"
        " --show-error-end --show-error-context pkg",
        "bin:mypy",
        MYPY_COLUMNS,
    ),
    Case(
        "gcc",
        "ruff_concise",
        "lint",
        "{bin}/ruff check --no-cache --output-format concise pkg",
        "bin:ruff",
        RUFF,
    ),
    Case(
        "gcc",
        "eslint_unix",
        "eslint",
        "{node}/eslint --no-eslintrc --env node --parser-options ecmaVersion:2022"
        ' --rule \'{"no-unused-vars": "error", "no-var": "warn"}\' --format unix src',
        "node:eslint",
        ESLINT,
    ),
    Case("rust", "ruff_full", "lint", "{bin}/ruff check --no-cache pkg", "bin:ruff", RUFF),
    Case(
        "rust",
        "compile_error",
        "rust-compile",
        "cargo test --offline",
        "cargo",
        RUST_COMPILE_ERRORS,
    ),
    Case(
        "rust",
        "test_panics",
        "rust-test",
        "cargo test --offline",
        "cargo",
        _rust_panics(False),
        env={"RUST_BACKTRACE": "0"},
    ),
    Case(
        "rust",
        "test_panics_backtrace",
        "rust-test",
        "cargo test --offline",
        "cargo",
        _rust_panics(True),
        env={"RUST_BACKTRACE": "1"},
    ),
    Case("tsc", "plain", "ts", "{node}/tsc -p .", "node:tsc", (*TSC, TSC_CHAIN)),
    Case("tsc", "pretty", "ts", "{node}/tsc -p . --pretty", "node:tsc", (*TSC, TSC_CHAIN)),
    Case("jest", "vitest", "vitest", "{node}/vitest run", "node:vitest", VITEST),
    Case("jest", "jest", "jest", "{node}/jest --ci --no-cache --rootDir .", "node:jest", JEST),
    Case(
        "mixed",
        "ruff_then_pytest",
        "mixed",
        "{bin}/ruff check --no-cache --output-format concise pkg; " + PYTEST + " -q --tb=short",
        "bin:ruff",
        (Expect("pkg/lintme.py", 1, 8, "`os` imported but unused", "F401"), *_py_failures()),
    ),
)


def find_case(case_id: str) -> Case:
    from tests.cases.corpus import all_cases

    for case in all_cases():
        if case.id == case_id:
            return case
    raise KeyError(case_id)


# ---------------------------------------------------------------------------------------------
# Helpers shared by the tests and the recorder

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def clean(text: str) -> list[str]:
    """Lines as the runner hands them to a sink: no ANSI codes, CR progress collapsed."""
    lines = []
    for raw in text.split("\n"):
        line = _ANSI.sub("", raw)
        if "\r" in line:
            parts = [part for part in line.split("\r") if part]
            line = parts[-1] if parts else ""
        lines.append(line)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def write_project(root: Path, name: str) -> None:
    from tests.cases.corpus import all_projects  # the corpus imports this module

    for rel, content in all_projects()[name].items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")


def tool_env(base: Path) -> dict[str, str]:
    """The environment a case runs in: deterministic output, nothing written outside `base`
    (HOME stays: rustup finds its toolchains there, read-only)."""
    env = dict(os.environ)
    for name in ("PYTEST_ADDOPTS", "CI", "RUST_BACKTRACE", "MYPYPATH"):
        env.pop(name, None)
    env.update(
        {
            "LC_ALL": "C",
            "COLUMNS": "80",
            "NO_COLOR": "1",
            "FORCE_COLOR": "0",
            "CARGO_TERM_COLOR": "never",
            "PYTHONDONTWRITEBYTECODE": "1",
            "CARGO_HOME": str(base / "cargo-home"),
            "CARGO_TARGET_DIR": str(base / "target"),
            "TMPDIR": str(base / "tmp"),
            "XDG_CACHE_HOME": str(base / "cache"),
            "XDG_CONFIG_HOME": str(base / "config"),
            "XDG_STATE_HOME": str(base / "state"),
            "npm_config_cache": str(base / "npm-cache"),
        }
    )
    (base / "tmp").mkdir(parents=True, exist_ok=True)
    from tests.support.lang_tools import lang_env  # deno, zig, just: PATH and caches

    return lang_env(env, base)


def run_case(case: Case, base: Path, timeout: float = 300) -> tuple[Path, str]:
    """Runs the case's command as the runner would: `sh -c` in the project folder, its own
    process group (killed whole afterwards, so nothing it started outlives it), output merged."""
    root = base / "project"
    write_project(root, case.project)
    env = tool_env(base)
    env.update(case.env)
    process = subprocess.Popen(
        ["sh", "-c", expand(case.command)],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        if process.poll() is None:
            process.kill()
            process.wait()
    return root, output.decode("utf-8", "replace")


def tool_missing(tool: str) -> str | None:
    """Why the case's tool cannot run here, or None when it can."""
    if tool == "python":
        return None
    if tool.startswith("bin:"):
        name = tool[4:]
        if not (Path(sys.executable).parent / name).exists():
            return f"{name} is not installed beside {sys.executable}"
        return None
    if tool.startswith("node:"):
        name = tool[5:]
        bin_dir = node_bin()
        if bin_dir is None:
            return "LSP_VERIFY_NODE_TOOLS is not set (see tests/tools/install-node-tools.sh)"
        if shutil.which("node") is None:
            return "node is not on PATH"
        if not (bin_dir / name).exists():
            return f"{bin_dir / name} does not exist (install-node-tools.sh installs tsc, vitest)"
        return None
    from tests.support.lang_tools import search_path

    if shutil.which(tool, path=search_path()) is None:
        return f"{tool} is not on PATH"
    if tool == "cargo":
        try:
            probe = subprocess.run(
                ["cargo", "--version"], capture_output=True, timeout=60, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"cargo does not run: {error}"
        if probe.returncode != 0:
            return "cargo has no working toolchain"
    return None


def node_bin() -> Path | None:
    tools = os.environ.get("LSP_VERIFY_NODE_TOOLS")
    if not tools:
        return None
    return Path(tools) / "node_modules" / ".bin"


def expand(command: str) -> str:
    bin_dir = node_bin()
    return (
        command.replace("{python}", sys.executable)
        .replace("{bin}", str(Path(sys.executable).parent))
        .replace("{node}", str(bin_dir) if bin_dir else "/nonexistent")
    )


def mismatches(problems: list[Problem], expected: tuple[Expect, ...]) -> list[str]:
    """Every expected problem found exactly (file, line, column, code, severity, related,
    end, message substring), and nothing else; order is not compared here."""
    left = list(problems)
    errors = []
    for want in expected:
        for problem in left:
            if _matches(problem, want):
                left.remove(problem)
                break
        else:
            errors.append(f"missing: {want}")
    errors += [f"unexpected: {problem}" for problem in left]
    return errors


def _matches(problem: Problem, want: Expect) -> bool:
    related = tuple(sorted((item.path, item.line) for item in problem.related))
    end = (problem.end_line, problem.end_column) if problem.end_line is not None else None
    return (
        (problem.path, problem.line, problem.column) == (want.file, want.line, want.column)
        and problem.code == want.code
        and problem.severity == want.severity
        and want.message in problem.message
        and related == tuple(sorted(want.related))
        and (want.end is None or end == want.end)
    )


def collect(folder: Path, lines: list[str]) -> list[Problem]:
    collector = ProblemCollector(str(folder))
    for line in lines:
        collector.feed(line)
    problems = collector.finish()
    assert collector.errors == 0, "a matcher raised"
    return problems
