"""The router as the tests build it: each provider's route on the loopback mock, its test
credential, the router config block pointing a chain at mocks, a router over it, and a clock
the tests move by hand."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dsh_sidecar.router import Router, parse_router_config

from support.mockprovider import MockProvider, provider_cases

#: ``(method, path)`` each provider's request reaches on the mock (its wire format's endpoint).
ROUTES = {
    "exa": ("POST", "/search"),
    "tavily": ("POST", "/search"),
    "brave": ("GET", "/res/v1/web/search"),
    "perplexity": ("POST", "/search"),
    "deepseek": ("POST", "/messages"),
    "searxng": ("GET", "/search"),
    "duckduckgo": ("POST", "/html/"),
}
#: Every provider id, in the order of the fixtures.
ALL = ("exa", "tavily", "brave", "perplexity", "deepseek", "searxng", "duckduckgo")


def base_url_key(provider: str) -> str:
    """The config key of a provider's endpoint (SearXNG's ``baseUrl``, the others' ``baseURL``)."""
    return "baseUrl" if provider == "searxng" else "baseURL"


def credential_env(*providers: str) -> dict[str, str]:
    """The environment variables carrying the fixtures' test keys of ``providers``."""
    env: dict[str, str] = {}
    for provider in providers:
        cred = provider_cases(provider)["credential"]
        if cred:
            env[cred["env"]] = cred["value"]
    return env


def expected_source(src: dict[str, Any]) -> dict[str, Any]:
    """A fixture's expected source without its test-only keys."""
    return {k: v for k, v in src.items() if k != "publishedAt_day"}


Endpoint = str | MockProvider | Mapping[str, "str | MockProvider"]


def _url(endpoint: Endpoint, provider: str) -> str:
    if isinstance(endpoint, Mapping):
        endpoint = endpoint[provider]
    return endpoint.url if isinstance(endpoint, MockProvider) else endpoint


def router_block(endpoint: Endpoint, chain: str | Sequence[str], **extra: Any) -> dict[str, Any]:
    """The ``router`` config block: ``chain`` one provider id (``provider: id``) or a list
    (``order: [...]``); each provider's endpoint is ``endpoint`` (a URL, a mock, or a mapping
    provider → URL/mock); ``extra`` adds top-level keys (``cache``, ``timeoutMs``, …)."""
    ids = [chain] if isinstance(chain, str) else list(chain)
    head: dict[str, Any] = {"provider": chain} if isinstance(chain, str) else {"order": ids}
    providers = {pid: {base_url_key(pid): _url(endpoint, pid)} for pid in ids}
    return {**head, "providers": providers, **extra}


def make_router(
    endpoint: Endpoint,
    chain: str | Sequence[str],
    env: dict[str, str] | None = None,
    clock: Any = None,
    **extra: Any,
) -> Router:
    """A :class:`Router` over :func:`router_block` with the chain's test credentials (or ``env``)."""
    ids = [chain] if isinstance(chain, str) else list(chain)
    cfg = parse_router_config(router_block(endpoint, chain, **extra))
    env = credential_env(*ids) if env is None else env
    return Router.from_config(cfg, env, clock=clock) if clock is not None else Router.from_config(cfg, env)


class FakeClock:
    """A monotonic clock the test moves by hand (``clock.now += 31``), seconds."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now
