"""What a task text names: the code identifiers, dotted names, file paths and names, quoted
error messages, exception names and stack-trace frames of an issue or a prompt, and its prose
words. Pure functions over untrusted text (every pattern linear; the text is cut to
:data:`MAX_TASK_CHARS` first, and every list is bounded).

Where a mention comes from says how much it weighs (``docs/SCHEME.md``, "The task lead"): a name
in backticks or in the title is the issue's own subject; a name in a fenced code block may be the
reporter's own code (``MyAppendable``); a frame is where the program was, the innermost one
nearest to the fault.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Final

from dsh_sidecar.suggester.parse.runs import traceback_frames
from dsh_sidecar.workspace.facts import STOP_WORDS

#: Longest task text read, characters (an issue with logs is cut: its head says what it is about).
MAX_TASK_CHARS: Final = 32_000
#: Most mentions of each kind kept.
MAX_MENTIONS: Final = 200
#: Most prose words kept (the distinct words, in order of first use).
MAX_WORDS: Final = 400
#: Most distinct search terms kept (in order of first use).
MAX_TERMS: Final = 1000

#: Extensions a path mention may end with (code, docs, config, templates, styles).
_PATH_EXT: Final = (
    r"py|pyi|pyx|js|jsx|mjs|cjs|ts|tsx|mts|cts|java|kt|kts|scala|go|rs|rb|php|cs|c|h|cc|cpp|hpp|swift|"
    r"vue|svelte|html|css|scss|less|md|rst|txt|json|ya?ml|toml|ini|cfg|xml|gradle|properties|sh|sql|proto"
)
#: A path or a file name: segments of word characters, dots and dashes joined by ``/`` (or ``\``),
#: ending in a known extension; a ``~``/``@`` scope or a leading ``/`` (an absolute path: its
#: trailing segments match the workspace's) allowed at the start. Not inside a longer word
#: (``a.pyc``, ``x.jsonl`` are not ``.py``/``.json``).
_PATH: Final = re.compile(
    rf"(?<![\w.\-/\\@~])(/?(?:[@~]?[\w.\-]{{1,100}}[/\\]){{0,30}}[\w.\-]{{0,100}}\w\.(?:{_PATH_EXT}))(?![\w\-])",
    re.IGNORECASE,
)
#: A folder path without a file name (``src/compiler/phases``, ``lib/plugins/aws/``): at least
#: two segments; only inside backticks (prose has ``and/or``).
_FOLDER: Final = re.compile(r"^(?:[\w.\-]{1,100}/){1,30}[\w.\-]{1,100}/?$")
#: A GitHub link to a file: ``github.com/<owner>/<repo>/blob/<ref>/<path>``.
_GITHUB_BLOB: Final = re.compile(
    r"github\.com/[\w.\-]{1,100}/[\w.\-]{1,100}/(?:blob|tree)/[\w.\-]{1,100}/([^\s#?)\]>'\"]{1,400})"
)
#: Java and Kotlin frames: ``at com.example.Foo.bar(Foo.java:12)`` (the class is the part before
#: the method; inner classes ``Foo$Bar`` belong to ``Foo``).
_JVM_FRAME: Final = re.compile(
    r"\bat ((?:[\w$]{1,100}\.){1,30})([\w$<>]{1,100})\(([\w$]{1,100}\.(?:java|kt|scala))(?::\d+)?\)"
)
#: A line of a stack trace: Python's ``File "p.py", line 3``, pytest's ``p.py:3: in f``, a Node or
#: JVM frame ``at … (p.js:3:1)`` / ``at a.B.c(B.java:3)``. Its file is a frame (:func:`_frames`),
#: not a path the text names: a trace of thirty frames names thirty files the reporter never
#: chose, most of them the framework's plumbing.
_FRAME_LINE: Final = re.compile(
    r'^[ \t]*(?:File "[^"\n]{1,400}", line \d+|at [^\n]{0,600}?\.[A-Za-z]{1,10}:\d+|[\w./\\:-]{1,400}\.py:\d+: in )[^\n]*',
    re.M,
)
#: The file of a frame line (:data:`_FRAME_LINE`): Python's quoted path, else ``path.ext:line``.
_FRAME_FILE: Final = re.compile(r'File "([^"\n]{1,400})"|([^\s"\'():\[\]]{1,400}\.[A-Za-z]{1,10}):\d+')
#: A member in Javadoc's and KDoc's form, ``Version#isRelease263OrHigher`` (also ``Foo#bar()``):
#: the class and the member, read as the dotted ``Version.isRelease263OrHigher``.
_MEMBER_REF: Final = re.compile(r"(?<![\w$.#/])([A-Z][\w$]{0,100})#([A-Za-z_$][\w$]{0,100})(?![\w$])")
#: An inline code span (single or double backticks) on one line.
_CODE_SPAN: Final = re.compile(r"(`{1,2})([^`\n]{1,300}?)\1")
#: A fenced code block (```` ``` ```` or ``~~~``), its body; an unclosed fence runs to the end.
#: The lookahead sees the opening line's end first: without it a last line of 32,000 backticks
#: was tried run length by run length (quadratic: seconds holding the GIL for one task text).
_FENCE: Final = re.compile(r"^[ \t]{0,3}(?=[^\n]*\n)(```+|~~~+)[^\n]*\n(.*?)(?:^[ \t]{0,3}\1[ \t]*$|\Z)", re.M | re.S)
#: An identifier (ASCII; ``$`` for JavaScript names).
_IDENT: Final = re.compile(r"[A-Za-z_$][\w$]{1,100}")
#: A dotted name: identifiers joined by dots (``a.b``, ``pkg.mod.Class.method``), not a number,
#: a host name in a URL or a file name (checked after the match).
_DOTTED: Final = re.compile(r"(?<![\w.$/\\@:-])([A-Za-z_$][\w$]{0,100}(?:\.[A-Za-z_$][\w$]{0,100}){1,12})(?![\w$])")
#: An API documentation page named after a dotted name (Sphinx, javadoc-like):
#: ``…/api/astropy.io.ascii.write.html``.
_DOC_PAGE: Final = re.compile(r"/([A-Za-z_][\w]{0,100}(?:\.[A-Za-z_][\w]{0,100}){1,12})\.html?\b")
#: A Python import alias: ``import xarray as xr``.
_IMPORT_AS: Final = re.compile(r"^[ \t>]*import ([A-Za-z_][\w.]{0,100}) as ([A-Za-z_]\w{0,50})\s*$", re.M)
#: A call in prose or code: ``name(`` (the name is a code identifier even when it is one word).
_CALL: Final = re.compile(r"(?<![\w$.])([A-Za-z_$][\w$]{1,100})\(")
#: An exception or error type: ``ValueError``, ``ClassCastException``, ``TypeError``, ``SyntaxWarning``.
_EXCEPTION: Final = re.compile(r"\b([A-Z]\w{0,80}(?:Error|Exception|Warning|Fault))\b")
#: The message after an exception name: ``ValueError: could not convert string``.
_EXCEPTION_MESSAGE: Final = re.compile(
    r"\b(?:[\w.$]{0,200}(?:Error|Exception|Warning)|error|Error|ERROR|panic)(?::|\s-)[ \t]+([^\n]{6,300})"
)
#: A quoted string of at least three words in the text (prose or code): ``"could not find %s"``.
_QUOTED: Final = re.compile(r"""(?<![\w])(["'“‘])([^"'“”‘’\n]{10,300}?)(["'”’])""")
#: CamelCase (``GsonBuilder``, ``ISO8601Utils``, ``newJsonWriter``), snake_case (``mul_symbol``),
#: SCREAMING_CASE (``MAX_SIZE``), dunder (``__init__``): identifiers that are code wherever they
#: appear, even in prose.
_CODE_SHAPED: Final = re.compile(
    r"^(?:_*[a-z][a-z0-9]*(?:_+[a-z0-9]+)+_*|_*[A-Z][A-Z0-9]*(?:_+[A-Z0-9]+)+_*|__\w+__"
    r"|[A-Z]+[a-z0-9]+(?:[A-Z]+[a-z0-9]*)+|[a-z]+[0-9]*(?:[A-Z]+[a-z0-9]*)+|[A-Z]{2,}[a-z]+\w*|[A-Z][a-z]+[A-Z0-9]\w*)$"
)
#: A URL (its words are the host's and the site's, not the task's).
_URL: Final = re.compile(r"\b(?:https?|ftp)://[^\s)\]>'\"`]{1,2000}")
#: Prose words (letters, at least three).
_WORD: Final = re.compile(r"[A-Za-z][A-Za-z0-9]{2,29}")
_CAMEL_SPLIT: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
#: A token of the text as code search reads it, and the parts of an identifier (camelCase,
#: snake_case, digits: ``newJSONWriter2`` → new, JSON, Writer, 2).
_TERM: Final = re.compile(r"[A-Za-z0-9_]{2,100}")
_TERM_PART: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
#: A name in the text's code, its pieces joined by ``:``, ``-``, ``_`` or case (``bind:this``,
#: ``on-click``, ``IfBlock``; a template's ``{#if}``/``{@debug}`` give ``if``/``debug``).
_CODE_NAME: Final = re.compile(r"[A-Za-z][A-Za-z0-9]{0,60}(?:[:_\-][A-Za-z][A-Za-z0-9]{0,60}){0,5}")
#: The words of a name, as the ranker reads a file name's (``IfBlock`` → If, Block; ``h1`` one word).
_NAME_PART: Final = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
#: A template's or directive's name, anywhere in the text: after a block sigil (``{#if``,
#: ``{:else``, ``{@debug``, ``{/each``, ``{{#if``, ``{% for``) or a directive ``prefix:name``
#: (``bind:this``, ``on:click``; lower-case on both sides, not a URL's scheme or a time).
_TEMPLATE_NAME: Final = re.compile(
    r"(?:\{\{?[#:@/^]|\{%-?)[ \t]{0,4}([A-Za-z][\w-]{0,60})|(?<![\w:/.\-])([a-z][a-z0-9]{0,30}:[a-z][\w-]{0,60})(?![\w:/])"
)
#: Words of a code name kept (a file name of more words is no name of the text's code).
MAX_CODE_NAME_WORDS: Final = 4
#: English words too common to search for (Lucene's English stop words).
_TERM_STOP: Final = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
    "they this to was will with".split()
)
#: Words about tests: a task with them may be about a test file.
_TEST_WORDS: Final = frozenset(
    {"test", "tests", "testing", "pytest", "unittest", "junit", "jest", "spec", "fixture", "fixtures"}
)
#: Top-level names of languages' own libraries and of common third parties: a dotted name
#: starting with one is not the workspace's (``os.path.join``, ``java.util.Map``, ``np.array``).
_FOREIGN_ROOTS: Final = frozenset(
    {"os", "sys", "re", "java", "javax", "np", "numpy", "pd", "pandas", "console", "Math", "JSON", "Object",
     "Array", "String", "window", "document", "process", "self", "this", "http", "https", "www", "org", "net",
     "com", "io", "e", "g", "i", "ie", "eg", "etc", "vs"}
)  # fmt: skip


@dataclass(frozen=True)
class Mentions:
    """What one task text names (each tuple in order of first mention, without repeats).

    ``subject``: identifiers of the title and of inline code spans (the issue's own words for
    the code); ``identifiers``: every code-shaped name (spans, calls, CamelCase/snake_case in
    prose or code blocks), with ``counts`` how often each occurs; ``dotted``: dotted names
    (``pkg.mod.Class``); ``paths``: paths and file names; ``frames``: stack-trace frames
    ``(path or class, function)``, innermost first; ``errors``: quoted messages and exception
    messages; ``exceptions``: exception type names; ``words``: the distinct prose words
    (lower-case, stop words out) with ``word_counts``; ``about_tests``: the text talks about
    tests (then test files are not demoted)."""

    subject: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)
    dotted: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    frames: tuple[tuple[str, str], ...] = ()
    errors: tuple[str, ...] = ()
    exceptions: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    word_counts: dict[str, int] = field(default_factory=dict)
    title_words: tuple[str, ...] = ()
    about_tests: bool = False
    terms: dict[str, int] = field(default_factory=dict)
    title_terms: tuple[str, ...] = ()
    code_names: dict[tuple[str, ...], int] = field(default_factory=dict)
    template_names: dict[tuple[str, ...], int] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """Nothing to rank by."""
        return not (self.identifiers or self.dotted or self.paths or self.frames or self.errors or self.words)


def _unique(items: list[str], limit: int = MAX_MENTIONS) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))[:limit]


def _clean_path(raw: str) -> str:
    p = raw.replace("\\", "/").strip()
    while p.startswith("./"):
        p = p[2:]
    return p.lstrip("/")


def code_shaped(name: str) -> bool:
    """Whether ``name`` looks like code in any context (CamelCase, snake_case, SCREAMING_CASE,
    a dunder), as opposed to a word that is code only in backticks or before ``(``."""
    return bool(_CODE_SHAPED.match(name))


def split_identifier(name: str) -> list[str]:
    """The lower-case words of an identifier: ``newJsonWriter`` → ``new json writer``,
    ``mul_symbol`` → ``mul symbol``."""
    out: list[str] = []
    for part in re.split(r"[_$\d]+", name):
        out += [p.lower() for p in _CAMEL_SPLIT.split(part) if p]
    return out


def _dotted_ok(name: str) -> bool:
    parts = name.split(".")
    if parts[0] in _FOREIGN_ROOTS or parts[0].lower() in ("www", "http", "https"):
        return False
    last = parts[-1].lower()
    # a file name (`setup.py`) is a path mention; a version or abbreviation is nothing
    return not re.fullmatch(_PATH_EXT, last) and len(name) >= 4


def strip_comments(text: str) -> str:
    """``text`` without HTML comments (an issue template's hidden instructions, which name the
    project's contributing guide and code of conduct in every issue). Linear: ``str.find``."""
    out: list[str] = []
    at = 0
    while True:
        start = text.find("<!--", at)
        if start < 0:
            out.append(text[at:])
            break
        out.append(text[at:start])
        end = text.find("-->", start + 4)
        if end < 0:
            break
        at = end + 3
    return "".join(out)


#: A task-list item of an issue form (``- [x] I have searched the issues``): the template's
#: checklist, the same in every issue of the repository, not the reporter's words.
_CHECKLIST: Final = re.compile(r"^[ \t]{0,8}[-*+][ \t]{1,4}\[[ xX]\][^\n]{0,2000}$", re.M)


def strip_template(text: str) -> str:
    """``text`` without an issue template's parts: hidden HTML comments and task-list items."""
    return _CHECKLIST.sub("", strip_comments(text))


def _paths(text: str, spans: list[str]) -> list[str]:
    """The paths a task names: repository links, path-shaped words, code spans naming a folder."""
    paths: list[str] = []
    for m in _GITHUB_BLOB.finditer(text):
        paths.append(_clean_path(m.group(1)))
    for m in _PATH.finditer(text):
        raw = m.group(1)
        if "://" in text[max(0, m.start() - 8) : m.start()] or raw.startswith(("http", "www.")):
            continue
        paths.append(_clean_path(raw))
    for span in spans:
        if _FOLDER.match(span) and not span.startswith(("http", "www.")):
            paths.append(_clean_path(span.rstrip("/")))
    return paths


def _frames(text: str) -> list[tuple[str, str]]:
    """The stack frames a task quotes (Python's, then the JVM's as ``pkg/Cls.java``), innermost first."""
    frames: list[tuple[str, str]] = []
    frames += traceback_frames(text)
    jvm = [(m.group(1)[:-1].split("$", 1)[0], m.group(2)) for m in _JVM_FRAME.finditer(text)]
    frames += [(cls.replace(".", "/") + ".java", fn) for cls, fn in jvm]  # innermost first already
    # any other frame-shaped line (a browser's `at f (Selector.ts:228)` without a column, an
    # indented pytest frame): its file, in the text's order, after the frames parsed above
    known: dict[str, list[str]] = {}
    for p, _ in frames:
        known.setdefault(p.replace("\\", "/").rsplit("/", 1)[-1], []).append(p.replace("\\", "/"))
    for m in _FRAME_LINE.finditer(text):
        at = _FRAME_FILE.search(m.group(0)[:1000])  # its file is near its start
        if not at or len(frames) >= MAX_MENTIONS:
            continue
        path = (at.group(1) or at.group(2)).replace("\\", "/")
        same = known.setdefault(path.rsplit("/", 1)[-1], [])
        if not any(k == path or k.endswith("/" + path) for k in same):
            same.append(path)
            frames.append((path, ""))
    return frames


def _errors(text: str) -> list[str]:
    """The error messages a task quotes: an exception's message, or a quoted sentence."""
    errors = [m.group(1).strip().rstrip(".") for m in _EXCEPTION_MESSAGE.finditer(text)]
    for m in _QUOTED.finditer(text):
        s = m.group(2).strip()
        if " " in s and len(_WORD.findall(s)) >= 3 and not s.startswith(("http", "www.")):
            errors.append(s)
    return errors


def _dotted(text: str, sources: tuple[str, ...]) -> list[str]:
    """The dotted names of ``sources`` (an import alias read as its module), API pages first."""
    dotted: list[str] = []
    for m in _DOC_PAGE.finditer(text):  # an API page named after its object: `…/api/pkg.mod.func.html`
        dotted.append(m.group(1))
    aliases = {m.group(2): m.group(1) for m in _IMPORT_AS.finditer(text) if m.group(2) != m.group(1)}
    for source in sources:
        for m in _DOTTED.finditer(source):
            name = m.group(1).rstrip(".")
            head, _, rest = name.partition(".")
            if head in aliases:  # `import xarray as xr` … `xr.where` is `xarray.where`
                name = f"{aliases[head]}.{rest}"
            if _dotted_ok(name):
                dotted.append(name)
    return dotted


def _subject(title: str, spans: list[str]) -> list[str]:
    """The identifiers of the title (code-shaped or called) and of the code spans."""
    subject: list[str] = []
    for source in (title, *spans):
        for m in _IDENT.finditer(source):
            name = m.group(0)
            if source is title and not code_shaped(name) and not _CALL.search(title[m.start() :][: len(name) + 1]):
                continue
            subject.append(name)
    return subject


def _identifier_counts(subject: list[str], sources: tuple[str, ...]) -> Counter[str]:
    """How often each identifier (the subject's, the calls and code-shaped words of ``sources``) occurs."""
    idents: list[str] = list(subject)
    for source in sources:
        idents += [m.group(1) for m in _CALL.finditer(source)]
        idents += [m.group(0) for m in _IDENT.finditer(source) if code_shaped(m.group(0))]
    counts = Counter(i for i in idents if len(i) >= 3)
    for name in list(counts):
        if name.lower() in STOP_WORDS:
            del counts[name]
    return counts


def _words(text: str) -> list[str]:
    """The task's words (identifiers split), links left out, stop words dropped."""
    words: list[str] = []
    for m in _WORD.finditer(_URL.sub(" ", text)):  # a link's host and path are no prose
        w = m.group(0)
        pieces = split_identifier(w) if code_shaped(w) else [w.lower()]
        words += [p for p in pieces if len(p) >= 3 and p not in STOP_WORDS]
    return words


def code_names(sources: list[str]) -> dict[tuple[str, ...], int]:
    """The names of ``sources`` (code) as their lower-case words (camelCase, snake_case,
    kebab-case and ``a:b`` split), and how often each occurs; at most :data:`MAX_MENTIONS`
    distinct names, each of at most :data:`MAX_CODE_NAME_WORDS` words."""
    counts: dict[tuple[str, ...], int] = {}
    for source in sources:
        for m in _CODE_NAME.finditer(source):
            words = tuple(p.lower() for p in _NAME_PART.findall(m.group(0)))
            if not words or len(words) > MAX_CODE_NAME_WORDS or len("".join(words)) < 2:
                continue
            if words in counts:
                counts[words] += 1
            elif len(counts) < MAX_MENTIONS:
                counts[words] = 1
    return counts


def template_names(text: str) -> dict[tuple[str, ...], int]:
    """The template blocks and directives of ``text`` (:data:`_TEMPLATE_NAME`) as their
    lower-case words, and how often each occurs (bounded as :func:`code_names`)."""
    return code_names([m.group(1) or m.group(2) for m in _TEMPLATE_NAME.finditer(text)])


def search_terms(text: str) -> dict[str, int]:
    """The code search terms of ``text`` and how often each occurs: every token lower-cased,
    an identifier both whole and as its parts (``newJsonWriter`` → newjsonwriter, new, json,
    writer; ``mul_symbol`` → mul_symbol, mul, symbol), one-character tokens and English stop
    words out; at most :data:`MAX_TERMS` distinct terms."""
    counts: dict[str, int] = {}
    for m in _TERM.finditer(text):
        raw = m.group(0).strip("_")
        whole = raw.lower()
        parts = [p.lower() for p in _TERM_PART.findall(raw)]
        for t in [whole, *parts] if len(parts) > 1 else [whole]:
            if len(t) < 2 or t in _TERM_STOP:
                continue
            if t in counts:
                counts[t] += 1
            elif len(counts) < MAX_TERMS:
                counts[t] = 1
    return counts


def mentions(text: str, title: str | None = None) -> Mentions:
    """The :class:`Mentions` of a task ``text`` (``title``: its first line when not given)."""
    text = strip_template(text[:MAX_TASK_CHARS])
    if title is None:
        title = text.split("\n", 1)[0][:300]
    # `Foo#bar` is `Foo.bar`, and its class a code name even when it is one word (`Version`)
    members = [m.group(1) for m in _MEMBER_REF.finditer(text)]
    title_members = [m.group(1) for m in _MEMBER_REF.finditer(title)]
    text, title = _MEMBER_REF.sub(r"\1.\2", text), _MEMBER_REF.sub(r"\1.\2", title)
    # a stack trace is read once, as its frames: its lines' files, classes and words are not
    # also paths, names and words the text chose (thirty frames are mostly the framework's)
    frames = tuple(dict.fromkeys(_frames(text)))[:MAX_MENTIONS]
    text = _FRAME_LINE.sub("", text)
    fences = [m.group(2) for m in _FENCE.finditer(text)]
    prose = _FENCE.sub("\n", text)
    spans = [m.group(2).strip() for m in _CODE_SPAN.finditer(prose)]
    subject = _subject(title, spans) + title_members
    counts = _identifier_counts(subject, (prose, *fences))
    counts.update(m for m in members if len(m) >= 3 and m.lower() not in STOP_WORDS)
    words = _words(text)
    word_counts = Counter(words)
    title_words = [w.lower() for w in _WORD.findall(title) if w.lower() not in STOP_WORDS]
    lowered = set(word_counts)
    about_tests = bool(lowered & _TEST_WORDS) and any(
        w in lowered for w in ("test", "tests", "testing", "fixture", "fixtures")
    )
    return Mentions(
        subject=_unique([s for s in subject if len(s) >= 3 and s.lower() not in STOP_WORDS]),
        identifiers=_unique(list(counts)),
        counts=dict(counts),
        dotted=_unique(_dotted(text, (title, *spans, prose, *fences))),
        paths=_unique(_paths(text, spans)),
        frames=frames,
        errors=_unique(_errors(text), 50),
        exceptions=_unique([m.group(1) for m in _EXCEPTION.finditer(text)], 50),
        words=_unique(words, MAX_WORDS),
        word_counts=dict(word_counts),
        title_words=_unique(title_words, 50),
        about_tests=about_tests,
        terms=search_terms(text),
        title_terms=tuple(search_terms(title)),
        code_names=code_names([*spans, *fences]),
        template_names=template_names(text),
    )
