"""``CITATION.cff``: who wrote the project and which version is cited."""

from __future__ import annotations

from dsh_sidecar.workspace.manifests.formats import parse_yaml, walk
from dsh_sidecar.workspace.manifests.model import Builder


def read_citation(b: Builder, text: str) -> None:
    data = parse_yaml(text)
    if not isinstance(data, dict):
        return

    def intent_of(p: tuple[str, ...]) -> str:
        key = p[0] if p else ""
        return "Owner" if key in ("authors", "license", "contact") else "Version" if key == "version" else "Doc"

    walk(b, data, (), intent_of)
    if data.get("authors"):
        b.facts.add("manifest-authors")
