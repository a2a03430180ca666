"""Builds a session's step list: messages with ids of their own, writes, files, sleeps."""

from __future__ import annotations

import random
from typing import Any

from tests.fuzz.session import Step


class Builder:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.steps: list[Step] = []
        self.policy: dict[str, Any] = {}
        self.sent_ids: list[int | str] = []
        self.initialize_params: Any = None  # the session's own, for a second initialize
        self._next = 0

    def rid(self) -> int | str:
        """A fresh request id: an integer mostly, a string now and then (both are valid)."""
        self._next += 1
        rid: int | str = self._next if self.rng.random() < 0.8 else f"id-{self._next}"
        self.sent_ids.append(rid)
        return rid

    def request(self, method: str, params: Any) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.rid(), "method": method}
        if params is not None:
            message["params"] = params
        return message

    def notification(self, method: str, params: Any) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return message

    def command(self, name: str, arguments: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"command": name}
        if arguments is not None:
            params["arguments"] = arguments
        return self.request("workspace/executeCommand", params)

    def probe(self) -> dict[str, Any]:
        """A cheap request every server state answers at once: after a bad message in the
        same write, it shows whether the server still reads what follows."""
        return self.command("verify.showLastRun", [])

    def send(
        self,
        messages: list[dict[str, Any]],
        probe: bool = False,
        event: bool = False,
        parts: list[dict[str, Any]] | None = None,
    ) -> None:
        """One write: `parts` (framing junk, say) then `messages`, then maybe a probe."""
        written = list(parts or []) + [{"json": m} for m in messages]
        if probe:
            written.append({"json": self.probe()})
        step: Step = {"send": written}
        if event:
            step["event"] = True
        self.steps.append(step)

    def file(self, rel: str, text: Any = None, kind: str | None = None) -> None:
        step: Step = {"file": rel}
        if kind is not None:
            step["kind"] = kind
        else:
            step["text"] = text
        self.steps.append(step)

    def sleep(self, seconds: float) -> None:
        self.steps.append({"sleep": round(seconds, 2)})
