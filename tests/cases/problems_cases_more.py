"""Cases for the Python (unittest, doctest, pyright, mypy's notes), Go (go test, go vet),
shellcheck, C assert() and make families: projects, commands, what each must give.

Same shape as tests/cases/problems_cases.py (see its docstring); tests/cases/corpus.py finds this
module by its name, like every tests/cases/problems_cases*.py that has CASES.
"""

from __future__ import annotations

from tests.cases.problems_cases import PY_CALC, PYTEST, Case, Expect

PY_UNITTEST = {
    "pkg/__init__.py": "",
    "pkg/calc.py": PY_CALC,
    "tests/__init__.py": "",
    "tests/test_ut.py": """\
import unittest

from pkg.calc import helper


class TestCalc(unittest.TestCase):
    def test_eq(self):
        self.assertEqual(1, 2)

    def test_calls_project(self):
        helper(5)

    def test_ok(self):
        self.assertTrue(True)

    def test_sub(self):
        for n in (1, 2):
            with self.subTest(n=n):
                self.assertLess(n, 2)
""",
}

PY_DOCTEST = {
    "pkg/__init__.py": "",
    "pkg/temps.py": '''\
def to_kelvin(celsius):
    """Convert.

    >>> to_kelvin(0)
    273.15
    >>> to_kelvin(-300)
    0
    """
    if celsius < -273.15:
        raise ValueError("below absolute zero")
    return celsius + 273.15


def double(x):
    """Twice x.

    >>> double(2)
    5
    """
    return x * 2
''',
}

PY_TYPED = {
    "pkg/__init__.py": "",
    "pkg/typed.py": """\
from typing import List


def total(xs: List[float]) -> float:
    return sum(xs)


def run() -> None:
    ints: List[int] = [1, 2]
    total(ints)
    name: str = 3
    import nope_missing_mod
""",
}

PY_RUFF = {
    "pkg/__init__.py": "",
    "pkg/bad.py": "import os\ndef f(:\n    pass\n",
    "pkg/lint.py": "import sys\n\n\ndef g():\n    unused = 1\n    return undefined_name\n",
}

GO_PROJECT = {
    "go.mod": "module example.com/demo\n\ngo 1.19\n",
    "scale/scale.go": """\
package scale

func Scale(x int) int {
\treturn x * 2
}

func At(xs []int, i int) int {
\treturn xs[i]
}
""",
    "scale/scale_test.go": """\
package scale

import "testing"

func TestScale(t *testing.T) {
\tif got := Scale(2); got != 5 {
\t\tt.Errorf("Scale(2) = %d, want 5", got)
\t}
}

func TestAt(t *testing.T) {
\tif At([]int{1, 2, 3}, 5) != 0 {
\t\tt.Fatal("unreachable")
\t}
}
""",
    "vetme/vet.go": """\
package vetme

import "fmt"

func Show(n int) string {
\treturn fmt.Sprintf("%s items", n)
}
""",
}

SHELL_PROJECT = {
    "scripts/deploy.sh": """\
#!/bin/sh
target=$1
rm -rf $target/build
if [ $target == "prod" ]; then
  echo "deploying"
fi
cd /nonexistent
""",
}

C_MAKE_PROJECT = {
    "tests.c": """\
#include <assert.h>
#include <stdio.h>

static int twice(int x) { return x * 2; }

int main(void) {
    int x = twice(1);
    printf("running tests\\n");
    assert(x == 1);
    return 0;
}
""",
    "Makefile": """\
CFLAGS = -Wall

all: test

test: tests
\t./tests

tests: tests.c
\t$(CC) $(CFLAGS) -o tests tests.c

recursive:
\t$(MAKE) -C sub
""",
    "sub/Makefile": "all:\n\t@echo in sub\n\tfalse\n",
}

PROJECTS: dict[str, dict[str, str]] = {
    "py-unittest": PY_UNITTEST,
    "py-doctest": PY_DOCTEST,
    "py-typed": PY_TYPED,
    "py-ruff": PY_RUFF,
    "go": GO_PROJECT,
    "shell": SHELL_PROJECT,
    "c-make": C_MAKE_PROJECT,
}

UT = "tests/test_ut.py"
UT_ID = "tests.test_ut.TestCalc"
UNITTEST = (
    # The failing test is the diagnostic; the line in calc.py that raised is related.
    Expect(
        UT,
        11,
        1,
        f"{UT_ID}.test_calls_project: ValueError: bad value 5",
        f"{UT_ID}.test_calls_project",
        related=(("pkg/calc.py", 7),),
    ),
    Expect(UT, 8, 1, f"{UT_ID}.test_eq: AssertionError: 1 != 2", f"{UT_ID}.test_eq"),
    Expect(
        UT,
        19,
        1,
        f"{UT_ID}.test_sub (n=2): AssertionError: 2 not less than 2",
        f"{UT_ID}.test_sub (n=2)",
    ),
)

TEMPS = "pkg/temps.py"
DOCTEST = (
    Expect(TEMPS, 17, 1, "temps.double: double(2)\nExpected:\n    5\nGot:\n    4", "temps.double"),
    Expect(
        TEMPS,
        6,
        1,
        "temps.to_kelvin: to_kelvin(-300)\nValueError: below absolute zero",
        "temps.to_kelvin",
        related=((TEMPS, 10),),
    ),
)

DOCTEST_ID = "pkg/temps.py::pkg.temps."
PYTEST_DOCTEST = (
    Expect(
        TEMPS,
        17,
        1,
        f"{DOCTEST_ID}double: double(2)\nExpected:\n    5\nGot:\n    4",
        f"{DOCTEST_ID}double",
    ),
    Expect(
        TEMPS,
        6,
        1,
        f"{DOCTEST_ID}to_kelvin: to_kelvin(-300)\nValueError: below absolute zero",
        f"{DOCTEST_ID}to_kelvin",
        related=((TEMPS, 10),),
    ),
)

TYPED = "pkg/typed.py"
PYRIGHT = (
    Expect(
        TYPED,
        10,
        11,
        'Argument of type "List[int]" cannot be assigned to parameter "xs"',
        "reportArgumentType",
    ),
    Expect(
        TYPED,
        11,
        17,
        'Type "Literal[3]" is not assignable to declared type "str"\n'
        '"Literal[3]" is not assignable to "str"',
        "reportAssignmentType",
    ),
    Expect(
        TYPED, 12, 12, 'Import "nope_missing_mod" could not be resolved', "reportMissingImports"
    ),
)
MYPY_NOTES = (
    Expect(
        TYPED,
        10,
        1,
        'Argument 1 to "total" has incompatible type "list[int]"; expected "list[float]"\n'
        'note: "list" is invariant',
        "arg-type",
    ),
    Expect(TYPED, 11, 1, "Incompatible types in assignment", "assignment"),
    Expect(
        TYPED,
        12,
        1,
        'Cannot find implementation or library stub for module named "nope_missing_mod"\n'
        "note: See https://",
        "import-not-found",
    ),
)

RUFF_SYNTAX = (
    Expect(
        "pkg/bad.py",
        2,
        7,
        "Expected a parameter or the end of the parameter list",
        "invalid-syntax",
    ),
    Expect("pkg/bad.py", 2, 8, "Expected `)`, found newline", "invalid-syntax"),
    Expect("pkg/lint.py", 1, 8, "`sys` imported but unused", "F401"),
    Expect("pkg/lint.py", 5, 5, "Local variable `unused` is assigned to but never used", "F841"),
    Expect("pkg/lint.py", 6, 12, "Undefined name `undefined_name`", "F821"),
)

VET = Expect("vetme/vet.go", 6, 9, "fmt.Sprintf format %s has arg n of wrong type int", None)
GO_TEST = (
    VET,
    # Printed as `scale_test.go:7:`, relative to the package's folder.
    Expect("scale/scale_test.go", 7, 1, "TestScale: Scale(2) = 4, want 5", "TestScale"),
    # A panic: the failing test's frame, the line that panicked related.
    Expect(
        "scale/scale_test.go",
        12,
        1,
        "TestAt: panic: runtime error: index out of range [5] with length 3",
        "TestAt",
        related=(("scale/scale.go", 8),),
    ),
)

DEPLOY = "scripts/deploy.sh"
SHELLCHECK = (
    Expect(DEPLOY, 3, 8, "Double quote to prevent globbing", "SC2086", "information"),
    Expect(DEPLOY, 4, 6, "Double quote to prevent globbing", "SC2086", "information"),
    Expect(DEPLOY, 4, 14, "In POSIX sh, == in place of = is undefined.", "SC3014", "warning"),
    Expect(DEPLOY, 7, 1, "Use 'cd ... || exit'", "SC2164", "warning"),
)

MAKE_ASSERT = (
    Expect("tests.c", 9, 1, "main: Assertion `x == 1' failed.", "main"),
    Expect("Makefile", 6, 1, "make target 'test' failed: Aborted", "make"),
)
MAKE_RECURSIVE = (
    Expect("sub/Makefile", 3, 1, "make target 'all' failed: Error 1", "make"),
    Expect("Makefile", 12, 1, "make target 'recursive' failed: Error 2", "make"),
)

GO_ENV = {"GOPROXY": "off", "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"}

CASES: tuple[Case, ...] = (
    Case("unittest", "unittest", "py-unittest", "{python} -m unittest", "python", UNITTEST),
    Case("doctest", "doctest", "py-doctest", "{python} -m doctest pkg/temps.py", "python", DOCTEST),
    Case(
        "doctest",
        "pytest_doctest_modules",
        "py-doctest",
        PYTEST + " --doctest-modules pkg",
        "python",
        PYTEST_DOCTEST,
    ),
    Case("pyright", "pyright", "py-typed", "{node}/pyright pkg", "node:pyright", PYRIGHT),
    Case(
        "mypy",
        "notes",
        "py-typed",
        "{bin}/mypy --no-incremental --cache-dir=/dev/null pkg",
        "bin:mypy",
        MYPY_NOTES,
    ),
    Case(
        "ruff",
        "full",
        "py-ruff",
        "{bin}/ruff check --no-cache --isolated pkg",
        "bin:ruff",
        RUFF_SYNTAX,
    ),
    Case(
        "ruff",
        "concise",
        "py-ruff",
        "{bin}/ruff check --no-cache --isolated --output-format concise pkg",
        "bin:ruff",
        RUFF_SYNTAX,
    ),
    Case("go", "go_test", "go", "go test ./...", "go", GO_TEST, env=GO_ENV),
    Case("go", "go_vet", "go", "go vet ./...", "go", (VET,), env=GO_ENV),
    Case(
        "shellcheck",
        "gcc",
        "shell",
        "shellcheck -f gcc scripts/deploy.sh",
        "shellcheck",
        SHELLCHECK,
    ),
    Case("make", "c_assert", "c-make", "make test", "make", MAKE_ASSERT),
    Case("make", "recursive", "c-make", "make recursive", "make", MAKE_RECURSIVE),
)
