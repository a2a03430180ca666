"""A run record as people read it: Markdown with the verdict first, located problems as links
to their lines, and the output's tail; the JSON record follows at the end.

`verify.showRun` writes it to a file in the user's state folder (never the repository), one per
folder, and asks the editor to open it, so that every editor, not only VS Code, can show a run.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from urllib.parse import quote

from lsp_verify.record import Record
from lsp_verify.uris import path_to_uri

_VERDICT = {
    "passed": "Passed",
    "failed": "Failed",
    "timed-out": "Timed out",
    "cancelled": "Cancelled",
    "skipped": "Skipped",
    "declined": "Declined (not approved)",
    "no-plan": "No plan",
}


def _fence(lines: list[str]) -> list[str]:
    """A code block that no line of the output can close early."""
    longest = max((len(line) - len(line.lstrip("`")) for line in lines), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + "text", *lines, fence]


def _inline(text: str) -> str:
    """Text in backticks that its own backticks cannot break."""
    text = text.replace("\n", " ")
    longest = 0
    run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    ticks = "`" * (longest + 1)
    pad = " " if longest else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _link(target: str, line: int, base: Path | None) -> str:
    """A link to `target` at `line`: relative to `base`, the view's own folder, when there is
    one (Markdown renderers, VS Code's preview among them, refuse `file:` links but follow
    relative ones, `#L<line>` included); a `file:` URI otherwise."""
    if base is not None:
        try:
            return quote(os.path.relpath(target, base).replace(os.sep, "/")) + f"#L{line}"
        except ValueError:  # another drive on Windows
            pass
    return f"{path_to_uri(target)}#L{line}"


def record_markdown(record: Record, base: Path | None = None) -> str:
    """The record as Markdown; `base` is the folder the view is written to."""
    verdict = _VERDICT.get(record.outcome, record.outcome)
    lines = [f"# verify: {verdict}", ""]
    facts = [
        ("command", _inline(record.command) if record.command else "none"),
        (
            "from",
            f"{record.source or 'nothing'}" + (f" ({record.manifest})" if record.manifest else ""),
        ),
        ("folder", _inline(record.folder)),
        ("trigger", record.trigger),
        ("started", record.started_at),
        ("duration", f"{record.duration_ms / 1000:.2f} s"),
        ("exit status", "none" if record.exit_code is None else str(record.exit_code)),
    ]
    if record.reason and record.outcome not in ("passed", "failed"):
        facts.append(("why", record.reason))
    lines += [f"- **{name}:** {value}" for name, value in facts]
    if record.problems:
        lines += ["", f"## Problems ({len(record.problems)})", ""]
        for problem in record.problems:
            target = _link(os.path.join(record.folder, problem.path), problem.line, base)
            # As code: a message or path read as Markdown loses `<module>` or `vector<int>`
            # (taken for HTML) and the underscores of `__init__` (taken for bold).
            where = _inline(f"{problem.path}:{problem.line}:{problem.column}")
            first = problem.message.splitlines()[0] if problem.message else ""
            message = _inline(first) if first.strip() else ""
            lines.append(f"- [{where}]({target}) {problem.severity}: {message}".rstrip())
    if record.tail:
        lines += ["", f"## Output (last {len(record.tail)} lines)", ""]
        lines += _fence(list(record.tail))
    lines += ["", "## Record (JSON)", ""]
    lines += _fence(json.dumps(record.to_json(), indent=2).splitlines())
    return "\n".join(lines) + "\n"


def write_run_view(record: Record, directory: Path) -> Path:
    """Write the record's Markdown under `directory` and return its path. Each run gets its own
    file name (a view open on an older run is never rewritten under it, which previews would
    not notice); the folder's older views are removed, so one stays per folder."""
    digest = hashlib.sha256(record.folder.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = os.path.basename(record.folder.rstrip("/")) or "root"
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:40]
    stamp = "".join(c for c in record.started_at if c.isalnum())[:24] or "0"
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    prefix = f"last-run-{safe}-{digest}-"
    path = directory / f"{prefix}{stamp}.md"
    temporary = path.with_suffix(".md.tmp")
    text = record_markdown(record, directory)
    try:
        data = text.encode("utf-8", "surrogateescape")  # a file name that is not UTF-8
    except UnicodeEncodeError:  # a lone surrogate the client sent (in a setting, a URI)
        data = text.encode("utf-8", "replace")
    temporary.write_bytes(data)
    os.replace(temporary, path)
    for older in directory.glob(f"{prefix}*.md"):
        if older != path:
            older.unlink(missing_ok=True)
    return path
