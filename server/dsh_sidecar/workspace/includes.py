"""A docs page that includes another file: where its text really lives.

A Sphinx or MkDocs site often keeps its changelog page as one directive that pulls the
repository's changelog in (``docs/changelog.md``: ```` ```{include} ../CHANGELOG.md ````), so
the page a search finds is not where the entries are written. Read the way the docs tools
read the directive, each relative to where that tool resolves it:

* reStructuredText ``.. include:: path`` (and m2r's ``.. mdinclude:: path``) and MyST's
  ```` ```{include} path ```` / ``:::{include} path``: relative to the page;
* mkdocs-include-markdown ``{% include-markdown "path" %}`` / ``{% include "path" %}``:
  relative to the page;
* pymdownx snippets ``--8<-- "path"``: relative to the repository root (its default base).

Pure: a page's text in, ``(fact, path)`` pointers out (``workspace/manifests/``'s shape: the
content index keeps them beside a manifest's), at most :data:`MAX_INCLUDES`, paths normalised
and never outside the repository. Only a changelog page's includes are read (the pointer is
``changelog``: the included file is where the change ledger is written).
"""

from __future__ import annotations

import re
from typing import Final

from dsh_sidecar.workspace.manifests.model import Builder

#: Most includes read of one page (a changelog page includes one file, rarely a few).
MAX_INCLUDES: Final = 4
#: Most characters of a page searched for directives (they open the page).
MAX_CHARS: Final = 16 * 1024

_RELATIVE: Final = re.compile(
    r"^\s*(?:\.\.\s+(?:md)?include::\s*(?P<rst>\S+)"
    r"|(?:`{3,}|:{3,})\s*\{include\}\s*(?P<myst>\S+)"
    r"|\{%\s*include(?:-markdown)?\s+[\"'](?P<mkdocs>[^\"'\s]+)[\"'])",
    re.MULTILINE,
)
_ROOTED: Final = re.compile(r"^\s*-{1,3}8<-{1,3}\s+[\"'](?P<snippet>[^\"'\s]+)[\"']", re.MULTILINE)


def changelog_points(path: str, text: str) -> tuple[tuple[str, str], ...]:
    """The files a changelog page at ``path`` includes, as ``("changelog", file)`` pointers."""
    b = Builder(path)
    head = text[:MAX_CHARS]
    found = 0
    for m in _RELATIVE.finditer(head):
        if found >= MAX_INCLUDES:
            break
        b.point("changelog", m.group("rst") or m.group("myst") or m.group("mkdocs"))
        found += 1
    for m in _ROOTED.finditer(head):
        if found >= MAX_INCLUDES:
            break
        b.point("changelog", m.group("snippet"), "")
        found += 1
    return tuple(b.points)
