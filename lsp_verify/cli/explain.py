"""`lsp-verify explain [DIR]`: the plan for a folder as JSON. Runs nothing."""

from __future__ import annotations

import json
import os
import sys

from lsp_verify.cli import EXIT_OK, EXIT_USAGE, folder_problem
from lsp_verify.config.project_file import load_project_file
from lsp_verify.config.settings import effective_settings
from lsp_verify.planning.explain import explain_document
from lsp_verify.planning.plan import make_plan


def explain_main(dir: str) -> int:
    """Print the explain document of `dir` (JSON, indent 2): the same as `verify.explain`
    for a client without settings of its own. 0 also when there is no plan; 2 when DIR is
    no folder."""
    problem = folder_problem(dir)
    if problem is not None:
        print(f"lsp-verify explain: {dir}: {problem}", file=sys.stderr)
        return EXIT_USAGE
    folder = os.path.abspath(dir)
    project = load_project_file(folder)
    plan = make_plan(folder, None, project=project)
    document = explain_document(plan, effective_settings(None, project), project)
    print(json.dumps(document, indent=2))
    return EXIT_OK
