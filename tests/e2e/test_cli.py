"""The command line as a process: a closed pipe, --version."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_a_reader_that_goes_away_gives_no_traceback(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `lsp-verify explain | head` once head has exited
    try:
        done = subprocess.run(
            [sys.executable, "-m", "lsp_verify", "explain", str(tmp_path)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            timeout=30,
        )
    finally:
        os.close(write_end)
    assert done.stderr == b""
    assert done.returncode == 0  # explain's own status: the closed pipe changes nothing


CHECK = [sys.executable, "-m", "lsp_verify", "check"]


def test_a_reader_that_goes_away_leaves_checks_verdict(tmp_path: Path) -> None:
    """`lsp-verify check --json | head -1`: the exit status is still the verdict's, however
    early the reader leaves."""
    for closed_early in (True, False):
        read_end, write_end = os.pipe()
        if closed_early:
            os.close(read_end)
        try:
            done = subprocess.run(
                [*CHECK, str(tmp_path), "--json", "--command", "echo one; echo two; exit 5"],
                stdout=write_end,
                stderr=subprocess.PIPE,
                timeout=60,
            )
        finally:
            os.close(write_end)
            if not closed_early:
                os.close(read_end)
        assert done.stderr == b""
        assert done.returncode == 5


def test_version_prints_the_package_version() -> None:
    import lsp_verify

    done = subprocess.run(
        [sys.executable, "-m", "lsp_verify", "--version"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        f"lsp-verify {lsp_verify.__version__}\n",
        "",
    )
