"""A scripted LSP client over stdio for end-to-end tests of the server.

Built on pytest-lsp's client, with the extra bookkeeping these tests need: the history of
publishes (not just the latest per document), `verify/status` notifications, and answers to
`window/showMessageRequest`.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Callable

import attrs
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from tests.support.stdio import server_env

# An answer to window/showMessageRequest: the chosen title or None, possibly awaited.
Answer = Callable[[types.ShowMessageRequestParams], Any]


class Session:
    def __init__(self, client: LanguageClient, root: Path) -> None:
        self.client = client
        self.root = root
        self.publishes: list[tuple[str, list[types.Diagnostic]]] = []
        self.statuses: list[dict[str, Any]] = []
        self.outputs: list[dict[str, Any]] = []  # verify/output, for clients with liveOutput
        self.questions: list[types.ShowMessageRequestParams] = []
        self.registrations: list[types.Registration] = []
        self.server_capabilities: types.ServerCapabilities | None = None
        self.answer: Answer = lambda params: None
        self.configuration_delay = 0.0  # seconds before answering workspace/configuration

    def uri(self, rel: str, root: Path | None = None) -> str:
        return ((root or self.root) / rel).as_uri()

    def diagnostics(self, rel_or_uri: str) -> list[types.Diagnostic]:
        uri = rel_or_uri if "://" in rel_or_uri else self.uri(rel_or_uri)
        return list(self.client.diagnostics.get(uri, []))

    def verify_diagnostics(self) -> dict[str, list[types.Diagnostic]]:
        return {
            uri: [d for d in diags if d.source == "verify"]
            for uri, diags in self.client.diagnostics.items()
            if any(d.source == "verify" for d in diags)
        }

    def open(self, rel: str, root: Path | None = None) -> str:
        path = (root or self.root) / rel
        uri = path.as_uri()
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="python", version=1, text=path.read_text()
                )
            )
        )
        return uri

    def save(self, rel: str, text: str | None = None, root: Path | None = None) -> str:
        path = (root or self.root) / rel
        if text is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        uri = path.as_uri()
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        return uri

    async def command(self, name: str, *args: Any, timeout: float = 30) -> Any:
        params = types.ExecuteCommandParams(command=name, arguments=list(args))
        return await asyncio.wait_for(self.client.workspace_execute_command_async(params), timeout)

    async def wait_for(
        self, predicate: Callable[[], object], timeout: float = 20, what: str = "condition"
    ) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout}s waiting for {what}")
            await asyncio.sleep(0.02)

    def run_logs(self) -> list[str]:
        """The one log line the server writes per finished run."""
        return [
            m.message
            for m in self.client.log_messages
            if m.message.startswith("verify ") and " (exit " in m.message
        ]

    def finished(self, outcome: str | None = None) -> list[dict[str, Any]]:
        """Status notifications that report a finished run (state idle with an outcome)."""
        return [
            s
            for s in self.statuses
            if s.get("state") == "idle"
            and s.get("lastOutcome") is not None
            and (outcome is None or s["lastOutcome"] == outcome)
        ]


def window_changed(profile: str = "visual_studio_code", **window: Any) -> types.ClientCapabilities:
    """A real editor's capabilities (pytest-lsp's profile) with some of its window capabilities
    changed: `show_message=None` for a client that cannot be asked, for example."""
    base = client_capabilities(profile)
    return attrs.evolve(base, window=attrs.evolve(base.window, **window))


@asynccontextmanager
async def session(
    root: Path,
    *,
    state: Path,
    profile: str = "visual_studio_code",
    init_options: Any = None,
    configuration: Any = None,
    folders: list[Path] | None = None,
    capabilities: types.ClientCapabilities | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Session]:
    """Start the server, initialize it for `folders` (default: [root]), shut it down after."""
    holder: dict[str, Session] = {}

    def factory() -> LanguageClient:
        client = LanguageClient()
        features = dict(DEFAULT_CLIENT_FEATURES)

        def publish(c: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
            c.diagnostics[params.uri] = params.diagnostics
            holder["s"].publishes.append((params.uri, list(params.diagnostics)))

        features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
        answer_configuration = features[types.WORKSPACE_CONFIGURATION]

        async def configuration(c: LanguageClient, params: types.ConfigurationParams) -> Any:
            delay = holder["s"].configuration_delay if "s" in holder else 0.0
            if delay:
                await asyncio.sleep(delay)
            return answer_configuration(c, params)

        features[types.WORKSPACE_CONFIGURATION] = configuration
        register_lsp_features(client, features)

        @client.feature("verify/status")
        def status(c: LanguageClient, params: Any) -> None:
            holder["s"].statuses.append(_plain(params))

        @client.feature("verify/output")
        def output(c: LanguageClient, params: Any) -> None:
            holder["s"].outputs.append(_plain(params))

        @client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register(c: LanguageClient, params: types.RegistrationParams) -> None:
            holder["s"].registrations.extend(params.registrations)

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        async def question(
            c: LanguageClient, params: types.ShowMessageRequestParams
        ) -> types.MessageActionItem | None:
            s = holder["s"]
            s.questions.append(params)
            title = s.answer(params)
            if inspect.isawaitable(title):
                title = await title
            return types.MessageActionItem(title=title) if title is not None else None

        return client

    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "lsp_verify"],
        client_factory=factory,
        server_env=server_env(state, env),
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    s = Session(client, root)
    holder["s"] = s
    if configuration is not None:
        client.set_configuration(configuration, section="verify")
    workspace = [types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in (folders or [root])]
    try:
        result = await asyncio.wait_for(
            client.initialize_session(
                types.InitializeParams(
                    capabilities=capabilities or client_capabilities(profile),
                    workspace_folders=workspace,
                    root_uri=root.as_uri(),
                    initialization_options=init_options,
                )
            ),
            30,
        )
        s.server_capabilities = result.capabilities
        yield s
    finally:
        try:
            await asyncio.wait_for(client.shutdown_session(), 30)
        finally:
            await client.stop()


def _plain(value: Any) -> Any:
    """pygls hands custom notification params over as attrs-like objects; make them dicts."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "_asdict"):  # pygls hands unknown params over as namedtuples
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "__dict__"):
        return {k: _plain(v) for k, v in vars(value).items()}
    return value
