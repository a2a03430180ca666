"""A detected script's command, run for real from the folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from lsp_verify.planning.plan import make_plan
from tests.support import files
from tests.support.files import write


@pytest.fixture(autouse=True)
def empty_path(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    return files.empty_path(tmp_path_factory, monkeypatch)


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
