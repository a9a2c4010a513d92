"""Columnar cache files: one format for the rebuildable caches of large tables (the workspace's
symbol cache, ``workspace/cache.py``; the suggester's listing tables,
``suggester/tablecache.py``), written and checked by the same code.

**Format**: a head line, JSON, padded with spaces to a multiple of 8 bytes, then a binary body
in sections, each padded with zeros to a multiple of 8 bytes: first the integer columns (each an
``array`` type code's values in the writer's byte order), then the string lists (each list's
strings UTF-8, ``surrogatepass``, joined by NUL: a string holds no NUL and is never empty). The
head holds what the caller puts in it plus ``byteorder``, ``digest`` (the BLAKE2b of the body)
and ``strings`` (the byte length of each string section). The column counts are the caller's
to declare and bound (in its head fields), before anything is decoded.

**Reading** (:func:`head_of`, :func:`body_of`, :func:`check_layout`, then :func:`decode`) never trusts the file: the head line is at
most :data:`MAX_HEAD_BYTES`, JSON without non-finite numbers, a mapping; the body starts aligned;
every count is a non-negative integer; the sections the counts declare add up to the body's
length to the byte and every string section can hold its count of non-empty strings, all before
the digest is taken or a byte decoded; then each string list must hold exactly its count. The
integer columns are used in place (``memoryview`` s of the bytes read), not copied. Any
failure raises :class:`~dsh_sidecar.state.files.StateDocumentError` (the caller's
``StateFile`` sets the file aside: a cold start, never a failure). Positions inside the columns
are the caller's to check where they matter.
"""

from __future__ import annotations

import hashlib
import json
import sys
from array import array
from collections.abc import Iterable, Sequence
from typing import Any, Final, Literal

from dsh_sidecar.state.files import StateDocumentError

#: Longest head line read, bytes.
MAX_HEAD_BYTES: Final = 4096
#: Bytes of one value of each ``array`` type code used.
WIDTH: Final = {"q": 8, "Q": 8, "I": 4, "B": 1}
#: Values per C call of an encoding (a few ms at most without a thread switch: a write may run
#: beside requests).
SLICE: Final = 65536

Code = Literal["q", "Q", "I", "B"]


def pad(data: bytes) -> bytes:
    """``data`` padded with zeros to a multiple of 8 bytes."""
    return data + b"\0" * (-len(data) % 8)


def padded(size: int) -> int:
    """``size`` rounded up to a multiple of 8."""
    return -(-size // 8) * 8


def digest(body: bytes | memoryview) -> str:
    """The body's BLAKE2b, as the head holds it."""
    return hashlib.blake2b(body, digest_size=20).hexdigest()


def column_bytes(code: Code, values: Sequence[int]) -> bytes:
    """``values`` as ``array(code)`` bytes, :data:`SLICE` values per C call."""
    return b"".join(array(code, values[i : i + SLICE]).tobytes() for i in range(0, len(values), SLICE))


def encode(head: dict[str, Any], columns: Iterable[bytes], strings: Iterable[Sequence[str]]) -> bytes:
    """The file of ``head`` (``byteorder``, ``digest`` and ``strings`` added), the integer
    ``columns`` (bytes, :func:`column_bytes`) and the string lists ``strings``, in order."""
    texts = ["\0".join(s).encode("utf-8", "surrogatepass") for s in strings]
    body = b"".join(pad(s) for s in [*columns, *texts])
    head = {**head, "byteorder": sys.byteorder, "digest": digest(body), "strings": [len(t) for t in texts]}
    line = json.dumps(head, separators=(",", ":")).encode()
    return line + b" " * (-(len(line) + 1) % 8) + b"\n" + body


def _no_constant(name: str) -> Any:
    raise StateDocumentError(f"non-finite number {name}")


def head_of(raw: bytes) -> tuple[dict[str, Any], int]:
    """The head (a mapping) of a file and where its line ends; raises when the head line is
    missing, too long or not a JSON mapping."""
    head_end = raw.find(b"\n", 0, MAX_HEAD_BYTES + 1)
    if head_end < 0:
        raise StateDocumentError("no head line")
    try:
        head = json.loads(raw[:head_end], parse_constant=_no_constant)
    except RecursionError:
        raise StateDocumentError("nested too deeply") from None
    except ValueError as exc:
        raise StateDocumentError(f"head not JSON ({exc})") from None
    if not isinstance(head, dict):
        raise StateDocumentError("head not a mapping")
    return head, head_end


def current_head(raw: bytes, root: str, version: int, what: str) -> tuple[dict[str, Any], int] | None:
    """:func:`head_of` of a file of ours for the workspace ``root`` at format ``version``, and
    written on this machine's byte order; ``None`` for an older format of ours or another byte
    order (made again, nothing to set aside). Raises :class:`StateDocumentError` naming
    ``what`` (e.g. "a symbol cache") for another workspace's file or an unknown format."""
    head, head_end = head_of(raw)
    if head.get("root") != root:
        raise StateDocumentError(f"not {what} of this workspace")
    found = head.get("version")
    if found != version:
        if isinstance(found, int) and found < version:
            return None
        raise StateDocumentError(f"not {what} of this format")
    if head.get("byteorder") != sys.byteorder:
        return None
    return head, head_end


def journal_bytes(files: dict[str, Any], *, root: str, version: int, bound: dict[str, str], allow_nan: bool) -> bytes:
    """A journal of ours as :func:`journal_files` reads it: the head line (``version``, ``root``,
    the ``bound`` fields, the body's ``digest``) and the JSON body ``files``."""
    body = json.dumps(files, separators=(",", ":"), allow_nan=allow_nan).encode("utf-8", "surrogatepass")
    head = {"version": version, "root": root, **bound, "digest": digest(body)}
    return json.dumps(head, separators=(",", ":")).encode() + b"\n" + body


def journal_files(
    raw: bytes, *, root: str, version: int, bound: dict[str, str], max_files: int, what: str
) -> dict[Any, Any] | None:
    """The body of a journal of ours (a head line, then a JSON mapping ``{path: entry}``) for
    the workspace ``root`` at format ``version``, its entries not yet checked; ``None`` when its
    head's ``bound`` fields differ (another cache's: nothing to set aside). Raises
    :class:`StateDocumentError` naming ``what`` for another workspace's or format's file, a
    digest that does not match, a body that is not JSON or a mapping of more than
    ``max_files``."""
    head, head_end = head_of(raw)
    body = raw[head_end + 1 :]
    if head.get("root") != root or head.get("version") != version:
        raise StateDocumentError(f"not {what} of this workspace")
    if head.get("digest") != digest(body):
        raise StateDocumentError("digest mismatch")
    if any(head.get(key) != value for key, value in bound.items()):
        return None
    try:
        files = json.loads(body, parse_constant=lambda name: None)
    except RecursionError:
        raise StateDocumentError("nested too deeply") from None
    except ValueError as exc:
        raise StateDocumentError(f"not JSON ({exc})") from None
    if not isinstance(files, dict) or len(files) > max_files:
        raise StateDocumentError("not a mapping of at most MAX_FILES files")
    return files


def body_of(raw: bytes, head_end: int) -> memoryview:
    """The body after the head line ending at ``head_end``, in place; raises when it does not
    start at a multiple of 8 bytes."""
    if (head_end + 1) % 8:
        raise StateDocumentError("body not aligned")
    return memoryview(raw)[head_end + 1 :]


def count(value: Any) -> int:
    """``value`` when it is a non-negative integer (not a bool); raises otherwise."""
    if type(value) is not int or value < 0:
        raise StateDocumentError("a count that is not a non-negative integer")
    return value


def string_lengths(head: dict[str, Any], sections: int) -> list[int]:
    """The byte lengths of the ``sections`` string sections the head declares."""
    declared = head.get("strings")
    if not isinstance(declared, list) or len(declared) != sections:
        raise StateDocumentError("string sections not declared")
    return [count(n) for n in declared]


def check_layout(
    head: dict[str, Any], body: bytes | memoryview, columns: Sequence[tuple[Code, int]], strings: Sequence[int]
) -> list[int]:
    """The structural pre-check of a body whose integer ``columns`` (type code, values) and
    string lists (``strings``: how many strings each) the caller read from the head and bounded:
    the sections add up to the body to the byte, each string section can hold its count of
    non-empty strings, then the digest. Returns the string sections' byte lengths."""
    lengths = string_lengths(head, len(strings))
    for n, size in zip(strings, lengths, strict=True):
        if (n == 0) != (size == 0) or size < 2 * n - 1:  # n non-empty strings and n - 1 NULs
            raise StateDocumentError("a string section shorter than its count")
    expected = sum(padded(WIDTH[code] * n) for code, n in columns) + sum(map(padded, lengths))
    if expected != len(body):
        raise StateDocumentError(f"sections of {expected} bytes in a body of {len(body)}")
    if head.get("digest") != digest(body):
        raise StateDocumentError("digest mismatch")
    return lengths


def decode(
    body: memoryview, columns: Sequence[tuple[Code, int]], strings: Sequence[int], lengths: Sequence[int]
) -> tuple[list[memoryview], list[list[str]]]:
    """The integer columns (in place) and the string lists of a body :func:`check_layout`
    accepted; raises when a string list does not hold its count."""
    out: list[memoryview] = []
    at = 0
    for code, n in columns:
        size = WIDTH[code] * n
        out.append(body[at : at + size].cast(code))
        at += padded(size)
    texts: list[list[str]] = []
    for n, size in zip(strings, lengths, strict=True):
        text = str(body[at : at + size], "utf-8", "surrogatepass")
        texts.append(text.split("\0") if text else [])
        at += padded(size)
        if len(texts[-1]) != n:
            raise StateDocumentError("a string section does not hold its count")
    return out, texts
