"""Reading LSP frames out of a byte stream (:class:`FrameReader`): bounded headers, an oversized
body drained and refused, a broken header block answered with its own id when one can be
recovered, and re-synchronisation on the next ``Content-Length:`` header. See the "Framing
errors" paragraph of :mod:`dsh_sidecar.lsp.transport`.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Final

import attrs
from dsh_protocol.ids import recover_id

# the transport's log lines keep the name they have always had (the log format shows it)
log = logging.getLogger("dsh_sidecar.lsp.transport")


#: Largest message body accepted, bytes (a bigger one is drained and answered with an error).
MAX_BODY_BYTES: Final = 16 * 1024 * 1024
#: Longest header line accepted, bytes.
MAX_HEADER_BYTES: Final = 8 * 1024
#: Most header lines in one frame (LSP defines two: Content-Length and Content-Type).
MAX_HEADER_LINES: Final = 32
#: Bytes kept from the start of an oversized (discarded) body, to recover its ``id``.
DISCARDED_HEAD_BYTES: Final = 4096
#: Largest oversized body still drained to keep the stream in sync, bytes; a bigger
#: ``Content-Length`` is a broken client: the server exits (:class:`FramingLost`).
MAX_DRAIN_BYTES: Final = 256 * 1024 * 1024


CONTENT_LENGTH = b"content-length:"


class FramingLost(Exception):
    """The byte stream cannot be re-synchronised (an absurd ``Content-Length``): the server
    says why on stderr and exits instead of waiting for gigabytes that will never be a message."""


@attrs.define
class BadFrame:
    """A header block refused without a usable body: ``reason`` goes into the -32600 reply,
    with ``msg_id`` when it could be recovered from the start of a discarded body."""

    reason: str
    msg_id: int | str | None = None


#: A ``Content-Length`` header whose line never ended: the body's ``{`` (or ``[``) follows the
#: digits directly (``Content-Length: 52{"jsonrpc": …``).
_LENGTH_THEN_BODY = re.compile(rb"[ \t]*content-length:[ \t]*(\d{1,12})[ \t]*(?=[{\[])", re.IGNORECASE)
#: The bytes a line that :data:`_LENGTH_THEN_BODY` could match starts with.
_LENGTH_FIRST = frozenset(b" \tCc")
#: Bytes a JSON-RPC body starts with (an object, or a batch).
_BODY_FIRST = frozenset(b"{[")
#: Why a body that came without its header block's blank line is refused.
NO_BLANK_LINE = "the header block did not end with a blank line (body discarded)"
#: Why a body that came inside its ``Content-Length`` header line is refused.
UNENDED_HEADER = "the Content-Length header line did not end before the body (body discarded)"


@attrs.define
class _Headless:
    """A body found where a header line should be: its declared length and why it is refused."""

    length: int
    reason: str


class FrameReader:
    r"""LSP frames out of a byte stream, parsed from a buffer of its own (read in chunks of up to
    :data:`READ_CHUNK_BYTES`), so a header block can be looked at before a line of it ends.

    :meth:`next` returns one message body, a :class:`BadFrame` for a refused frame (answered
    -32600, with the request's id when it can be recovered), or ``None`` at EOF. A header block
    without its blank line (``Content-Length: N\r\n`` then the body), or a ``Content-Length``
    line that never ended before the body, is answered at once with the body's id and the
    stream goes on after the declared length: the request is refused, never lost silently, and
    the next frame is read as usual. Raises :class:`FramingLost` for a length over
    :data:`MAX_DRAIN_BYTES`.
    """

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader
        self._buf = bytearray()
        self._eof = False

    async def _fill(self) -> bool:
        """Read what is available (at least one byte) into the buffer; ``False`` at EOF."""
        if self._eof:
            return False
        chunk = await self._reader.read(READ_CHUNK_BYTES)
        if not chunk:
            self._eof = True
            return False
        self._buf += chunk
        return True

    async def _take(self, n: int) -> bytes | None:
        """Exactly ``n`` bytes (the buffer's first, then the stream's); ``None`` at EOF."""
        buf = self._buf
        if len(buf) >= n:
            data = bytes(buf[:n])
            del buf[:n]
            return data
        head = bytes(buf)
        buf.clear()
        try:
            return head + await self._reader.readexactly(n - len(head))
        except asyncio.IncompleteReadError:
            self._eof = True
            return None

    async def _drain(self, n: int) -> bytes | None:
        """Discard ``n`` bytes, in bounded chunks; the first :data:`DISCARDED_HEAD_BYTES` of
        them are returned (to recover an id); ``None`` at EOF."""
        head = bytes(self._buf[:DISCARDED_HEAD_BYTES])
        taken = min(n, len(self._buf))
        del self._buf[:taken]
        remaining = n - taken
        while remaining > 0:
            chunk = await self._reader.read(min(remaining, 1 << 20))
            if not chunk:
                self._eof = True
                return None
            if len(head) < DISCARDED_HEAD_BYTES:
                head += chunk[: DISCARDED_HEAD_BYTES - len(head)]
            remaining -= len(chunk)
        return head

    async def _line(self) -> tuple[bytes, bool] | _Headless | None:
        """One header line (with its newline) and whether it was longer than
        :data:`MAX_HEADER_BYTES` (then its text is dropped, up to its newline, in bounded
        steps); a :class:`_Headless` when a ``Content-Length`` line runs into its body;
        ``None`` at EOF."""
        buf = self._buf
        too_long = False
        while True:
            nl = buf.find(b"\n")
            if buf and buf[0] in _LENGTH_FIRST and not too_long:
                m = _LENGTH_THEN_BODY.match(buf)
                if m is not None and (nl < 0 or nl > m.end()):
                    length = int(m.group(1))  # before the buffer (which the match reads) changes
                    del buf[: m.end()]
                    return _Headless(length, UNENDED_HEADER)
            if 0 <= nl <= MAX_HEADER_BYTES and not too_long:
                line = bytes(buf[: nl + 1])
                del buf[: nl + 1]
                return line, False
            if nl >= 0:  # the end of a line over the bound: drop it whole
                del buf[: nl + 1]
                return b"", True
            if len(buf) > MAX_HEADER_BYTES:
                too_long = True
                buf.clear()  # no newline in it: all of it belongs to the over-long line
            if not await self._fill():
                return None

    async def next(self) -> bytes | BadFrame | None:
        """The next message body, a refused frame, or ``None`` at EOF (see the class docstring).

        Re-synchronises after a wrong ``Content-Length``: a header line holding garbage before
        ``Content-Length:`` (the tail of a body whose length was understated) is read from there.
        """
        length: int | None = None
        problem: str | None = None
        lines = 0
        while True:
            if length is not None and problem is None and length >= 0:
                # a Content-Length was read: the body may follow without the blank line
                if not self._buf and not await self._fill():
                    return None
                if self._buf[0] in _BODY_FIRST:
                    return await self._refuse_body(length, NO_BLANK_LINE)
            got = await self._line()
            if got is None:
                return None
            if isinstance(got, _Headless):
                return await self._refuse_body(got.length, got.reason)
            line, too_long = got
            if too_long:
                problem = problem or f"a header line is longer than {MAX_HEADER_BYTES} bytes"
                continue
            if line.strip() == b"":
                if length is None and problem is None and lines == 0:
                    continue  # stray blank line between frames
                break
            lines += 1
            if lines > MAX_HEADER_LINES:
                problem = problem or f"more than {MAX_HEADER_LINES} header lines"
                continue
            at = line.lower().find(CONTENT_LENGTH)
            if at < 0:
                continue  # Content-Type or garbage: ignored, as LSP allows other headers
            length, bad = _content_length(line, at)
            problem = problem or bad
        return await self._body(length, problem)

    async def _body(self, length: int | None, problem: str | None) -> bytes | BadFrame | None:
        """The body after a header block that gave ``length`` (``None``: no Content-Length) and
        ``problem`` (the first thing wrong with it, or ``None``)."""
        if problem is not None:
            return BadFrame(problem)
        if length is None:
            return BadFrame("no Content-Length header")
        if length > MAX_BODY_BYTES:
            return await self._oversized(length, f"Content-Length {length} is over {MAX_BODY_BYTES} bytes")
        return await self._take(length)

    async def _oversized(self, length: int, reason: str) -> BadFrame | None:
        if length > MAX_DRAIN_BYTES:
            raise FramingLost(
                f"Content-Length {length} is over {MAX_DRAIN_BYTES} bytes: the stream cannot be re-synchronised"
            )
        head = await self._drain(length)
        if head is None:
            return None
        # the request's id usually comes first: answer it, or the client waits forever
        return BadFrame(f"{reason} (body discarded)", recover_id(head))

    async def _refuse_body(self, length: int, reason: str) -> BadFrame | None:
        """Read the ``length`` bytes of a body whose framing was broken and refuse it, with the
        id it carries (the client is waiting for that id's reply)."""
        log.warning("refused a frame: %s", reason)
        if length > MAX_BODY_BYTES:
            return await self._oversized(length, reason.removesuffix(" (body discarded)"))
        body = await self._take(length)
        return None if body is None else BadFrame(reason, recover_id(body))


def _content_length(line: bytes, at: int) -> tuple[int, str | None]:
    """The byte count of a header ``line`` whose ``Content-Length:`` starts at ``at`` (-1 with
    the problem when it is not one); garbage before the header is logged and skipped."""
    if at > 0:
        log.warning("discarded %d bytes of garbage before a Content-Length header", at)
    value = line[at + len(CONTENT_LENGTH) :].strip()
    length = int(value) if value.isdigit() and len(value) <= 12 else -1
    if length < 0:
        return length, f"Content-Length {value[:40].decode('ascii', 'replace')!r} is not a byte count"
    return length, None


#: Bytes read at a time: the frame reader's reads and the stdin thread's ``os.read``.
READ_CHUNK_BYTES: Final = 64 * 1024
