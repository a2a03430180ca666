"""A week of use in minutes: the server's memory and its save -> publish latency, flat?

    python benchmarks/soak.py [--cycles 1000] [--warmup 400] [--samples 50] [--files 4000]
                              [--spread 200] [--quick] [--check]

Drives one real `python -m lsp_verify` over stdio (tests/support/stdio.py's client, this
checkout's code, temporary XDG folders) as an editor would over days. The command prints 100
lines and one located problem, and fails; progress is on (the client answers its creates),
the client pulls and takes pushes. Each cycle:
  a save and its run, `verify.runNow`, `verify.showLastRun`, `verify.explain`, a pull of the
  saved document, a document opened, changed (ten keystrokes) and closed;
  every 5th cycle a workspace pull; every 10th the settings changed (the client answers the
  server's workspace/configuration with another tailLines) and a folder added and removed;
  every 20th a run that locates problems in the next --spread of --files files (which lose
  them at the next save): over the whole soak thousands of documents get diagnostics and
  lose them again.
After --warmup cycles (by default one whole turn through the files: the server's bounded
caches of paths and URIs fill, and so does the interpreter's table of interned names, which
pathlib adds each file's name to and which never shrinks) it reads the tree's PSS (the
keeper and the server, /proc smaps_rollup), its anonymous part, and the median save ->
publish latency of --samples saves (and the server's CPU time per save); again after
--cycles more, with the PSS at each quarter on the way. It prints the growth per 1000
operations (a message to the server, a save or a command, is one). Last, a fresh server
starts beside it and their saves alternate: the same machine load for both, which the start
and the end of a soak on a shared machine need not have had. Targets: PSS at the end at
most 1 MB over after warm-up; the end's latency within 10% of the start's, or of the fresh
server's. --check exits 1 when one is missed. --quick: 30 cycles after 10 of warm-up, 10
samples, 400 files, a spread of 20 (what CI runs: a few seconds).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# tests/support holds the one LSP client of the tests and the benchmarks.
sys.path.append(str(REPO))

from tests.support.procs import pss_kib, status_kib  # noqa: E402
from tests.support.stdio import (  # noqa: E402
    Message,
    Reply,
    StdioClient,
    initialize_session,
    server_env,
    stop,
)

PSS_TARGET_KIB = 1024
LATENCY_TARGET = 0.10
CAPABILITIES = {
    "window": {"workDoneProgress": True},
    "workspace": {"configuration": True, "workspaceFolders": True},
    # Pulls without refreshSupport: the server pushes as well (the latency is a push's).
    "textDocument": {"synchronization": {"didSave": True}, "diagnostic": {}},
}
TAIL = "".join(f"collecting part {n} of the output\n" for n in range(100))
COMMAND = "cat report.txt; exit 1"
KEYSTROKES = 10  # didChange notifications while a document is open
FRESH_WARMUP = 20  # cycles of the fresh server the soaked one is compared with at the end


class Soak:
    """The workspace, the server and the operations of a cycle."""

    def __init__(self, root: Path, files: int, spread: int) -> None:
        self.root = root
        self.folder = root / "project"
        self.spread = spread
        generated = self.folder / "gen"
        generated.mkdir(parents=True)
        self.files = [f"gen/f{n:05d}.py" for n in range(files)]
        for name in self.files:
            (self.folder / name).write_text("VALUE = 1\n")
        (self.folder / "mod.py").write_text("def f():\n    return 1\n")
        self.saved = (self.folder / "mod.py").as_uri()
        self.extra = root / "extra"
        self.extra.mkdir()
        self.tail_lines = 40
        self.operations = 0
        self.cycle = 0
        self.result_id: str | None = None
        self.workspace_ids: dict[str, str] = {}
        self.report([self.files[0]])
        self.client = StdioClient(
            env=server_env(root / "state"),
            cwd=REPO,
            new_session=True,
            answers=self.answer,
            stderr=root / "stderr.txt",
        )
        options = {"command": COMMAND, "tailLines": self.tail_lines, "failedFirst": False}
        initialize_session(self.client, [self.folder], options, CAPABILITIES)
        self.client.notification("verify/status", 60)  # settings loaded: saves run

    def answer(self, request: Message) -> Reply:
        if request.get("method") == "workspace/configuration":
            items = request.get("params", {}).get("items", [])
            settings = {"command": COMMAND, "tailLines": self.tail_lines, "failedFirst": False}
            return Reply([settings] * len(items))
        return Reply(None)

    def report(self, located: list[str]) -> None:
        """What the next run prints: the tail, then one located problem per file."""
        problems = "".join(f"{name}:1:1: error: VALUE is wrong\n" for name in located)
        (self.folder / "report.txt").write_text(TAIL + problems)

    # ----- one operation each -----

    def send(self, method: str, params: Any) -> None:
        self.operations += 1
        self.client.notify(method, params, timeout=30)

    def request(self, method: str, params: Any) -> Message:
        self.operations += 1
        rid = self.client.request(method, params, timeout=30)
        return self.client.answer_to(rid, timeout=60)

    def save(self) -> float:
        """A save and its run; seconds from the save to the first publish."""
        self.client.inbox.clear()
        start = time.perf_counter()
        self.send("textDocument/didSave", {"textDocument": {"uri": self.saved}})
        self.client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics", 60)
        took = time.perf_counter() - start
        self.until_idle()
        return took

    def until_idle(self) -> None:
        self.client.wait(
            lambda m: (
                m.get("method") == "verify/status"
                and m["params"]["folder"] == self.folder.as_uri()
                and m["params"]["state"] == "idle"
                and m["params"]["lastOutcome"] is not None
            ),
            60,
        )

    def command(self, name: str) -> Any:
        answer = self.request("workspace/executeCommand", {"command": name, "arguments": []})
        assert "result" in answer, f"{name}: {answer}"
        return answer["result"]

    def pull(self) -> None:
        params = {"textDocument": {"uri": self.saved}, "previousResultId": self.result_id}
        report = self.request("textDocument/diagnostic", params)["result"]
        self.result_id = report["resultId"]

    def pull_workspace(self) -> None:
        previous = [{"uri": u, "value": v} for u, v in self.workspace_ids.items()]
        report = self.request("workspace/diagnostic", {"previousResultIds": previous})
        self.workspace_ids = {i["uri"]: i["resultId"] for i in report["result"]["items"]}

    def open_change_close(self) -> None:
        uri = (self.folder / "gen" / f"open{self.cycle % 50}.py").as_uri()
        document = {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}
        self.send("textDocument/didOpen", {"textDocument": document})
        for version in range(2, 2 + KEYSTROKES):
            change = [{"range": _range(0, 4, 0, 5), "text": str(version % 10)}]
            self.send(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": version}, "contentChanges": change},
            )
        self.send("textDocument/didClose", {"textDocument": {"uri": uri}})

    def settings_changed(self) -> None:
        self.tail_lines = 40 if self.tail_lines == 41 else 41
        self.send("workspace/didChangeConfiguration", {"settings": None})

    def folder_added_and_removed(self) -> None:
        folder = {"uri": self.extra.as_uri(), "name": "extra"}
        self.send(
            "workspace/didChangeWorkspaceFolders", {"event": {"added": [folder], "removed": []}}
        )
        self.send(
            "workspace/didChangeWorkspaceFolders", {"event": {"added": [], "removed": [folder]}}
        )

    def spread_run(self) -> None:
        """A run that locates problems in the next `spread` files; the next save clears them."""
        first = (self.cycle // 20 * self.spread) % len(self.files)
        self.report([self.files[(first + n) % len(self.files)] for n in range(self.spread)])
        self.save()
        self.report([self.files[0]])

    def run_cycle(self) -> None:
        self.cycle += 1
        self.save()
        record = self.command("verify.runNow")
        assert record["outcome"] == "failed", record
        self.command("verify.showLastRun")
        self.command("verify.explain")
        self.pull()
        self.open_change_close()
        if self.cycle % 5 == 0:
            self.pull_workspace()
        if self.cycle % 10 == 0:
            self.settings_changed()
            self.folder_added_and_removed()
        if self.cycle % 20 == 0:
            self.spread_run()
        self.client.drain()

    # ----- measures -----

    def file_rss_kib(self) -> int:
        """The file-backed pages the tree has resident (RssFile), counted whole: what it maps,
        whoever else maps the same files (which moves its PSS, not this)."""
        return sum(status_kib(pid, "RssFile:") for pid in self.client.pids())

    def pss_kib(self) -> tuple[int, int]:
        """The tree's PSS, and its anonymous part, in the same state each time: after a plain
        save (no spread run's diagnostics alive), once the server is quiet (what it holds,
        not what it does). The file-backed rest is shared with every process that maps the
        same interpreter and libraries: it moves as those come and go on the machine."""
        self.save()
        self.client.pump_for(0.5)
        pids = self.client.pids()
        return pss_kib(pids), pss_kib(pids, "Pss_Anon")

    def latency(self, samples: int) -> tuple[float, float]:
        """The median of `samples` save -> publish times, and the server's CPU time per save
        (the keeper's too, not the command's): seconds each. The CPU time is what other work
        on a loaded machine does not lengthen."""
        cpu = self.client.cpu_seconds()
        median = statistics.median(self.save() for _ in range(samples))
        return median, (self.client.cpu_seconds() - cpu) / samples


def alternated(soaked: Soak, fresh: Soak, samples: int) -> tuple[float, float]:
    """Median save -> publish times of two servers, their saves alternated: the same load on
    the machine for both, which a shared machine's start and end need not have had."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(samples):
        times[0].append(soaked.save())
        times[1].append(fresh.save())
    return statistics.median(times[0]), statistics.median(times[1])


def _range(line: int, start: int, end_line: int, end: int) -> dict[str, Any]:
    return {
        "start": {"line": line, "character": start},
        "end": {"line": end_line, "character": end},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=1000, help="cycles after the warm-up")
    parser.add_argument("--warmup", type=int, default=400, help="cycles before the first measure")
    parser.add_argument("--samples", type=int, default=50, help="saves timed at each end")
    parser.add_argument("--files", type=int, default=4000, help="files problems rotate over")
    parser.add_argument("--spread", type=int, default=200, help="files a spread run locates")
    parser.add_argument("--quick", action="store_true", help="a small soak (CI)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    if args.quick:
        args.cycles, args.warmup, args.samples, args.files, args.spread = 30, 10, 10, 400, 20

    with tempfile.TemporaryDirectory() as tmp:
        soak = Soak(Path(tmp), args.files, args.spread)
        began = time.perf_counter()
        try:
            for _ in range(args.warmup):
                soak.run_cycle()
            pss_start, anon_start = soak.pss_kib()
            mapped_start = soak.file_rss_kib()
            latency_start, cpu_start = soak.latency(args.samples)
            operations_start = soak.operations
            for n in range(1, args.cycles + 1):
                soak.run_cycle()
                if n % max(1, args.cycles // 4) == 0 and n < args.cycles:
                    pss, anon = soak.pss_kib()
                    print(
                        f"after {n} cycles: {pss - pss_start:+d} KiB since the warm-up "
                        f"({anon - anon_start:+d} KiB anonymous)",
                        flush=True,
                    )
            operations = soak.operations - operations_start
            latency_end, cpu_end = soak.latency(args.samples)
            pss_end, anon_end = soak.pss_kib()
            mapped_end = soak.file_rss_kib()
            fresh = Soak(Path(tmp) / "fresh", args.files, args.spread)
            try:
                for _ in range(min(FRESH_WARMUP, args.warmup)):
                    fresh.run_cycle()
                soaked_now, fresh_now = alternated(soak, fresh, args.samples)
            finally:
                stop(fresh.client)
        finally:
            stop(soak.client)
        took = time.perf_counter() - began
    growth = pss_end - pss_start
    per_1000 = growth / max(1, operations) * 1000
    ratio = latency_end / latency_start
    print(
        f"soak: {args.warmup} cycles of warm-up, then {args.cycles} cycles "
        f"({operations} operations) in {took:.1f} s; problems rotate over {args.files} files, "
        f"{args.spread} at a time"
    )
    print(f"tree PSS (keeper + server) after warm-up: {pss_start / 1024:8.2f} MiB")
    print(f"tree PSS after everything:               {pss_end / 1024:8.2f} MiB")
    print(f"growth: {growth:+d} KiB, {per_1000:+.1f} KiB per 1000 operations")
    print(
        f"of which anonymous (not file-backed): {anon_start / 1024:.2f} -> "
        f"{anon_end / 1024:.2f} MiB, {anon_end - anon_start:+d} KiB; file-backed resident "
        f"(RssFile, whoever shares it): {mapped_start / 1024:.2f} -> {mapped_end / 1024:.2f} MiB"
    )
    print(
        f"save -> publish, median of {args.samples}: {latency_start * 1000:.2f} ms at the start, "
        f"{latency_end * 1000:.2f} ms at the end ({(ratio - 1) * 100:+.1f}%)"
    )
    print(
        f"the server's CPU time per save: {cpu_start * 1000:.2f} ms at the start, "
        f"{cpu_end * 1000:.2f} ms at the end"
    )
    aged = soaked_now / fresh_now
    print(
        f"then, saves alternated with a fresh server "
        f"({min(FRESH_WARMUP, args.warmup)} cycles of warm-up), "
        f"median of {args.samples}: {soaked_now * 1000:.2f} ms soaked, "
        f"{fresh_now * 1000:.2f} ms fresh ({(aged - 1) * 100:+.1f}%)"
    )
    flat = growth <= PSS_TARGET_KIB
    steady = ratio <= 1 + LATENCY_TARGET
    young = aged <= 1 + LATENCY_TARGET
    verdict = {True: "met", False: "MISSED"}
    print(
        f"targets: PSS at most {PSS_TARGET_KIB} KiB over after warm-up: {verdict[flat]}; "
        f"latency within {LATENCY_TARGET:.0%} of the start: {verdict[steady]}, "
        f"of a fresh server's: {verdict[young]}"
    )
    return 1 if args.check and not (flat and (steady or young)) else 0


if __name__ == "__main__":
    sys.exit(main())
