"""The benchmarks run small: benchmarks/detect.py prints its figures, and benchmarks/lsp.py times
the servers it says it times."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.support import files
from tests.support.paths import REPO

XDG = ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")


def benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("benchmark_lsp", REPO / "benchmarks" / "lsp.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_baseline_server_runs_the_baseline_tree_when_started_from_this_trees_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `python benchmarks/lsp.py --baseline DIR` from this tree's root: `python -m` puts the
    # working folder first on sys.path, and the "baseline" server would be this tree again.
    tree = tmp_path / "old"
    (tree / "lsp_verify").mkdir(parents=True)
    (tree / "lsp_verify" / "__init__.py").write_text("")
    marker = tmp_path / "ran"
    (tree / "lsp_verify" / "__main__.py").write_text(
        "import os, pathlib\npathlib.Path(os.environ['MARKER']).write_text(__file__)\n"
    )
    lsp = benchmark()
    monkeypatch.chdir(REPO)
    runs = tmp_path / "runs"
    runs.mkdir()
    # Whichever server starts, it finds no home or state of the user's.
    env = {**os.environ, "MARKER": str(marker), "HOME": str(tmp_path / "home")}
    env.update({name: str(tmp_path / name.lower()) for name in XDG})
    client = lsp.server_client(env, runs, os.path.relpath(tree, REPO))
    client.proc.stdin.close()  # a real server ends at the end of its input
    try:
        client.proc.wait(timeout=60)
    finally:
        client.proc.kill()
        client.proc.wait()
        client.proc.stdout.close()
    assert marker.exists(), "the server started was not the baseline's"
    assert Path(marker.read_text()).resolve() == (tree / "lsp_verify" / "__main__.py").resolve()


@pytest.mark.parametrize("option", ["--rounds", "--starts"])
def test_a_count_of_nothing_is_a_usage_error_not_a_traceback(option: str) -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "lsp.py"), option, "0", "--no-compile"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert f"{option}: not a whole number of at least 1: '0'" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.fixture
def empty_path(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    return files.empty_path(tmp_path_factory, monkeypatch)


@pytest.mark.usefixtures("empty_path")
def test_benchmark_runs_small_and_prints_its_figures(tmp_path: Path) -> None:
    script = REPO / "benchmarks" / "detect.py"
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, str(script), "--files", "300", "--calls", "200"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    lines = dict(
        line.split(":", 1) for line in result.stdout.splitlines() if line.startswith("median")
    )
    # A figure, not a timed test: the benchmark prints its median (the budget, 5 ms, is read
    # from a full run, not asserted on a loaded machine).
    assert float(lines["median"].split()[0]) > 0, result.stdout
    assert "files: 300" in result.stdout
    assert list(tmp_path.iterdir()) == []  # the benchmark cleans up its tree
