"""The server's own failures in its log: one line each, never a traceback on stderr (editors
show the server's stderr as errors), and still enough to find the line that failed."""

from __future__ import annotations

import logging
from collections.abc import Iterable

log = logging.getLogger("lsp_verify")


def one_line(exc: BaseException) -> str:
    """An exception as one line: its type, its message and where it was raised."""
    where = ""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None:
        where = f" (at {tb.tb_frame.f_code.co_filename.rsplit('/', 1)[-1]}:{tb.tb_lineno})"
    return f"{type(exc).__name__}: {exc}{where}"


def log_failures(what: str, results: Iterable[object], expected: tuple[type, ...] = ()) -> None:
    """Log each exception among `results` (as `gather(..., return_exceptions=True)` gives
    them) that is not one of the `expected` kinds."""
    for result in results:
        if isinstance(result, Exception) and not isinstance(result, expected):
            log.error("%s failed: %s", what, one_line(result))
