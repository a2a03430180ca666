"""A failing test whose error was raised in project code, through the server: the test's
line is the diagnostic and the raising line reaches the client as relatedInformation, when
the client declares it shows related information; else it is written into the message."""

from __future__ import annotations

import sys
from pathlib import Path

import attrs
from lsprotocol import types
from pytest_lsp import client_capabilities

from tests.support.lsp_session import session

CALC = 'def inner(x):\n    if x > 1:\n        raise ValueError("bad value")\n    return x\n'
TEST = "from calc import inner\n\n\ndef test_calls_project():\n    inner(5)\n"


def _project(root: Path) -> dict[str, object]:
    (root / "calc.py").write_text(CALC)
    (root / "test_calc.py").write_text(TEST)
    command = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q -p no:cacheprovider"
    return {"command": command, "confirm": "never"}


def _capabilities(related: bool) -> types.ClientCapabilities:
    base = client_capabilities("visual_studio_code")
    assert base.text_document is not None and base.text_document.publish_diagnostics is not None
    publish = attrs.evolve(base.text_document.publish_diagnostics, related_information=related)
    return attrs.evolve(
        base, text_document=attrs.evolve(base.text_document, publish_diagnostics=publish)
    )


async def _located(project: Path, state: Path, related: bool) -> types.Diagnostic:
    options = _project(project)
    async with session(
        project, state=state, capabilities=_capabilities(related), init_options=options
    ) as s:
        s.save("calc.py")
        test_uri = s.uri("test_calc.py")
        await s.wait_for(lambda: s.diagnostics(test_uri), what="the located diagnostic")
        [located] = s.diagnostics(test_uri)
        return located


async def test_related_information_for_a_client_that_shows_it(project: Path, state: Path) -> None:
    located = await _located(project, state, related=True)
    assert located.range.start.line == 4  # `inner(5)` in the test
    assert "test_calc.py::test_calls_project: ValueError: bad value" in located.message
    [related] = located.related_information or []
    assert related.location.uri.endswith("/calc.py")
    assert related.location.range.start.line == 2  # the raise
    assert related.message == "raised here"


async def test_related_information_folded_into_the_message_otherwise(
    project: Path, state: Path
) -> None:
    located = await _located(project, state, related=False)
    assert located.range.start.line == 4
    assert located.related_information is None
    assert located.message.endswith("\nraised here: calc.py:3:1")
