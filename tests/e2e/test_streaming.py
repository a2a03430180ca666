"""Located failures are published while the run goes, and the run's end agrees with them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from lsprotocol import types

from tests.support.lsp_session import session

# The first failure at once, then a long rest of the run (a `make check` with lint first).
SLOW = "echo 'src/calc.c:2:5: error: boom'; sleep 4; echo 'src/calc.c:3:1: error: late'; exit 1"


@pytest.fixture
def project(project: Path) -> Path:
    (project / "src").mkdir()
    (project / "src" / "calc.c").write_text("int a;\nint b = x;\nint c;\n")
    return project


def located(diagnostics: list[types.Diagnostic]) -> list[tuple[int, int, str]]:
    return sorted(
        (d.range.start.line, d.range.start.character, d.message)
        for d in diagnostics
        if d.source == "verify" and d.code != "failed"
    )


async def test_a_located_failure_is_published_before_the_run_ends(
    project: Path, state: Path
) -> None:
    async with session(project, state=state, init_options={"command": SLOW}) as s:
        calc = s.uri("src/calc.c")
        started = time.monotonic()
        s.save("src/calc.c")
        await s.wait_for(lambda: located(s.diagnostics(calc)), timeout=10, what="a live failure")
        seen_after = time.monotonic() - started
        # Published while the command still sleeps: well before its 4 s, no verdict yet.
        assert seen_after < 3, seen_after
        assert s.finished() == []
        assert located(s.diagnostics(calc)) == [(1, 4, "boom")]
        await s.wait_for(lambda: s.finished("failed"), timeout=20, what="the verdict")
        # The run's end replaces the layer: the live failure stays, the later one joins it,
        # and the summary of the failed run comes with them.
        final = s.diagnostics(calc)
        assert located(final) == [(1, 4, "boom"), (2, 0, "late")]
        assert [d.code for d in final if d.code == "failed"] == ["failed"]


async def test_a_failure_still_there_is_not_shown_twice(project: Path, state: Path) -> None:
    fast = "echo 'src/calc.c:2:5: error: boom'; exit 1"
    async with session(project, state=state, init_options={"command": fast}) as s:
        calc = s.uri("src/calc.c")
        first = await s.command("verify.runNow")
        assert first["outcome"] == "failed"
        before = len(s.publishes)
        second = await s.command("verify.runNow")
        assert second["outcome"] == "failed"
        # The second run saw the same failure: no streamed duplicate, one final publish.
        ours = [d for uri, d in s.publishes[before:] if uri == calc]
        assert all(located(d) == [(1, 4, "boom")] for d in ours), ours


# --- LiveProblems on its own: batching, the limit, close and withdraw ---
