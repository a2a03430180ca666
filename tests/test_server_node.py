"""A Node test runner's failures through the server, as an editor sees them: on the test's
line, with the project line that threw as related information, nothing in node_modules.

The command prints mocha's recorded output (tests/cases/outputs/node/mocha_spec.txt) for
this folder, so no Node tool is needed here; test_problems_real.py runs mocha itself.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from lsprotocol import types

from tests.cases.problems_cases import FIXTURES, write_project
from tests.support.lsp_session import session


async def test_mocha_failures_are_published_on_the_test_lines_with_the_raising_line(
    tmp_path: Path, state: Path
) -> None:
    root = tmp_path / "project"
    write_project(root, "node-mocha")
    text = (FIXTURES / "node" / "mocha_spec.txt").read_text(encoding="utf-8")
    output = tmp_path / "mocha.out"
    output.write_text(text.replace("{ROOT}", str(root)), encoding="utf-8")
    command = f"cat {shlex.quote(str(output))}; exit 3"
    async with session(root, state=state, init_options={"command": command}) as s:
        record = await s.command("verify.runNow", timeout=60)
        assert record["outcome"] == "failed"
        located = {
            uri: [d for d in diagnostics if not d.message.startswith("verify failed")]
            for uri, diagnostics in s.verify_diagnostics().items()
        }
    test_uri = (root / "test" / "calc.test.js").as_uri()
    assert {uri for uri, diagnostics in located.items() if diagnostics} == {test_uri}
    lines = sorted((d.range.start.line, d.range.start.character) for d in located[test_uri])
    assert lines == [(6, 11), (10, 4), (19, 2)]
    (divides,) = [d for d in located[test_uri] if d.code == "calc divides"]
    assert divides.message == "calc divides: RangeError: division by zero"
    (raised,) = divides.related_information or []
    assert raised.message == "raised here"
    assert raised.location.uri == (root / "lib" / "calc.js").as_uri()
    assert raised.location.range.start == types.Position(line=6, character=10)
