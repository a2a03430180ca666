"""The Claude Code plugin as Claude Code reads it: the marketplace at the repository's root
names `claude-plugin/`, whose manifest declares lsp-verify as a language server with the
option the hooks need, and whose hooks call subcommands that exist, on the edit tools."""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

from lsp_verify import cli
from tests.support.paths import REPO
from tests.support.trust import isolate_home

PLUGIN = REPO / "claude-plugin"


def test_the_marketplace_lists_the_plugin_by_its_folder() -> None:
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    (entry,) = market["plugins"]
    assert entry["source"] == "./claude-plugin" and (REPO / entry["source"]).is_dir()
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert entry["name"] == manifest["name"] == "lsp-verify"
    assert market["owner"]["name"]


def test_the_manifest_serves_lsp_verify_with_agent_hooks_at_the_package_s_version() -> None:
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert manifest["version"] == project["version"]
    (server,) = manifest["lspServers"].values()
    assert server["command"] == "lsp-verify" and server["args"] == ["serve"]
    assert server["initializationOptions"] == {"agentHooks": True}
    mapped = server["extensionToLanguage"]
    assert {".py", ".ts", ".rs", ".go"} <= set(mapped)
    assert all(ext.startswith(".") and language for ext, language in mapped.items())


def test_the_hooks_run_lsp_verify_hook_on_edits_and_at_stop(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    isolate_home(tmp_path, monkeypatch)
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    (post,) = hooks["PostToolUse"]
    assert set(post["matcher"].split("|")) == {"Edit", "Write", "MultiEdit"}
    (stop,) = hooks["Stop"]
    events = []
    for group in (post, stop):
        (command,) = group["hooks"]
        assert command["type"] == "command" and command["timeout"] > 600  # the hook's bound
        words = shlex.split(command["command"])
        assert words[:2] == ["lsp-verify", "hook"]
        events.append(words[2])
        monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps({"cwd": str(tmp_path)})))
        assert cli.main(words[1:]) == 0  # the command line takes it; nothing to say here
        assert capsys.readouterr().out == ""
    assert events == ["post-edit", "stop"]
