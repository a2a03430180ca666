"""How a run of a plan is arranged so that a failure shows early: failed first, and the saved
test file first. Neither changes the verdict, which is always the full command's.

- Failed first: a pytest run gets `--ff` (pytest's cache provider runs the tests that failed
  last time first; the same tests run, with the same outcomes), unless the project turned the
  cache provider off (`-p no:cacheprovider`) or already chose an order (`--ff`, `--lf`,
  `--nf`, `--sw`), in its addopts, PYTEST_ADDOPTS or the command, or names its own
  configuration (`-c`, `--rootdir`). jest and vitest already run the files that failed last
  time first; npm, tox, cargo and make run as they are, and so do the runners of
  `toolchains.py`, each with the reason it cannot (`NO_FAILED_FIRST`).
- The saved test file first: when the saved file is one the pytest run would collect
  (`testpaths`, `python_files`, `norecursedirs`), it runs alone first as a quick phase whose
  failures are shown at once; then the full command runs and decides. Only when the full
  command stops at its first failure anyway (`-x`, `--maxfail=1`) does a failure in the quick
  phase end the run: the full command would then fail too. Where `--ff` is added and the
  file holds tests that failed last time, `--ff` runs those first anyway, and the quick phase
  is left out (it would only delay the cleared state once they are fixed).
- Affected first (`affected.py`): the test files that import what changed since the last run
  join the quick phase, after the saved test file, under the same rules (and the same `--ff`
  exception); with them, the full command always runs after the quick phase. For jest, vitest
  and go test the runner finds the related tests itself (`related.py`).

The approval of a plan covers its command as the repository wrote it; these arrangements are
lsp-verify's own, so they are no part of the plan's fingerprint (`failedFirst` off runs the
command exactly as approved).
"""

from __future__ import annotations

import fnmatch
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from lsp_verify.config.project_file import read_limited
from lsp_verify.planning import affected as affected_first
from lsp_verify.planning.plan import Plan
from lsp_verify.planning.pytest_args import Call, Options, parse_call, read_options
from lsp_verify.planning.pytest_config import (
    PytestConfig,
    failed_files,
    failed_last_time,
    locate,
)
from lsp_verify.planning.related import related
from lsp_verify.planning.toolchains import NO_FAILED_FIRST
from lsp_verify.record import Affected

__all__ = ["ADDED", "Arrangement", "Quick", "affected_note", "arrange", "arrangement_json"]

ADDED = "--ff added: failed first"
OFF = "failed first: off (failedFirst is false)"
NPM = (
    "failed first: not added: npm test runs as it is (jest and vitest already run the test "
    "files that failed last time first)"
)
# conftest.py hooks and variables that can leave a file out of a full run but not out of a
# run that names it: with one of them on the way, the quick phase is not used.
_COLLECTION_HOOKS = (
    "collect_ignore",
    "pytest_ignore_collect",
    "pytest_collect_file",
    "pytest_collection_modifyitems",
)


@dataclass(frozen=True)
class Quick:
    """The saved test file and the test files the changes affect: the command that runs
    them, their paths (relative to the folder), and whether a failure in them ends the run
    (the full command stops at its first failure)."""

    command: str
    paths: tuple[str, ...]
    ends_run: bool


@dataclass(frozen=True)
class Arrangement:
    """command: the full command as it runs. failed_first: what was done about the order,
    and why. quick_rule: when a saved test file runs alone first, or why never. quick: the
    quick phase of this run, when the saved file is such a test file."""

    command: str
    failed_first: str
    quick_rule: str
    quick: Quick | None = None
    affected: Affected | None = None


def arrange(
    plan: Plan,
    enabled: bool,
    saved: str | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    affected: bool = False,
    changed: tuple[str, ...] = (),
    remember: bool = True,
) -> Arrangement:
    """How a run of `plan` goes; `saved` is the absolute path of the saved file, if any.
    `affected`: look for the test files that import what changed (`changed`: absolute paths
    said to have changed, beside those whose modification time says so); `remember`: this
    run is the one later changes are measured from. Reads pytest's configuration files and,
    for `affected`, the folder's Python files (up to a second for 5 000 files never read
    before: call it off the event loop); never raises on what they contain."""
    command = plan.command or ""
    if not enabled:
        return Arrangement(command, OFF, "no quick phase: failedFirst is false")
    if plan.runner == "npm":
        arranged = Arrangement(command, NPM, "no quick phase: only for pytest runs")
        return _related(arranged, plan, changed) if affected else arranged
    call = parse_call(command)
    if call is None:
        not_pytest = "not a pytest command; it runs as it is"
        why = f"failed first: not added: {NO_FAILED_FIRST.get(plan.runner or '', not_pytest)}"
        arranged = Arrangement(command, why, "no quick phase: only for pytest runs")
        return _related(arranged, plan, changed) if affected else arranged
    config = locate(plan.folder)
    if config.problem is not None:
        why = f"cannot read pytest's configuration: {config.problem}"
        return Arrangement(command, f"failed first: not added: {why}", f"no quick phase: {why}")
    env = (os.environ if environ is None else environ).get("PYTEST_ADDOPTS", "")
    try:
        env_words = tuple(shlex.split(env))
    except ValueError:
        why = "PYTEST_ADDOPTS cannot be read (an unclosed quote)"
        return Arrangement(command, f"failed first: not added: {why}", f"no quick phase: {why}")
    sources = (
        ("addopts", f" ({config.name})", read_options(config.addopts)),
        ("PYTEST_ADDOPTS", "", read_options(env_words)),
        ("the command", "", read_options(call.args)),
    )
    combined = read_options(call.args, read_options(env_words, read_options(config.addopts)))
    refusal = _refusal(sources)
    if refusal is None:
        command += " --ff"
        failed_first = ADDED
    else:
        failed_first = f"failed first: not added: {refusal}"
    rule = _quick_rule(plan.folder, config, combined)
    arrangement = Arrangement(command, failed_first, rule)
    if not rule.startswith("quick phase"):
        return arrangement
    paths: list[str] = []
    saved_file = _collected(plan.folder, config, saved) if saved is not None else None
    if saved_file is not None:
        paths.append(saved_file)
    found = None
    if affected:
        found = affected_first.select(plan.folder, config, changed, remember=remember)
        paths.extend(p for p in found.selected if _collected(plan.folder, config, p))
    if refusal is None:
        # --ff runs these files' failures first anyway: a quick phase would only cost a
        # startup, and delay the cleared state when they are fixed.
        paths = [p for p in paths if not failed_last_time(config, plan.folder, p)]
    paths = list(dict.fromkeys(paths))
    # Only the saved test file's failure may end the run (the full command stopping at its
    # first failure would fail too); the full command always follows affected test files.
    ends_run = combined.maxfail == 1 and paths[:1] == [saved_file] and len(paths) == 1
    if refusal is None and any(p != saved_file for p in paths):
        # The known failures first, as --ff would run them: "still red?" is answered before
        # the affected files, and "broken by this edit?" right after.
        known = [p for p in failed_files(config, plan.folder) if p not in paths]
        paths = [p for p in known if _collected(plan.folder, config, p)] + paths
    quick = None
    if paths:
        quick = Quick(_with_paths(call, command, paths), tuple(paths), ends_run)
    return Arrangement(command, failed_first, rule, quick, found)


def _related(arranged: Arrangement, plan: Plan, changed: tuple[str, ...]) -> Arrangement:
    """jest, vitest and go test: the runner's own related tests of what changed, first."""
    found = related(plan, changed)
    quick = Quick(found.command, found.files, False) if found.command is not None else None
    return replace(arranged, quick=quick, affected=Affected(found.note, found.files))


def _refusal(sources: tuple[tuple[str, str, Options], ...]) -> str | None:
    for where, file, options in sources:
        if options.no_cache:
            return f"{where} has -p no:cacheprovider{file}"
    for where, file, options in sources:
        if options.ordering is not None:
            return f"{where} already says {options.ordering}{file}"
        if options.config is not None:
            return f"{where} names its own configuration ({options.config}){file}"
        if options.separator:
            return f"{where} passes `--`{file}"
    return None


def _quick_rule(folder: str, config: PytestConfig, options: Options) -> str:
    """Whether a saved test file can run alone first with these options, in words."""
    if options.separator or options.config is not None:
        return "no quick phase: the options name their own configuration or pass `--`"
    if options.selecting:
        return f"no quick phase: {options.ordering} picks the tests from the last run"
    if options.positional is not None:
        return f"no quick phase: the command names what to collect ({options.positional})"
    if options.unsure is not None:
        return f"no quick phase: {options.unsure} is an option lsp-verify does not know"
    if config.rootdir is not None and os.path.abspath(config.rootdir) != folder:
        return f"no quick phase: pytest's configuration is above the folder ({config.path})"
    ends = (
        "a failure there ends the run (the command stops at its first failure)"
        if options.maxfail == 1
        else "then the full command runs and decides"
    )
    return f"quick phase: a saved test file that pytest collects runs alone first; {ends}"


def _collected(folder: str, config: PytestConfig, saved: str) -> str | None:
    """`saved` (absolute, or relative to the folder) relative to the folder, when a run of
    the full command collects it."""
    path = os.path.abspath(os.path.join(folder, saved))
    try:
        relative = os.path.relpath(path, folder)
    except ValueError:  # another drive, a NUL byte
        return None
    if relative.startswith(os.pardir) or not os.path.isfile(path):
        return None
    parts = relative.split(os.sep)
    name, dirs = parts[-1], parts[:-1]
    if not any("/" not in p and fnmatch.fnmatch(name, p) for p in config.python_files):
        return None
    if config.testpaths and not any(_under(relative, t) for t in config.testpaths):
        return None
    for depth, segment in enumerate(dirs):
        here = os.path.join(folder, *dirs[: depth + 1])
        if any(fnmatch.fnmatch(segment, p) for p in config.norecursedirs):
            return None
        if os.path.exists(os.path.join(here, "pyvenv.cfg")):
            return None
    for depth in range(len(dirs) + 1):
        if _hooks_collection(os.path.join(folder, *dirs[:depth], "conftest.py")):
            return None
    # pytest looks for its configuration from the paths it is given: it must be the same.
    if locate(os.path.dirname(path)).path != config.path:
        return None
    return relative.replace(os.sep, "/")


def _under(relative: str, testpath: str) -> bool:
    if any(c in testpath for c in "*?["):
        return False
    base = os.path.normpath(testpath)
    return base == os.curdir or relative == base or relative.startswith(base + os.sep)


def _hooks_collection(conftest: str) -> bool:
    """Whether a conftest.py may decide which files are collected; unreadable: it may."""
    try:
        text = read_limited(conftest)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return True
    return any(hook.encode() in text for hook in _COLLECTION_HOOKS)


def _with_paths(call: Call, command: str, paths: list[str]) -> str:
    """`command` with the files right after the program, where no option can take one as
    its value."""
    head = command[: call.program_end].rstrip()
    rest = command[call.program_end :].lstrip()
    files = " ".join(shlex.quote(p) for p in paths)
    return f"{head} {files} {rest}".rstrip()


def arrangement_json(plan: Plan, enabled: bool, affected: bool = False) -> dict[str, Any]:
    """What `explain` adds to the plan: the command as it runs, and why so; what
    affected-first would run first now (the changes since the last run; nothing is kept)."""
    if plan.command is None:
        return dict.fromkeys(("runs", "failedFirst", "quickPhase", "affectedFirst", "affected"))
    arranged = arrange(plan, enabled, affected=enabled and affected, remember=False)
    found = arranged.affected
    return {
        "runs": arranged.command,
        "failedFirst": arranged.failed_first,
        "quickPhase": arranged.quick_rule,
        "affectedFirst": affected_note(arranged, enabled, affected),
        "affected": found.to_json() if found is not None else None,
    }


def affected_note(arranged: Arrangement, enabled: bool, affected: bool) -> str:
    """What affected-first did, or why it did nothing, in words."""
    if not enabled:
        return "affected first: off (failedFirst is false)"
    if not affected:
        return "affected first: off (affectedFirst is false)"
    if arranged.affected is None:
        return "affected first: " + arranged.quick_rule
    return arranged.affected.note
