"""The stdio loop's log filter: only pygls' one harmless warning is lowered."""

from __future__ import annotations

import logging

from lsp_verify.lsp.serving import CancelRaceAtDebug


def test_only_that_warning_of_pygls_is_lowered() -> None:
    def record(message: str, *args: object) -> logging.LogRecord:
        made = logging.LogRecord("pygls", logging.WARNING, __file__, 1, message, args, None)
        assert CancelRaceAtDebug().filter(made)
        return made

    assert record('Cancel notification for unknown message id "%s"', "10").levelno == logging.DEBUG
    assert record("Unknown message: %s", "x").levelno == logging.WARNING
    assert record('Cancelled request with id "%s"', "10").levelno == logging.WARNING
