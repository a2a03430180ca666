"""Helpers the problem-matcher tests share: files in a folder, output fed to a collector, and
the measure that shows a matcher's time is linear in the length of what it reads."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from lsp_verify.problems import ProblemCollector
from lsp_verify.problems.base import Problem


def make_files(root: Path, *paths: str, content: str = "x\n") -> None:
    for rel in paths:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")


def run(root: Path, text: str, limit: int = 200) -> tuple[list[Problem], ProblemCollector]:
    collector = ProblemCollector(str(root), limit=limit)
    for line in text.splitlines():
        collector.feed(line)
    return collector.finish(), collector


def problems_of(root: Path, files: Sequence[str], lines: Sequence[str]) -> list[Problem]:
    """The problems found in the output `lines`, with `files` made in the folder `root`."""
    make_files(root, *files)
    return run(root, "\n".join(lines))[0]


def where(problems: list[Problem]) -> list[tuple[str, int, int]]:
    return [(p.path, p.line, p.column) for p in problems]


# Lines 4 times as long cost 1 to 2.8 times as much here (each line has a fixed cost); a
# matcher quadratic in the line's length would make it 16 times.
LINEAR_RATIO = 8.0


def cost(root: Path, line: str, count: int) -> tuple[float, list[Problem]]:
    """The least CPU time of this process that collecting `count` times `line` took in three
    tries (other processes on a loaded machine lengthen the wall clock, not this), and the
    problems found."""
    best, problems = float("inf"), []
    for _ in range(3):
        started = time.process_time()
        collector = ProblemCollector(str(root))
        for _ in range(count):
            collector.feed(line)
        problems = collector.finish()
        best = min(best, time.process_time() - started)
    return best, problems


def linear_problems(root: Path, line: str) -> list[Problem]:
    """The problems in 256 times `line`, a line a matcher examines whole, once it is shown
    that they cost time linear in the line's length, not quadratic: against a quarter of it."""
    long, problems = cost(root, line, 256)
    short = cost(root, line[: len(line) // 4], 256)[0]
    assert long < LINEAR_RATIO * short, (line[:40], long, short)
    return problems


def state_size(matcher: object) -> int:
    """Characters held in a matcher's containers, a stand-in for its memory."""
    total = 0
    seen: list[object] = [vars(matcher)]
    while seen:
        item = seen.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            seen += list(item.values())
        elif isinstance(item, (list, tuple)):
            seen += list(item)
        elif hasattr(item, "__dict__") and not callable(item):
            seen.append(vars(item))
        elif hasattr(item, "__slots__"):
            seen += [getattr(item, name, None) for name in item.__slots__]
    return total
