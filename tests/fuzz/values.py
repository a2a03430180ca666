"""Odd values and mutations of JSON values: what a broken client puts where a good one puts
a URI, a number or an object.

Every function takes the session's `random.Random`, so a seed gives the same values again.
`@ROOT@` in a string stands for the workspace folder's URI (see session.substitute): a
replay runs in a new temporary folder.
"""

from __future__ import annotations

import copy
import random
from typing import Any

ROOT = "@ROOT@"  # the workspace folder's file:// URI, without a trailing slash
TOKEN = "@TOKEN@"  # the latest work-done progress token the server created

LONE_SURROGATE = "\ud800"
ODD_STRINGS = [
    "",
    "x",
    "\u0000",
    "a\u0000b",
    LONE_SURROGATE,
    "\udfff\ud800",
    "é\u200b\ufeff",
    "\U0001f600",
    "%00",
    "../../../etc/passwd",
    "x" * 5000,
    "\r\n\r\nContent-Length: 5\r\n\r\n{}",
]
ODD_NUMBERS: list[Any] = [-1, 0, 1.5, 1e20, -(2**63), 2**64, 10**30, float("1e308"), True]
ODD_URIS = [
    f"{ROOT}/%00",
    f"{ROOT}/a%00b.py",
    f"{ROOT}/{LONE_SURROGATE}.py",
    f"{ROOT}/%ZZ",
    f"{ROOT}/%ff%fe.py",
    f"{ROOT}/a.py?x=1#frag",
    f"{ROOT}/../outside.py",
    f"{ROOT}/" + "d/" * 300 + "deep.py",
    f"{ROOT}/.git/config",
    f"{ROOT}/node_modules/x.js",
    f"{ROOT}/a b.py",
    f"{ROOT}/a\u0000.py",
    "file://[::1/x",
    "file://host/share/a.py",
    "file:relative.py",
    "file:",
    "file:///",
    "untitled:Untitled-1",
    "http://127.0.0.1/a.py",
    "",
    "not a uri",
    ROOT,
    ROOT + "/",
]
# Odd workspace folders: never one that is a real folder outside the temporary one.
ODD_FOLDER_URIS = [u for u in ODD_URIS if u not in ("file:///", "file:") and "/../" not in u]
# Documents of the workspace (relative paths), as a generator names them.
DOCUMENTS = ["a.py", "test_a.py", "sub/b.txt", ".lsp-verify.toml", "setup.cfg", "new.py"]


def document_uri(rng: random.Random, odd: float = 0.15) -> str:
    if rng.random() < odd:
        return rng.choice(ODD_URIS)
    return f"{ROOT}/{rng.choice(DOCUMENTS)}"


def odd_value(rng: random.Random) -> Any:
    """A value of some wrong type, or a right type with a wrong content."""
    kind = rng.randrange(9)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice(ODD_NUMBERS)
    if kind == 2:
        return rng.choice(ODD_STRINGS)
    if kind == 3:
        return rng.choice(ODD_FOLDER_URIS)
    if kind == 4:
        return []
    if kind == 5:
        return {}
    if kind == 6:
        return [rng.choice(ODD_STRINGS)]
    if kind == 7:
        return {"uri": rng.choice(ODD_FOLDER_URIS), "extra": None}
    return rng.choice([False, True, "null", "true", "[]", "{}"])


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value (the value itself is the empty path)."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_paths(item, (*prefix, index)))
    return found


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def mutate(rng: random.Random, message: dict[str, Any], times: int = 1) -> dict[str, Any]:
    """`message` with `times` random mutations: a field removed, added, or of the wrong type;
    a string made odd; the envelope (jsonrpc, id, method) broken now and then. The id is
    left alone: it says which answer the fuzzer waits for (see `break_envelope`)."""
    value = copy.deepcopy(message)
    for _ in range(times):
        places = [p for p in _paths(value) if p and p[0] not in ("jsonrpc", "id", "method")]
        if not places:
            break
        path = rng.choice(places)
        parent = _get(value, path[:-1])
        key = path[-1]
        action = rng.randrange(5)
        if action == 0 and isinstance(parent, dict):
            del parent[key]
        elif action == 1 and isinstance(parent, dict):
            parent[rng.choice(["extra", "__proto__", "uri", "id", "textDocument"])] = odd_value(rng)
        elif action == 2 and isinstance(parent[key], str):
            text = parent[key]
            cut = rng.randrange(len(text) + 1)
            parent[key] = (
                text[:cut] + rng.choice(["\u0000", LONE_SURROGATE, "%00", "\n"]) + (text[cut:])
            )
        else:
            parent[key] = odd_value(rng)
    return value


def break_envelope(rng: random.Random, message: dict[str, Any]) -> dict[str, Any]:
    """The JSON-RPC envelope broken: no or a wrong `jsonrpc`, an id of a wrong type, a
    method that is not a string, or params that are not structured."""
    value = copy.deepcopy(message)
    action = rng.randrange(6)
    if action == 0:
        value.pop("jsonrpc", None)
    elif action == 1:
        value["jsonrpc"] = rng.choice(["1.0", 2, None, "2.0 "])
    elif action == 2 and "id" in value:
        value["id"] = rng.choice([[1], {"n": 1}, 1.5, None, True, -1, 2**70])
    elif action == 3:
        value["method"] = rng.choice([5, None, ["x"], "", value.get("method", "") + "\u0000"])
    elif action == 4:
        value["params"] = rng.choice([[], "params", 7, None, [value.get("params")]])
    else:
        value["result"] = None  # a request and a response at once
    return value


# ----- hostile repository files -----

# Each entry: the file, and how its text is made: {"prefix", "repeat", "times", "suffix"}
# (see session.file_text), so that a replay holds a recipe, not megabytes.
HOSTILE_FILES: list[tuple[str, dict[str, Any]]] = [
    (".gitignore", {"repeat": "a*a*a*a*a*a*a*a*a*a*a*a*b\n", "times": 3}),
    (".gitignore", {"repeat": "*.x{n}\n!keep{n}\n**/d{n}/**\n", "times": 20000}),
    (".gitignore", {"repeat": "[[[[[[[[\n\\\n!\n/**/**/**/**/**/**/**/**/x\n", "times": 2000}),
    (".gitignore", {"prefix": "\xff\xfe\u0000", "repeat": "é\u0000*\n", "times": 1000}),
    (".git/info/exclude", {"repeat": "a*a*a*a*a*a*a*a*a*a*a*a*b\n", "times": 2}),
    ("sub/.gitignore", {"repeat": "*{n}*\n", "times": 5000}),
    (".lsp-verify.toml", {"repeat": "unknown{n} = {n}\n", "times": 5000}),
    (".lsp-verify.toml", {"prefix": "command = ", "repeat": "[", "times": 5000}),
    (
        ".lsp-verify.toml",
        {"prefix": "globs = [", "repeat": '"*.py",', "times": 50000, "suffix": "]"},
    ),
    (".lsp-verify.toml", {"repeat": "[t{n}]\nconfirm = 'never'\n", "times": 3000}),
    (".lsp-verify.toml", {"prefix": "command = '", "repeat": "\\u0000", "times": 5, "suffix": "'"}),
    ("setup.cfg", {"prefix": "[tool:pytest]\n", "repeat": "= {n}\n  not a line\n", "times": 20000}),
    ("tox.ini", {"prefix": "[pytest]\naddopts =", "repeat": " -p x{n}", "times": 20000}),
    ("pytest.ini", {"repeat": "garbage line {n} ]]]\n", "times": 20000}),
    ("pytest.ini", {"prefix": "[pytest]\n", "repeat": "[pytest]\n", "times": 10000}),
    ("pyproject.toml", {"prefix": "x = ", "repeat": "[", "times": 100000}),
    (
        "pyproject.toml",
        {
            "prefix": "[tool.pytest.ini_options]\naddopts = '",
            "repeat": "-x ",
            "times": 50000,
            "suffix": "'\n",
        },
    ),
    (
        "package.json",
        {"prefix": '{"scripts": {"test": "true"}, "x": ', "repeat": "[", "times": 100000},
    ),
    ("Makefile", {"repeat": "a{n} b{n}: \\\n", "times": 50000, "suffix": "test:\n\ttrue\n"}),
    ("justfile", {"repeat": "x{n} := '", "times": 20000}),
    ("conftest.py", {"repeat": "import a{n}\n", "times": 20000}),
    ("a.py", {"repeat": "from . import a\nimport test_a\n", "times": 5000}),
]

# Special kinds a repository file can be instead of a regular file.
FILE_KINDS = ["fifo", "self-symlink", "dir-loop", "directory", "dangling"]
KIND_TARGETS = [
    ".gitignore",
    ".lsp-verify.toml",
    "setup.cfg",
    "pytest.ini",
    "pyproject.toml",
    "sub/.gitignore",
    ".git/info/exclude",
    "Makefile",
    ".venv/bin/pytest",
    "conftest.py",
]
