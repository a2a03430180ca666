"""Red in seconds: time from a save to the first verify error, with failed first and without.

    python benchmarks/feedback.py [--tests 400] [--seconds 10] [--rounds 3] [--quick]

Builds a synthetic pytest suite (--tests tests taking --seconds in all, the one failing test
collected last) twice, and drives two real servers over stdio, one per copy: failedFirst on
(the default) and off (the bare command), alternating. For each round it times, from the
didSave notification:
  (a) the last test still failing, a source file saved: to the first verify error;
  (b) a new failure in the saved test file (the suite passed before): to the first error;
  (c) that test fixed, its file saved: to the cleared state (its diagnostics empty).
It prints the medians and the ratios: to the bare command through the server, and to the
runner's startup plus the failing test's own time (an assert: nil), taken as pytest starting
and collecting the whole suite without running it (`pytest -q --co`); the goal is at most
1.5 for (a) and (b). The failing test run alone is printed too. Figures only: nothing is
asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsp import Client  # benchmarks/lsp.py: the standard-library LSP client

FILES = 20
LAST = "tests/test_m{:02d}.py"


def test_file(index: int, per_file: int, pause: float, failing: bool) -> str:
    lines = ["import time", ""]
    for n in range(per_file):
        lines += [f"def test_{n:03d}():", f"    time.sleep({pause})", ""]
    if index == FILES - 1:
        lines += ["def test_last():", f"    assert {'1 == 2' if failing else '1 == 1'}", ""]
    return "\n".join(lines)


def build(folder: Path, tests: int, seconds: float) -> None:
    (folder / "tests").mkdir(parents=True)
    (folder / "src").mkdir()
    (folder / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    (folder / "src" / "mod.py").write_text("VALUE = 1\n")
    per_file = max(1, (tests - 1) // FILES)
    pause = seconds / max(1, per_file * FILES)
    for index in range(FILES):
        text = test_file(index, per_file, pause, failing=False)
        (folder / LAST.format(index)).write_text(text)
    (folder / ".pause").write_text(f"{per_file} {pause}")


def set_last(folder: Path, failing: bool) -> str:
    per_file, pause = (folder / ".pause").read_text().split()
    path = folder / LAST.format(FILES - 1)
    path.write_text(test_file(FILES - 1, int(per_file), float(pause), failing))
    return path.as_uri()


class Server:
    """One lsp-verify over stdio for one copy of the suite."""

    def __init__(self, folder: Path, env: dict[str, str], failed_first: bool) -> None:
        self.folder = folder
        self.client = Client([sys.executable, "-m", "lsp_verify"], env)
        options = {"confirm": "never", "timeoutMs": 600_000, "failedFirst": failed_first}
        self.client.initialize([folder], options)

    def save(self, uri: str) -> float:
        self.client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        return time.perf_counter()

    def first_error(self, start: float) -> float:
        """Seconds from `start` to the first publish holding a verify error."""
        while True:
            message = self.client.read(timeout=600)
            params = message.get("params") or {}
            published = message.get("method") == "textDocument/publishDiagnostics"
            if published and any(_is_error(d) for d in params["diagnostics"]):
                return time.perf_counter() - start

    def cleared(self, start: float, uri: str) -> float:
        """Seconds from `start` to the publish that leaves `uri` without verify diagnostics."""
        while True:
            message = self.client.read(timeout=600)
            params = message.get("params") or {}
            published = message.get("method") == "textDocument/publishDiagnostics"
            if (
                published
                and params["uri"] == uri
                and not any(_is_verify(d) for d in params["diagnostics"])
            ):
                return time.perf_counter() - start

    def idle(self) -> None:
        """Until the run ends (its record delivered, the folder idle again)."""
        while True:
            message = self.client.read(timeout=600)
            params = message.get("params") or {}
            status = message.get("method") == "verify/status"
            if status and params.get("state") == "idle" and params.get("lastOutcome"):
                return

    def run(self, uri: str) -> None:
        self.save(uri)
        self.idle()


def _is_verify(diagnostic: dict[str, Any]) -> bool:
    return bool(diagnostic.get("source") == "verify")


def _is_error(diagnostic: dict[str, Any]) -> bool:
    return _is_verify(diagnostic) and diagnostic.get("severity") == 1


def round_of(server: Server) -> dict[str, float]:
    """(a), (c), (b) in that order; the suite is left failing, its failure in the cache."""
    folder = server.folder
    times: dict[str, float] = {}
    source = (folder / "src" / "mod.py").as_uri()
    start = server.save(source)
    times["a"] = server.first_error(start)
    server.idle()
    uri = set_last(folder, failing=False)
    start = server.save(uri)
    times["c"] = server.cleared(start, uri)
    server.idle()
    uri = set_last(folder, failing=True)
    start = server.save(uri)
    times["b"] = server.first_error(start)
    server.idle()
    return times


def wall(command: list[str], folder: Path, env: dict[str, str], runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, cwd=folder, env=env, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=400, help="tests in the suite")
    parser.add_argument("--seconds", type=float, default=10.0, help="the suite's test time")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of (a), (c), (b)")
    parser.add_argument("--quick", action="store_true", help="40 tests, 1 s, one round (CI)")
    args = parser.parse_args()
    if args.quick:
        args.tests, args.seconds, args.rounds = 40, 1.0, 1

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = dict(os.environ)
        for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            env[name] = str(root / name.lower())
        # The suite's pytest is this interpreter's, without the plugins of this environment.
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        env.pop("PYTEST_ADDOPTS", None)
        ours_dir, bare_dir = root / "failed-first", root / "bare"
        for folder in (ours_dir, bare_dir):
            build(folder, args.tests, args.seconds)
            set_last(folder, failing=True)

        pytest = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
        alone_command = [*pytest, LAST.format(FILES - 1) + "::test_last"]
        collect_command = [*pytest, "--co"]
        bare_time = wall([*pytest], bare_dir, env, runs=1)
        print(f"suite: {args.tests} tests, {args.seconds:g} s of test time; the failing test last")
        print(f"bare `pytest -x -q` to its exit: {bare_time:.2f} s")

        servers = {
            "failed first": Server(ours_dir, env, True),
            "bare": Server(bare_dir, env, False),
        }
        results: dict[str, dict[str, list[float]]] = {k: {} for k in servers}
        try:
            for server in servers.values():  # the failure is in the cache from here on
                server.run((server.folder / "src" / "mod.py").as_uri())
            alone_times, collect_times = [], []
            for n in range(args.rounds):
                # The machine's speed drifts: the references are measured in every round too.
                alone_times.append(wall(alone_command, bare_dir, env, runs=1))
                collect_times.append(wall(collect_command, bare_dir, env, runs=1))
                order = list(servers) if n % 2 == 0 else list(reversed(servers))
                for name in order:
                    for key, value in round_of(servers[name]).items():
                        results[name].setdefault(key, []).append(value)
        finally:
            for server in servers.values():
                server.client.close()

    alone = statistics.median(alone_times)
    # The runner's startup for this suite: start and collect it all, run nothing. The failing
    # test's own time is nil (an assert), so this is "startup plus the failing test".
    startup = statistics.median(collect_times)
    print(f"the failing test alone (`pytest -x -q FILE::test_last`): {alone:.2f} s")
    print(f"startup: collect the whole suite, run nothing (`pytest -q --co`): {startup:.2f} s")
    labels = {
        "a": "(a) last test still failing -> first error",
        "b": "(b) failure in the saved test file -> first error",
        "c": "(c) fixed -> cleared",
    }
    print(f"save -> diagnostics through the server over stdio, median of {args.rounds} round(s)")
    print(f"{'':52} {'failedFirst':>11} {'bare':>8} {'ratio':>6} {'/ startup':>10}")
    for key in ("a", "b", "c"):
        ours = statistics.median(results["failed first"][key])
        bare = statistics.median(results["bare"][key])
        goal = f"{ours / startup:6.2f} x" if key != "c" else "-"
        print(f"{labels[key]:52} {ours:10.2f}s {bare:7.2f}s {ours / bare:6.2f} {goal:>10}")
    print("goal: (a) and (b) within 1.5 x startup; (c) the same as bare within noise")
    return 0


if __name__ == "__main__":
    sys.exit(main())
