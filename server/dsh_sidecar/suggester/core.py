"""The suggester core behind ``dsh/postExecute`` (plan: "The intents" … "The ledger").

One call → at most one note: the first intent, in priority order, whose gate score crosses
its threshold and that has existing, non-dismissed, not-recently-read targets, unless noise
control suppresses it. Every abstention and suppression is a ledger line. Fail-open: any
internal error logs a warning and returns silence.
"""

from __future__ import annotations

import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import regex
from dsh_protocol import AdditionalContext, PostExecuteParams

from dsh_sidecar.suggester.candidates import FileIndex, SymbolIndex, Target, resolve, resolve_symbols
from dsh_sidecar.suggester.config import SuggesterConfig
from dsh_sidecar.suggester.dismissals import iso_seconds  # issue 6
from dsh_sidecar.suggester.gate import INTENTS, default_threshold, gate
from dsh_sidecar.suggester.identifier import identifier
from dsh_sidecar.suggester.learning import Learning, graph_prover  # issue 6
from dsh_sidecar.suggester.ledger import Ledger, fmt_k
from dsh_sidecar.suggester.noise import NoiseControl
from dsh_sidecar.suggester.notes import make_note
from dsh_sidecar.suggester.packs import (
    ACTIVATION_BUDGET_S,
    CALL_BUDGET_S,
    Candidate,
    IntentRow,
    LoadedPack,
    PackError,
    RegexBudget,
    builtin_packs,
    check_regex,
    compile_trusted,
    read_pack_file,
    search,
    use_budget,
)
from dsh_sidecar.suggester.probe import Probe, make_probe
from dsh_sidecar.suggester.section import INDEX_TARGETS, render  # issue 6
from dsh_sidecar.workspace import WorkspaceFiles

log = logging.getLogger(__name__)

#: Most (intent, identifier) symbol lookups cached per activation.
SYMBOL_CACHE_SIZE: Final = 1024


@dataclass(frozen=True)
class CompiledRow:
    """One pack's row for one intent, its regexes compiled once at activation."""

    pack_id: str
    about: str | None
    threshold: float
    signals: tuple[tuple[regex.Pattern[str] | re.Pattern[str], float, frozenset[str] | None], ...]
    candidates: tuple[Candidate, ...]
    trusted: bool = True  # a built-in pack's row; repo/user rows run under a time budget

    @classmethod
    def of(cls, pack_id: str, intent: str, row: IntentRow, trusted: bool = False) -> CompiledRow:
        """Compile ``row`` (its patterns were validated when the pack loaded); a built-in
        (``trusted``) row uses ``re``, a repo/user row the ``regex`` module with a timeout."""
        compile_ = compile_trusted if trusted else check_regex
        return cls(
            pack_id,
            row.about,
            row.threshold or default_threshold(intent),
            tuple(
                (compile_(sig.pattern), sig.weight, frozenset(sig.tools) if sig.tools else None) for sig in row.signals
            ),
            tuple(row.candidates),
            trusted,
        )

    def score(self, probe: Probe, bias: float) -> float | None:
        """The gate score ``k`` of ``probe`` for this row, ``None`` when no signal matched."""
        total, matched = 0.0, False
        for pattern, weight, tools in self.signals:
            if tools is not None and probe.tool not in tools:
                continue
            if search(pattern, probe.text):
                total += weight
                matched = True
        return gate(total, bias) if matched else None


def workspace_slug(root: Path) -> str:
    """The user-layer pack name of a workspace: its folder name, lower-cased, ``[a-z0-9-]``."""
    return re.sub(r"[^a-z0-9]+", "-", root.name.lower()).strip("-") or "workspace"


class Suggester:
    """The suggester for one workspace.

    ``root`` is the workspace folder (``None``: no workspace, always silent); ``dsh_home`` the
    state folder; ``sink`` receives each ledger line; ``clock`` returns epoch seconds;
    ``symbols`` is the workspace graph's symbol index (or a callable returning it, asked at
    each activation) for the Symbol/Usage intents. Without one, those intents use their
    pack's ``fallback`` path candidates.
    """

    def __init__(
        self,
        root: Path | None,
        config: SuggesterConfig,
        dsh_home: Path,
        sink: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.time,
        symbols: SymbolIndex | Callable[[], SymbolIndex | None] | None = None,
    ) -> None:
        self.root = root.resolve() if root is not None else None
        self.config = config
        self.dsh_home = dsh_home
        self.clock = clock
        log_file = (
            Path(config.log_file).expanduser() if config.log_file else dsh_home / "search-suggester" / "ledger.log"
        )
        self.ledger = Ledger(log_file, sink, clock)
        self.noise = NoiseControl()
        self.symbols_source = symbols
        self.symbols: SymbolIndex | None = None
        self.rows: dict[str, list[CompiledRow]] = {}
        self.packs: list[LoadedPack] = []
        self.pack_errors: list[str] = []
        self.dismissals: dict[tuple[str, str], float] = {}
        self.counters: dict[str, int] = {"calls": 0, "notes": 0, "suppressed": 0, "abstained": 0, "errors": 0}
        self._targets: dict[str, list[Target]] = {}
        self._fallback: dict[str, list[Target]] = {}
        self._symbol_targets: OrderedDict[tuple[str, str], list[Target]] = OrderedDict()
        self.index: FileIndex | None = None
        self.activation_ms: float | None = None
        self._activated = False
        self.files = WorkspaceFiles(self.root) if self.root is not None else None
        # issue 6: knowledge file, learning, durable dismissals, sticky section
        self.learning = Learning(self.root, lambda: self.config, dsh_home, self.ledger.write, clock)

    # ------------------------------------------------------------------ activation

    def activate(self) -> None:
        """Load the packs that apply to the workspace and write the ``activated`` (or
        ``abstained foreign-workspace``) ledger line. Idempotent until :meth:`invalidate`."""
        if self._activated:
            return
        self._activated = True
        self._slow_call_reported = False
        self.rows, self.packs, self.pack_errors = {}, [], []
        if self.root is None:
            self.ledger.write("abstained foreign-workspace")
            return
        layered: list[LoadedPack] = []
        for path, origin in (
            (self.dsh_home / "search-suggester" / "workspaces" / f"{workspace_slug(self.root)}.yml", "user"),
            (self.root / ".dsh" / "pack.yml", "repo"),
        ):
            try:
                loaded = read_pack_file(path, origin, self.root if origin == "repo" else None)  # type: ignore[arg-type]
            except PackError as exc:
                self._refuse(str(exc))
                continue
            if loaded is not None:
                layered.append(loaded)
        replace = any(p.pack.replace for p in layered)
        builtins = [] if replace or not self.config.builtin_packs else [p for p in builtin_packs() if self._applies(p)]
        # precedence: user > repo > built-ins; the rows of several built-in packs add up
        # (each row is gated on its own, so overlapping packs never double-count a signal)
        for loaded in builtins:
            for name, row in loaded.pack.intents.items():
                self.rows.setdefault(name, []).append(CompiledRow.of(loaded.pack.id, name, row, trusted=True))
        for loaded in reversed(layered):  # repo first, then user overrides it
            for name, row in loaded.pack.intents.items():
                self.rows[name] = [CompiledRow.of(loaded.pack.id, name, row)]
        self.packs = layered + builtins
        if not self.rows:
            self.ledger.write("abstained foreign-workspace")
            return
        self._prepare_targets()
        thresholds = [r.threshold for rows in self.rows.values() for r in rows]
        ids = ",".join(p.pack.id for p in self.packs)
        self.ledger.write(f"activated (packs {ids} intents {len(self.rows)} threshold {min(thresholds):.2f})")

    def warm(self) -> None:
        """Activate now (at start-up) so the first call pays no activation; fail-open."""
        try:
            t0 = time.perf_counter()
            self.activate()
            self.activation_ms = round((time.perf_counter() - t0) * 1000, 1)
        except Exception:
            self.counters["errors"] += 1
            log.warning("search-suggester: activation failed; it is retried at the next call", exc_info=True)
            self._activated = False

    def _prepare_targets(self) -> None:
        """Resolve every intent's path candidates once (the per-call path never walks the tree)."""
        assert self.files is not None and self.root is not None
        self.files.ensure()
        self.index = FileIndex(self.root, self.files.files)
        self.symbols = self._symbol_index()
        budget = RegexBudget(ACTIVATION_BUDGET_S)  # shared by every untrusted row's `contains`
        for intent, rows in self.rows.items():
            cands = [c for r in rows for c in r.candidates]
            with use_budget(None if all(r.trusted for r in rows) else budget):
                self._targets[intent] = resolve([c for c in cands if not c.fallback], self.index)
                self._fallback[intent] = resolve([c for c in cands if c.fallback], self.index)
        if budget.exhausted:
            self._refuse(
                f"untrusted pack regexes used the {ACTIVATION_BUDGET_S:g} s activation budget; "
                "the remaining `contains` checks count as no match"
            )
        for rel in self.index.refused:
            self._refuse(f"candidate {rel}: resolves outside the workspace")
        if self.index.glob_cut:
            self._refuse("pack globs used the activation's matching bound; the remaining globs match nothing")
        self._seed_knowledge()  # issue 6

    def _symbol_index(self) -> SymbolIndex | None:
        source = self.symbols_source
        if source is None or hasattr(source, "definitions"):
            return source  # type: ignore[return-value]
        try:
            return source()  # type: ignore[operator]
        except Exception:
            log.warning(
                "search-suggester: the workspace symbol index is unavailable; Symbol/Usage use pack globs",
                exc_info=True,
            )
            return None

    def _applies(self, loaded: LoadedPack) -> bool:
        act = loaded.pack.activate
        if act is None:
            return True
        assert self.files is not None
        self.files.ensure()
        return any(self.files.exists(m) or (self.root / m).exists() for m in act.any)  # type: ignore[operator]

    def _refuse(self, reason: str) -> None:
        self.pack_errors.append(reason)
        log.warning("search-suggester: pack refused: %s", reason)
        self.ledger.write(f"pack refused ({reason})")

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

    def invalidate(self) -> None:
        """Forget the file listing, resolved targets and packs (``dsh/toolsChanged``)."""
        self._targets.clear()
        self._fallback.clear()
        self._symbol_targets.clear()
        if self.files is not None:
            self.files.loaded = False
        self._activated = False
        self.learning.section.invalidate()  # issue 6

    # ------------------------------------------------------------------ the call

    def post_execute(self, params: PostExecuteParams) -> list[AdditionalContext]:
        """At most one note for this tool call; fail-open (an error logs and returns ``[]``)."""
        try:
            return self._post_execute(params)
        except Exception:
            self.counters["errors"] += 1
            log.warning("search-suggester: internal error; the call passes through silently", exc_info=True)
            return []

    def _post_execute(self, params: PostExecuteParams) -> list[AdditionalContext]:
        self.counters["calls"] += 1
        probe = make_probe(params.tool.name, params.tool.input)
        state = self.noise.session(params.session_id)
        state.calls += 1
        self.learning.observe(params.session_id, probe, state.calls)  # issue 6: followed/ignored
        if probe.tool in ("write", "read"):
            state.touch(probe.paths, self.config.recent_window)
        if probe.tool not in ("grep", "glob", "read", "bash") or not probe.text:
            return []
        self.activate()
        if not self.rows:
            return []
        with use_budget(RegexBudget(CALL_BUDGET_S)) as budget:
            hit = self._classify(probe)
        if budget is not None and budget.exhausted and not self._slow_call_reported:
            self._slow_call_reported = True
            self._refuse(
                f"untrusted pack regexes used the {CALL_BUDGET_S * 1000:g} ms budget of a call; "
                "the remaining signals count as no match"
            )
        if hit is None:
            return []
        intent, k = hit
        if self._dismissed(intent, "*"):
            return self._suppress("dismissed", intent)
        targets = self.learning.rank(
            intent, [t for t in self._resolve(intent, probe) if not self._dismissed(intent, t.path)]
        )
        if not targets:
            self.counters["abstained"] += 1
            self.ledger.write(f"abstained no-companions {intent} {fmt_k(k)}")
            return []
        recent = state.recently_read()
        fresh = [t for t in targets if t.path not in recent]
        if not fresh or (probe.tool == "read" and any(t.path in recent for t in targets)):
            # the already-recent filter; a read of one of the intent's own targets means the
            # agent is already where the intent lives, so the rest of the set is noise
            return self._suppress("recent", intent)
        shown = fresh[: self.config.max_targets]
        key = tuple(t.path for t in shown)
        reason = self.noise.check(
            state, intent, params.turn, key, self.config.cooldown_calls, self.config.max_notes_per_turn
        )
        if reason is not None:
            return self._suppress(reason, intent)
        note = make_note(intent, next((r.about for r in self.rows[intent] if r.about), None), shown)
        self.noise.record(state, intent, params.turn, key)
        self.counters["notes"] += 1
        self.ledger.write(
            f"suggest {intent} {fmt_k(k)} {len(note.source.targets)} targets {','.join(note.source.targets)}"
        )
        self.learning.noted(params.session_id, intent, note.source.targets, state.calls)  # issue 6
        return [note]

    def where_is(self, tool: str, tool_input: dict[str, Any]) -> tuple[str, float, str | None, list[Target]] | None:
        """The suggester on demand (MCP ``where_is``): ``(intent, k, about, targets)`` for one
        tool call, or ``None`` when no intent crosses its threshold.

        Reads the same packs, gate and target resolution as :meth:`post_execute`, without its
        noise control, ledger or learning: asking is not a tool call of the agent. Dismissed
        families and paths are left out. Raises nothing (an internal error logs and answers
        ``None``).
        """
        try:
            probe = make_probe(tool, tool_input)
            if not probe.text:
                return None
            self.activate()
            with use_budget(RegexBudget(CALL_BUDGET_S)):
                hit = self._classify(probe)
            if hit is None or self._dismissed(hit[0], "*"):
                return None
            intent, k = hit
            targets = self.learning.rank(
                intent, [t for t in self._resolve(intent, probe) if not self._dismissed(intent, t.path)]
            )
            about = next((r.about for r in self.rows.get(intent, ()) if r.about), None)
            return intent, k, about, targets[: self.config.max_targets]
        except Exception:
            self.counters["errors"] += 1
            log.warning("search-suggester: internal error in where_is; no answer", exc_info=True)
            return None

    def _suppress(self, reason: str, intent: str) -> list[AdditionalContext]:
        self.counters["suppressed"] += 1
        self.ledger.write(f"suppressed {reason} {intent}")
        return []

    def _classify(self, probe: Probe) -> tuple[str, float] | None:
        """The first intent (priority order) whose gate crosses its threshold in any of its
        rows, with the best such k."""
        for intent in INTENTS:
            best: float | None = None
            for row in self.rows.get(intent, ()):
                k = row.score(probe, self.config.bias)
                if k is not None and k >= row.threshold and (best is None or k > best):
                    best = k
            if best is not None:
                return intent, best
        return None

    def _resolve(self, intent: str, probe: Probe) -> list[Target]:
        """The intent's existing targets for this call: symbol-index files for the searched
        identifier first, then the static path targets; the pack's fallback paths only when
        the symbol candidates name nothing."""
        static = self._targets.get(intent, [])
        rows = self.rows.get(intent, ())
        if not any(c.symbol for r in rows for c in r.candidates):
            return static
        name = identifier(probe.query)
        found: list[Target] = []
        symbols = self.symbols = self._symbol_index()  # the graph may become ready at any call
        if name is not None and symbols is not None and self.index is not None:
            key = (intent, name)
            cached = self._symbol_targets.get(key)
            if cached is None:
                cached = resolve_symbols([c for r in rows for c in r.candidates], symbols, name, self.index)
                if cached:  # an empty answer may only mean the index is still building
                    self._symbol_targets[key] = cached
                    while len(self._symbol_targets) > SYMBOL_CACHE_SIZE:
                        self._symbol_targets.popitem(last=False)
            found = cached
        if not found:
            listed = {t.path for t in static}
            return static + [t for t in self._fallback.get(intent, []) if t.path not in listed]
        seen = {t.path for t in found}
        return found + [t for t in static if t.path not in seen]

    # ------------------------------------------------------------------ issue 6: dismissal, section, seed

    def _dismissed(self, intent: str, path: str) -> bool:
        """Whether (intent, path or ``*``) is dismissed now (durable, see ``dismissals.py``)."""
        return self.learning.dismissals.path_dismissed(intent, path)

    def dismiss(self, family: str, path: str | None) -> tuple[str, str]:
        """Record a durable dismissal; return ``(record line, expiresAt ISO-8601)``.

        Raises ``ValueError`` for an unknown family (not one of the ten intents).
        """
        record, expires = self.learning.dismissals.dismiss(family, path)
        self.ledger.write(record)
        self.learning.section.invalidate()  # the section must not keep listing what was dismissed
        return record, iso_seconds(expires)

    def _seed_knowledge(self) -> None:
        """The offline seed over the built-in packs' resolved path targets (``learning.py``)."""
        self.learning.proves = graph_prover(self.symbols) or self.learning.proves
        builtin = {p.pack.id for p in self.packs if p.origin == "builtin"}
        # intents no repo/user pack overrode: their path targets are already resolved
        self.learning.seed(
            {
                intent: self._targets.get(intent, [])
                for intent, rows in self.rows.items()
                if rows and all(r.pack_id in builtin for r in rows)
            }
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
            return self.learning.section.get(session_id, self._render_section)
        except Exception:  # fail-open, like the note
            self.counters["errors"] += 1
            log.warning("search-suggester: internal error building the section; none sent", exc_info=True)
            return None

    def _render_section(self, intent: str | None) -> str | None:
        self.learning.proves = graph_prover(self._symbol_index()) or self.learning.proves

        def listed(name: str) -> list[Target]:
            ts = self.learning.rank(name, [t for t in self._targets.get(name, []) if not self._dismissed(name, t.path)])
            proves = self.learning.proves
            proven = [t for t in ts if proves is not None and proves(name, t.path)]
            return proven or ts

        if intent is not None and not self._dismissed(intent, "*"):
            ts = listed(intent)[: self.config.max_targets]
            if ts:
                about = next((r.about for r in self.rows.get(intent, ()) if r.about), None) or intent.lower()
                return render(
                    [f"search-suggester: in this repository, {about} lives here:"]
                    + [f"- {t.path} — {t.reason}" for t in ts]
                )
        lines = ["search-suggester: where things live in this repository:"]
        for name in INTENTS:
            if name in self.rows and not self._dismissed(name, "*"):
                ts = listed(name)[:INDEX_TARGETS]
                if ts:
                    lines.append(f"- {name}: {', '.join(t.path for t in ts)}")
        return render(lines) if len(lines) > 1 else None

    def status(self) -> dict[str, Any]:
        """Counters, packs and the ledger path for ``dsh/status``."""
        return {
            "enabled": self.config.enabled,
            "workspace": str(self.root) if self.root else None,
            "packs": [{"id": p.pack.id, "origin": p.origin} for p in self.packs],
            "packErrors": list(self.pack_errors),
            "intents": [i for i in INTENTS if i in self.rows],
            "symbolIndex": self.symbols is not None,
            "activationMs": self.activation_ms,
            "counters": dict(self.counters),
            "sessions": self.noise.count(),
            "ledger": str(self.ledger.path) if self.ledger.path else None,
            "learning": self.learning.status(),  # issue 6
        }
