"""Durable state files under ``$DSH_HOME``: atomic writes, a lock, corrupt → cold start.

See :mod:`.files`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_sidecar.lazy import lazy_exports

if TYPE_CHECKING:
    from dsh_sidecar.state.files import StateFile, atomic_write_bytes, private_dir

__all__ = ["StateFile", "atomic_write_bytes", "private_dir"]

#: The names of :mod:`.files`, imported on first use (PEP 562): ``state.config`` (read by the
#: config parser before the ``initialize`` reply) does not need filelock.
__getattr__ = lazy_exports(__name__, dict.fromkeys(__all__, "files"))
