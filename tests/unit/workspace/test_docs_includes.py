"""A changelog page that includes the changelog (``workspace/includes.py``): the directives of
Sphinx, MyST and MkDocs read where each tool resolves them, bounded, never outside the tree;
and the pointer it gives the content index (``facts.describe``)."""

from __future__ import annotations

import pytest
from dsh_sidecar.workspace import includes
from dsh_sidecar.workspace.facts import describe


@pytest.mark.parametrize(
    ("path", "text", "points"),
    [
        ("docs/changelog.md", "```{include} ../CHANGELOG.md\n:end-before: x\n```\n", (("changelog", "CHANGELOG.md"),)),
        ("docs/changelog.md", ":::{include} ../CHANGES.md\n:::\n", (("changelog", "CHANGES.md"),)),
        ("docs/changes.rst", ".. include:: ../CHANGES.rst\n", (("changelog", "CHANGES.rst"),)),
        ("doc/history.rst", ".. mdinclude:: ../HISTORY.md\n", (("changelog", "HISTORY.md"),)),
        ("docs/changelog.md", '{% include-markdown "../CHANGELOG.md" %}\n', (("changelog", "CHANGELOG.md"),)),
        # snippets resolve from the repository root, not the page
        ("docs/changelog.md", '--8<-- "CHANGELOG.md"\n', (("changelog", "CHANGELOG.md"),)),
        # outside the tree, absolute, or no directive: nothing
        ("docs/changelog.md", '{% include "../../x.md" %}\n', ()),
        ("docs/changelog.rst", ".. include:: /etc/passwd\n", ()),
        ("docs/changelog.md", "# Changelog\n\n## 1.0\n", ()),
    ],
)
def test_a_changelog_page_points_to_the_file_it_includes(path, text, points):
    assert includes.changelog_points(path, text) == points


def test_includes_are_bounded_in_count_and_in_the_text_read():
    many = "".join(f".. include:: ../C{i}.rst\n" for i in range(10))
    assert len(includes.changelog_points("docs/changelog.rst", many)) == includes.MAX_INCLUDES
    late = "x" * includes.MAX_CHARS + "\n.. include:: ../CHANGES.rst\n"
    assert includes.changelog_points("docs/changelog.rst", late) == ()


def test_only_a_changelog_page_is_read_for_includes():
    _, page = describe("docs/changelog.md", "doc", "```{include} ../CHANGELOG.md\n```\n")
    assert page is not None and page.points == (("changelog", "CHANGELOG.md"),)
    _, other = describe("docs/index.md", "doc", "```{include} ../README.md\n```\n")
    assert other is None
