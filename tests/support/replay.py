"""Builders of replay data: a note as ``dsh/postExecute`` returns it and a trace line with
the expected intent and targets (the scorer tests)."""

from __future__ import annotations

from dsh_sidecar.evaluation import TraceLine


def note(intent, *targets):
    """A search-suggester notice naming ``targets`` for ``intent`` (empty texts)."""
    return {
        "source": {
            "kind": "search-suggester",
            "form": "notice",
            "summary": "",
            "intent": intent,
            "targets": list(targets),
        },
        "text": "",
    }


def line(session, turn, intent=None, targets=()):
    """A grep call of ``session``/``turn`` expecting ``intent`` and ``targets`` (none: silence)."""
    return TraceLine(
        {"sessionId": session, "turn": turn, "tool": {"name": "grep", "input": {}}}, intent, tuple(targets)
    )
