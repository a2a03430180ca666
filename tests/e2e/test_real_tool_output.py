"""The matchers on real output: each case's command really runs where the machine has the
tool (pytest, python, gcc, cargo, mypy, ruff; tsc, vitest, jest and eslint from
$LSP_VERIFY_NODE_TOOLS), and gives exactly the expected problems (acceptance 1).

The commands run concurrently, once per session, because together they take several seconds
(cargo builds twice, pytest starts a dozen times).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.cases.corpus import all_cases
from tests.cases.problems_cases import Case, clean, collect, mismatches, run_case, tool_missing

CASES = all_cases()
# The toolchains CI installs for the detector's rules 6 to 11: missing under CI is a failure.
LANG_TOOLS = frozenset({"deno", "mix", "rake", "ruby", "rspec", "zig"})
RUNNABLE = [case for case in CASES if tool_missing(case.tool) is None]


@pytest.fixture(scope="module")
def outputs() -> Iterator[dict[str, tuple[Path, str]]]:
    with tempfile.TemporaryDirectory(prefix="lsp-verify-problems-") as tmp:
        base = Path(tmp)

        def run(case: Case) -> tuple[str, tuple[Path, str]]:
            try:
                # zig build prints its report in pieces out of order now and then on a
                # loaded machine (about one run in eight): run it again, up to four times.
                for attempt in range(4):
                    folder = base / f"{case.id.replace('/', '-')}-{attempt}"
                    result = run_case(case, folder, timeout=240)
                    if case.family != "zig" or not zig_scrambled(clean(result[1])):
                        break
                return case.id, result
            except Exception as error:  # reported by that case's test, not by all of them
                return case.id, (base, f"<could not run {case.command!r}: {error!r}>")

        with ThreadPoolExecutor(max_workers=4) as pool:
            yield dict(pool.map(run, RUNNABLE))


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_real_output_gives_the_expected_problems(
    case: Case, outputs: dict[str, tuple[Path, str]]
) -> None:
    missing = tool_missing(case.tool)
    if missing is not None:
        if case.tool in LANG_TOOLS and os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {missing}: .ci/run installs it")
        pytest.skip(missing)
    root, output = outputs[case.id]
    if case.family == "zig" and zig_scrambled(clean(output)):
        # Four runs in a row (the fixture's tries); the matcher's handling of the pieces is
        # tests/unit/problems/test_lang_matchers.py's. Under CI a skip fails the run.
        pytest.skip(
            "zig build printed its report in pieces out of order 4 times: nothing to compare"
        )
    problems = collect(root, clean(output))
    assert mismatches(problems, case.expected) == [], output


def zig_scrambled(lines: list[str]) -> bool:
    """Whether `zig build test` printed its failures out of order: in order, each line from
    the first failure's header to `failed command:` is a header or indented under one."""
    inside = False
    for line in lines:
        if line.startswith("error: '"):
            inside = True
        elif line.startswith("failed command:"):
            return not inside
        elif (inside and not line.startswith("       ")) or (not inside and ".zig:" in line):
            return True
    return False
