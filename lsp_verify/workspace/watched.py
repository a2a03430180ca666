"""Files changed on disk (workspace/didChangeWatchedFiles): which changes trigger a run.

A change triggers its folder unless the folder's ignore rules cover it (version control,
environments, caches, build output, what its `.gitignore` files ignore: see ignore.py),
it misses the globs, or the loop guard drops it (see loopguard.py). A notification can hold
100 000 changes (a checkout, an install), so each folder is triggered once per
notification, for its newest change that triggers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lsp_verify.config.settings import Settings
from lsp_verify.globs import matches_any
from lsp_verify.uris import relative_to, uri_to_path
from lsp_verify.workspace import triggers
from lsp_verify.workspace.ignore import Chain, never_triggers_name

if TYPE_CHECKING:
    from lsp_verify.workspace.folder import Folder
    from lsp_verify.workspace.state import State

DELETED = 3  # FileChangeType.Deleted


def trigger_changed(state: State, changes: Sequence[tuple[str, int]]) -> None:
    """Files changed on disk: (uri, FileChangeType) as workspace/didChangeWatchedFiles
    reports them.

    A change triggers its folder unless the folder's ignore rules cover it, it misses the
    globs, or the loop guard drops it. Each
    folder is triggered once per notification, for its newest change that triggers (a
    queued run takes the newest trigger anyway), so that 100 000 changes (a checkout, an
    install) cost little more than one: the changes are looked at newest first, each
    folder's only until one triggers; what a directory says (its folder, the ignore rules
    inside it) is worked out once; the settings are read once per folder; and only a change
    that would trigger is stat'ed."""
    batches: dict[Folder, _Batch] = {}
    # By the URI up to its last "/" (one with nothing to decode, no query, no fragment):
    # that directory's path, and _watched_place of it.
    places: dict[str, tuple[str, tuple[Folder, str, Chain | None] | None]] = {}
    folder_names = {path.rpartition("/")[2] for path in state.folders}
    settled = 0
    for uri, kind in reversed(changes):
        head, _, name = uri.rpartition("/")
        known = places.get(head)
        if known is None or name in _DOT_NAMES or _NEEDS_URLPARSE.search(name) is not None:
            parsed = uri_to_path(uri)  # urlparse: 5 to 10 us, so once per directory
            if parsed is None:
                continue
            directory, _, parsed_name = parsed.rpartition("/")
            known = (directory, _place(state, directory or "/"))
            if parsed_name == name and _NEEDS_URLPARSE.search(uri) is None:
                places[head] = known
            name = parsed_name
        directory, place = known
        folder = state.folders.get(f"{directory}/{name}") if name in folder_names else None
        if folder is not None:  # the workspace folder itself
            rel = "."
        elif (
            place is None or place[2] is None or never_triggers_name(name) or place[2].ignores(name)
        ):
            continue
        else:
            folder, rel = place[0], place[1] + name
        batch = batches.get(folder)
        if batch is None:
            settings = folder.settings() if folder.ready.is_set() else None
            batch = batches[folder] = _Batch(folder, settings)
        elif batch.done:
            continue
        path = f"{directory}/{name}" if directory else f"/{name}"
        _offer(state, batch, (path, rel, uri, kind != DELETED))
        if batch.done:
            settled += 1
            if settled == len(state.folders):
                break
    for batch in batches.values():
        _trigger(state, batch)


def _place(state: State, directory: str) -> tuple[Folder, str, Chain | None] | None:
    """The folder holding `directory`, the prefix of its files' relative paths, and the
    ignore rules inside it (None when the directory itself is ignored)."""
    folder = state.folder_of(directory)
    rel = relative_to(folder.path, directory) if folder is not None else None
    if folder is None or rel is None:
        return None
    if rel == ".":
        return folder, "", folder.ignore.chain("")
    return folder, rel + "/", folder.ignore.chain(rel)


def _offer(state: State, batch: _Batch, change: tuple[str, str, str, bool]) -> None:
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
    echo = False
    if state.ui.document_text(uri) is None:
        verdict = batch.folder.guard.verdict(path, batch.folder.path)
        if verdict == "drop":
            batch.folder.guard.dropped(uri)
            return
        echo = verdict == "echo"
    batch.triggers = True
    batch.echo = batch.echo and echo
    if exists:  # the run's document: the newest change that triggers and still exists
        batch.document = uri
        batch.done = True


def _trigger(state: State, batch: _Batch) -> None:
    folder = batch.folder
    if batch.settings is None:

        def when_ready() -> None:
            batch.settings = folder.settings()
            waiting, batch.waiting = batch.waiting, []
            for change in waiting:
                _offer(state, batch, change)
                if batch.done:
                    break
            _trigger(state, batch)

        triggers.when_ready(state, folder, when_ready)
    elif batch.triggers:
        folder.guard.note(batch.echo)
        if batch.document is not None:
            state.edit_saved(folder, batch.document)
        folder.verifier.trigger("save", batch.document)


# What makes a URI one that only urlparse and unquote read right; last segments that
# normpath would change.
_NEEDS_URLPARSE = re.compile(r"[%?#\t\r\n]")
_DOT_NAMES = frozenset({"", ".", ".."})


@dataclass(eq=False)
class _Batch:
    """One folder's share of a watched-files notification, its changes offered newest first."""

    folder: Folder
    settings: Settings | None  # None until the folder's settings are known
    waiting: list[tuple[str, str, str, bool]] = field(default_factory=list)  # until then
    triggers: bool = False
    echo: bool = True  # every change that triggers may be a run's own output
    document: str | None = None
    done: bool = False
