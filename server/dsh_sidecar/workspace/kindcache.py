"""The kind of every listed file, kept for the next build of the same listing:
``<cache_dir>/<slug>-<hash>.kinds.json`` (slug and hash as the symbol cache's).

A kind is a function of the path alone (``kinds.classify``), about 3 µs a path: 0.3 s of CPU
for a 100k-file listing, at every build. The kinds of the last listing are kept with a digest of
that listing (its paths, in order) and of the rules (``kinds.py`` itself); a build whose
listing and rules have those digests takes them back at once, any other classifies every path
(and writes the file anew).

The file is untrusted state (a :class:`~dsh_sidecar.state.files.StateFile`: atomic, 0600,
locked, size-capped): a head line ``{"version", "root", "listing", "rules", "digest"}``
(``digest``: the BLAKE2b of the rest) and the kinds, one character each (the position in
:data:`~dsh_sidecar.workspace.kinds.KINDS`) in one JSON string. Anything else — not JSON, a
digest or length that does not match, a character that is no kind — is set aside and the paths
are classified (a cold start, never a failure).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.state import columns
from dsh_sidecar.state.files import StateDocumentError, StateFile
from dsh_sidecar.workspace import kinds as kinds_module
from dsh_sidecar.workspace.cachenames import cache_path
from dsh_sidecar.workspace.files import MAX_FILES
from dsh_sidecar.workspace.kinds import KINDS, Kind

log = logging.getLogger(__name__)

#: Format version of the document.
VERSION: Final = 1
#: Largest document read or written, bytes (a character per file and its head).
MAX_BYTES: Final = MAX_FILES + 4096
_CODE: Final = {kind: str(i) for i, kind in enumerate(KINDS)}
_KIND: Final = {str(i): kind for i, kind in enumerate(KINDS)}


def listing_digest(files: list[str]) -> str:
    """The BLAKE2b of a listing (its paths, in order)."""
    return hashlib.blake2b("\0".join(files).encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


@functools.cache
def rules_digest() -> str:
    """The BLAKE2b of the rules that give a path its kind (``kinds.py``'s source): another
    version of them never takes back kinds the old one gave."""
    try:
        return hashlib.blake2b(Path(kinds_module.__file__).read_bytes(), digest_size=20).hexdigest()
    except OSError:
        return "unreadable"


def _parse(raw: bytes) -> Any:
    head, head_end = columns.head_of(raw)
    body = raw[head_end + 1 :]
    if head.get("digest") != columns.digest(body):
        raise StateDocumentError("digest mismatch")
    try:
        return {**head, "kinds": json.loads(body)}
    except RecursionError:
        raise StateDocumentError("nested too deeply") from None


def _validate(root: str) -> Any:
    def check(doc: Any) -> dict[str, Any]:
        if not isinstance(doc, dict) or doc.get("version") != VERSION or doc.get("root") != root:
            raise ValueError("not a kinds file of this workspace")
        if not isinstance(doc.get("listing"), str) or not isinstance(doc.get("rules"), str):
            raise ValueError("no digests")
        codes = doc.get("kinds")
        if not isinstance(codes, str) or not set(codes) <= _KIND.keys():
            raise ValueError("kinds must be a string of kind codes")
        return doc

    return check


class KindCache:
    """Load and save the kinds of one workspace's listing (module docstring)."""

    def __init__(self, cache_dir: Path, root: Path) -> None:
        self.root = str(root.resolve())
        self.path = cache_path(cache_dir, root).with_suffix(".kinds.json")
        self.file = StateFile(self.path, validate=_validate(self.root), max_bytes=MAX_BYTES, parse=_parse)

    def load(self, files: list[str]) -> list[Kind] | None:
        """The kinds of ``files`` when they are the listing the file was written for (by the
        same rules); ``None`` otherwise."""
        try:
            doc = self.file.read()
        except Exception as exc:  # a cache problem is only a slower build
            log.warning("workspace kinds unreadable (%s); classifying", exc)
            return None
        if doc is None or len(doc["kinds"]) != len(files) or doc["rules"] != rules_digest():
            return None
        if doc["listing"] != listing_digest(files):
            return None
        return list(map(_KIND.__getitem__, doc["kinds"]))

    def save(self, files: list[str], kinds: list[Kind]) -> bool:
        """Keep the kinds of ``files``; ``False`` (nothing written) on an I/O error."""
        body = json.dumps("".join(map(_CODE.__getitem__, kinds))).encode()
        head = {
            "version": VERSION,
            "root": self.root,
            "listing": listing_digest(files),
            "rules": rules_digest(),
            "digest": columns.digest(body),
        }
        raw = json.dumps(head, separators=(",", ":")).encode() + b"\n" + body
        return self.file.replace_or_warn(raw, "workspace kinds", log)
