"""Settings end to end: an explicit command, runOn and globs, the sources in order, a wrong type
warned once, and initializationOptions for a client without workspace/configuration."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from tests.support.lsp_session import Session, session

NEVER_ASK = {"confirm": "never"}


async def last_run(s: Session) -> dict[str, object]:
    record = await s.command("verify.showLastRun")
    assert isinstance(record, dict)
    return record


async def test_explicit_command_setting(project: Path, state: Path) -> None:
    marker = project / "fail"
    marker.write_text("")
    command = "test ! -e fail || { echo 'still failing'; exit 3; }"
    async with session(project, state=state, init_options={"verify": command}) as s:
        uri = s.save("a.txt", "x")
        await s.wait_for(lambda: s.finished(), what="a finished run")
        record = await last_run(s)
        assert record["source"] == "settings"
        [summary] = s.diagnostics(uri)
        assert summary.message == "verify failed (exit 3):\nstill failing"
        marker.unlink()
        s.save("a.txt")
        await s.wait_for(lambda: s.finished("passed"), what="a passing run")
        await s.wait_for(lambda: not s.verify_diagnostics(), what="cleared diagnostics")


async def test_run_on_manual_and_globs(project: Path, state: Path) -> None:
    settings = {"command": "echo ran >> runs.log; exit 1", "runOn": "manual"}
    async with session(project, state=state, init_options=settings) as s:
        s.save("a.py", "x = 1\n")
        await asyncio.sleep(0.5)
        assert not (project / "runs.log").exists()
        record = await s.command("verify.runNow")
        assert record["outcome"] == "failed"
        assert record["trigger"] == "runNow"
        assert (project / "runs.log").read_text() == "ran\n"

    settings = {"command": "echo ran >> runs2.log", "globs": ["*.ts", "src"]}
    async with session(project, state=state, init_options=settings) as s:
        s.save("a.py", "x = 1\n")
        s.save("docs/readme.md", "hi\n")
        await asyncio.sleep(0.5)
        assert not (project / "runs2.log").exists()
        s.save("src/deep/b.py", "y = 2\n")
        await s.wait_for(lambda: s.finished("passed"), what="a run for src/")
        s.save("web/app.ts", "let a = 1\n")
        await s.wait_for(lambda: len(s.finished("passed")) >= 2, what="a run for *.ts")
        assert (project / "runs2.log").read_text() == "ran\nran\n"


async def test_settings_sources_and_precedence(project: Path, state: Path) -> None:
    (project / ".lsp-verify.toml").write_text('command = "echo from-file; exit 4"\n')
    # The project file beats detection; editor settings beat the project file.
    async with session(project, state=state, init_options=NEVER_ASK) as s:
        record = await s.command("verify.runNow")
        assert record["source"] == "project-file"
        assert record["tail"] == ["from-file"]
    async with session(
        project, state=state, init_options={"command": "echo from-init; exit 5"}
    ) as s:
        record = await s.command("verify.runNow")
        assert record["source"] == "settings"
        assert record["tail"] == ["from-init"]
    # workspace/configuration beats initializationOptions.
    async with session(
        project,
        state=state,
        init_options={"command": "echo from-init"},
        configuration={"command": "echo from-config; exit 6"},
    ) as s:
        record = await s.command("verify.runNow")
        assert record["tail"] == ["from-config"]
        # didChangeConfiguration takes effect on the next run.
        s.client.set_configuration({"command": "echo changed; exit 7"}, section="verify")
        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"verify": None})
        )
        await asyncio.sleep(0.3)
        s.save("a.txt", "x")
        await s.wait_for(
            lambda: any(r == ["changed"] for r in _tails(s)), what="the changed command"
        )


def _tails(s: Session) -> list[object]:
    return [d.message.splitlines()[1:] for ds in s.verify_diagnostics().values() for d in ds]


async def test_wrong_setting_type_warns_once_and_uses_default(project: Path, state: Path) -> None:
    settings = {"command": "echo ok", "timeoutMs": "soon", "runOn": 7, "bogus": True}
    async with session(project, state=state, init_options=settings) as s:
        first = await s.command("verify.runNow")
        second = await s.command("verify.runNow")
        assert first["outcome"] == second["outcome"] == "passed"
        warnings = [m.message for m in s.client.messages]
        assert sum("timeoutMs" in m for m in warnings) == 1
        assert sum("runOn" in m for m in warnings) == 1
        assert sum("bogus" in m for m in warnings) == 1
        explained = await s.command("verify.explain")
        assert explained["settings"]["timeoutMs"] == 60000
        assert explained["settings"]["runOn"] == "save"


async def test_neovim_profile_takes_init_options(project: Path, state: Path) -> None:
    async with session(
        project, state=state, profile="neovim@v0.7.0", init_options={"command": "exit 9"}
    ) as s:
        s.save("a.txt", "x")
        await s.wait_for(lambda: s.finished(), what="a finished run")
        assert (await last_run(s))["exitCode"] == 9
