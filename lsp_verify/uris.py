"""file:// URIs and paths, without pygls (the core must not import it)."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from urllib.parse import unquote, urlparse


@functools.lru_cache(maxsize=1024)  # every save of a document asks again
def uri_to_path(uri: str) -> str | None:
    """The absolute path of a file:// URI, or None for any other scheme, a malformed URI, or
    one that can name no file (a NUL, a lone surrogate)."""
    try:
        parsed = urlparse(uri)
    except ValueError:
        return None
    if parsed.scheme != "file":
        return None
    # The bytes of a name that is not UTF-8 come back as the surrogates os.fsdecode gives
    # them, so the path names the same file (errors='replace' would name another).
    path = unquote(parsed.path, errors="surrogateescape")
    if parsed.netloc and parsed.netloc != "localhost":
        path = f"//{parsed.netloc}{path}"
    if not path.startswith("/") or "\0" in path:
        return None
    try:
        os.fsencode(path)  # a lone surrogate from the client names no file
    except UnicodeError:
        return None
    return os.path.normpath(path)


def path_to_uri(path: str) -> str:
    return Path(path).absolute().as_uri()


def relative_to(folder: str, path: str) -> str | None:
    """`path` relative to `folder`, `/`-separated, or None when it lies outside."""
    if os.path.isabs(folder) and os.path.isabs(path):
        # What relpath would say, without its two getcwd() calls: this runs on every save.
        # (POSIX keeps a leading "//" apart; relpath does not: such paths take its way.)
        folder, path = os.path.normpath(folder), os.path.normpath(path)
        if not (folder.startswith("//") or path.startswith("//")):
            if path == folder:
                return "."
            prefix = folder if folder.endswith(os.sep) else folder + os.sep
            if not path.startswith(prefix):
                return None
            return path[len(prefix) :].replace(os.sep, "/")
    try:
        rel = os.path.relpath(path, folder)
    except ValueError:
        return None
    if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
        return None
    return rel.replace(os.sep, "/")
