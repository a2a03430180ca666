"""The deliberately simple glob matcher of the verify loop.

Not a glob engine: a pattern that starts with `*` matches a path ending with the rest; any
other pattern matches the whole path, a trailing path suffix on segment boundaries, or one
whole segment. There is no `**` and no mid-pattern `*`.
"""

from __future__ import annotations

from collections.abc import Iterable


def glob_matches(pattern: str, path: str) -> bool:
    """Does one pattern match `path` (relative to the folder, `/`-separated)?"""
    if pattern.startswith("*"):
        return path.endswith(pattern[1:])
    if not pattern:
        return False
    if path == pattern or path.endswith("/" + pattern):
        return True
    return pattern in path.split("/")


def matches_any(globs: Iterable[str], path: str) -> bool:
    """True when `globs` is empty or one of them matches."""
    patterns = list(globs)
    return not patterns or any(glob_matches(p, path) for p in patterns)
