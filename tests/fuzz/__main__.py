"""python -m tests.fuzz --seed N --sessions K [--time-budget S] [--replays DIR]
python -m tests.fuzz --replay FILE [--minimise]

Fuzz the language server with generated sessions, or run one replay file again (and shrink
it to the few steps that still show its first finding, or the one named by --key).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from tests.fuzz.campaign import describe, fuzz, judge, planned, slug
from tests.fuzz.minimise import minimise
from tests.fuzz.session import load_replay, save_replay


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz")
    parser.add_argument("--seed", type=int, action="append", help="a seed (repeatable)")
    parser.add_argument("--sessions", type=int, default=10, help="sessions per seed")
    parser.add_argument("--time-budget", type=float, default=600.0, help="seconds in all")
    parser.add_argument("--replays", type=Path, help="where replay files go (default: temp)")
    parser.add_argument("--replay", type=Path, help="run this replay file again")
    parser.add_argument("--minimise", action="store_true", help="shrink what is found")
    parser.add_argument("--key", help="with --minimise: the finding class to keep")
    parser.add_argument("--verbose", action="store_true", help="print what the server wrote")
    parser.add_argument("--minimise-budget", type=float, default=300.0, help="seconds each")
    args = parser.parse_args(argv)
    replays = args.replays or Path(tempfile.mkdtemp(prefix="lsp-verify-fuzz-replays-"))

    if args.replay is not None:
        session = load_replay(args.replay)
        found, outcome = judge(session)
        print(f"{args.replay}: {outcome.elapsed:.1f} s")
        if args.verbose:
            for received in outcome.messages:
                print(f"  <- {json.dumps(received.message)[:300]}")
            print(outcome.stderr[-4000:])
        for finding in found:
            print(f"  {finding.key}: {finding.detail}")
        if args.minimise and found:
            key = args.key or found[0].key
            small = minimise(session, key, args.minimise_budget, say=print)
            path = save_replay(small, replays, f"{args.replay.stem}-min-{slug(key)}")
            print(f"minimised ({key}) -> {path}\n{describe(small)}")
        return 1 if found else 0

    seeds = args.seed or [1]
    report = fuzz(planned(seeds, args.sessions), replays, args.time_budget)
    classes = report.classes()
    print(f"{report.sessions} sessions in {report.seconds:.0f} s; {len(classes)} finding classes")
    for key, found in sorted(classes.items()):
        print(f"  {key}: {found.replay}")
    if args.minimise:
        for key, found in sorted(classes.items()):
            small = minimise(found.session, key, args.minimise_budget, say=print)
            path = save_replay(small, replays, f"{found.replay.stem}-min-{slug(key)}")
            print(f"== {key} -> {path}\n{describe(small)}")
    return 1 if classes else 0


if __name__ == "__main__":
    sys.exit(main())
