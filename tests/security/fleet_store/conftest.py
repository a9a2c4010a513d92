"""The fleet store's attacks share one ``redis-server`` per module (a module that needs a fresh
one a test, or other options, defines its own ``server``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.fleetkit import RedisServer


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A real ``redis-server`` on a private socket for the module's tests (``everysec`` fsync)."""
    srv = RedisServer(tmp_path_factory.mktemp("redis"), fsync="everysec")
    srv.start()
    yield srv
    srv.stop()
