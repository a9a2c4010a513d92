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
        rebuild = sidecar.projection.rebuild

        def counted() -> None:
            rebuilt.set()
            rebuild()

        sidecar.projection.rebuild = counted  # type: ignore[method-assign]
        invalidated = sidecar.suggester._generation
        sidecar.tools_changed()
        assert sidecar.suggester._generation == invalidated + 1  # the projections dropped either way
        assert rebuilt.is_set() is on
        assert sidecar.wait_for_graph(60)
        assert (sidecar.projection.graph is built) is not on
    finally:
        asyncio.run(sidecar.aclose())


def test_tools_changed_during_a_build_lets_it_finish(dsh_home: Path, workspace: Path):
    """A ``dsh/toolsChanged`` while the graph is built does not cancel and restart the build
    (it reads the tree as it is now; the tools are not the tree's): before, every one did, and a
    client sending one every 0.5 s kept a real serve on pallets/flask from ever being ready
    (60 s at load 32, 101 sent; ready at 32.7 s without them, same load)."""
    config = parse_config({"suggester": {"enabled": True, "refreshOnBoot": True}})
    sidecar = Sidecar(config, workspace, {"DSH_HOME": str(dsh_home), "DSH_CACHE_DIR": str(dsh_home / "cache")})
    try:
        assert sidecar.wait_for_graph(60)
        builder = sidecar.projection.graph_builder
        held, run = threading.Event(), builder._run

        def held_run(gen, cancel) -> None:  # the build holds until the test lets it go
            held.wait(30)
            run(gen, cancel)

        builder._run = held_run  # type: ignore[method-assign]
        sidecar.projection.start()
        generation = builder._generation
        assert builder.building
        for _ in range(10):
            sidecar.tools_changed()
        assert builder._generation == generation  # not one restart
        held.set()
        assert sidecar.wait_for_graph(60)
    finally:
        asyncio.run(sidecar.aclose())
