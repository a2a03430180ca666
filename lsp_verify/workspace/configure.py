"""Each folder's settings as the client gives them: asked for with workspace/configuration
where the client can answer, else the initialization options; asked again on every
didChangeConfiguration. Until they are known, the folder holds its saves (see triggers.py).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lsp_verify.config.settings import ParsedSettings, apply_config_change, parse_settings
from lsp_verify.logs import one_line

if TYPE_CHECKING:
    from lsp_verify.workspace.folder import Folder
    from lsp_verify.workspace.state import State

log = logging.getLogger("lsp_verify")


async def load_settings(state: State, folders: list[Folder]) -> None:
    """Each folder's `verify` section from the client, where it can answer; else the
    initialization options. Whatever happens, every folder ends up ready."""
    try:
        answers = await state.ui.configuration([f.uri for f in folders]) if folders else None
    except Exception as exc:  # a bug of ours: the folders still get ready, on init options
        log.error("asking the client for settings failed: %s", one_line(exc))
        answers = None
    for n, folder in enumerate(folders):
        answer = answers[n] if answers is not None and n < len(answers) else None
        origin = "settings" if answers is not None else "initializationOptions"
        value = answer if answer not in (None, {}) else state.options.settings
        try:
            folder.editor = parse(state, value, origin)
        except Exception as exc:
            log.error("reading the settings of %s failed: %s", folder.path, one_line(exc))
            folder.editor = None
        finally:
            folder.ready.set()  # never left unready: its saves would be held for good


def settings_changed(state: State, settings: object) -> None:
    """workspace/didChangeConfiguration: saves from now on wait for the new settings."""
    state.options = apply_config_change(state.options, settings)
    folders = list(state.folders.values())
    for folder in folders:
        folder.ready.clear()
    state.spawn(load_settings(state, folders))


def parse(state: State, value: object, origin: str) -> ParsedSettings:
    """Settings from the client, each problem with them said once."""
    parsed = parse_settings(value, origin)
    for message in parsed.messages:
        state.warn_once(message.text)
    return parsed
