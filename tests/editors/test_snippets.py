"""docs/editors.md holds the Neovim and Emacs files the editor tests load, byte for byte.

A block is marked `<!-- include: PATH -->` on the line before its fence. After editing one
of those files, `python -m tests.editors.test_snippets --write` copies it into the page.
"""

from __future__ import annotations

import re
import sys

from tests.editors.harness import HERE, REPO

DOC = REPO / "docs" / "editors.md"
# The files the editor tests run as the user's configuration (the drivers are test-only).
TESTED = {
    "tests/editors/nvim/lua/lsp-verify.lua": HERE / "nvim" / "lua" / "lsp-verify.lua",
    "tests/editors/emacs/lsp-verify.el": HERE / "emacs" / "lsp-verify.el",
}

_BLOCK = re.compile(
    r"^<!-- include: (?P<path>\S+) -->\n(?P<fence>```+)(?P<lang>[a-z]*)\n(?P<body>.*?)^(?P=fence)$",
    re.MULTILINE | re.DOTALL,
)


def included(text: str) -> dict[str, str]:
    """Included path -> the block's text as it stands in the page."""
    return {m["path"]: m["body"] for m in _BLOCK.finditer(text)}


def synced(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        body = (REPO / match["path"]).read_text(encoding="utf-8")
        head = f"<!-- include: {match['path']} -->\n{match['fence']}{match['lang']}\n"
        return f"{head}{body}{match['fence']}"

    return _BLOCK.sub(replace, text)


def test_every_tested_configuration_is_in_the_page() -> None:
    assert set(included(DOC.read_text(encoding="utf-8"))) >= set(TESTED)


def test_page_blocks_are_byte_identical_to_the_tested_files() -> None:
    blocks = included(DOC.read_text(encoding="utf-8"))
    for rel, path in TESTED.items():
        assert blocks[rel].encode("utf-8") == path.read_bytes(), (
            f"docs/editors.md differs from {rel}: run python -m tests.editors.test_snippets --write"
        )


def test_included_paths_exist_and_fences_are_safe() -> None:
    for rel in included(DOC.read_text(encoding="utf-8")):
        path = REPO / rel
        assert path.is_file(), rel
        # A line starting with ``` inside the file would end the Markdown block early.
        assert not any(line.startswith("```") for line in path.read_text().splitlines()), rel


def test_the_drivers_load_the_files_the_page_shows() -> None:
    # The drivers must not carry a configuration of their own beside the documented one.
    drive_lua = (HERE / "nvim" / "drive.lua").read_text()
    assert 'require("lsp-verify")' in drive_lua
    assert "start_client" not in drive_lua and "vim.lsp.start(" not in drive_lua
    drive_el = (HERE / "emacs" / "drive.el").read_text()
    assert "eglot-server-programs" not in drive_el
    emacs_test = (HERE / "test_emacs.py").read_text()
    assert '"lsp-verify.el"' in emacs_test and '"drive.el"' in emacs_test


def test_sync_rewrites_a_stale_block() -> None:
    stale = "x\n<!-- include: tests/editors/emacs/lsp-verify.el -->\n```elisp\nold\n```\ny\n"
    fresh = synced(stale)
    assert included(fresh)["tests/editors/emacs/lsp-verify.el"] == TESTED[
        "tests/editors/emacs/lsp-verify.el"
    ].read_text(encoding="utf-8")
    assert fresh.startswith("x\n") and fresh.endswith("```\ny\n")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        DOC.write_text(synced(DOC.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print("usage: python -m tests.editors.test_snippets --write", file=sys.stderr)
        sys.exit(2)
