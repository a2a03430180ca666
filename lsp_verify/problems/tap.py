"""TAP as Node's test tools print it: `node --test` (its default when not on a terminal, and
`--test-reporter tap`), node-tap, and `mocha --reporter tap`.

A failure is `not ok 3 - name` (mocha leaves out the dash). What follows it, indented:

- a YAML block between `---` and `...` (node --test, node-tap): `stack: |-` with frames
  without `at`, `location: '/abs/test.js:7:3'` (node --test: where the test is), `at:` (node-tap:
  where the assertion failed, a mapping or a frame), `error:`/`message:`, `name:`;
- or the message and the stack as plain lines (mocha).

Subtests print before their parent. A parent that failed because a subtest failed (node
--test says `failureType: 'subtestsFailed'`; node-tap just fails the parent, and the file)
gives no problem of its own: its subtest's is the one that says what failed. `# TODO` and
`# SKIP` failures are not failures. Where a failure lands: see `nodestack.Frames.place`.
"""

from __future__ import annotations

import re

from .base import Related
from .matcher import MAX_PATH, Locator, Matcher, split_location, to_int
from .nodestack import Failure, Frame, parse_frame, test_problem

_POINT = re.compile(r"( {0,64})(not ok|ok)\b(?: +\d{1,9})?(?: +-)?(?: (.*))?$")
_MAX_INDENTS = 64
_SUBTEST = "# Subtest: "
_AT_KEYS = ("fileName", "lineNumber", "columnNumber")


class _Block(Failure):
    def __init__(self, start: int, indent: int, title: str, locator: Locator) -> None:
        super().__init__(start, title, locator, indent)
        self.yaml_indent: int | None = None
        self.key = ""  # the YAML key whose block scalar is being read
        self.key_indent = 0
        self.location: Frame | None = None
        self.at: dict[str, str] = {}
        self.subtests_failed = False
        self.own = ""  # the point's own name: node-tap's assertion message
        self.parents = ""
        self.kind = ""  # `name:`/`type:`, the error's class


class TapMatcher(Matcher):
    unit = "utf-16"  # V8's stack frames count JavaScript string indices

    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._block: _Block | None = None
        self._failed_below: set[int] = set()
        self._subtests: dict[int, str] = {}

    def take(self, line: str) -> bool:
        if "ok" in line:
            point = _POINT.match(line)
            block = self._block
            # Deeper than an open failure: a line of its message that starts with "ok".
            if point is not None and (block is None or len(point.group(1)) <= block.indent):
                return self._on_point(point)
        if "#" in line[:200] and line.lstrip(" ").startswith(_SUBTEST):
            self._on_subtest(line)
        block = self._block
        if block is None:
            return False
        stripped = line.strip()
        indent = len(line) - len(line.lstrip(" "))
        if stripped and indent <= block.indent:
            self._close()
            return False
        if block.yaml_indent is None:
            if stripped == "---" and not block.lines:
                block.yaml_indent = indent
            elif stripped.startswith("at ") and block.lines:
                block.frame(stripped)
            else:
                block.add(line)
            return True
        if indent == block.yaml_indent and stripped == "...":
            self._close()
            return True
        self._on_yaml(block, line, stripped, indent)
        return True

    def _on_point(self, point: re.Match[str]) -> bool:
        self._close()
        indent = len(point.group(1))
        child_failed = any(level > indent for level in self._failed_below)
        self._failed_below = {level for level in self._failed_below if level <= indent}
        if point.group(2) == "ok":
            return False  # also `ok` of any other output: nothing to claim
        if len(self._failed_below) < _MAX_INDENTS:
            self._failed_below.add(indent)
        name, _, directive = (point.group(3) or "").partition(" # ")
        if directive.strip().upper().startswith(("TODO", "SKIP")) or child_failed:
            return True
        own = name.strip()[:500]
        parents = self._parents(indent)
        self._block = _Block(self.index, indent, " > ".join([*parents, own]), self.locator)
        self._block.own = own
        self._block.parents = " > ".join(parents)
        return True

    def _on_subtest(self, line: str) -> None:
        indent = len(line) - len(line.lstrip(" "))
        self._subtests = {level: name for level, name in self._subtests.items() if level < indent}
        if len(self._subtests) < _MAX_INDENTS:
            self._subtests[indent] = line.strip()[len(_SUBTEST) :][:500]

    def _parents(self, indent: int) -> list[str]:
        """The enclosing subtests' names (node-tap names a file's own subtest after the
        file: left out)."""
        return [
            title
            for level, title in sorted(self._subtests.items())
            if level < indent and not title.endswith((".js", ".mjs", ".cjs", ".ts"))
        ]

    def _on_yaml(self, block: _Block, line: str, stripped: str, indent: int) -> None:
        if block.key and (indent > block.key_indent or not stripped):
            if block.key == "stack":
                block.frames.add(parse_frame(stripped, bare=True))
            elif block.key == "at":
                key, _, value = stripped.partition(": ")
                if key in _AT_KEYS:
                    block.at[key] = value.strip()[:MAX_PATH]
            elif block.key in ("error", "message"):
                block.add(stripped)
            return
        key, colon, value = stripped.partition(":")
        if not colon:
            return
        value = _unquote(value.strip())
        block.key, block.key_indent = "", indent
        if value in ("|", "|-", "|+", ">", ">-", ""):
            block.key = key  # a block or a mapping follows, more indented
        elif key == "location":
            block.location = split_location(value)
        elif key == "at":
            block.frames.add(parse_frame(value, bare=True))
        elif key in ("error", "message"):
            block.add(value)
        elif key in ("name", "type") and value:
            block.kind = value
        elif key == "failureType" and value == "subtestsFailed":
            block.subtests_failed = True

    def _close(self) -> None:
        block, self._block = self._block, None
        if block is None or block.subtests_failed:
            return
        test_file = block.location[0] if block.location else None
        place = block.frames.place(test_file)
        if place is None:
            place = self._fallback(block)
        if place is not None:
            lines = [line for line in block.lines if line.strip()]
            title = block.title
            if not lines:
                # node-tap names an assertion by its message, below the test's subtest.
                lines, title = [block.own], block.parents or block.title
            if block.kind and " " not in block.kind and block.yaml_indent is not None:
                lines = [f"{block.kind}: {lines[0].strip()}", *lines[1:]]
            self.emit(*test_problem(block.start, title, lines, place))

    def _fallback(self, block: _Block) -> tuple[Frame, tuple[Related, ...]] | None:
        at = block.at
        if "fileName" in at and self.locator.is_project(at["fileName"]):
            line, column = to_int(at.get("lineNumber")), to_int(at.get("columnNumber"))
            return (at["fileName"], line, column), ()
        if block.location is not None and self.locator.is_project(block.location[0]):
            return block.location, ()
        return None

    def flush(self) -> None:
        self._close()


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1].replace("''", "'")
    return value
