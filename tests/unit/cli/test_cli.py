"""The command line's dispatch, in this process: usage errors."""

from __future__ import annotations

from lsp_verify.cli import main


def test_usage_error_exits_2(capsys: object) -> None:
    assert main(["check", "--timeout-ms", "soon"]) == 2
