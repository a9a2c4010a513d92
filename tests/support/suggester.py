"""The in-process suggester tests' shared helpers: a :class:`Suggester` on a workspace with its
ledger lines collected, the ``dsh/postExecute`` params of one tool call, and the messages of
ledger lines without their time stamps."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dsh_protocol import AdditionalContext, PostExecuteParams
from dsh_sidecar.suggester import Suggester, parse_suggester_config

from support.trees import copy_fixture

#: The ``[<ISO time>] `` a ledger line starts with.
_STAMP = re.compile(r"^\[[^\]]+\] ")


def call(
    name: str, inp: dict, turn: int = 1, session: str = "s", text: str | None = None, is_error: bool = False
) -> PostExecuteParams:
    """One tool call as the harness reports it; ``text`` (and ``is_error``) its result."""
    result = {"isError": is_error, "text": text} if text is not None else None
    return PostExecuteParams(session_id=session, turn=turn, tool={"name": name, "input": inp}, result=result)


def post(
    s: Suggester,
    name: str,
    inp: dict,
    text: str | None = None,
    is_error: bool = False,
    session: str = "s",
    turn: int = 1,
) -> list[AdditionalContext]:
    """The notes the suggester answers one tool call with."""
    return s.post_execute(call(name, inp, turn=turn, session=session, text=text, is_error=is_error))


def ledger_messages(lines: list[str]) -> list[str]:
    """The messages of ledger lines (``[<ISO time>] <message>``), in order."""
    return [_STAMP.sub("", line) for line in lines]


def answer_in_own_session(
    sidecar: Any, lines: list[str], name: str, inp: dict, text: str, is_error: bool
) -> tuple[list[AdditionalContext], list[str]]:
    """The notes and the decision lines of the ledger (``suggest``/``suppressed``/
    ``abstained``) for one call a real :class:`~dsh_sidecar.sidecar.Sidecar` answers in a session of
    its own (no noise state between cases); ``lines`` is the sidecar's log sink."""
    params = PostExecuteParams.model_validate(
        {
            "sessionId": f"s-{len(lines)}",
            "turn": 1,
            "tool": {"name": name, "input": inp},
            "result": {"isError": is_error, "text": text},
            "waitMs": 30_000,
        }
    )
    before = len(lines)
    notes = sidecar.post_execute(params).additional_contexts
    messages = ledger_messages([ln.split("] ", 1)[-1] for ln in lines[before:]])
    return notes, [m for m in messages if m.startswith(("suggest", "suppressed", "abstained"))]


def sidecar_on_tree(tmp: Path, tree: dict[str, str]) -> tuple[Any, list[str]]:
    """A real :class:`~dsh_sidecar.sidecar.Sidecar` (suggester on) over ``tree`` written under
    ``tmp/ws``, its workspace graph built, and the list its log sink fills (``$DSH_HOME`` and
    ``$HOME`` under ``tmp``)."""
    from dsh_sidecar.config import parse_config
    from dsh_sidecar.sidecar import Sidecar

    from support.trees import write_tree

    root = write_tree(tmp / "ws", tree)
    lines: list[str] = []
    env = {"DSH_HOME": str(tmp / "home"), "HOME": str(tmp)}
    sc = Sidecar(parse_config({"suggester": {"enabled": True}}), root, env, log_sink=lines.append)
    assert sc.wait_for_graph(60)
    if sc.suggester.prepared is not None:  # the missing-path tables, built after ready: now
        sc.suggester.prepared.index.build_meant()
    return sc, lines


def note_texts_in_own_session(sidecar: tuple[Any, list[str]], call: tuple[Any, ...]) -> tuple[list[str], list[str]]:
    """:func:`answer_in_own_session` of ``call`` on a :func:`sidecar_on_tree` pair: the notes'
    texts and the decision lines of the ledger."""
    sc, lines = sidecar
    notes, ledger = answer_in_own_session(sc, lines, *call)
    return [n.text for n in notes], ledger


def make_suggester(
    root: Path,
    home: Path,
    graph: Any = None,
    *,
    clock: Callable[[], float] | None = None,
    warm: bool = False,
    **cfg: Any,
) -> tuple[Suggester, list[str]]:
    """An enabled suggester on ``root`` with ``$DSH_HOME`` ``home`` and the config keys ``cfg``;
    ``graph`` its workspace graph (none: it reads the tree itself), ``warm`` prepares its targets
    before the first call. Returns it and the list its ledger lines are appended to."""
    lines: list[str] = []
    extra: dict[str, Any] = {}
    if graph is not None:
        extra["workspace"] = lambda: graph
    if clock is not None:
        extra["clock"] = clock
    s = Suggester(root, parse_suggester_config({"enabled": True, **cfg}), home, sink=lines.append, **extra)
    if warm:
        s.warm()
    return s, lines


def copy_workspace(tmp_path: Path, name: str) -> Path:
    """``tmp_path/<name>``, a copy of the workspace fixture of that name (:func:`copy_fixture`)."""
    return copy_fixture(name, tmp_path / name)
