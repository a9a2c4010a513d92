"""The ``id`` of a JSON-RPC message that cannot be parsed whole (nested too deeply for the
JSON parser, or cut because it was over a size bound): both transports (LSP framing and MCP's
newline-delimited JSON) answer such a request with an error carrying its id, or the client
waits for it forever."""

from __future__ import annotations

import json
import re
from typing import Final

#: The ``-32600`` text of a request under an id still in flight (both transports refuse it: an id
#: names one request until it is answered, and each front end's table of requests is keyed by it).
IN_USE: Final = "Invalid Request: the id is in use by a request still in flight"
#: The ``-32600`` text of a request whose id is not a string or an integer (answered under id null).
BAD_ID: Final = "Invalid Request: id must be a number or a string"
#: The ``-32600`` text of a request nested deeper than the JSON parser goes (answered under the id
#: recovered from its top level by :func:`recover_id`).
NESTED: Final = "Invalid Request: the message is nested too deeply"


#: MCP's namespace of notifications: every method under it is a notification (the spec's and any
#: later one's), never a request; no LSP or ``dsh/`` method lives under it.
NOTIFICATIONS: Final = "notifications/"


def in_notification_namespace(method: str) -> bool:
    """Whether ``method`` is under :data:`NOTIFICATIONS`. Sent with an id it is an invalid request
    (-32600, :func:`notification_with_id`) on both transports, whether or not the server knows
    the notification: what is wrong is the id, not a method the server lacks (-32601)."""
    return method.startswith(NOTIFICATIONS)


def notification_with_id(method: str) -> str:
    """The ``-32600`` text of a request (it has an id) under ``method``, a notification's method:
    JSON-RPC's notification is a request without an id, so the sender waits for an answer the
    method never gives (each front end would run it as a request with no handler, or drop it)."""
    return f"Invalid Request: {method} is a notification: it is sent without an id"


# a JSON string, a bracket, or a scalar token: enough to walk the top level of a body
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null')


def recover_id(body: bytes) -> int | str | None:
    r"""The top-level ``id`` of a body too deeply nested for ``json.loads``, or ``None``.

    Walks the tokens tracking depth; only a string key ``"id"`` at depth 1 followed by a
    number or string counts (its name read as a JSON parser reads it: ``"\u0069d"`` is ``id``).
    Used on the error path only.
    """
    depth = 0
    expect_value = False
    for match in _TOKEN.finditer(body):
        tok = match.group()
        if expect_value:
            if depth == 1 and (tok[:1] == b'"' or tok[:1].isdigit() or tok[:1] == b"-"):
                try:
                    value = json.loads(tok)
                except ValueError:
                    return None
                return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None
            expect_value = False
        if tok in (b"[", b"{"):
            depth += 1
        elif tok in (b"]", b"}"):
            depth -= 1
        elif depth == 1 and _names_id(tok):
            rest = body[match.end() : match.end() + 32].lstrip()
            expect_value = rest[:1] == b":"
    return None


def _names_id(tok: bytes) -> bool:
    """Whether the token is the string ``"id"``, however it is spelled (JSON escapes)."""
    if tok == b'"id"':
        return True
    if tok[:1] != b'"' or b"\\" not in tok or len(tok) > 32:  # "\u0069\u0064" is the longest
        return False
    try:
        return bool(json.loads(tok) == "id")
    except ValueError:
        return False
