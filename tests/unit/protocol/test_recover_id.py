r"""The ``id`` of a request too large or too deeply nested to parse whole (``dsh_protocol.ids``):
read from its top level as a JSON parser reads it, so a member name spelled with escapes
(``"\u0069d"`` is ``id``) names the id too, and an ``id`` nested deeper never does."""

from __future__ import annotations

import pytest
from dsh_protocol.ids import recover_id

DEEP = b'{"a":' * 2000


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":' + DEEP, 12),
        (b'{"jsonrpc":"2.0","\\u0069d":12,"method":"tools/call","params":' + DEEP, 12),
        (b'{"i\\u0064" : "big","method":"tools/call","params":' + DEEP, "big"),
        (b'{"\\u0069\\u0064":-3,"params":' + DEEP, -3),
        (b'{"params":{"\\u0069d":5},"method":"x","params":' + DEEP, None),  # not the top level's
        (b'{"\\u0069d":null,"params":' + DEEP, None),
        (b'{"\\u0069x":7,"params":' + DEEP, None),
        (b'{"method":"\\u0069d","params":' + DEEP, None),  # a value, not a member name
    ],
)
def test_the_top_level_id_as_a_json_parser_reads_its_name(body: bytes, expected: object) -> None:
    assert recover_id(body) == expected
