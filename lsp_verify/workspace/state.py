"""The server's state: one object that holds the folders and finds the innermost one, the
client's options, the diagnostics, the trust store and the tasks it keeps, and speaks to the
client through its UI.

What is done with the state lives in modules of functions that take it: `triggers` (what a
save, a change or an open triggers), `run` (one run, from plan to published record),
`configure` (settings from the client), `commands` (the `verify.*` commands' work) and
`watched` (files changed on disk). No pygls here; a test drives it with a fake UI.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Callable

from lsp_verify.config.settings import InitOptions, LogLevel
from lsp_verify.logs import log_failures
from lsp_verify.results.diagnostics import Diagnostics, read_line
from lsp_verify.uris import relative_to, uri_to_path
from lsp_verify.workspace import run
from lsp_verify.workspace.folder import Folder
from lsp_verify.workspace.ui import UI

if TYPE_CHECKING:
    from lsp_verify.record import Record
    from lsp_verify.trust import TrustStore
    from lsp_verify.workspace.run_file import RunFile

log = logging.getLogger("lsp_verify")

MAX_SHOWN = 10  # problems a session shows as pop-ups (settings, trust); the log has every one
MAX_REMEMBERED = 1000  # problems remembered as said (a flood of distinct ones is logged)


class State:
    def __init__(self, ui: UI, options: InitOptions | None = None) -> None:
        self.ui = ui
        self.folders: dict[str, Folder] = {}  # by path
        self.options = options or InitOptions()
        self.diagnostics = Diagnostics(functools.partial(run.publish, self), self.is_open)
        self.closing = False  # the server stops: nothing more is sent
        self._warned: set[str] = set()
        self._shown = 0  # problems shown as pop-ups so far
        self._trust: TrustStore | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._run_files: dict[str, RunFile] = {}  # by folder path, for agentHooks

    @property
    def trust(self) -> TrustStore:
        if self._trust is None:
            from lsp_verify.trust import TrustStore

            self._trust = TrustStore()
        return self._trust

    # ----- the folders -----

    def add_folder(self, uri: str) -> Folder | None:
        path = uri_to_path(uri)
        if path is None:
            self.log(f"ignoring workspace folder {uri}: not a file:// folder")
            return None
        if path not in self.folders:
            self.folders[path] = Folder(
                path,
                uri,
                functools.partial(run.job, self),
                functools.partial(run.on_record, self),
                self.send_status,
                self.diagnostics.set_config,
            )
        return self.folders[path]

    def remove_folder(self, uri: str) -> None:
        """A folder left the workspace: stop its runs, then withdraw its diagnostics."""
        path = uri_to_path(uri)
        folder = self.folders.pop(path, None) if path else None
        if folder is not None:
            self.spawn(self._retire(folder))

    async def _retire(self, folder: Folder) -> None:
        await folder.verifier.close()

        def was_its(uri: str) -> bool:
            path = uri_to_path(uri)
            return (
                path is not None
                and relative_to(folder.path, path) is not None
                and self.folder_of(path) is None
            )

        self.diagnostics.replace_verify({}, was_its)

    def edit_saved(self, folder: Folder, uri: str) -> None:
        """An edit of `uri` on disk triggered a run of `folder`."""
        self.diagnostics.saved(uri)
        if self.options.agent_hooks:
            self._write(self._run_file(folder).saved(time.time()))

    def edit_passed_over(self, folder: Folder) -> None:
        """A save in `folder` that its settings do not run for."""
        if self.options.agent_hooks:
            self._write(self._run_file(folder).ignored(time.time()))

    def run_ended(self, folder: Folder, record: Record, needs_approval: bool) -> None:
        if self.options.agent_hooks:
            run_file = self._run_file(folder)
            self._write(run_file.finished(record, folder.began, needs_approval))

    def _run_file(self, folder: Folder) -> RunFile:
        from lsp_verify.workspace.run_file import RunFile

        run_file = self._run_files.get(folder.path)
        if run_file is None:
            run_file = self._run_files[folder.path] = RunFile(folder.path)
        return run_file

    def _write(self, error: str | None) -> None:
        if error is not None:
            self.log(error, "warning")

    def folder_of(self, path: str) -> Folder | None:
        """The innermost workspace folder holding `path`."""
        best: Folder | None = None
        for folder in self.folders.values():
            if relative_to(folder.path, path) is not None and (
                best is None or len(folder.path) > len(best.path)
            ):
                best = folder
        return best

    def folder_of_uri(self, uri: str) -> tuple[Folder | None, str | None]:
        path = uri_to_path(uri)
        return (self.folder_of(path) if path is not None else None), path

    def holds(self, folder: Folder) -> Callable[[str], bool]:
        """Whether a document is the folder's (the innermost folder that holds it)."""

        def in_folder(uri: str) -> bool:
            return self.folder_of_uri(uri)[0] is folder

        return in_folder

    def is_open(self, uri: str) -> bool:
        return self.ui.document_text(uri) is not None

    def line_text(self, uri: str, line: int) -> str | None:
        """A document's line as the client has it open, else as it is on disk."""
        source = self.ui.document_text(uri)
        if source is not None:
            lines = source.splitlines()
            return lines[line] if 0 <= line < len(lines) else None
        path = uri_to_path(uri)
        return read_line(path, line) if path is not None else None

    # ----- speaking to the client -----

    def send_status(self, folder: Folder) -> None:
        # A run still at the gate may be declined without a process: "running" would be untrue.
        if folder.verifier.state != "idle" and folder.stage == "gate":
            return
        if not self.closing:
            self.ui.send_status(folder.status())

    def log(self, text: str, level: LogLevel = "log") -> None:
        log.info("%s", text)
        if not self.closing:
            self.ui.log(text, level)

    def first_time(self, key: str) -> bool:
        """Whether `key` comes up for the first time this session (what is said once)."""
        if key in self._warned:
            return False
        if len(self._warned) < MAX_REMEMBERED:
            self._warned.add(key)
        return True

    def warn_once(self, text: str) -> None:
        """A problem with the settings is shown once (showMessage) and logged, never
        repeated; past MAX_SHOWN of them in a session, only logged (each is a pop-up)."""
        if not self.first_time(text):
            return
        self.log(text, "warning")
        if self.closing:
            return
        self._shown += 1
        if self._shown <= MAX_SHOWN:
            self.ui.show_warning(text)
        elif self._shown == MAX_SHOWN + 1:
            self.ui.show_warning("verify: more problems with the settings; the log has them all")

    def trust_warnings(self) -> None:
        for warning in self.trust.take_warnings():
            self.warn_once(warning)

    # ----- lifetime -----

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` as a task the state keeps a reference to until it ends; its failure is
        logged."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log_failures("a background task", [task.exception()])

    async def close_all(self) -> None:
        """Cancel every folder's runs and wait until their processes are dead."""
        results = await asyncio.gather(
            *(f.verifier.close() for f in list(self.folders.values())), return_exceptions=True
        )
        log_failures("stopping a folder's runs", results)
