"""What the workspace needs from the client, as protocols: the server (lsp/) implements them,
a test provides a fake, and nothing here imports upward."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol

from lsp_verify.config.settings import LogLevel


class CannotAnswer(Exception):
    """`UI.ask`: the client gave no answer a user chose (it has no handler for the question,
    did not answer within the time given, or answered without a choice where it never said
    it could ask). `again`: whether asking it next time may get an answer."""

    def __init__(self, why: str, again: bool) -> None:
        super().__init__(why)
        self.again = again


class Progress(Protocol):
    """A run's progress as the client shows it."""

    def line(self, text: str) -> None: ...
    def end(self, outcome: str) -> None: ...


class UI(Protocol):
    """What the workspace needs from the client, as the server provides it."""

    def publish(self, uri: str, payloads: list[bytes]) -> None: ...
    def send_status(self, status: dict[str, Any]) -> None: ...
    def send_output(self, payload: dict[str, Any]) -> None: ...
    def log(self, text: str, level: LogLevel = "log") -> None: ...
    def show_warning(self, text: str) -> None: ...
    def can_ask(self) -> bool: ...
    async def ask(self, text: str, actions: Sequence[str]) -> str | None:
        """The title the user chose; None when dismissed. Raises CannotAnswer."""

    def begin_progress(self, command: str, cancel: asyncio.Event) -> Progress | None: ...
    def refresh_pulls(self) -> None: ...
    async def configuration(self, uris: list[str]) -> list[Any] | None: ...
    def document_text(self, uri: str) -> str | None: ...
