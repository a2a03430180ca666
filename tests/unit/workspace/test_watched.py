"""workspace/didChangeWatchedFiles: one trigger per folder per notification, chosen as the
change-by-change rules of before would have left it (their last trigger wins)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_verify.config.settings import parse_settings
from lsp_verify.globs import matches_any
from lsp_verify.uris import relative_to, uri_to_path
from lsp_verify.workspace.ignore import NEVER_TRIGGERS
from lsp_verify.workspace.state import State
from lsp_verify.workspace.watched import trigger_changed
from tests.support.properties import examples

FOLDERS = ["/w", "/w/sub", "/v"]
DELETED = 3


def never_triggers(rel: str) -> bool:
    """The rule as it was written before, as the reference."""
    parts = rel.split("/")
    return any(p in NEVER_TRIGGERS or p.endswith(".egg-info") for p in parts) or parts[
        -1
    ].startswith(".coverage")


class NoClient:
    """The workspace's UI where nothing is open and nothing is shown."""

    def document_text(self, uri: str) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def expected(server: State, changes: list[tuple[str, int]]) -> dict[str, str | None]:
    """Each change on its own, as on_watched used to take them: the folders triggered and,
    for each, the document its last trigger left (a trigger without one keeps the last)."""
    result: dict[str, str | None] = {}
    for uri, kind in changes:
        path = uri_to_path(uri)
        folder = server.folder_of(path) if path is not None else None
        if folder is None or path is None:
            continue
        rel = relative_to(folder.path, path)
        if rel is None or not rel or never_triggers(rel):
            continue
        settings_ = folder.settings()
        if settings_.run_on == "manual" or not matches_any(settings_.globs, rel):
            continue
        document = uri if kind != DELETED else None
        result[folder.path] = document if document is not None else result.get(folder.path)
    return result


SEGMENTS = ("a", "b.py", "c.py", "sub", "node_modules", ".git", ".coverage.1", "x.egg-info")
ODD_SEGMENTS = ("build", "..", ".", "", "a%20b", "q?x=1", "f#frag", "%2F")
segment = st.sampled_from(SEGMENTS + ODD_SEGMENTS)
root = st.sampled_from(
    ["file:///w", "file:///v", "file:///other", "FILE:///w", "file://localhost/w"]
)
change = st.tuples(
    st.builds(lambda r, parts: "/".join([r, *parts]), root, st.lists(segment, max_size=4)),
    st.sampled_from([1, 2, 3]),
)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(change, max_size=25),
    st.sampled_from([[], ["*.py"], ["a"], ["sub/a"]]),
    st.sampled_from(["save", "manual"]),
)
def test_one_trigger_per_folder_as_the_change_by_change_rules_leave_it(
    changes: list[tuple[str, int]], globs: list[str], run_on: str
) -> None:
    server = State(NoClient())  # type: ignore[arg-type]
    triggered: dict[str, list[Any]] = {}
    for path in FOLDERS:
        folder = server.add_folder("file://" + path)
        assert folder is not None
        folder.editor = parse_settings({"globs": globs, "runOn": run_on}, "test")
        folder.ready.set()

        def trigger(trigger: str, document: str | None = None, path: str = path) -> None:
            triggered.setdefault(path, []).append((trigger, document))

        folder.verifier.trigger = trigger  # type: ignore[method-assign,assignment]
    want = expected(server, changes)
    trigger_changed(server, changes)
    assert triggered == {path: [("save", document)] for path, document in want.items()}
