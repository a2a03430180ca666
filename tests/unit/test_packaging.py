"""What the VS Code bundle ships beside the server: every runtime dependency of the package."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.paths import REPO

# Never part of a clone's contents worth copying, and some are large.
JUNK = (".git", ".venv", "venv", "node_modules", "__pycache__", "*.pyc", ".*_cache",
        ".hypothesis", "build", "dist", "*.egg-info", "out")  # fmt: skip


def _offline_env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PIP_NO_INDEX="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_CACHE_DIR="1",
        HOME=str(tmp / "home"),
        XDG_CACHE_HOME=str(tmp / "cache"),
        XDG_STATE_HOME=str(tmp / "state"),
        XDG_CONFIG_HOME=str(tmp / "config"),
    )
    return env


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        argv,
        cwd=str(cwd),
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"{argv} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("hatchling") is None:
        reason = "hatchling is not installed here, so nothing can be built offline"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {reason}: add hatchling and build to the test extra")
        pytest.skip(reason)
    target = tmp_path_factory.mktemp("clone") / "lsp-verify"
    shutil.copytree(REPO, target, ignore=shutil.ignore_patterns(*JUNK), symlinks=True)
    return target


@pytest.fixture(scope="module")
def dist(clone: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    out = tmp_path_factory.mktemp("dist")
    env = _offline_env(out)
    if importlib.util.find_spec("build") is not None:
        _run(
            [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), "."], clone, env
        )
    else:  # the same PEP 517 hooks `python -m build --no-isolation` calls
        code = (
            "import sys, hatchling.build as b; "
            "b.build_wheel(sys.argv[1]); b.build_sdist(sys.argv[1])"
        )
        _run([sys.executable, "-c", code, str(out)], clone, env)
    yield out


def test_the_vscode_bundle_carries_every_runtime_dependency() -> None:
    """The .vsix bundles the server with pinned copies of its dependencies: one that the
    package needs and the bundle lacks is a server that cannot start in VS Code."""
    import re

    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]

    root = REPO
    project = tomllib.loads((root / "pyproject.toml").read_text())
    needed = {
        re.split(r"[<>=!~;\[ ]", dependency, maxsplit=1)[0].lower().replace("_", "-")
        for dependency in project["project"]["dependencies"]
    }
    bundle = root / "vscode-client" / "bundled" / "requirements.txt"
    pinned = {
        line.split("==", 1)[0].strip().lower().replace("_", "-")
        for line in bundle.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert needed <= pinned, needed - pinned
