"""An in-process :class:`SidecarServer` whose protocol writes its frames into a list (no stdio):
for the handler tests that drive ``_handle_request`` on their own event loop."""

from __future__ import annotations

import json
from typing import Any

from dsh_sidecar.lsp.handlers import build_server


class Answer:
    """A stand-in for the sidecar's answer to ``dsh/postExecute``: what the handler reads of it
    (``wire()``), numbered so a test tells whose answer a reply carries."""

    def __init__(self, n: int) -> None:
        self.n = n

    def wire(self) -> dict[str, Any]:
        return {"additionalContexts": [], "n": self.n}


def writing_server() -> tuple[Any, list[bytes]]:
    """A server (no sidecar yet) whose protocol writes its frames into a list, and the list."""
    server = build_server()
    written: list[bytes] = []

    class Writer:
        def write(self, data: bytes) -> None:
            written.append(data)

    server.protocol.set_writer(Writer())
    return server, written


def served(sidecar: object) -> tuple[Any, list[bytes]]:
    """The protocol of a server hosting ``sidecar`` (a stand-in for what the handlers read), and
    the list its frames are written to."""
    server, written = writing_server()
    server.sidecar = sidecar
    return server.protocol, written


def replies(written: list[bytes]) -> list[dict[str, Any]]:
    """The JSON bodies of the frames in ``written``, in the order they were written."""
    return [json.loads(w.split(b"\r\n\r\n", 1)[1]) for w in written]
