"""The real opencode (npm `opencode-ai`) with lsp-verify as one more LSP server, default
settings, and a scripted model (fake_model.py) making the edits: the model is shown the
verdict of a run that saw each edit.

opencode is found in $LSP_VERIFY_OPENCODE/node_modules/.bin (tests/tools/install-opencode.sh
puts it there; .ci/run sets the variable). Without the variable these tests are skipped; with
it and no opencode there, they fail. Nothing here reaches beyond 127.0.0.1: opencode's update
check, models.dev fetch, sharing and LSP downloads are switched off, and its home, config,
data and state live in a temporary folder.

Each scenario prints the time from the edit tool call to the model's next request.
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

PASSING = "def test_answer():\n    assert 6 * 7 == 42\n"
FAILING = "def test_answer():\n    assert 6 * 7 == 43\n"
# Where the project's pytest writes the moment each run ends (pytest_sessionfinish).
CONFTEST = """import os, time


def pytest_sessionfinish(session, exitstatus):
    with open(os.environ["VERIFY_RUN_ENDS"], "a") as handle:
        handle.write(f"{time.time()} {int(exitstatus)}\\n")
"""
OPENCODE_VERSION = "1.18.33"


def opencode() -> str:
    return installed("LSP_VERIFY_OPENCODE", "opencode", "install-opencode.sh")


class Agent:
    """One project, and opencode runs in it against a scripted model."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.project = tmp / "project"
        self.project.mkdir()
        (self.project / "pytest.ini").write_text("[pytest]\n")
        (self.project / "conftest.py").write_text(CONFTEST)
        self.run_ends = tmp / "run-ends.txt"
        self.env = self._env()

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        for name in (
            "HOME",
            "XDG_STATE_HOME",
            "XDG_CONFIG_HOME",
            "XDG_CACHE_HOME",
            "XDG_DATA_HOME",
        ):
            folder = self.tmp / name.lower()
            folder.mkdir(exist_ok=True)
            env[name] = str(folder)
        bin_dir = os.path.dirname(sys.executable)
        env.update(
            {
                "PWD": str(self.project),  # opencode works in $PWD
                "PATH": bin_dir + os.pathsep + env.get("PATH", ""),
                "CI": "true",
                "OPENCODE_DISABLE_AUTOUPDATE": "1",
                "OPENCODE_DISABLE_MODELS_FETCH": "1",
                "OPENCODE_DISABLE_LSP_DOWNLOAD": "true",
                "OPENCODE_DISABLE_SHARE": "1",
                "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
                "OPENCODE_DISABLE_CLAUDE_CODE": "1",
                # The project's pytest: without the test venv's plugins it starts in a
                # fraction of the time.
                "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                "VERIFY_RUN_ENDS": str(self.run_ends),
                # opencode's embedded npm: anything it would fetch fails here, at once.
                "npm_config_registry": "http://127.0.0.1:9/",
            }
        )
        env.pop("LSP_VERIFY_NO_KEEPER", None)
        # opencode installs @opencode-ai/plugin into its config folder in the background
        # unless node_modules is there and the lock file lists it: say it is installed.
        config = self.tmp / "xdg_config_home" / "opencode"
        (config / "node_modules").mkdir(parents=True)
        lock = {"packages": {"": {"dependencies": {"@opencode-ai/plugin": "*"}}}}
        (config / "package-lock.json").write_text(json.dumps(lock))
        return env

    def write(self, rel: str, text: str) -> Path:
        path = self.project / rel
        path.write_text(text)
        return path

    def approve(self) -> None:
        """What a user does once for a detected plan, since opencode cannot be asked."""
        subprocess.run(
            [sys.executable, "-m", "lsp_verify", "approve", str(self.project)],
            env=self.env,
            check=True,
            capture_output=True,
            timeout=60,
        )

    def run(self, script: list[list[ToolCall]]) -> list[Turn]:
        """`opencode run` until the script is done; the model's turns."""
        with FakeModel(script) as model:
            config: dict[str, Any] = {
                "$schema": "https://opencode.ai/config.json",
                "provider": {
                    "fake": {
                        "npm": "@ai-sdk/openai-compatible",
                        "name": "fake",
                        "options": {"baseURL": model.base_url, "apiKey": "none"},
                        "models": {"m1": {"name": "m1", "tool_call": True}},
                    }
                },
                "model": "fake/m1",
                "small_model": "fake/m1",
                "autoupdate": False,
                "share": "disabled",
                "formatter": False,
                "permission": {"edit": "allow", "bash": "allow", "read": "allow"},
                "lsp": {
                    "pyright": {"disabled": True},
                    "ty": {"disabled": True},
                    "verify": {
                        "command": [sys.executable, "-m", "lsp_verify"],
                        "extensions": [".py"],
                    },
                },
            }
            (self.project / "opencode.json").write_text(json.dumps(config, indent=2))
            result = subprocess.run(
                [opencode(), "run", "Work on the tests.", "--model", "fake/m1"],
                cwd=self.project,
                env=self.env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=240,
            )
            assert result.returncode == 0, result.stderr[-4000:]
            assert not model.script, f"opencode stopped early: {result.stderr[-4000:]}"
            fetched = list((self.tmp / "home").glob(".npm/_cacache/index-v5/*/*/*"))
            assert not fetched, "opencode fetched packages from a registry"
            return model.turns

    def run_end_times(self) -> list[float]:
        if not self.run_ends.exists():
            return []
        return [float(line.split()[0]) for line in self.run_ends.read_text().splitlines()]

    def edit(self, rel: str, old: str, new: str) -> ToolCall:
        path = str(self.project / rel)
        return ("edit", {"filePath": path, "oldString": old, "newString": new})


def report(capsys: pytest.CaptureFixture[str], scenario: str, turns: list[Turn]) -> None:
    """Per tool call: the seconds from the model's call to its next request."""
    with capsys.disabled():
        for n, turn in enumerate(turns[:-1]):
            names = ", ".join(name for name, _ in turn.answered)
            took = turns[n + 1].at - turn.answered_at
            print(f"\nopencode {scenario}: {names} -> next model request in {took:.2f} s")


@pytest.fixture
def agent(tmp_path: Path) -> Agent:
    opencode()
    return Agent(tmp_path)


def test_the_installed_opencode_is_the_pinned_one() -> None:
    result = subprocess.run(
        [opencode(), "--version"], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == OPENCODE_VERSION


def test_a_failing_edit_from_a_cold_start(agent: Agent, capsys: Any) -> None:
    agent.write("test_answer.py", PASSING)
    agent.approve()
    turns = agent.run([[agent.edit("test_answer.py", "== 42", "== 43")]])
    report(capsys, "failing edit, cold start", turns)
    [shown] = turns[1].tool_results
    assert "LSP errors detected in this file" in shown
    assert "assert (6 * 7) == 43" in shown


def test_a_fixing_edit_returns_at_the_run_s_end(agent: Agent, capsys: Any) -> None:
    agent.write("test_answer.py", FAILING)
    agent.approve()
    turns = agent.run([[agent.edit("test_answer.py", "== 43", "== 42")]])
    report(capsys, "fixing edit", turns)
    [shown] = turns[1].tool_results
    assert shown.startswith("Edit applied successfully.")
    assert "LSP errors" not in shown
    ends = [t for t in agent.run_end_times() if t >= turns[0].answered_at]
    assert ends, "no run after the edit"
    # Answered when the run that saw the edit ended (its last pytest: a quick phase may come
    # first), not at opencode's timeout (5 s); up to 2 s after it on a loaded machine.
    assert ends[-1] <= turns[1].at <= ends[-1] + 2.0, (ends, turns[1].at)


def test_two_edits_back_to_back_end_on_the_final_state(agent: Agent, capsys: Any) -> None:
    agent.write("test_answer.py", PASSING)
    agent.approve()
    turns = agent.run(
        [
            [agent.edit("test_answer.py", "== 42", "== 43")],
            [agent.edit("test_answer.py", "== 43", "== 42")],
        ]
    )
    report(capsys, "break then fix", turns)
    assert "assert (6 * 7) == 43" in turns[1].tool_results[0]
    [final] = turns[2].tool_results
    assert final.startswith("Edit applied successfully.") and "LSP errors" not in final


def test_a_suite_of_about_four_seconds(agent: Agent, capsys: Any) -> None:
    # The edit is to a module, not a test file; the one test file that imports it is the
    # whole suite, so affected first has nothing quicker to run: the suite runs, about 4 s
    # (the slow test is collected first), longer than opencode's 3 s limit on a pull; the
    # verdict reaches it as a push.
    agent.write("answer.py", "ANSWER = 42\n")
    agent.write(
        "test_answer.py",
        "import time\n\nfrom answer import ANSWER\n\n\ndef test_a_slow():\n"
        "    time.sleep(3.2)\n\n\ndef test_answer():\n    assert 6 * 7 == ANSWER\n",
    )
    agent.approve()
    turns = agent.run([[agent.edit("answer.py", "= 42", "= 43")]])
    report(capsys, "4 s suite", turns)
    [shown] = turns[1].tool_results
    assert "LSP errors detected in this file" in shown and "== 43" in shown
    assert "1 failed, 1 passed" in shown  # the whole suite ran
    assert turns[1].at - turns[0].answered_at > 3.0  # the run did outlast the pull


def test_a_new_test_file_written_right_after_a_run(agent: Agent, capsys: Any) -> None:
    agent.write("test_answer.py", PASSING)
    agent.approve()
    new = str(agent.project / "test_new.py")
    turns = agent.run(
        [
            [agent.edit("test_answer.py", "6 * 7", "7 * 6")],
            [("write", {"filePath": new, "content": "def test_new():\n    assert 1 + 1 == 3\n"})],
        ]
    )
    report(capsys, "new test file after a run", turns)
    assert "LSP errors" not in turns[1].tool_results[0]
    [shown] = turns[2].tool_results
    assert "assert (1 + 1) == 3" in shown
    before = [t for t in agent.run_end_times() if t <= turns[1].answered_at]
    if before:  # how soon after the run the file came: the old rule dropped it within 1 s
        with capsys.disabled():
            gap = turns[1].answered_at - before[-1]
            print(f"\nopencode new test file after a run: written {gap:.2f} s after it ended")


def test_an_edit_through_the_bash_tool_then_a_read(agent: Agent, capsys: Any) -> None:
    agent.write("test_answer.py", PASSING)
    agent.approve()
    path = str(agent.project / "test_answer.py")
    sed = f"sed -i 's/== 42/== 43/' {path}"
    notes = str(agent.project / "notes.py")
    turns = agent.run(
        [
            [("bash", {"command": sed, "description": "Change the expected answer"})],
            [("read", {"filePath": path})],
            [("write", {"filePath": notes, "content": "NOTE = 1\n"})],
        ]
    )
    report(capsys, "bash sed, read, write", turns)
    [shown] = turns[3].tool_results
    assert "assert (6 * 7) == 43" in shown
