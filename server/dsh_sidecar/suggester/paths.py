"""Paths as a call spells them → repo-relative workspace paths: the one normaliser.

A tool call names paths as the agent typed them: relative, absolute under the workspace root,
absolute in a container's copy of it (``/testbed/pkg/m.py``), Windows-style, or as a traceback
prints them. :class:`WorkspacePaths` maps each kind for one call, over the workspace root and
(when the targets are prepared) the listed files.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from dataclasses import replace
from pathlib import Path
from typing import Final

from dsh_sidecar.suggester.candidates import FileIndex, in_test_tree
from dsh_sidecar.suggester.parse import Query

#: A Windows absolute path after ``\`` became ``/``: a drive (``C:/``) or a UNC share's
#: ``//host/`` (the part left out when it is mapped by suffix; the share stays its first folder,
#: as the top folder of a drive does: a checkout shared as ``\\host\repo`` maps ``repo\pkg\m.py``).
_WINDOWS_ABSOLUTE = re.compile(r"[A-Za-z]:/|//[^/]+/(?=[^/]+/)")

#: The top-level folders of the Filesystem Hierarchy Standard (3.0, chapter 3) and of Linux's
#: virtual file systems: a file written there directly (``/tmp/README.md``) is the machine's, not
#: a container's checkout of the workspace (``/testbed/README.md``).
#: Most listed files of one name a relative frame path is matched against (``index.js`` can be
#: thousands in a Node workspace; a JVM class's file name is rarely more than a few).
SUFFIX_SCAN: Final = 2000
#: Most listed files a content search's file-name glob may name to be read as the files it
#: searches in (``WorkspacePaths._named_files``).
NAMED_FILES: Final = 3
GLOB_CHARS = re.compile(r"[*?\[{]")

SYSTEM_FOLDERS: Final = frozenset(
    "bin boot dev etc home lib lib32 lib64 media mnt opt proc root run sbin srv sys tmp usr var".split()
)


class WorkspacePaths:
    """The path mappings of one call: ``root`` is the resolved workspace folder (``None``: no
    workspace, paths stay as spelt), ``index`` the listed files (``None`` before the targets are
    prepared: nothing maps by listing)."""

    def __init__(self, root: Path | None, index: FileIndex | None) -> None:
        self.root = root
        self.index = index
        #: the root as a path prefix (``/ws/``), ``""`` without a root
        self.base = root.as_posix().rstrip("/") + "/" if root is not None else ""

    def _under_root(self, path: str) -> str | None:
        """``path`` relative to the root when it starts with it, else ``None``."""
        return path[len(self.base) :] if self.base and path.startswith(self.base) else None

    def relative(self, q: Query) -> Query:
        """``q`` with its absolute paths under the root made repo-relative, those of a
        container's copy of the workspace (``/workspace/src/a.ts``, ``/testbed/pkg``) mapped to
        the listed file or folder they name (:meth:`in_container`; others dropped) and the names
        an ``ls DIR`` printed joined to ``DIR``; the call's reads leave its results."""
        if self.root is None or not (q.reads or q.scope or q.result_paths or q.name_patterns):
            return q  # no path to map (a bare search of the tree)

        def rel(p: str) -> str | None:
            if p.startswith("../"):  # from above the root (``cd ..``): a path back into it is the root's
                back = posixpath.normpath(self.base + p)
                if back == self.base.rstrip("/"):
                    return ""  # the root itself (``cd ../repo && grep x .``): the whole tree
                inside = self._under_root(back)
                return inside if inside else p  # else outside, as spelt
            if not p.startswith("/"):
                return p
            inside = self._under_root(p)
            if inside is not None:
                return inside
            return "" if p == self.base.rstrip("/") else self.in_container(p)

        reads = [r for r in map(rel, q.reads) if r is not None]
        scope = [r for r in map(rel, q.scope) if r is not None]
        results = [r for r in map(rel, q.result_paths) if r]
        index = self.index
        if index is not None:
            # an `ls DIR` (or `cd DIR && …`) lists names relative to DIR
            folders = [s for s in scope if s and not index.exists(s)]
            fixed = []
            for p in results:
                joined = next((f"{d}/{p}" for d in folders if index.exists(f"{d}/{p}")), None)
                fixed.append(joined if joined is not None and ("ls" in q.commands or not index.exists(p)) else p)
            results = fixed
        results = [p for p in dict.fromkeys(results) if p not in reads]
        names = q.name_patterns
        if index is not None and q.tool in ("grep", "bash") and q.patterns:
            scope, names = self._named_files(scope, names)
        if reads == q.reads and scope == q.scope and results == q.result_paths and names == q.name_patterns:
            return q  # nothing to make relative (the usual call): no copy of the query
        # it searched (and read) only paths outside the workspace
        outside = bool(q.scope) and not scope and not names and not reads
        return replace(q, reads=reads, scope=scope, result_paths=results, name_patterns=names, outside=outside)

    def _named_files(self, scope: list[str], names: list[str]) -> tuple[list[str], list[str]]:
        """A content search's file-name globs whose last part names one file
        (``**/ClassHelper.java``, ``--include=setup.cfg``: a glob without ``/`` matches names at
        any depth, as grep's ``--include`` and ripgrep's ``-g`` do): the listed files they match
        (inside the folders searched), at most :data:`NAMED_FILES`, become the files it searches
        in (``grep x path/ClassHelper.java`` asks the same); a glob matching none or more stays a
        glob."""
        index = self.index
        assert index is not None
        folders = [s for s in scope if s and not index.exists(s)]
        kept: list[str] = []
        files: list[str] = []
        for pattern in names:
            base = pattern.rsplit("/", 1)[-1]
            found = []
            if base and not GLOB_CHARS.search(base):
                bare = pattern[3:] if pattern.startswith("**/") else pattern
                found = [
                    p
                    for p in index.by_name.get(base, ())[:SUFFIX_SCAN]
                    if ("/" not in pattern or fnmatch.fnmatchcase(p, pattern) or fnmatch.fnmatchcase(p, bare))
                    and (not folders or any(p.startswith(f + "/") for f in folders))
                ]
            if 1 <= len(found) <= NAMED_FILES:
                files += found
            else:
                kept.append(pattern)
        if not files:
            return scope, names
        return [s for s in scope if s and s not in folders] + files, kept

    def touched(self, q: Query) -> set[str]:
        """Repo-relative paths a call touches: the files it reads or edits and the paths it
        searches in (``Query.touched``; absolute ones under the root made relative)."""
        out: set[str] = set()
        for w in q.touched():
            p = w.replace("\\", "/")
            if self.root is not None and p.startswith("/"):
                try:
                    p = Path(p).resolve().relative_to(self.root).as_posix()
                except (ValueError, OSError):
                    continue
            p = re.sub(r"^(\./)+", "", p).rstrip("/")
            if p:
                out.add(p)
        return out

    def frame_path(self, path: str) -> str | None:
        r"""A path as a traceback prints it, as a listed workspace file: repo-relative as is,
        absolute under the root made relative, any other absolute path by its longest suffix
        that is a listed file (a run in a container's ``/testbed``, an installed copy of the
        package); ``None`` when nothing listed matches (the standard library, an agent's own
        unlisted script). A Windows path (``C:\repo\pkg\mod.py``, ``\\host\share\…``) is
        absolute too: under the root when it starts with the root (drive letter in any case),
        else mapped by suffix like any other."""
        index = self.index
        if index is None:
            return None
        path = path.replace("\\", "/").strip()
        drive = _WINDOWS_ABSOLUTE.match(path)
        if drive is not None:
            base = self.base
            if base and path[:1].lower() + path[1 : len(base)] == base[:1].lower() + base[1:]:
                rel = path[len(base) :]
                return rel if index.exists(rel) else None
            path = "/" + path[drive.end() :]
        if not path.startswith("/"):
            rel = path[2:] if path.startswith("./") else path
            return rel if index.exists(rel) else self._by_suffix(rel)
        inside = self._under_root(path)
        if inside is not None:
            return inside if index.exists(inside) else None
        if path.rsplit("/", 1)[-1] not in index.by_name:
            return None  # no listed file has its name: no suffix can match (most frames: the stdlib)
        # longest suffix first, the first part left out (the root it ran under), and none with
        # more parts than the deepest listed file: a deep path of a hostile output costs little
        parts = [p for p in path.split("/") if p]
        for n in range(min(len(parts) - 1, index.depth + 1), 0, -1):
            rel = "/".join(parts[-n:])
            if index.exists(rel):
                return rel
        return None

    def in_container(self, path: str) -> str | None:
        """An absolute path outside the root as the listed file or folder it names in a copy of
        the workspace (a harness's container: ``/workspace/lib/a.js`` → ``lib/a.js``,
        ``/testbed/src`` → ``src``): a listed file by its longest suffix (:meth:`frame_path`),
        else a listed folder by its longest suffix (a name alone only one folder deep:
        ``/workspace/src``, not ``/x/y/src``); never when the path's first folder is a Filesystem
        Hierarchy Standard folder (``/usr/lib/…/site-packages/x`` is the machine's, ``/tmp/src``
        no workspace folder).
        ``None`` when nothing listed matches (before the index is prepared, always)."""
        index = self.index
        parts = [x for x in path.replace("\\", "/").split("/") if x]
        if index is None or len(parts) < 2 or parts[0] in SYSTEM_FOLDERS:
            return None
        listed = self.frame_path(path)
        if listed is not None and ("/" in listed or len(parts) == 2):
            return listed  # a root file's name alone only one folder deep (``/workspace/setup.py``)
        for n in range(min(len(parts) - 1, index.depth + 1), 0, -1):
            folder = "/".join(parts[-n:])
            if index.has_dir(folder) and (n > 1 or len(parts) == 2):
                return folder
        return None

    def _by_suffix(self, rel: str) -> str | None:
        """The one listed file whose path ends with the relative path ``rel`` (at least a folder
        and a name): a JVM frame names its package's folder and file (``org/x/Foo.java``) under
        a source root the frame does not print (``mod/src/main/java/``), a run in a sub-folder
        prints paths relative to it. ``None`` when none or several do (the test tree's left out
        first), and past :data:`SUFFIX_SCAN` files of that name."""
        index = self.index
        if index is None or "/" not in rel:
            return None
        tail = "/" + rel
        found = [p for p in index.by_name.get(rel.rsplit("/", 1)[-1], ())[:SUFFIX_SCAN] if p.endswith(tail)]
        if len(found) > 1:
            found = [p for p in found if not in_test_tree(p)]
        return found[0] if len(found) == 1 else None

    def written_path(self, path: str) -> str | None:
        """A path a write names, as a repo-relative path: normalised (``a/../b``, ``a//b``,
        ``./``), absolute under the root made relative, any other absolute path mapped like a
        traceback's (:meth:`frame_path`: a listed file by suffix, ``/testbed/…``; by its name
        alone only when it is one folder deep) or, for a new file, by its folder's longest
        suffix that is a listed folder (or whose parent is: a new subpackage); ``None`` outside
        the workspace or when nothing maps; never when the path's first folder is a Filesystem
        Hierarchy Standard folder (``/etc/tool/config``, ``/tmp/Test.java``,
        ``/usr/lib/…/site-packages/pkg/x.py``: the machine's files, as :meth:`in_container` reads
        them)."""
        p = posixpath.normpath(path.replace("\\", "/").strip()) if path else ""
        if not p or p == "." or p == ".." or p.startswith("../"):
            return None
        if not p.startswith("/"):
            return p
        inside = self._under_root(p)
        if inside is not None:
            return inside or None
        index = self.index
        if index is None:
            return None
        parts = [x for x in p.split("/") if x]
        if not parts or parts[0] in SYSTEM_FOLDERS:
            return None  # the root itself, or the machine's own folders
        listed = self.frame_path(p)
        if listed is not None and ("/" in listed or len(parts) <= 2):
            # a name alone maps only a path one folder deep (``/testbed/README.md``), not any
            # file of that name elsewhere (``/x/y/README.md``)
            return listed
        for new_dirs in (0, 1):  # a new file in a listed folder, or in a new folder of one
            for n in range(min(len(parts) - 1 - new_dirs, index.depth + 1), 0, -1):
                folder = "/".join(parts[-1 - new_dirs - n : len(parts) - 1 - new_dirs])
                if index.has_dir(folder):
                    return "/".join(parts[-1 - new_dirs - n :])
        return None
