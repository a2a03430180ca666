"""The detector's rules 6 to 11, after the seed's five: go, deno, mix, rake, zig, just.

The same principle as the five (`detect.py`): each counts only on an unambiguous manifest at
the folder root, read through the plan's `Root` (1 MiB at most, each file once), and returns a
`Match` or the reason it does not apply, naming the near misses. Which file each tool reads,
and in which order, was checked against the tools themselves (SPEC section 2; README "How the
command is chosen"):

- go: `go.mod` (a broken one still marks a Go module: go's own error is the useful feedback);
- deno: `deno.json`, else `deno.jsonc` (Deno reads the first; both may hold comments);
  `deno task test` when it has `tasks.test` (a string, or an object with a `command`);
- mix: `mix.exs`;
- rake: the first of `rakefile`, `Rakefile`, `rakefile.rb`, `Rakefile.rb` (rake reads only
  that one) defining the top-level task `test`; `bundle exec` in front when `Gemfile.lock`
  is beside it and `bundle` is on PATH;
- zig: `build.zig` declaring the step `test`;
- just: the one of `justfile`, `Justfile`, `JUSTFILE`, `.justfile` that exists (just refuses
  to choose between two) with a `test` recipe that runs without arguments.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable

from lsp_verify.planning.detect import RULES as SEED_RULES
from lsp_verify.planning.detect import Match, Root, RuleResult
from lsp_verify.planning.manifests import (
    Found,
    just_test_recipe,
    rake_test_task,
    zig_test_step,
)

DENO_FILES = ("deno.json", "deno.jsonc")
RAKEFILES = ("rakefile", "Rakefile", "rakefile.rb", "Rakefile.rb")
JUSTFILES = ("justfile", "Justfile", "JUSTFILE", ".justfile")

# Every root-level path these rules may read or look at (see plan.PLAN_INPUTS).
INPUTS = ("go.mod", *DENO_FILES, "mix.exs", *RAKEFILES, "Gemfile.lock", "build.zig", *JUSTFILES)

# Why failed first is not added for a run of each of these runners: none can put last time's
# failures first and still run the same tests (SPEC section 4).
NO_FAILED_FIRST = {
    "go": "go test has no option to run last time's failures first",
    "deno": "deno test has no option to run last time's failures first",
    "mix": "mix test --failed runs only last time's failures, a smaller set than mix test",
    "rake": "rake test (minitest, test-unit) has no option to run last time's failures first",
    "zig": "zig build test has no option to run last time's failures first",
    "just": "just test runs the justfile's recipe as it is",
}


def _named(near: tuple[str, ...]) -> str:
    return ", ".join(near)


def _read_rule(
    root: Root, name: str, read: Callable[[str], Found], command: str, says: tuple[str, str, str]
) -> RuleResult:
    """`command` when `read` finds what it wants in `name`; else why not. `says`: the reason
    when found, the reason when not, and how a near miss is put (`{}`: what comes close)."""
    text, why = root.text(name)
    if text is None:
        return why
    found = read(text)
    has, lacks, near = says
    return Match(name, command, has) if found.found else _missing(lacks, found, near)


def _missing(why: str, found: Found, near: str) -> str:
    """A near miss: `why`, and what comes close in parentheses (`near` formats it)."""
    return f"{why} ({near.format(_named(found.near))})" if found.near else why


def _exists_rule(root: Root, name: str, command: str, tool: str) -> RuleResult:
    """A manifest that marks the project by existing: readable is enough."""
    found = root.file(name)
    if not found.exists:
        return f"no {name}"
    if found.data is None:
        return f"{name} {found.problem}"
    return Match(name, command, f"{name} exists (a {tool})")


def rule_go(root: Root) -> RuleResult:
    return _exists_rule(root, "go.mod", "go test ./...", "Go module")


def rule_mix(root: Root) -> RuleResult:
    return _exists_rule(root, "mix.exs", "mix test", "Mix project")


def rule_deno(root: Root) -> RuleResult:
    for name in DENO_FILES:
        if root.file(name).exists:
            break
    else:
        return "no deno.json or deno.jsonc"
    value, why = root.jsonc(name)
    if why:
        return why
    if not isinstance(value, dict):
        return f"{name} is not a JSON object"
    tasks = value.get("tasks")
    test = tasks.get("test") if isinstance(tasks, dict) else None
    if isinstance(test, dict):
        test = test.get("command")
    if isinstance(test, str) and test.strip():
        return Match(name, "deno task test", f"{name} has tasks.test, so `deno task test`")
    return Match(name, "deno test", f"{name} exists and has no tasks.test, so `deno test`")


def rule_rake(root: Root) -> RuleResult:
    # rake loads only the first of them that exists.
    first = root.first_text(RAKEFILES, "no Rakefile (rakefile, Rakefile, rakefile.rb, Rakefile.rb)")
    if isinstance(first, str):
        return first
    name, text = first
    found = rake_test_task(text)
    if not found.found:
        return _missing(
            f"{name} defines no top-level task test",
            found,
            "it has {}: set verify.command to run one",
        )
    command = "rake test"
    note = ""
    if root.is_file("Gemfile.lock"):
        if shutil.which("bundle"):
            command = "bundle exec rake test"
            note = "; Gemfile.lock is beside it and bundle is on PATH"
        else:
            note = "; Gemfile.lock is beside it but bundle is not on PATH"
    return Match(name, command, f"{name} defines the task test{note}, so `{command}`")


def rule_zig(root: Root) -> RuleResult:
    has, lacks = 'build.zig declares the step "test"', 'build.zig declares no step "test"'
    return _read_rule(root, "build.zig", zig_test_step, "zig build test", (has, lacks, "it has {}"))


def rule_just(root: Root) -> RuleResult:
    present = [name for name in JUSTFILES if root.file(name).exists]
    if not present:
        return "no justfile (justfile, Justfile, JUSTFILE, .justfile)"
    name = present[0]
    others = [other for other in present[1:] if not _same_file(root, name, other)]
    if others:
        return f"{name} and {others[0]} are both there: just refuses to choose between them"
    has = f"{name} has a recipe test that needs no argument"
    lacks = f"{name} has no recipe test that runs without arguments"
    return _read_rule(root, name, just_test_recipe, "just test", (has, lacks, "{}"))


def _same_file(root: Root, first: str, second: str) -> bool:
    """One file under two names (a file system that ignores case)."""
    try:
        return os.path.samefile(root.path(first), root.path(second))
    except (OSError, ValueError):
        return False


TOOLCHAIN_RULES: tuple[tuple[str, Callable[[Root], RuleResult]], ...] = (
    ("go", rule_go),
    ("deno", rule_deno),
    ("mix", rule_mix),
    ("rake", rule_rake),
    ("zig", rule_zig),
    ("just", rule_just),
)

RULES = (*SEED_RULES, *TOOLCHAIN_RULES)
RUNNERS = tuple(runner for runner, _ in RULES)

__all__ = ["INPUTS", "NO_FAILED_FIRST", "RULES", "RUNNERS"]
