"""Affected first with jest and vitest, the real tools from npm (tests/tools/install-node-tools.sh,
$LSP_VERIFY_NODE_TOOLS): the test file related to the changed module runs first, alone, then
the whole suite decides. And go test, where go is installed: the changed package first."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.files import write
from tests.support.stdio import server_env

# Each test file notes that it ran, in order: the quick phase's run is the first line.
JEST = {
    "package.json": '{"name": "p", "version": "1.0.0", "scripts": {"test": "jest --ci"}}\n',
    "src/sum.js": "module.exports = (a, b) => a + b;\n",
    "src/other.js": "module.exports = () => 1;\n",
    "test/sum.test.js": "const fs = require('fs');\nconst sum = require('../src/sum');\n"
    "fs.appendFileSync('ran.log', 'sum\\n');\ntest('adds', () => expect(sum(1, 2)).toBe(4));\n",
    "test/other.test.js": "const fs = require('fs');\nconst other = require('../src/other');\n"
    "fs.appendFileSync('ran.log', 'other\\n');\ntest('one', () => expect(other()).toBe(1));\n",
}
VITEST = {
    "package.json": '{"name": "p", "version": "1.0.0", "type": "module",'
    ' "scripts": {"test": "vitest run"}}\n',
    "src/sum.js": "export const sum = (a, b) => a + b;\n",
    "src/other.js": "export const other = () => 1;\n",
    "test/sum.test.js": "import { appendFileSync } from 'node:fs';\n"
    "import { test, expect } from 'vitest';\nimport { sum } from '../src/sum.js';\n"
    "appendFileSync('ran.log', 'sum\\n');\ntest('adds', () => expect(sum(1, 2)).toBe(4));\n",
    "test/other.test.js": "import { appendFileSync } from 'node:fs';\n"
    "import { test, expect } from 'vitest';\nimport { other } from '../src/other.js';\n"
    "appendFileSync('ran.log', 'other\\n');\ntest('one', () => expect(other()).toBe(1));\n",
}


def tools_bin() -> str:
    tools = os.environ.get("LSP_VERIFY_NODE_TOOLS")
    if not tools:
        pytest.skip("LSP_VERIFY_NODE_TOOLS is not set (see tests/tools/install-node-tools.sh)")
    return os.path.join(tools, "node_modules", ".bin")


@pytest.mark.parametrize(
    ("files", "quick"),
    [
        (JEST, "jest --ci --passWithNoTests --findRelatedTests src/sum.js"),
        (VITEST, "vitest related src/sum.js --run --passWithNoTests"),
    ],
    ids=["jest", "vitest"],
)
def test_the_related_test_file_runs_first(
    project: Path, state: Path, files: dict[str, str], quick: str
) -> None:
    tool = tools_bin()
    write(project, files)
    env = server_env(state, {"PATH": tool + os.pathsep + os.environ["PATH"], "CI": "true"})
    changed = ["--changed", str(project / "src" / "sum.js")]
    done = subprocess.run(
        [sys.executable, "-m", "lsp_verify", "check", str(project), "--json", *changed],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )
    record = json.loads(done.stdout)
    assert [(p["phase"], p["command"]) for p in record["phases"]] == [
        ("quick", quick),
        ("full", "npm test"),
    ], done.stderr
    assert record["phases"][0]["outcome"] == "failed"  # the related test fails
    assert record["outcome"] == "failed" and done.returncode != 0  # the full command's verdict
    ran = (project / "ran.log").read_text().split()
    assert ran[0] == "sum" and sorted(ran[1:]) == ["other", "sum"], ran
    assert record["affected"]["note"].startswith("affected first: the tests related to")
    assert any(p["path"] == "test/sum.test.js" for p in record["problems"])


def test_a_script_that_names_what_to_run_has_no_quick_phase(project: Path, state: Path) -> None:
    tool = tools_bin()
    write(project, {**JEST, "package.json": '{"scripts": {"test": "jest test/sum.test.js"}}\n'})
    env = server_env(state, {"PATH": tool + os.pathsep + os.environ["PATH"], "CI": "true"})
    explain = subprocess.run(
        [sys.executable, "-m", "lsp_verify", "explain", str(project)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    document = json.loads(explain.stdout)
    assert document["affectedFirst"] == (
        "affected first: no quick phase: the npm test script names what to run, or an "
        "option's value ('test/sum.test.js')"
    )


def test_go_test_runs_the_changed_package_first(project: Path, state: Path) -> None:
    if shutil.which("go") is None:
        pytest.skip("go is not installed (.ci/install-tools.sh installs it)")
    write(
        project,
        {
            "go.mod": "module example.com/p\n\ngo 1.19\n",
            "calc/calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
            "calc/calc_test.go": 'package calc\n\nimport "testing"\n\n'
            'func TestAdd(t *testing.T) {\n\tif Add(1, 2) != 4 {\n\t\tt.Fatal("wrong")\n\t}\n}\n',
            "other/other.go": "package other\n\nfunc One() int { return 1 }\n",
            "other/other_test.go": 'package other\n\nimport "testing"\n\n'
            'func TestOne(t *testing.T) {\n\tif One() != 1 {\n\t\tt.Fatal("wrong")\n\t}\n}\n',
        },
    )
    go = {"GOPATH": str(state / "gopath"), "GOFLAGS": "-mod=mod", "GOPROXY": "off"}
    env = server_env(state, {**go, "GOTOOLCHAIN": "local"})
    command = ["--command", "go test -count=1 ./...", "--changed", str(project / "calc/calc.go")]
    done = subprocess.run(
        [sys.executable, "-m", "lsp_verify", "check", str(project), "--json", *command],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    record = json.loads(done.stdout)
    assert [(p["phase"], p["command"], p["outcome"]) for p in record["phases"]] == [
        ("quick", "go test -count=1 ./calc", "failed"),
        ("full", "go test -count=1 ./...", "failed"),
    ], done.stderr
    assert record["affected"]["note"] == (
        "affected first: the changed files' packages run first (go test)"
    )
