"""Command line: `serve` (default), `explain`, `check`, `approve`, `revoke`, `approvals`,
and `--version`."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

# The exit statuses of every command, named once (`check` also passes the verified command's
# own status through when it failed).
EXIT_OK = 0
EXIT_FAILED = 1  # the command failed, or what was asked could not be done (a store unwritten)
EXIT_USAGE = 2  # a bad argument or option, a DIR that is not a folder
EXIT_NOTHING = 3  # nothing ran (no plan, a skipped run), or nothing to approve
EXIT_TIMEOUT = 124  # the run was killed at its timeout (timeout(1)'s status)
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)


def _parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog="lsp-verify",
        description="Run a project's own verification command and report what failed.",
    )
    from lsp_verify import __version__

    parser.add_argument("--version", action="version", version=f"lsp-verify {__version__}")
    sub = parser.add_subparsers(dest="cmd")
    serve = sub.add_parser("serve", help="speak LSP on stdio (the default)")
    serve.add_argument("--stdio", action="store_true", help="accepted for editors that pass it")
    parser.add_argument("--stdio", action="store_true", help=argparse.SUPPRESS)

    explain = sub.add_parser("explain", help="print the plan for a folder as JSON; runs nothing")
    explain.add_argument("dir", nargs="?", default=".")

    check = sub.add_parser("check", help="plan, run and report, like a save in the editor")
    check.add_argument("dir", nargs="?", default=".")
    check.add_argument("--json", action="store_true", help="print the run record as JSON")
    check.add_argument("--command", help="run this command instead of the planned one")
    check.add_argument("--timeout-ms", type=int, help="kill the run after this many ms")
    check.add_argument("--tail-lines", type=int, help="keep this many trailing output lines")
    check.add_argument(
        "--no-failed-first",
        dest="failed_first",
        action="store_false",
        default=None,
        help="run the command exactly as planned: no --ff for pytest",
    )
    check.add_argument(
        "--no-affected-first",
        dest="affected_first",
        action="store_false",
        default=None,
        help="no quick phase of the test files that import what changed",
    )
    check.add_argument(
        "--changed",
        nargs="+",
        default=(),
        metavar="PATH",
        help="these files changed (beside those changed since the folder's last run)",
    )

    for name, text in (
        ("approve", "approve the plan of a folder so the server runs it without asking"),
        ("revoke", "withdraw every approval or refusal stored for a folder"),
        ("approvals", "list the stored approvals (of one folder, or all)"),
    ):
        trust = sub.add_parser(name, help=text)
        trust.add_argument("dir", nargs="?", default=None if name == "approvals" else ".")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # `lsp-verify explain | head`: the reader left; say nothing more, like other tools.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILED


def _main(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    # Only a process of its own forks a keeper: never a caller that passes argv (a test).
    standalone = argv is None
    if words in ([], ["serve"], ["--stdio"], ["serve", "--stdio"]):
        # What editors start: straight to the server, without building the parser.
        from lsp_verify.running.reaper import keep_behind

        return _serve(standalone)

    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    if args.cmd == "explain":
        from lsp_verify.cli.explain import explain_main

        return explain_main(args.dir)
    if args.cmd == "check":
        from lsp_verify.running.reaper import keep_behind

        keep_behind(standalone)
        from lsp_verify.cli.check import check_main

        return check_main(args)
    if args.cmd in ("approve", "revoke", "approvals"):
        from lsp_verify.cli.approvals import approvals_main

        return approvals_main(args.cmd, args.dir)
    return _serve(standalone)


def _serve(standalone: bool) -> int:
    from lsp_verify.running.reaper import keep_behind

    keep_behind(standalone)
    from lsp_verify.lsp.server import serve

    code = serve()
    if standalone:
        _end_now(code)
    return code


def _end_now(code: int) -> None:
    """The server has stopped and its runs are dead: end the process without the
    interpreter's own teardown, which finalises every module pygls and lsprotocol loaded
    (0.1 s here, over 1 s on a loaded machine): time an editor waits for, and some kill the
    server after."""
    import contextlib
    import logging

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def folder_problem(path: str) -> str | None:
    """Why `path` cannot be a command's folder, in the one wording every command uses."""
    if os.path.isdir(path):
        return None
    return "not a directory" if os.path.lexists(path) else "no such directory"
