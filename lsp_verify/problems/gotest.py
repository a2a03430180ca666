"""`go test`: a test's own messages and panics.

A test's messages are indented under its name and name the file relative to the package's
folder, not to where `go test` ran:

    --- FAIL: TestScale (0.00s)
        scale_test.go:7: Scale(2) = 4, want 5
    FAIL	example.com/demo/scale	0.006s

So the messages of a package are held until its `FAIL	<import path>` (or `ok`) line, which
says the package; its folder is the import path less the module path of the folder's
`go.mod`. Where that does not name the file (no go.mod at the folder's root), the file is
looked for by its name in the folder, and used when exactly one has that name.

A panic (`panic: ...`, then `goroutine N [running]:` and frames of a function line and a
tab-indented `/abs/path.go:LINE +0x1d` line) lands on the failing test's frame, with the
deepest project frame (where it panicked) related; see `chain.py`.
"""

from __future__ import annotations

import os
import re

from .base import Problem
from .chain import ChainPick
from .matcher import MAX_MESSAGE_CHARS, MAX_MESSAGE_LINES, Locator, Matcher, clip_message

_MESSAGE = re.compile(
    r"(?P<indent> {4,40})(?P<file>[\w.+/-]{1,255}\.go):(?P<line>\d{1,9}): (?P<msg>.*)$"
)
_NAME = re.compile(r"\s*(?:--- FAIL:|=== RUN|=== CONT|=== NAME) +(?P<name>\S{1,300})")
_PACKAGE = re.compile(r"(?:FAIL|ok)\s+(?P<pkg>[^\s/][^\s]{0,500})\s")
_FRAME_AT = re.compile(r"\t(?P<path>/\S{1,1024}\.go):(?P<line>\d{1,9})(?: \+0x[0-9a-f]{1,16})?$")
_MAX_HELD = 200
_MAX_FIND = 20000
_SKIP_DIRS = frozenset({".git", "node_modules", "vendor", "testdata", ".venv", "venv"})


class _Panic:
    def __init__(self, start: int, message: str, chain: ChainPick, test: str) -> None:
        self.start = start
        self.message = message
        self.chain = chain
        self.test = test
        self.function = ""
        self.frames_seen = False


class GoTestMatcher(Matcher):
    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._test = ""
        # start, file, line, message, test, indentation: until the package line names the folder
        self._waiting: list[tuple[int, str, int, str, str, int]] = []
        self._panic: _Panic | None = None
        self._module: str | None = None
        self._names: dict[str, list[str]] | None = None

    def take(self, line: str) -> bool:
        if self._panic is not None and self._in_panic(self._panic, line):
            return True
        if line.startswith("panic: "):
            self._end_panic()
            chain = ChainPick(self.locator, self._test, innermost_first=True)
            text = line[:MAX_MESSAGE_CHARS].removesuffix(" [recovered]")
            self._panic = _Panic(self.index, text, chain, self._test)
            return True
        if "--- FAIL:" in line or line.startswith("=== "):
            name = _NAME.match(line)
            if name is not None:
                self._test = name.group("name")
            return False
        if line.startswith(("FAIL", "ok")):
            package = _PACKAGE.match(line + " ")
            if package is not None:
                self._release(package.group("pkg"))
            return False
        found = _MESSAGE.match(line) if ".go:" in line else None
        if found is not None:
            if len(self._waiting) < _MAX_HELD:
                self._waiting.append(
                    (
                        self.index,
                        found.group("file"),
                        int(found.group("line")),
                        found.group("msg")[:MAX_MESSAGE_CHARS],
                        self._test,
                        len(found.group("indent")),
                    )
                )
            return True
        if self._waiting and line.startswith(" " * (self._waiting[-1][5] + 4)):
            start, file, number, message, test, indent = self._waiting[-1]
            if message.count("\n") < MAX_MESSAGE_LINES and len(message) < MAX_MESSAGE_CHARS:
                message = f"{message}\n{line.strip()}"
                self._waiting[-1] = (start, file, number, message, test, indent)
            return True
        return False

    # -- messages, once the package is known ---------------------------------------------

    def _release(self, package: str | None) -> None:
        held, self._waiting = self._waiting, []
        for start, file, number, message, test, _ in held:
            path = self._locate(file, package)
            text = f"{test}: {message}" if test else message
            self.emit(start, Problem.at(path, number, 1, text, code=test or None))

    def _locate(self, file: str, package: str | None) -> str:
        folder = getattr(self.locator, "folder", None)
        if not isinstance(folder, str):
            return file
        module = self._module_path(folder)
        if package and module and (package == module or package.startswith(module + "/")):
            candidate = os.path.join(package[len(module) + 1 :], file)
            if self.locator.relative(candidate) is not None:
                return candidate
        found = self._by_name(folder).get(file, [])
        return found[0] if len(found) == 1 else file

    def _module_path(self, folder: str) -> str | None:
        if self._module is None:
            self._module = ""
            try:
                with open(os.path.join(folder, "go.mod"), encoding="utf-8") as handle:
                    for text in handle.read(64 * 1024).splitlines():
                        if text.startswith("module "):
                            self._module = text.split()[1].strip('"') if text.split()[1:] else ""
                            break
            except (OSError, UnicodeDecodeError):
                pass
        return self._module or None

    def _by_name(self, folder: str) -> dict[str, list[str]]:
        """The folder's .go files by name, looked for once (bounded)."""
        if self._names is None:
            self._names = {}
            seen = 0
            for root, dirs, files in os.walk(folder):
                dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]
                for name in files:
                    seen += 1
                    if name.endswith(".go"):
                        rel = os.path.relpath(os.path.join(root, name), folder)
                        self._names.setdefault(name, []).append(rel.replace(os.sep, "/"))
                if seen > _MAX_FIND:
                    break
        return self._names

    # -- panics ---------------------------------------------------------------------------

    def _in_panic(self, panic: _Panic, line: str) -> bool:
        if line.startswith("\tpanic: ") or not line.strip():
            return True
        if line.startswith("goroutine ") and line.endswith(":"):
            if panic.frames_seen:
                self._end_panic()  # the next goroutine: the failing one came first
                return True
            panic.frames_seen = True
            return True
        if not panic.frames_seen:
            return False
        at = _FRAME_AT.match(line)
        if at is not None:
            panic.chain.add(at.group("path"), int(at.group("line")), panic.function)
            return True
        if line.startswith("\t"):
            return True
        if "(" in line and not line.startswith(("FAIL", "ok", "exit status")):
            panic.function = line
            return True
        self._end_panic()
        return False

    def _end_panic(self) -> None:
        panic, self._panic = self._panic, None
        if panic is None:
            return
        text = clip_message([panic.message])
        message = f"{panic.test}: {text}" if panic.test else text
        problem = panic.chain.problem(message, panic.test or None, raised="panicked here")
        if problem is not None:
            self.emit(panic.start, problem)

    def flush(self) -> None:
        self._end_panic()
        self._release(None)
