"""The README's first command, run for real on the demo project."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO


def test_first_command_exits_1_on_the_demo(tmp_path: Path) -> None:
    """What the README promises for `lsp-verify check examples/demo` (on a copy of it)."""
    demo = tmp_path / "demo"
    shutil.copytree(REPO / "examples" / "demo", demo, ignore=shutil.ignore_patterns("__pycache__"))
    bindir = Path(sys.executable).parent
    env = {
        **os.environ,
        # the activated environment of the README's command: its pytest on PATH
        "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTEST_ADDOPTS": "-p no:cacheprovider",
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    proc = subprocess.run(
        [str(bindir / "lsp-verify"), "check", str(demo)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "tests/test_calc.py:14:" in proc.stdout, proc.stdout
