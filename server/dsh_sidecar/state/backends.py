"""The ``state.backend`` setting's values, without pydantic: the files backend's name, the
default, and whether a value names a shared store. :class:`~dsh_sidecar.state.config.StateConfig`
reads them, and so does what ``initialize`` checks before its reply without options
(:mod:`dsh_sidecar.options`), which imports no pydantic (cold start)."""

from __future__ import annotations

from typing import Final

#: The files backend: durable state under ``$DSH_HOME``, one sidecar's memory.
FILE: Final = "file"
#: Default of ``state.backend``: files.
DEFAULT_BACKEND: Final = FILE


def is_shared(backend: str) -> bool:
    """Whether ``backend`` (a validated ``state.backend``) names a shared store (a Redis/Valkey
    URL) rather than files."""
    return backend != FILE
