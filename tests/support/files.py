"""Projects written for a test, and a PATH the test controls."""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

import pytest


def write(folder: Path, files: dict[str, str] | dict[str, str | bytes]) -> Path:
    """Each file under `folder` (parents made), text as UTF-8 or bytes as they are."""
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return folder


def empty_path(factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH holds only a folder the test controls (returned), so a tool such as `uv` is found
    only when the test puts it there."""
    bin_dir = factory.mktemp("bin")
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


def record_joins(monkeypatch: pytest.MonkeyPatch, root: Path, *modules: ModuleType) -> set[str]:
    """The names joined to `root` through `os.path.join` in each of `modules` from now on:
    what they look at in the folder (the set fills as they run)."""
    touched: set[str] = set()
    original_join = os.path.join

    def recording_join(base: str, *parts: str) -> str:
        if base == str(root) and parts:
            touched.add("/".join(parts))
        return original_join(base, *parts)

    for module in modules:
        monkeypatch.setattr(module.os.path, "join", recording_join)
    return touched
