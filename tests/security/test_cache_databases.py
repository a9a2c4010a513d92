"""Class 6 (docs/SECURITY.md) for the rebuildable SQLite caches: the workspace content index
(``<slug>-<hash>.content.sqlite``) and the offline docs index (``docs/docs.sqlite``) in the cache
directory. Something that is not our database in its place, or a corrupt one, is a cold start of
that index: it is built again and answers as a clean one does.

Before: a FIFO in place of the content index hung the sidecar for good (its read-only open waits
for a writer; ``dsh/status`` unanswered after 80 s, real ``serve``); a folder there switched the
content index off for every later start; any corrupt offline docs index (a FIFO, a folder, a link
to ``/dev/zero``, a link out, random bytes, a truncated file) failed every search that reached it
with a traceback (``dsh-search query`` exit 1; -32603 where ``localFallback`` is on) and stayed so.
Each case runs in a child process with a deadline, so a hang fails instead of holding the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: Seconds a child gets (a build of a few files takes well under one on a loaded machine).
DEADLINE_S = 60

KINDS = ["fifo", "dev-zero", "folder", "link-out", "random-bytes", "truncated", "wal-fifo", "wal-folder"]

_CONTENT_CHILD = r"""
import json, sys
from pathlib import Path
from dsh_sidecar.workspace.content import ContentIndexer
from dsh_sidecar.workspace.fts import db_path
root, cache = Path(sys.argv[1]), Path(sys.argv[2])
ix = ContentIndexer(root, cache)
ix.start(sorted(p.name for p in root.iterdir() if p.is_file()))
done = ix.wait(50)
path = db_path(cache, root.resolve())
print(json.dumps({"done": done, "error": ix.error, "ready": ix.ready, "facts": ix.facts, "regular": path.is_file() and not path.is_symlink()}))
ix.close()
"""

_DOCS_CHILD = r"""
import json, sys, time
from pathlib import Path
from dsh_sidecar.router import localdocs
from dsh_sidecar.router.localdocs import LocalDocs
from dsh_sidecar.router.localdocs.sources import project_source
from dsh_sidecar.router.providers import local
from dsh_sidecar.router.providers.base import ProviderSpec
localdocs.sources = lambda project: [project_source(project)] if project else []
root, folder = Path(sys.argv[1]), Path(sys.argv[2])
docs = LocalDocs(folder, root)
reply = json.loads(docs.answer(local.build_request(ProviderSpec("local", local.INDEX_URL), "frobnicate depth", 5), deadline=time.monotonic() + 50).body)
path = folder / localdocs.DB_NAME
print(json.dumps({"urls": [r["url"] for r in reply["results"]], "regular": path.is_file() and not path.is_symlink()}))
"""


def _plant(path: Path, kind: str, outside: Path) -> None:
    """``kind`` in place of the database ``path`` (or of its write-ahead log)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    target = Path(f"{path}-wal") if kind.startswith("wal-") else path
    good = path.read_bytes()
    for side in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        if kind.startswith("wal-") and side == path:
            continue
        side.unlink(missing_ok=True)
    if kind in ("fifo", "wal-fifo"):
        os.mkfifo(target)
    elif kind == "dev-zero":
        target.symlink_to("/dev/zero")
    elif kind in ("folder", "wal-folder"):
        target.mkdir()
        (target / "keep").write_text("a folder's file is never deleted")
    elif kind == "link-out":
        outside.write_bytes(b"the user's own file")
        target.symlink_to(outside)
    elif kind == "random-bytes":
        target.write_bytes(os.urandom(50_000))
    elif kind == "truncated":
        target.write_bytes(good[:5000])


def _child(script: str, *args: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", script, *map(str, args)], capture_output=True, text=True, timeout=DEADLINE_S
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "docs" / "guide").mkdir(parents=True)
    (root / "README.md").write_text("# Widget\n\nWidgets frobnicate the gizmo.\n")
    (root / "docs" / "guide" / "tuning.md").write_text("Tuning\n======\n\nSet frobnication depth with --depth.\n")
    (root / "pyproject.toml").write_text('[project]\nname = "widget"\nversion = "1.0"\n')
    for i in range(5):
        (root / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    return root


@pytest.mark.parametrize("kind", KINDS)
def test_a_content_index_that_is_not_our_database_is_built_again(tmp_path: Path, workspace: Path, kind: str) -> None:
    from dsh_sidecar.workspace.fts import db_path

    clean = _child(_CONTENT_CHILD, workspace, tmp_path / "clean")
    assert clean["done"] and clean["ready"] and clean["error"] is None and clean["facts"]
    cache = tmp_path / "cache"
    _child(_CONTENT_CHILD, workspace, cache)  # a good database, then the attack on it
    outside = tmp_path / "outside.db"
    _plant(db_path(cache, workspace.resolve()), kind, outside)
    assert _child(_CONTENT_CHILD, workspace, cache) == {**clean, "regular": True}
    if kind == "link-out":
        assert outside.read_bytes() == b"the user's own file"
    if kind.endswith("folder"):  # set aside, never deleted
        kept = [p for p in cache.iterdir() if p.is_dir()]
        assert [(p / "keep").read_text() for p in kept] == ["a folder's file is never deleted"]


@pytest.mark.parametrize("kind", KINDS)
def test_an_offline_docs_index_that_is_not_our_database_is_built_again(
    tmp_path: Path, workspace: Path, kind: str
) -> None:
    expected = {
        "urls": [(workspace / "docs" / "guide" / "tuning.md").as_uri(), (workspace / "README.md").as_uri()],
        "regular": True,
    }
    folder = tmp_path / "cache" / "docs"
    assert _child(_DOCS_CHILD, workspace, folder) == expected  # a good index, then the attack on it
    outside = tmp_path / "outside.db"
    _plant(folder / "docs.sqlite", kind, outside)
    assert _child(_DOCS_CHILD, workspace, folder) == expected
    if kind == "link-out":
        assert outside.read_bytes() == b"the user's own file"
    if kind.endswith("folder"):
        kept = [p for p in folder.iterdir() if p.is_dir()]
        assert [(p / "keep").read_text() for p in kept] == ["a folder's file is never deleted"]
