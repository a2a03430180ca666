"""Where the agent the tests drive is installed (tests/tools/install-*.sh put it there)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def installed(variable: str, program: str, script: str) -> str:
    """The agent's executable under the folder `variable` names; skipped when it names none
    (under CI, tests/support/no_skips.py makes that a failure)."""
    folder = os.environ.get(variable)
    if not folder:
        pytest.skip(f"{variable} is not set (tests/tools/{script} DIR)")
    path = Path(folder) / "node_modules" / ".bin" / program
    assert path.exists(), f"no {program} at {path}: run tests/tools/{script} {folder}"
    return str(path)
