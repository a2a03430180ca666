"""Fixtures the end-to-end tests share, and the quick loop's property examples."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import properties


def pytest_configure(config: pytest.Config) -> None:
    # `pytest -m unit` alone is the quick loop: property tests try fewer examples there.
    properties.quick(config.getoption("markexpr", "").strip() == "unit")


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
