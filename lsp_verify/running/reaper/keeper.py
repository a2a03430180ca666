"""The keeper (Linux): the process the editor started, left behind by `keep_behind` to wait
for the server (or `check`), its child. The server dies with its keeper (a parent-death
signal, SIGTERM, which the server handles by killing its runs); the keeper is the subreaper
above the server, so whatever a server killed with SIGKILL leaves behind is re-parented to
it, and it kills that and exits with the server's status. Light standard modules only: it
forks before anything else is imported.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

from lsp_verify.running import reaper

_PR_SET_PDEATHSIG = 1

# After the server is gone, how long the keeper keeps killing what is re-parented to it.
KEEPER_SWEEP_S = 2.0


def keep_behind(standalone: bool = True) -> None:
    """Fork: the child returns and goes on as the server (or `check`); the parent stays
    behind as its keeper and never returns. Linux only; elsewhere a no-op.

    Called before anything heavy is imported and before any thread starts, so the fork is
    cheap and safe."""
    if sys.platform != "linux" or not standalone or os.environ.get("LSP_VERIFY_NO_KEEPER"):
        return
    keeper = os.getpid()
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return
    if pid == 0:
        os.close(read_end)
        # Die with the keeper: an editor that SIGKILLs the pid it started takes the server
        # down, and the server's SIGTERM handler kills its runs on the way out.
        reaper._prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != keeper:  # the keeper died before the line above
            os.kill(os.getpid(), signal.SIGTERM)
        os.close(write_end)  # tells the keeper the server is set up
        return
    os.close(write_end)
    _keep(pid, read_end)


def _keep(server: int, ready: int) -> None:
    """The keeper's whole life: forward signals, wait for the server, clean up, exit."""
    if sys.platform != "linux":
        return
    reaper.set_subreaper(True)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, lambda s, _frame: _forward(server, s))
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        os.read(ready, 1)  # EOF once the server has its parent-death signal
        os.close(ready)
    # The editor's pipes are the server's: the keeper holds none of them open.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    os.close(null)
    status = 0
    while True:
        try:
            pid, status = os.waitpid(server, 0)
        except ChildProcessError:
            break
        if pid == server:
            break
    reaper._claimed = True
    reaper.sweep(kill=True, wait_s=KEEPER_SWEEP_S)
    if os.WIFSIGNALED(status):
        code = 128 + os.WTERMSIG(status)
    elif os.WIFEXITED(status):
        code = os.WEXITSTATUS(status)
    else:
        code = 1
    os._exit(code)


def _forward(server: int, signum: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(server, signum)
