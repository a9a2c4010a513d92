"""How the ``dsh-search`` CLI writes: Rich on a terminal, plain text in a pipe, JSON on ``--json``.

* **stdout** carries the result only: Rich tables and colour when it is a terminal, plain text
  when it is not (a pipe, a file), one JSON document with ``--json``. ``NO_COLOR`` (any non-empty
  value, https://no-color.org) turns colour off; Rich honours it, and so does this module's plain
  path, which never colours anything. ``--color`` decides instead, as rg's and uv's do:
  ``auto`` (the above), ``always`` (the terminal rendering, colour included, in a pipe too:
  ``dsh-search status --color always | less -R``), ``never`` (no colour on a terminal).
* **stderr** carries errors, log lines (``--verbose``) and the progress spinner/bar (only when
  stderr is a terminal and not ``--quiet``).
* **Errors** are :class:`CliError`: the same ``{code, message, data?}`` a JSON-RPC error reply
  carries (codes from :class:`dsh_protocol.errors.ErrorCode`), plus the process exit code
  (``cli/exits.py``). With ``--json`` the error is
  printed to stdout as ``{"error": {code, message, data?}}``; without, as one line
  ``dsh-search: <message>`` on stderr.

Everything that came from outside (provider titles and snippets, file paths from a workspace)
goes through :func:`clean` before it is printed, so a hostile title cannot move the cursor, set
the window title or hide text with terminal escape sequences, and Rich never reads it as markup.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any

from dsh_protocol.errors import ErrorCode
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from dsh_sidecar.cli.exits import EXIT_USAGE
from dsh_sidecar.errors import ConfigError
from dsh_sidecar.escape import FORMAT_CHARS, TERMINAL_SEQUENCES

#: Whole terminal escape sequences, removed with their parameters, not just their ESC: the
#: same expression :func:`dsh_sidecar.escape.for_model` removes for the model's context.
_ESCAPES = TERMINAL_SEQUENCES
#: C0/C1 control characters (BEL, CR, …) and DEL left after that, tabs and newlines apart, and
#: the Unicode format characters (bidi overrides and isolates, zero-width and tag characters,
#: :data:`dsh_sidecar.escape.FORMAT_CHARS`), which change what a reader sees.
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{FORMAT_CHARS}]")


def clean(text: Any, one_line: bool = True) -> str:
    """``text`` as printable text: escape sequences, control characters and bidi controls removed (so nothing
    from a provider or a workspace reaches the terminal as a command), tabs as spaces, and with ``one_line`` every
    run of line breaks as one space."""
    s = _CONTROL.sub("", _ESCAPES.sub("", str(text))).replace("\t", " ")
    return " ".join(s.split()) if one_line else s


@dataclass
class CliError(Exception):
    """A failure to report: ``code``/``message``/``data`` as in a JSON-RPC error object, and the
    process exit code. ``message`` never holds a secret (callers build it from redacted text)."""

    code: int
    message: str
    exit_code: int = EXIT_USAGE
    data: dict[str, Any] | None = None
    #: whether the plain (stderr) report starts with ``dsh-search:``; the router's aggregated
    #: search error is printed exactly as the router words it
    prefixed: bool = True

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def wire(self) -> dict[str, Any]:
        """``{"code", "message", "data"?}``: the shape of a JSON-RPC 2.0 error object."""
        out: dict[str, Any] = {"code": int(self.code), "message": self.message}
        if self.data is not None:
            out["data"] = self.data
        return out


def usage_error(message: str, **data: Any) -> CliError:
    """A bad argument: JSON-RPC -32602 (invalid params), exit code 2."""
    return CliError(ErrorCode.INVALID_PARAMS, message, EXIT_USAGE, data or None)


#: The values of ``--color``.
COLOR_CHOICES = ("auto", "always", "never")


def _no_color(env: dict[str, str] | os._Environ[str]) -> bool:
    return bool(env.get("NO_COLOR", ""))


@dataclass
class Output:
    """The two streams of one CLI run and the user's ``--json``/``--quiet``/``--verbose``.

    ``out``/``err`` are Rich consoles on stdout/stderr; :attr:`rich` says whether stdout is a
    terminal (Rich tables) or not (plain text)."""

    json: bool = False
    quiet: bool = False
    verbose: bool = False
    #: ``auto``, ``always`` or ``never`` (:data:`COLOR_CHOICES`).
    color: str = "auto"
    stdout: IO[str] = field(default_factory=lambda: sys.stdout)
    stderr: IO[str] = field(default_factory=lambda: sys.stderr)

    def __post_init__(self) -> None:
        # a lone surrogate (a provider's JSON, a non-UTF-8 file name) is shown as an escape
        # instead of ending the run with UnicodeEncodeError after the search succeeded
        for stream in (self.stdout, self.stderr):
            reconfigure = getattr(stream, "reconfigure", None)
            if reconfigure is not None:
                with contextlib.suppress(ValueError, OSError):  # a closed or detached stream: left as it is
                    reconfigure(errors="backslashreplace")
        no_color = self.color == "never" or (self.color == "auto" and _no_color(os.environ))
        force = True if self.color == "always" else None
        self.out = Console(file=self.stdout, no_color=no_color, highlight=False, soft_wrap=False, force_terminal=force)
        self.err = Console(file=self.stderr, no_color=no_color, highlight=False, stderr=True)

    @property
    def rich(self) -> bool:
        """Whether stdout is a terminal (and not ``--json``): then results are Rich renderables."""
        return not self.json and self.out.is_terminal

    # ------------------------------------------------------------------ results
    def write(self, text: str) -> None:
        """Plain text on stdout, as is (a trailing newline is added when missing)."""
        self.stdout.write(text if text.endswith("\n") else text + "\n")

    def emit_json(self, value: Any) -> None:
        """One JSON document on stdout (2-space indent; UTF-8 kept on a UTF-8 stream)."""
        # UTF-8 kept where the stream is UTF-8; elsewhere (PYTHONIOENCODING=ascii, LANG=C)
        # \uXXXX escapes, so the document stays valid JSON
        encoding = (getattr(self.stdout, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        utf8 = encoding in ("utf8", "utf8sig")
        self.stdout.write(json.dumps(value, indent=2, ensure_ascii=not utf8) + "\n")

    def print(self, *renderables: Any) -> None:
        """Rich renderables on stdout (terminal only: callers check :attr:`rich`)."""
        self.out.print(*renderables)

    # ------------------------------------------------------------------ stderr
    def log(self, line: str) -> None:
        """A log line (bandit ``[bandit-search]``, suggester ledger): stderr, ``--verbose`` only."""
        if self.verbose and not self.quiet:
            self.stderr.write(clean(line) + "\n")

    def warn(self, line: str) -> None:
        """A warning (stderr, ``dsh-search: warning: …``; dropped by ``--quiet`` only)."""
        if not self.quiet:
            self.stderr.write(f"dsh-search: warning: {clean(line, one_line=False)}\n")

    def info(self, line: str) -> None:
        """A note for the person at the terminal (stderr; dropped by ``--quiet`` and ``--json``)."""
        if not self.quiet and not self.json:
            self.stderr.write(clean(line, one_line=False) + "\n")

    def error(self, exc: CliError) -> int:
        """Report ``exc`` (JSON on stdout with ``--json``, else one line on stderr, even with
        ``--quiet``); returns its exit code."""
        if self.json:
            self.emit_json({"error": exc.wire()})
        else:
            message = clean(exc.message, one_line=False)  # provider text (engine names, …) is in it
            self.stderr.write(f"dsh-search: {message}\n" if exc.prefixed else message + "\n")
        return exc.exit_code

    # ------------------------------------------------------------------ progress
    @contextmanager
    def progress(self, description: str, counted: bool = False) -> Iterator[Progress | None]:
        """A transient spinner and elapsed time on stderr while a step that may take over a
        second runs (``counted``: also a bar and ``done/total``, moved by :func:`reporter`);
        nothing when stderr is not a terminal or with ``--quiet``. Yields the Rich ``Progress``
        (``None`` when there is none)."""
        if self.quiet or not self.err.is_terminal:
            yield None
            return
        columns: list[Any] = [SpinnerColumn(), TextColumn("{task.description}")]
        if counted:
            columns += [BarColumn(), MofNCompleteColumn()]
        bar = Progress(*columns, TimeElapsedColumn(), console=self.err, transient=True)
        bar.add_task(description, total=None)
        with bar:
            yield bar


def reporter(bar: Progress | None) -> Callable[[int, int], None]:
    """``progress(done, total)`` moving the first task of ``bar`` (thread-safe; a no-op without a bar)."""

    def update(done: int, total: int) -> None:
        if bar is not None and bar.tasks:
            bar.update(bar.tasks[0].id, completed=done, total=total or None)

    return update


def config_error(exc: ConfigError) -> CliError:
    """A :class:`ConfigError` as a usage error naming the key (``data.key``)."""
    return usage_error(f"invalid config: {exc}", key=exc.key)
