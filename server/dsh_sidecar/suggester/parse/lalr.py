"""bashlex's LALR parse tables, read from this package instead of built at every import.

bashlex's parser module calls its copy of PLY's ``yacc.yacc()`` when it is imported, and that
copy has no table module (PLY's ``tabmodule``/``write_tables``/``optimize`` are accepted and
ignored; the ``parsetab.py`` it ships is an old one it never reads): every process builds the
LALR tables of the bash grammar again, ~0.1-0.25 s of CPU, the bulk of the shell parser's import.
The tables are a deterministic function of the grammar and of the generator (the same under
every ``PYTHONHASHSEED``), so :data:`TABLES` holds them, generated from the installed bashlex
(``python -m dsh_sidecar.suggester.parse.lalr``), with the :func:`signature` of what they were
built from. :func:`import_bashlex` imports bashlex with its table builder (``yacc.LRTable``)
standing in for a reader while its parser module is built: when the grammar bashlex hands it
has the signature of the file, its tables are the file's; anything else (another bashlex whose
grammar or generator differs, a missing or unreadable file) builds them as bashlex does. The
parser object, its defaulted states and bashlex's own corrections of two states (applied after
``yacc()`` returns) are then bashlex's, on tables equal to the ones it would have built.

The file ships with the package (package data; nothing is written at run time, nothing read
from the user's folders): a test checks that it equals what the installed bashlex builds.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import logging
import sys
from pathlib import Path
from typing import Any, Final

log = logging.getLogger(__name__)

#: The tables of the installed bashlex's grammar (:func:`write_tables`).
TABLES: Final = Path(__file__).with_name("bashlex_tables.json")
#: The layout of :data:`TABLES` (a file of another layout is not read).
FORMAT: Final = 1
#: A tables file longer than this is not read (the shipped one is ~130 KB).
MAX_BYTES: Final = 1 << 21

#: What the last :func:`import_bashlex` did: ``signature`` (:func:`signature` of bashlex's
#: grammar), ``read`` (the tables came from :data:`TABLES`); with ``record``, also ``grammar``
#: (as bashlex's table builder got it) and copies of ``action`` and ``goto`` (the tables before
#: bashlex's corrections).
LOADED: dict[str, Any] = {}


def signature(grammar: Any, generator: bytes) -> str:
    """SHA-256 of what LALR tables are built from: the grammar's productions in order (each
    one's name, symbols and precedence; the first is the start), its terminals and their
    precedence, and ``generator`` (the bytes of bashlex's ``yacc`` module, whose ``LRTable``
    builds them)."""
    h = hashlib.sha256()
    h.update(hashlib.sha256(generator).digest())
    for p in grammar.Productions:
        h.update(repr((p.name, tuple(p.prod), tuple(p.prec))).encode())
    h.update(repr(sorted(grammar.Terminals)).encode())
    h.update(repr(sorted(grammar.Precedence.items())).encode())
    return h.hexdigest()


def read_tables(
    path: Path, expected: str, productions: int | None = None
) -> tuple[dict[int, dict[str, int | None]], dict[int, dict[str, int]]] | None:
    """``(action, goto)`` of the file at ``path`` when it holds the tables of the grammar whose
    :func:`signature` is ``expected``, in :data:`FORMAT`, every entry of the types the parser
    reads (state numbers and actions integers; an action may be ``None``); with
    ``productions`` (the grammar's count), also every state with both rows and every shift,
    goto and reduction to a state or production that is there; at most :data:`MAX_BYTES`
    long; else ``None``."""
    try:
        with path.open("rb") as f:
            data = f.read(MAX_BYTES + 1)
        doc = json.loads(data) if len(data) <= MAX_BYTES else None
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("signature") != expected:
        return None
    try:
        action = {int(s): dict(row) for s, row in doc["action"].items()}
        goto = {int(s): dict(row) for s, row in doc["goto"].items()}
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    for table, nullable in ((action, True), (goto, False)):
        for row in table.values():
            for value in row.values():
                if type(value) is not int and not (nullable and value is None):
                    return None
    if productions is not None and not _coherent(action, goto, productions):
        return None
    return action, goto


def _coherent(action: dict[int, dict[str, Any]], goto: dict[int, dict[str, int]], productions: int) -> bool:
    """Every state has an action and a goto row, every shift and goto is to one of them, every
    reduction by one of ``productions`` (what PLY's parser indexes without a check)."""
    if action.keys() != goto.keys():
        return False
    for row in action.values():
        for value in row.values():
            if value is not None and not (value in action if value > 0 else -value < productions):
                return False
    return all(value in action for row in goto.values() for value in row.values())


def import_bashlex(tables: Path | None = TABLES, *, record: bool = False) -> Any:
    """``import bashlex``, its parse tables read from ``tables`` when they are the ones its
    grammar needs (module docstring; ``None``: built, as bashlex does); ``record``: what they
    were built from and the tables kept in :data:`LOADED` (to write or compare them; a server
    keeps only the signature). Nothing when bashlex is already imported. The caller serialises calls (``budget.install``'s lock): the package
    is in ``sys.modules`` before its ``__init__`` runs. Raises what importing bashlex raises."""
    if "bashlex" in sys.modules:
        return sys.modules["bashlex"]
    spec = importlib.util.find_spec("bashlex")
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError("No module named 'bashlex'", name="bashlex")
    package = importlib.util.module_from_spec(spec)
    sys.modules["bashlex"] = package
    LOADED.clear()
    try:
        yacc: Any = importlib.import_module("bashlex.yacc")
        builder = yacc.LRTable
        yacc.LRTable = _reader(builder, yacc, tables, record)
        try:
            spec.loader.exec_module(package)
        finally:
            yacc.LRTable = builder
    except BaseException as e:
        for name in [n for n in sys.modules if n == "bashlex" or n.startswith("bashlex.")]:
            del sys.modules[name]
        if LOADED.get("read") and isinstance(e, Exception):  # the file's tables broke bashlex's own steps
            log.warning("bashlex's parse tables from %s failed its import (%r); built instead", tables, e)
            return import_bashlex(None, record=record)
        raise
    return package


def _reader(builder: Any, yacc: Any, tables: Path | None, record: bool) -> type:
    """A stand-in for bashlex's ``LRTable`` (``builder``) that takes its tables from ``tables``
    when their signature is the grammar's, else builds them; either way it says so in
    :data:`LOADED` (with ``record``, the grammar and the tables too)."""

    class TablesRead(builder):
        def __init__(self, grammar: Any, logger: Any = None) -> None:
            try:
                generator = Path(yacc.__file__).read_bytes()
            except (OSError, TypeError):
                generator = b""
            sig = signature(grammar, generator)
            read = read_tables(tables, sig, len(grammar.Productions)) if tables is not None and generator else None
            if read is None:
                super().__init__(grammar, logger)
            else:  # what builder.__init__ sets, the tables instead of their construction
                self.grammar = grammar
                self.log = logger if logger is not None else yacc.NullLogger()
                self.lr_action, self.lr_goto = read
                self.lr_productions = grammar.Productions
                self.lr_goto_cache: dict[Any, Any] = {}
                self.lr0_cidhash: dict[Any, Any] = {}
                self._add_count = 0
                self.sr_conflict = self.rr_conflict = 0
                self.conflicts: list[Any] = []
                self.sr_conflicts: list[Any] = []
                self.rr_conflicts: list[Any] = []
            LOADED.clear()
            LOADED.update(signature=sig, read=read is not None)
            if record:  # copies: bashlex corrects two states of its parser's tables after this
                LOADED.update(
                    grammar=grammar,
                    action={s: dict(row) for s, row in self.lr_action.items()},
                    goto={s: dict(row) for s, row in self.lr_goto.items()},
                )
            if read is None:
                log_built(tables)

    return TablesRead


def log_built(tables: Path | None) -> None:
    if tables is not None:
        log.debug("bashlex's parse tables built: %s is not of its grammar", tables)


def built_tables(grammar: Any, yacc: Any) -> tuple[dict[int, Any], dict[int, Any]]:
    """``(action, goto)`` of ``grammar`` as bashlex's ``LRTable`` builds them."""
    table = yacc.LRTable(grammar)
    return table.lr_action, table.lr_goto


def tables_document(sig: str, action: dict[int, Any], goto: dict[int, Any]) -> bytes:
    """The bytes of :data:`TABLES` for these tables (``json``, keys in the tables' order)."""
    doc = {
        "format": FORMAT,
        "signature": sig,
        "action": {str(s): row for s, row in action.items()},
        "goto": {str(s): row for s, row in goto.items()},
    }
    return json.dumps(doc, separators=(",", ":")).encode() + b"\n"


def write_tables(path: Path = TABLES) -> str:
    """Build the installed bashlex's tables and write them to ``path`` (bashlex is imported
    here, its tables built); the signature written."""
    import_bashlex(tables=None, record=True)
    if "action" not in LOADED:
        raise RuntimeError("bashlex was imported before its tables could be recorded")
    path.write_bytes(tables_document(LOADED["signature"], LOADED["action"], LOADED["goto"]))
    return str(LOADED["signature"])


if __name__ == "__main__":  # python -m dsh_sidecar.suggester.parse.lalr: regenerate TABLES
    print(f"{TABLES}: {write_tables()}")
