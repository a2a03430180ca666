"""`lsp-verify approve|revoke|approvals [DIR]`: the approval store from a terminal."""

from __future__ import annotations

import json
import os
import sys

from lsp_verify.cli import EXIT_FAILED, EXIT_NOTHING, EXIT_OK, EXIT_USAGE, folder_problem
from lsp_verify.trust import Decision, TrustStore, describe, needs_question


def _print_warnings(store: TrustStore) -> None:
    for warning in store.take_warnings():
        print(f"lsp-verify: {warning}", file=sys.stderr)


def _as_json(decision: Decision) -> str:
    return json.dumps(
        {
            "folder": decision.folder,
            "fingerprint": decision.fingerprint,
            "verdict": decision.verdict,
            "command": decision.command,
            "source": decision.source,
            "manifest": decision.manifest,
            "decidedAt": decision.decided_at,
        }
    )


def _inside_an_agent() -> bool:
    """A command Claude Code's Bash tool runs: its environment says so and no one types
    into it. A model must not approve what the user has not seen."""
    return bool(os.environ.get("CLAUDECODE")) and not sys.stdin.isatty()


def approvals_main(cmd: str, dir: str | None) -> int:
    """`lsp-verify approve|revoke|approvals [DIR]`.

    approve: 0 stored; 3 nothing to approve (no plan, or a command from settings); 1 the store
    could not be written. revoke, approvals: 0 (1 when revoke could not write).
    approvals prints one JSON object per line; on stderr that nothing is stored, when so.
    Every command: 2 when DIR is not an existing directory.
    """
    folder: str | None = None
    if dir is not None or cmd != "approvals":
        given = "." if dir is None else dir
        problem = folder_problem(given)
        if problem is not None:
            print(f"lsp-verify {cmd}: {given}: {problem}", file=sys.stderr)
            return EXIT_USAGE
        folder = os.path.realpath(given)
    if cmd == "approve" and _inside_an_agent():
        print(
            "lsp-verify approve: refused inside Claude Code's tools (CLAUDECODE is set and "
            "there is no terminal): the user approves a repository's command from a terminal "
            "of their own",
            file=sys.stderr,
        )
        return EXIT_FAILED
    store = TrustStore()
    try:
        if cmd == "approve":
            assert folder is not None
            return _approve(store, folder)
        if cmd == "revoke":
            assert folder is not None
            done, removed = store.revoke_checked(folder)
            if not done:
                return EXIT_FAILED
            print(f"revoked {removed} decision{'s' if removed != 1 else ''} for {folder}")
            return EXIT_OK
        if cmd == "approvals":
            decisions = store.decisions(folder)
            for decision in decisions:
                print(_as_json(decision))
            if not decisions:  # said on stderr: stdout stays JSON lines for a script
                where = f" for {folder}" if folder is not None else ""
                print(
                    f"lsp-verify approvals: nothing stored{where} ({store.path})", file=sys.stderr
                )
            return EXIT_OK
        print(f"lsp-verify: unknown command {cmd!r}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        _print_warnings(store)


def _approve(store: TrustStore, folder: str) -> int:
    from lsp_verify.planning.plan import make_plan

    plan = make_plan(folder)
    if plan.command is None:
        print(f"nothing to approve in {folder}: {plan.reason}")
        return EXIT_NOTHING
    if not needs_question(plan):
        print(f"nothing to approve in {folder}: the command comes from the editor's settings")
        return EXIT_NOTHING
    print("approving:")
    for line in describe(plan):
        print(f"  {line}")
    if not store.approve(plan):
        return EXIT_FAILED
    print("approved: the server runs this plan without asking until it changes")
    return EXIT_OK
