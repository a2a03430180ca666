"""`lsp-verify check`: plan, run and report from a terminal, a CI job or an agent's hook.

Exit status: the command's own; 124 on timeout; 3 when there was no plan or the run was
skipped; 2 for usage errors; 130 when interrupted. `check` asks no approval: the person at
the terminal asked for the run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import TextIO

from lsp_verify.cli import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_NOTHING,
    EXIT_OK,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    folder_problem,
)
from lsp_verify.config.project_file import load_project_file
from lsp_verify.config.settings import Settings, effective_settings, parse_settings
from lsp_verify.planning.plan import Plan, make_plan, plan_to_json
from lsp_verify.record import Record, matcher_errors_text
from lsp_verify.running.execute import execute_plan
from lsp_verify.running.reaper import claim_children, sweep


def check_main(args: argparse.Namespace) -> int:
    folder = Path(args.dir)
    problem = folder_problem(args.dir)
    if problem is not None:
        print(f"lsp-verify check: {args.dir}: {problem}", file=sys.stderr)
        return EXIT_USAGE
    cli_values: dict[str, object] = {}
    if args.command is not None:
        cli_values["command"] = args.command
    if args.timeout_ms is not None:
        cli_values["timeoutMs"] = args.timeout_ms
    if args.tail_lines is not None:
        cli_values["tailLines"] = args.tail_lines
    if getattr(args, "failed_first", None) is False:
        cli_values["failedFirst"] = False
    if getattr(args, "affected_first", None) is False:
        cli_values["affectedFirst"] = False
    editor = parse_settings(cli_values, origin="command line")
    if editor.messages:
        for message in editor.messages:
            print(f"lsp-verify check: {message.text}", file=sys.stderr)
        return EXIT_USAGE

    folder_path = str(folder.resolve())
    project = load_project_file(folder_path)
    if project is not None:
        for message in project.parsed.messages:
            where = f":{message.line}" if message.line else ""
            print(f"lsp-verify: {project.path}{where}: {message.text}", file=sys.stderr)
    settings = effective_settings(editor, project)
    plan = make_plan(folder_path, editor, project=project)
    if plan.command is None:
        if args.json:
            print(json.dumps({**plan_to_json(plan), "outcome": "no-plan"}, indent=2))
        else:
            print(f"lsp-verify: no plan for {folder_path}: {plan.reason}")
            print("  (`lsp-verify explain` lists every rule looked at)")
        return EXIT_NOTHING

    claim_children()
    # The elapsed line goes to a terminal's stderr, so that stdout stays the report alone.
    progress = _Progress(sys.stderr) if wants_colour(sys.stderr) and not args.json else None
    try:
        changed = tuple(os.path.abspath(p) for p in getattr(args, "changed", ()))
        record = asyncio.run(_run(plan, settings, progress, changed))
    finally:
        sweep(kill=True)
    if progress is not None:
        progress.clear()
    if args.json:
        print(json.dumps(record.to_json(), indent=2))
    else:
        _print_text(record, sys.stdout)
    return exit_status(record)


async def _run(
    plan: Plan, settings: Settings, progress: _Progress | None, changed: tuple[str, ...] = ()
) -> Record:
    cancel = asyncio.Event()
    loop = asyncio.get_running_loop()
    # Windows' event loops take no signal handlers; nothing runs there anyway (the record
    # says to use WSL).
    signals = () if sys.platform == "win32" else (signal.SIGINT, signal.SIGTERM)
    for signum in signals:
        loop.add_signal_handler(signum, cancel.set)
    ticker = None
    if progress is not None:
        progress.command = plan.command or ""
        ticker = loop.create_task(progress.tick())
    try:
        return await execute_plan(
            plan,
            settings,
            trigger="cli",
            changed=changed,
            cancel=cancel,
            on_line=progress.line if progress is not None else None,
        )
    finally:
        if ticker is not None:
            ticker.cancel()
        for signum in signals:
            loop.remove_signal_handler(signum)


def exit_status(record: Record) -> int:
    if record.outcome == "passed":
        return EXIT_OK
    if record.outcome == "timed-out":
        return EXIT_TIMEOUT
    if record.outcome in ("skipped", "no-plan"):
        return EXIT_NOTHING
    if record.outcome == "cancelled":
        return EXIT_INTERRUPTED
    if record.exit_code:
        return record.exit_code
    return EXIT_FAILED


def outcome_line(record: Record) -> str:
    seconds = record.duration_ms / 1000
    what = f"{record.command}  [{record.source}"
    what += f", {record.manifest}]" if record.manifest else "]"
    if record.outcome == "passed":
        return f"verify passed in {seconds:.2f}s: {what}"
    if record.outcome == "failed" and record.exit_code is None:
        return f"verify failed (could not run: {record.reason}): {what}"
    if record.outcome in ("failed", "timed-out"):
        code = "null" if record.exit_code is None else str(record.exit_code)
        return f"verify failed (exit {code}) after {seconds:.2f}s: {what}"
    return f"verify {record.outcome}: {record.reason}: {what}"


# SGR colours by what a line says, on a terminal only (never piped, never with NO_COLOR).
_COLOURS = {
    "passed": "32",
    "error": "31",
    "warning": "33",
    "information": "36",
    "hint": "36",
}


def _paint(text: str, what: str, colour: bool) -> str:
    code = _COLOURS.get(what)
    return f"\x1b[{code}m{text}\x1b[0m" if colour and code else text


def shown_path(folder: str, path: str) -> str:
    """A problem's file as a terminal can open it: relative to the current directory when it
    is below it, else absolute (a path relative to the checked folder is a dead link from
    anywhere else)."""
    full = os.path.normpath(os.path.join(folder, path))
    try:
        relative = os.path.relpath(full)
    except ValueError:  # another drive (Windows)
        return full
    return full if relative == ".." or relative.startswith(".." + os.sep) else relative


def wants_colour(out: TextIO) -> bool:
    return out.isatty() and not os.environ.get("NO_COLOR")


def _print_text(record: Record, out: TextIO) -> None:
    colour = wants_colour(out)
    verdict = "passed" if record.outcome == "passed" else "error" if record.failed else ""
    print(_paint(outcome_line(record), verdict, colour), file=out)
    if record.matcher_errors:
        print(f"lsp-verify: {matcher_errors_text(record)}", file=out)
    if not record.failed:
        return
    for problem in record.problems:
        first, *rest = problem.message.splitlines() or [""]
        severity = _paint(f"{problem.severity}:", problem.severity, colour)
        where = shown_path(record.folder, problem.path)
        print(f"{where}:{problem.line}:{problem.column}: {severity} {first}", file=out)
        for more in rest:
            print(f"    {more}", file=out)
        for related in problem.related:
            where = shown_path(record.folder, related.path)
            print(f"    {related.message}: {where}:{related.line}:{related.column}", file=out)
    if record.tail:
        print(f"--- last {len(record.tail)} lines of output ---", file=out)
        for line in record.tail:
            print(line, file=out)


class _Progress:
    """One self-rewriting terminal line, once a run has gone on for `AFTER` seconds: elapsed
    time and the latest output line. Only on a terminal, never with NO_COLOR or --json."""

    AFTER = 1.0

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.command = ""
        self.latest = ""
        self.started = time.monotonic()
        self.drawn = False

    def line(self, text: str) -> None:
        if text.strip():
            self.latest = text.strip()

    async def tick(self) -> None:
        await asyncio.sleep(self.AFTER)
        while True:
            self.draw()
            await asyncio.sleep(0.1)

    def draw(self) -> None:
        width = shutil.get_terminal_size((80, 24)).columns
        elapsed = time.monotonic() - self.started
        text = f"{elapsed:6.1f}s  {self.latest or self.command}"
        self.out.write("\r\x1b[K" + text[: max(10, width - 1)])
        self.out.flush()
        self.drawn = True

    def clear(self) -> None:
        if self.drawn:
            self.out.write("\r\x1b[K")
            self.out.flush()
