"""Fixtures the end-to-end tests share, and the quick loop: `pytest -m unit`."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.support import properties

pytest_plugins = ["tests.support.no_skips"]  # under CI, a skipped test fails the run

HERE = Path(__file__).resolve().parent
UNIT = HERE / "unit"


def _quick(config: pytest.Config) -> bool:
    """`pytest -m unit` alone: the quick loop while editing the code."""
    return bool(config.getoption("markexpr", "").strip() == "unit")


def _fewer_examples(config: pytest.Config) -> bool:
    """The quick loop on a developer's machine; never under CI, whose unit stage is the only
    run of the property tests."""
    return _quick(config) and not os.environ.get("CI")


_CACHE_HOME: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    properties.quick(_fewer_examples(config))  # property tests try fewer examples there
    # A run in this process keeps its import graph under XDG_CACHE_HOME (affected first):
    # never in the real home, whichever test runs a plan.
    _CACHE_HOME.append(tempfile.mkdtemp(prefix="lsp-verify-tests-cache-"))
    os.environ["XDG_CACHE_HOME"] = _CACHE_HOME[-1]


def pytest_unconfigure(config: pytest.Config) -> None:
    for path in _CACHE_HOME:
        shutil.rmtree(path, ignore_errors=True)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """In the quick loop, nothing outside tests/unit is collected: only tests/unit's tests are
    marked unit, so nothing else would be selected, and importing it costs seconds."""
    path = collection_path.resolve()
    if _quick(config) and HERE in path.parents and path != UNIT and UNIT not in path.parents:
        return True
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The `vsix` tests read the packaged extension, which only `npm run package` makes:
    .ci/vscode.sh runs them after packaging, with LSP_VERIFY_VSIX naming it. Elsewhere they
    are deselected, not skipped: there is nothing they could check."""
    if os.environ.get("LSP_VERIFY_VSIX"):
        return
    dropped = [item for item in items if item.get_closest_marker("vsix")]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if not item.get_closest_marker("vsix")]


@pytest.fixture
def state(tmp_path: Path) -> Path:
    """A folder for the server's XDG state, config and cache dirs: never the real home."""
    path = tmp_path / "state"
    path.mkdir()
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty workspace folder; test modules that need files override it."""
    root = tmp_path / "project"
    root.mkdir()
    return root
