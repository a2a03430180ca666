"""Neovim 0.7+ drives the installed lsp-verify with the module docs/editors.md shows.

The driver (nvim/drive.lua) goes through a user's steps in headless Neovim: open, edit,
write, read vim.diagnostic.get(), verify.runNow through the client, fix, write, and the
:VerifyRunNow command. These tests judge what it saw.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.editors import harness

NVIM_DIR = harness.HERE / "nvim"


def _nvim(tmp_path: Path, opts: dict[str, object], scenario: str) -> dict[str, Any]:
    nvim = harness.require("nvim", "neovim")
    ws = harness.workspace(tmp_path)
    argv = [
        nvim,
        "--headless",
        "--clean",  # no user config, plugins or shada: only what the test loads
        "--cmd",
        f"set rtp^={NVIM_DIR}",
        "-c",
        f"luafile {NVIM_DIR / 'drive.lua'}",
    ]
    return harness.run_editor(
        argv, ws, LSP_VERIFY_OPTS=json.dumps(opts), LSP_VERIFY_SCENARIO=scenario
    )


def test_save_shows_failure_run_now_returns_record_fix_clears(tmp_path: Path) -> None:
    out = _nvim(tmp_path, {"settings": {"command": harness.PYTEST_COMMAND}}, "full")
    assert out["ok"] is True, out.get("error")
    assert out["attached"] is True, out["_output"]
    harness.check_failing_save(out["after_failing_save"], "lnum")
    harness.check_failed_run(out["run_now"])
    assert out["cleared"] is True, out["after_fix"]
    assert out["after_fix"] == []
    harness.check_command_messages(
        [n["message"] for n in out["command_failed"]], [n["message"] for n in out["command_passed"]]
    )
    assert out["stopped"] is True


def test_headless_question_is_declined_not_hung(tmp_path: Path) -> None:
    # No command in the settings: the detected `pytest -x -q` is the repository's choice,
    # so the server asks first; with no UI the module must answer (no), not wait for ever.
    out = _nvim(tmp_path, {}, "declined")
    assert out["ok"] is True, out.get("error")
    record = out["run_now"]
    assert record["outcome"] == "declined", record
    assert record["source"] == "detected", record
    assert record["command"] == "pytest -x -q", record
    assert out["diagnostics"] == []
    # What :VerifyRunNow tells the user: one line, no "exit nil", and the command to
    # approve with as a Neovim user types it. (Headless, nothing is cut to fit a screen.)
    [note] = [n["message"] for n in out["command_declined"]]
    assert note.startswith("verify declined: pytest -x -q | the question was dismissed"), note
    assert "nil" not in note and "\n" not in note
    assert "approve it with the :VerifyApprove command" in note, note


def test_messages_say_the_status_and_fit_one_line(tmp_path: Path) -> None:
    out = _nvim(tmp_path, {}, "declined")
    described = out["described"]
    assert described["timed_out"] == "verify timed out: make test | still running"
    assert described["declined_nil"] == "verify declined: make test | no"
    assert described["failed"] == "verify failed (exit 2): make test | x"
    assert out["joined"] == "first | second"
    long = out["long"]
    assert long.endswith("…") and len(long) == 119, long  # cut to the room there is


def test_code_action_run_verify_again_on_a_verify_diagnostic(tmp_path: Path) -> None:
    out = _nvim(tmp_path, {"settings": {"command": harness.PYTEST_COMMAND}}, "code_action")
    assert out["ok"] is True, out.get("error")
    assert out["located"] is not None, out["_output"]
    # The menu lists the verify actions for the diagnostic under the cursor.
    offered = out["offered"]
    assert any("Run verify again" in t for t in offered), offered
    assert any("Show the run's output" in t for t in offered), offered
    # Applying "Run verify again" ran verify once more.
    before, after = out["before"], out["after"]
    assert after["startedAt"] != before["startedAt"], (before, after)
    assert after["trigger"] == "runNow" and after["outcome"] == "failed", after


def test_the_vim_lsp_config_file_returns_a_config(tmp_path: Path) -> None:
    """lsp/lsp_verify.lua, for `vim.lsp.enable('lsp_verify')` in Neovim 0.11+ and for
    nvim-lspconfig: the table it returns (Neovim 0.7 can read it, not enable it)."""
    nvim = harness.require("nvim", "neovim")
    out = tmp_path / "config.json"
    lua = (
        f"local config = dofile('{NVIM_DIR / 'lsp' / 'lsp_verify.lua'}')\n"
        f"local file = io.open('{out}', 'w')\n"
        "file:write(vim.fn.json_encode(config))\nfile:close()\n"
    )
    script = tmp_path / "read.lua"
    script.write_text(lua)
    done = subprocess.run(
        [nvim, "--headless", "--clean", "-c", f"luafile {script}", "-c", "qa!"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    config = json.loads(out.read_text())
    assert config["cmd"] == ["lsp-verify"]
    assert {"python", "typescript", "rust", "go"} <= set(config["filetypes"])
    # The manifests the detector reads mark a root, and the project file first.
    assert config["root_markers"][0] == ".lsp-verify.toml"
    assert {"pyproject.toml", "package.json", "Cargo.toml", "Makefile"} <= set(
        config["root_markers"]
    )
    # An empty settings object, not the empty list a Lua {} becomes.
    assert config["settings"] == {"verify": {}}
    assert config["init_options"] == {"verify": {}}
