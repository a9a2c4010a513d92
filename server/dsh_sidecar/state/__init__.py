"""Durable state files under ``$DSH_HOME``: atomic writes, a lock, corrupt → cold start.

See :mod:`.files`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dsh_sidecar.state.files import StateFile, atomic_write_bytes, private_dir

__all__ = ["StateFile", "atomic_write_bytes", "private_dir"]


def __getattr__(name: str) -> Any:
    """The names of :mod:`.files`, imported on first use (PEP 562): ``state.config`` (read by
    the config parser before the ``initialize`` reply) does not need filelock."""
    if name in __all__:
        from dsh_sidecar.state import files

        value = getattr(files, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
