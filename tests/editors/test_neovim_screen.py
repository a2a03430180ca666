"""What a Neovim user sees: the TUI in a 110x30 terminal (tmux), read back as text.

The user's steps with the documented module: open the failing test file, `:write`, read the
verify diagnostics (signs and virtual text), `:lua vim.lsp.buf.code_action()` on the failing
line, choose "Run verify again", then "Show the run's output" and open the run's view. Each
screen is written to test-artifacts/neovim/ (NAME.txt, and NAME.ansi with the colours for
`cat` in a terminal). docs/editors.md shows the code action menu screen as this test
captured it; after a change that alters it:

    python -m pytest -p no:cacheprovider tests/editors/test_neovim_screen.py
    python -m tests.editors.test_neovim_screen --write
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.editors import harness
from tests.editors.terminal import Terminal

NVIM_DIR = harness.HERE / "nvim"
ARTIFACTS = harness.REPO / "test-artifacts" / "neovim"
DOC = harness.REPO / "docs" / "editors.md"
MENU = "code-action-menu"
# Seconds for each thing awaited on screen; generous, for a loaded machine.
WAIT = 60.0

_DOC_BLOCK = re.compile(
    rf"^(?P<head><!-- screen: test-artifacts/neovim/{MENU}\.txt -->\n```text\n)"
    r"(?P<body>.*?)^```$",
    re.MULTILINE | re.DOTALL,
)


class Shots:
    """Writes each screen to the artifacts folder as it is taken, so a failure keeps them."""

    def __init__(self, folder: Path) -> None:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        self.folder = folder

    def take(self, term: Terminal, name: str) -> str:
        text = term.screen()
        (self.folder / f"{name}.txt").write_text(text, encoding="utf-8")
        (self.folder / f"{name}.ansi").write_text(term.screen(colour=True), encoding="utf-8")
        return text


@pytest.fixture
def nvim_in_terminal(tmp_path: Path) -> Iterator[tuple[Terminal, harness.Workspace]]:
    """Neovim's TUI on the demo's failing test file, in a private tmux; nothing outlives it."""
    nvim = harness.require("nvim", "neovim")
    tmux = harness.require("tmux", "tmux")
    ws = harness.workspace(tmp_path)
    env = {k: v for k, v in ws.env.items() if not k.startswith("TMUX")}
    env.pop("COLUMNS", None)
    env.pop("LINES", None)
    opts = {"settings": {"command": harness.PYTEST_COMMAND}}
    # The tmux server and everything under it carry LSP_VERIFY_OUT, which reap() looks for.
    env.update(LC_ALL="C.UTF-8", TERM="xterm-256color", LSP_VERIFY_OPTS=json.dumps(opts))
    argv = [
        # If the test itself is killed, Neovim still ends (and tmux with it, having no session).
        "timeout", "--foreground", "-k", "5", str(harness.EDITOR_TIMEOUT * 3),
        nvim, "-n", "--clean",  # no user config, plugins, shada or swap file
        "--cmd", f"set rtp^={NVIM_DIR}",
        "-c", 'lua require("lsp-verify").setup(vim.fn.json_decode(os.getenv("LSP_VERIFY_OPTS")))',
        "tests/test_calc.py",
    ]  # fmt: skip
    term = Terminal(tmux, tmp_path, argv, env=env, cwd=ws.project)
    try:
        yield term, ws
    finally:
        term.close()
        leftovers = harness.reap(ws.env["LSP_VERIFY_OUT"])
        assert not leftovers, f"processes outlived the terminal: {leftovers}"


def _command(term: Terminal, line: str) -> None:
    term.type(f":{line}")
    term.keys("Enter")


def _wait_attached(term: Terminal) -> None:
    """Ask Neovim, as a user could, until the lsp-verify client has initialized."""
    check = (
        'print("lsp-verify check {n}: " .. '
        'tostring((require("lsp-verify").client(0) or {{}}).initialized == true))'
    )
    deadline = time.monotonic() + WAIT
    n = 0
    while time.monotonic() < deadline:
        n += 1
        _command(term, "lua " + check.format(n=n))
        found = term.wait_for_match(rf"^lsp-verify check {n}: (true|false)$", timeout=WAIT)
        if found[1] == "true":
            return
        time.sleep(0.2)  # a polling interval only: the answer above is what counts
    raise AssertionError(f"the lsp-verify client never initialized:\n{term.screen()}")


def _code_action_menu(term: Terminal) -> dict[str, str]:
    """Open vim.lsp.buf.code_action()'s menu on the cursor's line: title -> number to type."""
    term.wait_for(lambda s: "Type number and <Enter>" not in s, "closed menu", timeout=WAIT)
    _command(term, "lua vim.lsp.buf.code_action()")
    screen = term.wait_for(
        lambda s: "Type number and <Enter>" in s or "No code actions available" in s,
        "code action menu",
        timeout=WAIT,
    )
    assert "Code actions:" in screen, f"no code action menu:\n{screen}"
    return {m[2]: m[1] for m in re.finditer(r"^(\d+): (.+)$", screen, re.MULTILINE)}


def _choose(term: Terminal, menu: dict[str, str], title: str) -> None:
    assert title in menu, menu
    term.type(menu[title])
    term.keys("Enter")


def _run_view_of_a_rerun(term: Terminal, state: Path) -> Path:
    """Choose "Show the run's output" until the view it writes is of a runNow run."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        _choose(term, _code_action_menu(term), "Show the run's output")
        # Neovim 0.7 cannot open documents for a server: the server names the file instead.
        term.wait_for(
            lambda s: "verify: the last run (" in s and "Type number and <Enter>" not in s,
            "message naming the run's view",
            timeout=WAIT,
        )
        views = sorted((state / "lsp-verify" / "runs").glob("last-run-*.md"))
        if views and "- **trigger:** runNow" in views[0].read_text(encoding="utf-8"):
            return views[0]
    raise AssertionError(f"no view of a runNow run after 'Run verify again':\n{term.screen()}")


def test_code_action_menu_on_screen_run_again_and_the_run_view(
    nvim_in_terminal: tuple[Terminal, harness.Workspace],
) -> None:
    term, ws = nvim_in_terminal
    shots = Shots(ARTIFACTS)
    try:
        term.wait_for_text("tests/test_calc.py", "def test_mean() -> None:", timeout=WAIT)
        _wait_attached(term)
        _command(term, "write")
        located = re.compile(
            r"^E +assert mean\(\[1\.0, 2\.0, 3\.0\]\) == 2\.0 +■ tests/test_calc\.py::test_mean: "
            r"assert 1\.5 == 2\.0",
            re.MULTILINE,
        )
        term.wait_for(
            lambda s: located.search(s) is not None and "■ verify failed (exit 1):" in s,
            "verify diagnostics",
            timeout=WAIT,
        )
        screen = shots.take(term, "diagnostics")
        # The sign and the summary on line 1, the sign and the failure on the assert (line 14).
        assert re.search(r"^E import sys +■ verify failed \(exit 1\):", screen, re.MULTILINE)
        assert located.search(screen), screen

        term.type("14G")
        menu = _code_action_menu(term)
        screen = shots.take(term, MENU)
        assert list(menu) == ["Run verify again", "Show the run's output"], screen
        assert located.search(screen), screen  # the menu is over the failing line's buffer
        _choose(term, menu, "Run verify again")

        view = _run_view_of_a_rerun(term, Path(ws.env["XDG_STATE_HOME"]))
        _command(term, f"edit {view}")
        term.wait_for_text("# verify: Failed", "- **trigger:** runNow", timeout=WAIT)
        screen = shots.take(term, "run-view")
        assert "- **exit status:** 1" in screen, screen
        assert "tests/test_calc.py:14:1" in screen, screen

        _command(term, "qall!")
        assert term.wait_closed(timeout=WAIT), term.screen()
    except BaseException:
        if term.alive():
            shots.take(term, "failure")
        raise
    doc = _DOC_BLOCK.search(DOC.read_text(encoding="utf-8"))
    assert doc is not None, f"docs/editors.md has no block for {MENU}.txt"
    captured = (ARTIFACTS / f"{MENU}.txt").read_text(encoding="utf-8")
    # The virtual text after each sign's "■" is pytest's and the server's wording, checked
    # above; the page must show the same screen around it.
    assert _layout(doc["body"]) == _layout(captured), (
        "docs/editors.md shows another screen than the test captured: "
        "python -m tests.editors.test_neovim_screen --write"
    )
    for message in ("■ verify failed (exit 1):", "■ tests/test_calc.py::test_mean: assert"):
        assert message in doc["body"], message


def _layout(screen: str) -> list[str]:
    """The screen's lines with each diagnostic's virtual text cut after its marker."""
    return [line.split("■", 1)[0].rstrip() for line in screen.splitlines()]


def write_docs() -> None:
    """Copy the last captured menu screen into docs/editors.md."""
    captured = (ARTIFACTS / f"{MENU}.txt").read_text(encoding="utf-8")
    text = DOC.read_text(encoding="utf-8")
    if _DOC_BLOCK.search(text) is None:
        raise SystemExit(f"docs/editors.md has no block for {MENU}.txt")
    DOC.write_text(_DOC_BLOCK.sub(lambda m: m["head"] + captured + "```", text), encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write_docs()
    else:
        print("usage: python -m tests.editors.test_neovim_screen --write", file=sys.stderr)
        sys.exit(2)
