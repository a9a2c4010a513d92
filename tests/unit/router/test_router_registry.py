"""One descriptor per provider: the registry finds every provider module, in canonical order,
and each module declares the whole of its definition (``router/providers/__init__.py``)."""

from __future__ import annotations

import sys
import textwrap

import pytest
from dsh_sidecar.router import config as router_config
from dsh_sidecar.router.providers import CANONICAL_ORDER, PROVIDERS, discover
from dsh_sidecar.router.providers.base import AuthKind, Provider, ProviderDefaults, RateLimit

#: Seed ("search-router.README.txt"): "exa → tavily → brave → perplexity → deepseek → searxng → duckduckgo".
SEED_ORDER = ("exa", "tavily", "brave", "perplexity", "deepseek", "searxng", "duckduckgo")


def test_registry_is_the_seed_order_and_every_module_is_a_provider():
    assert CANONICAL_ORDER == SEED_ORDER
    assert router_config.CANONICAL_ORDER == SEED_ORDER
    for position, (pid, provider) in enumerate(PROVIDERS.items()):
        assert isinstance(provider, Provider)
        assert (pid, position) == (provider.ID, provider.POSITION)
        assert isinstance(provider.DEFAULTS, ProviderDefaults)
        assert isinstance(provider.AUTH_KIND, AuthKind)
        assert {"title", "snippet"} >= provider.HTML_FIELDS


#: The router seed's provider table ("search-router.README.txt": credential, endpoint) and its
#: schema's default models: (key variable, default origin, base-URL variable, model). The seed
#: gives DuckDuckGo no endpoint; its origin here is the HTML endpoint the provider scrapes.
SEED_PROVIDERS = {
    "exa": ("EXA_API_KEY", "https://api.exa.ai", None, None),
    "tavily": ("TAVILY_API_KEY", "https://api.tavily.com", None, None),
    "brave": ("BRAVE_SEARCH_API_KEY", "https://api.search.brave.com", None, None),
    "perplexity": ("PPLX_API_KEY", "https://api.perplexity.ai", None, "sonar"),
    "deepseek": ("DEEPSEEK_API_KEY", "https://api.deepseek.com/anthropic/v1", None, "deepseek-v4-flash"),
    "searxng": (None, None, "SEARXNG_BASE_URL", None),
    "duckduckgo": (None, "https://html.duckduckgo.com", None, None),
}


def test_each_providers_credential_endpoint_and_model_are_the_seeds():
    have = {pid: (d.key_env, d.base_url, d.base_url_env, d.model) for pid, d in router_config.PROVIDER_DEFAULTS.items()}
    assert {pid: have[pid] for pid in SEED_PROVIDERS} == SEED_PROVIDERS


def test_config_tables_are_derived_from_the_descriptors():
    assert {"searxng", "duckduckgo"} == router_config.BASIC_AUTH_PROVIDERS
    assert router_config.PROVIDER_DEFAULTS["perplexity"].model == "sonar"
    assert router_config.PROVIDER_DEFAULTS["deepseek"].key_env == "DEEPSEEK_API_KEY"
    assert router_config.PROVIDER_DEFAULTS["brave"].max_count == 20
    assert router_config.PROVIDER_DEFAULTS["searxng"].base_url_env == "SEARXNG_BASE_URL"
    assert RateLimit(1, 1.0, "Free", "https://brave.com/search/api/") == PROVIDERS["brave"].RATE_LIMIT
    assert PROVIDERS["brave"].RATE_LIMIT.interval_s == 1.0


PROVIDER_MODULE = """
from dsh_sidecar.router.providers.base import AuthKind, HttpRequest, ProviderAnswer, ProviderDefaults

ID = "{pid}"
POSITION = {position}
DEFAULTS = ProviderDefaults("{pid_upper}_KEY", "https://{pid}.example")
AUTH_KIND = AuthKind.BEARER
RATE_LIMIT = None
HTML_FIELDS = frozenset()


def build_request(spec, query, max_results):
    return HttpRequest("GET", spec.base_url + "/s", params={{"q": query}})


def parse_response(response, max_results):
    return ProviderAnswer(items=[])
"""


@pytest.fixture
def fake_package(tmp_path, monkeypatch):
    pkg = tmp_path / "fakeproviders"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "base.py").write_text("")  # never taken for a provider
    (pkg / "_private.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield pkg
    for name in [m for m in sys.modules if m.startswith("fakeproviders")]:
        del sys.modules[name]


def test_adding_a_provider_is_adding_one_file(fake_package):
    for pid, position in (("zeta", 1), ("alpha", 0)):
        body = PROVIDER_MODULE.format(pid=pid, pid_upper=pid.upper(), position=position)
        (fake_package / f"{pid}.py").write_text(textwrap.dedent(body))
    found = discover([str(fake_package)], "fakeproviders")
    assert list(found) == ["alpha", "zeta"]
    assert found["zeta"].DEFAULTS.key_env == "ZETA_KEY"


def test_a_module_missing_a_descriptor_name_is_refused(fake_package):
    body = PROVIDER_MODULE.format(pid="zeta", pid_upper="ZETA", position=0).replace("RATE_LIMIT = None\n", "")
    (fake_package / "zeta.py").write_text(body)
    with pytest.raises(TypeError, match="zeta"):
        discover([str(fake_package)], "fakeproviders")


def test_two_modules_at_one_position_are_refused(fake_package):
    for pid in ("one", "two"):
        (fake_package / f"{pid}.py").write_text(PROVIDER_MODULE.format(pid=pid, pid_upper=pid.upper(), position=3))
    with pytest.raises(TypeError, match="duplicate"):
        discover([str(fake_package)], "fakeproviders")
