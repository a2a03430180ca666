"""A client for the workspace without a server: the `UI` protocol (lsp_verify/workspace/ui.py),
recording everything the state says and answering what it asks as the test decides."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lsp_verify.config.settings import LogLevel


@dataclass
class FakeProgress:
    command: str
    lines: list[str] = field(default_factory=list)
    outcome: str | None = None

    def line(self, text: str) -> None:
        self.lines.append(text)

    def end(self, outcome: str) -> None:
        self.outcome = outcome


@dataclass
class Question:
    text: str
    actions: list[str]


class FakeUI:
    """Records pushes, statuses, log lines, warnings, questions and pull refreshes.

    `answer` is the title `ask` returns (None: dismissed); `answer_after` holds the answer
    until set, for a question that stays open. `settings` is what workspace/configuration
    answers (None: the client cannot be asked); `documents` the open documents' text.
    """

    def __init__(
        self,
        *,
        answer: str | None = None,
        can_ask: bool = True,
        settings: list[Any] | None = None,
        documents: dict[str, str] | None = None,
    ) -> None:
        self.answer = answer
        self.answer_after: asyncio.Event | None = None
        self.asking = can_ask
        self.settings = settings
        self.documents = dict(documents or {})
        self.published: list[tuple[str, list[dict[str, Any]]]] = []
        self.statuses: list[dict[str, Any]] = []
        self.outputs: list[dict[str, Any]] = []
        self.logged: list[tuple[str, str]] = []
        self.warnings: list[str] = []
        self.questions: list[Question] = []
        self.progresses: list[FakeProgress] = []
        self.refreshes = 0
        self.configuration_asked: list[list[str]] = []

    # ----- what the state says -----

    def publish(self, uri: str, payloads: list[bytes]) -> None:
        self.published.append((uri, [json.loads(p) for p in payloads]))

    def send_status(self, status: dict[str, Any]) -> None:
        self.statuses.append(status)

    def send_output(self, payload: dict[str, Any]) -> None:
        self.outputs.append(payload)

    def log(self, text: str, level: LogLevel = "log") -> None:
        self.logged.append((level, text))

    def show_warning(self, text: str) -> None:
        self.warnings.append(text)

    def refresh_pulls(self) -> None:
        self.refreshes += 1

    def begin_progress(self, command: str, cancel: asyncio.Event) -> FakeProgress:
        progress = FakeProgress(command)
        self.progresses.append(progress)
        return progress

    # ----- what the state asks -----

    def can_ask(self) -> bool:
        return self.asking

    async def ask(self, text: str, actions: Sequence[str]) -> str | None:
        self.questions.append(Question(text, list(actions)))
        if self.answer_after is not None:
            await self.answer_after.wait()
        return self.answer

    async def configuration(self, uris: list[str]) -> list[Any] | None:
        self.configuration_asked.append(list(uris))
        if self.settings is None:
            return None
        return [self.settings[n] if n < len(self.settings) else None for n in range(len(uris))]

    def document_text(self, uri: str) -> str | None:
        return self.documents.get(uri)

    # ----- what a test reads -----

    def last_published(self, uri: str) -> list[dict[str, Any]] | None:
        """The diagnostics last pushed for `uri` (None: never pushed)."""
        for published, diagnostics in reversed(self.published):
            if published == uri:
                return diagnostics
        return None

    def log_text(self) -> str:
        return "\n".join(text for _, text in self.logged)
