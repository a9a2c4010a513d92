"""``dsh-search doctor``: whether this machine is ready to run the sidecar.

Checks, in order: Python (≥ 3.11), SQLite and its FTS5 module, ``git`` (the workspace graph
reads ``git ls-files``; without it the tree is walked), each config file read, each provider
of the canonical order (in the chain or not, which key *variable* it reads and whether that
variable is set — never the value, its length or any part of it), whether each provider of
the chain *searches*: one real search (``PROBE_QUERY``, one result, ``--timeout``, default
3 s) through the chain's own request, exchange and parser, so a SearXNG without its JSON
format (403), a refused key (401/403) or a base URL that is no search API fail with what to
do; the optional extras (``[mcp]``, ``[redis]`` when the config needs it) with the install
command that fits; ``$DSH_HOME`` (a home that cannot be written fails) and the cache
directory with their sizes.

:func:`run_doctor` returns the report as a dict (``--json`` prints it as is)::

    {"ok": bool, "summary": str,
     "checks": [{"name": str, "status": "ok"|"warn"|"fail"|"info"|"skip", "detail": str, "data": {...}}]}

``ok`` is false when a check failed; every failing check says what to do (``data.fix``).
"""

from __future__ import annotations

import asyncio
import os
import platform
import shutil
import sqlite3
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from dsh_sidecar import __version__
from dsh_sidecar.config import SidecarConfig, dsh_home
from dsh_sidecar.workspace import gitcmd

if TYPE_CHECKING:
    from dsh_sidecar.router.http import ProviderClient

#: Oldest Python the package supports (``requires-python`` in pyproject.toml).
MIN_PYTHON: Final = (3, 11)
#: Default seconds to wait for each endpoint (connect + first response bytes).
DEFAULT_TIMEOUT_S: Final = 3.0
#: Most directory entries visited when measuring ``$DSH_HOME`` (a huge or hostile tree stays bounded).
MAX_STATE_ENTRIES: Final = 100_000


def _check(name: str, status: str, detail: str, **data: Any) -> dict[str, Any]:
    return {"name": name, "status": status, "detail": detail, "data": data}


def check_python() -> dict[str, Any]:
    """The running interpreter: version, implementation and path."""
    v = sys.version_info
    version = f"{v.major}.{v.minor}.{v.micro}"
    ok = (v.major, v.minor) >= MIN_PYTHON
    need = ".".join(map(str, MIN_PYTHON))
    detail = f"{platform.python_implementation()} {version} ({sys.executable})" + ("" if ok else f"; need ≥ {need}")
    return _check("python", "ok" if ok else "fail", detail, version=version, executable=sys.executable)


def check_sqlite() -> dict[str, Any]:
    """SQLite's library version and whether its FTS5 full-text module can create a table."""
    try:
        con = sqlite3.connect(":memory:")
        try:
            con.execute("CREATE VIRTUAL TABLE probe USING fts5(body)")
            con.execute("INSERT INTO probe(body) VALUES ('dsh doctor')")
            fts5 = con.execute("SELECT count(*) FROM probe WHERE probe MATCH 'doctor'").fetchone()[0] == 1
        except sqlite3.Error:
            fts5 = False
        finally:
            con.close()
    except sqlite3.Error as exc:
        return _check("sqlite", "fail", f"cannot open an in-memory database: {exc}", version=None, fts5=False)
    version = sqlite3.sqlite_version
    detail = f"SQLite {version}, FTS5 {'available' if fts5 else 'missing (full-text search unavailable)'}"
    return _check("sqlite", "ok" if fts5 else "warn", detail, version=version, fts5=fts5)


def check_git(env: Mapping[str, str]) -> dict[str, Any]:
    """``git`` on PATH and its version (``git --version`` reads no repository or config)."""
    path = shutil.which("git", path=env.get("PATH"))
    if path is None:
        return _check("git", "warn", "not found on PATH: the workspace graph walks the tree instead", path=None)
    try:  # through the one hardened git runner (docs/SECURITY.md, class 1)
        version = gitcmd.version(path)
    except gitcmd.GitError as exc:
        return _check("git", "warn", str(exc), path=path)
    return _check("git", "ok", f"git {version} ({path})", path=path, version=version)


def _key_source(pid: str, cfg: SidecarConfig, env: Mapping[str, str]) -> tuple[str | None, bool]:
    """Where ``pid`` takes its key from and whether it is set: ``("EXA_API_KEY", True)``,
    ``("router.providers.exa.apiKey", True)``, ``(None, False)`` for a keyless provider.
    Only presence is looked at, never the value."""
    from dsh_sidecar.router.config import PROVIDER_DEFAULTS  # the one place doctor reads the provider table

    defaults = PROVIDER_DEFAULTS[pid]
    settings = cfg.router.providers.get(pid)
    if settings is not None and settings.api_key is not None and settings.api_key.strip():
        return f"router.providers.{pid}.apiKey", True
    var = (settings.api_key_env if settings is not None else None) or defaults.key_env
    if var is None:
        return None, False
    return var, bool(env.get(var, "").strip())


def check_providers(cfg: SidecarConfig, env: Mapping[str, str]) -> tuple[list[dict[str, Any]], list[Any]]:
    """One check per provider of the canonical order; returns them and the chain's specs (for
    :func:`check_endpoints`). A provider whose URL or key in the environment is malformed is a
    warning naming the variable and why (never the value), as the router skips it."""
    from dsh_sidecar.errors import ConfigError
    from dsh_sidecar.redact import Redactor
    from dsh_sidecar.router.config import CANONICAL_ORDER, invalid_reason, resolve_chain, secrets_of, unusable_reason

    problems: dict[str, ConfigError] = {}
    chain, _missing = resolve_chain(cfg.router, env, problems)
    redact = Redactor(secrets_of(chain))
    position = {spec.id: i for i, spec in enumerate(chain, 1)}
    checks = []
    for pid in CANONICAL_ORDER:
        var, key_set = _key_source(pid, cfg, env)
        key_text = "" if var is None else f"key {var} {'set' if key_set else 'not set'}"
        if pid in position:
            spec = chain[position[pid] - 1]
            detail = f"chain #{position[pid]}, {redact(spec.base_url)}" + (f", {key_text}" if key_text else "")
            checks.append(
                _check(
                    f"provider {pid}",
                    "ok",
                    detail,
                    provider=pid,
                    inChain=True,
                    position=position[pid],
                    endpoint=redact(spec.base_url),
                    keyVariable=var,
                    keySet=key_set,
                )
            )
        else:
            explicit = cfg.router.provider is not None or cfg.router.order is not None
            named = pid == cfg.router.provider or pid in (cfg.router.order or [])
            if explicit and not named:
                why, status = "not in the configured chain", "skip"
            elif pid in problems:  # its variable is set but malformed: skipped, whoever asked for it
                why, status = f"skipped: {invalid_reason(problems[pid])}", "warn"
            else:  # named but unusable (warn), or not auto-detected: say what to set
                why, status = unusable_reason(pid, cfg.router), "warn" if named else "skip"
            checks.append(
                _check(
                    f"provider {pid}",
                    status,
                    why,
                    provider=pid,
                    inChain=False,
                    position=None,
                    endpoint=None,
                    keyVariable=var,
                    keySet=key_set,
                )
            )
    if not chain:
        checks.append(_check("chain", "fail", "no provider is usable: every search would fail"))
    return checks, chain


#: The query each provider is asked (one search, one result) to tell whether it works.
PROBE_QUERY: Final = "dsh-search doctor"


def _fix(spec: Any, failure: Any, cfg: SidecarConfig, env: Mapping[str, str]) -> tuple[str, str]:
    """``(status, what to do)`` for a probe that failed with ``failure`` (a ProviderFailure)."""
    from dsh_sidecar.router.providers.base import (
        AUTH,
        BAD_RESPONSE,
        BLOCKED,
        CONFIG,
        EMPTY,
        PACED,
        QUOTA_EXHAUSTED,
        RATE_LIMITED,
    )

    pid, kind = spec.id, failure.failure_class
    if kind == CONFIG and pid == "searxng":
        return "fail", "enable the JSON format: add json to search.formats in the instance's settings.yml"
    if kind == AUTH:
        var, _set = _key_source(pid, cfg, env)
        return "fail", f"the provider refused the key: check {var or 'its key'} (a revoked, mistyped or unpaid key)"
    if kind in (RATE_LIMITED, QUOTA_EXHAUSTED, PACED):
        return "warn", "rate-limited or out of quota now: searches fall back to the next provider until it recovers"
    if kind == BLOCKED:
        return "warn", "the provider shows a bot challenge: searches fall back until it lifts"
    if kind == BAD_RESPONSE:
        return "fail", "the endpoint answers, but not as this provider's search API: check its base URL"
    if kind == EMPTY:
        return "ok", ""
    return "fail", "check the base URL and that this machine reaches it"


async def _probe(client: ProviderClient, spec: Any, timeout_s: float, cfg: SidecarConfig, env: Any) -> dict:
    """One real search (:data:`PROBE_QUERY`, one result) through the chain's own code: the
    provider's request (its key or Basic auth included, to its own endpoint only), the bounded
    exchange and the provider's parser, so a disabled JSON format, a refused key or a wrong
    URL fails here exactly as a search would."""
    from dsh_sidecar.redact import Redactor
    from dsh_sidecar.router.config import secrets_of
    from dsh_sidecar.router.digest import digest
    from dsh_sidecar.router.http import exchange
    from dsh_sidecar.router.providers import PROVIDERS
    from dsh_sidecar.router.providers.base import ProviderFailure

    redact = Redactor(secrets_of([spec]))
    origin = redact(spec.base_url)
    provider = PROVIDERS[spec.id]
    start = time.monotonic()
    try:
        request = provider.build_request(spec, PROBE_QUERY, 1)
        response = await exchange(client, request, timeout_s * 1000, spec.basic_auth)
        _answer, sources, _ = digest(provider, response, 1, redact)
    except ProviderFailure as failure:
        ms = round((time.monotonic() - start) * 1000)
        status, fix = _fix(spec, failure, cfg, env)
        reason = redact(failure.reason)
        detail = f"{origin}: {reason}" + (f" — fix: {fix}" if fix else "")
        answers = failure.failure_class not in ("network", "timeout")
        return _check(
            f"endpoint {spec.id}", status, detail, answers=answers, searches=False, failure=failure.failure_class,
            reason=reason, fix=fix or None, ms=ms,
        )  # fmt: skip
    ms = round((time.monotonic() - start) * 1000)
    detail = (
        f"{origin} answers searches (HTTP {response.status}, {len(sources)} result{'s' * (len(sources) != 1)}, {ms} ms)"
    )
    return _check(f"endpoint {spec.id}", "ok", detail, answers=True, searches=True, httpStatus=response.status, ms=ms)


async def check_endpoints(
    chain: list[Any], timeout_s: float, cfg: SidecarConfig, env: Mapping[str, str]
) -> list[dict[str, Any]]:
    """One real search per chain provider at once (:func:`_probe`), ``timeout_s`` each; no
    redirect followed, no proxy from the environment. A provider that answers but cannot
    search (403 from a SearXNG without JSON, a refused key, a page that is no search API)
    fails with what to do; unreachable ones fail when no provider of the chain searches, else
    warn (the chain falls back)."""
    from dsh_sidecar.router.http import make_client, warm_async_backend

    probed = [s for s in chain if s.id != "local"]  # the offline index has its own check
    client = make_client()
    # what a first exchange would import on the loop (anyio's asyncio backend) is imported
    # before any probe's timeout starts, as the router's `prepare` does: `--timeout` bounds the
    # exchange, not the set-up (under load an import past a 1 s timeout made a refused
    # connection read as a timeout)
    await asyncio.to_thread(warm_async_backend)
    try:
        checks = list(await asyncio.gather(*(_probe(client, spec, timeout_s, cfg, env) for spec in probed)))
    finally:
        await client.aclose()
    if any(c["data"].get("searches") for c in checks):
        for c in checks:
            if c["status"] == "fail" and not c["data"]["answers"]:
                c["status"] = "warn"
    return checks


def _size(root: Path) -> tuple[int, int, bool]:
    """Bytes and files under ``root`` (symlinks not followed), and whether the walk was cut
    at :data:`MAX_STATE_ENTRIES`."""
    total = files = seen = 0
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    seen += 1
                    if seen > MAX_STATE_ENTRIES:
                        return total, files, True
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(Path(entry.path))
                        elif entry.is_file(follow_symlinks=False):
                            total += entry.stat(follow_symlinks=False).st_size
                            files += 1
                    except OSError:
                        continue
        except OSError:
            continue
    return total, files, False


def human_bytes(n: int) -> str:
    """``1536`` → ``1.5 KiB`` (IEC units)."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def _unwritable(folder: Path) -> str | None:
    """Why nothing can be written in the existing ``folder``, or ``None``: a temporary file is
    created there and removed at once (``os.access`` would say yes to root on ``/proc``)."""
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=folder, prefix=".dsh-doctor-"):
            return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__


def _creatable(folder: Path) -> str | None:
    """Why ``folder`` (missing) could not be created, or ``None``: its nearest existing
    ancestor must be a folder something can be written in."""
    parent = folder
    for _ in range(64):
        parent = parent.parent
        if parent.exists() or parent == parent.parent:
            break
    if not parent.is_dir():
        return f"{parent} is not a folder"
    why = _unwritable(parent)
    return f"{parent}: {why}" if why else None


def check_state(env: Mapping[str, str]) -> dict[str, Any]:
    """``$DSH_HOME``: where it is, whether it exists and is writable, and its size per part. A
    home that cannot be written (or created) fails: the bandit would learn in memory only and
    the suggester's ledger and knowledge would be lost."""
    home = dsh_home(env)
    source = "DSH_HOME" if env.get("DSH_HOME", "").strip() else "default ~/.dsh"
    fix = "make it writable, or set DSH_HOME to a writable folder"
    if not home.exists():
        why = _creatable(home)
        if why is not None:
            return _check(
                "state", "fail", f"{home} ({source}) cannot be created ({why}) — fix: {fix}", path=str(home),
                exists=False, bytes=0, writable=False, fix=fix,
            )  # fmt: skip
        return _check("state", "info", f"{home} ({source}): not created yet", path=str(home), exists=False, bytes=0)
    if not home.is_dir():
        return _check(
            "state", "fail", f"{home} ({source}) is not a folder — fix: {fix}", path=str(home), exists=True, bytes=0,
            fix=fix,
        )  # fmt: skip
    total, files, cut = _size(home)
    parts = {}
    for name in ("bandit", "search-suggester", "workspace"):
        part = home / name
        if part.is_dir() and not part.is_symlink():  # a symlinked part is not walked, as in the total
            parts[name] = _size(part)[0]
    writable = _unwritable(home) is None
    detail = (
        f"{home} ({source}): {human_bytes(total)}{'+' if cut else ''} in {files} files"
        + ("".join(f"; {k} {human_bytes(v)}" for k, v in parts.items()))
        + ("" if writable else f"; NOT writable (learning would be lost at exit) — fix: {fix}")
    )
    return _check(
        "state",
        "ok" if writable else "fail",
        detail,
        path=str(home),
        exists=True,
        bytes=total,
        files=files,
        truncated=cut,
        parts=parts,
        writable=writable,
    )


def check_cache(env: Mapping[str, str]) -> dict[str, Any]:
    """The cache directory (workspace indexes, offline docs index): writable or creatable, its
    size, and the old indexes ``dsh-search cache prune`` would remove."""
    from dsh_sidecar.cachedir import usage

    doc = usage(env)
    root = Path(str(doc["dir"]))
    fix = "make it writable, or set DSH_CACHE_DIR (or XDG_CACHE_HOME) to a writable folder"
    why = _creatable(root) if not root.exists() else _unwritable(root)
    legacy: Any = doc["legacy"]
    extra = (
        f"; {legacy['files']} old index files under {legacy['dir']} ({human_bytes(legacy['bytes'])}): dsh-search cache prune"
        if legacy["files"]
        else ""
    )
    if why is not None:
        detail = f"{root}: the indexes cannot be written ({why}); the suggester's notes and offline search degrade — fix: {fix}"
        return _check("cache", "fail", detail, path=str(root), writable=False, fix=fix)
    parts: Any = doc["parts"]
    detail = f"{root}: {human_bytes(int(str(doc['bytes'])))} (workspace {human_bytes(parts['workspace'])}, docs {human_bytes(parts['docs'])}){extra}"
    return _check("cache", "ok", detail, path=str(root), writable=True, bytes=doc["bytes"], parts=parts, legacy=legacy)


def check_extras(cfg: SidecarConfig, need_mcp: bool) -> list[dict[str, Any]]:
    """The optional extras: ``[mcp]`` for ``dsh-search mcp`` (a failure with ``--mcp``, or for
    the Claude Code plugin, else a warning when missing), ``[redis]`` when the config's state
    backend is a Redis/Valkey store (a failure when missing). Each names the install command
    that fits this installation."""
    import importlib.util

    from dsh_sidecar.cli.installs import extra_hint
    from dsh_sidecar.mcp import sdk_installed

    out = []
    if sdk_installed():
        out.append(_check("extra mcp", "ok", "installed: dsh-search mcp can serve", installed=True))
    else:
        hint = extra_hint("mcp")
        detail = f"not installed: dsh-search mcp (Claude Code, Codex, Cursor, Continue) will not start — fix: {hint}"
        out.append(_check("extra mcp", "fail" if need_mcp else "warn", detail, installed=False, fix=hint))
    if cfg.state.shared:
        if importlib.util.find_spec("redis") is not None:
            out.append(_check("extra redis", "ok", "installed: the shared state store can be opened", installed=True))
        else:
            hint = extra_hint("redis")
            detail = f"not installed, and state.backend is a Redis/Valkey store — fix: {hint}"
            out.append(_check("extra redis", "fail", detail, installed=False, fix=hint))
    return out


def run_doctor(
    cfg: SidecarConfig,
    env: Mapping[str, str],
    config_files: list[str],
    timeout_s: float,
    offline: bool,
    need_mcp: bool = False,
) -> dict[str, Any]:
    """Every check (see the module docstring); a malformed provider URL or key in the
    environment is its provider's warning."""
    checks = [
        _check("dsh-search", "info", f"{__version__} ({Path(__file__).resolve().parents[1]})", version=__version__),
        check_python(),
        check_sqlite(),
        check_git(env),
    ]
    for path in config_files:
        checks.append(_check("config", "ok", f"{path}: valid", path=path))
    provider_checks, chain = check_providers(cfg, env)
    checks += provider_checks
    if offline:
        checks += [_check(f"endpoint {s.id}", "skip", "not probed (--offline)") for s in chain if s.id != "local"]
    elif chain:
        checks += asyncio.run(check_endpoints(chain, timeout_s, cfg, env))
    checks += check_extras(cfg, need_mcp or bool(env.get("CLAUDE_PLUGIN_ROOT")))
    checks.append(check_state(env))
    checks.append(check_cache(env))
    failed = [c["name"] for c in checks if c["status"] == "fail"]
    warned = [c["name"] for c in checks if c["status"] == "warn"]
    if failed:
        summary = f"{len(failed)} check{'s' if len(failed) > 1 else ''} failed: {', '.join(failed)}"
    elif warned:
        summary = f"ready, with {len(warned)} warning{'s' if len(warned) > 1 else ''}: {', '.join(warned)}"
    else:
        summary = "ready"
    return {"ok": not failed, "summary": summary, "checks": checks}
