"""Ruby's manifests: ``*.gemspec`` and ``Gemfile``/``gems.rb``, read line by line (never run)."""

from __future__ import annotations

import re

from dsh_sidecar.workspace.manifests.model import Builder

_GEM_LINE = re.compile(r"^\s*(?:\w+\.)?(\w+)\b(.*)$")


def read_ruby_manifest(b: Builder, text: str, gemfile: bool) -> None:
    """A gemspec or Gemfile, line by line (never evaluated)."""
    for raw in text.splitlines()[:10_000]:
        line = raw.split("#", 1)[0]
        m = _GEM_LINE.match(line)
        if not m or not b.tick():
            continue
        word, rest = m.group(1).lower(), m.group(2)
        if word in ("gem", "add_dependency", "add_runtime_dependency", "add_development_dependency", "gemspec"):
            intent = "Dependency"
            b.facts.add("dependency-manifest")
        elif word == "version" and "=" in rest:
            intent = "Version"
            b.facts.add("manifest-version")
            refs = re.findall(r"""["']([\w./-]+)["']""", rest)
            if re.search(r"File\.read|IO\.read|File\.readlines", rest):  # the version is a file's text
                for ref in refs:
                    b.point("version-declared", ref)
            else:
                for ref in refs:
                    if "version" in ref.lower() and "/" in ref:
                        b.point("version-declared", ref if ref.endswith(".rb") else ref + ".rb")
        elif word in ("authors", "author", "email", "license", "licenses"):
            intent = "Owner"
            b.facts.add("manifest-authors")
        elif word in ("files", "require_paths", "executables", "bindir", "test_files"):
            intent = "Path"
        elif word in ("require", "require_relative") and "version" in rest:
            intent = "Version"
            for ref in re.findall(r"""["']([\w./-]+)["']""", rest):
                b.point("version-declared", ref + ("" if ref.endswith(".rb") else ".rb"))
                if word == "require":
                    b.point("version-declared", "lib/" + ref + ("" if ref.endswith(".rb") else ".rb"))
        elif gemfile and word in ("group", "source", "platforms", "git_source"):
            intent = "Dependency"
        else:
            intent = "Config"
        b.add(intent, line)
