"""A program in a terminal of fixed size, driven by keys and read as the screen a user sees.

tmux holds the terminal: `new-session -d -x W -y H` runs the program, `send-keys` types,
`capture-pane -p` reads the screen as text (`-e` with the colours). Each terminal has its
own tmux server on a socket under the test's folder, so nothing touches the user's tmux,
and `close()` kills that server whatever happened.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

# A Unix socket's path must fit in about 104 bytes; longer folders get a short one in /tmp.
_SOCKET_PATH_MAX = 100


class ScreenTimeout(AssertionError):
    """The screen did not show what was awaited in time; the message holds the last screen."""


class Terminal:
    def __init__(
        self,
        tmux: str,
        folder: Path,
        argv: Sequence[str],
        *,
        env: dict[str, str],
        cwd: Path,
        size: tuple[int, int] = (110, 30),
    ) -> None:
        self._tmux = tmux
        self._env = env
        self._short: tempfile.TemporaryDirectory[str] | None = None
        socket = folder / "tmux.sock"
        if len(str(socket)) > _SOCKET_PATH_MAX:
            self._short = tempfile.TemporaryDirectory(prefix="lsp-verify-tmux-")
            socket = Path(self._short.name) / "sock"
        self.socket = socket
        width, height = size
        # -f /dev/null: no tmux configuration but the defaults; no status line, so the
        # program has the whole terminal, as in a plain terminal window.
        try:
            self._tmux_run(
                "-f", "/dev/null", "new-session", "-d", "-x", str(width), "-y", str(height),
                "-c", str(cwd), "--", *argv,
            )  # fmt: skip
            self._tmux_run("set-option", "-g", "status", "off")
        except BaseException:
            self.close()
            raise

    def _tmux_run(self, *args: str) -> str:
        proc = subprocess.run(
            [self._tmux, "-u", "-S", str(self.socket), *args],
            env=self._env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)} exited {proc.returncode}: {proc.stderr!r}")
        return proc.stdout.decode("utf-8", errors="replace")

    def keys(self, *keys: str) -> None:
        """Type: each argument is a key name tmux knows (Enter, Escape) or literal text."""
        self._tmux_run("send-keys", "-t", "0", *keys)

    def type(self, text: str) -> None:
        """Type this text literally (no key names), as a user would."""
        self._tmux_run("send-keys", "-t", "0", "-l", text)

    def screen(self, *, colour: bool = False) -> str:
        """What the terminal shows now: one line per row, trailing blanks dropped."""
        flags = ["-p", "-e"] if colour else ["-p"]
        text = self._tmux_run("capture-pane", "-t", "0", *flags)
        return "\n".join(line.rstrip() for line in text.split("\n")).rstrip("\n") + "\n"

    def wait_for(self, shows: Callable[[str], bool], what: str, *, timeout: float = 60.0) -> str:
        """Poll the screen until `shows(screen)`; the screen then, or ScreenTimeout."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if shows(text):
                return text
            if time.monotonic() > deadline:
                raise ScreenTimeout(f"after {timeout:.0f} s the screen shows no {what}:\n{text}")
            time.sleep(0.1)

    def wait_for_text(self, *needles: str, timeout: float = 60.0) -> str:
        return self.wait_for(
            lambda text: all(n in text for n in needles),
            " and ".join(map(repr, needles)),
            timeout=timeout,
        )

    def wait_for_match(self, pattern: str, *, timeout: float = 60.0) -> re.Match[str]:
        regex = re.compile(pattern, re.MULTILINE)
        text = self.wait_for(lambda s: regex.search(s) is not None, repr(pattern), timeout=timeout)
        found = regex.search(text)
        assert found is not None
        return found

    def alive(self) -> bool:
        try:
            self._tmux_run("has-session")
        except (RuntimeError, subprocess.TimeoutExpired):
            return False
        return True

    def wait_closed(self, timeout: float = 30.0) -> bool:
        """Whether the program ended (and with it the session) within the timeout."""
        deadline = time.monotonic() + timeout
        while self.alive():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        return True

    def close(self) -> None:
        """Kill the tmux server and the program in it, if they are still there."""
        with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
            self._tmux_run("kill-server")
        if self._short is not None:
            self._short.cleanup()
