"""Paths and file:// URIs."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lsp_verify.uris import path_to_uri, relative_to, uri_to_path


def by_relpath(folder: str, path: str) -> str | None:
    """relative_to as os.path.relpath says it: the reference for the fast path."""
    rel = os.path.relpath(path, folder)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
        return None
    return rel.replace(os.sep, "/")


@pytest.mark.parametrize(
    ("folder", "path", "expected"),
    [
        ("/a/b", "/a/b/c.py", "c.py"),
        ("/a/b", "/a/b", "."),
        ("/a/b", "/a/bc/d", None),
        ("/a/b/", "/a/b/c/d", "c/d"),
        ("/", "/x/y", "x/y"),
        ("/a/b", "/a", None),
        ("/a/./b", "/a/b/../b/c", "c"),
        ("/a/b", "/a/b/..c", "..c"),
        ("a/b", "a/b/c", "c"),  # relative: the general path
    ],
)
def test_relative_to(folder: str, path: str, expected: str | None) -> None:
    assert relative_to(folder, path) == expected


segment = st.sampled_from(["a", "b", "ab", ".", "..", "", "..c", "c.."])


@given(st.lists(segment, max_size=5), st.lists(segment, max_size=6))
def test_relative_to_agrees_with_relpath(folder: list[str], path: list[str]) -> None:
    f, p = "/" + "/".join(folder), "/" + "/".join(path)
    assert relative_to(f, p) == by_relpath(f, p)


def test_uri_to_path() -> None:
    assert uri_to_path("file:///tmp/a%20b/c.py") == "/tmp/a b/c.py"
    assert uri_to_path("file://localhost/tmp/x") == "/tmp/x"
    assert uri_to_path("untitled:Untitled-1") is None
    assert uri_to_path("file:relative") is None
    # Asked again (every save does): the same answer.
    assert uri_to_path("file:///tmp/a%20b/c.py") == "/tmp/a b/c.py"


def test_a_name_that_is_not_utf8_round_trips() -> None:
    path = os.fsdecode(b"/tmp/caf\xe9")
    uri = path_to_uri(path)
    assert uri == "file:///tmp/caf%E9"
    assert uri_to_path(uri) == path


@pytest.mark.parametrize("uri", ["file:///tmp/a%00b", "file:///tmp/\ud800"])
def test_a_uri_that_can_name_no_file_has_no_path(uri: str) -> None:
    assert uri_to_path(uri) is None
