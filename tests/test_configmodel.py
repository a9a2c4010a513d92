"""The config base model: camelCase keys generated, snake_case accepted, unknown keys and
coerced values refused, attribute docstrings as descriptions, errors naming the key."""

from __future__ import annotations

import pytest
from dsh_sidecar.configmodel import ConfigModel, parse_block
from dsh_sidecar.errors import ConfigError
from pydantic import Field


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
