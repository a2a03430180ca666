"""A detected plan of the rules after the seed's five runs like every other: its whole
process group is killed at the timeout, the record's tail says so, and nothing it started is
left; the bounded tail keeps the end of a long output. Through `lsp-verify check`, with the
real `just` (tests/support/lang_tools.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support import lang_tools
from tests.support.files import write
from tests.support.procs import alive_with, unique_sleep
from tests.support.stdio import server_env


def check(folder: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = lang_tools.lang_env(server_env(tmp), tmp / "caches")
    return subprocess.run(
        [sys.executable, "-m", "lsp_verify", "check", str(folder), "--json", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_a_detected_just_recipe_is_killed_whole_at_the_timeout(tmp_path: Path) -> None:
    lang_tools.require("just")
    marker = unique_sleep()
    folder = write(
        tmp_path / "project",
        {"justfile": f"test:\n    sleep {marker} & touch started; sleep {marker}\n"},
    )
    done = check(folder, tmp_path, "--timeout-ms", "1500")
    record = json.loads(done.stdout)
    assert (record["runner"], record["command"]) == ("just", "just test")
    assert done.returncode == 124
    assert record["outcome"] == "timed-out"
    assert record["tail"][-1] == "[verify command timed out after 1500ms and was killed]"
    assert (folder / "started").exists()  # the recipe's processes had started
    assert alive_with(marker) == []


def test_a_detected_just_recipe_keeps_the_end_of_its_output(tmp_path: Path) -> None:
    lang_tools.require("just")
    folder = write(
        tmp_path / "project",
        {"justfile": "test:\n    @seq 1 5000\n    @echo last line; exit 3\n"},
    )
    done = check(folder, tmp_path, "--tail-lines", "5")
    record = json.loads(done.stdout)
    assert done.returncode == 3 and record["outcome"] == "failed"
    # The last five lines: the recipe's, then just's own word on the failure.
    assert record["tail"][:4] == ["4998", "4999", "5000", "last line"]
    assert record["tail"][4].startswith("error: recipe `test` failed")
