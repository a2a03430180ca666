"""A save end to end, as real clients drive it: the command runs and what failed is published
where it failed (a pytest assertion's line, a Makefile's summary, a Node runner's test line
with the raising line related), withdrawn when fixed or edited, and documents outside every
folder are ignored.

The Node case's command prints mocha's recorded output (tests/cases/outputs/node/mocha_spec.txt)
for this folder, so no Node tool is needed here; tests/e2e/test_real_tool_output.py runs
mocha itself. A failure raised in project code reaches a client that shows related
information as relatedInformation; else it is written into the message."""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from pathlib import Path

import attrs
from lsprotocol import types
from pytest_lsp import client_capabilities

from tests.cases.problems_cases import FIXTURES, write_project
from tests.support.lsp_session import Session, session

NEVER_ASK = {"confirm": "never"}

FAILING_TEST = "def test_math():\n    assert 1 + 1 == 3\n"
PASSING_TEST = "def test_math():\n    assert 1 + 1 == 2\n"


def pytest_project(root: Path, test: str = FAILING_TEST) -> None:
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "test_math.py").write_text(test)


def python_path_env() -> dict[str, str]:
    # The detected command is a bare `pytest`: make it the one of this interpreter.
    return {"PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}


async def last_run(s: Session) -> dict[str, object]:
    record = await s.command("verify.showLastRun")
    assert isinstance(record, dict)
    return record


def summary_of(record: dict[str, object]) -> str:
    tail = record["tail"]
    assert isinstance(tail, list)
    code = "null" if record["exitCode"] is None else str(record["exitCode"])
    return f"verify failed (exit {code}):\n" + "\n".join(tail)


async def test_failing_pytest_project_then_fixed(project: Path, state: Path) -> None:
    pytest_project(project)
    async with session(project, state=state, init_options=NEVER_ASK, env=python_path_env()) as s:
        uri = s.save("test_math.py")
        await s.wait_for(lambda: s.finished(), what="a finished run")
        record = await last_run(s)
        assert record["outcome"] == "failed"
        assert record["exitCode"] == 1
        assert record["runner"] == "pytest"
        summaries = [d for d in s.diagnostics(uri) if d.message.startswith("verify failed")]
        assert len(summaries) == 1
        assert summaries[0].message == summary_of(record)
        assert summaries[0].source == "verify"

        s.save("test_math.py", PASSING_TEST)
        await s.wait_for(lambda: s.finished("passed"), what="a passing run")
        await s.wait_for(lambda: not s.verify_diagnostics(), what="cleared diagnostics")
        assert (await last_run(s))["outcome"] == "passed"


async def test_makefile_project(project: Path, state: Path) -> None:
    (project / "Makefile").write_text("test:\n\t@echo checking; exit 2\n")
    (project / "main.c").write_text("int main(void) { return 0; }\n")
    async with session(project, state=state, init_options=NEVER_ASK) as s:
        uri = s.save("main.c")
        await s.wait_for(lambda: s.finished(), what="a finished run")
        record = await last_run(s)
        assert record["runner"] == "make"
        assert record["outcome"] == "failed"
        [summary] = s.diagnostics(uri)
        assert summary.message == summary_of(record)
        assert "checking" in summary.message

        (project / "Makefile").write_text("test:\n\t@echo fine\n")
        s.save("main.c")
        await s.wait_for(lambda: s.finished("passed"), what="a passing run")
        await s.wait_for(lambda: not s.verify_diagnostics(), what="cleared diagnostics")


async def test_outside_documents_are_ignored(project: Path, state: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    async with session(project, state=state, init_options={"command": "exit 1"}) as s:
        s.save("x.txt", "1", root=outside)
        await asyncio.sleep(0.5)
        assert s.finished() == []
        assert any("outside every workspace folder" in m.message for m in s.client.log_messages)


async def test_stale_after_edit_withdraws_a_located_diagnostic(project: Path, state: Path) -> None:
    # A command whose output a gcc-style matcher locates: path:line:col: message.
    (project / "a.py").write_text("one\ntwo\nthree\n")
    command = "echo 'a.py:2:1: error: two is wrong'; exit 1"
    async with session(project, state=state, init_options={"command": command}) as s:
        uri = s.open("a.py")
        s.save("a.py")
        await s.wait_for(lambda: len(s.diagnostics(uri)) == 2, what="located + summary")
        located = [d for d in s.diagnostics(uri) if d.range.start.line == 1]
        assert located and "two is wrong" in located[0].message
        # An edit on another line keeps it; an edit of line 2 withdraws it.
        edit(s, uri, 2, 0, 0, "x", version=2)
        await asyncio.sleep(0.3)
        assert len(s.diagnostics(uri)) == 2
        edit(s, uri, 1, 0, 0, "changed ", version=3)
        await s.wait_for(lambda: len(s.diagnostics(uri)) == 1, what="the stale one withdrawn")
        assert s.diagnostics(uri)[0].message.startswith("verify failed")


def edit(s: Session, uri: str, line: int, start: int, end: int, text: str, version: int) -> None:
    s.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=line, character=start),
                        end=types.Position(line=line, character=end),
                    ),
                    text=text,
                )
            ],
        )
    )


async def test_pytest_failure_lands_on_the_assertion_line(project: Path, state: Path) -> None:
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "tests").mkdir()
    body = (
        "def helper():\n    return 1\n\n\ndef test_sum():\n    total = helper() + 1\n"
        "    assert total == {}\n"
    )
    (project / "tests" / "test_a.py").write_text(body.format(3))
    (project / "app.py").write_text("X = 1\n")
    async with session(project, state=state, init_options=NEVER_ASK, env=python_path_env()) as s:
        saved = s.save("app.py")
        test_uri = s.uri("tests/test_a.py")
        # The located failure streams in while pytest runs; the summary comes at its end.
        await s.wait_for(lambda: s.diagnostics(saved), what="the run's summary")
        [located] = s.diagnostics(test_uri)
        assert located.range.start.line == 6
        assert "tests/test_a.py::test_sum" in located.message
        assert "assert 2 == 3" in located.message
        assert located.source == "verify"
        # The located one streams while the run goes; the summary comes with its end.
        await s.wait_for(lambda: s.diagnostics(saved), what="the summary")
        [summary] = s.diagnostics(saved)
        assert summary.message.startswith("verify failed (exit 1):\n")

        s.save("tests/test_a.py", body.format(2))
        await s.wait_for(lambda: not s.verify_diagnostics(), what="both cleared")
        assert s.diagnostics(test_uri) == [] and s.diagnostics(saved) == []


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
