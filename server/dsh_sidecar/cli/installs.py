"""How this copy of dsh-search was installed, so a remedy names the command that fits it
(standard library only).

An optional extra that is missing (``[mcp]`` for ``dsh-search mcp``, ``[redis]`` for a shared
state) is fixed differently in a ``uv tool`` environment, a ``pipx`` one, a virtual environment
or a checkout; and the distribution is not on PyPI yet, so the source to install from is the
one this copy came from (its ``direct_url.json``, PEP 610: the wheel file, the checkout folder
or the VCS URL), never a bare name the registry does not know.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass
from importlib import metadata
from typing import Final
from urllib.parse import unquote, urlsplit

#: The distribution's name (``[project] name``).
DISTRIBUTION: Final = "dsh-search-sidecar"


@dataclass(frozen=True)
class Install:
    """``kind``: ``uv-tool``, ``pipx``, ``venv`` or ``system``; ``source``: a PEP 508 URL
    (``file:///…/x.whl``, ``file:///…/checkout``, ``git+https://…``) or ``None`` (unknown:
    installed from an index, or no metadata); ``editable`` for an editable checkout."""

    kind: str
    source: str | None
    editable: bool = False
    python: str = sys.executable


def _direct_url(dist: metadata.Distribution) -> tuple[str | None, bool]:
    try:
        text = dist.read_text("direct_url.json")
        doc = json.loads(text) if text else None
    except (OSError, ValueError):
        return None, False
    if not isinstance(doc, dict) or not isinstance(doc.get("url"), str):
        return None, False
    url = doc["url"]
    vcs = doc.get("vcs_info")
    if isinstance(vcs, dict) and isinstance(vcs.get("vcs"), str):
        commit = vcs.get("commit_id")
        return f"{vcs['vcs']}+{url}" + (f"@{commit}" if isinstance(commit, str) else ""), False
    editable = bool(isinstance(doc.get("dir_info"), dict) and doc["dir_info"].get("editable"))
    return url, editable


def detect(prefix: str | None = None) -> Install:
    """How the running copy was installed (``prefix``: the environment, default ``sys.prefix``)."""
    prefix = sys.prefix if prefix is None else prefix
    if os.path.exists(os.path.join(prefix, "uv-receipt.toml")):  # what `uv tool install` writes
        kind = "uv-tool"
    elif os.path.exists(os.path.join(prefix, "pipx_metadata.json")):  # what `pipx install` writes
        kind = "pipx"
    elif prefix != getattr(sys, "base_prefix", prefix):
        kind = "venv"
    else:
        kind = "system"
    try:
        source, editable = _direct_url(metadata.distribution(DISTRIBUTION))
    except metadata.PackageNotFoundError:
        source, editable = None, False
    return Install(kind, source, editable)


def _requirement(extra: str) -> str | None:
    """The extra's own requirement (``mcp<3,>=2.3``) from the installed metadata."""
    try:
        requires = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return None
    for req in requires:
        spec, _, marker = req.partition(";")
        if marker and f'extra == "{extra}"' in marker.replace("'", '"'):
            return spec.strip().replace(" ", "")
    return None


def _local_path(url: str) -> str | None:
    parts = urlsplit(url)
    return unquote(parts.path) if parts.scheme == "file" else None


def extra_hint(extra: str, install: Install | None = None) -> str:
    """The command that adds the optional ``extra`` to this installation, as one shell line."""
    install = detect() if install is None else install
    requirement = _requirement(extra)
    if install.kind == "pipx" and requirement:
        return f"pipx inject {DISTRIBUTION} {shlex.quote(requirement)}"
    spec = f"{DISTRIBUTION}[{extra}] @ {install.source}" if install.source is not None else f"{DISTRIBUTION}[{extra}]"
    if install.kind == "uv-tool":
        return f"uv tool install --force {shlex.quote(spec)}"
    if install.kind == "pipx":
        return f"pipx install --force {shlex.quote(spec)}"
    if install.editable and install.source is not None:
        folder = _local_path(install.source)
        if folder is not None:
            return f"{shlex.quote(install.python)} -m pip install -e {shlex.quote(f'{folder}[{extra}]')}"
    if requirement and install.source is None:
        return f"{shlex.quote(install.python)} -m pip install {shlex.quote(requirement)}"
    return f"{shlex.quote(install.python)} -m pip install {shlex.quote(spec)}"
