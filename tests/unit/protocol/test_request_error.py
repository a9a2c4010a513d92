"""The narrow error types between the sidecar and its front ends: a :class:`RequestError` is
answered with its own code and text, and :func:`first_problem` is the one reading of a pydantic
error (location, message, count of the rest; never the value)."""

from __future__ import annotations

import pytest
from dsh_protocol import SearchParams
from dsh_sidecar.bandit.feedback import UnknownSearch
from dsh_sidecar.errors import RequestError, first_problem
from dsh_sidecar.lsp.handlers import request_error
from pydantic import ValidationError
from pygls.exceptions import JsonRpcInvalidParams


def test_a_request_error_becomes_the_json_rpc_error_it_names():
    invalid = request_error(RequestError("searchId: unknown"))
    assert isinstance(invalid, JsonRpcInvalidParams)
    assert (invalid.code, invalid.message) == (-32602, "searchId: unknown")
    other = request_error(RequestError("busy", code=-32001))
    assert (other.code, other.message) == (-32001, "busy")


def test_unknown_search_is_a_request_error_not_a_bare_value_error():
    assert issubclass(UnknownSearch, RequestError) and not issubclass(UnknownSearch, ValueError)


def test_first_problem_names_the_field_and_counts_the_rest_without_the_value():
    with pytest.raises(ValidationError) as info:
        SearchParams.model_validate({"query": "sk-secret", "maxResults": "5", "deadlineMs": 1, "x": 1})
    problem = first_problem(info.value, unknown="unknown field")
    assert (problem.key, problem.reason, problem.more) == ("maxResults", "Input should be a valid integer", 2)
    assert problem.message() == "Input should be a valid integer (and 2 more)"
    assert problem.message("error") == "Input should be a valid integer (and 2 more errors)"
    assert "sk-secret" not in repr(problem)
    with pytest.raises(ValidationError) as info:
        SearchParams.model_validate({"query": "q", "x": 1})
    assert first_problem(info.value, "params", unknown="unknown field").key == "params.x"
    assert first_problem(info.value, unknown="unknown field").reason == "unknown field"
