"""How long `make_plan` takes on a big folder (planning reads only root-level files).

Builds, in a temporary directory, a folder holding N files in nested directories beside its
manifests (pyproject.toml with a pytest table, package.json with a test script, a Makefile
with a test target, Cargo.toml, tox.ini), then times many `make_plan` calls and prints the
median and p90 per call. Planning reads only root-level files, so the tree's size must not
show: the budget is 5 ms per call.

    python benchmarks/detect.py                 # 100,000 files
    python benchmarks/detect.py --files 1000    # quick, for CI
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

from lsp_verify.planning.plan import make_plan

BUDGET_MS = 5.0
MANIFESTS = {
    "pyproject.toml": '[project]\nname = "bench"\n\n[tool.pytest.ini_options]\naddopts = "-ra"\n',
    "package.json": '{"name": "bench", "scripts": {"pretest": "true", "test": "vitest run"}}\n',
    "Makefile": ".PHONY: test\ntest:\n\tpytest\n",
    "Cargo.toml": '[package]\nname = "bench"\nversion = "0.1.0"\n',
    "tox.ini": "[tox]\nenvlist = py\n",
}


def build_tree(root: str, files: int, per_dir: int = 100, fan_out: int = 10) -> None:
    """`files` small files, `per_dir` to a directory, directories nested `fan_out` wide."""
    for name, text in MANIFESTS.items():
        with open(os.path.join(root, name), "w", encoding="utf-8") as f:
            f.write(text)
    directories = max(1, -(-files // per_dir))
    written = 0
    for index in range(directories):
        # Index in base `fan_out` spelled as a path: 0/0/3, 0/1/7, ... nests the tree.
        parts = []
        n = index
        for _ in range(3):
            parts.append(str(n % fan_out))
            n //= fan_out
        directory = os.path.join(root, "src", *reversed(parts), f"d{index}")
        os.makedirs(directory, exist_ok=True)
        for _ in range(min(per_dir, files - written)):
            with open(os.path.join(directory, f"f{written}.py"), "w", encoding="utf-8") as f:
                f.write("x = 1\n")
            written += 1


def measure(folder: str, calls: int) -> list[float]:
    make_plan(folder)  # warm imports and caches a long-running server also has warm
    timings = []
    for _ in range(calls):
        start = time.perf_counter()
        make_plan(folder)
        timings.append((time.perf_counter() - start) * 1000)
    return timings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--files", type=int, default=100_000, help="files in the tree")
    parser.add_argument("--calls", type=int, default=2000, help="make_plan calls to time")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="lsp-verify-bench-") as root:
        started = time.perf_counter()
        build_tree(root, args.files)
        built = time.perf_counter() - started
        plan = make_plan(root)
        timings = sorted(measure(root, args.calls))
    median = statistics.median(timings)
    p90 = timings[min(len(timings) - 1, int(len(timings) * 0.9))]
    print(f"files: {args.files} (tree built in {built:.1f} s)")
    print(f"plan: {plan.source} {plan.runner} `{plan.command}` from {plan.manifest}")
    print(f"calls: {args.calls}")
    print(f"median: {median:.3f} ms per call")
    print(f"p90: {p90:.3f} ms per call")
    print(f"budget: {BUDGET_MS} ms: {'ok' if median < BUDGET_MS else 'OVER'}")
    return 0 if median < BUDGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
