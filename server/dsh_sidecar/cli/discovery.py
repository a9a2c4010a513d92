"""Which config files a command reads, and what each may set (standard library only at import:
``serve`` discovers its files without Typer, Rich or pydantic when there are none).

Every command (``serve``, ``mcp``, ``query``, ``suggest``, ``status``, ``doctor``, ``bandit
reset``, ``config``) reads up to three files and merges them, the first winning:

1. the **explicit** file: ``--config FILE``, else ``$DSH_SEARCH_CONFIG`` (as ``--config`` is
   given: a missing or bad file is an error, exit 2);
2. the **project** file: ``<workspace>/.dsh/config.yml`` (the workspace is ``--workspace``, the
   ``initialize`` root for ``serve``, else the current folder);
3. the **user** file: ``$XDG_CONFIG_HOME/dsh-search/config.yml``, else
   ``~/.config/dsh-search/config.yml`` (a bad one is an error, like the explicit file).

Objects merge key by key (:func:`dsh_sidecar.options.merge_options`: a value replaces, ``order``
and ``provider`` exclude each other); ``serve``'s ``initializationOptions`` are laid over the
result. ``dsh-search config`` shows the merged document and which file set each value.

**The project file is untrusted**: it comes with the repository, like ``.dsh/pack.yml``. A
repository could otherwise point a provider's ``baseURL`` at itself with ``apiKeyEnv`` naming
your key (and receive it), move your state, logs or knowledge file, raise limits, or reset
what the bandit learned. So a project file may set only :data:`PROJECT_ALLOWED` — the
suggester's knobs that are neither file paths (``logFile``, ``persistPath``, ``indexPath``)
nor outside the suggester, and ``logMessages`` — and every other key it sets is dropped with
one warning naming the keys (never their values). It is read through the workspace's guarded
reader (:func:`dsh_sidecar.workspace.fsguard.read_bytes`: a regular file inside the workspace,
no symlink out, at most :data:`MAX_CONFIG_FILE_BYTES`); a project file that cannot be read or
does not validate is ignored with a warning, never an error (a repository must not be able to
stop your commands). The explicit and user files are yours: read with the same guard as
``--config`` (a regular file, bounded; a FIFO or ``/dev/zero`` is exit 2).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.errors import ConfigError
from dsh_sidecar.paths import config_home

#: The variable naming the explicit config file when ``--config`` is not given.
CONFIG_ENV: Final = "DSH_SEARCH_CONFIG"
#: The project file, relative to the workspace.
PROJECT_FILE: Final = ".dsh/config.yml"
#: The user file's name in :func:`dsh_sidecar.paths.config_home`.
USER_FILE: Final = "config.yml"
#: Largest project file read, bytes (the explicit and user files: ``config.MAX_CONFIG_FILE_BYTES``).
MAX_CONFIG_FILE_BYTES: Final = 1024 * 1024

#: What a project file may set: top-level settings, and per block the keys it may set (camelCase,
#: as written). Everything else is refused (see the module docstring); tests keep every
#: suggester knob classified here or in :data:`PROJECT_REFUSED_SUGGESTER`.
PROJECT_ALLOWED: Final[dict[str, frozenset[str] | None]] = {
    "logMessages": None,
    "suggester": frozenset(
        {
            "enabled",
            "cooldownCalls",
            "maxNotesPerTurn",
            "recentWindow",
            "maxTargets",
            "bias",
            "minConfidence",
            "refreshOnBoot",
            "learn",
            "seed",
            "learnWindow",
            "dismissTtl",
            "sectionMode",
            "sectionTtl",
            "builtinPacks",
            "taskLead",
        }
    ),
}
#: Suggester knobs a project may not set: file paths (where the ledger, the knowledge file go),
#: and how long a call may hold the user's harness waiting for the index (``firstCallWaitMs``).
PROJECT_REFUSED_SUGGESTER: Final = frozenset({"logFile", "persistPath", "indexPath", "firstCallWaitMs"})

#: Reads one of the user's config files (the explicit or the user file): the raw document,
#: validated; raises :class:`ConfigError` (the ``--config`` guard: ``cli.serving.read_config``).
Reader = Callable[[Path], Any]


@dataclass(frozen=True)
class Layer:
    """One config file of a command: ``kind`` (``flag``, ``env``, ``project``, ``user``), its
    path, its document (``None``: not there), the dotted keys refused from it (project only)
    and why it was ignored, if it was (project only)."""

    kind: str
    path: Path
    raw: Mapping[str, Any] | None = None
    refused: tuple[str, ...] = ()
    ignored: str | None = None

    @property
    def label(self) -> str:
        """How ``dsh-search config`` names where a value came from."""
        return {"flag": "--config", "env": f"${CONFIG_ENV}", "project": "project", "user": "user"}[self.kind] + (
            f" {self.path}"
        )


@dataclass
class Discovered:
    """The config files of one command, the first winning (see the module docstring)."""

    layers: list[Layer] = field(default_factory=list)

    def merged(self) -> dict[str, Any] | None:
        """The merged document (``None`` when no file set anything)."""
        from dsh_sidecar.options import merge_options

        out: Any = None
        for layer in reversed(self.layers):
            if layer.raw:
                out = merge_options(out, layer.raw)
        return out

    def origins(self) -> dict[str, str]:
        """Dotted key of every value set → the label of the file that set it (the winner)."""
        out: dict[str, str] = {}
        for layer in reversed(self.layers):
            if not layer.raw:
                continue
            router = layer.raw.get("router")
            if isinstance(router, Mapping):  # merge_options: order and provider exclude each other
                for mine, other in (("order", "provider"), ("provider", "order")):
                    if mine in router and other not in router:
                        _drop(out, f"router.{other}")
            for key in _leaves(layer.raw):
                _drop(out, key)
                out[key] = layer.label
        return out

    def warnings(self) -> list[str]:
        """One line per project file that was ignored or had keys refused."""
        lines = []
        for layer in self.layers:
            if layer.ignored:
                lines.append(f"project config {layer.path} ignored: {layer.ignored}")
            elif layer.refused:
                lines.append(
                    f"project config {layer.path}: {', '.join(layer.refused)} ignored (a project config may set only"
                    " suggester knobs and logMessages: no endpoints, keys, limits or state; docs/SCHEME.md)"
                )
        return lines

    def files(self) -> list[str]:
        """The files read (for ``doctor`` and ``status``)."""
        return [str(layer.path) for layer in self.layers if layer.raw is not None]

    def with_project(self, workspace: Path | None) -> Discovered:
        """These layers with ``workspace``'s project file in its place (``serve`` learns its
        workspace at ``initialize``); any project layer already there is replaced."""
        layers = [layer for layer in self.layers if layer.kind != "project"]
        project = project_layer(workspace) if workspace is not None else None
        if project is not None:
            at = next((i for i, layer in enumerate(layers) if layer.kind == "user"), len(layers))
            layers.insert(at, project)
        return Discovered(layers)


def _leaves(doc: Mapping[str, Any], prefix: str = "") -> list[str]:
    out = []
    for key, value in doc.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            out += _leaves(value, path + ".")
        else:
            out.append(path)
    return out


def _drop(origins: dict[str, str], key: str) -> None:
    """Forget ``key`` and everything under it (a value laid over an object replaces it)."""
    for k in [k for k in origins if k == key or k.startswith(key + ".")]:
        del origins[k]


def project_filter(raw: Any) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The part of a project document it may set (:data:`PROJECT_ALLOWED`) and the dotted keys
    refused from it (sorted). A block that is not an object is refused whole."""
    if not isinstance(raw, Mapping):
        return {}, ()
    kept: dict[str, Any] = {}
    refused: list[str] = []
    for key, value in raw.items():
        name = str(key)
        if name not in PROJECT_ALLOWED:
            refused.append(name)
            continue
        allowed = PROJECT_ALLOWED[name]
        if allowed is None:
            kept[name] = value
            continue
        if not isinstance(value, Mapping):
            refused.append(name)
            continue
        block = {k: v for k, v in value.items() if str(k) in allowed}
        refused += [f"{name}.{k}" for k in value if str(k) not in allowed]
        if block:
            kept[name] = block
    return kept, tuple(sorted(refused))


def project_layer(workspace: Path) -> Layer | None:
    """The project file of ``workspace`` as a layer (filtered, validated), or ``None`` when there
    is none. Never raises: an unreadable or invalid file is a layer with ``ignored`` set."""
    path = workspace / PROJECT_FILE
    try:
        os.lstat(path)
    except OSError:
        return None
    from dsh_sidecar.workspace.fsguard import read_bytes

    try:
        data = read_bytes(workspace, PROJECT_FILE, MAX_CONFIG_FILE_BYTES)
    except OSError as exc:
        reason = getattr(exc, "reason", None) or exc.strerror or type(exc).__name__
        return Layer("project", path, ignored=f"cannot read ({reason})")
    try:
        raw = _parse_yaml(data)
    except ConfigError as exc:
        return Layer("project", path, ignored=exc.reason)
    if raw is not None and not isinstance(raw, Mapping):
        return Layer("project", path, ignored="must be an object with router, bandit, suggester and state blocks")
    kept, refused = project_filter(raw or {})
    from dsh_sidecar.config import parse_config

    try:
        parse_config(kept)
    except ConfigError as exc:
        return Layer("project", path, refused=refused, ignored=f"invalid: {exc}")
    except RecursionError:
        return Layer("project", path, refused=refused, ignored="nested too deeply")
    return Layer("project", path, kept, refused)


def _parse_yaml(data: bytes) -> Any:
    import yaml

    from dsh_sidecar.configmodel import load_yaml, yaml_problem

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(PROJECT_FILE, "not UTF-8 text") from None
    try:
        return load_yaml(text)
    except yaml.MarkedYAMLError as exc:
        if "nesting depth" in (exc.problem or ""):
            raise ConfigError(PROJECT_FILE, "nested too deeply") from None
        raise ConfigError(PROJECT_FILE, yaml_problem(exc)) from None
    except (yaml.YAMLError, RecursionError, ValueError):
        raise ConfigError(PROJECT_FILE, "not valid YAML") from None


def explicit_path(flag: Path | None, env: Mapping[str, str]) -> tuple[str, Path] | None:
    """``("flag", --config)``, else ``("env", $DSH_SEARCH_CONFIG)``, else ``None``."""
    if flag is not None:
        return "flag", flag
    value = env.get(CONFIG_ENV, "").strip()
    return ("env", Path(value).expanduser()) if value else None


def user_path(env: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/dsh-search/config.yml`` (else ``~/.config/…``)."""
    return config_home(env) / USER_FILE


def discover(
    flag: Path | None,
    workspace: Path | None,
    env: Mapping[str, str],
    reader: Reader,
) -> Discovered:
    """The config files of a command, first winning. ``reader`` reads the explicit and the user
    file (the ``--config`` guard); their errors are raised as :class:`ConfigError`. A user file
    that does not exist is skipped; a project file is never an error."""
    layers: list[Layer] = []
    explicit = explicit_path(flag, env)
    if explicit is not None:
        kind, path = explicit
        layers.append(Layer(kind, path, reader(path)))
    if workspace is not None:
        project = project_layer(workspace)
        if project is not None:
            layers.append(project)
    user = user_path(env)
    try:
        os.stat(user)
    except OSError:
        pass
    else:
        layers.append(Layer("user", user, reader(user)))
    return Discovered(layers)
