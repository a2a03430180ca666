"""Code actions on the server's own diagnostics, and the commands behind them.

On any verify diagnostic: "Run verify again" and "Show the run's output". On a located
failure that names the line that raised (related information): "Go to the line that raised".
On the warning of a plan that was not approved: "Approve this plan" and "Explain the plan".
Other servers' diagnostics get nothing. Every action is a plain command, so every editor
that speaks LSP can offer and apply it (VS Code's light bulb, Neovim's
`vim.lsp.buf.code_action()`, eglot, Helix): as CodeAction literals to a client that declares
`codeActionLiteralSupport`, as bare Commands to any other (LSP; see SPEC section 5).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from lsprotocol import types

from lsp_verify.record import Record
from lsp_verify.results import approval
from lsp_verify.results.diagnostics import SOURCE
from lsp_verify.uris import path_to_uri, relative_to, uri_to_path

RUN_AGAIN = "Run verify again"
SHOW_RUN = "Show the run's output"
GO_TO_RAISE = "Go to the line that raised"
APPROVE = "Approve this plan"
EXPLAIN = "Explain the plan"


def _action(
    title: str, command: str, arguments: list[Any], diagnostics: Sequence[types.Diagnostic]
) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=list(diagnostics),
        command=types.Command(title=title, command=command, arguments=arguments),
    )


def code_actions(
    document: str, folder: str, diagnostics: Sequence[types.Diagnostic]
) -> list[types.CodeAction]:
    """The actions for the diagnostics the client sent (those under the cursor or range)."""
    ours = [d for d in diagnostics if d.source == SOURCE]
    if not ours:
        return []
    actions: list[types.CodeAction] = []
    # The warning a plan that needs approval leaves on the triggering document.
    declined = [d for d in ours if d.code == approval.CODE]
    if declined:
        actions.append(_action(APPROVE, "verify.approve", [folder], declined))
        actions.append(_action(EXPLAIN, "verify.showPlan", [folder], declined))
    actions.append(_action(RUN_AGAIN, "verify.runNow", [document], ours))
    actions.append(_action(SHOW_RUN, "verify.showRun", [folder], ours))
    folder_path = uri_to_path(folder)
    seen: set[tuple[str, int]] = set()
    for diagnostic in ours:
        for related in diagnostic.related_information or []:
            location = related.location
            start = location.range.start
            if (location.uri, start.line) in seen:
                continue
            seen.add((location.uri, start.line))
            path = uri_to_path(location.uri)
            shown = relative_to(folder_path, path) if path and folder_path else None
            where = f"{shown or location.uri}:{start.line + 1}"
            actions.append(
                _action(
                    f"{GO_TO_RAISE} ({where})",
                    "verify.showLocation",
                    [location.uri, start.line, start.character],
                    [diagnostic],
                )
            )
    return actions


def as_commands(actions: Sequence[types.CodeAction]) -> list[types.Command]:
    """The actions as Command literals, for a client that cannot read CodeAction literals:
    each one's command, titled as the action."""
    return [action.command for action in actions if action.command is not None]


class Shows(Protocol):
    """What the commands need from the client."""

    def show_document(self, uri: str, line: int | None = None, character: int = 0) -> bool: ...
    def show_info(self, text: str) -> None: ...


def show_run(record: Record | None, client: Shows) -> dict[str, Any] | None:
    """verify.showRun: the folder's last run, readable, opened in the editor. A client that
    cannot open documents is told where the file is."""
    from lsp_verify.results.run_view import write_run_view
    from lsp_verify.trust.store import state_dir

    if record is None:
        client.show_info("verify: no run yet in this folder")
        return None
    try:
        path = write_run_view(record, state_dir() / "runs")
    except (OSError, RuntimeError) as exc:
        client.show_info(f"verify: could not write the run's view: {exc}")
        return None
    uri = path_to_uri(str(path))
    shown = client.show_document(uri)
    if not shown:
        client.show_info(f"verify: the last run ({record.outcome}) is in {path}")
    return {"uri": uri, "shown": shown}


def show_plan(described: list[str], client: Shows) -> None:
    """verify.showPlan: what would run, and why, as a message."""
    client.show_info("verify plan:\n" + "\n".join(described))


def location_arguments(args: Sequence[Any]) -> tuple[str, int, int] | None:
    """verify.showLocation's arguments: [uri, line, character], 0-based."""
    if len(args) == 1 and isinstance(args[0], list):
        args = args[0]
    if not args or not isinstance(args[0], str):
        return None
    numbers = [_index(a) for a in args[1:3]]
    line, character = (*numbers, 0, 0)[:2]
    return args[0], line, character


UINTEGER_MAX = 2**31 - 1  # LSP's uinteger


def _index(value: Any) -> int:
    """A 0-based line or character as LSP allows it (a uinteger), else 0."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= UINTEGER_MAX:
        return value
    return 0
