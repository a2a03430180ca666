"""How many examples a property test tries.

A whole run, and any run with CI set (whose `unit` stage is the only run of these tests),
tries each property's full count. `pytest -m unit` on a developer's machine, the quick loop
while editing the code, tries a tenth of it (at least 20): the same properties and
strategies, fewer draws, so that the loop stays under 20 s. tests/conftest.py says which run
this is before any test module is imported.
"""

from __future__ import annotations

QUICK_SHARE = 10
_quick = False


def quick(on: bool) -> None:
    global _quick
    _quick = on


def examples(full: int) -> int:
    """`full` examples in a whole run; a tenth of them, at least 20, in the quick loop."""
    return max(20, full // QUICK_SHARE) if _quick else full
