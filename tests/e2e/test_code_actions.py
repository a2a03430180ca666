"""Code actions on verify diagnostics, and the commands they run, through a real client."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, Union

import pytest
from lsprotocol import types

from lsp_verify.lsp.actions import APPROVE, EXPLAIN, GO_TO_RAISE, RUN_AGAIN, SHOW_RUN
from tests.support.lsp_session import Session, session, window_changed

FAILING = "echo 'src/calc.c:2:5: error: boom'; echo more output; exit 1"


@pytest.fixture
def project(project: Path) -> Path:
    (project / "src").mkdir()
    (project / "src" / "calc.c").write_text("int a;\nint b = x;\n")
    return project


def read_code_actions_right(s: Session) -> None:
    """lsprotocol's client-side hook reads every item that has a `command` key as a Command,
    so a CodeAction carrying its command comes out as a Command with a dict for a name. Real
    editors read the JSON; make this client do the same: a `command` object means CodeAction."""
    converter = s.client.protocol._converter

    def structure(value: Any, _: type) -> Any:
        kind = types.Command if isinstance(value.get("command"), str) else types.CodeAction
        return converter.structure(value, kind)

    converter.register_structure_hook(Union[types.Command, types.CodeAction], structure)


async def actions_for(s: Session, uri: str, diagnostics: list[types.Diagnostic]) -> list[Any]:
    read_code_actions_right(s)
    whole = types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=10, character=0)
    )
    result = await asyncio.wait_for(
        s.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=whole,
                context=types.CodeActionContext(diagnostics=diagnostics),
            )
        ),
        10,
    )
    return list(result or [])


async def apply(s: Session, action: types.CodeAction) -> Any:
    assert action.command is not None
    return await s.command(action.command.command, *(action.command.arguments or []))


async def test_a_verify_diagnostic_offers_run_again_and_the_runs_output(
    project: Path, state: Path
) -> None:
    async with session(project, state=state, init_options={"command": FAILING}) as s:
        calc = s.uri("src/calc.c")
        s.save("src/calc.c")
        await s.wait_for(lambda: s.finished("failed"), what="a failed run")
        diagnostics = s.diagnostics(calc)
        located = [d for d in diagnostics if d.message == "boom"]
        assert located
        actions = await actions_for(s, calc, located)
        assert [a.title for a in actions] == [RUN_AGAIN, SHOW_RUN]
        assert all(a.kind == types.CodeActionKind.QuickFix for a in actions)
        assert all([d.message for d in a.diagnostics] == ["boom"] for a in actions)

        # "Run verify again" runs: a new record, a new failed status.
        before = len(s.finished("failed"))
        record = await apply(s, actions[0])
        assert record["outcome"] == "failed" and record["trigger"] == "runNow"
        await s.wait_for(lambda: len(s.finished("failed")) > before, what="a second run")

        # "Show the run's output" opens a readable view of the last run, outside the repo.
        shown = await apply(s, actions[1])
        assert shown["shown"] is True
        (opened,) = s.client.shown_documents
        assert opened.uri == shown["uri"] and opened.take_focus
        path = Path(opened.uri.removeprefix("file://"))
        assert not path.is_relative_to(project) and path.is_relative_to(state)
        text = path.read_text()
        assert text.startswith("# verify: Failed\n")
        link = os.path.relpath(project / "src" / "calc.c", path.parent)
        assert f"[`src/calc.c:2:5`]({link}#L2) error: `boom`" in text
        assert "more output" in text and '"outcome": "failed"' in text


async def test_foreign_diagnostics_get_no_actions(project: Path, state: Path) -> None:
    async with session(project, state=state, init_options={"command": FAILING}) as s:
        calc = s.uri("src/calc.c")
        theirs = types.Diagnostic(
            range=types.Range(
                start=types.Position(line=1, character=0), end=types.Position(line=1, character=3)
            ),
            message="undeclared identifier",
            source="clangd",
        )
        assert await actions_for(s, calc, [theirs]) == []
        assert await actions_for(s, calc, []) == []


async def test_a_failure_with_related_information_goes_to_the_line_that_raised(
    tmp_path: Path, state: Path
) -> None:
    project = tmp_path / "py"
    (project / "tests").mkdir(parents=True)
    (project / "calc.py").write_text("def div(a, b):\n    return a / b\n")
    (project / "tests" / "test_calc.py").write_text(
        "from calc import div\n\n\ndef test_div():\n    assert div(1, 0) == 1\n"
    )
    (project / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    command = "python -m pytest -x -q -p no:cacheprovider"
    async with session(project, state=state, init_options={"command": command}) as s:
        record = await s.command("verify.runNow", timeout=60)
        assert record["outcome"] == "failed"
        with_related = [
            (uri, d)
            for uri, ds in s.verify_diagnostics().items()
            for d in ds
            if d.related_information
        ]
        assert with_related, s.verify_diagnostics()
        uri, diagnostic = with_related[0]
        related = diagnostic.related_information[0].location  # type: ignore[index]
        actions = await actions_for(s, uri, [diagnostic])
        go = [a for a in actions if a.title.startswith(GO_TO_RAISE)]
        assert len(go) == 1
        assert await apply(s, go[0]) is True
        (opened,) = s.client.shown_documents
        assert opened.uri == related.uri
        assert opened.selection is not None
        assert opened.selection.start.line == related.range.start.line


async def test_show_run_without_a_folder_shows_the_run_that_started_last(
    project: Path, state: Path, tmp_path: Path
) -> None:
    # Show Last Run from the palette with no editor open (a run view focused, say) names no
    # folder; of several folders, the view is the last run's, not the first folder's.
    other = tmp_path / "other"
    other.mkdir()
    async with session(
        project, state=state, folders=[project, other], init_options={"command": FAILING}
    ) as s:
        await s.command("verify.runNow", other.as_uri(), timeout=60)
        shown = await s.command("verify.showRun")
        assert shown is not None
        assert "/last-run-other-" in shown["uri"]
        await s.command("verify.runNow", project.as_uri(), timeout=60)
        shown = await s.command("verify.showRun")
        assert "/last-run-project-" in shown["uri"]
        # A folder named still gets its own run's view.
        shown = await s.command("verify.showRun", other.as_uri())
        assert "/last-run-other-" in shown["uri"]


async def test_without_show_document_the_client_is_told_where_the_run_is(
    project: Path, state: Path
) -> None:
    capabilities = window_changed(show_document=None)
    async with session(
        project, state=state, init_options={"command": FAILING}, capabilities=capabilities
    ) as s:
        await s.command("verify.runNow")
        shown = await s.command("verify.showRun")
        assert shown["shown"] is False
        await s.wait_for(
            lambda: any("the last run (failed) is in" in m.message for m in s.client.messages),
            what="a message naming the file",
        )
        assert s.client.shown_documents == []


async def test_the_not_approved_warning_offers_approve_and_explain(
    project: Path, state: Path
) -> None:
    # A detected plan (make test), and a client that cannot be asked: the run is declined and
    # the saved document gets the warning, as the server really publishes it.
    (project / "Makefile").write_text("test:\n\t@exit 1\n")
    async with session(project, state=state, capabilities=window_changed(show_message=None)) as s:
        uri = s.save("src/calc.c")
        await s.wait_for(lambda: s.diagnostics(uri), what="the not-approved warning")
        (warning,) = s.diagnostics(uri)
        assert warning.severity == types.DiagnosticSeverity.Warning
        actions = await actions_for(s, uri, [warning])
        assert [(a.title, a.command.command, list(a.command.arguments)) for a in actions][:2] == [
            (APPROVE, "verify.approve", [project.as_uri()]),
            (EXPLAIN, "verify.showPlan", [project.as_uri()]),
        ]
        assert [a.title for a in actions[2:]] == [RUN_AGAIN, SHOW_RUN]
        # Approving from the warning approves the plan and withdraws the warning.
        assert (await apply(s, actions[0]))["approved"] is True
        await s.wait_for(lambda: not s.diagnostics(uri), what="the warning withdrawn")
