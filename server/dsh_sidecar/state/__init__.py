"""Durable state files under ``$DSH_HOME``: atomic writes, a lock, corrupt → cold start.

See :mod:`.files`.
"""

from dsh_sidecar.state.files import StateFile, atomic_write_bytes, private_dir

__all__ = ["StateFile", "atomic_write_bytes", "private_dir"]
