"""Red in seconds: time from a save to the first verify error, with failed first and without.

    python benchmarks/feedback.py [--tests 400] [--seconds 10] [--rounds 3] [--quick]
                                  [--cases all|failed|affected]

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
1.5 for (a) and (b). The failing test run alone is printed too.

Affected first (`--cases affected`): a suite of 40 test files (--seconds of test time in
all) in which app/target.py is imported by app/service.py, imported by the test file
collected last, and app/direct.py by the test file collected next to last. Two servers again,
affectedFirst on (the default) and failedFirst off (the bare command). Each round, after a
passing run:
  (d) app/target.py broken and saved (a transitive import): to the first verify error;
  (e) app/direct.py broken and saved (a direct import): to the first verify error;
  (f) each fixed and saved: to the cleared state (green: the full suite must pass).
The goal: (d) and (e) within 1.5 x (the affected test file run alone) + 1.2 s; (f) within
10% of the bare command's. Figures only: nothing is asserted.
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

# tests/support holds the one LSP client of the tests and the benchmarks.
sys.path.append(str(Path(__file__).resolve().parents[1]))

from tests.support.stdio import Reply, StdioClient, initialize_session, stop

CAPABILITIES = {"textDocument": {"synchronization": {"didSave": True}}}

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
        # Every request of the server's (progress, watchers) is answered with null.
        self.client = StdioClient(env=env, answers=lambda request: Reply(None))
        options = {"confirm": "never", "timeoutMs": 600_000, "failedFirst": failed_first}
        initialize_session(self.client, [folder], options, CAPABILITIES)

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


AFFECTED_FILES = 40
DIRECT, TRANSITIVE = "tests/test_y_direct.py", "tests/test_z_service.py"


def build_affected(folder: Path, seconds: float) -> None:
    """38 slow test files, then the direct importer, then the transitive one."""
    (folder / "tests").mkdir(parents=True)
    (folder / "app").mkdir()
    (folder / "pytest.ini").write_text("[pytest]\ntestpaths = tests\npythonpath = .\n")
    (folder / "app" / "__init__.py").write_text("")
    (folder / "app" / "service.py").write_text(
        "from app.target import value\n\n\ndef doubled():\n    return value() * 2\n"
    )
    set_module(folder, "target", broken=False)
    set_module(folder, "direct", broken=False)
    slow = AFFECTED_FILES - 2
    per_file = 10
    pause = seconds / (slow * per_file)
    for index in range(slow):
        lines = ["import time", ""]
        for n in range(per_file):
            lines += [f"def test_{n:03d}():", f"    time.sleep({pause})", ""]
        (folder / f"tests/test_m{index:02d}.py").write_text("\n".join(lines))
    (folder / DIRECT).write_text(
        "from app.direct import direct\n\n\ndef test_direct():\n    assert direct() == 1\n"
    )
    (folder / TRANSITIVE).write_text(
        "from app import service\n\n\ndef test_doubled():\n    assert service.doubled() == 2\n"
    )


def set_module(folder: Path, name: str, broken: bool) -> str:
    path = folder / "app" / f"{name}.py"
    function = "value" if name == "target" else "direct"
    path.write_text(f"def {function}():\n    return {5 if broken else 1}\n")
    return path.as_uri()


def affected_round(server: Server) -> dict[str, float]:
    """(d) then its fix, (e) then its fix; each break after a passing run."""
    folder = server.folder
    times: dict[str, float] = {}
    for key, module, test in (("d", "target", TRANSITIVE), ("e", "direct", DIRECT)):
        start = server.save(set_module(folder, module, broken=True))
        times[key] = server.first_error(start)
        server.idle()
        start = server.save(set_module(folder, module, broken=False))
        times["f" + key] = server.cleared(start, (folder / test).as_uri())
        server.idle()
    return times


def measure_affected(root: Path, env: dict[str, str], seconds: float, rounds: int) -> None:
    ours_dir, bare_dir = root / "affected-first", root / "affected-bare"
    for folder in (ours_dir, bare_dir):
        build_affected(folder, seconds)
    pytest = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
    print(f"affected first: {AFFECTED_FILES} test files, {seconds:g} s of test time")
    servers = {"affected": Server(ours_dir, env, True), "bare": Server(bare_dir, env, False)}
    results: dict[str, dict[str, list[float]]] = {k: {} for k in servers}
    alone: dict[str, list[float]] = {DIRECT: [], TRANSITIVE: []}
    suite: list[float] = []
    try:
        for server in servers.values():  # the passing run the first break comes after
            server.run((server.folder / "app" / "target.py").as_uri())
        for n in range(rounds):
            for test in alone:
                alone[test].append(wall([*pytest, test], bare_dir, env, runs=1))
            suite.append(wall(pytest, bare_dir, env, runs=1))
            order = list(servers) if n % 2 == 0 else list(reversed(servers))
            for name in order:
                for key, value in affected_round(servers[name]).items():
                    results[name].setdefault(key, []).append(value)
    finally:
        for server in servers.values():
            stop(server.client)
    print(f"bare `pytest -x -q` to its exit: {statistics.median(suite):.2f} s")
    goals = {
        key: statistics.median(alone[test]) for key, test in (("d", TRANSITIVE), ("e", DIRECT))
    }
    for key, test in (("d", TRANSITIVE), ("e", DIRECT)):
        print(f"the affected test file alone (`pytest -x -q {test}`): {goals[key]:.2f} s")
    labels = {
        "d": "(d) transitive import broken -> first error",
        "e": "(e) direct import broken -> first error",
        "fd": "(f) target fixed -> cleared",
        "fe": "(f) direct fixed -> cleared",
    }
    print(f"save -> diagnostics through the server over stdio, median of {rounds} round(s)")
    print(f"{'':52} {'affected':>11} {'bare':>8} {'ratio':>6} {'goal':>8}")
    for key, label in labels.items():
        ours = statistics.median(results["affected"][key])
        bare = statistics.median(results["bare"][key])
        goal = 1.5 * goals[key] + 1.2 if key in goals else 1.1 * bare
        print(f"{label:52} {ours:10.2f}s {bare:7.2f}s {ours / bare:6.2f} {goal:7.2f}s")
    print("goal: (d) and (e) within 1.5 x the file alone + 1.2 s; (f) within 10% of bare")


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
    parser.add_argument("--cases", choices=("all", "failed", "affected"), default="all")
    args = parser.parse_args()
    if args.quick:
        args.tests, args.seconds, args.rounds = 40, 1.0, 1
    if args.cases in ("all", "failed"):
        failed_first(args)
    if args.cases in ("all", "affected"):
        with tempfile.TemporaryDirectory() as tmp:
            measure_affected(Path(tmp), environment(Path(tmp)), args.seconds, args.rounds)
    return 0


def environment(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        env[name] = str(root / name.lower())
    # The suite's pytest is this interpreter's, without the plugins of this environment.
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env.pop("PYTEST_ADDOPTS", None)
    return env


def failed_first(args: argparse.Namespace) -> None:
    """(a), (b), (c)."""

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = environment(root)
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
                stop(server.client)

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


if __name__ == "__main__":
    sys.exit(main())
