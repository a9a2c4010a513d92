"""The terms the content index stores: FTS5's tokenizer of the content table (:data:`TOKENIZE`,
Porter stems of unicode61 tokens) and :func:`indexed_term`, a word's stem as that tokenizer
writes it — the vocabulary (``fts_vocab``) holds stems, so a word is looked up there by its stem."""

from __future__ import annotations

import sqlite3
import threading
from functools import lru_cache
from typing import Final

#: FTS5's tokenizer of the content table: Porter stems of unicode61 tokens.
TOKENIZE: Final = "porter unicode61"

_STEMMER_LOCK: Final = threading.Lock()
_stemmer: sqlite3.Connection | None = None


@lru_cache(maxsize=4096)
def indexed_term(word: str) -> str:
    """The term the content table's tokenizer (:data:`TOKENIZE`) stores for ``word`` (one
    :data:`WORD`, lower-cased): its Porter stem, computed by SQLite's own tokenizer on a private
    in-memory table, so the vocabulary lookup and the index agree by construction
    (``retry`` → ``retri``, ``policy`` → ``polici``). ``word`` itself when it yields no term."""
    global _stemmer
    with _STEMMER_LOCK:
        if _stemmer is None:
            con = sqlite3.connect(":memory:", check_same_thread=False)
            con.execute(f"CREATE VIRTUAL TABLE s USING fts5(t, tokenize='{TOKENIZE}')")
            con.execute("CREATE VIRTUAL TABLE v USING fts5vocab(s, 'row')")
            _stemmer = con
        con = _stemmer
        con.execute("DELETE FROM s")
        con.execute("INSERT INTO s(t) VALUES (?)", (word,))
        rows = con.execute("SELECT term FROM v").fetchall()
    return rows[0][0] if len(rows) == 1 else word
