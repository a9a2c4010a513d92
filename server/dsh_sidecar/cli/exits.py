"""How a ``dsh-search`` command ends: its exit codes, and what it does when stdout goes away
(``| head``) or cannot be written (``> /dev/full``). Standard library only: the plain ``serve``
path (:mod:`dsh_sidecar.cli.serving`) uses it without importing Typer or Rich."""

from __future__ import annotations

import errno
import os
import sys
from typing import Final

#: Exit codes (documented in ``dsh-search --help`` and the README): success.
EXIT_OK: Final = 0
#: A search failed (every provider of the chain), a replay failed, or a doctor check failed.
EXIT_FAILED: Final = 1
#: Bad arguments, a bad ``--config`` file, a workspace that is not a folder.
EXIT_USAGE: Final = 2
#: stdout was closed by the reader (``dsh-search query … | head -1``): 128 + SIGPIPE, what the
#: shell reports for a program that the signal ended.
EXIT_CLOSED_PIPE: Final = 141


def silence_stdout() -> None:
    """Point fd 1 at /dev/null, so the interpreter's final flush of what is still buffered
    cannot fail again (and print "Exception ignored" or exit 120)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def closed_pipe() -> int:
    """stdout went away (``| head``): silence the rest of the output and exit 141."""
    silence_stdout()
    return EXIT_CLOSED_PIPE


#: errno values of a write to stdout that cannot succeed (``> /dev/full``, a full disk or quota).
WRITE_ERRNOS: Final = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def unwritable(exc: OSError) -> int:
    """stdout cannot be written: one line on stderr, no traceback, exit code 1."""
    silence_stdout()
    try:
        sys.stderr.write(f"dsh-search: cannot write the output ({exc.strerror})\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return EXIT_FAILED
