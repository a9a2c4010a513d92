"""Reading a file without letting it grow memory: the one bounded read every config, state and
workspace file goes through (standard library only, so the cold-start path can use it)."""

from __future__ import annotations

import os


def read_capped(fd: int, max_bytes: int, size_hint: int | None = None) -> bytes | None:
    """The rest of the open file ``fd``, or ``None`` when it holds more than ``max_bytes``
    bytes; never reads more than ``max_bytes + 1`` (a file that grows, or ``/dev/zero`` behind
    a checked descriptor, cannot grow memory). ``size_hint`` (the size ``fstat`` gave) sizes the
    first read's buffer, where it is otherwise 1 MiB whatever the file (most workspace files are
    a few KiB); a read that gives all of it and not the byte asked for past it ends the file
    (no second read to see the end: one system call a file fewer for a pass over a listing).
    Raises ``OSError`` from ``os.read``."""
    chunks: list[bytes] = []
    size = 0
    first = 1 << 20 if size_hint is None or size_hint < 0 else size_hint + 1
    while size <= max_bytes:
        want = min(first, max_bytes + 1 - size)
        chunk = os.read(fd, want)
        first = 1 << 20
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size_hint is not None and len(chunk) < want and size >= size_hint:
            break  # all the stat promised, and the byte past it asked for and not there: the end
    if size > max_bytes:
        return None
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
