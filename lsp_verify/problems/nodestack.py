"""Node stack traces: their frames, which frame a failure lands on, and uncaught errors.

A V8 frame is `at fn (path:line:col)`, `at path:line:col`, `at async fn (file:///…)` or, in
YAML stacks (node --test, node-tap), the same without `at`. Only frames with a line and a
column count (Java's `at a.B(B.java:3)` does not), never `node:internal/…`, `<anonymous>` or
an `http://` URL, and a frame is project code only inside the folder and outside
node_modules.

`place` chooses for a test runner's failure: the failing test is the diagnostic, at its
deepest frame in the test file (the assertion, or the call into the code that threw); the
deepest project frame elsewhere (the line in lib/calc.js that threw) is related information.
The test file is the runner's when it says (node --test, ava), else the file of the
shallowest project frame, since runners call tests from their own code.

`NodeStackMatcher` reads what no runner claimed: an error line followed by `at` frames, as
Node prints an uncaught exception. The problem lands on the first project frame (where it
was thrown); when there is none (a SyntaxError while loading), on the `path:line` header
Node prints above the source line.
"""

from __future__ import annotations

import collections
import re
from urllib.parse import unquote

from .base import Problem, Related
from .matcher import MAX_PATH, Locator, Matcher, clip_message, dedent

Frame = tuple[str, int, int]

MAX_FRAMES = 40
MAX_LINES = 60
_RECENT = 24
# `TypeError: x`, `AssertionError [ERR_ASSERTION]: x`, `Error: x`: a class named like an error.
_ERROR_HEADER = re.compile(
    r"\s*(?:Uncaught )?(?P<name>[A-Za-z_$][\w$.]{0,99}(?:Error|Exception|Warning)|Error)"
    r"(?: \[[\w$]{1,64}\])?:(?: |$)"
)
_CAUSE = ("[cause]:", "Caused by:")
_NUMBERS = re.compile(r"[\d:.,+\[\]T -]+")
_SOURCE_HEADER = re.compile(r"(\S{1,1024}):(\d{1,9})$")


def parse_frame(text: str, bare: bool = False) -> Frame | None:
    """A stack frame of the folder's kind (file path, line and column), or None.

    `text` is stripped; with `bare`, the `at ` prefix is optional (YAML stacks)."""
    if text.startswith("at "):
        text = text[3:].strip()
    elif not bare:
        return None
    if text.endswith(" {"):
        text = text[:-2]  # node --test prints the error's own properties after the frames
    if text.endswith(")"):
        opening = text.rfind("(")
        if opening < 0:
            return None
        text = text[opening + 1 : -1]
    elif " " in text:
        return None
    return _location(text)


def _location(text: str) -> Frame | None:
    parts = text.rsplit(":", 2)
    if len(parts) != 3 or not _number(parts[1]) or not _number(parts[2]):
        return None
    path = parts[0]
    if len(path) > MAX_PATH:
        return None
    if path.startswith("file://"):
        path = unquote(path[len("file://") :])
        if path.startswith("localhost/"):
            path = path[len("localhost") :]
    elif not plausible_path(path):
        return None
    if not path:
        return None
    return path, int(parts[1]), int(parts[2])


def plausible_path(path: str) -> bool:
    """False for what only looks like a path beside a line number: a URL (`http://h:80/a.js`),
    Node's own modules (`node:internal/…`, `<anonymous>`, `native`), a time (`12:30:45`)."""
    if not path or "://" in path or path.startswith(("node:", "<", "data:", "native")):
        return False
    return _NUMBERS.fullmatch(path) is None


def _framelike(stripped: str) -> bool:
    """`at X (…)` or `at …:1:2` that is no frame of ours (node:internal, native, a URL)."""
    return stripped.endswith(")") or stripped[-1:].isdigit()


def _number(text: str) -> bool:
    return 0 < len(text) <= 9 and text.isdigit() and text.isascii()


class Frames:
    """The project frames of one stack, deepest first, at most MAX_FRAMES of them."""

    __slots__ = ("frames", "locator")

    def __init__(self, locator: Locator) -> None:
        self.locator = locator
        self.frames: list[Frame] = []

    def add(self, frame: Frame | None) -> bool:
        if frame is None:
            return False
        if len(self.frames) < MAX_FRAMES and self.locator.is_project(frame[0]):
            self.frames.append(frame)
        return True

    def place(self, test_file: str | None = None) -> tuple[Frame, tuple[Related, ...]] | None:
        """Where a failing test lands, and the deeper frame that raised as related."""
        if not self.frames:
            return None
        relative = self.locator.relative
        test = relative(test_file) if test_file else None
        if test is None or not any(relative(frame[0]) == test for frame in self.frames):
            test = relative(self.frames[-1][0])
        chosen = next(frame for frame in self.frames if relative(frame[0]) == test)
        raised = self.frames[0]
        if relative(raised[0]) == test:
            return chosen, ()
        return chosen, (Related(raised[0], raised[1], raised[2], "raised here"),)


class Failure:
    """One failed test as a runner prints it: where it starts in the output, its title, the
    message lines (at most MAX_LINES) and the frames below them."""

    def __init__(self, start: int, title: str, locator: Locator, indent: int = 0) -> None:
        self.start = start
        self.title = title
        self.indent = indent
        self.lines: list[str] = []
        self.frames = Frames(locator)
        self.in_frames = False

    def add(self, line: str) -> None:
        if not self.in_frames and len(self.lines) < MAX_LINES:
            self.lines.append(line)

    def frame(self, text: str, bare: bool = False) -> None:
        self.in_frames = True
        self.frames.add(parse_frame(text, bare))


def error_message(lines: list[str]) -> str:
    """The message of an error printed before its frames. When the runner printed the
    message and then the stack's own header (`Error: message`), from that header on."""
    start = next((n for n, line in enumerate(lines) if _ERROR_HEADER.match(line)), 0)
    return clip_message(dedent(lines[start:]))


def error_name(message: str) -> str | None:
    """The error's class (`TypeError`), when the message starts with one."""
    found = _ERROR_HEADER.match(message)
    return found.group("name") if found else None


def test_problem(
    start: int, title: str, lines: list[str], place: tuple[Frame, tuple[Related, ...]]
) -> tuple[int, Problem]:
    """A runner's failure: "<title>: <message>", coded by the test's title."""
    (path, line, column), related = place
    message = error_message(lines) or "failed"
    return start, Problem.at(
        path, line, column, message=f"{title}: {message}", code=title, related=related
    )


class NodeStackMatcher(Matcher):
    """An error line and its `at` frames that no test runner's matcher claimed."""

    unit = "utf-16"  # V8's stack frames count JavaScript string indices

    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._recent: collections.deque[str] = collections.deque(maxlen=_RECENT)
        self._frames: Frames | None = None
        self._header: list[str] = []
        self._source: tuple[str, int] | None = None
        self._node = False
        self._start = 0

    def take(self, line: str) -> bool:
        stripped = line.strip()
        if stripped.startswith("at ") and line.startswith((" ", "\t")):
            frame = parse_frame(stripped)
            if frame is None and self._frames is None and not _framelike(stripped):
                return self._remember(line)
            if self._frames is None:
                self._begin()
            assert self._frames is not None
            self._frames.add(frame)
            # Node's own frames say it is Node's stack, not another runtime's `at` lines.
            self._node = self._node or frame is not None or "node:" in stripped
            return True
        if self._frames is not None:
            if stripped.startswith("... ") and stripped.endswith(" ..."):
                return True  # `... 6 lines matching cause stack trace ...`
            self._close()
        return self._remember(line)

    def _remember(self, line: str) -> bool:
        self._recent.append(line)
        return False

    def _begin(self) -> None:
        self._frames = Frames(self.locator)
        self._start = self.index
        recent = list(self._recent)
        self._recent.clear()
        self._header, self._source = _header_of(recent)
        self._node = False

    def _close(self) -> None:
        frames, self._frames = self._frames, None
        if frames is None:
            return
        message = clip_message(dedent(self._header)) or "uncaught error"
        if message.startswith(_CAUSE):
            return  # the cause of the error just reported, with its own frames
        if frames.frames:
            path, line, column = frames.frames[0]
        elif self._source is not None and self._node:
            path, line, column = self._source[0], self._source[1], 1
        else:
            return
        self.emit(
            self._start, Problem.at(path, line, column, message=message, code=error_name(message))
        )

    def flush(self) -> None:
        self._close()


def _header_of(recent: list[str]) -> tuple[list[str], tuple[str, int] | None]:
    """The error's message lines (from its `Error:` line down to the frames) and the
    `path:line` Node prints above the source line of an uncaught error (also above the blank
    lines of a SyntaxError at the end of a file), if any."""
    end = len(recent)
    while end and not recent[end - 1].strip():
        end -= 1
    start = end - 1 if end else 0
    for number in range(end - 1, -1, -1):
        if _ERROR_HEADER.match(recent[number]):
            start = number
            break
    source: tuple[str, int] | None = None
    for line in recent[:start]:
        found = _SOURCE_HEADER.match(line)
        if found is not None and plausible_path(found.group(1)):
            source = (found.group(1), int(found.group(2)))
    return recent[start:end], source
