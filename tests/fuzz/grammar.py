"""Sessions from a seed: the setup (where the command comes from, what the client declares,
how it answers the server's requests), the lifecycle, a body of actions (see actions.py)
and a stop.

`generate(seed, index)` always gives the same session for the same pair.
"""

from __future__ import annotations

import json
import random
from typing import Any

from tests.fuzz import actions
from tests.fuzz.builder import Builder
from tests.fuzz.session import Session
from tests.fuzz.values import ODD_FOLDER_URIS, ROOT, break_envelope, mutate, odd_value

# Harmless commands that end at once: passing, failing, slow, and printing what a decoder
# trips on (a UTF-8-encoded lone surrogate, bytes that are not UTF-8, NUL, ANSI colours).
COMMANDS = [
    "true",
    "exit 1",
    "sleep 0.3",
    "printf 'a.py:1:1: error: bad\\ntest_a.py:2:5: warning: w\\n'; exit 1",
    "printf 'x \\355\\240\\200 \\377\\376\\000 \\033[31mred\\033[0m\\n'; exit 1",
    "printf 'a.py:1:1: \\355\\240\\200 surrogate\\n'; exit 1",
    'printf \'Traceback (most recent call last):\\n  File "a.py", line 1, in <module>\\n'
    "    x = 1\\nValueError: boom\\n'; exit 1",
    "pytest -x -q",
    "echo '\ud800 lone'; exit 1",
    "echo '\udcff escaped'; exit 1",
]
STOP_WEIGHTS = {"shutdown-exit": 5, "exit": 1, "sigterm": 2, "close-stdin": 1, "kill-keeper": 1}


def generate(seed: int, index: int) -> Session:
    rng = random.Random(f"{seed}:{index}")
    b = Builder(rng)
    settings = _settings(rng)
    source = rng.choice(["init", "config", "project", "project", "workspace", "detected"])
    b.policy = _policy(rng, settings if source == "config" else None)
    if source == "project":
        b.file(".lsp-verify.toml", f"command = {json.dumps(settings.pop('command'))}\n")
    elif source == "detected":
        settings.pop("command")
        b.file("pytest.ini", "[pytest]\n")
    elif source == "workspace":
        settings["workspaceCommand"] = settings.pop("command")
    options = _init_options(rng, settings if source != "config" else {"confirm": "never"})
    b.initialize_params = _initialize_params(rng, options)
    initialize = b.request("initialize", b.initialize_params)
    if rng.random() < 0.12:
        initialize = mutate(rng, initialize, rng.randint(1, 3))
    _lifecycle(rng, b, initialize)
    for _ in range(rng.randint(3, 12)):
        rng.choice(actions.WEIGHTED)(rng, b)
    stop = rng.choices(list(STOP_WEIGHTS), list(STOP_WEIGHTS.values()))[0]
    return {"seed": seed, "index": index, "policy": b.policy, "steps": b.steps, "stop": stop}


def _lifecycle(rng: random.Random, b: Builder, initialize: dict[str, Any]) -> None:
    """initialize and initialized: in order (mostly), pipelined, out of order, or missing."""
    initialized = b.notification("initialized", {})
    shape = rng.random()
    if shape < 0.7:
        b.send([initialize], probe=False)
        b.send([initialized], probe=rng.random() < 0.3)
    elif shape < 0.8:
        b.send([initialize, initialized], probe=True)
    elif shape < 0.96:
        # Something before initialize: a notification, a request, or initialized itself.
        change = b.notification(
            "textDocument/didChange",
            {
                "textDocument": {"uri": f"{ROOT}/a.py", "version": 2},
                "contentChanges": [{"text": "x = 2\n"}],
            },
        )
        early = rng.choice(
            [
                change,
                change,
                b.notification("textDocument/didSave", {"textDocument": {"uri": f"{ROOT}/a.py"}}),
                initialized,
                b.command("verify.showLastRun", []),
                b.command(rng.choice(actions.COMMAND_NAMES), []),
                b.request("textDocument/diagnostic", {"textDocument": {"uri": f"{ROOT}/a.py"}}),
                b.request("shutdown", None),
            ]
        )
        if rng.random() < 0.5:
            b.send([early, initialize], probe=True)
        else:
            b.send([early], probe=True)
            b.send([initialize], probe=False)
        b.send([initialized], probe=rng.random() < 0.5)
    # else: no initialize at all; the body talks to a server that never started


def _settings(rng: random.Random) -> dict[str, Any]:
    settings: dict[str, Any] = {"command": rng.choice(COMMANDS), "timeoutMs": 10000}
    if rng.random() < 0.7:
        settings["confirm"] = rng.choice(["never", "onChange", "always"])
    if rng.random() < 0.4:
        settings["runOn"] = rng.choice(["save", "sync", "manual", "edit"])
    if rng.random() < 0.15:
        settings["globs"] = rng.choice([["*.py"], ["sub"], [""], ["*"]])
    if rng.random() < 0.15:
        settings[rng.choice(["tailLines", "failedFirst", "affectedFirst", "autoDetect"])] = (
            odd_value(rng)
        )
    return settings


def _init_options(rng: random.Random, settings: dict[str, Any]) -> Any:
    shape = rng.random()
    if shape < 0.1:
        return settings.get("command") or settings.get("workspaceCommand")  # a bare command
    options: dict[str, Any] = {"verify": settings} if shape < 0.4 else dict(settings)
    if rng.random() < 0.3:
        options["diagnosticMode"] = rng.choice(["pull", "push", "auto", 7])
    if rng.random() < 0.3:
        options["liveOutput"] = rng.choice([True, False, "yes"])
    if rng.random() < 0.15:
        options["workspaceTrusted"] = rng.choice([False, True, None])
    return options


# Client capabilities, each declared or not.
CAPABILITIES: list[tuple[tuple[str, ...], Any]] = [
    (("window", "showMessage"), {"messageActionItem": {"additionalPropertiesSupport": True}}),
    (("window", "workDoneProgress"), True),
    (("window", "showDocument"), {"support": True}),
    (("workspace", "configuration"), True),
    (("workspace", "didChangeWatchedFiles"), {"dynamicRegistration": True}),
    (("workspace", "diagnostics"), {"refreshSupport": True}),
    (("workspace", "workspaceFolders"), True),
    (("textDocument", "diagnostic"), {"dynamicRegistration": False}),
    (("textDocument", "publishDiagnostics"), {"relatedInformation": True}),
    (
        ("textDocument", "codeAction"),
        {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix"]}}},
    ),
    (("general", "positionEncodings"), ["utf-8", "utf-32", "utf-16"]),
]


def _initialize_params(rng: random.Random, options: Any) -> dict[str, Any]:
    capabilities: dict[str, Any] = {}
    for path, value in CAPABILITIES:
        if rng.random() < (0.8 if path[1] == "showMessage" else 0.6):
            capabilities.setdefault(path[0], {})[path[1]] = value
    params: dict[str, Any] = {
        "processId": None,
        "rootUri": ROOT,
        "capabilities": capabilities,
        "initializationOptions": options,
    }
    shape = rng.random()
    if shape < 0.6:
        params["workspaceFolders"] = [{"uri": ROOT, "name": "ws"}]
    elif shape < 0.7:
        params["workspaceFolders"] = [
            {"uri": ROOT, "name": "ws"},
            {"uri": f"{ROOT}/sub", "name": "sub"},
        ]
    elif shape < 0.8:
        params["workspaceFolders"] = [{"uri": rng.choice(ODD_FOLDER_URIS), "name": "odd"}]
    elif shape < 0.85:
        params["rootUri"] = rng.choice(ODD_FOLDER_URIS)
    elif shape < 0.9:
        del params["rootUri"]
        params["rootPath"] = rng.choice(["/nonexistent-fuzz", "relative/path", "\u0000", "@ROOT@"])
    return params


# ----- answers to the server's requests -----


def _policy(rng: random.Random, settings: dict[str, Any] | None) -> dict[str, Any]:
    """How this session's client answers each kind of request the server sends."""
    policy: dict[str, Any] = {}
    if settings is not None:
        policy["workspace/configuration"] = {"kind": "each", "value": settings}
    odd = {"window/showMessageRequest": 0.6, "workspace/configuration": 0.5}
    choices: dict[str, list[dict[str, Any]]] = {
        "window/showMessageRequest": [
            {"kind": "result", "value": {"title": "Always for this plan"}},
            {"kind": "result", "value": {"title": "Don't run"}},
            {"kind": "result", "value": None},
            {"kind": "result", "value": {}},
            {"kind": "result", "value": ""},
            {"kind": "result", "value": {"title": 5}},
            {"kind": "result", "value": {"title": "Run once", "extra": [1]}},
            {"kind": "error", "value": -32603},
            {"kind": "none"},
            {"kind": "none"},
            {"kind": "wrong-id", "value": {"title": "Run once"}},
            {"kind": "twice", "value": {"title": "Run once"}},
            {"kind": "late", "value": {"title": "Run once"}, "delay": 1.0},
        ],
        "workspace/configuration": [
            {"kind": "result", "value": None},
            {"kind": "result", "value": "a string"},
            {"kind": "result", "value": {}},
            {"kind": "result", "value": []},
            {"kind": "each", "value": "exit 1"},
            {"kind": "each", "value": {"command": 5, "timeoutMs": "x", "runOn": None}},
            {"kind": "error", "value": -32603},
            {"kind": "none"},
            {"kind": "wrong-id", "value": [None]},
            {"kind": "late", "value": [None], "delay": 1.5},
        ],
        "window/workDoneProgress/create": [
            {"kind": "error", "value": -32603},
            {"kind": "none"},
            {"kind": "wrong-id", "value": None},
            {"kind": "twice", "value": None},
            {"kind": "late", "value": None, "delay": 0.5},
            {"kind": "result", "value": {"odd": True}},
        ],
        "client/registerCapability": [
            {"kind": "error", "value": -32601},
            {"kind": "none"},
            {"kind": "result", "value": "registered"},
        ],
        "workspace/diagnostic/refresh": [
            {"kind": "error", "value": -32603},
            {"kind": "none"},
        ],
        "window/showDocument": [
            {"kind": "result", "value": {"success": "yes"}},
            {"kind": "result", "value": None},
            {"kind": "error", "value": -32603},
            {"kind": "none"},
        ],
    }
    for method, answers in choices.items():
        if rng.random() < odd.get(method, 0.35):
            policy[method] = rng.choice(answers)
    return policy


def broken(rng: random.Random, message: dict[str, Any]) -> dict[str, Any]:
    """A message as a broken client sends it: mostly mutated params, now and then a broken
    envelope."""
    if rng.random() < 0.2:
        return break_envelope(rng, message)
    return mutate(rng, message, rng.randint(1, 3))
