"""Files changed on disk (workspace/didChangeWatchedFiles): which changes trigger a run.

A change triggers its folder unless it lies in a folder that never triggers (version
control, environments, caches, build output: NEVER_TRIGGERS), misses the globs, or was
written by one of the folder's own runs. A notification can hold 100 000 changes (a
checkout, an install), so each folder is triggered once per notification, for its newest
change that triggers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lsp_verify.globs import matches_any
from lsp_verify.settings import Settings
from lsp_verify.uris import relative_to, uri_to_path

if TYPE_CHECKING:
    from lsp_verify.folder import Folder
    from lsp_verify.workspace import Workspace

DELETED = 3  # FileChangeType.Deleted
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


def trigger_changed(ws: Workspace, changes: Sequence[tuple[str, int]]) -> None:
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
    batches: dict[Folder, _Batch] = {}
    # By the URI up to its last "/" (one with nothing to decode, no query, no fragment):
    # that directory's path, and _watched_place of it.
    places: dict[str, tuple[str, tuple[Folder, str, bool] | None]] = {}
    folder_names = {path.rpartition("/")[2] for path in ws.folders}
    settled = 0
    for uri, kind in reversed(changes):
        head, _, name = uri.rpartition("/")
        known = places.get(head)
        if known is None or name in _DOT_NAMES or _NEEDS_URLPARSE.search(name) is not None:
            parsed = uri_to_path(uri)  # urlparse: 5 to 10 us, so once per directory
            if parsed is None:
                continue
            directory, _, parsed_name = parsed.rpartition("/")
            known = (directory, _place(ws, directory or "/"))
            if parsed_name == name and _NEEDS_URLPARSE.search(uri) is None:
                places[head] = known
            name = parsed_name
        directory, place = known
        folder = ws.folders.get(f"{directory}/{name}") if name in folder_names else None
        if folder is not None:  # the workspace folder itself
            rel = "."
        elif place is None or place[2] or never_triggers_name(name):
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
        _offer(ws, batch, (path, rel, uri, kind != DELETED))
        if batch.done:
            settled += 1
            if settled == len(ws.folders):
                break
    for batch in batches.values():
        _trigger(ws, batch)


def _place(ws: Workspace, directory: str) -> tuple[Folder, str, bool] | None:
    """The folder holding `directory`, the prefix of its files' relative paths, and
    whether changes in it never trigger."""
    folder = ws.folder_of(directory)
    rel = relative_to(folder.path, directory) if folder is not None else None
    if folder is None or rel is None:
        return None
    if rel == ".":
        return folder, "", False
    return folder, rel + "/", never_triggers_dir(rel)


def _offer(ws: Workspace, batch: _Batch, change: tuple[str, str, str, bool]) -> None:
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
    if ws.ui.document_text(uri) is None and batch.folder.written_by_a_run(path):
        return
    batch.triggers = True
    if exists:  # the run's document: the newest change that triggers and still exists
        batch.document = uri
        batch.done = True


def _trigger(ws: Workspace, batch: _Batch) -> None:
    folder = batch.folder
    if batch.settings is None:

        def when_ready() -> None:
            batch.settings = folder.settings()
            waiting, batch.waiting = batch.waiting, []
            for change in waiting:
                _offer(ws, batch, change)
                if batch.done:
                    break
            _trigger(ws, batch)

        ws.when_ready(folder, when_ready)
    elif batch.triggers:
        folder.verifier.trigger("save", batch.document)


# What makes a URI one that only urlparse and unquote read right; last segments that
# normpath would change.
_NEEDS_URLPARSE = re.compile(r"[%?#\t\r\n]")
_DOT_NAMES = frozenset({"", ".", ".."})


def never_triggers_dir(rel: str) -> bool:
    """Do changes under the folder-relative directory `rel` never trigger a run?"""
    return any(p in NEVER_TRIGGERS or p.endswith(".egg-info") for p in rel.split("/"))


def never_triggers_name(name: str) -> bool:
    """Does a change of a file (or folder) so named never trigger a run, wherever it is?"""
    return name in NEVER_TRIGGERS or name.endswith(".egg-info") or name.startswith(".coverage")


@dataclass(eq=False)
class _Batch:
    """One folder's share of a watched-files notification, its changes offered newest first."""

    folder: Folder
    settings: Settings | None  # None until the folder's settings are known
    waiting: list[tuple[str, str, str, bool]] = field(default_factory=list)  # until then
    triggers: bool = False
    document: str | None = None
    done: bool = False
