"""The `verify.*` commands (`workspace/executeCommand`) and code actions: each a few lines
that read the arguments and hand over to the state's commands (workspace/commands.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lsprotocol import types

from lsp_verify.lsp.negotiate import CODE_ACTION_LITERALS
from lsp_verify.lsp.server import SERVER, VerifyServer
from lsp_verify.workspace import commands as work


@SERVER.command("verify.runNow")
async def run_now(ls: VerifyServer, *args: Any) -> Any:
    folder, document = await work.ready_target(ls.state, uri_argument(args))
    if folder is None:
        return None
    folder.guard.note(False)  # asked for by the user: what it writes is no echo
    return (await folder.verifier.run_now(document)).to_json()


@SERVER.command("verify.cancel")
async def cancel(ls: VerifyServer, *args: Any) -> Any:
    return [record.to_json() for record in await work.cancel(ls.state, uri_argument(args))]


@SERVER.command("verify.showLastRun")
def show_last_run(ls: VerifyServer, *args: Any) -> Any:
    return work.last_records(ls.state, uri_argument(args))


@SERVER.command("verify.explain")
async def explain(ls: VerifyServer, *args: Any) -> Any:
    folder, _ = await work.ready_target(ls.state, uri_argument(args))
    return await work.explain(folder) if folder else None


@SERVER.command("verify.approve")
async def approve(ls: VerifyServer, *args: Any) -> Any:
    folder, _ = await work.ready_target(ls.state, uri_argument(args))
    return await work.approve(ls.state, folder) if folder else None


@SERVER.command("verify.revoke")
async def revoke(ls: VerifyServer, *args: Any) -> Any:
    folder, _ = work.target(ls.state, uri_argument(args))
    return await work.revoke(ls.state, folder) if folder else None


# Registered bare (`codeActionProvider: true`): see `negotiate.fit_to_client`.
@SERVER.feature(types.TEXT_DOCUMENT_CODE_ACTION)
def code_action(
    ls: VerifyServer, params: types.CodeActionParams
) -> list[types.CodeAction] | list[types.Command]:
    from lsp_verify.lsp.actions import as_commands, code_actions

    uri = params.text_document.uri
    folder, _ = work.target(ls.state, uri)
    if folder is None:
        return []
    actions = code_actions(uri, folder.uri, params.context.diagnostics)
    return actions if ls.has(CODE_ACTION_LITERALS) else as_commands(actions)


@SERVER.command("verify.showRun")
def show_run(ls: VerifyServer, *args: Any) -> Any:
    from lsp_verify.lsp import actions

    folder = work.last_run_folder(ls.state, uri_argument(args))
    return actions.show_run(folder.verifier.last_record if folder else None, ls)


@SERVER.command("verify.showPlan")
async def show_plan(ls: VerifyServer, *args: Any) -> Any:
    from lsp_verify.lsp import actions
    from lsp_verify.trust import describe

    folder, _ = await work.ready_target(ls.state, uri_argument(args))
    if folder is not None:
        plan = folder.plan()
        actions.show_plan(describe(plan) if plan.command else [plan.reason], ls)
    return None


@SERVER.command("verify.showLocation")
def show_location(ls: VerifyServer, *args: Any) -> Any:
    from lsp_verify.lsp.actions import location_arguments

    where = location_arguments(args)
    return ls.show_document(*where) if where is not None else False


def uri_argument(args: Sequence[Any]) -> str | None:
    """The URI a command names: none, [], [uri], [{uri}], [{textDocument: {uri}}], nested."""
    for arg in args:
        if isinstance(arg, str):
            return arg
        if isinstance(arg, dict):
            for key in ("uri", "folder", "document"):
                if isinstance(arg.get(key), str):
                    return str(arg[key])
            doc = arg.get("textDocument")
            if isinstance(doc, dict) and isinstance(doc.get("uri"), str):
                return str(doc["uri"])
        if isinstance(arg, list):
            found = uri_argument(arg)
            if found is not None:
                return found
    return None
