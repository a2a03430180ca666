"""The one explain document: what `verify.explain` answers and `lsp-verify explain` prints.

The plan (SPEC section 9: folder, source, runner, command, reason, manifest, fingerprint,
steps, rules), how a run of it is arranged (`runs`, `failedFirst`, `quickPhase`, `affectedFirst` and
the files `affected` would select now), the
settings in effect, and the problems of `.lsp-verify.toml`, each with its line.
"""

from __future__ import annotations

from typing import Any

from lsp_verify.config.project_file import ProjectFile
from lsp_verify.config.settings import Settings, SettingsMessage, settings_json
from lsp_verify.planning.arrange import arrangement_json
from lsp_verify.planning.plan import Plan, plan_to_json


def explain_document(plan: Plan, settings: Settings, project: ProjectFile | None) -> dict[str, Any]:
    messages = project.parsed.messages if project is not None else ()
    return {
        **plan_to_json(plan),
        **arrangement_json(plan, settings.failed_first, settings.affected_first),
        "settings": settings_json(settings),
        "messages": [message_text(m) for m in messages],
    }


def message_text(message: SettingsMessage) -> str:
    if message.line is None:
        return message.text
    return f"line {message.line}: {message.text}"
