"""What the rules after the seed's five read in their manifests, at a cost linear in the file.

Each reader answers one question about a text the detector has already read (at most 1 MiB):
does a Rakefile define the task `test`, does a justfile have a recipe `just test` can run
without arguments, does a build.zig declare a `test` step; and `jsonc` turns deno.json(c)
into JSON. None runs the tool or a regular expression that can backtrack over a line: the
lines worth reading are found by a search done in C, and at most `MAX_LINES` of them are read
one by one. Each gives, besides its answer, the near misses a reason names (a task `spec`, a
recipe that needs an argument).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lsp_verify.config.project_file import TooCostly

MAX_LINES = 5_000
MAX_LINE = 4_096  # what is read of one line: no task or recipe line is longer
MAX_NAMED = 5  # near misses named in a reason


@dataclass(frozen=True)
class Found:
    """`found`: the manifest gives what the rule wants. `near`: what comes close, in words."""

    found: bool
    near: tuple[str, ...] = ()


def _near(items: list[str]) -> tuple[str, ...]:
    unique = list(dict.fromkeys(items))
    return tuple(unique[:MAX_NAMED])


def _line_at(text: str, start: int) -> tuple[int, int]:
    """The bounds of the line holding `start`."""
    begin = text.rfind("\n", 0, start) + 1
    end = text.find("\n", start)
    return begin, len(text) if end < 0 else end


# --- Rakefile ---------------------------------------------------------------------------------

# A line of interest holds one of these: a task, a task class, a namespace, or what hides code.
_RAKE_KEYWORD = re.compile(r"task|Task|namespace|^=begin|^__END__", re.MULTILINE)
_RAKE_TASK = re.compile(
    r"(?:multi)?task\b[ \t]*(?:\([ \t]*)?(?::(\w+)|[\"']([\w:-]+)[\"']|(\w+):(?!:))"
)
_RAKE_END = re.compile(r"^([ \t]*)end\b", re.MULTILINE)
_RAKE_END_DOC = re.compile(r"^=end\b", re.MULTILINE)
# Task classes and the task they define when given no name.
_RAKE_CLASSES = (
    ("Rake::TestTask.new", "test"),
    ("Minitest::TestTask.create", "test"),
    ("RSpec::Core::RakeTask.new", "spec"),
)
_RAKE_NAME_ARG = re.compile(r"[ \t]*\([ \t]*(?::(\w+)|[\"']([\w:-]+)[\"']|(\)))")
_RAKE_NO_ARG = re.compile(r"[ \t]*(?:do\b|\{|;|#|$)")
_NAMESPACE = re.compile(r"namespace\b")
RAKE_NEAR = frozenset({"spec", "tests", "unit", "units", "minitest", "test_all", "check"})


def rake_test_task(text: str) -> Found:
    """Whether a Rakefile defines the top-level task `test`: `task :test`, `task "test"`,
    `task test: [...]`, `Rake::TestTask.new` (named test unless told otherwise),
    `Minitest::TestTask.create`, or `RSpec::Core::RakeTask.new(:test)`. A task inside a
    `namespace` block is `name:test`, which `rake test` does not run; code after `__END__`
    and inside `=begin`/`=end` is not read. Blocks are told by their indentation: the
    namespace ends at the first `end` indented as much as its `namespace` line."""
    text = text.replace("\r\n", "\n")
    names: list[str] = []
    position = 0
    budget = MAX_LINES
    while budget > 0:
        budget -= 1
        hit = _RAKE_KEYWORD.search(text, position)
        if hit is None:
            break
        begin, end = _line_at(text, hit.start())
        position = end + 1
        line = text[begin : min(end, begin + MAX_LINE)]
        if line.startswith("__END__") and not line[7:].strip():
            break
        if line.startswith("=begin"):
            closing = _RAKE_END_DOC.search(text, position)
            if closing is None:
                break
            position = _line_at(text, closing.start())[1] + 1
            continue
        body = line.lstrip(" \t")
        indent = line[: len(line) - len(body)]
        if body.startswith("#"):
            continue
        if _NAMESPACE.match(body):
            if re.search(r"\bend\b", body):  # opened and closed on its line
                continue
            for closing in _RAKE_END.finditer(text, position):
                budget -= 1
                if closing.group(1) == indent or budget <= 0:
                    position = _line_at(text, closing.start())[1] + 1
                    break
            else:
                break  # the rest of the file is inside the namespace
            if budget <= 0:
                break
            continue
        name = _rake_task_name(body)
        if name == "test":
            return Found(True)
        if name is not None and (name in RAKE_NEAR or name.startswith("test")):
            names.append(name)
    return Found(False, _near(names))


def _rake_task_name(body: str) -> str | None:
    """The task a line (its indentation removed) defines, if it starts by defining one."""
    task = _RAKE_TASK.match(body)
    if task is not None:
        return task.group(1) or task.group(2) or task.group(3)
    for opening, default in _RAKE_CLASSES:
        if body.startswith(opening):
            rest = body[len(opening) :]
            named = _RAKE_NAME_ARG.match(rest)
            if named is not None:
                return named.group(1) or named.group(2) or default
            if _RAKE_NO_ARG.match(rest):
                return default
    return None


# --- justfile ---------------------------------------------------------------------------------

# Lines at column 0 that may make `just test` work: a recipe `test`, or an alias `test`.
_JUST_HEAD = re.compile(r"^(?:@?test\b|alias[ \t]+test\b)", re.MULTILINE)
_JUST_ALIAS = re.compile(r"alias[ \t]+test[ \t]*:=[ \t]*\S")
_JUST_PARAM = re.compile(r"[ \t]*(?P<kind>[*+]?)\$?(?P<name>[A-Za-z_][\w-]*)[ \t]*(?P<eq>=?)")


def just_test_recipe(text: str) -> Found:
    """Whether `just test` runs something: a recipe named `test` at column 0 (`@test` too)
    whose parameters all have defaults (or are `*variadic`), or `alias test := recipe`. A
    `test := value` is a variable, and `test name:` needs an argument: neither counts."""
    text = text.replace("\r\n", "\n")
    near: list[str] = []
    for count, hit in enumerate(_JUST_HEAD.finditer(text)):
        if count >= MAX_LINES:
            break
        begin, end = _line_at(text, hit.start())
        line = text[begin : min(end, begin + MAX_LINE)]
        if line.startswith("alias"):
            if _JUST_ALIAS.match(line):
                return Found(True)
            continue
        verdict = _recipe_runs_bare(line[1:] if line.startswith("@") else line)
        if verdict is True:
            return Found(True)
        if isinstance(verdict, str):
            near.append(verdict)
    return Found(False, _near(near))


def _recipe_runs_bare(line: str) -> bool | str | None:
    """For a line starting `test`: True when it is a recipe that runs without arguments, a
    near miss in words when it is one that needs them, None when it is not a recipe."""
    rest = line[4:]
    needs: list[str] = []
    position = 0
    for _ in range(64):
        stripped = rest[position:].lstrip(" \t")
        position = len(rest) - len(stripped)
        if stripped.startswith(":"):
            if stripped.startswith(":="):
                return None  # a variable
            if needs:
                return f"recipe test needs {' and '.join(needs[:3])}"
            return True
        param = _JUST_PARAM.match(rest, position)
        if param is None:
            return None
        position = param.end()
        if param.group("eq"):
            skipped = _skip_default(rest, position)
            if skipped is None:
                return None
            position = skipped
        elif param.group("kind") != "*":
            needs.append(f"`{param.group('kind')}{param.group('name')}`")
    return None


def _skip_default(rest: str, position: int) -> int | None:
    """Past a parameter's default value: a string, a backtick, a name, or (expression)."""
    rest_len = len(rest)
    while position < rest_len and rest[position] in " \t":
        position += 1
    if position >= rest_len:
        return None
    first = rest[position]
    if first in "'\"`":
        closing = rest.find(first, position + 1)
        return None if closing < 0 else closing + 1
    if first == "(":
        depth = 0
        while position < rest_len:
            char = rest[position]
            if char in "'\"`":
                closing = rest.find(char, position + 1)
                if closing < 0:
                    return None
                position = closing
            elif char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0:
                    return position + 1
            position += 1
        return None
    name = re.compile(r"[A-Za-z_][\w-]*").match(rest, position)
    return None if name is None else name.end()


# --- build.zig --------------------------------------------------------------------------------

_ZIG_STEP = re.compile(r"\.step\(\s*\"([^\"\\\n]{0,80})\"\s*,")


def zig_test_step(text: str) -> Found:
    """Whether build.zig declares a step `test` (`b.step("test", "...")`), outside a `//`
    comment. Other steps are named as near misses."""
    near: list[str] = []
    for count, hit in enumerate(_ZIG_STEP.finditer(text)):
        if count >= MAX_LINES:
            break
        begin = text.rfind("\n", 0, hit.start()) + 1
        if "//" in text[begin : hit.start()]:
            continue
        name = hit.group(1)
        if name == "test":
            return Found(True)
        near.append(f'"{name}"')
    return Found(False, _near(near))


# --- deno.json / deno.jsonc -------------------------------------------------------------------

# A string (kept), a comment, or a comma before a closing bracket (both dropped). An
# unterminated comment runs to the end; a string is one line at most, as in JSON.
_JSONC_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*[\s\S]*?(?:\*/|\Z)|,(?=\s*[}\]])')


MAX_JSONC_TOKENS = 60_000  # strings, comments and commas: about 0.05 s of CPU


def jsonc(text: str) -> str:
    """JSON with comments and trailing commas (Deno reads deno.json and deno.jsonc so) as
    plain JSON, for `json.loads`; linear in the text, and refused (TooCostly) past
    `MAX_JSONC_TOKENS`, far more than a configuration file holds."""
    if "/" not in text and "," not in text:
        return text
    tokens = text.count('"') // 2 + text.count("/") + text.count(",")
    if tokens > MAX_JSONC_TOKENS:
        raise TooCostly(
            f"it would take too long to read on a save ({tokens} strings, comments and commas)"
        )
    return _JSONC_TOKEN.sub(_keep_strings, text)


def _keep_strings(found: re.Match[str]) -> str:
    token = found.group(0)
    if token.startswith('"'):
        return token
    # A comment becomes a blank (it may separate two tokens) and keeps its line breaks, so
    # that a parser's line numbers stay the file's; a trailing comma becomes nothing.
    return "\n" * token.count("\n") + " " if token.startswith("/") else ""
