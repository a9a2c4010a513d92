"""Activation: which packs apply to a workspace, layered (plan, "The intents").

Precedence is user > repo > built-ins: a user-layer pack
(``$DSH_HOME/search-suggester/workspaces/<slug>.yml``, or the seed's
``$DSH_HOME/playform/workspaces/<slug>.yml`` beside it: ours wins an intent both define) or a
repository pack (``.dsh/pack.yml``)
replaces the built-in rows of the intents it defines (``replace: true`` drops the built-ins);
the rows of several applicable built-in packs for one intent add up (each row is gated on its
own, so overlapping packs never double-count a signal). A built-in pack applies when any of its
``activate.any`` markers exists at the workspace root (a few ``stat`` calls: activation never
lists the workspace).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from dsh_sidecar.suggester.classify import CompiledRow
from dsh_sidecar.suggester.packs import LoadedPack, PackError, builtin_packs, read_pack_file


def workspace_slug(root: Path) -> str:
    """The user-layer pack name of a workspace: its folder name, lower-cased, ``[a-z0-9-]``."""
    return re.sub(r"[^a-z0-9]+", "-", root.name.lower()).strip("-") or "workspace"


@dataclass
class ActivePacks:
    """The packs that apply, their compiled rows per intent and the refusals (reasons)."""

    rows: dict[str, list[CompiledRow]] = field(default_factory=dict)
    packs: list[LoadedPack] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    #: the intents whose rows are the repository pack's (``.dsh/pack.yml``): their ``about`` and
    #: reasons are the workspace's prose, untrusted, quoted wherever they are shown
    repo_prose: set[str] = field(default_factory=set)

    @property
    def threshold(self) -> float:
        """The lowest threshold of any row (the ``activated`` line's ``<k>``)."""
        return min(r.threshold for rows in self.rows.values() for r in rows)


def _applies(root: Path, loaded: LoadedPack) -> bool:
    act = loaded.pack.activate
    if act is None:
        return True
    for marker in act.any:
        try:
            if (root / marker).exists():
                return True
        except OSError:
            continue
    return False


def activate(root: Path, dsh_home: Path, builtins_on: bool) -> ActivePacks:
    """Load and layer the packs of ``root`` (module docstring); never raises for a bad pack
    (it is refused with a reason in :attr:`ActivePacks.refused`)."""
    out = ActivePacks()
    layered: list[LoadedPack] = []
    slug = workspace_slug(root)
    for path, origin in (
        (dsh_home / "search-suggester" / "workspaces" / f"{slug}.yml", "user"),
        (dsh_home / "playform" / "workspaces" / f"{slug}.yml", "user"),  # the seed's user layer
        (root / ".dsh" / "pack.yml", "repo"),
    ):
        try:
            loaded = read_pack_file(path, origin, root if origin == "repo" else None)  # type: ignore[arg-type]
        except PackError as exc:
            out.refused.append(str(exc))
            continue
        if loaded is not None:
            layered.append(loaded)
    replace = any(p.pack.replace for p in layered)
    builtins = [] if replace or not builtins_on else [p for p in builtin_packs() if _applies(root, p)]
    for loaded in builtins:
        for name, row in loaded.pack.intents.items():
            out.rows.setdefault(name, []).append(CompiledRow.of(loaded.pack.id, name, row, trusted=True))
    for loaded in reversed(layered):  # repo first, then the user layers override it (ours last)
        for name, row in loaded.pack.intents.items():
            out.rows[name] = [CompiledRow.of(loaded.pack.id, name, row)]
            if loaded.origin == "repo":
                out.repo_prose.add(name)
            else:
                out.repo_prose.discard(name)
    out.packs = layered + builtins
    return out
