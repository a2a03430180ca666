#!/usr/bin/env python3
"""Records tests/cases/outputs/<family>/<case>.txt (and .cmd) by running each case's
command in a fresh copy of its project, the way the runner would (`sh -c`, folder as working
directory, stdout and stderr merged), then cleaning and normalising the output.

usage: python tests/tools/record-problem-fixtures.py [CASE_ID ...]   (default: every case)
Node cases need LSP_VERIFY_NODE_TOOLS (see tests/tools/install-node-tools.sh).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.cases.corpus import all_cases, case_modules
from tests.cases.problems_cases import FIXTURES, Case, clean, expand, run_case

# Tools whose `--version` does not say the version on its first line.
VERSION_COMMANDS = {
    "go": "go version",
    "shellcheck": "shellcheck --version | sed -n 2p",
    "zig": "zig version",
    "mix": "mix --version | tail -n 1",
}


def normalise(text: str, root: Path, base: Path) -> str:
    swaps: list[tuple[str, str]] = []
    tools = os.environ.get("LSP_VERIFY_NODE_TOOLS")
    if tools:
        swaps.append((os.path.realpath(tools), "{NODE_TOOLS}"))
        swaps.append((os.path.abspath(tools), "{NODE_TOOLS}"))
        swaps.append(
            (os.path.relpath(os.path.realpath(tools), os.path.realpath(root)), "{NODE_TOOLS_REL}")
        )
    lang = os.environ.get("LSP_VERIFY_LANG_TOOLS")
    if lang:
        swaps.append((os.path.realpath(lang), "{LANG_TOOLS}"))
        swaps.append((os.path.abspath(lang), "{LANG_TOOLS}"))
    swaps += [
        (str(root.resolve()), "{ROOT}"),
        (str(root), "{ROOT}"),
        (str(base / "target"), "{TARGET}"),
        (str(base.resolve() / "target"), "{TARGET}"),
        (sys.prefix, "{PREFIX}"),
        (sys.base_prefix, "{BASE_PREFIX}"),
        (os.path.expanduser("~"), "{HOME}"),
    ]
    # Longest first, so that a path is replaced whole before any of its parents.
    for old, new in sorted(swaps, key=lambda pair: -len(pair[0])):
        if old and old not in ("/", "."):
            text = text.replace(old, new)
    return text


def tool_version(case: Case) -> str:
    commands = []
    by_pytest = case.family in ("pytest", "mixed") or "-m pytest" in case.command
    if by_pytest:
        commands.append("{python} -m pytest --version")
    if case.tool == "python" and not by_pytest:
        commands.append("{python} --version")
    elif case.tool.startswith("bin:"):
        commands.append("{bin}/" + case.tool[4:] + " --version")
    elif case.tool.startswith("node:"):
        commands.append("{node}/" + case.tool[5:] + " --version")
    elif case.tool in VERSION_COMMANDS:
        commands.append(VERSION_COMMANDS[case.tool])
    elif case.tool != "python":
        commands.append(case.tool + " --version")
    if case.family == "make":
        commands.append("cc --version")  # the C case compiles its test program
    versions = []
    # node-tap finds itself only from a folder whose node_modules holds it.
    cwd = os.environ.get("LSP_VERIFY_NODE_TOOLS") or None
    for command in commands:
        done = subprocess.run(
            ["sh", "-c", expand(command)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            cwd=cwd,
        )
        lines = (done.stdout + done.stderr).strip().splitlines()
        name = command.split()[-2].rsplit("/", 1)[-1].strip("{}")
        if command in VERSION_COMMANDS.values():
            name = case.tool
        first = lines[0] if lines else "?"
        versions.append(first if name.lower() in first.lower() else f"{name} {first}")
    return "; ".join(versions)


def case_file(case: Case) -> str:
    for module in case_modules():
        if case in module.CASES:
            return module.__name__.replace(".", "/") + ".py"
    return "tests/cases/problems_cases.py"


def record(case: Case) -> None:
    with tempfile.TemporaryDirectory(prefix="lsp-verify-record-") as tmp:
        base = Path(tmp)
        root, output = run_case(case, base)
        lines = clean(output)
        text = normalise("\n".join(lines) + "\n", root, base)
    folder = FIXTURES / case.family
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{case.name}.txt").write_text(text, encoding="utf-8")
    header = [
        f"# project: {case.project} ({case_file(case)}), run in {{ROOT}} with sh -c",
        f"# recorded on {platform.system()} {platform.machine()},"
        f" Python {platform.python_version()}",
        f"# tool: {tool_version(case)}",
    ]
    if "{node}" in case.command:
        header.append("# {node} is $LSP_VERIFY_NODE_TOOLS/node_modules/.bin")
    env = " ".join(f"{key}={value}" for key, value in sorted(case.env.items()))
    command = f"{env} {case.command}".strip()
    (folder / f"{case.name}.cmd").write_text("\n".join([*header, command]) + "\n", encoding="utf-8")
    print(f"recorded {case.id}: {len(text.splitlines())} lines")


def main(argv: list[str]) -> int:
    wanted = set(argv)
    for case in all_cases():
        if not wanted or case.id in wanted:
            record(case)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
