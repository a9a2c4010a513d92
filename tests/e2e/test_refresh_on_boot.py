"""``refreshOnBoot`` (the suggester seed's structural knob, "The graph projection"): with it on,
``dsh/toolsChanged`` drops the cached projections and rebuilds the workspace graph in the
background; with it off, the projections are dropped and the graph is kept."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from dsh_sidecar.config import parse_config
from dsh_sidecar.sidecar import Sidecar


@pytest.mark.parametrize("on", [True, False])
def test_tools_changed_rebuilds_the_graph_only_while_refresh_on_boot_holds(dsh_home: Path, workspace: Path, on: bool):
    config = parse_config({"suggester": {"enabled": True, "refreshOnBoot": on}})
    sidecar = Sidecar(config, workspace, {"DSH_HOME": str(dsh_home), "DSH_CACHE_DIR": str(dsh_home / "cache")})
    try:
        assert sidecar.wait_for_graph(60)
        built = sidecar.projection.graph
        rebuilt = threading.Event()
        start = sidecar.projection.start

        def counted() -> None:
            rebuilt.set()
            start()

        sidecar.projection.start = counted  # type: ignore[method-assign]
        invalidated = sidecar.suggester._generation
        sidecar.tools_changed()
        assert sidecar.suggester._generation == invalidated + 1  # the projections dropped either way
        assert rebuilt.is_set() is on
        assert sidecar.wait_for_graph(60)
        assert (sidecar.projection.graph is built) is not on
    finally:
        asyncio.run(sidecar.aclose())
