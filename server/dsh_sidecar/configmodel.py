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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

from dsh_sidecar.errors import ConfigError, config_error_from_pydantic

__all__ = ["ConfigModel", "parse_block", "set_attribute_docstrings"]


class ConfigModel(BaseModel):
    """Base of the config models: camelCase keys (generated; the snake_case field names are
    accepted too), ``extra="forbid"``, strict types, attribute docstrings as descriptions."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        strict=True,
        use_attribute_docstrings=True,
    )


def set_attribute_docstrings(enabled: bool) -> None:
    """Whether config models defined from now on read their attribute docstrings as field
    descriptions (pydantic's ``use_attribute_docstrings``, which re-reads and tokenises each
    class's source: ~30 ms of CPU for all the blocks). On by default (the JSON schema, the CLI,
    the tests); ``dsh-search serve`` turns it off before the config modules are imported,
    since nothing it answers carries a description, and models already defined keep theirs."""
    ConfigModel.model_config["use_attribute_docstrings"] = enabled


M = TypeVar("M", bound=BaseModel)


def parse_block(model: type[M], raw: Any, key: str) -> M:
    """Validate the block ``key`` of the config as ``model`` (``None``: every default).

    Raises :class:`ConfigError` naming ``key`` when ``raw`` is not an object, or the dotted
    key of pydantic's first error (``bandit.speedMs``) with its message, never the value."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError(key, "must be an object")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise config_error_from_pydantic(key, exc) from None
