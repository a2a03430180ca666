"""The language server: `VerifyServer`, pygls' server and the state's `UI` carried out over
LSP (publishes, status, log, questions, progress, configuration), and the one instance the
handlers (handlers.py) and the `verify.*` commands (commands.py) are registered on.

This module and `transport.py` are the only ones that import pygls. What is decided (which
folder, whether a change triggers, what runs, what is shown) is the workspace's; how it
reaches the client (messages, questions, progress, status, publishes) is here.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Sequence
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer

from lsp_verify import __version__
from lsp_verify.config.settings import LogLevel
from lsp_verify.lsp.inflight import Refused
from lsp_verify.lsp.progress import RunProgress
from lsp_verify.lsp.serving import VerifyProtocol
from lsp_verify.lsp.transport import Transport
from lsp_verify.workspace import triggers
from lsp_verify.workspace.state import State
from lsp_verify.workspace.ui import CannotAnswer, Progress
from lsp_verify.workspace.watched import trigger_changed

log = logging.getLogger("lsp_verify")

STATUS_METHOD = "verify/status"
QUESTION_S = 600.0  # how long the approval question waits for its answer (SPEC 7)
# ... from a client that never declared window.showMessage: it may answer all the same (eglot
# does, in the minibuffer), or never (then each trigger would wait for it): a shorter bound.
# LSP_VERIFY_UNDECLARED_QUESTION_S shortens it for the tests of such a client.
UNDECLARED_QUESTION_S = 60.0


CLIENT_S = 10.0  # how long any other request to the client waits for its answer
_LEVELS = {
    "log": types.MessageType.Log,
    "info": types.MessageType.Info,
    "warning": types.MessageType.Warning,
    "error": types.MessageType.Error,
}


def _undeclared_question_s() -> float:
    try:
        seconds = float(os.environ.get("LSP_VERIFY_UNDECLARED_QUESTION_S", ""))
    except ValueError:
        return UNDECLARED_QUESTION_S
    return seconds if 0 < seconds <= UNDECLARED_QUESTION_S else UNDECLARED_QUESTION_S


class VerifyServer(LanguageServer):
    """pygls' server, and the UI through which the workspace speaks to the client."""

    def __init__(self) -> None:
        super().__init__(
            "lsp-verify",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=VerifyProtocol,
        )
        self.state = State(self)
        self.transport = Transport(self, self)
        self.cancels: dict[str, asyncio.Event] = {}  # progress token -> its run's cancel
        self.started = False  # `initialized` (or its stand-in) has loaded the settings
        self._cannot_answer = False  # the client showed it cannot answer a question (can_ask)
        self._capabilities_read: object = None
        self._declared: dict[str, bool] = {}  # capability -> declared, for _capabilities_read

    def has(self, capability: str) -> bool:
        """Whether the client declared a capability (a dotted path, as pygls spells it).
        Asked a few times a run: each answer is kept for the capabilities it was read from
        (pygls' lookup makes new attribute names each time, which the interpreter's type
        cache then holds on to)."""
        capabilities = self.protocol.client_capabilities
        if capabilities is not self._capabilities_read:
            self._capabilities_read, self._declared = capabilities, {}
        declared = self._declared.get(capability)
        if declared is None:
            declared = bool(get_capability(capabilities, capability, False))
            self._declared[capability] = declared
        return declared

    # ----- what the transport hands over -----

    @property
    def closing(self) -> bool:
        return self.state.closing

    @closing.setter
    def closing(self, value: bool) -> None:
        self.state.closing = value

    def on_save(self, uri: str) -> None:
        triggers.on_save(self.state, uri)

    def on_watched(self, changes: list[tuple[str, int]]) -> None:
        trigger_changed(self.state, changes)

    def on_progress_cancel(self, token: str) -> None:
        """The client cancelled a run through its progress."""
        cancel = self.cancels.get(token)
        if cancel is not None:
            cancel.set()

    async def close_all(self) -> None:
        """Shutdown, exit, stdin EOF, SIGTERM: nothing the server started may outlive it."""
        await self.state.close_all()
        from lsp_verify.running.reaper import sweep

        sweep(kill=True)

    # ----- the workspace's UI -----

    def publish(self, uri: str, payloads: list[bytes]) -> None:
        self.transport.publish(uri, payloads)

    def send_status(self, status: dict[str, Any]) -> None:
        self.transport.send_json(STATUS_METHOD, status)

    def send_output(self, payload: dict[str, Any]) -> None:
        if not self.state.closing:
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
        """Every client is asked, until one that never declared window.showMessage shows it
        cannot answer (window/showMessageRequest predates that capability, which only says
        how rich an answer may be: eglot answers without declaring it)."""
        return not self._cannot_answer

    async def ask(self, text: str, actions: Sequence[str]) -> str | None:
        """The user's choice among `actions`; None when the question was dismissed, refused
        (an error answer, no answer within QUESTION_S, a stopping server) or answered with
        something that is not a choice. A client that never declared window.showMessage gets
        UNDECLARED_QUESTION_S, and raises CannotAnswer where it gives no choice."""
        declared = self.has("window.show_message")
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=text,
            actions=[types.MessageActionItem(title=a) for a in actions],
        )
        bound = QUESTION_S if declared else _undeclared_question_s()
        try:
            answer = await self.transport.outgoing.request(
                types.WINDOW_SHOW_MESSAGE_REQUEST, params, bound
            )
        except Refused as exc:
            if not declared:
                if exc.unhandled and not self.transport.outgoing.stopped:
                    self._cannot_answer = True  # asked no more this session
                    self.state.log(f"window/showMessageRequest: {exc}; not asked again")
                raise CannotAnswer(str(exc), again=not exc.unhandled) from None
            self.state.log(f"window/showMessageRequest: {exc}; taken as dismissed")
            return None
        title = answer.get("title") if isinstance(answer, dict) else None
        if answer is not None and not isinstance(title, str):
            self.state.log(
                f"window/showMessageRequest answered with {_shape(answer)}, not a "
                "MessageActionItem or null: taken as dismissed",
                "warning",
            )
        if not isinstance(title, str) and not declared:
            raise CannotAnswer("the question got no answer", again=True)
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
            self.state.log(f"workspace/configuration: {exc}")
            return [None] * len(uris)
        if not isinstance(answer, list):
            self.state.log(
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
            self.state.log(f"could not register file watchers: {exc}")

    def request_later(self, method: str, params: Any) -> None:
        """A request written now, whose answer nothing waits for; a refusal is logged."""
        if self.state.closing:
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


def serve() -> int:
    """Serve on stdio until the client or a signal ends it; the exit status."""
    import lsp_verify.lsp.commands
    import lsp_verify.lsp.handlers  # noqa: F401  (both register on SERVER)

    return SERVER.transport.serve()
