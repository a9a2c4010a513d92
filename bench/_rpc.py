"""What the benchmarks share: the framed stdio client (one implementation, in the package)
and the command that starts the sidecar."""

from __future__ import annotations

import sys

from dsh_protocol.stdio_client import StdioClient

__all__ = ["StdioClient", "sidecar_cmd"]


def sidecar_cmd() -> list[str]:
    """``python -m dsh_sidecar serve`` of this Python."""
    return [sys.executable, "-m", "dsh_sidecar", "serve"]
