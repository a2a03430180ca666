"""The fuzzer, bounded, with fixed seeds: generated sessions against the real server find
nothing (see tests/fuzz/README.md for what counts as a finding).

The seeds and the order of sessions are fixed, so a run is the same list of sessions on every
machine; the time budget (LSP_VERIFY_FUZZ_SECONDS, 20 s unless set; CI sets it) decides how
far down that list a run gets. Each class of finding is shrunk (LSP_VERIFY_FUZZ_MINIMISE_SECONDS
in all) and printed as the few steps that still show it, beside the replay file of the session
that found it (in LSP_VERIFY_FUZZ_REPLAYS, else pytest's temporary folder).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from tests.fuzz.campaign import describe, fuzz, planned, slug
from tests.fuzz.minimise import minimise
from tests.fuzz.session import save_replay

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the fuzzer reads /proc")

SEEDS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
SESSIONS_PER_SEED = 12
BUDGET_S = float(os.environ.get("LSP_VERIFY_FUZZ_SECONDS", "20"))
MINIMISE_S = float(os.environ.get("LSP_VERIFY_FUZZ_MINIMISE_SECONDS", "120"))


def test_generated_sessions_find_nothing(tmp_path: Path) -> None:
    from tests.fuzz.process import any_marked

    replays = Path(os.environ.get("LSP_VERIFY_FUZZ_REPLAYS") or tmp_path / "replays")
    report = fuzz(planned(SEEDS, SESSIONS_PER_SEED), replays, BUDGET_S)
    assert report.sessions >= 1
    assert any_marked() == [], "a session left a process behind"
    classes = report.classes()
    if not classes:
        return
    lines = [f"{report.sessions} sessions, {len(classes)} classes of finding:"]
    deadline = time.monotonic() + MINIMISE_S
    for key, found in sorted(classes.items()):
        detail = next(f.detail for f in found.findings if f.key == key)
        lines.append(f"\n== {key}: {detail}\n   replay: {found.replay}")
        left = deadline - time.monotonic()
        if left > 10:
            small = minimise(found.session, key, min(left, MINIMISE_S / 3), say=lambda _: None)
            path = save_replay(small, replays, f"{found.replay.stem}-min-{slug(key)}")
            lines.append(f"   minimised: {path}\n{describe(small)}")
    pytest.fail("\n".join(lines), pytrace=False)
