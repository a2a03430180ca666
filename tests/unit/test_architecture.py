"""The architecture is checked by tools, not hoped for: the import contracts in pyproject.toml
(`lint-imports`), what the server imports at startup, and the size of modules and classes."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "lsp_verify"
MAX_MODULE_LINES = 450
MAX_CLASS_LINES = 250


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` with the contracts in ROOT/pyproject.toml, on ROOT's lsp_verify."""
    tool = Path(sys.executable).parent / "lint-imports"
    found = str(tool) if tool.exists() else shutil.which("lint-imports")
    assert found, "lint-imports is missing: install the test extra (pip install -e '.[test]')"
    # ROOT first on the path: the copy, not the installed package, is the one analysed.
    # COLUMNS: the report is not wrapped to a terminal's width.
    env = dict(os.environ, PYTHONPATH=str(root), COLUMNS="500")
    return subprocess.run(
        [found, "--no-cache", "--no-logo"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def test_the_import_contracts_are_kept() -> None:
    done = lint_imports(REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    contracts = (REPO / "pyproject.toml").read_text().count("[[tool.importlinter.contracts]]")
    assert contracts >= 5
    assert f"Contracts: {contracts} kept, 0 broken." in done.stdout, done.stdout


def broken_contracts(report: str) -> dict[str, str]:
    """Each broken contract's name and what the report says of it."""
    assert "Broken contracts" in report, report
    lines = report.split("Broken contracts", 1)[1].splitlines()[2:]
    found: dict[str, str] = {}
    name = ""
    for line, below in zip(lines, [*lines[1:], ""]):
        if line and below == "-" * len(line):  # a heading: the contract's name, underlined
            name = line
            found[name] = ""
        elif name:
            found[name] += line + "\n"
    return found


# An import that breaks one contract, written into a copy of the package. Imports inside a
# function and under TYPE_CHECKING count as much as the others.
VIOLATIONS = {
    "pygls outside lsp/": (
        "planning/uses_pygls.py",
        "from pygls.lsp.server import LanguageServer\n",
        "pygls is imported only under lsp/",
        "lsp_verify.planning.uses_pygls -> pygls",
    ),
    "lsp/ imported from below, in a function": (
        "results/uses_lsp.py",
        "def serve() -> None:\n    from lsp_verify.lsp import server\n",
        "nothing outside lsp/ and cli/ imports lsp/",
        "lsp_verify.results.uses_lsp -> lsp_verify.lsp.server",
    ),
    "config importing planning, for types only": (
        "config/uses_planning.py",
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from lsp_verify.planning.plan import Plan\n",
        "config/ imports neither planning/ nor running/",
        "lsp_verify.config.uses_planning -> lsp_verify.planning.plan",
    ),
    "problems importing config": (
        "problems/uses_config.py",
        "from lsp_verify.config import settings\n",
        "problems/ imports nothing of ours but the shared values",
        "lsp_verify.problems.uses_config -> lsp_verify.config.settings",
    ),
    "running importing its sibling results": (
        "running/uses_results.py",
        "from lsp_verify.results import diagnostics\n",
        "layers:",
        "lsp_verify.running.uses_results -> lsp_verify.results.diagnostics",
    ),
    "a shared value importing a subpackage": (
        "globs.py",
        "import lsp_verify.config.settings\n",
        "layers:",
        "lsp_verify.globs -> lsp_verify.config.settings",
    ),
    "a top-level module the layers do not place": (
        "helpers.py",
        "",
        "layers:",
        "lsp_verify.helpers",
    ),
}


@pytest.mark.parametrize("case", VIOLATIONS, ids=list(VIOLATIONS))
def test_a_violation_breaks_its_contract(tmp_path: Path, case: str) -> None:
    where, source, contract, named = VIOLATIONS[case]
    shutil.copytree(PACKAGE, tmp_path / "lsp_verify", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    module = tmp_path / "lsp_verify" / where
    # Added to the end of a module that is there, or a module of its own.
    module.write_text((module.read_text() if module.exists() else "") + source)
    done = lint_imports(tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    broken = [text for name, text in broken_contracts(out).items() if name.startswith(contract)]
    assert len(broken) == 1, out
    assert named in broken[0], out


def _loaded_after(statement: str) -> list[str]:
    """The lsp_verify modules a fresh interpreter has loaded after STATEMENT."""
    code = f"{statement}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [name for name in json.loads(done.stdout) if name.startswith("lsp_verify")]


def _under(modules: list[str], *subpackages: str) -> list[str]:
    prefixes = tuple(f"lsp_verify.{name}" for name in subpackages)
    return [m for m in modules if m in prefixes or m.startswith(tuple(p + "." for p in prefixes))]


def test_the_server_starts_without_planning_running_or_trust() -> None:
    # They are imported when a run needs them: the server answers `initialize` before that.
    loaded = _loaded_after("import lsp_verify.lsp.server")
    assert "lsp_verify.workspace.run" in loaded  # what is loaded is seen
    assert _under(loaded, "planning", "running", "trust") == []


def test_the_server_starts_without_the_problem_matchers() -> None:
    # record.py names the Problem type under TYPE_CHECKING for this reason.
    assert _under(_loaded_after("import lsp_verify.lsp.server"), "problems") == []


def test_the_startup_check_sees_a_lazy_import_made_eager() -> None:
    # The check above, on an import that does load planning: it would see one at startup.
    loaded = _loaded_after("import lsp_verify.lsp.server, lsp_verify.trust")
    assert "lsp_verify.planning.plan" in _under(loaded, "planning", "running", "trust")


def oversized(package: Path) -> list[str]:
    """Every module over MAX_MODULE_LINES and class over MAX_CLASS_LINES, with its size."""
    found = []
    for path in sorted(package.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(package.parent).as_posix()
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            found.append(f"{name}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > MAX_CLASS_LINES:
                    found.append(f"{name}: class {node.name}, {size} lines")
    return found


def _class(name: str, lines: int) -> str:
    return f"class {name}:\n" + "".join(f"    x{i} = {i}\n" for i in range(lines - 1))


def test_the_size_check_finds_every_offender(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    big = _class("Big", MAX_CLASS_LINES + 1) + _class("Fits", MAX_CLASS_LINES)
    (tmp_path / "pkg" / "big.py").write_text(big + "\n" * (MAX_MODULE_LINES - MAX_CLASS_LINES))
    (tmp_path / "pkg" / "sub" / "fits.py").write_text("\n" * MAX_MODULE_LINES)
    (tmp_path / "pkg" / "sub" / "long.py").write_text("\n" * (MAX_MODULE_LINES + 1))
    assert oversized(tmp_path / "pkg") == [
        f"pkg/big.py: {2 * MAX_CLASS_LINES + 1 + MAX_MODULE_LINES - MAX_CLASS_LINES} lines",
        f"pkg/big.py: class Big, {MAX_CLASS_LINES + 1} lines",
        f"pkg/sub/long.py: {MAX_MODULE_LINES + 1} lines",
    ]


def test_no_module_or_class_is_over_the_size_limits() -> None:
    assert oversized(PACKAGE) == [], (
        f"over {MAX_MODULE_LINES} lines a module or {MAX_CLASS_LINES} a class: "
        + "; ".join(oversized(PACKAGE))
    )


def test_every_path_the_architecture_page_names_exists() -> None:
    """docs/architecture.md is the map a maintainer reads first: every module, folder and
    `module.py:name` it names must exist: relative to the repository, to lsp_verify/, or,
    for a bare `module.py` in a row of the code map, to that row's subpackage."""
    import ast
    import re

    root = PACKAGE.parent
    token = re.compile(r"`([\w./-]+(?:\.py|/)(?::[\w.]+)?)`")
    missing, seen = [], 0
    for line in (root / "docs" / "architecture.md").read_text().splitlines():
        named = token.findall(line)
        context = next(
            (PACKAGE / n for n in named if n.endswith("/") and (PACKAGE / n).is_dir()), None
        )
        for item in named:
            seen += 1
            path, _, name = item.partition(":")
            bases = [root, PACKAGE] + ([context] if context is not None else [])
            found = next((b / path for b in bases if (b / path).exists()), None)
            if found is None:
                missing.append(item)
            elif name:
                tree = ast.parse(found.read_text())
                defined = {
                    n.name
                    for n in ast.walk(tree)
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                }
                if not set(name.split(".")) <= defined:
                    missing.append(item)
    assert seen > 40  # the page names its modules
    assert missing == [], missing
