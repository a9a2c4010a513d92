"""Reading a file without letting it grow memory: the one bounded read every config, state and
workspace file goes through (standard library only, so the cold-start path can use it)."""

from __future__ import annotations

import os


def read_capped(fd: int, max_bytes: int) -> bytes | None:
    """The rest of the open file ``fd``, or ``None`` when it holds more than ``max_bytes``
    bytes; never reads more than ``max_bytes + 1`` (a file that grows, or ``/dev/zero`` behind
    a checked descriptor, cannot grow memory). Raises ``OSError`` from ``os.read``."""
    chunks: list[bytes] = []
    size = 0
    while size <= max_bytes:
        chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks) if size <= max_bytes else None
