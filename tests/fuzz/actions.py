"""The body of a session: one function per kind of thing a client (or a repository) does,
each appending its steps to a Builder. Every method the server handles is here, in its
right shape first and then, now and then, broken (see grammar.broken).
"""

from __future__ import annotations

import random
from typing import Any, Callable

from tests.fuzz.builder import Builder
from tests.fuzz.values import (
    FILE_KINDS,
    HOSTILE_FILES,
    KIND_TARGETS,
    LONE_SURROGATE,
    ODD_FOLDER_URIS,
    ROOT,
    TOKEN,
    document_uri,
    odd_value,
)

BROKEN = 0.25  # the share of messages sent broken
COMMAND_NAMES = [
    "verify.runNow",
    "verify.cancel",
    "verify.showLastRun",
    "verify.explain",
    "verify.approve",
    "verify.revoke",
    "verify.showRun",
    "verify.showPlan",
    "verify.showLocation",
]


def _maybe_broken(rng: random.Random, message: dict[str, Any]) -> dict[str, Any]:
    from tests.fuzz.grammar import broken

    return broken(rng, message) if rng.random() < BROKEN else message


def _position(rng: random.Random) -> dict[str, Any]:
    if rng.random() < 0.15:
        return {"line": odd_value(rng), "character": odd_value(rng)}
    return {"line": rng.randint(0, 3), "character": rng.randint(0, 5)}


def document(rng: random.Random, b: Builder) -> None:
    uri = document_uri(rng)
    kind = rng.randrange(4)
    text = rng.choice(["x = 1\n", "x = 2\n", "", LONE_SURROGATE, "a\u0000b\n", "é" * 100])
    if kind == 0:
        message = b.notification(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
    elif kind == 1:
        change: dict[str, Any] = {"text": text}
        if rng.random() < 0.5:
            change["range"] = {"start": _position(rng), "end": _position(rng)}
        message = b.notification(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": rng.randint(2, 9)},
                "contentChanges": [change],
            },
        )
    elif kind == 2:
        message = b.notification("textDocument/didSave", {"textDocument": {"uri": uri}})
    else:
        message = b.notification("textDocument/didClose", {"textDocument": {"uri": uri}})
    b.send([_maybe_broken(rng, message)], probe=rng.random() < 0.6)


def watched(rng: random.Random, b: Builder) -> None:
    changes = [
        {"uri": document_uri(rng, odd=0.3), "type": rng.choice([1, 2, 2, 3])}
        for _ in range(rng.randint(1, 4))
    ]
    message = b.notification("workspace/didChangeWatchedFiles", {"changes": changes})
    b.send([_maybe_broken(rng, message)], probe=rng.random() < 0.7)


def configuration(rng: random.Random, b: Builder) -> None:
    settings = rng.choice(
        [
            {"verify": {"command": "exit 1", "confirm": "never"}},
            {"verify": {"runOn": "manual"}},
            {"verify": "true"},
            {"verify": None},
            {"workspaceTrusted": rng.choice([True, False])},
            {"verify": {"timeoutMs": odd_value(rng), "globs": odd_value(rng)}},
            None,
            [],
        ]
    )
    message = b.notification("workspace/didChangeConfiguration", {"settings": settings})
    b.send([_maybe_broken(rng, message)], probe=rng.random() < 0.5)


def folders(rng: random.Random, b: Builder) -> None:
    added = [{"uri": rng.choice([f"{ROOT}/sub", ROOT, *ODD_FOLDER_URIS]), "name": "f"}]
    removed = [{"uri": rng.choice([f"{ROOT}/sub", ROOT, f"{ROOT}/none"]), "name": "g"}]
    event = {"added": added if rng.random() < 0.7 else [], "removed": removed}
    message = b.notification("workspace/didChangeWorkspaceFolders", {"event": event})
    b.send([_maybe_broken(rng, message)], probe=rng.random() < 0.6)


def command(rng: random.Random, b: Builder) -> None:
    name = (
        rng.choice(COMMAND_NAMES)
        if rng.random() < 0.9
        else rng.choice(["verify.nothing", "", "verify.runNow\u0000", "VERIFY.RUNNOW", "x" * 300])
    )
    uri = document_uri(rng, odd=0.25)
    if name == "verify.showLocation":
        line = rng.choice([0, 1, 10**20, -1, 2**31, 1e20, "1", None])
        arguments: Any = [uri, line, rng.choice([0, 5, 10**20, -3])]
    else:
        arguments = rng.choice(
            [
                None,
                [],
                [uri],
                [{"uri": uri}],
                [[uri]],
                [{"textDocument": {"uri": uri}}],
                [ROOT],
                [odd_value(rng)],
                {"uri": uri},
                "args",
            ]
        )
    b.send([_maybe_broken(rng, b.command(name, arguments))], probe=rng.random() < 0.4)


def pull(rng: random.Random, b: Builder) -> None:
    if rng.random() < 0.6:
        params: dict[str, Any] = {"textDocument": {"uri": document_uri(rng)}}
        if rng.random() < 0.3:
            params["previousResultId"] = rng.choice(["1", "", odd_value(rng)])
        message = b.request("textDocument/diagnostic", params)
    else:
        previous = [{"uri": document_uri(rng), "value": "1"}] if rng.random() < 0.4 else []
        message = b.request("workspace/diagnostic", {"previousResultIds": previous})
    b.send([_maybe_broken(rng, message)], probe=rng.random() < 0.3)


def code_action(rng: random.Random, b: Builder) -> None:
    uri = document_uri(rng)
    diagnostic = {
        "range": {"start": _position(rng), "end": _position(rng)},
        "message": "verify failed (exit 1):\nx",
        "source": rng.choice(["verify", "other"]),
        "code": rng.choice(["not-approved", "failed", None, 5]),
    }
    if rng.random() < 0.5:
        diagnostic["relatedInformation"] = [
            {
                "location": {"uri": document_uri(rng, odd=0.4), "range": diagnostic["range"]},
                "message": "raised here",
            }
        ]
    params = {
        "textDocument": {"uri": uri},
        "range": diagnostic["range"],
        "context": {"diagnostics": [diagnostic]},
    }
    b.send([_maybe_broken(rng, b.request("textDocument/codeAction", params))], probe=False)


def cancel_request(rng: random.Random, b: Builder) -> None:
    """$/cancelRequest of a request still running (a runNow), of one answered, or odd."""
    if rng.random() < 0.5:
        run = b.command("verify.runNow", [])
        b.send([run], probe=False)
        target: Any = run["id"]
    else:
        target = rng.choice([*b.sent_ids[-3:], 10**9, [1], None, "nope", {"id": 1}])
    b.send([b.notification("$/cancelRequest", {"id": target})], probe=rng.random() < 0.7)


def progress_cancel(rng: random.Random, b: Builder) -> None:
    token = rng.choice([TOKEN, TOKEN, "verify-nothing", 5, None, [TOKEN]])
    message = b.notification("window/workDoneProgress/cancel", {"token": token})
    b.send([message], probe=rng.random() < 0.6)


def unknown(rng: random.Random, b: Builder) -> None:
    method = rng.choice(
        ["textDocument/hover", "$/setTrace", "$/unknown", "workspace/symbol", "verify/status", ""]
    )
    message = b.request(method, {}) if rng.random() < 0.5 else b.notification(method, {})
    b.send([message], probe=True)


def lifecycle(rng: random.Random, b: Builder) -> None:
    """Lifecycle out of order: a second initialize (the first one's params, or bare),
    initialized again, a notification sent as a request, or a shutdown in the middle (what
    follows it must be refused)."""
    kind = rng.randrange(5)
    if kind == 0:
        bare = {"processId": None, "rootUri": ROOT, "capabilities": {}}
        params = b.initialize_params if rng.random() < 0.7 and b.initialize_params else bare
        message = b.request("initialize", params)
    elif kind == 1:
        message = b.notification("initialized", {})
    elif kind == 2:
        message = b.request(
            rng.choice(["initialized", "textDocument/didSave", "$/cancelRequest"]), {}
        )
    elif kind == 3 and rng.random() < 0.3:
        message = b.request("shutdown", None)
    else:
        message = b.request("textDocument/diagnostic", {"textDocument": {"uri": f"{ROOT}/a.py"}})
    b.send([message], probe=True)


def response(rng: random.Random, b: Builder) -> None:
    """An answer to a request the server never sent."""
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": rng.choice([77, "verify-x", None, [1]])}
    if rng.random() < 0.5:
        reply["result"] = odd_value(rng)
    else:
        reply["error"] = rng.choice([{"code": -32603, "message": "x"}, {"code": "x"}, None, 5])
    b.send([reply], probe=True)


# Framing junk: each is recoverable within the same write (a lying Content-Length is never
# longer than what follows it), so the probe behind it must be answered at once.
JUNK = [
    {"raw": "garbage without headers\r\n"},
    {"raw": "Content-Length: x\r\n\r\n{}"},
    {"raw": "Content-Length: -5\r\n\r\n"},
    {"raw": "Content-Type: application/json\r\n\r\n{}"},
    {"raw": "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}"},
    {"raw": "\r\n\r\n\r\n"},
    {"raw": "Content-Length: 10\r\n\r\nContent-Length: 2\r\n\r\n{}"},
    {"raw": "content-length:2\r\n\r\n{}"},
    {"raw": "Content-Length: x\r\n\r\n" * 2000},
    {"raw": "Content-Length: 1\r\n\r\n{" * 2000},
    {"raw": "Content-Length: 30\r\n\r\n" * 500},
    {"body": "not json"},
    {"body": '{"jsonrpc": "2.0", "method": "initialized", "params": {}'},
    {"body": "\xff\xfe{}"},
    {"body": '[{"jsonrpc": "2.0", "id": 5000, "method": "shutdown"}]'},
    {"body": '"a string"'},
    {"body": "null"},
    {"body": "[" * 100000},
    {"body": '{"jsonrpc": "2.0", "method": "x", "params": ' + "[" * 5000 + "]" * 5000 + "}"},
    {"json": {"jsonrpc": "2.0", "method": "textDocument/didSave"}, "delta": -3},
    {"json": {"jsonrpc": "2.0", "method": "textDocument/didSave"}, "delta": 20},
    {
        "json": {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        "headers": "Content-Length: {n}\n\n",
    },
    {
        "json": {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        "headers": "Content-Length: {n}\r\nContent-Type: application/vscode-jsonrpc; charset=latin1"
        "\r\n\r\n",
    },
    {
        "json": {
            "jsonrpc": "2.0",
            "method": "textDocument/didSave",
            "params": {"textDocument": {"uri": f"{ROOT}/{LONE_SURROGATE}.py"}},
        },
        "ascii": False,
    },
]


def junk(rng: random.Random, b: Builder) -> None:
    parts = [dict(rng.choice(JUNK)) for _ in range(rng.randint(1, 3))]
    b.send([], probe=True, parts=parts)


def split(rng: random.Random, b: Builder) -> None:
    """One message written in two writes, with a pause between them."""
    message = b.command("verify.showLastRun", [])
    cut = rng.choice([1, 10, 17, 20, 40])
    b.send([], parts=[{"json": message, "slice": [0, cut]}])
    b.sleep(rng.choice([0.05, 0.3]))
    b.send([], parts=[{"json": message, "slice": [cut, None]}], probe=True)


def repository(rng: random.Random, b: Builder) -> None:
    """A hostile repository file, then what makes the server read it: a watched change (of a
    path that makes ignore patterns work hard) for an ignore file, a save or a command for
    the files planning reads."""
    if rng.random() < 0.7:
        rel, recipe = rng.choice(HOSTILE_FILES)
        b.file(rel, dict(recipe))
    else:
        rel = rng.choice(KIND_TARGETS)
        b.file(rel, kind=rng.choice(FILE_KINDS))
    ignores = rel.endswith((".gitignore", "exclude"))
    trigger = 1 if ignores and rng.random() < 0.8 else rng.randrange(4)
    if trigger == 0:
        message = b.notification("textDocument/didSave", {"textDocument": {"uri": f"{ROOT}/a.py"}})
    elif trigger == 1:
        name = rng.choice(WATCHED_NAMES)
        message = b.notification(
            "workspace/didChangeWatchedFiles", {"changes": [{"uri": f"{ROOT}/{name}", "type": 2}]}
        )
    elif trigger == 2:
        message = b.command("verify.explain", [])
    else:
        message = b.command("verify.runNow", [f"{ROOT}/test_a.py"])
    b.send([message], probe=True, event=True)


# Changed files whose paths make ignore patterns work: long runs of one letter against
# backtracking patterns, deep paths against many patterns.
WATCHED_NAMES = [
    "a" * 30 + "c",
    "sub/" + "a" * 28 + "c",
    "a" * 3000,
    "d/" * 60 + "x.py",
    "sub/" + "d/" * 40 + "aaaaaaaaaaaaaaaaaaaaaaaac",
    "a.py",
]


def busy_shutdown(rng: random.Random, b: Builder) -> None:
    """shutdown while a run, a pull or a question is pending; what follows is refused."""
    pending = [b.command("verify.runNow", [])]
    if rng.random() < 0.5:
        pending.append(
            b.request("textDocument/diagnostic", {"textDocument": {"uri": f"{ROOT}/a.py"}})
        )
    if rng.random() < 0.5:
        b.send(pending)
        b.sleep(rng.choice([0.05, 0.2]))
        b.send([b.request("shutdown", None)])
    else:
        b.send([*pending, b.request("shutdown", None)])


def envelope(rng: random.Random, b: Builder) -> None:
    from tests.fuzz.values import break_envelope

    message = rng.choice(
        [b.probe(), b.request("textDocument/codeAction", {}), b.notification("initialized", {})]
    )
    b.send([break_envelope(rng, message)], probe=True)


def pause(rng: random.Random, b: Builder) -> None:
    b.sleep(rng.choice([0.1, 0.3, 1.0]))


Action = Callable[[random.Random, Builder], None]
WEIGHTS: list[tuple[Action, int]] = [
    (document, 5),
    (watched, 3),
    (configuration, 2),
    (folders, 1),
    (command, 6),
    (pull, 2),
    (code_action, 2),
    (cancel_request, 2),
    (progress_cancel, 1),
    (unknown, 1),
    (lifecycle, 1),
    (response, 1),
    (junk, 2),
    (split, 1),
    (repository, 3),
    (envelope, 1),
    (busy_shutdown, 1),
    (pause, 2),
]
WEIGHTED: list[Action] = [action for action, weight in WEIGHTS for _ in range(weight)]
