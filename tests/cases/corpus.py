"""The whole corpus of matcher cases: every tests/cases/problems_cases*.py module with CASES.

Each such module holds the cases (and the projects, in PROJECTS) of some families; the
fixture tests, the real-run tests, the recorder and benchmarks/located.py take them all from
here, so a new cases module is picked up by its name alone. `fixture_lines` is a case's
recorded output as the matchers get it, the project folder in place of {ROOT}.
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path
from types import ModuleType

from tests.cases.problems_cases import FIXTURES, Case

_HERE = Path(__file__).parent


@functools.lru_cache(maxsize=1)
def case_modules() -> tuple[ModuleType, ...]:
    modules = []
    for path in sorted(_HERE.glob("problems_cases*.py")):
        module = importlib.import_module(f"tests.cases.{path.stem}")
        if isinstance(getattr(module, "CASES", None), tuple):
            modules.append(module)
    return tuple(modules)


def all_cases() -> tuple[Case, ...]:
    cases: list[Case] = []
    for module in case_modules():
        cases.extend(module.CASES)
    ids = [case.id for case in cases]
    duplicates = sorted({case_id for case_id in ids if ids.count(case_id) > 1})
    assert not duplicates, f"case ids given twice: {duplicates}"
    return tuple(cases)


def all_projects() -> dict[str, dict[str, str]]:
    projects: dict[str, dict[str, str]] = {}
    for module in case_modules():
        for name, files in getattr(module, "PROJECTS", {}).items():
            assert name not in projects or projects[name] is files, f"project {name} given twice"
            projects[name] = files
    return projects


# Placeholders other than {ROOT} stand for folders outside the project.
ELSEWHERE = {
    "{PREFIX}": "/nonexistent/venv",
    "{BASE_PREFIX}": "/nonexistent/python",
    "{HOME}": "/nonexistent/home",
    "{TARGET}": "/nonexistent/target",
    "{NODE_TOOLS}": "/nonexistent/node-tools",
    "{NODE_TOOLS_REL}": "../../nonexistent/node-tools",
    "{LANG_TOOLS}": "/nonexistent/lang-tools",
}


def fixture_lines(case: Case, root: Path) -> list[str]:
    text = (FIXTURES / case.family / f"{case.name}.txt").read_text(encoding="utf-8")
    text = text.replace("{ROOT}", str(root))
    for placeholder, path in ELSEWHERE.items():
        text = text.replace(placeholder, path)
    return text.splitlines()
