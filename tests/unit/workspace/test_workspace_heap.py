"""The heap freezer that keeps full GC collections short during a big workspace build."""

from __future__ import annotations

import gc
import threading

import pytest
from dsh_sidecar.workspace.heap import SLICE, HeapFreezer, sliced_dict
from support.sidecar import home_env
from support.waiting import wait_until


def test_the_heap_is_frozen_in_steps_while_busy_and_once_more_when_the_build_ends():
    busy = threading.Event()
    busy.set()
    freezer = HeapFreezer(busy.is_set, interval_s=0.01)
    try:
        freezer.start()
        freezer.start()  # idempotent while following a build
        assert [t.name for t in threading.enumerate()].count("dsh-heap-freezer") == 1
        wait_until(lambda: freezer.freezes >= 3, "three freezes")
        assert gc.get_freeze_count() > 0
        busy.clear()
        assert freezer._thread is not None
        freezer._thread.join(10)
        assert not freezer._thread.is_alive()
        done = freezer.freezes
        assert gc.get_freeze_count() > 0
        busy.set()
        freezer.start()  # a later build is followed again
        wait_until(lambda: freezer.freezes > done, "a freeze of the later build")
    finally:
        freezer.stop()
        gc.unfreeze()
    assert freezer._thread is not None and not freezer._thread.is_alive()


def test_stop_ends_the_thread_without_waiting_for_the_build():
    freezer = HeapFreezer(lambda: True, interval_s=30.0)
    freezer.start()
    freezer.stop(timeout_s=5)
    gc.unfreeze()
    assert freezer._thread is not None and not freezer._thread.is_alive() and freezer.freezes == 0


def test_sliced_dict_is_dict_of_zip_across_slice_boundaries():
    for n in (0, 1, SLICE - 1, SLICE, SLICE + 1, 3 * SLICE + 5):
        keys = [f"k{i}" for i in range(n)]
        values = list(range(n))
        assert sliced_dict(keys, values) == dict(zip(keys, values))
        assert list(sliced_dict(keys, values)) == keys  # insertion order kept


@pytest.mark.slow
def test_a_sidecar_follows_its_workspace_build_with_the_freezer(dsh_home, workspace):
    import asyncio

    from dsh_sidecar.config import parse_config
    from dsh_sidecar.sidecar import Sidecar

    sidecar = Sidecar(parse_config({"suggester": {"enabled": True}}), workspace, home_env(dsh_home))
    heap = sidecar.projection.heap
    try:
        assert heap._thread is not None  # started with the graph build
        assert sidecar.wait_for_graph(60)
        heap._thread.join(30)
        assert not heap._thread.is_alive() and heap.freezes >= 1  # the last freeze, then it ends
        done = heap.freezes
        sidecar.files_changed(None)  # didChangeWatchedFiles: a rebuild, followed as the first build
        assert sidecar.wait_for_graph(60)
        wait_until(lambda: heap.freezes > done, "a freeze during or after the rebuild")
    finally:
        asyncio.run(sidecar.aclose())
        gc.unfreeze()


def test_collections_paused_nests_across_threads_and_restores_the_collector() -> None:
    import gc

    from dsh_sidecar.workspace.heap import collections_paused

    assert gc.isenabled()
    inner_done = threading.Event()

    def other() -> None:
        with collections_paused():
            assert not gc.isenabled()
        inner_done.set()

    with collections_paused():
        assert not gc.isenabled()
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert inner_done.is_set() and not gc.isenabled()  # the other block ended first: still paused
    assert gc.isenabled()
    gc.disable()
    try:
        with collections_paused():
            pass
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()


def test_a_paused_block_with_freeze_leaves_what_it_made_frozen_and_the_collector_on() -> None:
    from dsh_sidecar.workspace.heap import collections_paused

    gc.unfreeze()
    try:
        with collections_paused(freeze=True):
            tables = [[i] for i in range(1000)]  # containers the collector tracks
            assert not gc.isenabled()
        assert gc.isenabled()
        assert gc.get_freeze_count() >= len(tables)  # moved to the permanent generation, not scanned
        assert not any(tables[0] is o for o in gc.get_objects())  # frozen: no generation lists it
    finally:
        gc.unfreeze()


@pytest.mark.parametrize("cancel_after", [None, 3])
def test_the_symbol_pass_parses_with_the_collector_paused_run_by_run(tmp_path, monkeypatch, cancel_after):
    """Each run of files of a symbol pass is parsed with the cyclic collector paused, the
    collector back after the pass, a pass cut short included."""
    from dsh_sidecar.workspace import symbolpass

    root = tmp_path / "ws"
    root.mkdir()
    files = [f"m{i}.py" for i in range(7)]
    for rel in files:
        (root / rel).write_text(f"def f_{rel[1]}():\n    pass\n")
    monkeypatch.setattr(symbolpass, "YIELD_EVERY", 2)
    seen: list[tuple[int, bool]] = []
    cancel = threading.Event()
    real_take = symbolpass._take

    def take(root, rel, *args):
        seen.append((len(seen), gc.isenabled()))
        if cancel_after is not None and len(seen) == cancel_after:
            cancel.set()
        return real_take(root, rel, *args)

    monkeypatch.setattr(symbolpass, "_take", take)
    was = gc.isenabled()
    gc.enable()
    try:
        done = symbolpass.run(root, files, list(range(7)), False, cancel=cancel)
        assert gc.isenabled()  # (runs 0-1, 2-3, 4-5, 6: each paused and resumed)
    finally:
        if not was:
            gc.disable()
    assert [enabled for _, enabled in seen] == [False] * len(seen)
    assert len(seen) == (7 if cancel_after is None else 3)
    assert len(done.index) == len(seen) and done.truncated is (cancel_after is not None)


class _Node:
    """A container for a reference cycle (``other``), weakly referenceable."""

    __slots__ = ("__weakref__", "other")


def test_a_frozen_pause_keeps_what_it_made_and_collects_the_garbage_cycles_made_meanwhile():
    """``collections_paused(freeze=True)``: the block's long-lived tables are frozen, but a
    garbage cycle made meanwhile (by the event loop's thread while a build runs: an exception
    and its traceback, a callback cycle) is collected first, not frozen: frozen, it is never
    collected, and every rebuild stranded more (10 full rebuilds of a 2,000-file workspace beside
    a thread making cycles: 22,700-50,700 garbage objects left in the permanent generation, where
    the same run before the frozen pauses left 3,000-4,100)."""
    import weakref

    from dsh_sidecar.workspace.heap import collections_paused

    gc.collect()
    kept: list[_Node] = []
    dead: list[weakref.ref[_Node]] = []
    other = threading.Thread(target=lambda: None)
    with collections_paused(freeze=True):
        kept.extend(_Node() for _ in range(100))  # the build's tables (no cycle)

        def cycles() -> None:  # another thread's garbage, made while the block runs
            for _ in range(1000):
                a, b = _Node(), _Node()
                a.other, b.other = b, a
                dead.append(weakref.ref(a))

        other = threading.Thread(target=cycles)
        other.start()
        other.join()
    assert gc.isenabled()
    gc.collect()
    assert sum(ref() is not None for ref in dead) == 0
    assert len(kept) == 100


def test_the_build_freezer_collects_the_garbage_made_before_its_freeze_and_keeps_the_rest():
    """A step of the build freezer (and the graph's ready freeze: ``heap.freeze_heap``) collects
    the young generation before it freezes: a garbage cycle made before it is collected, not
    frozen for good (10 rebuilds of a 2,000-file workspace beside a thread making cycles left
    3,400-5,900 garbage objects frozen, 400-570 with it: ``bench/frozen_garbage.py``)."""
    import weakref

    gc.collect()
    was = gc.isenabled()
    gc.disable()  # no automatic collection: the cycles are still there at the freeze
    kept = [_Node() for _ in range(100)]
    dead: list[weakref.ref[_Node]] = []
    for _ in range(1000):
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        dead.append(weakref.ref(a))
    del a, b
    freezer = HeapFreezer(lambda: False, interval_s=0.01)  # not busy: one freeze, then it ends
    try:
        freezer.start()
        assert freezer._thread is not None
        freezer._thread.join(10)
        assert freezer.freezes == 1
        assert not any(kept[0] is o for o in gc.get_objects())  # what lives is frozen
        gc.collect()  # (a frozen cycle would outlive it)
        assert sum(ref() is not None for ref in dead) == 0
    finally:
        gc.unfreeze()
        if was:
            gc.enable()


def test_the_build_freezer_does_not_freeze_while_a_paused_block_runs():
    """While a ``collections_paused`` block runs, all it made is young: a freezer step then
    would scan it all (a pause of the event loop), so the freezer waits for its next step."""
    from dsh_sidecar.workspace.heap import collections_paused

    done = threading.Event()
    freezer = HeapFreezer(lambda: not done.is_set(), interval_s=0.01)
    try:
        with collections_paused():
            freezer.start()
            threading.Event().wait(0.1)
            assert freezer.freezes == 0
        wait_until(lambda: freezer.freezes >= 1, "a freeze once the block ended")
        done.set()
    finally:
        freezer.stop()
        gc.unfreeze()


def test_a_once_only_frozen_pause_freezes_its_garbage_cycles_instead_of_collecting_them():
    """``once``: the block's objects are frozen without the young collection, its garbage
    cycles with them (a bound a start pays once); without it they are collected (above)."""
    import weakref

    from dsh_sidecar.workspace.heap import collections_paused

    gc.collect()
    gc.unfreeze()
    dead: list[weakref.ref[_Node]] = []
    try:
        with collections_paused(freeze=True, once=True):
            for _ in range(100):
                a, b = _Node(), _Node()
                a.other, b.other = b, a
                dead.append(weakref.ref(a))
            del a, b
        assert gc.isenabled()
        gc.collect()
        assert sum(ref() is not None for ref in dead) == 100  # frozen, never collected
    finally:
        gc.unfreeze()
        gc.collect()
    assert sum(ref() is not None for ref in dead) == 0
