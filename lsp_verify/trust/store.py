"""The approval store: one JSON file of decisions per folder and plan fingerprint.

A command that comes from the repository (project file, script, detected plan) runs only once
the user approved that exact plan. Decisions are kept per folder and plan fingerprint in one
JSON file in the user's state directory, never in the repository.

The store never raises on what a user or another program can do to its file: a corrupt,
empty, unreadable or foreign file, or one that is not a regular file (a FIFO is never
opened for reading, so it cannot block), reads as empty and yields one warning
(`take_warnings`), and a write that cannot happen makes `approve`/`refuse` return False with
a warning.

Writes take an exclusive `flock` on a sibling lock file, re-read the file, merge their one
change and atomically replace the file, so servers writing at the same time never lose each
other's decisions. Reads take no lock: the file is only ever replaced whole.

The calls are blocking file I/O (microseconds normally; a write may wait up to
`LOCK_TIMEOUT_S` for another writer), so the server should call them off the event loop.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

from lsp_verify.config.project_file import read_limited
from lsp_verify.planning.plan import Plan, plan_fingerprint
from lsp_verify.record import now_iso

if sys.platform != "win32":
    import fcntl

FORMAT_VERSION = 1
STORE_NAME = "approvals.json"
APPROVED = "approved"
REFUSED = "refused"
VERDICTS = (APPROVED, REFUSED)
# Old decisions of a folder only matter if its plan changes back; keep the store small.
MAX_DECISIONS_PER_FOLDER = 32
# Far above any store this program writes; a bigger file is not ours.
MAX_STORE_BYTES = 8 * 1024 * 1024
LOCK_TIMEOUT_S = 5.0


_T = TypeVar("_T")
_Folders = dict[str, dict[str, "Decision"]]


@dataclass(frozen=True)
class Decision:
    """One stored answer for a folder's plan. `decided_at` is ISO 8601 UTC."""

    folder: str
    fingerprint: str
    verdict: str
    command: str | None
    source: str | None
    decided_at: str
    manifest: str | None = None


def needs_question(plan: Plan) -> bool:
    """True when the plan's command comes from the repository and so needs the user's yes:
    every source but the user's own settings (project file, script, detected, and the
    workspace's settings that a client passes on as `workspaceCommand`)."""
    return plan.command is not None and plan.source not in (None, "settings")


def state_dir() -> Path:
    """`$XDG_STATE_HOME/lsp-verify`, else `~/.local/state/lsp-verify`.

    A relative or empty XDG_STATE_HOME is ignored, as the XDG spec says. Raises RuntimeError
    when neither it nor a home directory can be found (TrustStore turns that into a warning):
    a relative fallback would land in the working directory, which may be the repository.
    """
    xdg = os.environ.get("XDG_STATE_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "lsp-verify"
    try:
        home = Path.home()
    except (RuntimeError, KeyError) as exc:
        raise RuntimeError(f"no home directory and no XDG_STATE_HOME: {exc}") from None
    if not home.is_absolute():
        raise RuntimeError("no home directory and no XDG_STATE_HOME")
    return home / ".local" / "state" / "lsp-verify"


def _folder_key(folder: str) -> str:
    return os.path.realpath(folder)


def _read_store_bytes(path: Path) -> bytes:
    # As settings files are read: non-blocking (a FIFO put in the store's place cannot hang
    # the server or `lsp-verify approve`), regular files only, and never more than the limit.
    return read_limited(str(path), MAX_STORE_BYTES)


@dataclass(frozen=True)
class _Loaded:
    folders: _Folders
    problem: str | None = None
    # Written by a newer lsp-verify: read as empty and never overwritten.
    newer: bool = False


def _opt_str(value: object) -> bool:
    return value is None or isinstance(value, str)


def _parse(data: bytes) -> _Loaded:
    if not data.strip():
        return _Loaded({}, "is empty")
    if len(data) > MAX_STORE_BYTES:
        return _Loaded({}, f"is larger than {MAX_STORE_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _Loaded({}, f"is not UTF-8 ({exc.reason} at byte {exc.start})")
    try:
        raw: Any = json.loads(text)
    except ValueError as exc:
        return _Loaded({}, f"is not valid JSON ({exc})")
    if not isinstance(raw, dict):
        return _Loaded({}, f"holds a JSON {type(raw).__name__}, not an object")
    version = raw.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION:
        return _Loaded({}, f"has format version {version}, newer than this lsp-verify", True)
    if version != FORMAT_VERSION or not isinstance(raw.get("folders"), dict):
        return _Loaded({}, f'is not an approval store (needs "version": {FORMAT_VERSION})')
    folders: _Folders = {}
    dropped = 0
    for folder, entries in raw["folders"].items():
        if not isinstance(entries, dict):
            dropped += 1
            continue
        for fingerprint, entry in entries.items():
            if (
                isinstance(entry, dict)
                and entry.get("verdict") in VERDICTS
                and isinstance(entry.get("decidedAt"), str)
                and _opt_str(entry.get("command"))
                and _opt_str(entry.get("source"))
                and _opt_str(entry.get("manifest"))
            ):
                folders.setdefault(folder, {})[fingerprint] = Decision(
                    folder=folder,
                    fingerprint=fingerprint,
                    verdict=entry["verdict"],
                    command=entry.get("command"),
                    source=entry.get("source"),
                    decided_at=entry["decidedAt"],
                    manifest=entry.get("manifest"),
                )
            else:
                dropped += 1
    # A dropped entry only means a question asked again, so keep what is readable.
    problem = f"has {dropped} malformed entries, ignored" if dropped else None
    return _Loaded(folders, problem)


def _serialize(folders: _Folders) -> bytes:
    out: dict[str, Any] = {"version": FORMAT_VERSION, "folders": {}}
    for folder in sorted(folders):
        if folders[folder]:
            out["folders"][folder] = {
                fp: {
                    "verdict": d.verdict,
                    "command": d.command,
                    "source": d.source,
                    "manifest": d.manifest,
                    "decidedAt": d.decided_at,
                }
                for fp, d in sorted(folders[folder].items())
            }
    # ensure_ascii keeps folder names that are not valid UTF-8 (surrogate escapes) writable.
    return (json.dumps(out, indent=2, ensure_ascii=True) + "\n").encode("ascii")


class _WriteFailed(Exception):
    pass


class TrustStore:
    """The approval store. Safe to share between threads and between processes."""

    def __init__(self, path: Path | None = None) -> None:
        self._mutex = threading.RLock()
        self._pending: list[str] = []
        self._warned: set[str] = set()
        self._cache_sig: tuple[int, int, int, int] | None = None
        self._cache: _Folders = {}
        self._path: Path | None = path
        if path is None:
            try:
                self._path = state_dir() / STORE_NAME
            except RuntimeError as exc:
                self._warn_once(f"approvals cannot be stored: {exc}")

    @property
    def path(self) -> Path | None:
        return self._path

    # -- reading

    def lookup(self, folder: str, fingerprint: str) -> str | None:
        """The stored verdict ("approved" or "refused"), or None when never decided."""
        with self._mutex:
            decision = self._current().get(_folder_key(folder), {}).get(fingerprint)
            return decision.verdict if decision else None

    def decisions(self, folder: str | None = None) -> list[Decision]:
        """Stored decisions, of one folder or all, by folder then oldest first."""
        with self._mutex:
            folders = self._current()
            keys = sorted(folders) if folder is None else [_folder_key(folder)]
            return [
                d
                for key in keys
                for d in sorted(folders.get(key, {}).values(), key=lambda d: d.decided_at)
            ]

    def take_warnings(self) -> list[str]:
        """Warnings not yet taken. A problem of the store file is reported once while it lasts."""
        with self._mutex:
            taken, self._pending = self._pending, []
            return taken

    # -- writing

    def approve(self, plan: Plan) -> bool:
        """Store "Always for this plan". False (with a warning) when it could not be stored;
        also False, without a warning, for a plan that needs no approval."""
        return self._decide(plan, APPROVED)

    def refuse(self, plan: Plan) -> bool:
        """Store "Don't run" for this plan. Return value as for `approve`."""
        return self._decide(plan, REFUSED)

    def revoke(self, folder: str) -> int:
        """Forget every decision for the folder; the number removed (0 with a warning when the
        store could not be written)."""
        return self.revoke_checked(folder)[1]

    def revoke_checked(self, folder: str) -> tuple[bool, int]:
        """`revoke`, telling apart "nothing stored" (True, 0) from "could not write" (False, 0)."""
        key = _folder_key(folder)

        def drop(folders: _Folders) -> tuple[int, bool]:
            removed = len(folders.pop(key, {}))
            return removed, removed > 0

        with self._mutex:
            done, removed = self._update(drop)
            return done, removed if done and removed is not None else 0

    def _decide(self, plan: Plan, verdict: str) -> bool:
        if not needs_question(plan):
            return False
        decision = Decision(
            folder=_folder_key(plan.folder),
            fingerprint=plan_fingerprint(plan),
            verdict=verdict,
            command=plan.command,
            source=plan.source,
            decided_at=now_iso(),
            manifest=plan.manifest,
        )

        def put(folders: _Folders) -> tuple[None, bool]:
            entries = folders.setdefault(decision.folder, {})
            entries.pop(decision.fingerprint, None)
            entries[decision.fingerprint] = decision
            while len(entries) > MAX_DECISIONS_PER_FOLDER:
                oldest = min(entries.values(), key=lambda d: d.decided_at)
                del entries[oldest.fingerprint]
            return None, True

        with self._mutex:
            done, _ = self._update(put)
            return done

    # -- internals

    def _warn_once(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            self._pending.append(message)

    def _load(self, *, use_cache: bool) -> _Loaded:
        path = self._path
        if path is None:
            return _Loaded({})
        try:
            st = os.stat(path)
        except FileNotFoundError:
            self._remember(None, {})
            return _Loaded({})
        except OSError as exc:
            return _Loaded({}, f"cannot be examined ({exc.strerror or exc})")
        if stat.S_ISDIR(st.st_mode):
            return _Loaded({}, "is a directory, not a file")
        if not stat.S_ISREG(st.st_mode):
            return _Loaded({}, "is not a regular file")
        sig = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if use_cache and sig == self._cache_sig:
            return _Loaded(self._cache)
        if st.st_size > MAX_STORE_BYTES:
            return _Loaded({}, f"is larger than {MAX_STORE_BYTES} bytes")
        try:
            data = _read_store_bytes(path)
        except OSError as exc:
            return _Loaded({}, f"cannot be read ({exc.strerror or exc})")
        loaded = _parse(data)
        if loaded.problem is None:
            self._remember(sig, loaded.folders)
        return loaded

    def _remember(self, sig: tuple[int, int, int, int] | None, folders: _Folders) -> None:
        self._cache_sig, self._cache = sig, folders
        # The file is healthy again: a later breakage deserves a fresh warning.
        self._warned.clear()

    def _report(self, loaded: _Loaded) -> None:
        if loaded.problem is None:
            return
        if loaded.newer:
            tail = "treated as empty and left unchanged"
        elif loaded.folders:
            tail = "the next approval rewrites it"
        else:
            tail = "treated as empty; the next approval rewrites it"
        self._warn_once(f"approval store {self._path} {loaded.problem}: {tail}")

    def _current(self) -> _Folders:
        loaded = self._load(use_cache=True)
        self._report(loaded)
        return loaded.folders

    def _update(self, change: Callable[[_Folders], tuple[_T, bool]]) -> tuple[bool, _T | None]:
        """Apply `change` (which says whether it changed anything) under the lock and save."""
        path = self._path
        if path is None:
            self._pending.append("approval not stored: no state directory")
            return False, None
        try:
            with self._locked(path):
                loaded = self._load(use_cache=False)
                self._report(loaded)
                folders = {k: dict(v) for k, v in loaded.folders.items()}
                result, changed = change(folders)
                if changed:
                    if loaded.newer:
                        raise _WriteFailed("it was written by a newer lsp-verify")
                    self._write(path, folders)
                return True, result
        except _WriteFailed as exc:
            self._pending.append(f"approval store {path} not written: {exc}")
        except OSError as exc:
            self._pending.append(f"approval store {path} not written: {exc.strerror or exc}")
        return False, None

    @contextlib.contextmanager
    def _locked(self, path: Path) -> Iterator[None]:
        _make_private_folders(path.parent)
        lock = str(path) + ".lock"
        # Non-blocking: opening a FIFO put in the lock's place must not wait for a partner.
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(lock, flags, 0o600)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise _WriteFailed(f"its lock file {lock} is not a regular file; remove it")
            if sys.platform != "win32":
                deadline = time.monotonic() + LOCK_TIMEOUT_S
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        if time.monotonic() > deadline:
                            raise _WriteFailed(
                                f"another process held its lock for {LOCK_TIMEOUT_S:g}s"
                            ) from None
                        time.sleep(0.005)
            yield
        finally:
            # Closing the descriptor releases the flock.
            os.close(fd)

    def _write(self, path: Path, folders: _Folders) -> None:
        import tempfile  # here: only a decision writes the store, and the server stays smaller

        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                if sys.platform != "win32":  # mkstemp made it 0600 already; this says so
                    os.fchmod(f.fileno(), 0o600)
                f.write(_serialize(folders))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._fsync_dir(path.parent)
        # Drop the cache: the next read parses what was just written.
        self._cache_sig = None

    @staticmethod
    def _fsync_dir(folder: Path) -> None:
        # Makes the rename itself durable; not possible on every platform or file system.
        with contextlib.suppress(OSError, AttributeError):
            dfd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)


def _make_private_folders(folder: Path) -> None:
    """`folder` and its missing parents, each 0700 (it holds per-user decisions). mkdir's
    mode passes through the umask: with 0277, a parent made 0500 would refuse the next one,
    so each folder made here gets its mode set before the next is made inside it."""
    missing: list[Path] = []
    while not folder.is_dir():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for made in reversed(missing):
        try:
            os.mkdir(made, 0o700)
        except FileExistsError:
            continue  # made meanwhile by someone else: its mode is theirs
        os.chmod(made, 0o700)


# -- command line
