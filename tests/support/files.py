"""Projects written for a test, and a PATH the test controls."""

from __future__ import annotations

from pathlib import Path

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
