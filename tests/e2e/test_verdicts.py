"""The verdict is the bare command's: on every layout here, `lsp-verify check` and a run
through the server exit as the command does when typed by hand in the folder, in a passing
and a failing state. Each case runs the bare command too and compares. The layouts are the
ones real projects use and a copied manifest or a narrow PATH would break."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support import lang_tools, toolchain_projects
from tests.support.files import write
from tests.support.stdio import StdioClient, server_env
from tests.support.wire import did_save, frame, show_last_run

BIN = os.path.dirname(sys.executable)
Layout = Callable[[Path, bool], str]  # (folder, failing) -> the bare command


def calc_tests(folder: Path, failing: bool, test_dir: str = "tests") -> None:
    write(
        folder,
        {
            "src/calc.py": "def add(a, b):\n    return a + b\n",
            f"{test_dir}/test_calc.py": "from calc import add\n\n\ndef test_add():\n"
            f"    assert add(1, 2) == {4 if failing else 3}\n",
        },
    )


def pytest_ini(folder: Path, failing: bool) -> str:
    calc_tests(folder, failing)
    write(folder, {"pytest.ini": "[pytest]\npythonpath = src\ntestpaths = tests\n"})
    return "pytest -x -q"


def pyproject(folder: Path, failing: bool) -> str:
    calc_tests(folder, failing)
    table = '[tool.pytest.ini_options]\npythonpath = ["src"]\ntestpaths = ["tests"]\n'
    write(folder, {"pyproject.toml": table})
    return "pytest -x -q"


def setup_cfg(folder: Path, failing: bool) -> str:
    calc_tests(folder, failing)
    write(folder, {"setup.cfg": "[tool:pytest]\npythonpath = src\ntestpaths = tests\n"})
    return "pytest -x -q"


def tox_ini(folder: Path, failing: bool) -> str:
    calc_tests(folder, failing)
    write(folder, {"tox.ini": "[pytest]\npythonpath = src\ntestpaths = tests\n"})
    return "pytest -x -q"


def rootdir_conftest(folder: Path, failing: bool) -> str:
    write(
        folder,
        {
            "pytest.ini": "[pytest]\ntestpaths = tests\n",
            "conftest.py": "import pytest\n\n\n@pytest.fixture\ndef answer():\n    return 42\n",
            "tests/test_answer.py": "def test_answer(answer):\n"
            f"    assert answer == {41 if failing else 42}\n",
        },
    )
    return "pytest -x -q"


def import_mode(folder: Path, failing: bool) -> str:
    """Two test files of one basename, which only --import-mode=importlib can collect."""
    write(
        folder,
        {
            "pytest.ini": "[pytest]\naddopts = --import-mode=importlib\n",
            "a/test_same.py": "def test_a():\n    assert True\n",
            "b/test_same.py": f"def test_b():\n    assert {not failing}\n",
        },
    )
    return "pytest -x -q"


def npm_hoisted(folder: Path, failing: bool) -> str:
    """A package of a workspace whose test tool is installed at the workspace root."""
    tool = folder.parent.parent / "node_modules" / ".bin" / "hoisted-tool"
    tool.parent.mkdir(parents=True)
    tool.write_text(f"#!/bin/sh\necho hoisted tool ran\nexit {1 if failing else 0}\n")
    tool.chmod(0o755)
    write(folder, {"package.json": '{"name": "a", "scripts": {"test": "hoisted-tool"}}'})
    return "npm test"


def npm_pre_post_init_cwd(folder: Path, failing: bool) -> str:
    write(
        folder,
        {
            "package.json": '{"name": "a", "version": "1.0.0", "scripts": {'
            '"pretest": "echo prepared > fixture.txt",'
            '"test": "test \\"$INIT_CWD\\" = \\"$PWD\\" && grep -q prepared fixture.txt",'
            f'"posttest": "exit {3 if failing else 0}"'
            "}}"
        },
    )
    return "npm test"


def fake_tool(bin_dir: Path, name: str, status: int) -> None:
    """An installed tool, as the package manager links it into a node_modules/.bin."""
    tool = bin_dir / name
    tool.parent.mkdir(parents=True, exist_ok=True)
    tool.write_text(f"#!/bin/sh\necho {name} ran in $PWD\nexit {status}\n")
    tool.chmod(0o755)


def yarn_workspace(folder: Path, failing: bool) -> str:
    """A yarn (classic) workspace: tools hoisted to the root, a pretest that yarn runs too."""
    root = folder.parent.parent
    write(root, {"package.json": '{"private": true, "workspaces": ["packages/*"]}'})
    fake_tool(root / "node_modules" / ".bin", "hoisted-tool", 1 if failing else 0)
    write(
        folder,
        {
            "package.json": '{"name": "a", "version": "1.0.0", "scripts": {'
            '"pretest": "echo ready > fixture.txt", "test": "grep -q ready fixture.txt && '
            'hoisted-tool"}}'
        },
    )
    return "yarn test"


def pnpm_workspace(folder: Path, failing: bool) -> str:
    """A pnpm workspace: the package's own tools linked in its node_modules/.bin, shared ones
    at the root."""
    root = folder.parent.parent
    write(
        root,
        {
            "package.json": '{"private": true}',
            "pnpm-workspace.yaml": 'packages:\n  - "packages/*"\n',
        },
    )
    fake_tool(root / "node_modules" / ".bin", "root-tool", 0)
    fake_tool(folder / "node_modules" / ".bin", "own-tool", 1 if failing else 0)
    write(
        folder,
        {
            "package.json": '{"name": "a", "version": "1.0.0", "scripts": {"test": '
            '"root-tool && own-tool"}}'
        },
    )
    return "pnpm test"


def make_include(folder: Path, failing: bool) -> str:
    write(
        folder,
        {
            "mk/vars.mk": "RUN := sh tests/run.sh\n",
            "tests/run.sh": f"exit {1 if failing else 0}\n",
            "Makefile": "include mk/vars.mk\ntest:\n\t$(RUN)\n",
        },
    )
    return "make test"


def make_list(folder: Path, failing: bool) -> str:
    write(
        folder,
        {
            "tests/run.sh": f"exit {1 if failing else 0}\n",
            "Makefile": "HERE := $(dir $(abspath $(lastword $(MAKEFILE_LIST))))\n"
            "test:\n\tsh $(HERE)tests/run.sh\n",
        },
    )
    return "make test"


def make_sub(folder: Path, failing: bool) -> str:
    write(
        folder,
        {
            "Makefile": "test:\n\t$(MAKE) -C sub test\n",
            "sub/Makefile": f"test:\n\t@exit {1 if failing else 0}\n",
        },
    )
    return "make test"


def cargo_workspace(folder: Path, failing: bool) -> str:
    write(
        folder,
        {
            "Cargo.toml": '[workspace]\nmembers = ["calc"]\nresolver = "2"\n',
            "calc/Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
            "calc/src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 { a + b }\n"
            "#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n"
            f"        assert_eq!(super::add(1, 2), {4 if failing else 3});\n    }}\n}}\n",
        },
    )
    return "cargo test"


LAYOUTS: dict[str, tuple[Layout, str | None]] = {
    "pytest.ini pythonpath": (pytest_ini, None),
    "pyproject pythonpath": (pyproject, None),
    "setup.cfg pythonpath": (setup_cfg, None),
    "tox.ini pythonpath": (tox_ini, None),
    "rootdir conftest": (rootdir_conftest, None),
    "import-mode importlib": (import_mode, None),
    "npm hoisted tool": (npm_hoisted, "npm"),
    "npm pre/post and INIT_CWD": (npm_pre_post_init_cwd, "npm"),
    "yarn workspace hoisted tool": (yarn_workspace, "yarn"),
    "pnpm workspace own and root tools": (pnpm_workspace, "pnpm"),
    "Makefile include": (make_include, "make"),
    "Makefile MAKEFILE_LIST": (make_list, "make"),
    "Makefile -C sub-make": (make_sub, "make"),
    "cargo workspace": (cargo_workspace, "cargo"),
    # The detector's rules 6 to 11, with the real tools (tests/support/lang_tools.py).
    "go packages below the root": (toolchain_projects.go_packages, "go"),
    "deno import map": (toolchain_projects.deno_import_map, "deno"),
    "mix test helper": (toolchain_projects.mix_project, "mix"),
    "rake bundle exec": (toolchain_projects.rake_bundle, "bundle"),
    "zig build module": (toolchain_projects.zig_module, "zig"),
    "just default argument": (toolchain_projects.just_default_argument, "just"),
}


def node_tools_bin() -> str | None:
    """Where tests/tools/install-node-tools.sh put yarn and pnpm, if it ran."""
    tools = os.environ.get("LSP_VERIFY_NODE_TOOLS")
    return os.path.join(tools, "node_modules", ".bin") if tools else None


def find_tool(tool: str) -> str | None:
    extra = node_tools_bin()
    path = os.pathsep.join(p for p in (extra, os.environ.get("PATH")) if p)
    return shutil.which(tool, path=path)


def env_for(state: Path, folder: Path) -> dict[str, str]:
    env = server_env(state, {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    extra = [p for p in (BIN, node_tools_bin()) if p]
    env["PATH"] = os.pathsep.join([*extra, env.get("PATH", os.defpath)])
    env["CI"] = "true"  # pnpm asks nothing
    env["CARGO_TARGET_DIR"] = str(folder.parent / "target")  # built once for both states
    env.pop("INIT_CWD", None)
    return lang_tools.lang_env(env, folder.parent / "caches")


# The test file of each pytest layout: saved, it runs alone first (the quick phase).
SAVED = {
    "pytest.ini pythonpath": "tests/test_calc.py",
    "pyproject pythonpath": "tests/test_calc.py",
    "setup.cfg pythonpath": "tests/test_calc.py",
    "tox.ini pythonpath": "tests/test_calc.py",
    "rootdir conftest": "tests/test_answer.py",
    "import-mode importlib": "b/test_same.py",
}


# The module each pytest layout's test file imports: edited and saved, the test file runs
# first (affected first, on by default).
AFFECTING = {
    "pytest.ini pythonpath": "src/calc.py",
    "pyproject pythonpath": "src/calc.py",
    "setup.cfg pythonpath": "src/calc.py",
    "tox.ini pythonpath": "src/calc.py",
}


def through_the_server(
    folder: Path, state: Path, env: dict[str, str], saved: str | None = None
) -> dict[str, Any]:
    """The record of verify.runNow, or of a save of `saved`."""
    server = StdioClient(state, env=env)
    try:
        server.started(folder, options={"verify": {"confirm": "never", "timeoutMs": 120000}})
        if saved is not None:
            server.send(did_save((folder / saved).as_uri()))
            while True:
                status = server.notification("verify/status", timeout=150)["params"]
                if status["state"] == "idle" and status["lastOutcome"]:
                    break
            server.send(show_last_run(2))
        else:
            server.send(
                frame(
                    {
                        "id": 2,
                        "method": "workspace/executeCommand",
                        "params": {"command": "verify.runNow", "arguments": []},
                    }
                )
            )
        record: dict[str, Any] = server.response(2, timeout=150)["result"]
        assert server.finish() == 0
        return record
    finally:
        server.kill()


@pytest.mark.parametrize("failing", [False, True], ids=["passing", "failing"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_the_verdict_is_the_bare_commands(
    tmp_path: Path, state: Path, layout: str, failing: bool
) -> None:
    make, tool = LAYOUTS[layout]
    if tool in lang_tools.TOOLS:
        lang_tools.require(tool)
    elif tool is not None and find_tool(tool) is None:
        pytest.skip(f"{tool} is not installed")
    folder = tmp_path / "ws" / "packages" / "a"
    folder.mkdir(parents=True)
    command = make(folder, failing)
    env = env_for(state, folder)
    bare = subprocess.run(command, shell=True, cwd=folder, env=env, capture_output=True, text=True)
    assert (bare.returncode != 0) == failing, f"the layout itself is wrong: {bare.stdout}"
    for leftover in ("fixture.txt",):
        (folder / leftover).unlink(missing_ok=True)

    check = subprocess.run(
        [sys.executable, "-m", "lsp_verify", "check", str(folder), "--timeout-ms", "120000"],
        env=env,
        capture_output=True,
        text=True,
        timeout=150,
    )
    said = check.stdout + check.stderr
    record = through_the_server(folder, state, env)

    if tool in ("npm", "yarn", "pnpm"):
        # npm adds its own exit code on a failing script; the script's is what we run.
        assert (check.returncode != 0) == failing, said
        assert (record["exitCode"] != 0) == failing, record
    else:
        assert check.returncode == bare.returncode, said
        assert record["exitCode"] == bare.returncode, record
    assert record["outcome"] == ("failed" if failing else "passed")
    if tool in lang_tools.TOOLS:
        assert record["command"] == command, record  # the detector's command is the bare one
        assert record["failedFirst"].startswith("failed first: not added: "), record
    if command.startswith("pytest"):
        # Failed first is on by default: the same verdict with --ff, after the bare run
        # left its failures in pytest's cache.
        assert record["command"] == command + " --ff", record
        assert record["failedFirst"] == "--ff added: failed first"
        # A save of the test file runs it alone first; the verdict is still the bare one.
        shutil.rmtree(folder / ".pytest_cache", ignore_errors=True)
        saved = through_the_server(folder, state, env, SAVED[layout])
        assert saved["phases"][0]["phase"] == "quick", saved
        assert saved["exitCode"] == bare.returncode, saved
        assert saved["outcome"] == record["outcome"]
    if layout in AFFECTING:
        # Affected first: an edit of the module the test file imports runs that file first
        # (in a suite of three, so that it is not more than half); the verdict is the same.
        write(folder, {f"tests/test_more{i}.py": "def test_more():\n    pass\n" for i in (1, 2)})
        settle = [sys.executable, "-m", "lsp_verify", "check", str(folder), "--json"]
        settled = subprocess.run(settle, env=env, capture_output=True, text=True, timeout=150)
        assert "more than half the suite" in settled.stdout  # two new test files of three
        shutil.rmtree(folder / ".pytest_cache", ignore_errors=True)
        source = folder / AFFECTING[layout]
        source.write_text(source.read_text() + "\n")
        edited = through_the_server(folder, state, env, AFFECTING[layout])
        assert [p["phase"] for p in edited["phases"]] == ["quick", "full"], edited
        assert edited["phases"][0]["command"].startswith("pytest tests/test_calc.py "), edited
        assert edited["affected"]["chain"] == ["tests/test_calc.py", AFFECTING[layout]]
        assert edited["exitCode"] == bare.returncode, edited
        assert edited["outcome"] == record["outcome"]
    shown = lang_tools.without_install_folder(said + "\n".join(record["tail"]))
    assert "/lsp-verify-" not in shown  # no temp path of ours
