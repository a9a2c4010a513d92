"""The on-disk cache of the symbol index: ``$DSH_HOME/workspace/<slug>-<hash>.json``.

Only the symbol pass is cached, because only it pays off: on this repository, re-parsing with
tree-sitter costs 7–18× more than reading the cache back (0.30 s vs 0.04 s quiet, 1.68 s vs
0.09 s under load; bench/workspace.py prints both),
while the file-level graph is dominated by the git scan / walk that a cache would have to
repeat anyway to be correct.

One entry per indexed file: ``[mtime_ns, size, definitions, {token: count}, generated]``. A
file whose ``mtime_ns`` and ``size`` still match is taken from the cache without being read;
any other is parsed again. The document is a :class:`~dsh_sidecar.state.files.StateFile`
(atomic, 0600, locked; corrupt or foreign → set aside, cold start). A cache bigger than
:data:`MAX_CACHE_BYTES` is not written.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.state.files import StateFile, atomic_write_bytes

log = logging.getLogger(__name__)

#: Format version of the cache document.
CACHE_VERSION: Final = 2
#: Largest cache written or read, bytes.
MAX_CACHE_BYTES: Final = 64 * 1024 * 1024

Entry = tuple[int, int, list[str], dict[str, int], bool]


def cache_path(cache_dir: Path, root: Path) -> Path:
    """``<cache_dir>/<slug>-<hash>.json``: slug = the folder name lower-cased to
    ``[a-z0-9-]``, hash = the first 12 hex digits of SHA-1 of the resolved root path."""
    resolved = str(root.resolve())
    slug = re.sub(r"[^a-z0-9]+", "-", root.name.lower()).strip("-") or "workspace"
    return cache_dir / f"{slug}-{hashlib.sha1(resolved.encode()).hexdigest()[:12]}.json"


def _validate(root: str) -> Any:
    def check(doc: Any) -> dict[str, Entry]:
        if not isinstance(doc, dict) or doc.get("version") != CACHE_VERSION or doc.get("root") != root:
            raise ValueError("not a symbol cache of this workspace")
        files = doc.get("files")
        if not isinstance(files, dict):
            raise ValueError("files must be an object")
        out: dict[str, Entry] = {}
        for path, e in files.items():
            if (
                isinstance(e, list)
                and len(e) == 5
                and isinstance(e[0], int)
                and isinstance(e[1], int)
                and isinstance(e[2], list)
                and isinstance(e[3], dict)
                and isinstance(e[4], bool)
            ):
                out[path] = (
                    e[0],
                    e[1],
                    [n for n in e[2] if isinstance(n, str)],
                    {k: v for k, v in e[3].items() if isinstance(v, int)},
                    e[4],
                )
        return out

    return check


class SymbolCache:
    """Load and save the per-file symbol entries of one workspace."""

    def __init__(self, cache_dir: Path, root: Path) -> None:
        self.root = str(root.resolve())
        self.path = cache_path(cache_dir, root)
        self.file = StateFile(self.path, validate=_validate(self.root), max_bytes=MAX_CACHE_BYTES)

    def load(self) -> dict[str, Entry]:
        """The cached entries (``{}`` when absent, corrupt, foreign or unreadable)."""
        try:
            return self.file.read() or {}
        except Exception as exc:  # a cache problem is only a slower start
            log.warning("workspace symbol cache unreadable (%s); indexing from scratch", exc)
            return {}

    def save(self, entries: dict[str, Entry]) -> bool:
        """Write the entries; ``False`` (nothing written) when too big or on an I/O error."""
        doc = {
            "version": CACHE_VERSION,
            "root": self.root,
            "files": {p: [m, s, d, t, g] for p, (m, s, d, t, g) in entries.items()},
        }
        data = json.dumps(doc, separators=(",", ":")).encode()
        if len(data) > MAX_CACHE_BYTES:
            log.info("workspace symbol cache not written: %d bytes > %d", len(data), MAX_CACHE_BYTES)
            return False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            with self.file.lock:
                atomic_write_bytes(self.path, data)
            return True
        except Exception as exc:  # disk full, read-only home, lock timeout: keep serving
            log.warning("workspace symbol cache not written: %s", exc)
            return False
