"""The language server: LSP wiring only.

Everything it does is delegated: settings and plans to `settings`/`detect`, scheduling to the
per-folder `FolderVerifier`, processes to `execute`/`runner`, diagnostics layers to
`diagnostics`. This is the only module that imports pygls.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import signal
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import (
    FeatureNotificationError,
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcMethodNotFound,
)
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from lsp_verify import __version__
from lsp_verify.diagnostics import (
    CONFIG,
    VERIFY,
    DiagnosticStore,
    Entry,
    config_entries,
    publish_message,
    read_line,
    record_entries,
)
from lsp_verify.globs import matches_any
from lsp_verify.record import Record, Trigger, record_for_plan
from lsp_verify.settings import (
    PROJECT_FILE,
    ParsedSettings,
    ProjectFile,
    Settings,
    SettingsMessage,
    effective_settings,
    load_project_file,
    parse_settings,
)
from lsp_verify.uris import path_to_uri, relative_to, uri_to_path
from lsp_verify.verifier import FolderVerifier, RunRequest

if TYPE_CHECKING:
    from lsp_verify.plan import Plan
    from lsp_verify.trust import TrustStore

# What only a run needs (the detector, the runner, the matchers, the trust store) is imported
# after `initialize` has been answered, so that the editor gets its answer sooner; see
# `_import_run_modules`, called from `initialized`.

log = logging.getLogger("lsp_verify")

STATUS_METHOD = "verify/status"
PROGRESS_INTERVAL = 0.2  # at most five progress reports a second
SWEEP_DELAY = 0.1  # seconds from a SIGCHLD to the reaping of adopted leftovers
RUN_SPAN_GRACE = 1.0  # seconds after a run in which its own writes may still be reported
# Folders whose changes never trigger a run: version control, environments, caches, build
# output, and what test runs themselves write.
NEVER_TRIGGERS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".hypothesis",
        "build",
        "dist",
        "target",
        ".eggs",
        "htmlcov",
        ".nyc_output",
        "coverage",
        ".next",
        ".cache",
    }
)
RUN_ONCE, ALWAYS, DONT_RUN = "Run once", "Always for this plan", "Don't run"
HOW_TO_APPROVE = (
    "approve it with the verify.approve command or `lsp-verify approve`, "
    "or set verify.command in the editor settings"
)


@dataclass(eq=False)
class Folder:
    """One workspace folder: its settings as the editor gave them, and its verifier."""

    path: str
    uri: str
    verifier: FolderVerifier
    editor: ParsedSettings | None = None
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    project_cache: tuple[tuple[int, ...] | None, ProjectFile | None] | None = None
    plan_cache: tuple[object, tuple[object, ...], Plan] | None = None
    settings_cache: tuple[object, object, Settings] | None = None
    # Wall-clock spans of this folder's recent runs (end None while running): a file that
    # changed inside one, and that the client does not have open, was written by the run.
    run_spans: deque[list[float | None]] = field(default_factory=lambda: deque(maxlen=8))


class VerifyServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "lsp-verify",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.folders: dict[str, Folder] = {}
        self.store = DiagnosticStore()
        self.init_settings: object = None
        self.workspace_trusted = True
        self.closing = False
        self._warned: set[str] = set()
        self._progress: dict[str, asyncio.Event] = {}
        self._trust: TrustStore | None = None
        self.pull = False  # the client pulls diagnostics (LSP 3.17): no pushes then
        self._tasks: set[asyncio.Task[None]] = set()
        self._result_ids: dict[str, int] = {}
        self.shutdown_requested = False
        self._sweep_pending = False
        self._unknown_documents: set[str] = set()  # changed but never opened: said once

    @property
    def trust(self) -> TrustStore:
        if self._trust is None:
            from lsp_verify.trust import TrustStore

            self._trust = TrustStore()
        return self._trust

    # ----- capabilities of the client -----

    def _client_has(self, *path: str) -> bool:
        node: Any = self.client_capabilities
        for name in path:
            node = getattr(node, name, None)
            if node is None:
                return False
        return bool(node)

    @property
    def client_capabilities(self) -> types.ClientCapabilities:
        return self.protocol.client_capabilities

    # ----- folders -----

    def add_folder(self, uri: str) -> Folder | None:
        path = uri_to_path(uri)
        if path is None:
            self.log(f"ignoring workspace folder {uri}: not a file:// folder")
            return None
        if path in self.folders:
            return self.folders[path]

        def on_record(record: Record) -> None:
            self._on_record(folder, record)

        def on_state(state: str) -> None:
            # Sent at once, before a trigger spawns its command: a client that wakes up to
            # read it then does so while the server prepares, not while the command runs
            # beside it on a machine with few cores (measured: a tenth of a millisecond).
            self._send_status(folder)

        verifier = FolderVerifier(path, self._job, on_record=on_record, on_state=on_state)
        folder = Folder(path=path, uri=uri, verifier=verifier)
        self.folders[path] = folder
        return folder

    def folder_of(self, path: str) -> Folder | None:
        """The innermost workspace folder holding `path`."""
        best: Folder | None = None
        for folder in self.folders.values():
            if relative_to(folder.path, path) is not None and (
                best is None or len(folder.path) > len(best.path)
            ):
                best = folder
        return best

    # ----- settings -----

    async def load_settings(self, folders: list[Folder]) -> None:
        """Ask the client for each folder's `verify` section, where it can answer."""
        if folders and self._client_has("workspace", "configuration"):
            items = [types.ConfigurationItem(scope_uri=f.uri, section="verify") for f in folders]
            try:
                answers: list[Any] = list(
                    await self.workspace_configuration_async(types.ConfigurationParams(items=items))
                )
            except Exception as exc:  # a client that fails the request keeps init options
                self.log(f"workspace/configuration failed: {exc}")
                answers = [None] * len(folders)
            for folder, answer in zip(folders, answers):
                value = answer if answer not in (None, {}) else self.init_settings
                folder.editor = self._parse(value, "settings")
        else:
            for folder in folders:
                folder.editor = self._parse(self.init_settings, "initializationOptions")
        for folder in folders:
            folder.ready.set()

    def _parse(self, value: object, origin: str) -> ParsedSettings:
        parsed = parse_settings(value, origin)
        for message in parsed.messages:
            self.warn_once(message.text)
        return parsed

    def warn_once(self, text: str) -> None:
        """A settings problem is shown once (showMessage) and logged, never repeated."""
        if text in self._warned:
            return
        self._warned.add(text)
        self.log(text, types.MessageType.Warning)
        if not self.closing:
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=text)
            )

    def folder_settings(self, folder: Folder) -> tuple[Settings, ProjectFile | None]:
        project = self._project_file(folder)
        cached = folder.settings_cache
        if cached is not None and cached[0] is folder.editor and cached[1] is project:
            return cached[2], project
        settings = effective_settings(folder.editor, project)
        folder.settings_cache = (folder.editor, project, settings)
        return settings, project

    def _project_file(self, folder: Folder) -> ProjectFile | None:
        """`.lsp-verify.toml`, read again only when its stat changes (every save asks).

        A cache that misses an edit (same size within the clock's granularity) is still
        safe: the runner compares the plan's fingerprint with the bytes before spawning, and
        a skipped run drops the cache."""
        path = os.path.join(folder.path, PROJECT_FILE)
        try:
            st = os.stat(path)
            signature: tuple[int, ...] | None = (
                st.st_ino,
                st.st_size,
                st.st_mtime_ns,
                st.st_ctime_ns,
            )
        except OSError:
            signature = None
        cached = folder.project_cache
        if cached is not None and cached[0] == signature:
            return cached[1]
        project = load_project_file(folder.path)
        folder.project_cache = (signature, project)
        self._publish_config_layer(folder, project)
        return project

    def _publish_config_layer(self, folder: Folder, project: ProjectFile | None) -> None:
        uri = path_to_uri(os.path.join(folder.path, PROJECT_FILE))
        messages: tuple[SettingsMessage, ...] = project.parsed.messages if project else ()
        entries = config_entries((m.text, m.line) for m in messages)
        if self.store.set(uri, CONFIG, entries):
            self._publish(uri)

    # ----- messages -----

    def dispatch(self, body: bytes | bytearray) -> bool:
        """One message from the client, as read from stdin; False when it is not JSON.

        A save is the message the user waits on, so it goes straight to `on_save`: pygls'
        typed decoding and dispatch of it cost about a tenth of a millisecond. A watched-files
        notification skips that decoding too (seconds for 100 000 changes). What LSP says the
        server must refuse is refused here: requests after `shutdown` (InvalidRequest), and
        notifications sent as requests (MethodNotFound). Every other message is pygls' to
        handle; one that does not fit its schema is one line in the log."""
        try:
            if len(body) > _LARGE_MESSAGE:
                text = _affordable(body)
                if text is None:
                    return True
                message = json.loads(text)
                del text
            else:
                message = json.loads(body)
        except (ValueError, RecursionError) as exc:
            log.error("a message from the client is not JSON: %s", exc)
            self.report_server_error(exc, JsonRpcException)
            return False
        method = message.get("method") if isinstance(message, dict) else None
        if (
            method == types.TEXT_DOCUMENT_DID_SAVE
            and "id" not in message
            and message.get("jsonrpc") == "2.0"
        ):
            uri = _saved_uri(message.get("params"))
            if uri is not None:
                if not self.shutdown_requested:
                    try:
                        self.on_save(uri)
                    except Exception as exc:
                        log.exception("handling a save of %s failed", uri)
                        self.report_server_error(exc, FeatureNotificationError)
                return True
        if (
            not isinstance(message, dict)
            or message.get("jsonrpc") != "2.0"
            or not isinstance(method, (str, type(None)))
            or not isinstance(message.get("id"), (str, int, type(None)))
        ):
            log.error("a message from the client is not JSON-RPC 2.0: ignored")
            if isinstance(message, dict) and "method" in message and "id" in message:
                self._answer_error(message["id"], -32600, "not a JSON-RPC 2.0 request")
            return True
        if method is not None:
            if method == types.EXIT:
                # Ends the read loop; the transport then kills what runs, and the process
                # exits 0 after a shutdown request, else 1 (LSP). A client that sends exit
                # right behind shutdown, without waiting for its answer, still gets 0.
                self.closing = True
                raise SystemExit(0 if self.shutdown_requested else 1)
            if self.shutdown_requested:
                # LSP: after shutdown, requests fail with InvalidRequest and notifications
                # are dropped.
                if "id" in message:
                    self._answer_error(message["id"], -32600, f"{method}: the server is shut down")
                return True
            if not self._handles(method):
                # Answered here, unread: pygls would turn the params of a method it has no
                # type for into namedtuples, a new class for each object in them (10 s
                # and 400 MB for 600 kB of them).
                if "id" in message:
                    error = JsonRpcMethodNotFound.of(method)
                    self._answer_error(message["id"], error.code, error.message)
                else:
                    log.warning("notification %r from the client: no such method, ignored", method)
                return True
            if "id" in message:
                if method in _NOTIFICATIONS:
                    self._answer_error(
                        message["id"], -32601, f"{method} is a notification, not a request"
                    )
                    return True
                if method == types.SHUTDOWN:
                    self.shutdown_requested = True
            elif method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES:
                changes = _watched_changes(message.get("params"))
                if changes is not None:
                    self.on_watched(changes)
                    return True
            elif method == types.TEXT_DOCUMENT_DID_CHANGE and not self._is_open(message):
                return True
        elif message.get("id") not in self.protocol._request_futures:
            # A response to no request of the server's: dropped unread (see above).
            log.warning("%s from the client answers no request: ignored", _describe(message))
            return True
        try:
            self.protocol.handle_message(self.protocol.structure_message(message))
        except Exception as exc:
            log.error("%s from the client: %s", _describe(message), _why(exc))
            self.report_server_error(exc, JsonRpcException)
            if method is not None and "id" in message:
                # A request pygls could not even read: answer it, or the client waits forever.
                error = exc if isinstance(exc, JsonRpcException) else JsonRpcInternalError()
                self._answer_error(message["id"], error.code, error.message)
        return True

    def _handles(self, method: str) -> bool:
        features = self.protocol.fm
        return (
            method in features.features
            or method in features.builtin_features
            or method == types.CANCEL_REQUEST
        )

    def _answer_error(self, rid: Any, code: int, text: str) -> None:
        self.send_raw({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": text}})

    def _is_open(self, message: dict[str, Any]) -> bool:
        """Is the document of this didChange open? Not when its didOpen was refused (too
        big): pygls would fail on every change of it, so those are dropped, said once."""
        params = message.get("params")
        document = params.get("textDocument") if isinstance(params, dict) else None
        uri = document.get("uri") if isinstance(document, dict) else None
        if not isinstance(uri, str) or unquote(uri) in self.workspace.text_documents:
            return True  # or not shaped as LSP says: pygls' to refuse
        if uri not in self._unknown_documents and len(self._unknown_documents) < 100:
            self._unknown_documents.add(uri)
            log.warning("didChange of %s, which is not open: ignored", uri)
        return False

    # ----- triggers -----

    def on_save(self, uri: str, trigger: Trigger = "save") -> None:
        path = uri_to_path(uri)
        folder = self.folder_of(path) if path is not None else None
        if folder is None or path is None:
            self.log(f"{uri}: outside every workspace folder; not verified")
            return
        self._when_ready(folder, lambda: self._gate_trigger(folder, path, uri, trigger))

    def _when_ready(self, folder: Folder, action: Callable[[], None]) -> None:
        """Run `action` once the folder's settings are known: at once in the usual case
        (every loop turn before the spawn is latency), else when the client has answered
        workspace/configuration."""
        if folder.ready.is_set():
            action()
            return

        async def later() -> None:
            await folder.ready.wait()
            action()

        asyncio.get_running_loop().create_task(later())

    def _gate_trigger(self, folder: Folder, path: str, uri: str | None, trigger: Trigger) -> None:
        """runOn and globs decide whether this trigger runs anything."""
        settings, _ = self.folder_settings(folder)
        if settings.run_on == "manual":
            return
        rel = relative_to(folder.path, path) or ""
        if not matches_any(settings.globs, rel):
            return
        folder.verifier.trigger(trigger, uri)

    # ----- one run -----

    async def _job(self, request: RunRequest) -> Record:
        from lsp_verify.execute import execute_plan

        folder = self.folders.get(request.folder)
        if folder is None:  # removed while queued
            return Record.not_started(
                request.folder, request.trigger, "cancelled", "workspace folder was removed"
            )
        await folder.ready.wait()
        settings, project = self.folder_settings(folder)
        plan = self._plan(folder, project)
        if plan.command is None:
            return record_for_plan(
                plan, trigger=request.trigger, outcome="no-plan", document=request.document
            )
        refusal = await self.approve(folder, plan, settings, request)
        if refusal is not None:
            return record_for_plan(
                plan,
                trigger=request.trigger,
                outcome="declined",
                reason=refusal,
                document=request.document,
            )
        if request.cancel.is_set():
            return record_for_plan(
                plan, trigger=request.trigger, outcome="cancelled", document=request.document
            )
        progress = self._begin_progress(plan, request.cancel)
        outcome = "cancelled"
        span: list[float | None] = [time.time(), None]
        folder.run_spans.append(span)
        try:
            record = await execute_plan(
                plan,
                settings,
                trigger=request.trigger,
                document=request.document,
                cancel=request.cancel,
                on_line=progress.line if progress else None,
            )
            outcome = record.outcome
            return record
        finally:
            span[1] = time.time()
            if progress is not None:
                progress.end(outcome)

    def _plan(self, folder: Folder, project: ProjectFile | None) -> Plan:
        """The folder's plan, made again only when the editor settings or one of the files
        planning reads changed (the runner still checks the manifest's bytes before it
        spawns, so a change the stat missed skips the run rather than running stale)."""
        from lsp_verify.plan import make_plan, plan_signature

        signature = plan_signature(folder.path)
        cached = folder.plan_cache
        if cached is not None and cached[0] is folder.editor and cached[1] == signature:
            return cached[2]
        plan = make_plan(folder.path, folder.editor, project=project)
        folder.plan_cache = (folder.editor, signature, plan)
        return plan

    async def approve(
        self, folder: Folder, plan: Plan, settings: Settings, request: RunRequest
    ) -> str | None:
        """The trust gate: None to run, or why the plan does not run."""
        from lsp_verify.trust import describe, gate, needs_question, plan_fingerprint

        decision = gate(
            plan,
            self.trust,
            confirm=settings.confirm,
            run_now=request.trigger == "runNow",
            workspace_trusted=self.workspace_trusted,
        )
        self._trust_warnings()
        if decision.action == "run":
            if settings.confirm == "never" and needs_question(plan):
                key = f"never:{folder.path}:{plan_fingerprint(plan)}"
                if key not in self._warned:
                    self._warned.add(key)
                    self.log(f'confirm is "never": running {plan.command!r} without asking')
            return None
        if decision.action == "decline":
            return f"{decision.why}; {HOW_TO_APPROVE}"
        if not self._client_has("window", "show_message"):
            return f"this editor cannot answer a question; {HOW_TO_APPROVE}"
        actions = [RUN_ONCE, *([ALWAYS] if decision.offer_always else []), DONT_RUN]
        text = "verify wants to run a command from this repository:\n" + "\n".join(describe(plan))
        try:
            answer = await self.window_show_message_request_async(
                types.ShowMessageRequestParams(
                    type=types.MessageType.Warning,
                    message=text,
                    actions=[types.MessageActionItem(title=a) for a in actions],
                )
            )
        except Exception as exc:  # a client that errors on the question declines
            self.log(f"window/showMessageRequest failed: {exc}")
            answer = None
        # Saves that came while the question was open are answered by this run.
        request.absorb()
        title = answer.title if answer is not None else None
        if title == ALWAYS:
            await asyncio.to_thread(self.trust.approve, plan)
        elif title == DONT_RUN:
            await asyncio.to_thread(self.trust.refuse, plan)
        self._trust_warnings()
        if title in (RUN_ONCE, ALWAYS):
            return None
        if title == DONT_RUN:
            return f"you chose not to run it; {HOW_TO_APPROVE}"
        return f"the question was dismissed; {HOW_TO_APPROVE}"

    def _trust_warnings(self) -> None:
        for warning in self.trust.take_warnings():
            self.warn_once(warning)

    # ----- results -----

    def _on_record(self, folder: Folder, record: Record) -> None:
        if record.outcome == "skipped":
            folder.project_cache = None
            folder.plan_cache = None
        # Diagnostics first: they are what the user waits for; the log line can follow.
        self._publish_record(folder, record)
        if (
            self.pull
            and not self.closing
            and self._client_has("workspace", "diagnostics", "refresh_support")
        ):
            self.protocol.send_request(types.WORKSPACE_DIAGNOSTIC_REFRESH, None)
        self.log(_log_line(record), _log_type(record))

    def _publish_record(self, folder: Folder, record: Record) -> None:
        if record.outcome == "passed":
            self._replace_verify_layer(folder, {})
        elif record.failed:
            summary = record.document or self._fallback_summary_uri(folder, record)
            self._replace_verify_layer(folder, record_entries(record, summary, self._line_text))
        # cancelled, declined, skipped and no-plan runs speak only through the record.

    def _fallback_summary_uri(self, folder: Folder, record: Record) -> str:
        manifest = record.manifest or PROJECT_FILE
        return path_to_uri(os.path.join(folder.path, manifest))

    def _replace_verify_layer(self, folder: Folder, entries: dict[str, list[Entry]]) -> None:
        def in_folder(uri: str) -> bool:
            path = uri_to_path(uri)
            return path is not None and self.folder_of(path) is folder

        changed = self.store.replace_layer(VERIFY, entries, in_folder)
        # Every finished failing run speaks, even when its verdict equals the last one: the
        # client learns the run ended and saw the latest files.
        for uri in sorted(set(changed) | set(entries)):
            self._publish(uri)

    def _line_text(self, uri: str, line: int) -> str | None:
        doc = self.workspace.text_documents.get(uri)
        if doc is not None:
            lines = doc.lines
            return lines[line].rstrip("\r\n") if 0 <= line < len(lines) else None
        path = uri_to_path(uri)
        return read_line(path, line) if path is not None else None

    def _publish(self, uri: str) -> None:
        """The diagnostics of `uri` changed (or a run ended): push them, or for a client
        that pulls, give the next pull a new result id."""
        self._result_ids[uri] = self._result_ids.get(uri, 0) + 1
        if self.closing or self.pull:
            return
        # Made of each diagnostic's JSON text, serialised once: a summary can be large.
        self.write_framed(
            publish_message(uri, self.store.union_payloads(uri)),
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
        )

    async def wait_for_pending(self, uri: str | None) -> None:
        """A pull waits for the queued or running run of the document's folder (all folders
        for a workspace pull): that run saw the latest change. Bounded by timeoutMs."""
        folders = list(self.folders.values())
        if uri is not None:
            path = uri_to_path(uri)
            folder = self.folder_of(path) if path is not None else None
            folders = [folder] if folder is not None else []
        waits = []
        for folder in folders:
            pending = folder.verifier.pending()
            if pending is not None:
                settings, _ = self.folder_settings(folder)
                waits.append(
                    asyncio.wait_for(asyncio.shield(pending), settings.timeout_ms / 1000 + 5)
                )
        if waits:
            await asyncio.gather(*waits, return_exceptions=True)

    def result_id(self, uri: str) -> str:
        return str(self._result_ids.get(uri, 0))

    def on_change(self, uri: str) -> None:
        if self.store.withdraw_stale(uri, lambda line: self._line_text(uri, line)):
            self._publish(uri)
        self._maybe_sync(uri)

    def _maybe_sync(self, uri: str) -> None:
        """runOn "sync": an open or changed document whose text equals the file on disk
        counts as a save (an agent wrote the file, then synced it)."""
        path = uri_to_path(uri)
        folder = self.folder_of(path) if path is not None else None
        if folder is not None and path is not None:
            self._when_ready(folder, lambda: self._sync_if_on_disk(folder, path, uri))

    def _sync_if_on_disk(self, folder: Folder, path: str, uri: str) -> None:
        settings, _ = self.folder_settings(folder)
        if settings.run_on != "sync":
            return
        doc = self.workspace.text_documents.get(uri)
        if doc is None:
            return
        text = doc.source.encode("utf-8", errors="surrogatepass")
        try:
            if os.path.getsize(path) != len(text):
                return
            with open(path, "rb") as handle:
                on_disk = handle.read(len(text) + 1)
        except OSError:
            return
        if on_disk == text:
            self._gate_trigger(folder, path, uri, "save")

    # ----- files changed on disk -----

    async def register_watchers(self) -> None:
        """Ask the client to report file changes, where it can register watchers."""
        if not self._client_has("workspace", "did_change_watched_files", "dynamic_registration"):
            return
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern="**/*")]
        )
        try:
            await self.client_register_capability_async(
                types.RegistrationParams(
                    registrations=[
                        types.Registration(
                            id=f"verify-watch-{uuid.uuid4().hex}",
                            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=options,
                        )
                    ]
                )
            )
        except Exception as exc:  # a client that refuses: saves still work
            self.log(f"could not register file watchers: {exc}")

    def on_watched(self, changes: Sequence[tuple[str, int]]) -> None:
        """Files changed on disk: (uri, FileChangeType) as workspace/didChangeWatchedFiles
        reports them.

        A change triggers its folder unless it lies in a folder that never triggers
        (NEVER_TRIGGERS), misses the globs, or was written by one of the folder's runs. Each
        folder is triggered once per notification, for its newest change that triggers (a
        queued run takes the newest trigger anyway), so that 100 000 changes (a checkout, an
        install) cost little more than one: the changes are looked at newest first, each
        folder's only until one triggers; what a directory says (its folder, whether it never
        triggers) is worked out once; the settings are read once per folder; and only a
        change that would trigger is stat'ed."""
        batches: dict[Folder, _WatchedBatch] = {}
        # By the URI up to its last "/" (one with nothing to decode, no query, no fragment):
        # that directory's path, and _watched_place of it.
        places: dict[str, tuple[str, tuple[Folder, str, bool] | None]] = {}
        folder_names = {path.rpartition("/")[2] for path in self.folders}
        settled = 0
        for uri, kind in reversed(changes):
            head, _, name = uri.rpartition("/")
            known = places.get(head)
            if known is None or name in _DOT_NAMES or _NEEDS_URLPARSE.search(name) is not None:
                parsed = uri_to_path(uri)  # urlparse: 5 to 10 us, so once per directory
                if parsed is None:
                    continue
                directory, _, parsed_name = parsed.rpartition("/")
                known = (directory, self._watched_place(directory or "/"))
                if parsed_name == name and _NEEDS_URLPARSE.search(uri) is None:
                    places[head] = known
                name = parsed_name
            directory, place = known
            folder = self.folders.get(f"{directory}/{name}") if name in folder_names else None
            if folder is not None:  # the workspace folder itself
                rel = "."
            elif place is None or place[2] or _never_triggers_name(name):
                continue
            else:
                folder, rel = place[0], place[1] + name
            batch = batches.get(folder)
            if batch is None:
                settings = self.folder_settings(folder)[0] if folder.ready.is_set() else None
                batch = batches[folder] = _WatchedBatch(folder, settings)
            elif batch.done:
                continue
            path = f"{directory}/{name}" if directory else f"/{name}"
            self._offer_watched(batch, (path, rel, uri, kind != types.FileChangeType.Deleted))
            if batch.done:
                settled += 1
                if settled == len(self.folders):
                    break
        for batch in batches.values():
            self._trigger_watched(batch)

    def _watched_place(self, directory: str) -> tuple[Folder, str, bool] | None:
        """The folder holding `directory`, the prefix of its files' relative paths, and
        whether changes in it never trigger."""
        folder = self.folder_of(directory)
        rel = relative_to(folder.path, directory) if folder is not None else None
        if folder is None or rel is None:
            return None
        if rel == ".":
            return folder, "", False
        return folder, rel + "/", _never_triggers_dir(rel)

    def _offer_watched(self, batch: _WatchedBatch, change: tuple[str, str, str, bool]) -> None:
        """One change (path, rel, uri, exists), newer than those offered before it."""
        settings = batch.settings
        if settings is None:  # the folder's settings are not known yet
            batch.waiting.append(change)
            return
        if settings.run_on == "manual":
            batch.done = True
            return
        path, rel, uri, exists = change
        if not matches_any(settings.globs, rel):
            return
        if uri not in self.workspace.text_documents and self._written_by_a_run(batch.folder, path):
            return
        batch.triggers = True
        if exists:  # the run's document: the newest change that triggers and still exists
            batch.document = uri
            batch.done = True

    def _trigger_watched(self, batch: _WatchedBatch) -> None:
        folder = batch.folder
        if batch.settings is None:

            def when_ready() -> None:
                batch.settings = self.folder_settings(folder)[0]
                waiting, batch.waiting = batch.waiting, []
                for change in waiting:
                    self._offer_watched(batch, change)
                    if batch.done:
                        break
                self._trigger_watched(batch)

            self._when_ready(folder, when_ready)
        elif batch.triggers:
            folder.verifier.trigger("save", batch.document)

    def _written_by_a_run(self, folder: Folder, path: str) -> bool:
        """Did the file change while one of this folder's runs was going? Test runs write
        files (coverage data, reports); re-running for those would never stop."""
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            return False
        for start, end in folder.run_spans:
            assert start is not None
            if start <= mtime and (end is None or mtime <= end + RUN_SPAN_GRACE):
                return True
        return False

    # ----- status, log, progress -----

    def _status(self, folder: Folder) -> dict[str, Any]:
        """The `verify/status` of a folder as it is now."""
        last = folder.verifier.last_record
        plan = folder.plan_cache[2] if folder.plan_cache is not None else None
        return {
            "folder": folder.uri,
            "state": folder.verifier.state,
            "lastOutcome": last.outcome if last else None,
            "needsApproval": last is not None and last.outcome == "declined",
            "command": plan.command if plan else (last.command if last else None),
        }

    def _send_status(self, folder: Folder) -> None:
        if not self.closing:
            self.send_json(STATUS_METHOD, self._status(folder))

    def send_json(self, method: str, params: dict[str, Any]) -> None:
        """A notification whose params are JSON already, written without pygls' converter:
        the publish after a run is on the path the user waits on."""
        self.send_raw({"jsonrpc": "2.0", "method": method, "params": params})

    def send_raw(self, message: dict[str, Any]) -> None:
        """One JSON-RPC message, framed and written to the client."""
        writer = self.protocol.writer
        if writer is None:  # not serving yet
            return
        body = json.dumps(message).encode()
        try:
            writer.write(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))
        except BrokenPipeError:
            raise
        except OSError as exc:
            log.error("sending %s failed: %s", message.get("method", "a response"), exc)

    def write_framed(self, data: bytes, what: str) -> None:
        """Bytes that are a whole framed message already (`what` names it for the log)."""
        writer = self.protocol.writer
        if writer is None:  # not serving yet
            return
        try:
            writer.write(data)
        except BrokenPipeError:
            raise
        except OSError as exc:
            log.error("sending %s failed: %s", what, exc)

    def log(self, text: str, kind: types.MessageType = types.MessageType.Log) -> None:
        log.info("%s", text)
        if not self.closing:
            self.window_log_message(types.LogMessageParams(type=kind, message=text))

    def _begin_progress(self, plan: Plan, cancel: asyncio.Event) -> _Progress | None:
        if not self._client_has("window", "work_done_progress"):
            return None
        token = f"verify-{uuid.uuid4().hex}"
        self._progress[token] = cancel
        # Not awaited: the command starts at once; the client sees create before begin anyway.
        self.protocol.send_request(
            types.WINDOW_WORK_DONE_PROGRESS_CREATE,
            types.WorkDoneProgressCreateParams(token=token),
        )
        progress = _Progress(self, token)
        progress.send(
            types.WorkDoneProgressBegin(
                title="verify", message=plan.command, cancellable=True, percentage=None
            )
        )
        return progress

    def cancel_progress(self, token: str) -> None:
        cancel = self._progress.get(token)
        if cancel is not None:
            cancel.set()

    # ----- commands -----

    def target(self, args: tuple[Any, ...]) -> tuple[Folder | None, str | None]:
        """Folder and document named by a command's arguments (none, [], [uri], [{uri}])."""
        uri = _uri_argument(args)
        if uri is None:
            return self._default_folder(), None
        path = uri_to_path(uri)
        if path is None:
            return None, None
        if path in self.folders:
            return self.folders[path], None
        folder = self.folder_of(path)
        return folder, (uri if folder is not None and not os.path.isdir(path) else None)

    def _default_folder(self) -> Folder | None:
        folders = list(self.folders.values())
        recent = [f for f in folders if f.verifier.last_document is not None]
        candidates = recent or folders
        return candidates[0] if candidates else None

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` as a task the server keeps a reference to until it ends."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def remove_folder(self, folder: Folder) -> None:
        """A folder left the workspace: stop its runs and withdraw its diagnostics."""
        await folder.verifier.close()

        def was_its(uri: str) -> bool:
            path = uri_to_path(uri)
            return (
                path is not None
                and relative_to(folder.path, path) is not None
                and self.folder_of(path) is None
            )

        for uri in self.store.replace_layer(VERIFY, {}, was_its):
            self._publish(uri)

    async def close_all(self) -> None:
        await asyncio.gather(
            *(f.verifier.close() for f in list(self.folders.values())), return_exceptions=True
        )
        from lsp_verify.reaper import sweep

        sweep(kill=True)

    def on_child_exit(self) -> None:
        """SIGCHLD: a run's leftover that the server adopted (it is their subreaper) may have
        died by itself; reap it, so that a long session piles up no zombies. Later and
        coalesced: the exit of a step is on the path to its diagnostics."""
        if self._sweep_pending or self.closing:
            return
        self._sweep_pending = True
        asyncio.get_running_loop().call_later(SWEEP_DELAY, self._sweep_leftovers)

    def _sweep_leftovers(self) -> None:
        self._sweep_pending = False
        from lsp_verify import reaper, runner

        # While a run goes, its own end sweeps; only then can a live leftover be told
        # from a step of a run in flight.
        reaper.sweep(spare=runner._steps, kill=runner.runs_in_flight() == 0)


class _Progress:
    """A work-done progress for one run: begin, reports at most every 200 ms, end."""

    def __init__(self, server: VerifyServer, token: str) -> None:
        self.server = server
        self.token = token
        self.last = 0.0

    def send(self, value: Any) -> None:
        if not self.server.closing:
            self.server.protocol.notify(
                types.PROGRESS, types.ProgressParams(token=self.token, value=value)
            )

    def line(self, text: str) -> None:
        now = time.monotonic()
        if text.strip() and now - self.last >= PROGRESS_INTERVAL:
            self.last = now
            self.send(types.WorkDoneProgressReport(message=text[:200], cancellable=True))

    def end(self, outcome: str) -> None:
        self.server._progress.pop(self.token, None)
        self.send(types.WorkDoneProgressEnd(message=outcome))


# What makes a URI one that only urlparse and unquote read right; last segments that
# normpath would change.
_NEEDS_URLPARSE = re.compile(r"[%?#\t\r\n]")
_DOT_NAMES = frozenset({"", ".", ".."})


def _never_triggers_dir(rel: str) -> bool:
    """Do changes under the folder-relative directory `rel` never trigger a run?"""
    return any(p in NEVER_TRIGGERS or p.endswith(".egg-info") for p in rel.split("/"))


def _never_triggers_name(name: str) -> bool:
    """Does a change of a file (or folder) so named never trigger a run, wherever it is?"""
    return name in NEVER_TRIGGERS or name.endswith(".egg-info") or name.startswith(".coverage")


@dataclass(eq=False)
class _WatchedBatch:
    """One folder's share of a watched-files notification, its changes offered newest first."""

    folder: Folder
    settings: Settings | None  # None until the folder's settings are known
    waiting: list[tuple[str, str, str, bool]] = field(default_factory=list)  # until then
    triggers: bool = False
    document: str | None = None
    done: bool = False


def _log_line(record: Record) -> str:
    code = "null" if record.exit_code is None else str(record.exit_code)
    return (
        f"verify {record.outcome} (exit {code}) in {record.duration_ms} ms: "
        f"{record.command or '-'} [{record.folder}]"
        + (f" ({record.reason})" if record.outcome not in ("passed", "failed") else "")
    )


def _log_type(record: Record) -> types.MessageType:
    if record.failed:
        return types.MessageType.Warning
    return types.MessageType.Info


def _uri_argument(args: tuple[Any, ...]) -> str | None:
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
            found = _uri_argument(tuple(arg))
            if found is not None:
                return found
    return None


def _saved_uri(params: object) -> str | None:
    """The document URI of didSave params, or None when they are not shaped as LSP says."""
    if isinstance(params, dict):
        document = params.get("textDocument")
        if isinstance(document, dict):
            uri = document.get("uri")
            if isinstance(uri, str):
                return uri
    return None


def _split_init_options(options: object) -> tuple[object, bool | None, str]:
    """The `verify` settings, the trust flag and the diagnostic mode from
    initializationOptions. `diagnosticMode`: "auto" (pull when the client can), "push" or
    "pull"; VS Code's extension asks for push, since VS Code shows pushed and pulled
    diagnostics in separate lists and only pushes reach files that are not open."""
    trusted: bool | None = None
    mode = "auto"
    if isinstance(options, dict):
        flag = options.get("workspaceTrusted")
        if isinstance(flag, bool):
            trusted = flag
        if options.get("diagnosticMode") in ("auto", "push", "pull"):
            mode = str(options["diagnosticMode"])
        if "verify" in options:
            return options["verify"], trusted, mode
        rest = {k: v for k, v in options.items() if k not in ("workspaceTrusted", "diagnosticMode")}
        return (rest or None), trusted, mode
    return options, trusted, mode


# ----- wiring -----


def build_server() -> VerifyServer:
    server = VerifyServer()

    async def pull_document(
        ls: VerifyServer, params: types.DocumentDiagnosticParams
    ) -> types.DocumentDiagnosticReport:
        uri = params.text_document.uri
        await ls.wait_for_pending(uri)
        if params.previous_result_id == ls.result_id(uri):
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=ls.result_id(uri))
        return types.RelatedFullDocumentDiagnosticReport(
            items=ls.store.union(uri), result_id=ls.result_id(uri)
        )

    async def pull_workspace(
        ls: VerifyServer, params: types.WorkspaceDiagnosticParams
    ) -> types.WorkspaceDiagnosticReport:
        await ls.wait_for_pending(None)
        previous = {p.uri: p.value for p in params.previous_result_ids}
        items: list[types.WorkspaceDocumentDiagnosticReport] = []
        for uri in sorted(ls.store.uris(VERIFY) | ls.store.uris(CONFIG) | set(previous)):
            rid = ls.result_id(uri)
            if previous.get(uri) == rid:
                items.append(
                    types.WorkspaceUnchangedDocumentDiagnosticReport(
                        uri=uri, result_id=rid, version=None
                    )
                )
            else:
                items.append(
                    types.WorkspaceFullDocumentDiagnosticReport(
                        uri=uri, items=ls.store.union(uri), result_id=rid, version=None
                    )
                )
        return types.WorkspaceDiagnosticReport(items=items)

    @server.feature(types.INITIALIZE)
    def initialize(ls: VerifyServer, params: types.InitializeParams) -> None:
        value, trusted, mode = _split_init_options(params.initialization_options)
        ls.init_settings = value
        if trusted is not None:
            ls.workspace_trusted = trusted
        can_pull = ls._client_has("text_document", "diagnostic")
        ls.pull = mode == "pull" or (mode == "auto" and can_pull)
        if ls.pull:
            # Only a client that pulls is told the server answers pulls: one that gets
            # pushes too would keep a pulled copy that no push ever clears.
            options = types.DiagnosticOptions(
                identifier="verify", inter_file_dependencies=True, workspace_diagnostics=True
            )
            ls.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, options)(pull_document)
            ls.feature(types.WORKSPACE_DIAGNOSTIC)(pull_workspace)
        folders = params.workspace_folders or []
        for wf in folders:
            ls.add_folder(wf.uri)
        if not folders:
            root = params.root_uri or (path_to_uri(params.root_path) if params.root_path else None)
            if root:
                ls.add_folder(root)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: VerifyServer, params: types.InitializedParams) -> None:
        _import_run_modules()
        await ls.load_settings(list(ls.folders.values()))
        # No await between the settings and the first status: no run can have started, so
        # this "not run yet" status never lands after a finished one.
        for folder in ls.folders.values():
            ls.folder_settings(folder)
            ls._send_status(folder)
        await ls.register_watchers()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(
        ls: VerifyServer, params: types.DidChangeConfigurationParams
    ) -> None:
        settings = params.settings
        if isinstance(settings, dict):
            trusted = settings.get("workspaceTrusted")
            if isinstance(trusted, bool):
                ls.workspace_trusted = trusted
            if "verify" in settings:
                ls.init_settings = settings["verify"]
        folders = list(ls.folders.values())
        # Saves from now on wait for the new settings (they apply to the next save).
        for folder in folders:
            folder.ready.clear()
        ls.spawn(ls.load_settings(folders))

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_folders(ls: VerifyServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        # The folder list changes at once, so the very next save sees it; what needs the
        # client or the end of a run follows.
        for removed in params.event.removed:
            path = uri_to_path(removed.uri)
            folder = ls.folders.pop(path, None) if path else None
            if folder is not None:
                ls.spawn(ls.remove_folder(folder))
        added = [f for f in (ls.add_folder(a.uri) for a in params.event.added) if f]
        ls.spawn(ls.load_settings(added))

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: VerifyServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.on_save(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: VerifyServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.on_change(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: VerifyServer, params: types.DidOpenTextDocumentParams) -> None:
        ls._maybe_sync(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(ls: VerifyServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.on_watched([(change.uri, int(change.type)) for change in params.changes])

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancel(ls: VerifyServer, params: types.WorkDoneProgressCancelParams) -> None:
        ls.cancel_progress(str(params.token))

    @server.command("verify.runNow")
    async def run_now(ls: VerifyServer, *args: Any) -> Any:
        folder, document = ls.target(args)
        if folder is None:
            return None
        await folder.ready.wait()
        record = await folder.verifier.run_now(document)
        return record.to_json()

    @server.command("verify.cancel")
    async def cancel(ls: VerifyServer, *args: Any) -> Any:
        folders = (
            [ls.target(args)[0]] if _uri_argument(args) is not None else list(ls.folders.values())
        )
        cancelled: list[Record] = []
        for folder in folders:
            if folder is not None:
                cancelled.extend(await folder.verifier.cancel())
        return [r.to_json() for r in cancelled]

    @server.command("verify.showLastRun")
    def show_last_run(ls: VerifyServer, *args: Any) -> Any:
        if _uri_argument(args) is None and len(ls.folders) > 1:
            return [
                f.verifier.last_record.to_json()
                for f in ls.folders.values()
                if f.verifier.last_record is not None
            ]
        folder = ls.target(args)[0]
        record = folder.verifier.last_record if folder is not None else None
        return record.to_json() if record is not None else None

    @server.command("verify.explain")
    async def explain(ls: VerifyServer, *args: Any) -> Any:
        from lsp_verify.plan import plan_to_json

        folder = ls.target(args)[0]
        if folder is None:
            return None
        await folder.ready.wait()
        settings, project = ls.folder_settings(folder)
        plan = ls._plan(folder, project)
        return {**plan_to_json(plan), "settings": _settings_json(settings)}

    @server.command("verify.approve")
    async def approve(ls: VerifyServer, *args: Any) -> Any:
        from lsp_verify.trust import needs_question, plan_fingerprint

        folder = ls.target(args)[0]
        if folder is None:
            return None
        await folder.ready.wait()
        _, project = ls.folder_settings(folder)
        plan = ls._plan(folder, project)
        if not needs_question(plan):
            return {"approved": False, "reason": "nothing to approve: " + plan.reason}
        stored = await asyncio.to_thread(ls.trust.approve, plan)
        ls._trust_warnings()
        return {
            "approved": stored,
            "command": plan.command,
            "fingerprint": plan_fingerprint(plan),
        }

    @server.command("verify.revoke")
    async def revoke(ls: VerifyServer, *args: Any) -> Any:
        folder = ls.target(args)[0]
        if folder is None:
            return None
        removed = await asyncio.to_thread(ls.trust.revoke, folder.path)
        ls._trust_warnings()
        return {"revoked": removed}

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: VerifyServer, params: None) -> None:
        await ls.close_all()

    return server


def _settings_json(settings: Settings) -> dict[str, Any]:
    return {
        "command": settings.command,
        "globs": list(settings.globs),
        "timeoutMs": settings.timeout_ms,
        "runOn": settings.run_on,
        "tailLines": settings.tail_lines,
        "autoDetect": settings.auto_detect,
        "confirm": settings.confirm,
    }


# ----- stdio transport -----


class _Framing(asyncio.Protocol):
    """LSP framing over stdin: headers, a blank line, Content-Length bytes of body.

    Each message is handed to the server as soon as its last byte arrives, in the event
    loop's own callback: no reader task to wake, so a save reaches `dispatch` a loop turn
    sooner than through a stream reader.

    A client that lies is survived. A body over MAX_BODY is dropped as it streams in, never
    held. Headers without a valid Content-Length, and a body that is not JSON (its length
    was wrong), make the reader look for the next `Content-Length:` and go on from there."""

    MAX_HEADER = 64 * 1024
    MAX_BODY = 16 * 1024 * 1024  # README, Limits

    def __init__(self, server: VerifyServer, closed: asyncio.Future[int | None]) -> None:
        self.server = server
        self.closed = closed  # the exit code `exit` asked for, or None at the end of input
        self._buffer = bytearray()
        self._length: int | None = None  # of the body being read, once its headers are in
        self._discard = 0  # bytes of an oversize body still to drop
        self._resync = False  # after bad framing: looking for the next header

    def data_received(self, data: bytes) -> None:
        if self._discard:  # the rest of an oversize body: dropped without a copy
            if len(data) <= self._discard:
                self._discard -= len(data)
                return
            data, self._discard = data[self._discard :], 0
        self._buffer += data
        while not self.closed.done():
            body = self._next_body()
            if body is None:
                return
            try:
                parsed = self.server.dispatch(body)
            except SystemExit as exc:  # `exit`: see VerifyServer.dispatch
                code = exc.code
                self.closed.set_result(code if isinstance(code, int) else 0 if code is None else 1)
                return
            if parsed is False:
                # Not JSON: the Content-Length was wrong. Too long, and the body swallowed
                # the start of the next message: look for its header from there.
                self._buffer[:0] = memoryview(body)[1:]
                self._resync = True

    def eof_received(self) -> bool | None:
        if not self.closed.done():
            self.closed.set_result(None)
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof_received()

    def _next_body(self) -> bytearray | None:
        buffer = self._buffer
        while self._length is None:
            if self._discard or self._resync:
                if not self._catch_up():
                    return None
                continue
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(buffer) <= self.MAX_HEADER:
                    return None
                log.error("no end of headers in %d bytes from the client: skipped", len(buffer))
                self._skip_to_next_header()
                continue
            length = _content_length(bytes(buffer[:end]))
            if length is None:
                log.error(
                    "headers from the client without a valid Content-Length: skipped to the "
                    "next header (%r)",
                    bytes(buffer[: min(end, 80)]),
                )
                self._skip_to_next_header()
                continue
            del buffer[: end + 4]
            if length > self.MAX_BODY:
                log.error(
                    "a message of %d bytes from the client is over the limit of %d MiB: "
                    "discarded unread",
                    length,
                    self.MAX_BODY >> 20,
                )
                self._discard = length
                continue
            self._length = length
        expected = self._length
        if len(buffer) < expected:
            return None
        self._length = None
        if len(buffer) == expected:  # the usual case: hand the buffer over, no copy
            self._buffer = bytearray()
            return buffer
        body = buffer[:expected]
        del buffer[:expected]
        return body

    def _catch_up(self) -> bool:
        """Drop what is left of an oversize body, then, after bad framing, what comes before
        the next header; False when the buffer runs out first."""
        buffer = self._buffer
        if self._discard:
            dropped = min(self._discard, len(buffer))
            del buffer[:dropped]
            self._discard -= dropped
            if self._discard:
                return False
        if self._resync:
            found = _HEADER_START.search(buffer)
            if found is None:
                # Keep what could be the start of a header cut by the read.
                del buffer[: max(0, len(buffer) - _RESYNC_KEEP)]
                return False
            del buffer[: found.start()]
            self._resync = False
        return True

    def _skip_to_next_header(self) -> None:
        del self._buffer[:1]  # past the start of the bad header, then look for the next
        self._resync = True


# The start of a header; a bad frame is skipped up to the next one.
_HEADER_START = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
_RESYNC_KEEP = 64


def _content_length(headers: bytes) -> int | None:
    for line in headers.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                return None
            return length if length >= 0 else None
    return None


# Message bodies over _LARGE_MESSAGE are costed before they are parsed: JSON can take 25
# times its size once parsed (a list of `{}` is 3 bytes an item, 72 parsed), so a size limit
# alone does not bound memory. The estimate: the decoded text twice (it, and the strings
# parsed from it) and _ITEM_COST for each object, array, element and string (a distinct key
# with its value measured 165). Over _PARSE_BUDGET, the message is refused (README, Limits).
_LARGE_MESSAGE = 1024 * 1024
_PARSE_BUDGET = 80 * 1024 * 1024
_ITEM_COST = 192
_MAX_STRINGS_SCANNED = 10_000


def _affordable(body: bytes | bytearray) -> str | None:
    """The decoded text of a large body, or None when parsing it would cost more memory than
    _PARSE_BUDGET (logged). A document of 16 MiB passes: its brackets and commas are inside
    one string, where they cost nothing."""
    items: int | None = body.count(b"{") + body.count(b"[") + body.count(b",")
    text = body.decode("utf-8", "surrogatepass")  # ValueError: not JSON
    size = 2 * sys.getsizeof(text)
    if items is not None and size + _ITEM_COST * items > _PARSE_BUDGET:
        items = _items_outside_strings(text)
    if items is not None and size + _ITEM_COST * items <= _PARSE_BUDGET:
        return text
    log.error(
        "a message of %d bytes from the client would take over %d MiB to parse: refused",
        len(body),
        _PARSE_BUDGET >> 20,
    )
    return None


def _items_outside_strings(text: str) -> int | None:
    """Objects, arrays, elements and strings in a JSON text, not counting brackets and commas
    inside strings; None past _MAX_STRINGS_SCANNED strings (no document has that many)."""
    items = strings = position = 0
    while True:
        start = text.find('"', position)
        stop = len(text) if start < 0 else start
        items += (
            text.count("{", position, stop)
            + text.count("[", position, stop)
            + text.count(",", position, stop)
        )
        if start < 0:
            return items + strings
        strings += 1
        if strings > _MAX_STRINGS_SCANNED:
            return None
        position = scanstring(text, start + 1)[1]  # ValueError: not JSON


# Methods LSP defines as notifications: a request (with an id) of one is MethodNotFound.
_NOTIFICATIONS = frozenset(
    method for method, kinds in types.METHOD_TO_TYPES.items() if kinds[1] is None
)


def _watched_changes(params: object) -> list[tuple[str, int]] | None:
    """(uri, type) of each change of didChangeWatchedFiles params, or None when they are not
    shaped as LSP says (pygls then refuses them)."""
    changes = params.get("changes") if isinstance(params, dict) else None
    if not isinstance(changes, list):
        return None
    found: list[tuple[str, int]] = []
    for change in changes:
        if not isinstance(change, dict):
            return None
        uri, kind = change.get("uri"), change.get("type")
        if type(uri) is not str or type(kind) is not int or not 1 <= kind <= 3:
            return None
        found.append((uri, kind))
    return found


def _describe(message: dict[str, Any]) -> str:
    method = message.get("method")
    if method is None:
        return f"a response (id {message.get('id')!r})"
    return f"{method!r}" + (f" (id {message['id']!r})" if "id" in message else "")


def _why(exc: Exception) -> str:
    """One line on why pygls could not read a message (cattrs says where, not a traceback)."""
    from cattrs import ClassValidationError, transform_error

    cause = exc.__cause__
    if isinstance(cause, ClassValidationError):
        return f"{exc}: " + "; ".join(transform_error(cause)[:3])
    return f"{type(exc).__name__}: {exc}"


class _NoDeserializeTraceback(logging.Filter):
    """pygls logs a message it cannot deserialize with the whole traceback; `dispatch` logs
    one line for it instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Unable to deserialize message")


def _pump(fd: int, framing: _Framing, loop: asyncio.AbstractEventLoop) -> None:
    """Feed stdin to `framing` from a thread: for a stdin the event loop cannot watch (a
    regular file) or must not make non-blocking (a socket that is stdout as well). A daemon
    thread: one blocked in read() must not keep the process alive after `exit`."""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            chunk = b""
        try:
            if chunk:
                loop.call_soon_threadsafe(framing.data_received, chunk)
            else:
                loop.call_soon_threadsafe(framing.eof_received)
        except RuntimeError:  # the loop is closed: the server is gone
            return
        if not chunk:
            return


async def _serve_stdio(server: VerifyServer) -> None:
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    if main is not None:
        for signum in (signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(signum, main.cancel)
    if hasattr(signal, "SIGCHLD"):
        loop.add_signal_handler(signal.SIGCHLD, server.on_child_exit)
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_NoDeserializeTraceback())
    closed: asyncio.Future[int | None] = loop.create_future()
    framing = _Framing(server, closed)
    stdin = sys.stdin.buffer
    code: int | None = None
    try:
        try:
            if os.path.sameopenfile(stdin.fileno(), sys.stdout.fileno()):
                raise ValueError("stdin is stdout")
            await loop.connect_read_pipe(lambda: framing, stdin)
        except (OSError, ValueError):
            threading.Thread(
                target=_pump, args=(stdin.fileno(), framing, loop), name="stdin", daemon=True
            ).start()
        code = await closed
    except asyncio.CancelledError:
        pass
    finally:
        # stdin EOF, exit, SIGTERM: nothing the server started may outlive it.
        server.closing = True
        await server.close_all()
    if code is not None:
        raise SystemExit(code)


def _import_run_modules() -> None:
    """Import what a run needs, and make the server the subreaper of what runs start."""
    import lsp_verify.execute
    import lsp_verify.plan
    import lsp_verify.trust  # noqa: F401
    from lsp_verify.reaper import claim_children

    claim_children()


def serve() -> int:
    server = build_server()
    try:
        asyncio.run(_serve_stdio(server))
    except SystemExit as exc:
        return int(exc.code or 0)
    except (BrokenPipeError, KeyboardInterrupt):
        return 1
    return 0
