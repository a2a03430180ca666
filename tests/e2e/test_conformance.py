"""Every message the server sends, over whole sessions, checked against LSP 3.17 and
lsprotocol's types (tests/support/conformance.py): for a client with rich capabilities, one that
declares nothing, one answering an approval question, pull clients with and without
refreshSupport, and a push client. The verified command fails with located problems on lines
of emoji, CJK and combining marks, as real tools print them (gcc 12, rustc 1.95, mypy 1.20,
ruff, tsc), so positions are exercised in the encoding each client negotiates."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from lsprotocol.converters import get_converter
from pytest_lsp import client_capabilities

from tests.support.conformance import check
from tests.support.recorder import HOLD, Recorder, Reply

# What the tools printed for these very lines (checked on this machine; see positions.py).
FILES = {
    "app/emoji.py": (
        "import os\n"
        's = "😀😀中é\u0301"; x: int = "a"\n'
        "total = add(1, nope)  # summed 🎉\n"
        "greeting = nope2  # 😀😀\n"
    ),
    "web/app.ts": 'const s = "😀中é\u0301";\tconst x: number = "a";\n',
    "native/calc.c": 'int main(void) {\n\tconst char *s = "中é\u0301"; int x = nope;\n}\n',
    "src/lib.rs": (
        'fn main() {\n\tlet s = "中é\u0301"; panic!("boom");\n    let s = "é😀"; f();\n}\n'
    ),
}
OUTPUT = """\
app/emoji.py:2:33:2:35: error: Incompatible types in assignment (expression has type "str", \
variable has type "int")  [assignment]
app/emoji.py:2:12: E702 Multiple statements on one line (semicolon)
app/emoji.py:3: error: Name "nope" is not defined  [name-defined]
app/emoji.py:4: error: Name "nope2" is not defined  [name-defined]
Found 3 errors in 1 file (checked 1 source file)
web/app.ts(1,26): error TS2322: Type 'string' is not assignable to type 'number'.
native/calc.c:2:40: error: \u2018nope\u2019 undeclared (first use in this function)
thread 'tests::adds' panicked at src/lib.rs:2:20:
boom
stack backtrace:
   0: std::panicking::begin_panic
   1: lib::tests::adds
             at ./src/lib.rs:3:23
   2: core::ops::function::FnOnce::call_once
"""
# The command prints a first line, then (with `wait`) waits for the file `go`, then fails.
EMIT = f"""\
import os, sys, time
print("checking", flush=True)
deadline = time.monotonic() + 30
while sys.argv[1:] == ["wait"] and not os.path.exists("go") and time.monotonic() < deadline:
    time.sleep(0.02)
sys.stdout.write({OUTPUT!r})
sys.exit(1)
"""
# (message starts with, file, 0-based line, start after this text, end after this text; None:
# the line's end). Positions the tools' columns point at, in the line's own text.
EXPECTED = [
    ("Incompatible types", "app/emoji.py", 1, 's = "😀😀中é\u0301"; x: int = ', '"a"'),
    ("Multiple statements", "app/emoji.py", 1, 's = "😀😀中é\u0301"', None),
    ('Name "nope" is', "app/emoji.py", 2, "", None),
    ('Name "nope2" is', "app/emoji.py", 3, "", None),
    ("Type 'string'", "web/app.ts", 0, 'const s = "😀中é\u0301";\tconst ', None),
    ("\u2018nope\u2019", "native/calc.c", 1, '\tconst char *s = "中é\u0301"; int x = ', None),
    ("tests::adds: boom", "src/lib.rs", 2, '    let s = "é😀"; ', None),
]
RELATED = ("src/lib.rs", 1, '\tlet s = "中é\u0301"; ')  # the panic, related to the test's line


def units(text: str, encoding: str) -> int:
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text.encode("utf-8")) if encoding == "utf-8" else len(text)


@pytest.fixture
def project(project: Path) -> Path:
    for rel, text in FILES.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text, encoding="utf-8")
    (project / "emit.py").write_text(EMIT, encoding="utf-8")
    return project


def command(wait: bool = False) -> str:
    return f"{shlex.quote(sys.executable)} emit.py" + (" wait" if wait else "")


def capabilities(profile: str, **changes: Any) -> dict[str, Any]:
    """A real editor's capabilities (pytest-lsp's profiles) as JSON, with dotted-path changes
    (`{"general.positionEncodings": [...]}`); None removes a key."""
    caps: dict[str, Any] = get_converter().unstructure(client_capabilities(profile))
    for path, value in changes.items():
        *parents, last = path.split(".")
        node = caps
        for name in parents:
            node = node.setdefault(name, {})
        if value is None:
            node.pop(last, None)
        else:
            node[last] = value
    return caps


@contextmanager
def recording(project: Path, state: Path, caps: dict[str, Any], **kw: Any) -> Iterator[Recorder]:
    """A started session, shut down at the end and checked: every message conformant, no
    traceback, exit code 0. The tests assert what they expect after it, so that a violation
    shows as the checker reports it."""
    recorder = Recorder(project, state, caps, **kw)
    try:
        recorder.start()
        yield recorder
        code = recorder.finish()
    finally:
        recorder.close()
    assert check(recorder.frames) == []
    assert "Traceback" not in recorder.stderr_text(), recorder.stderr_text()
    assert code == 0


def finished(recorder: Recorder) -> list[dict[str, Any]]:
    return [
        m["params"]
        for m in recorder.received("verify/status")
        if m["params"].get("state") == "idle" and m["params"].get("lastOutcome") is not None
    ]


def running(recorder: Recorder) -> bool:
    return any(m["params"]["state"] == "running" for m in recorder.received("verify/status"))


def progress_kinds(recorder: Recorder) -> list[str]:
    return [m["params"]["value"]["kind"] for m in recorder.received("$/progress")]


def run_and_wait(recorder: Recorder, rel: str = "app/emoji.py", runs: int = 1) -> None:
    """Save, and read until the run has ended: its publishes come before that status."""
    recorder.save(rel)
    recorder.pump(lambda: len(finished(recorder)) >= runs, 60, "the run's end")


def pushed(recorder: Recorder) -> dict[str, list[dict[str, Any]]]:
    """The latest diagnostics pushed per file, relative to the project."""
    out: dict[str, list[dict[str, Any]]] = {}
    for message in recorder.received("textDocument/publishDiagnostics"):
        out[message["params"]["uri"]] = message["params"]["diagnostics"]
    return {_rel(recorder, uri): diagnostics for uri, diagnostics in out.items()}


def workspace_pull(recorder: Recorder) -> list[dict[str, Any]]:
    """A workspace pull's reports."""
    rid = recorder.request("workspace/diagnostic", {"previousResultIds": []})
    items: list[dict[str, Any]] = recorder.response(rid, 60)["result"]["items"]
    return items


def by_file(recorder: Recorder, items: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Reports' diagnostics per file, relative to the project."""
    return {_rel(recorder, item["uri"]): item["items"] for item in items}


def _rel(recorder: Recorder, uri: str) -> str:
    return uri.removeprefix(recorder.root.as_uri() + "/")


def assert_positions(found: dict[str, list[dict[str, Any]]], encoding: str, related: bool) -> None:
    """Each problem where its tool's column says, in `encoding`: wrong offsets that happen to
    fall on a character boundary (a line ending in two emoji) fail here."""
    for start, rel, line, before, through in EXPECTED:
        (diagnostic,) = [d for d in found[rel] if d["message"].startswith(start)]
        text = FILES[rel].split("\n")[line]
        begin = units(before, encoding)
        end = units(before + through, encoding) if through else units(text, encoding)
        assert diagnostic["range"] == {
            "start": {"line": line, "character": begin},
            "end": {"line": line, "character": end},
        }, (start, encoding)
    (panic,) = [d for d in found["src/lib.rs"] if d["message"].startswith("tests::adds")]
    if related:
        rel, line, before = RELATED
        (information,) = panic["relatedInformation"]
        at = {"line": line, "character": units(before, encoding)}
        assert information["location"]["range"] == {"start": at, "end": at}
    else:
        assert "relatedInformation" not in panic
        assert "panicked here: src/lib.rs:2:20" in panic["message"]


def code_action_results(recorder: Recorder, rel: str) -> list[dict[str, Any]]:
    diagnostic = pushed(recorder)[rel][0]
    uri = (recorder.root / rel).as_uri()
    rid = recorder.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": diagnostic["range"],
            "context": {"diagnostics": [diagnostic]},
        },
    )
    result: list[dict[str, Any]] = recorder.response(rid)["result"]
    return result


def execute(recorder: Recorder, name: str, *args: Any) -> Any:
    rid = recorder.request("workspace/executeCommand", {"command": name, "arguments": list(args)})
    return recorder.response(rid, 60).get("result")


# ----- the sessions -----


def test_a_rich_client_gets_progress_only_once_it_answered_create(
    project: Path, state: Path
) -> None:
    # VS Code's capabilities, answering window/workDoneProgress/create only once the run has
    # started: a begin sent before that answer is recorded before it, a violation. Then the
    # begin carries the command and a report the latest line.
    settings = {"command": command(wait=True)}
    with recording(
        project,
        state,
        capabilities("visual_studio_code"),
        init_options={"verify": settings},
        settings=settings,
        answers={"window/workDoneProgress/create": lambda m: HOLD},
    ) as rec:
        rec.save("app/emoji.py")
        rec.pump(lambda: rec.held and running(rec), 30, "the run to start")
        rec.pump_for(0.5)
        rec.answer(rec.held[0], Reply(None))
        rec.pump(lambda: rec.received("$/progress"), 10, "the begin")
        (project / "go").write_text("")
        rec.pump(lambda: finished(rec) and progress_kinds(rec)[-1:] == ["end"], 60, "the end")
        actions = code_action_results(rec, "app/emoji.py")
        shown = execute(rec, "verify.showRun")
    values = [m["params"]["value"] for m in rec.received("$/progress")]
    kinds = progress_kinds(rec)
    assert kinds[:2] == ["begin", "report"] and kinds[-1] == "end", kinds
    assert values[0]["message"] == settings["command"]
    assert values[1]["message"] == "checking"  # the latest line when the answer came
    assert values[-1]["message"] == "failed"
    assert_positions(pushed(rec), "utf-16", related=True)
    # CodeAction literals and showDocument: this client declares both.
    assert actions and all(isinstance(a["command"], dict) for a in actions)
    assert shown["shown"] is True


def test_a_client_that_declares_nothing_gets_nothing_it_did_not_declare(
    project: Path, state: Path
) -> None:
    with recording(project, state, {}, init_options={"verify": {"command": command()}}) as rec:
        run_and_wait(rec)
        actions = code_action_results(rec, "app/emoji.py")
        shown = execute(rec, "verify.showRun")
    initialize = rec.response(1)["result"]["capabilities"]
    assert initialize["codeActionProvider"] is True
    assert initialize["positionEncoding"] == "utf-16"
    assert_positions(pushed(rec), "utf-16", related=False)
    assert actions and all(isinstance(a["command"], str) for a in actions)
    assert {a["title"] for a in actions} >= {"Run verify again", "Show the run's output"}
    assert shown["shown"] is False
    assert not {m.get("method") for m in rec.received()} & {
        "window/workDoneProgress/create",
        "$/progress",
        "workspace/configuration",
        "client/registerCapability",
        "window/showDocument",
    }


def test_an_approval_answered_and_a_create_refused(project: Path, state: Path) -> None:
    # A command from .lsp-verify.toml needs approval (confirm onChange): the client answers
    # "Run once". It refuses the progress token: nothing may be sent on it then. It offers
    # UTF-32 positions, which pygls takes.
    (project / ".lsp-verify.toml").write_text(f"command = {json.dumps(command())}\n")
    caps = capabilities("visual_studio_code", **{"general.positionEncodings": ["utf-32"]})
    with recording(
        project,
        state,
        caps,
        settings={"confirm": "onChange"},
        answers={
            "window/showMessageRequest": lambda m: Reply({"title": "Run once"}),
            "window/workDoneProgress/create": lambda m: Reply(error=(-32603, "no progress")),
        },
    ) as rec:
        run_and_wait(rec)
        rec.pump_for(0.3)
    assert rec.response(1)["result"]["capabilities"]["positionEncoding"] == "utf-32"
    (question,) = rec.received("window/showMessageRequest")
    assert "Run once" in [a["title"] for a in question["params"]["actions"]]
    assert len(rec.received("window/workDoneProgress/create")) == 1
    assert rec.received("$/progress") == []
    assert_positions(pushed(rec), "utf-32", related=True)


def test_a_pull_client_with_refresh_support(project: Path, state: Path) -> None:
    # Pulls only. The documents it has open carry their version in the workspace pull. It
    # never answers window/workDoneProgress/create: nothing is sent on those tokens.
    caps = capabilities(
        "visual_studio_code",
        **{
            "textDocument.diagnostic": {"dynamicRegistration": False},
            "workspace.diagnostics": {"refreshSupport": True},
        },
    )
    with recording(
        project,
        state,
        caps,
        init_options={"verify": {"command": command()}},
        answers={"window/workDoneProgress/create": lambda m: HOLD},
    ) as rec:
        uri = rec.open("app/emoji.py", version=7)
        rec.change(uri, 8, FILES["app/emoji.py"])
        ts = rec.open("web/app.ts", version=3, language="typescript")
        run_and_wait(rec)
        items = workspace_pull(rec)
        document = rec.response(
            rec.request("textDocument/diagnostic", {"textDocument": {"uri": ts}})
        )
        run_and_wait(rec, runs=2)
        rec.pump_for(0.3)
    assert_positions(by_file(rec, items), "utf-16", related=True)
    versions = {_rel(rec, i["uri"]): i["version"] for i in items}
    assert versions["app/emoji.py"] == 8 and versions["web/app.ts"] == 3
    assert versions["src/lib.rs"] is None
    assert document["result"]["items"]
    assert len(rec.received("window/workDoneProgress/create")) == 2
    assert rec.received("textDocument/publishDiagnostics") == []
    assert rec.received("$/progress") == []


def test_shutdown_while_a_create_is_unanswered_and_the_run_goes_on(
    project: Path, state: Path
) -> None:
    with recording(
        project,
        state,
        capabilities("visual_studio_code"),
        init_options={"verify": {"command": command(wait=True)}},
        answers={"window/workDoneProgress/create": lambda m: HOLD},
    ) as rec:
        rec.save("app/emoji.py")
        rec.pump(lambda: rec.held and running(rec), 30, "the run to start")
    assert rec.received("$/progress") == []


def test_a_pull_client_without_refresh_support_gets_pushes_too(project: Path, state: Path) -> None:
    # Neovim's capabilities: pulls without refreshSupport, so pushes as well; it offers UTF-8
    # first.
    with recording(
        project,
        state,
        capabilities("neovim"),
        init_options={"verify": {"command": command()}},
    ) as rec:
        uri = rec.open("app/emoji.py", version=2)
        run_and_wait(rec)
        items = workspace_pull(rec)
        document = rec.response(
            rec.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        )
    assert rec.response(1)["result"]["capabilities"]["positionEncoding"] == "utf-8"
    assert_positions(pushed(rec), "utf-8", related=True)
    assert_positions(by_file(rec, items), "utf-8", related=True)
    assert document["result"]["kind"] == "full"


def test_a_push_client_without_related_information(project: Path, state: Path) -> None:
    # Emacs' capabilities: pushes, UTF-32 first, no relatedInformation, no showDocument.
    with recording(
        project, state, capabilities("emacs"), init_options={"verify": {"command": command()}}
    ) as rec:
        run_and_wait(rec)
        shown = execute(rec, "verify.showRun")
    assert_positions(pushed(rec), "utf-32", related=False)
    assert shown["shown"] is False


def test_claude_codes_capabilities_and_its_stop_order(project: Path, state: Path) -> None:
    """Claude Code declares push diagnostics with relatedInformation, no pull, no window
    capabilities, watched files without dynamic registration; it stops the server with
    shutdown, SIGTERM, exit, SIGTERM: status 0, no traceback, and every message up to the end
    conformant. (tests/test_stops.py sends the four without waiting for shutdown's answer.)"""
    caps = {
        "textDocument": {
            "synchronization": {"didSave": True},
            "publishDiagnostics": {"relatedInformation": True},
        },
        "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": False}},
    }
    rec = Recorder(project, state, caps, init_options={"verify": {"command": command()}})
    try:
        rec.start()
        uri = rec.open("app/emoji.py", version=1)
        rec.change(uri, 2, FILES["app/emoji.py"])
        run_and_wait(rec)
        pid = rec.server.proc.pid
        rec.response(rec.request("shutdown", None))
        os.kill(pid, signal.SIGTERM)
        with contextlib.suppress(BrokenPipeError):  # gone already
            rec.notify("exit", None)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        code = rec.server.proc.wait(timeout=5)
        rec._drain()
    finally:
        rec.close()
    assert check(rec.frames) == []
    assert "Traceback" not in rec.stderr_text(), rec.stderr_text()
    assert code == 0
    assert_positions(pushed(rec), "utf-16", related=True)
