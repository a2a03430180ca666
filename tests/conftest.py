"""Fixtures the end-to-end tests share."""

from __future__ import annotations

from pathlib import Path

import pytest


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
