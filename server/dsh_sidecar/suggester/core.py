"""The suggester behind ``dsh/postExecute`` (plan: "The intents" … "The ledger").

One call → at most one note. The call becomes a query (``query.py``); the first intent, in
priority order, whose gate crosses its threshold (``classify.py``: pack signals plus structural
evidence, ``evidence.py``) is resolved to targets (``candidates.py``: paths, kinds, topic
matches, symbol relations, the call's own results), ranked by what was learned
(``learning.py``), filtered (dismissed, the file the call reads, recently read) and passed
through noise control (``noise.py``); the note is written by ``notes.py``; every decision is a
ledger line built by ``ledger.py``. Fail-open: any internal error logs a warning and returns
silence.

Nothing here lists the workspace on a call or rebuilds an index inline: the targets are
prepared once the workspace graph's listing exists (:meth:`Suggester.prepare`, on the graph
builder's thread in the server) and re-prepared off the request path when files or content
facts change. A call that arrives before is classified, and suppressed as ``not-ready``.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import posixpath
import re
import stat
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from dsh_protocol import AdditionalContext, PostExecuteParams

from dsh_sidecar.escape import escape_controls
from dsh_sidecar.suggester import evidence, ledger
from dsh_sidecar.suggester.activation import ActivePacks, activate
from dsh_sidecar.suggester.candidates import (
    PROJECT_INTENTS,
    CallContext,
    ContentSearch,
    FileIndex,
    SymbolIndex,
    Target,
    in_test_tree,
    is_doc_path,
    is_test_path,
    language_of,
    merge,
    rank_definitions,
    resolve,
    resolve_results,
    resolve_symbols,
    resolve_topics,
    scoped_into,
)
from dsh_sidecar.suggester.classify import classify
from dsh_sidecar.suggester.config import SuggesterConfig
from dsh_sidecar.suggester.dismissals import Dismissals, iso_seconds
from dsh_sidecar.suggester.gate import INTENTS, gate
from dsh_sidecar.suggester.knowledge import Knowledge
from dsh_sidecar.suggester.learning import Journal, graph_prover, rank, seed, touched_paths
from dsh_sidecar.suggester.noise import NoiseControl
from dsh_sidecar.suggester.notes import make_note
from dsh_sidecar.suggester.packs import ACTIVATION_BUDGET_S, CALL_BUDGET_S, RegexBudget, use_budget
from dsh_sidecar.suggester.query import PATCHED, Query, parse_call
from dsh_sidecar.suggester.section import INDEX_TARGETS, StickySection, render
from dsh_sidecar.workspace.facts import docs_pages, docs_roots, facts_of, kind_is_code
from dsh_sidecar.workspace.files import list_files
from dsh_sidecar.workspace.identity import repository_identity
from dsh_sidecar.workspace.kinds import classify as classify_path

log = logging.getLogger(__name__)

_INDEX_PAGE = re.compile(r"(?i)^(index|readme)\.")
#: A Windows absolute path after ``\`` became ``/``: a drive (``C:/``) or a UNC share's
#: ``//host/`` (the part left out when it is mapped by suffix; the share stays its first folder,
#: as the top folder of a drive does: a checkout shared as ``\\host\repo`` maps ``repo\pkg\m.py``).
_WINDOWS_ABSOLUTE = re.compile(r"[A-Za-z]:/|//[^/]+/(?=[^/]+/)")
#: Longest wait of the process's first classified call for the background preparation, s.
FIRST_CALL_WAIT_S: Final = 0.5
#: Most (intent, identifier, context) symbol lookups cached per preparation.
SYMBOL_CACHE_SIZE: Final = 1024


@dataclass
class View:
    """What one preparation resolved: the file index (with kinds and facts), each intent's
    call-independent targets and fallbacks, and the docs roots. Replaced whole, never mutated
    by a call (a preparation on another thread swaps in a new one)."""

    index: FileIndex
    targets: dict[str, list[Target]] = field(default_factory=dict)
    fallback: dict[str, list[Target]] = field(default_factory=dict)
    docs_roots: frozenset[str] = frozenset()
    symbols: OrderedDict[tuple[Any, ...], list[Target]] = field(default_factory=OrderedDict)
    fact_of: dict[str, frozenset[str]] = field(default_factory=dict)
    #: a project-level intent's prepared targets inside the test tree (``in_test_tree``): named
    #: only to a call that scopes into them
    test_tree: dict[str, list[Target]] = field(default_factory=dict)


def _regular_file(path: Path) -> bool:
    """Whether ``path`` is a regular file now (``stat`` following links; never opened)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _python_package(index: FileIndex, top: str) -> str | None:
    """The folder (or module file without ``.py``) of the top-level Python package ``top`` in
    this workspace: ``top/`` or ``src/top/`` with an ``__init__.py``, or a top-level ``top.py``;
    ``None`` when ``top`` is no package here (the standard library, an installed dependency)."""
    if not top.isidentifier():
        return None
    for folder in (top, f"src/{top}"):
        if index.exists(f"{folder}/__init__.py"):
            return folder
    return top if index.exists(f"{top}.py") else None


def _script_order(paths: list[str], module: str | None, name: str) -> list[str]:
    """Definition files of a script's ``name`` (stable sort): those in the imported ``module``
    path (``a/b.py``, ``a/b/__init__.py``, below ``a/b/``) first, then those whose file name is
    the name in any case (``merge.py`` for ``merge``, ``dataset.py`` for ``Dataset``)."""

    def key(d: str) -> tuple[int, int]:
        inside = module is not None and (d in (module + ".py", module + "/__init__.py") or d.startswith(module + "/"))
        return (0 if inside else 1, 0 if d.rsplit("/", 1)[-1][:-3].lower() == name.lower() else 1)

    return sorted(paths, key=key)


def _matching(targets: list[Target], patterns: list[str]) -> list[Target]:
    """``targets`` whose path or name matches one of the call's file-name globs (``*.pyi``,
    ``*_test.go``); all of them when there is no glob or none matches."""
    globs = [g for g in patterns if not g.startswith("!")]
    if not globs:
        return targets
    kept = [
        t
        for t in targets
        if any(fnmatch.fnmatch(t.path, g) or fnmatch.fnmatch(t.path.rsplit("/", 1)[-1], g) for g in globs)
    ]
    return kept or targets


#: The top-level folders of the Filesystem Hierarchy Standard (3.0, chapter 3) and of Linux's
#: virtual file systems: a file written there directly (``/tmp/README.md``) is the machine's, not
#: a container's checkout of the workspace (``/testbed/README.md``).
SYSTEM_FOLDERS: Final = frozenset(
    "bin boot dev etc home lib lib32 lib64 media mnt opt proc root run sbin srv sys tmp usr var".split()
)


class Suggester:
    """The suggester for one workspace.

    ``root`` is the workspace folder (``None``: no workspace, always silent); ``dsh_home`` the
    state folder; ``sink`` receives each ledger line; ``clock`` returns epoch seconds.
    ``symbols`` is the workspace graph (or a callable returning the current one, asked when
    needed): its listing, kinds and symbol index; without one the suggester lists the workspace
    itself when first prepared and Symbol/Usage use their pack's ``fallback`` paths.
    ``content`` is the content index (``workspace/content.py``) for facts and topic matches.
    """

    def __init__(
        self,
        root: Path | None,
        config: SuggesterConfig,
        dsh_home: Path,
        sink: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.time,
        symbols: Any = None,
        content: Any = None,
    ) -> None:
        self.root = root.resolve() if root is not None else None
        self.config = config
        self.dsh_home = dsh_home
        self.clock = clock
        log_file = (
            Path(config.log_file).expanduser() if config.log_file else dsh_home / "search-suggester" / "ledger.log"
        )
        self.ledger = ledger.Ledger(log_file, sink, clock)
        self.noise = NoiseControl()
        self.graph_source = symbols
        self.content = content
        self.active: ActivePacks | None = None
        self.view: View | None = None
        self.counters: dict[str, int] = {"calls": 0, "notes": 0, "suppressed": 0, "abstained": 0, "errors": 0}
        self.activation_ms: float | None = None
        self._slow_call_reported = False
        self.identity = repository_identity(self.root) if self.root is not None else ""
        knowledge_path = (
            Path(config.persist_path).expanduser()
            if config.persist_path
            else dsh_home / "search-suggester" / "knowledge.json"
        )
        self.knowledge = Knowledge(knowledge_path, self.identity, clock)
        self.journal = Journal(self.knowledge, self.ledger.write)
        self.dismissals = Dismissals(self.knowledge, lambda: self.config.dismiss_ttl, clock, str(self.root or ""))
        self.section = StickySection(lambda: self.config.section_ttl, clock, self.ledger.write)
        self.proves: Callable[[str, str], bool] | None = None
        self.seeded = 0
        # ledger lines of work done on other threads (preparation): written by the owner thread
        # at its next call, so the sink (the server's transport) is only ever used by one thread
        self._prepared = threading.Event()
        self._preparing = threading.Lock()
        #: one activation at a time: warm() on a worker thread and the first request may race
        self._activating = threading.Lock()
        #: bumped by :meth:`invalidate`; an activation begun before it is discarded, not installed
        self._generation = 0
        self._waited = False
        self._owner = threading.get_ident()
        self._deferred: deque[str] = deque(maxlen=1000)

    def _log(self, message: str) -> None:
        """Write a ledger line now (owner thread) or at the owner's next call (other threads)."""
        if threading.get_ident() == self._owner:
            self._drain()
            self.ledger.write(message)
        else:
            self._deferred.append(message)

    def _drain(self) -> None:
        while self._deferred:
            self.ledger.write(self._deferred.popleft())

    # ------------------------------------------------------------------ activation

    @property
    def rows(self) -> dict[str, list[Any]]:
        """The active rows per intent (``{}`` before activation)."""
        return self.active.rows if self.active is not None else {}

    @property
    def packs(self) -> list[Any]:
        """The active packs."""
        return self.active.packs if self.active is not None else []

    def activate(self) -> None:
        """Load the packs that apply and write the ``activated`` (or ``abstained
        foreign-workspace``) ledger line. Cheap (no listing); idempotent until :meth:`invalidate`;
        thread-safe (the lines are written once even when two threads ask at once)."""
        while self.active is None:
            with self._activating:
                if self.active is None:
                    self._activate(self._generation)

    def _activate(self, generation: int) -> None:
        if self.root is None:
            self.active = ActivePacks()
            self._log(ledger.abstained_foreign_workspace())
            return
        active = activate(self.root, self.dsh_home, self.config.builtin_packs)
        self.active = active
        if generation != self._generation:
            # invalidated while reading (a pack changed under us): discarded, the caller reads again
            self.active = None
            return
        for reason in active.refused:
            self._refuse(reason)
        if not active.rows:
            self._log(ledger.abstained_foreign_workspace())
            return
        ids = [p.pack.id for p in active.packs]
        self._log(ledger.activated(ids, len(active.rows), active.threshold))

    def warm(self) -> None:
        """Activate and prepare now (start-up, off the request path); fail-open."""
        try:
            t0 = time.perf_counter()
            self.activate()
            self.prepare()
            self.activation_ms = round((time.perf_counter() - t0) * 1000, 1)
        except Exception:
            self.counters["errors"] += 1
            log.warning("search-suggester: activation failed; it is retried at the next call", exc_info=True)
            self.active = None

    def _graph(self) -> Any:
        source = self.graph_source
        if source is None or hasattr(source, "definitions"):
            return source
        try:
            return source()
        except Exception:
            log.warning("search-suggester: the workspace graph is unavailable", exc_info=True)
            return None

    def _symbols(self) -> SymbolIndex | None:
        graph = self._graph()
        if graph is None or getattr(graph, "symbols", True) is None:
            return None  # a WorkspaceGraph whose symbol pass has not finished
        return graph

    def prepare(self, graph: Any = None) -> bool:
        """Resolve every intent's call-independent targets over the workspace listing (the
        graph's, else one listing of our own) and swap them in; ``False`` when there is
        nothing to prepare yet (no packs, or a graph source without a listing). Preparations
        from several threads (the graph's, the content index's) run one at a time, so the last
        one — with the newest listing and facts — is the one that stays."""
        with self._preparing:
            return self._prepare(graph)

    def _prepare(self, graph: Any = None) -> bool:
        self.activate()
        if self.root is None or not self.rows:
            return False
        graph = graph if graph is not None else self._graph()
        if graph is not None and getattr(graph, "files", None):
            files = list(graph.files)
            kind_map = dict(graph.kind_map()) if hasattr(graph, "kind_map") else {f: classify_path(f) for f in files}
        elif self.graph_source is not None and graph is None:
            return False  # the server's graph is still listing: prepared when it is
        else:
            files = list_files(self.root)
            kind_map = {f: classify_path(f) for f in files}
        index = FileIndex(self.root, files)
        index.kinds = kind_map
        index.facts = self._facts(files, kind_map)
        fact_of: dict[str, set[str]] = {}
        for fact, paths in index.facts.items():
            if fact not in ("source", "other", "config", "doc", "test", "manifest", "lock", "generated", "code"):
                for p in paths:
                    fact_of.setdefault(p, set()).add(fact)
        view = View(
            index,
            docs_roots=frozenset(docs_roots(files)),
            fact_of={p: frozenset(v) for p, v in fact_of.items()},
        )
        budget = RegexBudget(ACTIVATION_BUDGET_S)  # shared by every untrusted row's `contains`
        for intent, rows in self.rows.items():
            cands = [c for r in rows for c in r.candidates]
            with use_budget(None if all(r.trusted for r in rows) else budget):
                view.targets[intent] = resolve([c for c in cands if not c.fallback], index)
                view.fallback[intent] = resolve([c for c in cands if c.fallback], index)
            if intent in PROJECT_INTENTS:
                for table in (view.targets, view.fallback):
                    ts = table[intent]
                    view.test_tree.setdefault(intent, []).extend(t for t in ts if in_test_tree(t.path))
                    table[intent] = [t for t in ts if not in_test_tree(t.path)]
        if budget.exhausted:
            self._refuse(
                f"untrusted pack regexes used the {ACTIVATION_BUDGET_S:g} s activation budget; "
                "the remaining `contains` checks count as no match"
            )
        for rel in index.refused:
            self._refuse(f"candidate {rel}: resolves outside the workspace")
        if index.glob_cut:
            self._refuse("pack globs used the activation's matching bound; the remaining globs match nothing")
        self.view = view
        self._prepared.set()
        self._seed_knowledge()
        return True

    def _facts(self, files: list[str], kind_map: dict[str, str]) -> dict[str, list[str]]:
        """``{fact or kind: [paths]}``: path kinds, name-only facts, the content index's facts
        (when it has run) and the docs pages."""
        out: dict[str, set[str]] = {}
        for n, f in enumerate(files):
            if n % 1024 == 1023:
                time.sleep(0)  # a preparation runs beside requests: hand them the GIL often
            kind = kind_map.get(f, "other")
            out.setdefault(kind, set()).add(f)
            if kind_is_code(f):  # code by extension, in any folder (a docs example, a test)
                out.setdefault("code", set()).add(f)
            for fact in facts_of(f, kind, None):
                out.setdefault(fact, set()).add(f)
        content = self.content
        if content is not None:
            present = set(files)
            for fact, paths in getattr(content, "facts", {}).items():
                out.setdefault(fact, set()).update(p for p in paths if p in present)
        out["docs-page"] = set(docs_pages(files, kind_map))
        return {k: sorted(v) for k, v in out.items()}

    def files_changed(self, changed: list[str] | None) -> None:
        """Files changed (``didChangeWatchedFiles``, already applied to the graph): prepare the
        targets again. Called off the request path (the server's worker thread)."""
        if self.active is None or self.view is None:
            return
        self.prepare()
        self.section.invalidate()

    def _refuse(self, reason: str) -> None:
        if self.active is not None and reason not in self.active.refused:
            self.active.refused.append(reason)
        log.warning("search-suggester: pack refused: %s", reason)
        self._log(ledger.pack_refused(reason))

    @property
    def pack_errors(self) -> list[str]:
        """Why packs or candidates were refused."""
        return list(self.active.refused) if self.active is not None else []

    def reconfigure(self, config: SuggesterConfig) -> None:
        """Hot-reload the volatile knobs (every knob but ``persistPath``/``refreshOnBoot``):
        thresholds, caps and windows apply from the next call; ``logFile`` moves the ledger;
        ``builtinPacks`` re-activates the packs."""
        old, self.config = self.config, config
        if config.log_file != old.log_file:
            self.ledger.path = (
                Path(config.log_file).expanduser()
                if config.log_file
                else self.dsh_home / "search-suggester" / "ledger.log"
            )
        if config.builtin_packs != old.builtin_packs:
            self.invalidate()
            self.warm()

    def invalidate(self) -> None:
        """Forget the packs and cached lookups (``dsh/toolsChanged``); the prepared targets stay
        until the next preparation replaces them. An activation running on another thread
        when this is called is discarded and read again."""
        self._generation += 1
        self.active = None
        if self.view is not None:
            self.view.symbols.clear()
        self.section.invalidate()

    # ------------------------------------------------------------------ the call

    def post_execute(self, params: PostExecuteParams) -> list[AdditionalContext]:
        """At most one note for this tool call; fail-open (an error logs and returns ``[]``)."""
        try:
            return self._post_execute(params)
        except Exception:
            self.counters["errors"] += 1
            log.warning("search-suggester: internal error; the call passes through silently", exc_info=True)
            return []

    def _relative(self, q: Query) -> None:
        """Make the query's absolute paths under the root repo-relative (others dropped)."""
        if self.root is None:
            return
        base = self.root.as_posix().rstrip("/") + "/"

        def rel(p: str) -> str | None:
            if not p.startswith("/"):
                return p
            if p.startswith(base):
                return p[len(base) :]
            return None if p != base.rstrip("/") else ""

        q.reads = [r for r in map(rel, q.reads) if r is not None]
        q.scope = [r for r in map(rel, q.scope) if r is not None]
        q.result_paths = [r for r in map(rel, q.result_paths) if r]
        view = self.view
        if view is not None:
            # an `ls DIR` (or `cd DIR && …`) lists names relative to DIR
            folders = [s for s in q.scope if s and not view.index.exists(s)]
            fixed = []
            for p in q.result_paths:
                joined = next((f"{d}/{p}" for d in folders if view.index.exists(f"{d}/{p}")), None)
                fixed.append(joined if joined is not None and ("ls" in q.commands or not view.index.exists(p)) else p)
            q.result_paths = fixed
        q.result_paths = [p for p in dict.fromkeys(q.result_paths) if p not in q.reads]

    def _post_execute(self, params: PostExecuteParams) -> list[AdditionalContext]:
        self.counters["calls"] += 1
        self._drain()
        result = params.result
        q = parse_call(
            params.tool.name,
            params.tool.input,
            result.text if result is not None else None,
            bool(result.is_error) if result is not None else False,
        )
        if q.question:
            return []  # a question is asked through where_is, never sent as an agent's tool call
        # a failed write tool changed nothing; a failed shell line may have written before the
        # part that failed (``sed -i … && python r.py``), so its writes count
        written = (list(q.reads) if q.tool == "write" and not q.is_error else []) + [
            w for w in q.writes if w != PATCHED
        ]
        self._relative(q)
        state = self.noise.session(params.session_id)
        state.calls += 1
        if self.config.learn and self.journal.observe(
            params.session_id, touched_paths(q, self.root), state.calls, self.config.learn_window
        ):
            self.knowledge.flush_soon()
        if q.tool in ("write", "read") or q.reads:
            # an edit is no reading of the whole file: what it searches next may be named
            state.touch(q.reads, self.config.recent_window, whole=not q.partial and q.tool != "write")
        view = self.view
        if view is not None:
            for path in written:
                rel = self._written_path(path, view.index)
                if rel is not None:
                    state.wrote(rel, view.index.exists(rel))
            if PATCHED in q.writes:
                state.edited = True
        guess = evidence.wrong_guess(q, self._evidence_view(view)) if view is not None else None
        if guess is not None and view is not None:
            return self._redirect(params, q, state, view, guess)
        if q.frames and view is not None:
            return self._traceback(params, q, state, view)
        if q.script_code and view is not None and not state.edited:
            return self._script(params, q, state, view)
        if not q.search or not (q.patterns or q.name_patterns or q.scope or q.keys):
            # a read (Read, cat, head, sed -n …) ends a search: it teaches (recent, learning)
            # but never triggers a note
            return []
        self.activate()
        if not self.rows:
            return []
        view = self.view
        with use_budget(RegexBudget(CALL_BUDGET_S)) as budget:
            hit = classify(q, self.rows, self.config.bias, evidence.weights(q, self._evidence_view(view)))
        if budget is not None and budget.exhausted and not self._slow_call_reported:
            self._slow_call_reported = True
            self._refuse(
                f"untrusted pack regexes used the {CALL_BUDGET_S * 1000:g} ms budget of a call; "
                "the remaining signals count as no match"
            )
        if hit is None:
            return []
        intent, k = hit
        if q.listing and not q.result_paths and view is not None:
            # a listing that found nothing: what it looks for does not exist here
            self.counters["abstained"] += 1
            self.ledger.write(ledger.abstained_no_companions(intent, k))
            return []
        if self.dismissals.family_dismissed(intent):
            return self._suppress("dismissed", intent)
        if view is None:
            if not callable(self.graph_source):
                self.prepare()  # standalone (no live graph builder): prepare on first use
            elif not self._waited:
                # the very first such call of the process waits a moment for the background
                # preparation (a small workspace is ready within it); later ones never wait
                self._waited = True
                self._prepared.wait(FIRST_CALL_WAIT_S)
            view = self.view
            if view is None:
                return self._suppress("not-ready", intent)
        targets = [t for t in self._resolve(view, intent, q) if not self.dismissals.path_dismissed(intent, t.path)]
        reads = set(q.reads)
        reads_a_target = q.tool == "read" and any(t.path in reads for t in targets)
        targets = [t for t in targets if t.path not in reads]  # never the file the call reads
        if not targets and not reads_a_target:
            self.counters["abstained"] += 1
            self.ledger.write(ledger.abstained_no_companions(intent, k))
            return []
        # recently read: a file read whole is known; one read in part (head, sed -n, an offset)
        # is known only as a default target — what the call itself searched or listed is named
        own = set(q.scope) | set(q.result_paths)
        whole, seen = state.wholly_read() - reads, state.recently_read() - reads

        def known(path: str) -> bool:
            return path in whole or (path in seen and path not in own)

        if reads_a_target or known(targets[0].path):
            # the agent is already where the intent lives (it reads one of the targets, or the
            # best one was just read): naming weaker targets instead would be noise
            return self._suppress("recent", intent)
        shown = [t for t in targets if not known(t.path)][: self.config.max_targets]
        return self._deliver(params, state, intent, k, shown, q.identifier if intent in ("Symbol", "Usage") else None)

    def _redirect(
        self, params: PostExecuteParams, q: Query, state: Any, view: View, intent: str
    ) -> list[AdditionalContext]:
        """A wrong guess (``evidence.wrong_guess``): name where that intent really lives here —
        its prepared targets, none of what the call looked for — through the same gate
        (the evidence is a subject rule's weight), noise control and ledger as any note."""
        self.activate()
        if intent not in self.rows:
            return []
        k = gate(evidence.SUBJECT, self.config.bias)
        if k < min(r.threshold for r in self.rows[intent]):
            return []
        if self.dismissals.family_dismissed(intent):
            return self._suppress("dismissed", intent)
        looked = set(q.reads + q.scope)
        targets = [
            t
            for t in view.targets.get(intent, [])
            if t.path not in looked and not self.dismissals.path_dismissed(intent, t.path)
        ]
        if self.config.learn:
            targets = rank(intent, targets, self.knowledge)
        seen = state.wholly_read()
        shown = [t for t in targets if t.path not in seen][: self.config.max_targets]
        if not shown:
            self.counters["abstained"] += 1
            self.ledger.write(ledger.abstained_no_companions(intent, k))
            return []
        return self._deliver(params, state, intent, k, shown, None)

    def _workspace_path(self, path: str, index: FileIndex) -> str | None:
        """A path as a traceback prints it, as a listed workspace file: repo-relative as is,
        absolute under the root made relative, any other absolute path by its longest suffix
        that is a listed file (a run in a container's ``/testbed``, an installed copy of the
        package); ``None`` when nothing listed matches (the standard library, an agent's own
        unlisted script). A Windows path (``C:\\repo\\pkg\\mod.py``, ``\\\\host\\share\\…``) is
        absolute too: under the root when it starts with the root (drive letter in any case),
        else mapped by suffix like any other."""
        path = path.replace("\\", "/").strip()
        drive = _WINDOWS_ABSOLUTE.match(path)
        if drive is not None:
            if self.root is not None:
                base = self.root.as_posix().rstrip("/") + "/"
                if path[:1].lower() + path[1 : len(base)] == base[:1].lower() + base[1:]:
                    rel = path[len(base) :]
                    return rel if index.exists(rel) else None
            path = "/" + path[drive.end() :]
        if not path.startswith("/"):
            rel = path[2:] if path.startswith("./") else path
            return rel if index.exists(rel) else None
        if self.root is not None:
            base = self.root.as_posix().rstrip("/") + "/"
            if path.startswith(base):
                rel = path[len(base) :]
                return rel if index.exists(rel) else None
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

    def _written_path(self, path: str, index: FileIndex) -> str | None:
        """A path a write names, as a repo-relative path: normalised (``a/../b``, ``a//b``,
        ``./``), absolute under the root made relative, any other absolute path mapped like a
        traceback's (:meth:`_workspace_path`: a listed file by suffix, ``/testbed/…``; by its
        name alone only when it is one folder deep) or, for a new file, by its folder's longest
        suffix that is a listed folder (or whose parent is: a new subpackage); ``None`` outside
        the workspace or when nothing maps."""
        p = posixpath.normpath(path.replace("\\", "/").strip()) if path else ""
        if not p or p == "." or p == ".." or p.startswith("../"):
            return None
        if not p.startswith("/"):
            return p
        if self.root is not None:
            base = self.root.as_posix().rstrip("/") + "/"
            if p.startswith(base):
                return p[len(base) :] or None
        parts = [x for x in p.split("/") if x]
        listed = self._workspace_path(p, index)
        if listed is not None and ("/" in listed or (len(parts) <= 2 and parts[0] not in SYSTEM_FOLDERS)):
            # a name alone maps only a path one folder deep (``/testbed/README.md``), not any
            # file of that name elsewhere (``/tmp/x/README.md``) nor in the machine's own
            # folders (``/tmp/README.md``, ``/etc/README.md``)
            return listed
        for new_dirs in (0, 1):  # a new file in a listed folder, or in a new folder of one
            for n in range(min(len(parts) - 1 - new_dirs, index.depth + 1), 0, -1):
                folder = "/".join(parts[-1 - new_dirs - n : len(parts) - 1 - new_dirs])
                if index.has_dir(folder):
                    return "/".join(parts[-1 - new_dirs - n :])
        return None

    def _traceback(self, params: PostExecuteParams, q: Query, state: Any, view: View) -> list[AdditionalContext]:
        """A command that is no search failed with a traceback (``query.traceback_frames``):
        name the project files it runs through, innermost first — where the definition of
        what failed lives (Symbol, through the ``frames`` candidates of its rows). Test files
        and the test tree are left out (the failure is what they check, not where it is); the
        gate's evidence is a subject rule's weight (the output names the files), and noise
        control and the ledger are those of any note."""
        self.activate()
        intent = "Symbol"
        rows = self.rows.get(intent, [])
        cands = [c for r in rows for c in r.candidates if c.frames]
        if not cands:
            return []
        k = gate(evidence.SUBJECT, self.config.bias)
        if k < min(r.threshold for r in rows):
            return []
        index = view.index
        found: dict[str, str] = {}
        seen: set[str] = set()
        for path, func in q.frames:
            if path in seen:
                continue  # a recursion prints one frame many times
            seen.add(path)
            rel = self._workspace_path(path, index)
            if rel is None or rel in found or is_test_path(rel) or in_test_tree(rel) or not index.inside(rel):
                continue
            if escape_controls(rel) is not rel or not _regular_file(index.root / rel):
                continue  # a name with controls is shown nowhere raw; a listing can be stale
            found[rel] = func
        if not found:
            return []
        return self._deliver_found(params, state, intent, k, max(cands, key=lambda c: c.prior), found)

    def _deliver_found(
        self,
        params: PostExecuteParams,
        state: Any,
        intent: str,
        k: float,
        cand: Any,
        found: dict[str, str],
        one_a_turn: bool = False,
    ) -> list[AdditionalContext]:
        """The note of ``found`` (``{path: name}``, best first), each target with ``cand``'s
        reason (``{name}`` its name): dismissals, then ``recent`` when the best target was read
        whole just before, then (``one_a_turn``) ``turn-cap`` when this session already had
        such a note in this turn, then :meth:`_deliver`."""
        if self.dismissals.family_dismissed(intent):
            return self._suppress("dismissed", intent)
        targets = [
            Target(rel, cand.reason.replace("{name}", name), cand.prior)
            for rel, name in found.items()
            if not self.dismissals.path_dismissed(intent, rel)
        ]
        whole = state.wholly_read()
        if not targets or targets[0].path in whole:
            return self._suppress("recent", intent) if targets else []
        if one_a_turn and state.script_turn == params.turn:
            return self._suppress("turn-cap", intent)
        shown = [t for t in targets if t.path not in whole][: self.config.max_targets]
        notes = self._deliver(params, state, intent, k, shown, next(iter(found.values())))
        if notes and one_a_turn:
            state.script_turn = params.turn
        return notes

    def _script(self, params: PostExecuteParams, q: Query, state: Any, view: View) -> list[AdditionalContext]:
        """A Python script the agent writes or runs inline uses names of this project
        (``query.script_names``): name where they are defined, in the order the script uses
        them, one file a name (Symbol, through the ``symbol: definitions`` candidates of its
        rows). An agent writes such a script to reproduce what it was asked to fix, so the
        definitions it calls are where the fix starts (docs/corpus.md, "What moved the
        trajectory figures"). A name counts when its module's top package is a folder (or
        ``src/`` folder) with ``__init__.py``, or a top-level ``.py`` module, of this
        workspace, and the written file is not inside that package (a module importing its
        siblings asks nothing); its definition is the symbol index's Python, non-test file
        inside that package: in the imported module (``a/b.py``, ``a/b/__init__.py``, below
        ``a/b/``) first, then one whose file name is the name (``merge`` → ``merge.py``,
        ``Dataset`` → ``dataset.py``: modules are commonly named after what they define), then
        :func:`rank_definitions`. The gate's evidence is a subject rule's weight; noise control
        and the ledger are those of any note, plus one such note a turn (``suppressed turn-cap
        Symbol`` after it): the first script of a task reproduces it, later ones try what the
        agent found meanwhile (on the tune trajectories the notes of later scripts in a turn
        were useful 3 times of 8, of first scripts 15 of 24)."""
        self.activate()
        intent = "Symbol"
        rows = self.rows.get(intent, [])
        cands = [c for r in rows for c in r.candidates if c.symbol == "definitions"]
        symbols = self._symbols()
        if not cands or symbols is None:
            return []
        k = gate(evidence.SUBJECT, self.config.bias)
        if k < min(r.threshold for r in rows):
            return []
        index = view.index
        written = self._written_path(q.script_path, index) if q.script_path else None
        ctx = CallContext(languages=frozenset({"python"}))
        cand = max(cands, key=lambda c: c.prior)
        found: dict[str, str] = {}
        for module, name in q.script:
            package = _python_package(index, module.split(".", 1)[0])
            if package is None or (written is not None and written.startswith(package + "/")):
                continue
            here = package.rsplit("/", 1)[0] + "/" if "/" in package else ""
            path = here + module.replace(".", "/")
            try:
                defs = list(symbols.definitions(name))[:200]
            except Exception:  # the graph is another core: a failure there is silence here
                log.warning("search-suggester: symbol index lookup failed for %r", name, exc_info=True)
                continue
            own = [
                d
                for d in defs
                if isinstance(d, str)
                and (d.startswith(package + "/") or d == package + ".py")
                and d.endswith(".py")
                and not is_test_path(d)
                and not in_test_tree(d)
            ]
            ranked = _script_order(rank_definitions(own, ctx), path if path != package else None, name)
            best = next(
                (
                    d
                    for d in ranked
                    if index.exists(d) and index.inside(d) and d != written and _regular_file(index.root / d)
                ),
                None,
            )
            if best is not None and best not in found and escape_controls(best) is best:
                found[best] = name
        if not found:
            return []
        return self._deliver_found(params, state, intent, k, cand, found, one_a_turn=True)

    def _deliver(
        self, params: PostExecuteParams, state: Any, intent: str, k: float, shown: list[Target], name: str | None
    ) -> list[AdditionalContext]:
        """Noise control, then the note and its ledger line (or the suppression's line)."""
        key = tuple(t.path for t in shown)
        reason = self.noise.check(
            state, intent, params.turn, key, self.config.cooldown_calls, self.config.max_notes_per_turn, name
        )
        if reason is not None:
            return self._suppress(reason, intent)
        # the most specific pack's wording (language packs load after the generic one)
        note = make_note(intent, next((r.about for r in reversed(self.rows[intent]) if r.about), None), shown)
        if not note.source.targets:  # no target's line fits in a note (a path hundreds of characters long)
            self.counters["abstained"] += 1
            self.ledger.write(ledger.abstained_no_companions(intent, k))
            return []
        self.noise.record(state, intent, params.turn, key, name)
        self.counters["notes"] += 1
        self.ledger.write(ledger.suggest(intent, k, note.source.targets))
        self.section.noted(params.session_id, intent)
        if self.config.learn:
            self.journal.open(params.session_id, intent, note.source.targets, state.calls)
        return [note]

    def _evidence_view(self, view: View | None) -> evidence.Workspace:
        """What the structural evidence reads of the workspace (``evidence.Workspace``)."""
        if view is None:
            return evidence.Workspace()
        graph = self._symbols()
        index = getattr(graph, "symbols", None) if graph is not None else None

        def defines(path: str, name: str) -> bool:
            return index is not None and name in index.defined_in(path)

        def defined(name: str) -> bool | None:
            return None if graph is None else bool(graph.definitions(name))

        return evidence.Workspace(
            is_file=view.index.exists,
            is_dir=view.index.has_dir,
            definitions=lambda name: list(graph.definitions(name)) if graph is not None else [],
            kind=view.index.kind,
            facts=lambda p: view.fact_of.get(p, frozenset()),
            defines=defines,
            defined=defined,
            docs_roots=view.docs_roots,
            code_folder=view.index.code_folder,
        )

    def where_is(self, tool: str, tool_input: dict[str, Any]) -> tuple[str, float, str | None, list[Target]] | None:
        """The suggester on demand (MCP ``where_is``): ``(intent, k, about, targets)`` for one
        tool call, or ``None`` when no intent crosses its threshold.

        Reads the same query model, packs, gate, evidence and target resolution as
        :meth:`post_execute`, without its noise control, ledger or learning: asking is not a
        tool call of the agent. Dismissed families and paths are left out. Raises nothing (an
        internal error logs and answers ``None``).
        """
        try:
            q = parse_call(tool, tool_input)
            self._relative(q)
            if not q.search:
                return None
            self.activate()
            if not self.rows:
                return None
            view = self.view
            if view is None and not callable(self.graph_source):
                self.prepare()
                view = self.view
            with use_budget(RegexBudget(CALL_BUDGET_S)):
                hit = classify(q, self.rows, self.config.bias, evidence.weights(q, self._evidence_view(view)))
            if hit is None or view is None or self.dismissals.family_dismissed(hit[0]):
                return None
            intent, k = hit
            targets = [t for t in self._resolve(view, intent, q) if not self.dismissals.path_dismissed(intent, t.path)]
            about = next((r.about for r in reversed(self.rows.get(intent, ())) if r.about), None)
            return intent, k, about, targets[: self.config.max_targets]
        except Exception:
            self.counters["errors"] += 1
            log.warning("search-suggester: internal error in where_is; no answer", exc_info=True)
            return None

    def _suppress(self, reason: str, intent: str) -> list[AdditionalContext]:
        self.counters["suppressed"] += 1
        self.ledger.write(ledger.suppressed(reason, intent))
        return []

    def _resolve(self, view: View, intent: str, q: Query) -> list[Target]:
        """The intent's existing targets for this call, best first: symbol relations of the
        searched identifier, the call's own results, topic matches and the prepared targets
        (merged by score); the pack's fallback paths only when the row has symbol candidates
        and they name nothing."""
        static = view.targets.get(intent, [])
        if intent in PROJECT_INTENTS:  # the test tree only when the call looks inside it
            scopes = q.scope + [g.rsplit("/", 1)[0] for g in q.name_patterns if "/" in g]
            static = static + [t for t in view.test_tree.get(intent, []) if scoped_into(t.path, scopes)]
        if self.config.learn:  # what was learned orders the call-independent targets
            static = rank(intent, static, self.knowledge)
        rows = self.rows.get(intent, ())
        cands = [c for r in rows for c in r.candidates if not c.fallback]
        if not any(c.per_call for c in cands):
            return sorted(static, key=lambda t: not in_test_tree(t.path)) if intent in PROJECT_INTENTS else static
        index = view.index
        ctx = CallContext(
            languages=frozenset(q.languages),
            tests=any(is_test_path(s + "/x") or is_test_path(s) for s in q.scope + q.name_patterns if s),
            name=q.identifier,
            reads=frozenset(q.reads),
        )
        groups: list[list[Target]] = []
        has_symbol = any(c.symbol for c in cands)
        found: list[Target] = []
        symbols = self._symbols() if has_symbol else None
        if has_symbol and ctx.name is not None and symbols is not None:
            key = (intent, ctx.name, ctx.languages, ctx.tests)
            cached = view.symbols.get(key)
            if cached is None:
                cached = resolve_symbols(cands, symbols, ctx.name, index, ctx)
                view.symbols[key] = cached
                while len(view.symbols) > SYMBOL_CACHE_SIZE:
                    view.symbols.popitem(last=False)
            found = _matching(cached, q.name_patterns)
        subjects = [p for p in q.scope if p and index.exists(p)]
        listed = list(dict.fromkeys(subjects + q.result_paths))
        if q.listing:
            # a listing's answer is what it listed: of those, what the intent wants (or nothing)
            return resolve_results(cands, listed, index, lambda ps: self._prefer(intent, ps, ctx), ctx.name)
        results = (
            resolve_results(cands, listed, index, lambda ps: self._prefer(intent, ps, ctx), ctx.name) if listed else []
        )
        # a definition pattern's hits are the definitions themselves (more exact than the index,
        # `impl X for Y` included): they lead; for a bare name the index's definitions lead
        groups += [results, found] if q.definition_keyword else [found, results]
        if any(c.match for c in cands):
            content: ContentSearch | None = self.content if getattr(self.content, "ready", False) else None
            groups.append(resolve_topics(cands, content, q.terms, index))
        groups.append(static)
        if has_symbol and not found:
            static_paths = {t.path for t in static}
            groups.append([t for t in view.fallback.get(intent, []) if t.path not in static_paths])
        merged = merge(*groups)
        if intent in PROJECT_INTENTS:
            # inside the test tree only what the call scopes into, and then that leads
            inside = [t for t in merged if in_test_tree(t.path) and scoped_into(t.path, scopes)]
            merged = inside + [t for t in merged if not in_test_tree(t.path)]
        # the files the call searches in lead: they are what the agent asked about
        lead = [t for p in subjects for t in merged if t.path == p]
        return lead + [t for t in merged if t.path not in set(subjects)]

    def _prefer(self, intent: str, paths: list[str], ctx: CallContext) -> list[str]:
        """A call's listed paths in the intent's order: for Symbol the files defining the
        identifier first (Usage: last); for Doc only doc pages, index/README pages first; for
        Ledger the changelogs, then the ledger's set-up (templates, config, README), then its
        numbered fragments; for the others the listing order."""
        view = self.view
        if intent == "Doc":
            docs = [p for p in paths if is_doc_path(p)]
            return sorted(docs, key=lambda p: (0 if _INDEX_PAGE.match(p.rsplit("/", 1)[-1]) else 1, docs.index(p)))
        if intent == "Ledger" and view is not None:
            facts = view.fact_of

            def ledger_key(p: str) -> tuple[int, int]:
                name = p.rsplit("/", 1)[-1]
                tier = 0 if "changelog" in facts.get(p, ()) else (2 if name[:1].isdigit() else 1)
                return tier, paths.index(p)

            return sorted(paths, key=ledger_key)
        if intent in ("Symbol", "Usage") and ctx.name:
            symbols = self._symbols()
            defining = set(symbols.definitions(ctx.name)) if symbols is not None else set()
            first = rank_definitions([p for p in paths if p in defining], ctx)
            index = self.view.index if self.view is not None else None

            def tier(p: str) -> int:  # code (the query's language first), then tests, then the rest
                kind = index.kind(p) if index is not None else "source"
                if kind == "source":
                    return 0 if not ctx.languages or language_of(p) in ctx.languages else 1
                return 2 if kind == "test" else 3

            rest = sorted((p for p in paths if p not in defining), key=lambda p: (tier(p), paths.index(p)))
            # a name's definition first, then its call sites (issue 12: "definition first, then
            # top call sites"); a Usage note keeps the same order
            return first + rest
        return paths

    # ------------------------------------------------------------------ dismissal, section, seed

    def dismiss(self, family: str, path: str | None) -> tuple[str, str]:
        """Record a durable dismissal; return ``(record line, expiresAt ISO-8601)``.

        Raises ``ValueError`` for an unknown family (not one of the ten intents).
        """
        record, expires = self.dismissals.dismiss(family, path)
        self.ledger.write(record)
        self.section.invalidate()  # the section must not keep listing what was dismissed
        return record, iso_seconds(expires)

    def flush(self) -> bool:
        """Write pending knowledge now (``shutdown``); see :meth:`Knowledge.flush_now`."""
        return self.knowledge.flush_now()

    def _seed_knowledge(self) -> None:
        """The offline seed (plan, "The learning") over the built-in packs' prepared targets of
        the intents no repo/user pack overrode; ``learn: false`` or ``seed: false`` skip it."""
        self.proves = graph_prover(self._graph()) or self.proves
        if not (self.config.learn and self.config.seed) or self.view is None:
            return
        builtin = {p.pack.id for p in self.packs if p.origin == "builtin"}
        self.seeded += seed(
            self.knowledge,
            {
                intent: self.view.targets.get(intent, [])
                for intent, rows in self.rows.items()
                if rows and all(r.pack_id in builtin for r in rows)
            },
            self.proves,
        )

    def section_text(self, session_id: str | None) -> str | None:
        """The sticky section text (``section.py``), ``None`` when ``sectionMode`` is off or
        nothing applies to the workspace."""
        if self.config.section_mode != "sticky" or self.root is None:
            return None
        try:
            self.activate()
            if not self.rows:
                return None
            if self.view is None and not callable(self.graph_source):
                self.prepare()
            elif self.view is None and not self._waited:
                self._waited = True  # once per process, as for the first note
                self._prepared.wait(FIRST_CALL_WAIT_S)
            if self.view is None:
                return None
            return self.section.get(session_id, self._render_section)
        except Exception:  # fail-open, like the note
            self.counters["errors"] += 1
            log.warning("search-suggester: internal error building the section; none sent", exc_info=True)
            return None

    def _render_section(self, intent: str | None) -> str | None:
        self.proves = graph_prover(self._graph()) or self.proves
        view = self.view
        assert view is not None

        def listed(name: str) -> list[Target]:
            ts = [t for t in view.targets.get(name, []) if not self.dismissals.path_dismissed(name, t.path)]
            ts = rank(name, ts, self.knowledge) if self.config.learn else ts
            proves = self.proves
            proven = [t for t in ts if proves is not None and proves(name, t.path)]
            return proven or ts

        if intent is not None and not self.dismissals.family_dismissed(intent):
            ts = listed(intent)[: self.config.max_targets]
            if ts:
                about = next((r.about for r in reversed(self.rows.get(intent, ())) if r.about), None) or intent.lower()
                return render(
                    [f"search-suggester: in this repository, {about} lives here:"]
                    + [f"- {t.path} — {t.reason}" for t in ts]
                )
        lines = ["search-suggester: where things live in this repository:"]
        for name in INTENTS:
            if name in self.rows and not self.dismissals.family_dismissed(name):
                ts = listed(name)[:INDEX_TARGETS]
                if ts:
                    lines.append(f"- {name}: {', '.join(t.path for t in ts)}")
        return render(lines) if len(lines) > 1 else None

    def learning_status(self) -> dict[str, object]:
        """Learning counters and the knowledge path."""
        return {
            "knowledge": str(self.knowledge.path) if self.knowledge.path else None,
            "repository": self.identity,
            "rows": len(self.knowledge.rows),
            "seeded": self.seeded,
            "followed": self.journal.followed,
            "ignored": self.journal.ignored,
            "openWindows": self.journal.open_windows(),
            "dismissals": len(self.knowledge.active_dismissals()),
            "sectionRebuilds": self.section.rebuilds,
            "warnings": self.knowledge.warnings,
        }

    @property
    def ready(self) -> bool:
        """Whether the targets are prepared (or there is nothing to prepare: no workspace, or
        no pack applies)."""
        return self.view is not None or self.root is None or (self.active is not None and not self.active.rows)

    def status(self) -> dict[str, Any]:
        """Counters, packs and the ledger path for ``dsh/status``.

        The pack activation (cheap: no listing) is finished first when it is still running in
        the background, so ``intents`` lists what the packs answer as soon as the server is up;
        ``activation`` is ``"done"``, ``"pending"`` when it could not finish (its error is
        logged and it is retried at the next call), or ``"off"`` while ``enabled`` is false
        (nothing is activated then)."""
        content = self.content
        if self.active is None and self.config.enabled:
            try:
                self.activate()
            except Exception:
                log.warning("search-suggester: activation failed; it is retried at the next call", exc_info=True)
        if threading.get_ident() == self._owner:
            self._drain()
        return {
            "enabled": self.config.enabled,
            "workspace": str(self.root) if self.root else None,
            "activation": "done" if self.active is not None else ("pending" if self.config.enabled else "off"),
            "packs": [{"id": p.pack.id, "origin": p.origin} for p in self.packs],
            "packErrors": self.pack_errors,
            "intents": [i for i in INTENTS if i in self.rows],
            "symbolIndex": self._symbols() is not None,
            "prepared": self.view is not None,
            "activationMs": self.activation_ms,
            "counters": dict(self.counters),
            "sessions": self.noise.count(),
            "ledger": str(self.ledger.path) if self.ledger.path else None,
            "learning": self.learning_status(),
            "contentIndex": content.status() if content is not None and hasattr(content, "status") else None,
        }
