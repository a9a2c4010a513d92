"""Provider responses are untrusted: whatever JSON (or bytes) a provider sends, its module
either returns items or raises ProviderFailure; it never raises anything else, and the
normaliser copes with any item it returns."""

from __future__ import annotations

import json

import pytest
from dsh_sidecar.router.normalize import normalize
from dsh_sidecar.router.providers import PROVIDERS
from dsh_sidecar.router.providers.base import HttpResponse, ProviderFailure
from hypothesis import given, settings
from hypothesis import strategies as st

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "results",
                    "web",
                    "content",
                    "type",
                    "url",
                    "title",
                    "text",
                    "snippet",
                    "description",
                    "page_age",
                    "age",
                    "date",
                    "publishedDate",
                    "published_date",
                    "citations",
                    "cited_text",
                    "error",
                    "error_code",
                    "detail",
                    "message",
                    "unresponsive_engines",
                    "answer",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=25,
)
STATUS = st.sampled_from([200, 202, 401, 403, 422, 429, 432, 433, 500, 502])
HEADERS = st.fixed_dictionaries(
    {},
    optional={
        "content-type": st.sampled_from(["application/json", "text/html", "text/plain"]),
        "retry-after": st.text(max_size=30),
        "x-ratelimit-reset": st.text(max_size=20),
        "x-ratelimit-remaining": st.text(max_size=20),
    },
)


def check(module, status, headers, body: bytes) -> None:
    try:
        answer = module.parse_response(HttpResponse(status, headers, body), 10)
    except ProviderFailure as failure:
        assert isinstance(failure.reason, str) and failure.reason
        return
    normalize(answer.items, 10)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(PROVIDERS)), STATUS, HEADERS, JSON)
def test_any_json_is_items_or_a_provider_failure(pid, status, headers, doc):
    check(PROVIDERS[pid], status, headers, json.dumps(doc).encode())


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(sorted(PROVIDERS)), STATUS, HEADERS, st.binary(max_size=200))
def test_any_bytes_are_items_or_a_provider_failure(pid, status, headers, body):
    check(PROVIDERS[pid], status, headers, body)


def test_deepseek_error_code_is_sanitised():
    body = {
        "content": [
            {
                "type": "web_search_tool_result",
                "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded\n<b>x</b>"},
            }
        ]
    }
    try:
        PROVIDERS["deepseek"].parse_response(
            HttpResponse(200, {"content-type": "application/json"}, json.dumps(body).encode()), 5
        )
    except ProviderFailure as failure:
        assert failure.reason == "web_search error max_uses_exceededbxb"
        assert failure.failure_class == "upstream_error"
    else:
        raise AssertionError("an error block must be a failure")
