"""Command line: `serve` (default), `explain`, `check`, `approve`, `revoke`, `approvals`,
`hook` (Claude Code's hooks) and `--version`."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable, TextIO, cast

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


EXIT_CODES = f"""exit status:
  {EXIT_OK}    passed
  {EXIT_FAILED}    failed (or the command's own non-zero status, when it has one)
  {EXIT_USAGE}    a bad argument or option, or DIR is not a folder
  {EXIT_NOTHING}    nothing ran: no plan, or the plan changed under the run
  {EXIT_TIMEOUT}  the run was killed at its timeout
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C)"""


def _bounded_int(lowest: int, highest: int) -> Callable[[str], int]:
    """An option's integer, refused by argparse (status 2, the option named) outside
    [lowest, highest]: a bad value is an error, never quietly a default."""

    def parse(text: str) -> int:
        import argparse

        try:
            number = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not lowest <= number <= highest:
            raise argparse.ArgumentTypeError(f"{number} is not between {lowest} and {highest}")
        return number

    return parse


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The command line's parser, and each command's own (for errors in its terms)."""
    import argparse

    from lsp_verify.config.settings import MAX_TAIL_LINES, MAX_TIMEOUT_MS

    parser = argparse.ArgumentParser(
        prog="lsp-verify",
        description="Run a project's own verification command and report what failed. "
        "Without a command, serve LSP on stdin and stdout (what editors start).",
    )
    from lsp_verify import __version__

    parser.add_argument("--version", action="version", version=f"lsp-verify {__version__}")
    sub = parser.add_subparsers(dest="cmd", metavar="COMMAND")
    commands: dict[str, argparse.ArgumentParser] = {}

    def command(name: str, text: str, epilog: str | None = None) -> argparse.ArgumentParser:
        made = sub.add_parser(
            name,
            help=text,
            description=text,
            epilog=epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        commands[name] = made
        return made

    folder_help = "the project's folder (default: the current directory)"
    serve = command("serve", "speak LSP on stdin and stdout (the default)")
    serve.add_argument("--stdio", action="store_true", help="accepted for editors that pass it")
    parser.add_argument("--stdio", action="store_true", help=argparse.SUPPRESS)

    explain = command(
        "explain",
        "print the plan for a folder as JSON; runs nothing",
        f"exit status: {EXIT_OK}, also without a plan; {EXIT_USAGE} when DIR is not a folder",
    )
    explain.add_argument("dir", nargs="?", default=".", metavar="DIR", help=folder_help)

    check = command("check", "plan, run and report, like a save in the editor", EXIT_CODES)
    check.add_argument("dir", nargs="?", default=".", metavar="DIR", help=folder_help)
    check.add_argument("--json", action="store_true", help="print the run record as JSON")
    check.add_argument("--command", help="run this command instead of the planned one")
    check.add_argument(
        "--timeout-ms",
        type=_bounded_int(1, MAX_TIMEOUT_MS),
        metavar="MS",
        help="kill the run after this many milliseconds (default: 60000)",
    )
    check.add_argument(
        "--tail-lines",
        type=_bounded_int(1, MAX_TAIL_LINES),
        metavar="N",
        help="keep this many trailing output lines (default: 40)",
    )
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

    hook = command(
        "hook",
        "a Claude Code hook: the verdict of the server's run of an edit, for the model",
        f"exit status: {EXIT_OK}, whatever the input",
    )
    hook.add_argument("event", choices=("post-edit", "stop"))

    trust_status = (
        f"exit status: {EXIT_OK}; {EXIT_FAILED} when the approval store could not be written; "
        f"{EXIT_USAGE} when DIR is not a folder"
    )
    for name, text, epilog in (
        (
            "approve",
            "approve the plan of a folder so the server runs it without asking",
            trust_status + f"; {EXIT_NOTHING} when there is nothing to approve",
        ),
        ("revoke", "withdraw every approval or refusal stored for a folder", trust_status),
        (
            "approvals",
            "list the stored approvals (of one folder, or all), one JSON line each",
            trust_status,
        ),
    ):
        trust = command(name, text, epilog)
        everything = name == "approvals"
        trust.add_argument(
            "dir",
            nargs="?",
            default=None if everything else ".",
            metavar="DIR",
            help="the project's folder (default: every folder)" if everything else folder_help,
        )
    return parser, commands


def main(argv: Sequence[str] | None = None) -> int:
    return _main(argv)


class _ReaderMayLeave:
    """stdout for the commands that print: `lsp-verify check --json | head` closes the pipe
    early; what is printed after that goes nowhere, and the exit status stays the verdict's
    rather than becoming a BrokenPipeError's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._gone = False

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                self._stream.write(text)
            except BrokenPipeError:
                self._left()
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._left()

    def _left(self) -> None:
        self._gone = True
        # The interpreter flushes stdout once more on the way out: let that find /dev/null.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self._stream.fileno())
        os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _quiet_when_the_reader_leaves() -> None:
    if not isinstance(sys.stdout, _ReaderMayLeave):
        sys.stdout = cast(TextIO, _ReaderMayLeave(sys.stdout))


def _main(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    # Only a process of its own forks a keeper: never a caller that passes argv (a test).
    standalone = argv is None
    if words in ([], ["serve"], ["--stdio"], ["serve", "--stdio"]):
        # What editors start: straight to the server, without building the parser.
        from lsp_verify.running.reaper import keep_behind

        return _serve(standalone)

    parser, commands = _parser()
    try:
        args, unknown = parser.parse_known_args(argv)
        if unknown:  # said in the terms of the command they were given to
            chosen = commands.get(args.cmd, parser) if args.cmd else parser
            chosen.error(f"unrecognized arguments: {' '.join(unknown)}")
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    if standalone:
        _quiet_when_the_reader_leaves()
    if args.cmd == "explain":
        from lsp_verify.cli.explain import explain_main

        return explain_main(args.dir)
    if args.cmd == "check":
        from lsp_verify.running.reaper import keep_behind

        keep_behind(standalone)
        from lsp_verify.cli.check import check_main

        return check_main(args)
    if args.cmd == "hook":
        from lsp_verify.cli.hook import hook_main

        return hook_main(args.event)
    if args.cmd in ("approve", "revoke", "approvals"):
        from lsp_verify.cli.approvals import approvals_main

        return approvals_main(args.cmd, args.dir)
    return _serve(standalone)


TERMINAL_HINT = (
    "lsp-verify is a language server: it speaks LSP on stdin and stdout, for an editor or an "
    "agent to start.\nTo verify a folder from a terminal: lsp-verify check DIR "
    "(lsp-verify --help lists the commands). Ctrl-C ends this.\n"
)


def _serve(standalone: bool) -> int:
    from lsp_verify.running.reaper import keep_behind

    keep_behind(standalone)
    if _typed_in_a_terminal():
        sys.stderr.write(TERMINAL_HINT)
        sys.stderr.flush()
    from lsp_verify.lsp.server import serve

    code = serve()
    if standalone:
        _end_now(code)
    return code


def _typed_in_a_terminal() -> bool:
    """stdin is a terminal: a person started the server by hand, not an editor (which gives
    it a pipe)."""
    try:
        return os.isatty(sys.stdin.fileno())
    except (OSError, ValueError, AttributeError):  # no stdin, or one without a descriptor
        return False


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
