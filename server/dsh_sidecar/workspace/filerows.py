"""One file's row of the content database (``fts.py``), read from the file's head: its kind,
words, facts and a manifest's declarations. A full sync makes one a listed file that changed;
the head is read through the guard (``workspace/fsguard.py``), or taken from the files the
symbol pass read just before (``sharedreads.py``: the same bytes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final, NamedTuple

from dsh_sidecar.workspace import fsguard
from dsh_sidecar.workspace.facts import MAX_READ_BYTES, MAX_WORDS, describe, kind_is_code, messages_of, text_words
from dsh_sidecar.workspace.kinds import classify
from dsh_sidecar.workspace.sharedreads import SharedReads
from dsh_sidecar.workspace.stats import Stat

#: Largest file read at all (bigger ones get path tokens only).
MAX_FILE_BYTES: Final = 2 * 1024 * 1024


def read_head(root: Path, rel: str, reader: fsguard.FolderReader | None = None) -> bytes | None:
    """The first :data:`MAX_READ_BYTES` of a workspace file, or ``None`` (refused by the guarded
    reader ``workspace/fsguard.py``: missing, not a regular file, larger than
    :data:`MAX_FILE_BYTES`, resolving outside the workspace); ``reader``: a pass's
    :class:`~dsh_sidecar.workspace.fsguard.FolderReader` (the same answer, folder by folder,
    and no more than the head read of a larger file)."""
    data = reader.read(rel, MAX_READ_BYTES) if reader is not None else fsguard.read_or_none(root, rel, MAX_FILE_BYTES)
    return data[:MAX_READ_BYTES] if data is not None else None


class Row(NamedTuple):
    """What one file's row holds, read from its head: its kind, words, facts and declarations."""

    kind: str
    body: str
    facts: set[str]
    keys: str
    points: tuple[tuple[str, str], ...]
    text_bytes: int


def read_row(
    root: Path,
    rel: str,
    st: Stat | None,
    reader: fsguard.FolderReader | None = None,
    kind: str | None = None,
    shared: SharedReads | None = None,
) -> Row:
    """The row of the file ``rel`` (``st``: its stat, ``None`` when it is gone): its words (a
    code file's identifiers and messages, a test's fewer, any other text's), its facts and,
    for a manifest, its section words and pointers; a lock, a generated or a binary file is
    not read. ``kind``: ``classify(rel)`` when the caller has it (the listing's kinds);
    ``shared``: files read already at their stat (``sharedreads.py``), taken instead of a read."""
    if kind is None:
        kind = classify(rel)
    data = None
    if st is not None and kind not in ("generated", "lock"):
        data = shared.take(rel, st) if shared is not None else None
        if data is None:
            data = read_head(root, rel, reader)
    text = data.decode("utf-8", "replace") if data is not None and b"\0" not in data[:4096] else None
    body = ""
    text_bytes = 0
    if text is not None:
        text_bytes = len(data or b"")
        if kind in ("source",) and kind_is_code(rel):
            body = text_words(messages_of(text))
        elif kind == "test" and kind_is_code(rel):
            body = text_words(text, MAX_WORDS // 2)
        else:
            body = text_words(text)
    facts, manifest = describe(rel, kind, text)
    keys = json.dumps(manifest.keys, separators=(",", ":")) if manifest is not None and manifest.keys else ""
    pts = manifest.points if manifest is not None else ()
    return Row(kind, body, facts, keys, pts, text_bytes)
