"""The Settings value (SPEC 6): parsed from editor settings, a bare string, or .lsp-verify.toml.

Parsing never raises on user input: every problem becomes a message and the default is used.
"""

from __future__ import annotations

from dataclasses import dataclass

RUN_ON_VALUES = ("save", "edit", "sync", "manual")
CONFIRM_VALUES = ("onChange", "always", "never")


@dataclass(frozen=True)
class Settings:
    command: str | None = None
    globs: tuple[str, ...] = ()
    timeout_ms: int = 60000
    run_on: str = "save"
    tail_lines: int = 40
    auto_detect: bool = True
    confirm: str = "onChange"


DEFAULTS = Settings()
