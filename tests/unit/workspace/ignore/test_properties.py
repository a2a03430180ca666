"""The ignore rules agree with what they were before (pathspec's GitIgnoreSpec) wherever pathspec
read git right."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_verify.workspace.ignore import IgnoreRules
from tests.support.properties import examples

# --- generated .gitignore files and paths ---------------------------------------------------

_NAMES = st.text(alphabet="ab", min_size=1, max_size=2)
paths = st.lists(_NAMES, min_size=1, max_size=4).map("/".join)


def _segment(atoms: list[str]) -> str:
    return "".join(a for i, a in enumerate(atoms) if not (a == "*" and atoms[i - 1 : i] == ["*"]))


_PLAIN_SEGMENT = st.lists(st.sampled_from(["a", "b", "*", "?", "[ab]"]), min_size=1, max_size=3)


@st.composite
def pathspec_patterns(draw: st.DrawFn) -> str:
    """Patterns pathspec reads as git does: no negation (pathspec lets a negated pattern that
    matches a parent directory re-include below it), no negated class (pathspec's matches
    `/`), `**` only as a whole segment and never last (pathspec's `x/**/` matches files)."""
    count = draw(st.integers(1, 3))
    segments = [
        "**" if i < count - 1 and draw(st.booleans()) else _segment(draw(_PLAIN_SEGMENT))
        for i in range(count)
    ]
    return draw(st.sampled_from(["", "/"])) + "/".join(segments) + draw(st.sampled_from(["", "/"]))


def _layout(folder: Path, root: list[str], nested: list[str], rels: list[str]) -> list[str]:
    """Write the ignore files and the files; the paths kept are those that are files (one
    path cannot be both a file and the directory of another)."""
    (folder / ".gitignore").write_text("\n".join(root) + "\n")
    kept: list[str] = []
    for rel in rels:
        if any(rel == k or rel.startswith(k + "/") or k.startswith(rel + "/") for k in kept):
            continue
        kept.append(rel)
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).touch()
    if nested and (folder / "a").is_dir():
        (folder / "a" / ".gitignore").write_text("\n".join(nested) + "\n")
    return kept


# --- the oracle: what ignore.py answered with pathspec ----------------------------------


def pathspec_ignored(folder: Path, rel: str) -> bool:
    """The previous ignore.py, condensed: pathspec's GitIgnoreSpec per file, the deepest
    file with a matching pattern deciding, a directory ignored on the way ignoring all
    below."""
    from pathspec import GitIgnoreSpec

    def decide(levels: list[tuple[str, GitIgnoreSpec]], path: str, is_dir: bool) -> bool:
        for base, spec in reversed(levels):
            if base and not path.startswith(base + "/"):
                continue
            sub = path[len(base) + 1 :] if base else path
            result = spec.check_file(sub + "/" if is_dir else sub)
            if result.include is not None:
                return bool(result.include)
        return False

    head = rel.rpartition("/")[0]
    parts = head.split("/") if head else []
    levels: list[tuple[str, GitIgnoreSpec]] = []
    for depth in range(len(parts) + 1):
        base = "/".join(parts[:depth])
        if depth and decide(levels, base, True):
            return True
        ignore = folder / base / ".gitignore"
        if ignore.is_file():
            levels.append((base, GitIgnoreSpec.from_lines(ignore.read_text().splitlines())))
    return decide(levels, rel, False)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    root=st.lists(pathspec_patterns(), min_size=1, max_size=4),
    nested=st.lists(pathspec_patterns(), max_size=3),
    rels=st.lists(paths, min_size=1, max_size=6),
)
def test_agrees_with_pathspec_where_pathspec_reads_git_right(
    root: list[str], nested: list[str], rels: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        kept = _layout(folder, root, nested, rels)
        rules = IgnoreRules(temp)
        for rel in kept:
            assert rules.ignored(rel) is pathspec_ignored(folder, rel), (root, nested, rel)


# --- git itself ------------------------------------------------------------------------
