"""`lsp-verify explain [DIR]`: the plan for a folder as JSON. Runs nothing."""

from __future__ import annotations

import json
import os
import sys

from lsp_verify.cli import folder_problem
from lsp_verify.config.project_file import load_project_file
from lsp_verify.config.settings import SettingsMessage, effective_settings
from lsp_verify.planning.arrange import arrangement_json
from lsp_verify.planning.plan import make_plan, plan_to_json

EXIT_USAGE = 2


def message_text(message: SettingsMessage) -> str:
    if message.line is None:
        return message.text
    return f"line {message.line}: {message.text}"


def explain_main(dir: str) -> int:
    """Print the plan of `dir` (JSON, indent 2) with the problems of its .lsp-verify.toml
    under the extra key "messages". 0 also when there is no plan; 2 when DIR is no folder."""
    problem = folder_problem(dir)
    if problem is not None:
        print(f"lsp-verify explain: {dir}: {problem}", file=sys.stderr)
        return EXIT_USAGE
    folder = os.path.abspath(dir)
    project = load_project_file(folder)
    plan = make_plan(folder, None, project=project)
    enabled = effective_settings(None, project).failed_first
    document = {**plan_to_json(plan), **arrangement_json(plan, enabled)}
    messages = project.parsed.messages if project is not None else ()
    document["messages"] = [message_text(m) for m in messages]
    print(json.dumps(document, indent=2))
    return 0
