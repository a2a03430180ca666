"""The language server as a client sees it: startup, memory, save -> diagnostics, latency.

    python benchmarks/lsp.py [--rounds 30] [--starts 5]

An LSP client over stdio written with the standard library only. It prints:
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
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DO_NOTHING = "from pygls.lsp.server import LanguageServer\nLanguageServer('idle', '1').start_io()\n"


def _status_mb(pid: int, field: str) -> float:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    return float("nan")


class Client:
    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path | None = None) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )
        self.buffer = b""
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.proc.stdin.flush()

    def request(self, method: str, params: Any) -> int:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        return self.next_id

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def read(self, timeout: float = 30) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while True:
            header_end = self.buffer.find(b"\r\n\r\n")
            if header_end >= 0:
                length = 0
                for line in self.buffer[:header_end].split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                end = header_end + 4 + length
                if len(self.buffer) >= end:
                    body = self.buffer[header_end + 4 : end]
                    self.buffer = self.buffer[end:]
                    message: dict[str, Any] = json.loads(body)
                    if "id" in message and "method" in message:  # a request to us: answer it
                        self.send({"id": message["id"], "result": None})
                    return message
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError("no message from the server")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise EOFError("the server closed its output")
            self.buffer += chunk

    def wait_response(self, request_id: int) -> dict[str, Any]:
        while True:
            message = self.read()
            if message.get("id") == request_id and "method" not in message:
                return message

    def wait_method(self, method: str) -> dict[str, Any]:
        while True:
            message = self.read()
            if message.get("method") == method:
                return message

    def initialize(self, folders: list[Path], options: Any = None) -> float:
        """Returns seconds from spawn to the initialize response."""
        rid = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": folders[0].as_uri(),
                "workspaceFolders": [{"uri": f.as_uri(), "name": f.name} for f in folders],
                "capabilities": {"textDocument": {"synchronization": {"didSave": True}}},
                "initializationOptions": options,
            },
        )
        self.wait_response(rid)
        elapsed = time.perf_counter() - self.started
        self.notify("initialized", {})
        return elapsed

    def server_pid(self) -> int:
        """The process that serves: on Linux lsp-verify forks at start, and the pid the
        editor started stays behind as the server's keeper (lsp_verify/reaper)."""
        try:
            with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as handle:
                children = [int(p) for p in handle.read().split()]
        except OSError:
            children = []
        return children[0] if children else self.proc.pid

    def rss_mb(self) -> float:
        return _status_mb(self.server_pid(), "VmRSS:")

    def keeper_private_mb(self) -> float:
        """What the keeper costs beyond the pages it shares with the server: 0 without one."""
        if self.server_pid() == self.proc.pid:
            return 0.0
        total = 0
        with open(f"/proc/{self.proc.pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith(("Private_Clean:", "Private_Dirty:")):
                    total += int(line.split()[1])
        return total / 1024

    def close(self) -> None:
        try:
            rid = self.request("shutdown", None)
            self.wait_response(rid)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except (OSError, TimeoutError, EOFError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def server_client(env: dict[str, str], cwd: Path, tree: str | None = None) -> Client:
    """lsp-verify's server as `import lsp_verify` finds it here, or the one of source tree
    `tree`. It starts in `cwd`, not in this process's folder: `python -m` puts its working
    folder first on sys.path, so started from a tree's root it would run that tree's package
    whatever PYTHONPATH says (a baseline would be this tree again)."""
    if tree is not None:
        paths = [str(Path(tree).resolve()), *filter(None, [env.get("PYTHONPATH")])]
        env = {**env, "PYTHONPATH": os.pathsep.join(paths)}
    return Client([sys.executable, "-m", "lsp_verify"], env, cwd=cwd)


def save_round(client: Client, folder: Path) -> tuple[float, float]:
    """One save of `folder`/a.txt: seconds to its publishDiagnostics, then seconds of a bare
    run of the same command once the server is quiet again."""
    uri = (folder / "a.txt").as_uri()
    started = time.perf_counter()
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    while True:
        message = client.wait_method("textDocument/publishDiagnostics")
        if message["params"]["uri"] == uri:
            break
    latency = time.perf_counter() - started
    # The server is quiet again (its log line and idle status sent) before the bare run, so
    # that its last writes cannot slow the bare command down.
    while True:
        message = client.wait_method("verify/status")
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
            a = server_client(env, root)
            our_time = a.initialize([quick], options)
            a.close()
            b = Client(theirs, env)
            idle_time = b.initialize([quick])
            idle_rss = b.rss_mb()
            b.close()
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
        client.initialize([quick, slow], options)
        time.sleep(0.5)
        print(
            f"RSS after initialized: lsp-verify {client.rss_mb():.1f} MB, "
            f"do-nothing {idle_rss:.1f} MB"
        )
        print(f"the keeper's private memory: {client.keeper_private_mb():.1f} MB")

        # Alternate a save and a bare run of the same command, round by round, and compare
        # pairs: the machine's speed drifts too much for two separate series. A baseline
        # server takes its turn in each round, first in every other one.
        baseline = None
        if args.baseline:
            baseline = server_client(env, root, args.baseline)
            baseline.initialize([quick], options)
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
            baseline.close()
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
            client.wait_response(rid)
            cheap.append(time.perf_counter() - started)
        print(
            f"verify.showLastRun during a {args.long_run:g} s run: median "
            f"{statistics.median(cheap) * 1000:.2f} ms, max {max(cheap) * 1000:.2f} ms"
        )
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
