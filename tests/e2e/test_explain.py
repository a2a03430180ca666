"""`verify.explain` through the server: the same document as `lsp-verify explain`."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from lsp_verify.cli.explain import explain_main
from tests.support.lsp_session import session


def run_explain(folder: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = explain_main(folder)
    return status, json.loads(out.getvalue())


async def test_the_command_and_the_cli_give_one_explain_document(
    tmp_path: Path, state: Path
) -> None:
    """`verify.explain` and `lsp-verify explain` print the same document for a folder whose
    client has no settings of its own, `.lsp-verify.toml` problems and settings included."""
    (tmp_path / "Makefile").write_text("test:\n\t@true\n")
    (tmp_path / ".lsp-verify.toml").write_text("failedFirst = false\nnoSuchKey = 1\n")
    status, printed = run_explain(str(tmp_path))
    assert status == 0
    async with session(tmp_path, state=state) as s:
        answered = await s.command("verify.explain", tmp_path.as_uri())
    assert answered == printed
    assert printed["settings"]["failedFirst"] is False
    assert any("noSuchKey" in m for m in printed["messages"])
