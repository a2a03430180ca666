"""jest and vitest failure reports.

jest:   `FAIL src/sum.test.js`, then per failure a `● sum (U+203A) adds` title, the message
        (with its Expected/Received lines), a code frame, and `at fn (src/x.test.js:5:23)`
        frames.
vitest: ` FAIL  src/sum.test.ts > sum > adds`, the message, then frames marked with U+276F
        (`src/sum.test.ts:6:23`, or `fn path:line:col`) and code frames, blocks separated by
        `⎯⎯⎯` lines.

The problem lands on the failing test: the first stack frame that is project code (inside
the folder, not in node_modules) when that is the assertion in the test; when it is a project
function that threw, on the frame in the test file, with the throwing line related (see
chain.py). Message: "<test name>: <message>";
code: the test name. A failure with no project frame lands on the test's own `it(`/`test(`
line when it can be found, else on the test file's first line.
"""

from __future__ import annotations

from .base import Problem, Related
from .matcher import Locator, Matcher, clip_message, dedent, split_location

_MAX_FRAMES = 40
_MAX_MESSAGE_LINES = 40
_VITEST_ARROWS = ("\u276f ", "> ")
_JEST_SEPARATOR = " \u203a "


class _Block:
    def __init__(self, start: int, kind: str, file: str | None, name: str) -> None:
        self.start = start
        self.kind = kind  # jest | vitest
        self.file = file
        self.name = name
        self.message: list[str] = []
        self.reading = True
        self.frames: list[tuple[str, int, int]] = []


class JestMatcher(Matcher):
    unit = "utf-16"  # V8's stack frames count JavaScript string indices

    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._suite: str | None = None
        self._block: _Block | None = None

    def take(self, line: str) -> bool:
        stripped = line.strip()
        if stripped.startswith(("FAIL ", "PASS ")):
            return self._on_result(stripped)
        if stripped.startswith("● "):
            self._close()
            self._block = _Block(self.index, "jest", self._suite, stripped[2:].strip())
            return True
        if stripped.startswith("\u23af"):
            title = stripped.strip("\u23af ")
            if title in ("Unhandled Error", "Unhandled Rejection"):
                # vitest: an error outside any test, with frames like a failure's.
                self._close()
                self._block = _Block(self.index, "vitest", None, title)
                return True
        block = self._block
        if block is None:
            return False
        if block.kind == "vitest":
            if stripped.startswith("⎯") or stripped.startswith("Test Files "):
                self._close()
                return True
        elif stripped and not line.startswith(" "):
            # jest indents everything that belongs to a failure.
            self._close()
            return False
        self._on_block_line(block, line, stripped)
        return True

    def _on_result(self, stripped: str) -> bool:
        self._close()
        word, rest = stripped[:4], stripped[4:].strip()
        if word == "PASS":
            self._suite = None
            return False
        if " > " in rest:
            file, name = rest.split(" > ", 1)
            self._block = _Block(self.index, "vitest", file.strip(), name.strip())
        elif " [ " in rest:
            file = rest.split(" [ ", 1)[0].strip()
            self._block = _Block(self.index, "vitest", file, file)
        else:
            # jest's suite line; " (5.2 s)" may follow the file when the suite was slow.
            self._suite = rest.split(" (", 1)[0].strip() or None
        return True

    def _on_block_line(self, block: _Block, line: str, stripped: str) -> None:
        frame = _frame(block.kind, stripped)
        if frame is not None:
            block.reading = False
            if len(block.frames) < _MAX_FRAMES:
                block.frames.append(frame)
            return
        if _is_code_frame(stripped):
            block.reading = False
            return
        if block.reading and len(block.message) < _MAX_MESSAGE_LINES:
            block.message.append(line)

    def _close(self) -> None:
        block = self._block
        self._block = None
        if block is None:
            return
        message = clip_message(dedent(block.message)) or "failed"
        if block.name == "Test suite failed to run" and block.file:
            # jest's name for a suite that could not load; the file says more.
            message = f"{block.name}: {message}"
            block.name = block.file
        message = f"{block.name}: {message}"
        project = [frame for frame in block.frames if self.locator.is_project(frame[0])]
        related: tuple[Related, ...] = ()
        test_file = self.locator.relative(block.file) if block.file else None
        if project:
            path, line, column = project[0]
            if test_file is not None and self.locator.relative(path) != test_file:
                for other in project[1:]:
                    if self.locator.relative(other[0]) == test_file:
                        # The failing test is the diagnostic; where it threw is related.
                        related = (Related(path, line, column, "raised here"),)
                        path, line, column = other
                        break
        elif block.file is not None and test_file is not None:
            path, line, column = block.file, self._test_line(block), 1
        elif block.frames:
            path, line, column = block.frames[0]  # outside the folder: the collector drops it
        else:
            return
        self.emit(
            block.start,
            Problem.at(
                path,
                line,
                column,
                message=message,
                code=block.name,
                related=related,
            ),
        )

    def _test_line(self, block: _Block) -> int:
        if block.file is None:
            return 1
        last = block.name.replace(_JEST_SEPARATOR, " > ").rsplit(" > ", 1)[-1]
        starts = tuple(
            f"{call}({quote}{last}{quote}" for call in ("it", "test") for quote in ('"', "'", "`")
        )
        return self.locator.find_line(block.file, starts) or 1

    def flush(self) -> None:
        self._close()


def _frame(kind: str, stripped: str) -> tuple[str, int, int] | None:
    if stripped.startswith("at "):
        text = stripped[3:].strip()
        if text.endswith(")") and "(" in text:
            text = text[text.rfind("(") + 1 : -1]
    elif kind == "vitest" and stripped.startswith(_VITEST_ARROWS):
        text = stripped[2:].strip().rsplit(" ", 1)[-1]
    else:
        return None
    if text.startswith("file://"):
        text = text[len("file://") :]
    return split_location(text)


def _is_code_frame(stripped: str) -> bool:
    """`> 5 |   expect(...)`, `3 | ...`, `   |    ^` (jest) or `4| ...` (vitest)."""
    text = stripped[1:].lstrip() if stripped.startswith(">") else stripped
    digits = len(text) - len(text.lstrip("0123456789"))
    rest = text[digits:].lstrip(" ")
    return rest.startswith("|") and (digits > 0 or text.startswith("|"))
