"""A detected script's command, run for real from the folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from lsp_verify.planning.plan import make_plan


@pytest.fixture(autouse=True)
def empty_path(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH holds only a folder the test controls, so `uv` is found only when a test puts it."""
    bin_dir = tmp_path_factory.mktemp("bin")
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


def write(folder: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return folder


# --- the detector's table, row by row, positive and negative ----------------------------------


# --- which pytest ---------------------------------------------------------------------------


# --- polyglot --------------------------------------------------------------------------------


# --- npm details, snapshot and fingerprint ---------------------------------------------------


# --- sources and their precedence (acceptance 2) ---------------------------------------------


def all_sources(folder: Path) -> None:
    write(
        folder,
        {
            ".lsp-verify.toml": 'command = "make check"\n',
            ".gptme/verify-completion.sh": "#!/bin/sh\necho verified > verified.txt\n",
            "pytest.ini": "",
        },
    )
    (folder / ".gptme" / "verify-completion.sh").chmod(0o755)


def test_script_command_runs_from_the_folder(tmp_path: Path) -> None:
    all_sources(tmp_path)
    (tmp_path / ".lsp-verify.toml").unlink()
    plan = make_plan(str(tmp_path))
    assert plan.command is not None
    subprocess.run(["/bin/sh", "-c", plan.command], cwd=tmp_path, check=True, timeout=10)
    assert (tmp_path / "verified.txt").read_text() == "verified\n"


# --- bad input never raises (acceptance 3) ----------------------------------------------------


# --- reads only root-level files (acceptance 6) -----------------------------------------------
