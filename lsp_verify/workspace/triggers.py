"""What a save, a change or an open of a document triggers.

The path of a save: `on_save` finds the innermost folder, waits for its settings only when
they are still loading (`when_ready`), and `gate` decides on runOn and globs; the folder's
verifier then coalesces triggers and starts one run at a time (see run.py). Files changed
on disk take the same gate through watched.py.
"""

from __future__ import annotations

import functools
import math
import os
from typing import TYPE_CHECKING, Callable

from lsp_verify.globs import matches_any
from lsp_verify.uris import relative_to, uri_to_path

if TYPE_CHECKING:
    from lsp_verify.record import Trigger
    from lsp_verify.workspace.folder import Folder
    from lsp_verify.workspace.state import State


def on_save(state: State, uri: str, trigger: Trigger = "save") -> None:
    folder, path = state.folder_of_uri(uri)
    if folder is None or path is None:
        state.log(f"{uri}: outside every workspace folder; not verified")
        return
    when_ready(state, folder, functools.partial(gate, state, folder, path, uri, trigger))


def on_change(state: State, uri: str) -> None:
    """An edit: the located diagnostics whose line it changed are withdrawn (stale). An edit
    that is already on disk, written after the run of the verdict began (an agent's write,
    synced before its save), withdraws the verdict too: it is not of this text."""
    written = _written_since(state, uri, state.diagnostics.verdict_began(uri))
    if state.diagnostics.withdraw_stale(uri, functools.partial(state.line_text, uri), written):
        state.diagnostics.changed(uri)
    on_open(state, uri)


def on_open(state: State, uri: str) -> None:
    """runOn "sync": an open or changed document whose text equals the file on disk counts
    as a save (an agent wrote the file, then synced it). A file whose change the loop guard
    dropped was the client's after all: it triggers."""
    folder, path = state.folder_of_uri(uri)
    if folder is not None and path is not None:
        if folder.guard.reclaim(uri):
            when_ready(state, folder, functools.partial(gate, state, folder, path, uri, "save"))
        when_ready(state, folder, functools.partial(_sync, state, folder, path, uri))


def when_ready(state: State, folder: Folder, action: Callable[[], None]) -> None:
    """Run `action` once the folder's settings are known: at once in the usual case (every
    loop turn before the spawn is latency), else when the client has answered
    workspace/configuration."""
    if folder.ready.is_set():
        action()
        return
    release = folder.holds.hold()  # a pull meanwhile waits for it

    async def later() -> None:
        try:
            await folder.ready.wait()
            action()
        finally:
            release()

    state.spawn(later())


def gate(state: State, folder: Folder, path: str, uri: str | None, trigger: Trigger) -> None:
    """runOn and globs decide whether this trigger runs anything."""
    settings = folder.settings()
    if settings.run_on != "manual" and matches_any(
        settings.globs, relative_to(folder.path, path) or ""
    ):
        folder.guard.note(False)
        if uri is not None:
            state.edit_saved(folder, uri)
        folder.verifier.trigger(trigger, uri)
    else:
        state.edit_passed_over(folder)


def _sync(state: State, folder: Folder, path: str, uri: str) -> None:
    if folder.settings().run_on == "sync" and _on_disk(state, uri, path, -math.inf):
        gate(state, folder, path, uri, "save")


def _written_since(state: State, uri: str, since: float) -> bool:
    """Whether the open document is the file on disk, written after `since` (time.time())."""
    if since == math.inf:
        return False
    path = uri_to_path(uri)
    return path is not None and _on_disk(state, uri, path, since)


def _on_disk(state: State, uri: str, path: str, since: float) -> bool:
    """Whether the document's text is the file at `path`, modified after `since`."""
    source = state.ui.document_text(uri)
    if source is None:
        return False
    text = source.encode("utf-8", errors="surrogatepass")
    try:
        st = os.stat(path)
        if st.st_size != len(text) or st.st_mtime <= since:
            return False
        with open(path, "rb") as handle:
            on_disk = handle.read(len(text) + 1)
    except OSError:
        return False
    return on_disk == text
