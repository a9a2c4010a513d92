"""The config base model: camelCase keys generated, snake_case accepted, unknown keys and
coerced values refused, attribute docstrings as descriptions, errors naming the key."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from dsh_sidecar.configmodel import ConfigModel, defaults_of, parse_block
from dsh_sidecar.errors import ConfigError
from pydantic import Field, model_validator


class Example(ConfigModel):
    timeout_ms: int = Field(default=100, ge=1)
    """Per-attempt timeout, milliseconds."""
    base_url: str | None = Field(default=None, alias="baseURL")
    """An explicit alias where camelCase would differ."""


def test_keys_are_generated_camel_case_and_field_names_are_accepted():
    assert Example.model_fields["timeout_ms"].alias == "timeoutMs"
    assert Example.model_fields["base_url"].alias == "baseURL"
    assert parse_block(Example, {"timeoutMs": 5}, "x").timeout_ms == 5
    assert parse_block(Example, {"timeout_ms": 7}, "x").timeout_ms == 7
    assert parse_block(Example, None, "x") == Example()


def test_attribute_docstrings_are_the_descriptions():
    props = Example.model_json_schema(by_alias=True)["properties"]
    assert props["timeoutMs"]["description"] == "Per-attempt timeout, milliseconds."
    assert props["baseURL"]["description"] == "An explicit alias where camelCase would differ."


@pytest.mark.parametrize(
    ("raw", "key", "reason"),
    [
        ({"timeoutMs": "5"}, "block.timeoutMs", "Input should be a valid integer"),
        ({"timeoutMs": 0}, "block.timeoutMs", "Input should be greater than or equal to 1"),
        ({"timeOut": 1}, "block.timeOut", "unknown key"),
        ({"baseUrl": "http://h"}, "block.baseUrl", "unknown key"),
        (["timeoutMs"], "block", "must be an object"),
    ],
)
def test_errors_name_the_key_and_never_the_value(raw, key, reason):
    with pytest.raises(ConfigError) as info:
        parse_block(Example, raw, "block")
    assert (info.value.key, info.value.reason) == (key, reason)
    assert "http://h" not in str(info.value)


def _config_models() -> list[type[ConfigModel]]:
    import dsh_sidecar.config  # noqa: F401  (defines every block's model)

    found, todo = [], [ConfigModel]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("dsh_sidecar."):
                found.append(sub)
            todo.append(sub)
    return found


def test_every_config_model_is_found():
    assert sorted(m.__name__ for m in _config_models()) == [
        "BanditConfig",
        "CacheSettings",
        "ProviderSettings",
        "RouterConfig",
        "SidecarConfig",
        "StateConfig",
        "SuggesterConfig",
    ]


@pytest.mark.parametrize("model", _config_models(), ids=lambda m: m.__name__)
def test_the_defaults_of_a_block_are_what_validating_an_empty_block_gives(model):
    given = defaults_of(model)
    validated = model.model_validate({})
    assert type(given) is model
    assert given == validated
    assert given.model_dump() == validated.model_dump()
    assert given.model_fields_set == validated.model_fields_set == set()
    assert parse_block(model, None, "k") == parse_block(model, {}, "k") == validated


class Required(ConfigModel):
    name: str


class Checked(ConfigModel):
    limit: int = 5

    @model_validator(mode="after")
    def _positive(self):
        if self.limit > 3:
            raise ValueError("limit too high")
        return self


class ValidatedDefault(ConfigModel):
    limit: int = Field(default="5", validate_default=True)


def test_a_block_whose_empty_value_is_not_its_defaults_is_still_validated():
    with pytest.raises(ConfigError) as info:
        parse_block(Required, None, "block")
    assert (info.value.key, info.value.reason) == ("block.name", "Field required")
    with pytest.raises(ConfigError) as info:
        parse_block(Checked, {}, "block")
    assert (info.value.key, info.value.reason) == ("block", "Value error, limit too high")
    with pytest.raises(ConfigError) as info:
        parse_block(ValidatedDefault, {}, "block")
    assert (info.value.key, info.value.reason) == ("block.limit", "Input should be a valid integer")


def test_validators_are_built_on_first_validation_and_not_for_defaults():
    class Fresh(ConfigModel):
        retries: int = Field(default=2, ge=0)

    assert Fresh.__pydantic_complete__ is False
    assert parse_block(Fresh, None, "fresh").retries == 2
    assert parse_block(Fresh, {}, "fresh").retries == 2
    assert Fresh.__pydantic_complete__ is False  # the defaults needed no validator
    assert parse_block(Fresh, {"retries": 4}, "fresh").retries == 4
    assert Fresh.__pydantic_complete__ is True
    with pytest.raises(ConfigError) as info:
        parse_block(Fresh, {"retries": -1}, "fresh")
    assert (info.value.key, info.value.reason) == ("fresh.retries", "Input should be greater than or equal to 0")


@pytest.mark.slow  # a fresh interpreter
def test_the_base_model_reads_no_docstrings_and_each_block_reads_its_own():
    """pydantic reads attribute docstrings by re-reading the class's module source; the base
    has no fields, so only its subclasses may pay for that (in a fresh interpreter)."""
    code = textwrap.dedent(
        """
        from pydantic._internal import _fields
        calls = []
        real = _fields._update_fields_from_docstrings
        def spy(cls, fields, use_inspect=False):
            calls.append(cls.__name__)
            return real(cls, fields, use_inspect)
        _fields._update_fields_from_docstrings = spy
        from dsh_sidecar.configmodel import ConfigModel
        print(calls)
        from dsh_sidecar.suggester.config import SuggesterConfig
        print(calls, SuggesterConfig.model_fields["section_ttl"].description)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.splitlines() == [
        "[]",
        "['SuggesterConfig'] The sticky section is rebuilt after this many seconds.",
    ]
