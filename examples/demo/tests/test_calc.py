import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from calc import add, mean  # noqa: E402


def test_add() -> None:
    assert add(2, 3) == 5


def test_mean() -> None:
    assert mean([1.0, 2.0, 3.0]) == 2.0
