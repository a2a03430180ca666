"""The share of expected failures located at the right line, over the whole fixture corpus.

    python benchmarks/located.py

Every case of every tests/cases/problems_cases*.py module (see tests/cases/corpus.py) has a
recorded output in tests/cases/outputs and the problems it must give. Each recorded output is fed
to the matchers, in a folder that holds the case's project, as the server would; an expected
problem counts as located when a problem comes out at its file and line; a problem that
comes out where none is expected is a false location. Prints, per family and in total,
located/expected, the share and the false locations, and the expected problems that were
missed.
Exit status 0 either way: the figures are information
(tests/unit/problems/test_recorded_outputs.py is what asserts the corpus).
"""

from __future__ import annotations

import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.cases.corpus import all_cases, fixture_lines
from tests.cases.problems_cases import Case, collect, write_project


def located(case: Case, base: Path) -> tuple[int, int, list[str]]:
    """How many of the case's expected problems come out at their file and line, and how many
    problems come out where none is expected."""
    root = base / case.id.replace("/", "-") / "project"
    write_project(root, case.project)
    problems = collect(root, fixture_lines(case, root))
    where = [(problem.path, problem.line) for problem in problems]
    hits = 0
    missed = []
    for want in case.expected:
        if (want.file, want.line) in where:
            where.remove((want.file, want.line))
            hits += 1
        else:
            missed.append(f"{case.id}: {want.file}:{want.line} {want.message.splitlines()[0]}")
    return hits, len(where), missed


def main() -> int:
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    missed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="lsp-verify-located-") as tmp:
        for case in all_cases():
            hits, false, lost = located(case, Path(tmp))
            totals[case.family][0] += hits
            totals[case.family][1] += len(case.expected)
            totals[case.family][2] += false
            missed += lost
    width = max(len(family) for family in totals)
    for family in sorted(totals):
        hits, expected, false = totals[family]
        share = 100 * hits / expected
        print(f"{family:<{width}}  {hits:>3}/{expected:<3}  {share:5.1f}%  {false} false")
    hits = sum(row[0] for row in totals.values())
    expected = sum(row[1] for row in totals.values())
    false = sum(row[2] for row in totals.values())
    print(
        f"{'total':<{width}}  {hits:>3}/{expected:<3}  {100 * hits / expected:5.1f}%  {false} false"
    )
    for line in missed:
        print(f"missed {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
