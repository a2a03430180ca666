"""Cases of the Node families: mocha, node --test, ava, node-tap, bare Node stacks, ESLint's
stylish and compact formats, Biome: this module's CASES and PROJECTS join those of
tests/cases/problems_cases.py through tests/cases/corpus.py (see problems_cases.py for how a case is
run, recorded and checked); kept apart to keep both short.

The test projects share one layout: lib/calc.js throws, node_modules/fakelib (a stand-in for
an installed package) throws, and test/calc.test.js has a failing assertion, a test that
calls lib/calc.js (the raising line is related information) and one that calls the package
(its frame is never where the failure lands).
"""

from __future__ import annotations

from tests.cases.problems_cases import Case, Expect

NODE_CALC = """\
function add(a, b) {
  return a + b;
}

function divide(a, b) {
  if (b === 0) {
    throw new RangeError("division by zero");
  }
  return a / b;
}

module.exports = { add, divide };
"""

FAKELIB = """\
exports.check = function check(value) {
  if (!value) {
    throw new TypeError("fakelib refused the value");
  }
};
"""

MOCHA_TEST = """\
const assert = require("assert");
const { check } = require("fakelib");
const { add, divide } = require("../lib/calc");

describe("calc", () => {
  it("adds", () => {
    assert.strictEqual(add(1, 2), 4);
  });

  it("divides", () => {
    divide(1, 0);
  });

  it("passes", () => {
    assert.ok(add(1, 1) === 2);
  });
});

it("checks through a library", () => {
  check(0);
});
"""

NODE_TEST = """\
const assert = require("node:assert");
const { describe, it, test } = require("node:test");
const { check } = require("fakelib");
const { add, divide } = require("../lib/calc");

describe("calc", () => {
  it("adds", () => {
    assert.strictEqual(add(1, 2), 4);
  });

  it("divides", () => {
    divide(1, 0);
  });

  it("passes", () => {
    assert.ok(add(1, 1) === 2);
  });
});

test("checks through a library", () => {
  check(0);
});
"""

AVA_TEST = """\
const test = require("ava");
const { check } = require("fakelib");
const { add, divide } = require("../lib/calc");

test("adds", (t) => {
  t.is(add(1, 2), 4);
});

test("divides", (t) => {
  divide(1, 0);
  t.pass();
});

test("passes", (t) => {
  t.true(add(1, 1) === 2);
});

test("checks through a library", (t) => {
  check(0);
  t.pass();
});
"""

TAP_TEST = """\
const t = require("tap");
const { check } = require("fakelib");
const { add, divide } = require("../lib/calc");

t.test("adds", async (t) => {
  t.equal(add(1, 2), 4);
});

t.test("divides", async (t) => {
  divide(1, 0);
});

t.test("passes", async (t) => {
  t.ok(add(1, 1) === 2);
});

t.test("checks through a library", async (t) => {
  check(0);
});
"""

AVA_ESM_TEST = """\
import test from "ava";
import { divide } from "./lib/calc.js";

test("adds", (t) => {
  t.is(1 + 2, 4);
});

test("divides", (t) => {
  divide(1, 0);
  t.pass();
});
"""

_COMMON = {"lib/calc.js": NODE_CALC, "node_modules/fakelib/index.js": FAKELIB}
_PACKAGE = '{"name": "calc", "private": true}\n'

PROJECTS: dict[str, dict[str, str]] = {
    "node-mocha": {**_COMMON, "test/calc.test.js": MOCHA_TEST},
    "node-test": {**_COMMON, "test/calc.test.js": NODE_TEST},
    "node-ava": {**_COMMON, "package.json": _PACKAGE, "test/calc.test.js": AVA_TEST},
    # An ES module project: ava prints its own frames as `file://test.js:5:5`.
    "node-ava-esm": {
        "package.json": '{"name": "calc", "private": true, "type": "module"}\n',
        "lib/calc.js": NODE_CALC.replace("module.exports = { add, divide };", "export { divide };"),
        "test.js": AVA_ESM_TEST,
    },
    "node-tap": {**_COMMON, "package.json": _PACKAGE, "test/calc.test.js": TAP_TEST},
    "node-crash": {
        "node_modules/fakelib/index.js": FAKELIB,
        "lib/index.js": "function main() {\n  return x + 1;\n}\n\nmain();\n",
        "lib/bad.js": "function broken( {\n}\n",
        "lib/esm.mjs": (
            'import { check } from "fakelib";\n\n'
            "export function run(value) {\n  check(value);\n}\n\nrun(0);\n"
        ),
    },
}

T = "test/calc.test.js"
RAISED = (("lib/calc.js", 7),)


def _runner(
    adds: tuple[int, int, str],
    divides: tuple[int, int, str],
    library: tuple[int, int, str],
    suite: str = "",
) -> tuple[Expect, ...]:
    """The three failures every runner's project gives: (line, column, message) each."""
    cases = []
    for (line, column, message), name, related in (
        (adds, suite + "adds", ()),
        (divides, suite + "divides", RAISED),
        (library, "checks through a library", ()),
    ):
        cases.append(Expect(T, line, column, f"{name}: {message}", name, related=related))
    return tuple(cases)


STRICT = "Expected values to be strictly equal:\n3 !== 4"
MOCHA = _runner(
    (7, 12, f"AssertionError [ERR_ASSERTION]: {STRICT}"),
    (11, 5, "RangeError: division by zero"),
    (20, 3, "TypeError: fakelib refused the value"),
    suite="calc ",
)
NODE_SPEC = _runner(
    (8, 12, f"AssertionError [ERR_ASSERTION]: {STRICT}"),
    (12, 5, "RangeError [Error]: division by zero"),
    (21, 3, "TypeError [Error]: fakelib refused the value"),
)
NODE_TAP = _runner(
    (8, 12, f"AssertionError: {STRICT}"),
    (12, 5, "RangeError: division by zero"),
    (21, 3, "TypeError: fakelib refused the value"),
    suite="calc > ",
)
AVA = _runner(
    (6, 5, "Difference (- actual, + expected):\n- 3\n+ 4"),
    (10, 3, "RangeError: division by zero"),
    (19, 3, "TypeError: fakelib refused the value"),
)
TAP = _runner(
    (6, 5, "should be equal"),
    (10, 3, "RangeError: division by zero"),
    (18, 3, "TypeError: fakelib refused the value"),
)
AVA_ESM = (
    Expect("test.js", 5, 5, "adds: Difference (- actual, + expected):\n- 3\n+ 4", "adds"),
    Expect(
        "test.js",
        9,
        3,
        "divides: RangeError: division by zero",
        "divides",
        related=RAISED,
    ),
)
CRASH = (
    Expect("lib/index.js", 2, 3, "ReferenceError: x is not defined", "ReferenceError"),
    Expect("lib/bad.js", 3, 1, "SyntaxError: Unexpected end of input", "SyntaxError"),
    # The package threw; the first frame inside the folder and outside node_modules.
    Expect("lib/esm.mjs", 4, 3, "TypeError: fakelib refused the value", "TypeError"),
)
ESLINT_RULES = (
    "{node}/eslint --no-eslintrc --env node --parser-options ecmaVersion:2022"
    ' --rule \'{"no-unused-vars": "error", "no-var": "warn"}\''
)
ESLINT_HUMAN = (
    Expect("src/lint.js", 1, 7, "'unused' is assigned a value but never used", "no-unused-vars"),
    Expect("src/lint.js", 2, 1, "Unexpected var, use let or const instead", "no-var", "warning"),
    Expect("src/parse.js", 2, 1, "Parsing error: Unexpected token", None),
)
UNUSED = "lint/correctness/noUnusedVariables"
BIOME = (
    Expect("src/lint.js", 1, 7, "This variable unused is unused.", UNUSED, "warning"),
    Expect("src/parse.js", 1, 10, "This function broken is unused.", UNUSED, "warning"),
    Expect("src/parse.js", 2, 1, "Expected an identifier, a member name", "parse"),
    Expect(
        "src/parse.js", 1, 18, "Unexpected empty object pattern.", "lint/correctness/noEmptyPattern"
    ),
)

MOCHA_COMMAND = "{node}/mocha"
# ava and node-tap load themselves from the project: NODE_PATH (CommonJS) or a link.
AVA_COMMAND = "NODE_PATH={node}/.. {node}/ava"
AVA_ESM_COMMAND = "mkdir -p node_modules && ln -s {node}/../ava node_modules/ava && {node}/ava"
TAP_COMMAND = "ln -s {node}/../tap node_modules/tap && {node}/tap -R tap --disable-coverage"

CASES: tuple[Case, ...] = (
    Case("node", "mocha_spec", "node-mocha", MOCHA_COMMAND, "node:mocha", MOCHA),
    Case("node", "mocha_dot", "node-mocha", MOCHA_COMMAND + " --reporter dot", "node:mocha", MOCHA),
    Case("node", "mocha_tap", "node-mocha", MOCHA_COMMAND + " --reporter tap", "node:mocha", MOCHA),
    Case(
        "node", "node_test_spec", "node-test", "node --test --test-reporter spec", "node", NODE_SPEC
    ),
    Case(
        "node", "node_test_dot", "node-test", "node --test --test-reporter dot", "node", NODE_SPEC
    ),
    Case("node", "node_test_tap", "node-test", "node --test --test-reporter tap", "node", NODE_TAP),
    Case("node", "ava", "node-ava", AVA_COMMAND, "node:ava", AVA),
    Case("node", "ava_esm", "node-ava-esm", AVA_ESM_COMMAND, "node:ava", AVA_ESM),
    Case("node", "tap", "node-tap", TAP_COMMAND, "node:tap", TAP),
    Case(
        "node",
        "stack",
        "node-crash",
        "node lib/index.js; node lib/bad.js; node lib/esm.mjs",
        "node",
        CRASH,
    ),
    Case(
        "eslint",
        "stylish",
        "eslint",
        ESLINT_RULES + " --format stylish src",
        "node:eslint",
        ESLINT_HUMAN,
    ),
    Case(
        "eslint",
        "compact",
        "eslint",
        ESLINT_RULES + " --format compact src",
        "node:eslint",
        ESLINT_HUMAN,
    ),
    Case("eslint", "biome", "eslint", "{node}/biome lint src", "node:biome", BIOME),
)
