"""The subject rule (a call that searches inside known files): the intent each file's kind and
the searched words give, a manifest's sections read the way its ecosystem reads them, and the
vote of several files.
"""

from __future__ import annotations

from dsh_sidecar.suggester.evidence.vocabulary import (
    _CONFIG_W,
    _DEP_KEY,
    _DEP_W,
    _DOC_COMMENT,
    _ENV_VAR,
    _IDENTLIKE,
    _LEDGER_NAME,
    _MOD_LAYOUT,
    _OWNER_NAME,
    _OWNER_W,
    _PATH_W,
    _TEST_W,
    _VERSION_W,
    INTENT_WORDS,
    Workspace,
    _words,
)
from dsh_sidecar.suggester.gate import INTENTS
from dsh_sidecar.suggester.parse import Query
from dsh_sidecar.workspace import manifests


def _subject_intent(path: str, q: Query, ws: Workspace) -> str | None:
    """The subject rule's intent for searching inside ``path`` (module docstring)."""
    kind, facts = ws.kind(path), ws.facts(path)
    name = path.rsplit("/", 1)[-1]
    words = _words(q)
    if "changelog" in facts or _LEDGER_NAME.search(name):
        return "Ledger"
    if "owners" in facts or _OWNER_NAME.search(name):
        return "Owner"
    if kind == "lock":
        return "Dependency"
    if kind == "test" or "test-module" in facts:
        return "Test"
    manifest = kind == "manifest" or (manifests.is_manifest_name(path) and "ci-workflow" not in facts)
    if "lint-config" in facts and kind != "config" and not manifest:
        return "Config"  # a linter's or formatter's own configuration file (`.prettierrc.js`)
    if manifest:
        return _manifest_subject(words)
    if kind in ("config",) or "ci-workflow" in facts:
        return _config_subject(words, name)
    if kind == "doc":
        return "Owner" if _OWNER_W.search(words) else "Doc"
    if kind in ("source", "generated"):
        return _code_subject(path, q, ws, words)
    return None


def _manifest_subject(words: str) -> str:
    """The subject rule's intent inside a manifest: what the searched ``words`` name, else Config."""
    for intent, rx in INTENT_WORDS:
        if rx.search(words):
            return intent
    if _DEP_KEY.match(words.strip()) and not _CONFIG_W.search(words):
        return "Dependency"  # `ignore = `, `"left-pad":`: a package named as a key
    return "Config"


def _config_subject(words: str, name: str) -> str:
    """The subject rule's intent inside a tool's configuration or a CI workflow (file ``name``)."""
    if _TEST_W.search(words) and not _CONFIG_W.search(words):
        return "Test"
    if _PATH_W.search(words) and name.startswith(("tsconfig", "jsconfig", "pnpm-workspace")):
        return "Path"
    if _DEP_W.search(words) and name.startswith(("pnpm-workspace",)):
        return "Path"
    return "Config"


def _code_subject(path: str, q: Query, ws: Workspace, words: str) -> str | None:
    """The subject rule's intent inside a code file: the searched name's definition, an
    environment variable it reads, a version, the module layout, docs, or the name's uses."""
    ident = q.identifier
    if q.definition_keyword is not None or (ident is not None and ws.defines(path, ident)):
        return "Symbol"
    if ident is not None and _ENV_VAR.match(ident) and ws.defined(ident) is False:
        return "Config"  # an environment variable the file reads
    if _VERSION_W.search(words):
        return "Version"
    if _MOD_LAYOUT.search(words):
        return "Path"
    if ident is not None and _IDENTLIKE.search(ident):
        return "Usage"  # a code name, whatever words it is made of (`prepare_docstring`)
    if _DOC_COMMENT.search(words):
        return "Doc"
    if ident is not None:
        return "Usage"
    return None


def _searched(q: Query) -> list[str]:
    """What a call searches for, as a manifest's sections are keyed: its dotted key paths,
    then its words (``manifests.key_paths``, ``manifests.words``)."""
    text = " ".join(q.patterns + q.keys)
    return manifests.key_paths(text) + manifests.words(text)


def _file_vote(path: str, q: Query, ws: Workspace) -> dict[str, float] | None:
    """What searching inside ``path`` asks for: for a manifest whose words name no intent
    themselves, the intents of the sections the searched words stand in (shares adding up to
    1); else the subject rule's one intent; ``None`` when neither says anything."""
    if manifests.is_manifest_name(path) and "changelog" not in ws.facts(path):
        words = _words(q)
        if not any(rx.search(words) for _, rx in INTENT_WORDS):
            keys = ws.keys(path)
            vote = manifests.keyed_vote(keys, _searched(q)) if keys else None
            if vote:
                return vote
    intent = _subject_intent(path, q, ws)
    return {intent: 1.0} if intent is not None else None


def _vote(paths: list[str], q: Query, ws: Workspace) -> str | None:
    """The intent the files ``paths`` vote for (module docstring): the most votes, a tie to
    the more specific intent (Config last), then to the intents' priority order."""
    votes: dict[str, float] = {}
    for p in paths:
        for intent, share in (_file_vote(p, q, ws) or {}).items():
            votes[intent] = votes.get(intent, 0.0) + share
    if not votes:
        return None
    return min(votes, key=lambda i: (-round(votes[i], 6), i == "Config", INTENTS.index(i) if i in INTENTS else 99))
