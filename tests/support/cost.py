"""The CPU a piece of code costs, as the cost tests measure it."""

from __future__ import annotations

import gc
import time


def cpu_clock() -> float:
    """`time.process_time()`, after a full garbage collection: a collection the measured code
    would otherwise trigger walks the whole test process's heap (0.2 s late in a run), a cost
    of the tests, not of the code."""
    gc.collect()
    return time.process_time()
