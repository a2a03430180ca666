"""pygls handlers: the lifecycle, documents, folders and settings, and pull diagnostics;
each a few lines that hand over to the state's modules (lsp_verify.workspace)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from urllib.parse import unquote

from lsprotocol import types

from lsp_verify.config.settings import parse_init_options
from lsp_verify.lsp.negotiate import fit_to_client
from lsp_verify.lsp.server import CLIENT_S, SERVER, VerifyServer
from lsp_verify.results.diagnostics import CONFIG, VERIFY
from lsp_verify.uris import path_to_uri
from lsp_verify.workspace import commands, configure, triggers
from lsp_verify.workspace.watched import trigger_changed

log = logging.getLogger("lsp_verify")


# ----- lifecycle -----


@SERVER.feature(types.INITIALIZE)
def initialize(ls: VerifyServer, params: types.InitializeParams) -> None:
    options = parse_init_options(
        params.initialization_options,
        ls.has("text_document.diagnostic"),
        ls.has("workspace.diagnostics.refresh_support"),
    )
    # relatedInformation only for a client that says it shows it; else it joins the message.
    related = ls.has("text_document.publish_diagnostics.related_information") or ls.has(
        "text_document.diagnostic.related_information"
    )
    options = dataclasses.replace(options, related=related)
    options = fit_to_client(ls, options)
    ls.state.options = options
    if options.pull:
        # Only a client that pulls is told the server answers pulls. One that can be told to
        # pull again gets no pushes (it would keep two copies); one that cannot (no
        # refreshSupport: opencode) gets both, or a run that ends after its pull gave up
        # would never reach it.
        ls.feature(
            types.TEXT_DOCUMENT_DIAGNOSTIC,
            types.DiagnosticOptions(
                identifier="verify", inter_file_dependencies=True, workspace_diagnostics=True
            ),
        )(pull_document)
        ls.feature(types.WORKSPACE_DIAGNOSTIC)(pull_workspace)
    for folder in params.workspace_folders or []:
        ls.state.add_folder(folder.uri)
    if not params.workspace_folders:
        root = params.root_uri or (path_to_uri(params.root_path) if params.root_path else None)
        if root:
            ls.state.add_folder(root)
    # A client must send `initialized` next; one that never does still gets its commands and
    # saves answered, on the initialization options, once CLIENT_S has passed.
    ls.state.spawn(_start_unless_initialized(ls))


@SERVER.feature(types.INITIALIZED)
async def initialized(ls: VerifyServer, params: types.InitializedParams) -> None:
    await _start(ls)


async def _start_unless_initialized(ls: VerifyServer) -> None:
    await asyncio.sleep(CLIENT_S)
    if not ls.started:
        log.warning("no initialized from the client %g s after initialize: starting", CLIENT_S)
        await _start(ls)


async def _start(ls: VerifyServer) -> None:
    """What `initialized` starts: the folders' settings, their first status, the watchers."""
    if ls.started:
        return
    ls.started = True
    _import_run_modules()
    await configure.load_settings(ls.state, list(ls.state.folders.values()))
    # No await between the settings and the first status: no run can have started, so
    # this "not run yet" status never lands after a finished one.
    for folder in ls.state.folders.values():
        folder.settings()
        ls.state.send_status(folder)
    await ls.register_watchers()


# ----- the workspace and its documents -----


@SERVER.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: VerifyServer, params: types.DidChangeConfigurationParams) -> None:
    configure.settings_changed(ls.state, params.settings)


@SERVER.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
def did_change_folders(ls: VerifyServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    # The folder list changes at once, so the very next save sees it.
    for removed in params.event.removed:
        ls.state.remove_folder(removed.uri)
    added = [f for f in (ls.state.add_folder(a.uri) for a in params.event.added) if f]
    ls.state.spawn(configure.load_settings(ls.state, added))


@SERVER.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: VerifyServer, params: types.DidSaveTextDocumentParams) -> None:
    triggers.on_save(ls.state, params.text_document.uri)


@SERVER.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: VerifyServer, params: types.DidChangeTextDocumentParams) -> None:
    triggers.on_change(ls.state, params.text_document.uri)


@SERVER.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: VerifyServer, params: types.DidOpenTextDocumentParams) -> None:
    triggers.on_open(ls.state, params.text_document.uri)


@SERVER.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: VerifyServer, params: types.DidCloseTextDocumentParams) -> None:
    # pygls has dropped the document already: one with no diagnostics left is forgotten.
    ls.state.diagnostics.release(params.text_document.uri)


@SERVER.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched(ls: VerifyServer, params: types.DidChangeWatchedFilesParams) -> None:
    trigger_changed(ls.state, [(change.uri, int(change.type)) for change in params.changes])


# ----- pull diagnostics (registered in `initialize` for clients that pull) -----


async def pull_document(
    ls: VerifyServer, params: types.DocumentDiagnosticParams
) -> types.DocumentDiagnosticReport:
    uri = params.text_document.uri
    await commands.wait_for_pending(ls.state, uri)
    result_id = ls.state.diagnostics.result_id(uri)
    if params.previous_result_id == result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
    return types.RelatedFullDocumentDiagnosticReport(
        items=ls.state.diagnostics.union(uri), result_id=result_id
    )


async def pull_workspace(
    ls: VerifyServer, params: types.WorkspaceDiagnosticParams
) -> types.WorkspaceDiagnosticReport:
    await commands.wait_for_pending(ls.state, None)
    store = ls.state.diagnostics
    previous = {p.uri: p.value for p in params.previous_result_ids}
    items: list[types.WorkspaceDocumentDiagnosticReport] = []
    for uri in sorted(store.uris(VERIFY) | store.uris(CONFIG) | set(previous)):
        rid = store.result_id(uri)
        # LSP: the version of a document the client has open, null only for one it has not.
        document = ls.workspace.text_documents.get(unquote(uri))
        version = document.version if document is not None else None
        if previous.get(uri) == rid:
            items.append(
                types.WorkspaceUnchangedDocumentDiagnosticReport(
                    uri=uri, result_id=rid, version=version
                )
            )
        else:
            items.append(
                types.WorkspaceFullDocumentDiagnosticReport(
                    uri=uri, items=store.union(uri), result_id=rid, version=version
                )
            )
    return types.WorkspaceDiagnosticReport(items=items)


def _import_run_modules() -> None:
    """Import what a run needs (after `initialize` is answered, so the editor gets its
    answer sooner), and make the server the subreaper of what runs start."""
    import lsp_verify.planning.plan
    import lsp_verify.running.execute
    import lsp_verify.trust  # noqa: F401
    from lsp_verify.running.reaper import claim_children

    claim_children()
