"""``dsh-search doctor``: is this machine ready to run the sidecar?

Checks, in order: Python (≥ 3.11), SQLite and its FTS5 module, ``git`` (the workspace graph
reads ``git ls-files``; without it the tree is walked), the config file when one is given,
each provider of the canonical order (in the chain or not, which key *variable* it reads and
whether that variable is set — never the value, its length or any part of it), whether each
endpoint of the chain answers an HTTP request (``--timeout``, default 3 s; no key is sent),
and where state lives (``$DSH_HOME``) with its size on disk.

:func:`run_doctor` returns the report as a dict (``--json`` prints it as is)::

    {"ok": bool, "summary": str,
     "checks": [{"name": str, "status": "ok"|"warn"|"fail"|"info"|"skip", "detail": str, "data": {...}}]}

``ok`` is false when a check failed: Python too old, or no endpoint of the chain answered.
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
from typing import Any, Final

import httpx

from dsh_sidecar import __version__
from dsh_sidecar.config import SidecarConfig, dsh_home
from dsh_sidecar.workspace import gitcmd

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
    :func:`check_endpoints`). Raises :class:`~dsh_sidecar.errors.ConfigError` for a malformed
    URL or key in the environment (named, never shown)."""
    from dsh_sidecar.redact import Redactor
    from dsh_sidecar.router.config import CANONICAL_ORDER, resolve_chain, secrets_of, unusable_reason

    chain, _missing = resolve_chain(cfg.router, env)
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


async def _probe(client: httpx.AsyncClient, spec: Any, redact: Any) -> dict[str, Any]:
    start = time.monotonic()
    origin = redact(spec.base_url)
    try:
        async with client.stream("GET", spec.base_url) as response:
            ms = round((time.monotonic() - start) * 1000)
            status = response.status_code
    except httpx.TimeoutException:
        ms = round((time.monotonic() - start) * 1000)
        return _check(f"endpoint {spec.id}", "fail", f"{origin} did not answer within {ms} ms", answers=False, ms=ms)
    except (httpx.HTTPError, OSError, ValueError) as exc:
        ms = round((time.monotonic() - start) * 1000)
        return _check(
            f"endpoint {spec.id}", "fail", f"{origin} unreachable ({type(exc).__name__})", answers=False, ms=ms
        )
    return _check(
        f"endpoint {spec.id}",
        "ok",
        f"{origin} answers (HTTP {status}, {ms} ms)",
        answers=True,
        httpStatus=status,
        ms=ms,
    )


async def check_endpoints(chain: list[Any], timeout_s: float) -> list[dict[str, Any]]:
    """GET each chain endpoint's base URL at once, with ``timeout_s`` for connect and the
    response head; no key, no auth header, no redirect followed, body never read. Any HTTP
    status counts as answering (a 404 at an API root is normal). When none answers, every
    probe is ``fail``; when some do, the silent ones are ``warn`` (the chain falls back)."""
    from dsh_sidecar.redact import Redactor
    from dsh_sidecar.router.config import secrets_of

    redact = Redactor(secrets_of(chain))
    async with httpx.AsyncClient(
        timeout=httpx.Timeout(timeout_s), follow_redirects=False, trust_env=False, headers={"User-Agent": "dsh-doctor"}
    ) as client:
        checks = list(await asyncio.gather(*(_probe(client, spec, redact) for spec in chain)))
    if any(c["data"]["answers"] for c in checks):
        for c in checks:
            if not c["data"]["answers"]:
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


def check_state(env: Mapping[str, str]) -> dict[str, Any]:
    """``$DSH_HOME``: where it is, whether it exists and is writable, and its size per part."""
    home = dsh_home(env)
    source = "DSH_HOME" if env.get("DSH_HOME", "").strip() else "default ~/.dsh"
    if not home.exists():
        return _check("state", "info", f"{home} ({source}): not created yet", path=str(home), exists=False, bytes=0)
    if not home.is_dir():
        return _check("state", "fail", f"{home} ({source}) is not a folder", path=str(home), exists=True, bytes=0)
    total, files, cut = _size(home)
    parts = {}
    for name in ("bandit", "search-suggester", "workspace"):
        part = home / name
        if part.is_dir() and not part.is_symlink():  # a symlinked part is not walked, as in the total
            parts[name] = _size(part)[0]
    writable = os.access(home, os.W_OK)
    detail = (
        f"{home} ({source}): {human_bytes(total)}{'+' if cut else ''} in {files} files"
        + ("".join(f"; {k} {human_bytes(v)}" for k, v in parts.items()))
        + ("" if writable else "; NOT writable (state kept in memory only)")
    )
    return _check(
        "state",
        "ok" if writable else "warn",
        detail,
        path=str(home),
        exists=True,
        bytes=total,
        files=files,
        truncated=cut,
        parts=parts,
        writable=writable,
    )


def run_doctor(
    cfg: SidecarConfig, env: Mapping[str, str], config_files: list[str], timeout_s: float, offline: bool
) -> dict[str, Any]:
    """Every check (see the module docstring); raises ConfigError when the environment holds a
    malformed provider URL or key."""
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
        checks += [_check(f"endpoint {s.id}", "skip", "not probed (--offline)") for s in chain]
    elif chain:
        checks += asyncio.run(check_endpoints(chain, timeout_s))
    checks.append(check_state(env))
    failed = [c["name"] for c in checks if c["status"] == "fail"]
    warned = [c["name"] for c in checks if c["status"] == "warn"]
    if failed:
        summary = f"{len(failed)} check{'s' if len(failed) > 1 else ''} failed: {', '.join(failed)}"
    elif warned:
        summary = f"ready, with {len(warned)} warning{'s' if len(warned) > 1 else ''}: {', '.join(warned)}"
    else:
        summary = "ready"
    return {"ok": not failed, "summary": summary, "checks": checks}
