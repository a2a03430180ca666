"""The language server: pygls handlers and the `verify.*` commands, each a few lines that
hand over to the Workspace; and the workspace's `UI`, carried out over LSP.

This module and `transport.py` are the only ones that import pygls. What is decided (which
folder, whether a change triggers, what runs, what is shown) is the workspace's; how it
reaches the client (messages, questions, progress, status, publishes) is here.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import uuid
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer

from lsp_verify import __version__
from lsp_verify.config.settings import LogLevel, parse_init_options
from lsp_verify.lsp.inflight import Refused
from lsp_verify.lsp.negotiate import CODE_ACTION_LITERALS, fit_to_client
from lsp_verify.lsp.progress import RunProgress
from lsp_verify.lsp.transport import Transport, VerifyProtocol
from lsp_verify.results.diagnostics import CONFIG, VERIFY
from lsp_verify.uris import path_to_uri
from lsp_verify.workspace.run import Progress, Workspace

log = logging.getLogger("lsp_verify")

STATUS_METHOD = "verify/status"
QUESTION_S = 600.0  # how long the approval question waits for its answer (SPEC 7)
CLIENT_S = 10.0  # how long any other request to the client waits for its answer
_LEVELS = {
    "log": types.MessageType.Log,
    "info": types.MessageType.Info,
    "warning": types.MessageType.Warning,
    "error": types.MessageType.Error,
}


class VerifyServer(LanguageServer):
    """pygls' server, and the UI through which the workspace speaks to the client."""

    def __init__(self) -> None:
        super().__init__(
            "lsp-verify",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=VerifyProtocol,
        )
        self.verify = Workspace(self)
        self.transport = Transport(self, self)
        self.cancels: dict[str, asyncio.Event] = {}  # progress token -> its run's cancel
        self.started = False  # `initialized` (or its stand-in) has loaded the settings

    def has(self, capability: str) -> bool:
        """Whether the client declared a capability (a dotted path, as pygls spells it)."""
        return bool(get_capability(self.protocol.client_capabilities, capability, False))

    # ----- what the transport hands over -----

    @property
    def closing(self) -> bool:
        return self.verify.closing

    @closing.setter
    def closing(self, value: bool) -> None:
        self.verify.closing = value

    def on_save(self, uri: str) -> None:
        self.verify.on_save(uri)

    def on_watched(self, changes: list[tuple[str, int]]) -> None:
        self.verify.on_watched(changes)

    def on_progress_cancel(self, token: str) -> None:
        """The client cancelled a run through its progress."""
        cancel = self.cancels.get(token)
        if cancel is not None:
            cancel.set()

    async def close_all(self) -> None:
        """Shutdown, exit, stdin EOF, SIGTERM: nothing the server started may outlive it."""
        await self.verify.close_all()
        from lsp_verify.running.reaper import sweep

        sweep(kill=True)

    # ----- the workspace's UI -----

    def publish(self, uri: str, payloads: list[bytes]) -> None:
        self.transport.publish(uri, payloads)

    def send_status(self, status: dict[str, Any]) -> None:
        self.transport.send_json(STATUS_METHOD, status)

    def send_output(self, payload: dict[str, Any]) -> None:
        if not self.verify.closing:
            self.transport.send_json("verify/output", payload)

    def log(self, text: str, level: LogLevel = "log") -> None:
        self.window_log_message(types.LogMessageParams(type=_LEVELS[level], message=text))

    def show_warning(self, text: str) -> None:
        self.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=text)
        )

    def show_info(self, text: str) -> None:
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=text))

    def show_document(self, uri: str, line: int | None = None, character: int = 0) -> bool:
        """Ask the client to open `uri` (at a line); False when it cannot."""
        if not self.has("window.show_document.support"):
            return False
        selection = None
        if line is not None:
            at = types.Position(line=line, character=character)
            selection = types.Range(start=at, end=at)
        params = types.ShowDocumentParams(uri=uri, take_focus=True, selection=selection)
        self.request_later(types.WINDOW_SHOW_DOCUMENT, params)
        return True

    def can_ask(self) -> bool:
        return self.has("window.show_message")

    async def ask(self, text: str, actions: Sequence[str]) -> str | None:
        """The user's choice among `actions`; None when the question was dismissed, refused
        (an error answer, no answer within QUESTION_S, a stopping server) or answered with
        something that is not a choice."""
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=text,
            actions=[types.MessageActionItem(title=a) for a in actions],
        )
        try:
            answer = await self.transport.outgoing.request(
                types.WINDOW_SHOW_MESSAGE_REQUEST, params, QUESTION_S
            )
        except Refused as exc:
            self.verify.log(f"window/showMessageRequest: {exc}; taken as dismissed")
            return None
        title = answer.get("title") if isinstance(answer, dict) else None
        if answer is not None and not isinstance(title, str):
            self.verify.log(
                f"window/showMessageRequest answered with {_shape(answer)}, not a "
                "MessageActionItem or null: taken as dismissed",
                "warning",
            )
        return title if isinstance(title, str) else None

    def begin_progress(self, command: str, cancel: asyncio.Event) -> Progress | None:
        if not self.has("window.work_done_progress"):
            return None
        return RunProgress(self, command, cancel)

    def refresh_pulls(self) -> None:
        if self.has("workspace.diagnostics.refresh_support"):
            self.request_later(types.WORKSPACE_DIAGNOSTIC_REFRESH, None)

    async def configuration(self, uris: list[str]) -> list[Any] | None:
        """Each folder's `verify` section, as the client answers workspace/configuration;
        None for a client that cannot be asked, and None for a folder whose answer is
        missing or refused (the initialization options then apply)."""
        if not self.has("workspace.configuration"):
            return None
        items = [types.ConfigurationItem(scope_uri=uri, section="verify") for uri in uris]
        try:
            answer = await self.transport.outgoing.request(
                types.WORKSPACE_CONFIGURATION, types.ConfigurationParams(items=items), CLIENT_S
            )
        except Refused as exc:  # a client that fails the request keeps init options
            self.verify.log(f"workspace/configuration: {exc}")
            return [None] * len(uris)
        if not isinstance(answer, list):
            self.verify.log(
                f"workspace/configuration answered with {_shape(answer)}, not a list: "
                "using the initialization options",
                "warning",
            )
            return [None] * len(uris)
        return answer

    def document_text(self, uri: str) -> str | None:
        document = self.workspace.text_documents.get(uri)
        return document.source if document is not None else None

    async def register_watchers(self) -> None:
        """Ask the client to report file changes, where it can register watchers."""
        if not self.has("workspace.did_change_watched_files.dynamic_registration"):
            return
        watcher = types.FileSystemWatcher(glob_pattern="**/*")
        registration = types.Registration(
            id=f"verify-watch-{uuid.uuid4().hex}",
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=[watcher]),
        )
        try:
            await self.transport.outgoing.request(
                types.CLIENT_REGISTER_CAPABILITY,
                types.RegistrationParams(registrations=[registration]),
                CLIENT_S,
            )
        except Refused as exc:  # a client that refuses: saves still work
            self.verify.log(f"could not register file watchers: {exc}")

    def request_later(self, method: str, params: Any) -> None:
        """A request written now, whose answer nothing waits for; a refusal is logged."""
        if self.verify.closing:
            return
        answer = self.transport.outgoing.sent(method, params, CLIENT_S)

        def settled(done: asyncio.Future[Any]) -> None:
            if not done.cancelled() and done.exception() is not None:
                log.debug("%s: %s", method, done.exception())

        answer.add_done_callback(settled)


def _shape(value: object) -> str:
    """What a client sent where something else was expected, in a few words for the log."""
    return "null" if value is None else f"a {type(value).__name__} ({str(value)[:40]!r})"


SERVER = VerifyServer()


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
    ls.verify.options = options
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
        ls.verify.add_folder(folder.uri)
    if not params.workspace_folders:
        root = params.root_uri or (path_to_uri(params.root_path) if params.root_path else None)
        if root:
            ls.verify.add_folder(root)
    # A client must send `initialized` next; one that never does still gets its commands and
    # saves answered, on the initialization options, once CLIENT_S has passed.
    ls.verify.spawn(_start_unless_initialized(ls))


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
    await ls.verify.load_settings(list(ls.verify.folders.values()))
    # No await between the settings and the first status: no run can have started, so
    # this "not run yet" status never lands after a finished one.
    for folder in ls.verify.folders.values():
        folder.settings()
        ls.verify.send_status(folder)
    await ls.register_watchers()


# ----- the workspace and its documents -----


@SERVER.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: VerifyServer, params: types.DidChangeConfigurationParams) -> None:
    ls.verify.settings_changed(params.settings)


@SERVER.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
def did_change_folders(ls: VerifyServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    # The folder list changes at once, so the very next save sees it.
    for removed in params.event.removed:
        ls.verify.remove_folder(removed.uri)
    added = [f for f in (ls.verify.add_folder(a.uri) for a in params.event.added) if f]
    ls.verify.spawn(ls.verify.load_settings(added))


@SERVER.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: VerifyServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.verify.on_save(params.text_document.uri)


@SERVER.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: VerifyServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.verify.on_change(params.text_document.uri)


@SERVER.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: VerifyServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.verify.on_open(params.text_document.uri)


@SERVER.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched(ls: VerifyServer, params: types.DidChangeWatchedFilesParams) -> None:
    ls.verify.on_watched([(change.uri, int(change.type)) for change in params.changes])


# ----- pull diagnostics (registered in `initialize` for clients that pull) -----


async def pull_document(
    ls: VerifyServer, params: types.DocumentDiagnosticParams
) -> types.DocumentDiagnosticReport:
    uri = params.text_document.uri
    await ls.verify.wait_for_pending(uri)
    result_id = ls.verify.diagnostics.result_id(uri)
    if params.previous_result_id == result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
    return types.RelatedFullDocumentDiagnosticReport(
        items=ls.verify.diagnostics.union(uri), result_id=result_id
    )


async def pull_workspace(
    ls: VerifyServer, params: types.WorkspaceDiagnosticParams
) -> types.WorkspaceDiagnosticReport:
    await ls.verify.wait_for_pending(None)
    store = ls.verify.diagnostics
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


# ----- commands -----


@SERVER.command("verify.runNow")
async def run_now(ls: VerifyServer, *args: Any) -> Any:
    folder, document = await ls.verify.ready_target(uri_argument(args))
    if folder is None:
        return None
    folder.guard.note(False)  # asked for by the user: what it writes is no echo
    return (await folder.verifier.run_now(document)).to_json()


@SERVER.command("verify.cancel")
async def cancel(ls: VerifyServer, *args: Any) -> Any:
    return [record.to_json() for record in await ls.verify.cancel(uri_argument(args))]


@SERVER.command("verify.showLastRun")
def show_last_run(ls: VerifyServer, *args: Any) -> Any:
    return ls.verify.last_records(uri_argument(args))


@SERVER.command("verify.explain")
async def explain(ls: VerifyServer, *args: Any) -> Any:
    folder, _ = await ls.verify.ready_target(uri_argument(args))
    return ls.verify.explain(folder) if folder else None


@SERVER.command("verify.approve")
async def approve(ls: VerifyServer, *args: Any) -> Any:
    folder, _ = await ls.verify.ready_target(uri_argument(args))
    return await ls.verify.approve(folder) if folder else None


@SERVER.command("verify.revoke")
async def revoke(ls: VerifyServer, *args: Any) -> Any:
    folder, _ = ls.verify.target(uri_argument(args))
    return await ls.verify.revoke(folder) if folder else None


# Registered bare (`codeActionProvider: true`): see `negotiate.fit_to_client`.
@SERVER.feature(types.TEXT_DOCUMENT_CODE_ACTION)
def code_action(
    ls: VerifyServer, params: types.CodeActionParams
) -> list[types.CodeAction] | list[types.Command]:
    from lsp_verify.lsp.actions import as_commands, code_actions

    uri = params.text_document.uri
    folder, _ = ls.verify.target(uri)
    if folder is None:
        return []
    actions = code_actions(uri, folder.uri, params.context.diagnostics)
    return actions if ls.has(CODE_ACTION_LITERALS) else as_commands(actions)


@SERVER.command("verify.showRun")
def show_run(ls: VerifyServer, *args: Any) -> Any:
    from lsp_verify.lsp import actions

    folder = ls.verify.last_run_folder(uri_argument(args))
    return actions.show_run(folder.verifier.last_record if folder else None, ls)


@SERVER.command("verify.showPlan")
async def show_plan(ls: VerifyServer, *args: Any) -> Any:
    from lsp_verify.lsp import actions
    from lsp_verify.trust import describe

    folder, _ = await ls.verify.ready_target(uri_argument(args))
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


def _import_run_modules() -> None:
    """Import what a run needs (after `initialize` is answered, so the editor gets its
    answer sooner), and make the server the subreaper of what runs start."""
    import lsp_verify.planning.plan
    import lsp_verify.running.execute
    import lsp_verify.trust  # noqa: F401
    from lsp_verify.running.reaper import claim_children

    claim_children()


def serve() -> int:
    return SERVER.transport.serve()
