"""The language server as a client sees it: startup, memory, save -> diagnostics, latency.

    python benchmarks/lsp.py [--rounds 30] [--starts 5]

An LSP client over stdio (tests/support/stdio.py, standard library only). It prints:
- spawn -> initialize response, for lsp-verify and for a do-nothing pygls 2 server, started
  alternately in the same run (this machine's speed drifts; the ratio is of paired starts);
- RSS of the server after `initialized`;
- save -> publishDiagnostics, median and p90 over --rounds saves, for a trivial failing
  command (`exit 1`), and the bare cost of that command (`sh -c 'exit 1'` from Python);
- the latency of a cheap request (verify.showLastRun) while a 5 s run is in flight.
Figures only: nothing is asserted.

The server is measured as an installed one runs: with its modules' bytecode compiled, which
`pip install` does. An editable install under PYTHONDONTWRITEBYTECODE=1 never writes it, and
every start would compile the sources again, so the benchmark compiles them first
(`--no-compile` measures that slower start instead).
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# tests/support holds the one LSP client of the tests and the benchmarks (after what is
# installed: lsp_verify is imported from where the server would import it).
sys.path.append(str(Path(__file__).resolve().parents[1]))

from tests.support.procs import private_kib, status_kib
from tests.support.stdio import Reply, StdioClient, initialize_session, stop

CAPABILITIES = {"textDocument": {"synchronization": {"didSave": True}}}
DO_NOTHING = "from pygls.lsp.server import LanguageServer\nLanguageServer('idle', '1').start_io()\n"


def spawn(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> StdioClient:
    """A server over stdio whose requests to the client are all answered with null."""
    return StdioClient(argv=argv, env=env, cwd=cwd, answers=lambda request: Reply(None))


def initialize(
    client: StdioClient, started: float, folders: list[Path], options: Any = None
) -> float:
    """Seconds from `started` (time.monotonic() before the spawn) to the initialize response."""
    initialize_session(client, folders, options, CAPABILITIES)
    return client.answered_at[1] - started


def rss_mb(client: StdioClient) -> float:
    """The serving process's resident memory (the keeper's child where there is one), MiB."""
    return status_kib(client.pids()[-1], "VmRSS:") / 1024


def keeper_private_mb(client: StdioClient) -> float:
    """What the keeper costs beyond the pages it shares with the server: 0 without one."""
    if client.pids()[-1] == client.proc.pid:
        return 0.0
    return private_kib(client.proc.pid) / 1024


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def server_client(env: dict[str, str], cwd: Path, tree: str | None = None) -> StdioClient:
    """lsp-verify's server as `import lsp_verify` finds it here, or the one of source tree
    `tree`. It starts in `cwd`, not in this process's folder: `python -m` puts its working
    folder first on sys.path, so started from a tree's root it would run that tree's package
    whatever PYTHONPATH says (a baseline would be this tree again)."""
    if tree is not None:
        paths = [str(Path(tree).resolve()), *filter(None, [env.get("PYTHONPATH")])]
        env = {**env, "PYTHONPATH": os.pathsep.join(paths)}
    return spawn([sys.executable, "-m", "lsp_verify"], env, cwd=cwd)


def save_round(client: StdioClient, folder: Path) -> tuple[float, float]:
    """One save of `folder`/a.txt: seconds to its publishDiagnostics, then seconds of a bare
    run of the same command once the server is quiet again."""
    uri = (folder / "a.txt").as_uri()
    started = time.perf_counter()
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    while True:
        message = client.notification("textDocument/publishDiagnostics", timeout=30)
        if message["params"]["uri"] == uri:
            break
    latency = time.perf_counter() - started
    # The server is quiet again (its log line and idle status sent) before the bare run, so
    # that its last writes cannot slow the bare command down.
    while True:
        message = client.notification("verify/status", timeout=30)
        if message["params"]["folder"] == folder.as_uri() and message["params"]["state"] == "idle":
            break
    started = time.perf_counter()
    subprocess.run(["sh", "-c", "exit 1"], cwd=folder)
    return latency, time.perf_counter() - started


def positive(text: str) -> int:
    """A count of at least 1 (a median of nothing is no figure)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a whole number of at least 1: {text!r}")
    return value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=positive, default=30, help="saves to time")
    parser.add_argument("--starts", type=positive, default=5, help="paired server starts to time")
    parser.add_argument("--long-run", type=float, default=5.0, help="seconds of the long run")
    parser.add_argument(
        "--no-compile", action="store_true", help="do not compile lsp_verify's bytecode first"
    )
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        help="a source tree of lsp-verify whose server is timed save by save alongside",
    )
    args = parser.parse_args()
    if args.baseline and not (Path(args.baseline) / "lsp_verify").is_dir():
        parser.error(f"--baseline: no lsp_verify package in {args.baseline}")
    if not args.no_compile:
        import lsp_verify

        packages = [Path(lsp_verify.__file__).parent]
        if args.baseline:
            packages.append(Path(args.baseline) / "lsp_verify")
        for package in packages:
            compileall.compile_dir(str(package), quiet=1)
            print(f"bytecode of {package} compiled first, as pip install does")

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = dict(os.environ)
        for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            env[name] = str(root / name.lower())
        idle = root / "idle_server.py"
        idle.write_text(DO_NOTHING)
        quick, slow = root / "quick", root / "slow"
        quick.mkdir()
        slow.mkdir()
        (quick / ".lsp-verify.toml").write_text('command = "exit 1"\n')
        (slow / ".lsp-verify.toml").write_text(f'command = "sleep {args.long_run}"\n')
        (quick / "a.txt").write_text("x\n")
        options = {"confirm": "never"}
        theirs = [sys.executable, str(idle)]

        ratios, our_starts, idle_starts = [], [], []
        for _ in range(args.starts):
            started = time.monotonic()
            a = server_client(env, root)
            our_time = initialize(a, started, [quick], options)
            stop(a, timeout=10)
            started = time.monotonic()
            b = spawn(theirs, env)
            idle_time = initialize(b, started, [quick])
            idle_rss = rss_mb(b)
            stop(b, timeout=10)
            our_starts.append(our_time)
            idle_starts.append(idle_time)
            ratios.append(our_time / idle_time)
        print(
            f"spawn -> initialize: lsp-verify median {statistics.median(our_starts) * 1000:.0f} ms"
        )
        print(
            "spawn -> initialize: do-nothing pygls 2 median "
            f"{statistics.median(idle_starts) * 1000:.0f} ms"
        )
        print(f"spawn -> initialize: median of paired ratios {statistics.median(ratios):.3f}")

        client = server_client(env, root)
        initialize_session(client, [quick, slow], options, CAPABILITIES)
        time.sleep(0.5)
        print(
            f"RSS after initialized: lsp-verify {rss_mb(client):.1f} MB, "
            f"do-nothing {idle_rss:.1f} MB"
        )
        print(f"the keeper's private memory: {keeper_private_mb(client):.1f} MB")

        # Alternate a save and a bare run of the same command, round by round, and compare
        # pairs: the machine's speed drifts too much for two separate series. A baseline
        # server takes its turn in each round, first in every other one.
        baseline = None
        if args.baseline:
            baseline = server_client(env, root, args.baseline)
            initialize_session(baseline, [quick], options, CAPABILITIES)
            time.sleep(0.5)
        ours_rounds: list[tuple[float, float]] = []
        baseline_rounds: list[tuple[float, float]] = []
        for number in range(args.rounds):
            turns = [(client, ours_rounds)]
            if baseline is not None:
                turns.append((baseline, baseline_rounds))
            for server, rounds in turns[:: 1 if number % 2 == 0 else -1]:
                rounds.append(save_round(server, quick))
        latencies = [latency for latency, _ in ours_rounds]
        differences = [latency - bare for latency, bare in ours_rounds]
        print(
            f"save -> diagnostics: median {statistics.median(latencies) * 1000:.2f} ms, "
            f"p90 {pct(latencies, 0.9) * 1000:.2f} ms over {args.rounds} saves"
        )
        bare_times = [bare for _, bare in ours_rounds]
        print(
            f"bare command (sh -c 'exit 1'): median {statistics.median(bare_times) * 1000:.2f} ms"
        )
        print(
            "save -> diagnostics over the bare command, median of paired differences: "
            f"{statistics.median(differences) * 1000:.2f} ms"
        )
        if baseline is not None:
            stop(baseline, timeout=10)
            over = [latency - bare for latency, bare in baseline_rounds]
            print(
                f"the same for the baseline ({args.baseline}): "
                f"{statistics.median(over) * 1000:.2f} ms"
            )
            print(
                "this tree minus the baseline, median of the differences round by round: "
                f"{statistics.median(a - b for a, b in zip(differences, over)) * 1000:+.3f} ms"
            )

        client.notify("textDocument/didSave", {"textDocument": {"uri": (slow / "b.txt").as_uri()}})
        time.sleep(0.5)
        cheap = []
        for _ in range(20):
            started = time.perf_counter()
            rid = client.request(
                "workspace/executeCommand", {"command": "verify.showLastRun", "arguments": []}
            )
            client.response(rid, timeout=30)
            cheap.append(time.perf_counter() - started)
        print(
            f"verify.showLastRun during a {args.long_run:g} s run: median "
            f"{statistics.median(cheap) * 1000:.2f} ms, max {max(cheap) * 1000:.2f} ms"
        )
        stop(client, timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
