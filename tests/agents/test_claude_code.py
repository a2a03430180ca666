"""The real Claude Code (npm `@anthropic-ai/claude-code`) with this repository's plugin
(`claude-plugin/`: lsp-verify as a language server, and its hooks) against a scripted
Anthropic Messages API (fake_model.py): the model is shown the verdict of the run that saw
each edit, with that edit, and cannot finish while it fails.

Claude Code is found in $LSP_VERIFY_CLAUDE_CODE/node_modules/.bin (tests/tools/
install-claude-code.sh puts it there; .ci/run sets the variable). Without the variable these
tests are skipped; with it and no Claude Code there, they fail. Nothing here reaches beyond
127.0.0.1: the API is the fake model's, the updater and other traffic are off, and home,
config and state live in a temporary folder.

`lsp-verify` on the PATH is a shim (SHIM) that runs the real one and records each exit
status, so a test can tell that every server Claude Code started exited 0. The project's
pytest records each of its sessions (CONFTEST): which run started it (the server marks each
run's environment), when it began and ended.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agents.fake_model import FakeModel, ToolCall, Turn
from tests.agents.installed import installed

CLAUDE_CODE_VERSION = "2.1.332"
REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "claude-plugin"
PASSING = "def test_answer():\n    assert 6 * 7 == 42\n"
CONFTEST = """import json, os, time

_began = time.time()


def pytest_sessionfinish(session, exitstatus):
    with open(os.environ["VERIFY_SESSIONS"], "a") as handle:
        run = os.environ.get("LSP_VERIFY_RUN", "")
        handle.write(json.dumps([run, _began, time.time(), int(exitstatus)]) + "\\n")
"""
SHIM = """#!{python}
import signal, subprocess, sys

child = subprocess.Popen([{python!r}, "-m", "lsp_verify", *sys.argv[1:]])
for name in ("SIGTERM", "SIGHUP", "SIGINT"):
    signal.signal(getattr(signal, name), lambda n, f: child.send_signal(n))
while True:
    try:
        status = child.wait()
        break
    except InterruptedError:
        continue
with open({exits!r}, "a") as handle:
    handle.write(" ".join(sys.argv[1:2] or ["serve"]) + " " + str(status) + "\\n")
sys.exit(status)
"""
FAILURE = "fails after this edit"
STOP_FAILURE = "fails after your last edit"
APPROVAL = "Only the user can approve it"


def claude() -> str:
    return installed("LSP_VERIFY_CLAUDE_CODE", "claude", "install-claude-code.sh")


class Agent:
    """One project, and Claude Code runs in it against a scripted model."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.project = tmp / "project"
        self.project.mkdir()
        (self.project / "pytest.ini").write_text("[pytest]\n")
        (self.project / "conftest.py").write_text(CONFTEST)
        self.sessions = tmp / "sessions.jsonl"
        self.exits = tmp / "exits.txt"
        self.env = self._env()

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        for name in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            folder = self.tmp / name.lower()
            folder.mkdir(exist_ok=True)
            env[name] = str(folder)
        shims = self.tmp / "bin"
        shims.mkdir()
        shim = shims / "lsp-verify"
        shim.write_text(SHIM.format(python=sys.executable, exits=str(self.exits)))
        shim.chmod(0o755)
        path = os.pathsep.join([str(shims), os.path.dirname(sys.executable), env["PATH"]])
        env.update(
            {
                "PATH": path,
                "ANTHROPIC_API_KEY": "any",
                "DISABLE_AUTOUPDATER": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_TELEMETRY": "1",
                # The project's pytest: without the test venv's plugins it starts sooner.
                "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                "VERIFY_SESSIONS": str(self.sessions),
                "npm_config_registry": "http://127.0.0.1:9/",
            }
        )
        for name in ("CLAUDECODE", "ANTHROPIC_AUTH_TOKEN", "LSP_VERIFY_NO_KEEPER"):
            env.pop(name, None)
        return env

    def write(self, rel: str, text: str) -> str:
        path = self.project / rel
        path.write_text(text)
        return str(path)

    def approve(self) -> None:
        """What the user does once, in a terminal of their own."""
        subprocess.run(
            [sys.executable, "-m", "lsp_verify", "approve", str(self.project)],
            env=self.env,
            check=True,
            capture_output=True,
            timeout=60,
        )

    def run(self, script: list[list[ToolCall]]) -> list[Turn]:
        """`claude -p` with the plugin until the script is done; the model's turns."""
        with FakeModel(script, agent_tool="Edit") as model:
            env = {**self.env, "ANTHROPIC_BASE_URL": model.base_url.removesuffix("/v1")}
            result = subprocess.run(
                [
                    claude(),
                    "-p",
                    "Work on the tests.",
                    "--plugin-dir",
                    str(PLUGIN),
                    "--allowedTools",
                    "Read,Edit,Write",
                    "--output-format",
                    "stream-json",
                    "--verbose",
                    "--debug-file",
                    str(self.tmp / "claude-debug.txt"),
                    "--model",
                    "claude-sonnet-4-5",
                ],
                cwd=self.project,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=240,
            )
            assert result.returncode == 0, result.stderr[-4000:]
            assert not model.script, f"Claude Code stopped early: {result.stderr[-4000:]}"
            return model.turns

    def runs(self) -> dict[str, list[list[Any]]]:
        """The project's pytest sessions by the server's run that started them."""
        out: dict[str, list[list[Any]]] = {}
        if self.sessions.exists():
            for line in self.sessions.read_text().splitlines():
                session = json.loads(line)
                out.setdefault(session[0], []).append(session)
        return out

    def servers_exited(self) -> list[str]:
        return self.exits.read_text().splitlines() if self.exits.exists() else []

    def read(self, rel: str) -> ToolCall:
        return ("Read", {"file_path": str(self.project / rel)})

    def edit(self, rel: str, old: str, new: str) -> ToolCall:
        return (
            "Edit",
            {"file_path": str(self.project / rel), "old_string": old, "new_string": new},
        )


def shown(turn: Turn) -> str:
    return "\n".join(turn.tool_results)


def report(capsys: pytest.CaptureFixture[str], scenario: str, turns: list[Turn]) -> None:
    """Per tool call: the seconds from the model's call to its next request."""
    with capsys.disabled():
        for n, turn in enumerate(turns[:-1]):
            names = ", ".join(name for name, _ in turn.answered) or "end of turn"
            took = turns[n + 1].at - turn.answered_at
            print(f"\nclaude code {scenario}: {names} -> next model request in {took:.2f} s")


def one_process_per_edit(agent: Agent, edits: int) -> None:
    """Each edit one run of the server, none beside another, every server exited 0."""
    runs = agent.runs()
    assert "" not in runs, "a pytest the server did not start"
    assert len(runs) == edits, runs
    spans = sorted((min(s[1] for s in r), max(s[2] for s in r)) for r in runs.values())
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), spans
    exits = agent.servers_exited()
    servers = [line for line in exits if line.split()[0] == "serve"]
    assert servers and all(line.split()[-1] == "0" for line in exits), exits


@pytest.fixture
def agent(tmp_path: Path) -> Agent:
    claude()
    return Agent(tmp_path)


def test_the_installed_claude_code_is_the_pinned_one() -> None:
    result = subprocess.run(
        [claude(), "--version"], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.split()[0] == CLAUDE_CODE_VERSION


@pytest.mark.parametrize("where", [REPO, PLUGIN], ids=["marketplace", "plugin"])
def test_claude_code_validates_the_marketplace_and_the_plugin(agent: Agent, where: Path) -> None:
    result = subprocess.run(
        [claude(), "plugin", "validate", str(where)],
        env=agent.env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Validation passed" in result.stdout
    assert "author" not in result.stdout and "Hosts not declared" not in result.stdout
    if where == PLUGIN:
        for part in (
            'hooks: PostToolUse Edit|Write|MultiEdit command "lsp-verify hook post-edit"',
            'hooks: Stop command "lsp-verify hook stop"',
            'lspServers: verify lsp-verify ["serve"]',
        ):
            assert part in result.stdout, result.stdout


def test_break_then_stop_is_refused_then_fix(agent: Agent, capsys: Any) -> None:
    agent.write("test_answer.py", PASSING)
    agent.approve()
    turns = agent.run(
        [
            [agent.read("test_answer.py")],
            [agent.edit("test_answer.py", "== 42", "== 43")],
            [],  # the model ends its turn on the failing edit
            [agent.edit("test_answer.py", "== 43", "== 42")],
            [],
        ]
    )
    report(capsys, "break, stop, fix", turns)
    assert len(turns) == 5  # the first end refused once, the second let through
    assert FAILURE in shown(turns[2]) and "assert (6 * 7) == 43" in shown(turns[2])
    assert STOP_FAILURE in shown(turns[3]) and "assert (6 * 7) == 43" in shown(turns[3])
    after_fix = shown(turns[4])
    assert "updated successfully" in after_fix
    assert "verify failed" not in after_fix and "== 43" not in after_fix
    one_process_per_edit(agent, edits=2)


def test_a_new_failing_test_file(agent: Agent, capsys: Any) -> None:
    agent.write("test_answer.py", PASSING)
    agent.approve()
    new = str(agent.project / "test_new.py")
    turns = agent.run(
        [
            [("Write", {"file_path": new, "content": "def test_new():\n    assert 1 + 1 == 3\n"})],
            [],  # refused: the new test fails
            [],  # stop_hook_active: it may end, however red
        ]
    )
    report(capsys, "new failing test file", turns)
    assert FAILURE in shown(turns[1]) and "assert (1 + 1) == 3" in shown(turns[1])
    assert STOP_FAILURE in shown(turns[2])
    one_process_per_edit(agent, edits=1)


def test_an_edit_of_a_module_a_test_imports(agent: Agent, capsys: Any) -> None:
    agent.write("answer.py", "ANSWER = 42\n")
    agent.write(
        "test_answer.py",
        "from answer import ANSWER\n\n\ndef test_answer():\n    assert 6 * 7 == ANSWER\n",
    )
    agent.approve()
    turns = agent.run(
        [
            [agent.read("answer.py")],
            [agent.edit("answer.py", "= 42", "= 43")],
            [agent.edit("answer.py", "= 43", "= 42")],
        ]
    )
    report(capsys, "module edit", turns)
    assert FAILURE in shown(turns[2]) and "assert (6 * 7) == 43" in shown(turns[2])
    assert FAILURE not in shown(turns[3]) and "== 43" not in shown(turns[3])
    assert len(turns) == 4  # green at the end: nothing refused
    one_process_per_edit(agent, edits=2)


def test_an_unapproved_plan_is_told_once_and_runs_nothing(agent: Agent, capsys: Any) -> None:
    agent.write("test_answer.py", PASSING)
    turns = agent.run(
        [
            [agent.read("test_answer.py")],
            [agent.edit("test_answer.py", "== 42", "== 43")],
            [agent.edit("test_answer.py", "6 * 7", "7 * 6")],
        ]
    )
    report(capsys, "unapproved plan", turns)
    told = [n for n, turn in enumerate(turns) if "lsp-verify approve" in shown(turn)]
    assert told == [2], [shown(t)[-600:] for t in turns[1:]]  # by the hook, by no diagnostic
    assert APPROVAL in shown(turns[2])
    assert f"`lsp-verify approve {agent.project}`" in shown(turns[2])
    assert "verify failed" not in "".join(shown(t) for t in turns)
    assert len(turns) == 4  # Stop was not refused
    assert agent.runs() == {}, "a command ran without the user's approval"
    assert agent.servers_exited() and all(x.endswith(" 0") for x in agent.servers_exited())
