"""The one base of every config block's model (router, bandit, suggester, state, top level).

A :class:`ConfigModel` field is written in snake_case and read from the camelCase key the user
writes (``timeout_ms`` ← ``timeoutMs``, pydantic's :func:`~pydantic.alias_generators.to_camel`);
a key that camelCase does not produce is given as an explicit ``alias`` on the field (``baseURL``).
Unknown keys are errors, values are not coerced (``"5"`` is not an integer), and each field's
documentation is the attribute docstring under it (``use_attribute_docstrings``), which becomes
the field's ``description`` in the JSON schema (the VS Code settings schema is built from it)::

    class CacheSettings(ConfigModel):
        ttl_seconds: int = Field(default=300, ge=1)
        \"\"\"How long a cached answer is served, seconds.\"\"\"

:func:`parse_block` validates one block and turns pydantic's error into a
:class:`~dsh_sidecar.errors.ConfigError` naming the key (``router.timeoutMs``), never the value.

The models are built lazily (pydantic's ``defer_build``): a block's validator is generated the
first time a value of it is validated, and a block that is absent or empty is not validated at
all but taken from its defaults (:func:`defaults_of`), which is what validating ``{}`` returns. So
the sidecar built after an ``initialize`` without options builds no validator (that reply itself
imports no pydantic: :mod:`dsh_sidecar.options`), and one with a ``suggester`` block builds that
block's only (cold start). :func:`set_attribute_docstrings` lives in
:mod:`dsh_sidecar.fielddocs` (no pydantic there) and is re-exported here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

from dsh_sidecar.errors import ConfigError, config_error_from_pydantic
from dsh_sidecar.fielddocs import attribute_docstrings, set_attribute_docstrings

__all__ = [
    "ConfigModel",
    "defaults_of",
    "json_problem",
    "load_yaml",
    "parse_block",
    "set_attribute_docstrings",
    "yaml_problem",
]


class ConfigModel(BaseModel):
    """Base of the config models: camelCase keys (generated; the snake_case field names are
    accepted too), ``extra="forbid"``, strict types, attribute docstrings as descriptions,
    validators built on first use (``defer_build``)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        strict=True,
        defer_build=True,
        # on for the blocks below (set right after this class: this base has no fields whose
        # docstrings pydantic would read, and reading them re-tokenises this module's source)
        use_attribute_docstrings=False,
    )


ConfigModel.model_config["use_attribute_docstrings"] = attribute_docstrings()  # set_attribute_docstrings


M = TypeVar("M", bound=BaseModel)


#: Per model: whether validating ``{}`` is exactly its defaults (:func:`_defaults_are_valid`).
_DEFAULTS_ARE_VALID: dict[type[BaseModel], bool] = {}


def _defaults_are_valid(model: type[BaseModel]) -> bool:
    """Whether ``model.model_validate({})`` can only return the field defaults, unvalidated (so
    ``model_construct()`` is the same value): no required field, no default that pydantic
    validates (``validate_default``), no model-level validator. Field validators do not run on
    defaults (pydantic, "Validating defaults")."""
    known = _DEFAULTS_ARE_VALID.get(model)
    if known is None:
        decorators = model.__pydantic_decorators__
        known = (
            not model.model_config.get("validate_default", False)
            and not decorators.model_validators
            and not decorators.root_validators
            and all(not f.is_required() and not f.validate_default for f in model.model_fields.values())
        )
        _DEFAULTS_ARE_VALID[model] = known
    return known


def defaults_of(model: type[M]) -> M:
    """``model`` with every field at its default: the value ``model.model_validate({})``
    returns (the same defaults and default factories, no field set), without building the
    model's validator when no check could apply to it (:func:`_defaults_are_valid`); otherwise
    it is validated. Raises :class:`pydantic.ValidationError` only for a model with a required
    field."""
    if _defaults_are_valid(model):
        return model.model_construct()
    return model.model_validate({})


def parse_block(model: type[M], raw: Any, key: str) -> M:
    """Validate the block ``key`` of the config as ``model`` (``None`` or ``{}``: every
    default, :func:`defaults_of`).

    Raises :class:`ConfigError` naming ``key`` when ``raw`` is not an object, or the dotted
    key of pydantic's first error (``bandit.speedMs``) with its message, never the value."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError(key, "must be an object")
    try:
        return model.model_validate(raw) if raw else defaults_of(model)
    except ValidationError as exc:
        raise config_error_from_pydantic(key, exc) from None


def load_yaml(text: str) -> Any:
    """The document of an untrusted YAML ``text`` (a ``--config`` file, a pack), built by
    PyYAML's safe constructors only: with libyaml's loader when PyYAML has it (about 9x faster,
    and it refuses nesting past its own bound at once, where the pure-Python loader recurses
    until ``RecursionError``). PyYAML is imported here, on first use. Raises ``yaml.YAMLError``
    (``RecursionError`` from the pure-Python loader)."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 (a safe loader)


#: Longest parser message quoted in a syntax error, characters.
_PROBLEM_MAX_CHARS = 100


def _position(kind: str, line: int, column: int, problem: str | None) -> str:
    what = " ".join(str(problem or "syntax error").split())
    what = "".join(c for c in what if c.isprintable())[:_PROBLEM_MAX_CHARS]
    return f"not valid {kind} (line {line}, column {column}: {what})"


def yaml_problem(exc: Exception) -> str:
    """A YAML syntax error as ``not valid YAML (line L, column C: <parser's problem>)``, 1-based
    as editors count (PyYAML's marks are 0-based); ``not valid YAML`` without a mark. The
    problem is the parser's own wording (token kinds, at most a character of the file), cut."""
    mark = getattr(exc, "problem_mark", None)
    if mark is None:
        return "not valid YAML"
    return _position("YAML", mark.line + 1, mark.column + 1, getattr(exc, "problem", None))


def json_problem(exc: Exception) -> str:
    """A JSON syntax error (:class:`json.JSONDecodeError`) as ``not valid JSON (line L, column C:
    <message>)``; ``not valid JSON`` for anything else."""
    line, column = getattr(exc, "lineno", None), getattr(exc, "colno", None)
    if line is None or column is None:
        return "not valid JSON"
    return _position("JSON", line, column, getattr(exc, "msg", None))
