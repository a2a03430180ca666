"""`lsp-verify` typed in a terminal: it says what it is and what to type instead, and Ctrl-C
ends it at once with 130 and nothing else on the screen, 20 times of 20. Started by an editor
(a pipe on stdin), it says nothing (tests/e2e/test_stops.py checks its stderr stays empty)."""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from lsp_verify.cli import EXIT_INTERRUPTED, TERMINAL_HINT
from tests.support.stdio import server_env
from tests.support.terminal import Terminal

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

TRIES = 20
AT_ONCE = 4


@dataclass(frozen=True)
class Typed:
    status: int | None
    seconds: float  # from Ctrl-C to the end of the process the shell started
    shown: str


def ctrl_c(tmp: Path, n: int) -> Typed:
    terminal = Terminal([], server_env(tmp / f"state-{n}"))
    try:
        assert terminal.server() is not None, "the server never started serving"
        terminal.output()  # the hint, before the Ctrl-C
        terminal.ctrl_c()
        typed = time.monotonic()
        try:
            status: int | None = terminal.proc.wait(5)
        except Exception:
            status = None
        return Typed(status, time.monotonic() - typed, terminal.output())
    finally:
        terminal.close()


def test_a_terminal_gets_the_hint_and_ctrl_c_ends_it_with_130(tmp_path: Path) -> None:
    with ThreadPoolExecutor(AT_ONCE) as pool:
        typed = list(pool.map(lambda n: ctrl_c(tmp_path, n), range(TRIES)))
    hint = TERMINAL_HINT.replace("\n", "\r\n")  # the terminal's line discipline
    assert [t.status for t in typed] == [EXIT_INTERRUPTED] * TRIES, typed
    for t in typed:
        # The hint, the echoed ^C, and nothing else: no traceback, no "Exception ignored".
        assert t.shown.replace("^C", "") == hint, t.shown
    assert max(t.seconds for t in typed) < 2.0, [round(t.seconds, 3) for t in typed]
