"""Approvals of repository commands: the plan fingerprint's policy, the gate, and the store.

A command that comes from the repository (project file, script, detected plan, a workspace's
own settings) runs only once the user approved that exact plan (`plan.plan_fingerprint`).
`gate` says what to do with a plan: run it, ask, or decline; the caller carries it out.
Decisions are kept per folder and fingerprint by `TrustStore` (store.py), in the user's state
directory, never in the repository.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsp_verify.planning.plan import Plan, plan_fingerprint
from lsp_verify.trust.store import (
    APPROVED,
    REFUSED,
    Decision,
    TrustStore,
    needs_question,
    state_dir,
)

__all__ = [
    "APPROVED",
    "REFUSED",
    "Decision",
    "Gate",
    "TrustStore",
    "describe",
    "gate",
    "needs_question",
    "plan_fingerprint",
    "state_dir",
]


@dataclass(frozen=True)
class Gate:
    """What the server does with a plan before running it.

    action: "run" (no question needed, or already approved), "ask" (showMessageRequest),
    "decline" (do not run; the record's outcome is `declined`).
    offer_always: whether "Always for this plan" is one of the choices when asking.
    """

    action: str
    offer_always: bool
    why: str


def gate(
    plan: Plan,
    store: TrustStore,
    *,
    confirm: str = "onChange",
    run_now: bool = False,
    workspace_trusted: bool = True,
) -> Gate:
    """The trust policy in one place, so the server only carries it out.

    run_now: the user asked for this run (`verify.runNow`): a stored refusal or an untrusted
    workspace asks again instead of declining.
    """
    if not needs_question(plan):
        return Gate("run", False, "no repository command to approve")
    if not workspace_trusted:
        if run_now:
            return Gate("ask", False, "workspace is not trusted: asking every run")
        return Gate("decline", False, "workspace is not trusted: repository commands wait")
    if confirm == "never":
        return Gate("run", False, 'confirm is "never"')
    if confirm == "always":
        return Gate("ask", False, 'confirm is "always"')
    verdict = store.lookup(plan.folder, plan_fingerprint(plan))
    if verdict == APPROVED:
        return Gate("run", False, "approved for this plan")
    if verdict == REFUSED:
        if run_now:
            return Gate("ask", True, "refused for this plan; asked again on runNow")
        return Gate("decline", False, "refused for this plan")
    return Gate("ask", True, "not yet approved for this plan")


def describe(plan: Plan) -> list[str]:
    """The plan as `label: value` lines, for a question or a terminal."""
    lines = [
        f"folder: {plan.folder}",
        f"command: {plan.command}",
        f"source: {plan.source}" + (f" ({plan.runner})" if plan.runner else ""),
        f"manifest: {plan.manifest}",
        f"reason: {plan.reason}",
    ]
    if list(plan.steps) != [plan.command]:
        lines += [f"step {n}: {step}" for n, step in enumerate(plan.steps, 1)]
    lines.append(f"fingerprint: {plan_fingerprint(plan)}")
    return lines
