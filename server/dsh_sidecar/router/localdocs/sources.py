"""What the offline docs index holds: each source lists its documents, bounded, with a stamp
that changes when they do (standard library only; no source runs or imports anything it reads).

A document is ``(url, title, body)``; ``body`` is plain text cut to :data:`MAX_BODY_CHARS`.
A source lists its items cheaply and always in the same order (``items``), then reads one at a
time (``read``), so an index build cut short resumes where it stopped.
Sources, in the order they are built (the quick, most useful ones first):

* ``project`` — the project's own docs: ``README*``, ``CHANGELOG*``, ``CONTRIBUTING*`` at its
  root and Markdown/reST/text files under ``docs/`` and ``doc/`` (at most
  :data:`MAX_PROJECT_FILES`, 3 levels), read through the workspace's guarded reader (the
  workspace is untrusted: no symlink out, no FIFO, bounded). ``file:`` URLs.
* ``packages`` — each installed Python distribution's summary and long description (its
  README, from the metadata), linked to its documentation or home page.
* ``python`` — the Python language reference topics this interpreter ships
  (``pydoc_data.topics``), linked to docs.python.org.
* ``modules`` — the module docstrings of the distributions' public modules (read from the
  head of each file with a pattern, never imported), ``file:`` URLs.
* ``man`` — man pages of sections 1, 5, 7 and 8 under the standard man folders, commands on
  ``PATH`` first (the roff macros stripped), ``man:`` URLs.

The results earlier web searches fetched are the index's own (:mod:`.index`).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

#: Longest body indexed per document, characters.
MAX_BODY_CHARS: Final = 6000
#: Bounds per source: documents (and files read for them).
MAX_PROJECT_FILES: Final = 400
MAX_PACKAGES: Final = 600
MAX_MODULES: Final = 1500
MAX_MODULES_PER_PACKAGE: Final = 40
MAX_MAN_PAGES: Final = 2500
#: Bytes read from the head of a module (its docstring is at the top) or a man page.
HEAD_BYTES: Final = 16 * 1024
#: Largest compressed man page read, bytes.
MAX_MAN_BYTES: Final = 512 * 1024
#: Doc file names and extensions of the project source.
PROJECT_ROOT_FILES: Final = re.compile(r"^(readme|changelog|changes|history|contributing|news)(\.[a-z]+)?$", re.I)
PROJECT_DOC_EXT: Final = frozenset({".md", ".markdown", ".rst", ".txt", ".adoc"})
PROJECT_DOC_DIRS: Final = ("docs", "doc", "documentation")
#: Man folders and sections indexed.
MAN_DIRS: Final = ("/usr/share/man", "/usr/local/share/man", "/usr/local/man")
MAN_SECTIONS: Final = ("1", "8", "5", "7")


@dataclass(frozen=True)
class Doc:
    """One document: where it is (a URL), its title and its plain-text body."""

    url: str
    title: str
    body: str


@dataclass(frozen=True)
class Source:
    """A named list of documents: ``stamp()`` is cheap and changes when they do; ``items()``
    lists them (bounded, in a stable order) and ``read(item)`` reads one (``None``: nothing to
    index there)."""

    name: str
    stamp: Callable[[], str]
    items: Callable[[], Sequence[Any]]
    read: Callable[[Any], Doc | None]

    def docs(self, start: int = 0) -> Iterator[Doc]:
        """The documents from the ``start``-th item on."""
        for item in self.items()[start:]:
            doc = self.read(item)
            if doc is not None:
                yield doc


def _digest(parts: list[str]) -> str:
    return hashlib.sha1("\0".join(parts).encode("utf-8", "replace")).hexdigest()[:16]


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")[:MAX_BODY_CHARS]


# ---------------------------------------------------------------------------- project


def _project_files(root: Path) -> list[str]:
    """Repo-relative paths of the project's doc files (no symlinks followed, bounded)."""
    out: list[str] = []
    try:
        with os.scandir(root) as it:
            for entry in it:
                if PROJECT_ROOT_FILES.match(entry.name) and entry.is_file(follow_symlinks=False):
                    out.append(entry.name)
    except OSError:
        return []
    for top in PROJECT_DOC_DIRS:
        stack = [(top, 0)]
        while stack and len(out) < MAX_PROJECT_FILES:
            rel, depth = stack.pop()
            try:
                with os.scandir(root / rel) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                child = f"{rel}/{entry.name}"
                if entry.name.startswith("."):
                    continue
                if entry.is_dir(follow_symlinks=False) and depth < 3:
                    stack.append((child, depth + 1))
                elif (
                    entry.is_file(follow_symlinks=False) and os.path.splitext(entry.name)[1].lower() in PROJECT_DOC_EXT
                ):
                    out.append(child)
                if len(out) >= MAX_PROJECT_FILES:
                    break
    return sorted(out)[:MAX_PROJECT_FILES]


_HEADING: Final = re.compile(r"^\s{0,3}#{1,3}\s+(.+?)\s*#*\s*$|^(.+)\n[=\-~^]{3,}\s*$", re.M)


def _title_of(rel: str, text: str) -> str:
    m = _HEADING.search(text[:4000])
    heading = (m.group(1) or m.group(2)).strip() if m else ""
    return f"{heading} ({rel})" if heading else rel


def environment_source_name(kind: str) -> str:
    """``<kind>:<digest of this interpreter's environment>``: the name of the installed
    distributions' documents (``packages``, ``modules``) in the index, which one cache folder
    shares among every virtual environment of the user (each has other distributions)."""
    return f"{kind}:{_digest([os.path.realpath(sys.prefix)])}"


def project_source_name(root: Path) -> str:
    """``project:<digest of the resolved root>``: the name of ``root``'s docs in the index,
    which one cache folder shares among every workspace of the user."""
    return f"project:{_digest([str(root.resolve())])}"


def project_source(root: Path) -> Source:
    """The project's docs (module docstring); ``root`` is the workspace folder."""
    from dsh_sidecar.workspace.fsguard import read_or_none

    def stamp() -> str:
        parts = [str(root.resolve())]
        for rel in _project_files(root):
            try:
                st = os.stat(root / rel, follow_symlinks=False)
                parts.append(f"{rel}:{st.st_mtime_ns}:{st.st_size}")
            except OSError:
                continue
        return _digest(parts)

    def read(rel: str) -> Doc | None:
        data = read_or_none(root, rel, 1024 * 1024)
        if not data:
            return None
        text = _text(data)
        return Doc((root.resolve() / rel).as_uri(), _title_of(rel, text), text)

    return Source(project_source_name(root), stamp, lambda: _project_files(root), read)


# ---------------------------------------------------------------------------- packages


def _distributions() -> list[metadata.Distribution]:
    seen: dict[str, metadata.Distribution] = {}
    for dist in metadata.distributions():
        try:
            name = dist.metadata["Name"]
        except Exception:  # a broken .dist-info: skipped
            continue
        if name and name.lower() not in seen:
            seen[name.lower()] = dist
        if len(seen) >= MAX_PACKAGES:
            break
    return [seen[k] for k in sorted(seen)]


def _packages_stamp() -> str:
    return _digest([f"{d.metadata['Name']}=={d.version}" for d in _distributions()])


def _doc_url(dist: metadata.Distribution) -> str:
    meta: Any = dist.metadata
    urls = meta.get_all("Project-URL") or []
    by = {}
    for entry in urls:
        label, _, url = entry.partition(",")
        by[label.strip().lower()] = url.strip()
    for key in ("documentation", "docs", "homepage", "home", "source"):
        if by.get(key, "").startswith(("https://", "http://")):
            return by[key]
    home = meta.get("Home-page") or ""
    if home.startswith(("https://", "http://")):
        return home
    return f"https://pypi.org/project/{quote(dist.metadata['Name'])}/"


def packages_source() -> Source:
    """Each installed distribution's summary and description."""

    def read(dist: metadata.Distribution) -> Doc:
        meta: Any = dist.metadata  # an email.message.Message
        name, summary = meta["Name"], (meta.get("Summary") or "").strip()
        body = meta.get_payload() or meta.get("Description") or ""
        title = f"{name} {dist.version}" + (f" — {summary}" if summary else "")
        return Doc(_doc_url(dist), title, f"{summary}\n{body}"[:MAX_BODY_CHARS])

    return Source(environment_source_name("packages"), _packages_stamp, _distributions, read)


_DOCSTRING: Final = re.compile(r'\A(?:\s*#[^\n]*\n|\s*\n)*\s*[rRuU]?("""|\'\'\')(.*?)\1', re.S)


def _module_name(path: str) -> str | None:
    if not path.endswith(".py") or "/tests/" in f"/{path}" or "/test/" in f"/{path}":
        return None
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or any(p.startswith("_") or not p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def _module_files() -> list[tuple[str, str, str]]:
    """``(distribution, module, path)`` of the public modules, at most
    :data:`MAX_MODULES_PER_PACKAGE` per distribution and :data:`MAX_MODULES` in all."""
    out: list[tuple[str, str, str]] = []
    for dist in _distributions():
        count = 0
        for file in dist.files or []:
            name = _module_name(str(file).replace(os.sep, "/"))
            if name is None:
                continue
            out.append((dist.metadata["Name"], name, str(dist.locate_file(file))))
            count += 1
            if count >= MAX_MODULES_PER_PACKAGE or len(out) >= MAX_MODULES:
                break
        if len(out) >= MAX_MODULES:
            break
    return out


def modules_source() -> Source:
    """The module docstrings of the distributions' public modules (read, never imported)."""

    def read(item: tuple[str, str, str]) -> Doc | None:
        dist, name, path = item
        try:
            with open(path, "rb") as f:
                head = f.read(HEAD_BYTES).decode("utf-8", "replace")
        except OSError:
            return None
        m = _DOCSTRING.match(head)
        if not m or len(m.group(2).strip()) < 20:
            return None
        return Doc(Path(path).as_uri(), f"{name} ({dist})", m.group(2).strip()[:MAX_BODY_CHARS])

    return Source(environment_source_name("modules"), _packages_stamp, _module_files, read)


def python_source() -> Source:
    """The language reference topics of this interpreter (``pydoc_data.topics``)."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"

    def items() -> list[tuple[str, str]]:
        try:
            from pydoc_data.topics import topics
        except ImportError:  # a Python built without it
            return []
        return [(key, str(topics[key])) for key in sorted(topics)]

    def read(item: tuple[str, str]) -> Doc:
        key, text = item
        url = f"https://docs.python.org/{version}/search.html?q={quote(key)}"
        return Doc(url, f"Python {version}: {key}", text[:MAX_BODY_CHARS])

    return Source("python", lambda: sys.version, items, read)


# ---------------------------------------------------------------------------- man pages

_ROFF_ESCAPE: Final = re.compile(r"\\f(?:\[[^\]]*\]|\(..|.)|\\\(..|\\\[[^\]]*\]|\\[&|^/,%:~]|\\s[-+]?\d")
_ROFF_SPECIAL: Final = {"\\-": "-", "\\e": "\\", "\\ ": " ", "\\(em": "—", "\\(en": "–"}


def roff_to_text(roff: str) -> tuple[str, str]:
    """``(summary, text)`` of a man page's roff source: the NAME section's line (``ls - list
    directory contents``) and the text with macros and font escapes removed (headings kept)."""
    lines: list[str] = []
    for raw in roff.splitlines():
        line = raw
        for k, v in _ROFF_SPECIAL.items():
            line = line.replace(k, v)
        line = _ROFF_ESCAPE.sub("", line)
        if line.startswith((".", "'")):
            macro, _, rest = line[1:].partition(" ")
            macro = macro.strip()
            if macro in ("SH", "SS"):
                lines.append("\n" + rest.strip().strip('"').upper() + "\n")
            elif (
                macro
                in (
                    "B",
                    "I",
                    "BR",
                    "IR",
                    "RB",
                    "RI",
                    "BI",
                    "IB",
                    "SM",
                    "SB",
                    "IP",
                    "TP",
                    "Nm",
                    "Nd",
                    "Fl",
                    "Ar",
                )
                and rest.strip()
            ):
                lines.append(rest.replace('"', "").strip())
            continue  # every other request (.TH, .PP, .br, comments) carries no text
        lines.append(line)
    text = "\n".join(lines)
    summary = ""
    m = re.search(r"\nNAME\n+(.+)", text)
    if m:
        summary = " ".join(m.group(1).split())
    return summary, text


def _man_pages() -> list[tuple[str, str, Path]]:
    """``(name, section, path)`` of the pages indexed: section 1 and 8 pages of commands on
    ``PATH`` first, then the rest of sections 5 and 7, at most :data:`MAX_MAN_PAGES`."""
    on_path: set[str] = set()
    for bin_dir in os.environ.get("PATH", "").split(os.pathsep):
        try:
            on_path.update(os.listdir(bin_dir))
        except OSError:
            continue
    first: list[tuple[str, str, Path]] = []
    rest: list[tuple[str, str, Path]] = []
    seen: set[tuple[str, str]] = set()
    for base in MAN_DIRS:
        for section in MAN_SECTIONS:
            folder = Path(base) / f"man{section}"
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                continue
            for fname in names:
                m = re.match(r"^(.+)\.(\d\w*)(?:\.gz)?$", fname)
                if not m or (m.group(1), section) in seen:
                    continue
                seen.add((m.group(1), section))
                entry = (m.group(1), section, folder / fname)
                (first if section in ("1", "8") and m.group(1) in on_path else rest).append(entry)
    rest = [e for e in rest if e[1] in ("5", "7")]
    return (first + rest)[:MAX_MAN_PAGES]


def man_source() -> Source:
    """Man pages (module docstring)."""

    def stamp() -> str:
        parts = []
        for base in MAN_DIRS:
            for section in MAN_SECTIONS:
                folder = os.path.join(base, f"man{section}")
                try:
                    parts.append(f"{folder}:{os.stat(folder).st_mtime_ns}")
                except OSError:
                    continue
        return _digest([*parts, os.environ.get("PATH", "")])

    def read(item: tuple[str, str, Path]) -> Doc | None:
        name, section, path = item
        try:
            if path.is_symlink() or path.stat().st_size > MAX_MAN_BYTES:
                return None
            with gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb") as f:
                head = f.read(HEAD_BYTES).decode("utf-8", "replace")
        except (OSError, EOFError, gzip.BadGzipFile):
            return None
        if head.startswith(".so "):  # a page that includes another: indexed under that one
            return None
        summary, text = roff_to_text(head)
        title = f"{name}({section})" + (f" — {summary.split(' - ', 1)[-1]}" if summary else "")
        return Doc(f"man:{quote(name)}({section})", title, text[:MAX_BODY_CHARS])

    return Source("man", stamp, _man_pages, read)


def sources(project: Path | None) -> list[Source]:
    """Every source, in build order (the project's first when there is one)."""
    out = [project_source(project)] if project is not None else []
    return out + [packages_source(), python_source(), modules_source(), man_source()]
