r"""Intent packs: YAML files that say, per intent, which signals reveal it and where it lives.

Pack format (``packs/*.yml``, ``<workspace>/.dsh/pack.yml``,
``$DSH_HOME/search-suggester/workspaces/<slug>.yml``)::

    id: python                       # pack id (letters, digits, - _ .)
    activate: {any: [pyproject.toml, setup.py]}   # markers at the workspace root; omit = always
    replace: false                   # repo/user packs: true = the built-in packs are not used
    intents:
      Version:                       # one of the ten intents (gate.INTENTS)
        about: the project's version # what the intent looks for, used in the note
        threshold: 0.85              # optional; default 0.85 Version/Path/Ledger, 0.75 others
        signals:                     # regex rules with weights (plan, "The gate")
          - {pattern: '__version__', weight: 2.6, tools: [grep, bash]}
        candidates:                  # ordered; path or glob, prior, ONE reason phrase
          - {path: 'src/**/__init__.py', contains: '^__version__\s*=', prior: 1.0,
             reason: defines __version__}
      Symbol:
        candidates:                  # from the workspace symbol index, for the searched name
          - {symbol: definitions, prior: 1.0, reason: 'defines {name}'}
          - {symbol: usages, prior: 0.6, reason: 'uses {name}'}
          - {path: 'src/*/__init__.py', fallback: true, reason: the package's public names}

A pack from the workspace or the user layer is untrusted input: it is size-capped, parsed
with PyYAML's safe constructors (``configmodel.load_yaml``), validated strictly, its regexes
are length-capped and checked for nested quantifiers (catastrophic backtracking), and its
candidate paths must stay inside the workspace. A refused pack is reported with a reason and the others keep working. At run
time every pack regex is matched with the ``regex`` module under a timeout
(:data:`MATCH_TIMEOUT_S`), so a pattern the static check misses still cannot hang a call.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from dsh_sidecar.configmodel import load_yaml
from dsh_sidecar.errors import config_error_from_pydantic
from dsh_sidecar.lazyre import LazyPattern
from dsh_sidecar.suggester.gate import INTENTS
from dsh_sidecar.workspace import fsguard
from dsh_sidecar.workspace.facts import FACTS

if TYPE_CHECKING:  # imported where a pack is parsed or an untrusted regex compiled: a sidecar
    import regex  # whose suggester is off never needs them (docs/architecture.md, the cold start)

#: Largest pack file read, bytes.
MAX_PACK_BYTES: Final = 256 * 1024
#: Longest signal or ``contains`` regex, characters.
MAX_PATTERN_CHARS: Final = 300
#: Tools a signal may be restricted to.
TOOLS: Final = ("grep", "glob", "read", "bash")
#: Longest time one pack regex may run on one probe or file, seconds (a timeout = no match).
MATCH_TIMEOUT_S: Final = 0.05
#: Total time untrusted regexes may take in one ``dsh/postExecute`` call, seconds: a pack of
#: many slow patterns costs a call at most this much, whatever each pattern's own timeout.
CALL_BUDGET_S: Final = 0.05
#: Total time untrusted ``contains`` regexes may take while the packs are activated, seconds.
ACTIVATION_BUDGET_S: Final = 0.5


@dataclass
class RegexBudget:
    """Time left for untrusted regexes in one call or one activation (seconds)."""

    seconds: float
    spent: float = 0.0
    exhausted: bool = False

    def left(self) -> float:
        """Seconds left (≤ 0: exhausted; :func:`search` then answers no match at once)."""
        return self.seconds - self.spent


_BUDGET: ContextVar[RegexBudget | None] = ContextVar("dsh_regex_budget", default=None)


class use_budget:  # noqa: N801 -- used as a function: ``with use_budget(budget) as budget``
    """Bound the total time of every untrusted :func:`search` inside the ``with`` block by
    ``budget`` (``None``: only each match's own :data:`MATCH_TIMEOUT_S`); a class, not a
    generator context manager: every call's classification enters one."""

    __slots__ = ("_budget", "_token")

    def __init__(self, budget: RegexBudget | None) -> None:
        self._budget = budget

    def __enter__(self) -> RegexBudget | None:
        self._token = _BUDGET.set(self._budget)
        return self._budget

    def __exit__(self, *exc_info: object) -> None:
        _BUDGET.reset(self._token)


def budget_exhausted() -> bool:
    """Whether the current :func:`regex_budget` is used up (no budget: never)."""
    budget = _BUDGET.get()
    return budget is not None and budget.left() <= 0


# A group that holds a quantifier and is itself quantified: (a+)+, (a*b?)*, (x|y+){2,}…
_NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)\s*(?:[+*]|\{\d+,?\d*\})")


class PackError(ValueError):
    """A pack was refused; ``str(exc)`` says which file and why."""


def check_regex(pattern: str) -> regex.Pattern[str]:
    """Compile an untrusted regex (``regex`` module, MULTILINE), refusing long ones and
    nested quantifiers. Match it through :func:`search` (bounded by a timeout).

    Raises ``ValueError`` with the reason.
    """
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ValueError(f"pattern longer than {MAX_PATTERN_CHARS} characters")
    if _NESTED_QUANTIFIER.search(pattern):
        raise ValueError("pattern has a quantified group containing a quantifier (catastrophic backtracking)")
    import regex

    try:
        return regex.compile(pattern, regex.MULTILINE | regex.VERSION0)
    except (regex.error, re.error) as exc:
        raise ValueError(f"invalid regex: {exc}") from None


def compile_trusted(pattern: str) -> LazyPattern[str]:
    """A built-in pack's regex for the standard ``re`` (faster; no timeout needed), compiled at
    its first match: a call is classified by the rows of the intents before the one it is, so
    a start compiles those, not all of them (each built-in one compiles: tests/security/test_packs.py)."""
    return LazyPattern(pattern, re.MULTILINE)


def search(pattern: regex.Pattern[str] | re.Pattern[str] | LazyPattern[str], text: str) -> bool:
    """Whether ``pattern`` matches ``text``; an untrusted (``regex``) pattern gets
    :data:`MATCH_TIMEOUT_S`, or what is left of the current :func:`regex_budget` if less
    (a timeout, or a used-up budget, is no match)."""
    if isinstance(pattern, (LazyPattern, re.Pattern)):
        return pattern.search(text) is not None
    budget = _BUDGET.get()
    timeout = MATCH_TIMEOUT_S
    if budget is not None:
        if budget.left() <= 0:
            budget.exhausted = True
            return False
        timeout = min(timeout, budget.left())
    t0 = time.perf_counter()
    try:
        return pattern.search(text, timeout=timeout) is not None
    except TimeoutError:
        return False
    finally:
        if budget is not None:
            budget.spent += time.perf_counter() - t0


def _trusted(info: ValidationInfo) -> bool:
    """Whether the pack being validated is one of ours (``packs/``): its regexes are compiled by
    ``re`` and never by the untrusted path, and every one of them passes :func:`check_regex`
    (tests/security/test_packs.py), so a start does not run the ``regex`` module's parser over
    all of them again (about half of the activation's CPU)."""
    return isinstance(info.context, dict) and info.context.get("trusted") is True


class _Strict(BaseModel):
    # defer_build: the validators are generated when the first pack is parsed, not at import
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True, defer_build=True)


class Signal(_Strict):
    """One regex rule; its ``weight`` is added to the intent's sum when it matches."""

    pattern: str = Field(min_length=1)
    weight: float = Field(ge=-10, le=10)
    tools: list[Literal["grep", "glob", "read", "bash"]] | None = None

    @field_validator("pattern")
    @classmethod
    def _pattern_ok(cls, v: str, info: ValidationInfo) -> str:
        if not _trusted(info):
            check_regex(v)
        return v


#: Kinds a ``kind`` candidate may ask the workspace graph for: the path kinds of
#: ``workspace/kinds.py``, ``code`` (a code extension in any folder, ``content.kind_is_code``)
#: and the content facts of ``workspace/content.py``.
GRAPH_KINDS: Final = ("manifest", "lock", "test", "doc", "config", "source", "code", *FACTS)


class Candidate(_Strict):
    """One target source, a prior and ONE reason phrase (``{name}`` becomes the identifier).

    Exactly one source:

    * ``path`` — a repo-relative path or gitwildmatch glob, optionally with ``contains`` (a
      regex the file's content must match);
    * ``symbol: definitions|usages`` — the files the workspace symbol index lists for the
      searched identifier;
    * ``kind`` — a graph query: the files of a kind or fact (:data:`GRAPH_KINDS`), all of them
      or, with ``match: terms``, those the content index matches with the call's terms (BM25,
      best first);
    * ``results: true`` — the paths the call's own result listed (optionally only those of
      ``kind``), in the order the intent ranks them;
    * ``frames: true`` — the project files of a traceback in the output of a command that is
      no search (``python repro.py`` failing): innermost frame first, ``{name}`` the function
      of that file's innermost frame.
    """

    path: str | None = Field(default=None, min_length=1, max_length=300)
    symbol: Literal["definitions", "usages"] | None = None
    kind: str | None = None
    match: Literal["terms"] | None = None
    results: bool = False
    frames: bool = False
    reason: str = Field(min_length=1, max_length=120)
    prior: float = Field(default=1.0, ge=0, le=10)
    contains: str | None = None
    fallback: bool = False  # a path used only when the row's symbol candidates name nothing

    @model_validator(mode="after")
    def _one_source(self) -> Candidate:
        sources = (
            (self.path is not None)
            + (self.symbol is not None)
            + self.results
            + self.frames
            + (self.kind is not None and not self.results)
        )
        if sources != 1:
            raise ValueError("a candidate needs exactly one of path, symbol, kind, results or frames")
        if self.contains is not None and self.path is None:
            raise ValueError("contains applies to path candidates only")
        if self.match is not None and (self.kind is None or self.results):
            raise ValueError("match applies to kind candidates only")
        return self

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, v: str | None) -> str | None:
        if v is not None and v not in GRAPH_KINDS:
            raise ValueError(f"unknown kind {v!r} (known: {', '.join(GRAPH_KINDS)})")
        return v

    @field_validator("path")
    @classmethod
    def _inside(cls, v: str | None) -> str | None:
        if v is None:
            return None
        p = v.replace("\\", "/")
        if p.startswith("/") or re.match(r"^[A-Za-z]:", p) or ".." in p.split("/") or "\0" in p:
            raise ValueError("must be a relative path inside the workspace (no '..', no absolute path)")
        return p

    @field_validator("contains")
    @classmethod
    def _contains_ok(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is not None and not _trusted(info):
            check_regex(v)
        return v

    @property
    def per_call(self) -> bool:
        """Whether the candidate depends on the call (symbol, topic match, results)."""
        return self.symbol is not None or self.results or self.frames or self.match is not None


class IntentRow(_Strict):
    """One intent of a pack: signals, threshold, ordered candidates."""

    about: str | None = Field(default=None, max_length=120)
    threshold: float | None = Field(default=None, gt=0, lt=1)
    signals: list[Signal] = Field(default_factory=list, max_length=100)
    candidates: list[Candidate] = Field(default_factory=list, max_length=100)


class Activation(_Strict):
    """Markers at the workspace root; the pack applies when any exists."""

    any: list[str] = Field(min_length=1, max_length=50)


class Pack(_Strict):
    """A validated pack. ``origin`` is ``builtin``, ``repo`` or ``user``."""

    id: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    activate: Activation | None = None
    replace: bool = False
    intents: dict[str, IntentRow] = Field(default_factory=dict)

    @field_validator("intents")
    @classmethod
    def _known_intents(cls, v: dict[str, IntentRow]) -> dict[str, IntentRow]:
        for name in v:
            if name not in INTENTS:
                raise ValueError(f"unknown intent {name!r} (known: {', '.join(INTENTS)})")
        return v


_M = TypeVar("_M", bound=BaseModel)


@dataclass(frozen=True)
class LoadedPack:
    """A pack and where it came from."""

    pack: Pack
    origin: Literal["builtin", "repo", "user"]
    source: str


def parse_pack(text: str, source: str, trusted: bool = False) -> Pack:
    """Parse and validate one pack (``trusted``: one of ours, see :func:`_trusted`). Raises
    :class:`PackError` naming ``source`` and the key."""
    if len(text.encode("utf-8", "replace")) > MAX_PACK_BYTES:
        raise PackError(f"{source}: larger than {MAX_PACK_BYTES // 1024} KiB")
    import yaml

    try:
        data: Any = load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise PackError(f"{source}: invalid YAML{where}") from None
    if not isinstance(data, dict):
        raise PackError(f"{source}: a pack must be a mapping")
    try:
        return Pack.model_validate(data, context={"trusted": trusted})
    except ValidationError as exc:
        raise PackError(f"{source}: {config_error_from_pydantic('', exc)}") from None


def read_pack_file(path: Path, origin: Literal["repo", "user"], inside: Path | None = None) -> LoadedPack | None:
    """Load a repo or user pack; ``None`` when the file does not exist. With ``inside`` (the
    resolved workspace root), the file must resolve inside it: a symlinked ``.dsh`` folder
    pointing elsewhere is refused too.

    Raises :class:`PackError` for an unreadable, oversized, symlinked-out or invalid file.
    """
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_symlink():
        raise PackError(f"{path}: a symlink; packs must be regular files")
    if inside is not None:
        real = path.resolve()
        if inside not in real.parents:
            raise PackError(f"{path}: resolves outside the workspace (a symlinked folder); packs must live in it")
    if not path.is_file():
        raise PackError(f"{path}: not a regular file")
    if path.stat().st_size > MAX_PACK_BYTES:
        raise PackError(f"{path}: larger than {MAX_PACK_BYTES // 1024} KiB")
    try:  # regular files only, never blocking (a FIFO swapped in after the checks above)
        base, rel = (inside, path.relative_to(inside).as_posix()) if inside is not None else (path.parent, path.name)
        text = fsguard.read_text(base, rel, MAX_PACK_BYTES, errors="strict")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise PackError(f"{path}: unreadable ({type(exc).__name__})") from None
    return LoadedPack(parse_pack(text, str(path)), origin, str(path))


@functools.lru_cache(maxsize=1)
def _builtin_packs() -> tuple[LoadedPack, ...]:
    from dsh_packs.parsed import PACKS  # the YAML files, validated when the package was made

    return tuple(LoadedPack(construct_pack(data), "builtin", name) for name, data in sorted(PACKS.items()))


def builtin_packs() -> list[LoadedPack]:
    """The packs shipped in ``packs/`` (package ``dsh_packs``), sorted by file name; built once
    per process (they are immutable package data) from their validated form generated from the
    YAML (``dsh_packs/parsed.py``, :func:`parse_builtin_yaml`): a start neither parses YAML nor
    builds the pack models' validators (about 30 ms of CPU)."""
    return list(_builtin_packs())


def parse_builtin_yaml() -> dict[str, dict[str, Any]]:
    """The built-in packs' YAML files (``dsh_packs/*.yml``) parsed and validated, by file
    name: each the validated pack's fields as given (``model_dump(exclude_unset=True)``),
    what ``dsh_packs/parsed.py`` holds (``packs/generate_parsed.py`` writes it; a test checks
    that the two are equal)."""
    out = {}
    root = resources.files("dsh_packs")
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".yml", ".yaml")):
            pack = parse_pack(entry.read_text("utf-8"), f"builtin:{entry.name}", trusted=True)
            out[entry.name] = pack.model_dump(exclude_unset=True)
    return out


def construct_pack(data: dict[str, Any]) -> Pack:
    """The :class:`Pack` of a validated pack's fields (:func:`parse_builtin_yaml`), built
    without validating them again (``model_construct``: the same fields, defaults and
    fields set as :func:`parse_pack` gives). For our own packs only: never for a document."""

    def row(values: dict[str, Any]) -> IntentRow:
        return _construct(
            IntentRow,
            values,
            signals=lambda xs: [_construct(Signal, x) for x in xs],
            candidates=lambda xs: [_construct(Candidate, x) for x in xs],
        )

    return _construct(
        Pack,
        data,
        activate=lambda x: None if x is None else _construct(Activation, x),
        intents=lambda xs: {name: row(x) for name, x in xs.items()},
    )


def _construct(model: type[_M], values: dict[str, Any], **nested: Callable[[Any], Any]) -> _M:
    given = dict(values)
    for key, make in nested.items():
        if key in given:
            given[key] = make(given[key])
    return model.model_construct(**given)
