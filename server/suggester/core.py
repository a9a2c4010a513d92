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
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from dsh_protocol import AdditionalContext, PostExecuteParams
from dsh_sidecar.suggester.candidates import Target, resolve
from dsh_sidecar.suggester.config import SuggesterConfig
from dsh_sidecar.suggester.gate import INTENTS, default_threshold, gate
from dsh_sidecar.suggester.ledger import Ledger, fmt_k
from dsh_sidecar.suggester.noise import NoiseControl
from dsh_sidecar.suggester.notes import make_note
from dsh_sidecar.suggester.packs import IntentRow, LoadedPack, PackError, builtin_packs, read_pack_file
from dsh_sidecar.suggester.probe import Probe, make_probe
from dsh_sidecar.workspace import WorkspaceFiles

log = logging.getLogger(__name__)


def workspace_slug(root: Path) -> str:
    """The user-layer pack name of a workspace: its folder name, lower-cased, ``[a-z0-9-]``."""
    return re.sub(r"[^a-z0-9]+", "-", root.name.lower()).strip("-") or "workspace"


class Suggester:
    """The suggester for one workspace.

    ``root`` is the workspace folder (``None``: no workspace, always silent); ``dsh_home`` the
    state folder; ``sink`` receives each ledger line; ``clock`` returns epoch seconds.
    """

    def __init__(
        self,
        root: Path | None,
        config: SuggesterConfig,
        dsh_home: Path,
        sink: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.root = root.resolve() if root is not None else None
        self.config = config
        self.dsh_home = dsh_home
        self.clock = clock
        log_file = Path(config.log_file).expanduser() if config.log_file else dsh_home / "search-suggester" / "ledger.log"
        self.ledger = Ledger(log_file, sink, clock)
        self.noise = NoiseControl()
        self.rows: dict[str, IntentRow] = {}
        self.packs: list[LoadedPack] = []
        self.pack_errors: list[str] = []
        self.dismissals: dict[tuple[str, str], float] = {}
        self.counters: dict[str, int] = {"calls": 0, "notes": 0, "suppressed": 0, "abstained": 0, "errors": 0}
        self._targets: dict[str, list[Target]] = {}
        self._activated = False
        self.files = WorkspaceFiles(self.root) if self.root is not None else None

    # ------------------------------------------------------------------ activation

    def activate(self) -> None:
        """Load the packs that apply to the workspace and write the ``activated`` (or
        ``abstained foreign-workspace``) ledger line. Idempotent until :meth:`invalidate`."""
        if self._activated:
            return
        self._activated = True
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
                loaded = read_pack_file(path, origin)  # type: ignore[arg-type]
            except PackError as exc:
                self._refuse(str(exc))
                continue
            if loaded is not None:
                layered.append(loaded)
        replace = any(p.pack.replace for p in layered)
        builtins = [] if replace or not self.config.builtin_packs else [p for p in builtin_packs() if self._applies(p)]
        # precedence: user > repo > built-ins; built-in rows of several packs are merged
        for loaded in builtins:
            for name, row in loaded.pack.intents.items():
                if name in self.rows:
                    prev = self.rows[name]
                    self.rows[name] = IntentRow(
                        about=prev.about or row.about,
                        threshold=prev.threshold,
                        signals=prev.signals + row.signals,
                        candidates=prev.candidates + row.candidates,
                    )
                else:
                    self.rows[name] = row
        for loaded in reversed(layered):  # repo first, then user overrides it
            self.rows.update(loaded.pack.intents)
        self.packs = layered + builtins
        if not self.rows:
            self.ledger.write("abstained foreign-workspace")
            return
        thresholds = [r.threshold or default_threshold(n) for n, r in self.rows.items()]
        ids = ",".join(p.pack.id for p in self.packs)
        self.ledger.write(f"activated (packs {ids} intents {len(self.rows)} threshold {min(thresholds):.2f})")

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

    def invalidate(self) -> None:
        """Forget the file listing, resolved targets and packs (``dsh/toolsChanged``)."""
        self._targets.clear()
        if self.files is not None:
            self.files.loaded = False
        self._activated = False

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
        if probe.tool in ("write", "read"):
            state.touch(probe.paths, self.config.recent_window)
        if probe.tool not in ("grep", "glob", "read", "bash") or not probe.text:
            return []
        self.activate()
        if not self.rows:
            return []
        hit = self._classify(probe)
        if hit is None:
            return []
        intent, k = hit
        if self._dismissed(intent, "*"):
            return self._suppress("dismissed", intent)
        targets = [t for t in self._resolve(intent) if not self._dismissed(intent, t.path)]
        if not targets:
            self.counters["abstained"] += 1
            self.ledger.write(f"abstained no-companions {intent} {fmt_k(k)}")
            return []
        recent = state.recently_read()
        fresh = [t for t in targets if t.path not in recent]
        if not fresh:
            return self._suppress("recent", intent)
        shown = fresh[: self.config.max_targets]
        key = tuple(t.path for t in shown)
        reason = self.noise.check(state, intent, params.turn, key, self.config.cooldown_calls, self.config.max_notes_per_turn)
        if reason is not None:
            return self._suppress(reason, intent)
        note = make_note(intent, self.rows[intent].about, shown)
        self.noise.record(state, intent, params.turn, key)
        self.counters["notes"] += 1
        self.ledger.write(f"suggest {intent} {fmt_k(k)} {len(note.source.targets)} targets {','.join(note.source.targets)}")
        return [note]

    def _suppress(self, reason: str, intent: str) -> list[AdditionalContext]:
        self.counters["suppressed"] += 1
        self.ledger.write(f"suppressed {reason} {intent}")
        return []

    def _classify(self, probe: Probe) -> tuple[str, float] | None:
        """The first intent (priority order) whose gate crosses its threshold, with its k."""
        for intent in INTENTS:
            row = self.rows.get(intent)
            if row is None:
                continue
            total, matched = 0.0, False
            for sig in row.signals:
                if sig.tools is not None and probe.tool not in sig.tools:
                    continue
                if re.search(sig.pattern, probe.text):
                    total += sig.weight
                    matched = True
            if not matched:
                continue
            k = gate(total, self.config.bias)
            if k >= (row.threshold or default_threshold(intent)):
                return intent, k
        return None

    def _resolve(self, intent: str) -> list[Target]:
        cached = self._targets.get(intent)
        if cached is None:
            assert self.files is not None
            cached = self._targets[intent] = resolve(self.rows[intent].candidates, self.files)
        return cached

    # ------------------------------------------------------------------ dismissal

    def _dismissed(self, intent: str, path: str) -> bool:
        now = self.clock()
        for key in [k for k, exp in self.dismissals.items() if exp <= now]:
            del self.dismissals[key]
        return (intent, path) in self.dismissals

    def dismiss(self, family: str, path: str | None) -> tuple[str, str]:
        """Record a dismissal; return ``(record line, expiresAt ISO-8601)``.

        Raises ``ValueError`` for an unknown family (not one of the ten intents).
        """
        if family not in INTENTS:
            raise ValueError(f"family: unknown intent {family!r} (known: {', '.join(INTENTS)})")
        expires = self.clock() + self.config.dismiss_ttl
        self.dismissals[(family, path or "*")] = expires
        record = f"dismissed {family} {path or '*'}"
        self.ledger.write(record)
        iso = datetime.fromtimestamp(expires, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
        return record, iso

    def status(self) -> dict[str, Any]:
        """Counters, packs and the ledger path for ``dsh/status``."""
        return {
            "enabled": self.config.enabled,
            "workspace": str(self.root) if self.root else None,
            "packs": [{"id": p.pack.id, "origin": p.origin} for p in self.packs],
            "packErrors": list(self.pack_errors),
            "intents": [i for i in INTENTS if i in self.rows],
            "counters": dict(self.counters),
            "sessions": self.noise.count(),
            "ledger": str(self.ledger.path) if self.ledger.path else None,
        }
