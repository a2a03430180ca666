"""ExUnit (`mix test`): a numbered failure, the test's own line, the message, the stacktrace.

      1) test calls project code (CalcTest)
         test/calc_test.exs:12
         ** (ArgumentError) bad value 5
         code: Calc.boom(5)
         stacktrace:
           (calc 0.1.0) lib/calc.ex:5: Calc.boom/1
           test/calc_test.exs:13: (test)

The failing test is the diagnostic, at its frame in the stacktrace (else the line under its
name), and the deepest project frame is related. A frame that names an application, `(calc
0.1.0) lib/calc.ex:5`, is relative to that application's folder: only the project's own
application (`app: :calc` in mix.exs) is a place in the folder; Elixir's, ExUnit's and a
dependency's (`(elixir 1.14.0) lib/enum.ex:...`) are never located, even where the project
has a file of the same relative path. A compile error, `** (CompileError) lib/calc.ex:3:
...`, lands where it says.
"""

from __future__ import annotations

import os
import re

from .base import Problem
from .chain import ChainPick
from .matcher import Locator, Matcher, clip_message, keep_line

_HEAD = re.compile(r"\s{1,6}\d{1,6}\) (?P<name>.{1,500}) \((?P<module>[\w.]{1,300})\)$")
_WHERE = re.compile(r"\s{3,12}(?P<path>[^\s:()][^\s:]{0,1023}\.exs?):(?P<line>\d{1,9})$")
_FRAME = re.compile(
    r"\s{5,16}(?:\((?P<app>[\w]{1,100}) [^)\s]{1,40}\) )?"
    r"(?P<path>[^\s:()][^\s:]{0,1023}\.(?:exs?|erl)):(?P<line>\d{1,9}): ?(?P<fn>.{0,300})$"
)
_RAISED = re.compile(
    r"\*\* \((?P<kind>\w{1,100}Error)\) (?P<path>[^\s:()][^\s:]{0,1023}\.exs?):(?P<line>\d{1,9})"
    r"(?::\d{1,9})?: (?P<msg>.*)$"
)
_APP = re.compile(r"\bapp:\s*:(\w{1,100})")


class _Failure:
    def __init__(self, start: int, name: str, chain: ChainPick) -> None:
        self.start = start
        self.name = name
        self.chain = chain
        self.where: tuple[str, int] | None = None
        self.lines: list[str] = []
        self.frames = False


class ExUnitMatcher(Matcher):
    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._failure: _Failure | None = None
        self._app: str | None = None

    def take(self, line: str) -> bool:
        head = _HEAD.match(line) if ") " in line else None
        if head is not None:
            self._close()
            name = f"{head.group('module')}: {head.group('name')}"
            chain = ChainPick(self.locator, "(test)", innermost_first=True)
            self._failure = _Failure(self.index, name, chain)
            return True
        failure = self._failure
        if failure is None:
            raised = _RAISED.match(line) if line.startswith("** (") else None
            if raised is not None:
                message = f"{raised.group('kind')}: {raised.group('msg')}"
                where = (raised.group("path"), int(raised.group("line")))
                self.emit(self.index, Problem.at(*where, 1, message, code=raised.group("kind")))
                return True
            return False
        if not line.strip():
            if failure.frames:
                self._close()
            return True
        if not line.startswith("  "):
            self._close()  # every line of a failure is indented: this one is after it
            return False
        if failure.where is None and not failure.lines:
            defined = _WHERE.match(line)
            if defined is not None:
                failure.where = (defined.group("path"), int(defined.group("line")))
                return True
        if line.strip() == "stacktrace:":
            failure.frames = True
            return True
        if failure.frames:
            frame = _FRAME.match(line)
            if frame is None:
                self._close()
                return False
            app = frame.group("app")
            if app is None or app == self._project_app():
                fn = frame.group("fn").strip()
                failure.chain.add(frame.group("path"), int(frame.group("line")), fn)
            return True
        keep_line(failure.lines, line.strip())
        return True

    def _project_app(self) -> str | None:
        """The application mix.exs names (`app: :calc`), read once; "" when none."""
        if self._app is None:
            self._app = ""
            folder = getattr(self.locator, "folder", None)
            if isinstance(folder, str):
                try:
                    with open(os.path.join(folder, "mix.exs"), encoding="utf-8") as handle:
                        found = _APP.search(handle.read(64 * 1024))
                except (OSError, UnicodeDecodeError):
                    found = None
                if found is not None:
                    self._app = found.group(1)
        return self._app or None

    def _close(self) -> None:
        failure, self._failure = self._failure, None
        if failure is None:
            return
        message = f"{failure.name}: {clip_message(failure.lines) or 'failed'}"
        problem = failure.chain.problem(message, failure.name)
        if problem is None and failure.where is not None:
            problem = Problem.at(*failure.where, 1, message, code=failure.name)
        if problem is not None:
            self.emit(failure.start, problem)

    def flush(self) -> None:
        self._close()
