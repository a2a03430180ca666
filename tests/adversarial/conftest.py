"""What the hostile-input tests share: servers over raw pipes, each killed at the end."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.raw_client import RawServer


@pytest.fixture
def raw(state: Path) -> Iterator[Callable[[], RawServer]]:
    """Start `python -m lsp_verify` over pipes; whatever a test started is killed after."""
    servers: list[RawServer] = []

    def make() -> RawServer:
        server = RawServer(state)
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.kill()
