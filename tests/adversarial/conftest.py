"""What the hostile-input tests share: servers over raw pipes, each killed at the end."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.stdio import StdioClient


@pytest.fixture
def raw(state: Path) -> Iterator[Callable[[], StdioClient]]:
    """Start `python -m lsp_verify` over pipes; whatever a test started is killed after."""
    servers: list[StdioClient] = []

    def make() -> StdioClient:
        server = StdioClient(state)
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.kill()
