"""Triggers a folder holds back, and what a pull waits for.

A trigger can be held before it reaches the folder's verifier: while the client's settings
are still loading (at startup, and after every didChangeConfiguration, which an agent such
as opencode sends right after `initialized`). A pull (`textDocument/diagnostic`) that
arrives meanwhile must not be answered from the old diagnostics: it waits until every held
trigger has been let through, then for the newest run, whose verdict saw the change.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from lsp_verify.workspace.verifier import FolderVerifier


class Holds:
    """A count of held triggers, and an event set while there are none."""

    def __init__(self) -> None:
        self.count = 0
        self._none = asyncio.Event()
        self._none.set()

    def hold(self) -> Callable[[], None]:
        """Hold one trigger; the returned function lets it go (once; more calls do nothing)."""
        self.count += 1
        self._none.clear()
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            self.count -= 1
            if self.count == 0:
                self._none.set()

        return release

    async def none_held(self) -> None:
        await self._none.wait()


async def settle(holds: Holds, verifier: FolderVerifier) -> None:
    """Until no trigger is held and the newest run asked for so far has ended."""
    while True:
        await holds.none_held()
        pending = verifier.pending()
        if pending is not None:
            await asyncio.shield(pending)
        if holds.count == 0:
            return
